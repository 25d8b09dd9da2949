//! P9 and P10 of `reproduce zenfsplus`, the application workloads: YCSB's execution times
//! under ZenFS and ZenFS+'s techniques added one by one (Tab. 3, Fig. 14), and db_bench's
//! mixgraph with ZippyDB's parameters (§V-E), beside the paper's figures.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use super::zenfsplus::{Ablation, Run, YCSB_WORKLOADS};
use super::zenfsplus_report::{bench_mb_s, f, near, Report, Row};

/// Tab. 3: YCSB execution time (s), ZenFS+ then ZenFS (B.3).
const TAB3: [(&str, f64, f64); 6] = [
    ("a", 921.9, 1891.3),
    ("b", 749.4, 990.3),
    ("c", 750.8, 948.8),
    ("d", 383.7, 496.3),
    ("e", 3301.1, 4950.5),
    ("f", 877.1, 1374.9),
];

/// §V-E: mixgraph (ZippyDB) MB/s, ZenFS then ZenFS+.
const ZIPPYDB: (f64, f64) = (17.6, 20.5);

impl Report<'_> {
    /// Virtual seconds of YCSB phase `phase` (`load`, `a`...) under configuration `c`.
    fn ycsb_seconds(&self, c: Ablation, phase: &str) -> f64 {
        self.result(&Run::Ycsb(c))
            .and_then(|v| v["phases"].as_array())
            .and_then(|ps| ps.iter().find(|p| p["phase"] == phase))
            .and_then(|p| p["runtime_s"].as_f64())
            .unwrap_or(f64::NAN)
    }

    /// ZenFS+'s (S,I,R) gain over ZenFS on YCSB workload `w`: ZenFS's time over ZenFS+'s,
    /// less 1.
    fn ycsb_gain(&self, w: &str) -> f64 {
        self.ycsb_seconds(Ablation::Zenfs, w) / self.ycsb_seconds(Ablation::Reclaiming, w) - 1.0
    }

    fn mixgraph_mb_s(&self, plus: bool) -> f64 {
        bench_mb_s(self.result(&Run::Mixgraph { plus }), "mixgraph")
    }

    /// Tab. 3's gains (each ±40 % relative), their order, Fig. 14's ablation and ZippyDB's.
    pub(super) fn app_rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        let gains: Vec<f64> = TAB3.iter().map(|(w, _, _)| self.ycsb_gain(w)).collect();
        for ((w, plus, zenfs), &g) in TAB3.iter().zip(&gains) {
            let want = zenfs / plus - 1.0;
            rows.push(Row {
                figure: "Tab. 3",
                what: format!("YCSB {} time gain, ZenFS / ZenFS+ − 1", w.to_uppercase()),
                paper: format!("{:.0}% (±40% relative)", 100.0 * want),
                got: format!(
                    "{} / {} s = {}%",
                    f(self.ycsb_seconds(Ablation::Zenfs, w)),
                    f(self.ycsb_seconds(Ablation::Reclaiming, w)),
                    f(100.0 * g)
                ),
                ok: near(g, want, 0.4),
            });
        }
        // A largest; B, C and D the three smallest; all positive.
        if gains.iter().all(|g| g.is_finite()) {
            let (a, bcd, ef) = (gains[0], &gains[1..4], &gains[4..6]);
            let bcd_max = bcd.iter().copied().fold(f64::MIN, f64::max);
            let ef_min = ef.iter().copied().fold(f64::MAX, f64::min);
            rows.push(Row {
                figure: "Tab. 3",
                what: "gains ordered: A largest, B/C/D smallest, all > 0".into(),
                paper: "A 105% > F 57% ≈ E 50% > B 32% ≈ D 29% ≈ C 26%".into(),
                got: TAB3
                    .iter()
                    .zip(&gains)
                    .map(|((w, _, _), g)| format!("{} {}%", w.to_uppercase(), f(100.0 * g)))
                    .collect::<Vec<_>>()
                    .join(", "),
                ok: Some(
                    gains.iter().all(|&g| g > 0.0)
                        && gains.iter().all(|&g| g <= a)
                        && bcd_max < ef_min.min(a),
                ),
            });
        }
        // Fig. 14: striping alone is no slower than ZenFS anywhere; isolation helps A, E, F.
        let total =
            |c: Ablation, ws: &[&str]| -> f64 { ws.iter().map(|w| self.ycsb_seconds(c, w)).sum() };
        let all: Vec<&str> = TAB3.iter().map(|t| t.0).collect();
        let (z, s) = (total(Ablation::Zenfs, &all), total(Ablation::Striped, &all));
        rows.push(Row {
            figure: "Fig. 14",
            what: "S's time ≤ ZenFS's on every workload".into(),
            paper: "striping is the primary gain".into(),
            got: format!("{} vs {} s in all", f(s), f(z)),
            ok: (z.is_finite() && s.is_finite()).then(|| {
                all.iter().all(|w| {
                    self.ycsb_seconds(Ablation::Striped, w) <= self.ycsb_seconds(Ablation::Zenfs, w)
                })
            }),
        });
        let aef = ["a", "e", "f"];
        let (s3, si3) = (
            total(Ablation::Striped, &aef),
            total(Ablation::Isolated, &aef),
        );
        rows.push(Row {
            figure: "Fig. 14",
            what: "S,I's time ≤ S's on A, E and F".into(),
            paper: "isolation helps further".into(),
            got: format!("{} vs {} s", f(si3), f(s3)),
            ok: (s3.is_finite() && si3.is_finite()).then(|| {
                aef.iter().all(|w| {
                    self.ycsb_seconds(Ablation::Isolated, w)
                        <= self.ycsb_seconds(Ablation::Striped, w)
                })
            }),
        });
        let (mz, mp) = (self.mixgraph_mb_s(false), self.mixgraph_mb_s(true));
        let g = mp / mz - 1.0;
        rows.push(Row {
            figure: "§V-E",
            what: "ZippyDB (mixgraph) MB/s gain, ZenFS+ / ZenFS − 1".into(),
            paper: format!("{} → {} MB/s = +18% (+5…+35%)", ZIPPYDB.0, ZIPPYDB.1),
            got: format!("{} → {} MB/s = {}%", f(mz), f(mp), f(100.0 * g)),
            ok: g.is_finite().then(|| (0.05..=0.35).contains(&g)),
        });
        rows
    }

    /// Tab. 3 / Fig. 14's table (tab3.csv) and chart (fig14), and mixgraph's lines.
    pub(super) fn write_apps(&self, t: &mut String, out: &Path) -> anyhow::Result<()> {
        let phases: Vec<&str> = std::iter::once("load").chain(YCSB_WORKLOADS).collect();
        writeln!(
            t,
            "\n## Tab. 3 / Fig. 14: YCSB execution time (virtual s; {} records of 1 KB, as many \
             operations per workload, one client thread)\n\n| configuration | {} |\n|---|{}",
            super::zenfsplus::ycsb_records(self.scale),
            phases.join(" | "),
            "---|".repeat(phases.len())
        )?;
        let mut csv = String::from("config,phase,seconds\n");
        let mut series = Vec::new();
        for c in Ablation::ALL {
            let secs: Vec<f64> = phases.iter().map(|p| self.ycsb_seconds(c, p)).collect();
            if secs.iter().all(|s| s.is_nan()) {
                continue;
            }
            writeln!(
                t,
                "| {} | {} |",
                c.label(),
                secs.iter().map(|&s| f(s)).collect::<Vec<_>>().join(" | ")
            )?;
            for (p, s) in phases.iter().zip(&secs) {
                writeln!(csv, "{},{p},{s}", c.label())?;
            }
            series.push((c.label().to_string(), secs[1..].to_vec()));
        }
        std::fs::write(out.join("tab3.csv"), csv)?;
        if !series.is_empty() {
            report::plot::BarChart {
                title: "Fig. 14: YCSB execution time",
                y_label: "seconds",
                groups: &YCSB_WORKLOADS.map(|w| w.to_uppercase()),
                series: &series,
            }
            .write(&out.join("fig14"))
            .map_err(|e| anyhow::anyhow!("plotting fig14: {e}"))?;
        }
        let line = |plus: bool| -> Option<String> {
            let v: &Value = self.result(&Run::Mixgraph { plus })?;
            let b = v["benchmarks"]
                .as_array()?
                .iter()
                .find(|b| b["name"] == "mixgraph")?;
            Some(format!(
                "| {} | {} | {} | {} |",
                Run::Mixgraph { plus }.label(),
                f(self.mixgraph_mb_s(plus)),
                f(b["ops_per_sec"].as_f64().unwrap_or(f64::NAN) / 1e3),
                f(b["seconds"].as_f64().unwrap_or(f64::NAN))
            ))
        };
        let lines: Vec<String> = [false, true].into_iter().filter_map(line).collect();
        if !lines.is_empty() {
            writeln!(
                t,
                "\n## §V-E: mixgraph with ZippyDB's parameters\n\n| configuration | MB/s | kops/s | virtual s |\n|---|---|---|---|\n{}",
                lines.join("\n")
            )?;
        }
        Ok(())
    }
}
