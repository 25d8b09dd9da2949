//! Point lookups: the memtables under the store's lock, then the tables of the version it
//! saw, each data block from the block cache or the device after the lock is released; and
//! the deletion of retired tables once no reader holds them.

use std::rc::Rc;

use super::super::key::ValueType;
use super::{sst_name, DbError, Inner, Sst};

impl Inner {
    /// Delete the tables compactions retired that no lookup, scan or compaction holds any more.
    pub(super) async fn delete_retired_tables(&self) -> Result<(), DbError> {
        let free: Vec<u64> = self
            .doomed
            .borrow()
            .iter()
            .filter(|(_, sst)| Rc::strong_count(sst) == 1)
            .map(|(&n, _)| n)
            .collect();
        for n in free {
            // Taken out first: another task may get here while this one awaits the delete.
            if self.doomed.borrow_mut().remove(&n).is_some() {
                self.fs.delete(&sst_name(n)).await?;
            }
        }
        Ok(())
    }

    /// A reader is done with the tables it held: the retired ones nothing else holds go.
    pub(super) async fn release_tables(&self, held: Vec<Rc<Sst>>) -> Result<(), DbError> {
        let retired = held
            .iter()
            .any(|f| self.doomed.borrow().contains_key(&f.number));
        drop(held);
        if retired {
            self.delete_retired_tables().await?;
        }
        Ok(())
    }

    /// The value of `k`, if it exists: memtable, then L0 newest first, then one file per level.
    pub async fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, DbError> {
        self.cpu(self.opts.cpu.read_ns).await;
        let mut tables_read = 0u64;
        let result = self.get_versions(k, &mut tables_read).await;
        // Each table probed past its filter decompressed one data block.
        if let Some(p) = self.opts.compression.profile() {
            self.cpu(tables_read * p.decompress.latency_ns(4096)).await;
        }
        result
    }

    async fn get_versions(
        &self,
        k: &[u8],
        tables_read: &mut u64,
    ) -> Result<Option<Vec<u8>>, DbError> {
        // Under the lock, CPU only: the memtables, and the tables that may hold the key
        // (held by their Rc, so a compaction retiring one meanwhile does not delete it). Their
        // blocks are read after the lock is released, as RocksDB reads from a referenced
        // version without its mutex: other readers, flushes and compactions go on meanwhile.
        let (seq, found, tables) = {
            let st = self.st.lock().await;
            let seq = st.last_seq;
            let mut found = st.mem.get(k, seq);
            if found.is_none() {
                // Newest first.
                found = st.imms.iter().rev().find_map(|m| m.mem.get(k, seq));
            }
            let mut tables = Vec::new();
            if found.is_none() {
                let covers = |f: &Rc<Sst>| f.smallest.as_slice() <= k && k <= f.largest.as_slice();
                for (l, files) in st.levels.iter().enumerate() {
                    if l == 0 {
                        tables.extend(files.iter().filter(|f| covers(f)).cloned());
                    } else {
                        // Levels below L0 are sorted and disjoint: at most one file holds the
                        // key, the first whose largest key is not below it (a binary search;
                        // O(log files) rather than O(files) per get).
                        let i = files.partition_point(|f| f.largest.as_slice() < k);
                        tables.extend(files.get(i).filter(|f| covers(f)).cloned());
                    }
                }
            }
            (seq, found, tables)
        };
        let mut result = Ok(found);
        for sst in &tables {
            if matches!(result, Ok(Some(_)) | Err(_)) {
                break;
            }
            result = self.get_in_table(sst, k, seq, tables_read).await;
        }
        self.release_tables(tables).await?;
        Ok(match result? {
            Some((ValueType::Value, v)) => Some(v),
            _ => None,
        })
    }

    /// `k`'s newest version at `seq` in one table: its filter and index (in memory), then the
    /// data block they name. A plain block the device read counts in `tables_read`.
    async fn get_in_table(
        &self,
        sst: &Sst,
        k: &[u8],
        seq: u64,
        tables_read: &mut u64,
    ) -> Result<Option<(ValueType, Vec<u8>)>, DbError> {
        let Some(i) = sst.table.block_for_get(k, seq) else {
            return Ok(None);
        };
        let (block, read) = self.fetch_block(sst, i).await?;
        if read && !sst.table.blocks()[i].cc {
            *tables_read += 1;
        }
        Ok(sst.table.get_in_block(i, &block, k, seq)?)
    }
}
