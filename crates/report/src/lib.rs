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

/// A latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
    sum_ns: u128,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        // 1 ns to one virtual hour; values beyond are clamped (saturating record).
        let h =
            Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds");
        LatencyHistogram { h, sum_ns: 0 }
    }

    pub fn record(&mut self, ns: u64) {
        self.h.saturating_record(ns.max(1));
        self.sum_ns += ns as u128;
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.h
            .add(&other.h)
            .expect("histograms with the same bounds merge");
        self.sum_ns += other.sum_ns;
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }
    pub fn min(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.min()
        }
    }
    pub fn max(&self) -> u64 {
        self.h.max()
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
        if self.count() == 0 {
            0.0
        } else {
            self.h.stdev()
        }
    }
    /// Value at percentile `p` (0-100).
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.value_at_percentile(p)
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
}
