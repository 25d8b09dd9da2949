//! The store: writes go to the WAL (RocksDB log format in a zonefs `.log` file, synced when
//! asked) and the memtable; a full memtable becomes immutable (a new WAL starts) and flush
//! workers write the immutable ones, oldest first, to L0 SSTs while compaction workers compact
//! beside them (RocksDB's job limits; the default max_background_jobs = 2 gives one of each,
//! more compactions run side by side on disjoint files under compaction pressure); writers
//! stall once max_write_buffer_number memtables are full (the default 2: while the previous
//! one is still flushing) or L0 is at its stop trigger, and slow to 16 MiB/s past the slowdown
//! trigger; the MANIFEST (log of
//! version edits) records which SSTs exist, the WAL still needed and the last sequence. Open
//! replays the newest MANIFEST that decodes, then the WALs it still needs, and flushes what
//! they held. Leveled compaction runs after each flush while a level's score is ≥ 1 (L0 by
//! file count, deeper levels by bytes over static targets), picking by minimal overlapping
//! ratio; it keeps the newest version of each key and drops deletions nothing older can hide
//! under. Reads look in the memtable, L0 newest first, then one file per level.
//!
//! Lookups read each data block from the device unless the LRU block cache holds it (then no
//! read and no decompression). Scans merge a cursor per table, reading blocks as the merge
//! reaches them, through RocksDB's implicit readahead (8 KiB doubling to 256 KiB after two
//! sequential block reads); compaction streams a merge of its inputs, each read in 2 MiB
//! reads, into output tables written as they fill. Block compression runs inline or on the
//! scheme's threads (ZSTDPC; [`Compression`]). A table in memory is its index and filter
//! (RocksDB pins them): every data block a reader uses is one the device returned.
//!
//! The store's parts, one file each: [`options`] (what a user sets), `version` (the levels,
//! the MANIFEST's edits, the level targets), `recovery` (open: MANIFEST and WAL replay),
//! `write` (the write path and its stalls), `flush` (the background workers and memtable
//! flushes), `compaction` (picking and running leveled compactions), `merge` (a compaction's
//! streamed inputs), `tables` (writing tables, plain or by CCZNS commands, and reading data
//! blocks through the block cache), `read` (point lookups and the retired tables they keep)
//! and `scan` (merged range scans with readahead). This file keeps the store's types and
//! the glue they share (the background error, CPU charging, stats).

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use sim::sync::{Mutex, Notify};
use sim::SimDuration;

use super::format::FormatError;
use super::log::LogWriter;
use super::memtable::{MemTable, WriteBatch};
use crate::zonefs::{FileWriter, FsError, ZoneFs};

mod compaction;
mod flush;
mod merge;
pub mod options;
pub use series::{JobSeries, SERIES_BUCKET_NS};
mod read;
mod recovery;
mod scan;
mod series;
mod tables;
mod version;
mod write;

use super::sst::Table;
pub use options::{CcOptions, Compression, CpuCosts, DbOptions, JobLimitError};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Log(#[from] super::log::LogError),
    /// Zonefs lets the store hold `{0}` files open for writing besides its WAL; it needs 3.
    #[error(
        "the store needs 3 files open for writing besides its WAL (MANIFEST, flush, \
         compaction); zonefs on this device allows {0}: give the device at least 6 open and \
         5 active zones"
    )]
    TooFewOpenFiles(u32),
    /// The compression scheme names an engine profile that does not exist.
    #[error("compression engine {0:?}: no such profile (znslab devices lists them)")]
    UnknownEngine(String),
    #[error("corrupt {0}")]
    Corrupt(Corruption),
    /// An earlier failure stopped the store taking writes (RocksDB's background error): a WAL
    /// write, a flush or a compaction failed, and going on could lose acknowledged writes.
    /// Reads go on; reopen the store to write again.
    #[error("the store takes no more writes: {0}")]
    Stopped(Stop),
}

/// What the store found corrupt (read back other than it wrote).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Corruption {
    /// A CCZNS decompressed read of `file` at `offset` returned `got` chunks (or other sizes)
    /// where the table's index names `want`.
    #[error(
        "{file}: a decompressed read at {offset} returned {got} chunks, the index names {want}"
    )]
    DecompressedChunks {
        file: String,
        offset: u64,
        got: usize,
        want: usize,
    },
    /// A plain read of `file` ended before the end its block handles name.
    #[error("{file}: shorter than its handles say")]
    ShortFile { file: String },
    /// The MANIFEST places a table at `level`, past the store's levels.
    #[error("MANIFEST: level {level}")]
    ManifestLevel { level: u32 },
    /// A record of WAL `wal` does not decode as a write batch.
    #[error("write batch in {wal}")]
    WriteBatch { wal: String },
    /// A scan met a key that does not parse as an internal key.
    #[error("internal key")]
    InternalKey,
    /// A compaction met a key in an SST that does not parse as an internal key.
    #[error("internal key in an SST")]
    InternalKeyInSst,
}

impl From<Corruption> for DbError {
    fn from(c: Corruption) -> Self {
        DbError::Corrupt(c)
    }
}

/// Why the store takes no more writes: the first failure that stopped it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} failed: {cause}", .what.text())]
pub struct Stop {
    /// What failed.
    pub what: Stopper,
    /// That failure's message (the error itself went to the write that met it, or nowhere
    /// for a background job).
    pub cause: String,
}

/// The work whose failure stopped the store's writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopper {
    /// A flush or a compaction.
    BackgroundJob,
    ManifestWrite,
    StartingWal,
    WalWrite,
    WalSync,
}

impl Stopper {
    /// How the store's message names it.
    pub fn text(self) -> &'static str {
        match self {
            Stopper::BackgroundJob => "a background job",
            Stopper::ManifestWrite => "a MANIFEST write",
            Stopper::StartingWal => "starting a new WAL",
            Stopper::WalWrite => "a WAL write",
            Stopper::WalSync => "a WAL sync",
        }
    }
}

/// An SST the store holds.
struct Sst {
    number: u64,
    size: u64,
    /// Entries, raw data-block bytes and data blocks (for CPU accounting).
    shape: (u64, u64, u64),
    smallest: Vec<u8>,
    largest: Vec<u8>,
    table: Table,
}

/// An immutable memtable waiting for its flush, and the WAL that holds its writes (kept
/// until the flush is in the MANIFEST).
struct Imm {
    mem: Rc<MemTable>,
    wal: u64,
    /// A flush worker has taken it (and, with several flush workers, its table's number).
    claimed: bool,
}

/// A compaction picked and not yet installed: its files are being compacted, and its output
/// key range on `out_level` is taken.
struct Running {
    id: u64,
    level: usize,
    out_level: usize,
    files: Vec<u64>,
    lo: Vec<u8>,
    hi: Vec<u8>,
}

struct State {
    mem: MemTable,
    /// Immutable memtables waiting for a flush, oldest first (up to
    /// `max_write_buffer_number - 1`); flushes install in this order.
    imms: std::collections::VecDeque<Imm>,
    /// Compactions running (RocksDB's files `being_compacted` and the ranges of compactions in
    /// progress), and the id the next one takes.
    running: Vec<Running>,
    next_compaction: u64,
    /// levels[0] newest first (files may overlap); levels[1..] sorted by smallest key, disjoint.
    levels: Vec<Vec<Rc<Sst>>>,
    last_seq: u64,
    wal_number: u64,
    wal: FileWriter,
    wal_log: LogWriter,
    manifest: FileWriter,
    manifest_log: LogWriter,
}

impl State {
    /// Bytes of the immutable memtables.
    fn imm_bytes(&self) -> usize {
        self.imms.iter().map(|m| m.mem.bytes()).sum()
    }
}

/// Counters a RocksDB user would look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbStats {
    pub writes: u64,
    pub wal_bytes: u64,
    pub flushes: u64,
    pub flushed_bytes: u64,
    pub compactions: u64,
    /// Files moved down a level without a rewrite.
    pub trivial_moves: u64,
    pub compaction_read_bytes: u64,
    pub compaction_written_bytes: u64,
    pub l0_files: usize,
    /// Host CPU the store charged (not counting I/O submission, which HostIo counts).
    pub cpu_ns: u64,
    /// Bytes the host's codec really compressed (data blocks before compression) and
    /// decompressed (blocks after decompression): the emulator's own codec work.
    pub host_compressed_bytes: u64,
    pub host_decompressed_bytes: u64,
    pub block_cache_hits: u64,
    pub block_cache_misses: u64,
    /// Host memory: the block cache's contents.
    pub block_cache_bytes: u64,
    /// Files and bytes per level.
    pub level_files: Vec<usize>,
    pub level_bytes: Vec<u64>,
    /// Host memory: the active and the immutable memtable, and the index and filter blocks of
    /// every table (RocksDB pins them; the block cache is counted above).
    pub memtable_bytes: usize,
    pub index_filter_bytes: u64,
    pub last_sequence: u64,
    /// Time writers waited: for a flush to free the memtable, for L0 below the stop trigger,
    /// and for the slowdown (RocksDB's stall counters).
    pub stall_memtable_ns: u64,
    pub stall_l0_ns: u64,
    pub slowdown_ns: u64,
    /// Immutable memtables waiting for a flush now, and the most that ever waited.
    pub immutable_memtables: usize,
    pub max_immutable_memtables: usize,
    /// The most compactions that ran at once, and the pairs of input levels (the new one's,
    /// a running one's) of compactions picked beside another.
    pub max_running_compactions: usize,
    pub concurrent_compaction_levels: BTreeSet<(usize, usize)>,
    /// Flush and compaction bytes per second of virtual time.
    pub series: JobSeries,
}

/// The store. Cheap to share: clones are handles on one store.
#[derive(Clone)]
pub struct Db {
    inner: Rc<Inner>,
}

struct Inner {
    fs: Rc<ZoneFs>,
    opts: DbOptions,
    cache: std::cell::RefCell<super::cache::BlockCache>,
    /// Decompresses the data blocks readers take from the device (never held across an await).
    coder: std::cell::RefCell<codec::Coder>,
    st: Mutex<State>,
    /// The number the next file (table, WAL, MANIFEST) takes: RocksDB's atomic
    /// `NewFileNumber`, which a compaction takes for each output without the store's lock.
    next_file: std::cell::Cell<u64>,
    stats: std::cell::RefCell<DbStats>,
    /// Background flush and compaction workers running (at most
    /// `max_background_flushes` and `max_background_compactions`; RocksDB's default
    /// max_background_jobs 2 gives one of each).
    flush_running: std::cell::Cell<usize>,
    compact_running: std::cell::Cell<usize>,
    /// Immutable memtables no flush worker has taken yet.
    unclaimed: std::cell::Cell<usize>,
    /// RocksDB's compaction pressure (`NeedSpeedupCompaction`): more than one compaction may
    /// run. Recomputed as the version and the memtables change.
    speedup: std::cell::Cell<bool>,
    /// Woken after every background job: stalled writers and waiters re-check.
    progress: Notify,
    bg_error: std::cell::RefCell<Option<Stop>>,
    /// Tables a compaction retired, deleted once no lookup, scan or compaction holds them
    /// (a reader holds a table by its `Rc`, as RocksDB's readers hold a referenced version).
    doomed: std::cell::RefCell<BTreeMap<u64, Rc<Sst>>>,
}

/// Which of a merge's sources goes next: the one whose head has the smallest internal key
/// (None once every source is done).
fn smallest_head(heads: &[Option<(Vec<u8>, Vec<u8>)>]) -> Option<usize> {
    (0..heads.len())
        .filter_map(|i| heads[i].as_ref().map(|(k, _)| (i, k)))
        .min_by(|a, b| super::key::compare(a.1, b.1))
        .map(|(i, _)| i)
}

fn wal_name(n: u64) -> String {
    format!("{n:06}.log")
}
fn sst_name(n: u64) -> String {
    format!("{n:06}.sst")
}
fn manifest_name(n: u64) -> String {
    format!("MANIFEST-{n:06}")
}

fn number_of(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    name.strip_prefix(prefix)?
        .strip_suffix(suffix)?
        .parse()
        .ok()
}

impl Db {
    /// Open the store on `fs`, creating it if the file system holds none.
    pub async fn open(fs: Rc<ZoneFs>, opts: DbOptions) -> Result<Db, DbError> {
        // The MANIFEST, a flush output and a compaction output hold zones at once (besides
        // the WAL): with fewer open zones for them the workers would wait on each other.
        let limit = fs.open_file_limit(false);
        if limit < 3 {
            return Err(DbError::TooFewOpenFiles(limit));
        }
        let mut opts = opts;
        // RocksDB's SanitizeOptions: at least two write buffers, one background job of each.
        opts.max_write_buffer_number = opts.max_write_buffer_number.max(2);
        opts.max_background_flushes = opts.max_background_flushes.max(1);
        opts.max_background_compactions = opts.max_background_compactions.max(1);
        if let Some(e) = opts.compression.engine() {
            if codec::profile::by_name(e).is_none() {
                return Err(DbError::UnknownEngine(e.to_string()));
            }
        }
        // The device compresses under CCZNS; the host writes blocks raw.
        opts.table.codec = opts.compression.block_codec();
        if let Some(cc) = opts.compression.cc() {
            // A CW is one command, and must fit the zone it goes to whole: at most MDTS and a
            // quarter of a zone (small test devices have zones below 1 MiB).
            let fits = fs
                .io()
                .max_transfer_bytes()
                .min(fs.io().zone_capacity_bytes() / 4) as usize;
            opts.table.cc_write_buffer = Some(if cc.multi_chunk_cw {
                cc.write_buffer.min(fits)
            } else {
                1
            });
        } else {
            opts.table.cc_write_buffer = None;
        }
        let inner = Rc::new(Inner::open(fs, opts).await?);
        inner.schedule();
        Ok(Db { inner })
    }

    /// The file system the store lives on.
    pub fn fs(&self) -> &Rc<ZoneFs> {
        &self.inner.fs
    }

    /// Apply a batch; with `sync` the WAL is durable before this returns.
    pub async fn write(&self, batch: &WriteBatch, sync: bool) -> Result<(), DbError> {
        self.inner.write(batch, sync).await.map(|_| ())
    }

    /// `write`, returning the sequence number the batch's first operation took: its place in
    /// the WAL among every writer's batches (None for an empty batch, which writes nothing).
    pub async fn write_seq(&self, batch: &WriteBatch, sync: bool) -> Result<Option<u64>, DbError> {
        self.inner.write(batch, sync).await
    }

    pub async fn put(&self, k: &[u8], v: &[u8], sync: bool) -> Result<(), DbError> {
        let mut b = WriteBatch::default();
        b.put(k, v);
        self.write(&b, sync).await
    }

    pub async fn delete(&self, k: &[u8], sync: bool) -> Result<(), DbError> {
        let mut b = WriteBatch::default();
        b.delete(k);
        self.write(&b, sync).await
    }

    /// Flush the memtable and wait until background work (flushes, compactions) is done.
    pub async fn flush(&self) -> Result<(), DbError> {
        self.inner.flush().await
    }

    /// Wait until the background workers have nothing left to do.
    pub async fn wait_for_background(&self) -> Result<(), DbError> {
        self.inner.wait_idle().await
    }

    /// Wait for background work to finish (call before reopening the same file system).
    pub async fn close(self) -> Result<(), DbError> {
        self.inner.wait_idle().await
    }

    pub async fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, DbError> {
        self.inner.get(k).await
    }

    /// Up to `limit` live keys ≥ `start` with their values, in key order.
    pub async fn scan(
        &self,
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        self.inner.scan(start, limit).await
    }

    pub fn stats(&self) -> DbStats {
        self.inner.stats()
    }
}

impl Inner {
    /// A table the host's codec compressed: its data blocks count in the codec's work.
    fn count_compressed(&self, sst: &Sst) {
        if self.opts.table.codec != codec::Codec::None {
            self.stats.borrow_mut().host_compressed_bytes += sst.shape.1;
        }
    }

    /// A number for a new file.
    fn new_file_number(&self) -> u64 {
        let n = self.next_file.get();
        self.next_file.set(n + 1);
        n
    }

    fn check_bg(&self) -> Result<(), DbError> {
        match &*self.bg_error.borrow() {
            Some(e) => Err(DbError::Stopped(e.clone())),
            None => Ok(()),
        }
    }

    /// A background job failed: writes stop.
    fn failed(&self, e: DbError) {
        let mut slot = self.bg_error.borrow_mut();
        if slot.is_none() {
            *slot = Some(Stop {
                what: Stopper::BackgroundJob,
                cause: e.to_string(),
            });
        }
    }

    /// A write's own I/O failed: this write fails with `e`, and later writes stop.
    fn failed_write(&self, what: Stopper, e: DbError) -> DbError {
        let mut slot = self.bg_error.borrow_mut();
        if slot.is_none() {
            *slot = Some(Stop {
                what,
                cause: e.to_string(),
            });
        }
        e
    }

    /// Spend `ns` of host CPU.
    async fn cpu(&self, ns: u64) {
        if ns > 0 {
            self.stats.borrow_mut().cpu_ns += ns;
            self.fs.io().cpu().run(SimDuration::from_ns(ns)).await;
        }
    }

    /// Spend the CPU of building tables of these shapes (entries, raw data-block bytes, data
    /// blocks), after `serial_ns` of other work in the same thread: merging each entry, and
    /// compressing each block. With one compression thread all of it runs on one core, as
    /// RocksDB compresses inline; with more, the blocks' compression is spread over that many
    /// threads running beside the merging one (RocksDB's parallel compression pipeline), each
    /// block costing `parallel_block_ns` more.
    async fn build_cpu(&self, serial_ns: u64, shapes: &[(u64, u64, u64)]) {
        let mut merge = serial_ns;
        let mut comp = 0;
        let mut blocks_total = 0;
        for &(entries, raw, blocks) in shapes {
            merge += entries * self.opts.cpu.merge_entry_ns;
            comp += self.opts.compression.profile().map_or(0, |p| {
                let per = raw / blocks.max(1);
                blocks * p.compress.latency_ns(per)
            });
            blocks_total += blocks;
        }
        let threads = self.opts.compression.threads().max(1) as u64;
        if threads == 1 || comp == 0 {
            return self.cpu(merge + comp).await;
        }
        comp += blocks_total * self.opts.cpu.parallel_block_ns;
        self.stats.borrow_mut().cpu_ns += merge + comp;
        let mut parts = vec![SimDuration::from_ns(merge)];
        parts.extend(
            (0..threads)
                .map(|i| SimDuration::from_ns(comp / threads + u64::from(i < comp % threads))),
        );
        self.fs.io().cpu().run_parallel(&parts).await;
    }

    pub fn stats(&self) -> DbStats {
        let mut s = self.stats.borrow().clone();
        let c = self.cache.borrow();
        s.block_cache_hits = c.hits;
        s.block_cache_misses = c.misses;
        s.block_cache_bytes = c.used_bytes();
        s
    }
}
