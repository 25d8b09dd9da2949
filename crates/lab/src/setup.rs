//! Naming things a run is made of: a device by preset name or TOML file, a store compression
//! scheme by db_bench's or CCZNS's name, and zonefs's figures as JSON, the same for every
//! command that reports them.

use anyhow::anyhow;

/// A device by preset name or TOML file (`--device PRESET` or `--device FILE.toml`).
pub fn load_device(arg: &str) -> anyhow::Result<device::DeviceConfig> {
    let path = std::path::Path::new(arg);
    if arg.ends_with(".toml") || path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| anyhow!("device file {arg}: {e}"))?;
        let cfg = device::DeviceConfig::from_toml(&text)
            .map_err(|e| anyhow!("device file {arg}: {e}"))?;
        cfg.layout()
            .map_err(|e| anyhow!("device file {arg}: {e}"))?;
        return Ok(cfg);
    }
    device::presets::by_name(arg).ok_or_else(|| {
        let names: Vec<&str> = device::presets::all().iter().map(|p| p.name).collect();
        anyhow!(
            "unknown device '{arg}': not a .toml file and not a preset ({})",
            names.join(", ")
        )
    })
}

/// zonefs's space and zone figures as JSON (`zenfs df` and ZenFS's zone metrics).
pub fn zonefs_json(s: &host::zonefs::FsStats) -> serde_json::Value {
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
        // Every GC's copies: ZenFS's passes and ZenFS+'s full GC (ZenFS+ Fig. 13).
        "gc": {
            "passes": z.gc_passes,
            "zones": z.gc_zones,
            "extents": z.gc_extents,
            "bytes_written": z.gc_bytes_written,
        },
        // ZenFS+'s reclaiming (zeros under ZenFS's policy).
        "minor_gc": {"passes": z.minor_gc_passes, "zone_resets": z.minor_gc_resets},
        "full_gc": {"passes": z.full_gc_passes, "zones_emptied": z.full_gc_zones},
    })
}

/// db_bench's compression names (none, snappy, lz4, zstd = level 1, zlib) as codecs, plus
/// CCZNS §V-A's schemes: `zstdpc` (ZSTD level 1 with 6 parallel compression threads), `qat`
/// (Deflate timed as a QAT 8970 card), `cc` (the device compresses: CW/DR on padding zones)
/// and its ablations `cc-single-dr`, `cc-single-cw`; applied to the store's options.
pub fn set_compression(name: &str, opts: &mut host::lsm::db::DbOptions) -> anyhow::Result<()> {
    let codec = match name {
        "none" => codec::Codec::None,
        "snappy" => codec::Codec::Snappy,
        "lz4" => codec::Codec::Lz4,
        "zstd" => codec::Codec::ZSTD1,
        "zlib" => codec::Codec::Deflate(1),
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
    opts.compression = host::lsm::db::Compression::host(codec);
    Ok(())
}
