//! What a job set takes of the host's memory, and the check that refuses one over the budget
//! naming what to lower.

use super::geometry::Geometry;
use report::LatencyHistogram;

use super::{JobState, RunLimits};
use crate::fio::FioError;

/// Host memory of one job beside its workers: its state, spec and result.
const JOB_BYTES: u64 = 4 << 10;
/// Host memory of one worker beside its buffers: the task, its future and its join handle.
const WORKER_BYTES: u64 = 1 << 10;

impl JobState {
    pub(super) fn bs_bytes(&self) -> u64 {
        (self.bs_lbas * self.g.lba_bytes).max(1)
    }

    /// Workers (I/Os in flight) the job can use: `iodepth`, or fewer when the job has fewer
    /// I/Os than that to issue (a worker past the last I/O would only find nothing to do).
    pub(super) fn workers(&self) -> u64 {
        let depth = self.spec.iodepth as u64;
        if self.spec.time_based {
            depth
        } else {
            depth.min(self.target.div_ceil(self.bs_bytes()))
        }
    }

    /// The data pool's bytes: one block for reads, a 4 MiB (or larger) ring for writes.
    pub(super) fn pool_bytes(&self) -> u64 {
        let bs = self.bs_bytes();
        if !self.spec.writes() {
            bs
        } else {
            bs.max(4 << 20) + bs
        }
    }

    /// Host memory the job takes: its state, pool and latency histogram, and per worker its
    /// task and buffers (a read's data, the metadata, a CW's chunk list).
    pub(super) fn memory_bytes(&self) -> u64 {
        let bs = self.bs_bytes();
        let meta = self.bs_lbas * self.g.metadata_bytes;
        let buffers = meta + 4 * self.chunks_per_io + if self.spec.reads() { bs } else { 0 };
        // verify keeps an entry (~64 bytes) for every block the job leaves written.
        let verify = if self.spec.verify {
            (self.written_bytes() / self.spec.bs_min.max(1)).saturating_mul(64)
        } else {
            0
        };
        let fixed = (JOB_BYTES + self.pool_bytes() + LatencyHistogram::bytes_for(u64::MAX))
            .saturating_add(verify);
        fixed.saturating_add(self.workers().saturating_mul(WORKER_BYTES + buffers))
    }

    /// Bytes the job leaves written on the device at most: its I/O size, or for a time-based
    /// job its whole region (a zone met full is reset, so no more than the region stays).
    pub(super) fn written_bytes(&self) -> u64 {
        if !self.spec.writes() {
            return 0;
        }
        let region = (self.end - self.start) * self.g.lba_bytes;
        if self.spec.time_based {
            region
        } else {
            self.target.min(region)
        }
    }
}

/// Refuse a job set whose memory (or, on a device in memory, whose written bytes) would not
/// fit the budget, naming what to lower.
pub(super) fn check_memory(
    states: &[JobState],
    g: &Geometry,
    limits: &RunLimits,
) -> Result<(), FioError> {
    let budget = limits.memory_budget;
    let human = device::human_bytes;
    let total = states
        .iter()
        .fold(0u64, |t, s| t.saturating_add(s.memory_bytes()));
    if total > budget {
        let big = states
            .iter()
            .max_by_key(|s| s.memory_bytes())
            .expect("a job set over budget has jobs");
        let clones = states
            .iter()
            .filter(|s| s.spec.name == big.spec.name)
            .count();
        return Err(FioError::option(
            &big.spec.name,
            "numjobs",
            format!(
                "the job set needs about {} of host memory, more than the memory budget of {}: \
                 numjobs={clones} jobs of iodepth={} (each I/O in flight a task and its \
                 buffers, bs={}; a job ~{}); lower numjobs, iodepth or bs, or raise --mem-budget",
                human(total),
                human(budget),
                big.spec.iodepth,
                big.spec.bs,
                human(big.memory_bytes()),
            ),
        ));
    }
    if limits.data_in_memory {
        // A zone in a memory store is reserved whole on its first write, metadata included.
        let zone = g
            .zone_capacity_lbas
            .saturating_mul(g.lba_bytes.saturating_add(g.metadata_bytes));
        let capacity = (g.zone_count as u64).saturating_mul(g.zone_capacity_bytes());
        let written = states
            .iter()
            .fold(0u64, |t, s| t.saturating_add(s.written_bytes()))
            .min(capacity);
        let hint = "create an image (`znslab nvme create IMAGE --preset NAME`) and run on it \
                    with --filename=IMAGE (an image keeps the bytes in a sparse file), or raise \
                    --mem-budget";
        if written > 0 && zone > budget {
            return Err(FioError::new(format!(
                "a zone of this device takes {} of host memory once written (a device in memory \
                 keeps every byte written), more than the memory budget of {}: {hint}",
                human(zone),
                human(budget)
            )));
        }
        if written > budget {
            return Err(FioError::new(format!(
                "the jobs write {} into a device in memory, which keeps every byte written, \
                 more than the memory budget of {}: {hint}",
                human(written),
                human(budget)
            )));
        }
    }
    Ok(())
}
