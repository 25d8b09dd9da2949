//! `znslab dbbench`: RocksDB's db_bench flags and output, on the store on zonefs on a device.

use std::process::ExitCode;

use anyhow::anyhow;
use serde_json::json;
use workload::dbbench::{self, DbBenchConfig};

#[derive(clap::Args)]
pub struct Args {
    /// Comma-separated: fillseq, fillrandom, overwrite, readrandom, updaterandom, readwhilewriting.
    #[arg(long, default_value = "fillrandom,readrandom")]
    benchmarks: String,
    #[arg(long, default_value_t = 1_000_000)]
    num: u64,
    #[arg(long)]
    reads: Option<u64>,
    #[arg(long = "key_size", default_value_t = 16)]
    key_size: usize,
    #[arg(long = "value_size", default_value_t = 100)]
    value_size: usize,
    #[arg(long = "compression_ratio", default_value_t = 0.5)]
    compression_ratio: f64,
    /// none, snappy, lz4, zstd, zlib (db_bench's names; zstd is level 1), zstdpc (zstd with
    /// 6 parallel compression threads, CCZNS's ZSTDPC), qat (Deflate on a QAT 8970), or cc,
    /// cc-single-dr, cc-single-cw (CCZNS: the device compresses; needs a CCZNS device).
    #[arg(long = "compression_type", default_value = "snappy")]
    compression_type: String,
    /// Threads compressing each table's blocks (overrides zstdpc's 6).
    #[arg(long = "compression_parallel_threads")]
    compression_parallel_threads: Option<usize>,
    /// Level targets derived from the last level's size (RocksDB's default since 8.4;
    /// db_bench's flag default is false).
    #[arg(long = "level_compaction_dynamic_level_bytes", default_value_t = false, action = clap::ArgAction::Set)]
    level_compaction_dynamic_level_bytes: bool,
    #[arg(long, default_value_t = 1)]
    threads: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long = "write_buffer_size", default_value_t = 64 << 20)]
    write_buffer_size: usize,
    /// Bloom filter bits per key; -1 = none (db_bench's default).
    #[arg(long = "bloom_bits", default_value_t = -1, allow_hyphen_values = true)]
    bloom_bits: i32,
    #[arg(long, default_value_t = false)]
    sync: bool,
    /// Host cores of the simulated machine.
    #[arg(long, default_value_t = 8)]
    cores: usize,
    /// Device preset or TOML file.
    #[arg(long, default_value = device::presets::DEFAULT)]
    device: String,
    #[command(flatten)]
    mkfs: crate::MkfsArgs,
    /// Print JSON instead of db_bench's text.
    #[arg(long)]
    json: bool,
    /// Values from a dataset instead of db_bench's generator: amazon or reddit (CCZNS Table III
    /// sizes, real text; build the corpus once with `znslab corpus build`), or random.
    #[arg(long)]
    dataset: Option<String>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let device = crate::load_device(&a.device)?;
    let mut opts = host::lsm::db::DbOptions::default();
    crate::set_compression(&a.compression_type, &mut opts)
        .map_err(|e| anyhow!("--compression_type {e}"))?;
    let mut cfg = DbBenchConfig {
        benchmarks: a
            .benchmarks
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
        num: a.num,
        reads: a.reads,
        key_size: a.key_size,
        value_size: a.value_size,
        compression_ratio: a.compression_ratio,
        compression: opts.compression,
        compression_parallel_threads: a.compression_parallel_threads,
        level_compaction_dynamic_level_bytes: a.level_compaction_dynamic_level_bytes,
        threads: a.threads,
        seed: a.seed,
        write_buffer_size: a.write_buffer_size,
        bloom_bits: u32::try_from(a.bloom_bits).ok(),
        sync: a.sync,
        cores: a.cores,
        mkfs: a.mkfs.options(),
        dataset: match &a.dataset {
            Some(d) => {
                workload::dataset::Dataset::parse(d).map_err(|e| anyhow!("--dataset: {e}"))?
            }
            None => workload::dataset::Dataset::Random,
        },
        progress: if a.json {
            None
        } else {
            crate::progress_bar::terminal()
        },
    };
    if let Some(note) = cfg.sanitize() {
        eprintln!("znslab: note: {note}");
    }
    let wall = std::time::Instant::now();
    let r = dbbench::run(device.clone(), &cfg).map_err(|e| anyhow!("{e}"))?;
    let wa = |x: u64| x as f64 / r.user_bytes_written.max(1) as f64;
    if a.json {
        let v = json!({
            "device": device.name,
            "benchmarks": r.results.iter().map(|b| json!({
                "name": b.name,
                "ops": b.ops,
                "found": b.found,
                "seconds": b.seconds,
                "micros_per_op": b.micros_per_op(),
                "ops_per_sec": b.ops_per_sec(),
                "bytes": b.bytes,
                "latency_us": {
                    "mean": b.latency.mean() / 1e3,
                    "p50": b.latency.percentile(50.0) as f64 / 1e3,
                    "p99": b.latency.percentile(99.0) as f64 / 1e3,
                    "p99.9": b.latency.percentile(99.9) as f64 / 1e3,
                    "p99.99": b.latency.percentile(99.99) as f64 / 1e3,
                },
            })).collect::<Vec<_>>(),
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
            "zonefs": crate::zonefs_json(&r.zonefs),
            "simulated_s": r.sim_seconds,
            "wall_s": wall.elapsed().as_secs_f64(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "Keys:       {} bytes each\nValues:     {} bytes each ({} bytes after compression)\nEntries:    {}\nCompression: {}\nDevice:     {}\n------------------------------------------------",
        cfg.key_size,
        cfg.value_size,
        (cfg.value_size as f64 * cfg.compression_ratio) as usize,
        cfg.num,
        a.compression_type,
        device.name
    );
    for b in &r.results {
        println!("{}", b.line());
        println!(
            "  latency us: mean {:.2}  P50 {:.2}  P99 {:.2}  P99.9 {:.2}  P99.99 {:.2}",
            b.latency.mean() / 1e3,
            b.latency.percentile(50.0) as f64 / 1e3,
            b.latency.percentile(99.0) as f64 / 1e3,
            b.latency.percentile(99.9) as f64 / 1e3,
            b.latency.percentile(99.99) as f64 / 1e3
        );
    }
    let mb = |x: u64| x as f64 / 1048576.0;
    println!(
        "\nuser writes {:.1} MB, host writes {:.1} MB (WA {:.2}), flash programmed {:.1} MB (WA {:.2})",
        mb(r.user_bytes_written),
        mb(r.host_bytes_written),
        wa(r.host_bytes_written),
        mb(r.flash_bytes_programmed),
        wa(r.flash_bytes_programmed)
    );
    println!(
        "flushes {}, compactions {}, files per level {:?}, MB per level {:?}",
        r.db.flushes,
        r.db.compactions,
        r.db.level_files,
        r.db.level_bytes
            .iter()
            .map(|&b| (mb(b) * 10.0).round() / 10.0)
            .collect::<Vec<_>>()
    );
    println!(
        "stalls: memtable {:.3} s, L0 stop {:.3} s, slowdown {:.3} s",
        r.db.stall_memtable_ns as f64 / 1e9,
        r.db.stall_l0_ns as f64 / 1e9,
        r.db.slowdown_ns as f64 / 1e9
    );
    println!(
        "block cache: {} hits, {} misses, {:.1} MB held",
        r.db.block_cache_hits,
        r.db.block_cache_misses,
        mb(r.db.block_cache_bytes)
    );
    println!(
        "host memory: memtables {:.1} MB, block cache {:.1} MB, index and filter blocks {:.1} MB",
        mb(r.db.memtable_bytes as u64),
        mb(r.db.block_cache_bytes),
        mb(r.db.index_filter_bytes)
    );
    println!(
        "host CPU busy {:.3} s over {} cores, simulated {:.3} s, wall {:.1} s",
        r.host_cpu_busy_ns as f64 / 1e9,
        cfg.cores,
        r.sim_seconds,
        wall.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
