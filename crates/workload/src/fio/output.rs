//! fio's normal (text) output and its JSON output, plus a `znslab` object of device figures.
//!
//! Wall-clock fields are `timestamp`, `timestamp_ms`, `time`, `znslab.wall_time_s` and
//! `znslab.device_commands_per_wall_s`; everything else is a pure function of seed and config.

use std::fmt::Write as _;

use device::Controller;
use report::{round3, LatencyHistogram, FIO_PERCENTILES};
use serde_json::{json, Map, Value};

use super::runner::{DirStats, JobResult, RunResult};

/// Jobs as fio reports them: one entry per job, or per group with group_reporting.
fn reported(result: &RunResult) -> Vec<(JobResult, u32)> {
    let mut out: Vec<(JobResult, u32)> = Vec::new();
    for j in &result.jobs {
        if j.spec.group_reporting {
            if let Some((agg, n)) = out
                .iter_mut()
                .find(|(a, _)| a.group == j.group && a.spec.group_reporting)
            {
                agg.read.merge(&j.read);
                agg.write.merge(&j.write);
                agg.runtime_ns = agg.runtime_ns.max(j.runtime_ns);
                agg.zone_resets += j.zone_resets;
                agg.zone_finishes += j.zone_finishes;
                if agg.error.is_none() {
                    agg.error = j.error.clone();
                }
                *n += 1;
                continue;
            }
        }
        out.push((j.clone(), 1));
    }
    out
}

fn bw_bytes(d: &DirStats, runtime_ns: u64) -> f64 {
    if runtime_ns == 0 {
        0.0
    } else {
        d.io_bytes as f64 * 1e9 / runtime_ns as f64
    }
}

fn dir_json(d: &DirStats, runtime_ns: u64) -> Value {
    let bw = bw_bytes(d, runtime_ns);
    let iops = if runtime_ns == 0 {
        0.0
    } else {
        d.ios as f64 * 1e9 / runtime_ns as f64
    };
    let zero = LatencyHistogram::new().fio_json();
    json!({
        "io_bytes": d.io_bytes,
        "io_kbytes": d.io_bytes / 1024,
        "bw_bytes": bw.round() as u64,
        "bw": (bw / 1024.0).round() as u64,
        "iops": round3(iops),
        "runtime": runtime_ns / 1_000_000,
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": zero,
        "clat_ns": d.clat.fio_json(),
        "lat_ns": d.clat.fio_json(),
    })
}

fn utilisation(busy: &[sim::SimDuration], window_ns: u64) -> Vec<f64> {
    busy.iter()
        .map(|b| {
            if window_ns == 0 {
                0.0
            } else {
                round3(b.as_ns() as f64 / window_ns as f64)
            }
        })
        .collect()
}

/// The `znslab` object: device and flash figures for the run.
pub fn device_json(c: &Controller, result: &RunResult, seed: u64, wall_s: f64) -> Value {
    let f = c.flash_counters();
    let d = c.counters();
    let window = result.sim_end_ns.max(c.flash().idle_at().as_ns());
    let (to_dev, to_host) = c.link_busy();
    let dram = c.dram();
    let wa = if d.host_bytes_written == 0 {
        0.0
    } else {
        round3(f.bytes_programmed as f64 / d.host_bytes_written as f64)
    };
    json!({
        "seed": seed,
        "device": c.config().name,
        "sim_time_ns": result.sim_end_ns,
        "flash_idle_ns": window,
        "wall_time_s": round3(wall_s),
        "device_commands": d.commands,
        "device_commands_per_wall_s": if wall_s > 0.0 { (d.commands as f64 / wall_s).round() } else { 0.0 },
        "host_bytes_written": d.host_bytes_written,
        "host_bytes_read": d.host_bytes_read,
        "buffer_read_bytes": d.buffer_read_bytes,
        "flash_bytes_programmed": f.bytes_programmed,
        "flash_bytes_read": f.bytes_read,
        "flash_programs": f.programs,
        "flash_reads": f.reads,
        "flash_erases": f.erases,
        "padded_bytes": d.padded_bytes,
        "write_amplification": wa,
        "zone_resets": d.zone_resets,
        "zone_finishes": d.zone_finishes,
        "implicit_closes": d.implicit_closes,
        "failed_commands": d.failed_commands,
        "dram_bytes": {
            "zone_map": dram.zone_map_bytes,
            "write_buffer": dram.write_buffer_bytes,
            "total": dram.total_bytes(),
        },
        "die_utilization": utilisation(&c.flash().die_busy(), window),
        "channel_utilization": utilisation(&c.flash().channel_busy(), window),
        "link_utilization": {
            "to_device": round3(to_dev.as_ns() as f64 / window.max(1) as f64),
            "to_host": round3(to_host.as_ns() as f64 / window.max(1) as f64),
        },
        "compression": compression_json(c, window),
    })
}

/// What the device's compressor did: logical and physical bytes, the ratio achieved, and the
/// engine's utilisation (time its pipeline entrance was busy over the run).
pub fn compression_json(c: &Controller, window: u64) -> Value {
    let d = c.counters();
    let e = c.engine_counters();
    let ratio = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            round3(a as f64 / b as f64)
        }
    };
    json!({
        "design": c.design_name(),
        "codec": c.config().compression.codec.name(),
        "engine": c.engine_profile().name,
        "compressed_writes": d.compressed_writes,
        "logical_bytes_written": d.cw_logical_bytes,
        "stored_bytes": d.cw_stored_bytes,
        "zone_bytes_used": d.cw_footprint_bytes,
        "compression_ratio": ratio(d.cw_logical_bytes, d.cw_stored_bytes),
        "compression_ratio_with_padding": ratio(d.cw_logical_bytes, d.cw_footprint_bytes),
        "decompressed_reads": d.decompressed_reads,
        "chunks_read": d.dr_chunks,
        "logical_bytes_read": d.dr_logical_bytes,
        "stored_bytes_read": d.dr_stored_bytes,
        "engine_utilization": {
            "compress": round3(e.compress_busy_ns as f64 / window.max(1) as f64),
            "decompress": round3(e.decompress_busy_ns as f64 / window.max(1) as f64),
        },
        "balloon": c.balloon_counters().map(|b| {
            let logical = b.pages_written * 4096;
            let ssb_bytes = (b.home_ssbs + b.extra_ssbs) * b.ssb_bytes;
            json!({
                "pages_written": b.pages_written,
                "compressed_bytes": b.compressed_bytes,
                "slot_bytes": b.slot_bytes,
                "residue_bytes": b.residue_bytes,
                "truncated_pages": b.truncated_pages,
                "truncated_ratio": ratio(b.truncated_pages, b.pages_written),
                "windows": b.windows,
                "raw_windows": b.raw_windows,
                "pages_read": b.pages_read,
                "two_read_pages": b.two_read_pages,
                "migrations": b.migrations,
                "migrated_bytes": b.migrated_bytes,
                "reclamations": b.reclamations,
                "reclaimed_bytes": b.reclaimed_bytes,
                "home_ssbs": b.home_ssbs,
                "extra_ssbs": b.extra_ssbs,
                "ssbs_total": b.ssbs_total,
                "peak_ssbs": b.peak_ssbs,
                // Storage footprint (Balloon-ZNS Fig. 4): compressed bytes alone, with slot
                // alignment and residues, and with whole sub-superblocks, over the logical bytes.
                "raw_sfp": ratio(b.compressed_bytes, logical),
                "slot_sfp": ratio(b.slot_bytes + b.residue_bytes, logical),
                "ssb_sfp": ratio(ssb_bytes, logical),
            })
        }),
        "tcssd": c.tcssd_counters().map(|t| json!({
            "blocks_written": t.blocks_written,
            "compressed_bytes": t.compressed_bytes,
            "compression_ratio": ratio(t.blocks_written * 4096, t.compressed_bytes),
            "overwritten_blocks": t.overwritten_blocks,
            "deallocated_blocks": t.deallocated_blocks,
            "gc_runs": t.gc_runs,
            "gc_relocated_bytes": t.gc_relocated_bytes,
            // Device write amplification: flash writes over the compressed host writes.
            "gc_write_amplification": ratio(t.compressed_bytes + t.gc_relocated_bytes, t.compressed_bytes),
            "erases": t.erases,
            "valid_bytes": t.valid_bytes,
            "free_superblocks": t.free_superblocks,
            "superblocks": t.superblocks,
            "map_bytes": t.map_bytes,
        })),
    })
}

/// fio's JSON output (`--output-format=json`) with the `znslab` object added.
pub fn json_output(
    result: &RunResult,
    c: &Controller,
    seed: u64,
    wall_s: f64,
    unix_time_s: u64,
) -> Value {
    let jobs: Vec<Value> = reported(result)
        .iter()
        .map(|(j, _)| {
            let mut opts = Map::new();
            opts.insert("bs".into(), j.spec.bs.to_string().into());
            opts.insert("iodepth".into(), j.spec.iodepth.to_string().into());
            json!({
                "jobname": j.spec.name,
                "groupid": j.group,
                "error": if j.error.is_some() { 1 } else { 0 },
                "znslab_error": j.error,
                "eta": 0,
                "elapsed": (j.runtime_ns as f64 / 1e9).ceil() as u64,
                "job options": opts,
                "read": dir_json(&j.read, j.runtime_ns),
                "write": dir_json(&j.write, j.runtime_ns),
                "trim": dir_json(&DirStats::default(), 0),
                "job_runtime": j.runtime_ns / 1_000_000,
                "zone_resets": j.zone_resets,
                "zone_finishes": j.zone_finishes,
            })
        })
        .collect();
    json!({
        "fio version": concat!("znslab-", env!("CARGO_PKG_VERSION")),
        "timestamp": unix_time_s,
        "timestamp_ms": unix_time_s * 1000,
        "time": format!("unix {unix_time_s}"),
        "jobs": jobs,
        "znslab": device_json(c, result, seed, wall_s),
    })
}

/// fio's binary-prefixed rate: "1425MiB/s (1494MB/s)".
fn fmt_bw(bytes_per_s: f64) -> String {
    let (bin, bu) = scale(bytes_per_s, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB"]);
    let (dec, du) = scale(bytes_per_s, 1000.0, &["B", "kB", "MB", "GB", "TB"]);
    format!("{bin}{bu}/s ({dec}{du}/s)")
}

fn fmt_bytes(bytes: f64) -> String {
    let (bin, bu) = scale(bytes, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB"]);
    let (dec, du) = scale(bytes, 1000.0, &["B", "kB", "MB", "GB", "TB"]);
    format!("{bin}{bu} ({dec}{du})")
}

/// Scale to at most four digits before the unit, the way fio prints rates.
fn scale(mut x: f64, base: f64, units: &[&str]) -> (String, String) {
    let mut i = 0;
    while x >= 10_000.0 && i + 1 < units.len() {
        x /= base;
        i += 1;
    }
    let s = if x >= 100.0 || x == x.trunc() {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    };
    (s, units[i].to_string())
}

fn fmt_count(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e5 {
        format!("{:.0}k", x / 1e3)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn latency_block(out: &mut String, h: &LatencyHistogram) {
    let (unit, div) = if h.max() < 10_000 {
        ("nsec", 1.0)
    } else if h.mean() < 10_000_000.0 {
        ("usec", 1e3)
    } else {
        ("msec", 1e6)
    };
    let _ = writeln!(
        out,
        "    clat ({unit}): min={:.0}, max={:.0}, avg={:.2}, stdev={:.2}",
        h.min() as f64 / div,
        h.max() as f64 / div,
        h.mean() / div,
        h.stddev() / div
    );
    let _ = writeln!(out, "    clat percentiles ({unit}):");
    let cells: Vec<String> = FIO_PERCENTILES
        .iter()
        .map(|p| format!("{:>6.2}th=[{:>6.0}]", p, h.percentile(*p) as f64 / div))
        .collect();
    for row in cells.chunks(4) {
        let _ = writeln!(out, "     | {}", row.join(", "));
    }
}

/// fio's normal output, then a block of device figures.
pub fn normal_output(result: &RunResult, c: &Controller, seed: u64, wall_s: f64) -> String {
    let mut out = String::new();
    let entries = reported(result);
    for (j, n) in &entries {
        let err = if j.error.is_some() { 1 } else { 0 };
        let _ = writeln!(
            out,
            "{}: (groupid={}, jobs={}): err={:>2}: pid=0",
            j.spec.name, j.group, n, err
        );
        if let Some(e) = &j.error {
            let _ = writeln!(out, "  error: {e}");
        }
        for (label, d) in [("read", &j.read), ("write", &j.write)] {
            if d.ios == 0 {
                continue;
            }
            let bw = bw_bytes(d, j.runtime_ns);
            let iops = d.ios as f64 * 1e9 / j.runtime_ns.max(1) as f64;
            let (io, io_unit) = scale(
                d.io_bytes as f64,
                1024.0,
                &["B", "KiB", "MiB", "GiB", "TiB"],
            );
            let _ = writeln!(
                out,
                "  {label}: IOPS={}, BW={}({io}{io_unit}/{}msec)",
                fmt_count(iops),
                fmt_bw(bw),
                j.runtime_ns / 1_000_000
            );
            latency_block(&mut out, &d.clat);
        }
        if j.zone_resets + j.zone_finishes > 0 {
            let _ = writeln!(
                out,
                "  zones: resets={}, finishes={}",
                j.zone_resets, j.zone_finishes
            );
        }
        out.push('\n');
    }
    let groups: std::collections::BTreeSet<u32> = result.jobs.iter().map(|j| j.group).collect();
    for g in groups {
        let _ = writeln!(out, "Run status group {g} (all jobs):");
        for label in ["READ", "WRITE"] {
            // (stats, runtime) of each job in the group that moved data this way.
            let active: Vec<(&DirStats, u64)> = result
                .jobs
                .iter()
                .filter(|j| j.group == g)
                .map(|j| {
                    (
                        if label == "READ" { &j.read } else { &j.write },
                        j.runtime_ns,
                    )
                })
                .filter(|(d, _)| d.io_bytes > 0)
                .collect();
            let total: u64 = active.iter().map(|(d, _)| d.io_bytes).sum();
            if total == 0 {
                continue;
            }
            let run_max = active.iter().map(|(_, r)| *r).max().unwrap_or(0);
            let run_min = active.iter().map(|(_, r)| *r).min().unwrap_or(0);
            let bws: Vec<f64> = active.iter().map(|(d, r)| bw_bytes(d, *r)).collect();
            let lo = bws.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = bws.iter().copied().fold(0.0, f64::max);
            let agg = total as f64 * 1e9 / run_max.max(1) as f64;
            let _ = writeln!(
                out,
                "  {label:>5}: bw={}, {}-{}, io={}, run={}-{}msec",
                fmt_bw(agg),
                fmt_bw(lo).split(' ').next().unwrap_or(""),
                fmt_bw(hi).split(' ').next().unwrap_or(""),
                fmt_bytes(total as f64),
                run_min / 1_000_000,
                run_max / 1_000_000
            );
        }
    }
    let d = device_json(c, result, seed, wall_s);
    let dies: Vec<f64> = d["die_utilization"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let mean = if dies.is_empty() {
        0.0
    } else {
        dies.iter().sum::<f64>() / dies.len() as f64
    };
    let max = dies.iter().copied().fold(0.0, f64::max);
    let _ = writeln!(out, "\nDevice stats ({}, seed {seed}):", c.config().name);
    let _ = writeln!(
        out,
        "  flash: programmed={}, read={}, erases={}, padded={}, WA={}",
        fmt_bytes(d["flash_bytes_programmed"].as_f64().unwrap_or(0.0)),
        fmt_bytes(d["flash_bytes_read"].as_f64().unwrap_or(0.0)),
        d["flash_erases"],
        fmt_bytes(d["padded_bytes"].as_f64().unwrap_or(0.0)),
        d["write_amplification"]
    );
    let _ = writeln!(
        out,
        "  die utilization: mean={:.1}%, max={:.1}%",
        mean * 100.0,
        max * 100.0
    );
    let _ = writeln!(
        out,
        "  simulated time={:.6}s, wall time={:.3}s, device commands={} ({} per wall second)",
        result.sim_end_ns as f64 / 1e9,
        wall_s,
        d["device_commands"],
        d["device_commands_per_wall_s"]
    );
    out
}
