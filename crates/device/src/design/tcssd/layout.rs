//! The tcssd design's configuration checks and table memory.

use nand::{ConfigError, Geometry};

use crate::config::{err, DeviceConfig, ZoneMapping};

/// A tcssd superblock's record, and per logical block: its map entry (8 bytes) and the record
/// of where it was written (16 bytes) that GC checks.
const TCSSD_SUPERBLOCK_BYTES: u64 = 192;
const TCSSD_BLOCK_BYTES: u64 = 8 + 16;

/// Host memory for the tcssd tables of a namespace of `blocks` blocks at most (`None` on
/// overflow).
pub(crate) fn table_bytes(blocks: u64, superblocks: u32) -> Option<u64> {
    (superblocks as u64 * TCSSD_SUPERBLOCK_BYTES)
        .checked_add(blocks.checked_mul(TCSSD_BLOCK_BYTES)?)
}

/// The tcssd map entry packs a block's superblock in 16 bits and its byte offset in 32 bits
/// (`tcssd.rs`).
const TCSSD_MAX_SUPERBLOCKS: u64 = 1 << 16;
const TCSSD_MAX_SUPERBLOCK_BYTES: u64 = 1 << 32;

/// Check the tcssd design's constraints; returns its superblock count.
pub(crate) fn tcssd_check(
    cfg: &DeviceConfig,
    g: &Geometry,
    cap_bytes: u64,
    size_bytes: u64,
) -> Result<u32, ConfigError> {
    let t = &cfg.tcssd;
    let dies = (g.channels * g.dies_per_channel) as u64;
    if cfg.zones.mapping != ZoneMapping::AllDies
        || cfg.zones.erase_units_per_die != 1
        || cap_bytes != size_bytes
        || cap_bytes != dies * g.erase_unit_bytes
    {
        return Err(err(
            "zones.mapping",
            "the tcssd design sizes its namespace in superblocks: use all_dies, one erase unit \
             per die, capacity and size unset",
        ));
    }
    if cfg.lba.bytes != 4096 || cfg.lba.metadata_bytes != 0 {
        return Err(err(
            "lba.bytes",
            "the tcssd design compresses 4 KiB blocks without metadata (bytes = 4096, metadata_bytes = 0)",
        ));
    }
    if t.over_provisioning_percent >= 100 {
        return Err(err("tcssd.over_provisioning_percent", "must be below 100"));
    }
    if t.expansion_percent < 100 {
        return Err(err("tcssd.expansion_percent", "must be at least 100"));
    }
    if t.gc_free_superblocks < 1 || t.gc_free_superblocks as u64 + 2 > g.erase_units_per_die {
        return Err(err(
            "tcssd.gc_free_superblocks",
            format!(
                "must be at least 1 and leave room on the {} superblocks",
                g.erase_units_per_die
            ),
        ));
    }
    if !(1..=64).contains(&t.map_entry_bytes) {
        return Err(err(
            "tcssd.map_entry_bytes",
            format!("{} must be between 1 and 64", t.map_entry_bytes),
        ));
    }
    if g.erase_units_per_die > TCSSD_MAX_SUPERBLOCKS {
        return Err(err(
            "nand.blocks_per_plane",
            format!(
                "{} superblocks (erase units per die) are more than the tcssd map entry can \
                 number ({TCSSD_MAX_SUPERBLOCKS}: 16 bits)",
                g.erase_units_per_die
            ),
        ));
    }
    if cap_bytes > TCSSD_MAX_SUPERBLOCK_BYTES {
        return Err(err(
            "nand.pages_per_block",
            format!(
                "a superblock of {cap_bytes} bytes ({dies} dies × {} bytes) is more than the \
                 tcssd map entry's 32-bit offset can address ({TCSSD_MAX_SUPERBLOCK_BYTES})",
                g.erase_unit_bytes
            ),
        ));
    }
    Ok(g.erase_units_per_die as u32)
}
