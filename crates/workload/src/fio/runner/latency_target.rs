//! The latency target (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), as fio's io_u.c lat_target_* on the virtual clock: the job starts at
//! queue depth 1; at the end of each window (checked after each completion) it goes up
//! (doubling, then bisecting towards the last depth that failed) when at least
//! `latency_percentile` percent of the window's completions took no longer than the target,
//! and down (bisecting towards the last depth that met it) when not. With a percentile of
//! 100 a single completion over the target steps the depth down at once, and at depth 1
//! fails the job (fio's lat_fatal). A step down first lets the I/Os in flight complete (fio's
//! io_u_quiesce). Without `latency_run`, once a step up leaves the depth where it was, the
//! statistics restart for one last window at that depth and the job ends after it.
//!
//! The workers are the job's `iodepth` tasks; a worker waits while the job has the current
//! depth's I/Os in flight (fio's queue_full), woken by each completion.

use std::rc::Rc;

use sim::sync::Notify;

use super::{DirStats, JobState};
use crate::fio::options::LatencyTarget;

/// What a quiesce waits to do once the I/Os in flight have completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterQuiesce {
    NewCycle,
    ResetAndNewCycle,
}

/// fio's `td->latency_*` state of one job.
pub(super) struct LatState {
    opt: LatencyTarget,
    iodepth: u32,
    pub(super) qd: u32,
    qd_high: u32,
    qd_low: u32,
    stable_count: u32,
    failed: u64,
    /// Completions counted (fio's io_blocks summed), and at the cycle's start.
    ios: u64,
    cycle_ios: u64,
    cycle_start: u64,
    end_run: bool,
    in_flight: u32,
    quiesce: Option<AfterQuiesce>,
    /// The first check after ramp_time restarts the search, as fio's reset_all_stats.
    ramp_seen: bool,
    /// When the statistics restarted for the final run.
    pub(super) stats_start: Option<u64>,
    notify: Rc<Notify>,
}

impl LatState {
    /// fio's lat_target_init, for a job with a target.
    pub(super) fn new(opt: &LatencyTarget, iodepth: u32) -> Option<LatState> {
        (opt.target_ns > 0).then(|| LatState {
            opt: opt.clone(),
            iodepth,
            qd: 1,
            qd_high: iodepth,
            qd_low: 1,
            stable_count: 0,
            failed: 0,
            ios: 0,
            cycle_ios: 0,
            cycle_start: 0,
            end_run: false,
            in_flight: 0,
            quiesce: None,
            ramp_seen: false,
            stats_start: None,
            notify: Rc::new(Notify::new()),
        })
    }

    fn new_cycle(&mut self, now: u64) {
        self.cycle_start = now;
        self.cycle_ios = self.ios;
        self.failed = 0;
    }

    /// __lat_target_failed: false when the depth went down, true at depth 1.
    fn failed_step(&mut self) -> bool {
        if self.qd == 1 {
            return true;
        }
        self.qd_high = self.qd;
        if self.qd == self.qd_low {
            self.qd_low -= 1;
        }
        self.qd = (self.qd + self.qd_low) / 2;
        self.stable_count = 0;
        self.quiesce.get_or_insert(AfterQuiesce::NewCycle);
        false
    }

    /// lat_target_success; true when the job is done (the final window met the target).
    fn success(&mut self, now: u64) -> bool {
        let qd = self.qd;
        self.qd_low = self.qd;
        if self.qd + 1 == self.qd_high {
            self.stable_count += 1;
            if self.stable_count >= 3 {
                self.qd_high += 1;
                self.stable_count = 0;
            }
        }
        if self.qd_high != self.iodepth {
            self.qd = (self.qd + self.qd_high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.min(self.iodepth);
        if !self.opt.run && self.qd == qd {
            if self.end_run {
                return true;
            }
            self.end_run = true;
            self.quiesce = Some(AfterQuiesce::ResetAndNewCycle);
        }
        self.new_cycle(now);
        false
    }
}

impl JobState {
    /// fio's queue_full and io_u_quiesce: `Some(notify)` to wait on while the job has its
    /// depth's I/Os in flight or is letting them complete. A quiesce that is over does what
    /// it waited for (a new window; for the final run, fresh statistics) first.
    pub(super) fn lat_gate(&mut self, now: u64) -> Option<Rc<Notify>> {
        let l = self.lat.as_mut()?;
        if l.in_flight == 0 {
            match l.quiesce.take() {
                Some(AfterQuiesce::ResetAndNewCycle) => {
                    // reset_all_stats and reset_io_stats: the figures are the final run's.
                    l.ios = 0;
                    l.stats_start = Some(now);
                    l.new_cycle(now);
                    for d in [
                        &mut self.result.read,
                        &mut self.result.write,
                        &mut self.result.trim,
                    ] {
                        *d = DirStats::default();
                    }
                }
                Some(AfterQuiesce::NewCycle) => l.new_cycle(now),
                None => {}
            }
        }
        if l.quiesce.is_some() || l.in_flight >= l.qd {
            return Some(l.notify.clone());
        }
        None
    }

    /// An I/O of the job was submitted.
    pub(super) fn lat_submitted(&mut self) {
        if let Some(l) = self.lat.as_mut() {
            l.in_flight += 1;
        }
    }

    /// An I/O of the job completed after `lat_ns` (`counted`: it succeeded and is past
    /// ramp_time): fio's lat_target_failed from io_completed, then lat_target_check. An
    /// error when a completion over the target meets depth 1 with a percentile of 100.
    pub(super) fn lat_completed(
        &mut self,
        lat_ns: u64,
        now: u64,
        counted: bool,
    ) -> Result<(), String> {
        let in_ramp = now < self.group_start + self.spec.ramp_time_ns;
        let Some(l) = self.lat.as_mut() else {
            return Ok(());
        };
        l.in_flight = l.in_flight.saturating_sub(1);
        l.notify.notify_waiters();
        if !counted {
            return Ok(());
        }
        if !in_ramp && !l.ramp_seen {
            l.ramp_seen = true;
            if self.spec.ramp_time_ns > 0 && !l.end_run {
                // reset_all_stats at the ramp's end calls lat_target_reset: a new search.
                let quiesce = l.quiesce;
                *l = LatState {
                    in_flight: l.in_flight,
                    notify: l.notify.clone(),
                    ramp_seen: true,
                    quiesce,
                    ..LatState::new(&l.opt, l.iodepth).expect("a target")
                };
                l.new_cycle(now);
            }
        }
        l.ios += 1;
        if lat_ns > l.opt.target_ns {
            if l.opt.percentile == 100.0 {
                if l.failed_step() {
                    self.result.latency_depth = l.qd;
                    return Err(format!(
                        "latency of {lat_ns} nsec exceeds specified max ({} nsec) at queue depth 1",
                        l.opt.target_ns
                    ));
                }
            } else {
                l.failed += 1;
            }
        }
        // lat_target_check, outside the ramp and not while quiescing (fio quiesces in place).
        if !in_ramp && l.quiesce.is_none() && (now - l.cycle_start) / 1000 >= l.opt.window_us {
            let ios = l.ios - l.cycle_ios;
            let success = (ios as f64 - l.failed as f64) / ios as f64 * 100.0;
            if success >= l.opt.percentile {
                if l.success(now) {
                    // td->done: the job ends once its I/Os in flight complete.
                    self.deadline = Some(self.deadline.map_or(now, |d| d.min(now)));
                }
            } else {
                l.failed_step();
            }
        }
        self.result.latency_depth = l.qd;
        Ok(())
    }

    /// When the job's statistics start: its start, or the final run's with a latency target.
    pub(super) fn stats_start(&self) -> u64 {
        self.lat
            .as_ref()
            .and_then(|l| l.stats_start)
            .unwrap_or(self.group_start)
    }
}
