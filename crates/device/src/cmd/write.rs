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
//! background. A balloon device compresses each page into its slot first (crate::balloon).

use sim::SimInstant;

use crate::controller::Controller;
use crate::status::Status;
use crate::zone::ZoneState;

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
        let lba = self.layout.lba_bytes;
        let ms = self.layout.metadata_bytes;
        // Appends are limited by ZASL, which is at most the MDTS.
        let limit = if append {
            self.layout.zone_append_max_bytes
        } else {
            self.layout.max_transfer_bytes
        };
        let bytes = self.check_transfer(nlb, data.len(), metadata.len(), limit)?;
        if slba >= self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        if self.tcssd.is_some() {
            // A conventional namespace: no zones, no append, any LBA writable.
            if append {
                return Err(Status::INVALID_OPCODE);
            }
            if slba + nlb as u64 > self.layout.namespace_lbas() {
                return Err(Status::LBA_OUT_OF_RANGE);
            }
            let done = self.tcssd_write(ready.as_ns(), slba, data)?;
            self.counters.writes += 1;
            self.counters.host_bytes_written += bytes;
            return Ok((0, SimInstant::from_ns(done)));
        }
        let zi = self.zone_index(slba);
        let zone = self.zones[zi];
        if append && slba != zone.zslba {
            return Err(Status::INVALID_FIELD);
        }
        self.check_writable(&zone, slba)?;
        let start = if append { zone.wp } else { slba };
        // A CCZNS zone whose byte write pointer is inside a block takes no plain write.
        if start != zone.wp || !zone.bytes.is_multiple_of(lba) {
            return Err(Status::ZONE_INVALID_WRITE);
        }
        if start + nlb as u64 > zone.end_of_capacity() {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        let balloon = self.balloon.is_some();
        if balloon {
            // Compress, and make sure flash has room (Capacity Exceeded, nothing changed).
            self.balloon_prepare(zi, data, ready.as_ns())?;
        }
        self.claim_open(zi)?;

        // Apply.
        let offset_lbas = start - zone.zslba;
        let balloon_done = if balloon {
            Some(self.balloon_write(zi, data, ready.as_ns()))
        } else {
            self.storage
                .write(
                    zi as u32,
                    offset_lbas * lba,
                    data,
                    offset_lbas * ms,
                    metadata,
                )
                .map_err(|e| self.image_failed("write", &e))?;
            None
        };
        if !zone.state.is_open() {
            self.set_state(zi, ZoneState::ImplicitlyOpened);
        }
        let old_bytes = zone.bytes;
        let z = &mut self.zones[zi];
        z.wp = start + nlb as u64;
        z.bytes = (z.wp - z.zslba) * lba;
        let full = z.wp == z.end_of_capacity();
        let written_bytes = z.bytes;
        if full {
            self.set_state(zi, ZoneState::Full);
        }
        self.mark_zone_dirty(zi);
        if self.config.design == crate::config::Design::Cczns {
            self.persist_oob(zi, old_bytes, written_bytes)?;
        }

        // Cost.
        let in_device = match balloon_done {
            Some(done) => {
                if full {
                    self.balloon_migrate(zi, done);
                }
                done
            }
            None => {
                let admitted = self.buffer_admit(ready.as_ns(), bytes);
                let in_device = self.transfer_to_device(admitted, bytes + metadata.len() as u64);
                self.flush_zone_units(zi, written_bytes, in_device);
                in_device
            }
        };
        if append {
            self.counters.appends += 1;
        } else {
            self.counters.writes += 1;
        }
        self.counters.host_bytes_written += bytes;
        Ok((start, SimInstant::from_ns(in_device)))
    }
}
