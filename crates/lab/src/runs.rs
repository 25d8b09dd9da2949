//! A run list from a file, run on this machine: `znslab run RUNS.toml`. Each result's JSON
//! goes into the output folder under its run's name as the run ends, as `reproduce` keeps
//! them; a run that fails is reported and the others go on.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;

use crate::executor::{Executor, LocalPool};
use crate::spec::RunList;

/// What a run list gave.
pub struct Summary {
    pub ok: usize,
    /// Runs that ended with an error: (name, error).
    pub failed: Vec<(String, String)>,
    pub wall_s: f64,
}

/// Run every run of `list`, `jobs` at a time (default: the machine's cores), writing results
/// into `out`; `progress` hears a line as each ends.
pub fn run_list(
    list: &RunList,
    out: &Path,
    jobs: Option<usize>,
    progress: &(dyn Fn(&str) + Sync),
) -> anyhow::Result<Summary> {
    if jobs == Some(0) {
        anyhow::bail!("--jobs 0: at least one run at a time");
    }
    let mut names = std::collections::BTreeSet::new();
    for r in &list.run {
        if r.name.is_empty() || r.name.contains('/') || !names.insert(&r.name) {
            anyhow::bail!(
                "run name {:?}: each run needs its own file name (no '/')",
                r.name
            );
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let pool = LocalPool::new(jobs, list.run.len());
    let wall = Instant::now();
    progress(&format!(
        "znslab run: {} runs, {} at a time, results in {}",
        list.run.len(),
        pool.workers,
        out.display()
    ));
    let results = pool.execute(&list.run, &|i, r| {
        let line = match r {
            Ok(r) => {
                let _ = std::fs::write(
                    out.join(&r.name),
                    serde_json::to_string_pretty(&r.json).unwrap_or_default(),
                );
                format!(
                    "  {} done ({:.0} s)",
                    list.run[i].title,
                    wall.elapsed().as_secs_f64()
                )
            }
            Err(e) => format!("  {} failed: {e:#}", list.run[i].title),
        };
        progress(&line);
    });
    let mut summary = Summary {
        ok: 0,
        failed: Vec::new(),
        wall_s: wall.elapsed().as_secs_f64(),
    };
    for (spec, r) in list.run.iter().zip(results) {
        match r {
            Ok(_) => summary.ok += 1,
            Err(e) => summary.failed.push((spec.name.clone(), format!("{e:#}"))),
        }
    }
    Ok(summary)
}
