//! Read (02h).
//!
//! Validate: block count and buffers, transfer size, namespace range, zone boundary (Read Across
//! Zone Boundaries is not supported), offline zone. Apply: copy the bytes (not for Read Discard
//! on an in-memory device); blocks above the written data read as zeros without touching
//! flash. Cost: one array read plus transfer per flash page not in the write buffer, then the
//! transfer to the host.

use sim::SimInstant;

use crate::controller::{CommandSet, Controller};
use crate::design::ZoneRead;
use crate::status::Status;
use crate::zone::ZoneState;

impl Controller {
    pub(crate) fn read(
        &mut self,
        ready: SimInstant,
        slba: u64,
        nlb: u32,
        data: &mut [u8],
        metadata: &mut [u8],
        copy: bool,
    ) -> Result<(u64, SimInstant), Status> {
        let lba = self.layout.lba_bytes;
        let ms = self.layout.metadata_bytes;
        let bytes = nlb as u64 * lba;
        let zoned = self.validate_read(slba, nlb, data.len(), metadata.len())?;
        let Some(zi) = zoned else {
            let (design, mut m) = self.split();
            let data_ready = design.read_blocks(&mut m, slba, data, ready)?;
            let done = self.transfer_to_host(data_ready.as_ns(), bytes);
            self.count_read(bytes, ready, data_ready, done);
            return Ok((0, SimInstant::from_ns(done)));
        };

        // Apply: the bytes below the written end come from the design, the rest are zeros.
        let zone = self.zones[zi];
        let first = slba - zone.zslba;
        let have = zone.bytes.saturating_sub(first * lba).min(bytes);
        let (stored, zeros) = data.split_at_mut(have as usize);
        let meta_split = if metadata.is_empty() {
            0
        } else {
            (have.div_ceil(lba) * ms) as usize
        };
        let meta_len = metadata.len() as u64;
        let (stored_meta, zero_meta) = metadata.split_at_mut(meta_split);
        let (design, mut m) = self.split();
        let mut read = ZoneRead {
            zone: zi,
            offset: first * lba,
            data: stored,
            copy,
            metadata: stored_meta,
            ready,
        };
        let data_ready = design.read_zone(&mut m, &mut read)?;
        // Most reads are all below the written end: no call into memset for nothing.
        if !zeros.is_empty() {
            zeros.fill(0);
        }
        if !zero_meta.is_empty() {
            zero_meta.fill(0);
        }

        // Cost: the link (the design timed the flash).
        let done = self.transfer_to_host(data_ready.as_ns(), bytes + meta_len);
        self.count_read(bytes, ready, data_ready, done);
        Ok((0, SimInstant::from_ns(done)))
    }

    /// A read of `bytes` that arrived at `ready` (after the command overhead), whose data was
    /// ready at `data_ready` and reached the host at `done` (ns).
    fn count_read(&mut self, bytes: u64, ready: SimInstant, data_ready: SimInstant, done: u64) {
        let c = &mut self.counters;
        c.reads += 1;
        c.host_bytes_read += bytes;
        c.read_ns += done.saturating_sub(ready.as_ns()) + self.overhead.as_ns();
        c.read_transfer_ns += done.saturating_sub(data_ready.as_ns());
    }

    /// Validate a read; changes nothing. Returns the zone it reads (None: a conventional
    /// namespace's blocks).
    fn validate_read(
        &self,
        slba: u64,
        nlb: u32,
        data_len: usize,
        meta_len: usize,
    ) -> Result<Option<usize>, Status> {
        self.check_transfer(nlb, data_len, meta_len, self.layout.max_transfer_bytes)?;
        let end = slba
            .checked_add(nlb as u64)
            .ok_or(Status::LBA_OUT_OF_RANGE)?;
        if end > self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        if self.design.command_set() == CommandSet::Nvm {
            return Ok(None);
        }
        let zi = self.zone_index(slba);
        if self.zone_index(end - 1) != zi {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        if self.zones[zi].state == ZoneState::Offline {
            return Err(Status::ZONE_OFFLINE);
        }
        Ok(Some(zi))
    }
}
