//! ZNS+ zone_compaction (vendor opcode 81h, OSDI'21 §3.2.1) and identify_mapping (86h, §3.2).
//!
//! zone_compaction: copy the data of each source LBA to its destination LBA inside the
//! device. Wire form (znslab's, the paper gives none; `docs/znsplus.md`): CDW10-11 the
//! destination zone's ZSLBA, CDW12[15:0] the number of pairs - 1 (at most 512 pairs); the
//! data buffer holds 512 u64 source LBAs, then 512 u64 destination LBAs (8 KiB).
//!
//! Validate, in this order, changing nothing on failure: 1-512 pairs (Invalid Field); the
//! ZSLBA in the namespace (LBA Out of Range) and a zone start (Invalid Field); every source in
//! the namespace and written (LBA Out of Range), not in an Offline zone (Zone Is Offline);
//! every destination in the zone (Invalid Field); sources distinct, destinations distinct, no
//! source a destination (Invalid Field); the zone writable (Full, Read Only, Offline) and not
//! TL-open (Invalid Zone Operation Request); the
//! destinations, sorted, dense from the write pointer (Zone Invalid Write) and within the
//! capacity (Zone Boundary Error); open and active resources, last, as a write. Apply: the
//! design copies the bytes; the write pointer moves past the last destination, the zone
//! opens implicitly and becomes Full at capacity, as after a write of that length.
//!
//! Copy (19h, NVMe's Simple Copy), on the designs that copy inside themselves: source ranges
//! (format 0) copied to consecutive LBAs from SDLBA, which must be the zone's write pointer.
//! Validate: 1 to 128 ranges, each at most 512 blocks, 512 in all (Command Size Limit
//! Exceeded past a limit; Identify's MSRC, MSSRL and MCL say them), then as a zone_compaction
//! whose pairs are the ranges' blocks in order (a block may be copied twice).
//!
//! identify_mapping: which chip holds a logical chunk, as bit fields of the LBA (Fig. 1):
//! {u32 version = 1, u32 LBA bytes, u8 log2 chunk LBAs, u8 chip-ID shift, u8 chip-ID bits,
//! u8 FCG-ID shift, u8 FCG-ID bits, u8 stripe bits, u16 0, u32 dies, u32 dies per zone} in a
//! 4 KiB buffer. Needs power-of-two zone size, dies per zone and die groups (Invalid Opcode
//! otherwise: the host then allocates without knowing chips).

use sim::SimInstant;

use crate::controller::Controller;
use crate::design::Compaction;
use crate::status::Status;
use crate::zone::ZoneState;

/// Pairs one zone_compaction takes at most (the artifact's IOUB_MAX_IM_CNT).
pub const MAX_COMPACTION_PAIRS: usize = 512;
/// Copy (19h) on a design with in-device copies: source ranges at most (Identify MSRC + 1),
/// blocks in one range (MSSRL) and in all (MCL), one zone_compaction's worth.
pub const MAX_COPY_RANGES: usize = 128;
pub const MAX_COPY_BLOCKS: u64 = MAX_COMPACTION_PAIRS as u64;
/// Bytes of a zone_compaction's data buffer: 512 sources then 512 destinations, u64 each.
pub const COMPACTION_PAYLOAD_BYTES: usize = MAX_COMPACTION_PAIRS * 16;
/// Bytes identify_mapping returns.
pub const MAPPING_BYTES: usize = 4096;

/// The data buffer of a zone_compaction carrying `pairs`.
pub fn compaction_payload(pairs: &[(u64, u64)]) -> Vec<u8> {
    let mut buf = vec![0u8; COMPACTION_PAYLOAD_BYTES];
    for (i, &(src, dst)) in pairs.iter().take(MAX_COMPACTION_PAIRS).enumerate() {
        buf[i * 8..i * 8 + 8].copy_from_slice(&src.to_le_bytes());
        let d = (MAX_COMPACTION_PAIRS + i) * 8;
        buf[d..d + 8].copy_from_slice(&dst.to_le_bytes());
    }
    buf
}

/// The first `count` pairs of a zone_compaction's data buffer; None when it is too short.
pub fn parse_compaction_payload(buf: &[u8], count: usize) -> Option<Vec<(u64, u64)>> {
    if buf.len() < COMPACTION_PAYLOAD_BYTES || count > MAX_COMPACTION_PAIRS {
        return None;
    }
    let word = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8"));
    Some(
        (0..count)
            .map(|i| (word(i), word(MAX_COMPACTION_PAIRS + i)))
            .collect(),
    )
}

/// identify_mapping's answer, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkMapping {
    pub lba_bytes: u32,
    pub chunk_lbas_log2: u8,
    pub chip_id_shift: u8,
    pub chip_id_bits: u8,
    pub fcg_id_shift: u8,
    pub fcg_id_bits: u8,
    pub stripe_bits: u8,
    pub dies: u32,
    pub dies_per_zone: u32,
}

impl ChunkMapping {
    /// The (flash chip group, chip) of an LBA: equal pairs are the same chip.
    pub fn chip_of(&self, lba: u64) -> (u64, u64) {
        let field = |shift: u8, bits: u8| (lba >> shift) & ((1u64 << bits) - 1);
        (
            field(self.fcg_id_shift, self.fcg_id_bits),
            field(self.chip_id_shift, self.chip_id_bits),
        )
    }

    pub fn parse(buf: &[u8]) -> Option<ChunkMapping> {
        let u32_at = |i: usize| -> Option<u32> {
            Some(u32::from_le_bytes(buf.get(i..i + 4)?.try_into().ok()?))
        };
        if u32_at(0)? != 1 {
            return None;
        }
        Some(ChunkMapping {
            lba_bytes: u32_at(4)?,
            chunk_lbas_log2: *buf.get(8)?,
            chip_id_shift: *buf.get(9)?,
            chip_id_bits: *buf.get(10)?,
            fcg_id_shift: *buf.get(11)?,
            fcg_id_bits: *buf.get(12)?,
            stripe_bits: *buf.get(13)?,
            dies: u32_at(16)?,
            dies_per_zone: u32_at(20)?,
        })
    }

    fn encode(&self, buf: &mut [u8]) {
        buf[..MAPPING_BYTES].fill(0);
        buf[0..4].copy_from_slice(&1u32.to_le_bytes());
        buf[4..8].copy_from_slice(&self.lba_bytes.to_le_bytes());
        buf[8] = self.chunk_lbas_log2;
        buf[9] = self.chip_id_shift;
        buf[10] = self.chip_id_bits;
        buf[11] = self.fcg_id_shift;
        buf[12] = self.fcg_id_bits;
        buf[13] = self.stripe_bits;
        buf[16..20].copy_from_slice(&self.dies.to_le_bytes());
        buf[20..24].copy_from_slice(&self.dies_per_zone.to_le_bytes());
    }
}

/// What validation decided: the zone, the pairs sorted by destination, and the zone an
/// implicit open would close.
type CompactionPlan = (usize, Vec<(u64, u64)>, Option<usize>);

fn log2_exact(v: u64) -> Option<u8> {
    v.is_power_of_two().then(|| v.trailing_zeros() as u8)
}

impl Controller {
    /// The chunk → chip mapping of this device, when its fields are powers of two.
    pub fn chunk_mapping(&self) -> Option<ChunkMapping> {
        let l = &self.layout;
        let chunk_lbas = l.geometry.unit_bytes / l.lba_bytes;
        let dies = l.geometry.channels * l.geometry.dies_per_channel;
        let groups = (dies / l.dies_per_zone.max(1)) as u64;
        let chunk = log2_exact(chunk_lbas)?;
        let chip_bits = log2_exact(l.dies_per_zone as u64)?;
        let zone_bits = log2_exact(l.zone_size_lbas)?;
        let fcg_bits = log2_exact(groups)?;
        let stripe_bits = zone_bits.checked_sub(chunk + chip_bits)?;
        Some(ChunkMapping {
            lba_bytes: l.lba_bytes as u32,
            chunk_lbas_log2: chunk,
            chip_id_shift: chunk,
            chip_id_bits: chip_bits,
            fcg_id_shift: zone_bits,
            fcg_id_bits: fcg_bits,
            stripe_bits,
            dies,
            dies_per_zone: l.dies_per_zone,
        })
    }

    pub(crate) fn identify_mapping(
        &mut self,
        ready: SimInstant,
        data: &mut [u8],
    ) -> Result<(u64, SimInstant), Status> {
        if data.len() < MAPPING_BYTES {
            return Err(Status::INVALID_FIELD);
        }
        let map = self.chunk_mapping().ok_or(Status::INVALID_OPCODE)?;
        map.encode(data);
        Ok((0, ready))
    }

    pub(crate) fn copy(
        &mut self,
        ready: SimInstant,
        sdlba: u64,
        ranges: &[(u64, u32)],
    ) -> Result<(u64, SimInstant), Status> {
        if ranges.is_empty() || ranges.iter().any(|r| r.1 == 0) {
            return Err(Status::INVALID_FIELD);
        }
        let total: u64 = ranges.iter().map(|r| r.1 as u64).sum();
        if ranges.len() > MAX_COPY_RANGES
            || ranges.iter().any(|r| r.1 as u64 > MAX_COPY_BLOCKS)
            || total > MAX_COPY_BLOCKS
        {
            return Err(Status::COMMAND_SIZE_LIMIT_EXCEEDED);
        }
        if sdlba >= self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        let mut pairs = Vec::with_capacity(total as usize);
        for &(slba, nlb) in ranges {
            for i in 0..nlb as u64 {
                let src = slba.checked_add(i).ok_or(Status::LBA_OUT_OF_RANGE)?;
                pairs.push((src, sdlba + pairs.len() as u64));
            }
        }
        let zslba = self.zones[self.zone_index(sdlba)].zslba;
        let r = self.compact(ready, zslba, &pairs, false);
        if r.is_ok() {
            self.counters.copies += 1;
        }
        r
    }

    pub(crate) fn zone_compaction(
        &mut self,
        ready: SimInstant,
        zslba: u64,
        pairs: &[(u64, u64)],
    ) -> Result<(u64, SimInstant), Status> {
        self.compact(ready, zslba, pairs, true)
    }

    /// zone_compaction, or a Copy's blocks (whose sources may repeat).
    fn compact(
        &mut self,
        ready: SimInstant,
        zslba: u64,
        pairs: &[(u64, u64)],
        distinct_sources: bool,
    ) -> Result<(u64, SimInstant), Status> {
        let (zi, sorted, victim) = self.validate_compaction(zslba, pairs, distinct_sources)?;
        let start = self.zones[zi].wp;
        let c = Compaction {
            zone: zi,
            start,
            pairs: &sorted,
            ready,
        };
        let (design, mut m) = self.split();
        let done = design.compact_zone(&mut m, &c)?;
        self.take_open(zi, victim);
        if !self.zones[zi].state.is_open() {
            self.set_state(zi, ZoneState::ImplicitlyOpened);
        }
        let lba = self.layout.lba_bytes;
        let z = &mut self.zones[zi];
        z.wp = start + sorted.len() as u64;
        z.bytes = (z.wp - z.zslba) * lba;
        if z.wp == z.end_of_capacity() {
            self.set_state(zi, ZoneState::Full);
        }
        self.mark_zone_dirty(zi);
        if distinct_sources {
            self.counters.zone_compactions += 1;
        }
        self.counters.compaction_blocks += sorted.len() as u64;
        Ok((0, done))
    }

    /// Validate a zone_compaction (see the module doc); changes nothing. Returns the zone, the
    /// pairs sorted by destination and the zone an implicit open would close.
    fn validate_compaction(
        &self,
        zslba: u64,
        pairs: &[(u64, u64)],
        distinct_sources: bool,
    ) -> Result<CompactionPlan, Status> {
        if pairs.is_empty() || pairs.len() > MAX_COMPACTION_PAIRS {
            return Err(Status::INVALID_FIELD);
        }
        let nsze = self.layout.namespace_lbas();
        if zslba >= nsze {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        let zi = self.zone_index(zslba);
        let zone = self.zones[zi];
        if zone.zslba != zslba {
            return Err(Status::INVALID_FIELD);
        }
        for &(src, _) in pairs {
            if src >= nsze {
                return Err(Status::LBA_OUT_OF_RANGE);
            }
            let z = &self.zones[self.zone_index(src)];
            if z.state == ZoneState::Offline {
                return Err(Status::ZONE_OFFLINE);
            }
            if src >= z.wp {
                return Err(Status::LBA_OUT_OF_RANGE);
            }
        }
        let zone_end = zslba + self.layout.zone_size_lbas;
        if pairs.iter().any(|&(_, d)| d < zslba || d >= zone_end) {
            return Err(Status::INVALID_FIELD);
        }
        let mut sources: Vec<u64> = pairs.iter().map(|p| p.0).collect();
        sources.sort_unstable();
        let mut sorted = pairs.to_vec();
        sorted.sort_unstable_by_key(|p| p.1);
        let repeats = |v: &[u64]| v.windows(2).any(|w| w[0] == w[1]);
        let dests: Vec<u64> = sorted.iter().map(|p| p.1).collect();
        if (distinct_sources && repeats(&sources))
            || repeats(&dests)
            || sources.iter().any(|s| dests.binary_search(s).is_ok())
        {
            return Err(Status::INVALID_FIELD);
        }
        self.check_writable(&zone, zone.wp)?;
        if zone.is_tl_open() {
            // A TL-open zone takes sparse sequential host writes only.
            return Err(Status::INVALID_ZONE_OPERATION);
        }
        if !zone.bytes.is_multiple_of(self.layout.lba_bytes)
            || dests
                .iter()
                .enumerate()
                .any(|(i, &d)| d != zone.wp + i as u64)
        {
            return Err(Status::ZONE_INVALID_WRITE);
        }
        if zone.wp + pairs.len() as u64 > zone.end_of_capacity() {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        let victim = self.check_open(zi)?;
        Ok((zi, sorted, victim))
    }
}
