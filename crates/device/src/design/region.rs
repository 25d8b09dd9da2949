//! An append-only run of flash at a fixed physical address: the unit a design with its own
//! flash map fills, programs and erases (a Balloon-ZNS segment, a tcssd superblock).

use nand::DieId;
use sim::SimInstant;

use super::Media;
use crate::storage::AppendBytes;
use crate::write_buffer::ZoneFlash;

#[derive(Default)]
pub(crate) struct FlashRegion {
    /// The bytes appended so far (all in memory, or mostly in the image: see `AppendBytes`).
    pub bytes: AppendBytes,
    /// What has gone to flash, and which programs are still running.
    pub flash: ZoneFlash,
}

impl FlashRegion {
    /// A region whose first `len` bytes the image already holds.
    pub fn in_image(len: u64) -> FlashRegion {
        FlashRegion {
            bytes: AppendBytes::in_image(len),
            flash: ZoneFlash::default(),
        }
    }

    /// Bytes appended so far.
    pub fn len(&self) -> u64 {
        self.bytes.len()
    }

    /// Hand every complete program unit to flash, data ready at `ready` (the unit at offset
    /// `o` on die `die_of(o)`); an image-backed device then keeps little of the region in
    /// memory. The region is `cap` bytes at flash address `addr`.
    pub fn program(
        &mut self,
        m: &mut Media,
        ready: SimInstant,
        addr: u64,
        cap: u64,
        die_of: impl Fn(u64) -> DieId,
    ) {
        let unit = m.layout.geometry.unit_bytes;
        let end = self.len();
        self.flash
            .program_up_to(end, unit, ready.as_ns(), m.flash, m.buffer.part(0), die_of);
        self.bytes.spill(m.storage, addr, cap);
    }

    /// The region leaves service: the buffer space of bytes never programmed is given back,
    /// and its programmed blocks are erased (one erase unit on each of the first `dies` dies it
    /// programmed, die `d` being `die(d)`), after its last program. Returns when that is done.
    pub fn erase(
        &self,
        m: &mut Media,
        ready: SimInstant,
        dies: u32,
        die: impl Fn(u32) -> DieId,
    ) -> SimInstant {
        let unit = m.layout.geometry.unit_bytes;
        m.buffer.discard(0, self.len() - self.flash.issued);
        let programmed = self.flash.issued / unit;
        let start = SimInstant::from_ns(ready.as_ns().max(self.flash.busy_until));
        let mut done = start;
        for d in 0..dies.min(programmed as u32) {
            done = done.max(m.flash.erase(die(d), 1, start));
        }
        done
    }
}
