//! `znslab reproduce zenfsplus [--scale S]`: ZenFS+ (IEEE Access '23) on the small-zone
//! device. Every run is a db_bench command line (`Work::Dbbench`), as the paper's are
//! (research/seed-specs.md B.5); this file owns the run list and the invocation,
//! `zenfsplus_report.rs` the report beside the paper's figures.
//!
//! Built so far: P2 (the IZG probe, both modes), P4 (Fig. 8: fillrandom under ZenFS with 6 and
//! 12 active zones, ZenFS+ S,R and S,I,R over 4 to 32 IZGs), and from P4's runs P3 (Fig. 2,
//! Fig. 9a) and P5 (Tab. 1, Fig. 9b, Fig. 10); P6 fresh (Fig. 11: five db_bench workloads on
//! one database); P9 (Tab. 3, Fig. 14: YCSB Load and A-F under ZenFS, S, S,I, S,I,R, a YCSB
//! run list entry rather than db_bench); P10 (§V-E: mixgraph with ZippyDB's parameters). Not
//! yet: P1 (Fig. 3's curves; `host/tests/izg.rs` pins its figures), P6 aged, P7 (the block SSD),
//! P8 (the long run with full GC).

use serde_json::json;

use super::zenfsplus_report::Report;
use super::{earlier_result, run_or_reuse, Hooks, Options, Printed, Ran};
use crate::dbbench_run::DbBenchRun;
use crate::spec::{tags, DeviceChoice, HostOptions, Payload, RunSpec, StoreOptions, Work, YcsbRun};
use crate::zonefs_spec::ZonefsSpec;

/// Bumped when a change moves the figures (an earlier run is not reused across it).
pub(super) const MODEL_VERSION: u64 = 2;

/// The scale when none is given: 1/8 of the paper's 25 M fillrandom keys (B.4-6), ~3.1 M.
pub(super) const DEFAULT_SCALE: f64 = 0.125;

/// The paper's device, with the die structure kept and 57 zones per die (B.5).
pub(super) const DEVICE: &str = "zenfsplus-hynix-small";

/// B.4-6: ≈ 20 GiB of 820 B pairs.
const PAPER_KEYS: f64 = 25_000_000.0;

/// Fig. 8's x axis: the IZGs given to ZenFS+ (B.4-4; the spec lists 2..32, the paper's
/// partitions need at least 4 for a flush quarter).
pub(super) const IZGS: [u32; 4] = [4, 8, 16, 32];
/// ZenFS's active zones (§V-A: "6~12 active zones, the performance almost the same").
pub(super) const ZENFS_ACTIVE: [u32; 2] = [6, 12];

/// One run of the evaluation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Run {
    /// P2: the IZG probe at mkfs, `write` (the artifact's) or `read` (the paper's).
    Probe(&'static str),
    /// P4: fillrandom under ZenFS with this many active zones.
    Zenfs(u32),
    /// P4: fillrandom under ZenFS+ over this many IZGs, with or without isolation (R on).
    Plus { izgs: u32, isolation: bool },
    /// P6 (Fig. 11): db_bench's five workloads one after another on one database, under
    /// ZenFS (`plus` false, 12 active zones) or ZenFS+ (S,I,R over 16 IZGs).
    Workloads { plus: bool },
    /// P9 (Tab. 3, Fig. 14): YCSB's Load, then A, B, C, F, D, E on the loaded store.
    Ycsb(Ablation),
    /// P10 (§V-E): db_bench fillrandom, then mixgraph with ZippyDB's parameters, under ZenFS
    /// (12 active zones) or ZenFS+ (S,I,R over 16 IZGs).
    Mixgraph { plus: bool },
}

/// Fig. 14's configurations: ZenFS, then ZenFS+'s techniques added one by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ablation {
    Zenfs,
    /// S: striping.
    Striped,
    /// S,I: striping and isolation.
    Isolated,
    /// S,I,R: all three, ZenFS+.
    Reclaiming,
}

impl Ablation {
    pub(super) const ALL: [Ablation; 4] = [
        Ablation::Zenfs,
        Ablation::Striped,
        Ablation::Isolated,
        Ablation::Reclaiming,
    ];

    pub(super) fn label(self) -> &'static str {
        match self {
            Ablation::Zenfs => "ZenFS",
            Ablation::Striped => "S",
            Ablation::Isolated => "S,I",
            Ablation::Reclaiming => "S,I,R",
        }
    }

    fn file_part(self) -> &'static str {
        match self {
            Ablation::Zenfs => "zenfs",
            Ablation::Striped => "s",
            Ablation::Isolated => "si",
            Ablation::Reclaiming => "sir",
        }
    }

    /// zonefs's choices: ZenFS with 12 active zones as P4's, ZenFS+ over 16 IZGs.
    fn zonefs(self) -> ZonefsSpec {
        match self {
            Ablation::Zenfs => ZonefsSpec {
                max_active_io_zones: 12,
                ..ZonefsSpec::default()
            },
            Ablation::Striped => ZonefsSpec::zenfsplus(false, false),
            Ablation::Isolated => ZonefsSpec::zenfsplus(true, false),
            Ablation::Reclaiming => ZonefsSpec::zenfsplus(true, true),
        }
    }
}

/// P9's workloads after the Load, in YCSB's recommended order (core workloads wiki: A, B, C,
/// F, D, then E; E runs on D's grown store here instead of a reload).
pub(super) const YCSB_WORKLOADS: [&str; 6] = ["a", "b", "c", "f", "d", "e"];

/// B.4-9: 20 M records of 1 KB (10 x 100 B fields) and as many operations per workload; here
/// at 1/8 of the fill's scale (312,500 at the default), so the seven phases of four
/// configurations fit the 15-minute budget. Only ratios are compared.
const PAPER_YCSB_RECORDS: f64 = 20_000_000.0;
const YCSB_FRACTION: f64 = 1.0 / 8.0;

/// P10: B.2's canonical mixgraph command (Cao et al., FAST'20, ZippyDB) over 50 M keys.
const PAPER_MIXGRAPH_KEYS: f64 = 50_000_000.0;
const MIXGRAPH_FLAGS: [&str; 19] = [
    "--key_dist_a=0.002312",
    "--key_dist_b=0.3467",
    "--keyrange_dist_a=14.18",
    "--keyrange_dist_b=-2.917",
    "--keyrange_dist_c=0.0164",
    "--keyrange_dist_d=-0.08082",
    "--keyrange_num=30",
    "--value_k=0.2615",
    "--value_sigma=25.45",
    "--iter_k=2.517",
    "--iter_sigma=14.236",
    "--mix_get_ratio=0.83",
    "--mix_put_ratio=0.14",
    "--mix_seek_ratio=0.03",
    "--sine_mix_rate_interval_milliseconds=5000",
    "--sine_a=1000",
    "--sine_b=0.000073",
    "--sine_d=4500",
    "--key_size=48",
];

/// Fig. 11's benchmarks, in the order db_bench runs them on one database.
pub(super) const WORKLOADS: [&str; 5] = [
    "fillrandom",
    "overwrite",
    "updaterandom",
    "readrandom",
    "readwhilewriting",
];

impl Run {
    pub(super) fn file_name(&self) -> String {
        match self {
            Run::Probe(m) => format!("probe-{m}.json"),
            Run::Zenfs(a) => format!("fill-zenfs-a{a}.json"),
            Run::Plus { izgs, isolation } => {
                format!(
                    "fill-{}-g{izgs}.json",
                    if *isolation { "sir" } else { "sr" }
                )
            }
            Run::Workloads { plus } => {
                format!(
                    "workloads-{}.json",
                    if *plus { "zenfsplus" } else { "zenfs" }
                )
            }
            Run::Ycsb(c) => format!("ycsb-{}.json", c.file_part()),
            Run::Mixgraph { plus } => {
                format!(
                    "mixgraph-{}.json",
                    if *plus { "zenfsplus" } else { "zenfs" }
                )
            }
        }
    }

    /// The configuration's name as the paper's figures label it.
    pub(super) fn label(&self) -> String {
        match self {
            Run::Probe(m) => format!("{m} probe"),
            Run::Zenfs(a) => format!("ZenFS ({a} active)"),
            Run::Plus { izgs, isolation } => format!(
                "ZenFS+ {} ({izgs} IZGs)",
                if *isolation { "S,I,R" } else { "S,R" }
            ),
            Run::Workloads { plus: false } => "ZenFS (12 active), five workloads".into(),
            Run::Workloads { plus: true } => "ZenFS+ S,I,R (16 IZGs), five workloads".into(),
            Run::Ycsb(c) => format!("{}, YCSB Load and A-F", c.label()),
            Run::Mixgraph { plus: false } => "ZenFS (12 active), mixgraph (ZippyDB)".into(),
            Run::Mixgraph { plus: true } => "ZenFS+ S,I,R (16 IZGs), mixgraph (ZippyDB)".into(),
        }
    }

    /// The db_bench command line at scale `s`.
    pub(super) fn args(&self, s: f64) -> Vec<String> {
        // B.2 / B.4-6: key 20 B, value 800 B, 64 MiB memtable, db_bench's defaults otherwise
        // (snappy at compression_ratio 0.5, one thread, 2 background jobs).
        let mut a: Vec<String> = [
            "--benchmarks=fillrandom",
            "--key_size=20",
            "--value_size=800",
            "--write_buffer_size=67108864",
            "--use_direct_io_for_flush_and_compaction=1",
        ]
        .map(String::from)
        .to_vec();
        match self {
            Run::Probe(mode) => {
                // The probe is the figure; the fill only makes the file system.
                a.push("--num=1000".into());
                a.push("--fs_policy=zenfsplus".into());
                a.push(format!("--izg_probe={mode}"));
                return a;
            }
            Run::Zenfs(active) => {
                a.push(format!("--max_active_io_zones={active}"));
            }
            Run::Plus { izgs, isolation } => {
                a.push("--fs_policy=zenfsplus".into());
                a.push(format!("--zenfsplus_izgs={izgs}"));
                a.push(format!("--zenfsplus_isolation={isolation}"));
            }
            Run::Workloads { plus } => {
                // A quarter of the fill's keys, each benchmark num operations but the reads:
                // 1 % of num (B.4-6 assumes 10 %; readwhilewriting's one writer is not rate
                // limited, and at 10 % it wrote ~30 GB while its reader's 78 k gets ran, a
                // quarter of an hour of wall time at the default scale); readwhilewriting one
                // reader and one writer.
                let n = keys(s) / 4;
                a[0] = format!("--benchmarks={}", WORKLOADS.join(","));
                a.push(format!("--num={n}"));
                a.push(format!("--reads={}", (n / 100).max(100)));
                a.extend(zonefs_flags(*plus));
                return a;
            }
            Run::Mixgraph { plus } => {
                // The fill, then a fifth of num operations of mixgraph (B.2's command gives
                // 420 M: 8.4 x num; a fifth keeps the run within the budget).
                let n = (PAPER_MIXGRAPH_KEYS * s).round().max(1000.0) as u64;
                let mut a: Vec<String> = ["--benchmarks=fillrandom,mixgraph"]
                    .into_iter()
                    .chain(MIXGRAPH_FLAGS)
                    .chain(["--use_direct_io_for_flush_and_compaction=1"])
                    .map(String::from)
                    .collect();
                a.push(format!("--num={n}"));
                a.push(format!("--reads={}", (n / 5).max(100)));
                a.extend(zonefs_flags(*plus));
                return a;
            }
            Run::Ycsb(_) => return Vec::new(),
        }
        a.push(format!("--num={}", keys(s)));
        // Fig. 2 and 9: per-second series; Fig. 10: put() percentiles per 100 ms.
        a.push("--report_interval_seconds=1".into());
        a.push("--latency_interval_ms=100".into());
        a
    }

    fn work(&self, s: f64) -> Work {
        match self {
            Run::Ycsb(c) => {
                let records = ycsb_records(s);
                Work::Ycsb(YcsbRun {
                    // db_bench's (and B.4-6's) store: RocksDB's defaults, snappy; 8 cores.
                    host: HostOptions {
                        cores: 8,
                        store: StoreOptions::default(),
                    },
                    scheme: "snappy".into(),
                    dataset: "random".into(),
                    records,
                    operations: records,
                    threads: 1,
                    workloads: YCSB_WORKLOADS.map(String::from).to_vec(),
                    device_scale: None,
                    image: None,
                    resume: false,
                    payload: Payload::Real,
                    zonefs: c.zonefs(),
                })
            }
            _ => Work::Dbbench(DbBenchRun { args: self.args(s) }),
        }
    }

    fn spec(&self, s: f64, seed: u64) -> RunSpec {
        RunSpec {
            name: self.file_name(),
            title: self.label(),
            seed,
            device: DeviceChoice::Named(DEVICE.into()),
            work: self.work(s),
            tags: tags(&[
                ("run", json!(self.file_name().trim_end_matches(".json"))),
                ("scale", json!(s)),
                ("seed", json!(seed)),
                ("model_version", json!(MODEL_VERSION)),
            ]),
        }
    }
}

/// The file system flags of a ZenFS-against-ZenFS+ pair: ZenFS with 12 active zones, or
/// ZenFS+ (S,I,R) over 16 IZGs.
fn zonefs_flags(plus: bool) -> Vec<String> {
    let flags: &[&str] = if plus {
        &["--fs_policy=zenfsplus", "--zenfsplus_izgs=16"]
    } else {
        &["--max_active_io_zones=12"]
    };
    flags.iter().map(|f| f.to_string()).collect()
}

/// fillrandom's keys at scale `s`.
pub(super) fn keys(s: f64) -> u64 {
    (PAPER_KEYS * s).round().max(1000.0) as u64
}

/// P9's records (and operations per workload) at scale `s`.
pub(super) fn ycsb_records(s: f64) -> u64 {
    (PAPER_YCSB_RECORDS * s * YCSB_FRACTION).round().max(1000.0) as u64
}

/// Every run, in report order.
pub(super) fn plan() -> Vec<Run> {
    let mut runs = vec![Run::Probe("write"), Run::Probe("read")];
    runs.extend(ZENFS_ACTIVE.map(Run::Zenfs));
    for isolation in [false, true] {
        runs.extend(IZGS.map(|izgs| Run::Plus { izgs, isolation }));
    }
    runs.extend([false, true].map(|plus| Run::Workloads { plus }));
    runs.extend(Ablation::ALL.map(Run::Ycsb));
    runs.extend([false, true].map(|plus| Run::Mixgraph { plus }));
    runs
}

pub(super) fn reproduce(args: &Options, hooks: &Hooks<'_>) -> anyhow::Result<Printed> {
    let out = &args.output;
    let s = args.scale.unwrap_or(DEFAULT_SCALE);
    if !(s > 0.0 && s <= 1.0) {
        anyhow::bail!("--scale {s}: use a fraction in (0, 1] of the paper's 25 M keys");
    }
    let mut runs = plan();
    if let Some(only) = &args.only {
        runs.retain(|r| r.file_name().contains(only.as_str()));
        if runs.is_empty() {
            anyhow::bail!(
                "--only {only}: no run's name contains it (names: {})",
                plan()
                    .iter()
                    .map(Run::file_name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let specs: Vec<RunSpec> = runs.iter().map(|r| r.spec(s, args.seed)).collect();
    let earlier = runs
        .iter()
        .map(|r| earlier_result(&out.join(r.file_name()), s, args.seed, MODEL_VERSION))
        .collect();
    let (results, wall_s) = match run_or_reuse(args, hooks, DEVICE, &specs, earlier, s)? {
        Ran::Written(p) => return Ok(p),
        Ran::Results(r, w) => (r, w),
    };
    let report = Report {
        scale: s,
        runs: &runs,
        results: &results,
    };
    let text = report.write(out)?;
    let summary = json!({
        "target": "zenfsplus",
        "scale": s,
        "seed": args.seed,
        "runs": runs.len(),
        "wall_s": wall_s,
        "model_version": MODEL_VERSION,
        "checks": report.checks(),
    });
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    std::fs::write(out.join("report.md"), &text)?;
    Ok(Printed {
        stdout: text,
        stderr: Some(format!(
            "znslab reproduce zenfsplus: {} runs at scale {s}; report, CSVs and plots in {}",
            runs.len(),
            out.display()
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_list_names_each_run_once_and_its_command_lines_parse() {
        let runs = plan();
        let mut names: Vec<String> = runs.iter().map(Run::file_name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), runs.len());
        for r in runs.iter().filter(|r| !matches!(r, Run::Ycsb(_))) {
            let args = r.args(DEFAULT_SCALE);
            let f = workload::dbbench::flags::Flags::parse(&args).expect("parses");
            crate::dbbench_run::config(&f).expect("a configuration");
        }
        assert!(Run::Zenfs(12)
            .args(0.125)
            .contains(&"--num=3125000".to_string()));
        // The run list goes to TOML and back.
        let specs: Vec<RunSpec> = runs.iter().map(|r| r.spec(0.125, 1)).collect();
        let text = crate::spec::RunList { run: specs.clone() }
            .to_toml()
            .expect("TOML");
        let back = crate::spec::RunList::from_toml(&text).expect("reads back");
        assert_eq!(back.run, specs);
    }
}
