//! An LRU block cache (RocksDB's LRUCache, 32 MiB by default since 8.2): which data blocks a
//! lookup finds without a device read or a decompression. Keys are (file number, block offset);
//! each block is charged its uncompressed size. Ordered maps keep eviction deterministic.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use sim::ByteMemo;

#[derive(Default)]
pub struct BlockCache {
    capacity: u64,
    used: u64,
    tick: u64,
    /// (file, offset) → (charge, last use).
    entries: BTreeMap<(u64, u64), (u64, u64)>,
    /// last use → (file, offset): the least recently used first.
    by_age: BTreeMap<u64, (u64, u64)>,
    pub hits: u64,
    pub misses: u64,
}

impl BlockCache {
    pub fn new(capacity: u64) -> BlockCache {
        BlockCache {
            capacity,
            ..BlockCache::default()
        }
    }

    /// Look a block up; a hit makes it the most recently used.
    pub fn lookup(&mut self, file: u64, offset: u64) -> bool {
        self.tick += 1;
        match self.entries.get_mut(&(file, offset)) {
            Some((_, last)) => {
                self.by_age.remove(last);
                *last = self.tick;
                self.by_age.insert(self.tick, (file, offset));
                self.hits += 1;
                true
            }
            None => {
                self.misses += 1;
                false
            }
        }
    }

    /// Insert a block read from the device, evicting the least recently used to make room.
    pub fn insert(&mut self, file: u64, offset: u64, charge: u64) {
        if charge > self.capacity || self.entries.contains_key(&(file, offset)) {
            return;
        }
        while self.used + charge > self.capacity {
            let Some((_, key)) = self.by_age.pop_first() else {
                break;
            };
            if let Some((c, _)) = self.entries.remove(&key) {
                self.used -= c;
            }
        }
        self.tick += 1;
        self.entries.insert((file, offset), (charge, self.tick));
        self.by_age.insert(self.tick, (file, offset));
        self.used += charge;
    }

    /// Drop a deleted file's blocks.
    pub fn forget_file(&mut self, file: u64) {
        let keys: Vec<(u64, u64)> = self
            .entries
            .range((file, 0)..=(file, u64::MAX))
            .map(|(k, _)| *k)
            .collect();
        for k in keys {
            if let Some((c, last)) = self.entries.remove(&k) {
                self.used -= c;
                self.by_age.remove(&last);
            }
        }
    }

    pub fn used_bytes(&self) -> u64 {
        self.used
    }
}

/// Data blocks the store's tables decompressed for lookups and scans, kept so that a block read
/// again is not decompressed again. Speed only: [`BlockCache`] decides what a read costs in
/// virtual time, and every figure is the same with or without this (RocksDB's cache holds
/// uncompressed blocks, so a real cache hit does not decompress either). Keys are (table id,
/// block offset); ids come from [`next_table_id`](Self::next_table_id) and are never reused, so
/// a deleted table's blocks are never served, only left to age out. First in, first out within
/// a byte budget.
pub struct DecodedBlocks {
    blocks: ByteMemo<(u64, u64)>,
    next_id: u64,
}

/// One store's decoded blocks, shared by its tables.
pub type SharedDecodedBlocks = Rc<RefCell<DecodedBlocks>>;

impl DecodedBlocks {
    pub fn shared(budget: usize) -> SharedDecodedBlocks {
        Rc::new(RefCell::new(DecodedBlocks {
            blocks: ByteMemo::new(budget),
            next_id: 0,
        }))
    }

    pub fn next_table_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn get(&self, table: u64, offset: u64) -> Option<Rc<[u8]>> {
        self.blocks.get(&(table, offset)).cloned()
    }

    pub fn insert(&mut self, table: u64, offset: u64, block: &[u8]) {
        self.blocks.insert((table, offset), block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_goes_first() {
        let mut c = BlockCache::new(3 * 4096);
        for off in [0, 4096, 8192] {
            c.insert(1, off, 4096);
        }
        assert!(c.lookup(1, 0)); // 0 is now the newest
        c.insert(1, 12288, 4096); // evicts 4096
        assert!(!c.lookup(1, 4096));
        assert!(c.lookup(1, 0) && c.lookup(1, 8192) && c.lookup(1, 12288));
        assert_eq!(c.used_bytes(), 3 * 4096);
        c.forget_file(1);
        assert_eq!(c.used_bytes(), 0);
        assert!(!c.lookup(1, 0));
        assert_eq!((c.hits, c.misses), (4, 2));
    }

    #[test]
    fn decoded_blocks_keep_a_budget_and_tell_tables_apart() {
        let d = DecodedBlocks::shared(10);
        let mut d = d.borrow_mut();
        let (a, b) = (d.next_table_id(), d.next_table_id());
        assert_ne!(a, b);
        d.insert(a, 0, b"abcd");
        d.insert(b, 0, b"efgh");
        assert_eq!(d.get(a, 0).as_deref(), Some(&b"abcd"[..]));
        assert_eq!(d.get(b, 0).as_deref(), Some(&b"efgh"[..]));
        d.insert(a, 4096, b"ijkl"); // 12 bytes > 10: the oldest goes
        assert_eq!(d.get(a, 0), None);
        assert_eq!(d.get(a, 4096).as_deref(), Some(&b"ijkl"[..]));
        d.insert(a, 8192, b"more than ten bytes"); // larger than the budget: not kept
        assert_eq!(d.get(a, 8192), None);
        assert_eq!(d.blocks.used(), 8);
    }
}
