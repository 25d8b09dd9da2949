//! `znslab reproduce cczns [--scale S]`: CCZNS §V-C/D on the store. Every run is one
//! experiment (lab::experiment) on a fresh `cczns` (or `cczns-balloon`) device; the store's
//! sizes scale with S so the tree keeps the paper's shape at fewer records.
//!
//! Runs: the seven schemes (and the transparent block SSD, T) × three datasets, each a Load
//! of 20 M × S records then workloads A, B, C, D, E, F and uniform A and B of 5 M × S
//! operations each on the loaded store (Fig. 8, 9, 10, Tables IV, V); block sizes 4, 8 and 16
//! KiB for QAT, ZSTD, ZSTDPC and CC on Amazon, Load then C (Fig. 11; CC's 4 KiB run is also
//! the ablations' baseline); 10 M and 30 M × S records for ZSTD and CC on every dataset, Load
//! only (Fig. 12); the two ablations on Amazon, Load then C (§V-D).

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{json, Value};
use workload::dataset::Dataset;
use workload::scheme;
use workload::ycsb::YcsbConfig;

use super::reproduce_cmd::{output_dir, run_parallel, Args, Describe};

const DATASETS: [&str; 3] = ["amazon", "reddit", "random"];

/// The model's version, in every run's JSON: --resume keeps only runs made by the same one.
/// Bump it in a commit that changes any figure (not in one that only makes runs faster).
/// 2: lookups read the device without holding the store's lock (RocksDB's way).
/// 3: so do scans, and zonefs no longer resets a zone two deletions chose (one YCSB thread at
/// 0.005: E moved by 0.02%, zone resets counted 80 -> 72 for ZSTD, the rest identical).
const MODEL_VERSION: u64 = 3;

/// The paper's seven schemes, then a transparently compressing block SSD (not in its figures;
/// its columns have no paper figure beside them).
const MAIN_SCHEMES: [&str; 8] = [
    "no", "snappy", "qat", "zstd", "zstdpc", "balloon", "cc", "tcssd",
];

/// One experiment of the evaluation.
#[derive(Clone)]
struct Run {
    /// Which figure(s) it feeds: main, fig11, fig12, ablation.
    group: &'static str,
    scheme: &'static str,
    dataset: &'static str,
    block_kib: usize,
    /// Records in millions at S = 1 (10, 20, 30).
    records_m: u64,
    /// Workloads after the Load.
    runs: Vec<&'static str>,
}

impl Describe for Run {
    fn describe(&self) -> String {
        format!(
            "{:<8} {:<12} {:<7} {:>2}K {}M",
            self.group, self.scheme, self.dataset, self.block_kib, self.records_m
        )
    }
}

impl Run {
    fn file_name(&self) -> String {
        format!(
            "{}-{}-{}-{}k-{}m.json",
            self.group, self.scheme, self.dataset, self.block_kib, self.records_m
        )
    }
}

/// The YCSB workload files, embedded (the repository's `workloads/`).
fn workload_text(name: &str) -> &'static str {
    match name {
        "a" | "a-uniform" => include_str!("../../../workloads/workloada"),
        "b" | "b-uniform" => include_str!("../../../workloads/workloadb"),
        "c" => include_str!("../../../workloads/workloadc"),
        "d" => include_str!("../../../workloads/workloadd"),
        "e" => include_str!("../../../workloads/workloade"),
        _ => include_str!("../../../workloads/workloadf"),
    }
}

impl Run {
    /// Records per Load and operations per workload at scale `s`.
    fn counts(&self, s: f64) -> (u64, u64) {
        let records = ((self.records_m * 1_000_000) as f64 * s)
            .round()
            .max(1000.0) as u64;
        let ops = (5e6 * s).round().max(1000.0) as u64;
        (records, ops)
    }

    /// This run's JSON in `out` from an earlier invocation, if it was made at scale `s` with
    /// `seed`, the same `setup` and model version, and ended without an error.
    fn earlier_result(&self, out: &Path, s: f64, seed: u64, setup: Setup) -> Option<Value> {
        let text = std::fs::read_to_string(out.join(self.file_name())).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        let (records, ops) = self.counts(s);
        (v["records"] == records
            && v["operations"] == ops
            && v["seed"] == seed
            && v["device_scaled"].as_bool().unwrap_or(false) == setup.scale_device
            && v["threads"].as_u64().unwrap_or(1) == setup.threads as u64
            && v["model_version"].as_u64().unwrap_or(1) == MODEL_VERSION
            && v["error"].is_null())
        .then_some(v)
    }
}

fn plan() -> Vec<Run> {
    let mut runs = Vec::new();
    let all = vec!["a", "b", "c", "d", "e", "f", "a-uniform", "b-uniform"];
    for d in DATASETS {
        for s in MAIN_SCHEMES {
            runs.push(Run {
                group: "main",
                scheme: s,
                dataset: d,
                block_kib: 4,
                records_m: 20,
                runs: all.clone(),
            });
        }
    }
    // Fig. 11 and the ablations run C right after the Load (the main runs' C comes after A
    // and B have warmed the block cache), so each compares with runs of its own shape: 4 KiB
    // here too, and CC's 4 KiB run is the ablations' baseline.
    for s in ["qat", "zstd", "zstdpc", "cc"] {
        for b in [4, 8, 16] {
            runs.push(Run {
                group: "fig11",
                scheme: s,
                dataset: "amazon",
                block_kib: b,
                records_m: 20,
                runs: vec!["c"],
            });
        }
    }
    for d in DATASETS {
        for s in ["zstd", "cc"] {
            for m in [10, 30] {
                runs.push(Run {
                    group: "fig12",
                    scheme: s,
                    dataset: d,
                    block_kib: 4,
                    records_m: m,
                    runs: vec![],
                });
            }
        }
    }
    for s in ["cc-single-dr", "cc-single-cw"] {
        runs.push(Run {
            group: "ablation",
            scheme: s,
            dataset: "amazon",
            block_kib: 4,
            records_m: 20,
            runs: vec!["c"],
        });
    }
    runs
}

/// Store options at scale `s`: RocksDB 8.11's defaults with the paper's 4 KiB blocks (or the
/// run's) and 4 GB block cache, and the sizes that shape the tree (memtable, L1 target, file
/// size, cache) scaled by S, so a Load of 20 M × S records builds the tree 20 M builds.
fn store_options(s: f64, block_kib: usize) -> host::lsm::db::DbOptions {
    let scaled = |v: u64, floor: u64| ((v as f64 * s) as u64).max(floor);
    let mut o = host::lsm::db::DbOptions::default();
    o.table.block_size = block_kib << 10;
    o.write_buffer_size = scaled(64 << 20, 256 << 10) as usize;
    o.target_file_size = scaled(64 << 20, 256 << 10);
    o.max_bytes_for_level_base = scaled(256 << 20, 1 << 20);
    o.block_cache_bytes = scaled(4 << 30, 4 << 20);
    o
}

/// How a run is set up beyond its scale and seed (all in its JSON, so --resume can compare).
#[derive(Clone, Copy)]
struct Setup {
    scale_device: bool,
    threads: usize,
}

fn one(
    r: &Run,
    s: f64,
    seed: u64,
    setup: Setup,
    images: Option<&Path>,
) -> anyhow::Result<(String, Value)> {
    let sch = scheme::by_name(r.scheme).context("scheme")?;
    let mut opts = store_options(s, r.block_kib);
    sch.apply(&mut opts);
    let (records, ops) = r.counts(s);
    let mut load = YcsbConfig {
        recordcount: records,
        operationcount: ops,
        dataset: Dataset::parse(r.dataset)?,
        seed,
        ..YcsbConfig::default()
    };
    load.load_file(workload_text("a"))?;
    load.recordcount = records;
    load.operationcount = ops;
    load.threads = setup.threads;
    let runs = r
        .runs
        .iter()
        .map(|w| {
            let mut c = load.clone();
            c.load_file(workload_text(w))?;
            c.recordcount = records;
            c.operationcount = ops;
            c.threads = setup.threads;
            if w.ends_with("uniform") {
                c.set("requestdistribution", "uniform")?;
            }
            Ok((w.to_string(), c))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut device = crate::load_device(sch.device)?;
    if setup.scale_device {
        // Zones are whole blocks on half the dies: fewer pages per block, smaller zones.
        let n = &mut device.nand;
        n.pages_per_block =
            ((n.pages_per_block as f64 * s).round() as u32).max(n.pages_per_program);
        device
            .layout()
            .map_err(|e| anyhow::anyhow!("--scale-device at scale {s}: {e}"))?;
    }
    let e = lab::experiment::Experiment {
        device,
        mkfs: opts.mkfs_options(Default::default()),
        opts,
        // The paper's VM: 16 cores.
        cores: 16,
        load,
        runs,
        image: images.map(|d| d.join(r.file_name().replace(".json", ".img"))),
    };
    let mut v = lab::experiment::run(e)?;
    v["scheme"] = json!(sch.name);
    v["label"] = json!(sch.label);
    v["dataset"] = json!(r.dataset);
    v["group"] = json!(r.group);
    v["block_kib"] = json!(r.block_kib);
    v["records"] = json!(records);
    v["operations"] = json!(ops);
    v["seed"] = json!(seed);
    v["device_scaled"] = json!(setup.scale_device);
    v["threads"] = json!(setup.threads);
    v["model_version"] = json!(MODEL_VERSION);
    Ok((r.file_name(), v))
}

pub fn reproduce(args: Args) -> anyhow::Result<ExitCode> {
    let out = output_dir(&args);
    // A report made again keeps the scale and wall time its runs had.
    let previous: Value = match args.report_only {
        true => std::fs::read_to_string(out.join("summary.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null),
        false => Value::Null,
    };
    let s = previous["scale"].as_f64().unwrap_or(args.scale);
    if !(s > 0.0 && s <= 1.0) {
        anyhow::bail!("--scale {s}: use a fraction in (0, 1] of the paper's 20 M records");
    }
    // Which runs, checked before anything is made.
    let mut runs = plan();
    if let Some(only) = &args.only {
        let all: Vec<String> = runs.iter().map(|r| r.file_name()).collect();
        runs.retain(|r| r.file_name().contains(only.as_str()));
        if runs.is_empty() {
            anyhow::bail!(
                "--only {only}: no run's name contains it; --only takes any part of these \
                 names: {}",
                all.iter()
                    .map(|n| n.trim_end_matches(".json"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    for d in DATASETS {
        crate::corpus_cmd::ensure_for(Dataset::parse(d)?)?;
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let seed = args.seed;
    let setup = Setup {
        scale_device: args.scale_device,
        threads: args.threads as usize,
    };
    let (results, wall_s) = if args.report_only {
        let results: Vec<Value> = runs
            .iter()
            .map(|r| {
                let path = out.join(r.file_name());
                match std::fs::read_to_string(&path) {
                    Ok(text) => serde_json::from_str(&text)
                        .with_context(|| format!("{}: not a run's JSON", path.display())),
                    Err(_) => Ok(Value::Null),
                }
            })
            .collect::<anyhow::Result<_>>()?;
        if results.iter().all(Value::is_null) {
            anyhow::bail!(
                "--report-only: no run's JSON in {} (run without it first)",
                out.display()
            );
        }
        (results, previous["wall_s"].as_f64().unwrap_or(f64::NAN))
    } else {
        let images = args
            .image_dir
            .clone()
            .or_else(|| (s > 0.02).then(|| out.join("images")));
        if let Some(d) = &images {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            eprintln!("devices kept in sparse image files under {}", d.display());
        }
        let earlier: Vec<Option<Value>> = runs
            .iter()
            .map(|r| {
                args.resume
                    .then(|| r.earlier_result(&out, s, seed, setup))
                    .flatten()
            })
            .collect();
        let todo: Vec<Run> = runs
            .iter()
            .zip(&earlier)
            .filter(|(_, e)| e.is_none())
            .map(|(r, _)| r.clone())
            .collect();
        if args.resume {
            eprintln!(
                "--resume: {} of {} runs kept from {}",
                runs.len() - todo.len(),
                runs.len(),
                out.display()
            );
        }
        let (fresh, wall) = run_parallel(&args, "cczns", &todo, |r| {
            one(r, s, seed, setup, images.as_deref())
        })?;
        if let Some(d) = &images {
            let _ = std::fs::remove_dir(d);
        }
        let mut fresh = fresh.into_iter();
        let results = earlier
            .into_iter()
            .map(|e| e.or_else(|| fresh.next()).unwrap_or(Value::Null))
            .collect();
        (results, wall.elapsed().as_secs_f64())
    };
    let report = Report {
        runs: &runs,
        results: &results,
        scale: s,
    };
    report.write(&out, wall_s)?;
    println!("{}", std::fs::read_to_string(out.join("report.md"))?);
    Ok(ExitCode::SUCCESS)
}

struct Report<'a> {
    runs: &'a [Run],
    results: &'a [Value],
    scale: f64,
}

fn phase<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    v["phases"].as_array()?.iter().find(|p| p["phase"] == name)
}

/// The mean, NaN (shown as n/a) when there is nothing to average: a folder without the
/// runs it would compare.
fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
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
        let r: Vec<f64> = DATASETS
            .iter()
            .map(|d| self.metric("cc", d, ph, key) / self.metric(other, d, ph, key))
            .filter(|x| x.is_finite())
            .collect();
        mean(&r)
    }

    fn write(&self, out: &Path, wall_s: f64) -> anyhow::Result<()> {
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
            format!("Model {MODEL_VERSION} made them (`MODEL_VERSION`).")
        } else {
            format!(
                "Model {listed} made them; this build is model {MODEL_VERSION} (`MODEL_VERSION`: \
                 --resume would run them again)."
            )
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
            [last, model]
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
        writeln!(md, "| dataset | {} |", MAIN_SCHEMES.map(label).join(" | "))?;
        writeln!(md, "|---|{}", "---|".repeat(MAIN_SCHEMES.len()))?;
        for d in DATASETS {
            let mut row = format!("| {d} |");
            for sc in MAIN_SCHEMES {
                let f = self.metric(sc, d, "load", "flash_bytes_programmed");
                let h = self.metric(sc, d, "load", "host_bytes_written");
                write!(row, " {:.3} |", f / 1e9)?;
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
            &DATASETS,
            MAIN_SCHEMES
                .iter()
                .map(|sc| {
                    let v = DATASETS
                        .iter()
                        .map(|d| self.metric(sc, d, "load", "flash_bytes_programmed") / 1e9)
                        .collect();
                    (label(sc).to_string(), v)
                })
                .collect(),
        )?;
        writeln!(md, "\nCC's write volume against each scheme's (mean over datasets; the paper's in brackets):\n")?;
        for (sc, paper) in [
            ("no", "-44.5%"),
            ("snappy", "-25.2%"),
            ("balloon", "-12.6%"),
            ("qat", "+7.0% (QAT 6.5% below CC)"),
            ("zstd", "+9.6% (ZSTD 8.8% below CC)"),
            ("zstdpc", "+9.4% (ZSTDPC 8.6% below CC)"),
            ("tcssd", "not in the paper"),
        ] {
            let r = self.cc_ratio(sc, "load", "flash_bytes_programmed");
            writeln!(md, "- vs {}: {} [{paper}]", label(sc), pct(r, 1.0))?;
        }
        // Fig. 9: throughput.
        let phases = [
            "load",
            "a",
            "b",
            "c",
            "d",
            "e",
            "f",
            "a-uniform",
            "b-uniform",
        ];
        let mut csv = String::from("dataset,scheme,phase,ops_per_s\n");
        writeln!(md, "\n## Fig. 9 — throughput (kops/s)\n")?;
        for d in DATASETS {
            writeln!(
                md,
                "\n**{d}**\n\n| workload | {} |",
                MAIN_SCHEMES.map(label).join(" | ")
            )?;
            writeln!(md, "|---|{}", "---|".repeat(MAIN_SCHEMES.len()))?;
            for ph in phases {
                let mut row = format!("| {ph} |");
                for sc in MAIN_SCHEMES {
                    let t = self.metric(sc, d, ph, "throughput_ops_per_s");
                    write!(row, " {:.1} |", t / 1e3)?;
                    writeln!(csv, "{d},{sc},{ph},{t}")?;
                }
                writeln!(md, "{row}")?;
            }
        }
        std::fs::write(out.join("fig9.csv"), csv)?;
        for d in DATASETS {
            Self::chart(
                out,
                &format!("fig9_{d}"),
                &format!("Fig. 9 — throughput on {d} (scale {s})"),
                "kops/s",
                &phases,
                MAIN_SCHEMES
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
        let paper_load = [
            ("no", "+3.6%"),
            ("snappy", "+43.7%"),
            ("qat", "+258% (3.58×)"),
            ("zstd", "+221% (3.21×)"),
            ("zstdpc", "+75.1%"),
            ("balloon", "+65.3%"),
            ("tcssd", "not in the paper"),
        ];
        for (sc, paper) in paper_load {
            let r = self.cc_ratio(sc, "load", "throughput_ops_per_s");
            writeln!(md, "- vs {}: {} [{paper}]", label(sc), pct(r, 1.0))?;
        }
        writeln!(
            md,
            "\nWhere the Load's time went (Amazon; seconds of the Load: writers stalled on full memtables, on L0, and slowed down by RocksDB's write controller):\n\n| scheme | Load s | memtable stall | L0 stall | slowdown |\n|---|---|---|---|---|"
        )?;
        for sc in MAIN_SCHEMES {
            let m = |k| self.metric(sc, "amazon", "load", k);
            writeln!(
                md,
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
                label(sc),
                m("runtime_s"),
                m("stall_memtable_s"),
                m("stall_l0_s"),
                m("slowdown_s")
            )?;
        }
        writeln!(md, "\nCC's throughput in the other workloads against each scheme's (mean over workloads and datasets; paper in brackets):\n")?;
        let paper_other = [
            "+10.2%",
            "+11.7%",
            "+32.0%",
            "+24.1%",
            "+20.2%",
            "+10.4%",
            "not in the paper",
        ];
        for (i, sc) in ["no", "snappy", "qat", "zstd", "zstdpc", "balloon", "tcssd"]
            .iter()
            .enumerate()
        {
            let r: Vec<f64> = phases[1..]
                .iter()
                .flat_map(|ph| DATASETS.iter().map(move |d| (ph, d)))
                .map(|(ph, d)| {
                    self.metric("cc", d, ph, "throughput_ops_per_s")
                        / self.metric(sc, d, ph, "throughput_ops_per_s")
                })
                .filter(|x| x.is_finite())
                .collect();
            let m = mean(&r);
            writeln!(
                md,
                "- vs {}: {} [{}]",
                label(sc),
                pct(m, 1.0),
                paper_other[i]
            )?;
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
            for sc in MAIN_SCHEMES {
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
                    g("mean_us"),
                    g("p99_us"),
                    g("p99.9_us"),
                    g("p99.99_us")
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
        writeln!(md, "\nPaper (Load): CC's mean, p99.9, p99.99 latency 49.5%, 49.5%, 56.8% below ZSTDPC's; 50.0%, 47.9%, 53.7% below Balloon's.")?;
        // Tables IV and V.
        let paper_cpu = [
            (5.0, 12.0),
            (7.2, 17.1),
            (7.8, 19.4),
            (8.0, 17.9),
            (21.6, 50.0),
            (5.2, 11.8),
            (5.8, 12.3),
        ];
        let paper_mem = [
            (2.77, 6.51),
            (2.88, 6.68),
            (2.63, 6.55),
            (2.63, 6.56),
            (3.15, 7.05),
            (2.65, 6.60),
            (3.24, 7.25),
        ];
        let mut csv =
            String::from("scheme,cpu_mean_pct,cpu_max_pct,load_mem_mean_bytes,c_mem_mean_bytes,c_index_filter_bytes\n");
        writeln!(md, "\n## Table IV — host CPU in Load (Amazon; % of 16 cores) and Table V — store memory (MB, mean)\n")?;
        writeln!(md, "| scheme | CPU mean | CPU max | paper mean / max | memory Load | memory C | of which index+filter after C (KB) | paper Load / C (GB, whole system) |\n|---|---|---|---|---|---|---|---|")?;
        for (i, sc) in MAIN_SCHEMES.iter().enumerate() {
            let cm = self.metric(sc, "amazon", "load", "cpu_mean_pct");
            let cx = self.metric(sc, "amazon", "load", "cpu_max_pct");
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
                ml / 1e6,
                mc / 1e6,
                ix / 1e3,
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
            &MAIN_SCHEMES.map(label),
            ["cpu_mean_pct", "cpu_max_pct"]
                .iter()
                .map(|k| {
                    let v = MAIN_SCHEMES
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
        for sc in ["qat", "zstd", "zstdpc", "cc"] {
            let mut row = format!("| {} |", label(sc));
            let mut bars = [
                (label(sc).to_string(), Vec::new()),
                (label(sc).to_string(), Vec::new()),
            ];
            for b in [4, 8, 16] {
                let v = self.find("fig11", sc, "amazon", b, 20);
                let t = |ph| {
                    v.and_then(|v| phase(v, ph))
                        .and_then(|p| p["throughput_ops_per_s"].as_f64())
                        .unwrap_or(f64::NAN)
                };
                write!(row, " {:.1} / {:.1} |", t("load") / 1e3, t("c") / 1e3)?;
                writeln!(csv, "{sc},{b},{},{}", t("load"), t("c"))?;
                bars[0].1.push(t("load") / 1e3);
                bars[1].1.push(t("c") / 1e3);
            }
            writeln!(md, "{row}")?;
            fig11.push(bars);
        }
        std::fs::write(out.join("fig11.csv"), csv)?;
        for (i, ph) in ["load", "c"].iter().enumerate() {
            Self::chart(
                out,
                &format!("fig11_{ph}"),
                &format!("Fig. 11 — throughput by block size, Amazon, {ph} (scale {s})"),
                "kops/s",
                &["4 KiB", "8 KiB", "16 KiB"],
                fig11.iter().map(|b| b[i].clone()).collect(),
            )?;
        }
        writeln!(md, "\nPaper: CC's Load throughput 3.6×, 3.8×, 1.6× QAT's, ZSTD's, ZSTDPC's on average over block sizes; C +26.2%, +44.7%, +29.6%.")?;
        // Fig. 12.
        let mut csv = String::from("dataset,records_m,zstd_flash_bytes,cc_flash_bytes\n");
        let mut fig12: Vec<(String, Vec<f64>)> = Vec::new();
        writeln!(md, "\n## Fig. 12 — write volume by records loaded (GB; CC's extra over ZSTD)\n\n| dataset | 10 M×S | 20 M×S | 30 M×S |\n|---|---|---|---|")?;
        for d in DATASETS {
            let mut row = format!("| {d} |");
            for m in [10, 20, 30] {
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
                    z / 1e9,
                    c / 1e9,
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
            &DATASETS,
            fig12,
        )?;
        writeln!(md, "\nPaper: the extra volume falls as more is loaded; at 30 M it is 4.0%, 5.9%, 2.8% (Amazon, Reddit, random).")?;
        // Ablations.
        writeln!(md, "\n## §V-D ablations (Amazon; C run right after the Load)\n\n| scheme | Load kops/s | C kops/s | flash GB | error |\n|---|---|---|---|---|")?;
        let mut csv = String::from("scheme,load_ops_per_s,c_ops_per_s,flash_bytes,error\n");
        for sc in ["cc", "cc-single-dr", "cc-single-cw"] {
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
                t("load", "throughput_ops_per_s") / 1e3,
                t("c", "throughput_ops_per_s") / 1e3,
                t("load", "flash_bytes_programmed") / 1e9
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
        writeln!(md, "\nPaper: single-chunk DR drops CC's throughput to 55.2%; single-chunk CW runs out of space at 20 M records.")?;
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
