//! Zones in host memory: the zone state machine of a `ZoneTable` (write at the write pointer,
//! Full at the capacity, Reset, Finish, Open, Close) beside byte vectors, with no device, no queue and no
//! time. For tests of what sits on a [`ZonedBackend`](super::ZonedBackend); open and active
//! limits are reported but not enforced, and CCZNS commands are refused.

use std::cell::RefCell;

use device::{Status, ZoneAction, ZoneDescriptor};
use sim::Sim;

use super::table::ZoneTable;
use super::ZonedBackend;
use crate::io::{CwFeedback, IoError};

/// An in-memory zoned device.
pub struct MemZoned {
    sim: Sim,
    lba_bytes: u64,
    zone_lbas: u64,
    capacity_lbas: u64,
    max_transfer_bytes: u64,
    /// MOR and MAR, zero-based (`u32::MAX`: no limit).
    limits: (u32, u32),
    zones: RefCell<ZoneTable>,
    /// Each zone's written bytes (from its start to its write pointer).
    data: RefCell<Vec<Vec<u8>>>,
}

impl MemZoned {
    /// `zones` zones of `zone_lbas` blocks of `lba_bytes`, `capacity_lbas` of them writable,
    /// allowing `max_open` and `max_active` zones (reported only).
    pub fn new(
        sim: &Sim,
        lba_bytes: u64,
        zones: u32,
        zone_lbas: u64,
        capacity_lbas: u64,
        max_open: u32,
        max_active: u32,
    ) -> MemZoned {
        MemZoned {
            sim: sim.clone(),
            lba_bytes,
            zone_lbas,
            capacity_lbas,
            max_transfer_bytes: 128 << 10,
            limits: (max_open.saturating_sub(1), max_active.saturating_sub(1)),
            zones: RefCell::new(ZoneTable::new(zones, zone_lbas, capacity_lbas, lba_bytes)),
            data: RefCell::new(vec![Vec::new(); zones as usize]),
        }
    }

    /// The zone and the block in it of byte `pos`, checking `len` bytes are whole blocks in
    /// one zone.
    fn locate(&self, op: &'static str, pos: u64, len: u64) -> Result<(usize, u64), IoError> {
        let bad = |why| Err(IoError::Invalid { op, pos, len, why });
        let b = self.lba_bytes;
        if len == 0 || !pos.is_multiple_of(b) || !len.is_multiple_of(b) {
            return bad("not whole blocks");
        }
        let zone_bytes = self.zone_lbas * b;
        let zone = pos / zone_bytes;
        if zone >= self.zones.borrow().descriptors().len() as u64 {
            return bad("past the end of the namespace");
        }
        if (pos + len - 1) / zone_bytes != zone {
            return bad("crosses a zone boundary");
        }
        Ok((zone as usize, pos / b))
    }
}

fn device_error(op: &'static str, lba: u64, status: Status) -> IoError {
    IoError::Device { op, lba, status }
}

impl ZonedBackend for MemZoned {
    fn sim(&self) -> &Sim {
        &self.sim
    }
    fn lba_bytes(&self) -> u64 {
        self.lba_bytes
    }
    fn zone_bytes(&self) -> u64 {
        self.zone_lbas * self.lba_bytes
    }
    fn zone_capacity_bytes(&self) -> u64 {
        self.capacity_lbas * self.lba_bytes
    }
    fn max_transfer_bytes(&self) -> u64 {
        self.max_transfer_bytes
    }
    fn zone_limits(&self) -> (u32, u32) {
        self.limits
    }
    fn compressed_io(&self) -> bool {
        false
    }

    async fn report_zones(&self) -> Result<Vec<ZoneDescriptor>, IoError> {
        Ok(self.zones.borrow().descriptors().to_vec())
    }

    async fn read(&self, pos: u64, buf: &mut [u8]) -> Result<(), IoError> {
        let (zone, _) = self.locate("read", pos, buf.len() as u64)?;
        let data = self.data.borrow();
        let written = &data[zone];
        let from = (pos % (self.zone_lbas * self.lba_bytes)) as usize;
        // Blocks past the write pointer read as zeros.
        buf.fill(0);
        if from < written.len() {
            let n = (written.len() - from).min(buf.len());
            buf[..n].copy_from_slice(&written[from..from + n]);
        }
        Ok(())
    }

    async fn write(&self, pos: u64, data: &[u8]) -> Result<(), IoError> {
        let (zone, slba) = self.locate("write", pos, data.len() as u64)?;
        let nlb = data.len() as u64 / self.lba_bytes;
        let mut zones = self.zones.borrow_mut();
        if let Some(status) = zones.check_write(zone, slba, nlb) {
            return Err(device_error("write", slba, status));
        }
        zones.advance(zone, nlb);
        self.data.borrow_mut()[zone].extend_from_slice(data);
        Ok(())
    }

    async fn zone_action(&self, zone: u32, action: ZoneAction) -> Result<(), IoError> {
        let slba = zone as u64 * self.zone_lbas;
        let refuse = |status| Err(device_error("zone management", slba, status));
        let mut zones = self.zones.borrow_mut();
        let Some(z) = zones.get(zone as usize) else {
            return refuse(Status::LBA_OUT_OF_RANGE);
        };
        let (state, wp) = match ZoneTable::transition(&z, action) {
            Ok(next) => next,
            Err(status) => return refuse(status),
        };
        zones.set(zone as usize, state, wp);
        if action == ZoneAction::Reset {
            self.data.borrow_mut()[zone as usize].clear();
        }
        Ok(())
    }

    async fn compressed_write(
        &self,
        pos: u64,
        data: &[u8],
        _chunk_sizes: &[u32],
    ) -> Result<CwFeedback, IoError> {
        Err(IoError::Invalid {
            op: "compressed write",
            pos,
            len: data.len() as u64,
            why: "the in-memory backend has no CCZNS commands",
        })
    }

    async fn decompressed_read(
        &self,
        pos: u64,
        compressed_len: u64,
        _multi: bool,
        _out: &mut [u8],
    ) -> Result<Vec<(u32, u32)>, IoError> {
        Err(IoError::Invalid {
            op: "decompressed read",
            pos,
            len: compressed_len,
            why: "the in-memory backend has no CCZNS commands",
        })
    }
}
