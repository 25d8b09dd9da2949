//! ZNS+ (Han et al., OSDI'21 §3.2): a plain ZNS device that also copies blocks between zones
//! inside itself. zone_compaction (vendor opcode 81h) takes up to 512 source → destination
//! block pairs; the controller validates them and moves the destination zone's write pointer,
//! and this design moves the bytes and charges the flash: a destination chunk (one program
//! unit, 16 KiB on the paper's device) whose blocks are one whole source chunk, in order, on
//! the same chip is copied by copyback (tR + tPROG on that die, nothing on the channel);
//! every other chunk reads each source flash page it needs once (the artifact reads whole
//! pages, as Cosmos+ must) and programs when its reads are in. Sources still in the write
//! buffer need no flash read. A partial last chunk waits in the write buffer for the zone's
//! next bytes, as a write's tail does.
//!
//! Zones map to flash block groups dynamically (§2.2): the blocks of each die beyond its
//! zones' are spare groups, and a Reset switches the zone to the spare erased earliest and
//! erases its old group in the background on its dies, where it contends with host I/O. A
//! device without spares resets as plain ZNS does, after the erase.
//!
//! TL_open (vendor opcode 85h) makes a zone overwritable in sparse sequential order for
//! threaded logging, the device plugging the valid blocks into a new block group (`tl.rs`).

pub mod config;
mod tl;

use std::collections::BTreeMap;
use std::io;

use sim::SimInstant;

use super::zns;
use super::{Compaction, Design, Media, ZoneRead, ZoneWrite};
use crate::identify::VendorCaps;
use crate::status::Status;
use config::ZnsplusConfig;
use tl::TlZone;

/// The ZNS+ design: the spare flash block groups of each die group.
#[derive(Debug, Default)]
pub struct Znsplus {
    spares: Vec<Spares>,
    config: ZnsplusConfig,
    /// TL-open zones (the controller's record says which; the bitmaps are here).
    tl: BTreeMap<usize, TlZone>,
}

/// One die group's spare block groups: those never used (erased since the start), and the
/// times the ones given back by resets are (or will be) erased. Kept as a count and a list of
/// returned ones, so a configuration with very many spare blocks costs no memory for them.
#[derive(Debug, Default, Clone)]
struct Spares {
    fresh: u64,
    returned: Vec<u64>,
}

impl Spares {
    fn count(&self) -> u64 {
        self.fresh + self.returned.len() as u64
    }

    /// Take the spare erased earliest for one erased at `erased`; when the one taken is free.
    fn swap(&mut self, erased: u64) -> Option<u64> {
        if self.fresh > 0 {
            self.fresh -= 1;
            self.returned.push(erased);
            return Some(0);
        }
        let first = (0..self.returned.len()).min_by_key(|&i| self.returned[i])?;
        Some(std::mem::replace(&mut self.returned[first], erased))
    }

    /// Take the spare erased earliest, without giving one back (a TL-open zone's new group);
    /// when it is free.
    fn take(&mut self) -> Option<u64> {
        if self.fresh > 0 {
            self.fresh -= 1;
            return Some(0);
        }
        let first = (0..self.returned.len()).min_by_key(|&i| self.returned[i])?;
        Some(self.returned.remove(first))
    }

    /// A group erased at `erased` becomes a spare.
    fn give(&mut self, erased: u64) {
        self.returned.push(erased);
    }
}

impl Znsplus {
    /// Spare block groups per die group: the blocks of each die beyond its zones'.
    pub fn new(layout: &crate::layout::Layout, config: &ZnsplusConfig) -> Znsplus {
        let groups = layout.zone_groups.max(1);
        let per_die =
            layout.geometry.erase_units_per_die / layout.erase_units_per_zone_per_die.max(1);
        let spares = (0..groups)
            .map(|g| {
                let zones = (layout.zone_count + groups - 1 - g) / groups;
                Spares {
                    fresh: per_die.saturating_sub(zones as u64),
                    returned: Vec::new(),
                }
            })
            .collect();
        Znsplus {
            spares,
            config: config.clone(),
            tl: BTreeMap::new(),
        }
    }

    /// Spare block groups of each die group (for reports and tests).
    pub fn spare_groups(&self) -> Vec<u64> {
        self.spares.iter().map(Spares::count).collect()
    }
}

impl Design for Znsplus {
    fn name(&self) -> &'static str {
        "znsplus"
    }

    fn vendor_caps(&self) -> VendorCaps {
        VendorCaps {
            zone_compaction: true,
            tl_open: self.config.max_tl_open > 0,
            ..VendorCaps::default()
        }
    }

    fn write_zone(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status> {
        if self.tl.contains_key(&w.zone) {
            return self.tl_write(m, w);
        }
        zns::store(m, w)?;
        Ok(zns::cost_write(m, w))
    }

    fn read_zone(&mut self, m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status> {
        if self.tl.contains_key(&r.zone) {
            return self.tl_read(m, r);
        }
        zns::read(m, r)
    }

    fn max_tl_open(&self) -> u32 {
        self.config.max_tl_open
    }

    fn tl_check_write(&self, zone: usize, wp: u64, first: u64, nlb: u64) -> Option<Status> {
        self.tl_check(zone, wp, first, nlb)
    }

    fn tl_open(
        &mut self,
        m: &mut Media,
        zone: usize,
        valid: &[u8],
        ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        self.tl_open_zone(m, zone, valid, ready)
    }

    fn tl_close(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        self.tl_close_zone(m, zone, ready)
    }

    fn background(&mut self, m: &mut Media, now: SimInstant) {
        self.tl_background(m, now);
    }

    /// At an image's open, TL-open zones get their bitmaps back.
    fn load(&mut self, m: &mut Media, zones: &mut [crate::zone::Zone]) -> io::Result<()> {
        for (zi, z) in zones.iter().enumerate() {
            if z.is_tl_open() {
                self.tl_reload(m, zi, z)?;
            }
        }
        Ok(())
    }

    fn finish_zone(&mut self, m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant {
        zns::finish(m, zone, ready)
    }

    fn before_reset(&mut self, m: &mut Media, zone: usize) {
        if self.tl.contains_key(&zone) {
            let buffered = self.tl_buffered(m, zone);
            m.buffer.discard(0, buffered);
            return;
        }
        zns::discard_buffered(m, zone);
    }

    /// Reset with dynamic zone → block group mapping (§2.2): the zone takes the spare group
    /// erased earliest and is done once it has one; its old group is erased in the
    /// background on its dies (contending with host I/O there) and becomes a spare.
    fn reset_zone(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
        recorded: bool,
    ) -> (SimInstant, io::Result<()>) {
        let group = zone % self.spares.len().max(1);
        // A TL-open zone has two groups: the original one is erased and a spare too.
        if let Some(tl) = self.tl.remove(&zone) {
            self.release_original(m, zone, tl.original, ready);
        }
        let (erased, punched) = zns::reset(m, zone, ready, recorded);
        let Some(free_at) = self
            .spares
            .get_mut(group)
            .and_then(|s| s.swap(erased.as_ns()))
        else {
            return (erased, punched); // no spare: the zone waits for its own erase
        };
        let assigned = ready.as_ns().max(free_at);
        let zf = &mut m.zone_flash[zone];
        zf.erased_at = assigned;
        zf.busy_until = assigned;
        (SimInstant::from_ns(assigned), punched)
    }

    fn compact_zone(&mut self, m: &mut Media, c: &Compaction) -> Result<SimInstant, Status> {
        copy_bytes(m, c)?;
        Ok(charge(m, c, self.config.copyback))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Zone and byte offset of an LBA.
fn place(m: &Media, lba: u64) -> (usize, u64) {
    let z = m.layout.zone_size_lbas;
    ((lba / z) as usize, (lba % z) * m.layout.lba_bytes)
}

/// Gather every source block (and its metadata) in the staging buffer, then store them at the
/// destination's write pointer in one write: a failed read changes nothing. Blocks a Finish
/// left unwritten below the write pointer are zeros.
fn copy_bytes(m: &mut Media, c: &Compaction) -> Result<(), Status> {
    let lba = m.layout.lba_bytes as usize;
    let ms = m.layout.metadata_bytes as usize;
    let n = c.pairs.len();
    let mut staging = std::mem::take(m.staging);
    staging.clear();
    staging.resize(n * (lba + ms), 0);
    let (data, meta) = staging.split_at_mut(n * lba);
    let mut failed = None;
    for (i, &(src, _)) in c.pairs.iter().enumerate() {
        let (zone, off) = place(m, src);
        // Below a finished zone's write pointer, past what was written, blocks read as zeros
        // (as the controller's read fills them).
        if off + lba as u64 > m.zones[zone].bytes {
            continue;
        }
        let r = m.storage.read(
            zone as u32,
            off,
            &mut data[i * lba..(i + 1) * lba],
            off / lba as u64 * ms as u64,
            &mut meta[i * ms..(i + 1) * ms],
        );
        if let Err(e) = r {
            failed = Some(m.image_failed("read", &e));
            break;
        }
    }
    let result = match failed {
        Some(s) => Err(s),
        None => {
            let off = (c.start % m.layout.zone_size_lbas) * lba as u64;
            m.storage
                .write(c.zone as u32, off, data, off / lba as u64 * ms as u64, meta)
                .map_err(|e| m.image_failed("write", &e))
        }
    };
    *m.staging = staging;
    result
}

/// Time the copies in the artifact's two passes: first one read per distinct source page
/// the copies need (none for copyback chunks or sources still in the write buffer), then per
/// destination unit a copyback or a program once its reads are in; the partial last unit
/// into the write buffer. Returns when the last copy is done.
fn charge(m: &mut Media, c: &Compaction, use_copyback: bool) -> SimInstant {
    let lba = m.layout.lba_bytes;
    let unit = m.layout.geometry.unit_bytes;
    let page = m.layout.geometry.page_bytes as u64;
    let zi = c.zone;
    let start = (c.start % m.layout.zone_size_lbas) * lba;
    let end = start + c.pairs.len() as u64 * lba;
    let t = c.ready.as_ns();
    let first = m.zone_flash[zi].issued;
    // The destination units from the first not yet programmed: (offset, its pairs, copyback).
    let mut units = Vec::new();
    let mut off = first;
    while off < end {
        let (lo, hi) = (off.max(start), (off + unit).min(end));
        let pairs = if lo < hi {
            ((lo - start) / lba) as usize..((hi - start) / lba) as usize
        } else {
            0..0
        };
        let die = m.layout.die_at(zi as u32, off);
        let whole = lo == off && hi == off + unit;
        let copyback = use_copyback && whole && copybackable(m, &c.pairs[pairs.clone()], die, t);
        units.push((off, pairs, copyback));
        off += unit;
    }
    // Pass 1: the reads, in source order, each page once.
    let mut pages: BTreeMap<(usize, u64), SimInstant> = BTreeMap::new();
    let mut ready_of = vec![c.ready; c.pairs.len()];
    let mut sources: Vec<usize> = units
        .iter()
        .filter(|u| !u.2)
        .flat_map(|u| u.1.clone())
        .collect();
    sources.sort_unstable_by_key(|&i| c.pairs[i].0);
    for i in sources {
        let (zone, off) = place(m, c.pairs[i].0);
        if m.zone_flash[zone].holds(off, t, unit) {
            m.counters.buffer_read_bytes += lba;
            continue;
        }
        ready_of[i] = *pages.entry((zone, off / page)).or_insert_with(|| {
            let die = m.layout.die_at(zone as u32, off);
            m.flash.read(die, page, c.ready)
        });
    }
    // Pass 2: a copyback or a program per whole unit; a partial last unit waits in the buffer.
    let mut done = c.ready;
    for (off, pairs, copyback) in units {
        let ready = pairs.clone().map(|i| ready_of[i]).max().unwrap_or(c.ready);
        if off + unit > end {
            if !pairs.is_empty() {
                m.counters.compaction_read_programs += 1;
                done = done.max(m.buffer_admit(ready, end - off.max(start)));
            }
            break;
        }
        let die = m.layout.die_at(zi as u32, off);
        let erased = SimInstant::from_ns(m.zone_flash[zi].erased_at);
        let unit_done = if copyback {
            m.counters.compaction_copybacks += 1;
            m.flash.copyback(die, c.ready.max(erased))
        } else {
            if !pairs.is_empty() {
                m.counters.compaction_read_programs += 1;
            }
            m.flash.program(die, unit, ready.max(erased))
        };
        // Bytes of this unit the host wrote before the compaction wait in the buffer until
        // the unit is programmed.
        let host_bytes = start.clamp(off, off + unit) - off;
        m.buffer.release_at(0, unit_done.as_ns(), host_bytes);
        let zf = &mut m.zone_flash[zi];
        zf.pending.push_back((off + unit, unit_done.as_ns()));
        zf.issued = off + unit;
        zf.busy_until = zf.busy_until.max(unit_done.as_ns());
        done = done.max(unit_done);
    }
    done
}

/// A destination unit on `die` can be copied by copyback: its blocks are one whole source
/// unit in the same order, on the same die, already programmed (not in the write buffer).
fn copybackable(m: &mut Media, pairs: &[(u64, u64)], die: nand::DieId, t: u64) -> bool {
    let lba = m.layout.lba_bytes;
    let unit = m.layout.geometry.unit_bytes;
    let Some(&(first, _)) = pairs.first() else {
        return false;
    };
    let (zone, off) = place(m, first);
    off % unit == 0
        && pairs
            .iter()
            .enumerate()
            .all(|(k, &(src, _))| src == first + k as u64)
        && pairs.len() as u64 * lba == unit
        && m.layout.die_at(zone as u32, off) == die
        && !m.zone_flash[zone].holds(off, t, unit)
}
