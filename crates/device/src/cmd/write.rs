//! Write (01h) and Zone Append (7Dh).
//!
//! Validate, in this order: block count and buffers; transfer size (MDTS, and ZASL for
//! append); namespace range; for append, that the LBA is a zone start (Invalid Field, as QEMU
//! does after its fix); zone state (Full, Read Only, Offline); an LBA in the gap between capacity and size (Zone
//! Boundary Error); write pointer (write only);
//! zone capacity (Zone Boundary Error); open and active resources, last, so that an implicit
//! close happens only for a command that succeeds. Apply: store the bytes, advance the write
//! pointer, Empty/Closed → Implicitly Opened, → Full at capacity. Cost: write-buffer space,
//! then the transfer over the link; the programs of completed flash units follow in the
//! background; the design (`design/`) stores and times the bytes.

use sim::SimInstant;

use crate::controller::{CommandSet, Controller};
use crate::design::ZoneWrite;
use crate::status::Status;
use crate::zone::ZoneState;

/// What validation decided about a write: where it goes, and what applying it takes.
enum WritePlan {
    /// A conventional namespace: blocks at `slba`.
    Blocks { slba: u64 },
    /// Zone `zone` from LBA `start`; opening it first implicitly closes `victim`.
    Zone {
        zone: usize,
        start: u64,
        victim: Option<usize>,
    },
}

impl Controller {
    pub(crate) fn write(
        &mut self,
        ready: SimInstant,
        slba: u64,
        nlb: u32,
        data: &[u8],
        metadata: &[u8],
        append: bool,
    ) -> Result<(u64, SimInstant), Status> {
        let bytes = nlb as u64 * self.layout.lba_bytes;
        match self.validate_write(slba, nlb, data, metadata, append)? {
            WritePlan::Blocks { slba } => {
                let (design, mut m) = self.split();
                let done = design.write_blocks(&mut m, slba, data, ready)?;
                self.counters.writes += 1;
                self.counters.host_bytes_written += bytes;
                Ok((0, done))
            }
            WritePlan::Zone {
                zone,
                start,
                victim,
            } => {
                let done =
                    self.apply_zone_write(ready, zone, start, victim, nlb, data, metadata)?;
                if append {
                    self.counters.appends += 1;
                } else {
                    self.counters.writes += 1;
                }
                self.counters.host_bytes_written += bytes;
                Ok((start, done))
            }
        }
    }

    /// Validate a write or append; changes nothing.
    fn validate_write(
        &self,
        slba: u64,
        nlb: u32,
        data: &[u8],
        metadata: &[u8],
        append: bool,
    ) -> Result<WritePlan, Status> {
        let lba = self.layout.lba_bytes;
        // Appends are limited by ZASL, which is at most the MDTS.
        let limit = if append {
            self.layout.zone_append_max_bytes
        } else {
            self.layout.max_transfer_bytes
        };
        self.check_transfer(nlb, data.len(), metadata.len(), limit)?;
        if slba >= self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        if self.design.command_set() == CommandSet::Nvm {
            // A conventional namespace: no zones, no append, any LBA writable.
            if append {
                return Err(Status::INVALID_OPCODE);
            }
            if slba + nlb as u64 > self.layout.namespace_lbas() {
                return Err(Status::LBA_OUT_OF_RANGE);
            }
            return Ok(WritePlan::Blocks { slba });
        }
        let zi = self.zone_index(slba);
        let zone = self.zones[zi];
        if append && slba != zone.zslba {
            return Err(Status::INVALID_FIELD);
        }
        self.check_writable(&zone, slba)?;
        if zone.is_tl_open() {
            // ZNS+ threaded logging: at or past the write pointer, over invalid blocks only.
            if append {
                return Err(Status::INVALID_ZONE_OPERATION);
            }
            if slba + nlb as u64 > zone.end_of_capacity() {
                return Err(Status::ZONE_BOUNDARY_ERROR);
            }
            let (wp, first) = (zone.wp - zone.zslba, slba - zone.zslba);
            if let Some(status) = self.design.tl_check_write(zi, wp, first, nlb as u64) {
                return Err(status);
            }
            return Ok(WritePlan::Zone {
                zone: zi,
                start: slba,
                victim: None,
            });
        }
        let start = if append { zone.wp } else { slba };
        // A CCZNS zone whose byte write pointer is inside a block takes no plain write.
        if start != zone.wp || !zone.bytes.is_multiple_of(lba) {
            return Err(Status::ZONE_INVALID_WRITE);
        }
        if start + nlb as u64 > zone.end_of_capacity() {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        // Open and active resources, checked before the design does any work.
        let victim = self.check_open(zi)?;
        Ok(WritePlan::Zone {
            zone: zi,
            start,
            victim,
        })
    }

    /// Apply a validated zone write: the design makes room (or refuses with nothing
    /// changed), stores and times the bytes, then the zone moves on. Returns when the write is
    /// in the device.
    #[allow(clippy::too_many_arguments)]
    fn apply_zone_write(
        &mut self,
        ready: SimInstant,
        zi: usize,
        start: u64,
        victim: Option<usize>,
        nlb: u32,
        data: &[u8],
        metadata: &[u8],
    ) -> Result<SimInstant, Status> {
        let lba = self.layout.lba_bytes;
        let zone = self.zones[zi];
        let offset = (start - zone.zslba) * lba;
        let w = ZoneWrite {
            zone: zi,
            offset,
            end: offset + data.len() as u64,
            data,
            metadata,
            ready,
        };
        let (design, mut m) = self.split();
        design.prepare_write(&mut m, &w)?;
        self.take_open(zi, victim);
        let (design, mut m) = self.split();
        let in_device = design.write_zone(&mut m, &w)?;
        if !zone.state.is_open() {
            self.set_state(zi, ZoneState::ImplicitlyOpened);
        }
        let z = &mut self.zones[zi];
        z.wp = start + nlb as u64;
        // A TL-open zone's stored bytes reach past its write pointer.
        z.bytes = z.bytes.max((z.wp - z.zslba) * lba);
        let full = z.wp == z.end_of_capacity();
        if zone.is_tl_open() {
            self.mark_zone_dirty(zi);
            if full {
                // Nothing left to plug: the threaded log closes.
                self.close_tl(zi, ready)?;
            }
            return Ok(in_device);
        }
        if full {
            self.set_state(zi, ZoneState::Full);
        }
        self.mark_zone_dirty(zi);
        let (design, mut m) = self.split();
        design.zone_written(&mut m, &w, in_device, full)?;
        Ok(in_device)
    }
}
