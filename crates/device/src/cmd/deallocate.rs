//! Dataset Management (09h) with the Attribute Deallocate bit: the host says a range of blocks
//! holds nothing it will read again (TRIM). Only the transparently compressing block SSD takes
//! it (its map forgets the blocks, so GC stops copying them and reads return zeros); the zoned
//! designs reset zones instead and refuse it as an unsupported opcode, as a ZNS drive that
//! does not set ONCS bit 2 would.

use sim::SimInstant;

use crate::controller::Controller;
use crate::status::Status;

impl Controller {
    pub(crate) fn deallocate(
        &mut self,
        ready: SimInstant,
        slba: u64,
        nlb: u32,
    ) -> Result<(u64, SimInstant), Status> {
        if !self.design.vendor_caps().deallocate {
            return Err(Status::INVALID_OPCODE);
        }
        if nlb == 0 {
            return Err(Status::INVALID_FIELD);
        }
        let end = slba
            .checked_add(nlb as u64)
            .ok_or(Status::LBA_OUT_OF_RANGE)?;
        if end > self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        let (design, mut m) = self.split();
        design.deallocate(&mut m, slba, end);
        // Only the map in DRAM changes: the firmware's overhead is the whole cost.
        Ok((0, ready))
    }
}
