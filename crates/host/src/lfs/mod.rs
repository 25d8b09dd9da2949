//! lfs: an F2FS-4.10-like log-structured file system on a zoned backend, with the segment
//! compaction schemes of ZNS+ (OSDI'21; `research/seed-specs.md` A.1.6-A.1.10).
//!
//! The main area is the backend's zones: one **section** per zone, cut in **segments** of
//! 512 blocks of 4 KiB (2 MiB). The checkpoint pair, SIT, NAT and SSA are updated in place, so
//! F2FS needs a randomly writable (conventional) region for them: here a [`MetaArea`] (whole
//! 4 KiB blocks at any address) with an in-memory implementation ([`MemMeta`], no time); a
//! device-backed one (a conventional namespace or conventional zones) comes later.
//!
//! The parts, one file each:
//! * `layout`: geometry, reserved sections (f2fs-tools' `get_best_overprovision`), on-media
//!   encodings of node blocks, NAT/SIT/SSA blocks and the checkpoint pack;
//! * `meta`: the metadata area seam;
//! * `node`: inodes, direct and indirect nodes, and the path from a file block to its node;
//! * `seg`: segment and section accounting (SIT: current and checkpointed valid maps, SSA
//!   owners, free/open/dirty/prefree sections), the six logs' positions, victim choices and
//!   hybrid segment recycling's cost model (pure decisions);
//! * `cache`: the page cache (LRU, clean and dirty pages);
//! * `dir`: directory entry blocks (214 dentries, 8-byte name slots);
//! * `fs`: the file system itself and the `FileSystem` implementation;
//! * `io`: block allocation in the logs, writeback, node writes, the pending-write queue;
//! * `gc`: foreground GC by segment compaction (ZNS host copy, IZC-H/IZC-D, CAB/CUB);
//! * `read`: file reads without the file-system lock (F2FS's read path);
//! * `write`: buffered writes without the file-system lock (F2FS's write_begin/write_end);
//! * `cp`: checkpoints; `mount`: mkfs, mount, roll-forward recovery.
//!
//! What differs from F2FS and why: `docs/lfs.md`.

mod cache;
mod cp;
mod dir;
mod fs;
mod gc;
mod io;
pub mod layout;
mod meta;
mod mount;
pub mod node;
mod read;
pub mod seg;
mod write;
mod writeback;

pub use cache::PageCache;
pub use fs::{Lfs, LfsError};
pub use gc::cab_assign;
pub use meta::{MemMeta, MetaArea};
pub use seg::{hsr_choice, HsrChoice};
pub use writeback::Writeback;

/// Block size (F2FS `F2FS_BLKSIZE`).
pub const BLOCK: usize = 4096;
/// Blocks in a segment (F2FS: 512 blocks = 2 MiB; ZNS+ §4: one flash block).
pub const BLOCKS_PER_SEG: u32 = 512;

/// The six logs (F2FS's `CURSEG_*` order), §2.3 "multi-head logging".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogType {
    /// Directory entry blocks.
    HotData = 0,
    /// Regular file data.
    WarmData = 1,
    /// Data moved by GC.
    ColdData = 2,
    /// Direct nodes (and inodes) of directories.
    HotNode = 3,
    /// Direct nodes (and inodes) of regular files.
    WarmNode = 4,
    /// Indirect nodes.
    ColdNode = 5,
}

impl LogType {
    pub const ALL: [LogType; 6] = [
        LogType::HotData,
        LogType::WarmData,
        LogType::ColdData,
        LogType::HotNode,
        LogType::WarmNode,
        LogType::ColdNode,
    ];
    pub fn from_index(i: u8) -> Option<LogType> {
        LogType::ALL.get(i as usize).copied()
    }
    pub fn is_node(self) -> bool {
        self as u8 >= 3
    }
}

/// How foreground GC copies valid blocks (§3.1, §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcCopy {
    /// Zoned F2FS: the host reads every valid block (page-cache pages allocated), then writes
    /// them in one large write.
    Host,
    /// IZC: zone_compaction commands copy inside the device.
    Izc,
}

/// IZC's treatment of valid blocks clean in the page cache (§3.1, §4.1 Tab. 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachedCopy {
    /// IZC-H: the host writes them (no flash read).
    Host,
    /// IZC-D: the device copies them anyway.
    Device,
}

/// How the host's GC reads of a victim's blocks go to the device (the host-copy read phase,
/// §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcReads {
    /// Each block read waits for the one before: §3.1's "multiple read requests are sent one
    /// by one", leaving chips idle when a request is small against their parallelism, as
    /// Fig. 3(a) draws it and Fig. 6 and Fig. 10 measured it. The default.
    OneByOne,
    /// As F2FS 4.10's code sends them: `gc_data_segment`'s phase 3 submits a read bio per
    /// block without waiting (`get_read_data_page(.., REQ_RAHEAD, true)`, ZNS+ artifact
    /// `kernel/fs/f2fs/gc.c:1110`, `data.c:552`) under a block plug that blk-mq keeps to one
    /// request, merging a neighbour into it; phase 4 then waits for each page. The reads are
    /// in flight together.
    InFlight,
}

/// Options (one struct, set at mount; nothing here is kept on the media but the geometry).
#[derive(Clone, Debug, PartialEq)]
pub struct LfsConfig {
    /// Segment-compaction copy path (§3.1). ZNS: `Host`; IZC and ZNS+: `Izc`.
    pub gc_copy: GcCopy,
    /// IZC-H (default in the paper's MLC runs, §4.1) or IZC-D.
    pub cached_copy: CachedCopy,
    /// Copyback-aware destination allocation (CAB, §3.3.1; "enabled in all runs", §4). Needs
    /// identify_mapping; without it the host allocates copyback-unaware (CUB).
    pub copyback_aware: bool,
    /// Threaded logging with TL_open and hybrid segment recycling (§3.2.2, §3.3.2): ZNS+ only.
    pub threaded_logging: bool,
    /// Periodic checkpointing: a checkpoint once this many pre-invalid blocks accumulated
    /// (θ_PI = 128 MiB = 32768 blocks, §3.3.2, `ADAPTIVE_CP_TH`); `None` = off (ZNS, IZC).
    pub periodic_cp_blocks: Option<u64>,
    /// Reserved sections; `None` = f2fs-tools' `get_best_overprovision` (A.1.6).
    pub reserved_sections: Option<u32>,
    /// Overprovisioned share of the main area beyond the reserved sections, in percent;
    /// `None` = f2fs-tools' `get_best_overprovision` (A.1.6).
    pub overprovision_pct: Option<f64>,
    /// Page-cache size in 4 KiB pages (the guest has 2 GiB, §4 = 524288 pages).
    pub page_cache_pages: usize,
    /// HSR: threaded logging's cost as a percentage of the copies (the 0.9 plugging factor,
    /// §3.3.2 Eq. 1; `segment.c` 90/100).
    pub tl_cost_pct: u64,
    /// HSR: α, node and meta writes per copied block of a data victim (18 % + 2 %, §3.3.2
    /// Eq. 2 as the artifact codes it; node victims pay only the 2 %).
    pub alpha_node_pct: u64,
    pub alpha_meta_pct: u64,
    /// Largest write the file system issues at once (the block layer's request size).
    pub max_write_bytes: u64,
    /// How GC's host reads are sent (ZNS; IZC's host-copied blocks).
    pub gc_reads: GcReads,
    /// Host time to allocate a page-cache page for a read, in ns (§3.1 names it among the
    /// host copy's costs; 1 µs per 4 KiB is seed-specs A.4-11's assumption).
    pub page_alloc_ns: u64,
    /// Dirty-page writeback (Linux 4.10's `vm.dirty_*` defaults, the paper's guest kernel).
    pub writeback: Writeback,
}

impl LfsConfig {
    /// Zoned F2FS as the baseline "ZNS" (§4): host copies, no threaded logging.
    pub fn zns() -> LfsConfig {
        LfsConfig {
            gc_copy: GcCopy::Host,
            cached_copy: CachedCopy::Host,
            copyback_aware: false,
            threaded_logging: false,
            periodic_cp_blocks: None,
            reserved_sections: None,
            overprovision_pct: None,
            page_cache_pages: 524_288,
            tl_cost_pct: 90,
            alpha_node_pct: 18,
            alpha_meta_pct: 2,
            max_write_bytes: 512 << 10,
            gc_reads: GcReads::OneByOne,
            page_alloc_ns: 1_000,
            writeback: Writeback::default(),
        }
    }
    /// "IZC" (§4): zone_compaction, IZC-H, CAB; no threaded logging.
    pub fn izc() -> LfsConfig {
        LfsConfig {
            gc_copy: GcCopy::Izc,
            copyback_aware: true,
            ..LfsConfig::zns()
        }
    }
    /// "ZNS+" (§4): IZC + threaded logging + HSR + periodic checkpointing.
    pub fn zns_plus() -> LfsConfig {
        LfsConfig {
            threaded_logging: true,
            periodic_cp_blocks: Some(32_768),
            ..LfsConfig::izc()
        }
    }
}

/// Why a checkpoint was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpCauses {
    pub gc: u64,
    pub sync: u64,
    pub fsync: u64,
    pub periodic: u64,
    /// To free the node ids unlinks gave back (few were left).
    pub nids: u64,
    pub mount: u64,
    pub mkfs: u64,
}

/// Virtual time spent in segment compaction, per phase (Fig. 6), in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcPhases {
    /// Victim selection and destination allocation.
    pub init_ns: u64,
    /// ZNS: host reads of valid blocks.
    pub read_ns: u64,
    /// ZNS: the host's write of the copies.
    pub write_ns: u64,
    /// IZC: zone_compaction commands plus the host's writes of cached blocks.
    pub izc_ns: u64,
    /// The checkpoint closing the compaction.
    pub checkpoint_ns: u64,
    /// Foreground GC runs measured.
    pub runs: u64,
}

/// Virtual time spent in checkpoints, by part and by cause, in nanoseconds (where a
/// compaction's checkpoint phase goes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpTimes {
    /// Dirty dentry (or, for sync, all) pages and dirty nodes written, and their flush.
    pub nodes_ns: u64,
    /// NAT, SIT and SSA blocks.
    pub meta_ns: u64,
    /// The flush before the pack: threaded logs left since closed (the device plugs them to
    /// their end) and zone tails finished.
    pub close_ns: u64,
    /// The checkpoint pack.
    pub pack_ns: u64,
    /// Prefree sections' zone resets.
    pub reset_ns: u64,
    /// Node blocks written by checkpoints, TL-open zones closed inside them and the time
    /// those closes took (part of the times above).
    pub node_blocks: u64,
    pub tl_closes: u64,
    pub tl_close_ns: u64,
    /// Whole checkpoints by cause: GC, periodic, other (sync, fsync, mount, mkfs).
    pub gc_ns: u64,
    pub periodic_ns: u64,
    pub other_ns: u64,
}

/// What the file system did, for the paper's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LfsCounters {
    /// Bytes passed to `write`.
    pub user_bytes: u64,
    /// Blocks the host wrote to each log (index: [`LogType`]), GC's host copies included.
    pub log_blocks: [u64; 6],
    /// Metadata-area blocks written: checkpoint packs, NAT, SIT, SSA, superblock.
    pub cp_blocks: u64,
    pub nat_blocks: u64,
    pub sit_blocks: u64,
    pub ssa_blocks: u64,
    pub sb_blocks: u64,
    /// Metadata-area blocks read (mount).
    pub meta_reads: u64,
    /// GC: valid blocks copied by host writes (data and node), of them read from the device.
    pub gc_host_copies: u64,
    pub gc_host_reads: u64,
    pub gc_node_copies: u64,
    /// GC: blocks copied by zone_compaction, commands sent, and destination chunks whose four
    /// sources are one whole source chunk on the same chip (copyback-eligible).
    pub gc_device_copies: u64,
    pub zone_compactions: u64,
    pub copyback_chunks: u64,
    /// Chunks GC found cached: clean and dirty (§4.1's shares).
    pub gc_cached_clean_blocks: u64,
    pub gc_cached_dirty_blocks: u64,
    /// Sections reclaimed by segment compaction and by threaded logging.
    pub sections_reclaimed_sc: u64,
    pub sections_reclaimed_tl: u64,
    /// TL_open commands (opens; closes counted apart).
    pub tl_opens: u64,
    pub tl_closes: u64,
    /// Blocks written by threaded logging into holes of dirty sections.
    pub tl_blocks: u64,
    /// Blocks valid or pre-invalid in the sections TL_open'ed: what the device copies into
    /// them by internal plugging (§3.2.2: as much as compaction would copy).
    pub tl_plug_blocks: u64,
    pub checkpoints: CpCauses,
    pub cp_times: CpTimes,
    /// Time the host waited for TL-open zones to close (their plugging to the end), in ns.
    pub tl_close_ns: u64,
    /// Threaded-logging opens forced by low free space (`free ≤ demand + reserved/2`, HSR's
    /// costs not consulted), and the valid blocks of the greedy compaction victim at each
    /// open (what compaction would have copied where plugging copies `tl_plug_blocks`).
    pub tl_opens_forced: u64,
    pub tl_greedy_valid: u64,
    /// Foreground GC invocations (each ends with a checkpoint; `gc_phases.runs` counts the
    /// victims).
    pub fg_gc_calls: u64,
    pub fsyncs: u64,
    pub gc_phases: GcPhases,
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// File reads' blocks read again because they moved during the read, and blocks read
    /// under the file-system lock (their section had writes not on the device yet).
    pub read_retries: u64,
    pub reads_locked: u64,
    /// Buffered writes' pages that waited for a checkpoint to end, and pages a write put in
    /// the cache under the lock (no clean page made room: reclaim wrote pages back).
    pub writes_held_by_cp: u64,
    pub writes_reclaim: u64,
    /// Writeback: pages the flusher and throttled writers wrote back, inodes written back
    /// because they expired, and writes that found the cache over `dirty_ratio`.
    pub writeback_pages: u64,
    pub writeback_expired: u64,
    pub writeback_throttled: u64,
    pub zone_resets: u64,
    /// Nodes and dentries replayed by roll-forward recovery at the last mount.
    pub recovered_nodes: u64,
}

impl LfsCounters {
    /// Node blocks written (all three node logs).
    pub fn node_blocks(&self) -> u64 {
        self.log_blocks[3..].iter().sum()
    }
    /// Data blocks written (all three data logs).
    pub fn data_blocks(&self) -> u64 {
        self.log_blocks[..3].iter().sum()
    }
    /// Metadata-area blocks written.
    pub fn meta_blocks(&self) -> u64 {
        self.cp_blocks + self.nat_blocks + self.sit_blocks + self.ssa_blocks + self.sb_blocks
    }
    /// Write amplification (Fig. 8): data, node and metadata blocks written, blocks copied
    /// by zone_compaction and blocks plugged in TL_open'ed sections, over user bytes.
    pub fn waf(&self) -> f64 {
        let blocks = self.data_blocks()
            + self.node_blocks()
            + self.meta_blocks()
            + self.gc_device_copies
            + self.tl_plug_blocks;
        (blocks * BLOCK as u64) as f64 / self.user_bytes.max(1) as f64
    }
}
