//! db_bench (RocksDB's `tools/db_bench_tool.cc`, research/zenfs-rocksdb.md §3.1) on the
//! store, on zonefs, on the emulated device: fillseq, fillrandom, overwrite, readrandom,
//! updaterandom, readwhilewriting, with db_bench's flag names and its way of making keys
//! (the key number big-endian, padded to `key_size`) and values (slices of a buffer of
//! 100-byte pieces, each a random printable run of `value × compression_ratio` bytes repeated).

use std::cell::RefCell;
use std::rc::Rc;

use codec::Codec;
use device::{Controller, DeviceConfig, DeviceHandle};
use host::lsm::db::{Compression, Db, DbOptions, DbStats};
use host::zonefs::ZoneFs;
use host::{HostIo, IoConfig};
use report::LatencyHistogram;
use sim::cpu::CpuPool;
use sim::{Rng, Sim};

/// db_bench's flags (defaults are db_bench's where it has them).
#[derive(Clone, Debug)]
pub struct DbBenchConfig {
    pub benchmarks: Vec<String>,
    pub num: u64,
    /// Reads for read benchmarks; default `num`.
    pub reads: Option<u64>,
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

/// One benchmark's figures.
#[derive(Clone, Debug)]
pub struct BenchResult {
    pub name: String,
    pub ops: u64,
    pub found: u64,
    pub seconds: f64,
    pub bytes: u64,
    pub latency: LatencyHistogram,
}

impl BenchResult {
    pub fn micros_per_op(&self) -> f64 {
        self.seconds * 1e6 / self.ops.max(1) as f64
    }
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.seconds.max(1e-12)
    }
    /// db_bench's report line.
    pub fn line(&self) -> String {
        let mut s = format!(
            "{:<12} : {:>11.3} micros/op {} ops/sec {:.3} seconds {} operations;",
            self.name,
            self.micros_per_op(),
            self.ops_per_sec() as u64,
            self.seconds,
            self.ops
        );
        if self.bytes > 0 {
            s.push_str(&format!(
                " {:>6.1} MB/s",
                self.bytes as f64 / 1048576.0 / self.seconds.max(1e-12)
            ));
        }
        if self.name.starts_with("read") || self.name == "updaterandom" {
            s.push_str(&format!(" ({} of {} found)", self.found, self.ops));
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
}

#[derive(Debug, thiserror::Error)]
pub enum DbBenchError {
    #[error("unknown benchmark {0:?} (known: fillseq, fillrandom, overwrite, readrandom, updaterandom, readwhilewriting)")]
    Unknown(String),
    #[error("--{0}: {1}")]
    Flag(&'static str, String),
    #[error("device: {0}")]
    Device(String),
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
        dataset: Option<Rc<crate::dataset::Values>>,
    ) -> Self {
        ValueSource {
            generated: Values::new(rng, cfg.compression_ratio, cfg.value_size),
            dataset,
            value_size: cfg.value_size,
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
        let writes = self.benchmarks.iter().any(|b| {
            matches!(
                b.as_str(),
                "fillseq" | "fillrandom" | "overwrite" | "updaterandom"
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

/// Run the benchmarks on a fresh device, file system and store.
pub fn run(device: DeviceConfig, cfg: &DbBenchConfig) -> Result<DbBenchReport, DbBenchError> {
    for b in &cfg.benchmarks {
        if !matches!(
            b.as_str(),
            "fillseq"
                | "fillrandom"
                | "overwrite"
                | "readrandom"
                | "updaterandom"
                | "readwhilewriting"
        ) {
            return Err(DbBenchError::Unknown(b.clone()));
        }
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
    let ctl = Controller::in_memory(device).map_err(|e| DbBenchError::Device(e.to_string()))?;
    let dev = DeviceHandle::new(&sim, ctl);
    let cpu = Rc::new(CpuPool::new(&sim, cfg.cores));
    let io = Rc::new(HostIo::new(&dev, cpu.clone(), IoConfig::default()));
    let mut opts = DbOptions {
        write_buffer_size: cfg.write_buffer_size,
        level_compaction_dynamic_level_bytes: cfg.level_compaction_dynamic_level_bytes,
        ..DbOptions::default()
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
    let out = sim.block_on(async move {
        let fs = Rc::new(
            ZoneFs::mkfs_with(io2, cfg2.mkfs)
                .await
                .map_err(|e| DbBenchError::Db(e.to_string()))?,
        );
        let db = Rc::new(
            Db::open(fs, opts)
                .await
                .map_err(|e| DbBenchError::Db(e.to_string()))?,
        );
        let mut results = Vec::new();
        let mut user_bytes = 0u64;
        for name in &cfg2.benchmarks {
            let r = bench(&sim2, &db, name, &cfg2, dataset.clone()).await?;
            if !name.starts_with("read") || name == "readwhilewriting" {
                user_bytes += r.bytes;
            }
            results.push(r);
        }
        // Background work still running is part of the run's device traffic, not of any
        // benchmark's time.
        db.wait_for_background()
            .await
            .map_err(|e| DbBenchError::Db(e.to_string()))?;
        Ok::<_, DbBenchError>((results, db.stats(), user_bytes, db.fs().stats()))
    });
    // A device that ran out of its memory budget says so.
    let out = out.map_err(|e| match dev.with(|c| c.image_error()) {
        Some(cause) => DbBenchError::Device(format!("{cause} ({e})")),
        None => e,
    })?;
    let (results, db, user_bytes_written, zonefs) = out;
    let (host_bytes_written, flash) = dev.with(|c| {
        (
            c.counters().host_bytes_written,
            c.flash_counters().bytes_programmed,
        )
    });
    Ok(DbBenchReport {
        results,
        db,
        zonefs,
        user_bytes_written,
        host_bytes_written,
        flash_bytes_programmed: flash,
        host_cpu_busy_ns: cpu.busy_per_core().iter().map(|d| d.as_ns()).sum(),
        sim_seconds: sim.now().as_ns() as f64 / 1e9,
    })
}

async fn bench(
    sim: &Sim,
    db: &Rc<Db>,
    name: &str,
    cfg: &DbBenchConfig,
    dataset: Option<Rc<crate::dataset::Values>>,
) -> Result<BenchResult, DbBenchError> {
    let start = sim.now();
    let result = Rc::new(RefCell::new(BenchResult {
        name: name.to_string(),
        ops: 0,
        found: 0,
        seconds: 0.0,
        bytes: 0,
        latency: LatencyHistogram::new(),
    }));
    let reads = cfg.reads.unwrap_or(cfg.num);
    let mut handles = Vec::new();
    // readwhilewriting's writer runs while any reader does.
    let readers_left = Rc::new(std::cell::Cell::new(cfg.threads));
    for t in 0..cfg.threads {
        let (db, cfg, result, sim) = (db.clone(), cfg.clone(), result.clone(), sim.clone());
        let name = name.to_string();
        let mut rng = Rng::new(cfg.seed).stream(&format!("{name}-{t}"));
        let mut values = ValueSource::new(&mut rng, &cfg, dataset.clone());
        let threads = cfg.threads as u64;
        let per = move |n: u64| n / threads + u64::from((t as u64) < n % threads);
        let readers_left = readers_left.clone();
        handles.push(sim.clone().spawn(async move {
            let ops = match name.as_str() {
                "readrandom" | "readwhilewriting" => per(reads),
                _ => per(cfg.num),
            };
            for i in 0..ops {
                let t0 = sim.now();
                let db_err = |e: host::lsm::db::DbError| DbBenchError::Db(e.to_string());
                // fillseq walks the keys in order; the others draw them at random.
                let k = if name == "fillseq" {
                    make_key(t as u64 + i * cfg.threads as u64, cfg.key_size)
                } else {
                    make_key(rng.below(cfg.num), cfg.key_size)
                };
                let looks_up = name.starts_with("read") || name == "updaterandom";
                let found = looks_up && db.get(&k).await.map_err(db_err)?.is_some();
                let bytes = if name.starts_with("read") {
                    0
                } else {
                    let v = values.next(&mut rng);
                    db.put(&k, &v, cfg.sync).await.map_err(db_err)?;
                    k.len() + v.len()
                };
                let mut r = result.borrow_mut();
                r.ops += 1;
                if let Some(p) = &cfg.progress {
                    let total = match name.as_str() {
                        "readrandom" | "readwhilewriting" => reads,
                        _ => cfg.num,
                    };
                    p.tick(&name, r.ops, total);
                }
                r.bytes += bytes as u64;
                r.found += u64::from(found);
                r.latency.record(sim.now().since(t0).as_ns());
            }
            readers_left.set(readers_left.get() - 1);
            Ok::<(), DbBenchError>(())
        }));
    }
    // readwhilewriting: one more task writes random keys until the readers finish.
    if name == "readwhilewriting" {
        let (db, cfg, sim, left) = (db.clone(), cfg.clone(), sim.clone(), readers_left.clone());
        let mut rng = Rng::new(cfg.seed).stream("writer");
        let mut values = ValueSource::new(&mut rng, &cfg, dataset.clone());
        handles.push(sim.clone().spawn(async move {
            while left.get() > 0 {
                let k = make_key(rng.below(cfg.num), cfg.key_size);
                let v = values.next(&mut rng);
                db.put(&k, &v, cfg.sync)
                    .await
                    .map_err(|e| DbBenchError::Db(e.to_string()))?;
            }
            Ok(())
        }));
    }
    for h in handles {
        h.await?;
    }
    let mut r = result.borrow().clone();
    r.seconds = sim.now().since(start).as_ns() as f64 / 1e9;
    Ok(r)
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
