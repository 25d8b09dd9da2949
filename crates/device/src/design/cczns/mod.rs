//! CCZNS (the compression-capable ZNS SSD): plain ZNS zones plus per-zone chunk records kept
//! in the OOB of the page where each chunk starts (`chunks.rs`), which the compressed write
//! (CW) and decompressed read (DR) commands (`cmd/compressed_write.rs`,
//! `cmd/decompressed_read.rs`) add to and read; padding zones (Open with ZSASO). Reopening an
//! image rebuilds the records and byte write pointers from the OOB.

use std::io;

use sim::SimInstant;

use super::{zns, Design, Media, ZoneRead, ZoneWrite};
use crate::identify::VendorCaps;
use crate::status::Status;
use crate::storage::Storage;
use crate::zone::{Zone, ZoneState};

pub(crate) mod chunks;
pub(crate) mod layout;
pub(crate) mod memo;

use chunks::ChunkRecord;
use memo::DecompressMemo;

/// Decompressed chunks a device remembers to spare the emulator the codec's work on chunks
/// read again (speed only; virtual time is the same without it). 256 MiB holds a default-scale
/// `reproduce cczns` run's tables whole.
pub const DECOMPRESS_MEMO_BYTES: usize = 256 << 20;

/// Every zone's chunk records in offset order (the OOB, cached), and the memo of chunks
/// decompressed lately.
pub struct ChunkTable {
    pub(crate) chunks: Vec<Vec<ChunkRecord>>,
    pub(crate) memo: DecompressMemo,
}

/// The CCZNS design.
pub struct Cczns {
    table: ChunkTable,
}

impl Cczns {
    pub fn new(zones: usize) -> Cczns {
        Cczns {
            table: ChunkTable {
                chunks: vec![Vec::new(); zones],
                memo: DecompressMemo::new(zones, DECOMPRESS_MEMO_BYTES),
            },
        }
    }
}

impl Design for Cczns {
    fn name(&self) -> &'static str {
        "cczns"
    }

    fn vendor_caps(&self) -> VendorCaps {
        VendorCaps {
            compressed_io: true,
            deallocate: false,
            ..VendorCaps::default()
        }
    }

    fn write_zone(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status> {
        zns::store(m, w)?;
        Ok(zns::cost_write(m, w))
    }

    fn zone_written(
        &mut self,
        m: &mut Media,
        w: &ZoneWrite,
        _done: SimInstant,
        _full: bool,
    ) -> Result<(), Status> {
        persist_oob(m, &self.table, w.zone, w.offset, w.end)
    }

    fn read_zone(&mut self, m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status> {
        zns::read(m, r)
    }

    fn finish_zone(&mut self, m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant {
        zns::finish(m, zone, ready)
    }

    fn before_reset(&mut self, m: &mut Media, zone: usize) {
        zns::discard_buffered(m, zone);
    }

    fn reset_zone(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
        recorded: bool,
    ) -> (SimInstant, io::Result<()>) {
        self.table.chunks[zone].clear();
        self.table.memo.forget_zone(zone);
        zns::reset(m, zone, ready, recorded)
    }

    fn chunk_table(&mut self) -> Option<&mut ChunkTable> {
        Some(&mut self.table)
    }

    fn chunks(&self) -> Option<&ChunkTable> {
        Some(&self.table)
    }

    #[allow(private_interfaces)]
    fn load(&mut self, m: &mut Media, zones: &mut [Zone]) -> io::Result<()> {
        rebuild_from_oob(m, &mut self.table, zones)
    }

    fn power_cycle(&mut self) {
        self.table.memo.clear();
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Write the OOB of the pages holding bytes `from..to` of zone `zi` (an image only).
pub(crate) fn persist_oob(
    m: &mut Media,
    table: &ChunkTable,
    zi: usize,
    from: u64,
    to: u64,
) -> Result<(), Status> {
    if !m.storage.is_image() || to == from {
        return Ok(());
    }
    let page = m.layout.geometry.page_bytes as u64;
    let mut oob = vec![0u8; m.layout.geometry.oob_bytes_per_page as usize];
    for p in from / page..to.div_ceil(page) {
        let (lo, hi) = (p * page, (p + 1) * page);
        let recs = &table.chunks[zi];
        let a = recs.partition_point(|r| r.offset < lo);
        let b = recs.partition_point(|r| r.offset < hi);
        let fill = to.min(hi) - lo;
        chunks::encode_page(page, p, fill, &recs[a..b], &mut oob);
        m.storage
            .write_oob(zi as u32, p, &oob)
            .map_err(|e| m.image_failed("write", &e))?;
    }
    Ok(())
}

/// Rebuild every zone's chunk records and byte write pointer from the OOB of its pages, as
/// the device firmware would at power-on.
fn rebuild_from_oob(m: &mut Media, table: &mut ChunkTable, zones: &mut [Zone]) -> io::Result<()> {
    table.memo.clear();
    let Storage::Image(img) = &*m.storage else {
        return Ok(());
    };
    let page = m.layout.geometry.page_bytes as u64;
    let lba = m.layout.lba_bytes;
    let mut oob = vec![0u8; m.layout.geometry.oob_bytes_per_page as usize];
    for (zi, z) in zones.iter_mut().enumerate() {
        let recs = &mut table.chunks[zi];
        recs.clear();
        if matches!(z.state, ZoneState::Empty | ZoneState::Offline) {
            continue;
        }
        let cap = z.capacity * lba;
        let mut bytes = 0;
        for p in 0..cap.div_ceil(page) {
            img.read_oob(zi as u32, p, &mut oob)?;
            let fill = chunks::decode_page(page, p, &oob, recs).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("zone {zi}: corrupt OOB: {e}"),
                )
            })?;
            bytes = p * page + fill;
            if fill < page {
                break;
            }
        }
        z.bytes = bytes;
        if z.state != ZoneState::Full {
            z.wp = z.zslba + bytes / lba;
        }
    }
    Ok(())
}
