//! `znslab reproduce znsplus [--scale S]`: ZNS+ (OSDI'21) §4 on the F2FS-like file system and
//! the `znsplus` device. Every run is one `Work::Files` (`crate::files_run`): a fresh device
//! and file system of 16 GiB × S, a workload at 90 % utilisation, a warm-up, a measured
//! window. This file owns the run list (from `data/znsplus-paper.toml`, seed-specs A.5) and the
//! invocation; `znsplus_report.rs` the report beside the paper's figures.
//!
//! Groups: `main` (Z1, Z3, Z5: five workloads × ZNS, IZC and ZNS+ with their ablations, on
//! MLC), `media` (Z2: Tab. 4 on TLC and Z-NAND), `util` (Z4: Fig. 8), `chips` (Z6: Fig. 11,
//! CAB and CUB), `lanes` (Z7: Fig. 12).

use serde_json::{json, Value};

use super::znsplus_paper::{paper, Plan};
use super::znsplus_report::Report;
use super::{earlier_result, run_or_reuse, Hooks, Options, Printed, Ran};
use crate::files_run::FilesRun;
use crate::spec::{tags, DeviceChoice, RunSpec, Work};

/// Bumped when a change moves the figures (an earlier run is not reused across it).
/// 2: TL_open's bitmap covers the whole zone capacity, so threaded logging works on zones
/// that are not whole 2 MiB segments (Fig. 12's 24 and 40 chips at the default scale).
/// 3: PPA-ordered (background) plugging runs after the arriving command has issued its flash
/// work, so that command never waits for a copy its own arrival started; and a regular
/// file's page written back (flusher, throttled writer, fsync) is followed by `balance_fs`,
/// as F2FS's `__write_data_page` does: foreground GC runs inside a large writeback instead of
/// after it, and ZNS+'s threaded logging is no longer forced for most sections by the free
/// space one writeback burst used up.
/// 4: file reads run without the file system's lock, as F2FS's read path (they used to wait
/// for every other call, GC included, so the host's copies never met user reads on the
/// device or the link); and the ZNS+ presets' host link is half duplex, as the artifact's
/// one DMA timeline (reads' data waits for writes' and back).
/// 5: buffered writes run without the file system's lock, as F2FS's write_begin/write_end
/// (a write that only fills the page cache used to wait for other files' writeback, GC and
/// threaded-logging closes); they take it for GC when free space is short, behind a
/// checkpoint, for reclaim and for writeback.
/// 6: a scaled device's erase time shrinks with its blocks (`NandConfig::with_blocks_scaled`):
/// at the default scale a block holds 8 pages, not 128, and an unscaled 3 ms erase took about
/// half of every chip's time, where at the paper's size it takes 6 %.
pub(super) const MODEL_VERSION: u64 = 6;

/// The scale when none is given: 1 GiB file systems, ~7 min on 2 cores.
pub(super) const DEFAULT_SCALE: f64 = 0.0625;

/// One run of the evaluation.
#[derive(Clone, Debug)]
pub(super) struct Run {
    pub group: &'static str,
    pub workload: String,
    pub scheme: String,
    /// Device preset (Tab. 2's media).
    pub media: String,
    pub util: u32,
    /// Flash chips per zone (all the device's) and PCIe lanes.
    pub chips: u32,
    pub lanes: u32,
    pub trace: bool,
}

impl Run {
    pub(super) fn file_name(&self) -> String {
        let medium = self.media.trim_start_matches("znsplus-");
        format!(
            "{}-{}-{}-{medium}-u{}-c{}-l{}.json",
            self.group, self.workload, self.scheme, self.util, self.chips, self.lanes
        )
    }

    /// The JSON file of the run with `seed`: the plain name when one seed runs, the seed
    /// named when several do.
    fn seed_file_name(&self, seed: u64, several: bool) -> String {
        let name = self.file_name();
        if several {
            format!("{}-seed{seed}.json", name.trim_end_matches(".json"))
        } else {
            name
        }
    }

    /// The run as a specification at scale `s`.
    fn spec(&self, s: f64, seed: u64, several: bool) -> anyhow::Result<RunSpec> {
        let mut device = crate::setup::load_device(&self.media)?;
        // A.4 item 14: 8 channels where the chips allow (2 = 2×1 ... 40 = 8×5).
        let channels = self.chips.min(8);
        device.nand.channels = channels;
        device.nand.dies_per_channel = self.chips / channels;
        device.pcie.lanes = self.lanes;
        // The zone is one block on every chip; blocks shrink with S, but a zone keeps at
        // least one 2 MiB segment (S = 1: the paper's blocks at every chip count).
        let device_scale = (s * 16.0 / self.chips as f64).clamp(s, 1.0);
        // §4: 16 GB file system, 2 GB guest memory; A.4 item 9: run until reclaiming is
        // steady (≥ 60 s), then measure 120 s, both scaled.
        let work = FilesRun {
            scheme: self.scheme.clone(),
            workload: self.workload.clone(),
            fs_bytes: ((16u64 << 30) as f64 * s) as u64,
            utilisation_pct: self.util,
            page_cache_bytes: ((2u64 << 30) as f64 * s) as u64,
            warmup_s: ((60.0 * s).round() as u64).max(10),
            measure_s: ((120.0 * s).round() as u64).max(10),
            cores: 4,
            trace: self.trace,
            device_scale: Some(device_scale),
        };
        Ok(RunSpec {
            name: self.seed_file_name(seed, several),
            title: format!(
                "{} {} {} {} {}% {} chips {} lanes{}",
                self.group,
                self.workload,
                self.scheme,
                self.media,
                self.util,
                self.chips,
                self.lanes,
                if several {
                    format!(" seed {seed}")
                } else {
                    String::new()
                }
            ),
            seed,
            device: DeviceChoice::Config(Box::new(device)),
            work: Work::Files(work),
            tags: tags(&[
                ("group", json!(self.group)),
                ("workload", json!(self.workload)),
                ("scheme", json!(self.scheme)),
                ("media", json!(self.media)),
                ("util", json!(self.util)),
                ("chips", json!(self.chips)),
                ("lanes", json!(self.lanes)),
                ("scale", json!(s)),
                ("seed", json!(seed)),
                ("model_version", json!(MODEL_VERSION)),
            ]),
        })
    }
}

/// The evaluation's runs (seed-specs A.5), in the order the report reads them.
pub(super) fn plan(p: &Plan) -> Vec<Run> {
    let base = Run {
        group: "main",
        workload: "fileserver".into(),
        scheme: "zns".into(),
        media: "znsplus-mlc".into(),
        util: p.utilisation_pct,
        chips: 16,
        lanes: 2,
        trace: false,
    };
    let mut runs = Vec::new();
    // Z1, Z3, Z5: every workload × every scheme (+ LBA-ordered plugging), fileserver traced.
    for w in &p.workloads {
        for sch in p.schemes.iter().map(String::as_str).chain(["znsplus-lp"]) {
            runs.push(Run {
                workload: w.clone(),
                scheme: sch.into(),
                trace: w == "fileserver",
                ..base.clone()
            });
        }
    }
    // Z2: Tab. 4, IZC-H and IZC-D against ZNS per medium (MLC's ZNS and IZC-H are main runs).
    for m in &p.media {
        for sch in ["zns", "izc", "izc-d"] {
            if m == "znsplus-mlc" && sch != "izc-d" {
                continue;
            }
            runs.push(Run {
                group: "media",
                scheme: sch.into(),
                media: m.clone(),
                ..base.clone()
            });
        }
    }
    // Z4: Fig. 8 (90 % is a main run).
    for &u in &p.utilisation_sweep_pct {
        if u == p.utilisation_pct {
            continue;
        }
        for sch in ["zns", "izc", "znsplus"] {
            runs.push(Run {
                group: "util",
                scheme: sch.into(),
                util: u,
                ..base.clone()
            });
        }
    }
    // Z6: Fig. 11, CAB and CUB by chip count (16 chips: the main runs and two more).
    for &c in &p.chips {
        for sch in ["zns", "izc-cub", "izc", "znsplus-cub", "znsplus"] {
            if c == 16 && !sch.ends_with("cub") {
                continue;
            }
            runs.push(Run {
                group: "chips",
                scheme: sch.into(),
                chips: c,
                ..base.clone()
            });
        }
    }
    // Z7: Fig. 12, lanes and chips together (2 lanes / 16 chips: the main runs).
    for &(l, c) in &p.lanes_chips {
        if (l, c) == (2, 16) {
            continue;
        }
        for sch in ["zns", "izc", "znsplus"] {
            runs.push(Run {
                group: "lanes",
                scheme: sch.into(),
                chips: c,
                lanes: l,
                ..base.clone()
            });
        }
    }
    runs
}

pub(super) fn reproduce(args: &Options, hooks: &Hooks<'_>) -> anyhow::Result<Printed> {
    let paper = paper();
    let out = &args.output;
    let s = args.scale.unwrap_or(DEFAULT_SCALE);
    if !(s > 0.0 && s <= 1.0) {
        anyhow::bail!("--scale {s}: use a fraction in (0, 1] of the paper's 16 GB file system");
    }
    if s < 1.0 / 32.0 {
        anyhow::bail!(
            "--scale {s}: at least 1/32 (512 MiB): below it the file system's reserve of \
             sections leaves too little room"
        );
    }
    let mut runs = plan(&paper.runs);
    if let Some(only) = &args.only {
        runs.retain(|r| r.file_name().contains(only.as_str()));
        if runs.is_empty() {
            anyhow::bail!("--only {only}: no run's name contains it (names: group-workload-scheme-media-uUTIL-cCHIPS-lLANES)");
        }
    }
    if args.seeds == 0 || args.seeds > 64 {
        anyhow::bail!("--seeds {}: expected 1 to 64", args.seeds);
    }
    // Each run once per seed, from --seed on; the report reads their mean.
    let seeds: Vec<u64> = (0..args.seeds as u64).map(|k| args.seed + k).collect();
    let several = seeds.len() > 1;
    let items: Vec<(usize, u64)> = (0..runs.len())
        .flat_map(|i| seeds.iter().map(move |&seed| (i, seed)))
        .collect();
    let specs = items
        .iter()
        .map(|&(i, seed)| runs[i].spec(s, seed, several))
        .collect::<anyhow::Result<Vec<RunSpec>>>()?;
    let earlier = items
        .iter()
        .map(|&(i, seed)| {
            let name = runs[i].seed_file_name(seed, several);
            earlier_result(&out.join(name), s, seed, MODEL_VERSION)
        })
        .collect();
    let device = "znsplus-mlc and its variants";
    let (results, wall_s) = match run_or_reuse(args, hooks, device, &specs, earlier, s)? {
        Ran::Written(p) => return Ok(p),
        Ran::Results(r, w) => (r, w),
    };
    let results: Vec<Value> = results
        .chunks(seeds.len())
        .map(super::mean_of_seeds)
        .collect();
    let report = Report {
        scale: s,
        seeds: &seeds,
        runs: &runs,
        results: &results,
        paper: &paper,
    };
    let text = report.write(out)?;
    let summary = json!({
        "target": "znsplus",
        "scale": s,
        "seed": args.seed,
        "seeds": seeds.len(),
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
            "znslab reproduce znsplus: {} runs at scale {s}; report, CSVs and plots in {}",
            items.len(),
            out.display()
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_list_covers_every_figure_once_and_goes_to_toml_and_back() {
        let runs = plan(&paper().runs);
        assert_eq!(runs.len(), 80);
        let names: std::collections::BTreeSet<String> = runs.iter().map(Run::file_name).collect();
        assert_eq!(names.len(), runs.len(), "names are unique");
        let specs: Vec<RunSpec> = runs
            .iter()
            .map(|r| r.spec(DEFAULT_SCALE, 1, false).unwrap())
            .collect();
        let list = crate::spec::RunList { run: specs };
        let text = list.to_toml().unwrap();
        assert_eq!(crate::spec::RunList::from_toml(&text).unwrap(), list);
        // Geometry: 32 chips are 8 channels × 4; a zone keeps at least a 2 MiB segment.
        let r = runs.iter().find(|r| r.chips == 32).unwrap();
        let s = r.spec(DEFAULT_SCALE, 1, false).unwrap();
        let DeviceChoice::Config(c) = &s.device else {
            panic!()
        };
        assert_eq!((c.nand.channels, c.nand.dies_per_channel), (8, 4));
        let Work::Files(f) = &s.work else { panic!() };
        assert_eq!(f.fs_bytes, 1 << 30);
        let r2 = runs
            .iter()
            .find(|r| r.chips == 2)
            .unwrap()
            .spec(DEFAULT_SCALE, 1, false)
            .unwrap();
        let Work::Files(f2) = &r2.work else { panic!() };
        assert_eq!(f2.device_scale, Some(0.5));
    }

    #[test]
    fn the_report_holds_figures_to_the_papers_tolerance() {
        let p = paper();
        let runs = plan(&p.runs);
        let fake = |ops_znsplus: f64| -> Vec<Value> {
            runs.iter()
                .map(|r| {
                    let ops = match r.scheme.as_str() {
                        "zns" => 100.0,
                        "znsplus" => ops_znsplus,
                        _ => 190.0,
                    };
                    json!({"throughput": {"ops_per_s": ops, "mb_per_s": ops}, "compaction_ms": {"total": 1.0}})
                })
                .collect()
        };
        let verdict = |results: &[Value], id: &str| -> String {
            let r = Report {
                scale: 0.0625,
                seeds: &[1],
                runs: &runs,
                results,
                paper: &p,
            };
            let checks = r.checks();
            let c = checks
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == id)
                .unwrap()
                .clone();
            c["verdict"].as_str().unwrap().to_string()
        };
        let good = fake(291.0);
        assert_eq!(verdict(&good, "fig7a-fileserver-znsplus"), "pass");
        assert_eq!(verdict(&good, "fig7a-fileserver-izc"), "pass");
        assert_eq!(verdict(&good, "fig7a-order"), "holds");
        let bad = fake(500.0);
        assert_eq!(verdict(&bad, "fig7a-fileserver-znsplus"), "MISS");
        // A run that failed leaves its figures n/a, not a pass.
        let mut failed = good.clone();
        for (r, v) in runs.iter().zip(failed.iter_mut()) {
            if r.group == "main" && r.workload == "fileserver" && r.scheme == "znsplus" {
                *v = json!({"error": "boom"});
            }
        }
        assert_eq!(verdict(&failed, "fig7a-fileserver-znsplus"), "n/a");
        let out = std::env::temp_dir().join(format!("znslab-zp-report-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let text = Report {
            scale: 0.0625,
            seeds: &[1],
            runs: &runs,
            results: &failed,
            paper: &p,
        }
        .write(&out)
        .unwrap();
        assert!(text.contains("boom"), "missing runs are named");
        assert!(out.join("fig7a.svg").exists() && out.join("main.csv").exists());
        let _ = std::fs::remove_dir_all(&out);
    }
}
