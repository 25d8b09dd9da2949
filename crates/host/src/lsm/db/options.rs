//! What a user sets: the store's options (RocksDB's names and defaults where they exist), the
//! CCZNS scheme's options, and the host CPU costs of the store's own work.

use crate::zonefs::MkfsOptions;

use super::super::sst::TableOptions;

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
    /// Compaction reads its inputs in reads of this size (RocksDB 8.7+: 2 MiB).
    pub compaction_readahead_size: u64,
    /// Iterators' implicit readahead: after `auto_readahead_after` sequential block reads of a
    /// file, a read takes this many bytes, doubling per read up to the maximum (RocksDB's
    /// `initial_auto_readahead_size` 8 KiB, `max_auto_readahead_size` 256 KiB,
    /// `num_file_reads_for_auto_readahead` 2).
    pub initial_auto_readahead_size: u64,
    pub max_auto_readahead_size: u64,
    pub auto_readahead_after: u32,
    /// Writes skip the WAL (RocksDB's `WriteOptions::disableWAL`, here for every write): a
    /// crash loses the memtables.
    pub disable_wal: bool,
    /// Where and how blocks are compressed. `Db::open` derives `table.codec` and
    /// `table.cc_write_buffer` from it (values set there beforehand are overwritten).
    pub compression: Compression,
    /// Flushes that may run at once, and compactions (RocksDB's limits from
    /// `max_background_jobs` and friends: [`DbOptions::set_background_jobs`]). Compactions
    /// beyond one run only while RocksDB would speed compaction up: L0 holds its speedup file
    /// count (the smaller of twice the trigger and a quarter of the way to the slowdown
    /// trigger), the estimated compaction debt is large (below), or writes are slowed or
    /// stopped.
    pub max_background_flushes: usize,
    pub max_background_compactions: usize,
    /// Memtables (the active one and those waiting for a flush) that may hold writes: a writer
    /// meeting a full memtable while `max_write_buffer_number - 1` immutable ones wait stalls
    /// until a flush frees one; above 3, writes slow down once as many wait (RocksDB's
    /// write stall conditions).
    pub max_write_buffer_number: usize,
    /// RocksDB's soft_pending_compaction_bytes_limit, here only for compaction pressure:
    /// more than one compaction runs once the estimated compaction debt reaches the smaller of
    /// a quarter of it and the larger of an eighth of the bottommost tables' bytes and twice
    /// the base level's target (RocksDB's `GetPendingCompactionBytesForCompactionSpeedup`);
    /// writes are not slowed by it.
    pub soft_pending_compaction_bytes_limit: u64,
}

/// Why a background job limit was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JobLimitError(pub String);

impl DbOptions {
    /// RocksDB's `DBImpl::GetBGJobLimits`: with `max_background_flushes` and
    /// `max_background_compactions` both -1, a quarter of `max_background_jobs` flush (at least
    /// one) and the rest compact (at least one); otherwise each flag gives its own limit (at
    /// least one), and `max_background_jobs` plays no part.
    pub fn set_background_jobs(
        &mut self,
        jobs: i64,
        compactions: i64,
        flushes: i64,
    ) -> Result<(), JobLimitError> {
        const MAX: i64 = 1024;
        for (name, v) in [
            ("max_background_jobs", jobs),
            ("max_background_compactions", compactions),
            ("max_background_flushes", flushes),
        ] {
            if v > MAX {
                return Err(JobLimitError(format!(
                    "--{name}={v}: at most {MAX} background jobs"
                )));
            }
        }
        let (f, c) = if flushes == -1 && compactions == -1 {
            let f = (jobs / 4).max(1);
            (f, (jobs - f).max(1))
        } else {
            (flushes.max(1), compactions.max(1))
        };
        self.max_background_flushes = f as usize;
        self.max_background_compactions = c as usize;
        Ok(())
    }

    /// L0 files at which more than one compaction may run (RocksDB's
    /// `GetL0FileCountForCompactionSpeedup`).
    pub fn l0_speedup_files(&self) -> usize {
        let t = self.level0_trigger as i64;
        let s = self.level0_slowdown as i64;
        (2 * t).min(t + (s - t) / 4).max(0) as usize
    }
}

/// The store's compression scheme (CCZNS §V-A): who compresses a table's blocks, and what
/// times it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Blocks are written raw.
    None,
    /// The host CPU compresses blocks with `codec`, timed by the codec's CPU profile, on
    /// `threads` threads while a table is built (RocksDB's
    /// `CompressionOptions::parallel_threads`; 1 = inline in the flush or compaction thread;
    /// CCZNS §V-A's ZSTDPC scheme uses 6).
    Host { codec: codec::Codec, threads: usize },
    /// The host compresses blocks with `codec` on a peripheral engine: the engine profile
    /// `engine` (`znslab devices`) times block compression and decompression instead of the
    /// codec's CPU profile. CCZNS §V-A's QAT scheme uses `qat-8970` with Deflate (RocksDB's QAT
    /// plugin). The calling thread waits for each block's round trip busy (QATzip's
    /// synchronous mode polls), so the engine's latency counts as host CPU; an assumption,
    /// consistent with Table IV putting QAT's CPU near ZSTD's. The engine's queue limit is not
    /// modelled (the default store has two background threads). `threads` as for `Host`.
    Peripheral {
        codec: codec::Codec,
        engine: String,
        threads: usize,
    },
    /// CCZNS: the device compresses data blocks, which the host writes raw by compressed
    /// writes and reads by decompressing reads. Needs zonefs with padding zones on a CCZNS
    /// device.
    Cczns(CcOptions),
}

impl Compression {
    /// The host compressing with `codec` on one thread (`None` for `Codec::None`).
    pub fn host(codec: codec::Codec) -> Compression {
        if codec == codec::Codec::None {
            Compression::None
        } else {
            Compression::Host { codec, threads: 1 }
        }
    }

    /// The same scheme with `threads` compression threads, where the host compresses (no
    /// compression and CCZNS have no threads to set).
    pub fn with_threads(mut self, n: usize) -> Compression {
        if let Compression::Host { threads, .. } | Compression::Peripheral { threads, .. } =
            &mut self
        {
            *threads = n;
        }
        self
    }

    /// The codec the host compresses blocks (data, index) with: `Codec::None` when it does
    /// not compress (no compression, or the device does).
    pub fn block_codec(&self) -> codec::Codec {
        match self {
            Compression::Host { codec, .. } | Compression::Peripheral { codec, .. } => *codec,
            Compression::None | Compression::Cczns(_) => codec::Codec::None,
        }
    }

    /// Threads compressing a table's blocks while it is built (1: inline).
    pub fn threads(&self) -> usize {
        match self {
            Compression::Host { threads, .. } | Compression::Peripheral { threads, .. } => *threads,
            Compression::None | Compression::Cczns(_) => 1,
        }
    }

    /// The peripheral engine's profile name, if one times the codec.
    pub fn engine(&self) -> Option<&str> {
        match self {
            Compression::Peripheral { engine, .. } => Some(engine),
            _ => None,
        }
    }

    /// CCZNS's options, when the device compresses by CW/DR.
    pub fn cc(&self) -> Option<&CcOptions> {
        match self {
            Compression::Cczns(cc) => Some(cc),
            _ => None,
        }
    }

    /// The profile that times the host's block (de)compression: the peripheral engine, else
    /// the codec's CPU profile; None when the host does not compress.
    pub(super) fn profile(&self) -> Option<codec::EngineProfile> {
        let c = self.block_codec();
        if c == codec::Codec::None {
            return None;
        }
        match self.engine() {
            Some(name) => codec::profile::by_name(name),
            None => cpu_profile(c),
        }
    }
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
    /// Per block handed to a compression thread when `Compression::threads() > 1`:
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
        base.padding_zones = self.compression.cc().is_some();
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
            compaction_readahead_size: 2 << 20,
            initial_auto_readahead_size: 8 << 10,
            max_auto_readahead_size: 256 << 10,
            auto_readahead_after: 2,
            disable_wal: false,
            compression: Compression::None,
            max_background_flushes: 1,
            max_background_compactions: 1,
            max_write_buffer_number: 2,
            soft_pending_compaction_bytes_limit: 64 << 30,
        }
    }
}
