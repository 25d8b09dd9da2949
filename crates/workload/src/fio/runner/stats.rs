//! The statistics fio's output needs beyond bytes, I/O counts and the latency histogram:
//! I/O depth at submission (fio's `io_u_map`), the latency buckets (`io_u_lat_n/u/m`), the
//! bandwidth and IOPS samples taken every `bw_avg_time`/`iops_avg_time` (500 ms, fio's
//! default) on the virtual clock, and the time a job had I/O in flight (for `disk_util`).
//!
//! The runner calls [`JobResult::submitted`] when a worker submits an I/O and
//! [`DirStats`]`.ext.completed` when it completes; everything here is a pure function of those
//! calls, so the same seed gives the same figures.

use super::{DirStats, JobResult};
use crate::fio::Direction;

/// fio's default `bw_avg_time` and `iops_avg_time`: 500 ms.
pub const AVG_TIME_NS: u64 = 500_000_000;

/// fio's `struct io_stat`: running min, max, mean and sum of squares (Welford), as fio adds
/// samples (`add_stat_sample`) and sums them for group reporting (`sum_stat` with `pure_sum`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IoStat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub s: f64,
    pub samples: u64,
}

impl IoStat {
    pub fn add(&mut self, v: u64) {
        if self.samples == 0 || v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
        let val = v as f64;
        let delta = val - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.samples as f64 + 1.0);
            self.s += delta * (val - self.mean);
        }
        self.samples += 1;
    }

    /// fio's `sum_stat(dst, src, pure_sum = true)`: bandwidth and IOPS of the jobs of a
    /// reported group add up.
    pub fn sum(&mut self, o: &IoStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = o.clone();
        } else {
            self.min += o.min;
            self.max += o.max;
            self.samples += o.samples;
            self.mean += o.mean;
            self.s += o.s;
        }
    }

    /// fio's `calc_lat`: sample standard deviation (n - 1).
    pub fn stddev(&self) -> f64 {
        if self.samples > 1 {
            (self.s / (self.samples as f64 - 1.0)).sqrt()
        } else {
            0.0
        }
    }
}

/// Per-direction figures beyond [`DirStats`]'s own.
#[derive(Clone, Debug, Default)]
pub struct DirExt {
    /// I/Os of this direction submitted at each depth level (1, 2, 4, ..., >=64): the job's
    /// I/Os in flight, this one included.
    pub depth_map: [u64; 7],
    /// Completions by latency: ns buckets 2..1000, us buckets 2..1000, ms buckets 2..>=2000.
    pub lat_n: [u64; 10],
    pub lat_u: [u64; 10],
    pub lat_m: [u64; 12],
    /// Sum of completion latencies (fio's disk `ticks`, in ns here).
    pub ticks_ns: u128,
    /// Bytes and I/Os completed in each 500 ms window from the job's start.
    windows: Vec<(u64, u64)>,
    /// I/Os of this direction in flight, and when the last idle period ended.
    in_flight: u32,
    busy_since: u64,
    /// Time with at least one I/O of this direction in flight.
    pub busy_ns: u64,
    /// Bandwidth (KiB/s) and IOPS samples, made by [`JobResult::finish_samples`].
    pub bw: IoStat,
    pub iops: IoStat,
}

/// The latency bucket thresholds fio uses (`io_u_mark_latency`): 2, 4, 10, 20, 50, 100, 250,
/// 500, 750, 1000 of a unit (and 2000 for ms).
const LAT_RANGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

impl DirExt {
    /// An I/O of this direction completed `lat_ns` after its submission, `since_start_ns`
    /// after its job started.
    pub fn completed(&mut self, bytes: u64, lat_ns: u64, since_start_ns: u64) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.ticks_ns += lat_ns as u128;
        // fio's io_u_mark_lat_nsec/usec/msec: the first range the value is below.
        let bucket = |v: u64| LAT_RANGES.iter().position(|&r| v < r);
        if lat_ns < 1000 {
            let i = bucket(lat_ns).unwrap_or(9);
            self.lat_n[i] += 1;
        } else if lat_ns < 1_000_000 {
            let i = bucket(lat_ns / 1000).unwrap_or(9);
            self.lat_u[i] += 1;
        } else {
            let ms = lat_ns / 1_000_000;
            let i = if ms < 1000 {
                bucket(ms).unwrap_or(9)
            } else if ms < 2000 {
                10
            } else {
                11
            };
            self.lat_m[i] += 1;
        }
        // The window ending at or after the completion: (k-1)*T < t <= k*T is window k-1.
        let w = (since_start_ns.max(1) - 1) / AVG_TIME_NS;
        let w = usize::try_from(w).unwrap_or(usize::MAX - 1);
        if w >= self.windows.len() {
            self.windows.resize(w + 1, (0, 0));
        }
        self.windows[w].0 += bytes;
        self.windows[w].1 += 1;
    }

    fn idle_at(&mut self, now: u64) {
        if self.in_flight == 0 {
            self.busy_ns += now.saturating_sub(self.busy_since);
        }
    }

    /// Samples of every whole window before `end_ns` (from the job's start), as fio takes one
    /// each `bw_avg_time` and skips windows in which nothing completed.
    fn make_samples(&mut self, end_ns: u64) {
        let whole = (end_ns / AVG_TIME_NS) as usize;
        let spent_ms = AVG_TIME_NS / 1_000_000;
        for &(bytes, ios) in self.windows.iter().take(whole) {
            if bytes > 0 {
                self.bw.add(bytes * 1000 / spent_ms / 1024);
            }
            if ios > 0 {
                self.iops.add(ios * 1000 / spent_ms);
            }
        }
        self.windows = Vec::new();
    }

    /// Counts of a group reporting together add up; bandwidth samples sum as fio's do.
    pub fn merge(&mut self, o: &DirExt) {
        for (a, b) in self.depth_map.iter_mut().zip(o.depth_map) {
            *a += b;
        }
        for (a, b) in self.lat_n.iter_mut().zip(o.lat_n) {
            *a += b;
        }
        for (a, b) in self.lat_u.iter_mut().zip(o.lat_u) {
            *a += b;
        }
        for (a, b) in self.lat_m.iter_mut().zip(o.lat_m) {
            *a += b;
        }
        self.ticks_ns += o.ticks_ns;
        self.busy_ns = self.busy_ns.max(o.busy_ns);
        self.bw.sum(&o.bw);
        self.iops.sum(&o.iops);
    }
}

/// fio's depth levels: 1, 2, 4, 8, 16, 32, >=64 (`io_u_mark_depth`).
fn depth_index(depth: u32) -> usize {
    match depth {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

impl JobResult {
    /// The error fio reports for the job (ts->error, ts->verror): its fatal one, or under
    /// continue_on_error the first one it went on after.
    pub fn reported_error(&self) -> Option<(i32, &str)> {
        match (&self.error, &self.first_error_text) {
            (Some(e), _) => Some((self.errno, e)),
            (None, Some(e)) if self.spec.errors.continue_on != 0 => Some((self.first_error, e)),
            _ => None,
        }
    }

    /// A non-fatal error (continue_on_error): counted, the first one kept (update_error_count).
    pub(super) fn count_error(&mut self, errno: i32, text: String) {
        self.total_err += 1;
        if self.total_err == 1 {
            self.first_error = errno;
            self.first_error_text = Some(text);
        }
    }

    /// A worker submits an I/O of direction `dir` at `now`.
    pub(super) fn submitted(&mut self, dir: Direction, now: u64) {
        let depth =
            self.read.ext.in_flight + self.write.ext.in_flight + self.trim.ext.in_flight + 1;
        let d = &mut self.dir_mut(dir).ext;
        if d.in_flight == 0 {
            d.busy_since = now;
        }
        d.in_flight += 1;
        d.depth_map[depth_index(depth)] += 1;
    }

    /// An I/O of direction `dir` completed at `now`, inside ramp_time: it leaves the queue
    /// uncounted, and the busy time counts from here, as fio's stats restart after the ramp.
    pub(super) fn not_counted(&mut self, dir: Direction, now: u64) {
        let d = &mut self.dir_mut(dir).ext;
        d.in_flight = d.in_flight.saturating_sub(1);
        d.busy_since = now;
    }

    /// An I/O of direction `dir` failed at `now` and the job goes on (continue_on_error):
    /// it leaves the queue uncounted.
    pub(super) fn errored(&mut self, dir: Direction, now: u64) {
        let d = &mut self.dir_mut(dir).ext;
        d.in_flight = d.in_flight.saturating_sub(1);
        d.idle_at(now);
    }

    fn dir_mut(&mut self, dir: Direction) -> &mut DirStats {
        match dir {
            Direction::Read => &mut self.read,
            Direction::Write => &mut self.write,
            Direction::Trim => &mut self.trim,
        }
    }

    /// Close the busy periods and make the bandwidth and IOPS samples, at the job's end.
    pub(super) fn finish_samples(&mut self, start_ns: u64, end_ns: u64) {
        for d in [&mut self.read.ext, &mut self.write.ext, &mut self.trim.ext] {
            if d.in_flight > 0 {
                d.in_flight = 0;
                d.idle_at(end_ns);
            }
            d.make_samples(end_ns.saturating_sub(start_ns));
        }
    }
}

impl DirStats {
    /// An I/O of this direction completed at `now`: the figures above and the busy time.
    pub(super) fn completed_at(&mut self, bytes: u64, lat_ns: u64, now: u64, job_start: u64) {
        self.ext
            .completed(bytes, lat_ns, now.saturating_sub(job_start));
        self.ext.idle_at(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welford_and_group_sums_match_fio() {
        let mut s = IoStat::default();
        for v in [10, 20, 30] {
            s.add(v);
        }
        assert_eq!((s.min, s.max, s.samples), (10, 30, 3));
        assert!((s.mean - 20.0).abs() < 1e-9);
        assert!((s.stddev() - 10.0).abs() < 1e-9);
        let mut g = IoStat::default();
        g.sum(&s);
        g.sum(&s);
        assert_eq!((g.min, g.max, g.samples), (20, 60, 6));
        assert!((g.mean - 40.0).abs() < 1e-9);
    }

    #[test]
    fn latency_buckets_and_windows() {
        let mut d = DirExt::default();
        d.completed(4096, 1, 1); // 1 ns: the 2 ns bucket
        d.completed(4096, 999, 2); // 999 ns: 1000 ns bucket
        d.completed(4096, 1500, 3); // 1.5 us: the 2 us bucket
        d.completed(4096, 250_000, 500_000_000); // 250 us: the 500 us bucket; window 0
        d.completed(4096, 3_000_000_000, 500_000_001); // 3 s: >=2000 ms; window 1
        assert_eq!(d.lat_n[0], 1);
        assert_eq!(d.lat_n[9], 1);
        assert_eq!(d.lat_u[0], 1);
        assert_eq!(d.lat_u[7], 1);
        assert_eq!(d.lat_m[11], 1);
        d.make_samples(900_000_000); // one whole window
        assert_eq!(d.bw.samples, 1);
        assert_eq!(d.bw.min, 4 * 4096 * 2 / 1024);
        assert_eq!(d.iops.min, 8);
    }

    #[test]
    fn depth_levels() {
        assert_eq!(
            [1, 2, 3, 4, 8, 16, 32, 64, 1000].map(depth_index),
            [0, 1, 1, 2, 3, 4, 5, 6, 6]
        );
    }
}
