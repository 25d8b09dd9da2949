//! znslab's own figures for a run: the device, its flash and its compressor. JSON puts them
//! under the `znslab` key; the normal output prints them after fio's block, under a
//! `znslab device stats` heading, so fio's parsers never meet them.

use std::fmt::Write as _;

use device::Controller;
use report::round3;
use serde_json::{json, Value};

use super::super::runner::RunResult;

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

/// The device figures as text, after fio's normal output.
pub fn device_text(result: &RunResult, c: &Controller, seed: u64, wall_s: f64) -> String {
    let mut out = String::new();
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
    let _ = writeln!(
        out,
        "\nznslab device stats ({}, seed {seed}):",
        c.config().name
    );
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
        "  zones: resets={}, finishes={}, implicit closes={}",
        d["zone_resets"], d["zone_finishes"], d["implicit_closes"]
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
