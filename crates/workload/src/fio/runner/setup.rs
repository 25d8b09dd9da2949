//! Job set-up: checks a job's options against the device (block size, region, zone mode,
//! compressed I/O) and builds its [`JobState`]; fills the data pools the way fio's
//! buffer_compress_percentage does.

use std::rc::Rc;

use device::DeviceHandle;

use super::geometry::Geometry;
use sim::{Rng, Sim};

use super::issue::Flow;
use super::verify::SharedRun;
use super::{ChunkIndex, DirStats, JobResult, JobState};
use crate::fio::options::{Direction, JobSpec, Mix, Pattern, Size, ZoneMode};
use crate::fio::FioError;

/// Fill a job's data pool as fio's fill_io_buffer does: with buffer_compress_percentage (or
/// dedupe) each chunk is (100 - pct)% random bytes and the rest the buffer_pattern (or
/// zeros); otherwise the buffer_pattern repeated, or zeros with zero_buffers, or random
/// bytes. The pattern restarts at every 4 KiB page, where the buffers of a pool start. With a
/// `spread`, each 4 KiB page draws its own percentage from pct ± spread (a znslab extension).
pub(super) fn fill_pool(rng: &mut Rng, buf: &mut [u8], spec: &JobSpec) {
    let pct = spec.buffer_compress_percentage;
    let pattern = &spec.buffer_pattern[..];
    if pct == 0 && spec.dedupe.percentage == 0 {
        if !pattern.is_empty() {
            for page in buf.chunks_mut(4096) {
                fill_pattern(page, pattern);
            }
        } else if spec.zero_buffers {
            buf.fill(0);
        } else {
            rng.fill(buf);
        }
        return;
    }
    let (chunk, spread) = (spec.buffer_compress_chunk, spec.buffer_compress_spread);
    if spread == 0 {
        fill_chunks(rng, buf, pct, chunk, pattern);
        return;
    }
    for page in buf.chunks_mut(4096) {
        let lo = pct.saturating_sub(spread);
        let hi = (pct + spread).min(100);
        let p = lo + rng.below((hi - lo + 1) as u64) as u32;
        fill_chunks(rng, page, p, chunk, pattern);
    }
}

/// fio's cpy_pattern: the pattern over and over from its first byte.
fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    for (b, p) in buf.iter_mut().zip(pattern.iter().cycle()) {
        *b = *p;
    }
}

fn fill_chunks(rng: &mut Rng, buf: &mut [u8], pct: u32, chunk: u64, pattern: &[u8]) {
    if pct == 0 {
        rng.fill(buf);
        return;
    }
    for c in buf.chunks_mut(chunk as usize) {
        let random = c.len() * (100 - pct as usize) / 100;
        rng.fill(&mut c[..random]);
        if pattern.is_empty() {
            c[random..].fill(0);
        } else {
            fill_pattern(&mut c[random..], pattern);
        }
    }
}

/// Whether job `spec` starts a new group after `earlier` jobs (whose states are `states`):
/// with stonewall, or when it waits for a job of the current group (wait_for).
pub(super) fn starts_group(spec: &JobSpec, earlier: &[JobSpec], states: &[JobState]) -> bool {
    if spec.stonewall {
        return true;
    }
    let Some(w) = &spec.wait_for else {
        return false;
    };
    let current = states.last().map(|s| s.result.group).unwrap_or(0);
    earlier
        .iter()
        .zip(states)
        .any(|(j, s)| &j.name == w && s.result.group == current)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn setup(
    spec: &JobSpec,
    g: &Rc<Geometry>,
    sim: &Sim,
    dev: &DeviceHandle,
    index: usize,
    group: u32,
    chunks: &ChunkIndex,
    shared: &SharedRun,
) -> Result<JobState, FioError> {
    let err = |opt: &str, msg: String| FioError::option(&spec.name, opt, msg);
    let lba = g.lba_bytes;
    if !spec.bs.is_multiple_of(lba) {
        return Err(err(
            "bs",
            format!("{} is not a multiple of the {lba}-byte LBA", spec.bs),
        ));
    }
    for b in &spec.block_sizes {
        for size in b.sizes() {
            if !size.is_multiple_of(lba) {
                return Err(err(
                    if b.split.is_empty() { "bs" } else { "bssplit" },
                    format!("{size} is not a multiple of the {lba}-byte LBA"),
                ));
            }
        }
    }
    // atomic: the kernel refuses RWF_ATOMIC writes past the device's atomic write unit,
    // one block here (id-ctrl awupf 0).
    let largest_write = spec.block_sizes[Direction::Write as usize].largest();
    if spec.atomic && spec.writes() && largest_write > lba {
        return Err(err(
            "atomic",
            format!(
                "{largest_write}-byte writes: the device's atomic write unit is one {lba}-byte block (awupf 0)"
            ),
        ));
    }
    if spec.compressed_io && !spec.one_block_size() {
        return Err(err("compressed_io", "needs one block size (bs)".into()));
    }
    if spec.compressed_io && spec.verify {
        return Err(err("verify", "is not supported with compressed_io".into()));
    }
    let (mdts, mor) = (g.max_transfer_bytes, g.max_open);
    // Larger plain I/Os are split at the maximum transfer, as the kernel does.
    if (spec.compressed_io || spec.zone_append) && spec.bs > mdts {
        return Err(err(
            "bs",
            format!(
                "{} is larger than the device's maximum transfer ({mdts} bytes)",
                spec.bs
            ),
        ));
    }
    let bs_lbas = spec.bs / lba;
    let zone_bytes = g.zone_size_lbas * lba;
    let zoned = dev.with(|c| c.identify().csi) == device::CommandSet::Zoned;
    if spec.zonemode == ZoneMode::Zbd && zoned {
        if let Some(z) = spec.zone_size.filter(|z| *z != zone_bytes) {
            return Err(err(
                "zonesize",
                format!("{z} does not match the device zone size {zone_bytes} (as fio refuses)"),
            ));
        }
    }
    if spec.zonemode == ZoneMode::Zbd
        && spec.trims()
        && spec.bs != zone_bytes
        && spec.pattern == Pattern::Sequential
    {
        // fio's zbd trims are zone resets at zone starts: a sequential trim of less than a
        // zone would meet a start inside a zone.
        return Err(err(
            "bs",
            format!(
                "trims in zonemode=zbd reset whole zones: bs ({}) must be the zone size ({zone_bytes})",
                spec.bs
            ),
        ));
    }
    // (A trim in zbd mode resets a whole zone: its bs is the zone size.)
    if spec.zonemode == ZoneMode::Zbd
        && (spec.reads() || spec.writes())
        && bs_lbas > g.zone_capacity_lbas
    {
        return Err(err(
            "bs",
            format!("{} is larger than the zone capacity", spec.bs),
        ));
    }
    if spec.zonemode == ZoneMode::Zbd
        && !spec.ignore_zone_limits
        && mor != 0
        && spec.max_open_zones > mor
    {
        return Err(err(
            "max_open_zones",
            format!(
                "{} is more than the device supports ({mor})",
                spec.max_open_zones
            ),
        ));
    }
    let dev_bytes = g.namespace_lbas() * lba;
    let zb_size = if zoned { zone_bytes } else { 0 };
    if zb_size == 0
        && [Some(spec.offset), spec.size, spec.io_size]
            .iter()
            .any(|s| matches!(s, Some(crate::fio::Size::Zones(_))))
    {
        return Err(err(
            "size",
            "sizes in zones (like 8z) need a zoned device".into(),
        ));
    }
    let mut offset = spec.offset.resolve(dev_bytes, zb_size);
    // A percentage offset is aligned up to offset_align, or to the smallest block size
    // (fio's default, and the LBA's at least).
    if matches!(spec.offset, Size::Percent(_)) {
        let align = if spec.offset_align > 0 {
            spec.offset_align
        } else {
            spec.bs_min
        }
        .max(lba);
        offset = offset.div_ceil(align).saturating_mul(align);
    }
    let mut offset = offset + spec.clone as u64 * spec.offset_increment;
    if spec.zonemode == ZoneMode::Zbd {
        let zb = g.zone_size_lbas * lba;
        offset = offset.div_ceil(zb) * zb;
    }
    if offset >= dev_bytes {
        return Err(err(
            "offset",
            format!("{offset} is at or past the end of the device ({dev_bytes} bytes)"),
        ));
    }
    let size = spec
        .size
        .map(|s| s.resolve(dev_bytes, zb_size))
        .unwrap_or(dev_bytes - offset)
        .min(dev_bytes - offset);
    let start = offset / lba;
    let mut end = (offset + size) / lba;
    if spec.zonemode == ZoneMode::Zbd {
        end = end.div_ceil(g.zone_size_lbas) * g.zone_size_lbas;
        end = end.min(g.namespace_lbas());
    }
    if end < start + bs_lbas {
        return Err(err(
            "size",
            format!("{size} bytes is less than one block of {}", spec.bs),
        ));
    }
    let chunk = if spec.compressed_chunk == 0 {
        spec.bs
    } else {
        spec.compressed_chunk
    };
    let id = dev.with(|c| c.identify());
    if spec.zonemode == ZoneMode::Zbd && id.csi != device::CommandSet::Zoned {
        return Err(err(
            "zonemode",
            "zbd needs a zoned device; the tcssd design has a conventional namespace \
             (use zonemode=none)"
                .into(),
        ));
    }
    if spec.compressed_io {
        if !id.vendor.compressed_io {
            let design = dev.with(|c| c.design_name());
            return Err(err(
                "compressed_io",
                format!("needs a device of the cczns design (this one is {design})"),
            ));
        }
        if spec.zonemode != ZoneMode::Zbd {
            return Err(err("compressed_io", "needs zonemode=zbd".into()));
        }
        if !spec.bs.is_multiple_of(chunk) || chunk > u32::MAX as u64 {
            return Err(err(
                "compressed_chunk",
                format!("{chunk} does not divide bs ({})", spec.bs),
            ));
        }
        let slots = bs_lbas * g.metadata_bytes / 4;
        if spec.bs / chunk + 3 > slots {
            return Err(err(
                "compressed_chunk",
                format!(
                    "{} chunks per I/O do not fit the metadata buffer ({slots} slots of 4 bytes)",
                    spec.bs / chunk
                ),
            ));
        }
    }
    let seed = spec.randseed.unwrap_or(sim.seed());
    let rng = Rng::new(seed).stream(&format!("fio.{}.{}.{}", spec.name, spec.clone, index));
    let mut target = spec
        .io_size
        .map(|s| s.resolve(dev_bytes, zb_size))
        .unwrap_or(size)
        .saturating_mul(spec.loops as u64);
    if let Some(n) = spec.number_ios {
        target = target.min(n.saturating_mul(spec.bs));
    }
    let spr = if spec.sprandom.enabled {
        let blocks = (end - start) / bs_lbas;
        let (s, physical) = super::sprandom::SpState::new(&spec.sprandom, blocks, spec.bs, &rng)
            .map_err(|e| err("sprandom", e))?;
        // fio sets the job's io_size to the physical size it writes.
        target = physical.saturating_mul(spec.loops as u64);
        Some(s)
    } else {
        None
    };
    if spec.mix == Mix::TrimWrite {
        target = target.saturating_mul(2); // each block is trimmed, then written
    }
    if spec.trims() && spec.zonemode == ZoneMode::None && zoned {
        return Err(err(
            "rw",
            "trims on a zoned device need zonemode=zbd (where fio makes them zone resets)".into(),
        ));
    }
    Ok(JobState {
        spec: spec.clone(),
        g: g.clone(),
        bs_lbas,
        start,
        end,
        cur_zone: start / g.zone_size_lbas,
        entering_zone: true,
        reserved: None,
        pos: start,
        issued: 0,
        poisson_next_ns: 0,
        target,
        deadline: None,
        rng,
        done: false,
        idle_scans: 0,
        result: JobResult {
            spec: spec.clone(),
            group,
            read: DirStats::default(),
            write: DirStats::default(),
            trim: DirStats::default(),
            runtime_ns: 0,
            error: None,
            errno: 0,
            total_err: 0,
            first_error: 0,
            first_error_text: None,
            sync: report::LatencyHistogram::new(),
            zone_resets: 0,
            zone_finishes: 0,
            dr_short_reads: 0,
            steady: None,
            latency_depth: if spec.latency.target_ns > 0 {
                1
            } else {
                spec.iodepth
            },
        },
        last_done: 0,
        group_start: 0,
        chunk,
        chunks_per_io: spec.bs / chunk,
        index: chunks.clone(),
        chunk_cursor: 0,
        shared: shared.clone(),
        verify: Default::default(),
        flow: Flow {
            job: index,
            ..Flow::default()
        },
        lat: super::latency_target::LatState::new(&spec.latency, spec.iodepth),
        spr,
    })
}
