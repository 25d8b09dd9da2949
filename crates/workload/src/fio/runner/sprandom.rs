//! SanDisk random preconditioning (`sprandom`), as fio's sprandom.c: the job writes the
//! device's physical capacity (its size plus `spr_op` over-provisioning) once, region by
//! region (`spr_num_regions` equal regions of that capacity). Fresh offsets come from a
//! full-period walk over the job's blocks (fio's LFSR: every block once); each write is kept,
//! with the probability of its region's invalid fraction, in a two-phase buffer whose offsets
//! are written again at the start of the next region (with `spr_cs`, at the end of it), so the
//! regions end with the distribution of valid data a greedy garbage collector leaves at
//! steady state (Desnoyers' model: validity times the share of blocks at that validity is
//! constant, write amplification about 0.5 / op + 0.7). The job ends when the regions or the
//! fresh offsets run out.

use sim::Rng;

use super::JobState;
use crate::fio::options::SpRandom;

/// fio's PCT_PRECISION: invalid fractions in 1/10000.
const PCT_PRECISION: u64 = 10_000;

/// sprandom_physical_size: the logical size plus its over-provisioning, aligned down to bs.
pub(super) fn physical_size(op: f64, logical: u64, align: u64) -> u64 {
    let size = logical + (logical as f64 * op).ceil() as u64;
    size - size % align.max(1)
}

/// linspace: `num` values from `start` to `end` inclusive.
fn linspace(start: f64, end: f64, num: usize) -> Vec<f64> {
    match num {
        0 => Vec::new(),
        1 => vec![start],
        _ => {
            let step = (end - start) / (num as f64 - 1.0);
            (0..num).map(|i| start + i as f64 * step).collect()
        }
    }
}

/// linear_interp: y at `x` on the polyline, the end values outside it.
fn linear_interp(x: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return 0.0;
    }
    if n == 1 || x <= xs[0] {
        return ys[0];
    }
    if x >= xs[n - 1] {
        return ys[n - 1];
    }
    for i in 0..n - 1 {
        if x >= xs[i] && x <= xs[i + 1] {
            if (xs[i + 1] - xs[i]).abs() < 1e-9 {
                return ys[i];
            }
            return ys[i] + (ys[i + 1] - ys[i]) * ((x - xs[i]) / (xs[i + 1] - xs[i]));
        }
    }
    0.0
}

/// compute_validity_dist: each region's expected share of valid data, lowest first.
pub(super) fn validity_dist(regions: usize, op: f64) -> Vec<f64> {
    let waf = 0.5 / op + 0.7;
    let gc_validity = 1.0 - 1.0 / waf;
    let validity = linspace(1.0, gc_validity, regions);
    let mut acc = 0.0;
    let xs: Vec<f64> = validity
        .iter()
        .map(|v| {
            acc += 1.0 / v;
            acc
        })
        .collect();
    let (first, last) = (xs[0], xs[regions - 1]);
    let mut out: Vec<f64> = linspace(first, last, regions)
        .into_iter()
        .map(|x| linear_interp(x, &xs, &validity))
        .collect();
    out.reverse();
    out
}

/// estimate_inv_capacity: the invalidations a region may hold, six sigmas over the mean.
fn inv_capacity(count: u64, validity: f64) -> u64 {
    let sigma = (count as f64 * validity * (1.0 - validity)).sqrt();
    (count as f64 * (1.0 - validity) + 6.0 * sigma).ceil() as u64
}

/// pcbuf.h's two-phase circular buffer: pushes are staged until committed, pops see only
/// committed values.
struct PcBuf {
    commit_head: usize,
    staging_head: usize,
    read_tail: usize,
    buf: Vec<u64>,
}

impl PcBuf {
    fn new(capacity: usize) -> PcBuf {
        PcBuf {
            commit_head: 0,
            staging_head: 0,
            read_tail: 0,
            buf: vec![0; capacity],
        }
    }
    fn cap(&self) -> usize {
        self.buf.len()
    }
    fn used(&self) -> usize {
        let c = self.cap();
        (self.commit_head + c - self.read_tail) % c + (self.staging_head + c - self.commit_head) % c
    }
    fn space_available(&self) -> bool {
        self.used() < self.cap() - 1
    }
    fn push_staged(&mut self, v: u64) {
        self.buf[self.staging_head] = v;
        self.staging_head = (self.staging_head + 1) % self.cap();
    }
    fn commit(&mut self) {
        self.commit_head = self.staging_head;
    }
    fn pop(&mut self) -> Option<u64> {
        if self.read_tail == self.commit_head {
            return None;
        }
        let v = self.buf[self.read_tail];
        self.read_tail = (self.read_tail + 1) % self.cap();
        Some(v)
    }
}

/// Every number below `n` once, in a seeded order (fio's LFSR walk): a full-period
/// linear congruential sequence on the next power of two, scrambled by a bijection, with the
/// values past `n` skipped. Constant memory whatever the device size.
struct BlockWalk {
    n: u64,
    bits: u32,
    mask: u64,
    state: u64,
    inc: u64,
    mul: u64,
    left: u64,
}

impl BlockWalk {
    fn new(n: u64, rng: &mut Rng) -> BlockWalk {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        BlockWalk {
            n,
            bits,
            mask,
            state: rng.next_u64() & mask,
            inc: (rng.next_u64() | 1) & mask,
            mul: rng.next_u64() | 1,
            left: n,
        }
    }

    /// A bijection of the `bits`-bit numbers.
    fn scramble(&self, mut x: u64) -> u64 {
        let s = self.bits / 2 + 1;
        x ^= x >> s;
        x = x.wrapping_mul(self.mul) & self.mask;
        x ^= x >> s;
        x
    }

    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        loop {
            // a = 5 (1 mod 4) and an odd increment: period 2^bits.
            self.state = self.state.wrapping_mul(5).wrapping_add(self.inc) & self.mask;
            let v = self.scramble(self.state);
            if v < self.n {
                self.left -= 1;
                return Some(v);
            }
        }
    }
}

/// fio's `struct sprandom_info` for one job.
pub(super) struct SpState {
    num_regions: u32,
    cache: bool,
    invalid_pct: Vec<u64>,
    buf: PcBuf,
    invalid_count: [u64; 2],
    current_region: u32,
    phase: usize,
    region_write_count: u64,
    writes_remaining: u64,
    walk: BlockWalk,
    rng: Rng,
}

impl SpState {
    /// sprandom_init and sprandom_setup for a job of `blocks` blocks of `bs` bytes; also
    /// the bytes the job writes (fio sets io_size to the physical size).
    pub(super) fn new(
        o: &SpRandom,
        blocks: u64,
        bs: u64,
        rng: &Rng,
    ) -> Result<(SpState, u64), String> {
        let logical = blocks * bs;
        let physical = physical_size(o.op, logical, bs);
        let validity = validity_dist(o.num_regions as usize, o.op);
        let invalid_pct = validity
            .iter()
            .map(|v| ((1.0 - v) * PCT_PRECISION as f64).round() as u64)
            .collect();
        let region_sz = physical / o.num_regions as u64;
        let region_write_count = region_sz / bs;
        if o.cache_bytes > 0 && o.cache_bytes > region_sz {
            return Err(format!(
                "spr_cs [{}] must be smaller than region_sz [{region_sz}] which means [{}] regions allowed (as fio requires)",
                o.cache_bytes,
                physical / o.cache_bytes
            ));
        }
        if region_write_count == 0 {
            return Err(format!(
                "{} regions leave less than one block of {bs} bytes per region",
                o.num_regions
            ));
        }
        let mut capacity = inv_capacity(region_write_count, validity[0]);
        if o.cache_bytes > 0 {
            capacity *= 2;
        }
        // fio's buffer of one region's invalidations (at least 2: one slot stays free).
        if capacity > 1 << 27 {
            return Err(format!(
                "{} regions of {region_sz} bytes need an invalidation buffer of {capacity} \
                 offsets; use more regions (spr_num_regions)",
                o.num_regions
            ));
        }
        let capacity = capacity.max(2) as usize;
        let mut rng_walk = rng.stream("sprandom.blocks");
        Ok((
            SpState {
                num_regions: o.num_regions,
                cache: o.cache_bytes > 0,
                invalid_pct,
                buf: PcBuf::new(capacity),
                invalid_count: [0; 2],
                current_region: 0,
                phase: 0,
                region_write_count,
                writes_remaining: region_write_count,
                walk: BlockWalk::new(blocks, &mut rng_walk),
                rng: rng.stream("sprandom.invalidate"),
            },
            physical,
        ))
    }

    /// sprandom_add_with_probability.
    fn add_with_probability(&mut self, block: u64, phase: usize) -> Result<(), String> {
        let v = self.rng.below(PCT_PRECISION + 1);
        // Past the last region (fio reads past its array there) nothing is invalidated.
        let pct = self
            .invalid_pct
            .get(self.current_region as usize)
            .copied()
            .unwrap_or(0);
        if v <= pct {
            if !self.buf.space_available() {
                return Err("sprandom's invalidation buffer is full (fio asserts here)".into());
            }
            self.buf.push_staged(block);
            self.invalid_count[phase] += 1;
        }
        Ok(())
    }

    /// sprandom_get_next_offset: the next block to write, `Ok(None)` when done.
    pub(super) fn next_block(&mut self) -> Result<Option<u64>, String> {
        let phase = self.phase;
        if !self.cache {
            // Replay the previous region's invalidations before moving on.
            if let Some(b) = self.buf.pop() {
                self.add_with_probability(b, phase ^ 1)?;
                return Ok(Some(b));
            }
        }
        if self.writes_remaining == 0 {
            if self.cache {
                if let Some(b) = self.buf.pop() {
                    self.add_with_probability(b, phase ^ 1)?;
                    return Ok(Some(b));
                }
            }
            if self.current_region >= self.num_regions {
                return Ok(None);
            }
            self.invalid_count[phase] = 0;
            self.current_region += 1;
            let phase = phase ^ 1;
            self.writes_remaining = self
                .region_write_count
                .saturating_sub(self.invalid_count[phase]);
            self.phase = phase;
            self.buf.commit();
        }
        let phase = self.phase;
        let Some(b) = self.walk.next() else {
            if self.cache {
                if let Some(b) = self.buf.pop() {
                    return Ok(Some(b));
                }
            }
            return Ok(None);
        };
        self.writes_remaining = self.writes_remaining.saturating_sub(1);
        self.add_with_probability(b, phase ^ 1)?;
        Ok(Some(b))
    }
}

impl JobState {
    /// The next sprandom write's LBA; `None` (the job done, or failed) when it has none.
    pub(super) fn sprandom_lba(&mut self) -> Option<u64> {
        let spr = self.spr.as_mut()?;
        match spr.next_block() {
            Ok(Some(b)) => Some(self.start + b * (self.spec.bs / self.g.lba_bytes)),
            Ok(None) => {
                self.done = true; // fio's td->done: every block written, the regions done
                None
            }
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_follows_desnoyers_model() {
        let v = validity_dist(100, 0.15);
        assert_eq!(v.len(), 100);
        // Lowest validity first: the greedy collector's, 1 - 1 / (0.5 / op + 0.7).
        let gc = 1.0 - 1.0 / (0.5 / 0.15 + 0.7);
        assert!((v[0] - gc).abs() < 1e-9, "{}", v[0]);
        assert!((v[99] - 1.0).abs() < 1e-9);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(physical_size(0.15, 4096 * 1000, 4096), 4096 * 1150);
    }

    #[test]
    fn the_walk_visits_every_block_once() {
        for n in [1u64, 2, 7, 1000, 4097] {
            let mut w = BlockWalk::new(n, &mut Rng::new(n));
            let mut seen: Vec<u64> = std::iter::from_fn(|| w.next()).collect();
            assert_eq!(seen.len() as u64, n);
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len() as u64, n);
            assert!(seen.iter().all(|b| *b < n));
        }
    }

    #[test]
    fn every_block_is_written_and_early_regions_are_rewritten_most() {
        // spr_cs delays the replays by a region; every block is written all the same.
        let o = SpRandom {
            enabled: true,
            num_regions: 10,
            op: 0.15,
            cache_bytes: 1 << 20,
            ..SpRandom::default()
        };
        let (mut s, _) = SpState::new(&o, 10_000, 4096, &Rng::new(2)).expect("ok");
        let mut seen = vec![false; 10_000];
        while let Some(b) = s.next_block().expect("room") {
            seen[b as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        let o = SpRandom {
            cache_bytes: 0,
            ..o
        };
        let blocks = 10_000;
        let (mut s, physical) = SpState::new(&o, blocks, 4096, &Rng::new(1)).expect("ok");
        let mut writes = Vec::new();
        while let Some(b) = s.next_block().expect("room") {
            writes.push(b);
        }
        let mut distinct = writes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len() as u64, blocks);
        // The physical capacity, give or take the randomness of the invalidations.
        let want = physical / 4096;
        let got = writes.len() as u64;
        assert!(got.abs_diff(want) < want / 20, "{got} writes for {want}");
        // Blocks first written early are overwritten most: the last writer of each block
        // leaves the first regions with the least valid data.
        let per_region = want as usize / 10;
        let mut last = vec![0usize; blocks as usize];
        for (i, b) in writes.iter().enumerate() {
            last[*b as usize] = i;
        }
        let valid_in = |r: usize| {
            (r * per_region..(r + 1) * per_region)
                .filter(|&i| i < writes.len() && last[writes[i] as usize] == i)
                .count()
        };
        assert!(
            valid_in(0) < valid_in(8),
            "{} vs {}",
            valid_in(0),
            valid_in(8)
        );
    }
}
