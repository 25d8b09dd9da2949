//! The NVM command set's I/O commands: `nvme read` and `nvme write`, `flush`, `dsm`
//! (deallocate) and `io-passthru` (any I/O command by opcode and dwords; CCZNS compressed
//! write and decompressed read).

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use device::{Command, Status};
use serde_json::json;

use super::common::{
    buffer, check_nsid, dry_run_note, fail, finish, hex_dump, notice, open, open_ro, over_limit,
    submit,
};
use super::{CopyArgs, DsmArgs, NsArgs, OutputFormat, PassthruArgs, RwArgs};

/// `nvme flush`.
pub(super) fn flush(a: NsArgs) -> anyhow::Result<ExitCode> {
    check_nsid(a.namespace_id)?;
    let fmt = a.g.check()?;
    if a.g.dry_run() {
        dry_run_note("Flush");
        return Ok(ExitCode::SUCCESS);
    }
    let mut c = open(&a.image)?;
    let comp = submit(&mut c, Command::Flush);
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, fmt));
    }
    if a.g.verbose() {
        println!("NVMe Flush: success");
    }
    finish(c)?;
    Ok(ExitCode::SUCCESS)
}

/// `nvme dsm`: with `--ad`, deallocate each range.
pub(super) fn dsm(a: DsmArgs) -> anyhow::Result<ExitCode> {
    check_nsid(a.namespace_id)?;
    let fmt = a.g.check()?;
    let (slbs, blocks) = (&a.slbs, &a.blocks);
    // CDW11 bit 2 is AD; bits 0 and 1 (IDR, IDW) are hints.
    let ad = a.ad || a.cdw11.is_some_and(|c| c & 0x4 != 0);
    if let Some(c) = a.cdw11 {
        if c > u32::MAX as u64 {
            bail!("--cdw11 {c:#x} does not fit in 32 bits");
        }
    }
    if !a.ctx_attrs.is_empty() && a.ctx_attrs.len() != slbs.len() {
        bail!(
            "--ctx-attrs gives {} values and --slbs {}: one per range",
            a.ctx_attrs.len(),
            slbs.len()
        );
    }
    if !a.ctx_attrs.is_empty() || a.idw || a.idr || a.cdw11.is_some_and(|c| c & 0x3 != 0) {
        notice(
            "--ctx-attrs/--idw/--idr",
            "access hints; the device places data by zone, not by hint",
        );
    }
    if slbs.len() != blocks.len() {
        bail!(
            "--slbs gives {} ranges and --blocks {}: one count per starting LBA",
            slbs.len(),
            blocks.len()
        );
    }
    if slbs.len() > 256 {
        bail!(
            "{} ranges: Dataset Management takes at most 256",
            slbs.len()
        );
    }
    if a.g.dry_run() {
        dry_run_note("Dataset Management");
        return Ok(ExitCode::SUCCESS);
    }
    let mut c = open(&a.image)?;
    if ad {
        for (&slba, &n) in slbs.iter().zip(blocks) {
            let nlb =
                u32::try_from(n).map_err(|_| anyhow!("--blocks {n} does not fit in 32 bits"))?;
            let comp = submit(&mut c, Command::Deallocate { slba, nlb });
            if comp.status != Status::SUCCESS {
                return Ok(fail(comp.status, fmt));
            }
        }
    }
    if a.g.verbose() {
        println!("NVMe DSM: success");
    }
    finish(c)?;
    Ok(ExitCode::SUCCESS)
}

/// `nvme copy`: format 0 source ranges to --sdlba, inside the device.
pub(super) fn copy(a: CopyArgs) -> anyhow::Result<ExitCode> {
    check_nsid(a.namespace_id)?;
    let fmt = a.g.check()?;
    if a.snsids.is_some() || a.sopts.is_some() {
        bail!("--snsids/--sopts: refused: cross-namespace copy (formats 2 and 3); an image holds one namespace");
    }
    if a.format != 0 {
        bail!(
            "--format {}: refused: only format 0 (formats 1-3 carry protection information or other namespaces)",
            a.format
        );
    }
    if a.slbs.len() != a.blocks.len() {
        bail!(
            "--slbs gives {} ranges and --blocks {}: one count per starting LBA",
            a.slbs.len(),
            a.blocks.len()
        );
    }
    if a.slbs.is_empty() || a.slbs.len() > 256 {
        bail!("{} ranges: nvme-cli's copy takes 1 to 256", a.slbs.len());
    }
    let pi = a.prinfow.is_some_and(|v| v != 0)
        || a.prinfor.is_some_and(|v| v != 0)
        || a.ref_tag.is_some()
        || a.expected_ref_tags.is_some()
        || a.app_tag.is_some()
        || a.expected_app_tags.is_some()
        || a.app_tag_mask.is_some()
        || a.expected_app_tag_masks.is_some()
        || a.storage_tag.is_some()
        || a.storage_tag_check;
    if pi {
        notice(
            "--prinfo/--ref-tag/--app-tag/--storage-tag",
            "the namespace has no protection information (id-ns dps 0)",
        );
    }
    if a.dir_type.is_some() || a.dir_spec.is_some() {
        notice("--dir-type/--dir-spec", "the device supports no directives");
    }
    if a.limited_retry {
        notice(
            "--limited-retry",
            "the device makes one media access anyway",
        );
    }
    if a.force_unit_access {
        notice(
            "--force-unit-access",
            "no volatile write cache (id-ctrl vwc 0): every completed write is durable",
        );
    }
    let mut ranges = Vec::with_capacity(a.slbs.len());
    for (&slba, &n) in a.slbs.iter().zip(&a.blocks) {
        // NLB is a 16-bit 0's based field.
        if n > 0xffff {
            bail!("--blocks {n} does not fit NLB's 16 bits (0's based)");
        }
        ranges.push((slba, n as u32 + 1));
    }
    if a.g.dry_run() {
        dry_run_note("Copy");
        return Ok(ExitCode::SUCCESS);
    }
    let mut c = open(&a.image)?;
    let comp = submit(
        &mut c,
        Command::Copy {
            sdlba: a.sdlba,
            ranges: &ranges,
        },
    );
    finish(c)?;
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, fmt));
    }
    if a.g.verbose() {
        println!("NVMe Copy: success");
    }
    Ok(ExitCode::SUCCESS)
}

/// nvme-cli's name of an I/O opcode (nvme_cmd_to_string).
fn io_opcode_name(opcode: u8) -> &'static str {
    match opcode {
        0x00 => "Flush",
        0x01 => "Write",
        0x02 => "Read",
        0x09 => "Dataset Management",
        0x19 => "Copy",
        0x79 => "Zone Management Send",
        0x7a => "Zone Management Receive",
        0x7d => "Zone Append",
        _ => "Vendor Specific",
    }
}

pub(super) fn passthru(a: PassthruArgs) -> anyhow::Result<ExitCode> {
    use device::cmd::wire::{self, IoDwords};
    check_nsid(a.namespace_id)?;
    let fmt = a.g.check()?;
    if fmt == OutputFormat::Json {
        bail!(
            "--output-format json: refused: io-passthru prints normal output only, as nvme-cli's"
        );
    }
    for (name, v) in [
        ("flags", a.flags),
        ("rsvd", a.rsvd),
        ("cdw2", a.cdw2),
        ("cdw3", a.cdw3),
    ] {
        if v != 0 {
            bail!("--{name} {v:#x}: refused: no I/O command this device takes uses it (PRP/SGL, fused and reserved fields); leave it 0");
        }
    }
    let prefill =
        u8::try_from(a.prefill).map_err(|_| anyhow!("--prefill {:#x} is not a byte", a.prefill))?;
    let dw = |v: u64, name: &str| {
        u32::try_from(v).map_err(|_| anyhow!("--{name} {v:#x} does not fit in 32 bits"))
    };
    let dws = IoDwords {
        cdw10: dw(a.cdw10, "cdw10")?,
        cdw11: dw(a.cdw11, "cdw11")?,
        cdw12: dw(a.cdw12, "cdw12")?,
        cdw13: dw(a.cdw13, "cdw13")?,
        cdw14: dw(a.cdw14, "cdw14")?,
        cdw15: dw(a.cdw15, "cdw15")?,
    };
    if a.read && a.write {
        bail!("--read and --write together: a command moves data one way");
    }
    let mut data = buffer(&a.input_file, a.data_len, "data", prefill)?;
    let mut md = buffer(&a.metadata, a.metadata_len, "metadata", prefill)?;
    let opcode =
        u8::try_from(a.opcode).map_err(|_| anyhow!("--opcode {} is over 0xff", a.opcode))?;
    if a.show_command || a.g.dry_run() {
        println!("opcode       : {opcode:02x}");
        println!("flags        : 00\nrsvd1        : 0000\nnsid         : 00000001");
        println!("cdw2         : 00000000\ncdw3         : 00000000");
        println!("data_len     : {:08x}", a.data_len);
        println!("metadata_len : {:08x}", a.metadata_len);
        println!("addr         : 0\nmetadata     : 0");
        for (k, v) in [
            ("cdw10", dws.cdw10),
            ("cdw11", dws.cdw11),
            ("cdw12", dws.cdw12),
            ("cdw13", dws.cdw13),
            ("cdw14", dws.cdw14),
            ("cdw15", dws.cdw15),
        ] {
            println!("{k:<13}: {v:08x}");
        }
        println!("timeout_ms   : {:08x}", a.g.timeout.unwrap_or(0));
        if a.g.dry_run() {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let mut c = open(&a.image)?;
    let lba = c.layout().lba_bytes;
    let cc = dws.cdw12 & wire::CDW12_CC != 0;
    // ZNS+'s zone_compaction (81h): CDW12[15:0] pairs - 1, the data buffer its pair lists.
    let pairs = (opcode == 0x81)
        .then(|| device::parse_compaction_payload(&data, (dws.cdw12 & 0xffff) as usize + 1))
        .flatten();
    // Copy (19h): CDW12[7:0] ranges - 1, [11:8] the descriptor format (0 only); format 0
    // descriptors of 32 bytes, SLBA at byte 8, NLB (0's based) at byte 16.
    let copy_ranges = (opcode == 0x19 && (dws.cdw12 >> 8) & 0xf == 0)
        .then(|| {
            let n = (dws.cdw12 & 0xff) as usize + 1;
            (data.len() >= n * 32).then(|| {
                (0..n)
                    .map(|i| {
                        let d = &data[i * 32..(i + 1) * 32];
                        let slba = u64::from_le_bytes(d[8..16].try_into().expect("8"));
                        let nlb = u16::from_le_bytes(d[16..18].try_into().expect("2"));
                        (slba, nlb as u32 + 1)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .flatten();
    let decoded = match opcode {
        0x81 => pairs
            .as_deref()
            .map(|pairs| Command::ZoneCompaction {
                zslba: dws.slba(),
                pairs,
            })
            .ok_or(Status::INVALID_FIELD),
        0x86 => Ok(Command::IdentifyMapping { data: &mut data }),
        // ZNS+ TL_open (85h): CDW12 bit 0 close only; the data a 16-byte header, then the
        // validity bitmap.
        0x85 => Ok(Command::TlOpen {
            zslba: dws.slba(),
            close_only: dws.cdw12 & 1 == 1,
            bitmap: data.get(device::TL_OPEN_HEADER_BYTES..).unwrap_or(&[]),
        }),
        0x19 => copy_ranges
            .as_deref()
            .map(|ranges| Command::Copy {
                sdlba: dws.slba(),
                ranges,
            })
            .ok_or(Status::INVALID_FIELD),
        wire::OPC_WRITE | wire::OPC_ZONE_APPEND => wire::decode_write(opcode, dws, &data, &mut md),
        wire::OPC_READ => wire::decode_read(dws, &mut data, &mut md),
        0x79 => wire::decode_zone_send(dws.slba(), dws.cdw13),
        0x00 => Ok(Command::Flush),
        _ => Err(Status::INVALID_OPCODE),
    };
    let moves_data = matches!(
        opcode,
        wire::OPC_WRITE | wire::OPC_ZONE_APPEND | wire::OPC_READ
    );
    if decoded.is_ok() && moves_data {
        let append = opcode == wire::OPC_ZONE_APPEND;
        if let Some(code) = over_limit(&c, a.data_len, append, OutputFormat::Normal) {
            return Ok(code);
        }
    }
    let comp = match decoded {
        Ok(cmd) => submit(&mut c, cmd),
        Err(status) => return Ok(fail(status, OutputFormat::Normal)),
    };
    if a.latency {
        println!(
            "IO Command {} latency: {} us",
            io_opcode_name(opcode),
            comp.done_at.as_ns() / 1000
        );
    }
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, OutputFormat::Normal));
    }
    if a.g.verbose() {
        println!(
            "IO Command {} is Success and result: {:#x}",
            io_opcode_name(opcode),
            comp.result
        );
    }
    println!("NVMe command result:{:08x}", comp.result as u32);
    if comp.result > u32::MAX as u64 {
        println!("  (64-bit result: {:#x})", comp.result);
    }
    if cc && !md.is_empty() {
        match opcode {
            wire::OPC_READ => {
                if let Some(chunks) = wire::dr_feedback(&md) {
                    println!("decompressed read: {} chunk(s)", chunks.len());
                    for (i, (pre, fb)) in chunks.iter().enumerate() {
                        println!("  chunk {i}: {pre} bytes decompressed, {fb} bytes on the device");
                    }
                }
            }
            _ => {
                if let Some(f) = wire::cw_feedback(&md, lba) {
                    println!(
                        "compressed write: {} chunk(s), feedback sizes {:?}, {} bytes of the zone used",
                        f.sizes.len(),
                        f.sizes,
                        f.written
                    );
                }
            }
        }
    }
    if let Some(p) = &a.metadata_output_file {
        std::fs::write(p, &md).with_context(|| format!("writing {}", p.display()))?;
    }
    if (opcode == wire::OPC_READ || opcode == 0x86) && !data.is_empty() {
        match &a.output_file {
            Some(p) => {
                std::fs::write(p, &data).with_context(|| format!("writing {}", p.display()))?
            }
            None if a.raw_binary => std::io::stdout().write_all(&data)?,
            None => hex_dump(&data),
        }
    }
    finish(c)?;
    Ok(ExitCode::SUCCESS)
}

/// The flags of read and write that set command fields this device has no use for: refused
/// where the device would refuse the command, accepted with a notice where it would ignore it.
fn rw_fields(a: &RwArgs, lba: u64) -> anyhow::Result<()> {
    if let Some(b) = a.block_size {
        if b != lba {
            bail!("--block-size {b}: the namespace's logical block is {lba} bytes");
        }
    }
    if a.dir_type != 0 || a.dir_spec != 0 {
        bail!("--dir-type/--dir-spec: refused: the device supports no directives (id-ctrl oacs bit 5 is 0)");
    }
    if a.dsm > 0xff {
        bail!("--dsm {:#x}: the field is 8 bits", a.dsm);
    }
    if a.dsm != 0 {
        notice(
            "--dsm",
            "access hints; the device places data by zone, not by hint",
        );
    }
    if a.ref_tag.is_some()
        || a.app_tag.is_some()
        || a.app_tag_mask.is_some()
        || a.storage_tag.is_some()
        || a.storage_tag_check
    {
        notice(
            "--ref-tag/--app-tag/--app-tag-mask/--storage-tag/--storage-tag-check",
            "the namespace has no protection information (id-ns dps 0)",
        );
    }
    if a.force {
        notice(
            "--force",
            "the image's lock still keeps a second writer out",
        );
    }
    Ok(())
}

pub(super) fn rw(a: RwArgs, write: bool) -> anyhow::Result<ExitCode> {
    check_nsid(a.namespace_id)?;
    let fmt = a.io.check_fields()?;
    let name = if write { "write" } else { "read" };
    let mut c = if write && !a.io.g.dry_run() {
        open(&a.image)?
    } else {
        open_ro(&a.image)?
    };
    let lba = c.layout().lba_bytes;
    rw_fields(&a, lba)?;
    // nvme-cli: the block count (0's based) from -c, else from --data-size; a data size under
    // the block count's is rounded up to it.
    let nlb = match (a.block_count, a.io.data_size) {
        (Some(n), _) => n
            .checked_add(1)
            .ok_or_else(|| anyhow!("--block-count is too large"))?,
        (None, Some(z)) if z > 0 => z.div_ceil(lba),
        (None, Some(_)) => bail!("--data-size 0: data size not provided"),
        (None, None) => 1,
    };
    let nlb32 = u32::try_from(nlb)
        .ok()
        .filter(|&n| n <= 0x1_0000)
        .ok_or_else(|| anyhow!("--block-count {}: NLB is a 16-bit field", nlb - 1))?;
    if a.io.data_size.is_some_and(|z| z < nlb * lba) {
        eprintln!(
            "Rounding data size to fit block count ({} bytes)",
            nlb * lba
        );
    }
    if let Some(code) = over_limit(&c, nlb * lba, false, fmt) {
        return Ok(code);
    }
    let mut control = (a.io.prinfo as u32) << 10;
    if a.io.limited_retry {
        control |= 1 << 15;
    }
    if a.io.force_unit_access {
        control |= 1 << 14;
    }
    if a.show_command || a.io.g.dry_run() {
        println!("opcode       : {:02x}", if write { 1 } else { 2 });
        println!("nsid         : 01");
        println!("flags        : 00");
        println!("control      : {control:04x}");
        println!("nblocks      : {:04x}", nlb - 1);
        println!("metadata     : 0");
        println!("addr         : 0");
        println!("slba         : {:x}", a.start_block);
        println!("dsmgmt       : {:08x}", a.dsm);
        println!("reftag       : {:x}", a.ref_tag.unwrap_or(0));
        println!("apptag       : {:04x}", a.app_tag.unwrap_or(0));
        println!("appmask      : {:04x}", a.app_tag_mask.unwrap_or(0));
        println!("storagetagcheck : {:04x}", a.storage_tag_check as u8);
        println!("storagetag      : {:x}", a.storage_tag.unwrap_or(0));
        println!("pif             : 00");
        println!("sts             : 00");
        if a.io.g.dry_run() {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let mut read_back = None;
    let comp = if write {
        let (d, m) = a.io.load(&c, nlb)?;
        submit(
            &mut c,
            Command::Write {
                slba: a.start_block,
                nlb: nlb32,
                data: &d,
                metadata: &m,
            },
        )
    } else {
        let mut d = vec![0u8; (nlb * lba) as usize];
        let want_meta = a.io.metadata.is_some() && c.layout().metadata_bytes > 0;
        let mut m = vec![
            0u8;
            if want_meta {
                (nlb * c.layout().metadata_bytes) as usize
            } else {
                0
            }
        ];
        let comp = submit(
            &mut c,
            Command::Read {
                slba: a.start_block,
                nlb: nlb32,
                data: &mut d,
                metadata: &mut m,
            },
        );
        read_back = Some((d, m));
        comp
    };
    finish(c)?;
    if a.io.latency {
        println!(" latency: {name}: {} us", comp.done_at.as_ns() / 1000);
    }
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, fmt));
    }
    if let Some((d, m)) = read_back {
        match &a.io.data {
            Some(p) => {
                std::fs::write(p, &d).with_context(|| format!("data file {}", p.display()))?
            }
            None => std::io::stdout()
                .write_all(&d)
                .context("writing data to stdout")?,
        }
        if let Some(p) = &a.io.metadata {
            std::fs::write(p, &m).with_context(|| format!("metadata file {}", p.display()))?;
        }
    }
    if fmt == OutputFormat::Json {
        println!(
            "{}",
            json!({ "command": name, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
        );
    } else if a.io.g.verbose() {
        println!("{name}: Success");
    }
    Ok(ExitCode::SUCCESS)
}
