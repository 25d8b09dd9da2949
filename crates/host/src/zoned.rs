//! The zoned backend zonefs sits on: a device's zones as a report, reads, writes at the write
//! pointer, zone actions and the geometry and limits Identify gives, plus CCZNS's compressed
//! writes and decompressed reads where the backend has them.
//!
//! Two implementations: [`HostIo`] (the emulated device through the host I/O layer, with the
//! zones a host emulates on a conventional namespace) and [`MemZoned`] (zones in host memory,
//! no device and no time, for fast tests of what sits above). Both keep host-memory zones in a
//! `ZoneTable` (`zoned/table.rs`), the zone state machine as pure state changes.
//!
//! Methods are `async fn`s used through generics (`ZoneFs<B: ZonedBackend>`): the simulator's
//! executor is single-threaded, so the futures need not be `Send`.
#![allow(async_fn_in_trait)]

mod mem;
pub(crate) mod table;

use device::{ChunkMapping, VendorCaps, ZoneAction, ZoneDescriptor};
use sim::Sim;

use crate::io::{CwFeedback, HostIo, IoError};

pub use mem::MemZoned;
pub use table::RestoreZonesError;

/// A zoned block device as a file system sees it. Byte addresses throughout; every I/O is
/// whole blocks inside one zone.
pub trait ZonedBackend: 'static {
    /// The clock I/O is timed on (and background work is spawned on).
    fn sim(&self) -> &Sim;
    /// Logical block size.
    fn lba_bytes(&self) -> u64;
    /// Zone size (the byte span of a zone) and capacity (its writable part).
    fn zone_bytes(&self) -> u64;
    fn zone_capacity_bytes(&self) -> u64;
    /// The largest transfer one command takes (MDTS).
    fn max_transfer_bytes(&self) -> u64;
    /// The open and active zone limits as Identify gives them (MOR, MAR: zero-based,
    /// `u32::MAX` for no limit).
    fn zone_limits(&self) -> (u32, u32);
    /// Whether the backend takes CCZNS compressed writes and decompressed reads.
    fn compressed_io(&self) -> bool;

    /// Every zone's descriptor.
    async fn report_zones(&self) -> Result<Vec<ZoneDescriptor>, IoError>;
    /// Read `buf.len()` bytes at byte `pos`.
    async fn read(&self, pos: u64, buf: &mut [u8]) -> Result<(), IoError>;
    /// Read `buf.len()` bytes at byte `pos` for the read's time only: what lands in `buf` is
    /// unspecified (the device's Read Discard, where the backend has one; a plain read else).
    async fn read_discard(&self, pos: u64, buf: &mut [u8]) -> Result<(), IoError> {
        self.read(pos, buf).await
    }
    /// Write `data` at byte `pos`, its zone's write pointer.
    async fn write(&self, pos: u64, data: &[u8]) -> Result<(), IoError>;
    /// A zone management action on zone `zone`.
    async fn zone_action(&self, zone: u32, action: ZoneAction) -> Result<(), IoError>;
    /// CCZNS compressed write at byte address `pos` (see [`HostIo::compressed_write`]).
    async fn compressed_write(
        &self,
        pos: u64,
        data: &[u8],
        chunk_sizes: &[u32],
    ) -> Result<CwFeedback, IoError>;
    /// CCZNS decompressed read (see [`HostIo::decompressed_read`]).
    async fn decompressed_read(
        &self,
        pos: u64,
        compressed_len: u64,
        multi: bool,
        out: &mut [u8],
    ) -> Result<Vec<(u32, u32)>, IoError>;

    // ---- ZNS+ (OSDI'21 §3.2): in-device copies and threaded logging ------------------------

    /// What the device offers beyond ZNS (Identify's vendor capabilities).
    fn vendor_caps(&self) -> VendorCaps {
        VendorCaps::default()
    }

    /// ZNS+ zone_compaction: copy block `src` to block `dst` (LBAs) for each pair, inside the
    /// device. At most 512 pairs; every destination in one zone, and the destinations, sorted,
    /// dense from that zone's write pointer (they move it as a write would).
    async fn zone_compaction(&self, pairs: &[(u64, u64)]) -> Result<(), IoError> {
        Err(unsupported("zone_compaction", pairs.len() as u64))
    }

    /// ZNS+ identify_mapping: which chip holds each chunk (None: the device does not say, and
    /// the host allocates without knowing chips).
    async fn identify_mapping(&self) -> Result<Option<ChunkMapping>, IoError> {
        Ok(None)
    }

    /// ZNS+ TL_open: make zone `zone` overwritable in sparse sequential order where `valid`
    /// (one bit per block of the zone capacity, LSB first; 1 = valid, kept) is 0. The write
    /// pointer goes back to the zone start; writes at or past it may fill invalid blocks only;
    /// the device copies the valid ones as the pointer passes them (internal plugging). A zone
    /// already TL-open is closed first. `close_only`: close the zone's threaded log (plug to
    /// its end: the zone becomes Full) without opening it again.
    async fn tl_open(&self, zone: u32, valid: &[u8], close_only: bool) -> Result<(), IoError> {
        let _ = (zone, close_only);
        Err(unsupported("TL_open", valid.len() as u64))
    }
}

/// A ZNS+ command on a backend without it.
fn unsupported(op: &'static str, len: u64) -> IoError {
    IoError::Invalid {
        op,
        pos: 0,
        len,
        why: "the device does not have this ZNS+ command (Identify's vendor capabilities)",
    }
}

impl ZonedBackend for HostIo {
    fn sim(&self) -> &Sim {
        HostIo::sim(self)
    }
    fn lba_bytes(&self) -> u64 {
        HostIo::lba_bytes(self)
    }
    fn zone_bytes(&self) -> u64 {
        HostIo::zone_bytes(self)
    }
    fn zone_capacity_bytes(&self) -> u64 {
        HostIo::zone_capacity_bytes(self)
    }
    fn max_transfer_bytes(&self) -> u64 {
        HostIo::max_transfer_bytes(self)
    }
    fn zone_limits(&self) -> (u32, u32) {
        self.device().with(|c| {
            let id = c.identify();
            (id.mor, id.mar)
        })
    }
    fn compressed_io(&self) -> bool {
        self.device().with(|c| c.identify().vendor.compressed_io)
    }

    async fn report_zones(&self) -> Result<Vec<ZoneDescriptor>, IoError> {
        HostIo::report_zones(self).await
    }
    async fn read(&self, pos: u64, buf: &mut [u8]) -> Result<(), IoError> {
        HostIo::read(self, pos, buf).await
    }
    async fn read_discard(&self, pos: u64, buf: &mut [u8]) -> Result<(), IoError> {
        HostIo::read_discard(self, pos, buf).await
    }
    async fn write(&self, pos: u64, data: &[u8]) -> Result<(), IoError> {
        HostIo::write(self, pos, data).await
    }
    async fn zone_action(&self, zone: u32, action: ZoneAction) -> Result<(), IoError> {
        HostIo::zone_action(self, zone, action).await
    }
    async fn compressed_write(
        &self,
        pos: u64,
        data: &[u8],
        chunk_sizes: &[u32],
    ) -> Result<CwFeedback, IoError> {
        HostIo::compressed_write(self, pos, data, chunk_sizes).await
    }
    async fn decompressed_read(
        &self,
        pos: u64,
        compressed_len: u64,
        multi: bool,
        out: &mut [u8],
    ) -> Result<Vec<(u32, u32)>, IoError> {
        HostIo::decompressed_read(self, pos, compressed_len, multi, out).await
    }
    fn vendor_caps(&self) -> VendorCaps {
        self.device().with(|c| c.identify().vendor)
    }
    async fn zone_compaction(&self, pairs: &[(u64, u64)]) -> Result<(), IoError> {
        HostIo::zone_compaction(self, pairs).await
    }
    async fn identify_mapping(&self) -> Result<Option<ChunkMapping>, IoError> {
        HostIo::identify_mapping(self).await
    }
    async fn tl_open(&self, zone: u32, valid: &[u8], close_only: bool) -> Result<(), IoError> {
        HostIo::tl_open(self, zone, valid, close_only).await
    }
}
