//! Zones in host memory: the zone state machine of a `ZoneTable` (write at the write pointer,
//! Full at the capacity, Reset, Finish, Open, Close) beside byte vectors, with no device, no queue and no
//! time. For tests of what sits on a [`ZonedBackend`](super::ZonedBackend); open and active
//! limits are reported but not enforced, and CCZNS commands are refused.
//!
//! With [`MemZoned::with_znsplus`] it also takes ZNS+'s zone_compaction and TL_open, with the
//! semantics the `znsplus` device design gives them (`docs/znsplus.md`): the reference model
//! a file system's tests run on, and the device is checked against.

use std::cell::RefCell;
use std::collections::BTreeMap;

use device::tl_bitmap::{any_bit, bit};
use device::{Status, VendorCaps, ZoneAction, ZoneDescriptor, ZoneState};
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
    /// Each zone's written bytes (from its start to its write pointer; a TL-open zone's are
    /// its whole capacity).
    data: RefCell<Vec<Vec<u8>>>,
    /// ZNS+ commands taken, and TL-open zones at most.
    caps: VendorCaps,
    max_tl_open: usize,
    /// TL-open zones: their validity bitmaps (1 = a valid block the host will not write).
    tl: RefCell<BTreeMap<usize, Vec<u8>>>,
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
            caps: VendorCaps::default(),
            max_tl_open: 0,
            tl: RefCell::new(BTreeMap::new()),
        }
    }

    /// Take ZNS+'s zone_compaction and TL_open (at most `max_tl_open` zones TL-open at once).
    pub fn with_znsplus(mut self, max_tl_open: usize) -> MemZoned {
        self.caps.zone_compaction = true;
        self.caps.tl_open = true;
        self.max_tl_open = max_tl_open;
        self
    }

    /// Whether zone `zone` is TL-open (reported Explicitly Opened).
    pub fn is_tl_open(&self, zone: u32) -> bool {
        self.tl.borrow().contains_key(&(zone as usize))
    }

    /// The device's validation of a zone_compaction (`cmd/zone_compaction.rs`), in its
    /// order: the destination zone.
    fn check_compaction(&self, pairs: &[(u64, u64)]) -> Result<usize, IoError> {
        if !self.caps.zone_compaction {
            return Err(device_error("zone_compaction", 0, Status::INVALID_OPCODE));
        }
        let refuse = |status| Err(device_error("zone_compaction", 0, status));
        if pairs.is_empty() || pairs.len() > device::MAX_COMPACTION_PAIRS {
            return refuse(Status::INVALID_FIELD);
        }
        let zones = self.zones.borrow();
        let count = zones.descriptors().len() as u64;
        let dst_zone = pairs[0].1 / self.zone_lbas;
        if dst_zone >= count {
            return refuse(Status::LBA_OUT_OF_RANGE);
        }
        for &(src, dst) in pairs {
            let sz = src / self.zone_lbas;
            if sz >= count || src >= zones.descriptors()[sz as usize].wp {
                return refuse(Status::LBA_OUT_OF_RANGE);
            }
            if dst / self.zone_lbas != dst_zone {
                return refuse(Status::INVALID_FIELD);
            }
        }
        let mut srcs: Vec<u64> = pairs.iter().map(|p| p.0).collect();
        let mut dsts: Vec<u64> = pairs.iter().map(|p| p.1).collect();
        srcs.sort_unstable();
        dsts.sort_unstable();
        if srcs.windows(2).any(|w| w[0] == w[1])
            || dsts.windows(2).any(|w| w[0] == w[1])
            || srcs.iter().any(|s| dsts.binary_search(s).is_ok())
        {
            return refuse(Status::INVALID_FIELD);
        }
        let z = zones.get(dst_zone as usize).expect("zone");
        if z.state == ZoneState::Full {
            return refuse(Status::ZONE_FULL);
        }
        if self.is_tl_open(dst_zone as u32) {
            return refuse(Status::INVALID_ZONE_OPERATION);
        }
        if dsts[0] != z.wp || dsts.last() != Some(&(z.wp + dsts.len() as u64 - 1)) {
            return refuse(Status::ZONE_INVALID_WRITE);
        }
        if z.wp + dsts.len() as u64 > z.zslba + z.capacity {
            return refuse(Status::ZONE_BOUNDARY_ERROR);
        }
        Ok(dst_zone as usize)
    }

    /// Close zone `zone`'s threaded log: the blocks from its write pointer on that are not
    /// valid read as zeros from now on (the device plugs only valid ones), and the zone is Full.
    fn tl_close(&self, zone: usize) {
        let Some(map) = self.tl.borrow_mut().remove(&zone) else {
            return;
        };
        let mut zones = self.zones.borrow_mut();
        let z = zones.get(zone).expect("zone");
        let b = self.lba_bytes as usize;
        let data = &mut self.data.borrow_mut()[zone];
        for i in z.wp - z.zslba..z.capacity {
            if !bit(&map, i) {
                data[i as usize * b..(i as usize + 1) * b].fill(0);
            }
        }
        zones.set(zone, ZoneState::Full, z.zslba + z.capacity);
    }

    /// A write of `nlb` blocks at `slba` to TL-open zone `zone` with bitmap `map`: at or past
    /// the write pointer, over invalid blocks only (Zone Invalid Write), inside the capacity.
    /// Skipped invalid blocks read as zeros (the device plugs only valid ones).
    /// Returns whether the write reached the capacity.
    fn tl_write(&self, zone: usize, map: &[u8], slba: u64, data: &[u8]) -> Result<bool, IoError> {
        let nlb = data.len() as u64 / self.lba_bytes;
        let mut zones = self.zones.borrow_mut();
        let z = zones.get(zone).expect("zone");
        let refuse = |status| Err(device_error("write", slba, status));
        if slba < z.wp {
            return refuse(Status::ZONE_INVALID_WRITE);
        }
        if slba + nlb > z.zslba + z.capacity {
            return refuse(Status::ZONE_BOUNDARY_ERROR);
        }
        if any_bit(map, slba - z.zslba, slba + nlb - z.zslba) {
            return refuse(Status::ZONE_INVALID_WRITE);
        }
        let b = self.lba_bytes as usize;
        let zone_data = &mut self.data.borrow_mut()[zone];
        for i in z.wp - z.zslba..slba - z.zslba {
            if !bit(map, i) {
                zone_data[i as usize * b..(i as usize + 1) * b].fill(0);
            }
        }
        let at = ((slba - z.zslba) * self.lba_bytes) as usize;
        zone_data[at..at + data.len()].copy_from_slice(data);
        zones.set(zone, ZoneState::ExplicitlyOpened, slba + nlb);
        Ok(slba + nlb == z.zslba + z.capacity)
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
        // A TL-open zone: past the write pointer only valid blocks hold data (invalid ones
        // were written before TL_open and are no longer the host's).
        if let Some(map) = self.tl.borrow().get(&zone) {
            let z = self.zones.borrow().get(zone).expect("zone");
            let b = self.lba_bytes as usize;
            for (k, block) in buf.chunks_mut(b).enumerate() {
                let i = (from / b + k) as u64;
                if i >= z.wp - z.zslba && !bit(map, i) {
                    block.fill(0);
                }
            }
        }
        Ok(())
    }

    async fn write(&self, pos: u64, data: &[u8]) -> Result<(), IoError> {
        let (zone, slba) = self.locate("write", pos, data.len() as u64)?;
        let map = self.tl.borrow().get(&zone).cloned();
        if let Some(map) = map {
            if self.tl_write(zone, &map, slba, data)? {
                // Nothing left to plug: the threaded log closes.
                self.tl_close(zone);
            }
            return Ok(());
        }
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
        if self.is_tl_open(zone) {
            match action {
                // Closing or finishing a TL-open zone plugs it to its end: it is Full.
                ZoneAction::Close | ZoneAction::Finish => {
                    self.tl_close(zone as usize);
                    return Ok(());
                }
                ZoneAction::Reset => {
                    self.tl.borrow_mut().remove(&(zone as usize));
                }
                _ => {}
            }
        }
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

    fn vendor_caps(&self) -> VendorCaps {
        self.caps
    }

    /// The device's validation (`cmd/zone_compaction.rs`) in the same order, then the copy.
    async fn zone_compaction(&self, pairs: &[(u64, u64)]) -> Result<(), IoError> {
        let dst_zone = self.check_compaction(pairs)?;
        // Gather first (a source may sit in the destination zone), then append in order.
        let b = self.lba_bytes;
        let mut sorted = pairs.to_vec();
        sorted.sort_unstable_by_key(|p| p.1);
        let mut bytes = vec![0u8; (sorted.len() as u64 * b) as usize];
        for (i, &(src, _)) in sorted.iter().enumerate() {
            let block = &mut bytes[(i as u64 * b) as usize..((i as u64 + 1) * b) as usize];
            self.read(src * b, block).await?;
        }
        let mut zones = self.zones.borrow_mut();
        zones.advance(dst_zone, sorted.len() as u64);
        self.data.borrow_mut()[dst_zone].extend_from_slice(&bytes);
        Ok(())
    }

    /// TL_open as `docs/znsplus.md` specifies it (the device's rules, checked in its order).
    async fn tl_open(&self, zone: u32, valid: &[u8], close_only: bool) -> Result<(), IoError> {
        let slba = zone as u64 * self.zone_lbas;
        let refuse = |status| Err(device_error("TL_open", slba, status));
        if !self.caps.tl_open {
            return refuse(Status::INVALID_OPCODE);
        }
        let Some(z) = self.zones.borrow().get(zone as usize) else {
            return refuse(Status::LBA_OUT_OF_RANGE);
        };
        let was_tl = self.is_tl_open(zone);
        if close_only {
            if z.state == ZoneState::Full {
                return Ok(()); // closed already
            }
            if !was_tl {
                return refuse(Status::ZONE_INVALID_TRANSITION);
            }
            self.tl_close(zone as usize);
            return Ok(());
        }
        if (valid.len() as u64) * 8 < z.capacity {
            return refuse(Status::INVALID_FIELD);
        }
        // The blocks written before: to the write pointer, or all of a TL-open zone's (its
        // close plugs them).
        let written = if was_tl { z.capacity } else { z.wp - z.zslba };
        if matches!(
            z.state,
            ZoneState::Empty | ZoneState::ReadOnly | ZoneState::Offline
        ) {
            return refuse(Status::ZONE_INVALID_TRANSITION);
        }
        if any_bit(valid, written, z.capacity) {
            return refuse(Status::INVALID_FIELD);
        }
        if !was_tl && self.tl.borrow().len() >= self.max_tl_open {
            return refuse(Status::ZONE_TOO_MANY_OPEN);
        }
        self.tl_close(zone as usize);
        let cap = (z.capacity * self.lba_bytes) as usize;
        let mut data = self.data.borrow_mut();
        data[zone as usize].resize(cap, 0);
        let bytes = valid[..z.capacity.div_ceil(8) as usize].to_vec();
        self.tl.borrow_mut().insert(zone as usize, bytes);
        self.zones
            .borrow_mut()
            .set(zone as usize, ZoneState::ExplicitlyOpened, z.zslba);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: u64 = 4096;

    /// Two zones of 8 blocks, ZNS+ commands on.
    fn dev(sim: &Sim) -> MemZoned {
        MemZoned::new(sim, B, 2, 8, 8, 4, 4).with_znsplus(1)
    }

    fn block(v: u8) -> Vec<u8> {
        vec![v; B as usize]
    }

    #[test]
    fn zone_compaction_copies_to_the_write_pointer_and_checks_as_the_device() {
        let sim = Sim::new(1);
        let d = dev(&sim);
        sim.block_on(async move {
            for v in 1..=4u8 {
                d.write((v as u64 - 1) * B, &block(v)).await.unwrap();
            }
            let status = |r: Result<(), IoError>| r.unwrap_err().status();
            // Destinations not at the write pointer, a source past the write pointer.
            assert_eq!(
                status(d.zone_compaction(&[(0, 9)]).await),
                Some(Status::ZONE_INVALID_WRITE)
            );
            assert_eq!(
                status(d.zone_compaction(&[(5, 8)]).await),
                Some(Status::LBA_OUT_OF_RANGE)
            );
            assert_eq!(
                status(d.zone_compaction(&[(0, 8), (0, 9)]).await),
                Some(Status::INVALID_FIELD)
            );
            d.zone_compaction(&[(3, 9), (1, 8)]).await.unwrap();
            let mut buf = vec![0u8; 2 * B as usize];
            d.read(8 * B, &mut buf).await.unwrap();
            assert_eq!(&buf[..B as usize], &block(2)[..]);
            assert_eq!(&buf[B as usize..], &block(4)[..]);
            assert_eq!(d.report_zones().await.unwrap()[1].wp, 10);
        });
    }

    #[test]
    fn tl_open_overwrites_invalid_blocks_in_sparse_sequential_order() {
        let sim = Sim::new(1);
        let d = dev(&sim);
        sim.block_on(async move {
            for v in 1..=8u8 {
                d.write((v as u64 - 1) * B, &block(v)).await.unwrap();
            }
            let status = |r: Result<(), IoError>| r.unwrap_err().status();
            // Blocks 1, 4 and 5 valid.
            let map = [0b0011_0010u8];
            assert_eq!(
                status(d.tl_open(1, &map, false).await),
                Some(Status::ZONE_INVALID_TRANSITION)
            );
            d.tl_open(0, &map, false).await.unwrap();
            assert_eq!(
                status(d.tl_open(1, &[0], false).await),
                Some(Status::ZONE_INVALID_TRANSITION)
            );
            assert!(d.is_tl_open(0));
            let z = d.report_zones().await.unwrap()[0];
            assert_eq!((z.state, z.wp), (ZoneState::ExplicitlyOpened, 0));
            // Valid blocks read back; invalid ones past the write pointer read as zeros.
            let mut buf = block(9);
            d.read(B, &mut buf).await.unwrap();
            assert_eq!(buf, block(2));
            d.read(2 * B, &mut buf).await.unwrap();
            assert_eq!(buf, block(0));
            // Writing a valid block, or behind the write pointer, is refused.
            assert_eq!(
                status(d.write(B, &block(7)).await),
                Some(Status::ZONE_INVALID_WRITE)
            );
            d.write(2 * B, &[block(20), block(21)].concat())
                .await
                .unwrap();
            assert_eq!(
                status(d.write(0, &block(7)).await),
                Some(Status::ZONE_INVALID_WRITE)
            );
            assert_eq!(d.report_zones().await.unwrap()[0].wp, 4);
            d.write(6 * B, &block(22)).await.unwrap();
            // Close plugs the rest: the valid blocks stay, the skipped invalid ones are zeros.
            d.tl_open(0, &[], true).await.unwrap();
            let z = d.report_zones().await.unwrap()[0];
            assert_eq!((z.state, z.wp), (ZoneState::Full, 8));
            let mut all = vec![0u8; 8 * B as usize];
            d.read(0, &mut all).await.unwrap();
            let want = [0, 2, 20, 21, 5, 6, 22, 0].map(block).concat();
            assert_eq!(all, want);
        });
    }

    #[test]
    fn tl_open_refuses_bits_past_the_written_blocks_and_too_many_zones() {
        let sim = Sim::new(1);
        let d = dev(&sim);
        sim.block_on(async move {
            d.write(0, &[block(1), block(2)].concat()).await.unwrap();
            d.write(8 * B, &block(3)).await.unwrap();
            let status = |r: Result<(), IoError>| r.unwrap_err().status();
            assert_eq!(
                status(d.tl_open(0, &[0b100], false).await),
                Some(Status::INVALID_FIELD)
            );
            assert_eq!(
                status(d.tl_open(0, &[], false).await),
                Some(Status::INVALID_FIELD)
            );
            d.tl_open(0, &[0b10], false).await.unwrap();
            assert_eq!(
                status(d.tl_open(1, &[0], false).await),
                Some(Status::ZONE_TOO_MANY_OPEN)
            );
            // Reopening the same zone closes it first (its blocks are all written then).
            d.tl_open(0, &[0b1000_0010], false).await.unwrap();
            d.zone_action(0, ZoneAction::Reset).await.unwrap();
            assert!(!d.is_tl_open(0));
            d.tl_open(1, &[0], false).await.unwrap();
        });
    }
}
