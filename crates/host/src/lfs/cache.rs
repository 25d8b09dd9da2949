//! The page cache: 4 KiB data pages of files and directories keyed by (inode, page index),
//! clean or dirty, evicted least recently used first. Node blocks are not here: the file
//! system keeps its node tree in memory (see `docs/lfs.md`).

use std::collections::BTreeMap;

use super::node::Nid;

pub type PageKey = (Nid, u64);

pub struct Page {
    pub data: Box<[u8]>,
    pub dirty: bool,
    stamp: u64,
}

/// An LRU page cache of at most `capacity` pages.
pub struct PageCache {
    capacity: usize,
    pages: BTreeMap<PageKey, Page>,
    lru: BTreeMap<u64, PageKey>,
    /// The clean pages alone, in the same order (GC reclaims frames from them).
    clean_lru: BTreeMap<u64, PageKey>,
    tick: u64,
    dirty: usize,
    /// Dirty pages per inode (the flusher picks inodes without scanning the cache).
    dirty_by_ino: BTreeMap<Nid, usize>,
}

impl PageCache {
    pub fn new(capacity: usize) -> PageCache {
        PageCache {
            capacity: capacity.max(16),
            pages: BTreeMap::new(),
            lru: BTreeMap::new(),
            clean_lru: BTreeMap::new(),
            tick: 0,
            dirty: 0,
            dirty_by_ino: BTreeMap::new(),
        }
    }
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    pub fn len(&self) -> usize {
        self.pages.len()
    }
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
    pub fn dirty_pages(&self) -> usize {
        self.dirty
    }
    pub fn contains(&self, k: PageKey) -> bool {
        self.pages.contains_key(&k)
    }
    /// Whether page `k` is cached, and dirty.
    pub fn state(&self, k: PageKey) -> Option<bool> {
        self.pages.get(&k).map(|p| p.dirty)
    }
    /// Page `k`, made most recently used.
    pub fn get(&mut self, k: PageKey) -> Option<&mut Page> {
        let p = self.pages.get_mut(&k)?;
        self.lru.remove(&p.stamp);
        self.tick += 1;
        if !p.dirty {
            self.clean_lru.remove(&p.stamp);
            self.clean_lru.insert(self.tick, k);
        }
        p.stamp = self.tick;
        self.lru.insert(self.tick, k);
        Some(p)
    }
    /// Page `k` without touching its recency.
    pub fn peek(&self, k: PageKey) -> Option<&Page> {
        self.pages.get(&k)
    }
    /// Insert (or replace) page `k`. The caller made room first.
    pub fn insert(&mut self, k: PageKey, data: Box<[u8]>, dirty: bool) {
        self.remove(k);
        self.tick += 1;
        self.lru.insert(self.tick, k);
        if dirty {
            self.count_dirty(k.0, true);
        } else {
            self.clean_lru.insert(self.tick, k);
        }
        self.pages.insert(
            k,
            Page {
                data,
                dirty,
                stamp: self.tick,
            },
        );
    }
    pub fn set_dirty(&mut self, k: PageKey, dirty: bool) {
        if let Some(p) = self.pages.get_mut(&k) {
            if p.dirty != dirty {
                p.dirty = dirty;
                if dirty {
                    self.clean_lru.remove(&p.stamp);
                } else {
                    self.clean_lru.insert(p.stamp, k);
                }
                self.count_dirty(k.0, dirty);
            }
        }
    }
    pub fn remove(&mut self, k: PageKey) -> Option<Page> {
        let p = self.pages.remove(&k)?;
        self.lru.remove(&p.stamp);
        self.clean_lru.remove(&p.stamp);
        if p.dirty {
            self.count_dirty(k.0, false);
        }
        Some(p)
    }
    /// One page of `ino` more (`up`) or less dirty.
    fn count_dirty(&mut self, ino: Nid, up: bool) {
        if up {
            self.dirty += 1;
            *self.dirty_by_ino.entry(ino).or_insert(0) += 1;
        } else {
            self.dirty -= 1;
            if let Some(n) = self.dirty_by_ino.get_mut(&ino) {
                *n -= 1;
                if *n == 0 {
                    self.dirty_by_ino.remove(&ino);
                }
            }
        }
    }
    /// The least recently used page.
    pub fn oldest(&self) -> Option<PageKey> {
        self.lru.values().next().copied()
    }
    /// The least recently used clean page.
    pub fn oldest_clean(&self) -> Option<PageKey> {
        self.clean_lru.values().next().copied()
    }
    /// Keys of inode `ino`'s pages.
    pub fn pages_of(&self, ino: Nid) -> Vec<PageKey> {
        self.pages
            .range((ino, 0)..=(ino, u64::MAX))
            .map(|(k, _)| *k)
            .collect()
    }
    /// Keys of inode `ino`'s dirty pages, in index order.
    pub fn dirty_of(&self, ino: Nid) -> Vec<PageKey> {
        self.pages
            .range((ino, 0)..=(ino, u64::MAX))
            .filter(|(_, p)| p.dirty)
            .map(|(k, _)| *k)
            .collect()
    }
    /// Inodes with dirty pages.
    pub fn dirty_inodes(&self) -> Vec<Nid> {
        self.dirty_by_ino.keys().copied().collect()
    }
    /// The first inode with dirty pages, and how many inode `ino` has.
    pub fn first_dirty_inode(&self) -> Option<Nid> {
        self.dirty_by_ino.keys().next().copied()
    }
    pub fn dirty_count(&self, ino: Nid) -> usize {
        self.dirty_by_ino.get(&ino).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_order_and_dirty_counts() {
        let mut c = PageCache::new(16);
        c.insert((1, 0), vec![0; 4].into(), false);
        c.insert((1, 1), vec![0; 4].into(), true);
        c.insert((2, 0), vec![0; 4].into(), false);
        assert_eq!(c.oldest(), Some((1, 0)));
        c.get((1, 0));
        assert_eq!(c.oldest(), Some((1, 1)));
        assert_eq!((c.dirty_pages(), c.dirty_of(1)), (1, vec![(1, 1)]));
        c.insert((3, 5), vec![0; 4].into(), true);
        assert_eq!(c.dirty_inodes(), vec![1, 3]);
        assert_eq!((c.first_dirty_inode(), c.dirty_count(3)), (Some(1), 1));
        c.remove((3, 5));
        assert_eq!(c.dirty_inodes(), vec![1]);
        assert_eq!(c.oldest_clean(), Some((2, 0)));
        c.set_dirty((1, 1), false);
        assert_eq!(c.dirty_pages(), 0);
        assert_eq!(c.oldest_clean(), Some((1, 1)));
        c.remove((1, 1));
        assert_eq!((c.len(), c.oldest()), (2, Some((2, 0))));
    }
}
