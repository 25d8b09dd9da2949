//! `znslab reproduce TARGET`: a paper's figure, run by fio jobs on fresh devices, with a table
//! that puts each figure beside the bound it is compared with.
//!
//! Targets:
//! - `cczns-fig7`: CCZNS §V-B Fig. 7. Four jobs on four zones (all 64 dies), one I/O each at a
//!   time (the paper's "4 threads"), single-chunk CW/DR (chunk = I/O size) against plain I/O
//!   (NO), data of compression ratio 2 and 4 (fio's buffer_compress_percentage 50 and 75).
//!   Sequential write, sequential read (of what a write phase just wrote) and random read.
//! - `balloon-fig6`: Balloon-ZNS §4.3 Fig. 6. Base-ZNS (`balloon-base`) against Balloon-ZNS
//!   (`balloon-qlc`) with 1, 8 and 16 jobs, one zone each: sequential write and read (128 KiB,
//!   QD1; the paper gives no I/O size) and 4 KiB random read. Data of medium compressibility
//!   stands in for the paper's m2 (xml) dataset: fio's buffer_compress_percentage=64 (raw
//!   footprint ≈ 38%, m2's is 38.2%) with page ratios spread by buffer_compress_spread=20.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use device::{Controller, DeviceHandle};
use serde_json::{json, Value};
use sim::Sim;
use workload::fio;

#[derive(clap::Args)]
pub struct Args {
    /// What to reproduce: cczns (§V-C/D: Fig. 8-12, Tables IV-V, ablations), cczns-fig7 or
    /// balloon-fig6.
    pub(crate) target: String,
    /// cczns: the fraction of the paper's 20 M records and 5 M operations per workload. 0.005
    /// is the smallest whose Loads outlast a few L0 compactions (at 0.002 they take 0.6 s and
    /// one compaction more or less reorders them); 6-10 min on 2 cores with --jobs 2.
    #[arg(long, default_value_t = 0.005)]
    pub(crate) scale: f64,
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
    pub(crate) seed: u64,
    /// cczns: only the runs whose file name contains this text (say `main-cc-amazon`); the
    /// report leaves the others' cells empty.
    #[arg(long)]
    pub(crate) only: Option<String>,
    /// cczns: run nothing; write the report, CSVs and plots again from the runs' JSON already
    /// in the output folder.
    #[arg(long)]
    pub(crate) report_only: bool,
    /// cczns: keep the runs whose JSON is already in the output folder from an earlier,
    /// interrupted invocation at the same scale and seed, and run only the others (a run that
    /// ended with an error runs again).
    #[arg(long, conflicts_with = "report_only")]
    pub(crate) resume: bool,
    /// cczns: keep each run's device in a sparse image file in this folder instead of memory
    /// (needed from about --scale 0.05 on this machine's 24 GiB: a run's zones, garbage
    /// included, take ~30 GB at 0.1). Default: `<output>/images` above scale 0.02.
    #[arg(long)]
    pub(crate) image_dir: Option<PathBuf>,
    /// cczns: shrink each run's device with the workload: flash blocks, and so zones and
    /// capacity, scaled by S (the paper's 128 zones of 1 GB become 128 zones of S GB). The store
    /// keeps as many SSTs per zone as at S=1 and fills the device as far as the paper's 20 M
    /// records fill 128 GB, so a scheme that runs out of space there (single-chunk CW, §V-D)
    /// runs out here. For space, not time: a zone reset still takes a 5 ms erase but comes
    /// 1/S times as often (at 0.005, CC's Load ran 306 resets instead of 63 and went from
    /// 66 to 42 kops/s), so throughput is the default's to read. Off by default.
    #[arg(long)]
    pub(crate) scale_device: bool,
    /// cczns: YCSB client threads in every phase (YCSB's threadcount; the paper does not say
    /// how many it ran, YCSB's default is 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) threads: u16,
}

/// One run of the figure: a pattern at an I/O size for a scheme.
#[derive(Clone)]
struct Case {
    pattern: &'static str,
    size: u64,
    scheme: &'static str,
    /// buffer_compress_percentage
    pct: u32,
    cc: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.jobs == Some(0) {
        bail!("--jobs 0: at least one run at a time");
    }
    match args.target.as_str() {
        "cczns" => crate::reproduce_cczns::reproduce(args),
        "cczns-fig7" => fig7(args),
        "balloon-fig6" => balloon_fig6(args),
        t => bail!("unknown target '{t}' (known: cczns, cczns-fig7, balloon-fig6)"),
    }
}

fn size_name(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{}m", b >> 20)
    } else {
        format!("{}k", b >> 10)
    }
}

fn job_text(c: &Case, size_mib: u64) -> String {
    let bs = size_name(c.size);
    let mut t = format!(
        "[global]\nioengine=psync\nzonemode=zbd\ngroup_reporting\nnumjobs=4\n\
         offset_increment=1g\nsize={size_mib}m\nbs={bs}\nbuffer_compress_percentage={}\n\
         compressed_io={}\n",
        c.pct, c.cc as u8
    );
    match c.pattern {
        "write" => t.push_str("\n[main]\nrw=write\n"),
        "read" => t.push_str("\n[prep]\nrw=write\n\n[main]\nstonewall\nrw=read\n"),
        _ => {
            // Random reads: enough I/Os for stable figures, not the whole region.
            let io = (c.size * 4096).min(size_mib << 20);
            t.push_str(&format!(
                "\n[prep]\nrw=write\n\n[main]\nstonewall\nrw=randread\nio_size={io}\n"
            ));
        }
    }
    t
}

fn fig7(args: Args) -> anyhow::Result<ExitCode> {
    let device = args.device.clone().unwrap_or_else(|| "cczns".into());
    let cfg = crate::load_device(&device)?;
    let layout = cfg.layout().map_err(|e| anyhow!("{e}"))?;
    let out = output_dir(&args);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let k = |n: u64| n << 10;
    let sizes: [(&str, Vec<u64>); 3] = [
        ("write", vec![k(16), k(64), k(128), k(512), k(1024)]),
        ("read", vec![k(16), k(64), k(128), k(512), k(1024)]),
        ("randread", vec![k(4), k(16), k(64), k(128)]),
    ];
    let schemes: [(&str, u32, bool); 3] = [
        ("NO", 50, false),
        ("CC CR=2", 50, true),
        ("CC CR=4", 75, true),
    ];
    let mut cases = Vec::new();
    for (pattern, list) in &sizes {
        for &size in list {
            for &(scheme, pct, cc) in &schemes {
                cases.push(Case {
                    pattern,
                    size,
                    scheme,
                    pct,
                    cc,
                });
            }
        }
    }

    let (results, start) = run_parallel(&args, &device, &cases, |case| {
        let v = run_case(case, &cfg, args.size_mib, args.seed)?;
        let name = format!(
            "{}-{}-{}.json",
            case.pattern,
            size_name(case.size),
            case.scheme.replace([' ', '='], "")
        );
        Ok((name, v))
    })?;

    // Bounds the paper compares with: the flash's own write and read bandwidth.
    let g = &layout.geometry;
    let xfer = g.transfer_time(g.unit_bytes).as_ns() as f64;
    let write_bound =
        g.dies as f64 * g.unit_bytes as f64 / (g.program_latency.as_ns() as f64 + xfer) * 1e3;
    let page_xfer = g.transfer_time(g.page_bytes as u64).as_ns() as f64;
    let read_bound =
        g.dies as f64 * g.page_bytes as f64 / (g.read_latency.as_ns() as f64 + page_xfer) * 1e3;
    let link = layout.link_bytes_per_s as f64 / 1e6;

    let mut md = format!(
        "# CCZNS Fig. 7 on `{device}` (znslab {})\n\n\
         4 jobs on 4 zones (64 dies), QD1 each, single-chunk CW/DR, {} MiB per job, seed {}.\n\
         Flash write bound {:.0} MB/s (dies × unit / (tPROG + transfer)), flash read bound {:.0} MB/s,\n\
         host link {:.0} MB/s per direction. MB/s are of uncompressed (user) bytes.\n\n\
         | pattern | I/O size | NO MB/s | CC CR=2 MB/s | CC CR=4 MB/s | CC2/NO | CC4/NO | CC2/flash bound | CC4/flash bound |\n\
         |---|---|---|---|---|---|---|---|---|\n",
        env!("CARGO_PKG_VERSION"),
        args.size_mib,
        args.seed,
        write_bound,
        read_bound,
        link
    );
    let mut csv = String::from("pattern,io_size,scheme,mb_per_s,iops,mean_lat_us,p99_lat_us,p9999_lat_us,compression_ratio\n");
    let mut rows = Vec::new();
    for chunk in results.chunks(3).zip(cases.chunks(3)) {
        let (vals, cs) = chunk;
        let bw: Vec<f64> = vals
            .iter()
            .map(|v| v["mb_per_s"].as_f64().unwrap_or(0.0))
            .collect();
        let bound = if cs[0].pattern == "write" {
            write_bound
        } else {
            read_bound
        };
        md.push_str(&format!(
            "| {} | {} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            cs[0].pattern,
            size_name(cs[0].size),
            bw[0],
            bw[1],
            bw[2],
            bw[1] / bw[0],
            bw[2] / bw[0],
            bw[1] / bound,
            bw[2] / bound
        ));
        for (v, c) in vals.iter().zip(cs) {
            csv.push_str(&format!(
                "{},{},{},{:.1},{:.0},{:.1},{:.1},{:.1},{}\n",
                c.pattern,
                size_name(c.size),
                c.scheme,
                v["mb_per_s"].as_f64().unwrap_or(0.0),
                v["iops"].as_f64().unwrap_or(0.0),
                v["mean_us"].as_f64().unwrap_or(0.0),
                v["p99_us"].as_f64().unwrap_or(0.0),
                v["p9999_us"].as_f64().unwrap_or(0.0),
                v["compression_ratio"]
            ));
            rows.push(v.clone());
        }
    }
    md.push_str(&format!(
        "\nPaper (§V-B): sequential write CC above NO by 37.6%-99.9% (CR=2) and 49.1%-2.1x (CR=4), \
         up to 2.0x and 3.1x the flash write bound; sequential read gains only at large sizes, up \
         to +20.4% and +42.0%; random read within 5%.\n\nWall time {:.0} s.\n",
        start.elapsed().as_secs_f64()
    ));
    std::fs::write(out.join("summary.md"), &md)?;
    std::fs::write(out.join("summary.csv"), &csv)?;
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&json!({ "device": device, "runs": rows }))?,
    )?;
    print!("{md}");
    eprintln!("written to {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Run `one` on every case, `--jobs` at a time (default: the machine's cores), writing each
/// result's JSON into the output folder under the name `one` gives. Returns the results in
/// case order and when the runs started.
pub(crate) fn run_parallel<C: Sync + Describe>(
    args: &Args,
    device: &str,
    cases: &[C],
    one: impl Fn(&C) -> anyhow::Result<(String, Value)> + Sync,
) -> anyhow::Result<(Vec<Value>, Instant)> {
    let out = output_dir(args);
    let workers = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, cases.len().max(1));
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<anyhow::Result<Value>>>> =
        Mutex::new((0..cases.len()).map(|_| None).collect());
    let wall = Instant::now();
    eprintln!(
        "znslab reproduce {}: {} runs on {device}, {workers} at a time",
        args.target,
        cases.len()
    );
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().expect("lock");
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(case) = cases.get(i) else { break };
                let r = one(case).map(|(name, v)| {
                    let _ = std::fs::write(
                        out.join(name),
                        serde_json::to_string_pretty(&v).unwrap_or_default(),
                    );
                    v
                });
                eprintln!(
                    "  {} done ({:.0} s)",
                    case.describe(),
                    wall.elapsed().as_secs_f64()
                );
                results.lock().expect("lock")[i] = Some(r);
            });
        }
    });
    let results = results
        .into_inner()
        .expect("lock")
        .into_iter()
        .map(|r| r.expect("every case ran"))
        .collect::<anyhow::Result<_>>()?;
    Ok((results, wall))
}

pub(crate) trait Describe {
    fn describe(&self) -> String;
}

impl Describe for Case {
    fn describe(&self) -> String {
        format!(
            "{:<9} {:>5} {:<8}",
            self.pattern,
            size_name(self.size),
            self.scheme
        )
    }
}

pub(crate) fn output_dir(args: &Args) -> PathBuf {
    args.output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("reproduce-{}", args.target)))
}

/// One run of Balloon-ZNS Fig. 6: a pattern with a job count on a device.
struct Fig6Case {
    pattern: &'static str,
    jobs: u32,
    device: &'static str,
}

impl Describe for Fig6Case {
    fn describe(&self) -> String {
        format!(
            "{:<9} {:>2} jobs {:<12}",
            self.pattern, self.jobs, self.device
        )
    }
}

fn fig6_job_text(c: &Fig6Case, size_mib: u64, zone_bytes: u64) -> String {
    let mut t = format!(
        "[global]\nioengine=psync\nzonemode=zbd\ngroup_reporting\nnumjobs={}\n\
         offset_increment={zone_bytes}\nsize={size_mib}m\nbs=128k\n\
         buffer_compress_percentage=64\nbuffer_compress_spread=20\n",
        c.jobs
    );
    match c.pattern {
        "write" => t.push_str("\n[main]\nrw=write\n"),
        // Reads start once the write buffer has drained to flash (programs of 1.86 ms would
        // otherwise sit in front of them): the paper ran its read jobs separately.
        "read" => t.push_str("\n[prep]\nrw=write\n\n[main]\nstonewall\nstartdelay=2s\nrw=read\n"),
        _ => {
            let io = (16u64 << 20).min(size_mib << 20);
            t.push_str(&format!(
                "\n[prep]\nrw=write\n\n[main]\nstonewall\nstartdelay=2s\nrw=randread\nbs=4k\n\
                 io_size={io}\n"
            ));
        }
    }
    t
}

fn balloon_fig6(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(d) = &args.device {
        bail!(
            "balloon-fig6 runs its own two devices (balloon-base, balloon-qlc); drop --device {d}"
        );
    }
    let out = output_dir(&args);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut cases = Vec::new();
    for pattern in ["write", "read", "randread"] {
        for jobs in [1, 8, 16] {
            for device in ["balloon-base", "balloon-qlc"] {
                cases.push(Fig6Case {
                    pattern,
                    jobs,
                    device,
                });
            }
        }
    }
    let (results, start) = run_parallel(&args, "balloon-base, balloon-qlc", &cases, |c| {
        let cfg = crate::load_device(c.device)?;
        let zone = cfg
            .layout()
            .map_err(|e| anyhow!("{e}"))?
            .zone_capacity_bytes();
        let text = fig6_job_text(c, args.size_mib, zone);
        let dir = if c.pattern == "write" {
            "write"
        } else {
            "read"
        };
        let v = run_job(&text, &cfg, args.seed, dir)?;
        Ok((format!("{}-{}jobs-{}.json", c.pattern, c.jobs, c.device), v))
    })?;
    let mut md = format!(
        "# Balloon-ZNS Fig. 6 (znslab {})\n\n\
         Base-ZNS (`balloon-base`) and Balloon-ZNS p70 (`balloon-qlc`): 64 QLC dies, 2 GiB zones; \
         one zone per job, QD1; sequential 128 KiB, random 4 KiB; {} MiB per job; reads start 2 s \
         after the write phase (the buffer drained); data of medium compressibility (fio buffer_compress_percentage=64, spread ±20 per page); seed {}.\n\n\
         | pattern | jobs | Base MB/s | Balloon MB/s | Balloon vs Base | paper | truncated pages | two-read pages read |\n\
         |---|---|---|---|---|---|---|---|\n",
        env!("CARGO_PKG_VERSION"),
        args.size_mib,
        args.seed
    );
    let paper = |pattern: &str, jobs: u32| match (pattern, jobs) {
        ("write", 1) => "-71.3%",
        ("write", 8) => "+20.1%",
        ("write", 16) => "+57.5%",
        ("read", 1) => "-71.6%",
        ("read", 8) => "-12.3%",
        ("read", 16) => "-12.0%",
        ("randread", 8) => "-24.4% (multi-job)",
        ("randread", 16) => "-26.1% (multi-job)",
        _ => "-",
    };
    let mut csv = String::from("pattern,jobs,device,mb_per_s,iops,mean_lat_us,p99_lat_us\n");
    for (pair, cs) in results.chunks(2).zip(cases.chunks(2)) {
        let bw = |v: &Value| v["mb_per_s"].as_f64().unwrap_or(0.0);
        let b = &pair[1]["fio"]["znslab"]["compression"]["balloon"];
        md.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:+.1}% | {} | {:.1}% | {} |\n",
            cs[0].pattern,
            cs[0].jobs,
            bw(&pair[0]),
            bw(&pair[1]),
            (bw(&pair[1]) / bw(&pair[0]) - 1.0) * 100.0,
            paper(cs[0].pattern, cs[0].jobs),
            b["truncated_ratio"].as_f64().unwrap_or(0.0) * 100.0,
            b["two_read_pages"],
        ));
        for (v, c) in pair.iter().zip(cs) {
            csv.push_str(&format!(
                "{},{},{},{:.1},{:.0},{:.1},{:.1}\n",
                c.pattern,
                c.jobs,
                c.device,
                bw(v),
                v["iops"].as_f64().unwrap_or(0.0),
                v["mean_us"].as_f64().unwrap_or(0.0),
                v["p99_us"].as_f64().unwrap_or(0.0),
            ));
        }
    }
    md.push_str(&format!(
        "\nPaper (§4.3): one job on one zone loses ~71% (a sub-superblock has 8 of the 64 dies); \
         8/16 jobs write +20.1%/+57.5% and read sequentially -12.3%/-12.0%; multi-job 4 KiB random \
         reads -24.4%/-26.1%.\n\nWall time {:.0} s.\n",
        start.elapsed().as_secs_f64()
    ));
    std::fs::write(out.join("summary.md"), &md)?;
    std::fs::write(out.join("summary.csv"), &csv)?;
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&json!({ "runs": results }))?,
    )?;
    print!("{md}");
    eprintln!("written to {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Run a job file on a fresh in-memory device; the figures of its `main` job in direction
/// `dir` (read or write), with the whole fio JSON under `fio`.
fn run_job(text: &str, cfg: &device::DeviceConfig, seed: u64, dir: &str) -> anyhow::Result<Value> {
    let sections = fio::parse_jobfile(text).map_err(|e| anyhow!("{e}"))?;
    let jobs = fio::build_jobs(&sections).map_err(|e| anyhow!("{e}"))?;
    let sim = Sim::new(seed);
    let ctl = Controller::in_memory(cfg.clone()).map_err(|e| anyhow!("{e}"))?;
    let dev = DeviceHandle::new(&sim, ctl);
    let result = fio::run(&sim, &dev, &jobs).map_err(|e| anyhow!("{e}"))?;
    if let Some(e) = result.jobs.iter().find_map(|j| j.error.clone()) {
        bail!("{e}");
    }
    let ctl = dev
        .into_controller()
        .ok_or_else(|| anyhow!("internal: device still shared"))?;
    let full = fio::json_output(&result, &ctl, seed, 0.0, 0);
    let main = full["jobs"]
        .as_array()
        .and_then(|js| js.iter().find(|j| j["jobname"] == "main"))
        .cloned()
        .ok_or_else(|| anyhow!("no main job in the output"))?;
    let d = &main[dir];
    let clat = &d["clat_ns"]["percentile"];
    Ok(json!({
        "mb_per_s": d["bw_bytes"].as_f64().unwrap_or(0.0) / 1e6,
        "iops": d["iops"],
        "mean_us": d["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1e3,
        "p99_us": clat["99.000000"].as_f64().unwrap_or(0.0) / 1e3,
        "p9999_us": clat["99.990000"].as_f64().unwrap_or(0.0) / 1e3,
        "compression_ratio": full["znslab"]["compression"]["compression_ratio"],
        "fio": full,
    }))
}

/// Run one case on a fresh in-memory device; the figures of its measured phase.
fn run_case(
    c: &Case,
    cfg: &device::DeviceConfig,
    size_mib: u64,
    seed: u64,
) -> anyhow::Result<Value> {
    let dir = if c.pattern == "write" {
        "write"
    } else {
        "read"
    };
    let mut v = run_job(&job_text(c, size_mib), cfg, seed, dir)
        .with_context(|| format!("{} {} {}", c.pattern, size_name(c.size), c.scheme))?;
    v["pattern"] = json!(c.pattern);
    v["io_size"] = json!(c.size);
    v["scheme"] = json!(c.scheme);
    Ok(v)
}
