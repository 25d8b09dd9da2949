//! `nvme zns zone-compaction`, `nvme zns tl-open` and `nvme zns identify-mapping`: ZNS+'s
//! vendor commands (OSDI'21 §3.2; opcodes 81h, 85h and 86h, `docs/znsplus.md`) as zns-plugin
//! subcommands, so a user need not build their payloads for `io-passthru`.

use std::process::ExitCode;

use anyhow::bail;
use device::{ChunkMapping, Command, Status, MAPPING_BYTES, MAX_COMPACTION_PAIRS};
use serde_json::json;

use super::common::{check_nsid, dry_run_note, fail, finish, open, open_ro, submit};
use super::{CompactionArgs, MappingArgs, OutputFormat, TlOpenArgs};

/// LBAs from a list like `0-7,16,20-23` (ranges inclusive, numbers decimal or 0x hex), at
/// most one zone_compaction's worth.
fn lbas(flag: &str, list: &str) -> anyhow::Result<Vec<u64>> {
    lba_list(flag, list, MAX_COMPACTION_PAIRS)
}

fn lba_list(flag: &str, list: &str, max: usize) -> anyhow::Result<Vec<u64>> {
    let num = |s: &str| -> anyhow::Result<u64> {
        let s = s.trim();
        let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16),
            None => s.parse(),
        };
        r.map_err(|_| anyhow::anyhow!("--{flag}: '{s}' is not an LBA"))
    };
    let mut out = Vec::new();
    for part in list.split(',').filter(|p| !p.trim().is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if b < a {
            bail!("--{flag}: range {part} runs backwards");
        }
        if (b - a) >= max as u64 || out.len() + ((b - a) as usize) >= max {
            bail!("--{flag}: more than {max} LBAs (one command's limit)");
        }
        out.extend(a..=b);
    }
    Ok(out)
}

pub(super) fn zone_compaction(a: CompactionArgs) -> anyhow::Result<ExitCode> {
    check_nsid(a.namespace_id)?;
    let fmt = a.g.check()?;
    let sources = lbas("sources", &a.sources)?;
    let dests = lbas("destinations", &a.destinations)?;
    if sources.len() != dests.len() || sources.is_empty() {
        bail!(
            "--sources names {} LBAs and --destinations {}: give one destination per source",
            sources.len(),
            dests.len()
        );
    }
    let pairs: Vec<(u64, u64)> = sources.into_iter().zip(dests).collect();
    if a.g.dry_run() {
        dry_run_note("zone_compaction (vendor 81h)");
        return Ok(ExitCode::SUCCESS);
    }
    let mut c = open(&a.image)?;
    let comp = submit(
        &mut c,
        Command::ZoneCompaction {
            zslba: a.zslba,
            pairs: &pairs,
        },
    );
    let k = c.counters().clone();
    finish(c)?;
    if a.latency {
        println!(
            " latency: zone compaction: {} us",
            comp.done_at.as_ns() / 1000
        );
    }
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, fmt));
    }
    if fmt == OutputFormat::Json {
        println!(
            "{}",
            json!({
                "command": "zns-zone-compaction",
                "zslba": a.zslba,
                "pairs": pairs.len(),
                "status": "SUCCESS",
                "latency_ns": comp.done_at.as_ns(),
            })
        );
    } else if a.g.verbose() {
        println!(
            "zns-zone-compaction: Success zone slba:{:x} pairs:{} nsid:1 ({} chunk copybacks, {} read+program chunk copies)",
            a.zslba,
            pairs.len(),
            k.compaction_copybacks,
            k.compaction_read_programs
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn identify_mapping(a: MappingArgs) -> anyhow::Result<ExitCode> {
    check_nsid(a.namespace_id)?;
    let fmt = a.g.check()?;
    let mut c = open_ro(&a.image)?;
    let mut buf = vec![0u8; MAPPING_BYTES];
    let comp = submit(&mut c, Command::IdentifyMapping { data: &mut buf });
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, fmt));
    }
    let Some(m) = ChunkMapping::parse(&buf) else {
        bail!("identify_mapping returned a page of an unknown version");
    };
    if fmt == OutputFormat::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "lba_bytes": m.lba_bytes,
                "chunk_lbas": 1u64 << m.chunk_lbas_log2,
                "chip_id_shift": m.chip_id_shift,
                "chip_id_bits": m.chip_id_bits,
                "fcg_id_shift": m.fcg_id_shift,
                "fcg_id_bits": m.fcg_id_bits,
                "stripe_bits": m.stripe_bits,
                "dies": m.dies,
                "dies_per_zone": m.dies_per_zone,
            }))?
        );
    } else {
        println!("ZNS+ chunk mapping (identify_mapping, vendor 86h):");
        println!("lba_bytes     : {}", m.lba_bytes);
        println!(
            "chunk         : {} LBAs (LBA bits [{}:0])",
            1u64 << m.chunk_lbas_log2,
            m.chunk_lbas_log2.saturating_sub(1)
        );
        println!(
            "chip id       : LBA bits [{}:{}] ({} chips per zone)",
            m.chip_id_shift + m.chip_id_bits,
            m.chip_id_shift,
            m.dies_per_zone
        );
        println!("stripe id     : {} bits", m.stripe_bits);
        println!(
            "fcg id        : {} bits from LBA bit {} (zone number's low bits)",
            m.fcg_id_bits, m.fcg_id_shift
        );
        println!("dies          : {}", m.dies);
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn tl_open(a: TlOpenArgs) -> anyhow::Result<ExitCode> {
    check_nsid(a.namespace_id)?;
    let fmt = a.g.check()?;
    if a.g.dry_run() {
        dry_run_note("TL_open (vendor 85h)");
        return Ok(ExitCode::SUCCESS);
    }
    let mut c = open(&a.image)?;
    let cap = c.layout().zone_capacity_lbas;
    let valid = lba_list("valid", &a.valid, cap as usize)?;
    let mut bitmap = vec![0u8; cap.div_ceil(8) as usize];
    for b in valid {
        if b >= cap {
            bail!("--valid: block {b} is past the zone capacity ({cap} blocks)");
        }
        bitmap[(b / 8) as usize] |= 1 << (b % 8);
    }
    let comp = submit(
        &mut c,
        Command::TlOpen {
            zslba: a.zslba,
            close_only: a.close_only,
            bitmap: &bitmap,
        },
    );
    let k = c.counters().clone();
    finish(c)?;
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, fmt));
    }
    if fmt == OutputFormat::Json {
        println!(
            "{}",
            json!({
                "command": "zns-tl-open",
                "zslba": a.zslba,
                "close_only": a.close_only,
                "status": "SUCCESS",
                "latency_ns": comp.done_at.as_ns(),
            })
        );
    } else if a.g.verbose() {
        println!(
            "zns-tl-open: Success zone slba:{:x} nsid:1 ({} blocks plugged so far)",
            a.zslba,
            k.plugged_blocks_foreground + k.plugged_blocks_background
        );
    }
    Ok(ExitCode::SUCCESS)
}
