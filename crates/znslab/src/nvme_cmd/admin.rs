//! `nvme create` (a device image from a preset or a TOML file) and `nvme id-ns` (Identify
//! Namespace, NVM command set fields).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail};
use device::Controller;
use serde_json::json;

use super::common::{finish, open_ro};
use super::{ImageArgs, OutputFormat};

/// `nvme create`: make the image and print what it holds.
pub(super) fn create(
    image: PathBuf,
    preset: String,
    device: Option<String>,
    zones: Option<u32>,
    max_open: Option<u32>,
    max_active: Option<u32>,
    force: bool,
) -> anyhow::Result<ExitCode> {
    let mut cfg = crate::load_device(device.as_deref().unwrap_or(&preset))?;
    if let Some(n) = zones {
        cfg.zones.count = Some(n);
    }
    if let Some(n) = max_open {
        cfg.zones.max_open = n;
    }
    if let Some(n) = max_active {
        cfg.zones.max_active = n;
    }
    cfg.layout()
        .map_err(|e| anyhow!("{}", device::DeviceError::from(e)))?;
    if !force && std::fs::symlink_metadata(&image).is_ok() {
        bail!("{} exists; pass --force to replace it", image.display());
    }
    let c = Controller::create_image(&image, cfg).map_err(|e| anyhow!("{e}"))?;
    let id = c.identify();
    if id.csi == device::CommandSet::Nvm {
        println!(
            "created {}: {} (conventional namespace of {} LBAs, {}-byte LBAs)",
            image.display(),
            c.config().name,
            id.nsze,
            id.lba_bytes
        );
    } else {
        println!(
            "created {}: {} ({} zones of {} LBAs, capacity {} LBAs, {}-byte LBAs)",
            image.display(),
            c.config().name,
            id.zone_count,
            id.zsze,
            id.zcap,
            id.lba_bytes
        );
    }
    finish(c)?;
    Ok(ExitCode::SUCCESS)
}

/// `nvme id-ns`.
pub(super) fn id_ns(
    ImageArgs {
        image,
        output_format,
    }: ImageArgs,
) -> anyhow::Result<ExitCode> {
    let c = open_ro(&image)?;
    let id = c.identify();
    let ds = id.lba_bytes.trailing_zeros();
    if output_format == OutputFormat::Json {
        let v = json!({
            "nsze": id.nsze, "ncap": id.ncap, "nuse": id.nuse, "nlbaf": 0, "flbas": 0,
            "mssrl": 0, "mcl": 0, "msrc": 0,
            "lbafs": [{ "ms": id.metadata_bytes, "ds": ds, "rp": 0 }],
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("NVME Identify Namespace 1:");
        println!(
            "nsze    : {:#x}\nncap    : {:#x}\nnuse    : {:#x}\nnlbaf   : 0\nflbas   : 0",
            id.nsze, id.ncap, id.nuse
        );
        println!(
            "lbaf  0 : ms:{}   lbads:{} rp:0 (in use)",
            id.metadata_bytes, ds
        );
    }
    Ok(ExitCode::SUCCESS)
}
