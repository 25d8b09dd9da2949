//! `znslab reproduce TARGET`: its flags, and the report `lab::reproduce` makes printed
//! (progress on stderr, the report on stdout). The targets, their run lists and the paper's
//! figures live in `lab::reproduce`.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// What to reproduce: cczns (§V-C/D: Fig. 8-12, Tables IV-V, ablations), znsplus (ZNS+
    /// §4: Fig. 6-12, Tables 4-5), zenfsplus (ZenFS+ §V-A: the IZG probe, Fig. 2, 8, 9, 10,
    /// Table 1), cczns-fig7 or balloon-fig6.
    target: String,
    /// cczns: the fraction of the paper's 20 M records and 5 M operations per workload
    /// (default 0.005, the smallest whose Loads outlast a few L0 compactions: at 0.002 they
    /// take 0.6 s and one compaction more or less reorders them; 6-10 min on 2 cores with
    /// --jobs 2). znsplus: the fraction of the paper's 16 GB file system and 2 GB page cache
    /// (default 0.0625: 1 GiB; at least 1/32). zenfsplus: the fraction of the paper's 25 M
    /// fillrandom keys (default 0.125).
    #[arg(long)]
    scale: Option<f64>,
    /// Device preset or TOML file (default: the paper's device).
    #[arg(long)]
    device: Option<String>,
    /// Data each job writes per run, in MiB (the paper's runs are longer; throughput settles
    /// within a few MiB per die).
    #[arg(long, default_value_t = 256)]
    size_mib: u64,
    /// Folder for the JSON of every run and the summary (default: reproduce-TARGET).
    #[arg(long)]
    output: Option<PathBuf>,
    /// Runs at once (default: the machine's cores).
    #[arg(long)]
    jobs: Option<usize>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// znsplus: run each run under N seeds (--seed, --seed + 1, ...) and report each figure
    /// from their mean (one seed's point can differ from its neighbour's by as much as the
    /// trend, docs/results/znsplus.md); each seed's JSON is kept as NAME-seedK.json.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    seeds: u32,
    /// cczns, znsplus: only the runs whose file name contains this text (say `main-cc-amazon`); the
    /// report leaves the others' cells empty.
    #[arg(long)]
    only: Option<String>,
    /// cczns, znsplus: run nothing; write the report, CSVs and plots again from the runs' JSON already
    /// in the output folder.
    #[arg(long)]
    report_only: bool,
    /// cczns, znsplus: keep the runs whose JSON is already in the output folder from an earlier,
    /// interrupted invocation at the same scale and seed, and run only the others (a run that
    /// ended with an error runs again).
    #[arg(long, conflicts_with = "report_only")]
    resume: bool,
    /// cczns: keep each run's device in a sparse image file in this folder instead of memory
    /// (needed from about --scale 0.05 on a machine of 24 GiB: a run's zones, garbage
    /// included, take ~30 GB at 0.1). Default: `<output>/images` above scale 0.02.
    #[arg(long)]
    image_dir: Option<PathBuf>,
    /// cczns: shrink each run's device with the workload: flash blocks, and so zones and
    /// capacity, scaled by S (the paper's 128 zones of 1 GB become 128 zones of S GB). The store
    /// keeps as many SSTs per zone as at S=1 and fills the device as far as the paper's 20 M
    /// records fill 128 GB, so a scheme that runs out of space there (single-chunk CW, §V-D)
    /// runs out here. For space, not time: a zone reset still takes a 5 ms erase but comes
    /// 1/S times as often (at 0.005, CC's Load ran 306 resets instead of 63 and went from
    /// 66 to 42 kops/s), so throughput is the default's to read. Off by default.
    #[arg(long)]
    scale_device: bool,
    /// cczns: YCSB client threads in every phase (YCSB's threadcount; the paper does not say
    /// how many it ran, YCSB's default is 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: u16,
    /// cczns, znsplus: run nothing; write the evaluation's run list (TOML) to this file, for
    /// `znslab run FILE` or another executor.
    #[arg(long)]
    write_runs: Option<PathBuf>,
    /// cczns: `real` (the default) or `modeled`: values are runs of one byte of the dataset's
    /// sizes and every codec is replaced by sizes drawn from its distribution measured on the
    /// corpus (cached beside it), for sweeps where only sizes matter (docs/commands/reproduce.md).
    #[arg(long, default_value = "real", value_parser = ["real", "modeled"])]
    payload: String,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let output = a
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", a.target)));
    let opts = lab::reproduce::Options {
        target: a.target,
        scale: a.scale,
        device: a.device,
        size_mib: a.size_mib,
        output,
        jobs: a.jobs,
        seed: a.seed,
        seeds: a.seeds,
        only: a.only,
        report_only: a.report_only,
        resume: a.resume,
        image_dir: a.image_dir,
        scale_device: a.scale_device,
        threads: a.threads as usize,
        write_runs: a.write_runs,
        payload: lab::spec::Payload::parse(&a.payload)?,
    };
    let hooks = lab::reproduce::Hooks {
        progress: &|line| eprintln!("{line}"),
        prepare_dataset: &lab::corpus::ensure_for,
    };
    let printed = lab::reproduce::run(&opts, &hooks)?;
    print!("{}", printed.stdout);
    if let Some(line) = printed.stderr {
        eprintln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}
