//! The report of `znslab reproduce cczns`: each of the paper's figures (Fig. 8-12, Tables
//! IV-V, §V-D's ablations) made from the runs' JSON as a Markdown table with the paper's figure
//! beside znslab's (`data/cczns-paper.toml`), a CSV and a chart per figure, and `summary.json`.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};
use workload::scheme;

use super::cczns_paper::{Paper, Run, Versus, MODEL_VERSION};

/// The evaluation's runs and results, and the paper's figures to put beside them.
pub(super) struct Report<'a> {
    pub(super) paper: &'a Paper,
    pub(super) runs: &'a [Run],
    pub(super) results: &'a [Value],
    pub(super) scale: f64,
}

fn phase<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v["phases"].as_array()?.iter().find(|p| p["phase"] == name)
}

/// The mean, NaN (shown as n/a) when there is nothing to average: a folder without the
/// runs it would compare.
fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// A figure as the format asks, or "n/a" when the run behind it is missing (NaN).
struct N(f64);

impl std::fmt::Display for N {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_finite() {
            std::fmt::Display::fmt(&self.0, f)
        } else {
            f.write_str("n/a")
        }
    }
}

fn pct(a: f64, b: f64) -> String {
    if b == 0.0 || !a.is_finite() || !b.is_finite() {
        return "n/a".into();
    }
    format!("{:+.1}%", 100.0 * (a / b - 1.0))
}

impl Report<'_> {
    /// A grouped bar chart into `out/<stem>.png` and `.svg`.
    fn chart(
        out: &Path,
        stem: &str,
        title: &str,
        y_label: &str,
        groups: &[&str],
        series: Vec<(String, Vec<f64>)>,
    ) -> anyhow::Result<()> {
        let groups: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
        report::plot::BarChart {
            title,
            y_label,
            groups: &groups,
            series: &series,
        }
        .write(&out.join(stem))
        .map_err(|e| anyhow::anyhow!("plotting {stem}: {e}"))
    }

    fn find(
        &self,
        group: &str,
        scheme: &str,
        dataset: &str,
        block: usize,
        m: u64,
    ) -> Option<&Value> {
        self.runs
            .iter()
            .zip(self.results)
            .find(|(r, _)| {
                r.group == group
                    && r.scheme == scheme
                    && r.dataset == dataset
                    && r.block_kib == block
                    && r.records_m == m
            })
            .map(|(_, v)| v)
    }

    fn main(&self, scheme: &str, dataset: &str) -> Option<&Value> {
        self.find("main", scheme, dataset, 4, 20)
    }

    fn metric(&self, scheme: &str, dataset: &str, ph: &str, key: &str) -> f64 {
        self.main(scheme, dataset)
            .and_then(|v| phase(v, ph))
            .and_then(|p| p[key].as_f64())
            .unwrap_or(f64::NAN)
    }

    /// Mean over datasets of CC's figure against a scheme's, as (CC / other).
    fn cc_ratio(&self, other: &str, ph: &str, key: &str) -> f64 {
        let r: Vec<f64> = self
            .paper
            .runs
            .datasets
            .iter()
            .map(|d| self.metric("cc", d, ph, key) / self.metric(other, d, ph, key))
            .filter(|x| x.is_finite())
            .collect();
        mean(&r)
    }

    pub(super) fn write(&self, out: &Path, wall_s: f64) -> anyhow::Result<()> {
        let (plan, fig) = (&self.paper.runs, &self.paper.figures);
        let datasets: Vec<&str> = plan.datasets.iter().map(String::as_str).collect();
        let main_schemes: Vec<&str> = plan.main_schemes.iter().map(String::as_str).collect();
        let labels: Vec<&str> = main_schemes.iter().map(|s| label(s)).collect();
        let mut md = String::new();
        let s = self.scale;
        let virt: f64 = self
            .results
            .iter()
            .filter_map(|v| v["virtual_s"].as_f64())
            .sum();
        // Each run is one thread; with --jobs J the wall time is about this sum over J (more
        // when the runs were spread over several invocations by --resume).
        let run_wall: f64 = self
            .results
            .iter()
            .filter_map(|v| v["wall_s"].as_f64())
            .sum();
        let present = self.results.iter().filter(|v| !v.is_null()).count();
        // Which model made the runs (a report made with --report-only may come from another).
        let models: std::collections::BTreeSet<u64> = self
            .results
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| v["model_version"].as_u64().unwrap_or(1))
            .collect();
        let listed = models
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let model = if models.iter().all(|&m| m == MODEL_VERSION) {
            format!(
                "Version {MODEL_VERSION} of znslab's model made them (`MODEL_VERSION`: it changes when figures are meant to move)."
            )
        } else {
            format!(
                "Versions {listed} of znslab's model made them; this build is version {MODEL_VERSION} \
                 (`MODEL_VERSION`: --resume would run them again)."
            )
        };
        // Runs made with a modeled payload (sizes drawn, no codec) say so here, for every
        // figure below.
        let modeled = self
            .results
            .iter()
            .filter(|v| v["payload"] == "modeled")
            .count();
        let payload = match modeled {
            0 => String::new(),
            n if n == present => {
                "**Payload: modeled** (`--payload modeled`): every run's values are \
                 runs of one byte and every codec's stored sizes are drawn from its distribution \
                 measured on the dataset's corpus (`znslab corpus model`); no codec ran. Every \
                 figure below is a modeled one."
                    .to_string()
            }
            n => format!(
                "**Payload: mixed**: {n} of these runs had a modeled payload (sizes drawn, no \
                 codec: their JSON says `\"payload\": \"modeled\"`), the others real bytes."
            ),
        };
        // With --resume, runs from earlier invocations are not in the last one's wall time.
        let last = if wall_s.is_finite() {
            format!(
                "The invocation that ran the last of them took {wall_s:.0} s of wall time on \
                 this machine (runs kept by --resume not included)."
            )
        } else {
            String::new()
        };
        writeln!(
            md,
            "# znslab reproduce cczns — scale {s} ({} records per Load, {} operations per workload)\n\n\
             {present} of {} runs here. Their own wall times add up to {run_wall:.0} s (one core \
             each; with --jobs J the runs take about that over J), their simulated time to \
             {virt:.0} s. {}\n\
             Paper: CCZNS (HPCA'25) §V-C/D. Each figure below is znslab's, beside the paper's \
             where the paper states it.\n",
            (20e6 * s).round(),
            (5e6 * s).round(),
            self.runs.len(),
            [last, model, payload]
                .iter()
                .filter(|t| !t.is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        )?;
        // Fig. 8: write volume in Load.
        let mut csv = String::from("dataset,scheme,flash_bytes,host_bytes\n");
        writeln!(
            md,
            "## Fig. 8 — write volume of YCSB Load (flash bytes programmed, GB)\n"
        )?;
        writeln!(md, "| dataset | {} |", labels.join(" | "))?;
        writeln!(md, "|---|{}", "---|".repeat(main_schemes.len()))?;
        for &d in &datasets {
            let mut row = format!("| {d} |");
            for &sc in &main_schemes {
                let f = self.metric(sc, d, "load", "flash_bytes_programmed");
                let h = self.metric(sc, d, "load", "host_bytes_written");
                write!(row, " {:.3} |", N(f / 1e9))?;
                writeln!(csv, "{d},{sc},{f},{h}")?;
            }
            writeln!(md, "{row}")?;
        }
        std::fs::write(out.join("fig8.csv"), csv)?;
        Self::chart(
            out,
            "fig8",
            &format!("Fig. 8 — write volume of YCSB Load (scale {s})"),
            "flash GB programmed",
            &datasets,
            main_schemes
                .iter()
                .map(|sc| {
                    let v = datasets
                        .iter()
                        .map(|d| self.metric(sc, d, "load", "flash_bytes_programmed") / 1e9)
                        .collect();
                    (label(sc).to_string(), v)
                })
                .collect(),
        )?;
        writeln!(md, "\nCC's write volume against each scheme's (mean over datasets; the paper's in brackets):\n")?;
        for Versus { scheme: sc, paper } in &fig.fig8_cc_vs {
            let r = self.cc_ratio(sc, "load", "flash_bytes_programmed");
            writeln!(md, "- vs {}: {} [{paper}]", label(sc), pct(r, 1.0))?;
        }
        // Fig. 9: throughput.
        let phases: Vec<&str> = std::iter::once("load")
            .chain(plan.main_workloads.iter().map(String::as_str))
            .collect();
        let mut csv = String::from("dataset,scheme,phase,ops_per_s\n");
        writeln!(md, "\n## Fig. 9 — throughput (kops/s)\n")?;
        for &d in &datasets {
            writeln!(md, "\n**{d}**\n\n| workload | {} |", labels.join(" | "))?;
            writeln!(md, "|---|{}", "---|".repeat(main_schemes.len()))?;
            for &ph in &phases {
                let mut row = format!("| {ph} |");
                for &sc in &main_schemes {
                    let t = self.metric(sc, d, ph, "throughput_ops_per_s");
                    write!(row, " {:.1} |", N(t / 1e3))?;
                    writeln!(csv, "{d},{sc},{ph},{t}")?;
                }
                writeln!(md, "{row}")?;
            }
        }
        std::fs::write(out.join("fig9.csv"), csv)?;
        for &d in &datasets {
            Self::chart(
                out,
                &format!("fig9_{d}"),
                &format!("Fig. 9 — throughput on {d} (scale {s})"),
                "kops/s",
                &phases,
                main_schemes
                    .iter()
                    .map(|sc| {
                        let v = phases
                            .iter()
                            .map(|ph| self.metric(sc, d, ph, "throughput_ops_per_s") / 1e3)
                            .collect();
                        (label(sc).to_string(), v)
                    })
                    .collect(),
            )?;
        }
        writeln!(md, "\nCC's Load throughput against each scheme's (mean over datasets; paper in brackets):\n")?;
        for Versus { scheme: sc, paper } in &fig.fig9_load_cc_vs {
            let r = self.cc_ratio(sc, "load", "throughput_ops_per_s");
            writeln!(md, "- vs {}: {} [{paper}]", label(sc), pct(r, 1.0))?;
        }
        writeln!(
            md,
            "\nWhere the Load's time went (Amazon; seconds of the Load: writers stalled on full memtables, on L0, and slowed down by RocksDB's write controller):\n\n| scheme | Load s | memtable stall | L0 stall | slowdown |\n|---|---|---|---|---|"
        )?;
        for &sc in &main_schemes {
            let m = |k| self.metric(sc, "amazon", "load", k);
            writeln!(
                md,
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
                label(sc),
                N(m("runtime_s")),
                N(m("stall_memtable_s")),
                N(m("stall_l0_s")),
                N(m("slowdown_s"))
            )?;
        }
        writeln!(md, "\nCC's throughput in the other workloads against each scheme's (mean over workloads and datasets; paper in brackets):\n")?;
        for Versus { scheme: sc, paper } in &fig.fig9_other_cc_vs {
            let r: Vec<f64> = phases[1..]
                .iter()
                .flat_map(|ph| datasets.iter().map(move |d| (ph, d)))
                .map(|(ph, d)| {
                    self.metric("cc", d, ph, "throughput_ops_per_s")
                        / self.metric(sc, d, ph, "throughput_ops_per_s")
                })
                .filter(|x| x.is_finite())
                .collect();
            let m = mean(&r);
            writeln!(md, "- vs {}: {} [{paper}]", label(sc), pct(m, 1.0))?;
        }
        // Fig. 10: latency, Amazon, Load (insert) and C (read).
        let mut csv = String::from("phase,scheme,mean_us,p99_us,p99.9_us,p99.99_us\n");
        writeln!(
            md,
            "\n## Fig. 10 — latency on Amazon (µs): Load inserts and C reads\n"
        )?;
        writeln!(
            md,
            "| phase | scheme | mean | p99 | p99.9 | p99.99 |\n|---|---|---|---|---|---|"
        )?;
        for (ph, op) in [("load", "INSERT"), ("c", "READ")] {
            let mut series = Vec::new();
            for &sc in &main_schemes {
                let o = self
                    .main(sc, "amazon")
                    .and_then(|v| phase(v, ph))
                    .map(|p| p["operations"][op].clone())
                    .unwrap_or(Value::Null);
                let g = |k: &str| o[k].as_f64().unwrap_or(f64::NAN);
                writeln!(
                    md,
                    "| {ph} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
                    label(sc),
                    N(g("mean_us")),
                    N(g("p99_us")),
                    N(g("p99.9_us")),
                    N(g("p99.99_us"))
                )?;
                writeln!(
                    csv,
                    "{ph},{sc},{},{},{},{}",
                    g("mean_us"),
                    g("p99_us"),
                    g("p99.9_us"),
                    g("p99.99_us")
                )?;
                series.push((
                    label(sc).to_string(),
                    ["mean_us", "p99_us", "p99.9_us", "p99.99_us"]
                        .iter()
                        .map(|k| g(k))
                        .collect(),
                ));
            }
            Self::chart(
                out,
                &format!("fig10_{ph}"),
                &format!("Fig. 10 — {op} latency on Amazon, {ph} (scale {s})"),
                "µs",
                &["mean", "p99", "p99.9", "p99.99"],
                series,
            )?;
        }
        std::fs::write(out.join("fig10.csv"), csv)?;
        writeln!(md, "\n{}", fig.fig10)?;
        // Tables IV and V.
        let (paper_cpu, paper_mem) = (&fig.table4_cpu_pct, &fig.table5_memory_gb);
        let mut csv =
            String::from("scheme,cpu_mean_pct,cpu_max_pct,load_mem_mean_bytes,c_mem_mean_bytes,c_index_filter_bytes\n");
        writeln!(md, "\n## Table IV — host CPU in Load (Amazon; % of 16 cores) and Table V — store memory (MB, mean)\n")?;
        writeln!(md, "| scheme | CPU mean | CPU max | paper mean / max | memory Load | memory C | of which index+filter after C (KB) | paper Load / C (GB, whole system) |\n|---|---|---|---|---|---|---|---|")?;
        for (i, sc) in main_schemes.iter().enumerate() {
            let cm = N(self.metric(sc, "amazon", "load", "cpu_mean_pct"));
            let cx = N(self.metric(sc, "amazon", "load", "cpu_max_pct"));
            let ml = self.metric(sc, "amazon", "load", "memory_mean_bytes");
            let mc = self.metric(sc, "amazon", "c", "memory_mean_bytes");
            let ix = self.metric(sc, "amazon", "c", "index_filter_bytes");
            let paper = |v: Option<&(f64, f64)>| {
                v.map_or("—".to_string(), |p| format!("{} / {}", p.0, p.1))
            };
            writeln!(
                md,
                "| {} | {cm:.1} | {cx:.1} | {} | {:.1} | {:.1} | {:.0} | {} |",
                label(sc),
                paper(paper_cpu.get(i)),
                N(ml / 1e6),
                N(mc / 1e6),
                N(ix / 1e3),
                paper(paper_mem.get(i)),
            )?;
            writeln!(csv, "{sc},{cm},{cx},{ml},{mc},{ix}")?;
        }
        std::fs::write(out.join("table4_5.csv"), csv)?;
        Self::chart(
            out,
            "table4_cpu",
            &format!("Table IV — host CPU in Load, Amazon (scale {s})"),
            "% of 16 cores",
            &labels,
            ["cpu_mean_pct", "cpu_max_pct"]
                .iter()
                .map(|k| {
                    let v = main_schemes
                        .iter()
                        .map(|sc| self.metric(sc, "amazon", "load", k))
                        .collect();
                    (k.trim_end_matches("_pct").replace("cpu_", "CPU "), v)
                })
                .collect(),
        )?;
        // Fig. 11.
        let mut csv = String::from("scheme,block_kib,load_ops_per_s,c_ops_per_s\n");
        let mut fig11: Vec<[(String, Vec<f64>); 2]> = Vec::new();
        writeln!(md, "\n## Fig. 11 — block size (Amazon; kops/s Load / C, C run right after the Load)\n\n| scheme | 4 KiB | 8 KiB | 16 KiB |\n|---|---|---|---|")?;
        for sc in &plan.fig11_schemes {
            let mut row = format!("| {} |", label(sc));
            let mut bars = [
                (label(sc).to_string(), Vec::new()),
                (label(sc).to_string(), Vec::new()),
            ];
            for &b in &plan.fig11_block_kib {
                let v = self.find("fig11", sc, "amazon", b, 20);
                let t = |ph| {
                    v.and_then(|v| phase(v, ph))
                        .and_then(|p| p["throughput_ops_per_s"].as_f64())
                        .unwrap_or(f64::NAN)
                };
                write!(row, " {:.1} / {:.1} |", N(t("load") / 1e3), N(t("c") / 1e3))?;
                writeln!(csv, "{sc},{b},{},{}", t("load"), t("c"))?;
                bars[0].1.push(t("load") / 1e3);
                bars[1].1.push(t("c") / 1e3);
            }
            writeln!(md, "{row}")?;
            fig11.push(bars);
        }
        std::fs::write(out.join("fig11.csv"), csv)?;
        let blocks: Vec<String> = plan
            .fig11_block_kib
            .iter()
            .map(|b| format!("{b} KiB"))
            .collect();
        for (i, ph) in ["load", "c"].iter().enumerate() {
            Self::chart(
                out,
                &format!("fig11_{ph}"),
                &format!("Fig. 11 — throughput by block size, Amazon, {ph} (scale {s})"),
                "kops/s",
                &blocks.iter().map(String::as_str).collect::<Vec<_>>(),
                fig11.iter().map(|b| b[i].clone()).collect(),
            )?;
        }
        writeln!(md, "\n{}", fig.fig11)?;
        // Fig. 12.
        let mut csv = String::from("dataset,records_m,zstd_flash_bytes,cc_flash_bytes\n");
        let mut fig12: Vec<(String, Vec<f64>)> = Vec::new();
        // The main runs' 20 M beside Fig. 12's own.
        let mut records_m = plan.fig12_records_m.clone();
        records_m.push(20);
        records_m.sort_unstable();
        writeln!(md, "\n## Fig. 12 — write volume by records loaded (GB; CC's extra over ZSTD)\n\n| dataset | 10 M×S | 20 M×S | 30 M×S |\n|---|---|---|---|")?;
        for &d in &datasets {
            let mut row = format!("| {d} |");
            for &m in &records_m {
                let get = |sc| {
                    let v = if m == 20 {
                        self.main(sc, d)
                    } else {
                        self.find("fig12", sc, d, 4, m)
                    };
                    v.and_then(|v| phase(v, "load"))
                        .and_then(|p| p["flash_bytes_programmed"].as_f64())
                        .unwrap_or(f64::NAN)
                };
                let (z, c) = (get("zstd"), get("cc"));
                for (name, v) in [("Z", z), ("CC", c)] {
                    let key = format!("{name} {m} M×S");
                    match fig12.iter_mut().find(|(n, _)| *n == key) {
                        Some((_, vals)) => vals.push(v / 1e9),
                        None => fig12.push((key, vec![v / 1e9])),
                    }
                }
                write!(
                    row,
                    " Z {:.3} / CC {:.3} ({}) |",
                    N(z / 1e9),
                    N(c / 1e9),
                    pct(c, z)
                )?;
                writeln!(csv, "{d},{m},{z},{c}")?;
            }
            writeln!(md, "{row}")?;
        }
        std::fs::write(out.join("fig12.csv"), csv)?;
        Self::chart(
            out,
            "fig12",
            &format!("Fig. 12 — write volume by records loaded (scale {s})"),
            "flash GB programmed",
            &datasets,
            fig12,
        )?;
        writeln!(md, "\n{}", fig.fig12)?;
        // Ablations.
        writeln!(md, "\n## §V-D ablations (Amazon; C run right after the Load)\n\n| scheme | Load kops/s | C kops/s | flash GB | error |\n|---|---|---|---|---|")?;
        let mut csv = String::from("scheme,load_ops_per_s,c_ops_per_s,flash_bytes,error\n");
        for sc in std::iter::once("cc").chain(plan.ablation_schemes.iter().map(String::as_str)) {
            // CC's baseline is its Fig. 11 run at 4 KiB, of the same shape (C right after Load).
            let group = if sc == "cc" { "fig11" } else { "ablation" };
            let v = self.find(group, sc, "amazon", 4, 20);
            let t = |ph, k: &str| {
                v.and_then(|v| phase(v, ph))
                    .and_then(|p| p[k].as_f64())
                    .unwrap_or(f64::NAN)
            };
            let err = v.and_then(|v| v["error"].as_str()).unwrap_or("");
            writeln!(
                md,
                "| {sc} | {:.1} | {:.1} | {:.3} | {err} |",
                N(t("load", "throughput_ops_per_s") / 1e3),
                N(t("c", "throughput_ops_per_s") / 1e3),
                N(t("load", "flash_bytes_programmed") / 1e9)
            )?;
            writeln!(
                csv,
                "{sc},{},{},{},{err:?}",
                t("load", "throughput_ops_per_s"),
                t("c", "throughput_ops_per_s"),
                t("load", "flash_bytes_programmed")
            )?;
        }
        std::fs::write(out.join("ablation.csv"), csv)?;
        writeln!(md, "\n{}", fig.ablation)?;
        let errors: Vec<String> = self
            .runs
            .iter()
            .zip(self.results)
            .filter_map(|(r, v)| {
                v["error"]
                    .as_str()
                    .map(|e| format!("- {}: {e}", r.describe()))
            })
            .collect();
        if !errors.is_empty() {
            writeln!(md, "\n## Runs that ended early\n\n{}", errors.join("\n"))?;
        }
        std::fs::write(out.join("report.md"), &md)?;
        std::fs::write(
            out.join("summary.json"),
            serde_json::to_string_pretty(&json!({
                "scale": s,
                "wall_s": wall_s,
                "run_wall_sum_s": run_wall,
                "virtual_s": virt,
                "runs": self.runs.iter().zip(self.results).map(|(r, v)| json!({
                    "run": r.describe(), "file": r.file_name(), "result": v
                })).collect::<Vec<_>>(),
            }))?,
        )?;
        Ok(())
    }
}

fn label(s: &str) -> &'static str {
    scheme::by_name(s).map_or("?", |x| x.label)
}

#[cfg(test)]
mod tests {
    use super::N;

    #[test]
    fn a_missing_figure_reads_n_a() {
        assert_eq!(format!("{:.2}", N(1.0 / 3.0)), "0.33");
        assert_eq!(format!("{:.1}", N(f64::NAN)), "n/a");
        assert_eq!(format!("{:.0}", N(f64::INFINITY)), "n/a");
    }
}
