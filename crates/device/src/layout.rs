//! The validated, derived shape of a device: zone sizes in LBAs, dies per zone, stripe.

use nand::{ConfigError, DieId, Geometry};

use crate::config::{err, DeviceConfig, ZoneMapping};

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
    /// The Balloon-ZNS flash layout (balloon design only).
    pub balloon: Option<BalloonLayout>,
    /// Superblocks of the flash (tcssd design only; its namespace is zone_count zones' worth).
    pub tcssd_superblocks: Option<u32>,
}

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

impl Layout {
    pub fn new(cfg: &DeviceConfig) -> Result<Layout, ConfigError> {
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
        if cfg.design == crate::config::Design::Cczns && cfg.lba.metadata_bytes < 16 {
            return Err(err(
                "lba.metadata_bytes",
                format!(
                    "{} is too small for the cczns design, whose commands carry chunk sizes in \
                     the metadata buffer (use 64, as CCZNS does)",
                    cfg.lba.metadata_bytes
                ),
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
        let stripe_bytes = dies_per_zone as u64 * g.unit_bytes;
        let flash_bytes_per_zone = dies_per_zone as u64 * eu * g.erase_unit_bytes;
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
        let mut max_zones = zones_per_group * zone_groups as u64;
        let balloon = if cfg.design == crate::config::Design::Balloon {
            let b = balloon_layout(cfg, &g, cap_bytes, size_bytes)?;
            // The capacity expansion ratio (Balloon-ZNS §3.2) adds logical zones.
            max_zones = max_zones * cfg.balloon.expansion_percent as u64 / 100;
            Some(b)
        } else {
            None
        };
        let tcssd_superblocks = if cfg.design == crate::config::Design::Tcssd {
            tcssd_check(cfg, &g, cap_bytes, size_bytes)?;
            let t = &cfg.tcssd;
            // The namespace in superblock-sized units: flash less OP, times the expansion.
            max_zones =
                max_zones * (100 - t.over_provisioning_percent as u64) * t.expansion_percent as u64
                    / 10_000;
            if max_zones == 0 {
                return Err(err("tcssd.expansion_percent", "leaves no logical capacity"));
            }
            Some(g.erase_units_per_die as u32)
        } else {
            None
        };
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
        let (mor, mar) = (cfg.zones.max_open, cfg.zones.max_active);
        if mar != 0 && (mor == 0 || mor > mar) {
            return Err(err(
                "zones.max_open",
                format!("{mor} must be between 1 and max_active ({mar})"),
            ));
        }
        let ctl = &cfg.controller;
        if ctl.max_transfer_bytes < lba_bytes || !ctl.max_transfer_bytes.is_multiple_of(lba_bytes) {
            return Err(err(
                "controller.max_transfer_bytes",
                "must be a positive multiple of the LBA size",
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
        if cfg.pcie.lanes == 0 || cfg.pcie.lane_bytes_per_s == 0 {
            return Err(err(
                "pcie.lanes",
                "lanes and lane_bytes_per_s must be greater than zero",
            ));
        }
        Ok(Layout {
            lba_bytes,
            metadata_bytes: cfg.lba.metadata_bytes as u64,
            zone_count,
            zone_size_lbas: size_bytes / lba_bytes,
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
            link_bytes_per_s: cfg.pcie.lanes as u64 * cfg.pcie.lane_bytes_per_s,
            balloon,
            tcssd_superblocks,
            geometry: g,
        })
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

/// Check the balloon design's constraints and derive its layout.
fn balloon_layout(
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
    let dies_per_ssb = dies / b.sub_superblocks;
    Ok(BalloonLayout {
        rows: g.erase_units_per_die as u32,
        groups: b.sub_superblocks,
        dies_per_ssb,
        ssb_bytes: dies_per_ssb as u64 * g.erase_unit_bytes,
        window_pages: pages / b.windows_per_zone as u64,
    })
}

/// Check the tcssd design's constraints.
fn tcssd_check(
    cfg: &DeviceConfig,
    g: &Geometry,
    cap_bytes: u64,
    size_bytes: u64,
) -> Result<(), ConfigError> {
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
    Ok(())
}

impl DeviceConfig {
    /// Validate this configuration and derive its layout.
    pub fn layout(&self) -> Result<Layout, ConfigError> {
        Layout::new(self)
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
