//! `znslab filebench FILE.f [--set var=value ...] [--runtime SECS] [--seed N]
//! [--output-format normal|json]`: a filebench workload file, unchanged, on the virtual
//! clock, with filebench's own output. The file system is chosen in one place ([`run_on`]'s
//! callers in [`run`]): by default the F2FS-like file system (`host::lfs`) on a ZNS+ device
//! (`--device`, `--scheme zns|izc|znsplus`), its metadata on a conventional device beside it;
//! `--fs memfs` keeps files in host memory with no device time.

use std::path::PathBuf;
use std::process::ExitCode;

use std::rc::Rc;

use anyhow::{bail, Context};
use host::fs::{FileSystem, MemFs};
use host::lfs::{Lfs, LfsConfig};
use sim::Sim;
use workload::filebench::{self, Config, Report, Workload};

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
    /// The file system's size (k, m, g suffixes: 1024 multiples). Default: 16g on lfs (ZNS+
    /// §4's 16 GB; F2FS's reserve takes ~28 sections of 32 MiB whatever the size, so small
    /// volumes have little room), 1g on memfs.
    #[arg(long = "fs-size")]
    fs_size: Option<String>,
    /// The file system: lfs (F2FS-like, on a ZNS+ device) or memfs (host memory, no time).
    #[arg(long, default_value = "lfs")]
    fs: String,
    /// lfs: its segment-compaction scheme (ZNS+ OSDI'21 §4): zns (host copies), izc
    /// (zone_compaction), znsplus (IZC, threaded logging, hybrid recycling, periodic
    /// checkpoints); izc and znsplus also with -d (IZC-D), -cub (copyback-unaware
    /// allocation), -nocpbk (no copyback), and znsplus with -lp (LBA-ordered plugging).
    #[arg(long, default_value = "znsplus")]
    scheme: String,
    /// lfs: the ZNS+ device preset (its zone count follows --fs-size).
    #[arg(long, default_value = "znsplus-mlc")]
    device: String,
    /// Host cores the threads' system calls share.
    #[arg(long, default_value_t = 4)]
    cores: usize,
    /// Host CPU time of one system call, in nanoseconds.
    #[arg(long = "syscall-ns", default_value_t = 1000)]
    syscall_ns: u64,
    /// lfs: the most host memory the devices' stored bytes may take (k, m, g suffixes), as
    /// fio's `--mem-budget`. Default: half this machine's memory.
    #[arg(long = "mem-budget")]
    mem_budget: Option<String>,
}

fn parse_size(s: &str) -> anyhow::Result<u64> {
    parse_size_of("--fs-size", s)
}

fn parse_size_of(flag: &str, s: &str) -> anyhow::Result<u64> {
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
        .with_context(|| format!("{flag}={s}: expected a size such as 512m or 4g"))
}

/// Run the workload on `fs`.
fn run_on<F: FileSystem>(
    sim: &Sim,
    fs: F,
    w: Workload,
    cfg: Config,
    seed: u64,
) -> Result<Report, filebench::FbError> {
    sim.block_on(async move { filebench::run(fs, w, cfg, seed).await })
}

/// The F2FS-like file system's configuration for `--scheme`, and its device changed as the
/// scheme says (`lab::files_run::scheme`: copyback, plugging order).
fn lfs_scheme(
    name: &str,
    mut main: device::DeviceConfig,
) -> anyhow::Result<(device::DeviceConfig, LfsConfig)> {
    let s = lab::files_run::scheme(name).map_err(|e| anyhow::anyhow!("--{e}"))?;
    main.znsplus.copyback = s.copyback;
    main.znsplus.plugging = s.plugging;
    Ok((main, s.lfs))
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let json = match a.output_format.as_str() {
        "normal" => false,
        "json" => true,
        f => bail!("--output-format={f}: expected normal or json"),
    };
    let size_flag = a
        .fs_size
        .clone()
        .unwrap_or_else(|| if a.fs == "memfs" { "1g" } else { "16g" }.to_string());
    let fs_size = parse_size(&size_flag)?;
    let lfs = match a.fs.as_str() {
        "lfs" => {
            let (main, meta) = lab::stack::lfs_devices(&a.device, fs_size)?;
            let (main, lcfg) = lfs_scheme(&a.scheme, main)?;
            Some(((main, meta), lcfg))
        }
        "memfs" => None,
        f => bail!("--fs {f}: expected lfs or memfs"),
    };
    // MemFs keeps every byte in host memory.
    if lfs.is_none() && fs_size > 64 << 30 {
        bail!(
            "--fs-size={}: MemFs keeps files in host memory; at most 64g",
            size_flag
        );
    }
    let mem_budget = match &a.mem_budget {
        Some(b) => match parse_size_of("--mem-budget", b)? {
            0 => bail!("--mem-budget={b}: expected more than 0"),
            n => n,
        },
        None => device::default_memory_budget(),
    };
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
    let seed = a.seed;
    let mut extra = None;
    let report = match lfs {
        None => {
            eprintln!(
                "znslab filebench: on MemFs (files in host memory; it models no device time)"
            );
            run_on(&sim, MemFs::new(&sim, fs_size), w.clone(), cfg, seed)
        }
        Some(((main, meta), lcfg)) => {
            let mut main = device::Controller::in_memory(main)?;
            let mut meta = device::Controller::in_memory(meta)?;
            main.set_memory_budget(mem_budget);
            meta.set_memory_budget(mem_budget);
            let st = lab::stack::FsStack::new(&sim, main, meta, a.cores);
            // What a device said when it refused a command (its memory budget, say): the
            // file system only sees the status.
            let cause = || {
                let c = st.main.dev.with(|c| c.image_error());
                c.or_else(|| st.meta_dev.with(|c| c.image_error()))
            };
            let (io, mio) = (st.main.io.clone(), st.meta.clone());
            let fs = sim
                .block_on(async move { Lfs::mkfs(io, mio, lcfg).await })
                .map_err(|e| match cause() {
                    Some(why) => anyhow::anyhow!("mkfs: {e}: {why}"),
                    None => anyhow::anyhow!("mkfs: {e}"),
                })?;
            let fs = Rc::new(fs);
            let r = run_on(&sim, fs.clone(), w.clone(), cfg, seed);
            extra = Some(lfs_json(&a.scheme, &fs.counters(), &st.main.dev));
            if let Some(why) = cause() {
                eprintln!("znslab filebench: the device: {why}");
            }
            r
        }
    }
    .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let (out, err) = filebench::render_text(&report);
    eprint!("{err}");
    if json {
        let mut j = filebench::render_json(&report, &w);
        if let (Some(x), Some(o)) = (extra, j.as_object_mut()) {
            o.insert("file_system".into(), x);
        }
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        print!("{out}");
    }
    Ok(if report.failed.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The file system's and the device's figures (ZNS+ §4's metrics), for the JSON output.
fn lfs_json(
    scheme: &str,
    c: &host::lfs::LfsCounters,
    dev: &device::DeviceHandle,
) -> serde_json::Value {
    let k = dev.with(|d| d.counters().clone());
    let busy: u64 = dev.with(|d| d.flash().die_busy().iter().map(|t| t.as_ns()).sum());
    serde_json::json!({
        "kind": "lfs",
        "scheme": scheme,
        "user_bytes": c.user_bytes,
        "node_blocks": c.node_blocks(),
        "meta_blocks": c.cp_blocks + c.nat_blocks + c.sit_blocks + c.ssa_blocks + c.sb_blocks,
        "gc_host_copies": c.gc_host_copies,
        "gc_device_copies": c.gc_device_copies,
        "zone_compactions": c.zone_compactions,
        "copyback_chunks": c.copyback_chunks,
        "sections_reclaimed_sc": c.sections_reclaimed_sc,
        "sections_reclaimed_tl": c.sections_reclaimed_tl,
        "tl_opens": c.tl_opens,
        "fsyncs": c.fsyncs,
        "waf": c.waf(),
        "device": {
            "plugged_blocks_foreground": k.plugged_blocks_foreground,
            "plugged_blocks_background": k.plugged_blocks_background,
            "plug_copybacks": k.plug_copybacks,
            "compaction_copybacks": k.compaction_copybacks,
            "compaction_read_programs": k.compaction_read_programs,
            "zone_resets": k.zone_resets,
            "die_busy_ns": busy,
        },
    })
}
