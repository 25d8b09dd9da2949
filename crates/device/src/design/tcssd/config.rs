//! The transparently compressing SSD's parameters in a device configuration (`[tcssd]`).

use serde::{Deserialize, Serialize};

/// The transparently compressing SSD's FTL, under `[tcssd]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcssdConfig {
    /// Logical capacity as a percentage of the flash left after over-provisioning (ScaleFlux
    /// CSD 2000 exposes up to 2x; DPZip §2 Challenge #1 discusses the map this costs).
    pub expansion_percent: u32,
    /// Flash kept back from the logical capacity for GC (7% is the usual consumer figure,
    /// an assumption; the papers give none).
    pub over_provisioning_percent: u32,
    /// Garbage collection runs when fewer superblocks than this are free.
    pub gc_free_superblocks: u32,
    /// Bytes per map entry (physical address and length of one 4 KiB block's compressed form).
    pub map_entry_bytes: u32,
}

impl Default for TcssdConfig {
    fn default() -> Self {
        TcssdConfig {
            expansion_percent: 200,
            over_provisioning_percent: 7,
            gc_free_superblocks: 2,
            map_entry_bytes: 8,
        }
    }
}
