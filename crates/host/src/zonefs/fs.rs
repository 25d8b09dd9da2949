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
//! Zone allocation is ZenFS's AllocateIOZone: the finish-threshold pass (non-WAL files), an
//! open token (WALs may use `max_open - 2`, other files `max_open - 3`), the best lifetime
//! match among partly written zones, else an empty zone under the active limit
//! (`max_active - 2`), finishing the cheapest idle zone when that limit binds. With GC enabled
//! at mkfs (ZenFS's `--enable_gc`), a pass every 10 s of virtual time migrates the live
//! extents of mostly-dead full zones into partly written zones once free space drops below
//! 20%. ZenFS's direct write path (RocksDB's own 1 MiB buffer, aligned) issues the same
//! writes as the buffered path here, so only the buffered one exists.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use device::{ZoneAction, ZoneState};

use super::meta::{self, Extent, FileMeta, MetaError, Record, Superblock};
use crate::io::{HostIo, IoError};

/// Metadata zones (ZENFS_META_ZONES).
pub const META_ZONES: u32 = 3;
/// Active zones ZenFS keeps back from IO zones: one for the metadata log, one for GC.
pub const RESERVED_ACTIVE: u32 = 2;
/// The buffered write path's buffer.
pub const WRITE_BUFFER: usize = 1 << 20;
/// Sparse files' inline length header (ZenFS's sparse path, used for WALs).
pub const SPARSE_HEADER: usize = 8;
/// Open zones ZenFS keeps back from non-WAL files: the two of the active reserve and one
/// always left for a WAL (zenfs PR #114).
pub const RESERVED_OPEN_NON_WAL: u32 = 3;
/// GC (ZenFS's GCWorker): a pass every 10 s; nothing while more than 20% is free; then zones
/// whose garbage exceeds `100 - GC_SLOPE * (GC_START_LEVEL - free%)` percent are migrated,
/// in 128 KiB reads and appends.
pub const GC_INTERVAL_S: u64 = 10;
pub const GC_START_LEVEL: u64 = 20;
pub const GC_SLOPE: u64 = 3;
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
    #[error("{0}")]
    Invalid(String),
    /// Mount found no metadata: nothing made a file system on the device.
    #[error("no zonefs metadata found: the device holds no file system")]
    NoFileSystem,
}

/// RocksDB's write lifetime hints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lifetime {
    NotSet = 0,
    None = 1,
    Short = 2,
    Medium = 3,
    Long = 4,
    Extreme = 5,
}

/// ZenFS's GetLifeTimeDiff: how well a zone of lifetime `zone` suits a file of `file`.
pub fn lifetime_diff(zone: u32, file: u32) -> u32 {
    if file <= Lifetime::None as u32 {
        return if zone == file { 0 } else { 100 };
    }
    match zone.cmp(&file) {
        std::cmp::Ordering::Greater => zone - file,
        std::cmp::Ordering::Equal => 50,
        std::cmp::Ordering::Less => 100,
    }
}

#[derive(Clone, Debug, Default)]
struct IoZone {
    /// Device byte offset of the zone, its writable capacity, and its write pointer (bytes
    /// from the start).
    start: u64,
    capacity: u64,
    wp: u64,
    lifetime: u32,
    /// Bytes of live extents in the zone.
    used: u64,
    /// Owned by a writer (or by a GC migration).
    busy: bool,
    finished: bool,
    /// A Reset or Finish of it is in flight, or chosen to come: no other task picks it for a
    /// writer or another action meanwhile (several tasks delete, allocate and finish side by
    /// side; a zone reset twice may lose a new file's data, one finished beside its reset
    /// ends Full where zonefs thinks it empty).
    in_action: bool,
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
}

impl IoZone {
    fn remaining(&self) -> u64 {
        if self.finished {
            0
        } else {
            self.capacity - self.wp
        }
    }
    fn is_active(&self) -> bool {
        self.wp > 0 && self.remaining() > 0
    }
}

#[derive(Clone, Debug)]
struct OpenFile {
    meta: FileMeta,
    /// Extents already in the log.
    synced: usize,
    /// The zone this file writes (an index into `zones`), while open for writing.
    zone: Option<usize>,
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
    files: BTreeMap<u64, OpenFile>,
    names: BTreeMap<String, u64>,
    next_id: u64,
    active_limit: u32,
    /// The device's open limit (ZenFS's open tokens come from it).
    open_limit: u32,
    counters: ZoneCounters,
    /// When the last GC pass ran, and whether one runs now.
    last_gc: sim::SimInstant,
    gc_running: bool,
}

/// A mounted file system. Share it behind an `Rc`.
pub struct ZoneFs {
    io: Rc<HostIo>,
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

impl ZoneFs {
    /// Format with a finish threshold (percent, 0 = off) and no GC.
    pub async fn mkfs(io: Rc<HostIo>, finish_threshold: u32) -> Result<ZoneFs, FsError> {
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
    pub async fn mkfs_with(io: Rc<HostIo>, opts: MkfsOptions) -> Result<ZoneFs, FsError> {
        if opts.finish_threshold > 100 {
            return Err(FsError::Invalid(format!(
                "finish threshold {}%: at most 100",
                opts.finish_threshold
            )));
        }
        if opts.padding_zones && opts.enable_gc {
            return Err(FsError::Invalid(
                "padding zones (compressed writes) and GC together: GC moves extents with plain \
                 reads and writes, which would lose the device's chunk records"
                    .into(),
            ));
        }
        if opts.padding_zones && !io.device().with(|c| c.identify().vendor.compressed_io) {
            return Err(FsError::Invalid(
                "padding zones need a CCZNS device (design = \"cczns\")".into(),
            ));
        }
        let zones = io.report_zones().await?;
        if zones.len() < (META_ZONES + 2) as usize {
            return Err(FsError::Invalid(format!(
                "{} zones: zonefs needs at least {}",
                zones.len(),
                META_ZONES + 2
            )));
        }
        for (i, z) in zones.iter().enumerate() {
            if z.state != ZoneState::Empty {
                io.zone_action(i as u32, ZoneAction::Reset).await?;
            }
        }
        let fs = ZoneFs::new(io, &zones, opts.finish_threshold)?;
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
        io: Rc<HostIo>,
        zones: &[device::ZoneDescriptor],
        finish_threshold: u32,
    ) -> Result<ZoneFs, FsError> {
        let block = io.lba_bytes();
        let zone_bytes = io.zone_bytes();
        let (mor, mar) = io.device().with(|c| {
            let id = c.identify();
            (id.mor, id.mar)
        });
        let limit = |zero_based: u32| {
            if zero_based == u32::MAX {
                zones.len() as u32
            } else {
                zero_based + 1
            }
        };
        let (max_open, max_active) = (limit(mor), limit(mar));
        if max_open <= RESERVED_OPEN_NON_WAL || max_active <= RESERVED_ACTIVE {
            return Err(FsError::Invalid(format!(
                "the device allows {max_open} open and {max_active} active zones: zonefs \
                 keeps {RESERVED_OPEN_NON_WAL} open and {RESERVED_ACTIVE} active zones back, \
                 as ZenFS does, and needs one more of each"
            )));
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
            files: BTreeMap::new(),
            names: BTreeMap::new(),
            next_id: 1,
            active_limit: max_active - RESERVED_ACTIVE,
            open_limit: max_open,
            counters: ZoneCounters::default(),
            last_gc: io.sim().now(),
            gc_running: false,
        };
        Ok(ZoneFs {
            io,
            st: RefCell::new(st),
            meta_lock: sim::sync::Mutex::new(()),
            zone_freed: sim::sync::Notify::new(),
            reads_done: sim::sync::Notify::new(),
            block,
            zone_bytes,
        })
    }

    /// Start metadata zone `zone` with sequence `seq`: superblock, then a snapshot of every file.
    async fn start_meta_zone(&self, zone: u32, seq: u32) -> Result<(), FsError> {
        let (sb, snap) = {
            let mut st = self.st.borrow_mut();
            st.sb.sequence = seq;
            st.meta_zone = zone;
            st.meta_wp = 0;
            let files = st.files.values().map(|f| f.meta.clone()).collect();
            // What the snapshot holds of each file: extents added while it is written go in
            // the file's next update record, not marked synced (torture seed 193 lost a WAL
            // piece that way).
            let held: Vec<(u64, usize)> = st
                .files
                .iter()
                .map(|(&id, f)| (id, f.meta.extents.len()))
                .collect();
            (st.sb.encode(), (Record::Snapshot(files), held))
        };
        let (snap, held) = snap;
        self.append_meta(&meta::frame(&sb, self.block as usize))
            .await?;
        let snap = meta::encode(&snap, self.block as usize);
        if snap.len() as u64 + self.block > self.io.zone_capacity_bytes() {
            return Err(FsError::NoSpace(
                "the metadata snapshot does not fit one zone",
            ));
        }
        self.append_meta(&snap).await?;
        let mut st = self.st.borrow_mut();
        for (id, n) in held {
            if let Some(f) = st.files.get_mut(&id) {
                f.synced = f.synced.max(n);
            }
        }
        Ok(())
    }

    async fn append_meta(&self, bytes: &[u8]) -> Result<(), FsError> {
        let (zone, wp) = {
            let st = self.st.borrow();
            (st.meta_zone, st.meta_wp)
        };
        self.io
            .write(zone as u64 * self.zone_bytes + wp, bytes)
            .await?;
        self.st.borrow_mut().meta_wp += bytes.len() as u64;
        Ok(())
    }

    /// Log one record; roll to the next metadata zone when this one is full.
    async fn log(&self, r: Record) -> Result<(), FsError> {
        let _one_at_a_time = self.meta_lock.lock().await;
        let bytes = meta::encode(&r, self.block as usize);
        let (zone, wp, seq) = {
            let st = self.st.borrow();
            (st.meta_zone, st.meta_wp, st.sb.sequence)
        };
        let cap = self.io.zone_capacity_bytes();
        self.st.borrow_mut().meta_records += 1;
        if wp + bytes.len() as u64 <= cap {
            return self.append_meta(&bytes).await;
        }
        // Roll: end record if it fits, finish the old zone, new superblock and snapshot in the
        // next one (the snapshot holds this record's effect, applied by the caller already),
        // then reset the old zone.
        let end = meta::encode(&Record::End, self.block as usize);
        if wp + end.len() as u64 <= cap {
            self.append_meta(&end).await?;
        }
        self.io.zone_action(zone, ZoneAction::Finish).await?;
        let next = (zone + 1) % META_ZONES;
        self.io.zone_action(next, ZoneAction::Reset).await?;
        self.start_meta_zone(next, seq + 1).await?;
        self.io.zone_action(zone, ZoneAction::Reset).await?;
        Ok(())
    }

    /// Create a file for writing (logged at once, as ZenFS's OpenWritableFile does).
    pub async fn create(&self, name: &str, lifetime: Lifetime) -> Result<u64, FsError> {
        let meta = {
            let mut st = self.st.borrow_mut();
            if st.names.contains_key(name) {
                return Err(FsError::Exists(name.into()));
            }
            let id = st.next_id;
            st.next_id += 1;
            let meta = FileMeta {
                id,
                lifetime: lifetime as u32,
                // ZenFS: `.log` files (WALs) take the sparse path.
                sparse: name.ends_with(".log"),
                links: vec![name.to_string()],
                ..FileMeta::default()
            };
            st.names.insert(name.to_string(), id);
            st.files.insert(
                id,
                OpenFile {
                    meta: meta.clone(),
                    synced: 0,
                    zone: None,
                    writing: true,
                    readers: 0,
                },
            );
            meta
        };
        let id = meta.id;
        self.log(Record::Update(meta)).await?;
        Ok(id)
    }

    /// The zone a file of `lifetime` should write next (ZenFS's AllocateIOZone).
    async fn allocate(&self, lifetime: u32, wal: bool) -> Result<usize, FsError> {
        if !wal {
            self.apply_finish_threshold().await?;
        }
        // An open token: a zone held by a writer is an open zone.
        loop {
            let (held, limit) = {
                let st = self.st.borrow();
                let held = st.zones.iter().filter(|z| z.busy).count() as u32;
                let reserve = if wal { 2 } else { RESERVED_OPEN_NON_WAL };
                (held, st.open_limit - reserve)
            };
            if held < limit {
                break;
            }
            self.st.borrow_mut().counters.open_token_waits += 1;
            self.zone_freed.notified().await;
        }
        enum Pick {
            Open(usize),
            Empty(usize),
            Finish(usize),
            Wait,
        }
        loop {
            let pick = {
                let st = self.st.borrow();
                let mut best: Option<(u32, usize)> = None;
                for (i, z) in st.zones.iter().enumerate() {
                    if z.busy || z.in_action || z.used == 0 || z.remaining() == 0 {
                        continue;
                    }
                    let d = lifetime_diff(z.lifetime, lifetime);
                    // Ties go to the later zone (ZenFS compares with <=).
                    if best.is_none_or(|(bd, _)| d <= bd) {
                        best = Some((d, i));
                    }
                }
                // A zone a writer holds counts as active even before its first write lands,
                // or concurrent allocations overrun the device's active limit.
                let active = st
                    .zones
                    .iter()
                    .filter(|z| z.is_active() || (z.busy && !z.finished))
                    .count() as u32;
                let empty = st
                    .zones
                    .iter()
                    .position(|z| z.wp == 0 && !z.busy && !z.finished && !z.in_action);
                // The idle partial zone with the least room left, to finish for a token.
                let cheapest = st
                    .zones
                    .iter()
                    .enumerate()
                    .filter(|(_, z)| !z.busy && !z.in_action && z.is_active())
                    .min_by_key(|(_, z)| z.remaining())
                    .map(|(i, _)| i);
                match (best, empty) {
                    (Some((d, i)), _) if d < 50 => Pick::Open(i),
                    (_, Some(e)) if active < st.active_limit => Pick::Empty(e),
                    (Some((50, i)), _) => Pick::Open(i),
                    (_, Some(_)) if cheapest.is_some() => Pick::Finish(cheapest.expect("checked")),
                    // Every active zone has a writer: wait for one to let go.
                    (_, Some(_)) if active > 0 => Pick::Wait,
                    _ => return Err(FsError::NoSpace("zone allocation failure")),
                }
            };
            let i = match pick {
                Pick::Finish(c) => {
                    self.st.borrow_mut().counters.finished_for_token += 1;
                    self.finish_zone(c).await?;
                    continue;
                }
                Pick::Wait => {
                    self.zone_freed.notified().await;
                    continue;
                }
                Pick::Open(i) => i,
                Pick::Empty(e) => {
                    self.st.borrow_mut().zones[e].lifetime = lifetime;
                    e
                }
            };
            self.st.borrow_mut().zones[i].busy = true;
            let fresh = self.st.borrow().zones[i].wp == 0;
            if fresh && self.padding_zones() {
                // An explicit open with the padding option; released zones are closed again
                // (`release_zone`), as the device never closes an explicitly opened zone.
                if let Err(e) = self
                    .io
                    .zone_action(i as u32 + META_ZONES, ZoneAction::OpenPadding)
                    .await
                {
                    self.st.borrow_mut().zones[i].busy = false;
                    self.zone_freed.notify_waiters();
                    return Err(e.into());
                }
            }
            return Ok(i);
        }
    }

    /// Finish every idle, partly written zone with less than the finish threshold left
    /// (ZenFS's ApplyFinishThreshold).
    async fn apply_finish_threshold(&self) -> Result<(), FsError> {
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            let pct = st.sb.finish_threshold as u64;
            if pct == 0 {
                return Ok(());
            }
            let mut victims = Vec::new();
            for (i, z) in st.zones.iter_mut().enumerate() {
                if !z.busy
                    && !z.in_action
                    && z.is_active()
                    && z.remaining() * 100 < z.capacity * pct
                {
                    z.in_action = true; // chosen: no writer takes it before its turn
                    victims.push(i);
                }
            }
            victims
        };
        let mut result = Ok(());
        for i in victims {
            if result.is_ok() {
                self.st.borrow_mut().counters.finished_by_threshold += 1;
                result = self.finish_zone(i).await;
            }
            self.st.borrow_mut().zones[i].in_action = false;
        }
        result
    }

    async fn finish_zone(&self, i: usize) -> Result<(), FsError> {
        // Marked first: another allocation running while the Finish is in flight must not
        // pick this zone (found with concurrent flush and compaction writers), nor a deletion
        // reset it.
        {
            let mut st = self.st.borrow_mut();
            st.zones[i].finished = true;
            st.zones[i].in_action = true;
        }
        let done = self
            .io
            .zone_action(i as u32 + META_ZONES, ZoneAction::Finish)
            .await;
        self.st.borrow_mut().zones[i].in_action = false;
        done?;
        Ok(())
    }

    /// Write `data` to file `id` through its zone: padded to blocks, an extent of the real
    /// length per zone it lands in.
    async fn write_extent(&self, id: u64, data: &[u8]) -> Result<(), FsError> {
        let mut at = 0usize;
        while at < data.len() {
            let (zone, lifetime, wal) = {
                let st = self.st.borrow();
                let f = st
                    .files
                    .get(&id)
                    .ok_or(FsError::NotFound(format!("file {id}")))?;
                (f.zone, f.meta.lifetime, f.meta.sparse)
            };
            let zi = match zone {
                Some(z) if self.st.borrow().zones[z].remaining() >= 2 * self.block => z,
                old => {
                    if let Some(z) = old {
                        self.release_zone(z).await?;
                    }
                    let z = self.allocate(lifetime, wal).await?;
                    self.take_zone(id, z).await?;
                    z
                }
            };
            let (pos, room, sparse) = {
                let st = self.st.borrow();
                let z = &st.zones[zi];
                (z.start + z.wp, z.remaining(), st.files[&id].meta.sparse)
            };
            // Sparse files (WALs) carry each piece's length in an 8-byte header before it, so
            // a data sync needs no metadata and mount can walk what reached the zone.
            let header = if sparse { SPARSE_HEADER } else { 0 };
            let len = (data.len() - at).min(room as usize - header);
            let padded = (header + len) as u64;
            let padded = padded.div_ceil(self.block) * self.block;
            let piece = &data[at..at + len];
            if header == 0 && padded == len as u64 {
                // Block-aligned data goes out as it is: no copy.
                self.io.write(pos, piece).await?;
            } else {
                let mut buf = Vec::with_capacity(padded as usize);
                if sparse {
                    buf.extend_from_slice(&(len as u64).to_le_bytes());
                }
                buf.extend_from_slice(piece);
                buf.resize(padded as usize, 0);
                self.io.write(pos, &buf).await?;
            }
            self.extend(id, zi, pos + header as u64, len as u64, padded)
                .await?;
            at += len;
        }
        Ok(())
    }

    /// Record `len` bytes of file `id` at device offset `start`, which took `taken` bytes of
    /// zone `zi`; a zone with no room left gives its open token back at once, as ZenFS's does
    /// when it becomes full.
    async fn extend(
        &self,
        id: u64,
        zi: usize,
        start: u64,
        len: u64,
        taken: u64,
    ) -> Result<(), FsError> {
        let full = {
            let mut st = self.st.borrow_mut();
            let z = &mut st.zones[zi];
            z.wp += taken;
            z.used += len;
            let full = z.remaining() < 2 * self.block;
            let f = st.files.get_mut(&id).expect("file");
            if full {
                f.zone = None;
            }
            f.meta.extents.push(Extent { start, len });
            f.meta.size += len;
            full
        };
        if full {
            self.release_zone(zi).await?;
        }
        Ok(())
    }

    /// File `id` writes zone `z` from now on: its active extent starts at the zone's write
    /// pointer, and that start is durable before data goes there.
    async fn take_zone(&self, id: u64, z: usize) -> Result<(), FsError> {
        {
            let mut st = self.st.borrow_mut();
            let start = st.zones[z].start + st.zones[z].wp;
            let f = st.files.get_mut(&id).expect("file");
            f.zone = Some(z);
            f.meta.active_start = Some(start);
        }
        self.sync_meta(id, false).await
    }

    fn padding_zones(&self) -> bool {
        self.st.borrow().sb.flags & FLAG_PADDING != 0
    }

    /// A writer lets go of zone `zi`. With padding zones a zone that is not full is closed
    /// first (it was opened explicitly, and only the host closes those); it stays owned until
    /// the Close completes so no other writer reaches it in between.
    async fn release_zone(&self, zi: usize) -> Result<(), FsError> {
        let close = {
            let st = self.st.borrow();
            let z = &st.zones[zi];
            st.sb.flags & FLAG_PADDING != 0 && !z.finished && z.wp < z.capacity
        };
        let result = if close {
            self.io
                .zone_action(zi as u32 + META_ZONES, ZoneAction::Close)
                .await
        } else {
            Ok(())
        };
        self.st.borrow_mut().zones[zi].busy = false;
        self.zone_freed.notify_waiters();
        Ok(result?)
    }

    /// Write one CCZNS compressed write for file `id`: `data` (whole blocks, at most the
    /// device's transfer size) holds the chunks of `chunk_sizes` back to back; the device
    /// compresses each and the file grows by what the zone took. A zone with less room than
    /// the uncompressed data is finished and another taken, as CCZNS's ZenFS abandons it.
    /// Returns each chunk's size in the file (its footprint; the last one padded to a block).
    async fn write_compressed(
        &self,
        id: u64,
        data: &[u8],
        chunk_sizes: &[u32],
    ) -> Result<Vec<u32>, FsError> {
        if !self.padding_zones() {
            return Err(FsError::Invalid(
                "compressed writes need padding zones (mkfs with padding_zones)".into(),
            ));
        }
        let need = data.len() as u64;
        if need > self.io.zone_capacity_bytes() || need > self.io.max_transfer_bytes() {
            return Err(FsError::Invalid(format!(
                "a compressed write of {need} bytes: larger than the device's transfer size \
                 or a zone"
            )));
        }
        let zi = loop {
            let (zone, lifetime) = {
                let st = self.st.borrow();
                let f = st
                    .files
                    .get(&id)
                    .ok_or(FsError::NotFound(format!("file {id}")))?;
                (f.zone, f.meta.lifetime)
            };
            match zone {
                Some(z) if self.st.borrow().zones[z].remaining() >= need => break z,
                Some(z) => {
                    self.st.borrow_mut().files.get_mut(&id).expect("file").zone = None;
                    if self.st.borrow().zones[z].remaining() > 0 {
                        self.finish_zone(z).await?;
                    }
                    self.release_zone(z).await?;
                }
                None => {
                    let z = self.allocate(lifetime, false).await?;
                    if self.st.borrow().zones[z].remaining() < need {
                        self.finish_zone(z).await?;
                        self.release_zone(z).await?;
                        continue;
                    }
                    self.take_zone(id, z).await?;
                    break z;
                }
            }
        };
        let pos = {
            let st = self.st.borrow();
            st.zones[zi].start + st.zones[zi].wp
        };
        let fb = self.io.compressed_write(pos, data, chunk_sizes).await?;
        if fb.sizes.len() != chunk_sizes.len() || fb.written % self.block != 0 {
            return Err(FsError::Invalid(format!(
                "compressed write feedback: {} sizes for {} chunks, {} bytes taken (not whole \
                 blocks: is the zone a padding zone?)",
                fb.sizes.len(),
                chunk_sizes.len(),
                fb.written
            )));
        }
        self.extend(id, zi, pos, fb.written, fb.written).await?;
        Ok(fb.sizes)
    }

    /// CCZNS decompressed read from file `name`: the chunks stored in `compressed_len` bytes
    /// from file offset `offset` (where a chunk starts), at most `budget` decompressed bytes,
    /// appended to `out`. Single-chunk returns the chunk at `offset`. A range over several
    /// extents takes one command per extent (CCZNS's ZenFS concatenates their feedback).
    /// Returns each chunk's (decompressed, stored) size.
    pub async fn decompressed_read(
        &self,
        name: &str,
        offset: u64,
        compressed_len: u64,
        multi: bool,
        budget: u64,
        out: &mut Vec<u8>,
    ) -> Result<Vec<(u32, u32)>, FsError> {
        let (id, extents) = self.begin_read(name)?;
        let result = self
            .dr_extents(&extents, offset, compressed_len, multi, budget, out)
            .await;
        self.end_read(id);
        result
    }

    async fn dr_extents(
        &self,
        extents: &[Extent],
        offset: u64,
        compressed_len: u64,
        multi: bool,
        mut budget: u64,
        out: &mut Vec<u8>,
    ) -> Result<Vec<(u32, u32)>, FsError> {
        let mut chunks = Vec::new();
        let mut file_off = 0u64;
        let end = offset + compressed_len;
        for e in extents {
            let (lo, hi) = (offset.max(file_off), end.min(file_off + e.len));
            file_off += e.len;
            if lo >= hi || budget == 0 {
                continue;
            }
            let dev = e.start + (lo - (file_off - e.len));
            let room = budget
                .div_ceil(self.block)
                .saturating_mul(self.block)
                .min(self.io.max_transfer_bytes());
            let at = out.len();
            out.resize(at + room as usize, 0);
            let got = self
                .io
                .decompressed_read(dev, hi - lo, multi, &mut out[at..])
                .await?;
            let bytes: u64 = got.iter().map(|c| c.0 as u64).sum();
            out.truncate(at + bytes as usize);
            budget = budget.saturating_sub(bytes);
            chunks.extend(got);
            if !multi {
                break;
            }
        }
        Ok(chunks)
    }

    /// Log the extents a file gained since its last record.
    async fn sync_meta(&self, id: u64, closing: bool) -> Result<(), FsError> {
        let rec = {
            let mut st = self.st.borrow_mut();
            let f = st
                .files
                .get_mut(&id)
                .ok_or(FsError::NotFound(format!("file {id}")))?;
            if closing {
                f.meta.active_start = None;
                f.writing = false;
            }
            let mut u = f.meta.clone();
            u.extents = f.meta.extents[f.synced..].to_vec();
            let from = f.synced;
            f.synced = f.meta.extents.len();
            (Record::Update(u), from)
        };
        let (rec, from) = rec;
        if closing {
            let z = self
                .st
                .borrow_mut()
                .files
                .get_mut(&id)
                .and_then(|f| f.zone.take());
            if let Some(z) = z {
                self.release_zone(z).await?;
            }
        }
        let logged = self.log(rec).await;
        if logged.is_err() {
            // Not logged (or not known to be): the next sync logs these extents again (replay
            // keeps an extent once).
            if let Some(f) = self.st.borrow_mut().files.get_mut(&id) {
                f.synced = f.synced.min(from);
            }
        }
        logged
    }

    /// Open `name` for appending through a 1 MiB buffer.
    pub async fn writer(
        self: &Rc<Self>,
        name: &str,
        lifetime: Lifetime,
    ) -> Result<FileWriter, FsError> {
        let id = self.create(name, lifetime).await?;
        Ok(FileWriter {
            fs: self.clone(),
            id,
            buf: Vec::with_capacity(WRITE_BUFFER),
        })
    }

    /// Files that can hold a zone for writing at once: WALs, or any other file (ZenFS's open
    /// tokens).
    pub fn open_file_limit(&self, wal: bool) -> u32 {
        let st = self.st.borrow();
        let by_open = st.open_limit - if wal { 2 } else { RESERVED_OPEN_NON_WAL };
        by_open.min(st.active_limit)
    }

    /// The host I/O layer under the file system.
    pub fn io(&self) -> &Rc<HostIo> {
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

    /// Read `buf.len()` bytes of `name` from `offset`; short if the file ends first.
    pub async fn read(&self, name: &str, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let (id, extents) = self.begin_read(name)?;
        let result = self.read_extents(&extents, offset, buf).await;
        self.end_read(id);
        result
    }

    /// A read of `name` starts: its extents, and one more reader (GC waits for none).
    fn begin_read(&self, name: &str) -> Result<(u64, Vec<Extent>), FsError> {
        let mut st = self.st.borrow_mut();
        let id = *st
            .names
            .get(name)
            .ok_or_else(|| FsError::NotFound(name.into()))?;
        let f = st.files.get_mut(&id).expect("named file");
        f.readers += 1;
        Ok((id, f.meta.extents.clone()))
    }

    fn end_read(&self, id: u64) {
        let mut st = self.st.borrow_mut();
        if let Some(f) = st.files.get_mut(&id) {
            f.readers -= 1;
            if f.readers == 0 {
                self.reads_done.notify_waiters();
            }
        }
    }

    async fn read_extents(
        &self,
        extents: &[Extent],
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, FsError> {
        let mut done = 0usize;
        let mut file_off = 0u64;
        for e in extents.iter().copied() {
            if done == buf.len() {
                break;
            }
            let want = offset + done as u64;
            if want >= file_off + e.len {
                file_off += e.len;
                continue;
            }
            let in_ext = want - file_off;
            let n = ((e.len - in_ext) as usize).min(buf.len() - done);
            // Whole blocks around the range, as a direct read would.
            let dev = e.start + in_ext;
            let first = dev / self.block * self.block;
            let end = (dev + n as u64).div_ceil(self.block) * self.block;
            let mut tmp = vec![0u8; (end - first) as usize];
            self.io.read(first, &mut tmp).await?;
            let s = (dev - first) as usize;
            buf[done..done + n].copy_from_slice(&tmp[s..s + n]);
            done += n;
            file_off += e.len;
        }
        Ok(done)
    }

    /// Remove a name; the file goes with its last link, and zones left with no live data
    /// are reset.
    pub async fn delete(&self, name: &str) -> Result<(), FsError> {
        let (id, held) = {
            let mut st = self.st.borrow_mut();
            let id = st
                .names
                .remove(name)
                .ok_or_else(|| FsError::NotFound(name.into()))?;
            let f = st.files.get_mut(&id).expect("file");
            f.meta.links.retain(|l| l != name);
            let mut held = None;
            if f.meta.links.is_empty() {
                let f = st.files.remove(&id).expect("file");
                held = f.zone;
                for e in &f.meta.extents {
                    if let Some(z) = st.zone_of(e.start, self.zone_bytes) {
                        st.zones[z].used -= e.len;
                    }
                }
            }
            (id, held)
        };
        if let Some(z) = held {
            self.release_zone(z).await?;
        }
        self.log(Record::Deletion {
            id,
            link: name.to_string(),
        })
        .await?;
        self.reset_unused().await
    }

    /// Extend a file that was open for writing at a power cut with what reached its zone
    /// between `start` and the zone's write pointer `end`: one extent for a buffered file
    /// (padding included, as ZenFS), the pieces the inline headers describe for a sparse one.
    async fn repair(&self, f: &mut FileMeta, start: u64, end: u64) -> Result<(), FsError> {
        let in_zone = |e: &&Extent| e.start >= start && e.start < end;
        if !f.sparse {
            let covered = f
                .extents
                .iter()
                .filter(in_zone)
                .map(|e| e.start + e.len)
                .max()
                .unwrap_or(start);
            if end > covered {
                f.extents.push(Extent {
                    start: covered,
                    len: end - covered,
                });
            }
            return Ok(());
        }
        // Sparse: walk the headers from the last recorded piece on.
        let mut at = f
            .extents
            .iter()
            .filter(in_zone)
            .map(|e| (e.start + e.len).div_ceil(self.block) * self.block)
            .max()
            .unwrap_or(start);
        let mut head = vec![0u8; self.block as usize];
        while at + self.block <= end {
            self.io.read(at, &mut head).await?;
            let len = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
            let padded = (SPARSE_HEADER as u64 + len).div_ceil(self.block) * self.block;
            if len == 0 || at + padded > end {
                break;
            }
            f.extents.push(Extent {
                start: at + SPARSE_HEADER as u64,
                len,
            });
            at += padded;
        }
        Ok(())
    }

    /// Start a GC pass if GC is on, none runs and the last began `GC_INTERVAL_S` ago (ZenFS's
    /// GC thread sleeps 10 s between passes; here the writers' progress wakes it, so an idle
    /// file system keeps no task alive).
    fn maybe_gc(self: &Rc<Self>) {
        let now = self.io.sim().now();
        {
            let mut st = self.st.borrow_mut();
            if st.sb.flags & FLAG_GC == 0
                || st.gc_running
                || now.since(st.last_gc).as_ns() < GC_INTERVAL_S * 1_000_000_000
            {
                return;
            }
            st.gc_running = true;
            st.last_gc = now;
        }
        let me = self.clone();
        self.io.sim().spawn(async move {
            // A failed pass leaves every file as it was (extents swap only after their copy
            // is written); the next pass tries again.
            let _ = me.gc_pass().await;
            me.st.borrow_mut().gc_running = false;
        });
    }

    /// One GC pass (ZenFS's GCWorker body): when free space is at or below 20%, move the live
    /// extents of every full zone whose garbage share exceeds the threshold.
    pub async fn gc_pass(&self) -> Result<(), FsError> {
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            st.counters.gc_passes += 1;
            let (mut free, mut used, mut reclaimable) = (0u64, 0u64, 0u64);
            for z in &st.zones {
                free += z.remaining();
                used += z.used;
                if z.remaining() == 0 {
                    reclaimable += z.capacity - z.used;
                }
            }
            let free_pct = 100 * free / (free + used + reclaimable).max(1);
            if free_pct > GC_START_LEVEL {
                return Ok(());
            }
            let threshold = 100 - GC_SLOPE * (GC_START_LEVEL - free_pct);
            let mut victims = Vec::new();
            for (i, z) in st.zones.iter_mut().enumerate() {
                let garbage = 100 - 100 * z.used / z.capacity.max(1);
                if !z.busy
                    && !z.in_action
                    && z.remaining() == 0
                    && z.used > 0
                    && garbage > threshold
                {
                    // Chosen: a deletion's reset must not empty it under the migration.
                    z.in_action = true;
                    victims.push(i);
                }
            }
            victims
        };
        let mut result = Ok(());
        for zi in victims {
            if result.is_ok() {
                self.st.borrow_mut().counters.gc_zones += 1;
                result = self.migrate_zone(zi).await;
            }
            self.st.borrow_mut().zones[zi].in_action = false;
            if result.is_ok() {
                // The zone just emptied (and any other), before the next migration.
                result = self.reset_unused().await;
            }
        }
        result
    }

    /// Move every extent in zone `zi` of a closed, non-sparse file into a partly written
    /// zone of a suiting lifetime with room for it (never an empty zone: GC must not take an
    /// active zone from writers); extents with no such zone stay.
    async fn migrate_zone(&self, zi: usize) -> Result<(), FsError> {
        let (zstart, zend) = {
            let st = self.st.borrow();
            (
                st.zones[zi].start,
                st.zones[zi].start + st.zones[zi].capacity,
            )
        };
        let in_zone = |e: &Extent| e.start >= zstart && e.start < zend;
        let candidates: Vec<u64> = {
            let st = self.st.borrow();
            st.files
                .iter()
                .filter(|(_, f)| !f.writing && !f.meta.sparse && f.meta.extents.iter().any(in_zone))
                .map(|(&id, _)| id)
                .collect()
        };
        let mut buf = vec![0u8; GC_COPY_BYTES];
        for id in candidates {
            let Some((lifetime, extents)) = self
                .st
                .borrow()
                .files
                .get(&id)
                .map(|f| (f.meta.lifetime, f.meta.extents.clone()))
            else {
                continue; // deleted meanwhile
            };
            let mut moved: Vec<(usize, Extent)> = Vec::new();
            for (k, e) in extents.iter().enumerate().filter(|(_, e)| in_zone(e)) {
                let padded = e.len.div_ceil(self.block) * self.block;
                let Some(target) = self.take_migrate_zone(lifetime, padded) else {
                    continue;
                };
                let dst = {
                    let st = self.st.borrow();
                    st.zones[target].start + st.zones[target].wp
                };
                // Copy in 128 KiB reads and appends, the last padded to the block.
                let mut off = 0u64;
                let copied: Result<(), FsError> = async {
                    while off < padded {
                        let n = (padded - off).min(GC_COPY_BYTES as u64) as usize;
                        self.io.read(e.start + off, &mut buf[..n]).await?;
                        self.io.write(dst + off, &buf[..n]).await?;
                        off += n as u64;
                    }
                    Ok(())
                }
                .await;
                let mut st = self.st.borrow_mut();
                st.zones[target].wp += off;
                st.zones[target].busy = false;
                st.counters.gc_bytes_written += off;
                drop(st);
                self.zone_freed.notify_waiters();
                copied?;
                moved.push((
                    k,
                    Extent {
                        start: dst,
                        len: e.len,
                    },
                ));
            }
            if moved.is_empty() {
                continue;
            }
            // Swap the extents once no read of the file is in flight, then log the file's
            // whole extent list (ZenFS's replace record).
            loop {
                match self.st.borrow().files.get(&id) {
                    Some(f) if f.readers > 0 => {}
                    _ => break,
                }
                self.reads_done.notified().await;
            }
            let rec = {
                let mut st = self.st.borrow_mut();
                let Some(f) = st.files.get_mut(&id) else {
                    // Deleted while being copied: the copies are garbage in their zones.
                    continue;
                };
                let mut changes = Vec::new();
                for (k, new) in &moved {
                    let old = f.meta.extents[*k];
                    f.meta.extents[*k] = *new;
                    changes.push((old, *new));
                }
                f.synced = f.meta.extents.len();
                let meta = f.meta.clone();
                for (old, new) in changes {
                    if let Some(z) = st.zone_of(old.start, self.zone_bytes) {
                        st.zones[z].used -= old.len;
                    }
                    if let Some(z) = st.zone_of(new.start, self.zone_bytes) {
                        st.zones[z].used += new.len;
                    }
                }
                st.counters.gc_extents += moved.len() as u64;
                Record::Replace(meta)
            };
            self.log(rec).await?;
        }
        Ok(())
    }

    /// A partly written, idle zone whose lifetime suits `lifetime` with `room` bytes left,
    /// taken for a migration (ZenFS's TakeMigrateZone with GetBestOpenZoneMatch).
    fn take_migrate_zone(&self, lifetime: u32, room: u64) -> Option<usize> {
        let mut st = self.st.borrow_mut();
        let mut best: Option<(u32, usize)> = None;
        for (i, z) in st.zones.iter().enumerate() {
            if z.busy || z.used == 0 || z.remaining() < room {
                continue;
            }
            let d = lifetime_diff(z.lifetime, lifetime);
            if best.is_none_or(|(bd, _)| d <= bd) {
                best = Some((d, i));
            }
        }
        // Any distance will do (ZenFS starts from "not good" and accepts ties).
        let (_, i) = best?;
        st.zones[i].busy = true;
        Some(i)
    }

    /// Reset every idle IO zone that holds no live data (ZenFS's ResetUnusedIOZones).
    async fn reset_unused(&self) -> Result<(), FsError> {
        // Chosen and marked at once: several tasks delete files side by side (a compaction,
        // the last lookup of a retired table), and a victim chosen by two would be reset twice,
        // the second time perhaps after a new file was allocated in it.
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            let mut victims = Vec::new();
            for (i, z) in st.zones.iter_mut().enumerate() {
                if !z.busy && !z.in_action && z.used == 0 && (z.wp > 0 || z.finished) {
                    z.in_action = true;
                    victims.push(i);
                }
            }
            victims
        };
        let mut result = Ok(());
        for i in victims {
            if result.is_ok() {
                result = self
                    .io
                    .zone_action(i as u32 + META_ZONES, ZoneAction::Reset)
                    .await;
                if result.is_ok() {
                    let mut st = self.st.borrow_mut();
                    st.counters.resets += 1;
                    let z = &mut st.zones[i];
                    z.wp = 0;
                    z.finished = false;
                    z.lifetime = 0;
                }
            }
            self.st.borrow_mut().zones[i].in_action = false;
        }
        Ok(result?)
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

    /// Mount: replay the newest metadata zone whose log decodes, rebuild zone usage, extend
    /// files that were open for writing to their zone's write pointer, roll to a fresh
    /// metadata zone, reset zones with no live data.
    pub async fn mount(io: Rc<HostIo>) -> Result<ZoneFs, FsError> {
        let zones = io.report_zones().await?;
        if zones.len() < (META_ZONES + 2) as usize {
            return Err(FsError::Invalid("too few zones for zonefs".into()));
        }
        let block = io.lba_bytes();
        let mut best: Option<(Superblock, Vec<Record>, u32)> = None;
        let mut first_err = None;
        for m in 0..META_ZONES {
            let z = &zones[m as usize];
            let written = (z.wp.saturating_sub(z.zslba)).min(z.capacity) * block;
            if written == 0 || z.state == ZoneState::Offline {
                continue;
            }
            let mut log = vec![0u8; written as usize];
            io.read(z.zslba * block, &mut log).await?;
            match meta::decode_log(&log, block as usize) {
                Ok((sb, recs)) if recs.iter().any(|r| matches!(r, Record::Snapshot(_))) => {
                    if best
                        .as_ref()
                        .is_none_or(|(b, _, _)| sb.sequence > b.sequence)
                    {
                        best = Some((sb, recs, m));
                    }
                }
                Ok(_) => {} // a roll cut before its snapshot: the older zone holds the truth
                Err(e) => first_err = first_err.or(Some(e)),
            }
        }
        let Some((sb, recs, meta_zone)) = best else {
            return Err(match first_err {
                Some(e) => FsError::Meta(e),
                None => FsError::NoFileSystem,
            });
        };
        let fs = ZoneFs::new(io.clone(), &zones, sb.finish_threshold)?;
        {
            let mut st = fs.st.borrow_mut();
            st.sb = sb.clone();
            st.meta_zone = meta_zone;
            for (i, z) in st.zones.iter_mut().enumerate() {
                let d = &zones[i + META_ZONES as usize];
                z.wp = match d.state {
                    ZoneState::Full => d.capacity * block,
                    _ => (d.wp - d.zslba) * block,
                };
                z.finished = d.state == ZoneState::Full && z.wp < z.capacity;
            }
        }
        let mut replayed = meta::replay(&recs);
        // Repair: a file open for writing at the crash keeps what reached its zone.
        for f in replayed.values_mut() {
            if let Some(start) = f.active_start.take() {
                let zone_end = {
                    let st = fs.st.borrow();
                    st.zone_of(start, fs.zone_bytes)
                        .map(|zi| st.zones[zi].start + st.zones[zi].wp)
                };
                if let Some(end) = zone_end {
                    fs.repair(f, start, end).await?;
                }
                f.size = f.extents.iter().map(|e| e.len).sum();
            }
        }
        {
            let mut st = fs.st.borrow_mut();
            for (id, f) in replayed {
                for e in &f.extents {
                    if let Some(zi) = st.zone_of(e.start, fs.zone_bytes) {
                        st.zones[zi].used += e.len;
                        st.zones[zi].lifetime = f.lifetime;
                    }
                }
                for l in &f.links {
                    st.names.insert(l.clone(), id);
                }
                st.next_id = st.next_id.max(id + 1);
                let synced = f.extents.len();
                st.files.insert(
                    id,
                    OpenFile {
                        meta: f,
                        synced,
                        zone: None,
                        writing: false,
                        readers: 0,
                    },
                );
            }
        }
        let next = (meta_zone + 1) % META_ZONES;
        io.zone_action(next, ZoneAction::Reset).await?;
        fs.start_meta_zone(next, sb.sequence + 1).await?;
        for m in 0..META_ZONES {
            if m != next {
                io.zone_action(m, ZoneAction::Reset).await?;
            }
        }
        fs.reset_unused().await?;
        Ok(fs)
    }
}

impl State {
    fn zone_of(&self, dev: u64, zone_bytes: u64) -> Option<usize> {
        (dev / zone_bytes)
            .checked_sub(META_ZONES as u64)
            .map(|z| z as usize)
            .filter(|&z| z < self.zones.len())
    }
}

/// A file open for appending through ZenFS's 1 MiB buffer.
pub struct FileWriter {
    fs: Rc<ZoneFs>,
    id: u64,
    buf: Vec<u8>,
}

impl FileWriter {
    pub async fn append(&mut self, mut data: &[u8]) -> Result<(), FsError> {
        while !data.is_empty() {
            let n = (WRITE_BUFFER - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.buf.len() == WRITE_BUFFER {
                self.flush().await?;
            }
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), FsError> {
        if !self.buf.is_empty() {
            let data = std::mem::take(&mut self.buf);
            self.fs.write_extent(self.id, &data).await?;
            self.buf = data;
            self.buf.clear();
            self.fs.maybe_gc();
        }
        Ok(())
    }

    /// Append one CCZNS compressed write: `data` is whole blocks (at most the device's
    /// transfer size) holding the chunks of `chunk_sizes` back to back, which the device
    /// compresses. What was appended before goes out first. Returns each chunk's size in the
    /// file (the last one padded to a block); the file grows by their sum.
    pub async fn append_compressed(
        &mut self,
        data: &[u8],
        chunk_sizes: &[u32],
    ) -> Result<Vec<u32>, FsError> {
        self.flush().await?;
        let sizes = self.fs.write_compressed(self.id, data, chunk_sizes).await?;
        self.fs.maybe_gc();
        Ok(sizes)
    }

    /// Everything appended so far is durable: on the device, and for a buffered file in the
    /// metadata log too (a sparse file's data carries its own lengths: no record, as ZenFS's
    /// inline extents).
    pub async fn sync(&mut self) -> Result<(), FsError> {
        self.flush().await?;
        if self.fs.is_sparse(self.id) {
            return Ok(());
        }
        self.fs.sync_meta(self.id, false).await
    }

    pub async fn close(mut self) -> Result<(), FsError> {
        self.flush().await?;
        self.fs.sync_meta(self.id, true).await
    }
}
