//! The fio reproductions: each figure a run list of fio jobs on fresh devices, with a table
//! that puts each figure beside the bound or the paper's figure it is compared with.
//!
//! - `cczns-fig7`: CCZNS §V-B Fig. 7. Four jobs on four zones (all 64 dies), one I/O each at a
//!   time (the paper's "4 threads"), single-chunk CW/DR (chunk = I/O size) against plain I/O
//!   (NO), data of compression ratio 2 and 4 (fio's buffer_compress_percentage 50 and 75).
//!   Sequential write, sequential read (of what a write phase just wrote) and random read.
//! - `balloon-fig6`: Balloon-ZNS §4.3 Fig. 6. Base-ZNS (`balloon-base`) against Balloon-ZNS
//!   (`balloon-qlc`) with 1, 8 and 16 jobs, one zone each: sequential write and read (128 KiB,
//!   QD1; the paper gives no I/O size) and 4 KiB random read. Data of medium compressibility
//!   stands in for the paper's m2 (xml) dataset: fio's buffer_compress_percentage=64 (raw
//!   footprint ≈ 38%, m2's is 38.2%) with page ratios spread by buffer_compress_spread=20.

use anyhow::{anyhow, bail, Context};
use serde_json::{json, Value};

use serde::Deserialize;

use super::{execute, size_name, Hooks, Options, Printed};
use crate::spec::{tags, DeviceChoice, FioRun, RunSpec, Work};

/// The paper's figures (`data/fio-figs-paper.toml`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Paper {
    cczns_fig7: Fig7Paper,
    balloon_fig6: Fig6Paper,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fig7Paper {
    summary: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fig6Paper {
    summary: String,
    cells: Vec<Fig6Cell>,
}

/// Balloon-ZNS against Base-ZNS in one cell of Fig. 6, as the paper gives it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fig6Cell {
    pattern: String,
    jobs: u32,
    paper: String,
}

/// The data file, parsed (it is part of the build: a bad one is a bug).
fn paper() -> Paper {
    toml::from_str(include_str!("../../data/fio-figs-paper.toml"))
        .expect("data/fio-figs-paper.toml")
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

impl Case {
    /// The run as a specification on device `cfg`.
    fn spec(&self, cfg: &device::DeviceConfig, size_mib: u64, seed: u64) -> RunSpec {
        let dir = if self.pattern == "write" {
            "write"
        } else {
            "read"
        };
        RunSpec {
            name: format!(
                "{}-{}-{}.json",
                self.pattern,
                size_name(self.size),
                self.scheme.replace([' ', '='], "")
            ),
            title: format!(
                "{:<9} {:>5} {:<8}",
                self.pattern,
                size_name(self.size),
                self.scheme
            ),
            seed,
            device: DeviceChoice::Config(Box::new(cfg.clone())),
            work: Work::Fio(FioRun {
                job: job_text(self, size_mib),
                direction: dir.into(),
                context: Some(format!(
                    "{} {} {}",
                    self.pattern,
                    size_name(self.size),
                    self.scheme
                )),
            }),
            tags: tags(&[
                ("pattern", json!(self.pattern)),
                ("io_size", json!(self.size)),
                ("scheme", json!(self.scheme)),
            ]),
        }
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

pub(super) fn fig7(args: &Options, hooks: &Hooks<'_>) -> anyhow::Result<Printed> {
    let device = args.device.clone().unwrap_or_else(|| "cczns".into());
    let cfg = crate::setup::load_device(&device)?;
    let layout = cfg.layout().map_err(|e| anyhow!("{e}"))?;
    let out = &args.output;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;

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

    let specs: Vec<RunSpec> = cases
        .iter()
        .map(|c| c.spec(&cfg, args.size_mib, args.seed))
        .collect();
    let (results, start) = execute(args, hooks, &device, &specs)?;

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
        "\n{}\n\nWall time {:.0} s.\n",
        paper().cczns_fig7.summary,
        start.elapsed().as_secs_f64()
    ));
    std::fs::write(out.join("summary.md"), &md)?;
    std::fs::write(out.join("summary.csv"), &csv)?;
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&json!({ "device": device, "runs": rows }))?,
    )?;
    Ok(Printed {
        stdout: md,
        stderr: Some(format!("written to {}", out.display())),
    })
}

/// One run of Balloon-ZNS Fig. 6: a pattern with a job count on a device.
struct Fig6Case {
    pattern: &'static str,
    jobs: u32,
    device: &'static str,
}

impl Fig6Case {
    /// The run as a specification: the device's zone size sets the jobs' offsets.
    fn spec(&self, size_mib: u64, seed: u64) -> anyhow::Result<RunSpec> {
        let cfg = crate::setup::load_device(self.device)?;
        let zone = cfg
            .layout()
            .map_err(|e| anyhow!("{e}"))?
            .zone_capacity_bytes();
        let dir = if self.pattern == "write" {
            "write"
        } else {
            "read"
        };
        Ok(RunSpec {
            name: format!("{}-{}jobs-{}.json", self.pattern, self.jobs, self.device),
            title: self.describe(),
            seed,
            device: DeviceChoice::Named(self.device.to_string()),
            work: Work::Fio(FioRun {
                job: fig6_job_text(self, size_mib, zone),
                direction: dir.into(),
                context: None,
            }),
            tags: Default::default(),
        })
    }

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

pub(super) fn balloon_fig6(args: &Options, hooks: &Hooks<'_>) -> anyhow::Result<Printed> {
    if let Some(d) = &args.device {
        bail!(
            "balloon-fig6 runs its own two devices (balloon-base, balloon-qlc); drop --device {d}"
        );
    }
    let out = &args.output;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
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
    let specs = cases
        .iter()
        .map(|c| c.spec(args.size_mib, args.seed))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (results, start) = execute(args, hooks, "balloon-base, balloon-qlc", &specs)?;
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
    let figures = paper().balloon_fig6;
    let paper = |pattern: &str, jobs: u32| {
        figures
            .cells
            .iter()
            .find(|c| c.pattern == pattern && c.jobs == jobs)
            .map_or("-", |c| c.paper.as_str())
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
        "\n{}\n\nWall time {:.0} s.\n",
        figures.summary,
        start.elapsed().as_secs_f64()
    ));
    std::fs::write(out.join("summary.md"), &md)?;
    std::fs::write(out.join("summary.csv"), &csv)?;
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&json!({ "runs": results }))?,
    )?;
    Ok(Printed {
        stdout: md,
        stderr: Some(format!("written to {}", out.display())),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_paper_file_parses() {
        let p = super::paper();
        assert_eq!(p.balloon_fig6.cells.len(), 8);
        assert!(p.cczns_fig7.summary.starts_with("Paper (§V-B)"));
    }
}
