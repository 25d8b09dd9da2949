//! `znslab torture`: its flags, and the lines `lab::torture` reports printed as they come.
//! With the hidden `--kill-child`, this process is a child that `torture --kill` started
//! (`lab::torture::kill::child`).

use std::path::PathBuf;
use std::process::ExitCode;

use lab::torture::{self, kill};

#[derive(clap::Args)]
pub struct Args {
    /// Seeds to run, from `--seed` on.
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Start no new seed after this many seconds of wall time.
    #[arg(long)]
    time_limit: Option<f64>,
    /// Folder for the device images (default: the system's temporary folder).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// After each power-on, print every WAL's size and extents (for replaying a failure).
    #[arg(long)]
    verbose: bool,
    /// Run this workload on every seed instead of a drawn one: kv, fillbatch, ycsb-a, ycsb-e,
    /// threads, raw.
    #[arg(long)]
    workload: Option<String>,
    /// Run the store with this compression scheme on every seed instead of a drawn one (cc
    /// schemes run on the cczns design).
    #[arg(long)]
    scheme: Option<String>,
    /// Run on this device design on every seed instead of a drawn one: cczns, zns, balloon,
    /// tcssd (a compressing block SSD under zones the host emulates; store workloads only),
    /// zenfsplus (a small-zone zns device, one die per zone, under ZenFS+'s striped zonefs).
    #[arg(long)]
    design: Option<String>,
    /// Inject no faults (by default one seed in four meets one before its cut: the next
    /// write, read or zone command refused with a failure status).
    #[arg(long)]
    no_faults: bool,
    /// Kill real processes instead of cutting the simulated power: each seed runs its
    /// workload in a child `znslab` process on an image, SIGKILLs it at a random wall-clock
    /// instant (sometimes again while a second child mounts, recovers and reads), then
    /// checks the image in a fresh process against what the child acknowledged.
    #[arg(long)]
    kill: bool,
    /// (`--kill`'s child) Run one phase on `--image`, logging to `--ack-log`: workload or
    /// recover.
    #[arg(long, hide = true)]
    kill_child: Option<String>,
    #[arg(long, hide = true)]
    image: Option<PathBuf>,
    #[arg(long, hide = true)]
    ack_log: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.kill_child.is_some() {
        return kill::child(&kill::ChildArgs {
            kill_child: a.kill_child,
            image: a.image,
            ack_log: a.ack_log,
            seed: a.seed,
            workload: a.workload,
            scheme: a.scheme,
            design: a.design,
        });
    }
    let opts = torture::Options {
        seeds: a.seeds,
        seed: a.seed,
        time_limit: a.time_limit,
        dir: a.dir.unwrap_or_else(std::env::temp_dir),
        verbose: a.verbose,
        workload: a.workload,
        scheme: a.scheme,
        design: a.design,
        no_faults: a.no_faults,
        kill: a.kill,
    };
    let passed = torture::run(&opts, &mut |line| println!("{line}"))?;
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
