//! `nvme zns ...`, nvme-cli's zns plugin: report zones (with its state filter, in nvme-cli's
//! line format or its JSON), zone management (open, close, finish, reset, offline) and zone
//! append. (`zns list` is in `admin`, the ZNS Identify pages in `identify`.)

use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use device::{
    parse_report, Command, Controller, Status, ZoneAction, ZoneDescriptor, REPORT_DESCRIPTOR_BYTES,
    REPORT_HEADER_BYTES,
};
use serde_json::json;

use super::common::{
    check_nsid, cx, dry_run_note, fail, finish, notice, open, open_ro, over_limit, submit,
};
use super::{MgmtArgs, OutputFormat, ZnsCmd};

/// Zone Type 2h: sequential write required, the only type here.
const ZONE_TYPE_SEQWRITE_REQ: u8 = 0x2;
/// Zone attribute bit 0: Zone Finished by Controller.
const ZA_ZFC: u8 = 0x1;

/// One descriptor as nvme-cli's stdout_zns_report_zones prints it: codes, or with -v names
/// and the attributes spelt out (nvme-cli's "Vaild" included).
fn zone_line(z: &ZoneDescriptor, verbose: bool) -> String {
    if verbose {
        let mut s = format!(
            "SLBA: {:<10} WP: {:<10} Cap: {:<10} State: {:<12} Type: {:<14}\nAttrs: Zone Descriptor Extension is Not Vaild",
            cx(z.zslba),
            cx(z.wp),
            cx(z.capacity),
            z.state.name(),
            "SEQWRITE_REQ"
        );
        if z.attributes & ZA_ZFC != 0 {
            s.push_str("\n       Zone Finished by Controller");
        }
        s
    } else {
        format!(
            "SLBA: {:<10} WP: {:<10} Cap: {:<10} State: {:<4} Type: {:<4} Attrs: {:<4} AttrsInfo: {:<4}",
            cx(z.zslba),
            cx(z.wp),
            cx(z.capacity),
            cx((z.state.code() << 4) as u64),
            cx(ZONE_TYPE_SEQWRITE_REQ as u64),
            cx(z.attributes as u64),
            cx(0)
        )
    }
}

/// One Zone Management Receive: the header's zone count and the descriptors.
fn report(
    c: &mut Controller,
    slba: u64,
    n: u64,
    filter: u8,
    partial: bool,
    extended: bool,
) -> Result<(u64, Vec<ZoneDescriptor>), Status> {
    let mut buf = vec![0u8; REPORT_HEADER_BYTES + n as usize * REPORT_DESCRIPTOR_BYTES];
    let comp = submit(
        c,
        Command::ZoneMgmtRecv {
            slba,
            filter,
            partial,
            extended,
            buffer: &mut buf,
        },
    );
    if comp.status != Status::SUCCESS {
        return Err(comp.status);
    }
    // The device filled the buffer it was given; a malformed one would be a device bug.
    parse_report(&buf).ok_or(Status::INTERNAL_ERROR)
}

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
    let mgmt = |a: MgmtArgs,
                action: ZoneAction,
                name: &str,
                zrwaa: bool|
     -> anyhow::Result<ExitCode> {
        check_nsid(a.namespace_id)?;
        let fmt = a.g.check()?;
        if a.g.dry_run() {
            dry_run_note("Zone Management Send");
            return Ok(ExitCode::SUCCESS);
        }
        let mut c = open(&a.image)?;
        if zrwaa && !c.identify().vendor.compressed_io {
            bail!("--zrwaa: refused: this device has no Zone Random Write Area (zns id-ns ozcs bit 1 is 0); only a CCZNS device takes the flag (as \"open as a padding zone\")");
        }
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
            return Ok(fail(comp.status, fmt));
        }
        if fmt == OutputFormat::Json {
            println!(
                "{}",
                json!({ "command": name, "zslba": a.start_lba, "select_all": a.select_all, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
            );
        } else if a.g.verbose() && matches!(action, ZoneAction::Open | ZoneAction::OpenPadding) {
            println!("{name}: Success zone slba:{:x} nsid:1", a.start_lba);
        } else if a.g.verbose() {
            // Reset's result bit 0 is ZCAPC (zone capacity changed): never, here.
            println!(
                "{name}: Success, action:{} zone:{:x} all:{} zcapc:0 nsid:1",
                action.code(),
                a.start_lba,
                a.select_all as u8
            );
        }
        Ok(ExitCode::SUCCESS)
    };
    match cmd {
        ZnsCmd::List(a) => super::admin::list(a, true),
        ZnsCmd::OpenZone { zone, zrwaa: false } => {
            mgmt(zone, ZoneAction::Open, "zns-open-zone", false)
        }
        ZnsCmd::OpenZone { zone, zrwaa: true } => {
            mgmt(zone, ZoneAction::OpenPadding, "zns-open-zone", true)
        }
        ZnsCmd::CloseZone(a) => mgmt(a, ZoneAction::Close, "zns-close-zone", false),
        ZnsCmd::FinishZone(a) => mgmt(a, ZoneAction::Finish, "zns-finish-zone", false),
        ZnsCmd::ResetZone(a) => mgmt(a, ZoneAction::Reset, "zns-reset-zone", false),
        ZnsCmd::OfflineZone(a) => mgmt(a, ZoneAction::Offline, "zns-offline-zone", false),
        ZnsCmd::ReportZones {
            image,
            namespace_id,
            start_lba,
            descs,
            state,
            names,
            extended,
            partial,
            g,
        } => {
            check_nsid(namespace_id)?;
            let output_format = g.check()?;
            let verbose = names || g.verbose();
            let filter = parse_state_filter(&state)?;
            if extended {
                // A device without extensions fails the extended report (Invalid Field), as
                // nvme-cli would show; say why before sending it.
                bail!("--extended: refused: the device has no zone descriptor extensions (zns id-ns lbafe zdes 0), so there is no extended report");
            }
            if g.dry_run() {
                dry_run_note("Zone Management Receive");
                return Ok(ExitCode::SUCCESS);
            }
            let mut c = open_ro(&image)?;
            let mdts = c.layout().max_transfer_bytes as usize;
            let per_cmd = ((mdts - REPORT_HEADER_BYTES) / REPORT_DESCRIPTOR_BYTES).max(1) as u64;
            let zsze = c.layout().zone_size_lbas;
            let nsze = c.identify().nsze;
            // As nvme-cli: nr_zones is the count of zones from LBA 0 that match the filter
            // (a report of the header alone); then descriptors from --start-lba, in chunks of
            // at most MDTS, until --descs (default: nr_zones) have come or the namespace ends.
            let total = match report(&mut c, 0, 0, filter, false, false) {
                Ok((n, _)) => n,
                Err(st) => return Ok(fail(st, output_format)),
            };
            let want = descs.unwrap_or(total);
            let mut zones = Vec::new();
            let mut slba = start_lba;
            while (zones.len() as u64) < want && slba < nsze {
                let n = per_cmd.min(want - zones.len() as u64);
                let (_, got) = match report(&mut c, slba, n, filter, partial, extended) {
                    Ok(r) => r,
                    Err(st) => return Ok(fail(st, output_format)),
                };
                let Some(last) = got.last().map(|z| z.zslba) else {
                    break;
                };
                zones.extend(got);
                slba = last + zsze;
            }
            zones.truncate(want as usize);
            if output_format == OutputFormat::Json {
                let list: Vec<_> = zones
                    .iter()
                    .map(|z| json!({ "slba": z.zslba, "wp": z.wp, "cap": z.capacity, "state": z.state.name(), "type": "SEQWRITE_REQ", "attrs": z.attributes, "attrs_info": 0 }))
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({ "nr_zones": total, "zone_list": list }))?
                );
            } else {
                println!("nr_zones: {total}");
                for z in &zones {
                    println!("{}", zone_line(z, verbose));
                }
            }
            finish(c)?;
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::ZoneAppend {
            image,
            namespace_id,
            zslba,
            io,
            piremap,
        } => {
            check_nsid(namespace_id)?;
            let fmt = io.check_fields()?;
            if piremap {
                notice(
                    "--piremap",
                    "the namespace has no protection information (id-ns dps 0)",
                );
            }
            let mut c = if io.g.dry_run() {
                open_ro(&image)?
            } else {
                open(&image)?
            };
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
            if let Some(code) = over_limit(&c, size, true, fmt) {
                return Ok(code);
            }
            let nlb = size / lba;
            let (d, m) = io.load(&c, nlb)?;
            if io.g.dry_run() {
                dry_run_note("Zone Append");
                return Ok(ExitCode::SUCCESS);
            }
            let comp = submit(
                &mut c,
                Command::ZoneAppend {
                    zslba,
                    nlb: u32::try_from(nlb)
                        .map_err(|_| anyhow!("--data-size {size} is too large"))?,
                    data: &d,
                    metadata: &m,
                },
            );
            finish(c)?;
            if io.latency {
                println!(" latency: zone append: {} us", comp.done_at.as_ns() / 1000);
            }
            if comp.status != Status::SUCCESS {
                return Ok(fail(comp.status, fmt));
            }
            if fmt == OutputFormat::Json {
                println!(
                    "{}",
                    json!({ "result": comp.result, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
                );
            } else if io.g.verbose() {
                println!("Success appended data to LBA {:x}", comp.result);
            }
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::IdNs(a) => super::identify::zns_id_ns(a),
        ZnsCmd::IdCtrl(a) => super::identify::zns_id_ctrl(a),
        ZnsCmd::ZoneCompaction(a) => super::znsplus::zone_compaction(a),
        ZnsCmd::TlOpen(a) => super::znsplus::tl_open(a),
        ZnsCmd::IdentifyMapping(a) => super::znsplus::identify_mapping(a),
    }
}
