//! Balloon-ZNS's parameters in a device configuration (`[balloon]`).

use serde::{Deserialize, Serialize};

/// Balloon-ZNS parameters, under `[balloon]`. Defaults are the paper's (Balloon-ZNS §3.1, §3.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BalloonConfig {
    /// Sub-superblocks per superblock (§4.1: 1/8 of the superblock). Each takes one block on
    /// `dies / sub_superblocks` dies.
    pub sub_superblocks: u32,
    /// Profiling windows per zone (§3.1: a window is 1/8 of the zone).
    pub windows_per_zone: u32,
    /// Slot size = this percentile of the previous window's compressed page sizes (§3.1: 70).
    pub slot_percentile: u32,
    /// Slot size of a zone's first window in 256 B units (§3.1: half a page, 8 for 4 KiB).
    pub first_slot_units: u32,
    /// Logical capacity as a percentage of the physical capacity (§3.2: the capacity
    /// expansion ratio; 200 = the paper's example of 2).
    pub expansion_percent: u32,
    /// A window whose compression ratio × 100 is below this makes the rest of its zone
    /// incompressible: stored raw on a whole superblock (§3.2 names the watermark but not its
    /// value; 110 is assumed). 0 disables it.
    pub incompressible_below_percent: u32,
    /// Balloon's 4 KiB flash pages sensed by one read: 1 on 4 KiB-page flash; 4 when they
    /// are the sectors of a 16 KiB physical page (the `cczns-balloon` preset), so a slot that
    /// straddles two of them inside one physical page costs one read, as on the real flash.
    pub pages_per_read: u32,
}

impl Default for BalloonConfig {
    fn default() -> Self {
        BalloonConfig {
            sub_superblocks: 8,
            windows_per_zone: 8,
            slot_percentile: 70,
            first_slot_units: 8,
            expansion_percent: 200,
            incompressible_below_percent: 110,
            pages_per_read: 1,
        }
    }
}
