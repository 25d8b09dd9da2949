//! `nvme zns ...`, nvme-cli's zns plugin: report zones (with its state filter), zone
//! management (open, close, finish, reset, offline), zone append, and the ZNS Identify
//! Namespace and Identify Controller pages.

use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use device::{
    parse_report, Command, Status, ZoneAction, REPORT_DESCRIPTOR_BYTES, REPORT_HEADER_BYTES,
};
use serde_json::json;

use super::common::{fail, finish, open, open_ro, over_limit, submit};
use super::{ImageArgs, MgmtArgs, OutputFormat, ZnsCmd};

pub(super) fn parse_state_filter(s: &str) -> anyhow::Result<u8> {
    if let Ok(n) = s.parse::<u8>() {
        return Ok(n); // the device checks the range (values over 7 get Invalid Field)
    }
    Ok(match s.to_ascii_lowercase().as_str() {
        "all" => 0,
        "empty" => 1,
        "opened_implicit" | "imp_opened" | "implicitly_opened" => 2,
        "opened_explicit" | "exp_opened" | "explicitly_opened" => 3,
        "closed" => 4,
        "full" => 5,
        "read_only" | "readonly" => 6,
        "offline" => 7,
        _ => bail!("--state: '{s}' is not a zone state filter"),
    })
}

pub(super) fn zns(cmd: ZnsCmd) -> anyhow::Result<ExitCode> {
    let mgmt = |a: MgmtArgs, action: ZoneAction, name: &str| -> anyhow::Result<ExitCode> {
        let mut c = open(&a.image)?;
        let comp = submit(
            &mut c,
            Command::ZoneMgmtSend {
                slba: a.start_lba,
                action,
                select_all: a.select_all,
            },
        );
        finish(c)?;
        if comp.status != Status::SUCCESS {
            return Ok(fail(comp.status, a.output_format));
        }
        if a.output_format == OutputFormat::Json {
            println!(
                "{}",
                json!({ "command": name, "zslba": a.start_lba, "select_all": a.select_all, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
            );
        } else {
            println!(
                "{name}: Success, action:{} zone:{:x} all:{} nsid:1",
                action.code(),
                a.start_lba,
                a.select_all as u8
            );
        }
        Ok(ExitCode::SUCCESS)
    };
    match cmd {
        ZnsCmd::OpenZone { zone, zrwa: false } => mgmt(zone, ZoneAction::Open, "zns-open-zone"),
        ZnsCmd::OpenZone { zone, zrwa: true } => {
            mgmt(zone, ZoneAction::OpenPadding, "zns-open-zone")
        }
        ZnsCmd::CloseZone(a) => mgmt(a, ZoneAction::Close, "zns-close-zone"),
        ZnsCmd::FinishZone(a) => mgmt(a, ZoneAction::Finish, "zns-finish-zone"),
        ZnsCmd::ResetZone(a) => mgmt(a, ZoneAction::Reset, "zns-reset-zone"),
        ZnsCmd::OfflineZone(a) => mgmt(a, ZoneAction::Offline, "zns-offline-zone"),
        ZnsCmd::ReportZones {
            image,
            start_lba,
            descs,
            state,
            extended,
            partial,
            output_format,
        } => {
            let filter = parse_state_filter(&state)?;
            let mut c = open_ro(&image)?;
            let mdts = c.layout().max_transfer_bytes as usize;
            let per_cmd = ((mdts - REPORT_HEADER_BYTES) / REPORT_DESCRIPTOR_BYTES).max(1) as u64;
            let want = descs.unwrap_or(u64::MAX);
            let mut zones = Vec::new();
            let mut slba = start_lba;
            let mut header_count = None;
            let nsze = c.identify().nsze;
            // Like nvme-cli, fetch in chunks of at most MDTS until enough descriptors arrive.
            loop {
                let n = per_cmd.min(want - zones.len() as u64);
                let mut buf = vec![0u8; REPORT_HEADER_BYTES + n as usize * REPORT_DESCRIPTOR_BYTES];
                let comp = submit(
                    &mut c,
                    Command::ZoneMgmtRecv {
                        slba,
                        filter,
                        partial,
                        extended,
                        buffer: &mut buf,
                    },
                );
                if comp.status != Status::SUCCESS {
                    return Ok(fail(comp.status, output_format));
                }
                let (count, got) = parse_report(&buf)
                    .ok_or_else(|| anyhow!("internal: malformed report buffer"))?;
                header_count.get_or_insert(count);
                let last = got.last().map(|z| z.zslba);
                zones.extend(got);
                match last {
                    Some(l)
                        if (zones.len() as u64) < want
                            && l + c.layout().zone_size_lbas < nsze
                            && (count > n || partial) =>
                    {
                        slba = l + c.layout().zone_size_lbas;
                    }
                    _ => break,
                }
            }
            let nr = if partial || descs.is_some() {
                zones.len() as u64
            } else {
                header_count.unwrap_or(0)
            };
            if output_format == OutputFormat::Json {
                let list: Vec<_> = zones
                    .iter()
                    .map(|z| json!({ "slba": z.zslba, "wp": z.wp, "cap": z.capacity, "state": z.state.name(), "type": "SEQWRITE_REQ", "attrs": z.attributes }))
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({ "nr_zones": nr, "zone_list": list }))?
                );
            } else {
                println!("nr_zones: {nr}");
                for z in &zones {
                    println!(
                        "SLBA: {:<#10x} WP: {:<#18x} Cap: {:<#10x} State: {:<12} Type: SEQWRITE_REQ   Attrs: {:#x}",
                        z.zslba,
                        z.wp,
                        z.capacity,
                        z.state.name(),
                        z.attributes
                    );
                }
            }
            finish(c)?;
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::ZoneAppend { image, zslba, io } => {
            let mut c = open(&image)?;
            let lba = c.layout().lba_bytes;
            let size = match (io.data_size, &io.data) {
                (Some(z), _) => z,
                (None, Some(p)) => std::fs::metadata(p)
                    .with_context(|| format!("data file {}", p.display()))?
                    .len(),
                (None, None) => bail!("zone-append needs --data-size or --data"),
            };
            if size == 0 || size % lba != 0 {
                bail!("--data-size {size} is not a positive multiple of the {lba}-byte LBA");
            }
            if let Some(code) = over_limit(&c, size, true, io.output_format) {
                return Ok(code);
            }
            let nlb = size / lba;
            let (d, m) = io.load(&c, nlb)?;
            let comp = submit(
                &mut c,
                Command::ZoneAppend {
                    zslba,
                    nlb: nlb as u32,
                    data: &d,
                    metadata: &m,
                },
            );
            finish(c)?;
            if comp.status != Status::SUCCESS {
                return Ok(fail(comp.status, io.output_format));
            }
            if io.output_format == OutputFormat::Json {
                println!(
                    "{}",
                    json!({ "result": comp.result, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
                );
            } else {
                println!("Success appended data to LBA {:x}", comp.result);
                if io.latency {
                    println!(" latency: zone append: {} us", comp.done_at.as_ns() / 1000);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::IdNs(ImageArgs {
            image,
            output_format,
        }) => {
            let c = open_ro(&image)?;
            let id = c.identify();
            if output_format == OutputFormat::Json {
                let v = json!({
                    "zoc": id.zoc, "ozcs": id.ozcs, "mar": id.mar, "mor": id.mor,
                    "rrl": 0, "frl": 0, "rrl1": 0, "rrl2": 0, "rrl3": 0, "frl1": 0, "frl2": 0, "frl3": 0,
                    "numzrwa": 0, "zrwafg": 0, "zrwasz": 0, "zrwacap": 0,
                    "lbafe": [{ "zsze": id.zsze, "zdes": 0 }],
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!("ZNS Command Set Identify Namespace:");
                println!("zoc     : {}\nozcs    : {}\nmar     : {:#x}\nmor     : {:#x}\nrrl     : 0\nfrl     : 0", id.zoc, id.ozcs, id.mar, id.mor);
                println!("lbafe  0: zsze:{:#x} zdes:0 (in use)", id.zsze);
            }
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::IdCtrl(ImageArgs {
            image,
            output_format,
        }) => {
            let c = open_ro(&image)?;
            let id = c.identify();
            // ZASL is a power of two in units of the minimum memory page size (4 KiB).
            let zasl = (id.zasl_bytes / 4096).max(1).ilog2();
            if output_format == OutputFormat::Json {
                println!("{}", json!({ "zasl": zasl }));
            } else {
                println!("NVMe ZNS Identify Controller:\nzasl    : {zasl}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
