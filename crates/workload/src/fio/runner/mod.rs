//! Running fio jobs on the virtual clock.
//!
//! Each job is `iodepth` tasks sharing one job state that hands out the next I/O. Jobs in one
//! group start together; a job with `stonewall` starts a new group after every earlier job has
//! finished. In zonemode=zbd, as in fio: sequential writes go to each zone's write pointer,
//! a zone whose room is smaller than the block size is finished and the job moves on, a full
//! zone met when entering it is reset first; reads stay below write pointers
//! (`read_beyond_wp=0`); random reads pick a zone and an offset among written blocks.
//!
//! With `compressed_io=1` (a CCZNS device) writes are compressed writes at each zone's byte
//! write pointer, `bs / compressed_chunk` chunks each, and reads are decompressed reads of
//! chunks that compressed writes of this run put there (the run keeps the chunk index a host
//! would: offset, feedback size and size before compression of every chunk, from the CW
//! feedback). One chunk per I/O gives single-chunk commands; more give multi-chunk ones, whose
//! output budget is set by prefix-chunk prediction (CCZNS §III-C): the first chunk's ratio
//! times the compressed range.
//!
//! The runner's parts: this file holds the run's state and results and drives the groups of
//! jobs; [`setup`] checks a job against the device and builds its state; [`issue`] is the
//! issuing loop (which I/O comes next, and the worker tasks that submit them); [`zones`] is
//! zonemode=zbd (write pointers, resets and finishes, reads below write pointers); [`cczns`]
//! is compressed I/O (the chunk index, decompressed reads); [`memory`] refuses job sets that
//! would not fit the host's memory; [`steadystate`] is fio's steady-state detection (a
//! checker task on the virtual clock that stops jobs), [`latency_target`] the queue-depth
//! search of `latency_target`, [`sprandom`] SanDisk random preconditioning's offsets.

mod cczns;
mod distribution;
pub(crate) mod errors;
mod geometry;
mod issue;
mod latency_target;
mod memory;
mod setup;
mod sprandom;
mod stats;
mod steadystate;
mod verify;
mod worker;
mod zones;

pub use stats::{DirExt, IoStat};
pub use steadystate::SteadyData;

use std::cell::RefCell;
use std::rc::Rc;

use device::DeviceHandle;
use geometry::Geometry;
use report::LatencyHistogram;
use sim::{Rng, Sim};

use super::options::{Direction, JobSpec};
use super::FioError;
use setup::starts_group;

use memory::check_memory;
use setup::{fill_pool, setup};
use worker::worker;

/// Counts for one direction of one job.
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub io_bytes: u64,
    pub ios: u64,
    pub clat: LatencyHistogram,
    /// Depths, latency buckets, bandwidth and IOPS samples ([`stats`]).
    pub ext: DirExt,
}

impl DirStats {
    pub fn merge(&mut self, o: &DirStats) {
        self.io_bytes += o.io_bytes;
        self.ios += o.ios;
        self.clat.merge(&o.clat);
        self.ext.merge(&o.ext);
    }
}

/// What one job did.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub spec: JobSpec,
    pub group: u32,
    pub read: DirStats,
    pub write: DirStats,
    /// Trims (in zonemode=zbd, zone resets made as trims).
    pub trim: DirStats,
    /// From the group's start to the job's last completion.
    pub runtime_ns: u64,
    /// First failure: an NVMe status or a job that found nothing to do.
    pub error: Option<String>,
    /// The errno of `error` as Linux would give it to fio (0 without an error).
    pub errno: i32,
    /// continue_on_error: the errors the job went on after, and the first of them.
    pub total_err: u64,
    pub first_error: i32,
    pub first_error_text: Option<String>,
    /// fsync/fdatasync: syncs issued and their latencies.
    pub sync: LatencyHistogram,
    pub zone_resets: u64,
    pub zone_finishes: u64,
    /// Multi-chunk DRs whose predicted budget held fewer chunks than asked for.
    pub dr_short_reads: u64,
    /// Steady-state detection's window and verdict (`ss_dur`), see [`steadystate`].
    pub steady: Option<SteadyData>,
    /// The queue depth the latency target settled at (fio's `latency_qd`); iodepth
    /// without a target.
    pub latency_depth: u32,
}

/// What a whole run did.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub jobs: Vec<JobResult>,
    /// Virtual time when the last job finished.
    pub sim_end_ns: u64,
}

struct Io {
    dir: Direction,
    lba: u64,
    nlb: u32,
    wait_until: Option<u64>,
    cc: Option<CcIo>,
}

/// The CCZNS part of an I/O.
#[derive(Clone, Copy)]
enum CcIo {
    /// A CW at byte `intra` of the block.
    Write { intra: u32 },
    /// A DR of `chunks` chunks whose compressed range is `cnlb` blocks less `pdsz` bytes.
    Read {
        intra: u32,
        cnlb: u32,
        pdsz: u32,
        chunks: u32,
    },
}

/// One chunk a CW wrote, as the host indexes it.
#[derive(Clone, Copy, Debug)]
struct ChunkEntry {
    /// From the zone start, in the zone's compressed byte space.
    offset: u64,
    feedback: u32,
    pre: u32,
}

/// The chunk index of every zone, shared by the jobs of a run.
type ChunkIndex = Rc<RefCell<Vec<Vec<ChunkEntry>>>>;

struct JobState {
    spec: JobSpec,
    g: Rc<Geometry>,
    bs_lbas: u64,
    /// Region in LBAs: [start, end). In zbd mode both are zone aligned.
    start: u64,
    end: u64,
    cur_zone: u64,
    entering_zone: bool,
    /// A zone just reset whose first write waits for the reset to complete: (zone, bytes
    /// already given out from its start, when the reset completes). Other workers write after
    /// them, not at the start too (they meet the zone reset and empty, that first write not
    /// yet submitted), and wait for the reset as well, so the writes reach the zone in order.
    reserved: Option<(u64, u64, u64)>,
    pos: u64,
    issued: u64,
    /// rate_process=poisson: when (ns after the group's start) the next I/O may issue.
    poisson_next_ns: u64,
    target: u64,
    deadline: Option<u64>,
    rng: Rng,
    done: bool,
    idle_scans: u64,
    result: JobResult,
    last_done: u64,
    group_start: u64,
    /// CCZNS: chunk bytes and chunks per I/O, the run's chunk index, and the next chunk of
    /// the current zone for sequential reads.
    chunk: u64,
    chunks_per_io: u64,
    index: ChunkIndex,
    chunk_cursor: usize,
    /// What the run's jobs share: zonemode=zbd's write zones, the blocks written to verify.
    shared: verify::SharedRun,
    verify: verify::VerifyState,
    /// Per-I/O choices: mixes, `rw=...:N`, rate, thinktime and ramp_time.
    flow: issue::Flow,
    /// `latency_target`: the queue-depth search ([`latency_target`]).
    lat: Option<latency_target::LatState>,
    /// `sprandom`: the preconditioning's regions and invalidations ([`sprandom`]).
    spr: Option<sprandom::SpState>,
}

/// What a run may take of the host's memory.
#[derive(Clone, Debug)]
pub struct RunLimits {
    /// Bytes of host memory the job set (and, with `data_in_memory`, the bytes it writes)
    /// may take.
    pub memory_budget: u64,
    /// The device keeps every byte written in memory (no image): the bytes the jobs write
    /// count against the budget too.
    pub data_in_memory: bool,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            memory_budget: device::default_memory_budget(),
            data_in_memory: false,
        }
    }
}
/// Run `jobs` against `dev` until every job is done; returns per-job results. The job set
/// must fit the default memory budget (half the machine's memory).
pub fn run(sim: &Sim, dev: &DeviceHandle, jobs: &[JobSpec]) -> Result<RunResult, FioError> {
    run_with(sim, dev, jobs, &RunLimits::default())
}

/// [`run`] within `limits`.
pub fn run_with(
    sim: &Sim,
    dev: &DeviceHandle,
    jobs: &[JobSpec],
    limits: &RunLimits,
) -> Result<RunResult, FioError> {
    let g = Rc::new(Geometry::of(dev));
    let chunks: ChunkIndex = Rc::new(RefCell::new(vec![Vec::new(); g.zone_count as usize]));
    let shared = verify::SharedRun::default();
    // Groups: a stonewall job starts a new one.
    let mut group = 0u32;
    let mut states = Vec::new();
    for (i, spec) in jobs.iter().enumerate() {
        if i > 0 && starts_group(spec, &jobs[..i], &states) {
            group += 1;
        }
        states.push(setup(spec, &g, sim, dev, i, group, &chunks, &shared)?);
    }
    check_memory(&states, &g, limits)?;
    let groups: Vec<u32> = states.iter().map(|s| s.result.group).collect();
    for (s, ss) in states.iter_mut().zip(steadystate::setup(jobs, &groups)?) {
        s.result.steady = ss;
    }
    let ss_interval = steadystate::interval_ms(jobs);
    let states: Vec<_> = states
        .into_iter()
        .map(|s| Rc::new(RefCell::new(s)))
        .collect();
    // Data pools: one per job, as fio keeps one buffer set per job.
    let pools: Vec<Rc<Vec<u8>>> = states
        .iter()
        .map(|s| {
            let s = s.borrow();
            if !s.spec.writes() {
                return Rc::new(vec![0u8; (s.bs_lbas * s.g.lba_bytes) as usize]);
            }
            // dedupe_global: jobs with it share one set of buffers (one seed).
            let mut rng = if s.spec.dedupe.global && s.spec.dedupe.percentage > 0 {
                Rng::new(s.spec.randseed.unwrap_or(sim.seed())).stream("fio.dedupe_global")
            } else {
                s.rng.stream("buffers")
            };
            let mut pool = vec![0u8; s.pool_bytes() as usize];
            fill_pool(&mut rng, &mut pool, &s.spec);
            Rc::new(pool)
        })
        .collect();

    let run_over = Rc::new(std::cell::Cell::new(false));
    let driver = {
        let (sim, dev, states) = (sim.clone(), dev.clone(), states.clone());
        let run_over = run_over.clone();
        async move {
            if let Some(ms) = ss_interval {
                let start = sim.now().as_ns();
                let c =
                    steadystate::checker(sim.clone(), states.clone(), ms, start, run_over.clone());
                sim.spawn(c);
            }
            let mut i = 0;
            while i < states.len() {
                let group = states[i].borrow().result.group;
                let group_start = sim.now().as_ns();
                let mut handles = Vec::new();
                while i < states.len() && states[i].borrow().result.group == group {
                    let depth = {
                        let mut s = states[i].borrow_mut();
                        let start = group_start + s.spec.startdelay_ns;
                        s.group_start = start;
                        s.last_done = start;
                        s.deadline = s.spec.runtime_ns.map(|r| start + s.spec.ramp_time_ns + r);
                        let epoch = start + s.spec.ramp_time_ns;
                        if let Some(ss) = s.result.steady.as_mut() {
                            ss.epoch = Some(epoch);
                        }
                        s.workers() as usize
                    };
                    for w in 0..depth {
                        handles.push(sim.spawn(worker(
                            sim.clone(),
                            dev.clone(),
                            states[i].clone(),
                            pools[i].clone(),
                            w,
                        )));
                    }
                    i += 1;
                }
                for h in handles {
                    h.await;
                }
            }
            run_over.set(true);
        }
    };
    sim.block_on(driver);
    let mut results = Vec::new();
    let mut sim_end = 0;
    for s in states {
        let mut s = s.borrow_mut();
        // Move the latency histograms out rather than copy them.
        let (read, write) = (
            std::mem::take(&mut s.result.read),
            std::mem::take(&mut s.result.write),
        );
        let mut r = s.result.clone();
        (r.read, r.write) = (read, write);
        let from = s.stats_start();
        r.runtime_ns = s.last_done.saturating_sub(from);
        r.finish_samples(from, s.last_done);
        sim_end = sim_end.max(s.last_done);
        results.push(r);
    }
    Ok(RunResult {
        jobs: results,
        sim_end_ns: sim_end,
    })
}
