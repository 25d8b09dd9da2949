//! A transparently compressing block SSD (TCSSD: DP-CSD, ScaleFlux CSD): the comparison point
//! the CCZNS and DPZip papers argue against.
//!
//! A conventional namespace (no zones) larger than the flash: every 4 KiB block is compressed
//! and its bytes packed back to back into the open superblock (all dies); a fine-grained map
//! gives each block's superblock, byte offset and length. The map lives in device DRAM at
//! `map_entry_bytes` per logical block whether written or not: DPZip §2's Challenge #1, which
//! `dram()` reports. Overwrites leave dead bytes behind; when free superblocks run short,
//! greedy GC picks the full superblock with the fewest live bytes, copies its live blocks to the
//! GC superblock and erases it. When the live data no longer fits the flash (it compressed
//! worse than the expansion ratio promised) a write fails with Capacity Exceeded and changes
//! nothing. The bytes stored are the real compressed bytes; reads decompress them. An image
//! keeps the flash by physical address, and the map as checkpoints (JSON) and a journal of the
//! entries each command changed (`persist.rs`).

use codec::Direction;
use nand::DieId;
use serde::{Deserialize, Serialize};
use sim::SimInstant;

pub mod config;
mod hooks;
pub(crate) mod layout;

use super::Media;
use crate::design::region::FlashRegion;
use crate::status::Status;

const BLOCK: u64 = 4096;
/// Map entries per lazily allocated map page (the simulator's own memory, not the device's).
const MAP_PAGE: usize = 1 << 16;

/// A packed map entry: superblock (16 bits) | offset (32 bits) | length − 1 (12 bits) | raw
/// (1 bit) | valid (1 bit). 0 = never written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    sb: u32,
    off: u64,
    len: u64,
    raw: bool,
}

impl Superblock {
    fn len(&self) -> u64 {
        self.region.bytes.len()
    }
}

/// Copy bytes [off, off + out.len()) of superblock `sb` into `out` (from memory or the image).
fn sb_read(
    t: &Tcssd,
    storage: &crate::storage::Storage,
    sb: u32,
    off: u64,
    out: &mut [u8],
) -> Result<(), Status> {
    let addr = sb as u64 * t.sb_bytes;
    t.sbs[sb as usize]
        .region
        .bytes
        .read(storage, addr, off, out)
}

impl Entry {
    fn pack(self) -> u64 {
        (self.sb as u64) << 48 | self.off << 16 | (self.len - 1) << 4 | (self.raw as u64) << 1 | 1
    }
    fn unpack(v: u64) -> Option<Entry> {
        (v & 1 == 1).then(|| Entry {
            sb: (v >> 48) as u32,
            off: (v >> 16) & 0xffff_ffff,
            len: ((v >> 4) & 0xfff) + 1,
            raw: v >> 1 & 1 == 1,
        })
    }
}

#[derive(Default)]
struct Superblock {
    /// Its flash: the bytes appended so far and their programs.
    region: FlashRegion,
    /// Live bytes, and (lba, offset) of every block written here (GC checks each against the
    /// map: an entry is live if the map still points at it).
    valid: u64,
    written: Vec<(u64, u32)>,
    free: bool,
}

/// The FTL tables as an image keeps them: per superblock, free or its length and live bytes;
/// the map's written entries (lba, packed); the open superblocks.
#[derive(Serialize, Deserialize)]
pub(crate) struct SavedTcssd {
    superblocks: Vec<Option<(u64, u64)>>,
    map: Vec<(u64, u64)>,
    host_open: Option<u32>,
    gc_open: Option<u32>,
    counters: TcssdCounters,
}

/// What one command changed in the tables: map entries (lba, packed; 0 = forgotten), the
/// superblocks whose state changed, the open superblocks and the counters.
#[derive(Serialize, Deserialize)]
pub(crate) struct TcssdDelta {
    map: Vec<(u64, u64)>,
    superblocks: Vec<(u32, Option<(u64, u64)>)>,
    host_open: Option<u32>,
    gc_open: Option<u32>,
    counters: TcssdCounters,
}

/// What the TCSSD's FTL has done.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcssdCounters {
    pub blocks_written: u64,
    pub compressed_bytes: u64,
    pub overwritten_blocks: u64,
    /// Blocks the host deallocated (TRIM) that held data.
    #[serde(default)]
    pub deallocated_blocks: u64,
    pub gc_runs: u64,
    pub gc_relocated_bytes: u64,
    pub erases: u64,
    /// Live compressed bytes now, and superblocks free of `superblocks`.
    pub valid_bytes: u64,
    pub free_superblocks: u64,
    pub superblocks: u64,
    pub superblock_bytes: u64,
    /// Device DRAM the map takes (every logical block's entry).
    pub map_bytes: u64,
}

pub struct Tcssd {
    map: Vec<Option<Box<[u64]>>>,
    sbs: Vec<Superblock>,
    sb_bytes: u64,
    dies: u32,
    gc_free: u32,
    /// The superblocks host writes and GC copies go to.
    host_open: Option<u32>,
    gc_open: Option<u32>,
    sizes: Vec<u32>,
    pub counters: TcssdCounters,
    /// Map entries changed since the last journal record, and each superblock's (length,
    /// live bytes) as the image last recorded them.
    dirty_lbas: Vec<u64>,
    recorded: Vec<Option<(u64, u64)>>,
    /// On an image: remember the map entries each command changes (in memory nothing reads
    /// them, and they would pile up).
    pub journal: bool,
}

impl Tcssd {
    pub fn new(
        superblocks: u32,
        sb_bytes: u64,
        dies: u32,
        gc_free: u32,
        lbas: u64,
        entry: u32,
    ) -> Tcssd {
        Tcssd {
            map: (0..(lbas as usize).div_ceil(MAP_PAGE))
                .map(|_| None)
                .collect(),
            sbs: (0..superblocks)
                .map(|_| Superblock {
                    free: true,
                    ..Superblock::default()
                })
                .collect(),
            sb_bytes,
            dies,
            gc_free,
            host_open: None,
            gc_open: None,
            sizes: Vec::new(),
            dirty_lbas: Vec::new(),
            recorded: vec![None; superblocks as usize],
            journal: false,
            counters: TcssdCounters {
                free_superblocks: superblocks as u64,
                superblocks: superblocks as u64,
                superblock_bytes: sb_bytes,
                map_bytes: lbas * entry as u64,
                ..TcssdCounters::default()
            },
        }
    }

    fn sb_state(s: &Superblock) -> Option<(u64, u64)> {
        (!s.free).then_some((s.len(), s.valid))
    }

    /// Write the superblock bytes the image lacks (before any record that points at them).
    pub(crate) fn persist_bytes(&mut self, img: &crate::storage::ImageFile) -> std::io::Result<()> {
        for (i, sb) in self.sbs.iter_mut().enumerate() {
            if !sb.free {
                sb.region.bytes.persist(img, i as u64 * self.sb_bytes)?;
            }
        }
        Ok(())
    }

    /// What changed since the last record or checkpoint (None: nothing).
    pub(crate) fn take_delta(&mut self) -> Option<TcssdDelta> {
        let mut superblocks = Vec::new();
        for (i, s) in self.sbs.iter().enumerate() {
            let now = Self::sb_state(s);
            if self.recorded[i] != now {
                self.recorded[i] = now;
                superblocks.push((i as u32, now));
            }
        }
        if self.dirty_lbas.is_empty() && superblocks.is_empty() {
            return None;
        }
        let mut lbas = std::mem::take(&mut self.dirty_lbas);
        lbas.sort_unstable();
        lbas.dedup();
        let map = lbas
            .into_iter()
            .map(|l| (l, self.get(l).map_or(0, Entry::pack)))
            .collect();
        Some(TcssdDelta {
            map,
            superblocks,
            host_open: self.host_open,
            gc_open: self.gc_open,
            counters: self.counters.clone(),
        })
    }

    /// The whole tables, for a checkpoint (what changed is recorded by it).
    pub(crate) fn saved(&mut self) -> SavedTcssd {
        self.dirty_lbas.clear();
        for (i, s) in self.sbs.iter().enumerate() {
            self.recorded[i] = Self::sb_state(s);
        }
        let mut map = Vec::new();
        for (p, page) in self.map.iter().enumerate() {
            let Some(page) = page else { continue };
            for (k, &v) in page.iter().enumerate() {
                if v != 0 {
                    map.push(((p * MAP_PAGE + k) as u64, v));
                }
            }
        }
        SavedTcssd {
            superblocks: self.recorded.clone(),
            map,
            host_open: self.host_open,
            gc_open: self.gc_open,
            counters: self.counters.clone(),
        }
    }

    /// Rebuild from a checkpoint and the journal records after it. Returns the bytes left in
    /// partial program units (buffered).
    pub(crate) fn restore(
        &mut self,
        mut t: SavedTcssd,
        deltas: Vec<TcssdDelta>,
        unit: u64,
    ) -> std::io::Result<u64> {
        let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
        if t.superblocks.len() != self.sbs.len() {
            return Err(bad("tcssd table: superblock count differs".into()));
        }
        if !deltas.is_empty() {
            let mut map: std::collections::BTreeMap<u64, u64> = t.map.into_iter().collect();
            for d in deltas {
                for (lba, v) in d.map {
                    if v == 0 {
                        map.remove(&lba);
                    } else {
                        map.insert(lba, v);
                    }
                }
                for (i, state) in d.superblocks {
                    *t.superblocks
                        .get_mut(i as usize)
                        .ok_or_else(|| bad(format!("tcssd journal: superblock {i}")))? = state;
                }
                t.host_open = d.host_open;
                t.gc_open = d.gc_open;
                t.counters = d.counters;
            }
            t.map = map.into_iter().collect();
        }
        let mut buffered = 0;
        for (i, saved) in t.superblocks.into_iter().enumerate() {
            self.recorded[i] = saved;
            let Some((len, valid)) = saved else { continue };
            if len > self.sb_bytes || valid > len {
                return Err(bad(format!("tcssd table: superblock {i} out of range")));
            }
            let sb = &mut self.sbs[i];
            sb.free = false;
            // The bytes stay in the image until read.
            sb.region = FlashRegion::in_image(len);
            sb.valid = valid;
            sb.region.flash.issued = len / unit * unit;
            buffered += len - sb.region.flash.issued;
        }
        for (lba, v) in t.map {
            let e = Entry::unpack(v)
                .filter(|e| {
                    (lba as usize) < self.map.len() * MAP_PAGE && (e.sb as usize) < self.sbs.len()
                })
                .ok_or_else(|| bad(format!("tcssd table: bad map entry for LBA {lba}")))?;
            if e.off + e.len > self.sbs[e.sb as usize].len() {
                return Err(bad(format!(
                    "tcssd table: LBA {lba} points past its superblock"
                )));
            }
            self.set(lba, e);
            self.sbs[e.sb as usize].written.push((lba, e.off as u32));
        }
        self.dirty_lbas.clear();
        for sb in &mut self.sbs {
            sb.written.sort_by_key(|w| w.1);
        }
        self.host_open = t.host_open;
        self.gc_open = t.gc_open;
        self.counters = t.counters;
        Ok(buffered)
    }

    fn get(&self, lba: u64) -> Option<Entry> {
        let page = self.map[lba as usize / MAP_PAGE].as_ref()?;
        Entry::unpack(page[lba as usize % MAP_PAGE])
    }

    fn set(&mut self, lba: u64, e: Entry) {
        let page = self.map[lba as usize / MAP_PAGE]
            .get_or_insert_with(|| vec![0u64; MAP_PAGE].into_boxed_slice());
        page[lba as usize % MAP_PAGE] = e.pack();
        if self.journal {
            self.dirty_lbas.push(lba);
        }
    }

    /// Forget `lba`'s entry (0 = never written).
    fn clear(&mut self, lba: u64) {
        if let Some(page) = self.map[lba as usize / MAP_PAGE].as_mut() {
            page[lba as usize % MAP_PAGE] = 0;
            if self.journal {
                self.dirty_lbas.push(lba);
            }
        }
    }

    fn free_count(&self) -> u32 {
        self.counters.free_superblocks as u32
    }

    fn room(&self, open: Option<u32>) -> u64 {
        open.map_or(0, |s| self.sb_bytes - self.sbs[s as usize].len())
    }

    /// Bytes that could still be written: open room, free superblocks (less the one GC keeps
    /// for its copies), and the dead bytes GC can win back from full superblocks.
    fn writable_bytes(&self) -> u64 {
        let dead: u64 = self
            .sbs
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                !s.free && Some(*i as u32) != self.host_open && Some(*i as u32) != self.gc_open
            })
            .map(|(_, s)| s.len() - s.valid)
            .sum();
        self.room(self.host_open)
            + (self.free_count().saturating_sub(1) as u64) * self.sb_bytes
            + dead
    }

    fn take_free(&mut self) -> Option<u32> {
        let i = self.sbs.iter().position(|s| s.free)?;
        let s = &mut self.sbs[i];
        s.free = false;
        self.counters.free_superblocks -= 1;
        Some(i as u32)
    }
}

impl Tcssd {
    /// Write `nlb` blocks at `slba`: compress, check the flash can take them, collect garbage
    /// if free superblocks are short, pack, map. Returns when the data is in the buffer.
    /// Deallocate blocks [slba, end): their bytes are dead (GC no longer copies them) and
    /// they read as zeros.
    pub(crate) fn deallocate(&mut self, _m: &mut Media<'_>, slba: u64, end: u64) {
        let t = &mut *self;
        let mut lba = slba;
        while lba < end {
            // A map page never written holds nothing to forget.
            let page_end = ((lba as usize / MAP_PAGE + 1) * MAP_PAGE) as u64;
            if t.map[lba as usize / MAP_PAGE].is_none() {
                lba = page_end;
                continue;
            }
            for l in lba..page_end.min(end) {
                if let Some(old) = t.get(l) {
                    t.sbs[old.sb as usize].valid -= old.len;
                    t.counters.valid_bytes -= old.len;
                    t.counters.deallocated_blocks += 1;
                    t.clear(l);
                }
            }
            lba = page_end;
        }
    }

    pub(crate) fn write(
        &mut self,
        m: &mut Media<'_>,
        ready: u64,
        slba: u64,
        data: &[u8],
    ) -> Result<u64, Status> {
        let t = &mut *self;
        m.engine
            .compress_units(data, BLOCK as usize, m.staging, &mut t.sizes);
        // Bytes the old versions free count too: they are dead as soon as this lands.
        let need = m.staging.len() as u64;
        let freed: u64 = (0..t.sizes.len() as u64)
            .filter_map(|i| t.get(slba + i).map(|e| e.len))
            .sum();
        // One superblock of slack for what packing and GC granularity waste.
        if need + t.sb_bytes > t.writable_bytes() + freed {
            return Err(Status::CAPACITY_EXCEEDED);
        }

        let mut src = 0usize;
        let mut touched = Vec::with_capacity(2);
        for i in 0..self.sizes.len() {
            let c = self.sizes[i];
            let len = if c == 0 { BLOCK } else { c as u64 };
            let sb = self.room_for(m, len, false, ready)?;
            let lba = slba + i as u64;
            let t = &mut *self;
            if let Some(old) = t.get(lba) {
                t.sbs[old.sb as usize].valid -= old.len;
                t.counters.valid_bytes -= old.len;
                t.counters.overwritten_blocks += 1;
            }
            let s = &mut t.sbs[sb as usize];
            let off = s.len();
            s.region.bytes.extend(&m.staging[src..src + len as usize]);
            s.valid += len;
            s.written.push((lba, off as u32));
            src += len as usize;
            t.set(
                lba,
                Entry {
                    sb,
                    off,
                    len,
                    raw: c == 0,
                },
            );
            t.counters.blocks_written += 1;
            t.counters.compressed_bytes += len;
            t.counters.valid_bytes += len;
            if !touched.contains(&sb) {
                touched.push(sb);
            }
        }

        let admitted = m.buffer_admit(SimInstant::from_ns(ready), need);
        let in_device = m.transfer_to_device(admitted, data.len() as u64).as_ns();
        let mut done = in_device;
        for _ in 0..data.len() as u64 / BLOCK {
            done = done.max(m.engine.run(Direction::Compress, in_device, BLOCK));
        }
        for sb in touched {
            self.flush(m, sb, done);
        }
        Ok(done)
    }

    /// The open superblock (host or GC) with room for `len` bytes, taking a free one (and
    /// collecting garbage first when free ones are short) if the current one is full.
    fn room_for(
        &mut self,
        m: &mut Media<'_>,
        len: u64,
        gc: bool,
        ready: u64,
    ) -> Result<u32, Status> {
        let t = &mut *self;
        let open = if gc { t.gc_open } else { t.host_open };
        if let Some(sb) = open {
            if t.room(Some(sb)) >= len {
                return Ok(sb);
            }
        }
        if !gc {
            while self.free_count() <= self.gc_free {
                if !self.gc(m, ready) {
                    break;
                }
            }
        }
        if let Some(full) = open {
            self.close(m, full, ready);
        }
        let t = &mut *self;
        // Host writes leave the last free superblock to GC.
        if !gc && t.free_count() <= 1 {
            return Err(Status::CAPACITY_EXCEEDED);
        }
        let sb = t.take_free().ok_or(Status::CAPACITY_EXCEEDED)?;
        if gc {
            t.gc_open = Some(sb);
        } else {
            t.host_open = Some(sb);
        }
        Ok(sb)
    }

    /// One greedy GC pass: the full superblock with the fewest live bytes is copied out and
    /// erased. False when no superblock would give space back.
    fn gc(&mut self, m: &mut Media<'_>, ready: u64) -> bool {
        let t = &mut *self;
        let victim = t
            .sbs
            .iter()
            .enumerate()
            .filter(|(i, s)| {
                !s.free
                    && Some(*i as u32) != t.host_open
                    && Some(*i as u32) != t.gc_open
                    && s.len() > s.valid
            })
            .min_by_key(|(_, s)| s.valid)
            .map(|(i, _)| i as u32);
        let Some(victim) = victim else {
            return false;
        };
        // Its live bytes must fit where GC copies to, checked before anything moves.
        let valid = t.sbs[victim as usize].valid;
        let reserve = if t.free_count() > 0 { t.sb_bytes } else { 0 };
        if valid > t.room(t.gc_open) + reserve {
            return false;
        }
        t.counters.gc_runs += 1;
        let written = std::mem::take(&mut t.sbs[victim as usize].written);
        let unit = m.layout.geometry.unit_bytes;
        let page = m.layout.geometry.page_bytes as u64;
        let mut last_page = u64::MAX;
        let mut read_done = ready;
        let mut touched = Vec::new();
        let mut bytes = Vec::new();
        for i in 0..written.len() {
            let (lba, off) = written[i];
            let t = &mut *self;
            let Some(e) = t.get(lba) else { continue };
            if e.sb != victim || e.off != off as u64 {
                continue;
            }
            bytes.clear();
            bytes.resize(e.len as usize, 0);
            if sb_read(t, m.storage, victim, e.off, &mut bytes).is_err() {
                // An unreadable image: stop here; the victim keeps what was not moved, and the
                // list of what it holds (GC must never erase it with live blocks unmoved).
                t.sbs[victim as usize].written = written[i..].to_vec();
                return false;
            }
            // Read the flash pages the block sits on.
            for p in e.off / page..(e.off + e.len).div_ceil(page) {
                if p != last_page {
                    let die = DieId(((p * page / unit) % t.dies as u64) as u32);
                    read_done =
                        read_done.max(m.flash.read(die, page, SimInstant::from_ns(ready)).as_ns());
                    last_page = p;
                }
            }
            let dst = self
                .room_for(m, e.len, true, ready)
                .expect("room checked before moving");
            let t = &mut *self;
            let s = &mut t.sbs[dst as usize];
            let new_off = s.len();
            s.region.bytes.extend(&bytes);
            s.valid += e.len;
            s.written.push((lba, new_off as u32));
            t.sbs[victim as usize].valid -= e.len;
            t.set(
                lba,
                Entry {
                    sb: dst,
                    off: new_off,
                    ..e
                },
            );
            t.counters.gc_relocated_bytes += e.len;
            m.buffer_admit(SimInstant::from_ns(read_done), e.len);
            if !touched.contains(&dst) {
                touched.push(dst);
            }
        }
        for sb in touched {
            self.flush(m, sb, read_done);
        }
        self.erase(m, victim, ready);
        true
    }

    /// A superblock leaves service as an open one: pad its last program unit and program it.
    fn close(&mut self, m: &mut Media<'_>, sb: u32, ready: u64) {
        let unit = m.layout.geometry.unit_bytes;
        let s = &mut self.sbs[sb as usize];
        let len = s.len();
        let padded = len.div_ceil(unit) * unit;
        if padded > len {
            s.region.bytes.zero_to(padded);
            m.buffer_admit(SimInstant::from_ns(ready), padded - len);
            self.flush(m, sb, ready);
        }
    }

    fn erase(&mut self, m: &mut Media<'_>, sb: u32, ready: u64) {
        let t = &mut *self;
        let s = std::mem::take(&mut t.sbs[sb as usize]);
        t.sbs[sb as usize].free = true;
        t.counters.free_superblocks += 1;
        t.counters.erases += 1;
        let (dies, sb_bytes) = (t.dies, t.sb_bytes);
        // The image records that nothing lives here any more before its bytes go (storage.rs);
        // if that record cannot be written, the bytes stay (unreferenced once it is).
        if m.commit(self).is_ok() {
            if let crate::storage::Storage::Image(img) = &m.storage {
                let _ = img.erase_flash(sb as u64 * sb_bytes, sb_bytes);
            }
        }
        let end = s
            .region
            .erase(m, SimInstant::from_ns(ready), dies, DieId)
            .as_ns();
        // The erase must finish before the superblock takes programs again.
        self.sbs[sb as usize].region.flash.erased_at = end;
    }

    fn flush(&mut self, m: &mut Media<'_>, sb: u32, ready: u64) {
        let unit = m.layout.geometry.unit_bytes;
        let (dies, sb_bytes) = (self.dies as u64, self.sb_bytes);
        let s = &mut self.sbs[sb as usize];
        s.region.program(
            m,
            SimInstant::from_ns(ready),
            sb as u64 * sb_bytes,
            sb_bytes,
            |off| DieId(((off / unit) % dies) as u32),
        );
    }

    /// Read blocks from `slba` into `data`: never-written blocks are zeros; each flash page a
    /// block touches is read once (unless still buffered), then the block is decompressed.
    pub(crate) fn read(
        &mut self,
        m: &mut Media<'_>,
        ready: u64,
        slba: u64,
        data: &mut [u8],
    ) -> Result<u64, Status> {
        let unit = m.layout.geometry.unit_bytes;
        let page = m.layout.geometry.page_bytes as u64;
        let mut done = ready;
        let mut last = (u32::MAX, u64::MAX, ready);
        for (i, out) in data.chunks_exact_mut(BLOCK as usize).enumerate() {
            let t = &mut *self;
            let Some(e) = t.get(slba + i as u64) else {
                if m.dulbe {
                    return Err(Status::DEALLOCATED_OR_UNWRITTEN_BLOCK);
                }
                out.fill(0);
                continue;
            };
            let dies = t.dies as u64;
            let mut block_ready = ready;
            for p in e.off / page..(e.off + e.len).div_ceil(page) {
                let got = if (e.sb, p) == (last.0, last.1) {
                    last.2
                } else {
                    let t = &mut *self;
                    let buffered = t.sbs[e.sb as usize]
                        .region
                        .flash
                        .holds(p * page, ready, unit);
                    let r = if buffered {
                        ready
                    } else {
                        let die = DieId(((p * page / unit) % dies) as u32);
                        m.flash.read(die, page, SimInstant::from_ns(ready)).as_ns()
                    };
                    last = (e.sb, p, r);
                    r
                };
                block_ready = block_ready.max(got);
            }
            let t = &*self;
            let mut stored = std::mem::take(m.staging);
            stored.clear();
            stored.resize(e.len as usize, 0);
            let got = sb_read(t, m.storage, e.sb, e.off, &mut stored);
            let got = got.and_then(|()| {
                if e.raw {
                    out.copy_from_slice(&stored);
                    Ok(())
                } else {
                    m.engine
                        .coder
                        .decompress(m.engine.codec, &stored, out)
                        .map(|_| ())
                        .map_err(|_| Status::UNRECOVERED_READ_ERROR)
                }
            });
            *m.staging = stored;
            got?;
            done = done.max(m.engine.run(Direction::Decompress, block_ready, BLOCK));
        }
        Ok(done)
    }
}
