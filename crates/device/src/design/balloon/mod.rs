//! Balloon-ZNS (DAC'24 §3): host-transparent compression in a ZNS SSD.
//!
//! Flash is cut into superblocks (one block on every die) and each superblock into
//! sub-superblocks (SSBs) of `dies / groups` dies. A zone takes SSBs on demand as its *home*
//! segments; every 4 KiB page is compressed and stored in a fixed-size slot of the home stream.
//! The slot size of each profiling window is the chosen percentile of the previous window's
//! compressed sizes, in 256 B units (the first window: half a page). A page that does not fit
//! its slot is truncated: the slot keeps the leading part and a 6-byte header (compressed length,
//! residue offset), the residue goes to the zone's residue stream, logged in *extra* SSBs that
//! zones share (one open zone writes an extra SSB at a time). Reading a truncated page takes two
//! flash reads in sequence: the slot gives the residue's offset.
//!
//! The residue stream is addressed by offsets, not flash addresses; the zone table maps stream
//! offsets to segments (extents), so residues can move: to the zone's own home segment when the
//! zone fills and room is left there (migration), or out of an extra SSB that is reclaimed when
//! free SSBs run short (reclamation). A window whose compression ratio falls below the
//! incompressible watermark turns the rest of the zone raw, on a whole superblock if one is free.
//! Logical capacity is the flash times the expansion ratio; when flash runs out a write fails
//! with Capacity Exceeded and changes nothing.
//!
//! The bytes stored are the real compressed bytes, and reads really decompress them, so every
//! round trip checks the layout. An image keeps the flash bytes by physical address, and the
//! tables as checkpoints and a journal of what each command changed (`balloon/persist.rs`).
//!
//! This file holds the layout and the write and read paths; `balloon/space.rs` what gives
//! space back (reset, migration, reclamation, erases).

use codec::Direction;
use nand::DieId;
use serde::{Deserialize, Serialize};

pub mod config;
mod hooks;
pub(crate) mod layout;
mod persist;
mod space;
use sim::SimInstant;

use super::Media;
use crate::design::region::FlashRegion;
use crate::status::Status;
use layout::BalloonLayout;

/// Slot and residue granularity (§3.1: "aligned with one or multiple 256B units").
pub(crate) const UNIT: u64 = 256;
/// Housekeeping header at the start of every slot: compressed length u16 (0 = stored raw, 4096
/// bytes), residue offset u32 in 256 B units of the zone's residue stream.
pub(crate) const HEADER: u64 = 6;
pub(crate) const PAGE: u64 = 4096;
/// Free SSBs kept back so reclamation always has somewhere to copy to.
const RESERVE_SSBS: u32 = 1;
/// Histogram buckets: footprint in 256 B units, 1..=16, and 17 for a page over a page.
const BUCKETS: usize = 18;

type SegId = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum SegKind {
    Home,
    Extra,
}

/// One allocated flash segment: an SSB, or a whole superblock for an incompressible zone.
struct Segment {
    kind: SegKind,
    row: u32,
    /// First SSB group and how many (1, or `groups` for a whole superblock).
    group: u32,
    ssbs: u32,
    cap: u64,
    /// Its flash: the bytes appended so far (written sequentially) and their programs.
    region: FlashRegion,
    /// Extra segments: residue bytes still referenced, and the open zone writing it.
    valid: u64,
    owner: Option<usize>,
}

/// A segment's flash address: its row's and group's first SSB.
fn seg_addr(lay: &BalloonLayout, s: &Segment) -> u64 {
    (s.row as u64 * lay.groups as u64 + s.group as u64) * lay.ssb_bytes
}

impl Segment {
    /// Bytes appended so far.
    fn len(&self) -> u64 {
        self.region.bytes.len()
    }
}

/// Copy bytes [off, off + out.len()) of segment `id` into `out` (from memory or the image).
fn seg_read(
    b: &Balloon,
    storage: &crate::storage::Storage,
    id: SegId,
    off: u64,
    out: &mut [u8],
) -> Result<(), Status> {
    let s = b.seg(id);
    s.region.bytes.read(storage, b.addr(s), off, out)
}

/// Append bytes [off, off + len) of segment `id` to `out`.
fn seg_append(
    b: &Balloon,
    storage: &crate::storage::Storage,
    id: SegId,
    off: u64,
    len: u64,
    out: &mut Vec<u8>,
) -> Result<(), Status> {
    let at = out.len();
    out.resize(at + len as usize, 0);
    seg_read(b, storage, id, off, &mut out[at..])
}

/// A piece of a zone's residue stream: `len` bytes at `stream` live at `seg_off` of `seg`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
struct Extent {
    stream: u64,
    seg: SegId,
    seg_off: u64,
    len: u64,
}

/// Where a zone's next page goes: the part of the zone state that placement changes.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
struct Cursor {
    page: u64,
    /// End of the home stream and of the allocated home capacity.
    home: u64,
    home_cap: u64,
    /// End of the residue stream (256 B aligned).
    residue: u64,
    /// Slot of the current window in 256 B units; 0 = raw pages.
    slot: u32,
    raw_zone: bool,
    hist: [u32; BUCKETS],
    win_logical: u64,
    win_stored: u64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
struct Window {
    slot: u32,
    home_start: u64,
}

#[derive(Default, Clone, Serialize, Deserialize, PartialEq)]
struct BZone {
    cur: Cursor,
    windows: Vec<Window>,
    /// Home segments in stream order with their stream start.
    home: Vec<(SegId, u64)>,
    residues: Vec<Extent>,
    /// The extra segment this zone writes residues to while open.
    extra: Option<SegId>,
}

/// Where one page went.
#[derive(Clone, Copy, Debug)]
struct Place {
    home_off: u64,
    /// Bytes in the slot: min(slot, header + compressed), or 4096 raw.
    home_len: u64,
    slot_bytes: u64,
    residue_off: u64,
    residue_len: u64,
}

/// What the Balloon-ZNS storage manager has done.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BalloonCounters {
    pub pages_written: u64,
    /// Sum of the compressed sizes of the pages written (raw pages count 4096).
    pub compressed_bytes: u64,
    /// Slot bytes taken in home segments (the footprint of slot alignment).
    pub slot_bytes: u64,
    pub residue_bytes: u64,
    pub truncated_pages: u64,
    pub raw_windows: u64,
    pub windows: u64,
    /// Pages read, and those that needed a second, serialized flash read.
    pub pages_read: u64,
    pub two_read_pages: u64,
    pub migrations: u64,
    pub migrated_bytes: u64,
    pub reclamations: u64,
    pub reclaimed_bytes: u64,
    /// SSBs in use now (home and extra), of `ssbs_total`; and the most ever in use.
    pub home_ssbs: u64,
    pub extra_ssbs: u64,
    pub ssbs_total: u64,
    pub ssb_bytes: u64,
    pub peak_ssbs: u64,
}

pub struct Balloon {
    lay: BalloonLayout,
    /// Pages one flash read senses (a physical page's sectors).
    pages_per_read: u32,
    percentile: u32,
    first_slot: u32,
    watermark: u32,
    zones: Vec<BZone>,
    segments: Vec<Option<Segment>>,
    free_slots: Vec<SegId>,
    /// Per SSB (row × groups + group): the segment using it.
    ssb_owner: Vec<Option<SegId>>,
    free_ssbs: u32,
    /// Extra segments with room and no open zone writing them.
    pool: Vec<SegId>,
    /// Compressed pages of the command in flight, and their lengths (0 = stored raw).
    sizes: Vec<u32>,
    pub counters: BalloonCounters,
    /// The tables as the image last recorded them (`persist.rs`).
    recorded: persist::Recorded,
}

impl Balloon {
    pub fn new(lay: BalloonLayout, cfg: &crate::config::BalloonConfig, zones: u32) -> Balloon {
        let ssbs = lay.rows * lay.groups;
        Balloon {
            pages_per_read: cfg.pages_per_read,
            percentile: cfg.slot_percentile,
            first_slot: cfg.first_slot_units,
            watermark: cfg.incompressible_below_percent,
            zones: (0..zones).map(|_| BZone::default()).collect(),
            segments: Vec::new(),
            free_slots: Vec::new(),
            ssb_owner: vec![None; ssbs as usize],
            free_ssbs: ssbs,
            pool: Vec::new(),
            sizes: Vec::new(),
            recorded: persist::Recorded::default(),
            counters: BalloonCounters {
                ssbs_total: ssbs as u64,
                ssb_bytes: lay.ssb_bytes,
                ..BalloonCounters::default()
            },
            lay,
        }
    }

    /// Zone-table DRAM (§3.1: zone-level mapping, window starts, residue extents).
    pub fn table_bytes(&self) -> u64 {
        self.zones
            .iter()
            .map(|z| 32 + 16 * (z.windows.len() + z.home.len() + z.residues.len()) as u64)
            .sum()
    }

    /// Physical byte address of a segment's start.
    fn addr(&self, s: &Segment) -> u64 {
        seg_addr(&self.lay, s)
    }

    fn seg(&self, id: SegId) -> &Segment {
        self.segments[id].as_ref().expect("live segment")
    }
    fn seg_mut(&mut self, id: SegId) -> &mut Segment {
        self.segments[id].as_mut().expect("live segment")
    }

    /// Segment `id`'s dies as (first die, count): program units go round them.
    fn dies_of(&self, id: SegId) -> (u32, u64) {
        let s = self.seg(id);
        (
            s.group * self.lay.dies_per_ssb,
            (s.ssbs * self.lay.dies_per_ssb) as u64,
        )
    }

    /// The die holding byte `off` of segment `id`.
    fn die_at(&self, id: SegId, off: u64, unit: u64) -> DieId {
        let (first, dies) = self.dies_of(id);
        DieId(first + ((off / unit) % dies) as u32)
    }

    /// Take `count` SSBs (1, or a whole free superblock for `count == groups`) as a new segment.
    fn alloc(&mut self, kind: SegKind, whole_row: bool) -> Option<SegId> {
        let g = self.lay.groups as usize;
        let (row, group, ssbs) = if whole_row {
            let r = (0..self.lay.rows as usize).rev().find(|r| {
                self.ssb_owner[r * g..(r + 1) * g]
                    .iter()
                    .all(Option::is_none)
            })?;
            (r as u32, 0, g as u32)
        } else {
            // Spread the zones being written over the die groups: the group with the fewest
            // home segments still filling (extras take few writes), then fewest extras filling.
            let mut load = vec![(0u32, 0u32); g];
            for s in self.segments.iter().flatten() {
                if s.ssbs == 1 && s.len() < s.cap {
                    match s.kind {
                        SegKind::Home => load[s.group as usize].0 += 1,
                        SegKind::Extra => load[s.group as usize].1 += 1,
                    }
                }
            }
            let i = (0..self.ssb_owner.len())
                .filter(|&i| self.ssb_owner[i].is_none())
                .min_by_key(|&i| (load[i % g], i))?;
            ((i / g) as u32, (i % g) as u32, 1)
        };
        let cap = ssbs as u64 * self.lay.ssb_bytes;
        let seg = Segment {
            kind,
            row,
            group,
            ssbs,
            cap,
            region: FlashRegion::default(),
            valid: 0,
            owner: None,
        };
        let id = match self.free_slots.pop() {
            Some(id) => {
                self.segments[id] = Some(seg);
                id
            }
            None => {
                self.segments.push(Some(seg));
                self.segments.len() - 1
            }
        };
        let first = row as usize * g + group as usize;
        for o in &mut self.ssb_owner[first..first + ssbs as usize] {
            *o = Some(id);
        }
        self.free_ssbs -= ssbs;
        match kind {
            SegKind::Home => self.counters.home_ssbs += ssbs as u64,
            SegKind::Extra => self.counters.extra_ssbs += ssbs as u64,
        }
        let used = self.counters.home_ssbs + self.counters.extra_ssbs;
        self.counters.peak_ssbs = self.counters.peak_ssbs.max(used);
        Some(id)
    }

    /// Slot size from a window's histogram: the smallest footprint the percentile fits.
    fn slot_from(&self, hist: &[u32; BUCKETS]) -> u32 {
        let total: u64 = hist.iter().map(|&n| n as u64).sum();
        let want = (total * self.percentile as u64).div_ceil(100);
        let mut seen = 0u64;
        for (units, &n) in hist.iter().enumerate() {
            seen += n as u64;
            if seen >= want && seen > 0 {
                return (units as u32).clamp(1, 16);
            }
        }
        16
    }

    /// Place the next page (compressed length `c`, 0 = raw) of a zone; advances the cursor.
    /// `seg_end(home)` gives the end of the home segment holding stream offset `home` (or the
    /// allocated capacity); slots never straddle segments.
    fn place(&self, cur: &mut Cursor, c: u32, seg_bytes: u64) -> (Place, bool) {
        let mut new_window = false;
        if cur.page.is_multiple_of(self.lay.window_pages) {
            new_window = true;
            if cur.page == 0 {
                cur.slot = self.first_slot;
            } else {
                let below = self.watermark > 0
                    && cur.win_logical * 100 < cur.win_stored * self.watermark as u64;
                if below && !cur.raw_zone {
                    cur.raw_zone = true;
                    // The rest of the zone goes to a fresh (whole superblock) segment.
                    cur.home = cur.home_cap;
                }
                cur.slot = if cur.raw_zone {
                    0
                } else {
                    self.slot_from(&cur.hist)
                };
            }
            cur.hist = [0; BUCKETS];
            cur.win_logical = 0;
            cur.win_stored = 0;
        }
        let stored = if c == 0 { PAGE } else { c as u64 };
        let foot = stored + HEADER;
        cur.hist[foot.div_ceil(UNIT).min(17) as usize] += 1;
        cur.win_logical += PAGE;
        cur.win_stored += stored;
        let slot_bytes = if cur.slot == 0 {
            PAGE
        } else {
            cur.slot as u64 * UNIT
        };
        // A slot that would cross the end of the allocated home space starts a new segment.
        if cur.home + slot_bytes > cur.home_cap {
            cur.home = cur.home_cap;
            cur.home_cap += seg_bytes;
        }
        let (home_len, residue_len) = if cur.slot == 0 {
            (PAGE, 0)
        } else if foot <= slot_bytes {
            (foot, 0)
        } else {
            (slot_bytes, foot - slot_bytes)
        };
        let p = Place {
            home_off: cur.home,
            home_len,
            slot_bytes,
            residue_off: cur.residue,
            residue_len,
        };
        cur.home += slot_bytes;
        cur.residue += residue_len.div_ceil(UNIT) * UNIT;
        cur.page += 1;
        (p, new_window)
    }

    /// Bytes of room in extra segments a zone could log residues to without a new SSB.
    fn residue_room(&self, zi: usize) -> u64 {
        let room = |id: SegId| {
            let s = self.seg(id);
            s.cap - s.len()
        };
        self.zones[zi].extra.map_or(0, room) + self.pool.iter().map(|&id| room(id)).sum::<u64>()
    }

    /// SSBs a write of the pages in `sizes` to zone `zi` would take.
    fn ssbs_needed(&self, zi: usize) -> u32 {
        let z = &self.zones[zi];
        let mut cur = z.cur;
        let start_cap = cur.home_cap;
        let start_res = cur.residue;
        for &c in &self.sizes {
            // A raw zone allocates whole superblocks: count them so.
            let bytes = if cur.raw_zone {
                self.lay.ssb_bytes * self.lay.groups as u64
            } else {
                self.lay.ssb_bytes
            };
            self.place(&mut cur, c, bytes);
        }
        let home = (cur.home_cap - start_cap).div_ceil(self.lay.ssb_bytes);
        let res = (cur.residue - start_res).saturating_sub(self.residue_room(zi));
        (home + res.div_ceil(self.lay.ssb_bytes)) as u32
    }

    fn residue_pieces(&self, zi: usize, stream: u64, len: u64, out: &mut Vec<(SegId, u64, u64)>) {
        out.clear();
        let ext = &self.zones[zi].residues;
        let mut i = ext.partition_point(|e| e.stream + e.len <= stream);
        let (mut at, end) = (stream, stream + len);
        while at < end {
            let e = ext[i];
            let take = (e.stream + e.len).min(end) - at;
            out.push((e.seg, e.seg_off + (at - e.stream), take));
            at += take;
            i += 1;
        }
    }

    /// Where page `page` of zone `zi` sits in the home stream, and its slot size (0 = raw).
    fn locate(&self, zi: usize, page: u64) -> (SegId, u64, u32) {
        let z = &self.zones[zi];
        let w = (page / self.lay.window_pages) as usize;
        let win = z.windows[w];
        let slot_bytes = if win.slot == 0 {
            PAGE
        } else {
            win.slot as u64 * UNIT
        };
        let mut k = page - w as u64 * self.lay.window_pages;
        let mut pos = win.home_start;
        let mut h = z.home.partition_point(|&(_, s)| s <= pos) - 1;
        loop {
            let (seg, start) = z.home[h];
            let end = start + self.seg(seg).cap;
            let fit = (end - pos) / slot_bytes;
            if k < fit {
                return (seg, pos + k * slot_bytes - start, win.slot);
            }
            k -= fit;
            h += 1;
            pos = z.home[h].1;
        }
    }
}

impl Balloon {
    /// Compress the pages of a write and check that flash has room for them; reclaims residue
    /// space if it must. Changes no zone. Fails with Capacity Exceeded when flash is out.
    pub(crate) fn prepare(
        &mut self,
        m: &mut Media<'_>,
        zi: usize,
        data: &[u8],
        ready: u64,
    ) -> Result<(), Status> {
        let b = &mut *self;
        m.engine
            .compress_units(data, PAGE as usize, m.staging, &mut b.sizes);
        let need = b.ssbs_needed(zi);
        while self.free_ssbs < need + RESERVE_SSBS {
            if !self.reclaim_one(m, ready) {
                return Err(Status::CAPACITY_EXCEEDED);
            }
        }
        Ok(())
    }

    /// Store the pages of `data` (prepared by [`balloon_prepare`]) at the end of zone `zi` and
    /// time the write: buffer space for the stored bytes, the transfer, one engine request per
    /// page, and the programs of every unit filled. Returns when the write is in the buffer.
    pub(crate) fn write(&mut self, m: &mut Media<'_>, zi: usize, data: &[u8], ready: u64) -> u64 {
        let mut touched: Vec<SegId> = Vec::with_capacity(4);
        let mut stored = 0u64;
        let mut src = 0usize;
        for (i, raw_page) in data.chunks_exact(PAGE as usize).enumerate() {
            let b = &mut *self;
            let c = b.sizes[i];
            let len = if c == 0 { PAGE as usize } else { c as usize };
            let page = &m.staging[src..src + len];
            src += len;
            let seg_bytes = if b.zones[zi].cur.raw_zone {
                b.lay.ssb_bytes * b.lay.groups as u64
            } else {
                b.lay.ssb_bytes
            };
            let mut cur = b.zones[zi].cur;
            let (p, new_window) = b.place(&mut cur, c, seg_bytes);
            if new_window {
                b.zones[zi].windows.push(Window {
                    slot: cur.slot,
                    home_start: p.home_off,
                });
                b.counters.windows += 1;
                if cur.slot == 0 {
                    b.counters.raw_windows += 1;
                }
            }
            if cur.home_cap > b.zones[zi].cur.home_cap {
                // A new home segment: a whole superblock for a raw zone when one is free.
                let id = (if cur.raw_zone {
                    b.alloc(SegKind::Home, true)
                } else {
                    None
                })
                .or_else(|| b.alloc(SegKind::Home, false))
                .expect("space checked by balloon_prepare");
                let cap = b.seg(id).cap;
                b.zones[zi].home.push((id, p.home_off));
                // The real segment may be a whole superblock, larger than planned.
                cur.home_cap = p.home_off + cap;
            }
            b.zones[zi].cur = cur;
            // A page just placed is always in the zone's last home segment.
            let (seg, start) = *b.zones[zi].home.last().expect("home segment");
            let seg_off = (p.home_off - start) as usize;
            let s = b.seg_mut(seg);
            s.region.bytes.zero_to(seg_off as u64);
            let mut residue = 0..0;
            if cur.slot == 0 {
                s.region.bytes.extend(raw_page);
            } else {
                let in_slot = (p.home_len - HEADER) as usize;
                s.region.bytes.extend(&(c as u16).to_le_bytes());
                s.region
                    .bytes
                    .extend(&((p.residue_off / UNIT) as u32).to_le_bytes());
                s.region.bytes.extend(&page[..in_slot]);
                s.region.bytes.zero_to(seg_off as u64 + p.slot_bytes);
                residue = src - len + in_slot..src;
            }
            b.counters.pages_written += 1;
            b.counters.compressed_bytes += len as u64;
            b.counters.slot_bytes += p.slot_bytes;
            stored += p.slot_bytes;
            if !touched.contains(&seg) {
                touched.push(seg);
            }
            if p.residue_len > 0 {
                b.counters.truncated_pages += 1;
                b.counters.residue_bytes += p.residue_len;
                stored += p.residue_len.div_ceil(UNIT) * UNIT;
                let staging = std::mem::take(m.staging);
                self.append_residue(m, zi, &staging[residue], &mut touched);
                *m.staging = staging;
            }
        }

        // Cost: buffer space for what is stored, the transfer, the engine, then programs.
        let pages = data.len() as u64 / PAGE;
        let admitted = m.buffer_admit(SimInstant::from_ns(ready), stored);
        let in_device = m.transfer_to_device(admitted, data.len() as u64).as_ns();
        let mut done = in_device;
        for _ in 0..pages {
            done = done.max(m.engine.run(Direction::Compress, in_device, PAGE));
        }
        for seg in touched {
            self.flush(m, seg, done);
        }
        done
    }

    /// Append a residue to zone `zi`'s residue stream, in the extra segment it writes (taken
    /// from the pool or freshly allocated when it has none or it is full).
    fn append_residue(
        &mut self,
        _m: &mut Media<'_>,
        zi: usize,
        bytes: &[u8],
        touched: &mut Vec<SegId>,
    ) {
        let aligned = (bytes.len() as u64).div_ceil(UNIT) * UNIT;
        let b = &mut *self;
        let mut stream = b.zones[zi].residues.last().map_or(0, |e| e.stream + e.len);
        let mut left = aligned;
        let mut src = 0usize;
        while left > 0 {
            let room = |b: &Balloon, id: SegId| b.seg(id).cap - b.seg(id).len();
            let seg = match b.zones[zi].extra {
                Some(id) if room(b, id) > 0 => id,
                _ => {
                    if let Some(old) = b.zones[zi].extra.take() {
                        b.seg_mut(old).owner = None;
                    }
                    let id = match b.pool.iter().position(|&id| room(b, id) > 0) {
                        Some(i) => b.pool.swap_remove(i),
                        None => b
                            .alloc(SegKind::Extra, false)
                            .expect("space checked by balloon_prepare"),
                    };
                    b.seg_mut(id).owner = Some(zi);
                    b.zones[zi].extra = Some(id);
                    id
                }
            };
            let take = room(b, seg).min(left);
            let s = b.seg_mut(seg);
            let seg_off = s.len();
            let real = (bytes.len() - src).min(take as usize);
            s.region.bytes.extend(&bytes[src..src + real]);
            s.region.bytes.zero_to(seg_off + take);
            s.valid += take;
            src += real;
            let ext = &mut b.zones[zi].residues;
            match ext.last_mut() {
                Some(e) if e.seg == seg && e.seg_off + e.len == seg_off => e.len += take,
                _ => ext.push(Extent {
                    stream,
                    seg,
                    seg_off,
                    len: take,
                }),
            }
            stream += take;
            left -= take;
            if !touched.contains(&seg) {
                touched.push(seg);
            }
        }
    }

    /// Hand every complete program unit of segment `seg` to flash, data ready at `ready`.
    fn flush(&mut self, m: &mut Media<'_>, seg: SegId, ready: u64) {
        let unit = m.layout.geometry.unit_bytes;
        let (first, dies) = self.dies_of(seg);
        let addr = seg_addr(&self.lay, self.seg(seg));
        let s = self.seg_mut(seg);
        let cap = s.cap;
        s.region
            .program(m, SimInstant::from_ns(ready), addr, cap, |off| {
                DieId(first + ((off / unit) % dies) as u32)
            });
    }

    /// Timing of reading `len` bytes at `off` of segment `seg`: one flash read per page not in
    /// the write buffer, none for a page already read by this command (`seen`).
    fn read_bytes(
        &mut self,
        m: &mut Media<'_>,
        seg: SegId,
        off: u64,
        len: u64,
        t: u64,
        seen: &mut Vec<(SegId, u64, u64)>,
    ) -> u64 {
        let unit = m.layout.geometry.unit_bytes;
        let page = m.layout.geometry.page_bytes as u64;
        // One read senses `pages_per_read` pages (a physical page's sectors).
        let sensed = page * self.pages_per_read.max(1) as u64;
        let mut ready = t;
        let mut at = off;
        while at < off + len {
            let p = at / sensed;
            let got = match seen.iter().rev().take(8).find(|s| s.0 == seg && s.1 == p) {
                Some(s) => s.2,
                None => {
                    let b = &mut *self;
                    let die = b.die_at(seg, at, unit);
                    let done = if b.seg_mut(seg).region.flash.holds(at, t, unit) {
                        t
                    } else {
                        // Transfer the pages of this sense the range covers.
                        let end = (off + len).min((p + 1) * sensed);
                        let bytes = (end.div_ceil(page) - at / page) * page;
                        m.flash.read(die, bytes, SimInstant::from_ns(t)).as_ns()
                    };
                    seen.push((seg, p, done));
                    done
                }
            };
            ready = ready.max(got);
            at = (p + 1) * sensed;
        }
        ready
    }

    /// Read `data.len() / 4096` pages of zone `zi` from page `first`: pages past the write
    /// pointer are zeros. Returns when the last page is decompressed.
    pub(crate) fn read(
        &mut self,
        m: &mut Media<'_>,
        zi: usize,
        first: u64,
        data: &mut [u8],
        ready: u64,
    ) -> Result<u64, Status> {
        let written = m.zones[zi].bytes / PAGE;
        let mut seen = Vec::new();
        let mut pieces = Vec::new();
        let mut done = ready;
        for (i, out) in data.chunks_exact_mut(PAGE as usize).enumerate() {
            let page = first + i as u64;
            if page >= written {
                out.fill(0);
                continue;
            }
            let b = &mut *self;
            let (seg, off, slot) = b.locate(zi, page);
            b.counters.pages_read += 1;
            if slot == 0 {
                seg_read(b, m.storage, seg, off, out)?;
                let t = self.read_bytes(m, seg, off, PAGE, ready, &mut seen);
                done = done.max(t);
                continue;
            }
            let slot_bytes = slot as u64 * UNIT;
            let mut hdr = [0u8; HEADER as usize];
            seg_read(b, m.storage, seg, off, &mut hdr)?;
            let c = u16::from_le_bytes([hdr[0], hdr[1]]) as u64;
            let res_off = u32::from_le_bytes([hdr[2], hdr[3], hdr[4], hdr[5]]) as u64 * UNIT;
            let stored = if c == 0 { PAGE } else { c };
            let foot = stored + HEADER;
            let in_slot = foot.min(slot_bytes);
            m.staging.clear();
            seg_append(b, m.storage, seg, off + HEADER, in_slot - HEADER, m.staging)?;
            let home_ready = self.read_bytes(m, seg, off, in_slot, ready, &mut seen);
            let mut page_ready = home_ready;
            if foot > slot_bytes {
                // The slot's header gives the residue: a second read, after the first.
                let b = &mut *self;
                b.counters.two_read_pages += 1;
                let need = foot - slot_bytes;
                if res_off + need > b.zones[zi].cur.residue {
                    return Err(Status::UNRECOVERED_READ_ERROR);
                }
                b.residue_pieces(zi, res_off, need, &mut pieces);
                for &(rseg, roff, rlen) in &pieces {
                    let b = &*self;
                    seg_append(b, m.storage, rseg, roff, rlen, m.staging)?;
                    let t = self.read_bytes(m, rseg, roff, rlen, home_ready, &mut seen);
                    page_ready = page_ready.max(t);
                }
            }
            if c == 0 {
                out.copy_from_slice(m.staging);
            } else {
                m.engine
                    .coder
                    .decompress(m.engine.codec, m.staging, out)
                    .map_err(|_| Status::UNRECOVERED_READ_ERROR)?;
            }
            done = done.max(m.engine.run(Direction::Decompress, page_ready, PAGE));
        }
        Ok(done)
    }
}
