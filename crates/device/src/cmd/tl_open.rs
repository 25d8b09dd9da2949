//! ZNS+ TL_open (vendor opcode 85h, OSDI'21 §3.2.2): threaded logging's sparse sequential
//! overwrite of a dirty zone.
//!
//! Wire form (znslab's; the paper gives none, `docs/znsplus.md`): CDW10-11 the ZSLBA; CDW12
//! bit 0 "close only"; the data buffer a 16-byte header {u32 sequence, u32 log type, u64 0}
//! then the validity bitmap, one bit per block of the zone capacity, LSB first (1 = valid: a
//! block the host will not write).
//!
//! Validate, in this order, changing nothing on failure: the ZSLBA in the namespace (LBA Out
//! of Range) and a zone start (Invalid Field). Close only: the zone TL-open, or Full (then
//! nothing happens: a write that reached the capacity closed it); otherwise Invalid Zone State
//! Transition. Otherwise: a bitmap covering the capacity (Invalid Field); the zone Empty,
//! Read Only or Offline (Invalid Zone State Transition); a valid bit at or past the write
//! pointer (never-written blocks cannot be valid; all of a TL-open zone's blocks count as
//! written: its close plugs them) (Invalid Field); TL-open zones at the design's limit (Too
//! Many Open Zones); open and active resources as an explicit Open.
//!
//! Apply: a TL-open zone is closed first (below); the design takes a block group for the
//! zone's new log (it may refuse with Too Many Open Zones when none is free); the zone becomes
//! Explicitly Opened with the TL attribute bit and its write pointer at the zone start.
//! Writes then go at or past the write pointer over invalid blocks only (`cmd/write.rs`); Zone
//! Append is refused (Invalid Zone Operation Request).
//!
//! Close (close only, a TL_open of the same zone, Close or Finish, a write that reaches the
//! capacity): the design plugs the valid blocks past the write pointer and the zone is Full.
//! Reset drops both block groups. A TL-open zone stays so across a power cycle (its bitmap is
//! in the zone's out-of-band area of an image).

use sim::SimInstant;

use crate::controller::Controller;
use crate::status::Status;
use crate::zone::{ZoneState, ZA_TL_OPEN};

/// Bytes of the data buffer's header before the bitmap.
pub const TL_OPEN_HEADER_BYTES: usize = 16;

/// Bit `i` of an LSB-first bitmap (a TL_open validity bitmap; past its end: 0).
pub fn bit(map: &[u8], i: u64) -> bool {
    map.get((i / 8) as usize)
        .is_some_and(|b| b >> (i % 8) & 1 == 1)
}

/// Whether any bit in `from..to` is set: the bits to a byte boundary, whole bytes, the rest
/// (a zone's bitmap may be 128 KiB).
pub fn any_bit(map: &[u8], from: u64, to: u64) -> bool {
    if from >= to {
        return false;
    }
    let (first_byte, last_byte) = (from.div_ceil(8), to / 8);
    if first_byte >= last_byte {
        return (from..to).any(|i| bit(map, i));
    }
    (from..first_byte * 8).any(|i| bit(map, i))
        || map
            .get(first_byte as usize..(last_byte as usize).min(map.len()))
            .is_some_and(|bytes| bytes.iter().any(|&b| b != 0))
        || (last_byte * 8..to).any(|i| bit(map, i))
}

impl Controller {
    pub(crate) fn tl_open(
        &mut self,
        ready: SimInstant,
        zslba: u64,
        close_only: bool,
        valid: &[u8],
    ) -> Result<(u64, SimInstant), Status> {
        if zslba >= self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        if !zslba.is_multiple_of(self.layout.zone_size_lbas) {
            return Err(Status::INVALID_FIELD);
        }
        let zi = self.zone_index(zslba);
        let z = self.zones[zi];
        if close_only {
            // A Full zone is closed already (a write that reached the capacity closed its
            // threaded log): nothing to do, as Finish of a Full zone.
            if z.state == ZoneState::Full {
                return Ok((0, ready));
            }
            if !z.is_tl_open() {
                return Err(Status::ZONE_INVALID_TRANSITION);
            }
            let done = self.close_tl(zi, ready)?;
            return Ok((0, done));
        }
        if (valid.len() as u64) * 8 < z.capacity {
            return Err(Status::INVALID_FIELD);
        }
        if matches!(
            z.state,
            ZoneState::Empty | ZoneState::ReadOnly | ZoneState::Offline
        ) {
            return Err(Status::ZONE_INVALID_TRANSITION);
        }
        let written = if z.is_tl_open() {
            z.capacity
        } else {
            z.wp - z.zslba
        };
        if any_bit(valid, written, z.capacity) {
            return Err(Status::INVALID_FIELD);
        }
        let tl_zones = self.zones.iter().filter(|z| z.is_tl_open()).count() as u32;
        if !z.is_tl_open() && tl_zones >= self.design.max_tl_open() {
            return Err(Status::ZONE_TOO_MANY_OPEN);
        }
        // A TL-open zone stays open when it is closed and opened again; another needs an open
        // (and maybe active) resource, as an explicit Open.
        let victim = if z.is_tl_open() {
            None
        } else {
            self.check_open(zi)?
        };
        self.counters.tl_opens += 1;
        let mut at = ready;
        if z.is_tl_open() {
            at = self.close_tl(zi, ready)?;
            // The closed zone's Full record reaches the image before the new bitmap replaces
            // the old one in the zone's out-of-band record: a process killed in between
            // leaves a Full zone, as a power cut after the close would, never the TL-open
            // zone of the old write pointer paired with the new (or a torn) bitmap.
            let (design, mut m) = self.split();
            m.commit(design)?;
        }
        let bitmap = &valid[..z.capacity.div_ceil(8) as usize];
        let (design, mut m) = self.split();
        let open = design.tl_open(&mut m, zi, bitmap, at)?;
        self.take_open(zi, victim);
        let z = &mut self.zones[zi];
        z.wp = z.zslba;
        z.attributes |= ZA_TL_OPEN;
        self.set_state(zi, ZoneState::ExplicitlyOpened);
        self.mark_zone_dirty(zi);
        Ok((0, open))
    }

    /// Close TL-open zone `zi`: the design plugs the rest, the zone is recorded Full. Returns
    /// when the copies are done.
    pub(crate) fn close_tl(&mut self, zi: usize, ready: SimInstant) -> Result<SimInstant, Status> {
        let (design, mut m) = self.split();
        let done = design.tl_close(&mut m, zi, ready)?;
        // The stored bytes stay as they are: past them the zone reads as zeros.
        let z = &mut self.zones[zi];
        z.wp = z.end_of_capacity();
        z.attributes &= !ZA_TL_OPEN;
        self.set_state(zi, ZoneState::Full);
        self.mark_zone_dirty(zi);
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_bit_agrees_with_bit_by_bit_on_every_range() {
        let map = [0b0000_0000u8, 0b0100_0000, 0, 0, 0b0000_0001, 0];
        for from in 0..48 {
            for to in 0..50 {
                let slow = (from..to).any(|i| bit(&map, i));
                assert_eq!(any_bit(&map, from, to), slow, "{from}..{to}");
            }
        }
    }
}
