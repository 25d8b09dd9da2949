//! Statistics and output as `stats.c` prints them: per flowop (the FLOW_MASTER flowops in
//! filebench's list order, the last defined first)
//! `"%-20s %dops %8.0lfops/s %5.1lfmb/s %8.3fms/op [%.3fms - %5.3fms]"`, and
//! `"IO Summary: %5d ops %5.3lf ops/s %0.0lf/%0.0lf rd/wr %5.1lfmb/s %5.3fms/op"` over the
//! I/O flowops; log lines as `filebench_log` writes them (`"%4.3f: %s"`, seconds since
//! the start, on stdout; errors on stderr). JSON carries the same figures, named once.

use serde_json::{json, Value};

/// One flowop's figures (`struct flowstats`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowStats {
    pub count: u64,
    pub rcount: u64,
    pub wcount: u64,
    pub bytes: u64,
    pub total_lat_ns: u64,
    pub min_lat_ns: u64,
    pub max_lat_ns: u64,
}

impl FlowStats {
    pub fn record(&mut self, lat_ns: u64, bytes: u64, read: bool, write: bool) {
        if self.count == 0 || lat_ns < self.min_lat_ns {
            self.min_lat_ns = lat_ns;
        }
        self.max_lat_ns = self.max_lat_ns.max(lat_ns);
        self.total_lat_ns += lat_ns;
        self.count += 1;
        self.bytes += bytes;
        if read {
            self.rcount += 1;
        } else if write {
            self.wcount += 1;
        }
    }
}

/// A flowop's line of the breakdown.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowopLine {
    pub name: String,
    pub io: bool,
    pub stats: FlowStats,
}

/// The figures of one snapshot (`stats_snap`).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Seconds since statistics were cleared.
    pub seconds: f64,
    /// At (seconds since the start) for the log prefix.
    pub at: f64,
    pub flowops: Vec<FlowopLine>,
}

const MB: f64 = 1024.0 * 1024.0;

fn per_op_ms(s: &FlowStats) -> f64 {
    if s.count > 0 {
        s.total_lat_ns as f64 / (s.count as f64 * 1e6)
    } else {
        0.0
    }
}

impl Snapshot {
    /// The sum over I/O flowops (FLOW_TYPE_IO).
    pub fn io(&self) -> FlowStats {
        let mut t = FlowStats::default();
        for f in self.flowops.iter().filter(|f| f.io) {
            t.count += f.stats.count;
            t.rcount += f.stats.rcount;
            t.wcount += f.stats.wcount;
            t.bytes += f.stats.bytes;
            t.total_lat_ns += f.stats.total_lat_ns;
        }
        t
    }

    /// `Per-Operation Breakdown` and its lines (without the log prefix of the first).
    pub fn breakdown(&self) -> Vec<String> {
        let t = self.seconds;
        let mut out = vec!["Per-Operation Breakdown".to_string()];
        for f in &self.flowops {
            let s = &f.stats;
            out.push(format!(
                "{:<20} {}ops {:8.0}ops/s {:5.1}mb/s {:8.3}ms/op [{:.3}ms - {:5.3}ms]",
                f.name,
                s.count,
                s.count as f64 / t,
                s.bytes as f64 / MB / t,
                per_op_ms(s),
                s.min_lat_ns as f64 / 1e6,
                s.max_lat_ns as f64 / 1e6
            ));
        }
        out
    }

    pub fn summary(&self) -> String {
        let io = self.io();
        let t = self.seconds;
        format!(
            "IO Summary: {:5} ops {:5.3} ops/s {:.0}/{:.0} rd/wr {:5.1}mb/s {:5.3}ms/op",
            io.count,
            io.count as f64 / t,
            io.rcount as f64 / t,
            io.wcount as f64 / t,
            io.bytes as f64 / MB / t,
            per_op_ms(&io)
        )
    }

    pub fn json(&self) -> Value {
        let io = self.io();
        let t = self.seconds;
        let one = |s: &FlowStats| {
            json!({
                "ops": s.count,
                "ops_per_s": s.count as f64 / t,
                "reads": s.rcount,
                "writes": s.wcount,
                "bytes": s.bytes,
                "mb_per_s": s.bytes as f64 / MB / t,
                "ms_per_op": per_op_ms(s),
            })
        };
        let mut summary = one(&io);
        summary["reads_per_s"] = json!(io.rcount as f64 / t);
        summary["writes_per_s"] = json!(io.wcount as f64 / t);
        json!({
            "seconds": t,
            "flowops": self.flowops.iter().map(|f| {
                let mut v = one(&f.stats);
                v["name"] = json!(f.name);
                v["io"] = json!(f.io);
                v["min_ms"] = json!(f.stats.min_lat_ns as f64 / 1e6);
                v["max_ms"] = json!(f.stats.max_lat_ns as f64 / 1e6);
                v
            }).collect::<Vec<_>>(),
            "io_summary": summary,
        })
    }
}

/// A line filebench logs: at (seconds since the start), on stderr or stdout.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    pub at: f64,
    pub text: String,
    pub stderr: bool,
}

impl LogLine {
    pub fn render(&self) -> String {
        format!("{:4.3}: {}", self.at, self.text)
    }
}
