//! Layer 7, the laboratory: experiments as data, over the layers below (sim, nand, codec,
//! device, host, workload, report) and under the `znslab` command, which parses arguments and
//! prints what this crate returns. No argument parser here: a run is described by plain
//! (serialisable) data so that any front end, or another process, can build and run one.
//!
//! - [`stack`]: the one place sim → device → host I/O → file system → store is assembled;
//! - [`setup`]: devices, compression schemes and zonefs figures by name;
//! - [`experiment`]: a YCSB Load and workloads on one fresh device, measured per phase;
//! - [`spec`]: a run as serialisable data (device, host options, scheme, dataset, workload,
//!   seed) and its result; [`executor`]: what runs a list of them (a local thread pool);
//! - [`reproduce`]: the paper reproductions, run lists and the paper's figures (`data/`) with
//!   their reports; [`fio_run`]: one fio job file reduced to a figure's numbers;
//! - [`runs`]: a run list from a file, run here (`znslab run`);
//! - [`torture`]: seeded power cuts and killed processes, each checked after power-on;
//! - [`corpus`]: the text corpora the real-text datasets draw from;
//! - [`zonefs_spec`]: zonefs's mkfs choices (ZenFS or ZenFS+ and its switches) as data.

pub mod corpus;
pub mod dbbench_run;
pub mod executor;
pub mod experiment;
pub mod files_run;
pub mod fio_run;
pub mod reproduce;
pub mod runs;
pub mod setup;
pub mod spec;
pub mod stack;
pub mod torture;
pub mod zonefs_spec;
