//! The NVM command set's I/O commands: `nvme read` and `nvme write`, `flush`, `dsm`
//! (deallocate) and `io-passthru` (any I/O command by opcode and dwords; CCZNS compressed
//! write and decompressed read).

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use device::{Command, Status};
use serde_json::json;

use super::common::{buffer, fail, finish, hex_dump, open, open_ro, over_limit, submit};
use super::{OutputFormat, PassthruArgs, RwArgs};

/// `nvme flush`.
pub(super) fn flush(image: PathBuf) -> anyhow::Result<ExitCode> {
    let mut c = open(&image)?;
    let comp = submit(&mut c, Command::Flush);
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, OutputFormat::Normal));
    }
    println!("NVMe Flush: success");
    finish(c)?;
    Ok(ExitCode::SUCCESS)
}

/// `nvme dsm`: with `--ad`, deallocate each range.
pub(super) fn dsm(
    image: PathBuf,
    slbs: Vec<u64>,
    blocks: Vec<u64>,
    ad: bool,
) -> anyhow::Result<ExitCode> {
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
    let mut c = open(&image)?;
    if ad {
        for (&slba, &n) in slbs.iter().zip(&blocks) {
            let nlb =
                u32::try_from(n).map_err(|_| anyhow!("--blocks {n} does not fit in 32 bits"))?;
            let comp = submit(&mut c, Command::Deallocate { slba, nlb });
            if comp.status != Status::SUCCESS {
                return Ok(fail(comp.status, OutputFormat::Normal));
            }
        }
    }
    println!("NVMe DSM: success");
    finish(c)?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn passthru(a: PassthruArgs) -> anyhow::Result<ExitCode> {
    use device::cmd::wire::{self, IoDwords};
    let mut c = open(&a.image)?;
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
    let mut data = buffer(&a.input_file, a.data_len, "data")?;
    let mut md = buffer(&a.metadata, a.metadata_len, "metadata")?;
    let opcode =
        u8::try_from(a.opcode).map_err(|_| anyhow!("--opcode {} is over 0xff", a.opcode))?;
    let lba = c.layout().lba_bytes;
    let cc = dws.cdw12 & wire::CDW12_CC != 0;
    let decoded = match opcode {
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
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, OutputFormat::Normal));
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
    if opcode == wire::OPC_READ && !data.is_empty() {
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

pub(super) fn rw(a: RwArgs, write: bool) -> anyhow::Result<ExitCode> {
    let mut c = if write {
        open(&a.image)?
    } else {
        open_ro(&a.image)?
    };
    let nlb = a
        .block_count
        .checked_add(1)
        .ok_or_else(|| anyhow!("--block-count is too large"))?;
    let nlb32 =
        u32::try_from(nlb).map_err(|_| anyhow!("--block-count {} is too large", a.block_count))?;
    let name = if write { "write" } else { "read" };
    if let Some(code) = over_limit(&c, nlb * c.layout().lba_bytes, false, a.io.output_format) {
        return Ok(code);
    }
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
        let lba = c.layout().lba_bytes;
        a.io.check_data_size(nlb, lba)?;
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
        if comp.status == Status::SUCCESS {
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
        comp
    };
    finish(c)?;
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, a.io.output_format));
    }
    if a.io.latency {
        eprintln!(" latency: {name}: {} us", comp.done_at.as_ns() / 1000);
    }
    if a.io.output_format == OutputFormat::Json {
        println!(
            "{}",
            json!({ "command": name, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
        );
    } else {
        eprintln!("{name}: Success");
    }
    Ok(ExitCode::SUCCESS)
}
