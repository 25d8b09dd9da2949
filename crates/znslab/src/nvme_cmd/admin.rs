//! `nvme create` (a device image from a preset or a TOML file) and `nvme list` / `nvme zns
//! list` (the images, in nvme-cli's table or its JSON list, as nvme-cli lists device nodes).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail};
use device::Controller;
use serde_json::json;

use super::common::{finish, open_ro};
use super::identify::{firmware, model, serial};
use super::{ListArgs, OutputFormat};

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

/// One row of `nvme list`.
struct Row {
    node: String,
    sn: String,
    model: String,
    nsze_lbas: u64,
    nuse_lbas: u64,
    lba: u64,
    ms: u64,
}

/// Does `p` start with a znslab image's magic? (Any version: an old one is then refused by
/// name when opened.)
fn looks_like_image(p: &Path) -> bool {
    let mut head = [0u8; 6];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"ZNSLAB"
}

/// C's `%6.2f %2s` with nvme-cli's SI suffixes (shr_suffix_si_get).
fn si(v: f64) -> String {
    let sfx = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    let (d, s) = sfx
        .iter()
        .find(|(m, _)| v >= *m)
        .map_or((1.0, ""), |&(m, s)| (m, s));
    format!("{:6.2} {s:>2}B", v / d)
}

/// C's `%3.0f %2s` with nvme-cli's binary suffixes, rounded (shr_suffix_binary_get).
fn binary(v: u64) -> String {
    let sfx = [(50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki")];
    match sfx.iter().find(|(s, _)| v >= 1u64 << s) {
        Some(&(s, name)) => format!("{:3} {name:>2}B", (v + (1 << (s - 1))) >> s),
        None => format!("{v:3}   B"),
    }
}

/// `nvme list` (every namespace) and `nvme zns list` (zoned namespaces only).
pub(super) fn list(a: ListArgs, zoned_only: bool) -> anyhow::Result<ExitCode> {
    let fmt = a.g.check()?;
    if zoned_only && fmt == OutputFormat::Json {
        bail!("--output-format json: refused: nvme-cli's zns list prints normal output only (`nvme list -o json` lists the same images)");
    }
    if a.g.verbose() {
        super::common::notice(
            "--verbose",
            "the detailed (subsystem) list has no meaning for image files; the simple list follows",
        );
    }
    let paths: Vec<PathBuf> = if a.images.is_empty() {
        let dir = a.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| anyhow!("--dir {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && looks_like_image(p))
            .collect();
        v.sort();
        v
    } else {
        if a.dir.is_some() {
            bail!("--dir with image files named: give one or the other");
        }
        a.images.clone()
    };
    let mut rows = Vec::new();
    for p in &paths {
        let c = match open_ro(p) {
            Ok(c) => c,
            Err(e) if a.images.is_empty() => {
                eprintln!("znslab nvme list: skipped {}: {e}", p.display());
                continue;
            }
            Err(e) => return Err(e),
        };
        let id = c.identify();
        if zoned_only && id.csi != device::CommandSet::Zoned {
            continue;
        }
        rows.push(Row {
            node: p.display().to_string(),
            sn: serial(&c),
            model: model(&c),
            nsze_lbas: id.nsze,
            nuse_lbas: id.nuse,
            lba: id.lba_bytes,
            ms: id.metadata_bytes,
        });
    }
    if fmt == OutputFormat::Json {
        let devices: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "NameSpace": 1,
                    "DevicePath": r.node,
                    "GenericPath": "-",
                    "Firmware": firmware(),
                    "ModelNumber": r.model,
                    "SerialNumber": r.sn,
                    "UsedBytes": r.nuse_lbas * r.lba,
                    "MaximumLBA": r.nsze_lbas,
                    "PhysicalSize": r.nsze_lbas * r.lba,
                    "SectorSize": r.lba,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "Devices": devices }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    // nvme-cli's table: fixed widths (a longer value pushes the row), one space between.
    let cols = [
        ("Node", 21),
        ("Generic", 21),
        ("SN", 20),
        ("Model", 40),
        ("Namespace", 10),
        ("Usage", 26),
        ("Format", 16),
        ("FW Rev", 8),
    ];
    let line = |vals: &[String]| {
        let cells: Vec<String> = vals
            .iter()
            .zip(cols)
            .map(|(v, (_, w))| format!("{v:<w$}"))
            .collect();
        println!("{}", cells.join(" "));
    };
    line(&cols.map(|(n, _)| n.to_string()));
    line(&cols.map(|(_, w)| "-".repeat(w)));
    for r in &rows {
        line(&[
            r.node.clone(),
            "-".into(),
            r.sn.clone(),
            r.model.clone(),
            "0x1".into(),
            format!(
                "{} / {}",
                si((r.nuse_lbas * r.lba) as f64),
                si((r.nsze_lbas * r.lba) as f64)
            ),
            format!("{} + {:2} B", binary(r.lba), r.ms),
            firmware(),
        ]);
    }
    Ok(ExitCode::SUCCESS)
}
