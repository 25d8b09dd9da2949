//! The file system: files as extents in zones, ZenFS's allocation, the metadata log written
//! record by record, rolling to a fresh metadata zone, mount with replay and repair, and
//! resets of zones with no live data (research/zenfs-rocksdb.md §1.3-1.10).
//!
//! Zones 0-2 are metadata zones, the rest IO zones. A file being written owns one active zone
//! at a time. Writes go through a 1 MiB buffer (ZenFS's buffered path): each flush is padded to
//! the block size and recorded as an extent of its unpadded length; `sync` writes an update
//! record with the extents added since the last one, `close` also clears the active-extent
//! start. Deleting a file's last link logs a deletion and resets every zone whose live bytes
//! drop to zero. Files named `*.log` (WALs) take ZenFS's sparse path: every flushed piece is
//! `[u64 length][data]` padded to the block, so their sync writes no metadata and mount walks
//! the headers.
//!
//! Zone allocation and GC follow a [`Policy`](super::policy::Policy) whose decisions are
//! pure; the default is ZenFS's AllocateIOZone: the finish-threshold pass (non-WAL files), an
//! open token (WALs may use `max_open - 2`, other files `max_open - 3`), the best lifetime
//! match among partly written zones, else an empty zone under the active limit
//! (`max_active - 2`), finishing the cheapest idle zone when that limit binds. With GC enabled
//! at mkfs (ZenFS's `--enable_gc`), a pass every 10 s of virtual time migrates the live
//! extents of mostly-dead full zones into partly written zones once free space drops below
//! 20%. ZenFS's direct write path (RocksDB's own 1 MiB buffer, aligned) issues the same
//! writes as the buffered path here, so only the buffered one exists.
//!
//! The parts, one file each: `journal` (the metadata log: records, rolls, syncs), `zones`
//! (allocation, finishing, releasing and resetting zones), `file` (creating, writing, reading
//! and deleting files), `cczns` (compressed writes and decompressed reads), `gc` (garbage
//! collection) and `mount` (replay and repair). This file keeps the types and mkfs.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use device::{ZoneAction, ZoneState};

use super::izg::{self, IzgMap, ProbeConfig, ProbeReport};
use super::meta::{Extent, FileMeta, MetaError, Superblock};
use super::plus::{PlusConfig, StripeGroup, WriteClass};
use super::policy::{GcPolicy, IoZone, Policy, ZoneAllocator, ZonesView};
use crate::io::{HostIo, IoError};
use crate::zoned::ZonedBackend;

mod cczns;
mod file;
mod gc;
mod journal;
mod mount;
mod reclaim;
mod stripe;
mod zones;

pub use super::policy::{lifetime_diff, Lifetime};
pub use file::FileWriter;

/// Metadata zones (ZENFS_META_ZONES).
pub const META_ZONES: u32 = 3;
/// Active zones ZenFS keeps back from IO zones: one for the metadata log, one for GC.
pub const RESERVED_ACTIVE: u32 = 2;
/// The buffered write path's buffer.
pub const WRITE_BUFFER: usize = 1 << 20;
/// Sparse files' inline length header (ZenFS's sparse path, used for WALs).
pub const SPARSE_HEADER: usize = 8;
pub use super::policy::{GC_SLOPE, GC_START_LEVEL, RESERVED_OPEN_NON_WAL};
/// GC (ZenFS's GCWorker): a pass every 10 s (what a pass migrates: `policy.rs`), in 128 KiB
/// reads and appends.
pub const GC_INTERVAL_S: u64 = 10;
pub const GC_COPY_BYTES: usize = 128 << 10;
/// Superblock flag: GC enabled (ZenFS's bit 0).
pub const FLAG_GC: u32 = 1;
/// Superblock flag: IO zones are opened as CCZNS padding zones (§III-E), so compressed writes
/// and plain writes share them (CCZNS's ZenFS opens every SST zone this way).
pub const FLAG_PADDING: u32 = 2;

/// mkfs options (ZenFS's `zenfs mkfs` flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MkfsOptions {
    /// Finish an idle zone once less than this percentage of it is left (0 = never; WD's
    /// performance scripts use 10).
    pub finish_threshold: u32,
    pub enable_gc: bool,
    /// Open IO zones as CCZNS padding zones, for files written with compressed writes
    /// ([`FileWriter::append_compressed`]). Needs a CCZNS device; excludes GC (it moves
    /// extents with plain reads and writes, which would drop the device's chunk records).
    pub padding_zones: bool,
    /// The zone allocation and GC policy. ZenFS+'s configuration is kept in the superblock and
    /// [`ZoneFs::mount`] takes it again; [`ZoneFs::mount_with`] overrides it.
    pub policy: Policy,
    /// Find the device's independent zone groups by timing I/O on pairs of zones (ZenFS+
    /// §IV-A) and keep the map in the superblock; `None`: no groups are known.
    pub izg_probe: Option<ProbeConfig>,
    /// The most IO zones written at once (0: the device's active limit less zonefs's reserve).
    /// ZenFS+ §V-A runs ZenFS with 6–12 active zones. Not kept on the device: give it again
    /// to [`ZoneFs::limit_active_io_zones`] after a mount.
    pub max_active_io_zones: u32,
}

/// Why zonefs cannot be made (or mounted) on a device with these options: the caller can change
/// the options or pick another device.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("finish threshold {0}%: at most 100")]
    FinishThreshold(u32),
    #[error(
        "padding zones (compressed writes) and GC together: GC moves extents with plain \
         reads and writes, which would lose the device's chunk records"
    )]
    PaddingWithGc,
    #[error("padding zones need a CCZNS device (design = \"cczns\")")]
    PaddingNeedsCczns,
    #[error("{zones} zones: zonefs needs at least {need}")]
    TooFewZones { zones: usize, need: u32 },
    /// ZenFS+'s policy on a file system made without the IZG probe.
    #[error(
        "the zenfsplus policy stripes over independent zone groups, and this file system \
         knows none: make it with the IZG probe (izg_probe)"
    )]
    PlusNeedsIzgMap,
    /// A ZenFS+ configuration the superblock cannot keep.
    #[error(
        "zenfsplus with {0} IZGs and a maximum width of {1}: at most 65535 IZGs and a width \
         from 1 to 255"
    )]
    PlusConfig(u32, u32),
    /// The IZG probe at mkfs found no map.
    #[error("{0}")]
    IzgProbe(String),
    #[error(
        "the device allows {max_open} open and {max_active} active zones: zonefs keeps \
         {RESERVED_OPEN_NON_WAL} open and {RESERVED_ACTIVE} active zones back, as ZenFS does, \
         and needs one more of each"
    )]
    TooFewOpenZones { max_open: u32, max_active: u32 },
    /// Mount found `zones` zones on the device; zonefs needs at least `need`.
    #[error("too few zones for zonefs")]
    TooFewZonesToMount { zones: usize, need: u32 },
}

/// A CCZNS compressed write (ZoneFs's `write_compressed`) refused or answered oddly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompressedWriteError {
    /// The file system was made without padding zones.
    #[error("compressed writes need padding zones (mkfs with padding_zones)")]
    NeedsPaddingZones,
    /// `bytes` of uncompressed data: more than one command or one zone carries.
    #[error(
        "a compressed write of {bytes} bytes: larger than the device's transfer size or a zone"
    )]
    TooLarge { bytes: u64 },
    /// The device's feedback gave `sizes` chunk sizes for `chunks` chunks, or took `written`
    /// bytes of the zone that are not whole blocks.
    #[error(
        "compressed write feedback: {sizes} sizes for {chunks} chunks, {written} bytes taken \
         (not whole blocks: is the zone a padding zone?)"
    )]
    Feedback {
        sizes: usize,
        chunks: usize,
        written: u64,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error(transparent)]
    Meta(#[from] MetaError),
    #[error("no space: {0}")]
    NoSpace(&'static str),
    #[error("no file named {0:?}")]
    NotFound(String),
    #[error("a file named {0:?} exists")]
    Exists(String),
    /// The device or the options cannot carry zonefs (mkfs or mount refuses).
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    CompressedWrite(#[from] CompressedWriteError),
    /// Mount found no metadata: nothing made a file system on the device.
    #[error("no zonefs metadata found: the device holds no file system")]
    NoFileSystem,
}

/// Zone finishes, resets and GC work, as ZenFS's metrics count them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZoneCounters {
    /// Zones finished by the finish-threshold pass and to free an active zone.
    pub finished_by_threshold: u64,
    pub finished_for_token: u64,
    pub resets: u64,
    pub gc_passes: u64,
    /// Zones GC picked, extents it moved, and the bytes it wrote (not user bytes).
    pub gc_zones: u64,
    pub gc_extents: u64,
    pub gc_bytes_written: u64,
    /// Allocations that waited for an open token.
    pub open_token_waits: u64,
    /// ZenFS+'s minor GC: passes, and the dead zones they reset (also counted in `resets`).
    pub minor_gc_passes: u64,
    pub minor_gc_resets: u64,
    /// ZenFS+'s full GC: passes that found free space short, and the zones they emptied by
    /// copying (the bytes copied are `gc_bytes_written`).
    pub full_gc_passes: u64,
    pub full_gc_zones: u64,
}

#[derive(Clone, Debug)]
struct OpenFile {
    meta: FileMeta,
    /// Extents already in the log.
    synced: usize,
    /// The zone this file writes (an index into `zones`), while open for writing.
    zone: Option<usize>,
    /// What the file is written for (ZenFS+ stripes flush and compaction outputs).
    class: WriteClass,
    /// The stripe group a striped file writes, named by its first member zone.
    group: Option<usize>,
    writing: bool,
    /// Reads in flight: GC swaps extents only when none is.
    readers: u32,
}

struct State {
    sb: Superblock,
    meta_zone: u32,
    meta_wp: u64,
    /// Records logged since mount or mkfs.
    meta_records: u64,
    zones: Vec<IoZone>,
    /// ZenFS+'s open stripe groups.
    groups: Vec<StripeGroup>,
    files: BTreeMap<u64, OpenFile>,
    names: BTreeMap<String, u64>,
    next_id: u64,
    active_limit: u32,
    /// What the device allows IO files (its active limit less zonefs's reserve).
    device_active_limit: u32,
    /// The device's open limit (ZenFS's open tokens come from it).
    open_limit: u32,
    counters: ZoneCounters,
    /// When the last GC pass ran, and whether one runs now.
    last_gc: sim::SimInstant,
    gc_running: bool,
    /// ZenFS+'s minor GC: when the last pass began, and whether one runs.
    last_reclaim: sim::SimInstant,
    /// Virtual time between two GC passes, ZenFS's and ZenFS+'s minor GC alike
    /// (`GC_INTERVAL_S` unless [`ZoneFs::set_gc_interval`] says otherwise).
    gc_interval: sim::SimDuration,
    reclaim_running: bool,
    /// A full GC pass runs (ZenFS+): one at a time.
    full_gc_running: bool,
    /// The serial number the next stripe group takes (`IoZone::stripe`).
    next_stripe: u64,
    /// What the IZG probe at mkfs found and cost (not kept: mount has the map only).
    izg_probe: Option<ProbeReport>,
}

/// A mounted file system. Share it behind an `Rc`.
pub struct ZoneFs<B: ZonedBackend = HostIo> {
    io: Rc<B>,
    st: RefCell<State>,
    /// One metadata record at a time: each is placed at the log's write pointer.
    meta_lock: sim::sync::Mutex<()>,
    /// A writer let go of a zone: allocations waiting for an active zone retry (ZenFS waits
    /// for an open/active token the same way).
    zone_freed: sim::sync::Notify,
    /// A file's last reader finished (GC waits for it).
    reads_done: sim::sync::Notify,
    block: u64,
    zone_bytes: u64,
    /// Where extents go and which zones GC empties (pure decisions on a view of `st`).
    allocator: Box<dyn ZoneAllocator>,
    gc_policy: Box<dyn GcPolicy>,
    /// ZenFS+'s configuration and the device's IZGs, under its policy.
    plus: Option<(PlusConfig, IzgMap)>,
}

/// Space figures, as `zenfs df` gives them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FsStats {
    pub free_bytes: u64,
    pub used_bytes: u64,
    /// Dead bytes in full (or finished) zones: what only a reset or GC gets back.
    pub reclaimable_bytes: u64,
    pub files: usize,
    pub meta_rolls: u32,
    pub zones: ZoneCounters,
}

impl<B: ZonedBackend> ZoneFs<B> {
    /// Format with a finish threshold (percent, 0 = off) and no GC.
    pub async fn mkfs(io: Rc<B>, finish_threshold: u32) -> Result<ZoneFs<B>, FsError> {
        Self::mkfs_with(
            io,
            MkfsOptions {
                finish_threshold,
                ..MkfsOptions::default()
            },
        )
        .await
    }

    /// Format: reset every zone, write a superblock and an empty snapshot to zone 0.
    pub async fn mkfs_with(io: Rc<B>, opts: MkfsOptions) -> Result<ZoneFs<B>, FsError> {
        if opts.finish_threshold > 100 {
            return Err(SetupError::FinishThreshold(opts.finish_threshold).into());
        }
        if opts.padding_zones && opts.enable_gc {
            return Err(SetupError::PaddingWithGc.into());
        }
        if opts.padding_zones && !io.compressed_io() {
            return Err(SetupError::PaddingNeedsCczns.into());
        }
        let zones = io.report_zones().await?;
        if zones.len() < (META_ZONES + 2) as usize {
            return Err(SetupError::TooFewZones {
                zones: zones.len(),
                need: META_ZONES + 2,
            }
            .into());
        }
        for (i, z) in zones.iter().enumerate() {
            if z.state != ZoneState::Empty {
                io.zone_action(i as u32, ZoneAction::Reset).await?;
            }
        }
        let probe = match opts.izg_probe {
            Some(cfg) => Some(izg::probe(&io, &cfg).await.map_err(|e| match e {
                izg::ProbeError::Io(e) => FsError::Io(e),
                e => SetupError::IzgProbe(e.to_string()).into(),
            })?),
            None => None,
        };
        let izg = probe.as_ref().map(|p| p.map);
        let fs = ZoneFs::new(io, &zones, opts.finish_threshold, opts.policy, izg)?;
        if let Some(p) = probe {
            let mut st = fs.st.borrow_mut();
            st.sb.izg_groups = p.map.groups;
            st.izg_probe = Some(p);
        }
        fs.limit_active_io_zones(opts.max_active_io_zones);
        if opts.enable_gc {
            fs.st.borrow_mut().sb.flags |= FLAG_GC;
        }
        if opts.padding_zones {
            fs.st.borrow_mut().sb.flags |= FLAG_PADDING;
        }
        fs.start_meta_zone(0, 1).await?;
        Ok(fs)
    }

    fn new(
        io: Rc<B>,
        zones: &[device::ZoneDescriptor],
        finish_threshold: u32,
        policy: Policy,
        izg: Option<IzgMap>,
    ) -> Result<ZoneFs<B>, FsError> {
        if let Some(p) = policy.plus() {
            if izg.is_none() {
                return Err(SetupError::PlusNeedsIzgMap.into());
            }
            if p.izgs > PlusConfig::MAX_IZGS
                || p.max_width == 0
                || p.max_width > PlusConfig::MAX_WIDTH
            {
                return Err(SetupError::PlusConfig(p.izgs, p.max_width).into());
            }
        }
        let block = io.lba_bytes();
        let zone_bytes = io.zone_bytes();
        let (mor, mar) = io.zone_limits();
        let limit = |zero_based: u32| {
            if zero_based == u32::MAX {
                zones.len() as u32
            } else {
                zero_based + 1
            }
        };
        let (max_open, max_active) = (limit(mor), limit(mar));
        if max_open <= RESERVED_OPEN_NON_WAL || max_active <= RESERVED_ACTIVE {
            return Err(SetupError::TooFewOpenZones {
                max_open,
                max_active,
            }
            .into());
        }
        let st = State {
            sb: Superblock {
                uuid: "znslab-zonefs".into(),
                sequence: 0,
                flags: 0,
                block_bytes: block as u32,
                zone_blocks: (zone_bytes / block) as u32,
                zones: zones.len() as u32,
                finish_threshold,
                izg_groups: 0,
                plus: policy.plus(),
            },
            meta_zone: 0,
            meta_wp: 0,
            meta_records: 0,
            zones: zones[META_ZONES as usize..]
                .iter()
                .map(|z| IoZone {
                    start: z.zslba * block,
                    capacity: z.capacity * block,
                    ..IoZone::default()
                })
                .collect(),
            groups: Vec::new(),
            files: BTreeMap::new(),
            names: BTreeMap::new(),
            next_id: 1,
            active_limit: max_active - RESERVED_ACTIVE,
            device_active_limit: max_active - RESERVED_ACTIVE,
            open_limit: max_open,
            counters: ZoneCounters::default(),
            last_gc: io.sim().now(),
            gc_running: false,
            last_reclaim: io.sim().now(),
            gc_interval: sim::SimDuration::from_secs(GC_INTERVAL_S),
            reclaim_running: false,
            full_gc_running: false,
            next_stripe: 1,
            izg_probe: None,
        };
        Ok(ZoneFs {
            io,
            st: RefCell::new(st),
            meta_lock: sim::sync::Mutex::new(()),
            zone_freed: sim::sync::Notify::new(),
            reads_done: sim::sync::Notify::new(),
            block,
            zone_bytes,
            allocator: policy.allocator(izg),
            gc_policy: policy.gc(),
            plus: policy.plus().zip(izg),
        })
    }

    /// Write at most `n` IO zones at once (0: as many as the device allows), within the
    /// device's limit.
    pub fn limit_active_io_zones(&self, n: u32) {
        let mut st = self.st.borrow_mut();
        st.active_limit = match n {
            0 => st.device_active_limit,
            n => n.min(st.device_active_limit),
        };
    }

    /// Run the GC passes every `every` of virtual time instead of ZenFS's 10 s (torture
    /// shortens it so seeds of a few hundred milliseconds meet the passes). Not kept on the
    /// device.
    pub fn set_gc_interval(&self, every: sim::SimDuration) {
        self.st.borrow_mut().gc_interval = every;
    }

    /// Files that can hold a zone for writing at once: WALs, or any other file (ZenFS's open
    /// tokens).
    pub fn open_file_limit(&self, wal: bool) -> u32 {
        let st = self.st.borrow();
        let by_open = st.open_limit - if wal { 2 } else { RESERVED_OPEN_NON_WAL };
        by_open.min(st.active_limit)
    }

    /// The host I/O layer under the file system.
    pub fn io(&self) -> &Rc<B> {
        &self.io
    }

    /// Metadata records logged since mount (each one write to a metadata zone).
    pub fn meta_records(&self) -> u64 {
        self.st.borrow().meta_records
    }

    fn is_sparse(&self, id: u64) -> bool {
        self.st
            .borrow()
            .files
            .get(&id)
            .is_some_and(|f| f.meta.sparse)
    }

    /// Size of a file (its synced and flushed extents).
    pub fn size(&self, name: &str) -> Result<u64, FsError> {
        let st = self.st.borrow();
        let id = st
            .names
            .get(name)
            .ok_or_else(|| FsError::NotFound(name.into()))?;
        Ok(st.files[id].meta.size)
    }

    /// A file's extents (device byte offset and length of each).
    pub fn extents(&self, name: &str) -> Result<Vec<Extent>, FsError> {
        let st = self.st.borrow();
        let id = st
            .names
            .get(name)
            .ok_or_else(|| FsError::NotFound(name.into()))?;
        Ok(st.files[id].meta.extents.clone())
    }

    pub fn list(&self) -> Vec<String> {
        self.st.borrow().names.keys().cloned().collect()
    }

    /// The device's independent zone groups as the superblock keeps them (found at mkfs by
    /// the IZG probe; `None` if it did not run).
    pub fn izg_map(&self) -> Option<IzgMap> {
        let groups = self.st.borrow().sb.izg_groups;
        (groups > 0).then_some(IzgMap { groups })
    }

    /// ZenFS+'s configuration when it is the policy (as the superblock keeps it).
    pub fn plus_config(&self) -> Option<PlusConfig> {
        self.plus.map(|(cfg, _)| cfg)
    }

    /// What the IZG probe found and cost, when this mount is the mkfs that ran it.
    pub fn izg_probe(&self) -> Option<ProbeReport> {
        self.st.borrow().izg_probe.clone()
    }

    pub fn stats(&self) -> FsStats {
        let st = self.st.borrow();
        let mut s = FsStats {
            files: st.files.len(),
            meta_rolls: st.sb.sequence.saturating_sub(1),
            zones: st.counters.clone(),
            ..FsStats::default()
        };
        for z in &st.zones {
            s.free_bytes += z.remaining();
            s.used_bytes += z.used;
            if z.remaining() == 0 {
                s.reclaimable_bytes += z.capacity - z.used;
            }
        }
        s
    }
}

impl State {
    /// What a policy decides on.
    fn view(&self) -> ZonesView<'_> {
        ZonesView {
            zones: &self.zones,
            open_limit: self.open_limit,
            active_limit: self.active_limit,
            finish_threshold: self.sb.finish_threshold,
        }
    }

    /// The open stripe group whose first member is zone `key`.
    fn group(&self, key: usize) -> Option<&StripeGroup> {
        self.groups.iter().find(|g| g.zones[0] == key)
    }

    fn group_mut(&mut self, key: usize) -> Option<&mut StripeGroup> {
        self.groups.iter_mut().find(|g| g.zones[0] == key)
    }

    fn zone_of(&self, dev: u64, zone_bytes: u64) -> Option<usize> {
        (dev / zone_bytes)
            .checked_sub(META_ZONES as u64)
            .map(|z| z as usize)
            .filter(|&z| z < self.zones.len())
    }
}
