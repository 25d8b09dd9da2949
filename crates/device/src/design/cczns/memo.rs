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
//!
//! A chunk is kept the second time it is decompressed, not the first (a doorkeeper of keys
//! only, as TinyLFU's): a Load's compactions decompress every chunk once and never again, and
//! copying each into the memo cost 9 % of a CC Load for no hit (issue "The papers' full scale
//! on one machine").

use std::collections::{BTreeSet, VecDeque};

use sim::ByteMemo;

type Key = (u32, u32, u64);

pub(crate) struct DecompressMemo {
    chunks: ByteMemo<Key>,
    /// Chunks decompressed once (keys only), in the order noted; at most `seen_cap` notings
    /// are kept, the oldest forgotten first.
    seen: BTreeSet<Key>,
    seen_order: VecDeque<Key>,
    seen_cap: usize,
    /// Each zone's generation: its resets so far.
    generation: Vec<u32>,
    /// Off: remembers and counts nothing (a modeled payload decodes as fast as a copy).
    on: bool,
    pub hits: u64,
    pub misses: u64,
}

impl DecompressMemo {
    pub fn new(zones: usize, budget: usize) -> DecompressMemo {
        DecompressMemo {
            chunks: ByteMemo::new(budget),
            seen: BTreeSet::new(),
            seen_order: VecDeque::new(),
            // As many keys as 4 KiB chunks the budget holds, and some for a small budget.
            seen_cap: (budget / 4096).max(1024),
            generation: vec![0; zones],
            on: true,
            hits: 0,
            misses: 0,
        }
    }

    /// A memo that keeps and counts nothing.
    pub fn off(zones: usize) -> DecompressMemo {
        DecompressMemo {
            on: false,
            ..DecompressMemo::new(zones, 0)
        }
    }

    fn key(&self, zone: usize, offset: u64) -> Key {
        (zone as u32, self.generation[zone], offset)
    }

    /// The decompressed bytes of the chunk at `offset` of `zone`, if remembered.
    pub fn get(&mut self, zone: usize, offset: u64) -> Option<&[u8]> {
        if !self.on {
            return None;
        }
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

    /// The chunk at `offset` of `zone` was just decompressed into `bytes`: kept if it was
    /// decompressed before (and not forgotten since), else only its key is noted.
    pub fn offer(&mut self, zone: usize, offset: u64, bytes: &[u8]) {
        if !self.on {
            return;
        }
        let key = self.key(zone, offset);
        if self.seen.remove(&key) {
            self.chunks.insert(key, bytes);
            return;
        }
        // The queue holds at most `seen_cap` keys, admitted ones included, so neither grows
        // past it: the oldest noting goes first.
        if self.seen_order.len() >= self.seen_cap {
            if let Some(old) = self.seen_order.pop_front() {
                self.seen.remove(&old);
            }
        }
        self.seen.insert(key);
        self.seen_order.push_back(key);
    }

    /// Zone `zone` was reset: what it held is gone (its entries age out unread).
    pub fn forget_zone(&mut self, zone: usize) {
        self.generation[zone] = self.generation[zone].wrapping_add(1);
    }

    /// Forget everything (the chunk records were rebuilt).
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.seen.clear();
        self.seen_order.clear();
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
        let twice = |m: &mut DecompressMemo, z, o, b: &[u8]| {
            m.offer(z, o, b);
            m.offer(z, o, b);
        };
        twice(&mut m, 0, 0, &[1; 4]);
        twice(&mut m, 1, 0, &[2; 4]);
        assert_eq!(m.get(0, 0), Some(&[1u8; 4][..]));
        assert_eq!(m.get(1, 0), Some(&[2u8; 4][..]));
        // A reset of zone 0 hides its chunk; zone 1's stays.
        m.forget_zone(0);
        assert_eq!(m.get(0, 0), None);
        twice(&mut m, 0, 0, &[3; 4]);
        assert_eq!(m.get(0, 0), Some(&[3u8; 4][..]));
        // Over budget: the oldest go first (the stale entry of zone 0, then zone 1's chunk).
        twice(&mut m, 0, 8, &[4; 4]);
        assert_eq!(m.get(1, 0), None);
        assert_eq!(m.get(0, 8), Some(&[4u8; 4][..]));
        assert!(m.chunks.used() <= 10);
        // Larger than the budget: not kept.
        twice(&mut m, 1, 4, &[5; 11]);
        assert_eq!(m.get(1, 4), None);
        m.clear();
        assert_eq!(m.get(0, 8), None);
        // Off: keeps nothing, counts nothing.
        let mut off = DecompressMemo::off(1);
        twice(&mut off, 0, 0, &[1; 4]);
        assert_eq!(off.get(0, 0), None);
        assert!(!off.contains(0, 0));
        assert_eq!((off.hits, off.misses), (0, 0));
        assert_eq!(m.chunks.used(), 0);
    }

    #[test]
    fn a_chunk_is_kept_the_second_time_it_is_decompressed() {
        let mut m = DecompressMemo::new(1, 1 << 20);
        m.offer(0, 0, &[7; 8]);
        assert_eq!(m.get(0, 0), None, "once: only its key is noted");
        assert_eq!(m.chunks.used(), 0);
        m.offer(0, 0, &[7; 8]);
        assert_eq!(m.get(0, 0), Some(&[7u8; 8][..]), "twice: kept");
        // A reset forgets that a chunk was seen: its next decompression is a first again.
        m.offer(0, 16, &[8; 8]);
        m.forget_zone(0);
        m.offer(0, 16, &[8; 8]);
        assert_eq!(m.get(0, 16), None);
        // Past the doorkeeper's capacity the oldest keys are forgotten first.
        for k in 0..m.seen_cap as u64 + 1 {
            m.offer(0, 1000 + k * 8, &[1; 8]);
        }
        assert!(m.seen.len() <= m.seen_cap);
        m.offer(0, 1000, &[1; 8]);
        assert_eq!(m.get(0, 1000), None, "the first key noted was forgotten");
        let last = 1000 + m.seen_cap as u64 * 8;
        m.offer(0, last, &[1; 8]);
        assert_eq!(
            m.get(0, last),
            Some(&[1u8; 8][..]),
            "the last key noted was kept"
        );
        // Keys decompressed twice each (admitted at once) do not pile up in the doorkeeper.
        for k in 0..3 * m.seen_cap as u64 {
            m.offer(0, (1 << 30) + k * 8, &[2; 8]);
            m.offer(0, (1 << 30) + k * 8, &[2; 8]);
        }
        assert!(m.seen_order.len() <= m.seen_cap && m.seen.len() <= m.seen_cap);
    }
}
