//! The `znslab` command: `devices`, `fio`, `nvme` and `reproduce`, named after the tools users know.

mod corpus_cmd;
mod dbbench_cmd;
mod devices_cmd;
mod experiment;
mod fio_cmd;
mod nvme_cmd;
mod progress_bar;
mod reproduce_cczns;
mod reproduce_cmd;
mod torture;
mod ycsb_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// mimalloc, not glibc's malloc: a long run's heap of GBs (tables, device memo, block buffers)
/// made glibc spend 15-20 % of the run finding free chunks. Speed only; no figure depends on it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Emulate NVMe ZNS SSDs (and the host software on them) on one virtual clock.
#[derive(Parser)]
#[command(name = "znslab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the device presets (or print one as TOML with --show NAME).
    Devices(devices_cmd::Args),
    /// Run fio jobs: `znslab fio [JOBFILE] [--option=value ...]` (no job: the embedded default).
    Fio {
        /// A job file and fio options (--name=, --rw=, --bs=, ...), plus --device, --seed,
        /// --output-format=normal|json and --output=FILE.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// nvme-cli commands on a device image file.
    #[command(subcommand)]
    Nvme(nvme_cmd::NvmeCmd),
    /// RocksDB's db_bench on the LSM store on zonefs on a device:
    /// `znslab dbbench --benchmarks=fillrandom,readrandom --num=100000`.
    Dbbench(dbbench_cmd::Args),
    /// YCSB's core workload on the store: `znslab ycsb run -P workloads/workloada -p recordcount=10000`.
    Ycsb(ycsb_cmd::Args),
    /// Build the text corpora the amazon and reddit datasets draw from: `znslab corpus build gcide`.
    Corpus(corpus_cmd::Args),
    /// Reproduce a paper's evaluation: `znslab reproduce cczns`, `cczns-fig7` or `balloon-fig6`.
    Reproduce(reproduce_cmd::Args),
    /// Seeded power cuts through device, file system and store, each checked after power-on:
    /// `znslab torture --seeds 1000`; real processes killed at random: `--kill`.
    Torture(torture::Args),
}

fn main() -> ExitCode {
    // Piped into `head`, stop quietly as other command-line tools do instead of panicking on
    // the broken pipe.
    // SAFETY: restoring the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Devices(a) => devices_cmd::run(a),
        Cmd::Fio { args } => fio_cmd::run(&args),
        Cmd::Nvme(cmd) => nvme_cmd::run(cmd),
        Cmd::Reproduce(a) => reproduce_cmd::run(a),
        Cmd::Dbbench(a) => dbbench_cmd::run(a),
        Cmd::Ycsb(a) => ycsb_cmd::run(a),
        Cmd::Corpus(a) => corpus_cmd::run(a),
        Cmd::Torture(a) => torture::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("znslab: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// `--device PRESET` or `--device FILE.toml`.
pub fn load_device(arg: &str) -> anyhow::Result<device::DeviceConfig> {
    let path = std::path::Path::new(arg);
    if arg.ends_with(".toml") || path.is_file() {
        let text =
            std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("device file {arg}: {e}"))?;
        let cfg = device::DeviceConfig::from_toml(&text)
            .map_err(|e| anyhow::anyhow!("device file {arg}: {e}"))?;
        cfg.layout()
            .map_err(|e| anyhow::anyhow!("device file {arg}: {e}"))?;
        return Ok(cfg);
    }
    device::presets::by_name(arg).ok_or_else(|| {
        let names: Vec<&str> = device::presets::all().iter().map(|p| p.name).collect();
        anyhow::anyhow!(
            "unknown device '{arg}': not a .toml file and not a preset ({})",
            names.join(", ")
        )
    })
}

/// zonefs's space and zone figures as JSON (`zenfs df` and ZenFS's zone metrics).
pub(crate) fn zonefs_json(s: &host::zonefs::FsStats) -> serde_json::Value {
    let z = &s.zones;
    serde_json::json!({
        "free_bytes": s.free_bytes,
        "used_bytes": s.used_bytes,
        "reclaimable_bytes": s.reclaimable_bytes,
        "files": s.files,
        "meta_rolls": s.meta_rolls,
        "zone_resets": z.resets,
        "zones_finished_by_threshold": z.finished_by_threshold,
        "zones_finished_for_active_token": z.finished_for_token,
        "open_token_waits": z.open_token_waits,
        "gc": {
            "passes": z.gc_passes,
            "zones": z.gc_zones,
            "extents": z.gc_extents,
            "bytes_written": z.gc_bytes_written,
        },
    })
}

/// zonefs mkfs flags shared by ycsb and dbbench (ZenFS's `zenfs mkfs` names).
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct MkfsArgs {
    /// Finish an idle zone once less than this percentage of it is left (0 = off).
    #[arg(long = "finish_threshold", default_value_t = 0)]
    finish_threshold: u32,
    /// Run zonefs's garbage collection (ZenFS's --enable_gc).
    #[arg(long = "enable_gc")]
    enable_gc: bool,
}

impl MkfsArgs {
    pub(crate) fn options(&self) -> host::zonefs::MkfsOptions {
        host::zonefs::MkfsOptions {
            finish_threshold: self.finish_threshold,
            enable_gc: self.enable_gc,
            ..Default::default()
        }
    }
}

/// db_bench's compression names (none, snappy, lz4, zstd = level 1, zlib) as codecs, plus
/// CCZNS §V-A's schemes: `zstdpc` (ZSTD level 1 with 6 parallel compression threads), `qat`
/// (Deflate timed as a QAT 8970 card), `cc` (the device compresses: CW/DR on padding zones)
/// and its ablations `cc-single-dr`, `cc-single-cw`; applied to the store's options.
pub(crate) fn set_compression(
    name: &str,
    opts: &mut host::lsm::db::DbOptions,
) -> anyhow::Result<()> {
    let (codec, threads) = match name {
        "none" => (codec::Codec::None, 1),
        "snappy" => (codec::Codec::Snappy, 1),
        "lz4" => (codec::Codec::Lz4, 1),
        "zstd" => (codec::Codec::ZSTD1, 1),
        "zlib" => (codec::Codec::Deflate(1), 1),
        other => match workload::scheme::by_name(other) {
            Some(s) if s.device == "cczns" => {
                s.apply(opts);
                return Ok(());
            }
            _ => anyhow::bail!(
                "compression {other:?}: use none, snappy, lz4, zstd, zstdpc, zlib, qat, cc, \
                 cc-single-dr or cc-single-cw (Balloon is a device: --device cczns-balloon \
                 with none)"
            ),
        },
    };
    opts.table.codec = codec;
    opts.compression_parallel_threads = threads;
    Ok(())
}
