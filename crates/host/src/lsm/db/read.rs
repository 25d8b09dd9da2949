//! Point lookups: the memtables and tables under the store's lock, the device reads of the
//! blocks the cache lacks after it, the tables those reads pin, and the deletion of retired
//! tables once nothing reads them.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::super::key::ValueType;
use super::super::sst::{BlockRead, CcBlocks};
use super::options::DbOptions;
use super::tables::check_bytes;
use super::{sst_name, DbError, Inner};

/// What a block takes in the block cache: its raw size (a compressed block is cached
/// decompressed, so at least a block's worth).
pub(super) fn cache_charge(h: &BlockRead, opts: &DbOptions) -> u64 {
    if h.cc {
        h.raw
    } else {
        h.raw.max(opts.table.block_size as u64)
    }
}

/// The tables one lookup reads from the device after releasing the store's lock: counted in
/// `Inner::pins` while it lives, so a compaction does not delete them under it.
pub(super) struct FilePins<'a> {
    pins: &'a std::cell::RefCell<BTreeMap<u64, u32>>,
    pub(super) files: Vec<u64>,
}

impl<'a> FilePins<'a> {
    pub(super) fn new(
        pins: &'a std::cell::RefCell<BTreeMap<u64, u32>>,
        files: impl Iterator<Item = u64>,
    ) -> FilePins<'a> {
        let files: Vec<u64> = files.collect();
        let mut p = pins.borrow_mut();
        for &f in &files {
            *p.entry(f).or_default() += 1;
        }
        drop(p);
        FilePins { pins, files }
    }
}

impl Drop for FilePins<'_> {
    fn drop(&mut self) {
        let mut p = self.pins.borrow_mut();
        for f in &self.files {
            if let Some(n) = p.get_mut(f) {
                *n -= 1;
                if *n == 0 {
                    p.remove(f);
                }
            }
        }
    }
}

impl Inner {
    /// Delete the tables compactions retired that no lookup is reading any more.
    pub(super) async fn delete_retired_tables(&self) -> Result<(), DbError> {
        let free: Vec<u64> = {
            let pins = self.pins.borrow();
            let doomed = self.doomed.borrow();
            doomed
                .iter()
                .copied()
                .filter(|n| !pins.contains_key(n))
                .collect()
        };
        for n in free {
            // Taken out first: another task may get here while this one awaits the delete.
            if self.doomed.borrow_mut().remove(&n) {
                self.fs.delete(&sst_name(n)).await?;
            }
        }
        Ok(())
    }

    /// The value of `k`, if it exists: memtable, then L0 newest first, then one file per level.
    pub async fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, DbError> {
        self.cpu(self.opts.cpu.read_ns).await;
        let mut tables_read = 0u64;
        let result = self.get_locked(k, &mut tables_read).await;
        // Each table probed past its filter decompressed one data block.
        if let Some(p) = self.opts.compression.profile() {
            self.cpu(tables_read * p.decompress.latency_ns(4096)).await;
        }
        result
    }

    async fn get_locked(
        &self,
        k: &[u8],
        tables_read: &mut u64,
    ) -> Result<Option<Vec<u8>>, DbError> {
        // Under the lock, CPU only: the memtables, then each table's filter, index and block
        // (held in memory), and the block cache's verdict on each data block touched. The
        // device reads of the blocks the cache lacks come after the lock is released, as
        // RocksDB reads from a referenced version without its mutex: other readers, flushes and
        // compactions go on meanwhile, and the files read stay until the reads are done.
        let mut misses: Vec<(u64, BlockRead, Option<Rc<CcBlocks>>)> = Vec::new();
        let found = {
            let mut st = self.st.lock().await;
            let seq = st.last_seq;
            let mut found = st.mem.get(k, seq);
            if found.is_none() {
                // Newest first.
                found = st.imms.iter().rev().find_map(|m| m.mem.get(k, seq));
            }
            if found.is_none() {
                'levels: for (l, files) in st.levels.iter_mut().enumerate() {
                    for sst in files.iter_mut() {
                        if k < sst.smallest.as_slice() || k > sst.largest.as_slice() {
                            continue;
                        }
                        let hit = sst.table.get(k, seq)?;
                        // A cached block costs neither a device read nor a decompression.
                        if let Some(h) = sst.table.last_block() {
                            if !self.cache.borrow_mut().lookup(sst.number, h.offset) {
                                // CCZNS: what the DR returns must be the table's own block.
                                let cc = sst.table.cc_blocks().filter(|_| h.cc);
                                misses.push((sst.number, h, cc));
                            }
                        }
                        if let Some(h) = hit {
                            found = Some(h);
                            break 'levels;
                        }
                        if l > 0 {
                            break; // levels below L0 hold at most one file for a key
                        }
                    }
                }
            }
            found
        };
        let pins = FilePins::new(&self.pins, misses.iter().map(|m| m.0));
        for (number, h, cc) in misses {
            let name = sst_name(number);
            if let Some(cc) = cc {
                // CCZNS: a single-chunk DR sized by the block's raw size.
                let mut buf = Vec::new();
                self.fs
                    .decompressed_read(&name, h.offset, h.stored, false, h.raw, &mut buf)
                    .await?;
                check_bytes(cc.bytes(h.offset, h.raw), &name, h.offset, &buf)?;
            } else {
                *tables_read += 1;
                let mut buf = vec![0u8; h.stored as usize];
                self.fs.read(&name, h.offset, &mut buf).await?;
            }
            // A table a compaction retired meanwhile keeps no cached blocks.
            if !self.doomed.borrow().contains(&number) {
                self.cache
                    .borrow_mut()
                    .insert(number, h.offset, cache_charge(&h, &self.opts));
            }
        }
        // The last reader of a table a compaction retired meanwhile deletes it.
        if !pins.files.is_empty() {
            drop(pins);
            self.delete_retired_tables().await?;
        }
        Ok(match found {
            Some((ValueType::Value, v)) => Some(v),
            _ => None,
        })
    }
}
