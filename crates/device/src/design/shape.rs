//! A design's part in a device's shape, for `layout.rs`: its configuration checks, the flash
//! tables it lays out, the logical zones it offers and the host memory its tables take. Kept
//! apart from the seam (`mod.rs`), which uses the finished layout.

use super::balloon::layout as balloon_layout;
use super::cczns::layout as cczns_layout;
use super::tcssd::layout as tcssd_layout;
use crate::config::DeviceConfig;

/// What a design adds to a device's layout: its flash tables and the logical zones it offers.
pub(crate) struct LayoutPart {
    pub balloon: Option<balloon_layout::BalloonLayout>,
    pub tcssd_superblocks: Option<u32>,
    /// Logical zones (or superblock-sized units of a conventional namespace) that fit.
    pub max_zones: u64,
}

/// Check the design's constraints on `cfg` and lay out what it adds, given the zones of
/// `cap_bytes` (size `size_bytes`) the flash holds (`max_zones`).
pub(crate) fn layout_part(
    cfg: &DeviceConfig,
    g: &nand::Geometry,
    cap_bytes: u64,
    size_bytes: u64,
    max_zones: u64,
) -> Result<LayoutPart, nand::ConfigError> {
    use crate::config::DesignName as Name;
    let mut part = LayoutPart {
        balloon: None,
        tcssd_superblocks: None,
        max_zones,
    };
    match cfg.design {
        Name::Zns | Name::Znsplus => {}
        Name::Cczns => cczns_layout::check(cfg, g)?,
        Name::Balloon => {
            part.balloon = Some(balloon_layout::balloon_layout(
                cfg, g, cap_bytes, size_bytes,
            )?);
            // The capacity expansion ratio (Balloon-ZNS §3.2) adds logical zones.
            part.max_zones = (max_zones as u128 * cfg.balloon.expansion_percent as u128 / 100)
                .min(u64::MAX as u128) as u64;
        }
        Name::Tcssd => {
            let superblocks = tcssd_layout::tcssd_check(cfg, g, cap_bytes, size_bytes)?;
            let t = &cfg.tcssd;
            // The namespace in superblock-sized units: flash less OP, times the expansion.
            part.max_zones = (max_zones as u128
                * (100 - t.over_provisioning_percent as u128)
                * t.expansion_percent as u128
                / 10_000)
                .min(u64::MAX as u128) as u64;
            if part.max_zones == 0 {
                return Err(crate::config::err(
                    "tcssd.expansion_percent",
                    "leaves no logical capacity",
                ));
            }
            part.tcssd_superblocks = Some(superblocks);
        }
    }
    Ok(part)
}

/// Host memory a design's own tables take at most (`None` on overflow).
pub(crate) fn table_bytes(
    cfg: &DeviceConfig,
    zones: u64,
    blocks: u64,
    balloon: &Option<balloon_layout::BalloonLayout>,
    tcssd_superblocks: Option<u32>,
) -> Option<u64> {
    let mut total = 0u64;
    if let Some(b) = balloon {
        total = total.checked_add(balloon_layout::table_bytes(cfg, zones, b)?)?;
    }
    if let Some(sbs) = tcssd_superblocks {
        total = total.checked_add(tcssd_layout::table_bytes(blocks, sbs)?)?;
    }
    Some(total)
}

/// The configuration field that sizes a design's own tables (`None`: the zone count) and what
/// they are, for the error when they exceed the memory budget.
pub(crate) fn tables_named(
    balloon: bool,
    tcssd: bool,
) -> Option<(Option<&'static str>, &'static str)> {
    if tcssd {
        Some((
            Some("tcssd.expansion_percent"),
            "the tcssd map of every logical block",
        ))
    } else if balloon {
        Some((None, "the balloon zone and sub-superblock tables"))
    } else {
        None
    }
}
