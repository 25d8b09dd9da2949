//! `znslab devices`: the presets and their key figures, the device designs, and the
//! compression engine profiles with their parameters and sources.

use std::process::ExitCode;

use serde_json::json;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Print this preset's full configuration as TOML (a starting point for --device FILE.toml).
    #[arg(long, value_name = "NAME")]
    show: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(name) = a.show {
        let cfg = crate::load_device(&name)?;
        print!("{}", cfg.to_toml());
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = Vec::new();
    for p in device::presets::all() {
        let cfg = (p.config)();
        let l = cfg.layout()?;
        let g = &l.geometry;
        // What every die programming back to back can absorb, transfer included.
        let per_program_ns = g.transfer_time(g.unit_bytes).as_ns() + g.program_latency.as_ns();
        let flash_write_bps = g.dies as f64 * g.unit_bytes as f64 * 1e9 / per_program_ns as f64;
        rows.push(json!({
            "name": p.name,
            "summary": p.summary,
            "design": cfg.design.name(),
            "namespace": match device::design::command_set_of(cfg.design) {
                device::CommandSet::Zoned => "zoned",
                device::CommandSet::Nvm => "conventional",
            },
            "codec": cfg.compression.codec.name(),
            "engine": cfg.compression.engine,
            "dies": g.dies,
            "channels": g.channels,
            "capacity_bytes": l.zone_capacity_bytes() * l.zone_count as u64,
            "zones": l.zone_count,
            "zone_size_bytes": l.zone_size_lbas * l.lba_bytes,
            "zone_capacity_bytes": l.zone_capacity_bytes(),
            "dies_per_zone": l.dies_per_zone,
            "max_open": l.max_open,
            "max_active": l.max_active,
            "lba_bytes": l.lba_bytes,
            "metadata_bytes": l.metadata_bytes,
            "read_latency_ns": g.read_latency.as_ns(),
            "program_latency_ns": g.program_latency.as_ns(),
            "erase_latency_ns": g.erase_latency.as_ns(),
            "flash_write_bytes_per_s": flash_write_bps.round(),
            "link_bytes_per_s": l.link_bytes_per_s,
        }));
    }
    let designs = device::design::catalog();
    let engines = codec::profile::all();
    if a.json {
        let out = json!({
            "presets": rows,
            "designs": designs.iter().map(|(d, what)| json!({"name": d.name(), "what": what})).collect::<Vec<_>>(),
            "engines": engines,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<18} {:<7} {:>5} {:>9} {:>6} {:>11} {:>11} {:>9} {:>9} {:>11}  WHAT",
        "NAME",
        "DESIGN",
        "DIES",
        "CAPACITY",
        "ZONES",
        "ZONE SIZE",
        "ZONE CAP",
        "DIES/ZONE",
        "OPEN/ACT",
        "FLASH WRITE"
    );
    let gib = |b: u64| format!("{:.1}GiB", b as f64 / (1u64 << 30) as f64);
    let mib = |b: u64| format!("{}MiB", b >> 20);
    let lim = |n: u64| {
        if n == 0 {
            "-".to_string()
        } else {
            n.to_string()
        }
    };
    for r in rows {
        let u = |k: &str| r[k].as_u64().unwrap_or(0);
        // A tcssd namespace is conventional: its "zones" are only how its size is counted.
        let zoned = r["namespace"] == "zoned";
        let z = |text: String| if zoned { text } else { "-".into() };
        println!(
            "{:<18} {:<7} {:>5} {:>9} {:>6} {:>11} {:>11} {:>9} {:>9} {:>9.0}MB/s  {}",
            r["name"].as_str().unwrap_or(""),
            r["design"].as_str().unwrap_or(""),
            u("dies"),
            gib(u("capacity_bytes")),
            z(u("zones").to_string()),
            z(mib(u("zone_size_bytes"))),
            z(mib(u("zone_capacity_bytes"))),
            z(u("dies_per_zone").to_string()),
            format!("{}/{}", lim(u("max_open")), lim(u("max_active"))),
            r["flash_write_bytes_per_s"].as_f64().unwrap_or(0.0) / 1e6,
            r["summary"].as_str().unwrap_or("")
        );
    }
    println!("\nDESIGNS (device.design)");
    for (d, what) in designs {
        println!("  {:<8} {what}", d.name());
    }
    println!(
        "\nENGINE PROFILES (compression.engine; latency at 4/64 KiB, throughput at 4/64 KiB, \
         compress | decompress)"
    );
    for e in &engines {
        let c = &e.compress;
        let d = &e.decompress;
        println!(
            "  {:<14} {:<11} {:<10} {:>6.2}/{:>6.2} us {:>5.2}/{:>5.2} GB/s | {:>6.2}/{:>6.2} us {:>5.2}/{:>5.2} GB/s  qd {}",
            e.name,
            format!("{:?}", e.placement),
            e.codec,
            c.latency_4k_ns as f64 / 1e3,
            c.latency_64k_ns as f64 / 1e3,
            c.bytes_per_s_4k / 1e9,
            c.bytes_per_s_64k / 1e9,
            d.latency_4k_ns as f64 / 1e3,
            d.latency_64k_ns as f64 / 1e3,
            d.bytes_per_s_4k / 1e9,
            d.bytes_per_s_64k / 1e9,
            if e.queue_depth == 0 { "-".to_string() } else { e.queue_depth.to_string() },
        );
        println!("      source: {}", e.source);
    }
    Ok(ExitCode::SUCCESS)
}
