//! `znslab run RUNS.toml`: run a list of run specifications (a TOML file of `[[run]]` tables,
//! as `znslab reproduce cczns --write-runs FILE` writes one) and keep each result's JSON.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

#[derive(clap::Args)]
pub struct Args {
    /// The run list: a TOML file of `[[run]]` tables (unknown fields are refused).
    file: PathBuf,
    /// Folder for each run's JSON (default: runs-FILE, FILE without its extension).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Runs at once (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only the run of this name (repeatable): how another executor (`tools/znslab_ray`)
    /// runs one run of a shared list on a worker.
    #[arg(long)]
    only: Vec<String>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&a.file)
        .with_context(|| format!("reading {}", a.file.display()))?;
    let mut list =
        lab::spec::RunList::from_toml(&text).with_context(|| format!("{}", a.file.display()))?;
    if !a.only.is_empty() {
        if let Some(missing) = a
            .only
            .iter()
            .find(|n| !list.run.iter().any(|r| &r.name == *n))
        {
            anyhow::bail!(
                "--only {missing}: no run of {} has that name; its runs: {}",
                a.file.display(),
                list.run
                    .iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        list.run.retain(|r| a.only.contains(&r.name));
    }
    let stem = a
        .file
        .file_stem()
        .map_or("runs".into(), |s| s.to_string_lossy().into_owned());
    let out = a
        .output
        .unwrap_or_else(|| PathBuf::from(format!("runs-{stem}")));
    let s = lab::runs::run_list(&list, &out, a.jobs, &|line| eprintln!("{line}"))?;
    println!(
        "{} runs, {} done, {} failed, {:.1} s; results in {}",
        s.ok + s.failed.len(),
        s.ok,
        s.failed.len(),
        s.wall_s,
        out.display()
    );
    for (name, e) in &s.failed {
        println!("  {name}: {e}");
    }
    Ok(if s.failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
