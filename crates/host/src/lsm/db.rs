//! The store: writes go to the WAL (RocksDB log format in a zonefs `.log` file, synced when
//! asked) and the memtable; a full memtable becomes immutable (a new WAL starts) and a flush
//! worker writes it to an L0 SST while a compaction worker compacts beside it (RocksDB's
//! default max_background_jobs = 2: one of each); writers stall while the previous memtable is
//! still flushing or L0 is at its stop trigger, and slow to 16 MiB/s past the slowdown
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
//! sequential block reads); compaction reads its inputs in 2 MiB reads. Block compression
//! runs inline or on `compression_parallel_threads` threads (ZSTDPC). SSTs are also kept
//! whole in the simulator's memory to parse from (the simulated host pays the device reads).

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use sim::sync::{Mutex, Notify};
use sim::SimDuration;

use super::cache::{DecodedBlocks, SharedDecodedBlocks};
use super::format::{get_varint, put_varint, FormatError};
use super::key::{self, ValueType};
use super::log::{read_log, LogWriter};
use super::memtable::{MemTable, WriteBatch};
use super::sst::{
    self, BlockRead, CcBlocks, CcChunk, Table, TableBuilder, TableCursor, TableOptions,
};
use crate::zonefs::{FileWriter, FsError, Lifetime, MkfsOptions, ZoneFs};

/// Store options (RocksDB 8.11's defaults where they exist).
#[derive(Clone, Debug)]
pub struct DbOptions {
    /// Memtable size that triggers a flush (write_buffer_size).
    pub write_buffer_size: usize,
    pub table: TableOptions,
    pub num_levels: usize,
    /// L0 files that make L0's compaction score 1 (level0_file_num_compaction_trigger).
    pub level0_trigger: usize,
    /// L1's target size; each level below is `level_multiplier` times the one above. With
    /// `level_compaction_dynamic_level_bytes` (RocksDB's default since 8.4, so CCZNS's 8.11;
    /// db_bench's flag default is false) the targets are instead derived from the largest
    /// level's size and L0 compacts into the first level whose target reaches this base.
    pub max_bytes_for_level_base: u64,
    pub level_compaction_dynamic_level_bytes: bool,
    pub level_multiplier: u64,
    /// Compaction output files are cut at this size (target_file_size_base, multiplier 1).
    pub target_file_size: u64,
    pub cpu: CpuCosts,
    /// Block cache capacity (RocksDB 8.2+: a 32 MiB LRU cache when none is given).
    pub block_cache_bytes: u64,
    /// L0 files at which writes slow down to `delayed_write_rate`, and stop.
    pub level0_slowdown: usize,
    pub level0_stop: usize,
    /// Bytes per second writes are held to while slowed (RocksDB: 16 MiB/s).
    pub delayed_write_rate: u64,
    /// Threads that compress a table's blocks while it is built (RocksDB's
    /// `CompressionOptions::parallel_threads`, default 1: compression inline in the flush or
    /// compaction thread). CCZNS §V-A's ZSTDPC scheme uses 6.
    pub compression_parallel_threads: usize,
    /// Compaction reads its inputs in reads of this size (RocksDB 8.7+: 2 MiB).
    pub compaction_readahead_size: u64,
    /// Iterators' implicit readahead: after `auto_readahead_after` sequential block reads of a
    /// file, a read takes this many bytes, doubling per read up to the maximum (RocksDB's
    /// `initial_auto_readahead_size` 8 KiB, `max_auto_readahead_size` 256 KiB,
    /// `num_file_reads_for_auto_readahead` 2).
    pub initial_auto_readahead_size: u64,
    pub max_auto_readahead_size: u64,
    pub auto_readahead_after: u32,
    /// CCZNS's scheme: the device compresses data blocks (the table codec is ignored). Needs
    /// zonefs with padding zones on a CCZNS device.
    pub cc: Option<CcOptions>,
    /// An engine profile (`znslab devices`) that times block compression and decompression
    /// instead of the codec's CPU profile: CCZNS §V-A's QAT scheme uses `qat-8970` with
    /// Deflate (RocksDB's QAT plugin). The calling thread waits for each block's round trip
    /// busy (QATzip's synchronous mode polls), so the engine's latency counts as host CPU; an
    /// assumption, consistent with Table IV putting QAT's CPU near ZSTD's. The engine's
    /// queue limit is not modelled: the store has at most two background threads.
    pub compression_engine: Option<String>,
}

/// How the store uses CCZNS's commands (§IV-B; seed-artifacts §1.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CcOptions {
    /// Data blocks go in compressed writes of up to this many bytes (RocksDB's file write
    /// buffer, `writable_file_max_buffer_size`, 1 MiB).
    pub write_buffer: usize,
    /// One CW per write buffer (multi-chunk); false = one single-chunk CW per block, the
    /// ablation of §V-D.
    pub multi_chunk_cw: bool,
    /// Prefetch (iterators, compaction) by multi-chunk DR; false = a single-chunk DR per
    /// block, the other ablation of §V-D.
    pub multi_chunk_dr: bool,
    /// Compressed bytes an iterator's prefetch takes (CCZNS's RocksDB forces 256 KiB,
    /// clipped at the data region's end).
    pub prefetch_bytes: u64,
}

impl Default for CcOptions {
    fn default() -> Self {
        CcOptions {
            write_buffer: 1 << 20,
            multi_chunk_cw: true,
            multi_chunk_dr: true,
            prefetch_bytes: 256 << 10,
        }
    }
}

/// What a block takes in the block cache: its raw size (a compressed block is cached
/// decompressed, so at least a block's worth).
fn cache_charge(h: &BlockRead, opts: &DbOptions) -> u64 {
    if h.cc {
        h.raw
    } else {
        h.raw.max(opts.table.block_size as u64)
    }
}

/// CNLB is 8 bits: a DR's compressed range spans at most 255 blocks.
const DR_MAX_BLOCKS: u64 = 255;

/// The end (exclusive) of the chunks from `i` one multi-chunk DR takes: at least chunk `i`,
/// then while the stored bytes stay within `max_stored`, the range within CNLB's 255 blocks
/// and the decompressed bytes within `max_raw`.
fn dr_span(chunks: &[CcChunk], i: usize, max_stored: u64, max_raw: u64, block: u64) -> usize {
    let start = chunks[i].offset;
    let (mut end, mut raw) = (i + 1, chunks[i].pre as u64);
    while let Some(c) = chunks.get(end) {
        let stored = c.offset + c.post as u64 - start;
        let blocks = (start % block + stored).div_ceil(block);
        if stored > max_stored || blocks > DR_MAX_BLOCKS || raw + c.pre as u64 > max_raw {
            break;
        }
        raw += c.pre as u64;
        end += 1;
    }
    end
}

/// Host CPU the store's own work costs, charged on the simulated cores. Block compression and
/// decompression cost what the codec's CPU engine profile says (`znslab devices`); the rest are
/// assumptions of the order RocksDB shows in perf profiles, marked as such.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuCosts {
    /// Per key written: WAL record encoding and memtable insert (assumed 1.5 µs).
    pub write_ns: u64,
    /// Per point lookup: memtable and index search, key comparisons (assumed 1 µs).
    pub read_ns: u64,
    /// Per entry merged by flush or compaction, besides compression (assumed 0.3 µs).
    pub merge_entry_ns: u64,
    /// Per block handed to a compression thread when `compression_parallel_threads > 1`:
    /// RocksDB's parallel path copies each block and its keys and passes it through two queues
    /// (assumed 1 µs).
    pub parallel_block_ns: u64,
}

impl Default for CpuCosts {
    fn default() -> Self {
        CpuCosts {
            write_ns: 1_500,
            read_ns: 1_000,
            merge_entry_ns: 300,
            parallel_block_ns: 1_000,
        }
    }
}

/// The profile that times the store's block (de)compression: the engine named in the options,
/// else the codec's CPU profile.
fn cpu_profile_of(opts: &DbOptions) -> Option<codec::EngineProfile> {
    if opts.table.codec == codec::Codec::None {
        return None;
    }
    match &opts.compression_engine {
        Some(name) => codec::profile::by_name(name),
        None => cpu_profile(opts.table.codec),
    }
}

/// The CPU profile that times a codec on a host core.
fn cpu_profile(c: codec::Codec) -> Option<codec::EngineProfile> {
    let name = match c {
        codec::Codec::None => return None,
        codec::Codec::Zstd(_) => "cpu-zstd-1",
        codec::Codec::Snappy => "cpu-snappy",
        codec::Codec::Deflate(_) => "cpu-deflate-1",
        codec::Codec::Lz4 => "cpu-lz4",
    };
    codec::profile::by_name(name)
}

impl DbOptions {
    /// The file system this store needs, from `base`: CCZNS (CW/DR) tables share padding
    /// zones with plain writes.
    pub fn mkfs_options(&self, mut base: MkfsOptions) -> MkfsOptions {
        base.padding_zones = self.cc.is_some();
        base
    }
}

impl Default for DbOptions {
    /// RocksDB 8.11 (research/zenfs-rocksdb.md §2.1).
    fn default() -> Self {
        DbOptions {
            write_buffer_size: 64 << 20,
            table: TableOptions::default(),
            num_levels: 7,
            level0_trigger: 4,
            max_bytes_for_level_base: 256 << 20,
            level_compaction_dynamic_level_bytes: true,
            level_multiplier: 10,
            target_file_size: 64 << 20,
            cpu: CpuCosts::default(),
            block_cache_bytes: 32 << 20,
            level0_slowdown: 20,
            level0_stop: 36,
            delayed_write_rate: 16 << 20,
            compression_parallel_threads: 1,
            compaction_readahead_size: 2 << 20,
            initial_auto_readahead_size: 8 << 10,
            max_auto_readahead_size: 256 << 10,
            auto_readahead_after: 2,
            cc: None,
            compression_engine: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Log(#[from] super::log::LogError),
    #[error("corrupt {0}")]
    Corrupt(String),
    /// An earlier failure stopped the store taking writes (RocksDB's background error): a WAL
    /// write, a flush or a compaction failed, and going on could lose acknowledged writes.
    /// Reads go on; reopen the store to write again.
    #[error("the store takes no more writes: {0}")]
    Stopped(String),
}

/// Bytes in each level.
fn level_sizes(st: &State) -> Vec<u64> {
    st.levels
        .iter()
        .map(|l| l.iter().map(|f| f.size).sum())
        .collect()
}

/// The level L0 compacts into and each level's target size (index 0 unused), from the levels'
/// sizes: RocksDB's `VersionStorageInfo::CalculateBaseBytes`.
fn level_targets(opts: &DbOptions, sizes: &[u64]) -> (usize, Vec<u64>) {
    let n = sizes.len();
    let mult = opts.level_multiplier.max(1);
    let base_max = opts.max_bytes_for_level_base;
    let mut targets = vec![0u64; n];
    if !opts.level_compaction_dynamic_level_bytes {
        let mut t = base_max;
        for target in targets.iter_mut().skip(1) {
            *target = t;
            t = t.saturating_mul(mult);
        }
        return (1, targets);
    }
    let first_non_empty = (1..n).find(|&l| sizes[l] > 0);
    let max_size = sizes.iter().skip(1).copied().max().unwrap_or(0);
    let Some(first_non_empty) = first_non_empty else {
        // Nothing below L0 yet: L0 goes straight to the last level.
        targets.iter_mut().skip(1).for_each(|t| *t = base_max);
        return (n - 1, targets);
    };
    // The first non-empty level's size if the largest level were the last level's target.
    let mut cur = max_size;
    for _ in first_non_empty..n - 1 {
        cur /= mult;
    }
    let base_min = base_max / mult;
    let mut base = first_non_empty;
    let base_size = if cur <= base_min {
        base_min + 1
    } else {
        while base > 1 && cur > base_max {
            base -= 1;
            cur /= mult;
        }
        if cur > base_max {
            base_max
        } else {
            cur.max(1)
        }
    };
    let mut size = base_size;
    for (l, target) in targets.iter_mut().enumerate().skip(1) {
        if l > base {
            size = size.saturating_mul(mult);
        }
        // Levels above the base get the base target (they are empty); none is set below
        // the base maximum, so the tree never narrows below L0.
        *target = size.max(base_max);
    }
    (base, targets)
}

/// RocksDB's implicit iterator readahead over one file (BlockPrefetcher): block reads that
/// follow each other count up; past `auto_readahead_after` of them a read fetches the block
/// and what follows it up to the readahead size, which doubles each time up to its maximum;
/// a read out of sequence starts over.
struct Readahead {
    /// Bytes [start, end) of the file already in the prefetch buffer.
    buffered: (u64, u64),
    /// End of the last block read, to tell a sequential read.
    next_offset: Option<u64>,
    sequential_reads: u32,
    size: u64,
}

impl Readahead {
    fn new(opts: &DbOptions) -> Self {
        Readahead {
            buffered: (0, 0),
            next_offset: None,
            sequential_reads: 0,
            size: opts.initial_auto_readahead_size,
        }
    }

    /// The device read (length from `offset`) a block of `len` bytes at `offset` needs, or
    /// None when the prefetch buffer holds it.
    fn read_for(&mut self, offset: u64, len: u64, opts: &DbOptions) -> Option<u64> {
        let end = offset + len;
        let sequential = self.next_offset == Some(offset);
        self.next_offset = Some(end);
        if self.buffered.0 <= offset && end <= self.buffered.1 {
            return None;
        }
        if !sequential {
            self.sequential_reads = 0;
            self.size = opts.initial_auto_readahead_size;
        }
        self.sequential_reads += 1;
        if self.sequential_reads <= opts.auto_readahead_after || self.size == 0 {
            return Some(len);
        }
        let read = len.max(self.size);
        self.buffered = (offset, offset + read);
        self.size = (self.size * 2).min(opts.max_auto_readahead_size);
        Some(read)
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

/// A scan's source of SST entries in key order: one L0 table, or a sorted level whose next
/// file is opened only when the merge reaches it (RocksDB's LevelIterator). A scan thus
/// decodes, and charges reads for, the blocks it returns, not the first block of every file
/// past its start.
struct SstSource<'a> {
    files: std::slice::IterMut<'a, Sst>,
    current: Option<(u64, TableCursor<'a>)>,
    target: &'a [u8],
    /// Data blocks decoded, by table number, in order.
    blocks_read: Vec<(u64, BlockRead)>,
}

impl<'a> SstSource<'a> {
    fn new(files: &'a mut [Sst], target: &'a [u8]) -> Self {
        SstSource {
            files: files.iter_mut(),
            current: None,
            target,
            blocks_read: Vec::new(),
        }
    }

    fn next_entry(&mut self) -> Result<Option<sst::Entry>, FormatError> {
        loop {
            if let Some((number, c)) = &mut self.current {
                if let Some(e) = c.next_entry()? {
                    return Ok(Some(e));
                }
                let number = *number;
                self.blocks_read
                    .extend(c.blocks_read.drain(..).map(|h| (number, h)));
                self.current = None;
            }
            let Some(f) = self.files.next() else {
                return Ok(None);
            };
            self.current = Some((f.number, f.table.cursor(self.target)?));
        }
    }

    fn into_blocks_read(mut self) -> Vec<(u64, BlockRead)> {
        if let Some((number, c)) = self.current.take() {
            self.blocks_read
                .extend(c.blocks_read.into_iter().map(|h| (number, h)));
        }
        self.blocks_read
    }
}

/// A file an edit adds: level, number, size, smallest and largest user key.
type NewFile = (u32, u64, u64, Vec<u8>, Vec<u8>);

/// What a MANIFEST records (RocksDB's VersionEdit, own tags).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Edit {
    log_number: Option<u64>,
    next_file: Option<u64>,
    last_seq: Option<u64>,
    added: Vec<NewFile>,
    deleted: Vec<(u32, u64)>,
}

impl Edit {
    fn encode(&self) -> Vec<u8> {
        let mut b = Vec::new();
        let mut field = |tag: u64, v: u64| {
            put_varint(&mut b, tag);
            put_varint(&mut b, v);
        };
        if let Some(v) = self.log_number {
            field(2, v);
        }
        if let Some(v) = self.next_file {
            field(3, v);
        }
        if let Some(v) = self.last_seq {
            field(4, v);
        }
        for &(level, number) in &self.deleted {
            put_varint(&mut b, 6);
            put_varint(&mut b, level as u64);
            put_varint(&mut b, number);
        }
        for (level, number, size, lo, hi) in &self.added {
            put_varint(&mut b, 7);
            put_varint(&mut b, *level as u64);
            put_varint(&mut b, *number);
            put_varint(&mut b, *size);
            put_varint(&mut b, lo.len() as u64);
            b.extend_from_slice(lo);
            put_varint(&mut b, hi.len() as u64);
            b.extend_from_slice(hi);
        }
        b
    }

    fn decode(b: &[u8]) -> Option<Edit> {
        let mut e = Edit::default();
        let mut at = 0;
        let v = |at: &mut usize| -> Option<u64> {
            let (x, n) = get_varint(b.get(*at..)?)?;
            *at += n;
            Some(x)
        };
        while at < b.len() {
            match v(&mut at)? {
                2 => e.log_number = Some(v(&mut at)?),
                3 => e.next_file = Some(v(&mut at)?),
                4 => e.last_seq = Some(v(&mut at)?),
                6 => {
                    let level = u32::try_from(v(&mut at)?).ok()?;
                    e.deleted.push((level, v(&mut at)?));
                }
                7 => {
                    let level = u32::try_from(v(&mut at)?).ok()?;
                    let (number, size) = (v(&mut at)?, v(&mut at)?);
                    let bytes = |at: &mut usize| -> Option<Vec<u8>> {
                        let n = usize::try_from(v(at)?).ok()?;
                        let s = b.get(*at..at.checked_add(n)?)?.to_vec();
                        *at += n;
                        Some(s)
                    };
                    let lo = bytes(&mut at)?;
                    let hi = bytes(&mut at)?;
                    e.added.push((level, number, size, lo, hi));
                }
                _ => return None,
            }
        }
        Some(e)
    }
}

struct State {
    mem: MemTable,
    /// The memtable being flushed in the background, and the WAL that holds its writes.
    imm: Option<Rc<MemTable>>,
    imm_wal: Option<u64>,
    /// levels[0] newest first (files may overlap); levels[1..] sorted by smallest key, disjoint.
    levels: Vec<Vec<Sst>>,
    next_file: u64,
    last_seq: u64,
    wal_number: u64,
    wal: FileWriter,
    wal_log: LogWriter,
    manifest: FileWriter,
    manifest_log: LogWriter,
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
    /// Blocks the tables decompressed, kept for the emulator's speed (as much as the block
    /// cache holds); no figure depends on it.
    decoded: SharedDecodedBlocks,
    st: Mutex<State>,
    stats: std::cell::RefCell<DbStats>,
    /// The background flush and compaction workers are running (RocksDB's max_background_jobs
    /// 2: one flush thread, one compaction thread).
    flush_running: std::cell::Cell<bool>,
    compact_running: std::cell::Cell<bool>,
    /// Woken after every background job: stalled writers and waiters re-check.
    progress: Notify,
    bg_error: std::cell::RefCell<Option<String>>,
    /// Tables a lookup or scan is reading from the device, and how many read each.
    pins: std::cell::RefCell<BTreeMap<u64, u32>>,
    /// Tables a compaction retired, deleted once no lookup or scan reads them.
    doomed: std::cell::RefCell<BTreeSet<u64>>,
    /// The buffer a scan's CCZNS prefetch reads into (~1 MB), kept between prefetches: a
    /// fresh one cost its page faults every time. A prefetch beside another takes a new one.
    prefetch_buf: std::cell::RefCell<Vec<u8>>,
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

async fn read_file(fs: &ZoneFs, name: &str) -> Result<Vec<u8>, FsError> {
    let mut buf = vec![0u8; fs.size(name)? as usize];
    let n = fs.read(name, 0, &mut buf).await?;
    buf.truncate(n);
    Ok(buf)
}

/// Bytes `[from, to)` of a file, by plain reads.
async fn read_range(fs: &ZoneFs, name: &str, from: u64, to: u64) -> Result<Vec<u8>, DbError> {
    let mut buf = vec![0u8; to.saturating_sub(from) as usize];
    let n = fs.read(name, from, &mut buf).await?;
    if n != buf.len() {
        return Err(DbError::Corrupt(format!(
            "{name}: shorter than its handles say"
        )));
    }
    Ok(buf)
}

/// Read a table from the device: a plain one whole; a CCZNS one's tail by plain reads (the
/// footer, metaindex and properties first, to learn where its data region ends), then its
/// data region by multi-chunk decompressed reads.
async fn read_table(fs: &ZoneFs, name: &str) -> Result<Table, DbError> {
    let size = fs.size(name)?;
    let end = read_range(fs, name, size.saturating_sub(sst::FOOTER_BYTES), size).await?;
    let (meta_h, _) = sst::footer_handles(&end)?;
    let meta_at = meta_h.offset.min(size);
    let mut tail = read_range(fs, name, meta_at, size).await?;
    // Each read extends the tail downwards: properties, then (CCZNS) back to the region's end.
    let from = sst::properties_handle(&tail, meta_at)?.map_or(meta_at, |h| h.offset.min(meta_at));
    prepend(&mut tail, read_range(fs, name, from, meta_at).await?);
    let Some(region) = sst::cc_region(&tail, from)? else {
        return Ok(Table::open(read_file(fs, name).await?)?);
    };
    prepend(
        &mut tail,
        read_range(fs, name, region.min(from), from).await?,
    );
    let chunks = sst::cc_chunks(&tail, region)?;
    let mut blocks = Vec::new();
    dr_region(fs, name, &chunks, u64::MAX, true, true, &mut blocks).await?;
    Ok(Table::open_cc(tail, region, blocks)?)
}

/// A new table that keeps its decoded blocks in the store's `decoded`.
fn shared(mut table: Table, decoded: &SharedDecodedBlocks) -> Table {
    table.share_decoded(decoded);
    table
}

/// Issue the compressed writes a CCZNS table's builder has ready, handing the device's stored
/// sizes back to it.
async fn issue_cws(w: &mut FileWriter, b: &mut TableBuilder) -> Result<(), DbError> {
    for cw in b.take_cws() {
        let post = w.append_compressed(&cw.data, &cw.chunk_sizes).await?;
        b.cc_written(&post);
    }
    Ok(())
}

fn prepend(tail: &mut Vec<u8>, mut head: Vec<u8>) {
    head.extend_from_slice(tail);
    *tail = head;
}

/// One decompressed read of `chunks` (consecutive; multi-chunk when more than one), appended
/// to `out` and checked against the sizes the index names.
async fn dr_chunks(
    fs: &ZoneFs,
    name: &str,
    chunks: &[CcChunk],
    out: &mut Vec<u8>,
) -> Result<(), DbError> {
    let (first, last) = (chunks[0], chunks[chunks.len() - 1]);
    let stored = last.offset + last.post as u64 - first.offset;
    let raw: u64 = chunks.iter().map(|c| c.pre as u64).sum();
    let got = fs
        .decompressed_read(name, first.offset, stored, chunks.len() > 1, raw, out)
        .await?;
    check_chunks(name, chunks, &got)
}

/// A CCZNS table's whole data region by decompressed reads of up to `max_stored` compressed
/// bytes each (single-chunk reads when `multi` is off), into `out` (kept whole, or only the
/// last read's when not `keep`).
async fn dr_region(
    fs: &ZoneFs,
    name: &str,
    chunks: &[CcChunk],
    max_stored: u64,
    multi: bool,
    keep: bool,
    out: &mut Vec<u8>,
) -> Result<(), DbError> {
    let (mdts, block) = (fs.io().max_transfer_bytes(), fs.io().lba_bytes());
    let mut i = 0;
    while i < chunks.len() {
        let end = if multi {
            dr_span(chunks, i, max_stored, mdts, block)
        } else {
            i + 1
        };
        if !keep {
            out.clear();
        }
        dr_chunks(fs, name, &chunks[i..end], out).await?;
        i = end;
    }
    Ok(())
}

/// The tables one lookup reads from the device after releasing the store's lock: counted in
/// `Inner::pins` while it lives, so a compaction does not delete them under it.
struct FilePins<'a> {
    pins: &'a std::cell::RefCell<BTreeMap<u64, u32>>,
    files: Vec<u64>,
}

impl<'a> FilePins<'a> {
    fn new(
        pins: &'a std::cell::RefCell<BTreeMap<u64, u32>>,
        files: impl Iterator<Item = u64>,
    ) -> FilePins<'a> {
        let files: Vec<u64> = files.collect();
        let mut p = pins.borrow_mut();
        for &f in &files {
            *p.entry(f).or_default() += 1;
        }
        drop(p);
        FilePins { pins, files }
    }
}

impl Drop for FilePins<'_> {
    fn drop(&mut self) {
        let mut p = self.pins.borrow_mut();
        for f in &self.files {
            if let Some(n) = p.get_mut(f) {
                *n -= 1;
                if *n == 0 {
                    p.remove(f);
                }
            }
        }
    }
}

/// The bytes a decompressed read at `offset` returned are the table's own chunks there
/// (`expected`: [`Table::cc_bytes`] at `offset`, as long as what came back).
fn check_bytes(
    expected: Option<&[u8]>,
    name: &str,
    offset: u64,
    bytes: &[u8],
) -> Result<(), DbError> {
    if expected == Some(bytes) {
        Ok(())
    } else {
        Err(DbError::Corrupt(format!(
            "{name}: the decompressed read at {offset} returned other bytes than were written"
        )))
    }
}

/// A DR returned exactly the chunks the index names, with their sizes.
fn check_chunks(name: &str, want: &[CcChunk], got: &[(u32, u32)]) -> Result<(), DbError> {
    let same = want.len() == got.len()
        && want
            .iter()
            .zip(got)
            .all(|(w, &(pre, post))| w.pre == pre && w.post == post);
    if same {
        Ok(())
    } else {
        Err(DbError::Corrupt(format!(
            "{name}: a decompressed read at {} returned {} chunks, the index names {}",
            want.first().map_or(0, |c| c.offset),
            got.len(),
            want.len()
        )))
    }
}

impl Db {
    /// Open the store on `fs`, creating it if the file system holds none.
    pub async fn open(fs: Rc<ZoneFs>, opts: DbOptions) -> Result<Db, DbError> {
        // The MANIFEST, a flush output and a compaction output hold zones at once (besides
        // the WAL): with fewer open zones for them the workers would wait on each other.
        let limit = fs.open_file_limit(false);
        if limit < 3 {
            return Err(DbError::Fs(FsError::Invalid(format!(
                "the store needs 3 files open for writing besides its WAL (MANIFEST, flush, \
                 compaction); zonefs on this device allows {limit}: give the device at least \
                 6 open and 5 active zones"
            ))));
        }
        let mut opts = opts;
        if let Some(e) = &opts.compression_engine {
            if codec::profile::by_name(e).is_none() {
                return Err(DbError::Fs(FsError::Invalid(format!(
                    "compression engine {e:?}: no such profile (znslab devices lists them)"
                ))));
            }
        }
        if let Some(cc) = &opts.cc {
            // The device compresses; the host writes blocks raw.
            opts.table.codec = codec::Codec::None;
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
    async fn open(fs: Rc<ZoneFs>, opts: DbOptions) -> Result<Inner, DbError> {
        let names = fs.list();
        // The newest MANIFEST whose edits decode (an older one may survive a crash that
        // happened while its successor was being written; the successor then lacks nothing
        // the older one had, or it would not have been synced).
        let mut manifests: Vec<u64> = names
            .iter()
            .filter_map(|n| number_of(n, "MANIFEST-", ""))
            .collect();
        manifests.sort_unstable_by(|a, b| b.cmp(a));
        let mut edits = None;
        for m in &manifests {
            let bytes = read_file(&fs, &manifest_name(*m)).await?;
            let Ok(log) = read_log(&bytes) else { continue };
            let decoded: Option<Vec<Edit>> = log.records.iter().map(|r| Edit::decode(r)).collect();
            if let Some(list) = decoded.filter(|l| !l.is_empty()) {
                edits = Some(list);
                break;
            }
        }
        let (mut log_number, mut next_file, mut last_seq) = (0u64, 2u64, 0u64);
        let mut files: Vec<NewFile> = Vec::new();
        for e in edits.iter().flatten() {
            log_number = e.log_number.unwrap_or(log_number);
            next_file = e.next_file.unwrap_or(next_file);
            last_seq = e.last_seq.unwrap_or(last_seq);
            files.retain(|f| !e.deleted.iter().any(|d| d.1 == f.1));
            files.extend(e.added.iter().cloned());
        }
        let mut levels: Vec<Vec<Sst>> = (0..opts.num_levels.max(2)).map(|_| Vec::new()).collect();
        let live: Vec<u64> = files.iter().map(|f| f.1).collect();
        let decoded =
            DecodedBlocks::shared(usize::try_from(opts.block_cache_bytes).unwrap_or(usize::MAX));
        for (level, number, size, smallest, largest) in files {
            let table = shared(read_table(&fs, &sst_name(number)).await?, &decoded);
            let l = levels
                .get_mut(level as usize)
                .ok_or_else(|| DbError::Corrupt(format!("MANIFEST: level {level}")))?;
            l.push(Sst {
                number,
                size,
                shape: (0, 0, 0),
                smallest,
                largest,
                table,
            });
        }
        // Tables no version names: a flush or compaction cut short by a crash (RocksDB
        // deletes such obsolete files at open).
        for n in names.iter().filter_map(|n| number_of(n, "", ".sst")) {
            if !live.contains(&n) {
                fs.delete(&sst_name(n)).await?;
            }
        }
        levels[0].sort_by_key(|f| std::cmp::Reverse(f.number));
        for l in &mut levels[1..] {
            l.sort_by(|a, b| a.smallest.cmp(&b.smallest));
        }
        // WALs still needed: replay into a memtable.
        let mut wals: Vec<u64> = names
            .iter()
            .filter_map(|n| number_of(n, "", ".log"))
            .filter(|&n| n >= log_number)
            .collect();
        wals.sort_unstable();
        let mut mem = MemTable::default();
        for w in &wals {
            let log = read_log(&read_file(&fs, &wal_name(*w)).await?)?;
            for rec in &log.records {
                let (seq, batch) = WriteBatch::decode(rec)
                    .ok_or_else(|| DbError::Corrupt(format!("write batch in {}", wal_name(*w))))?;
                for (i, (t, k, v)) in batch.ops.iter().enumerate() {
                    mem.insert(k, seq + i as u64, *t, v);
                }
                last_seq = last_seq.max(seq + batch.ops.len() as u64 - 1);
            }
            next_file = next_file.max(w + 1);
        }
        next_file = next_file.max(manifests.first().map_or(0, |m| m + 1));
        let mut edit = Edit::default();
        // What the WALs held goes to L0 now (RocksDB flushes during recovery by default).
        if !mem.is_empty() {
            let number = next_file;
            next_file += 1;
            let sst = Self::write_sst(&fs, &opts, &decoded, &mem, number).await?;
            edit.added.push((
                0,
                sst.number,
                sst.size,
                sst.smallest.clone(),
                sst.largest.clone(),
            ));
            levels[0].insert(0, sst);
        }
        let wal_number = next_file;
        let manifest_number = next_file + 1;
        next_file += 2;
        let wal = fs.writer(&wal_name(wal_number), Lifetime::Short).await?;
        let mut manifest = fs
            .writer(&manifest_name(manifest_number), Lifetime::NotSet)
            .await?;
        // The new MANIFEST starts with a snapshot of the whole version.
        let snapshot = Edit {
            log_number: Some(wal_number),
            next_file: Some(next_file),
            last_seq: Some(last_seq),
            added: levels
                .iter()
                .enumerate()
                .flat_map(|(l, files)| {
                    files.iter().map(move |s| {
                        (
                            l as u32,
                            s.number,
                            s.size,
                            s.smallest.clone(),
                            s.largest.clone(),
                        )
                    })
                })
                .collect(),
            deleted: Vec::new(),
        };
        let mut manifest_log = LogWriter::default();
        let mut buf = Vec::new();
        manifest_log.add(&snapshot.encode(), &mut buf);
        manifest.append(&buf).await?;
        manifest.sync().await?;
        // Only now is the old state obsolete.
        for m in manifests {
            fs.delete(&manifest_name(m)).await?;
        }
        for w in wals {
            fs.delete(&wal_name(w)).await?;
        }
        let stats = DbStats {
            last_sequence: last_seq,
            ..DbStats::default()
        };
        let db = Inner {
            fs,
            cache: std::cell::RefCell::new(super::cache::BlockCache::new(opts.block_cache_bytes)),
            decoded,
            opts,
            flush_running: std::cell::Cell::new(false),
            compact_running: std::cell::Cell::new(false),
            progress: Notify::new(),
            bg_error: std::cell::RefCell::new(None),
            pins: Default::default(),
            doomed: Default::default(),
            prefetch_buf: Default::default(),
            st: Mutex::new(State {
                mem: MemTable::default(),
                imm: None,
                imm_wal: None,
                levels,
                next_file,
                last_seq,
                wal_number,
                wal,
                wal_log: LogWriter::default(),
                manifest,
                manifest_log,
            }),
            stats: std::cell::RefCell::new(stats),
        };
        db.update_level_stats(&*db.st.lock().await);
        Ok(db)
    }

    async fn write_sst(
        fs: &Rc<ZoneFs>,
        opts: &DbOptions,
        decoded: &SharedDecodedBlocks,
        mem: &MemTable,
        number: u64,
    ) -> Result<Sst, DbError> {
        let entries: Vec<(Vec<u8>, &[u8])> = mem.entries().collect();
        Self::write_table(
            fs,
            opts,
            decoded,
            entries.iter().map(|(k, v)| (k.as_slice(), *v)),
            number,
            Lifetime::Medium,
        )
        .await
    }

    /// Write entries (internal keys in order) as SST `number`.
    async fn write_table<'a>(
        fs: &Rc<ZoneFs>,
        opts: &DbOptions,
        decoded: &SharedDecodedBlocks,
        entries: impl Iterator<Item = (&'a [u8], &'a [u8])>,
        number: u64,
        lifetime: Lifetime,
    ) -> Result<Sst, DbError> {
        let mut b = TableBuilder::new(opts.table.clone());
        let mut smallest = None;
        let mut largest = Vec::new();
        if opts.table.cc_write_buffer.is_none() {
            for (k, v) in entries {
                b.add(k, v)?;
                let uk = key::user_key(k).to_vec();
                smallest.get_or_insert_with(|| uk.clone());
                largest = uk;
            }
            let (bytes, props) = b.finish();
            let mut w = fs.writer(&sst_name(number), lifetime).await?;
            w.append(&bytes).await?;
            w.close().await?;
            return Ok(Sst {
                number,
                size: props.file_bytes,
                shape: (props.entries, props.data_raw_bytes, props.data_blocks),
                smallest: smallest.unwrap_or_default(),
                largest,
                table: shared(Table::open(bytes)?, decoded),
            });
        }
        // CCZNS: data blocks leave in compressed writes as the write buffer fills; the index
        // is built from the sizes the device reported and written after them (plain).
        let mut w = fs.writer(&sst_name(number), lifetime).await?;
        for (k, v) in entries {
            b.add(k, v)?;
            let uk = key::user_key(k).to_vec();
            smallest.get_or_insert_with(|| uk.clone());
            largest = uk;
            issue_cws(&mut w, &mut b).await?;
        }
        b.finish_data()?;
        issue_cws(&mut w, &mut b).await?;
        let (tail, props, blocks) = b.finish_cc()?;
        w.append(&tail).await?;
        w.close().await?;
        Ok(Sst {
            number,
            size: props.file_bytes,
            shape: (props.entries, props.data_raw_bytes, props.data_blocks),
            smallest: smallest.unwrap_or_default(),
            largest,
            table: shared(Table::open_cc(tail, props.data_bytes, blocks)?, decoded),
        })
    }

    /// Delete the tables compactions retired that no lookup is reading any more.
    async fn delete_retired_tables(&self) -> Result<(), DbError> {
        let free: Vec<u64> = {
            let pins = self.pins.borrow();
            let doomed = self.doomed.borrow();
            doomed
                .iter()
                .copied()
                .filter(|n| !pins.contains_key(n))
                .collect()
        };
        for n in free {
            // Taken out first: another task may get here while this one awaits the delete.
            if self.doomed.borrow_mut().remove(&n) {
                self.fs.delete(&sst_name(n)).await?;
            }
        }
        Ok(())
    }

    fn check_bg(&self) -> Result<(), DbError> {
        match &*self.bg_error.borrow() {
            Some(e) => Err(DbError::Stopped(e.clone())),
            None => Ok(()),
        }
    }

    async fn write(
        self: &Rc<Self>,
        batch: &WriteBatch,
        sync: bool,
    ) -> Result<Option<u64>, DbError> {
        if batch.ops.is_empty() {
            return Ok(None);
        }
        self.cpu(self.opts.cpu.write_ns * batch.ops.len() as u64)
            .await;
        // Stalls: a full memtable while the previous one is still flushing, or L0 at its stop
        // trigger, hold the writer until background work makes room (RocksDB's write stalls).
        let mut st = loop {
            let mut st = self.st.lock().await;
            // Checked holding the lock: a writer queued behind one whose WAL write failed must
            // not append after it (the log writer's framing has moved past the lost record).
            self.check_bg()?;
            let t0 = self.fs.io().sim().now();
            if st.mem.bytes() >= self.opts.write_buffer_size {
                if st.imm.is_some() {
                    drop(st);
                    self.progress.notified().await;
                    let waited = self.fs.io().sim().now().since(t0).as_ns();
                    self.stats.borrow_mut().stall_memtable_ns += waited;
                    continue;
                }
                if let Err(e) = self.switch_memtable(&mut st).await {
                    return Err(self.failed_write("starting a new WAL", e));
                }
                self.schedule();
            }
            if st.levels[0].len() >= self.opts.level0_stop && self.bg_running() {
                drop(st);
                self.progress.notified().await;
                let waited = self.fs.io().sim().now().since(t0).as_ns();
                self.stats.borrow_mut().stall_l0_ns += waited;
                continue;
            }
            break st;
        };
        let seq = st.last_seq + 1;
        let mut rec = Vec::new();
        let encoded = batch.encode(seq);
        st.wal_log.add(&encoded, &mut rec);
        // The log writer has framed the record into its block: a record the WAL did not
        // take would leave the framing of every later one wrong (RocksDB stops writes too).
        if let Err(e) = st.wal.append(&rec).await {
            return Err(self.failed_write("a WAL write", e.into()));
        }
        if sync {
            if let Err(e) = st.wal.sync().await {
                return Err(self.failed_write("a WAL sync", e.into()));
            }
        }
        for (i, (t, k, v)) in batch.ops.iter().enumerate() {
            st.mem.insert(k, seq + i as u64, *t, v);
        }
        st.last_seq = seq + batch.ops.len() as u64 - 1;
        let slowed = st.levels[0].len() >= self.opts.level0_slowdown;
        {
            let mut s = self.stats.borrow_mut();
            s.writes += 1;
            s.wal_bytes += rec.len() as u64;
            s.last_sequence = st.last_seq;
            s.memtable_bytes = st.mem.bytes() + st.imm.as_ref().map_or(0, |m| m.bytes());
        }
        drop(st);
        if slowed {
            // Held to delayed_write_rate while L0 is past the slowdown trigger.
            let ns = encoded.len() as u64 * 1_000_000_000 / self.opts.delayed_write_rate.max(1);
            self.stats.borrow_mut().slowdown_ns += ns;
            let sim = self.fs.io().sim().clone();
            sim.sleep(SimDuration::from_ns(ns)).await;
        }
        Ok(Some(seq))
    }

    /// The memtable becomes immutable (to be flushed) and writes go to a new one and a new WAL.
    async fn switch_memtable(&self, st: &mut State) -> Result<(), DbError> {
        let wal_number = st.next_file;
        st.next_file += 1;
        let new_wal = self
            .fs
            .writer(&wal_name(wal_number), Lifetime::Short)
            .await?;
        let old_wal = std::mem::replace(&mut st.wal, new_wal);
        old_wal.close().await?;
        st.imm_wal = Some(st.wal_number);
        st.wal_number = wal_number;
        st.wal_log = LogWriter::default();
        st.imm = Some(Rc::new(std::mem::take(&mut st.mem)));
        self.stats.borrow_mut().memtable_bytes = st.imm.as_ref().map_or(0, |m| m.bytes());
        Ok(())
    }

    fn bg_running(&self) -> bool {
        self.flush_running.get() || self.compact_running.get()
    }

    /// Start the flush worker and the compaction worker unless they run.
    fn schedule(self: &Rc<Self>) {
        if !self.flush_running.get() {
            self.flush_running.set(true);
            let me = self.clone();
            self.fs.io().sim().spawn(async move { me.flusher().await });
        }
        self.schedule_compaction();
    }

    fn schedule_compaction(self: &Rc<Self>) {
        if !self.compact_running.get() {
            self.compact_running.set(true);
            let me = self.clone();
            self.fs
                .io()
                .sim()
                .spawn(async move { me.compactor().await });
        }
    }

    /// A background job failed: writes stop.
    fn failed(&self, e: DbError) {
        let mut slot = self.bg_error.borrow_mut();
        if slot.is_none() {
            *slot = Some(format!("a background job failed: {e}"));
        }
    }

    /// Write a version edit to the MANIFEST, unless an earlier failure stopped the store: then
    /// the durable version must stay as it is. An edit whose write or sync fails may be durable
    /// all the same (the file system may hold it), while the version in memory lacks it; edits
    /// made after it from that version could contradict it (torture seed 768: a compaction
    /// output landed beside an overlapping table of the ghost edit, and reads found the older
    /// one), so the failure stops the store at once.
    async fn log_edit(&self, st: &mut State, edit: &Edit) -> Result<(), DbError> {
        self.check_bg()?;
        let mut rec = Vec::new();
        st.manifest_log.add(&edit.encode(), &mut rec);
        let wrote = match st.manifest.append(&rec).await {
            Ok(()) => st.manifest.sync().await,
            Err(e) => Err(e),
        };
        wrote.map_err(|e| self.failed_write("a MANIFEST write", e.into()))
    }

    /// A write's own I/O failed: this write fails with `e`, and later writes stop.
    fn failed_write(&self, what: &str, e: DbError) -> DbError {
        let mut slot = self.bg_error.borrow_mut();
        if slot.is_none() {
            *slot = Some(format!("{what} failed: {e}"));
        }
        e
    }

    /// Flush immutable memtables as they come; each new L0 file may call for compaction.
    async fn flusher(self: Rc<Self>) {
        loop {
            let imm = self.st.lock().await.imm.clone();
            let Some(imm) = imm else { break };
            if let Err(e) = self.flush_imm(imm).await {
                self.failed(e);
                break;
            }
            self.progress.notify_waiters();
            self.schedule_compaction();
        }
        self.flush_running.set(false);
        self.progress.notify_waiters();
    }

    /// Compact while some level's score is ≥ 1, running beside the flusher.
    async fn compactor(self: Rc<Self>) {
        while let Some(level) = self.pick_compaction().await {
            if let Err(e) = self.compact_level(level).await {
                self.failed(e);
                break;
            }
            self.progress.notify_waiters();
        }
        self.compact_running.set(false);
        self.progress.notify_waiters();
    }

    async fn wait_idle(&self) -> Result<(), DbError> {
        while self.bg_running() {
            self.progress.notified().await;
        }
        self.check_bg()
    }

    async fn flush(self: &Rc<Self>) -> Result<(), DbError> {
        loop {
            self.wait_idle().await?;
            let mut st = self.st.lock().await;
            if st.mem.is_empty() {
                return Ok(());
            }
            if st.imm.is_none() {
                self.switch_memtable(&mut st).await?;
                drop(st);
                self.schedule();
            }
        }
    }

    /// Write the immutable memtable as an L0 SST and make it part of the version.
    async fn flush_imm(&self, imm: Rc<MemTable>) -> Result<(), DbError> {
        let number = {
            let mut st = self.st.lock().await;
            st.next_file += 1;
            st.next_file - 1
        };
        let sst = Self::write_sst(&self.fs, &self.opts, &self.decoded, &imm, number).await?;
        let (e, raw, blocks) = sst.shape;
        self.build_cpu(0, &[(e, raw, blocks)]).await;
        let mut st = self.st.lock().await;
        // The edit makes the immutable memtable's WAL obsolete: the live WAL is the oldest
        // one recovery needs now.
        let edit = Edit {
            log_number: Some(st.wal_number),
            next_file: Some(st.next_file),
            last_seq: Some(st.last_seq),
            added: vec![(
                0,
                sst.number,
                sst.size,
                sst.smallest.clone(),
                sst.largest.clone(),
            )],
            deleted: Vec::new(),
        };
        self.log_edit(&mut st, &edit).await?;
        {
            let mut s = self.stats.borrow_mut();
            s.flushes += 1;
            s.flushed_bytes += sst.size;
        }
        st.levels[0].insert(0, sst);
        st.imm = None;
        if let Some(old) = st.imm_wal.take() {
            self.fs.delete(&wal_name(old)).await?;
        }
        self.update_level_stats(&st);
        Ok(())
    }

    fn update_level_stats(&self, st: &State) {
        let mut s = self.stats.borrow_mut();
        s.memtable_bytes = st.mem.bytes() + st.imm.as_ref().map_or(0, |m| m.bytes());
        s.index_filter_bytes = st
            .levels
            .iter()
            .flatten()
            .map(|f| f.table.index_and_filter_bytes())
            .sum();
        s.l0_files = st.levels[0].len();
        s.level_files = st.levels.iter().map(Vec::len).collect();
        s.level_bytes = level_sizes(st);
    }

    /// The level L0 compacts into and the target size of each level (index 0 unused).
    fn level_targets(&self, st: &State) -> (usize, Vec<u64>) {
        level_targets(&self.opts, &level_sizes(st))
    }

    /// The level to compact next: the highest score ≥ 1, as RocksDB 8.x's
    /// `ComputeCompactionScore` for leveled compaction. L0: file count over the trigger; with
    /// static sizes also bytes over the base target; with dynamic sizes at least 1.01 once L0
    /// holds the base target, and L0 over the base level's size when it outgrows it, scaled
    /// by 10 above 1. Deeper levels: bytes over their target; with dynamic sizes, a level at
    /// or over its target divides by its target plus the bytes bound to come down from above
    /// and scales by 10, so a level with much incoming data waits for it.
    async fn pick_compaction(&self) -> Option<usize> {
        const SCORE_SCALE: f64 = 10.0;
        let st = self.st.lock().await;
        let n = st.levels.len();
        let sizes = level_sizes(&st);
        let (base, targets) = level_targets(&self.opts, &sizes);
        let dynamic = self.opts.level_compaction_dynamic_level_bytes;
        let base_target = self.opts.max_bytes_for_level_base.max(1);
        let mut downcompact = 0f64;
        let mut best: Option<(f64, usize)> = None;
        for l in 0..n - 1 {
            let score = if l == 0 {
                let mut score = st.levels[0].len() as f64 / self.opts.level0_trigger.max(1) as f64;
                if !dynamic {
                    score = score.max(sizes[0] as f64 / base_target as f64);
                } else {
                    if sizes[0] >= base_target {
                        score = score.max(1.01);
                    }
                    if sizes[0] > targets[base] {
                        score = score.max(sizes[0] as f64 / sizes[base].max(targets[base]) as f64);
                    }
                    if score > 1.0 {
                        score *= SCORE_SCALE;
                    }
                }
                downcompact += sizes[0] as f64;
                score
            } else if !dynamic || sizes[l] < targets[l] {
                sizes[l] as f64 / targets[l].max(1) as f64
            } else {
                let score = sizes[l] as f64 / (targets[l] as f64 + downcompact) * SCORE_SCALE;
                downcompact += (sizes[l] - targets[l]) as f64;
                score
            };
            if score >= 1.0 && best.is_none_or(|(b, _)| score > b) {
                best = Some((score, l));
            }
        }
        best.map(|(_, l)| l)
    }

    /// One compaction from `level` into the next: all of L0 into the base level, or the file
    /// of `level` whose overlap with the level below is smallest relative to its size
    /// (kMinOverlappingRatio) into that level.
    async fn compact_level(&self, level: usize) -> Result<(), DbError> {
        // Inputs and the merge under the lock (CPU only; only this worker changes levels, so
        // they stay valid while the outputs are written without it).
        let mut guard = self.st.lock().await;
        let st = &mut *guard;
        let (base, _) = self.level_targets(st);
        let out_level = if level == 0 { base } else { level + 1 };
        let overlaps = |f: &Sst, lo: &[u8], hi: &[u8]| {
            !(f.largest.as_slice() < lo || f.smallest.as_slice() > hi)
        };
        let inputs: Vec<usize> = if level == 0 {
            (0..st.levels[0].len()).collect()
        } else {
            let next = &st.levels[out_level];
            let pick = (0..st.levels[level].len())
                .min_by_key(|&i| {
                    let f = &st.levels[level][i];
                    let o: u64 = next
                        .iter()
                        .filter(|g| overlaps(g, &f.smallest, &f.largest))
                        .map(|g| g.size)
                        .sum();
                    (o * 1024 / f.size.max(1), i)
                })
                .expect("a level with a score has files");
            vec![pick]
        };
        let lo = inputs
            .iter()
            .map(|&i| st.levels[level][i].smallest.clone())
            .min()
            .expect("inputs");
        let hi = inputs
            .iter()
            .map(|&i| st.levels[level][i].largest.clone())
            .max()
            .expect("inputs");
        let next_inputs: Vec<usize> = (0..st.levels[out_level].len())
            .filter(|&i| overlaps(&st.levels[out_level][i], &lo, &hi))
            .collect();
        // Trivial move (RocksDB's): one input file that overlaps nothing below changes level
        // in the MANIFEST only, without being rewritten.
        if inputs.len() == 1 && next_inputs.is_empty() {
            let f = st.levels[level].remove(inputs[0]);
            let edit = Edit {
                added: vec![(
                    level as u32 + 1,
                    f.number,
                    f.size,
                    f.smallest.clone(),
                    f.largest.clone(),
                )],
                deleted: vec![(level as u32, f.number)],
                ..Edit::default()
            };
            self.log_edit(st, &edit).await?;
            let next = &mut st.levels[out_level];
            next.push(f);
            next.sort_by(|a, b| a.smallest.cmp(&b.smallest));
            self.stats.borrow_mut().trivial_moves += 1;
            self.update_level_stats(st);
            return Ok(());
        }
        // Merge: newest version of each user key; deletions dropped when no deeper level can
        // hold an older version.
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut read = 0;
        // Raw bytes the inputs decompress to (a table loaded at open has no recorded shape:
        // its file size stands in, an underestimate by the compression ratio).
        let mut input_raw = 0;
        for (l, list) in [(level, &inputs), (out_level, &next_inputs)] {
            for &i in list.iter() {
                let f = &mut st.levels[l][i];
                read += f.size;
                input_raw += if f.shape.1 > 0 { f.shape.1 } else { f.size };
                entries.extend(f.table.entries()?);
            }
        }
        entries.sort_by(|a, b| key::compare(&a.0, &b.0));
        let deeper_overlap = |k: &[u8]| {
            st.levels[out_level + 1..]
                .iter()
                .flatten()
                .any(|f| f.smallest.as_slice() <= k && k <= f.largest.as_slice())
        };
        let mut kept: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(entries.len());
        // The last user key kept or dropped (one buffer, not one allocation per entry).
        let mut last_user: Vec<u8> = Vec::new();
        let mut any = false;
        for (k, v) in entries {
            let (uk, _, t) =
                key::parse(&k).ok_or_else(|| DbError::Corrupt("internal key in an SST".into()))?;
            if any && last_user == uk {
                continue; // an older version, shadowed
            }
            any = true;
            last_user.clear();
            last_user.extend_from_slice(uk);
            if t == ValueType::Deletion && !deeper_overlap(uk) {
                continue;
            }
            kept.push((k, v));
        }
        // Output files cut at the target size, with ZenFS lifetime hints by level
        // (RocksDB's CalculateSSTWriteHint: Medium up to the base level, then one step longer
        // per level below it).
        let lifetime = match out_level.saturating_sub(base) {
            0 => Lifetime::Medium,
            1 => Lifetime::Long,
            _ => Lifetime::Extreme,
        };
        let input_numbers: Vec<(u32, u64)> = inputs
            .iter()
            .map(|&i| (level as u32, st.levels[level][i].number))
            .chain(
                next_inputs
                    .iter()
                    .map(|&i| (out_level as u32, st.levels[out_level][i].number)),
            )
            .collect();
        // File numbers for the outputs, reserved now. Files are cut at the target *file* size,
        // as RocksDB cuts them: raw bytes scaled by the inputs' compression.
        let raw_target = (self.opts.target_file_size as u128 * input_raw.max(1) as u128
            / read.max(1) as u128) as u64;
        let mut cuts = Vec::new();
        let mut start = 0;
        while start < kept.len() {
            let mut end = start;
            let mut bytes = 0u64;
            while end < kept.len() && (bytes < raw_target || end == start) {
                bytes += (kept[end].0.len() + kept[end].1.len()) as u64;
                end += 1;
            }
            cuts.push((start, end, st.next_file));
            st.next_file += 1;
            start = end;
        }
        type InputFile = (u64, u64, Option<(u64, Vec<CcChunk>)>);
        let input_files: Vec<InputFile> = [(level, &inputs), (out_level, &next_inputs)]
            .into_iter()
            .flat_map(|(l, list)| list.iter().map(move |&i| (l, i)))
            .map(|(l, i)| {
                let f = &st.levels[l][i];
                let cc = f
                    .table
                    .cc_region()
                    .map(|r| (r, f.table.cc_chunks().to_vec()));
                (f.number, f.size, cc)
            })
            .collect();
        drop(guard);
        // The inputs come from the device, each read front to back in readahead-sized reads
        // (a CCZNS table's data region by decompressed reads, then its plain tail).
        let chunk = self.opts.compaction_readahead_size.max(4096);
        let mut buf = vec![0u8; chunk as usize];
        for (number, size, cc) in input_files {
            let name = sst_name(number);
            let mut off = 0;
            if let Some((region, chunks)) = cc {
                // As compaction reads: multi-chunk DRs up to its readahead.
                let multi = self.opts.cc.as_ref().is_none_or(|c| c.multi_chunk_dr);
                let max = self.opts.compaction_readahead_size;
                let mut buf = Vec::new();
                dr_region(&self.fs, &name, &chunks, max, multi, false, &mut buf).await?;
                off = region;
            }
            while off < size {
                let n = (size - off).min(chunk) as usize;
                self.fs.read(&name, off, &mut buf[..n]).await?;
                off += n as u64;
            }
        }
        let mut outputs = Vec::new();
        for (start, end, number) in cuts {
            let sst = Self::write_table(
                &self.fs,
                &self.opts,
                &self.decoded,
                kept[start..end]
                    .iter()
                    .map(|(k, v)| (k.as_slice(), v.as_slice())),
                number,
                lifetime,
            )
            .await?;
            outputs.push(sst);
        }
        let written: u64 = outputs.iter().map(|f| f.size).sum();
        // CPU: decompress the inputs' blocks, merge, compress the outputs' blocks.
        let decomp = cpu_profile_of(&self.opts).map_or(0, |p| {
            input_raw.div_ceil(4096) * p.decompress.latency_ns(4096)
        });
        let shapes: Vec<_> = outputs.iter().map(|f| f.shape).collect();
        self.build_cpu(decomp, &shapes).await;
        let mut guard = self.st.lock().await;
        let st = &mut *guard;
        // Log the edit, then install it and delete the inputs.
        let edit = Edit {
            next_file: Some(st.next_file),
            last_seq: Some(st.last_seq),
            added: outputs
                .iter()
                .map(|f| {
                    (
                        out_level as u32,
                        f.number,
                        f.size,
                        f.smallest.clone(),
                        f.largest.clone(),
                    )
                })
                .collect(),
            deleted: input_numbers.clone(),
            ..Edit::default()
        };
        self.log_edit(st, &edit).await?;
        // Remove the inputs by number: the flusher may have added L0 files meanwhile.
        let dead: Vec<u64> = input_numbers.iter().map(|&(_, n)| n).collect();
        for l in [level, out_level] {
            st.levels[l].retain(|f| !dead.contains(&f.number));
        }
        st.levels[out_level].extend(outputs);
        st.levels[out_level].sort_by(|a, b| a.smallest.cmp(&b.smallest));
        for n in dead {
            self.cache.borrow_mut().forget_file(n);
            self.doomed.borrow_mut().insert(n);
        }
        self.delete_retired_tables().await?;
        let mut s = self.stats.borrow_mut();
        s.compactions += 1;
        s.compaction_read_bytes += read;
        s.compaction_written_bytes += written;
        drop(s);
        self.update_level_stats(st);
        Ok(())
    }

    /// The value of `k`, if it exists: memtable, then L0 newest first, then one file per level.
    pub async fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, DbError> {
        self.cpu(self.opts.cpu.read_ns).await;
        let mut tables_read = 0u64;
        let result = self.get_locked(k, &mut tables_read).await;
        // Each table probed past its filter decompressed one data block.
        if let Some(p) = cpu_profile_of(&self.opts) {
            self.cpu(tables_read * p.decompress.latency_ns(4096)).await;
        }
        result
    }

    async fn get_locked(
        &self,
        k: &[u8],
        tables_read: &mut u64,
    ) -> Result<Option<Vec<u8>>, DbError> {
        // Under the lock, CPU only: the memtables, then each table's filter, index and block
        // (held in memory), and the block cache's verdict on each data block touched. The
        // device reads of the blocks the cache lacks come after the lock is released, as
        // RocksDB reads from a referenced version without its mutex: other readers, flushes and
        // compactions go on meanwhile, and the files read stay until the reads are done.
        let mut misses: Vec<(u64, BlockRead, Option<Rc<CcBlocks>>)> = Vec::new();
        let found = {
            let mut st = self.st.lock().await;
            let seq = st.last_seq;
            let mut found = st.mem.get(k, seq);
            if found.is_none() {
                found = st.imm.as_ref().and_then(|m| m.get(k, seq));
            }
            if found.is_none() {
                'levels: for (l, files) in st.levels.iter_mut().enumerate() {
                    for sst in files.iter_mut() {
                        if k < sst.smallest.as_slice() || k > sst.largest.as_slice() {
                            continue;
                        }
                        let hit = sst.table.get(k, seq)?;
                        // A cached block costs neither a device read nor a decompression.
                        if let Some(h) = sst.table.last_block() {
                            if !self.cache.borrow_mut().lookup(sst.number, h.offset) {
                                // CCZNS: what the DR returns must be the table's own block.
                                let cc = sst.table.cc_blocks().filter(|_| h.cc);
                                misses.push((sst.number, h, cc));
                            }
                        }
                        if let Some(h) = hit {
                            found = Some(h);
                            break 'levels;
                        }
                        if l > 0 {
                            break; // levels below L0 hold at most one file for a key
                        }
                    }
                }
            }
            found
        };
        let pins = FilePins::new(&self.pins, misses.iter().map(|m| m.0));
        for (number, h, cc) in misses {
            let name = sst_name(number);
            if let Some(cc) = cc {
                // CCZNS: a single-chunk DR sized by the block's raw size.
                let mut buf = Vec::new();
                self.fs
                    .decompressed_read(&name, h.offset, h.stored, false, h.raw, &mut buf)
                    .await?;
                check_bytes(cc.bytes(h.offset, h.raw), &name, h.offset, &buf)?;
            } else {
                *tables_read += 1;
                let mut buf = vec![0u8; h.stored as usize];
                self.fs.read(&name, h.offset, &mut buf).await?;
            }
            // A table a compaction retired meanwhile keeps no cached blocks.
            if !self.doomed.borrow().contains(&number) {
                self.cache
                    .borrow_mut()
                    .insert(number, h.offset, cache_charge(&h, &self.opts));
            }
        }
        // The last reader of a table a compaction retired meanwhile deletes it.
        if !pins.files.is_empty() {
            drop(pins);
            self.delete_retired_tables().await?;
        }
        Ok(match found {
            Some((ValueType::Value, v)) => Some(v),
            _ => None,
        })
    }

    /// Up to `limit` live keys ≥ `start` with their values, in key order.
    pub async fn scan(
        &self,
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        let out = self.scan_locked(start, limit).await?;
        // CPU of seeking each level and stepping through the entries returned (the blocks'
        // reads were timed by the scan).
        let levels = 1 + self
            .stats
            .borrow()
            .level_files
            .iter()
            .filter(|&&n| n > 0)
            .count() as u64;
        self.cpu(levels * self.opts.cpu.read_ns + out.len() as u64 * self.opts.cpu.merge_entry_ns)
            .await;
        Ok(out)
    }

    async fn scan_locked(
        &self,
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        // Under the lock, CPU only: the merge of the memtables and the tables' blocks (held
        // in memory). The device reads of the blocks it decoded come after the lock is
        // released, as a RocksDB iterator reads from a referenced version without the mutex
        // (see `get_locked`).
        let mut st = self.st.lock().await;
        let target = key::lookup_key(start, key::MAX_SEQUENCE);
        // Sources in internal-key order: the memtables (in memory) and a cursor per table
        // that reads blocks only as the merge reaches them.
        let mut out = Vec::new();
        let mut blocks: Vec<(u64, BlockRead)> = Vec::new();
        {
            let st = &mut *st;
            let mut cursors = Vec::new();
            for (l, files) in st.levels.iter_mut().enumerate() {
                if l == 0 {
                    // L0's tables overlap: each is a source of its own.
                    for f in files.iter_mut() {
                        if f.largest.as_slice() >= start {
                            cursors.push(SstSource::new(std::slice::from_mut(f), &target));
                        }
                    }
                } else {
                    // A sorted level: one source from the first file that can hold `start`.
                    let first = files.partition_point(|f| f.largest.as_slice() < start);
                    if first < files.len() {
                        cursors.push(SstSource::new(&mut files[first..], &target));
                    }
                }
            }
            // Memtable entries ≥ start, taken lazily from the ordered maps.
            type MemIter<'m> = Box<dyn Iterator<Item = (Vec<u8>, &'m [u8])> + 'm>;
            let mut mem_iters: Vec<MemIter<'_>> = vec![Box::new(st.mem.entries_from(start))];
            if let Some(imm) = &st.imm {
                mem_iters.push(Box::new(imm.entries_from(start)));
            }
            // Heads of every source; the smallest internal key goes next.
            let n_tables = cursors.len();
            let mut heads: Vec<Option<(Vec<u8>, Vec<u8>)>> = Vec::new();
            for c in cursors.iter_mut() {
                heads.push(c.next_entry()?);
            }
            for it in mem_iters.iter_mut() {
                heads.push(it.next().map(|(k, v)| (k, v.to_vec())));
            }
            let mut last: Option<Vec<u8>> = None;
            while out.len() < limit {
                let Some(min) =
                    (0..heads.len())
                        .filter(|&i| heads[i].is_some())
                        .min_by(|&a, &b| {
                            let (ka, kb) = (
                                &heads[a].as_ref().expect("some").0,
                                &heads[b].as_ref().expect("some").0,
                            );
                            key::compare(ka, kb)
                        })
                else {
                    break;
                };
                let (k, v) = heads[min].take().expect("some");
                heads[min] = if min < n_tables {
                    cursors[min].next_entry()?
                } else {
                    mem_iters[min - n_tables]
                        .next()
                        .map(|(k, v)| (k, v.to_vec()))
                };
                let (uk, _, t) =
                    key::parse(&k).ok_or_else(|| DbError::Corrupt("internal key".into()))?;
                if last.as_deref() == Some(uk) {
                    continue; // an older version
                }
                last = Some(uk.to_vec());
                if t == ValueType::Value {
                    out.push((uk.to_vec(), v));
                }
            }
            for c in cursors {
                blocks.extend(c.into_blocks_read());
            }
        }
        // CCZNS tables' chunks, to size the prefetches and check what they return.
        let mut cc_tables: BTreeMap<u64, Rc<CcBlocks>> = BTreeMap::new();
        for (number, h) in &blocks {
            if h.cc && !cc_tables.contains_key(number) {
                let cc = st
                    .levels
                    .iter()
                    .flatten()
                    .find(|f| f.number == *number)
                    .and_then(|f| f.table.cc_blocks())
                    .ok_or_else(|| {
                        DbError::Corrupt(format!(
                            "{}: scanned but not a CCZNS table of the version",
                            sst_name(*number)
                        ))
                    })?;
                cc_tables.insert(*number, cc);
            }
        }
        drop(st);
        let files: BTreeSet<u64> = blocks.iter().map(|b| b.0).collect();
        let pins = FilePins::new(&self.pins, files.into_iter());
        // The blocks the scan decoded come from the device unless cached, through each file's
        // implicit readahead.
        let mut prefetch: Option<(u64, Readahead)> = None;
        // CCZNS: the compressed range [start, end) of the file the last DR prefetched.
        let mut cc_buffered: Option<(u64, u64, u64)> = None;
        let mut buf = Vec::new();
        for (number, h) in blocks {
            if self.cache.borrow_mut().lookup(number, h.offset) {
                continue;
            }
            if h.cc {
                let inside = cc_buffered
                    .is_some_and(|(n, lo, hi)| n == number && lo <= h.offset && h.offset < hi);
                if !inside {
                    let cc = cc_tables.get(&number).expect("gathered above");
                    let range = self.cc_prefetch(cc, number, h.offset).await?;
                    cc_buffered = Some((number, range.0, range.1));
                }
            } else {
                if prefetch.as_ref().is_none_or(|(n, _)| *n != number) {
                    prefetch = Some((number, Readahead::new(&self.opts)));
                }
                let ra = &mut prefetch.as_mut().expect("set").1;
                if let Some(len) = ra.read_for(h.offset, h.stored, &self.opts) {
                    buf.resize(len as usize, 0);
                    self.fs.read(&sst_name(number), h.offset, &mut buf).await?;
                }
            }
            // A table a compaction retired meanwhile keeps no cached blocks.
            if !self.doomed.borrow().contains(&number) {
                self.cache
                    .borrow_mut()
                    .insert(number, h.offset, cache_charge(&h, &self.opts));
            }
        }
        // The last reader of a table a compaction retired meanwhile deletes it.
        if !pins.files.is_empty() {
            drop(pins);
            self.delete_retired_tables().await?;
        }
        Ok(out)
    }

    /// An iterator's CCZNS prefetch from the chunk at `offset` of table `number`: one
    /// multi-chunk DR of up to `prefetch_bytes` of compressed data (a single-chunk DR when
    /// multi-chunk DR is off), checked against the table. Returns the compressed range read.
    async fn cc_prefetch(
        &self,
        table: &CcBlocks,
        number: u64,
        offset: u64,
    ) -> Result<(u64, u64), DbError> {
        let cc = self.opts.cc.clone().unwrap_or_default();
        let name = sst_name(number);
        let chunks = table.chunks();
        let i = chunks
            .binary_search_by_key(&offset, |c| c.offset)
            .map_err(|_| DbError::Corrupt(format!("{name}: no chunk at {offset}")))?;
        let end = if cc.multi_chunk_dr {
            let mdts = self.fs.io().max_transfer_bytes();
            dr_span(chunks, i, cc.prefetch_bytes, mdts, self.fs.io().lba_bytes())
        } else {
            i + 1
        };
        let hi = chunks[end - 1].offset + chunks[end - 1].post as u64;
        let mut buf = std::mem::take(&mut *self.prefetch_buf.borrow_mut());
        buf.clear();
        let read = dr_chunks(&self.fs, &name, &chunks[i..end], &mut buf).await;
        let checked = read
            .and_then(|()| check_bytes(table.bytes(offset, buf.len() as u64), &name, offset, &buf));
        *self.prefetch_buf.borrow_mut() = buf;
        checked.map(|()| (offset, hi))
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
            comp += cpu_profile_of(&self.opts).map_or(0, |p| {
                let per = raw / blocks.max(1);
                blocks * p.compress.latency_ns(per)
            });
            blocks_total += blocks;
        }
        let threads = self.opts.compression_parallel_threads.max(1) as u64;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_level_targets_follow_the_largest_level() {
        let opts = DbOptions::default(); // base 256 MiB, multiplier 10, 7 levels
        const M: u64 = 1 << 20;
        // Empty tree: L0 compacts into the last level.
        assert_eq!(level_targets(&opts, &[10 * M, 0, 0, 0, 0, 0, 0]).0, 6);
        // 1 GiB in L6: L5's share would be 102 MiB, under the 256 MiB base: L0 goes to L5.
        let (base, t) = level_targets(&opts, &[0, 0, 0, 0, 0, 0, 1024 * M]);
        assert_eq!(base, 5);
        // (Sizes are divided down and multiplied back in whole bytes, as RocksDB does.)
        let near = |a: u64, b: u64| a.abs_diff(b) <= 1000;
        assert_eq!(t[5], 256 * M, "never below the base size");
        assert!(near(t[6], 1024 * M), "{t:?}");
        // 30 GiB in L6: L5 3 GiB, L4 307 MiB, L3 31 MiB fits the base: base L3.
        let g30 = 30 * 1024 * M;
        let (base, t) = level_targets(&opts, &[0, 0, 0, 0, 0, 0, g30]);
        assert_eq!(base, 3);
        assert_eq!(t[3], 256 * M);
        assert!(
            near(t[4], g30 / 100) && near(t[5], g30 / 10) && near(t[6], g30),
            "{t:?}"
        );
        // A tiny last level keeps its level as the base.
        assert_eq!(level_targets(&opts, &[0, 0, 0, 0, 0, 0, M]).0, 6);
        // Static sizes: L1 256 MiB, L2 2.5 GiB ...
        let stat = DbOptions {
            level_compaction_dynamic_level_bytes: false,
            ..DbOptions::default()
        };
        let (base, t) = level_targets(&stat, &[0; 7]);
        assert_eq!((base, t[1], t[2]), (1, 256 * M, 2560 * M));
    }

    #[test]
    fn readahead_starts_after_two_sequential_reads_and_doubles() {
        let opts = DbOptions::default();
        let mut ra = Readahead::new(&opts);
        let b = 4096;
        // Two sequential block reads go alone; the third fetches 8 KiB.
        assert_eq!(ra.read_for(0, b, &opts), Some(b));
        assert_eq!(ra.read_for(b, b, &opts), Some(b));
        assert_eq!(ra.read_for(2 * b, b, &opts), Some(8 << 10));
        // The next block was in that read.
        assert_eq!(ra.read_for(3 * b, b, &opts), None);
        // Then 16 KiB, 32 KiB ... up to 256 KiB.
        assert_eq!(ra.read_for(4 * b, b, &opts), Some(16 << 10));
        let mut off = 8 * b;
        let mut last = 0;
        for _ in 0..200 {
            if let Some(n) = ra.read_for(off, b, &opts) {
                last = n;
            }
            off += b;
        }
        assert_eq!(last, 256 << 10);
        // A jump starts over.
        assert_eq!(ra.read_for(10 << 20, b, &opts), Some(b));
        assert_eq!(ra.read_for((10 << 20) + b, b, &opts), Some(b));
        assert_eq!(ra.read_for((10 << 20) + 2 * b, b, &opts), Some(8 << 10));
    }
}
