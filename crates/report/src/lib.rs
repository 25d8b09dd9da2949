//! # report: histograms, the names of reported figures and charts (layer 7)
//!
//! Latency histograms (HDR, 3 significant digits, nanoseconds) with fio's percentile list,
//! small helpers for JSON output, and grouped bar charts in PNG and SVG (`plot`). Workloads and the CLI use these so the same figure has the
//! same name everywhere.
//!
//! May depend on: nothing of the simulator. Leaves out: what is being measured.

pub mod plot;

use hdrhistogram::Histogram;

/// The percentiles fio prints by default.
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The largest latency a histogram tells apart: one virtual hour (longer ones count as an hour).
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// The largest value the buckets of a 1 ns-1 h histogram hold (its last bucket ends at 2^42 - 1).
const TRACKED_MAX_NS: u64 = (1 << 42) - 1;

/// A latency histogram in nanoseconds.
///
/// HDR buckets with 3 significant digits from 1 ns, allocated on the first value and grown to
/// the largest value recorded (a run of 100 µs latencies takes ~32 KiB, one of seconds
/// ~90 KiB, the whole hour ~135 KiB): jobs and directions that record nothing cost nothing.
/// Counts are u32 per bucket (a bucket saturates at 2^32 values; `count` stays exact).
/// Bucket boundaries do not depend on the range, so the percentiles are those of a
/// histogram made for the whole hour up front.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    h: Option<Histogram<u32>>,
    sum_ns: u128,
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Host memory of a histogram holding latencies up to `max_ns`, for estimates.
    pub fn bytes_for(max_ns: u64) -> u64 {
        // 2048 sub-buckets; each bucket beyond the first doubles the range and adds 1024 counts.
        let mut buckets = 1u64;
        while (2048u64 << (buckets - 1)) <= max_ns.min(TRACKED_MAX_NS) {
            buckets += 1;
        }
        (buckets + 1) * 1024 * 4 + 256
    }

    pub fn record(&mut self, ns: u64) {
        let h = self.h.get_or_insert_with(|| {
            let mut h = Histogram::new(3).expect("valid histogram precision");
            h.auto(true);
            h
        });
        // As a histogram made for 1 ns-1 h records: values its buckets reach (up to 2^42 - 1)
        // as they are, larger ones as one hour.
        let v = if ns > TRACKED_MAX_NS {
            MAX_LATENCY_NS
        } else {
            ns.max(1)
        };
        // Growing to one hour cannot fail; saturate rather than panic all the same.
        if h.record(v).is_err() {
            h.saturating_record(v);
        }
        self.sum_ns += ns as u128;
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        if let Some(o) = &other.h {
            match &mut self.h {
                Some(h) => h.add(o).expect("auto-resizing histograms merge"),
                None => self.h = Some(o.clone()),
            }
        }
        self.sum_ns += other.sum_ns;
    }

    pub fn count(&self) -> u64 {
        self.h.as_ref().map_or(0, |h| h.len())
    }
    pub fn min(&self) -> u64 {
        match &self.h {
            Some(h) if !h.is_empty() => h.min(),
            _ => 0,
        }
    }
    pub fn max(&self) -> u64 {
        self.h.as_ref().map_or(0, |h| h.max())
    }
    /// Exact mean of the recorded values.
    pub fn mean(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count() as f64
        }
    }
    pub fn stddev(&self) -> f64 {
        match &self.h {
            Some(h) if !h.is_empty() => h.stdev(),
            _ => 0.0,
        }
    }
    /// Value at percentile `p` (0-100).
    pub fn percentile(&self, p: f64) -> u64 {
        match &self.h {
            Some(h) if !h.is_empty() => h.value_at_percentile(p),
            _ => 0,
        }
    }

    /// The recorded buckets in increasing order: (lowest value, highest value, count). Bucket
    /// bounds are powers of two split in 2048 (values below 2048 exact), so each lies within
    /// one bucket of any coarser power-of-two scheme (fio's 64 per power of two).
    pub fn buckets(&self) -> Vec<(u64, u64, u64)> {
        match &self.h {
            Some(h) => h
                .iter_recorded()
                .map(|v| {
                    let hi = v.value_iterated_to();
                    (h.lowest_equivalent(hi), hi, v.count_at_value() as u64)
                })
                .collect(),
            None => Vec::new(),
        }
    }

    /// fio's `clat_ns` object: min, max, mean, stddev, N and the percentile map.
    pub fn fio_json(&self) -> serde_json::Value {
        let mut pct = serde_json::Map::new();
        for p in FIO_PERCENTILES {
            pct.insert(format!("{p:.6}"), self.percentile(p).into());
        }
        serde_json::json!({
            "min": self.min(),
            "max": self.max(),
            "mean": round3(self.mean()),
            "stddev": round3(self.stddev()),
            "N": self.count(),
            "percentile": pct,
        })
    }
}

/// Round to three decimals so JSON output stays short and stable.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The civil (proleptic Gregorian) date of `days` since 1970-01-01: (year, month 1-12,
/// day 1-31), by Howard Hinnant's `civil_from_days`. Reports print virtual instants as dates.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m as u32, d as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_mean() {
        let mut h = LatencyHistogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.mean(), 500_500.0);
        let p50 = h.percentile(50.0);
        assert!((499_000..=501_000).contains(&p50), "{p50}");
        assert!(h.percentile(99.0) >= 989_000);
        let j = h.fio_json();
        assert_eq!(j["N"], 1000);
        assert!(j["percentile"]["99.990000"].as_u64().expect("number") >= 999_000);
        let mut g = LatencyHistogram::new();
        g.merge(&h);
        assert_eq!(g.count(), 1000);
    }

    #[test]
    fn grown_histograms_give_the_percentiles_of_one_made_for_the_hour() {
        let mut full = Histogram::<u64>::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("bounds");
        let mut h = LatencyHistogram::new();
        let mut x = 12345u64;
        for i in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = match i % 4 {
                0 => x % 100_000 + 1,
                1 => x % 10_000_000 + 1,
                2 => x % 5_000_000_000 + 1,
                _ => x % (2 * TRACKED_MAX_NS),
            };
            full.saturating_record(v.max(1));
            h.record(v);
        }
        assert_eq!(
            (h.count(), h.min(), h.max()),
            (full.len(), full.min(), full.max())
        );
        for p in FIO_PERCENTILES {
            assert_eq!(h.percentile(p), full.value_at_percentile(p), "p{p}");
        }
        assert_eq!(h.stddev(), full.stdev());
        let mut merged = LatencyHistogram::new();
        merged.merge(&LatencyHistogram::new());
        merged.merge(&h);
        assert_eq!(merged.percentile(99.0), h.percentile(99.0));
    }

    #[test]
    fn a_histogram_costs_nothing_until_it_records_and_little_after() {
        let empty = LatencyHistogram::new();
        assert!(empty.h.is_none());
        assert_eq!(
            (empty.count(), empty.max(), empty.percentile(50.0)),
            (0, 0, 0)
        );
        assert!(LatencyHistogram::bytes_for(100_000) < 48 << 10);
        assert!(LatencyHistogram::bytes_for(u64::MAX) < 160 << 10);
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(59), (1970, 3, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_783), (2026, 11, 26));
    }
}
