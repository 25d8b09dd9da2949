//! ZNS+ threaded logging inside the device (OSDI'21 §3.2.2, Fig. 4): a TL-open zone's new
//! block group (the LogFBG), filled in write-pointer order from the host's sparse sequential
//! writes and the valid blocks they skip (internal plugging), replacing the zone's original
//! group at close.
//!
//! Bytes: one copy per LBA, as for any zone. A valid block keeps its bytes (plugging copies
//! them unchanged); a host write overwrites invalid ones; invalid blocks the write pointer
//! passes without a write become zeros, and until then read as zeros (TL_open gave them up).
//! So a kill mid-write leaves nothing readable that the write pointer does not cover.
//!
//! Time: the new group is programmed chunk by chunk (one program unit on one die); each
//! die's block takes its chunks in order (chunk `k` on stripe position `k % D`), so a chunk
//! waits only for the earlier chunks on its own die. A chunk is due when the write pointer
//! passes it. A chunk of valid blocks only, none from the host, is copied by copyback (tR +
//! tPROG on its die: the mapping is static, so the chunk is on the same chip in both groups);
//! any other chunk reads its valid blocks' pages from the original group and is programmed
//! with the host's blocks (LBA-ordered plugging, on the write's path). With LBA-ordered
//! plugging, fully valid chunks right after a write are copied at once; with PPA-ordered
//! plugging (`Plugging::Ppa`), each die's next chunk, when it holds valid blocks only, is
//! copied in the background at command boundaries if the die is idle at that instant
//! (`tl_background`), so chips run ahead of the write pointer on their own blocks; the write
//! pointer copies whatever is left. The controller calls it after the arriving command has
//! issued its flash work, so background copies take only dies that command left idle (host
//! first); a copy once issued runs to its end (no program suspend).
//!
//! The bitmap is kept in the zone's out-of-band area of an image (a Reset punches it), so a
//! TL-open zone stays TL-open across a reopen or a power cycle, with its write pointer.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;

use sim::SimInstant;

use super::config::Plugging;
use super::Znsplus;
use crate::cmd::{any_bit, bit};
use crate::design::{zns, Media, ZoneRead, ZoneWrite};
use crate::status::Status;
use crate::write_buffer::ZoneFlash;

/// What the device keeps of a TL-open zone beside the controller's record.
#[derive(Debug)]
pub(super) struct TlZone {
    /// The validity bitmap TL_open gave, over the zone capacity (1 = valid: kept).
    pub valid: Vec<u8>,
    /// The original block group's flash progress (the zone's `zone_flash` entry is the new
    /// group's while the zone is TL-open).
    pub original: ZoneFlash,
    /// Host writes since TL_open not yet programmed: byte ranges from the zone start.
    pub host: Vec<Range<u64>>,
    /// Per die of the zone (stripe position): the next chunk (program unit index) its block
    /// of the new group takes. Pages of a block are programmed in order, so chunk `k` on
    /// position `k % D` waits for the chunks before it on that position, and no others.
    pub next: Vec<u64>,
    /// Chunks programmed whose programs may still run: chunk → completion (ns).
    pub inflight: BTreeMap<u64, u64>,
}

/// The record of a TL-open zone's bitmap in its out-of-band area.
const TL_MAGIC: &[u8; 8] = b"ZNSPTL01";

/// Where a plugged chunk's copy is counted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plug {
    Foreground,
    Background,
}

/// How a chunk is plugged: where it is counted, and whether copyback may copy it
/// (`[znsplus] copyback`).
#[derive(Clone, Copy)]
struct How {
    kind: Plug,
    copyback: bool,
}

impl TlZone {
    /// A TL-open zone on `dies` dies whose new group is programmed below chunk `frontier`.
    fn new(
        valid: Vec<u8>,
        original: ZoneFlash,
        dies: u64,
        frontier: u64,
        host: Vec<Range<u64>>,
    ) -> TlZone {
        TlZone {
            valid,
            original,
            host,
            next: (0..dies)
                .map(|pos| frontier + (pos + dies - frontier % dies) % dies)
                .collect(),
            inflight: BTreeMap::new(),
        }
    }

    fn programmed(&self, k: u64) -> bool {
        k < self.next[(k % self.next.len() as u64) as usize]
    }

    fn host_bytes_in(&self, r: Range<u64>) -> u64 {
        self.host
            .iter()
            .map(|h| h.end.min(r.end).saturating_sub(h.start.max(r.start)))
            .sum()
    }

    fn host_holds(&self, off: u64) -> bool {
        self.host.iter().any(|h| h.contains(&off))
    }
}

impl Znsplus {
    pub(super) fn tl_open_zone(
        &mut self,
        m: &mut Media,
        zi: usize,
        valid: &[u8],
        ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        let group = zi % self.spares.len().max(1);
        // A block group for the zone's log: a spare (none left: refused, nothing changed).
        let free_at = self
            .spares
            .get_mut(group)
            .and_then(|s| s.take())
            .ok_or(Status::ZONE_TOO_MANY_OPEN)?;
        let mut record = Vec::with_capacity(16 + valid.len());
        record.extend_from_slice(TL_MAGIC);
        record.extend_from_slice(&(valid.len() as u64).to_le_bytes());
        record.extend_from_slice(valid);
        if let Err(e) = m.storage.write_zone_oob(zi as u32, 0, &record) {
            self.spares[group].give(free_at);
            return Err(m.image_failed("write", &e));
        }
        let t = m.transfer_to_device(
            ready,
            (crate::cmd::TL_OPEN_HEADER_BYTES + valid.len()) as u64,
        );
        // Bytes of the old group still in the buffer are dropped with its partial unit.
        zns::discard_buffered(m, zi);
        let start = t.as_ns().max(free_at);
        let original = std::mem::replace(
            &mut m.zone_flash[zi],
            ZoneFlash {
                issued: 0,
                pending: VecDeque::new(),
                busy_until: start,
                erased_at: free_at,
            },
        );
        let dies = m.layout.dies_per_zone as u64;
        let tl = TlZone::new(valid.to_vec(), original, dies, 0, Vec::new());
        self.tl.insert(zi, tl);
        Ok(SimInstant::from_ns(start))
    }

    /// The rule of a TL-open zone's writes: at or past the write pointer, over invalid blocks.
    pub(super) fn tl_check(&self, zi: usize, wp: u64, first: u64, nlb: u64) -> Option<Status> {
        let Some(tl) = self.tl.get(&zi) else {
            return Some(Status::INTERNAL_ERROR);
        };
        if first < wp || any_bit(&tl.valid, first, first + nlb) {
            return Some(Status::ZONE_INVALID_WRITE);
        }
        None
    }

    /// Store a write to a TL-open zone and plug the chunks it completes. Returns when its
    /// bytes are in the device.
    pub(super) fn tl_write(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status> {
        let zi = w.zone;
        let lba = m.layout.lba_bytes;
        let ms = m.layout.metadata_bytes;
        let wp = (m.zones[zi].wp - m.zones[zi].zslba) * lba;
        let tl = self.tl.get(&zi).ok_or(Status::INTERNAL_ERROR)?;
        zero_invalid(m, zi, &tl.valid, wp, w.offset)?;
        m.storage
            .overwrite(zi as u32, w.offset, w.data, w.offset / lba * ms, w.metadata)
            .map_err(|e| m.image_failed("write", &e))?;
        let bytes = w.data.len() as u64;
        let admitted = m.buffer_admit(w.ready, bytes);
        let in_device = m.transfer_to_device(admitted, bytes + w.metadata.len() as u64);
        let unit = m.layout.geometry.unit_bytes;
        let tl = self.tl.get_mut(&zi).ok_or(Status::INTERNAL_ERROR)?;
        tl.host.push(w.offset..w.end);
        let how = How {
            kind: Plug::Foreground,
            copyback: self.config.copyback,
        };
        plug_to(m, zi, tl, w.end / unit * unit, in_device, how);
        if self.config.plugging == Plugging::Lba {
            plug_valid_run(m, zi, tl, w.end, in_device, self.config.copyback);
        }
        Ok(in_device)
    }

    /// Read a TL-open zone: invalid blocks past the write pointer are zeros; the rest from the
    /// new group (below its programming frontier) or the original one (the same chip).
    pub(super) fn tl_read(
        &mut self,
        m: &mut Media,
        r: &mut ZoneRead,
    ) -> Result<SimInstant, Status> {
        let zi = r.zone;
        let lba = m.layout.lba_bytes;
        let ms = m.layout.metadata_bytes;
        let len = r.data.len() as u64;
        let tl = self.tl.get(&zi).ok_or(Status::INTERNAL_ERROR)?;
        // Runs of blocks that hold data (below the write pointer, or valid) from storage; the
        // rest are zeros, never read (a kill mid-write may have left them half written).
        let wp = m.zones[zi].wp - m.zones[zi].zslba;
        let first = r.offset / lba;
        let n = len / lba;
        let kept = |b: u64| b < wp || bit(&tl.valid, b);
        let mut k = 0;
        while k < n {
            let run = (k..n)
                .take_while(|&i| kept(first + i) == kept(first + k))
                .count() as u64;
            let (lo, hi) = ((k * lba) as usize, ((k + run) * lba) as usize);
            let (mlo, mhi) = ((k * ms) as usize, ((k + run) * ms) as usize);
            if kept(first + k) {
                let meta = if r.metadata.is_empty() {
                    &mut [][..]
                } else {
                    &mut r.metadata[mlo..mhi]
                };
                m.storage
                    .read(
                        zi as u32,
                        (first + k) * lba,
                        &mut r.data[lo..hi],
                        (first + k) * ms,
                        meta,
                    )
                    .map_err(|e| m.image_failed("read", &e))?;
            } else {
                r.data[lo..hi].fill(0);
                if !r.metadata.is_empty() {
                    r.metadata[mlo..mhi].fill(0);
                }
            }
            k += run;
        }
        // Time: a flash read per page not in the buffer.
        let page = m.layout.geometry.page_bytes as u64;
        let unit = m.layout.geometry.unit_bytes;
        let t = r.ready.as_ns();
        let mut ready = r.ready;
        let mut off = r.offset;
        while off < r.offset + len {
            let end = ((off / page + 1) * page).min(r.offset + len);
            let k = off / unit;
            let buffered = if tl.programmed(k) {
                tl.inflight.get(&k).is_some_and(|&done| done > t)
            } else {
                tl.host_holds(off)
            };
            if buffered {
                m.counters.buffer_read_bytes += end - off;
            } else {
                let die = m.layout.die_at(zi as u32, off);
                ready = ready.max(m.flash.read(die, end - off, r.ready));
            }
            off = end;
        }
        Ok(ready)
    }

    /// Close a TL-open zone: plug every chunk left, zero the invalid blocks past the write
    /// pointer, and give the original group back (erased in the background, a spare then).
    pub(super) fn tl_close_zone(
        &mut self,
        m: &mut Media,
        zi: usize,
        ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        let lba = m.layout.lba_bytes;
        let unit = m.layout.geometry.unit_bytes;
        let z = m.zones[zi];
        let wp = (z.wp - z.zslba) * lba;
        let cap = z.capacity * lba;
        let tl = self.tl.get_mut(&zi).ok_or(Status::INTERNAL_ERROR)?;
        zero_invalid(m, zi, &tl.valid, wp, cap)?;
        let plugged0 = m.counters.plugged_blocks_foreground;
        let queue = (0..m.layout.dies_per_zone)
            .map(|k| {
                let die = m.layout.die_of(zi as u32, k);
                m.flash.die_idle_at(die).saturating_since(ready).as_ns()
            })
            .max()
            .unwrap_or(0);
        // The host's blocks end at the write pointer; every chunk to the end is complete now.
        let done = plug_to(
            m,
            zi,
            tl,
            cap.div_ceil(unit) * unit,
            ready,
            How {
                kind: Plug::Foreground,
                copyback: self.config.copyback,
            },
        );
        let c = &mut m.counters;
        c.tl_closes += 1;
        c.plugged_blocks_at_close += c.plugged_blocks_foreground - plugged0;
        c.tl_close_ns += done.saturating_since(ready).as_ns();
        c.tl_close_queue_ns += queue;
        let tl = self.tl.remove(&zi).expect("TL-open zone");
        // A Full zone's reads look for programs still running in offset order.
        m.zone_flash[zi].pending = tl
            .inflight
            .iter()
            .map(|(&k, &done)| ((k + 1) * unit, done))
            .collect();
        self.release_original(m, zi, tl.original, ready);
        Ok(done)
    }

    /// Erase a TL-open zone's original group in the background and make it a spare.
    pub(super) fn release_original(
        &mut self,
        m: &mut Media,
        zi: usize,
        original: ZoneFlash,
        ready: SimInstant,
    ) {
        let log = std::mem::replace(&mut m.zone_flash[zi], original);
        let erased = zns::erase_zone(m, zi, ready);
        m.zone_flash[zi] = log;
        let group = zi % self.spares.len().max(1);
        if let Some(s) = self.spares.get_mut(group) {
            s.give(erased.as_ns());
        }
    }

    /// Host bytes of a TL-open zone in the buffer, not yet programmed (dropped by a Reset).
    pub(super) fn tl_buffered(&self, m: &Media, zi: usize) -> u64 {
        let issued = m.zone_flash[zi].issued;
        self.tl
            .get(&zi)
            .map_or(0, |tl| tl.host_bytes_in(issued..u64::MAX))
    }

    /// PPA-ordered plugging at a command boundary: each TL-open zone's next fully valid
    /// chunks, while their dies are idle now.
    pub(super) fn tl_background(&mut self, m: &mut Media, now: SimInstant) {
        if self.config.plugging != Plugging::Ppa {
            return;
        }
        let lba = m.layout.lba_bytes;
        let unit = m.layout.geometry.unit_bytes;
        for (&zi, tl) in self.tl.iter_mut() {
            let z = m.zones[zi];
            let (wp, chunks) = ((z.wp - z.zslba) * lba, (z.capacity * lba) / unit);
            // Each die's next chunk in its block, if it holds valid blocks only, lies past the
            // host's and the die is idle now: one copyback per die.
            for pos in 0..tl.next.len() {
                let k = tl.next[pos];
                if k >= chunks || k * unit < wp || !fully_valid(m, tl, k) {
                    continue;
                }
                let die = m.layout.die_at(zi as u32, k * unit);
                if m.flash.die_idle_at(die) > now {
                    continue;
                }
                let how = How {
                    kind: Plug::Background,
                    copyback: self.config.copyback,
                };
                program_chunk(m, zi, tl, k, now, how);
            }
        }
    }

    /// At an image's open: the bitmap of TL-open zone `zi` from its out-of-band record (`zone`:
    /// its record, as the controller's are not in `m` while it loads).
    pub(super) fn tl_reload(
        &mut self,
        m: &mut Media,
        zi: usize,
        zone: &crate::zone::Zone,
    ) -> std::io::Result<()> {
        let bytes = zone.capacity.div_ceil(8) as usize;
        let mut record = vec![0u8; 16 + bytes];
        let bad = || std::io::Error::other(format!("zone {zi}: TL-open without its bitmap"));
        if !m.storage.read_zone_oob(zi as u32, 0, &mut record)? {
            return Err(bad());
        }
        let len = u64::from_le_bytes(record[8..16].try_into().expect("8 bytes"));
        if &record[..8] != TL_MAGIC || len != bytes as u64 {
            return Err(bad());
        }
        // The original group was programmed whole; the new one up to the write pointer's
        // chunk, the rest of which the buffer holds.
        let unit = m.layout.geometry.unit_bytes;
        let cap = zone.capacity * m.layout.lba_bytes;
        let wp = (zone.wp - zone.zslba) * m.layout.lba_bytes;
        let original = ZoneFlash {
            issued: cap.div_ceil(unit) * unit,
            ..ZoneFlash::default()
        };
        let frontier = wp / unit * unit;
        let host = if wp > frontier {
            std::iter::once(frontier..wp).collect()
        } else {
            Vec::new()
        };
        let dies = m.layout.dies_per_zone as u64;
        let tl = TlZone::new(record[16..].to_vec(), original, dies, frontier / unit, host);
        self.tl.insert(zi, tl);
        Ok(())
    }
}

/// Zero the invalid blocks of bytes [from, to) of zone `zi` (the write pointer passes them).
fn zero_invalid(m: &mut Media, zi: usize, valid: &[u8], from: u64, to: u64) -> Result<(), Status> {
    let lba = m.layout.lba_bytes;
    let mut b = from / lba;
    let end = to / lba;
    while b < end {
        if bit(valid, b) {
            b += 1;
            continue;
        }
        let run = (b..end).take_while(|&i| !bit(valid, i)).count() as u64;
        // Past the stored bytes there is nothing to zero.
        let stored = m.zones[zi].bytes;
        let (lo, hi) = (b * lba, ((b + run) * lba).min(stored.max(b * lba)));
        // From one bounded buffer of zeros, whatever the run's length.
        static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
        let mut at = lo;
        while at < hi {
            let n = (hi - at).min(ZEROS.len() as u64);
            m.storage
                .overwrite(zi as u32, at, &ZEROS[..n as usize], 0, &[])
                .map_err(|e| m.image_failed("write", &e))?;
            at += n;
        }
        b += run;
    }
    Ok(())
}

/// Whether chunk `k` holds valid blocks only.
fn fully_valid(m: &Media, tl: &TlZone, k: u64) -> bool {
    let lba = m.layout.lba_bytes;
    let unit = m.layout.geometry.unit_bytes;
    (k * unit / lba..(k + 1) * unit / lba).all(|b| bit(&tl.valid, b))
}

/// Program chunk `k` of the new group (the next on its die), host data ready at `ready`:
/// by copyback when it holds valid blocks only, or merged (the valid blocks' pages read from
/// the original group, then one program). Returns when it is done.
fn program_chunk(
    m: &mut Media,
    zi: usize,
    tl: &mut TlZone,
    k: u64,
    ready: SimInstant,
    how: How,
) -> SimInstant {
    let unit = m.layout.geometry.unit_bytes;
    let lba = m.layout.lba_bytes;
    let page = m.layout.geometry.page_bytes as u64;
    let off = k * unit;
    let die = m.layout.die_at(zi as u32, off);
    let blocks = off / lba..((off + unit) / lba).min(m.zones[zi].capacity);
    let valid: Vec<u64> = blocks.filter(|&b| bit(&tl.valid, b)).collect();
    let host = tl.host_bytes_in(off..off + unit);
    let erased = SimInstant::from_ns(m.zone_flash[zi].erased_at);
    let done = if how.copyback && host == 0 && valid.len() as u64 * lba == unit {
        m.counters.plug_copybacks += 1;
        m.flash.copyback(die, ready.max(erased))
    } else {
        let mut reads = ready;
        let mut last_page = u64::MAX;
        for &b in &valid {
            let p = b * lba / page;
            if p != last_page {
                reads = reads.max(m.flash.read(die, page, ready));
                last_page = p;
            }
        }
        if !valid.is_empty() {
            m.counters.plug_read_programs += 1;
        }
        // The skipped blocks join the host's in the buffer (valid ones read, the rest padding).
        let admitted = m.buffer_admit(ready, unit - host);
        let t = m.flash.program(die, unit, reads.max(admitted).max(erased));
        m.buffer.release_at(0, t.as_ns(), unit);
        t
    };
    match how.kind {
        Plug::Foreground => m.counters.plugged_blocks_foreground += valid.len() as u64,
        Plug::Background => m.counters.plugged_blocks_background += valid.len() as u64,
    }
    let dies = tl.next.len() as u64;
    tl.next[(k % dies) as usize] = k + dies;
    tl.inflight.retain(|_, t| *t > ready.as_ns());
    tl.inflight.insert(k, done.as_ns());
    // The contiguous frontier: every chunk below it is programmed.
    let zf = &mut m.zone_flash[zi];
    zf.busy_until = zf.busy_until.max(done.as_ns());
    while tl.programmed(zf.issued / unit) {
        zf.issued += unit;
    }
    let issued = zf.issued;
    tl.host.retain(|h| h.end > issued);
    done
}

/// Program every chunk below byte `upto` not programmed yet (the write pointer passed them),
/// in offset order, host data ready at `ready`. Returns when the last is done.
fn plug_to(
    m: &mut Media,
    zi: usize,
    tl: &mut TlZone,
    upto: u64,
    ready: SimInstant,
    how: How,
) -> SimInstant {
    let unit = m.layout.geometry.unit_bytes;
    let mut done = ready;
    let mut k = m.zone_flash[zi].issued / unit;
    while (k + 1) * unit <= upto {
        if !tl.programmed(k) {
            done = done.max(program_chunk(m, zi, tl, k, ready, how));
        }
        k += 1;
    }
    done
}

/// LBA-ordered plugging after a write ending at byte `host_end`: the chunks right after it
/// that hold valid blocks only, copied at once (a write ending inside a chunk: none yet).
fn plug_valid_run(
    m: &mut Media,
    zi: usize,
    tl: &mut TlZone,
    host_end: u64,
    at: SimInstant,
    copyback: bool,
) {
    let unit = m.layout.geometry.unit_bytes;
    let chunks = m.zones[zi].capacity * m.layout.lba_bytes / unit;
    if !host_end.is_multiple_of(unit) {
        return;
    }
    let mut k = host_end / unit;
    while k < chunks && fully_valid(m, tl, k) {
        if !tl.programmed(k) {
            let how = How {
                kind: Plug::Foreground,
                copyback,
            };
            program_chunk(m, zi, tl, k, at, how);
        }
        k += 1;
    }
}
