//! Independent zone groups (IZGs), found by timing I/O on pairs of zones, as ZenFS+ does
//! (IEEE Access 2023 §IV-A, Fig. 5; seed-specs B.1.2). Zones in one IZG share flash dies, so
//! I/O to two of them at once takes longer than to either alone; zones of different IZGs can
//! be written and read in parallel. The probe learns this from time alone: it never reads the
//! device's configuration.
//!
//! - **Read probe** (the paper's): a pivot task keeps reading the pivot zone while a needle
//!   task reads the needle zone; the needle joins the pivot's IZG when its mean read latency
//!   passes `threshold` × its latency alone.
//! - **Write probe** (the artifact's `env/IZG.cpp`): the time to write the pivot and the needle
//!   zone at once against the time to write one zone alone.
//! - **Full sweep** (the paper's): each pivot (the lowest zone not yet grouped) is paired with
//!   every later zone not yet grouped.
//! - **Periodic sweep** (the artifact's): the first needle that contends gives the distance
//!   `d`, IZG i = {i, i + d, i + 2d, ...}; checked on pivot + k·d and pivot + k·d + 1 for
//!   k = 1..3, falling back to the full sweep when the check fails.
//!
//! Every zone the probe writes is reset before it returns; the zones it uses must be empty.

use std::cell::Cell;
use std::rc::Rc;

use device::ZoneAction;
use sim::{Rng, SimDuration, SimInstant};

use crate::io::IoError;
use crate::zoned::ZonedBackend;

/// The probe's request size: ZenFS+'s 192 KiB (`IO_SIZE`), also its stripe unit.
pub const PROBE_IO_BYTES: u64 = 192 << 10;

/// The most a probe thread waits between two requests, drawn uniformly: two threads of a
/// host issue at moments that drift against each other (scheduling, syscalls). Without it two
/// identical queue-depth-1 loops on the virtual clock lock into one phase, and two dies on one
/// channel either always or never meet on it: ratios of 1.0 or 1.5 where the paper's Fig. 3
/// measured 1.12. An assumption, not a figure of the paper.
pub const THREAD_JITTER: SimDuration = SimDuration::from_us(50);

/// A pause of up to [`THREAD_JITTER`].
async fn jitter<B: ZonedBackend>(io: &B, rng: &mut Rng) {
    let ns = rng.below(THREAD_JITTER.as_ns());
    io.sim().sleep(SimDuration::from_ns(ns)).await;
}

/// What the probe times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeMode {
    Read,
    Write,
}

/// Which pairs the probe tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeSweep {
    Full,
    Periodic,
}

/// How to probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeConfig {
    pub mode: ProbeMode,
    pub sweep: ProbeSweep,
    /// Probe the first this many zones (`None`: all). The map found is extended to the rest
    /// by its period.
    pub zones: Option<u32>,
    /// A needle contends when its time passes this percentage of the time alone (the
    /// artifact's `Identify_IZG_Threshold` of 1.5: 150).
    pub threshold_pct: u32,
    /// Read probe: needle reads timed per pair (seed-specs B.1.2: 64).
    pub reads: u32,
    /// Read probe: bytes written to each zone first so it has data to read (the reads go
    /// round it); more than the device's write buffer in all, so reads come from flash.
    pub read_span_bytes: u64,
    /// Write probe: bytes written to each zone of a pair (`None`: the whole zone, as the
    /// artifact).
    pub write_bytes: Option<u64>,
}

impl ProbeConfig {
    /// The artifact's probe: whole-zone writes, periodic sweep.
    pub fn write_periodic() -> ProbeConfig {
        ProbeConfig {
            mode: ProbeMode::Write,
            sweep: ProbeSweep::Periodic,
            zones: None,
            threshold_pct: 150,
            reads: 64,
            read_span_bytes: 8 * PROBE_IO_BYTES,
            write_bytes: None,
        }
    }

    /// The paper's probe: reads, every pair among the first `zones` zones.
    pub fn read_full(zones: u32) -> ProbeConfig {
        ProbeConfig {
            mode: ProbeMode::Read,
            sweep: ProbeSweep::Full,
            zones: Some(zones),
            ..ProbeConfig::write_periodic()
        }
    }
}

/// Independent zone groups: zone `z` is in group `z % groups` (the periodic mapping both the
/// artifact and this project's small-zone devices have).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IzgMap {
    pub groups: u32,
}

impl IzgMap {
    pub fn group_of(&self, zone: u32) -> u32 {
        zone % self.groups
    }
}

/// What a probe found and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeReport {
    pub map: IzgMap,
    pub mode: ProbeMode,
    /// The sweep that gave the map (a periodic sweep whose check failed reports `Full`).
    pub sweep: ProbeSweep,
    /// Pairs of zones timed together.
    pub pairs: u32,
    /// Virtual time the probe took.
    pub elapsed: SimDuration,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// The time alone the pairs were held against: one read (read probe) or one zone's
    /// writes (write probe).
    pub alone: SimDuration,
}

/// Why a probe found no map.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("IZG probe: {0}")]
    Io(#[from] IoError),
    #[error("IZG probe: {0}")]
    Invalid(String),
}

/// Find the device's IZGs.
pub async fn probe<B: ZonedBackend>(
    io: &Rc<B>,
    cfg: &ProbeConfig,
) -> Result<ProbeReport, ProbeError> {
    let all = io.report_zones().await?.len() as u32;
    let n = cfg.zones.unwrap_or(all).min(all);
    if n < 2 {
        return Err(ProbeError::Invalid(format!(
            "{n} zones to probe: at least 2 are needed"
        )));
    }
    if cfg.threshold_pct <= 100 || cfg.reads == 0 {
        return Err(ProbeError::Invalid(format!(
            "threshold {}% (must be above 100) and reads {} (at least 1)",
            cfg.threshold_pct, cfg.reads
        )));
    }
    let mut p = Prober::new(io, cfg, n)?;
    let start = io.sim().now();
    let result = p.run(n).await;
    // Every zone written goes back to empty, whatever the outcome.
    p.reset_filled().await?;
    let (groups, sweep) = result?;
    Ok(ProbeReport {
        map: IzgMap { groups },
        mode: cfg.mode,
        sweep,
        pairs: p.pairs,
        elapsed: io.sim().now().since(start),
        bytes_read: p.bytes_read,
        bytes_written: p.bytes_written,
        alone: p.alone.unwrap_or(SimDuration::ZERO),
    })
}

/// Mean latency of 192 KiB reads of zone `needle` at queue depth 1 (`reads` of them, going
/// round its first `span` bytes) while a second task keeps reading zone `pivot`'s first
/// `span` bytes (none: alone). Fig. 3(a)'s curve at `needle`. Both zones must hold `span`
/// bytes.
pub async fn read_beside<B: ZonedBackend>(
    io: &Rc<B>,
    pivot: Option<u32>,
    needle: u32,
    reads: u32,
    span: u64,
) -> Result<SimDuration, IoError> {
    Ok(timed_beside(io, pivot, span, Timed::Read { needle, reads })
        .await?
        .mean)
}

/// Mean latency of 192 KiB writes to zone `needle` at queue depth 1 (from its start, `bytes`
/// in all; the first `warm` bytes, which the write buffer takes, not counted) while a second
/// task keeps reading zone `pivot`'s first `span` bytes (none: alone). Fig. 3(b)'s curve at
/// `needle`. The needle zone must be empty.
pub async fn write_beside<B: ZonedBackend>(
    io: &Rc<B>,
    pivot: Option<u32>,
    needle: u32,
    bytes: u64,
    warm: u64,
    span: u64,
) -> Result<SimDuration, IoError> {
    let timed = Timed::Write {
        needle,
        bytes,
        warm,
    };
    Ok(timed_beside(io, pivot, span, timed).await?.mean)
}

/// The timed side of a pair.
#[derive(Clone, Copy)]
enum Timed {
    Read { needle: u32, reads: u32 },
    Write { needle: u32, bytes: u64, warm: u64 },
}

struct Beside {
    mean: SimDuration,
    /// Reads the pivot task made meanwhile.
    pivot_reads: u64,
}

async fn timed_beside<B: ZonedBackend>(
    io: &Rc<B>,
    pivot: Option<u32>,
    span: u64,
    timed: Timed,
) -> Result<Beside, IoError> {
    let stop = Rc::new(Cell::new(false));
    let background = pivot.map(|p| {
        let (io, stop) = (io.clone(), stop.clone());
        io.sim().clone().spawn(async move {
            let mut buf = vec![0u8; PROBE_IO_BYTES as usize];
            let mut rng = io.sim().rng("izg-pivot");
            let mut i = 0u64;
            while !stop.get() {
                jitter(&*io, &mut rng).await;
                let off = (i * PROBE_IO_BYTES) % span;
                io.read_discard(p as u64 * io.zone_bytes() + off, &mut buf)
                    .await?;
                i += 1;
            }
            Ok::<u64, IoError>(i)
        })
    });
    let result = timed_side(io, timed, span).await;
    stop.set(true);
    let pivot_reads = match background {
        Some(h) => h.await?,
        None => 0,
    };
    Ok(Beside {
        mean: result?,
        pivot_reads,
    })
}

async fn timed_side<B: ZonedBackend>(
    io: &Rc<B>,
    timed: Timed,
    span: u64,
) -> Result<SimDuration, IoError> {
    let (mut total, mut counted) = (SimDuration::ZERO, 0u64);
    let mut rng = io.sim().rng("izg-needle");
    match timed {
        Timed::Read { needle, reads } => {
            let mut buf = vec![0u8; PROBE_IO_BYTES as usize];
            for i in 0..reads as u64 {
                let off = (i * PROBE_IO_BYTES) % span;
                jitter(&**io, &mut rng).await;
                let t = io.sim().now();
                io.read_discard(needle as u64 * io.zone_bytes() + off, &mut buf)
                    .await?;
                total += io.sim().now().since(t);
                counted += 1;
            }
        }
        Timed::Write {
            needle,
            bytes,
            warm,
        } => {
            let data = vec![0x5au8; PROBE_IO_BYTES as usize];
            let base = needle as u64 * io.zone_bytes();
            let mut off = 0;
            while off + PROBE_IO_BYTES <= bytes {
                jitter(&**io, &mut rng).await;
                let t = io.sim().now();
                io.write(base + off, &data).await?;
                if off >= warm {
                    total += io.sim().now().since(t);
                    counted += 1;
                }
                off += PROBE_IO_BYTES;
            }
        }
    }
    Ok(SimDuration::from_ns(total.as_ns() / counted.max(1)))
}

struct Prober<'a, B: ZonedBackend> {
    io: &'a Rc<B>,
    cfg: &'a ProbeConfig,
    /// Zones the read probe filled with data (reset at the end).
    filled: Vec<bool>,
    zone_capacity: u64,
    pairs: u32,
    bytes_read: u64,
    bytes_written: u64,
    alone: Option<SimDuration>,
}

impl<'a, B: ZonedBackend> Prober<'a, B> {
    fn new(io: &'a Rc<B>, cfg: &'a ProbeConfig, n: u32) -> Result<Self, ProbeError> {
        let cap = io.zone_capacity_bytes();
        let block = io.lba_bytes();
        let span = cfg.read_span_bytes;
        let write = cfg.write_bytes.unwrap_or(cap);
        let fits = |b: u64| b >= PROBE_IO_BYTES && b <= cap && b.is_multiple_of(block);
        let (what, bytes) = match cfg.mode {
            ProbeMode::Read => ("read span", span),
            ProbeMode::Write => ("write bytes", write),
        };
        if !PROBE_IO_BYTES.is_multiple_of(block) || !fits(bytes) {
            return Err(ProbeError::Invalid(format!(
                "{what} {bytes}: from {PROBE_IO_BYTES} (one probe I/O) to the zone capacity \
                 {cap}, in {block}-byte blocks"
            )));
        }
        Ok(Prober {
            io,
            cfg,
            filled: vec![false; n as usize],
            zone_capacity: cap,
            pairs: 0,
            bytes_read: 0,
            bytes_written: 0,
            alone: None,
        })
    }

    /// Probe the first `n` zones: the number of groups and the sweep that found it.
    async fn run(&mut self, n: u32) -> Result<(u32, ProbeSweep), ProbeError> {
        if self.cfg.sweep == ProbeSweep::Periodic {
            if let Some(d) = self.periodic(n).await? {
                return Ok((d, ProbeSweep::Periodic));
            }
        }
        let group_of = self.full(n).await?;
        period_of(&group_of)
            .map(|d| (d, ProbeSweep::Full))
            .ok_or_else(|| {
                ProbeError::Invalid(format!(
                    "the groups found among the first {n} zones do not repeat with a period \
                     ({group_of:?}); only periodic maps are kept"
                ))
            })
    }

    /// The artifact's sweep: the distance to the first contending needle, checked.
    async fn periodic(&mut self, n: u32) -> Result<Option<u32>, ProbeError> {
        let mut d = None;
        for needle in 1..n {
            if self.contends(0, needle).await? {
                d = Some(needle);
                break;
            }
        }
        // No needle contends: the period, if any, lies beyond the probed zones; the full
        // sweep decides (every probed zone its own group).
        let Some(d) = d else { return Ok(None) };
        for k in 1..=3u32 {
            let same = k * d;
            if same < n && !self.contends(0, same).await? {
                return Ok(None);
            }
            if d > 1 && same + 1 < n && self.contends(0, same + 1).await? {
                return Ok(None);
            }
        }
        Ok(Some(d))
    }

    /// The paper's sweep: each zone's group among the first `n`.
    async fn full(&mut self, n: u32) -> Result<Vec<u32>, ProbeError> {
        let mut group_of: Vec<Option<u32>> = vec![None; n as usize];
        let mut groups = 0;
        while let Some(pivot) = group_of.iter().position(Option::is_none) {
            group_of[pivot] = Some(groups);
            for needle in pivot as u32 + 1..n {
                let g = &mut group_of[needle as usize];
                if g.is_none() && self.contends(pivot as u32, needle).await? {
                    *g = Some(groups);
                }
            }
            groups += 1;
        }
        Ok(group_of
            .into_iter()
            .map(|g| g.expect("every zone grouped"))
            .collect())
    }

    /// Whether I/O to `pivot` and `needle` at once takes `threshold` times longer than alone.
    async fn contends(&mut self, pivot: u32, needle: u32) -> Result<bool, ProbeError> {
        self.pairs += 1;
        let t = match self.cfg.mode {
            ProbeMode::Read => {
                self.fill(pivot, needle).await?;
                self.fill(needle, pivot).await?;
                let (span, reads) = (self.cfg.read_span_bytes, self.cfg.reads);
                let needle_reads = Timed::Read { needle, reads };
                if self.alone.is_none() {
                    let alone = timed_beside(self.io, None, span, needle_reads).await?;
                    self.bytes_read += reads as u64 * PROBE_IO_BYTES;
                    self.alone = Some(alone.mean);
                }
                let b = timed_beside(self.io, Some(pivot), span, needle_reads).await?;
                self.bytes_read += (reads as u64 + b.pivot_reads) * PROBE_IO_BYTES;
                b.mean
            }
            ProbeMode::Write => {
                let bytes = self.cfg.write_bytes.unwrap_or(self.zone_capacity);
                if self.alone.is_none() {
                    let alone = self.write_zones(&[pivot], bytes).await?;
                    self.alone = Some(alone);
                }
                self.write_zones(&[pivot, needle], bytes).await?
            }
        };
        let alone = self.alone.expect("timed alone first").as_ns();
        if alone == 0 {
            return Err(ProbeError::Invalid(
                "I/O takes no time on this backend: there is nothing to time".into(),
            ));
        }
        Ok(t.as_ns() as u128 * 100 > self.cfg.threshold_pct as u128 * alone as u128)
    }

    /// Write `bytes` to each of `zones` at once, 192 KiB at a time, then reset them. The time
    /// until the last write completed.
    async fn write_zones(&mut self, zones: &[u32], bytes: u64) -> Result<SimDuration, ProbeError> {
        let io = self.io;
        let start = io.sim().now();
        let tasks: Vec<_> = zones
            .iter()
            .map(|&z| {
                let io = io.clone();
                io.sim().clone().spawn(async move {
                    write_from_start(&*io, z, bytes).await?;
                    Ok::<SimInstant, IoError>(io.sim().now())
                })
            })
            .collect();
        let mut end = start;
        let mut failed = None;
        for (&z, task) in zones.iter().zip(tasks) {
            match task.await {
                Ok(at) => end = end.max(at),
                Err(e) => failed = failed.or(Some(e)),
            }
            self.bytes_written += bytes;
            io.zone_action(z, ZoneAction::Reset).await?;
        }
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(end.since(start)),
        }
    }

    /// Give zone `z` the read span of data (once). A filled zone stays active (partly
    /// written): at the device's active limit the filled zones but `keep` are reset first
    /// (filled again when needed).
    async fn fill(&mut self, z: u32, keep: u32) -> Result<(), ProbeError> {
        if self.filled[z as usize] {
            return Ok(());
        }
        let (_, mar) = self.io.zone_limits();
        let active = self.filled.iter().filter(|&&f| f).count() as u64;
        if mar != u32::MAX && active + 1 > mar as u64 {
            for other in 0..self.filled.len() {
                if other != keep as usize && std::mem::take(&mut self.filled[other]) {
                    self.io.zone_action(other as u32, ZoneAction::Reset).await?;
                }
            }
        }
        self.filled[z as usize] = true;
        write_from_start(&**self.io, z, self.cfg.read_span_bytes).await?;
        self.bytes_written += self.cfg.read_span_bytes;
        Ok(())
    }

    /// Reset every zone the read probe filled.
    async fn reset_filled(&mut self) -> Result<(), IoError> {
        for z in 0..self.filled.len() {
            if std::mem::take(&mut self.filled[z]) {
                self.io.zone_action(z as u32, ZoneAction::Reset).await?;
            }
        }
        Ok(())
    }
}

/// Write `bytes` to empty zone `z` from its start, one probe I/O at a time.
async fn write_from_start<B: ZonedBackend>(io: &B, z: u32, bytes: u64) -> Result<(), IoError> {
    let data = vec![0x5au8; PROBE_IO_BYTES as usize];
    let base = z as u64 * io.zone_bytes();
    let mut off = 0;
    while off < bytes {
        let len = PROBE_IO_BYTES.min(bytes - off);
        io.write(base + off, &data[..len as usize]).await?;
        off += len;
    }
    Ok(())
}

/// The smallest `d` with every zone in the group of `zone % d` and the first `d` zones in
/// `d` different groups.
fn period_of(group_of: &[u32]) -> Option<u32> {
    (1..=group_of.len()).find_map(|d| {
        let distinct = {
            let mut g: Vec<u32> = group_of[..d].to_vec();
            g.sort_unstable();
            g.dedup();
            g.len() == d
        };
        let repeats = group_of
            .iter()
            .enumerate()
            .all(|(z, &g)| g == group_of[z % d]);
        (distinct && repeats).then_some(d as u32)
    })
}

#[cfg(test)]
mod tests {
    use super::period_of;

    #[test]
    fn a_period_is_found_only_where_the_groups_repeat() {
        assert_eq!(period_of(&[0, 1, 2, 0, 1, 2, 0]), Some(3));
        assert_eq!(period_of(&[0, 0, 0, 0]), Some(1));
        assert_eq!(period_of(&[0, 1, 2, 3]), Some(4));
        assert_eq!(period_of(&[0, 1, 1, 0]), None);
        assert_eq!(period_of(&[0, 1, 0, 0]), None);
    }
}
