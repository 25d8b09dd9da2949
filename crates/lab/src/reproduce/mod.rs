//! Paper reproductions: each target is a run list (`RunSpec`s, run by an `Executor`) and a
//! report that puts znslab's figures beside the paper's, written into an output folder with
//! every run's JSON. This file owns what the targets share: their options, running a list
//! with progress lines and each result kept on disk as it ends, and the dispatch by name.
//!
//! Targets:
//! - `cczns` (`cczns.rs`, `cczns_paper.rs`, `cczns_report.rs`, `data/cczns-paper.toml`): CCZNS §V-C/D on the
//!   store, Fig. 8-12, Tables IV-V and the ablations;
//! - `znsplus` (`znsplus.rs`, `znsplus_paper.rs`, `znsplus_report.rs`,
//!   `data/znsplus-paper.toml`): ZNS+ §4 on the F2FS-like file system, Fig. 6-12, Tab. 4-5;
//! - `cczns-fig7` and `balloon-fig6` (`fio_figs.rs`): fio jobs on fresh devices.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::bail;
use serde_json::Value;

use crate::executor::{Executor, LocalPool};
use crate::spec::RunSpec;

mod cczns;
mod cczns_paper;
mod cczns_report;
mod fio_figs;
mod zenfsplus;
mod zenfsplus_apps;
mod zenfsplus_report;
mod znsplus;
mod znsplus_paper;
mod znsplus_report;

/// What `znslab reproduce` was asked to do (its flags, parsed).
#[derive(Clone, Debug)]
pub struct Options {
    /// cczns, cczns-fig7 or balloon-fig6.
    pub target: String,
    /// The fraction of the paper's scale (cczns: of its 20 M records and 5 M operations per
    /// workload; znsplus: of its 16 GB file system); `None`: the target's default.
    pub scale: Option<f64>,
    /// Device preset or TOML file (cczns-fig7; default: the paper's device).
    pub device: Option<String>,
    /// fio targets: data each job writes per run, in MiB.
    pub size_mib: u64,
    /// Folder for the JSON of every run and the summary.
    pub output: PathBuf,
    /// Runs at once (default: the machine's cores).
    pub jobs: Option<usize>,
    pub seed: u64,
    /// znsplus: each run under this many seeds (from `seed` on), the report reading their mean.
    pub seeds: u32,
    /// cczns: only the runs whose file name contains this text.
    pub only: Option<String>,
    /// cczns: run nothing; write the report again from the runs' JSON in the output folder.
    pub report_only: bool,
    /// cczns: keep the runs an earlier invocation left in the output folder.
    pub resume: bool,
    /// cczns: keep each run's device in a sparse image file in this folder.
    pub image_dir: Option<PathBuf>,
    /// cczns: shrink each run's device with the workload.
    pub scale_device: bool,
    /// cczns: YCSB client threads in every phase.
    pub threads: usize,
    /// cczns: run nothing; write the run list (TOML, for `znslab run`) to this file.
    pub write_runs: Option<PathBuf>,
    /// cczns: real bytes (the default) or a modeled payload (sizes drawn, no codec runs).
    pub payload: crate::spec::Payload,
}

/// What the caller lends a reproduction.
pub struct Hooks<'a> {
    /// A progress line (the command prints them on stderr).
    pub progress: &'a (dyn Fn(&str) + Sync),
    /// Make the corpus a dataset draws from ready (cczns; the command builds missing ones).
    pub prepare_dataset: &'a dyn Fn(workload::dataset::Dataset) -> anyhow::Result<()>,
}

/// What a reproduction has to say once done: its report for stdout, and a last line for
/// stderr.
pub struct Printed {
    pub stdout: String,
    pub stderr: Option<String>,
}

/// Reproduce `args.target`.
pub fn run(args: &Options, hooks: &Hooks<'_>) -> anyhow::Result<Printed> {
    if args.jobs == Some(0) {
        bail!("--jobs 0: at least one run at a time");
    }
    if args.seeds != 1 && args.target != "znsplus" {
        bail!("--seeds: only the znsplus target runs several seeds (use --seed for one)");
    }
    match args.target.as_str() {
        "cczns" => cczns::reproduce(args, hooks),
        "znsplus" => znsplus::reproduce(args, hooks),
        "zenfsplus" => zenfsplus::reproduce(args, hooks),
        _ if args.write_runs.is_some() => {
            bail!(
                "--write-runs: only the cczns, znsplus and zenfsplus targets write their run lists"
            )
        }
        "cczns-fig7" => fio_figs::fig7(args, hooks),
        "balloon-fig6" => fio_figs::balloon_fig6(args, hooks),
        t => bail!(
            "unknown target '{t}' (known: cczns, znsplus, zenfsplus, cczns-fig7, balloon-fig6)"
        ),
    }
}

/// Run `specs`, `--jobs` at a time on this machine, writing each result's JSON into the output
/// folder under its spec's name as it ends, with a progress line per run. Returns the
/// outcomes in list order and when the runs started.
fn run_all(
    args: &Options,
    hooks: &Hooks<'_>,
    device: &str,
    specs: &[RunSpec],
) -> (Vec<anyhow::Result<crate::spec::RunResult>>, Instant) {
    let out = &args.output;
    let pool = LocalPool::new(args.jobs, specs.len());
    let wall = Instant::now();
    (hooks.progress)(&format!(
        "znslab reproduce {}: {} runs on {device}, {} at a time",
        args.target,
        specs.len(),
        pool.workers
    ));
    let results = pool.execute(specs, &|i, r| {
        let what = match r {
            Ok(r) => {
                let _ = std::fs::write(
                    out.join(&r.name),
                    serde_json::to_string_pretty(&r.json).unwrap_or_default(),
                );
                "done".to_string()
            }
            Err(e) => format!("failed: {e:#}"),
        };
        (hooks.progress)(&format!(
            "  {} {what} ({:.0} s)",
            specs[i].title,
            wall.elapsed().as_secs_f64()
        ));
    });
    (results, wall)
}

/// [`run_all`], the first failure ending the invocation.
fn execute(
    args: &Options,
    hooks: &Hooks<'_>,
    device: &str,
    specs: &[RunSpec],
) -> anyhow::Result<(Vec<Value>, Instant)> {
    let (results, wall) = run_all(args, hooks, device, specs);
    let results = results
        .into_iter()
        .map(|r| r.map(|r| r.json))
        .collect::<anyhow::Result<_>>()?;
    Ok((results, wall))
}

/// [`run_all`], a run that failed leaving `{"error": ...}` (with its spec's tags) in its
/// place: the report names what is missing and why.
fn execute_all(
    args: &Options,
    hooks: &Hooks<'_>,
    device: &str,
    specs: &[RunSpec],
) -> (Vec<Value>, Instant) {
    let (results, wall) = run_all(args, hooks, device, specs);
    let results = results
        .into_iter()
        .zip(specs)
        .map(|(r, spec)| match r {
            Ok(r) => r.json,
            Err(e) => {
                let mut v = serde_json::json!({ "error": format!("{e:#}") });
                for (k, t) in &spec.tags {
                    v[k.as_str()] = t.clone();
                }
                v
            }
        })
        .collect();
    (results, wall)
}

/// A run's JSON kept in `path` from an earlier invocation, if it is good to reuse: same scale,
/// seed and model version, no error (`--resume`, `--report-only`).
pub(super) fn earlier_result(
    path: &std::path::Path,
    scale: f64,
    seed: u64,
    model_version: u64,
) -> Option<Value> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    (v["scale"].as_f64() == Some(scale)
        && v["seed"] == seed
        && v["model_version"] == model_version
        && v["error"].is_null())
    .then_some(v)
}

/// What a reproduction's run list came to.
pub(super) enum Ran {
    /// `--write-runs`: the list went to a file (with `--resume`, only the runs not already
    /// good); this is what to print.
    Written(Printed),
    /// Each run's JSON (`null` for one `--report-only` found no JSON of), and the wall time
    /// (NaN when nothing ran).
    Results(Vec<Value>, f64),
}

/// The run list `specs` handled as `--write-runs`, `--report-only` and `--resume` say, the
/// rest run (on `device`, for the progress lines); `earlier[i]` is run i's reusable JSON.
pub(super) fn run_or_reuse(
    args: &Options,
    hooks: &Hooks<'_>,
    device: &str,
    specs: &[RunSpec],
    earlier: Vec<Option<Value>>,
    scale: f64,
) -> anyhow::Result<Ran> {
    use anyhow::Context;
    let out = &args.output;
    if let Some(file) = &args.write_runs {
        let todo: Vec<RunSpec> = specs
            .iter()
            .zip(&earlier)
            .filter(|(_, e)| !args.resume || e.is_none())
            .map(|(s, _)| s.clone())
            .collect();
        let n = todo.len();
        std::fs::write(file, crate::spec::RunList { run: todo }.to_toml()?)
            .with_context(|| format!("writing {}", file.display()))?;
        return Ok(Ran::Written(Printed {
            stdout: format!(
                "wrote {n} runs to {} (run them with: znslab run {})\n",
                file.display(),
                file.display()
            ),
            stderr: None,
        }));
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    if args.report_only {
        if earlier.iter().all(Option::is_none) {
            bail!(
                "--report-only: no run's JSON at scale {scale} in {} (run without it first)",
                out.display()
            );
        }
        let r = earlier
            .into_iter()
            .map(|e| e.unwrap_or(Value::Null))
            .collect();
        return Ok(Ran::Results(r, f64::NAN));
    }
    let mut results: Vec<Value> = earlier
        .into_iter()
        .map(|e| e.filter(|_| args.resume).unwrap_or(Value::Null))
        .collect();
    let todo: Vec<usize> = (0..results.len())
        .filter(|&i| results[i].is_null())
        .collect();
    let todo_specs: Vec<RunSpec> = todo.iter().map(|&i| specs[i].clone()).collect();
    let (done, wall) = execute_all(args, hooks, device, &todo_specs);
    for (i, v) in todo.into_iter().zip(done) {
        results[i] = v;
    }
    Ok(Ran::Results(results, wall.elapsed().as_secs_f64()))
}

/// One run's results under several seeds as one: every number the mean of the seeds', arrays
/// of numbers of one length averaged element by element, anything else the first seed's. A
/// seed that failed or is missing makes the whole run that (the report names it).
pub(super) fn mean_of_seeds(vals: &[Value]) -> Value {
    match vals {
        [] => Value::Null,
        [one] => one.clone(),
        _ => match vals.iter().find(|v| v.is_null() || !v["error"].is_null()) {
            Some(bad) => bad.clone(),
            None => {
                let mut v = mean_value(vals);
                v["seeds"] = Value::from(vals.len());
                v["seed"] = vals[0]["seed"].clone();
                v
            }
        },
    }
}

fn mean_value(vals: &[Value]) -> Value {
    let first = &vals[0];
    match first {
        Value::Number(_) => {
            let xs: Option<Vec<f64>> = vals.iter().map(Value::as_f64).collect();
            match xs {
                Some(xs) => serde_json::json!(xs.iter().sum::<f64>() / xs.len() as f64),
                None => first.clone(),
            }
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, _)| {
                    let each: Vec<Value> = vals.iter().map(|v| v[k.as_str()].clone()).collect();
                    (k.clone(), mean_value(&each))
                })
                .collect(),
        ),
        Value::Array(a)
            if vals
                .iter()
                .all(|v| v.as_array().is_some_and(|b| b.len() == a.len())) =>
        {
            Value::Array(
                (0..a.len())
                    .map(|i| {
                        let each: Vec<Value> = vals.iter().map(|v| v[i].clone()).collect();
                        mean_value(&each)
                    })
                    .collect(),
            )
        }
        _ => first.clone(),
    }
}

/// An I/O size as fio writes it: 16k, 1m.
fn size_name(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{}m", b >> 20)
    } else {
        format!("{}k", b >> 10)
    }
}

/// A report row's verdict: pass, MISS (outside the tolerance) or n/a (not measured).
pub(super) fn verdict(ok: Option<bool>) -> &'static str {
    match ok {
        Some(true) => "pass",
        Some(false) => "MISS",
        None => "n/a",
    }
}

#[cfg(test)]
mod tests {
    use super::mean_of_seeds;
    use serde_json::json;

    #[test]
    fn seeds_average_numbers_and_arrays_and_a_failed_seed_fails_the_run() {
        let a = json!({"seed": 1, "ops": 10.0, "x": {"y": 2}, "t": [1.0, 3.0], "w": "f"});
        let b = json!({"seed": 2, "ops": 20.0, "x": {"y": 4}, "t": [3.0, 5.0], "w": "f"});
        let m = mean_of_seeds(&[a.clone(), b]);
        assert_eq!(m["ops"], json!(15.0));
        assert_eq!(m["x"]["y"], json!(3.0));
        assert_eq!(m["t"], json!([2.0, 4.0]));
        assert_eq!(
            (m["w"].clone(), m["seed"].clone(), m["seeds"].clone()),
            (json!("f"), json!(1), json!(2))
        );
        let bad = json!({"error": "boom"});
        assert_eq!(mean_of_seeds(&[a.clone(), bad.clone()]), bad);
        assert_eq!(
            mean_of_seeds(&[a.clone(), serde_json::Value::Null]),
            serde_json::Value::Null
        );
        assert_eq!(mean_of_seeds(std::slice::from_ref(&a)), a);
    }
}
