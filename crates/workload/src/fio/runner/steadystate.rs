//! Steady-state detection, as fio's steadystate.c on the virtual clock: every
//! `ss_interval` from the run's start (fio's helper thread timer) each running job's IOPS,
//! bandwidth (bytes/s) and mean completion latency since the last check are taken (summed
//! over the jobs of a group with `group_reporting`), kept in a rolling window of
//! `ss_dur / ss_interval` samples once `ss_ramp` is over, and once the window is full the
//! largest deviation from the window's mean (or the least-squares slope) is compared with
//! the limit: below it the job (with group_reporting its group) has attained steady state
//! and stops. The arithmetic is fio's, integer types and all.

use std::cell::RefCell;
use std::rc::Rc;

use super::JobState;
use crate::fio::options::{JobSpec, SsMetric, SteadyState};
use crate::fio::FioError;

/// One job's steady-state data (fio's `struct steadystate_data`), also its result.
#[derive(Clone, Debug, Default)]
pub struct SteadyData {
    pub spec: SteadyState,
    /// `ss_dur` in whole seconds, as fio keeps it.
    pub dur_s: u64,
    /// Samples in the window: `dur_s / (interval in whole seconds)`, as fio computes it.
    pub intervals: usize,
    /// This job keeps the window (every job, or with group_reporting the group's last).
    pub has_data: bool,
    pub ramp_over: bool,
    pub attained: bool,
    pub buffer_full: bool,
    pub head: usize,
    tail: usize,
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
    pub lat: Vec<u64>,
    pub slope: f64,
    pub deviation: f64,
    pub criterion: f64,
    sum_y: u64,
    sum_x: u64,
    sum_x_sq: u64,
    sum_xy: u64,
    oldest_y: u64,
    /// When the job's statistics start (after ramp_time), set when its group starts.
    pub(super) epoch: Option<u64>,
    prev_time: Option<u64>,
    prev_iops: u64,
    prev_bytes: u64,
    prev_lat_sum: f64,
    prev_lat_samples: u64,
}

impl SteadyData {
    fn new(spec: &SteadyState) -> SteadyData {
        let dur_s = spec.dur_us / 1_000_000;
        let intervals = (dur_s / (spec.interval_us / 1_000_000).max(1)) as usize;
        let n = intervals as u64;
        SteadyData {
            spec: spec.clone(),
            dur_s,
            intervals,
            ramp_over: spec.ramp_us == 0,
            sum_x: n * n.saturating_sub(1) / 2,
            sum_x_sq: n.saturating_sub(1) * n * (2 * n).saturating_sub(1) / 6,
            ..SteadyData::default()
        }
    }

    fn value(&self, i: usize) -> u64 {
        match self.spec.metric {
            SsMetric::Iops => self.iops[i],
            SsMetric::Bw => self.bw[i],
            SsMetric::Lat => self.lat[i],
        }
    }

    fn store(&mut self, iops: u64, bw: u64, lat: f64) {
        self.bw[self.tail] = bw;
        self.iops[self.tail] = iops;
        self.lat[self.tail] = lat as u64;
    }

    fn window_full(&self) -> bool {
        self.buffer_full
            || (self.tail as u32).wrapping_sub(self.head as u32) == self.intervals as u32 - 1
    }

    /// steadystate.c's steadystate_slope.
    fn slope_test(&mut self, iops: u64, bw: u64, lat: f64) -> bool {
        let n = self.intervals;
        self.store(iops, bw, lat);
        let new_val = self.value(self.tail);
        if self.window_full() {
            if !self.buffer_full {
                self.sum_y = 0;
                for i in 0..n {
                    self.sum_y = self.sum_y.wrapping_add(self.value(i));
                    let j = (self.head + i) % n;
                    self.sum_xy = self
                        .sum_xy
                        .wrapping_add((i as u64).wrapping_mul(self.value(j)));
                }
                self.buffer_full = true;
            } else {
                self.sum_y = self.sum_y.wrapping_sub(self.oldest_y).wrapping_add(new_val);
                self.sum_xy = self
                    .sum_xy
                    .wrapping_sub(self.sum_y)
                    .wrapping_add((n as u64).wrapping_mul(new_val));
            }
            self.oldest_y = self.value(self.head);
            let nf = n as f64;
            self.slope = (self.sum_xy as f64 - self.sum_x as f64 * self.sum_y as f64 / nf)
                / (self.sum_x_sq as f64 - self.sum_x as f64 * self.sum_x as f64 / nf);
            self.criterion = if self.spec.pct {
                100.0 * self.slope / (self.sum_y / n as u64) as f64
            } else {
                self.slope
            };
            let result = self.criterion * if self.criterion < 0.0 { -1.0 } else { 1.0 };
            if result < self.spec.limit {
                return true;
            }
        }
        self.tail = (self.tail + 1) % n;
        if self.tail <= self.head {
            self.head = (self.head + 1) % n;
        }
        false
    }

    /// steadystate.c's steadystate_deviation.
    fn deviation_test(&mut self, iops: u64, bw: u64, lat: f64) -> bool {
        let n = self.intervals;
        self.store(iops, bw, lat);
        if self.window_full() {
            if !self.buffer_full {
                self.sum_y = (0..n).fold(0u64, |s, i| s.wrapping_add(self.value(i)));
                self.buffer_full = true;
            } else {
                self.sum_y = self
                    .sum_y
                    .wrapping_sub(self.oldest_y)
                    .wrapping_add(self.value(self.tail));
            }
            self.oldest_y = self.value(self.head);
            let mean = self.sum_y as f64 / n as f64;
            self.deviation = 0.0;
            for i in 0..n {
                let diff = self.value(i) as f64 - mean;
                self.deviation = self
                    .deviation
                    .max(diff * if diff < 0.0 { -1.0 } else { 1.0 });
            }
            self.criterion = if self.spec.pct {
                100.0 * self.deviation / mean
            } else {
                self.deviation
            };
            if self.criterion < self.spec.limit {
                return true;
            }
        }
        self.tail = (self.tail + 1) % n;
        if self.tail == self.head {
            self.head = (self.head + 1) % n;
        }
        false
    }

    /// steadystate.c's steadystate_data_mean (integer division, as fio's).
    pub fn mean(data: &[u64]) -> u64 {
        if data.is_empty() {
            0
        } else {
            data.iter().sum::<u64>() / data.len() as u64
        }
    }

    /// The window in time order, as stat.c prints it: from `head` when steady state was
    /// attained or the window never filled, else from the slot before it.
    pub fn ordered(&self, data: &[u64]) -> Vec<u64> {
        let n = self.intervals;
        if n == 0 || data.len() < n {
            return Vec::new();
        }
        let j = if self.attained || !self.buffer_full {
            self.head
        } else if self.head == 0 {
            n - 1
        } else {
            self.head - 1
        };
        (0..n).map(|l| data[(j + l) % n]).collect()
    }
}

/// fio's state word of a job's steady-state settings, for the consistency check.
fn settings(spec: &JobSpec) -> (u64, u64, u64, u32, usize) {
    let ss = &spec.steady;
    if !ss.enabled() {
        return (0, 0, 0, 0, 0);
    }
    let d = SteadyData::new(ss);
    let state = match ss.metric {
        SsMetric::Iops => 1,
        SsMetric::Bw => 2,
        SsMetric::Lat => 256,
    } | u32::from(ss.slope) << 2
        | u32::from(ss.pct) << 6
        | u32::from(ss.ramp_us == 0) << 4;
    (d.dur_s, ss.limit.to_bits(), ss.ramp_us, state, d.intervals)
}

/// init.c's and td_steadystate_init's run-wide checks, and each job's steady-state data
/// (with group_reporting the window goes to the group's last job, as steadystate_setup).
/// `groups[i]` is job i's group.
pub(super) fn setup(jobs: &[JobSpec], groups: &[u32]) -> Result<Vec<Option<SteadyData>>, FioError> {
    if !jobs.iter().any(|j| j.steady.enabled()) {
        return Ok(vec![None; jobs.len()]);
    }
    for (i, j) in jobs.iter().enumerate() {
        if let Some(o) = jobs
            .iter()
            .find(|o| o.steady.interval_us != j.steady.interval_us)
        {
            return Err(FioError::option(
                &j.name,
                "ss_interval",
                format!(
                    "conflicting ss_check_interval: {} and {} (us), must be globally equal (as fio requires)",
                    j.steady.interval_us, o.steady.interval_us
                ),
            ));
        }
        if (0..i).any(|k| groups[k] == groups[i] && settings(&jobs[k]) != settings(j)) {
            return Err(FioError::option(
                &j.name,
                "steadystate",
                "job rejected: steadystate options must be consistent within reporting groups",
            ));
        }
    }
    let mut out: Vec<Option<SteadyData>> = jobs
        .iter()
        .map(|j| j.steady.enabled().then(|| SteadyData::new(&j.steady)))
        .collect();
    for (i, j) in jobs.iter().enumerate() {
        let last_of_group = !(i + 1..jobs.len())
            .any(|k| groups[k] == groups[i] && jobs[k].group_reporting && jobs[k].steady.enabled());
        if let Some(d) = out[i].as_mut() {
            if !j.group_reporting || last_of_group {
                d.has_data = true;
                d.iops = vec![0; d.intervals];
                d.bw = vec![0; d.intervals];
                d.lat = vec![0; d.intervals];
            }
        }
    }
    Ok(out)
}

/// The check interval of the run in ms (fio's global `ss_check_interval`), when any job
/// uses steady state.
pub(super) fn interval_ms(jobs: &[JobSpec]) -> Option<u64> {
    jobs.iter()
        .find(|j| j.steady.enabled())
        .map(|j| j.steady.interval_us / 1000)
}

/// The helper's task: a check every `interval_ms` from `run_start` until `done` is set.
pub(super) async fn checker(
    sim: sim::Sim,
    states: Vec<Rc<RefCell<JobState>>>,
    interval_ms: u64,
    run_start: u64,
    done: Rc<std::cell::Cell<bool>>,
) {
    let mut tick = 1u64;
    loop {
        let at = run_start + tick * interval_ms * 1_000_000;
        sim.sleep_until(sim::SimInstant::from_ns(at)).await;
        if done.get() {
            return;
        }
        check(&states, at, interval_ms);
        tick += 1;
    }
}

/// steadystate.c's steadystate_check at `now`.
fn check(states: &[Rc<RefCell<JobState>>], now: u64, interval_ms: u64) {
    let mut prev_group: Option<u32> = None;
    let (mut group_bw, mut group_iops, mut group_ramp_over) = (0u64, 0u64, 0u32);
    let (mut group_lat_sum, mut group_lat_samples) = (0f64, 0u64);
    let per = (interval_ms * interval_ms / 1000).max(1);
    for st in states {
        let mut s = st.borrow_mut();
        let s = &mut *s;
        let over = s.flow.over;
        let (gr, group) = (s.spec.group_reporting, s.result.group);
        let r = &mut s.result;
        let (mut ios, mut bytes, mut lat_sum, mut lat_n) = (0u64, 0u64, 0f64, 0u64);
        for d in [&r.read, &r.write, &r.trim] {
            ios += d.ios;
            bytes += d.io_bytes;
            lat_sum += d.clat.mean() * d.clat.count() as f64;
            lat_n += d.clat.count();
        }
        let Some(ss) = r.steady.as_mut() else {
            continue;
        };
        let Some(epoch) = ss.epoch else { continue };
        if now < epoch || over || ss.attained {
            continue;
        }
        if !gr || prev_group != Some(group) {
            (group_bw, group_iops, group_ramp_over) = (0, 0, 0);
            (group_lat_sum, group_lat_samples) = (0.0, 0);
        }
        prev_group = Some(group);
        if ss.spec.ramp_us > 0
            && !ss.ramp_over
            && (now - epoch) / 1000 >= ss.spec.ramp_us + interval_ms * 1000
        {
            ss.ramp_over = true;
        }
        let rate_time = (now - ss.prev_time.unwrap_or(epoch)) / 1_000_000;
        ss.prev_time = Some(now);
        if ss.ramp_over {
            group_bw = group_bw
                .wrapping_add(rate_time.wrapping_mul(bytes.wrapping_sub(ss.prev_bytes)) / per);
            group_iops = group_iops
                .wrapping_add(rate_time.wrapping_mul(ios.wrapping_sub(ss.prev_iops)) / per);
            group_lat_sum += lat_sum - ss.prev_lat_sum;
            group_lat_samples =
                group_lat_samples.wrapping_add(lat_n.wrapping_sub(ss.prev_lat_samples));
            group_ramp_over += 1;
        }
        (ss.prev_iops, ss.prev_bytes) = (ios, bytes);
        (ss.prev_lat_sum, ss.prev_lat_samples) = (lat_sum, lat_n);
        // With group_reporting only the group's last job (which keeps the window) judges, once
        // the ramp is over for one job of the group.
        if !ss.has_data || group_ramp_over == 0 {
            continue;
        }
        let group_lat = if group_lat_samples > 0 {
            group_lat_sum / group_lat_samples as f64
        } else {
            0.0
        };
        let attained = if ss.spec.slope {
            ss.slope_test(group_iops, group_bw, group_lat)
        } else {
            ss.deviation_test(group_iops, group_bw, group_lat)
        };
        if !attained {
            continue;
        }
        if !gr {
            ss.attained = true;
            terminate(s, now);
            continue;
        }
        // With group_reporting every job of the group has attained it and stops.
        for other in states {
            if Rc::ptr_eq(other, st) {
                if let Some(ss) = s.result.steady.as_mut() {
                    ss.attained = true;
                }
                terminate(s, now);
                continue;
            }
            let mut o = other.borrow_mut();
            if o.result.group == group {
                if let Some(ss) = o.result.steady.as_mut() {
                    ss.attained = true;
                }
                terminate(&mut o, now);
            }
        }
    }
}

/// fio_mark_td_terminate: the job issues nothing more; I/Os in flight complete.
fn terminate(s: &mut JobState, now: u64) {
    s.deadline = Some(s.deadline.map_or(now, |d| d.min(now)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(metric: SsMetric, slope: bool) -> SteadyData {
        let spec = SteadyState {
            metric,
            slope,
            pct: true,
            limit: 1.0,
            dur_us: 3_000_000,
            ..SteadyState::default()
        };
        let mut d = SteadyData::new(&spec);
        d.has_data = true;
        (d.iops, d.bw, d.lat) = (vec![0; 3], vec![0; 3], vec![0; 3]);
        d
    }

    #[test]
    fn slope_and_deviation_as_fio_computes_them() {
        let mut d = data(SsMetric::Iops, true);
        assert_eq!((d.intervals, d.sum_x, d.sum_x_sq), (3, 3, 5));
        assert!(!d.slope_test(100, 0, 0.0));
        assert!(!d.slope_test(110, 0, 0.0));
        // Full: slope 10 per sample, 100 * 10 / 110 % of the mean.
        assert!(!d.slope_test(120, 0, 0.0));
        assert!((d.slope - 10.0).abs() < 1e-9);
        assert!((d.criterion - 100.0 * 10.0 / 110.0).abs() < 1e-9);
        // Rolling on: 110, 120, 130 still climbs by 10; then flat samples are steady.
        assert!(!d.slope_test(130, 0, 0.0));
        assert!((d.slope - 10.0).abs() < 1e-9, "{}", d.slope);
        assert!(!d.slope_test(130, 0, 0.0));
        assert!(d.slope_test(130, 0, 0.0));
        d.attained = true;
        assert_eq!(d.ordered(&d.iops), [130, 130, 130]);

        let mut d = data(SsMetric::Bw, false);
        d.deviation_test(0, 100, 0.0);
        d.deviation_test(0, 110, 0.0);
        assert!(!d.deviation_test(0, 120, 0.0));
        assert!((d.deviation - 10.0).abs() < 1e-9);
        assert!((d.criterion - 100.0 * 10.0 / 110.0).abs() < 1e-9);
        // The window not attained and full starts one before head, as stat.c prints it.
        assert_eq!(d.ordered(&d.bw), [100, 110, 120]);
        assert!(!d.deviation_test(0, 121, 0.0));
        assert_eq!(d.ordered(&d.bw), [110, 120, 121]);
        assert!(d.deviation_test(0, 120, 0.0));
        d.attained = true;
        assert_eq!(d.ordered(&d.bw), [120, 121, 120]);
    }
}
