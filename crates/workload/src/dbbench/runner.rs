//! One db_bench run: the device it starts on (a fresh one, or an image holding a database
//! for `--use_existing_db`), the stack on it (host, zonefs, store), the benchmarks in order, and
//! the report of what they measured (with RocksDB's tickers and histograms).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use device::{Controller, DeviceConfig, DeviceHandle};
use host::lsm::db::{Db, DbOptions, DbStats};
use host::zonefs::ZoneFs;
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::Sim;

use super::output::{self, Histogram, OpType};
use super::{bench, flags, BenchResult, DbBenchConfig, DbBenchError, DbBenchReport, Printed};

/// The benchmarks db_bench runs on a fresh database (`fresh_db` in its `Benchmark::Run`):
/// with `--use_existing_db` it skips them, saying so.
pub const FRESH_DB: &[&str] = &[
    "fillseq",
    "fillbatch",
    "fillrandom",
    "filluniquerandom",
    "fillanddeleteuniquerandom",
    "fillsync",
    "fill100K",
    "fillembeddedentity",
    "fillembeddedblob",
    "randomreplacekeys",
    "timeseries",
];

/// What db_bench prints for a fresh-database benchmark under `--use_existing_db`.
pub fn skipped_line(name: &str) -> String {
    format!("{name:<12} : skipped (--use_existing_db is true)")
}

/// How a conventional namespace's emulated zones start (a compressing block SSD, tcssd);
/// other devices ignore it.
pub enum Zones {
    /// As the fresh device has them (a new file system).
    Fresh,
    /// From the table a clean exit saved.
    Restore(Vec<(u8, u64)>),
    /// Found again on the drive, as after a power cut (no saved table).
    Recover,
}

/// The device a run uses: a fresh one (mkfs), or one that holds a database already
/// (`--use_existing_db` on an image: mount, and open the store in it).
pub struct Medium {
    pub ctl: Controller,
    pub existing: bool,
    pub zones: Zones,
    /// An image that must hold every write when the run ends.
    pub durable: bool,
}

/// What stays of a run's stack for the caller (to save an image).
pub struct Kept {
    pub dev: DeviceHandle,
    pub io: Rc<HostIo>,
}

/// Run the benchmarks on a fresh device, file system and store.
pub fn run(device: DeviceConfig, cfg: &DbBenchConfig) -> Result<DbBenchReport, DbBenchError> {
    let ctl = Controller::in_memory(device).map_err(|e| DbBenchError::Device(e.to_string()))?;
    run_on(
        Medium {
            ctl,
            existing: false,
            zones: Zones::Fresh,
            durable: false,
        },
        cfg,
    )
    .map(|(r, _)| r)
}

/// Run the benchmarks on `medium`. On an existing database the fresh-database benchmarks are
/// skipped (db_bench's `--use_existing_db`); on an image (`durable`) the memtables are
/// flushed after the figures are taken, so that the image holds every write.
pub fn run_on(medium: Medium, cfg: &DbBenchConfig) -> Result<(DbBenchReport, Kept), DbBenchError> {
    let Medium {
        ctl,
        existing,
        zones,
        durable,
    } = medium;
    let device = ctl.config().clone();
    let mut plans = Vec::new();
    for b in &cfg.benchmarks {
        plans.push(bench::plan(b, cfg).ok_or_else(|| {
            match flags::DB_BENCH_BENCHMARKS.contains(&b.as_str()) {
                true => DbBenchError::Refused(
                    b.clone(),
                    flags::benchmark_refusal(b).unwrap_or("not emulated here"),
                ),
                false => DbBenchError::Unknown(b.clone()),
            }
        })?);
    }
    if cfg.num == 0 {
        return Err(DbBenchError::Flag("num", "must be positive".into()));
    }
    for (flag, n) in [
        ("threads", cfg.threads),
        ("cores", cfg.cores),
        (
            "compression_parallel_threads",
            cfg.compression_parallel_threads
                .unwrap_or(cfg.compression.threads()),
        ),
    ] {
        if n == 0 {
            return Err(DbBenchError::Flag(flag, "must be positive".into()));
        }
    }
    if !(0.0..=1.0).contains(&cfg.compression_ratio) {
        return Err(DbBenchError::Flag(
            "compression_ratio",
            "must be between 0 and 1".into(),
        ));
    }
    let capacity = device
        .layout()
        .map(|l| l.namespace_lbas() * l.lba_bytes)
        .map_err(|e| DbBenchError::Device(e.to_string()))?;
    cfg.check(capacity)?;
    let mut cfg = cfg.clone();
    cfg.sanitize();
    let cfg = &cfg;
    let dataset = crate::dataset::Values::open(cfg.dataset)?.map(Rc::new);
    let sim = Sim::new(cfg.seed);
    let dev = DeviceHandle::new(&sim, ctl);
    let cpu = Rc::new(CpuPool::new(&sim, cfg.cores));
    let io = Rc::new(HostIo::new(&dev, cpu.clone(), IoConfig::default()));
    let mut opts = DbOptions {
        write_buffer_size: cfg.write_buffer_size,
        level_compaction_dynamic_level_bytes: cfg.level_compaction_dynamic_level_bytes,
        ..cfg.db_options.clone()
    };
    opts.compression = match cfg.compression_parallel_threads {
        Some(n) => cfg.compression.clone().with_threads(n),
        None => cfg.compression.clone(),
    };
    opts.table.bloom_bits_per_key = cfg.bloom_bits;
    let mut cfg2 = cfg.clone();
    cfg2.mkfs = opts.mkfs_options(cfg.mkfs);
    let sim2 = sim.clone();
    let io2 = io.clone();
    let counters = Rc::new(RefCell::new(bench::Counters::default()));
    let counters2 = counters.clone();
    let dev2 = dev.clone();
    let out = sim.block_on(async move {
        // (Only a device whose zones the host emulates has a table to start from.)
        match zones {
            _ if io2.emulated_zone_table().is_none() => {}
            Zones::Fresh => {}
            Zones::Restore(table) => io2
                .restore_emulated_zones(&table)
                .map_err(|e| DbBenchError::Device(format!("the emulated zones: {e}")))?,
            Zones::Recover => io2
                .recover_emulated_zones()
                .await
                .map_err(|e| DbBenchError::Device(format!("finding the emulated zones: {e}")))?,
        }
        let fs = if existing {
            // The policy it was made for, unless the command line names another.
            let mounted = match cfg2.mkfs.policy {
                host::zonefs::policy::Policy::ZenFs => ZoneFs::mount(io2).await,
                p => ZoneFs::mount_with(io2, p).await,
            };
            let fs = mounted.map_err(|e| match e {
                host::zonefs::FsError::NoFileSystem => DbBenchError::NoDatabase,
                e => DbBenchError::Db(format!("zonefs: {e}")),
            })?;
            fs.limit_active_io_zones(cfg2.mkfs.max_active_io_zones);
            fs
        } else {
            ZoneFs::mkfs_with(io2, cfg2.mkfs)
                .await
                .map_err(|e| DbBenchError::Db(e.to_string()))?
        };
        // The IZG probe's traffic at mkfs is not the benchmark's: what the device did up to
        // here is left out of the run's figures when the probe ran.
        let probe = fs.izg_probe();
        let before = match probe {
            Some(_) => dev2.with(|c| {
                (
                    c.counters().host_bytes_written,
                    c.flash_counters().bytes_programmed,
                )
            }),
            None => (0, 0),
        };
        let fs = Rc::new(fs);
        let db = Rc::new(
            Db::open(fs, opts)
                .await
                .map_err(|e| DbBenchError::Db(e.to_string()))?,
        );
        let mut results = Vec::new();
        let mut user_bytes = 0u64;
        for (name, plan) in cfg2.benchmarks.iter().zip(plans) {
            if existing && FRESH_DB.contains(&name.as_str()) {
                results.push(BenchResult::skipped(name));
                continue;
            }
            let db_err = |e: host::lsm::db::DbError| DbBenchError::Db(e.to_string());
            let printed = match plan.kind {
                bench::Kind::Flush => {
                    db.flush().await.map_err(db_err)?;
                    Printed::Nothing
                }
                bench::Kind::WaitForCompaction => {
                    db.wait_for_background().await.map_err(db_err)?;
                    Printed::Nothing
                }
                bench::Kind::Stats => Printed::Text(output::stats_text(&db.stats())),
                bench::Kind::LevelStats => Printed::Text(output::levelstats(&db.stats())),
                _ => Printed::Line,
            };
            let mut r = bench::run_bench(
                &sim2,
                &db,
                name,
                plan,
                &cfg2,
                dataset.clone(),
                counters2.clone(),
            )
            .await?;
            r.printed = printed;
            user_bytes += r.bytes;
            results.push(r);
        }
        // Background work still running is part of the run's device traffic, not of any
        // benchmark's time.
        db.wait_for_background()
            .await
            .map_err(|e| DbBenchError::Db(e.to_string()))?;
        let taken = (results, db.stats(), user_bytes, db.fs().stats(), probe);
        let device = dev2.with(|c| {
            (
                c.counters().host_bytes_written.saturating_sub(before.0),
                c.flash_counters().bytes_programmed.saturating_sub(before.1),
            )
        });
        let now = sim2.now();
        if durable {
            // The image keeps every write: the memtables go to tables (after the figures).
            db.flush()
                .await
                .map_err(|e| DbBenchError::Db(e.to_string()))?;
        }
        Ok::<_, DbBenchError>((taken, device, now))
    });
    // A device that ran out of its memory budget says so.
    let out = out.map_err(|e| match dev.with(|c| c.image_error()) {
        Some(cause) => DbBenchError::Device(format!("{cause} ({e})")),
        None => e,
    })?;
    let ((results, db, user_bytes_written, zonefs, izg_probe), (host_bytes_written, flash), now) =
        out;
    let c = counters.borrow().clone();
    let (tickers, histograms) = statistics(&c, &db, &results);
    Ok((
        DbBenchReport {
            results,
            db,
            zonefs,
            izg_probe,
            user_bytes_written,
            host_bytes_written,
            flash_bytes_programmed: flash,
            host_cpu_busy_ns: cpu.busy_per_core().iter().map(|d| d.as_ns()).sum(),
            sim_seconds: now.as_ns() as f64 / 1e9,
            tickers,
            histograms,
        },
        Kept { dev, io },
    ))
}

/// RocksDB's tickers and histograms of the run, from the store's counters and the
/// benchmarks' (RocksDB's names; a ticker the store has no counterpart for is absent, so 0).
#[allow(clippy::type_complexity)]
fn statistics(
    c: &bench::Counters,
    db: &DbStats,
    results: &[BenchResult],
) -> (
    BTreeMap<&'static str, u64>,
    BTreeMap<&'static str, Histogram>,
) {
    let stall = (db.stall_memtable_ns + db.stall_l0_ns + db.slowdown_ns) / 1000;
    let wal_writes = if db.wal_bytes > 0 { db.writes } else { 0 };
    let tickers: BTreeMap<&'static str, u64> = [
        ("rocksdb.block.cache.miss", db.block_cache_misses),
        ("rocksdb.block.cache.hit", db.block_cache_hits),
        ("rocksdb.block.cache.data.miss", db.block_cache_misses),
        ("rocksdb.block.cache.data.hit", db.block_cache_hits),
        ("rocksdb.number.keys.written", c.keys_written),
        ("rocksdb.number.keys.read", c.keys_read),
        ("rocksdb.bytes.written", c.bytes_written),
        ("rocksdb.bytes.read", c.bytes_read),
        ("rocksdb.number.db.seek", c.seeks),
        ("rocksdb.number.db.next", c.nexts),
        ("rocksdb.number.db.seek.found", c.seeks_found),
        ("rocksdb.db.iter.bytes.read", c.iter_bytes),
        ("rocksdb.number.multiget.get", c.multiget_calls),
        ("rocksdb.number.multiget.keys.read", c.multiget_keys),
        ("rocksdb.wal.bytes", db.wal_bytes),
        ("rocksdb.wal.synced", c.synced_writes),
        ("rocksdb.write.wal", wal_writes),
        ("rocksdb.write.self", db.writes),
        ("rocksdb.flush.write.bytes", db.flushed_bytes),
        ("rocksdb.compact.read.bytes", db.compaction_read_bytes),
        ("rocksdb.compact.write.bytes", db.compaction_written_bytes),
        ("rocksdb.stall.micros", stall),
    ]
    .into_iter()
    .collect();
    let mut hists: BTreeMap<&'static str, Histogram> = BTreeMap::new();
    for r in results {
        for (op, h) in &r.hist {
            let name = match op {
                OpType::Read if r.name == "multireadrandom" => "rocksdb.db.multiget.micros",
                OpType::Read => "rocksdb.db.get.micros",
                OpType::Write | OpType::Delete => "rocksdb.db.write.micros",
                OpType::Seek => "rocksdb.db.seek.micros",
                OpType::Merge | OpType::Update => continue,
            };
            hists.entry(name).or_default().merge(h);
        }
    }
    (tickers, hists)
}
