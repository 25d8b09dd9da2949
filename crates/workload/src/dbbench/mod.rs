//! db_bench (RocksDB's `tools/db_bench_tool.cc`, research/zenfs-rocksdb.md §3.1) on the
//! store, on zonefs, on the emulated device: the run's configuration, its bounds, and
//! db_bench's way of making keys (the key number big-endian, padded to `key_size`) and values
//! (slices of a buffer of 100-byte pieces, each a random printable run of
//! `value × compression_ratio` bytes repeated). The run itself (the device and stack it starts
//! on, the benchmarks in order, the report) is in `runner`, the benchmarks' loops in `bench`
//! and `mixgraph`, the command line in `flags` (its table in `flag_table`,
//! RocksDB's names in `rocksdb_names`, both generated), and db_bench's output formats in
//! `output`.

pub mod bench;
mod flag_table;
pub mod flags;
pub mod intervals;
mod mixgraph;
pub mod output;
mod rocksdb_names;
mod runner;

pub use runner::{run, run_on, skipped_line, Kept, Medium, Zones, FRESH_DB};

use std::collections::BTreeMap;
use std::rc::Rc;

use codec::Codec;
use host::lsm::db::{Compression, DbOptions, DbStats};
use report::LatencyHistogram;
use sim::Rng;

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
    /// db_bench's `--report_interval_seconds` (0: none): operations finished per interval.
    pub report_interval_seconds: u64,
    /// `--latency_interval_ms` (0: none): latency percentiles per interval.
    pub latency_interval_ms: u64,
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
            report_interval_seconds: 0,
            latency_interval_ms: 0,
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
    /// `--report_interval_seconds` and `--latency_interval_ms` series (empty when not asked).
    pub intervals: intervals::Intervals,
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
            intervals: intervals::Intervals::default(),
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
    /// What the IZG probe at mkfs found and cost (its writes are not in the byte counts).
    pub izg_probe: Option<host::zonefs::izg::ProbeReport>,
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
