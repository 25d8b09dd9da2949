//! # device: an NVMe ZNS controller on the flash model (layer 4)
//!
//! One controller owns what every ZNS device has: the namespace and its zones with the state
//! machine and open/active limits of the ZNS command set, a PCIe link, a capacitor-protected
//! write buffer flushed to flash in page or stripe units, device DRAM accounting, and storage
//! for the real bytes (sparse in memory, or an image file that persists between runs).
//!
//! Each command is handled in three steps kept apart: *validate* (returns an NVMe [`Status`] and
//! changes nothing), *apply* (zone state and bytes), *cost* (reservations on the PCIe and flash
//! timelines, which give the completion time). Commands live one per file under `cmd/`.
//!
//! Designs live behind one seam, one folder each under `design/` (see `design/mod.rs`): plain
//! ZNS; CCZNS (its compressed commands are `cmd/compressed_write.rs` and
//! `cmd/decompressed_read.rs`); Balloon-ZNS; a transparently compressing block SSD. The
//! compressing designs share the engine (`engine.rs`: real codec bytes, profile timing).
//!
//! May depend on: `sim`, `nand`, `codec`. Leaves out: anything about the host software that drives it.

pub mod cmd;
mod config;
mod controller;
mod counters;
pub mod design;
mod engine;
mod faults;
mod handle;
pub mod harness;
mod identify;
mod image;
mod layout;
mod persist;
pub mod presets;
mod status;
mod storage;
mod write_buffer;
mod zone;

pub use cmd::{
    compaction_payload, parse_compaction_payload, parse_report, ChunkMapping, Command, Completion,
    ReportFilter, ZoneAction, COMPACTION_PAYLOAD_BYTES, MAPPING_BYTES, MAX_COMPACTION_PAIRS,
    MAX_COPY_BLOCKS, MAX_COPY_RANGES, REPORT_DESCRIPTOR_BYTES, REPORT_HEADER_BYTES,
    TL_OPEN_HEADER_BYTES,
};
/// ZNS+ TL_open validity bitmaps (LSB first, 1 = valid).
pub mod tl_bitmap {
    pub use crate::cmd::{any_bit, bit};
}
pub use config::FlushUnit;
pub use config::{
    BalloonConfig, CompressionConfig, ControllerConfig, DesignName, DeviceConfig, Duplex,
    LbaConfig, PcieConfig, Plugging, TcssdConfig, ZnsplusConfig, ZoneMapping, ZonesConfig,
};
pub use controller::{
    feature, AdminCommand, CommandSet, Controller, DeviceCounters, DeviceError, DramUsage,
    Identify, VendorCaps,
};
pub use design::balloon::BalloonCounters;
pub use design::cczns::chunks::decode_oob_page;
pub use design::tcssd::TcssdCounters;
pub use engine::EngineCounters;
pub use faults::{CommandKind, Faults};
pub use handle::DeviceHandle;
pub use image::OpenMode;
pub use layout::{
    default_memory_budget, human_bytes, BalloonLayout, Layout, MAX_BLOCKS_PER_COMMAND,
    MAX_UNITS_PER_ZONE,
};
pub use nand::ConfigError;
pub use status::Status;
pub use zone::{ZoneDescriptor, ZoneState};
