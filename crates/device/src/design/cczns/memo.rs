//! The emulator's memory of chunks it decompressed lately (CCZNS decompressed reads).
//!
//! Speed only, never timing: a DR still pays its flash reads and its pass through the
//! decompression engine in virtual time; what the memo saves is the host CPU of running the
//! real codec again on bytes it already decompressed. Iterator prefetches (256 KiB of
//! compressed data per table per scan, CCZNS §IV) decompress the same chunks over and over in
//! YCSB E; without the memo the codec's work on them was 45 % of a run.
//!
//! A chunk's stored bytes never change while its zone holds it (zones are written once between
//! resets), so a chunk is known by its zone, the zone's generation (bumped by every reset) and
//! its byte offset. Entries leave first in, first out when the byte budget is spent
//! ([`sim::ByteMemo`]).

use sim::ByteMemo;

type Key = (u32, u32, u64);

pub(crate) struct DecompressMemo {
    chunks: ByteMemo<Key>,
    /// Each zone's generation: its resets so far.
    generation: Vec<u32>,
    pub hits: u64,
    pub misses: u64,
}

impl DecompressMemo {
    pub fn new(zones: usize, budget: usize) -> DecompressMemo {
        DecompressMemo {
            chunks: ByteMemo::new(budget),
            generation: vec![0; zones],
            hits: 0,
            misses: 0,
        }
    }

    fn key(&self, zone: usize, offset: u64) -> Key {
        (zone as u32, self.generation[zone], offset)
    }

    /// The decompressed bytes of the chunk at `offset` of `zone`, if remembered.
    pub fn get(&mut self, zone: usize, offset: u64) -> Option<&[u8]> {
        let key = self.key(zone, offset);
        match self.chunks.get(&key) {
            Some(b) => {
                self.hits += 1;
                Some(b)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Whether the chunk is remembered (counts nothing).
    pub fn contains(&self, zone: usize, offset: u64) -> bool {
        self.chunks.contains(&self.key(zone, offset))
    }

    pub fn insert(&mut self, zone: usize, offset: u64, bytes: &[u8]) {
        let key = self.key(zone, offset);
        self.chunks.insert(key, bytes);
    }

    /// Zone `zone` was reset: what it held is gone (its entries age out unread).
    pub fn forget_zone(&mut self, zone: usize) {
        self.generation[zone] = self.generation[zone].wrapping_add(1);
    }

    /// Forget everything (the chunk records were rebuilt).
    pub fn clear(&mut self) {
        self.chunks.clear();
        for g in &mut self.generation {
            *g = g.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_until_reset_or_budget() {
        let mut m = DecompressMemo::new(2, 10);
        m.insert(0, 0, &[1; 4]);
        m.insert(1, 0, &[2; 4]);
        assert_eq!(m.get(0, 0), Some(&[1u8; 4][..]));
        assert_eq!(m.get(1, 0), Some(&[2u8; 4][..]));
        // A reset of zone 0 hides its chunk; zone 1's stays.
        m.forget_zone(0);
        assert_eq!(m.get(0, 0), None);
        m.insert(0, 0, &[3; 4]);
        assert_eq!(m.get(0, 0), Some(&[3u8; 4][..]));
        // Over budget: the oldest go first (the stale entry of zone 0, then zone 1's chunk).
        m.insert(0, 8, &[4; 4]);
        assert_eq!(m.get(1, 0), None);
        assert_eq!(m.get(0, 8), Some(&[4u8; 4][..]));
        assert!(m.chunks.used() <= 10);
        // Larger than the budget: not kept.
        m.insert(1, 4, &[5; 11]);
        assert_eq!(m.get(1, 4), None);
        m.clear();
        assert_eq!(m.get(0, 8), None);
        assert_eq!(m.chunks.used(), 0);
    }
}
