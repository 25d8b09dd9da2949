//! db_bench as a library: a command line's flags to a run's configuration (`config`), a run
//! on a fresh in-memory device (`run`), and a run's figures as JSON (`report_json`): what
//! `znslab dbbench --json` prints, and what a reproduction keeps of each db_bench run.

use anyhow::{anyhow, bail};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use workload::dbbench::flags::Flags;
use workload::dbbench::{self, DbBenchConfig, Printed};

use crate::zonefs_spec::ZonefsSpec;

/// A db_bench command line (its flags, as `znslab dbbench` takes them) on a fresh in-memory
/// device; the result is `report_json`'s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DbBenchRun {
    pub args: Vec<String>,
}

/// Run `args` on a fresh in-memory `device`.
pub fn run(args: &[String], device: device::DeviceConfig) -> anyhow::Result<Value> {
    let f = Flags::parse(args).map_err(|e| anyhow!("{e}"))?;
    if !f.str("image").is_empty() || f.bool("use_existing_db") {
        bail!("--image, --use_existing_db: a run here starts on a fresh in-memory device");
    }
    let (cfg, _) = config(&f)?;
    let name = device.name.clone();
    let wall = std::time::Instant::now();
    let r = dbbench::run(device, &cfg).map_err(|e| anyhow!("{e}"))?;
    Ok(report_json(
        &r,
        &name,
        &cfg,
        f.bool("statistics"),
        wall.elapsed().as_secs_f64(),
    ))
}

/// A run's figures: each benchmark's, the store's, zonefs's and the device's.
pub fn report_json(
    r: &dbbench::DbBenchReport,
    device_name: &str,
    cfg: &DbBenchConfig,
    statistics: bool,
    wall_s: f64,
) -> Value {
    let wa = |x: u64| x as f64 / r.user_bytes_written.max(1) as f64;
    let v = json!({
        "device": device_name,
        "benchmarks": r.results.iter().filter(|b| b.printed == Printed::Line).map(|b| with_intervals(json!({
            "name": b.name,
            "ops": b.ops,
            "found": b.found,
            "seconds": b.seconds,
            "micros_per_op": b.micros_per_op(),
            "ops_per_sec": b.ops_per_sec(),
            "bytes": b.bytes,
            "read_bytes": b.read_bytes,
            "latency_us": {
                "mean": b.latency.mean() / 1e3,
                "p50": b.latency.percentile(50.0) as f64 / 1e3,
                "p99": b.latency.percentile(99.0) as f64 / 1e3,
                "p99.9": b.latency.percentile(99.9) as f64 / 1e3,
                "p99.99": b.latency.percentile(99.99) as f64 / 1e3,
            },
        }), &b.intervals)).collect::<Vec<_>>(),
        "user_bytes_written": r.user_bytes_written,
        "host_bytes_written": r.host_bytes_written,
        "flash_bytes_programmed": r.flash_bytes_programmed,
        "write_amplification": wa(r.host_bytes_written),
        "flash_write_amplification": wa(r.flash_bytes_programmed),
        "flushes": r.db.flushes,
        "block_cache_hits": r.db.block_cache_hits,
        "block_cache_misses": r.db.block_cache_misses,
        "block_cache_bytes": r.db.block_cache_bytes,
        "host_memory_bytes": {
            "memtables": r.db.memtable_bytes,
            "block_cache": r.db.block_cache_bytes,
            "index_and_filter": r.db.index_filter_bytes,
            "total": r.db.memtable_bytes as u64 + r.db.block_cache_bytes + r.db.index_filter_bytes,
        },
        "compactions": r.db.compactions,
        "stall_memtable_s": r.db.stall_memtable_ns as f64 / 1e9,
        "stall_l0_s": r.db.stall_l0_ns as f64 / 1e9,
        "slowdown_s": r.db.slowdown_ns as f64 / 1e9,
        "level_files": r.db.level_files,
        "level_bytes": r.db.level_bytes,
        "host_cpu_busy_s": r.host_cpu_busy_ns as f64 / 1e9,
        "zonefs": crate::setup::zonefs_json(&r.zonefs),
        "simulated_s": r.sim_seconds,
        "wall_s": wall_s,
    });
    let mut v = v;
    if cfg.report_interval_seconds > 0 {
        // Background jobs' bytes per second (ZenFS+ Fig. 2 and 9).
        let j = &r.db.series;
        v["job_series"] = json!({
            "bucket_s": series_bucket_s(),
            "flush_written_bytes": j.flush_written,
            "compaction_read_bytes": j.compaction_read,
            "compaction_written_bytes": j.compaction_written,
        });
    }
    if let Some(p) = &r.izg_probe {
        v["izg_probe"] = izg_probe_json(p);
    }
    if statistics {
        // RocksDB's tickers the run counted, and its histograms (microseconds).
        v["statistics"] = json!({
            "tickers": r.tickers,
            "histograms": r.histograms.iter().map(|(name, h)| (name.to_string(), json!({
                "p50": h.percentile(50.0),
                "p95": h.percentile(95.0),
                "p99": h.percentile(99.0),
                "p100": h.max(),
                "count": h.count(),
                "sum": h.sum(),
            }))).collect::<serde_json::Map<_, _>>(),
        });
    }
    v
}

/// A count flag where db_bench's -1 (or any negative) means "num".
fn count(f: &Flags, name: &'static str) -> anyhow::Result<Option<u64>> {
    let v = f.i64(name);
    Ok(if v < 0 { None } else { Some(v as u64) })
}

/// A flag that must be a non-negative integer fitting `usize`.
fn size(f: &Flags, name: &'static str) -> anyhow::Result<usize> {
    let v = f.u64(name).map_err(|e| anyhow!("{e}"))?;
    usize::try_from(v).map_err(|_| anyhow!("--{name}={v}: too large"))
}

/// The run's configuration from the flags, and the compression type's name.
pub fn config(f: &Flags) -> anyhow::Result<(DbBenchConfig, String)> {
    // The flags whose only accepted values are the store's.
    let only = |name: &'static str, ok: &[i64], why: &str| -> anyhow::Result<()> {
        let v = f.i64(name);
        if f.given(name) && !ok.contains(&v) {
            bail!("--{name}={v}: refused: {why}");
        }
        Ok(())
    };
    only(
        "target_file_size_multiplier",
        &[1],
        "every level's files are cut at target_file_size_base",
    )?;
    if f.bool("use_existing_db") && f.str("image").is_empty() {
        bail!(
            "--use_existing_db=true: refused: without --image every run starts on a fresh \
             device; pass --image FILE naming the image a fill run left its database in"
        );
    }
    let uri = f.str("fs_uri");
    if !uri.is_empty() && !uri.starts_with("zenfs://") {
        bail!("--fs_uri={uri}: refused: only zenfs:// (the store runs on zonefs on --device)");
    }
    let compression_type = f.str("compression_type").to_string();
    let mut opts = host::lsm::db::DbOptions::default();
    crate::setup::set_compression(&compression_type, &mut opts)
        .map_err(|e| anyhow!("--compression_type {e}"))?;
    if f.given("compression_level") && f.i64("compression_level") != 32767 {
        let level = f.i64("compression_level");
        let mut note = None;
        if let host::lsm::db::Compression::Host { codec, .. }
        | host::lsm::db::Compression::Peripheral { codec, .. } = &mut opts.compression
        {
            match codec {
                codec::Codec::Zstd(l) => {
                    *l = i32::try_from(level)
                        .ok()
                        .filter(|l| (-131072..=22).contains(l))
                        .ok_or_else(|| {
                            anyhow!("--compression_level={level}: zstd's levels are -131072..=22")
                        })?
                }
                codec::Codec::Deflate(l) => {
                    *l = i32::try_from(level)
                        .ok()
                        .filter(|l| (0..=9).contains(l))
                        .ok_or_else(|| {
                            anyhow!("--compression_level={level}: zlib's levels are 0..=9")
                        })?
                }
                _ => note = Some(format!("{compression_type} has no levels")),
            }
        } else {
            note = Some(format!("{compression_type} has no levels here"));
        }
        if let Some(n) = note {
            eprintln!("znslab: note: --compression_level={level} ignored: {n}");
        }
    }
    let mut db = opts.clone();
    let given = |n: &str| f.given(n);
    if given("cache_size") {
        db.block_cache_bytes = f.u64("cache_size").map_err(|e| anyhow!("{e}"))?;
    }
    if given("block_size") {
        db.table.block_size = size(f, "block_size")?.max(1);
    }
    if given("block_restart_interval") {
        db.table.restart_interval = size(f, "block_restart_interval")?.max(1);
    }
    if given("num_levels") {
        let n = size(f, "num_levels")?;
        if !(2..=64).contains(&n) {
            bail!("--num_levels={n}: must be 2..=64");
        }
        db.num_levels = n;
    }
    if given("target_file_size_base") {
        db.target_file_size = f
            .u64("target_file_size_base")
            .map_err(|e| anyhow!("{e}"))?
            .max(1);
    }
    if given("max_bytes_for_level_base") {
        db.max_bytes_for_level_base = f
            .u64("max_bytes_for_level_base")
            .map_err(|e| anyhow!("{e}"))?
            .max(1);
    }
    if given("max_bytes_for_level_multiplier") {
        let m = f.f64("max_bytes_for_level_multiplier");
        if m.fract() != 0.0 || !(1.0..=1e6).contains(&m) {
            bail!("--max_bytes_for_level_multiplier={m}: refused: whole numbers 1..=1000000 only");
        }
        db.level_multiplier = m as u64;
    }
    if given("level0_file_num_compaction_trigger") {
        db.level0_trigger = size(f, "level0_file_num_compaction_trigger")?.max(1);
    }
    if given("level0_slowdown_writes_trigger") {
        db.level0_slowdown = size(f, "level0_slowdown_writes_trigger")?;
    }
    if given("level0_stop_writes_trigger") {
        db.level0_stop = size(f, "level0_stop_writes_trigger")?.max(1);
    }
    if given("delayed_write_rate") {
        db.delayed_write_rate = f
            .u64("delayed_write_rate")
            .map_err(|e| anyhow!("{e}"))?
            .max(1);
    }
    for (flag, slot) in [
        (
            "compaction_readahead_size",
            &mut db.compaction_readahead_size,
        ),
        (
            "initial_auto_readahead_size",
            &mut db.initial_auto_readahead_size,
        ),
        ("max_auto_readahead_size", &mut db.max_auto_readahead_size),
    ] {
        if given(flag) {
            *slot = f.u64(flag).map_err(|e| anyhow!("{e}"))?;
        }
    }
    if given("num_file_reads_for_auto_readahead") {
        db.auto_readahead_after = u32::try_from(f.i64("num_file_reads_for_auto_readahead"))
            .map_err(|_| anyhow!("--num_file_reads_for_auto_readahead: not a count"))?;
    }
    db.disable_wal = f.bool("disable_wal");
    db.set_background_jobs(
        f.i64("max_background_jobs"),
        f.i64("max_background_compactions"),
        f.i64("max_background_flushes"),
    )
    .map_err(|e| anyhow!("{e}"))?;
    // RocksDB takes any number and makes less than 2 into 2.
    let buffers = f.i64("max_write_buffer_number");
    if buffers > 1 << 16 {
        bail!("--max_write_buffer_number={buffers}: at most 65536");
    }
    db.max_write_buffer_number = buffers.max(2) as usize;
    let benchmarks = if f.given("benchmarks") {
        f.str("benchmarks")
    } else {
        "fillrandom,readrandom"
    };
    let seed = match f.i64("seed") {
        0 => 1,
        s => s as u64,
    };
    let threads = f.i64("threads");
    let cores = f.i64("cores");
    let compression_parallel_threads = if f.given("compression_parallel_threads") {
        Some(size(f, "compression_parallel_threads")?)
    } else {
        None
    };
    let bloom = f.i64("bloom_bits");
    let duration = f.i64("duration");
    let mix = dbbench::MixOptions {
        get_ratio: f.f64("mix_get_ratio"),
        put_ratio: f.f64("mix_put_ratio"),
        seek_ratio: f.f64("mix_seek_ratio"),
        max_scan_len: f.i64("mix_max_scan_len"),
        max_value_size: f.i64("mix_max_value_size"),
        key_dist_a: f.f64("key_dist_a"),
        key_dist_b: f.f64("key_dist_b"),
        keyrange_dist: [
            f.f64("keyrange_dist_a"),
            f.f64("keyrange_dist_b"),
            f.f64("keyrange_dist_c"),
            f.f64("keyrange_dist_d"),
        ],
        keyrange_num: f.i64("keyrange_num"),
        value_theta: f.f64("value_theta"),
        value_k: f.f64("value_k"),
        value_sigma: f.f64("value_sigma"),
        iter_theta: f.f64("iter_theta"),
        iter_k: f.f64("iter_k"),
        iter_sigma: f.f64("iter_sigma"),
    };
    let num = f.i64("num");
    if num < 0 {
        bail!("--num={num}: must not be negative");
    }
    let cfg = DbBenchConfig {
        benchmarks: benchmarks
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        num: num as u64,
        reads: count(f, "reads")?,
        writes: count(f, "writes")?,
        deletes: count(f, "deletes")?,
        duration: u64::try_from(duration).unwrap_or(0),
        ops_between_duration_checks: f.i64("ops_between_duration_checks").max(1) as u64,
        report_interval_seconds: u64::try_from(f.i64("report_interval_seconds")).map_err(|_| {
            anyhow!(
                "--report_interval_seconds={}: must not be negative",
                f.i64("report_interval_seconds")
            )
        })?,
        latency_interval_ms: f.u64("latency_interval_ms").map_err(|e| anyhow!("{e}"))?,
        batch_size: f.i64("batch_size").max(1) as u64,
        benchmark_write_rate_limit: f
            .u64("benchmark_write_rate_limit")
            .map_err(|e| anyhow!("{e}"))?,
        readwritepercent: f.i64("readwritepercent").clamp(0, i64::from(u32::MAX)) as u32,
        seek_nexts: f.i64("seek_nexts").max(0) as u64,
        mix,
        db_options: db,
        key_size: size(f, "key_size")?,
        value_size: size(f, "value_size")?,
        compression_ratio: f.f64("compression_ratio"),
        compression: opts.compression,
        compression_parallel_threads,
        level_compaction_dynamic_level_bytes: f.bool("level_compaction_dynamic_level_bytes"),
        threads: usize::try_from(threads)
            .map_err(|_| anyhow!("--threads={threads}: must be positive"))?,
        seed,
        write_buffer_size: size(f, "write_buffer_size")?,
        bloom_bits: u32::try_from(bloom).ok().filter(|&b| b > 0),
        sync: f.bool("sync"),
        cores: usize::try_from(cores).map_err(|_| anyhow!("--cores={cores}: must be positive"))?,
        mkfs: zonefs_options(f)?,
        dataset: workload::dataset::Dataset::parse(f.str("dataset"))
            .map_err(|e| anyhow!("--dataset: {e}"))?,
        progress: None,
    };
    Ok((cfg, compression_type))
}

fn series_bucket_s() -> u64 {
    host::lsm::db::SERIES_BUCKET_NS / 1_000_000_000
}

/// A benchmark's JSON with its interval series, when one was asked for.
fn with_intervals(
    mut v: serde_json::Value,
    iv: &workload::dbbench::intervals::Intervals,
) -> serde_json::Value {
    if iv.report_interval_s == 0 && iv.latency_interval_ms == 0 {
        return v;
    }
    v["intervals"] = json!({
        "report_interval_s": iv.report_interval_s,
        "finished_ops": iv.finished,
        "latency_interval_ms": iv.latency_interval_ms,
        "latency_us": iv.latency.iter().map(|l| json!({
            "ops": l.ops, "p50": l.p50_us, "p99": l.p99_us, "p99.9": l.p999_us, "max": l.max_us,
        })).collect::<Vec<_>>(),
        "latency_left_out_ops": iv.latency_left_out,
    });
    v
}

/// What the IZG probe at mkfs found and what it cost (ZenFS+ §IV-A).
fn izg_probe_json(p: &host::zonefs::izg::ProbeReport) -> serde_json::Value {
    json!({
        "groups": p.map.groups,
        "mode": format!("{:?}", p.mode).to_lowercase(),
        "sweep": format!("{:?}", p.sweep).to_lowercase(),
        "pairs": p.pairs,
        "seconds": p.elapsed.as_ns() as f64 / 1e9,
        "bytes_written": p.bytes_written,
        "bytes_read": p.bytes_read,
        "alone_us": p.alone.as_ns() as f64 / 1e3,
    })
}

/// zonefs's mkfs options from db_bench's zonefs flags (through [`ZonefsSpec`], as YCSB runs).
fn zonefs_options(f: &Flags) -> anyhow::Result<host::zonefs::MkfsOptions> {
    let u32_flag = |name: &str| {
        u32::try_from(f.i64(name)).map_err(|_| anyhow!("--{name}={}: not a count", f.i64(name)))
    };
    ZonefsSpec {
        fs_policy: f.str("fs_policy").to_string(),
        izg_probe: f.str("izg_probe").to_string(),
        zenfsplus_izgs: u32_flag("zenfsplus_izgs")?,
        max_stripe_width: u32_flag("max_stripe_width")?,
        zenfsplus_isolation: f.bool("zenfsplus_isolation"),
        zenfsplus_reclaim: f.bool("zenfsplus_reclaim"),
        max_active_io_zones: u32::try_from(
            f.u64("max_active_io_zones").map_err(|e| anyhow!("{e}"))?,
        )
        .map_err(|_| anyhow!("--max_active_io_zones: at most {}", u32::MAX))?,
        finish_threshold: u32_flag("finish_threshold")?,
        enable_gc: f.bool("enable_gc"),
    }
    .mkfs_options()
}
