//! Directory entry blocks as F2FS lays them out: a 27-byte slot bitmap, 214 dentries of
//! 11 bytes {hash, ino, name length, type} and 214 name slots of 8 bytes (a name takes
//! `ceil(len / 8)` slots). Directories are linear lists of such blocks (F2FS hashes names
//! into multi-level buckets; which block a name lands in only moves which dentry page is
//! dirtied), with an in-memory index of names.

use std::collections::BTreeMap;

use super::node::Nid;
use super::BLOCK;

pub const DENTRY_SLOTS: usize = 214;
const DENTRIES_AT: usize = 30;
const NAMES_AT: usize = DENTRIES_AT + 11 * DENTRY_SLOTS;

/// Where a name is: (inode, dentry block, first slot).
pub type DirEntry = (Nid, u64, u16);

/// A directory's names and slot use, in memory.
#[derive(Clone, Debug, Default)]
pub struct DirIndex {
    pub entries: BTreeMap<Vec<u8>, DirEntry>,
    /// Used slots of each block.
    pub used: Vec<[u64; 4]>,
}

pub fn slots_for(name_len: usize) -> usize {
    name_len.div_ceil(8).max(1)
}

fn hash(name: &[u8]) -> u32 {
    crc32c::crc32c(name)
}

impl DirIndex {
    /// Where a name of `n` slots goes: the first block with `n` free consecutive slots, or a
    /// new block.
    pub fn find_slot(&self, n: usize) -> (u64, u16) {
        for (b, used) in self.used.iter().enumerate() {
            let mut run = 0;
            for s in 0..DENTRY_SLOTS {
                if used[s / 64] >> (s % 64) & 1 == 0 {
                    run += 1;
                    if run == n {
                        return (b as u64, (s + 1 - n) as u16);
                    }
                } else {
                    run = 0;
                }
            }
        }
        (self.used.len() as u64, 0)
    }
    pub fn mark(&mut self, block: u64, slot: u16, n: usize, on: bool) {
        while self.used.len() <= block as usize {
            self.used.push([0; 4]);
        }
        let u = &mut self.used[block as usize];
        for s in slot as usize..slot as usize + n {
            if on {
                u[s / 64] |= 1 << (s % 64);
            } else {
                u[s / 64] &= !(1 << (s % 64));
            }
        }
    }
    /// Names other than `.` and `..`.
    pub fn names(&self) -> impl Iterator<Item = &Vec<u8>> {
        self.entries
            .keys()
            .filter(|n| n.as_slice() != b"." && n.as_slice() != b"..")
    }
}

/// Write a dentry into block `page` at `slot`.
pub fn put_entry(page: &mut [u8], slot: u16, ino: Nid, name: &[u8], is_dir: bool) {
    let s = slot as usize;
    let n = slots_for(name.len());
    for k in s..s + n {
        page[k / 8] |= 1 << (k % 8);
    }
    let d = DENTRIES_AT + 11 * s;
    page[d..d + 4].copy_from_slice(&hash(name).to_le_bytes());
    page[d + 4..d + 8].copy_from_slice(&ino.to_le_bytes());
    page[d + 8..d + 10].copy_from_slice(&(name.len() as u16).to_le_bytes());
    page[d + 10] = if is_dir { 2 } else { 1 };
    let at = NAMES_AT + 8 * s;
    page[at..at + name.len()].copy_from_slice(name);
}

/// Clear the dentry at `slot` taking `n` slots.
pub fn clear_entry(page: &mut [u8], slot: u16, n: usize) {
    for k in slot as usize..slot as usize + n {
        page[k / 8] &= !(1 << (k % 8));
    }
}

/// The dentries of a block: (slot, inode, name).
pub fn read_entries(page: &[u8]) -> Vec<(u16, Nid, Vec<u8>)> {
    let mut out = Vec::new();
    if page.len() != BLOCK {
        return out;
    }
    let mut s = 0;
    while s < DENTRY_SLOTS {
        if page[s / 8] >> (s % 8) & 1 == 0 {
            s += 1;
            continue;
        }
        let d = DENTRIES_AT + 11 * s;
        let ino = u32::from_le_bytes(page[d + 4..d + 8].try_into().unwrap());
        let len = u16::from_le_bytes([page[d + 8], page[d + 9]]) as usize;
        let n = slots_for(len);
        if len == 0 || s + n > DENTRY_SLOTS {
            s += 1;
            continue;
        }
        let at = NAMES_AT + 8 * s;
        out.push((s as u16, ino, page[at..at + len].to_vec()));
        s += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dentry_blocks_round_trip_and_slots_are_reused() {
        let mut page = vec![0u8; BLOCK];
        let mut idx = DirIndex::default();
        for (i, name) in [&b"."[..], b"..", b"a-long-file-name.txt", b"b"]
            .iter()
            .enumerate()
        {
            let n = slots_for(name.len());
            let (blk, slot) = idx.find_slot(n);
            assert_eq!(blk, 0);
            idx.mark(blk, slot, n, true);
            put_entry(&mut page, slot, 10 + i as u32, name, false);
        }
        let e = read_entries(&page);
        assert_eq!(e.len(), 4);
        assert_eq!(e[2], (2, 12, b"a-long-file-name.txt".to_vec()));
        assert_eq!(e[3].0, 5);
        clear_entry(&mut page, 2, 3);
        idx.mark(0, 2, 3, false);
        assert_eq!(read_entries(&page).len(), 3);
        assert_eq!(idx.find_slot(2), (0, 2));
        let mut full = DirIndex::default();
        full.mark(0, 0, DENTRY_SLOTS, true);
        assert_eq!(full.find_slot(1), (1, 0));
    }
}
