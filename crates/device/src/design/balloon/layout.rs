//! The Balloon-ZNS design's configuration checks, flash layout and table memory.

use nand::{ConfigError, Geometry};

use crate::config::{err, DeviceConfig, ZoneMapping};

/// Balloon-ZNS: superblocks (one block on every die) split in sub-superblocks (SSBs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BalloonLayout {
    /// Superblocks (rows): erase units per die.
    pub rows: u32,
    /// Sub-superblocks per superblock.
    pub groups: u32,
    /// Dies in one sub-superblock.
    pub dies_per_ssb: u32,
    pub ssb_bytes: u64,
    /// Logical pages per profiling window.
    pub window_pages: u64,
}

/// A Balloon-ZNS zone's table (cursor, window histogram, stream lists), and each of its
/// windows' entry once written.
const BALLOON_ZONE_BYTES: u64 = 256;
const BALLOON_WINDOW_BYTES: u64 = 16;
/// Per sub-superblock: its owner, and a segment record when one is allocated on it.
const BALLOON_SSB_BYTES: u64 = 16 + 192;
/// Host memory for the balloon tables of `zones` zones at most (`None` on overflow).
pub(crate) fn table_bytes(cfg: &DeviceConfig, zones: u64, b: &BalloonLayout) -> Option<u64> {
    let ssbs = b.rows as u64 * b.groups as u64;
    let windows = zones.checked_mul(cfg.balloon.windows_per_zone as u64)?;
    zones
        .checked_mul(BALLOON_ZONE_BYTES)?
        .checked_add(windows.checked_mul(BALLOON_WINDOW_BYTES)?)?
        .checked_add(ssbs.checked_mul(BALLOON_SSB_BYTES)?)
}

/// Balloon-ZNS's capacity expansion can never pay off beyond 16×: a page takes at least one
/// 256-byte unit of its slot.
const BALLOON_MAX_EXPANSION_PERCENT: u32 = 1600;

/// Check the balloon design's constraints and derive its layout.
pub(crate) fn balloon_layout(
    cfg: &DeviceConfig,
    g: &Geometry,
    cap_bytes: u64,
    size_bytes: u64,
) -> Result<BalloonLayout, ConfigError> {
    let b = &cfg.balloon;
    let dies = g.channels * g.dies_per_channel;
    if cfg.zones.mapping != ZoneMapping::AllDies || cfg.zones.erase_units_per_die != 1 {
        return Err(err(
            "zones.mapping",
            "the balloon design maps each zone to a superblock: use all_dies with one erase unit per die",
        ));
    }
    if cap_bytes != size_bytes || cap_bytes != dies as u64 * g.erase_unit_bytes {
        return Err(err(
            "zones.capacity_bytes",
            "the balloon design needs zones exactly one superblock in size (leave capacity and size unset)",
        ));
    }
    if cfg.lba.bytes as u64 != g.page_bytes as u64 || g.page_bytes != 4096 {
        return Err(err(
            "lba.bytes",
            format!(
                "the balloon design compresses 4 KiB pages: LBA and flash page must both be 4096 bytes (they are {} and {})",
                cfg.lba.bytes, g.page_bytes
            ),
        ));
    }
    if cfg.lba.metadata_bytes != 0 {
        return Err(err(
            "lba.metadata_bytes",
            "the balloon design does not carry per-block metadata (use 0)",
        ));
    }
    if b.sub_superblocks == 0 || !dies.is_multiple_of(b.sub_superblocks) {
        return Err(err(
            "balloon.sub_superblocks",
            format!(
                "{} must be positive and divide the {dies} dies",
                b.sub_superblocks
            ),
        ));
    }
    let pages = cap_bytes / g.page_bytes as u64;
    if b.windows_per_zone == 0 || !pages.is_multiple_of(b.windows_per_zone as u64) {
        return Err(err(
            "balloon.windows_per_zone",
            format!(
                "{} must be positive and divide the {pages} pages of a zone",
                b.windows_per_zone
            ),
        ));
    }
    if !(1..=100).contains(&b.slot_percentile) {
        return Err(err("balloon.slot_percentile", "must be between 1 and 100"));
    }
    if !(1..=16).contains(&b.first_slot_units) {
        return Err(err(
            "balloon.first_slot_units",
            "must be between 1 and 16 (256 B units of a 4 KiB page)",
        ));
    }
    if b.expansion_percent < 100 {
        return Err(err(
            "balloon.expansion_percent",
            format!(
                "{} must be at least 100 (the logical space is never below the flash)",
                b.expansion_percent
            ),
        ));
    }
    if b.pages_per_read == 0 || !g.unit_bytes.is_multiple_of(b.pages_per_read as u64 * 4096) {
        return Err(err(
            "balloon.pages_per_read",
            format!(
                "{} must be positive and its pages divide the {}-byte program unit",
                b.pages_per_read, g.unit_bytes
            ),
        ));
    }
    if b.expansion_percent > BALLOON_MAX_EXPANSION_PERCENT {
        return Err(err(
            "balloon.expansion_percent",
            format!(
                "{} is more than {BALLOON_MAX_EXPANSION_PERCENT}: no 4 KiB page takes less than \
                 one 256-byte slot unit",
                b.expansion_percent
            ),
        ));
    }
    // Sub-superblocks are numbered row × groups + group in 32 bits.
    let rows = u32::try_from(g.erase_units_per_die)
        .ok()
        .filter(|r| r.checked_mul(b.sub_superblocks).is_some())
        .ok_or_else(|| {
            err(
                "nand.blocks_per_plane",
                format!(
                    "{} superblocks of {} sub-superblocks are more than 2^32 sub-superblocks",
                    g.erase_units_per_die, b.sub_superblocks
                ),
            )
        })?;
    let dies_per_ssb = dies / b.sub_superblocks;
    Ok(BalloonLayout {
        rows,
        groups: b.sub_superblocks,
        dies_per_ssb,
        ssb_bytes: dies_per_ssb as u64 * g.erase_unit_bytes,
        window_pages: pages / b.windows_per_zone as u64,
    })
}
