//! `znslab dbbench`: RocksDB's db_bench command line (gflags forms, every db_bench flag by the
//! table in `workload::dbbench::flags`) and output, on the store on zonefs on a device: a
//! fresh in-memory one, or with `--image FILE` a device image a run leaves its database in and
//! `--use_existing_db` reopens.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use device::Controller;
use workload::dbbench::flags::Flags;
use workload::dbbench::{self, DbBenchConfig, Printed};

/// `znslab dbbench --help`.
const HELP: &str = "\
znslab dbbench: RocksDB's db_bench on the store on zonefs on an emulated device.

Usage: znslab dbbench [--flag=value ...]

Takes db_bench's flags in gflags' forms (--name=value, --name value, -name=value, --name,
--noname; the last of a repeated flag wins). Every db_bench flag is supported, ignored with a
notice, or refused with a reason: docs/compat/db_bench.md. znslab's own: --device=PRESET|FILE,
--json, --cores=N, --dataset=amazon|reddit|random, --finish_threshold=PCT, --enable_gc,
--image=FILE (keep the device, and the database, in this image file; --use_existing_db reopens
it), --force (a fill replaces an existing image), --image_sync (fdatasync the image).

Benchmarks: fillseq fillbatch fillrandom overwrite fillsync fill100K readrandom readmissing
multireadrandom readseq readreverse seekrandom updaterandom deleterandom deleteseq
readrandomwriterandom readwhilewriting mixgraph compact flush waitforcompaction stats levelstats
";

/// RocksDB's name of a codec, as db_bench's header prints it (`CompressionTypeToString`).
fn rocksdb_compression_name(name: &str) -> &str {
    match name {
        "none" => "NoCompression",
        "snappy" => "Snappy",
        "zlib" => "Zlib",
        "lz4" => "LZ4",
        "zstd" => "ZSTD",
        other => other,
    }
}

pub fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    if args
        .iter()
        .any(|a| a == "--help" || a == "-help" || a == "-h")
    {
        print!("{HELP}");
        return Ok(ExitCode::SUCCESS);
    }
    let f = Flags::parse(args).map_err(|e| anyhow!("{e}"))?;
    for n in &f.notices {
        eprintln!("znslab: note: {n}");
    }
    let (cfg, compression_type) = lab::dbbench_run::config(&f)?;
    let image = match f.str("image") {
        "" => None,
        p => Some(PathBuf::from(p)),
    };
    let existing = f.bool("use_existing_db");
    let ctl = match (&image, existing) {
        (Some(img), true) => {
            if !img.exists() {
                bail!(
                    "--image {img}: no such file: --use_existing_db reopens the database a run \
                     left there (fill one with `znslab dbbench --benchmarks=fillrandom --image \
                     {img}`)",
                    img = img.display()
                );
            }
            if f.given("device") {
                eprintln!("znslab: note: --device ignored: the image holds its device");
            }
            Controller::open_image(img).map_err(|e| anyhow!("--image {}: {e}", img.display()))?
        }
        (Some(img), false) => {
            if img.exists() && !f.bool("force") {
                bail!(
                    "--image {}: exists and may hold a database: --use_existing_db runs on it; \
                     pass --force to fill a new one over it",
                    img.display()
                );
            }
            let device = crate::load_device(f.str("device"))?;
            Controller::create_image(img, device)
                .map_err(|e| anyhow!("--image {}: {e}", img.display()))?
        }
        (None, _) => {
            let device = crate::load_device(f.str("device"))?;
            Controller::in_memory(device).map_err(|e| anyhow!("{e}"))?
        }
    };
    let device = ctl.config().clone();
    let json_out = f.bool("json");
    let mut cfg = cfg;
    cfg.progress = if json_out {
        None
    } else {
        crate::progress_bar::terminal()
    };
    if let Some(note) = cfg.sanitize() {
        eprintln!("znslab: note: {note}");
    }
    let wall = std::time::Instant::now();
    let r = run_on(ctl, image.as_deref(), existing, f.bool("image_sync"), &cfg)?;
    let wa = |x: u64| x as f64 / r.user_bytes_written.max(1) as f64;
    if cfg.report_interval_seconds > 0 {
        // db_bench's ReporterAgent rewrites the file for each benchmark: the last one's stays.
        if let Some(b) = r.results.iter().rev().find(|b| b.printed == Printed::Line) {
            let path = f.str("report_file");
            std::fs::write(path, b.intervals.report_csv())
                .with_context(|| format!("--report_file={path}"))?;
        }
    }
    if json_out {
        let v = lab::dbbench_run::report_json(
            &r,
            &device.name,
            &cfg,
            f.bool("statistics"),
            wall.elapsed().as_secs_f64(),
        );
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    // db_bench's header (PrintHeader; no date or CPU lines: the same run prints the same).
    let value_after = (cfg.value_size as f64 * cfg.compression_ratio + 0.5) as i64;
    let raw_mb = (cfg.key_size + cfg.value_size) as f64 * cfg.num as f64 / 1048576.0;
    let file_mb = (cfg.key_size as f64 + cfg.value_size as f64 * cfg.compression_ratio)
        * cfg.num as f64
        / 1048576.0;
    if f.i64("seed") == 0 {
        println!("Set seed to {} because --seed was 0", cfg.seed);
    }
    println!("Initializing RocksDB Options from command-line flags");
    println!("RocksDB:    version 8.11 (znslab's store)");
    println!(
        "Keys:       {} bytes each (+ 0 bytes user-defined timestamp)",
        cfg.key_size
    );
    println!(
        "Values:     {} bytes each ({value_after} bytes after compression)",
        cfg.value_size
    );
    println!("Entries:    {}", cfg.num);
    println!("Prefix:    0 bytes");
    println!("Keys per prefix:    0");
    println!("RawSize:    {raw_mb:.1} MB (estimated)");
    println!("FileSize:   {file_mb:.1} MB (estimated)");
    println!("Write rate: 0 bytes/second");
    println!("Read rate: 0 ops/second");
    println!(
        "Compression: {}",
        rocksdb_compression_name(&compression_type)
    );
    println!("Compression sampling rate: 0");
    println!("Memtablerep: SkipListFactory");
    println!("Perf Level: {}", f.i64("perf_level"));
    println!("Device:     {}", device.name);
    if let Some(p) = &r.izg_probe {
        println!(
            "IZG probe:  {} independent zone groups ({:?} probe, {:?} sweep: {} pairs, {:.3} s, {} MB written, {} MB read; not in the figures below)",
            p.map.groups,
            p.mode,
            p.sweep,
            p.pairs,
            p.elapsed.as_ns() as f64 / 1e9,
            p.bytes_written / 1_000_000,
            p.bytes_read / 1_000_000
        );
    }
    println!("------------------------------------------------");
    let histogram = f.bool("histogram");
    let db_path = match f.str("db") {
        "" => format!("zonefs on {}", device.name),
        p => p.to_string(),
    };
    for b in &r.results {
        match &b.printed {
            Printed::Line => {
                // db_bench prints the store's path before each benchmark with a method.
                println!("DB path: [{db_path}]");
                println!("{}", b.line());
                if histogram {
                    print!("{}", b.histograms());
                }
            }
            Printed::Text(t) => println!("{t}"),
            Printed::Nothing => {}
        }
    }
    if f.bool("statistics") {
        println!(
            "STATISTICS:\n{}",
            workload::dbbench::output::statistics(&r.tickers, &r.histograms)
        );
    }
    // znslab's own summary (after what db_bench prints).
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

/// The zones znslab emulates over a conventional namespace (tcssd) are kept beside an image.
fn zones_file(img: &Path) -> PathBuf {
    let mut p = img.to_path_buf().into_os_string();
    p.push(".zones");
    PathBuf::from(p)
}

/// Run on the device (an image's, when `image` names it): on an existing one the emulated
/// zones come back from the table a clean exit saved beside it (or are found again on the
/// drive, as after a power cut, when a killed run left none), as `znslab ycsb` does; the image
/// is saved and closed after the run.
fn run_on(
    mut ctl: Controller,
    image: Option<&Path>,
    existing: bool,
    image_sync: bool,
    cfg: &DbBenchConfig,
) -> anyhow::Result<dbbench::DbBenchReport> {
    ctl.set_sync(image_sync);
    let mut zones = dbbench::Zones::Fresh;
    if let Some(img) = image {
        let path = zones_file(img);
        if existing {
            zones = match std::fs::read(&path) {
                Ok(text) => dbbench::Zones::Restore(
                    serde_json::from_slice(&text)
                        .with_context(|| format!("{}: not a zone table", path.display()))?,
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => dbbench::Zones::Recover,
                Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
            };
        }
        // Removed once read (and any an older image left before a fill): a process killed
        // before its clean exit leaves none.
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()))
            }
            _ => {}
        }
    }
    let medium = dbbench::Medium {
        ctl,
        existing,
        zones,
        durable: image.is_some(),
    };
    let (report, kept) = dbbench::run_on(medium, cfg).map_err(|e| match (&e, image) {
        (dbbench::DbBenchError::NoDatabase, Some(img)) => anyhow!(
            "--image {img}: no database in it (no zonefs file system was made on it): fill one \
             with `znslab dbbench --benchmarks=fillrandom --image {img} --force`",
            img = img.display()
        ),
        _ => anyhow!("{e}"),
    })?;
    if let Some(img) = image {
        if let Some(table) = kept.io.emulated_zone_table() {
            let path = zones_file(img);
            std::fs::write(&path, serde_json::to_vec(&table)?)
                .with_context(|| format!("saving the emulated zones to {}", path.display()))?;
        }
    }
    let dbbench::Kept { dev, io } = kept;
    drop(io);
    if let Some(mut ctl) = dev.into_controller() {
        if let Some(cause) = ctl.image_error() {
            eprintln!("znslab dbbench: {cause}");
        }
        ctl.close().context("saving the device image")?;
    }
    Ok(report)
}
