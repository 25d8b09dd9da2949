//! Segment and section accounting: the SIT (each segment's current and checkpointed valid
//! maps), the SSA (each block's owner: node id and offset in it), the section states
//! (free / open by a log / used (dirty or full) / prefree), pre-invalid blocks, and the
//! decisions taken on them: a free section for a log, the greedy GC victim, threaded
//! logging's victim and hybrid segment recycling's choice. Decisions are pure.

use std::collections::BTreeSet;

use super::layout::{Geometry, SitEntry};
use super::node::{Blk, Nid};
use super::{LfsConfig, LogType, BLOCKS_PER_SEG};

/// A segment's SIT entry in memory.
#[derive(Clone, Debug)]
pub struct Seg {
    pub cur: [u64; 8],
    pub ckpt: [u64; 8],
    pub valid: u32,
    pub ty: LogType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecState {
    Free,
    /// The current section of a log.
    Open(LogType),
    /// Written, not open: dirty (some blocks invalid) or full.
    Used,
    /// No valid block; free (and reset) after the next checkpoint.
    Prefree,
}

#[derive(Clone, Debug)]
pub struct Sec {
    pub state: SecState,
    pub valid: u32,
    pub ty: LogType,
}

/// The SIT, SSA and section table.
pub struct Sit {
    pub geo: Geometry,
    pub segs: Vec<Seg>,
    pub secs: Vec<Sec>,
    /// SSA: owner of each block, by segment-major index.
    pub owners: Vec<(Nid, u16)>,
    pub dirty_sit: BTreeSet<u32>,
    pub dirty_ssa: BTreeSet<u32>,
    /// Blocks valid at the last checkpoint and invalid now (§3.3.2's `uc_blocks`).
    pub uc_blocks: u64,
    pub valid_total: u64,
    /// The section foreground GC is emptying: no log may take it meanwhile.
    pub gc_victim: Option<u32>,
}

impl Sit {
    pub fn new(geo: Geometry) -> Sit {
        Sit {
            geo,
            segs: vec![
                Seg {
                    cur: [0; 8],
                    ckpt: [0; 8],
                    valid: 0,
                    ty: LogType::WarmData,
                };
                geo.main_segs as usize
            ],
            secs: vec![
                Sec {
                    state: SecState::Free,
                    valid: 0,
                    ty: LogType::WarmData,
                };
                geo.zones as usize
            ],
            owners: vec![(0, 0); geo.main_segs as usize * BLOCKS_PER_SEG as usize],
            dirty_sit: BTreeSet::new(),
            dirty_ssa: BTreeSet::new(),
            uc_blocks: 0,
            valid_total: 0,
            gc_victim: None,
        }
    }

    fn at(&self, b: Blk) -> (usize, usize) {
        (
            self.geo.seg_of(b) as usize,
            (self.geo.off_of(b) % BLOCKS_PER_SEG) as usize,
        )
    }
    fn owner_index(&self, b: Blk) -> usize {
        let (s, o) = self.at(b);
        s * BLOCKS_PER_SEG as usize + o
    }
    pub fn in_main(&self, b: Blk) -> bool {
        self.geo.sec_of(b) < self.geo.zones && self.geo.off_of(b) < self.geo.sec_blocks
    }
    pub fn is_valid(&self, b: Blk) -> bool {
        let (s, o) = self.at(b);
        self.segs[s].cur[o / 64] >> (o % 64) & 1 == 1
    }
    /// Free for threaded logging: neither valid now nor at the last checkpoint.
    pub fn is_hole(&self, b: Blk) -> bool {
        let (s, o) = self.at(b);
        (self.segs[s].cur[o / 64] | self.segs[s].ckpt[o / 64]) >> (o % 64) & 1 == 0
    }
    pub fn owner(&self, b: Blk) -> (Nid, u16) {
        self.owners[self.owner_index(b)]
    }

    /// Block `b` now holds what `owner` points to.
    pub fn set_valid(&mut self, b: Blk, owner: (Nid, u16)) {
        let (s, o) = self.at(b);
        let seg = &mut self.segs[s];
        if seg.cur[o / 64] >> (o % 64) & 1 == 0 {
            seg.cur[o / 64] |= 1 << (o % 64);
            seg.valid += 1;
            self.secs[s / self.geo.segs_per_sec as usize].valid += 1;
            self.valid_total += 1;
        }
        let i = self.owner_index(b);
        self.owners[i] = owner;
        self.dirty_sit.insert(s as u32);
        self.dirty_ssa.insert(s as u32);
    }

    /// Block `b` no longer holds anything live.
    pub fn invalidate(&mut self, b: Blk) {
        let (s, o) = self.at(b);
        let seg = &mut self.segs[s];
        if seg.cur[o / 64] >> (o % 64) & 1 == 0 {
            return;
        }
        seg.cur[o / 64] &= !(1 << (o % 64));
        seg.valid -= 1;
        if seg.ckpt[o / 64] >> (o % 64) & 1 == 1 {
            self.uc_blocks += 1;
        }
        self.valid_total -= 1;
        self.dirty_sit.insert(s as u32);
        let sec = &mut self.secs[s / self.geo.segs_per_sec as usize];
        sec.valid -= 1;
        if sec.valid == 0 && sec.state == SecState::Used {
            sec.state = SecState::Prefree;
        }
    }

    /// A log leaves section `sec`.
    pub fn close_sec(&mut self, sec: u32) {
        let s = &mut self.secs[sec as usize];
        s.state = if s.valid == 0 {
            SecState::Prefree
        } else {
            SecState::Used
        };
    }

    /// Log `ty` takes section `sec`.
    pub fn open_sec(&mut self, sec: u32, ty: LogType) {
        self.secs[sec as usize].state = SecState::Open(ty);
        self.secs[sec as usize].ty = ty;
        let sps = self.geo.segs_per_sec;
        for s in sec * sps..(sec + 1) * sps {
            self.segs[s as usize].ty = ty;
            self.dirty_sit.insert(s);
        }
    }

    pub fn free_secs(&self) -> u32 {
        self.secs
            .iter()
            .filter(|s| s.state == SecState::Free)
            .count() as u32
    }
    pub fn prefree_secs(&self) -> Vec<u32> {
        (0..self.geo.zones)
            .filter(|&s| self.secs[s as usize].state == SecState::Prefree)
            .collect()
    }
    /// The lowest free section at or after `hint`, wrapping (F2FS's `get_new_segment`).
    pub fn pick_free(&self, hint: u32) -> Option<u32> {
        let n = self.geo.zones;
        (0..n)
            .map(|k| (hint + k) % n)
            .find(|&s| self.secs[s as usize].state == SecState::Free)
    }

    /// Blocks of section `sec` valid now or at the last checkpoint (threaded logging's
    /// "ckpt_valid").
    pub fn ckpt_valid(&self, sec: u32) -> u32 {
        let sps = self.geo.segs_per_sec;
        (sec * sps..(sec + 1) * sps)
            .map(|s| {
                let g = &self.segs[s as usize];
                (0..8)
                    .map(|w| (g.cur[w] | g.ckpt[w]).count_ones())
                    .sum::<u32>()
            })
            .sum()
    }

    /// Greedy GC victim: the used section with the fewest valid blocks (not all valid).
    pub fn greedy_victim(&self) -> Option<u32> {
        (0..self.geo.zones)
            .filter(|&s| {
                let sec = &self.secs[s as usize];
                sec.state == SecState::Used && sec.valid < self.geo.sec_blocks
            })
            .min_by_key(|&s| (self.secs[s as usize].valid, s))
    }

    /// Threaded logging's victim for log `ty`: a used section of that type with holes, the
    /// fewest valid-or-pre-invalid blocks (`get_ssr_segment`).
    pub fn ssr_victim(&self, ty: LogType) -> Option<(u32, u32)> {
        (0..self.geo.zones)
            .filter(|&s| {
                let sec = &self.secs[s as usize];
                sec.state == SecState::Used && sec.ty == ty && self.gc_victim != Some(s)
            })
            .map(|s| (s, self.ckpt_valid(s)))
            .filter(|&(_, cv)| cv < self.geo.sec_blocks)
            .min_by_key(|&(s, cv)| (cv, s))
    }

    /// The first hole of section `sec` at or after offset `from`.
    pub fn next_hole(&self, sec: u32, from: u32) -> Option<u32> {
        (from..self.geo.sec_blocks).find(|&o| self.is_hole(self.geo.blk(sec, o)))
    }

    /// TL_open's bitmap of section `sec`: 1 = valid now or at the last checkpoint.
    pub fn tl_bitmap(&self, sec: u32) -> Vec<u8> {
        let mut map = vec![0u8; (self.geo.sec_blocks as usize).div_ceil(8)];
        for o in 0..self.geo.sec_blocks {
            if !self.is_hole(self.geo.blk(sec, o)) {
                map[o as usize / 8] |= 1 << (o % 8);
            }
        }
        map
    }

    /// A checkpoint is written: the current maps become the checkpointed ones; prefree
    /// sections become free (returned, for their zones to be reset).
    pub fn checkpointed(&mut self) -> Vec<u32> {
        for g in &mut self.segs {
            g.ckpt = g.cur;
        }
        self.uc_blocks = 0;
        let pre = self.prefree_secs();
        for &s in &pre {
            self.secs[s as usize].state = SecState::Free;
        }
        pre
    }

    pub fn sit_entry(&self, seg: u32) -> SitEntry {
        let g = &self.segs[seg as usize];
        let mut map = [0u8; 64];
        for (w, word) in g.cur.iter().enumerate() {
            map[8 * w..8 * w + 8].copy_from_slice(&word.to_le_bytes());
        }
        SitEntry {
            valid: g.valid as u16,
            ty: g.ty as u8,
            map,
        }
    }

    /// Load segment `seg` from its SIT entry (mount): current and checkpointed maps alike.
    pub fn load_entry(&mut self, seg: u32, e: &SitEntry) {
        let g = &mut self.segs[seg as usize];
        let sec = seg / self.geo.segs_per_sec;
        self.secs[sec as usize].valid -= g.valid;
        self.valid_total -= g.valid as u64;
        for w in 0..8 {
            g.cur[w] = u64::from_le_bytes(e.map[8 * w..8 * w + 8].try_into().unwrap());
        }
        g.ckpt = g.cur;
        g.valid = g.cur.iter().map(|w| w.count_ones()).sum();
        g.ty = LogType::from_index(e.ty).unwrap_or(LogType::WarmData);
        self.secs[sec as usize].valid += g.valid;
        self.secs[sec as usize].ty = g.ty;
        self.valid_total += g.valid as u64;
    }
}

/// Hybrid segment recycling's decision (`get_new_ssr_segment`, seed-specs A.1.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HsrChoice {
    pub threaded: bool,
    pub cost_tl: u64,
    pub cost_sc: u64,
}

/// `ssr_ckpt_valid`: valid + pre-invalid blocks of the threaded-logging candidate (None: no
/// candidate); `lfs`: valid blocks of the greedy victim and whether it is a data section;
/// `forced`: free sections at or below `node + 2·dent + imeta + reserved/2`.
pub fn hsr_choice(
    cfg: &LfsConfig,
    ssr_ckpt_valid: Option<u64>,
    lfs: Option<(u64, bool)>,
    forced: bool,
) -> HsrChoice {
    let cost_tl = ssr_ckpt_valid.map_or(u64::MAX, |v| v * cfg.tl_cost_pct / 100);
    let cost_sc = lfs.map_or(u64::MAX, |(v, data)| {
        v * (100 + cfg.alpha_meta_pct) / 100
            + if data {
                v * cfg.alpha_node_pct / 100
            } else {
                0
            }
    });
    let threaded = ssr_ckpt_valid.is_some() && (forced || cost_tl < cost_sc);
    HsrChoice {
        threaded,
        cost_tl,
        cost_sc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsr_follows_the_artifacts_cost_model() {
        let cfg = LfsConfig::zns_plus();
        // TL candidate with 1000 valid+pre-invalid: 900. Data victim with 760 valid:
        // 760·102/100 + 760·18/100 = 775 + 136 = 911 → threaded logging.
        let c = hsr_choice(&cfg, Some(1000), Some((760, true)), false);
        assert_eq!((c.cost_tl, c.cost_sc, c.threaded), (900, 911, true));
        // Node victim with 760: 775 → compaction.
        let c = hsr_choice(&cfg, Some(1000), Some((760, false)), false);
        assert_eq!((c.cost_sc, c.threaded), (775, false));
        // Forced threaded logging whatever the costs; none without a candidate.
        assert!(hsr_choice(&cfg, Some(1000), Some((1, false)), true).threaded);
        assert!(!hsr_choice(&cfg, None, Some((1, false)), true).threaded);
    }

    #[test]
    fn pre_invalid_blocks_and_prefree_sections() {
        let geo = Geometry::new(16, 1024, 1024, Some(2), None).unwrap();
        let mut sit = Sit::new(geo);
        sit.open_sec(1, LogType::WarmData);
        let b = geo.blk(1, 3);
        sit.set_valid(b, (5, 0));
        sit.set_valid(geo.blk(1, 600), (5, 1));
        assert_eq!((sit.secs[1].valid, sit.ckpt_valid(1)), (2, 2));
        sit.close_sec(1);
        assert_eq!(sit.checkpointed(), Vec::<u32>::new());
        sit.invalidate(b);
        assert_eq!((sit.uc_blocks, sit.ckpt_valid(1)), (1, 2));
        assert!(!sit.is_hole(b) && sit.is_hole(geo.blk(1, 4)));
        assert_eq!(sit.next_hole(1, 3), Some(4));
        assert_eq!(sit.ssr_victim(LogType::WarmData), Some((1, 2)));
        assert_eq!(sit.greedy_victim(), Some(1));
        sit.invalidate(geo.blk(1, 600));
        assert_eq!(sit.secs[1].state, SecState::Prefree);
        assert_eq!(sit.checkpointed(), vec![1]);
        assert_eq!(sit.secs[1].state, SecState::Free);
        assert!(sit.is_hole(b));
    }
}
