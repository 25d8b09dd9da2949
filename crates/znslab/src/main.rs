//! The `znslab` command: argument parsing and printing over the `lab`, `workload` and `device`
//! libraries; subcommands named after the tools users know (`devices`, `fio`, `nvme`, `ycsb`,
//! `dbbench`, `filebench`, `corpus`, `reproduce`, `torture`).

mod corpus_cmd;
mod dbbench_cmd;
mod devices_cmd;
mod filebench_cmd;
mod fio_cmd;
mod nvme_cmd;
mod progress_bar;
mod reproduce_cmd;
mod run_cmd;
mod torture_cmd;
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
    /// List the device presets, designs and compression engine profiles (or print a preset as
    /// TOML with --show NAME).
    Devices(devices_cmd::Args),
    /// Run fio jobs: `znslab fio [JOBFILE] [--option=value ...]` (no job: the embedded default).
    Fio {
        /// A job file and fio options (--name=, --rw=, --bs=, --filename=IMAGE to run on a device
        /// image, ...), plus --device, --seed, --output-format=normal|json, --output=FILE,
        /// --mem-budget=SIZE and --image-sync.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// nvme-cli commands on a device image file.
    #[command(subcommand)]
    Nvme(nvme_cmd::NvmeCmd),
    /// RocksDB's db_bench on the LSM store on zonefs on a device:
    /// `znslab dbbench --benchmarks=fillrandom,readrandom --num=100000`.
    #[command(disable_help_flag = true)]
    Dbbench {
        /// db_bench's flags, in gflags' forms (--name=value, -name=value, --name, --noname),
        /// plus --device, --json, --cores, --dataset; `znslab dbbench --help` lists them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// filebench's workload files on a file system: `znslab filebench fileserver.f --set nfiles=1000`.
    Filebench(filebench_cmd::Args),
    /// YCSB's core workload on the store: `znslab ycsb run -P workloads/workloada -p recordcount=10000`.
    Ycsb(ycsb_cmd::Args),
    /// Build the text corpora the amazon and reddit datasets draw from: `znslab corpus build gcide`.
    Corpus(corpus_cmd::Args),
    /// Reproduce a paper's evaluation: `znslab reproduce cczns`, `cczns-fig7` or `balloon-fig6`.
    Reproduce(reproduce_cmd::Args),
    /// Run a list of run specifications from a TOML file (as `reproduce cczns --write-runs`
    /// writes one): `znslab run runs.toml --output DIR`.
    Run(run_cmd::Args),
    /// Seeded power cuts through device, file system and store, each checked after power-on:
    /// `znslab torture --seeds 1000`; real processes killed at random: `--kill`.
    Torture(torture_cmd::Args),
}

fn main() -> ExitCode {
    // Piped into `head`, stop quietly as other command-line tools do instead of panicking on
    // the broken pipe.
    // SAFETY: restoring the default action of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse_from(ycsb_cmd::ycsb_args(std::env::args_os().collect()));
    let result = match cli.command {
        Cmd::Devices(a) => devices_cmd::run(a),
        Cmd::Fio { args } => fio_cmd::run(&args),
        Cmd::Nvme(cmd) => nvme_cmd::run(cmd),
        Cmd::Reproduce(a) => reproduce_cmd::run(a),
        Cmd::Run(a) => run_cmd::run(a),
        Cmd::Dbbench { args } => dbbench_cmd::run(&args),
        Cmd::Ycsb(a) => ycsb_cmd::run(a),
        Cmd::Filebench(a) => filebench_cmd::run(a),
        Cmd::Corpus(a) => corpus_cmd::run(a),
        Cmd::Torture(a) => torture_cmd::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("znslab: {e:#}");
            ExitCode::from(2)
        }
    }
}

pub(crate) use lab::setup::{load_device, zonefs_json};

/// zonefs mkfs flags of `znslab ycsb` (db_bench's names for the same choices:
/// `lab::zonefs_spec`).
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct MkfsArgs {
    /// Finish an idle zone once less than this percentage of it is left (0 = off).
    #[arg(long = "finish_threshold", default_value_t = 0)]
    finish_threshold: u32,
    /// Run zonefs's garbage collection (ZenFS's --enable_gc).
    #[arg(long = "enable_gc")]
    enable_gc: bool,
    /// zonefs's zone policy: zenfs, or zenfsplus (ZenFS+: SSTs striped over the independent
    /// zone groups its probe finds; docs/zenfsplus.md).
    #[arg(long = "fs_policy", default_value = "zenfs")]
    fs_policy: String,
    /// How mkfs finds the independent zone groups: write, read or none (default: write under
    /// zenfsplus, none under zenfs).
    #[arg(long = "izg_probe", default_value = "")]
    izg_probe: String,
    /// zenfsplus: IZGs written (0: all found).
    #[arg(long = "zenfsplus_izgs", default_value_t = 16)]
    zenfsplus_izgs: u32,
    /// zenfsplus: the most zones an SST is striped over.
    #[arg(long = "max_stripe_width", default_value_t = 16)]
    max_stripe_width: u32,
    /// zenfsplus: flush and compaction write disjoint IZGs (--zenfsplus_isolation=false: off).
    #[arg(long = "zenfsplus_isolation", default_value_t = true, action = clap::ArgAction::Set)]
    zenfsplus_isolation: bool,
    /// zenfsplus: minor GC every 10 s and full GC below 10% free (=false: ZenFS's resets).
    #[arg(long = "zenfsplus_reclaim", default_value_t = true, action = clap::ArgAction::Set)]
    zenfsplus_reclaim: bool,
    /// The most IO zones written at once (0: the device's limit; ZenFS+ ran ZenFS with 6-12).
    #[arg(long = "max_active_io_zones", default_value_t = 0)]
    max_active_io_zones: u32,
}

impl MkfsArgs {
    pub(crate) fn spec(&self) -> lab::zonefs_spec::ZonefsSpec {
        lab::zonefs_spec::ZonefsSpec {
            fs_policy: self.fs_policy.clone(),
            izg_probe: self.izg_probe.clone(),
            zenfsplus_izgs: self.zenfsplus_izgs,
            max_stripe_width: self.max_stripe_width,
            zenfsplus_isolation: self.zenfsplus_isolation,
            zenfsplus_reclaim: self.zenfsplus_reclaim,
            max_active_io_zones: self.max_active_io_zones,
            finish_threshold: self.finish_threshold,
            enable_gc: self.enable_gc,
        }
    }
}

pub(crate) use lab::setup::set_compression;
