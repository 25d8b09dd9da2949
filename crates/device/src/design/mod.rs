//! The device design seam: what differs between ZNS, CCZNS, Balloon-ZNS and a transparently
//! compressing SSD lives behind the [`Design`] trait, one folder per design.
//!
//! The controller (`controller.rs`, `cmd/`) owns what every design shares: the namespace and
//! its zones with the ZNS state machine and resource limits, command parsing and validation,
//! the PCIe link, the write buffer, the flash timelines, storage and the image's commit
//! points. After validating a command it calls the design's hook to apply it and cost it; a
//! design sees the device through a borrowed [`Media`] (flash, buffer, links, storage, engine,
//! zone states read-only) and never the controller itself, so nothing here imports it.
//!
//! One exception: CCZNS's compressed write and decompressed read (`cmd/compressed_write.rs`,
//! `cmd/decompressed_read.rs`) are carried out by the controller itself, over the design's
//! chunk records ([`Design::chunk_table`]) and the plain zone data path of `zns.rs`; they do
//! not call `write_zone`/`read_zone`. A design that offers compressed I/O keeps a chunk table
//! (the controller refuses CW/DR with Internal Error otherwise).
//!
//! | design | folder | namespace | what it adds |
//! |---|---|---|---|
//! | `zns` | `zns.rs` | zoned | nothing: bytes in zones, programmed in units |
//! | `cczns` | `cczns/` | zoned | chunk records in the OOB for compressed write / decompressed read |
//! | `balloon` | `balloon/` | zoned | per-page compression into slots and residues (own flash map) |
//! | `tcssd` | `tcssd/` | conventional | a page-mapped compressing FTL with GC (own flash map) |
//! | `znsplus` | `znsplus/` | zoned | zone_compaction (copyback or read + program inside the device) |
//!
//! Adding a design: see `docs/adding-a-device-design.md`.

// Hooks for designs inside this crate name its private image types (`Tables`, `load`).
#![allow(private_interfaces)]

use std::any::Any;
use std::io;

use nand::{Flash, Timeline};
use sim::{SimDuration, SimInstant};

use crate::config::DeviceConfig;
use crate::counters::DeviceCounters;
use crate::engine::Engine;
use crate::identify::{CommandSet, VendorCaps};
use crate::layout::Layout;
use crate::status::Status;
use crate::storage::Storage;
use crate::write_buffer::{WriteBuffer, ZoneFlash};
use crate::zone::Zone;

pub mod balloon;
pub mod cczns;
pub(crate) mod persist;
pub(crate) mod region;
pub(crate) mod shape;
pub mod tcssd;
pub mod zns;
pub mod znsplus;

pub use persist::Tables;

/// What a design may use of the device while it handles a command: borrowed from the
/// controller for the length of one hook.
pub struct Media<'a> {
    pub(crate) layout: &'a Layout,
    pub(crate) config: &'a DeviceConfig,
    /// Zone states, write pointers and byte counts (the controller changes them).
    pub(crate) zones: &'a [Zone],
    /// Per zone: what has gone to flash (designs that program zones in place).
    pub(crate) zone_flash: &'a mut [ZoneFlash],
    pub(crate) flash: &'a mut Flash,
    pub(crate) link_to_device: &'a mut Timeline,
    pub(crate) buffer: &'a mut WriteBuffer,
    pub(crate) storage: &'a mut Storage,
    pub(crate) engine: &'a mut Engine,
    /// Reused buffer for compressed bytes on their way to or from storage.
    pub(crate) staging: &'a mut Vec<u8>,
    pub(crate) counters: &'a mut DeviceCounters,
    /// Deallocated or Unwritten Logical Block Error is on (Set Features).
    pub(crate) dulbe: bool,
    pub(crate) journal: persist::JournalMarks<'a>,
}

impl Media<'_> {
    /// Move `bytes` across the link toward the device starting no earlier than `t`.
    pub(crate) fn transfer_to_device(&mut self, t: SimInstant, bytes: u64) -> SimInstant {
        let rate = self.layout.link_bytes_per_s;
        SimInstant::from_ns(transfer(self.link_to_device, rate, t.as_ns(), bytes))
    }

    /// Earliest time at or after `t` when `bytes` fit in the write buffer; takes them.
    /// Designs whose writes are not one zone's use the first part (the whole buffer unless
    /// the configuration splits it, which only the zns design allows).
    pub(crate) fn buffer_admit(&mut self, t: SimInstant, bytes: u64) -> SimInstant {
        SimInstant::from_ns(self.buffer.admit(0, t.as_ns(), bytes))
    }

    /// [`Media::buffer_admit`] in the part of the buffer that serves zone `zone`.
    pub(crate) fn buffer_admit_zone(
        &mut self,
        zone: usize,
        t: SimInstant,
        bytes: u64,
    ) -> SimInstant {
        let part = self.buffer.part_of(zone as u32);
        SimInstant::from_ns(self.buffer.admit(part, t.as_ns(), bytes))
    }

    /// A commit point inside a command: make the image hold what was applied so far (zone
    /// records and the design's tables), before the design erases flash it no longer needs.
    pub(crate) fn commit(&mut self, design: &mut dyn Design) -> Result<(), Status> {
        persist::commit(self, design)
    }

    /// An image read or write failed: the status a drive would return, the cause kept for the
    /// user.
    pub(crate) fn image_failed(&mut self, what: &str, e: &io::Error) -> Status {
        persist::note_image_error(self.storage, self.journal.image_error, what, e);
        if crate::image::is_ecc_error(e) {
            Status::UNRECOVERED_READ_ERROR
        } else {
            Status::INTERNAL_ERROR
        }
    }
}

pub(crate) fn transfer(link: &mut Timeline, rate: u64, t: u64, bytes: u64) -> u64 {
    let d = SimDuration::for_bytes(bytes, rate).as_ns();
    link.take(t, d) + d
}

/// A write the controller validated and will apply to zone `zone`: `data` (and `metadata`)
/// go at byte `offset` of the zone, which reaches `end` bytes.
pub struct ZoneWrite<'a> {
    pub zone: usize,
    pub offset: u64,
    pub end: u64,
    pub data: &'a [u8],
    pub metadata: &'a [u8],
    pub ready: SimInstant,
}

/// A read of zone `zone` from byte `offset`, validated by the controller.
pub struct ZoneRead<'a> {
    pub zone: usize,
    pub offset: u64,
    /// `data.len()` bytes are read; when `copy` is false the host drops them (Read Discard)
    /// and a design may leave `data` as it is.
    pub data: &'a mut [u8],
    pub copy: bool,
    pub metadata: &'a mut [u8],
    pub ready: SimInstant,
}

/// A validated zone_compaction: `pairs` (source LBA, destination LBA) sorted by destination,
/// the destinations dense from the destination zone's write pointer `start`.
pub struct Compaction<'a> {
    pub zone: usize,
    pub start: u64,
    pub pairs: &'a [(u64, u64)],
    pub ready: SimInstant,
}

/// One device design. The controller calls these hooks after validating a command and
/// before it records the command in the image; each hook applies the design's part and
/// returns when the device is done with it (cost).
///
/// A zoned design implements the zone hooks; a conventional one (`command_set` NVM) the
/// block hooks, and the controller refuses zone commands for it with Invalid Opcode.
pub trait Design: Any {
    /// The name in device configurations (`design = "..."`).
    fn name(&self) -> &'static str;

    /// Identify's command set for the namespace.
    fn command_set(&self) -> CommandSet {
        CommandSet::Zoned
    }

    /// Identify's vendor-specific capabilities; a capability also decides which commands the
    /// controller accepts (compressed I/O: CW, DR and padding zones; deallocate: Dataset
    /// Management and DULBE).
    fn vendor_caps(&self) -> VendorCaps {
        VendorCaps::default()
    }

    // ---- zoned namespace ------------------------------------------------------------------

    /// Before a write changes anything: room for it (Capacity Exceeded otherwise). May do
    /// work the host cannot see (compress into staging, reclaim space); must leave every zone
    /// as it was when it fails.
    fn prepare_write(&mut self, _m: &mut Media, _w: &ZoneWrite) -> Result<(), Status> {
        Ok(())
    }

    /// Store a validated write's bytes; returns when they are in the device (the write's
    /// completion). The controller moves the write pointer and zone state afterwards.
    fn write_zone(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status>;

    /// After the controller moved the zone's write pointer to `w.end` (and to Full if `full`).
    fn zone_written(
        &mut self,
        _m: &mut Media,
        _w: &ZoneWrite,
        _done: SimInstant,
        _full: bool,
    ) -> Result<(), Status> {
        Ok(())
    }

    /// Read bytes of a zone below its written end into `r.data` (the controller zeroes the
    /// rest); returns when the last byte is in the controller.
    fn read_zone(&mut self, m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status>;

    /// A zone left the open states (closed, finished, reset, or closed implicitly).
    fn zone_left_open(&mut self, _m: &mut Media, _zone: usize) {}

    /// Finish: the zone's flash is completed (padded); returns when that is done.
    fn finish_zone(&mut self, m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant;

    /// Reset, before the controller records the zone Empty: what only the old state knows.
    fn before_reset(&mut self, _m: &mut Media, _zone: usize) {}

    /// Reset, after the controller recorded the zone Empty (`recorded` false: the record
    /// failed, and the zone's bytes must stay in the image). Frees the zone's flash; returns
    /// when its erases are done, and whether freeing the image's bytes failed.
    fn reset_zone(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
        recorded: bool,
    ) -> (SimInstant, io::Result<()>);

    // ---- conventional namespace -----------------------------------------------------------

    /// Write whole blocks at `slba` (validated against the namespace).
    fn write_blocks(
        &mut self,
        _m: &mut Media,
        _slba: u64,
        _data: &[u8],
        _ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        Err(Status::INVALID_OPCODE)
    }

    /// Read whole blocks from `slba`; returns when the last byte is in the controller.
    fn read_blocks(
        &mut self,
        _m: &mut Media,
        _slba: u64,
        _data: &mut [u8],
        _ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        Err(Status::INVALID_OPCODE)
    }

    /// Deallocate blocks `[slba, end)`.
    fn deallocate(&mut self, _m: &mut Media, _slba: u64, _end: u64) {}

    // ---- CCZNS's compressed commands ------------------------------------------------------

    /// The chunk records of designs that take compressed writes and decompressed reads.
    fn chunk_table(&mut self) -> Option<&mut cczns::ChunkTable> {
        None
    }

    /// The same, to read (validation changes nothing).
    fn chunks(&self) -> Option<&cczns::ChunkTable> {
        None
    }

    // ---- ZNS+'s in-storage copies ----------------------------------------------------------

    /// zone_compaction (designs whose caps say `zone_compaction`): copy each source block to
    /// its destination inside the device; the controller has validated the command and moves
    /// the destination zone's write pointer afterwards. Returns when the copies are done.
    fn compact_zone(&mut self, _m: &mut Media, _c: &Compaction) -> Result<SimInstant, Status> {
        Err(Status::INVALID_OPCODE)
    }

    // ---- ZNS+'s threaded logging -----------------------------------------------------------
    // The controller keeps a TL-open zone's state (Explicitly Opened, the TL attribute bit, its
    // write pointer); the design keeps the validity bitmap and moves and times the blocks.

    /// Zones TL-open at once at most (0: the design has no TL_open).
    fn max_tl_open(&self) -> u32 {
        0
    }

    /// A write of blocks `first..first + nlb` (from the zone start) to TL-open zone `zone`
    /// whose write pointer is `wp` (blocks from the zone start): the status refusing it.
    fn tl_check_write(&self, _zone: usize, _wp: u64, _first: u64, _nlb: u64) -> Option<Status> {
        Some(Status::INTERNAL_ERROR)
    }

    /// TL_open of zone `zone` with validity bitmap `valid` (validated by the controller; the
    /// zone is not TL-open). May refuse (nothing changed) when it has no block group for the
    /// zone's log. Returns when the device is ready for the zone's writes.
    fn tl_open(
        &mut self,
        _m: &mut Media,
        _zone: usize,
        _valid: &[u8],
        _ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        Err(Status::INVALID_OPCODE)
    }

    /// Close TL-open zone `zone`: copy its valid blocks past the write pointer, make the blocks
    /// there that were not valid read as zeros; the controller then records it Full. Returns
    /// when the copies are done.
    fn tl_close(
        &mut self,
        _m: &mut Media,
        _zone: usize,
        _ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        Err(Status::INTERNAL_ERROR)
    }

    // ---- persistence and power ------------------------------------------------------------

    /// Designs with their own flash map journal it and checkpoint it (`persist.rs`).
    fn tables(&mut self) -> Option<&mut dyn Tables> {
        None
    }

    /// After an image's zone records are loaded (designs without tables): rebuild what the
    /// design keeps from the media (CCZNS: chunk records from the OOB).
    #[allow(private_interfaces)]
    fn load(&mut self, _m: &mut Media, _zones: &mut [Zone]) -> io::Result<()> {
        Ok(())
    }

    /// At open: zone `zone` is Empty in the image; free what a Reset a kill interrupted left
    /// behind. Returns true when the design changed its tables (the controller commits).
    fn finish_interrupted_reset(&mut self, m: &mut Media, zone: usize) -> io::Result<bool> {
        if let Storage::Image(img) = &*m.storage {
            if img.zone_touched(zone as u32)? {
                img.punch_zone(zone as u32)?;
            }
        }
        Ok(false)
    }

    /// Power cycle: forget what a power loss forgets.
    fn power_cycle(&mut self) {}

    /// Work the device starts itself at a command boundary, after the command arriving there
    /// has issued its own work (host first: ZNS+'s PPA-ordered plugging takes only dies still
    /// idle then). It must change no persisted state.
    fn background(&mut self, _m: &mut Media, _now: SimInstant) {}

    // ---- accounting -----------------------------------------------------------------------

    /// Device DRAM the design's own tables take, beyond 32 bytes per zone.
    fn table_dram_bytes(&self) -> u64 {
        0
    }

    /// Host memory holding the design's own flash bytes (designs with their own flash map).
    fn resident_bytes(&self) -> u64 {
        0
    }

    /// For the controller's typed accessors (`balloon_counters` and the like).
    fn as_any(&self) -> &dyn Any;
}

/// The design a configuration names, with its state sized by the layout.
pub(crate) fn build(config: &DeviceConfig, layout: &Layout, on_image: bool) -> Box<dyn Design> {
    use crate::config::DesignName as Name;
    match config.design {
        Name::Zns => Box::new(zns::Zns),
        Name::Cczns => Box::new(cczns::Cczns::new(layout.zone_count as usize)),
        Name::Balloon => Box::new(balloon::Balloon::new(
            layout.balloon.clone().expect("balloon layout"),
            &config.balloon,
            layout.zone_count,
        )),
        Name::Tcssd => Box::new(tcssd::Tcssd::from_config(config, layout, on_image)),
        Name::Znsplus => Box::new(znsplus::Znsplus::new(layout, &config.znsplus)),
    }
}

/// The command set a named design's namespace speaks (what its Identify will say).
pub fn command_set_of(name: crate::config::DesignName) -> CommandSet {
    match name {
        crate::config::DesignName::Tcssd => CommandSet::Nvm,
        _ => CommandSet::Zoned,
    }
}

/// Every named design with one line on what it is (for `znslab devices`).
pub fn catalog() -> [(crate::config::DesignName, &'static str); 5] {
    [
        (
            crate::config::DesignName::Zns,
            "plain NVMe ZNS: zone state machine, limits, append, report zones",
        ),
        (
            crate::config::DesignName::Cczns,
            "CCZNS (HPCA'25 §III): compressed write / decompressed read (single and multi-chunk, \
             CW by append too), byte write pointers, padding zones, chunk records in page OOB",
        ),
        (
            crate::config::DesignName::Balloon,
            "Balloon-ZNS (DAC'24 §3): host-transparent; pages compressed into adaptive slots of \
             sub-superblocks taken on demand, residues in shared extra sub-superblocks, migration, \
             reclamation, incompressible zones on whole superblocks, expanded capacity",
        ),
        (
            crate::config::DesignName::Tcssd,
            "transparently compressing block SSD (DP-CSD, ScaleFlux): conventional namespace \
             larger than the flash, per-block map in device DRAM, greedy GC with OP; no zone commands",
        ),
        (
            crate::config::DesignName::Znsplus,
            "ZNS+ (OSDI'21 §3.2): plain ZNS plus zone_compaction (vendor 81h: up to 512 source → \
             destination blocks copied inside the device, copyback for whole chunks on their chip) \
             and identify_mapping (86h)",
        ),
    ]
}
