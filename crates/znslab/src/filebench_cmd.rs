//! `znslab filebench FILE.f [--set var=value ...] [--runtime SECS] [--seed N]
//! [--output-format normal|json]`: a filebench workload file, unchanged, on the virtual
//! clock, with filebench's own output. The file system is built in one place
//! ([`build_fs`]): for now `host::fs::MemFs` (files in host memory, no device time).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use host::fs::MemFs;
use sim::Sim;
use workload::filebench::{self, Config};

#[derive(clap::Args)]
pub struct Args {
    /// The workload file (filebench's .f language).
    file: PathBuf,
    /// Set a variable, overriding the file's own `set` (`--set nfiles=1000`, `--set
    /// '$dir=/mnt'`); repeatable.
    #[arg(long = "set", value_name = "VAR=VALUE")]
    set: Vec<String>,
    /// Run this many virtual seconds instead of the file's `run N`.
    #[arg(long)]
    runtime: Option<u64>,
    /// The seed of every random choice (same seed, same output).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// normal (filebench's text) or json.
    #[arg(long = "output-format", default_value = "normal")]
    output_format: String,
    /// The file system's size (k, m, g suffixes: 1024 multiples).
    #[arg(long = "fs-size", default_value = "1g")]
    fs_size: String,
    /// Host cores the threads' system calls share.
    #[arg(long, default_value_t = 4)]
    cores: usize,
    /// Host CPU time of one system call, in nanoseconds.
    #[arg(long = "syscall-ns", default_value_t = 1000)]
    syscall_ns: u64,
}

fn parse_size(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let (num, mult) = match t.as_bytes().last() {
        Some(b'k' | b'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some(b'm' | b'M') => (&t[..t.len() - 1], 1 << 20),
        Some(b'g' | b'G') => (&t[..t.len() - 1], 1 << 30),
        Some(b't' | b'T') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .with_context(|| format!("--fs-size={s}: expected a size such as 512m or 4g"))
}

/// The one place the file system is chosen.
fn build_fs(sim: &Sim, bytes: u64) -> MemFs {
    eprintln!(
        "znslab filebench: running on MemFs (files in host memory; it models no device time): \
         the F2FS-like file system on ZNS+ is being built"
    );
    MemFs::new(sim, bytes)
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let json = match a.output_format.as_str() {
        "normal" => false,
        "json" => true,
        f => bail!("--output-format={f}: expected normal or json"),
    };
    let fs_size = parse_size(&a.fs_size)?;
    // MemFs keeps every byte in host memory.
    if fs_size > 64 << 30 {
        bail!(
            "--fs-size={}: MemFs keeps files in host memory; at most 64g",
            a.fs_size
        );
    }
    if a.cores == 0 || a.cores > 1024 {
        bail!("--cores={}: expected 1 to 1024", a.cores);
    }
    let mut overrides = Vec::new();
    for s in &a.set {
        let Some((k, v)) = s.split_once('=') else {
            bail!("--set {s}: expected VAR=VALUE");
        };
        overrides.push((k.trim().to_string(), v.trim().to_string()));
    }
    let src = std::fs::read_to_string(&a.file).with_context(|| format!("{}", a.file.display()))?;
    let name = a.file.display().to_string();
    let mut w =
        filebench::prepare(&src, &overrides, a.seed).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    if w.run_line.is_none() && a.runtime.is_none() {
        bail!("{name}: no run command: add `run 60` to the file or pass --runtime SECS");
    }
    if let Some(r) = a.runtime {
        if r == 0 || r > 100_000 {
            bail!("--runtime={r}: expected 1 to 100000 seconds");
        }
        w.runtime = r;
    }
    for n in &w.notices {
        eprintln!("znslab filebench: {name}: {n}");
    }
    let cfg = Config {
        runtime: a.runtime,
        cores: a.cores,
        syscall_ns: a.syscall_ns,
        ..Config::default()
    };
    let sim = Sim::new(a.seed);
    let fs = build_fs(&sim, fs_size);
    let seed = a.seed;
    let w2 = w.clone();
    let report = sim
        .block_on(async move { filebench::run(fs, w2, cfg, seed).await })
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let (out, err) = filebench::render_text(&report);
    eprint!("{err}");
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&filebench::render_json(&report, &w))?
        );
    } else {
        print!("{out}");
    }
    Ok(if report.failed.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
