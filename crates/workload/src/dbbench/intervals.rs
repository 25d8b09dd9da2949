//! Figures per interval of virtual time.
//!
//! - db_bench's `--report_interval_seconds` (`ReporterAgent`, tools/db_bench_tool.cc): the
//!   operations finished in each whole interval, written to `--report_file` as
//!   `secs_elapsed,interval_qps` lines. Like db_bench's, the count is per interval, not per
//!   second, and the last partial interval is not written.
//! - znslab's `--latency_interval_ms`: percentiles of the operations *issued* in each
//!   interval (ZenFS+ Fig. 10 plots put() p99 per 100 ms).

use sim::SimInstant;

use super::output::Histogram;

/// Latency intervals kept at most (about 900 bytes each); later operations are left out and
/// the series says so.
pub const MAX_LATENCY_INTERVALS: usize = 100_000;

/// Latencies are kept in units of 100 ns (RocksDB's buckets start at 1).
const UNIT_NS: u64 = 100;

/// One latency interval's operations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalLatency {
    pub ops: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

/// A benchmark's interval series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Intervals {
    /// 0 when not asked for.
    pub report_interval_s: u64,
    /// Operations finished in each whole report interval.
    pub finished: Vec<u64>,
    pub latency_interval_ms: u64,
    pub latency: Vec<IntervalLatency>,
    /// Operations issued after the last latency interval kept.
    pub latency_left_out: u64,
}

impl Intervals {
    /// The report file db_bench writes.
    pub fn report_csv(&self) -> String {
        let mut s = String::from("secs_elapsed,interval_qps\n");
        for (i, n) in self.finished.iter().enumerate() {
            s.push_str(&format!(
                "{},{n}\n",
                (i as u64 + 1) * self.report_interval_s
            ));
        }
        s
    }
}

/// Collects a benchmark's intervals as its operations finish.
pub struct IntervalRecorder {
    start: SimInstant,
    report_ns: u64,
    latency_ns: u64,
    finished: Vec<u64>,
    latency: Vec<Histogram>,
    left_out: u64,
}

impl IntervalRecorder {
    pub fn new(start: SimInstant, report_interval_s: u64, latency_interval_ms: u64) -> Self {
        IntervalRecorder {
            start,
            report_ns: report_interval_s.saturating_mul(1_000_000_000),
            latency_ns: latency_interval_ms.saturating_mul(1_000_000),
            finished: Vec::new(),
            latency: Vec::new(),
            left_out: 0,
        }
    }

    /// `n` operations issued at `t0` finished at `now`, each taking `ns`.
    pub fn record(&mut self, t0: SimInstant, now: SimInstant, ns: u64, n: u64) {
        if let Some(i) = now
            .saturating_since(self.start)
            .as_ns()
            .checked_div(self.report_ns)
        {
            let i = i as usize;
            if self.finished.len() <= i {
                self.finished.resize(i + 1, 0);
            }
            self.finished[i] += n;
        }
        if let Some(i) = t0
            .saturating_since(self.start)
            .as_ns()
            .checked_div(self.latency_ns)
        {
            let i = i as usize;
            if i >= MAX_LATENCY_INTERVALS {
                self.left_out += n;
                return;
            }
            if self.latency.len() <= i {
                self.latency.resize_with(i + 1, Histogram::default);
            }
            for _ in 0..n {
                self.latency[i].add(ns / UNIT_NS);
            }
        }
    }

    /// The series once the benchmark ends at `end` (the interval under way is dropped from
    /// the report, as db_bench's reporter stops without writing it).
    pub fn finish(mut self, end: SimInstant) -> Intervals {
        let whole = end
            .saturating_since(self.start)
            .as_ns()
            .checked_div(self.report_ns)
            .unwrap_or(0) as usize;
        self.finished.resize(whole, 0);
        let us = |v: f64| v * UNIT_NS as f64 / 1000.0;
        Intervals {
            report_interval_s: self.report_ns / 1_000_000_000,
            finished: self.finished,
            latency_interval_ms: self.latency_ns / 1_000_000,
            latency: self
                .latency
                .iter()
                .map(|h| IntervalLatency {
                    ops: h.count(),
                    p50_us: us(h.percentile(50.0)),
                    p99_us: us(h.percentile(99.0)),
                    p999_us: us(h.percentile(99.9)),
                    max_us: us(h.max() as f64),
                })
                .collect(),
            latency_left_out: self.left_out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SimInstant {
        SimInstant::from_ns(5_000_000_000 + ms * 1_000_000)
    }

    #[test]
    fn finished_operations_count_in_whole_intervals_as_db_bench_reports_them() {
        let mut r = IntervalRecorder::new(at(0), 1, 0);
        r.record(at(0), at(10), 10, 1);
        r.record(at(990), at(1200), 10, 3);
        r.record(at(2100), at(2500), 10, 2); // in the interval under way at the end
        let iv = r.finish(at(2600));
        assert_eq!(iv.finished, vec![1, 3]);
        assert_eq!(iv.report_csv(), "secs_elapsed,interval_qps\n1,1\n2,3\n");
        assert!(iv.latency.is_empty());
    }

    #[test]
    fn latency_goes_to_the_interval_an_operation_was_issued_in() {
        let mut r = IntervalRecorder::new(at(0), 0, 100);
        for _ in 0..99 {
            r.record(at(5), at(5), 7_000, 1);
        }
        // A put issued at 50 ms that waited 1.5 ms for a stall counts at 0..100 ms.
        r.record(at(50), at(151), 1_500_000, 1);
        r.record(at(150), at(150), 20_000, 1);
        let iv = r.finish(at(300));
        assert!(iv.finished.is_empty());
        assert_eq!(iv.latency.len(), 2);
        assert_eq!(iv.latency[0].ops, 100);
        assert!(
            (iv.latency[0].p50_us - 7.0).abs() < 1.0,
            "{:?}",
            iv.latency[0]
        );
        assert_eq!(iv.latency[0].max_us, 1500.0);
        assert_eq!(iv.latency[1].ops, 1);
        assert!((iv.latency[1].p99_us - 20.0).abs() < 0.01);
    }

    #[test]
    fn latency_intervals_are_bounded() {
        let mut r = IntervalRecorder::new(at(0), 0, 1);
        r.record(at(MAX_LATENCY_INTERVALS as u64 + 3), at(0), 1, 4);
        let iv = r.finish(at(0));
        assert!(iv.latency.is_empty());
        assert_eq!(iv.latency_left_out, 4);
    }
}
