//! `znslab reproduce cczns [--scale S]`: CCZNS §V-C/D on the store. Every run is one
//! experiment (`crate::experiment`, described by a `RunSpec`) on a fresh `cczns` (or
//! `cczns-balloon`, `tcssd`) device; the store's sizes scale with S so the tree keeps the
//! paper's shape at fewer records. This file owns the run list (from `data/cczns-paper.toml`)
//! and the invocation (which runs, --resume, --report-only); `cczns_report.rs` the report.
//!
//! Runs: the seven schemes (and the transparent block SSD, T) × three datasets, each a Load
//! of 20 M × S records then workloads A, B, C, D, E, F and uniform A and B of 5 M × S
//! operations each on the loaded store (Fig. 8, 9, 10, Tables IV, V); block sizes 4, 8 and 16
//! KiB for QAT, ZSTD, ZSTDPC and CC on Amazon, Load then C (Fig. 11; CC's 4 KiB run is also
//! the ablations' baseline); 10 M and 30 M × S records for ZSTD and CC on every dataset, Load
//! only (Fig. 12); the two ablations on Amazon, Load then C (§V-D).

use std::path::Path;

use anyhow::Context;
use serde_json::{json, Value};
use workload::dataset::Dataset;
use workload::scheme;

use super::cczns_paper::{paper, Plan, Run, MODEL_VERSION};
use super::cczns_report::Report;
use super::{execute, Hooks, Options, Printed};
use crate::spec::{tags, DeviceChoice, HostOptions, Payload, RunSpec, StoreOptions, Work, YcsbRun};

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
            && (v["payload"] == "modeled") == (setup.payload == Payload::Modeled)
            && v["error"].is_null())
        .then_some(v)
    }

    /// The run as a specification at scale `s`.
    fn spec(
        &self,
        s: f64,
        seed: u64,
        setup: Setup,
        images: Option<&Path>,
    ) -> anyhow::Result<RunSpec> {
        let sch = scheme::by_name(&self.scheme).context("scheme")?;
        let (records, ops) = self.counts(s);
        Ok(RunSpec {
            name: self.file_name(),
            title: self.describe(),
            seed,
            device: DeviceChoice::Named(sch.device.to_string()),
            work: Work::Ycsb(YcsbRun {
                host: HostOptions {
                    // The paper's VM: 16 cores.
                    cores: 16,
                    store: store_options(s, self.block_kib),
                },
                scheme: self.scheme.clone(),
                dataset: self.dataset.clone(),
                records,
                operations: ops,
                threads: setup.threads,
                workloads: self.runs.clone(),
                device_scale: setup.scale_device.then_some(s),
                image: images.map(|d| d.join(self.file_name().replace(".json", ".img"))),
                resume: setup.resume && images.is_some(),
                payload: setup.payload,
                zonefs: Default::default(),
            }),
            tags: tags(&[
                ("scheme", json!(sch.name)),
                ("label", json!(sch.label)),
                ("dataset", json!(self.dataset)),
                ("group", json!(self.group)),
                ("block_kib", json!(self.block_kib)),
                ("records", json!(records)),
                ("operations", json!(ops)),
                ("seed", json!(seed)),
                ("device_scaled", json!(setup.scale_device)),
                ("threads", json!(setup.threads)),
                ("model_version", json!(MODEL_VERSION)),
            ])
            .into_iter()
            // Only a modeled run says so (real runs' JSON stays as it was).
            .chain((!setup.payload.is_real()).then(|| ("payload".to_string(), json!("modeled"))))
            .collect(),
        })
    }
}

/// The evaluation's runs, in the order the report lists them.
pub(super) fn plan(p: &Plan) -> Vec<Run> {
    let mut runs = Vec::new();
    for d in &p.datasets {
        for s in &p.main_schemes {
            runs.push(Run {
                group: "main",
                scheme: s.clone(),
                dataset: d.clone(),
                block_kib: 4,
                records_m: 20,
                runs: p.main_workloads.clone(),
            });
        }
    }
    // Fig. 11 and the ablations run C right after the Load (the main runs' C comes after A
    // and B have warmed the block cache), so each compares with runs of its own shape: 4 KiB
    // here too, and CC's 4 KiB run is the ablations' baseline.
    for s in &p.fig11_schemes {
        for &b in &p.fig11_block_kib {
            runs.push(Run {
                group: "fig11",
                scheme: s.clone(),
                dataset: "amazon".into(),
                block_kib: b,
                records_m: 20,
                runs: vec!["c".into()],
            });
        }
    }
    for d in &p.datasets {
        for s in &p.fig12_schemes {
            for &m in &p.fig12_records_m {
                runs.push(Run {
                    group: "fig12",
                    scheme: s.clone(),
                    dataset: d.clone(),
                    block_kib: 4,
                    records_m: m,
                    runs: vec![],
                });
            }
        }
    }
    for s in &p.ablation_schemes {
        runs.push(Run {
            group: "ablation",
            scheme: s.clone(),
            dataset: "amazon".into(),
            block_kib: 4,
            records_m: 20,
            runs: vec!["c".into()],
        });
    }
    runs
}

/// Store options at scale `s`: RocksDB 8.11's defaults with the paper's 4 KiB blocks (or the
/// run's) and 4 GB block cache, and the sizes that shape the tree (memtable, L1 target, file
/// size, cache) scaled by S, so a Load of 20 M × S records builds the tree 20 M builds.
fn store_options(s: f64, block_kib: usize) -> StoreOptions {
    let scaled = |v: u64, floor: u64| ((v as f64 * s) as u64).max(floor);
    StoreOptions {
        block_bytes: block_kib << 10,
        write_buffer_bytes: scaled(64 << 20, 256 << 10) as usize,
        target_file_size_bytes: scaled(64 << 20, 256 << 10),
        max_bytes_for_level_base: scaled(256 << 20, 1 << 20),
        block_cache_bytes: scaled(4 << 30, 4 << 20),
    }
}

/// How a run is set up beyond its scale and seed (all in its JSON, so --resume can compare).
#[derive(Clone, Copy)]
struct Setup {
    scale_device: bool,
    threads: usize,
    /// --resume: a run cut short on its image goes on from the phases it finished.
    resume: bool,
    payload: Payload,
}

pub(super) fn reproduce(args: &Options, hooks: &Hooks<'_>) -> anyhow::Result<Printed> {
    let paper = paper();
    let out = &args.output;
    // A report made again keeps the scale and wall time its runs had.
    let previous: Value = match args.report_only {
        true => std::fs::read_to_string(out.join("summary.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(Value::Null),
        false => Value::Null,
    };
    let s = previous["scale"]
        .as_f64()
        .unwrap_or(args.scale.unwrap_or(0.005));
    if !(s > 0.0 && s <= 1.0) {
        anyhow::bail!("--scale {s}: use a fraction in (0, 1] of the paper's 20 M records");
    }
    // Which runs, checked before anything is made.
    let mut runs = plan(&paper.runs);
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
    let setup = Setup {
        scale_device: args.scale_device,
        threads: args.threads,
        resume: args.resume,
        payload: args.payload,
    };
    if let Some(file) = &args.write_runs {
        // The evaluation as data: `znslab run FILE` (or another executor) runs it. With
        // --resume, only the runs whose JSON in the output folder is not already good.
        let run = runs
            .iter()
            .filter(|r| !args.resume || r.earlier_result(out, s, args.seed, setup).is_none())
            .map(|r| r.spec(s, args.seed, setup, args.image_dir.as_deref()))
            .collect::<anyhow::Result<Vec<RunSpec>>>()?;
        let n = run.len();
        std::fs::write(file, crate::spec::RunList { run }.to_toml()?)
            .with_context(|| format!("writing {}", file.display()))?;
        return Ok(Printed {
            stdout: format!(
                "wrote {n} runs to {} (run them with: znslab run {})\n",
                file.display(),
                file.display()
            ),
            stderr: None,
        });
    }
    for d in &paper.runs.datasets {
        (hooks.prepare_dataset)(Dataset::parse(d)?)?;
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let seed = args.seed;
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
            // A modeled payload's device holds keys and structures only: memory suffices.
            .or_else(|| (s > 0.02 && args.payload.is_real()).then(|| out.join("images")));
        if let Some(d) = &images {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            (hooks.progress)(&format!(
                "devices kept in sparse image files under {}",
                d.display()
            ));
        }
        let earlier: Vec<Option<Value>> = runs
            .iter()
            .map(|r| {
                args.resume
                    .then(|| r.earlier_result(out, s, seed, setup))
                    .flatten()
            })
            .collect();
        let todo = runs
            .iter()
            .zip(&earlier)
            .filter(|(_, e)| e.is_none())
            .map(|(r, _)| r.spec(s, seed, setup, images.as_deref()))
            .collect::<anyhow::Result<Vec<RunSpec>>>()?;
        if args.resume {
            (hooks.progress)(&format!(
                "--resume: {} of {} runs kept from {}",
                runs.len() - todo.len(),
                runs.len(),
                out.display()
            ));
        }
        let (fresh, wall) = execute(args, hooks, "cczns", &todo)?;
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
        paper: &paper,
        runs: &runs,
        results: &results,
        scale: s,
    };
    report.write(out, wall_s)?;
    Ok(Printed {
        stdout: format!("{}\n", std::fs::read_to_string(out.join("report.md"))?),
        stderr: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RunList;

    #[test]
    fn the_paper_file_gives_the_evaluations_fifty_runs() {
        let runs = plan(&paper().runs);
        assert_eq!(runs.len(), 24 + 12 + 12 + 2);
        assert_eq!(runs[0].file_name(), "main-no-amazon-4k-20m.json");
        assert_eq!(
            runs[49].file_name(),
            "ablation-cc-single-cw-amazon-4k-20m.json"
        );
    }

    #[test]
    fn the_run_list_is_data_that_goes_to_toml_and_back() {
        let setup = Setup {
            scale_device: true,
            threads: 1,
            resume: false,
            payload: Payload::Real,
        };
        let list = RunList {
            run: plan(&paper().runs)
                .iter()
                .map(|r| r.spec(0.002, 1, setup, None))
                .collect::<anyhow::Result<_>>()
                .expect("specs"),
        };
        let text = list.to_toml().expect("to toml");
        assert_eq!(RunList::from_toml(&text).expect("from toml"), list);
    }
}
