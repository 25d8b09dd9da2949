//! The validated, derived shape of a device: zone sizes in LBAs, dies per zone, stripe.

use nand::{ConfigError, DieId, Geometry};

use crate::config::{err, DesignName, DeviceConfig, ZoneMapping};
pub use crate::design::balloon::layout::BalloonLayout;

/// Everything derived from a [`DeviceConfig`] once it has been checked.
#[derive(Clone, Debug)]
pub struct Layout {
    pub geometry: Geometry,
    pub lba_bytes: u64,
    pub metadata_bytes: u64,
    pub zone_count: u32,
    /// Zone size (ZSZE) in LBAs.
    pub zone_size_lbas: u64,
    /// Zone capacity (ZCAP) in LBAs.
    pub zone_capacity_lbas: u64,
    /// Dies each zone is striped over.
    pub dies_per_zone: u32,
    /// Independent die groups; zone `z` uses group `z % zone_groups`.
    pub zone_groups: u32,
    pub channels_per_zone: u32,
    pub ways_per_zone: u32,
    pub erase_units_per_zone_per_die: u64,
    /// Bytes in one stripe: one program unit on every die of a zone.
    pub stripe_bytes: u64,
    pub max_open: u32,
    pub max_active: u32,
    pub max_transfer_bytes: u64,
    pub zone_append_max_bytes: u64,
    pub link_bytes_per_s: u64,
    /// Reads and writes take turns on one link timeline (`[pcie] duplex = "half"`).
    pub link_half_duplex: bool,
    /// The Balloon-ZNS flash layout (balloon design only).
    pub balloon: Option<BalloonLayout>,
    /// Superblocks of the flash (tcssd design only; its namespace is zone_count zones' worth).
    pub tcssd_superblocks: Option<u32>,
    /// Host memory the device's tables take at most (zone tables, flash timelines, the
    /// designs' maps with every block written), not counting the data bytes; see
    /// [`table_bytes`](Layout::table_bytes). Checked against the memory budget.
    pub table_bytes: u64,
    /// Size of the device's image file (sparse), as `storage.rs` lays it out.
    pub image_bytes: u64,
}

impl Layout {
    /// Does the design lay out the flash itself (its own map, kept in the image by physical
    /// address), instead of zone by zone?
    pub fn own_flash(&self) -> bool {
        self.balloon.is_some() || self.tcssd_superblocks.is_some()
    }

    /// Validate `cfg` and derive its layout, refusing tables above the default memory budget
    /// (half the machine's memory; see [`default_memory_budget`]).
    pub fn new(cfg: &DeviceConfig) -> Result<Layout, ConfigError> {
        Self::within(cfg, default_memory_budget())
    }

    /// Validate `cfg` and derive its layout, refusing a device whose tables would take more
    /// than `memory_budget` bytes of host memory.
    pub fn within(cfg: &DeviceConfig, memory_budget: u64) -> Result<Layout, ConfigError> {
        let g = cfg.nand.validate("device.nand")?;
        let lba_bytes = cfg.lba.bytes as u64;
        if !(lba_bytes == 512 || lba_bytes == 4096) {
            return Err(err(
                "lba.bytes",
                format!("{lba_bytes} is not supported (use 512 or 4096)"),
            ));
        }
        if g.unit_bytes % lba_bytes != 0 {
            return Err(err(
                "lba.bytes",
                format!(
                    "{lba_bytes} does not divide the program unit ({} bytes)",
                    g.unit_bytes
                ),
            ));
        }
        if cfg.lba.metadata_bytes > 256 {
            return Err(err(
                "lba.metadata_bytes",
                format!("{} is more than 256", cfg.lba.metadata_bytes),
            ));
        }
        if codec::profile::by_name(&cfg.compression.engine).is_none() {
            return Err(err(
                "compression.engine",
                format!(
                    "unknown engine profile {:?} (known: {})",
                    cfg.compression.engine,
                    codec::profile::names().join(", ")
                ),
            ));
        }
        let (c, w) = (g.channels, g.dies_per_channel);
        let (cpz, wpz) = match cfg.zones.mapping {
            ZoneMapping::AllDies => (c, w),
            ZoneMapping::HalfDies => {
                if c % 2 != 0 {
                    return Err(err(
                        "zones.mapping",
                        format!("half_dies needs an even channel count, not {c}"),
                    ));
                }
                (c / 2, w)
            }
            ZoneMapping::DieGroups {
                channels_per_zone,
                dies_per_channel_per_zone,
            } => {
                if channels_per_zone == 0 || c % channels_per_zone != 0 {
                    return Err(err(
                        "zones.mapping.die_groups.channels_per_zone",
                        format!("{channels_per_zone} must be positive and divide the {c} channels"),
                    ));
                }
                if dies_per_channel_per_zone == 0 || w % dies_per_channel_per_zone != 0 {
                    return Err(err(
                        "zones.mapping.die_groups.dies_per_channel_per_zone",
                        format!("{dies_per_channel_per_zone} must be positive and divide the {w} dies per channel"),
                    ));
                }
                (channels_per_zone, dies_per_channel_per_zone)
            }
        };
        let dies_per_zone = cpz * wpz;
        let zone_groups = (c / cpz) * (w / wpz);
        let eu = cfg.zones.erase_units_per_die;
        if eu == 0 || eu > g.erase_units_per_die {
            return Err(err(
                "zones.erase_units_per_die",
                format!(
                    "{eu} must be between 1 and the {} erase units on a die",
                    g.erase_units_per_die
                ),
            ));
        }
        // Cannot overflow: the flash's total (dies × erase units × erase unit bytes) fits.
        let stripe_bytes = dies_per_zone as u64 * g.unit_bytes;
        let flash_bytes_per_zone = dies_per_zone as u64 * eu * g.erase_unit_bytes;
        // Finish pads and Reset erases a zone one program unit at a time.
        let units_per_zone = dies_per_zone as u64 * eu * g.units_per_erase_unit;
        if units_per_zone > MAX_UNITS_PER_ZONE {
            return Err(err(
                "zones.erase_units_per_die",
                format!(
                    "{dies_per_zone} dies × {eu} erase units × {} program units make \
                     {units_per_zone} program units in a zone, more than {MAX_UNITS_PER_ZONE} \
                     (use fewer erase units or dies per zone, or fewer pages per block)",
                    g.units_per_erase_unit
                ),
            ));
        }
        let capacity = match (cfg.zones.capacity_bytes, cfg.zones.size_bytes) {
            (Some(cap), _) => (cap, "zones.capacity_bytes"),
            (None, Some(size)) if size <= flash_bytes_per_zone => (size, "zones.size_bytes"),
            _ => (flash_bytes_per_zone, "zones.capacity_bytes"),
        };
        let (cap_bytes, cap_field) = capacity;
        if cap_bytes == 0 || cap_bytes % stripe_bytes != 0 {
            return Err(err(
                cap_field,
                format!(
                    "{cap_bytes} is not a positive multiple of the stripe ({dies_per_zone} dies × {} bytes = {stripe_bytes})",
                    g.unit_bytes
                ),
            ));
        }
        if cap_bytes > flash_bytes_per_zone {
            return Err(err(
                cap_field,
                format!("{cap_bytes} is more than the zone's flash ({dies_per_zone} dies × {eu} erase units × {} bytes)", g.erase_unit_bytes),
            ));
        }
        let size_bytes = cfg.zones.size_bytes.unwrap_or(cap_bytes);
        if size_bytes < cap_bytes || !size_bytes.is_multiple_of(lba_bytes) {
            return Err(err(
                "zones.size_bytes",
                format!("{size_bytes} must be a multiple of the LBA size and at least the capacity ({cap_bytes})"),
            ));
        }
        let zones_per_group = g.erase_units_per_die / eu;
        // At most 2^64 / 2^16: erase units per die times die groups fits (the flash's size does).
        let mut max_zones = zones_per_group * zone_groups as u64;
        // The design's own checks, flash tables, and logical zones on that flash.
        let own = crate::design::shape::layout_part(cfg, &g, cap_bytes, size_bytes, max_zones)?;
        max_zones = own.max_zones;
        let (balloon, tcssd_superblocks) = (own.balloon, own.tcssd_superblocks);
        let zone_count = match cfg.zones.count {
            Some(0) => return Err(err("zones.count", "must be greater than zero")),
            Some(n) if n as u64 > max_zones => {
                return Err(err(
                    "zones.count",
                    format!("{n} zones do not fit; the flash holds {max_zones}"),
                ))
            }
            Some(n) => n,
            None => {
                u32::try_from(max_zones).map_err(|_| err("zones.count", "more than 2^32 zones"))?
            }
        };
        let zone_size_lbas = size_bytes / lba_bytes;
        (zone_count as u64)
            .checked_mul(zone_size_lbas)
            .and_then(|l| l.checked_mul(lba_bytes))
            .filter(|b| *b <= i64::MAX as u64)
            .ok_or_else(|| {
                err(
                    "zones.size_bytes",
                    format!(
                        "{zone_count} zones of {size_bytes} bytes are more than 2^63 bytes, \
                         beyond what a byte offset can address"
                    ),
                )
            })?;
        let (mor, mar) = (cfg.zones.max_open, cfg.zones.max_active);
        if mar != 0 && (mor == 0 || mor > mar) {
            return Err(err(
                "zones.max_open",
                format!("{mor} must be between 1 and max_active ({mar})"),
            ));
        }
        for (field, v) in [("zones.max_open", mor), ("zones.max_active", mar)] {
            if v > zone_count {
                return Err(err(
                    field,
                    format!("{v} is more than the {zone_count} zones (0 = no limit)"),
                ));
            }
        }
        let ctl = &cfg.controller;
        if ctl.max_transfer_bytes < lba_bytes || !ctl.max_transfer_bytes.is_multiple_of(lba_bytes) {
            return Err(err(
                "controller.max_transfer_bytes",
                "must be a positive multiple of the LBA size",
            ));
        }
        // A command's block count is 16 bits (NLB, 0's based, CDW12 bits 15:0).
        let max_command_bytes = MAX_BLOCKS_PER_COMMAND * lba_bytes;
        if ctl.max_transfer_bytes > max_command_bytes {
            return Err(err(
                "controller.max_transfer_bytes",
                format!(
                    "{} is more than one command can carry ({MAX_BLOCKS_PER_COMMAND} blocks of \
                     {lba_bytes} bytes = {max_command_bytes}; NLB is 16 bits)",
                    ctl.max_transfer_bytes
                ),
            ));
        }
        if ctl.command_overhead_ns > nand::MAX_OPERATION_NS {
            return Err(err(
                "controller.command_overhead_ns",
                format!(
                    "{} is more than {} ns (10 s) per command",
                    ctl.command_overhead_ns,
                    nand::MAX_OPERATION_NS
                ),
            ));
        }
        let zasl = if ctl.zone_append_max_bytes == 0 {
            ctl.max_transfer_bytes
        } else {
            ctl.zone_append_max_bytes
        };
        if zasl % lba_bytes != 0 || zasl > ctl.max_transfer_bytes {
            return Err(err(
                "controller.zone_append_max_bytes",
                "must be a multiple of the LBA size and at most max_transfer_bytes",
            ));
        }
        if ctl.write_buffer_bytes < stripe_bytes {
            return Err(err(
                "controller.write_buffer_bytes",
                format!(
                    "{} is smaller than one stripe ({stripe_bytes} bytes)",
                    ctl.write_buffer_bytes
                ),
            ));
        }
        if ctl.write_buffer_per_zone_group {
            if cfg.design != DesignName::Zns {
                return Err(err(
                    "controller.write_buffer_per_zone_group",
                    format!("is for the zns design, not {:?}", cfg.design),
                ));
            }
            let part = ctl.write_buffer_bytes / zone_groups as u64;
            if part < stripe_bytes {
                return Err(err(
                    "controller.write_buffer_per_zone_group",
                    format!(
                        "{} bytes in {zone_groups} die groups leaves {part} bytes each, less \
                         than one stripe ({stripe_bytes} bytes)",
                        ctl.write_buffer_bytes
                    ),
                ));
            }
        }
        if cfg.pcie.lanes == 0 || cfg.pcie.lane_bytes_per_s == 0 {
            return Err(err(
                "pcie.lanes",
                "lanes and lane_bytes_per_s must be greater than zero",
            ));
        }
        let link_bytes_per_s = (cfg.pcie.lanes as u64)
            .checked_mul(cfg.pcie.lane_bytes_per_s)
            .ok_or_else(|| {
                err(
                    "pcie.lane_bytes_per_s",
                    "lanes × lane_bytes_per_s overflows",
                )
            })?;
        let mdts_ns =
            (ctl.max_transfer_bytes as u128 * 1_000_000_000).div_ceil(link_bytes_per_s as u128);
        if mdts_ns > nand::MAX_OPERATION_NS as u128 {
            return Err(err(
                "pcie.lane_bytes_per_s",
                format!(
                    "{link_bytes_per_s} bytes per second on the link takes {mdts_ns} ns to move \
                     one {}-byte command, more than {} ns (10 s)",
                    ctl.max_transfer_bytes,
                    nand::MAX_OPERATION_NS
                ),
            ));
        }
        let mut layout = Layout {
            lba_bytes,
            metadata_bytes: cfg.lba.metadata_bytes as u64,
            zone_count,
            zone_size_lbas,
            zone_capacity_lbas: cap_bytes / lba_bytes,
            dies_per_zone,
            zone_groups,
            channels_per_zone: cpz,
            ways_per_zone: wpz,
            erase_units_per_zone_per_die: eu,
            stripe_bytes,
            max_open: mor,
            max_active: mar,
            max_transfer_bytes: ctl.max_transfer_bytes,
            zone_append_max_bytes: zasl,
            link_bytes_per_s,
            link_half_duplex: cfg.pcie.duplex == crate::config::Duplex::Half,
            balloon,
            tcssd_superblocks,
            geometry: g,
            table_bytes: 0,
            image_bytes: 0,
        };
        layout.image_bytes = image_bytes(&layout).ok_or_else(|| {
            err(
                "zones.count",
                format!(
                    "the device image of {zone_count} zones would be more than 2^63 bytes, \
                     beyond what a sparse file can address"
                ),
            )
        })?;
        layout.table_bytes = table_bytes(cfg, &layout).unwrap_or(u64::MAX);
        if layout.table_bytes > memory_budget {
            let zones_field = if cfg.zones.count.is_some() {
                "zones.count"
            } else {
                "nand.blocks_per_plane"
            };
            let (field, what) = crate::design::shape::tables_named(
                layout.balloon.is_some(),
                layout.tcssd_superblocks.is_some(),
            )
            .map(|(f, w)| (f.unwrap_or(zones_field), w))
            .unwrap_or((zones_field, "the zone tables"));
            return Err(err(
                field,
                format!(
                    "{zone_count} zones need about {} of host memory for {what}, more than the \
                     memory budget of {} (fewer zones, or larger erase units per zone)",
                    human_bytes(layout.table_bytes),
                    human_bytes(memory_budget)
                ),
            ));
        }
        Ok(layout)
    }

    /// Namespace size in LBAs (NSZE), counting the gaps between capacity and size.
    pub fn namespace_lbas(&self) -> u64 {
        self.zone_count as u64 * self.zone_size_lbas
    }

    pub fn zone_capacity_bytes(&self) -> u64 {
        self.zone_capacity_lbas * self.lba_bytes
    }

    /// The die holding stripe position `i` (0-based) of zone `zone`: channels first, then ways.
    pub fn die_of(&self, zone: u32, i: u32) -> DieId {
        let c = self.geometry.channels;
        let channel_groups = c / self.channels_per_zone;
        let way_groups = self.geometry.dies_per_channel / self.ways_per_zone;
        let cg = zone % channel_groups;
        let wg = (zone / channel_groups) % way_groups;
        let channel = cg * self.channels_per_zone + i % self.channels_per_zone;
        let way = wg * self.ways_per_zone + i / self.channels_per_zone;
        DieId(way * c + channel)
    }

    /// The die holding byte `offset` of a zone (program units go round the zone's dies).
    pub fn die_at(&self, zone: u32, offset: u64) -> DieId {
        let unit = offset / self.geometry.unit_bytes;
        self.die_of(zone, (unit % self.dies_per_zone as u64) as u32)
    }
}

/// Blocks one command may carry: NLB is a 16-bit, 0's based field.
pub const MAX_BLOCKS_PER_COMMAND: u64 = 1 << 16;

/// Program units a zone may take: Finish pads and Reset erases one unit at a time, so this
/// bounds the work of one zone command (the presets take at most 2^19).
pub const MAX_UNITS_PER_ZONE: u64 = 1 << 24;

/// The default host memory budget: half of the machine's memory (`MemTotal` in
/// `/proc/meminfo`), or 4 GiB where that cannot be read.
pub fn default_memory_budget() -> u64 {
    static BUDGET: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| {
                let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
                let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
                kib.checked_mul(1024)
            })
            .map_or(4 << 30, |total| total / 2)
    })
}

/// Bytes as people read them: `1.5 GiB`.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Host memory for one zone in the controller and the host layers above it: the zone record,
/// its flash progress, its chunk-record list, its decompression-memo generation, its memory
/// store header, its image record, and the host's per-zone lists (fio's chunk index, zonefs).
const PER_ZONE_HOST_BYTES: u64 = 64;
/// The most host memory the device's tables take: what is allocated up front (per zone, per
/// die and channel, per sub-superblock and superblock) and the tables that grow as it is
/// written until every zone is full (windows, the tcssd map). The data bytes are not counted:
/// an image keeps them in a sparse file, and a device in memory holds only what is written.
/// `None` if the sum overflows.
fn table_bytes(cfg: &DeviceConfig, l: &Layout) -> Option<u64> {
    let zones = l.zone_count as u64;
    let per_zone = (std::mem::size_of::<crate::zone::Zone>()
        + std::mem::size_of::<crate::write_buffer::ZoneFlash>()
        + std::mem::size_of::<Vec<crate::design::cczns::chunks::ChunkRecord>>()
        // A memory store's two byte vectors per zone (data, metadata).
        + 2 * std::mem::size_of::<Vec<u8>>()) as u64
        + 4
        + 32
        + PER_ZONE_HOST_BYTES;
    let timelines =
        (l.geometry.dies as u64 + l.geometry.channels as u64) * size_of::<nand::Timeline>() as u64;
    let total = zones.checked_mul(per_zone)?.checked_add(timelines)?;
    total.checked_add(crate::design::shape::table_bytes(
        cfg,
        l.zone_count as u64,
        l.namespace_lbas(),
        &l.balloon,
        l.tcssd_superblocks,
    )?)
}

/// The size of the image file for `l`, as `image.rs` lays it out (at most): header and zone
/// records, then data, per-LBA metadata and per-page OOB of every zone, each section 1 MiB
/// aligned, then the flash of the designs with their own flash layout, the checksums of stored
/// bytes, and the designs' journal and tables. `None` past 2^63.
fn image_bytes(l: &Layout) -> Option<u64> {
    const MIB: u64 = 1 << 20;
    let align = |x: u64| x.checked_next_multiple_of(MIB);
    let zones = l.zone_count as u64;
    let zone_bytes = l.zone_capacity_bytes();
    let zone_meta = l.zone_capacity_lbas.checked_mul(l.metadata_bytes)?;
    let zone_oob = zone_bytes
        .div_ceil(l.geometry.page_bytes as u64)
        .checked_mul(l.geometry.oob_bytes_per_page as u64)?;
    let data = align((64 << 10) + 32 * zones)?;
    let meta = align(data.checked_add(zone_bytes.checked_mul(zones)?)?)?;
    let oob = align(meta.checked_add(zone_meta.checked_mul(zones)?)?)?;
    let flash = align(oob.checked_add(zone_oob.checked_mul(zones)?)?)?;
    let own_flash = l.own_flash();
    let mut end = flash;
    let mut stored = zone_bytes.checked_mul(zones)?;
    if own_flash {
        end = end.checked_add(l.geometry.total_bytes())?;
        stored = stored.checked_add(l.geometry.total_bytes())?;
        // The journal, and the FTL tables as JSON: a few dozen bytes per map entry or zone at
        // most.
        let entries = l.namespace_lbas().max(zones);
        end = end.checked_add(entries.checked_mul(64)?)?;
        end = end.checked_add(257 << 20)?;
    }
    // A checksum entry of 8 bytes per 4 KiB stored, and the sections' alignment.
    end = end.checked_add(stored.div_ceil(4096).checked_mul(8)?)?;
    end = end.checked_add(4 * MIB)?;
    (end <= i64::MAX as u64).then_some(end)
}

impl DeviceConfig {
    /// Validate this configuration and derive its layout (tables within the default memory
    /// budget, half the machine's memory).
    pub fn layout(&self) -> Result<Layout, ConfigError> {
        Layout::new(self)
    }

    /// Validate this configuration and derive its layout, its tables within `memory_budget`
    /// bytes of host memory.
    pub fn layout_within(&self, memory_budget: u64) -> Result<Layout, ConfigError> {
        Layout::within(self, memory_budget)
    }
}

#[cfg(test)]
mod tests {
    use crate::presets;

    #[test]
    fn cczns_half_dies_layout() {
        let l = presets::cczns().layout().expect("valid");
        assert_eq!(l.dies_per_zone, 32);
        assert_eq!(l.zone_capacity_bytes(), 1 << 30);
        assert_eq!(l.zone_count, 128);
        // Even zones on channels 0-3, odd zones on channels 4-7.
        for i in 0..32 {
            assert!(l.die_of(0, i).0 % 8 < 4);
            assert!(l.die_of(1, i).0 % 8 >= 4);
        }
        let mut dies: Vec<u32> = (0..32).map(|i| l.die_of(2, i).0).collect();
        dies.sort();
        dies.dedup();
        assert_eq!(dies.len(), 32);
    }

    #[test]
    fn die_groups_never_share_dies() {
        let mut cfg = presets::cczns();
        cfg.zones.mapping = crate::ZoneMapping::DieGroups {
            channels_per_zone: 1,
            dies_per_channel_per_zone: 1,
        };
        let l = cfg.layout().expect("valid");
        assert_eq!(l.zone_groups, 64);
        assert_eq!(l.die_of(3, 0), l.die_of(3 + 64, 0));
        let all: std::collections::BTreeSet<u32> = (0..64).map(|z| l.die_of(z, 0).0).collect();
        assert_eq!(all.len(), 64);
    }

    #[test]
    fn impossible_geometries_name_their_field() {
        let mut cfg = presets::test_min();
        cfg.zones.capacity_bytes = Some(4096 * 3);
        let e = cfg.layout().expect_err("not a stripe multiple");
        assert_eq!(e.field, "device.zones.capacity_bytes");
        assert!(e.message.contains("stripe"), "{e}");

        let mut cfg = presets::test_min();
        cfg.nand.channels = 0;
        assert_eq!(
            cfg.layout().expect_err("zero dies").field,
            "device.nand.channels"
        );

        let mut cfg = presets::test_min();
        cfg.zones.max_open = 5;
        cfg.zones.max_active = 4;
        assert_eq!(
            cfg.layout().expect_err("mor > mar").field,
            "device.zones.max_open"
        );

        let mut cfg = presets::test_min();
        cfg.zones.count = Some(100_000);
        assert_eq!(
            cfg.layout().expect_err("too many").field,
            "device.zones.count"
        );
    }
}
