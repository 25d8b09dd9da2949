//! db_bench (RocksDB's `tools/db_bench_tool.cc`, research/zenfs-rocksdb.md §3.1) on the
//! store, on zonefs, on the emulated device: the run's configuration, its bounds, the fresh
//! device, file system and store it runs on, and db_bench's way of making keys (the key number
//! big-endian, padded to `key_size`) and values (slices of a buffer of 100-byte pieces, each a
//! random printable run of `value × compression_ratio` bytes repeated). The benchmarks' loops
//! are in `bench` and `mixgraph`, the command line in `flags` (its table in `flag_table`,
//! RocksDB's names in `rocksdb_names`, both generated), and db_bench's output formats in
//! `output`.

pub mod bench;
mod flag_table;
pub mod flags;
mod mixgraph;
pub mod output;
mod rocksdb_names;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use codec::Codec;
use device::{Controller, DeviceConfig, DeviceHandle};
use host::lsm::db::{Compression, Db, DbOptions, DbStats};
use host::zonefs::ZoneFs;
use host::{HostIo, IoConfig};
use report::LatencyHistogram;
use sim::cpu::CpuPool;
use sim::{Rng, Sim};

use output::{Histogram, OpType};

/// db_bench's flags (defaults are db_bench's where it has them).
#[derive(Clone, Debug)]
pub struct DbBenchConfig {
    pub benchmarks: Vec<String>,
    pub num: u64,
    /// Reads for read benchmarks; default `num`.
    pub reads: Option<u64>,
    /// Writes of the fill benchmarks (db_bench's `writes`); default `num`.
    pub writes: Option<u64>,
    /// Deletes of deleterandom and deleteseq; default `num`.
    pub deletes: Option<u64>,
    /// Simulated seconds each benchmark runs for (0: num/reads bound it).
    pub duration: u64,
    /// Operations between looks at the clock under `duration`.
    pub ops_between_duration_checks: u64,
    /// Entries per write batch (and keys per multireadrandom call).
    pub batch_size: u64,
    /// Bytes per second the fill benchmarks' and readwhilewriting's writer write at most
    /// (0: no limit).
    pub benchmark_write_rate_limit: u64,
    /// readrandomwriterandom's reads per 100 operations.
    pub readwritepercent: u32,
    /// seekrandom's entries read after each seek.
    pub seek_nexts: u64,
    /// mixgraph's parameters.
    pub mix: MixOptions,
    /// The store's options before the flags above are applied (RocksDB 8.11's defaults).
    pub db_options: DbOptions,
    pub key_size: usize,
    pub value_size: usize,
    pub compression_ratio: f64,
    /// The store's compression scheme (db_bench's `compression_type`, or one of CCZNS's:
    /// a peripheral engine, CCZNS's CW/DR — zonefs then gets padding zones; needs a CCZNS
    /// device).
    pub compression: Compression,
    /// Threads compressing each table's blocks (db_bench's `compression_parallel_threads`),
    /// overriding the scheme's where the host compresses; None = the scheme's.
    pub compression_parallel_threads: Option<usize>,
    /// Level targets from the last level's size (db_bench's flag; default false there).
    pub level_compaction_dynamic_level_bytes: bool,
    pub threads: usize,
    pub seed: u64,
    pub write_buffer_size: usize,
    /// Bloom filter bits per key; None = no filter (db_bench's `bloom_bits=-1`).
    pub bloom_bits: Option<u32>,
    /// Sync the WAL on every write.
    pub sync: bool,
    /// Host cores the simulation gives the store and the I/O layer.
    pub cores: usize,
    /// zonefs's mkfs options (finish threshold, GC).
    pub mkfs: host::zonefs::MkfsOptions,
    /// Values from a dataset (amazon, reddit: Table III sizes, corpus text) instead of
    /// db_bench's generator.
    pub dataset: crate::dataset::Dataset,
    /// Called as operations complete (the CLI draws a bar with it).
    pub progress: Option<crate::progress::Progress>,
}

impl Default for DbBenchConfig {
    fn default() -> Self {
        DbBenchConfig {
            benchmarks: vec!["fillrandom".into(), "readrandom".into()],
            num: 1_000_000,
            reads: None,
            writes: None,
            deletes: None,
            duration: 0,
            ops_between_duration_checks: 1000,
            batch_size: 1,
            benchmark_write_rate_limit: 0,
            readwritepercent: 90,
            seek_nexts: 0,
            mix: MixOptions::default(),
            db_options: DbOptions::default(),
            key_size: 16,
            value_size: 100,
            compression_ratio: 0.5,
            compression: Compression::host(Codec::Snappy),
            compression_parallel_threads: None,
            level_compaction_dynamic_level_bytes: false,
            threads: 1,
            seed: 1,
            write_buffer_size: 64 << 20,
            bloom_bits: None,
            sync: false,
            cores: 8,
            mkfs: host::zonefs::MkfsOptions::default(),
            dataset: crate::dataset::Dataset::Random,
            progress: None,
        }
    }
}

/// db_bench's mixgraph flags.
#[derive(Clone, Debug, PartialEq)]
pub struct MixOptions {
    pub get_ratio: f64,
    pub put_ratio: f64,
    pub seek_ratio: f64,
    pub max_scan_len: i64,
    pub max_value_size: i64,
    pub key_dist_a: f64,
    pub key_dist_b: f64,
    /// keyrange_dist_a..d; all 0: no key ranges.
    pub keyrange_dist: [f64; 4],
    pub keyrange_num: i64,
    pub value_theta: f64,
    pub value_k: f64,
    pub value_sigma: f64,
    pub iter_theta: f64,
    pub iter_k: f64,
    pub iter_sigma: f64,
}

impl Default for MixOptions {
    /// db_bench's defaults.
    fn default() -> Self {
        MixOptions {
            get_ratio: 1.0,
            put_ratio: 0.0,
            seek_ratio: 0.0,
            max_scan_len: 10000,
            max_value_size: 1024,
            key_dist_a: 0.0,
            key_dist_b: 0.0,
            keyrange_dist: [0.0; 4],
            keyrange_num: 1,
            value_theta: 0.0,
            value_k: 0.2615,
            value_sigma: 25.45,
            iter_theta: 0.0,
            iter_k: 2.517,
            iter_sigma: 14.236,
        }
    }
}

/// One benchmark's figures.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub name: String,
    /// Operations of all threads together.
    pub ops: u64,
    pub found: u64,
    /// The benchmark's elapsed time.
    pub seconds: f64,
    /// The threads' times added up (db_bench's micros/op divides this by the operations).
    pub thread_seconds: f64,
    /// Bytes written (keys and values).
    pub bytes: u64,
    /// Bytes read (keys and values found), which db_bench adds to the MB/s of read lines.
    pub read_bytes: u64,
    pub latency: LatencyHistogram,
    /// Microseconds per operation by db_bench's operation type (`--histogram`).
    pub hist: BTreeMap<OpType, Histogram>,
    /// db_bench's message after the figures (one thread's, as db_bench keeps).
    pub message: String,
    /// What db_bench prints for it: a report line, or a text (stats, levelstats), or nothing
    /// (flush, waitforcompaction).
    pub printed: Printed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Printed {
    Line,
    Text(String),
    Nothing,
}

impl BenchResult {
    /// A fresh-database benchmark `--use_existing_db` skipped: db_bench's line, no figures.
    pub fn skipped(name: &str) -> BenchResult {
        BenchResult {
            name: name.to_string(),
            ops: 0,
            found: 0,
            seconds: 0.0,
            thread_seconds: 0.0,
            bytes: 0,
            read_bytes: 0,
            latency: LatencyHistogram::new(),
            hist: BTreeMap::new(),
            message: String::new(),
            printed: Printed::Text(skipped_line(name)),
        }
    }

    pub fn micros_per_op(&self) -> f64 {
        self.thread_seconds * 1e6 / self.ops.max(1) as f64
    }
    pub fn ops_per_sec(&self) -> f64 {
        self.ops.max(1) as f64 / self.seconds.max(1e-12)
    }
    /// db_bench's report line (a message ending in a newline leaves an empty line after it,
    /// as db_bench's does).
    pub fn line(&self) -> String {
        output::report_line(
            &self.name,
            self.ops,
            self.thread_seconds,
            self.seconds,
            self.bytes + self.read_bytes,
            &self.message,
        )
    }
    /// `--histogram`'s blocks: "Microseconds per <op>:" and RocksDB's histogram.
    pub fn histograms(&self) -> String {
        let mut s = String::new();
        for (op, h) in &self.hist {
            s += &format!(
                "Microseconds per {}:\n{}\n",
                op.name(),
                h.to_rocksdb_string()
            );
        }
        s
    }
}

/// Everything a run measured.
#[derive(Debug)]
pub struct DbBenchReport {
    pub results: Vec<BenchResult>,
    pub db: DbStats,
    pub zonefs: host::zonefs::FsStats,
    pub user_bytes_written: u64,
    pub host_bytes_written: u64,
    pub flash_bytes_programmed: u64,
    pub host_cpu_busy_ns: u64,
    pub sim_seconds: f64,
    /// `--statistics`: RocksDB's tickers and histograms of the whole run.
    pub tickers: BTreeMap<&'static str, u64>,
    pub histograms: BTreeMap<&'static str, Histogram>,
}

#[derive(Debug, thiserror::Error)]
pub enum DbBenchError {
    #[error("unknown benchmark {0:?} (known: {known})", known = bench::KNOWN.join(", "))]
    Unknown(String),
    #[error("benchmark {0:?}: refused: {1} (the benchmarks that run: {known})", known = bench::KNOWN.join(", "))]
    Refused(String, &'static str),
    #[error("--{0}: {1}")]
    Flag(&'static str, String),
    #[error("device: {0}")]
    Device(String),
    /// `--use_existing_db` on a device with no file system (so no database).
    #[error("no database: the image holds no zonefs file system")]
    NoDatabase,
    #[error("{0}")]
    Db(String),
    #[error(transparent)]
    Dataset(#[from] crate::dataset::DatasetError),
}

/// db_bench's value source.
struct Values {
    data: Vec<u8>,
    pos: usize,
}

impl Values {
    fn new(rng: &mut Rng, ratio: f64, value_size: usize) -> Values {
        let mut data = Vec::with_capacity((1 << 20).max(value_size * 2));
        while data.len() < (1 << 20).max(value_size) {
            // CompressibleString(rnd, ratio, 100): random printable bytes, repeated.
            let raw = ((100.0 * ratio) as usize).max(1);
            let piece: Vec<u8> = (0..raw).map(|_| b' ' + rng.below(95) as u8).collect();
            for i in 0..100 {
                data.push(piece[i % raw]);
            }
        }
        Values { data, pos: 0 }
    }

    fn next(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }
}

/// Where a benchmark's values come from: a dataset when one is given, else db_bench's generator.
struct ValueSource {
    generated: Values,
    dataset: Option<Rc<crate::dataset::Values>>,
    value_size: usize,
}

impl ValueSource {
    fn new(
        rng: &mut Rng,
        cfg: &DbBenchConfig,
        value_size: usize,
        dataset: Option<Rc<crate::dataset::Values>>,
    ) -> Self {
        ValueSource {
            generated: Values::new(rng, cfg.compression_ratio, value_size),
            dataset,
            value_size,
        }
    }

    fn next(&mut self, rng: &mut Rng) -> Vec<u8> {
        match &self.dataset {
            Some(d) => d.next(rng),
            None => self.generated.next(self.value_size).to_vec(),
        }
    }
}

/// RocksDB's bounds on `write_buffer_size`: `SanitizeCfOptions` (db/column_family.cc) clips
/// it to [64 KiB, 64 GiB] when a store opens.
pub const WRITE_BUFFER_SIZE_MIN: usize = 64 << 10;
pub const WRITE_BUFFER_SIZE_MAX: usize = 64 << 30;

/// Operations one benchmark may run (`num`, `reads`): past 2^40 a run would take weeks.
pub const MAX_OPS: u64 = 1 << 40;

/// Simulated seconds `--duration` may ask for.
pub const MAX_DURATION_S: u64 = 86_400;

/// Host cores the simulated machine may have.
pub const MAX_CORES: usize = 1024;

/// Host memory the threads' key and value buffers may take together: each thread keeps a
/// buffer of max(1 MiB, 2 × value_size) bytes of values and makes keys of key_size bytes.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

impl DbBenchConfig {
    /// Clip `write_buffer_size` to RocksDB's range as RocksDB does when the store opens;
    /// returns a note saying so when it changed (a size of 0 otherwise starts a new memtable
    /// and WAL on every write, for ever).
    pub fn sanitize(&mut self) -> Option<String> {
        let wbs = self
            .write_buffer_size
            .clamp(WRITE_BUFFER_SIZE_MIN, WRITE_BUFFER_SIZE_MAX);
        if wbs == self.write_buffer_size {
            return None;
        }
        let note = format!(
            "--write_buffer_size={} clipped to {wbs} (RocksDB keeps it within 64 KiB to 64 GiB)",
            self.write_buffer_size
        );
        self.write_buffer_size = wbs;
        Some(note)
    }

    /// Refuse what could not run in bounded time and memory, naming the flag, before anything
    /// is made. `capacity` is the device's in bytes.
    pub fn check(&self, capacity: u64) -> Result<(), DbBenchError> {
        let flag = |name, why: String| Err(DbBenchError::Flag(name, why));
        if self.num > MAX_OPS {
            return flag(
                "num",
                format!("{} is more than 2^40 ({MAX_OPS}) keys", self.num),
            );
        }
        if let Some(r) = self.reads.filter(|&r| r > MAX_OPS) {
            return flag(
                "reads",
                format!("{r} is more than 2^40 ({MAX_OPS}) operations"),
            );
        }
        if self.cores > MAX_CORES {
            return flag(
                "cores",
                format!("{} is more than {MAX_CORES} host cores", self.cores),
            );
        }
        if self.key_size as u64 > MAX_BUFFER_BYTES / 2 {
            return flag(
                "key_size",
                format!("{} is more than 512 MiB", self.key_size),
            );
        }
        if self.value_size as u64 > MAX_BUFFER_BYTES / 4 {
            return flag(
                "value_size",
                format!(
                    "{} is more than 256 MiB (each thread keeps 2 x value_size of values)",
                    self.value_size
                ),
            );
        }
        let per_thread = (self.value_size as u64 * 2 + self.key_size as u64).max(1 << 20);
        let buffers = per_thread.saturating_mul(self.threads as u64);
        if buffers > MAX_BUFFER_BYTES {
            return flag(
                "threads",
                format!(
                    "{} threads would keep {buffers} bytes of key and value buffers (each \
                     max(1 MiB, 2 x value_size) + key_size); at most 1 GiB",
                    self.threads
                ),
            );
        }
        // Benchmarks that write `num` entries need room for them as they land on the device
        // (values at compression_ratio, as db_bench's header reports them).
        for (name, v) in [("writes", self.writes), ("deletes", self.deletes)] {
            if let Some(v) = v.filter(|&v| v > MAX_OPS) {
                return flag(
                    name,
                    format!("{v} is more than 2^40 ({MAX_OPS}) operations"),
                );
            }
        }
        if self.duration > MAX_DURATION_S {
            return flag(
                "duration",
                format!(
                    "{} s is more than a simulated day ({MAX_DURATION_S} s)",
                    self.duration
                ),
            );
        }
        if self.readwritepercent > 100 {
            return flag(
                "readwritepercent",
                format!("{} is more than 100", self.readwritepercent),
            );
        }
        let batch_bytes = self
            .batch_size
            .saturating_mul(self.key_size as u64 + self.value_size as u64);
        if self.batch_size > 1 << 20 || batch_bytes > MAX_BUFFER_BYTES {
            return flag(
                "batch_size",
                format!(
                    "{} entries of key_size + value_size bytes in one write batch: at most \
                     2^20 entries and 1 GiB",
                    self.batch_size
                ),
            );
        }
        let m = &self.mix;
        if self.benchmarks.iter().any(|b| b == "mixgraph") {
            let ratios = [m.get_ratio, m.put_ratio, m.seek_ratio];
            if ratios.iter().any(|r| *r < 0.0) || ratios.iter().sum::<f64>() <= 0.0 {
                return flag(
                    "mix_get_ratio",
                    "mix_get_ratio, mix_put_ratio and mix_seek_ratio must not be negative, \
                     nor all 0"
                        .into(),
                );
            }
            if m.keyrange_num < 1 || m.keyrange_num as u64 > self.num.max(1) {
                return flag(
                    "keyrange_num",
                    format!("{} is not within 1..=num", m.keyrange_num),
                );
            }
        }
        if self.num > 1 << 27 && self.benchmarks.iter().any(|b| b == "filluniquerandom") {
            return flag(
                "num",
                format!(
                    "filluniquerandom keeps a shuffled list of the num keys: {} is more than \
                     2^27",
                    self.num
                ),
            );
        }
        let writes = self.benchmarks.iter().any(|b| {
            b.starts_with("fill")
                || matches!(
                    b.as_str(),
                    "overwrite" | "updaterandom" | "readrandomwriterandom" | "mixgraph"
                )
        });
        let value = match self.dataset {
            crate::dataset::Dataset::Random => {
                (self.value_size as f64 * self.compression_ratio) as u64
            }
            _ => 0,
        };
        let entry = (self.key_size.max(1) as u64).saturating_add(value);
        let need = self.num.saturating_mul(entry);
        if writes && need > capacity {
            return flag(
                "num",
                format!(
                    "{} entries of {entry} bytes (key_size + value_size x compression_ratio) \
                     take {need} bytes; the device holds {capacity}",
                    self.num
                ),
            );
        }
        Ok(())
    }
}

fn make_key(n: u64, size: usize) -> Vec<u8> {
    let mut k = n.to_be_bytes().to_vec();
    k.resize(size.max(8), b'0');
    k.truncate(size.max(1));
    k
}

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
            ZoneFs::mount(io2).await.map_err(|e| match e {
                host::zonefs::FsError::NoFileSystem => DbBenchError::NoDatabase,
                e => DbBenchError::Db(format!("zonefs: {e}")),
            })?
        } else {
            ZoneFs::mkfs_with(io2, cfg2.mkfs)
                .await
                .map_err(|e| DbBenchError::Db(e.to_string()))?
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
        let taken = (results, db.stats(), user_bytes, db.fs().stats());
        let device = dev2.with(|c| {
            (
                c.counters().host_bytes_written,
                c.flash_counters().bytes_programmed,
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
    let ((results, db, user_bytes_written, zonefs), (host_bytes_written, flash), now) = out;
    let c = counters.borrow().clone();
    let (tickers, histograms) = statistics(&c, &db, &results);
    Ok((
        DbBenchReport {
            results,
            db,
            zonefs,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_buffer_size_is_clipped_as_rocksdb_does() {
        let mut c = DbBenchConfig {
            write_buffer_size: 0,
            ..DbBenchConfig::default()
        };
        let note = c.sanitize().expect("0 is clipped");
        assert_eq!(c.write_buffer_size, 64 << 10);
        assert!(
            note.contains("write_buffer_size=0 clipped to 65536"),
            "{note}"
        );
        c.write_buffer_size = usize::MAX;
        c.sanitize().expect("the maximum is clipped");
        assert_eq!(c.write_buffer_size, 64 << 30);
        let mut c = DbBenchConfig::default();
        assert!(c.sanitize().is_none(), "64 MiB stays");
        assert_eq!(c.write_buffer_size, 64 << 20);
    }

    #[test]
    fn unbounded_flags_are_refused_by_name() {
        let flag = |c: DbBenchConfig| match c.check(1 << 30) {
            Err(DbBenchError::Flag(f, _)) => f,
            other => panic!("{other:?}"),
        };
        let d = DbBenchConfig::default;
        assert_eq!(
            flag(DbBenchConfig {
                num: u64::MAX,
                ..d()
            }),
            "num"
        );
        assert_eq!(
            flag(DbBenchConfig {
                reads: Some(u64::MAX),
                ..d()
            }),
            "reads"
        );
        assert_eq!(
            flag(DbBenchConfig {
                cores: usize::MAX,
                ..d()
            }),
            "cores"
        );
        assert_eq!(
            flag(DbBenchConfig {
                key_size: usize::MAX,
                ..d()
            }),
            "key_size"
        );
        assert_eq!(
            flag(DbBenchConfig {
                value_size: usize::MAX,
                ..d()
            }),
            "value_size"
        );
        assert_eq!(
            flag(DbBenchConfig {
                threads: usize::MAX,
                ..d()
            }),
            "threads"
        );
        // 100 M entries of 16 + 50 bytes do not fit in 1 GiB; reading them needs no room.
        assert_eq!(
            flag(DbBenchConfig {
                num: 100_000_000,
                ..d()
            }),
            "num"
        );
        let reads_only = DbBenchConfig {
            num: 100_000_000,
            benchmarks: vec!["readrandom".into()],
            ..d()
        };
        assert!(reads_only.check(1 << 30).is_ok());
        assert!(d().check(1 << 30).is_ok());
    }
}
