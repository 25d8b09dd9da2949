//! # workload: what drives the device (layer 6)
//!
//! For now: fio. Job files and command-line options with fio's names, run as tasks on the
//! virtual clock against a [`device::DeviceHandle`], with fio's normal and JSON output.
//!
//! May depend on: `sim`, `nand`, `device`, `report`. Leaves out: device internals beyond the
//! commands and the counters it reports.

pub mod dataset;
pub mod dbbench;
pub mod filebench;
pub mod fio;
pub mod oltp;
pub mod progress;
pub mod scheme;
pub mod ycsb;
