//! Geometry and on-media formats: sections (= zones) of 2 MiB segments, reserved and
//! overprovisioned sections (f2fs-tools' `get_best_overprovision`), and the metadata area:
//! superblock | checkpoint pack ×2 | SIT ×2 | NAT ×2 | SSA (seed-specs A.1.6), with F2FS's
//! entry sizes (NAT 9 B, 455 a block; SIT 74 B, 55 a block; SSA 7 B, 512 a block).

use super::node::{Blk, Nid};
use super::{BLOCK, BLOCKS_PER_SEG};

pub const NAT_PER_BLOCK: u32 = 455;
pub const SIT_PER_BLOCK: u32 = 55;
/// Entries the checkpoint's summary journals take before NAT/SIT blocks are written
/// (`NAT_JOURNAL_ENTRIES`, `SIT_JOURNAL_ENTRIES`).
pub const NAT_JOURNAL: usize = 38;
pub const SIT_JOURNAL: usize = 6;
/// Checkpoint pack: header, three data summaries (carrying the journals), footer.
pub const CP_PACK_BLOCKS: u64 = 5;
const MAGIC: u32 = 0xF2F5_2010;
/// Bytes of the checkpoint header the NAT and SIT version bitmaps may take.
const CP_BITMAP_BYTES: usize = 3800;

/// Where things are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub zones: u32,
    /// Zone size in blocks: the address stride of sections.
    pub zone_blocks: u32,
    /// Blocks used in each section (the zone capacity in whole segments).
    pub sec_blocks: u32,
    pub segs_per_sec: u32,
    pub main_segs: u32,
    pub reserved_secs: u32,
    /// Overprovisioned segments (reserved included).
    pub ovp_segs: u32,
    pub nat_blocks: u32,
    pub sit_blocks: u32,
}

/// f2fs-tools (2017) `get_best_overprovision`: the overprovision percentage that leaves the
/// most user space.
pub fn best_overprovision(main_segs: u32, segs_per_sec: u32) -> f64 {
    let (mut k, end, step) = if main_segs < 256 {
        (1000u32, 9500, 500)
    } else {
        (1, 1000, 1)
    };
    // A volume too small for any leaves the largest percentage (the caller then finds the
    // reserve does not fit and says so), never a division by zero.
    let (mut best, mut best_space) = (end as f64 / 100.0, 0.0);
    while k <= end {
        let c = k as f64 / 100.0;
        let reserved = (2.0 * (100.0 / c + 1.0) + 6.0) * segs_per_sec as f64;
        let ovp = (main_segs as f64 - reserved) * c / 100.0;
        let space = main_segs as f64 - reserved - ovp;
        if best_space < space {
            best_space = space;
            best = c;
        }
        k += step;
    }
    best
}

impl Geometry {
    /// The geometry of `zones` zones of `zone_blocks` blocks, `cap_blocks` writable;
    /// `reserved`: reserved sections instead of f2fs-tools' choice.
    pub fn new(
        zones: u32,
        zone_blocks: u64,
        cap_blocks: u64,
        reserved: Option<u32>,
        ovp_pct: Option<f64>,
    ) -> Result<Geometry, String> {
        let segs_per_sec = (cap_blocks / BLOCKS_PER_SEG as u64) as u32;
        if segs_per_sec == 0 {
            return Err(format!(
                "zone capacity of {cap_blocks} blocks is less than one 2 MiB segment"
            ));
        }
        if zone_blocks > u32::MAX as u64 / 2 || zones as u64 * zone_blocks >= NULL_LIMIT {
            return Err("device too large for 32-bit block addresses".into());
        }
        let main_segs = zones * segs_per_sec;
        let c = match ovp_pct {
            Some(c) if (0.0..100.0).contains(&c) => c,
            Some(c) => return Err(format!("overprovision of {c} % is not in [0, 100)")),
            None => best_overprovision(main_segs, segs_per_sec),
        };
        let auto_reserved = ((2.0 * (100.0 / c + 1.0) + 6.0) * segs_per_sec as f64) as u32;
        let reserved_segs = match reserved {
            Some(r) => r * segs_per_sec,
            None => auto_reserved,
        };
        let reserved_secs = reserved_segs / segs_per_sec;
        if reserved_segs > main_segs {
            return Err(format!(
                "{reserved_secs} reserved sections exceed the {zones} zones"
            ));
        }
        if reserved_secs + 8 > zones {
            return Err(format!(
                "{zones} zones leave no room beside {reserved_secs} reserved sections and the six logs"
            ));
        }
        let ovp_segs = ((main_segs - reserved_segs) as f64 * c / 100.0) as u32 + reserved_segs;
        let sit_blocks = main_segs.div_ceil(SIT_PER_BLOCK);
        let main_blocks = main_segs as u64 * BLOCKS_PER_SEG as u64;
        let nat_blocks = ((main_blocks / NAT_PER_BLOCK as u64) as u32 + 1)
            .min((CP_BITMAP_BYTES * 8) as u32 - sit_blocks);
        Ok(Geometry {
            zones,
            zone_blocks: zone_blocks as u32,
            sec_blocks: segs_per_sec * BLOCKS_PER_SEG,
            segs_per_sec,
            main_segs,
            reserved_secs,
            ovp_segs,
            nat_blocks,
            sit_blocks,
        })
    }
    /// Blocks users may fill (F2FS's `user_block_count`).
    pub fn user_blocks(&self) -> u64 {
        (self.main_segs - self.ovp_segs.min(self.main_segs)) as u64 * BLOCKS_PER_SEG as u64
    }
    /// Node ids the NAT holds.
    pub fn max_nid(&self) -> Nid {
        self.nat_blocks * NAT_PER_BLOCK
    }
    pub fn blk(&self, sec: u32, off: u32) -> Blk {
        sec * self.zone_blocks + off
    }
    pub fn sec_of(&self, b: Blk) -> u32 {
        b / self.zone_blocks
    }
    pub fn off_of(&self, b: Blk) -> u32 {
        b % self.zone_blocks
    }
    pub fn seg_of(&self, b: Blk) -> u32 {
        self.sec_of(b) * self.segs_per_sec + self.off_of(b) / BLOCKS_PER_SEG
    }
    /// First block of segment `seg`.
    pub fn seg_start(&self, seg: u32) -> Blk {
        self.blk(
            seg / self.segs_per_sec,
            seg % self.segs_per_sec * BLOCKS_PER_SEG,
        )
    }
    // The metadata area.
    pub fn cp_addr(&self, pack: u64) -> u64 {
        1 + pack * CP_PACK_BLOCKS
    }
    pub fn sit_addr(&self, block: u32, copy: u32) -> u64 {
        1 + 2 * CP_PACK_BLOCKS + (copy * self.sit_blocks + block) as u64
    }
    pub fn nat_addr(&self, block: u32, copy: u32) -> u64 {
        self.sit_addr(0, 2) + (copy * self.nat_blocks + block) as u64
    }
    pub fn ssa_addr(&self, seg: u32) -> u64 {
        self.nat_addr(0, 2) + seg as u64
    }
    /// Blocks the metadata area needs.
    pub fn meta_blocks(&self) -> u64 {
        self.ssa_addr(self.main_segs)
    }

    pub fn encode_sb(&self) -> Vec<u8> {
        let mut b = vec![0u8; BLOCK];
        let f = [
            MAGIC,
            self.zones,
            self.zone_blocks,
            self.sec_blocks,
            self.segs_per_sec,
            self.main_segs,
            self.reserved_secs,
            self.ovp_segs,
            self.nat_blocks,
            self.sit_blocks,
        ];
        for (k, v) in f.iter().enumerate() {
            b[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        b
    }
    pub fn decode_sb(b: &[u8]) -> Option<Geometry> {
        let g = |k: usize| u32::from_le_bytes(b[4 * k..4 * k + 4].try_into().unwrap());
        if b.len() != BLOCK || g(0) != MAGIC {
            return None;
        }
        Some(Geometry {
            zones: g(1),
            zone_blocks: g(2),
            sec_blocks: g(3),
            segs_per_sec: g(4),
            main_segs: g(5),
            reserved_secs: g(6),
            ovp_segs: g(7),
            nat_blocks: g(8),
            sit_blocks: g(9),
        })
        .filter(Geometry::consistent)
    }

    /// Whether a geometry read back holds together as [`Geometry::new`] makes them: a
    /// superblock that does not is refused before any of its numbers sizes or indexes
    /// anything.
    fn consistent(&self) -> bool {
        self.segs_per_sec >= 1
            && self.segs_per_sec.checked_mul(BLOCKS_PER_SEG) == Some(self.sec_blocks)
            && self.sec_blocks <= self.zone_blocks
            && self.zone_blocks <= u32::MAX / 2
            && (self.zones as u64) * (self.zone_blocks as u64) < NULL_LIMIT
            && self.zones.checked_mul(self.segs_per_sec) == Some(self.main_segs)
            && self.sit_blocks == self.main_segs.div_ceil(SIT_PER_BLOCK)
            && self.nat_blocks >= 1
            && self.nat_blocks as u64 + self.sit_blocks as u64 <= (CP_BITMAP_BYTES * 8) as u64
            && self.ovp_segs <= self.main_segs
            && self.reserved_secs as u64 * self.segs_per_sec as u64 <= self.ovp_segs as u64
            && self.reserved_secs as u64 + 8 <= self.zones as u64
    }
}

/// Block addresses stay below this (`NULL` is `u32::MAX`).
const NULL_LIMIT: u64 = u32::MAX as u64;

/// A SIT entry: valid blocks, the segment's log type and its valid map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SitEntry {
    pub valid: u16,
    pub ty: u8,
    pub map: [u8; 64],
}

pub fn encode_sit_entry(e: &SitEntry, out: &mut [u8]) {
    let v = e.valid & 0x3ff | (e.ty as u16) << 10;
    out[0..2].copy_from_slice(&v.to_le_bytes());
    out[2..66].copy_from_slice(&e.map);
    out[66..74].fill(0);
}
pub fn decode_sit_entry(b: &[u8]) -> SitEntry {
    let v = u16::from_le_bytes([b[0], b[1]]);
    SitEntry {
        valid: v & 0x3ff,
        ty: (v >> 10) as u8,
        map: b[2..66].try_into().unwrap(),
    }
}
pub const SIT_ENTRY_BYTES: usize = 74;

/// NAT entry {version, ino, block}: 9 bytes.
pub fn encode_nat_entry(ino: Nid, addr: Blk, out: &mut [u8]) {
    out[0] = 0;
    out[1..5].copy_from_slice(&ino.to_le_bytes());
    out[5..9].copy_from_slice(&addr.to_le_bytes());
}
pub fn decode_nat_entry(b: &[u8]) -> (Nid, Blk) {
    (
        u32::from_le_bytes(b[1..5].try_into().unwrap()),
        u32::from_le_bytes(b[5..9].try_into().unwrap()),
    )
}

/// A segment's summary: per block (owner nid, offset in its node).
pub fn encode_ssa(owners: &[(Nid, u16)], is_node: bool) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK];
    for (k, (nid, ofs)) in owners.iter().enumerate() {
        b[7 * k..7 * k + 4].copy_from_slice(&nid.to_le_bytes());
        b[7 * k + 5..7 * k + 7].copy_from_slice(&ofs.to_le_bytes());
    }
    b[BLOCK - 1] = is_node as u8;
    b
}
pub fn decode_ssa(b: &[u8]) -> Vec<(Nid, u16)> {
    (0..BLOCKS_PER_SEG as usize)
        .map(|k| {
            (
                u32::from_le_bytes(b[7 * k..7 * k + 4].try_into().unwrap()),
                u16::from_le_bytes([b[7 * k + 5], b[7 * k + 6]]),
            )
        })
        .collect()
}

/// A log's position at a checkpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogPos {
    /// Section (`u32::MAX`: none).
    pub sec: u32,
    pub next: u32,
    pub tl: bool,
}

/// What a checkpoint pack records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    pub version: u64,
    pub next_nid: Nid,
    pub logs: [LogPos; 6],
    /// Which copy of each NAT / SIT block is current (bit set: copy 1).
    pub nat_bits: Vec<u8>,
    pub sit_bits: Vec<u8>,
    pub nat_journal: Vec<(Nid, Blk)>,
    pub sit_journal: Vec<(u32, SitEntry)>,
}

impl Checkpoint {
    /// Whether this pack's numbers fit geometry `geo`: bitmaps of its NAT and SIT blocks,
    /// journal entries and the next node id inside them. (The header's checksum does not
    /// cover the journal blocks.) A pack that does not fit is treated as torn.
    pub fn fits(&self, geo: &Geometry) -> bool {
        self.nat_bits.len() == (geo.nat_blocks as usize).div_ceil(8)
            && self.sit_bits.len() == (geo.sit_blocks as usize).div_ceil(8)
            && self.next_nid <= geo.max_nid()
            && self.nat_journal.iter().all(|&(nid, _)| nid < geo.max_nid())
            && self.sit_journal.iter().all(|(seg, _)| *seg < geo.main_segs)
    }

    /// The pack's five blocks.
    pub fn encode(&self) -> Vec<Vec<u8>> {
        let mut h = vec![0u8; BLOCK];
        h[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        h[4..12].copy_from_slice(&self.version.to_le_bytes());
        h[12..16].copy_from_slice(&self.next_nid.to_le_bytes());
        for (k, l) in self.logs.iter().enumerate() {
            let at = 16 + 9 * k;
            h[at..at + 4].copy_from_slice(&l.sec.to_le_bytes());
            h[at + 4..at + 8].copy_from_slice(&l.next.to_le_bytes());
            h[at + 8] = l.tl as u8;
        }
        let at = 80;
        h[at..at + 4].copy_from_slice(&(self.nat_bits.len() as u32).to_le_bytes());
        h[at + 4..at + 8].copy_from_slice(&(self.sit_bits.len() as u32).to_le_bytes());
        let nb = at + 8;
        h[nb..nb + self.nat_bits.len()].copy_from_slice(&self.nat_bits);
        let sb = nb + self.nat_bits.len();
        h[sb..sb + self.sit_bits.len()].copy_from_slice(&self.sit_bits);
        let crc = crc32c::crc32c(&h[..BLOCK - 4]);
        h[BLOCK - 4..].copy_from_slice(&crc.to_le_bytes());
        let mut nat = vec![0u8; BLOCK];
        nat[0..2].copy_from_slice(&(self.nat_journal.len() as u16).to_le_bytes());
        for (k, (nid, addr)) in self.nat_journal.iter().enumerate() {
            nat[2 + 13 * k..6 + 13 * k].copy_from_slice(&nid.to_le_bytes());
            encode_nat_entry(*nid, *addr, &mut nat[6 + 13 * k..15 + 13 * k]);
        }
        let mut sit = vec![0u8; BLOCK];
        sit[0..2].copy_from_slice(&(self.sit_journal.len() as u16).to_le_bytes());
        for (k, (seg, e)) in self.sit_journal.iter().enumerate() {
            let at = 2 + 78 * k;
            sit[at..at + 4].copy_from_slice(&seg.to_le_bytes());
            encode_sit_entry(e, &mut sit[at + 4..at + 78]);
        }
        vec![h.clone(), nat, vec![0u8; BLOCK], sit, h]
    }

    /// A pack back from its blocks; `None` when torn or never written.
    pub fn decode(blocks: &[Vec<u8>]) -> Option<Checkpoint> {
        let h = &blocks[0];
        if blocks.len() != CP_PACK_BLOCKS as usize || blocks[4] != *h {
            return None;
        }
        let g32 = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        if g32(h, 0) != MAGIC || crc32c::crc32c(&h[..BLOCK - 4]) != g32(h, BLOCK - 4) {
            return None;
        }
        let mut logs = [LogPos::default(); 6];
        for (k, l) in logs.iter_mut().enumerate() {
            let at = 16 + 9 * k;
            *l = LogPos {
                sec: g32(h, at),
                next: g32(h, at + 4),
                tl: h[at + 8] == 1,
            };
        }
        let (nl, sl) = (g32(h, 80) as usize, g32(h, 84) as usize);
        if 88 + nl + sl > BLOCK - 4 {
            return None;
        }
        let nat = &blocks[1];
        let n = (u16::from_le_bytes([nat[0], nat[1]]) as usize).min(NAT_JOURNAL);
        let nat_journal = (0..n)
            .map(|k| {
                let nid = g32(nat, 2 + 13 * k);
                (nid, decode_nat_entry(&nat[6 + 13 * k..15 + 13 * k]).1)
            })
            .collect();
        let sit = &blocks[3];
        let n = (u16::from_le_bytes([sit[0], sit[1]]) as usize).min(SIT_JOURNAL);
        let sit_journal = (0..n)
            .map(|k| {
                let at = 2 + 78 * k;
                (g32(sit, at), decode_sit_entry(&sit[at + 4..at + 78]))
            })
            .collect();
        Some(Checkpoint {
            version: u64::from_le_bytes(h[4..12].try_into().unwrap()),
            next_nid: g32(h, 12),
            logs,
            nat_bits: h[88..88 + nl].to_vec(),
            sit_bits: h[88 + nl..88 + nl + sl].to_vec(),
            nat_journal,
            sit_journal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_sections_follow_f2fs_tools() {
        // seed-specs A.1.6: 16 GiB, 16 segments a section: c ≈ 6.3 %, ≈ 39 sections.
        let g = Geometry::new(512, 8192, 8192, None, None).unwrap();
        let c = best_overprovision(g.main_segs, 16);
        assert!((6.0..6.6).contains(&c), "{c}");
        assert!((38..=40).contains(&g.reserved_secs), "{}", g.reserved_secs);
        assert!((1050..1150).contains(&g.ovp_segs), "{}", g.ovp_segs);
        // Small volumes take 10-95 % in steps of 5: 64 sections of 2 segments pick 20 %.
        let g = Geometry::new(64, 1024, 1024, None, None).unwrap();
        assert_eq!(g.reserved_secs, 18);
        assert_eq!(
            Geometry::new(64, 1024, 1024, Some(4), None)
                .unwrap()
                .reserved_secs,
            4
        );
        assert!(Geometry::new(64, 256, 256, None, None).is_err());
        assert_eq!(Geometry::decode_sb(&g.encode_sb()), Some(g));
    }

    #[test]
    fn checkpoint_packs_round_trip_and_torn_ones_are_refused() {
        let mut cp = Checkpoint {
            version: 9,
            next_nid: 77,
            nat_bits: vec![1, 2, 3],
            sit_bits: vec![4],
            nat_journal: vec![(5, 6), (7, u32::MAX)],
            sit_journal: vec![(
                3,
                SitEntry {
                    valid: 5,
                    ty: 2,
                    map: [0x1f; 64],
                },
            )],
            ..Default::default()
        };
        cp.logs[4] = LogPos {
            sec: 3,
            next: 17,
            tl: true,
        };
        let mut b = cp.encode();
        assert_eq!(Checkpoint::decode(&b), Some(cp));
        b[4][7] ^= 1;
        assert_eq!(Checkpoint::decode(&b), None);
    }
}
