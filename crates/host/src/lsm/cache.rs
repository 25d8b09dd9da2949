//! An LRU block cache (RocksDB's LRUCache, 32 MiB by default since 8.2): the decoded data
//! blocks a lookup or scan finds without a device read or a decompression. Keys are (file
//! number, block offset); each block is charged its uncompressed size. Ordered maps keep
//! eviction deterministic.

use std::collections::BTreeMap;
use std::rc::Rc;

/// A decoded data block (decompressed, trailer cut off), shared by the cache and its readers.
pub type DataBlock = Rc<Vec<u8>>;

#[derive(Default)]
pub struct BlockCache {
    capacity: u64,
    used: u64,
    tick: u64,
    /// (file, offset) → (charge, last use, the block).
    entries: BTreeMap<(u64, u64), (u64, u64, DataBlock)>,
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
    pub fn lookup(&mut self, file: u64, offset: u64) -> Option<DataBlock> {
        self.tick += 1;
        match self.entries.get_mut(&(file, offset)) {
            Some((_, last, block)) => {
                self.by_age.remove(last);
                *last = self.tick;
                self.by_age.insert(self.tick, (file, offset));
                self.hits += 1;
                Some(block.clone())
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Insert a block read from the device, evicting the least recently used to make room.
    pub fn insert(&mut self, file: u64, offset: u64, charge: u64, block: DataBlock) {
        if charge > self.capacity || self.entries.contains_key(&(file, offset)) {
            return;
        }
        while self.used + charge > self.capacity {
            let Some((_, key)) = self.by_age.pop_first() else {
                break;
            };
            if let Some((c, _, _)) = self.entries.remove(&key) {
                self.used -= c;
            }
        }
        self.tick += 1;
        self.entries
            .insert((file, offset), (charge, self.tick, block));
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
            if let Some((c, last, _)) = self.entries.remove(&k) {
                self.used -= c;
                self.by_age.remove(&last);
            }
        }
    }

    pub fn used_bytes(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recently_used_goes_first() {
        let mut c = BlockCache::new(3 * 4096);
        let block = |off: u64| Rc::new(off.to_le_bytes().to_vec());
        for off in [0, 4096, 8192] {
            c.insert(1, off, 4096, block(off));
        }
        assert_eq!(c.lookup(1, 0), Some(block(0))); // 0 is now the newest
        c.insert(1, 12288, 4096, block(12288)); // evicts 4096
        assert!(c.lookup(1, 4096).is_none());
        assert_eq!(c.lookup(1, 8192), Some(block(8192)));
        assert!(c.lookup(1, 0).is_some() && c.lookup(1, 12288).is_some());
        assert_eq!(c.used_bytes(), 3 * 4096);
        c.forget_file(1);
        assert_eq!(c.used_bytes(), 0);
        assert!(c.lookup(1, 0).is_none());
        assert_eq!((c.hits, c.misses), (4, 2));
    }
}
