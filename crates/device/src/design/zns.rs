//! Plain ZNS: a zone's bytes are stored as written, at their offset in the zone, and handed to
//! flash in program units (or stripes) as they fill, on the dies the layout assigns the zone.
//! Finish pads the zone's flash, Reset erases the blocks it programmed.
//!
//! The functions here are the zone data path any design that keeps bytes in zones uses
//! (CCZNS adds chunk records to it; a toy design can wrap it).

use std::collections::VecDeque;
use std::io;

use sim::SimInstant;

use super::{Design, Media, ZoneRead, ZoneWrite};
use crate::config::FlushUnit;
use crate::status::Status;
use crate::write_buffer::ZoneFlash;

/// The plain ZNS design.
#[derive(Debug, Default)]
pub struct Zns;

impl Design for Zns {
    fn name(&self) -> &'static str {
        "zns"
    }

    fn write_zone(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status> {
        store(m, w)?;
        Ok(cost_write(m, w))
    }

    fn read_zone(&mut self, m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status> {
        read(m, r)
    }

    fn finish_zone(&mut self, m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant {
        finish(m, zone, ready)
    }

    fn before_reset(&mut self, m: &mut Media, zone: usize) {
        discard_buffered(m, zone);
    }

    fn reset_zone(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
        recorded: bool,
    ) -> (SimInstant, io::Result<()>) {
        reset(m, zone, ready, recorded)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Store a write's bytes (and metadata) at its offset in the zone.
pub fn store(m: &mut Media, w: &ZoneWrite) -> Result<(), Status> {
    let lba = m.layout.lba_bytes;
    let ms = m.layout.metadata_bytes;
    let meta_off = w.offset / lba * ms;
    m.storage
        .write(w.zone as u32, w.offset, w.data, meta_off, w.metadata)
        .map_err(|e| m.image_failed("write", &e))
}

/// The cost of a stored write: write-buffer space, the transfer, then the programs of every
/// unit it completed (in the background). Returns when the write is in the device.
///
/// With the buffer split per die group, the write enters it a program unit at a time and each
/// full unit's program is queued on its die as the unit arrives: a die has at most its part's
/// units of programs queued, and a read arriving meanwhile is queued between them rather
/// than behind all of a long write's programs.
pub fn cost_write(m: &mut Media, w: &ZoneWrite) -> SimInstant {
    let bytes = w.data.len() as u64;
    if m.config.controller.write_buffer_per_zone_group {
        let unit = m.layout.geometry.unit_bytes;
        let lba = m.layout.lba_bytes;
        let meta_per_byte = m.layout.metadata_bytes;
        let (mut off, mut t) = (w.offset, w.ready);
        while off < w.end {
            let next = ((off / unit + 1) * unit).min(w.end);
            let piece = next - off;
            let admitted = m.buffer_admit_zone(w.zone, t, piece);
            t = m.transfer_to_device(admitted, piece + piece / lba * meta_per_byte);
            flush_zone_units(m, w.zone, next, t);
            off = next;
        }
        return t;
    }
    let admitted = m.buffer_admit_zone(w.zone, w.ready, bytes);
    let in_device = m.transfer_to_device(admitted, bytes + w.metadata.len() as u64);
    flush_zone_units(m, w.zone, w.end, in_device);
    in_device
}

/// Read the zone's stored bytes from `r.offset` into `r.data` (the controller gives only the
/// part below the written end): from storage, timed per flash page not in the buffer.
pub fn read(m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status> {
    let lba = m.layout.lba_bytes;
    let ms = m.layout.metadata_bytes;
    let len = r.data.len() as u64;
    // Read Discard: nothing to copy from memory (an image is still read, for its checks).
    if len > 0 && (r.copy || m.storage.is_image()) {
        m.storage
            .read(
                r.zone as u32,
                r.offset,
                r.data,
                r.offset / lba * ms,
                r.metadata,
            )
            .map_err(|e| m.image_failed("read", &e))?;
    }
    Ok(read_zone_bytes(
        m,
        r.zone,
        r.offset,
        r.offset + len,
        r.ready,
    ))
}

/// Finish: pad the zone's flash when it holds data.
pub fn finish(m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant {
    if m.zones[zone].bytes > 0 {
        pad_zone(m, zone, ready)
    } else {
        ready
    }
}

/// Reset after the zone is recorded Empty: punch its bytes (when recorded) and erase its
/// programmed blocks.
pub fn reset(
    m: &mut Media,
    zone: usize,
    ready: SimInstant,
    recorded: bool,
) -> (SimInstant, io::Result<()>) {
    // Without the record the image still holds the zone's bytes for its old state: they stay
    // (the zone is reset in the device all the same).
    let punched = if recorded {
        m.storage.reset(zone as u32)
    } else {
        Ok(())
    };
    (erase_zone(m, zone, ready), punched)
}

/// Hand every complete unit (or stripe) of zone `zi` up to `end` bytes to flash, with the
/// data ready at `ready`.
pub(crate) fn flush_zone_units(m: &mut Media, zi: usize, end: u64, ready: SimInstant) {
    let unit = m.layout.geometry.unit_bytes;
    let grain = match m.config.controller.flush_unit {
        FlushUnit::Page => unit,
        FlushUnit::Stripe => m.layout.stripe_bytes,
    };
    let target = end / grain * grain;
    let layout = m.layout;
    let part = m.buffer.part_of(zi as u32);
    m.zone_flash[zi].program_up_to(
        target,
        unit,
        ready.as_ns(),
        m.flash,
        m.buffer.part(part),
        |off| layout.die_at(zi as u32, off),
    );
}

/// Timing of reading bytes `from..to` of zone `zi`: one flash read per page (per multi-plane
/// page on a multi-plane die) not held in the write buffer, all starting at `ready`. Returns
/// when the last byte is in the controller.
pub(crate) fn read_zone_bytes(
    m: &mut Media,
    zi: usize,
    from: u64,
    to: u64,
    ready: SimInstant,
) -> SimInstant {
    let t = ready.as_ns();
    let page = m.layout.geometry.read_bytes;
    let unit = m.layout.geometry.unit_bytes;
    let mut data_ready = ready;
    let mut off = from;
    while off < to {
        let page_end = ((off / page + 1) * page).min(to);
        if m.zone_flash[zi].holds(off, t, unit) {
            m.counters.buffer_read_bytes += page_end - off;
        } else {
            let die = m.layout.die_at(zi as u32, off);
            data_ready = data_ready.max(m.flash.read(die, page_end - off, ready));
        }
        off = page_end;
    }
    data_ready
}

/// Drop a zone's buffered bytes that never reached flash (reset).
pub fn discard_buffered(m: &mut Media, zi: usize) {
    let written = m.zones[zi].bytes;
    let issued = m.zone_flash[zi].issued;
    let part = m.buffer.part_of(zi as u32);
    m.buffer.discard(part, written.saturating_sub(issued));
}

/// Finish zone `zi`'s flash: program the buffered partial unit and, when the device pads
/// (`finish_pads_flash`), every unit left to the zone's capacity.
pub(crate) fn pad_zone(m: &mut Media, zi: usize, ready: SimInstant) -> SimInstant {
    let lba = m.layout.lba_bytes;
    let unit = m.layout.geometry.unit_bytes;
    let written = m.zones[zi].bytes;
    // Where the zone's flash ends once finished.
    let end = if m.config.controller.finish_pads_flash {
        m.zones[zi].capacity * lba
    } else {
        written.div_ceil(unit) * unit
    };
    let issued = m.zone_flash[zi].issued;
    let start = ready.as_ns().max(m.zone_flash[zi].busy_until);
    let d = m.layout.dies_per_zone as u64;
    let first = issued / unit;
    let units = (end - issued) / unit;
    let mut done = start;
    for pos in 0..d.min(units) {
        // Units first, first + 1, ... land on stripe positions (first + k) % d.
        let n = (units - pos).div_ceil(d);
        let die = m.layout.die_of(zi as u32, ((first + pos) % d) as u32);
        done = done.max(
            m.flash
                .program_many(die, n, SimInstant::from_ns(start))
                .as_ns(),
        );
    }
    let part = m.buffer.part_of(zi as u32);
    m.buffer.release_at(part, done, written - issued);
    m.counters.padded_bytes += end - written;
    let zf = &mut m.zone_flash[zi];
    zf.pending.push_back((end, done));
    zf.issued = end;
    zf.busy_until = zf.busy_until.max(done);
    SimInstant::from_ns(done)
}

/// Erase the blocks zone `zi` has programmed (Reset).
pub(crate) fn erase_zone(m: &mut Media, zi: usize, ready: SimInstant) -> SimInstant {
    let unit = m.layout.geometry.unit_bytes;
    let per_eu = m.layout.geometry.units_per_erase_unit;
    let units = m.zone_flash[zi].issued / unit;
    let d = m.layout.dies_per_zone as u64;
    let start = ready.as_ns().max(m.zone_flash[zi].busy_until);
    let mut done = start;
    for pos in 0..d.min(units) {
        let on_die = (units - pos).div_ceil(d);
        let die = m.layout.die_of(zi as u32, pos as u32);
        done = done.max(
            m.flash
                .erase(die, on_die.div_ceil(per_eu), SimInstant::from_ns(start))
                .as_ns(),
        );
    }
    m.zone_flash[zi] = ZoneFlash {
        issued: 0,
        pending: VecDeque::new(),
        busy_until: done,
        erased_at: done,
    };
    SimInstant::from_ns(done)
}
