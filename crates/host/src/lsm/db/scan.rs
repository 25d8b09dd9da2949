//! Range scans: a merge of the memtables and a cursor per table (a sorted level opens its next
//! file only when the merge reaches it), then the device reads of the blocks it decoded,
//! through RocksDB's implicit readahead or, for CCZNS tables, multi-chunk prefetches.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::super::format::FormatError;
use super::super::key::{self, ValueType};
use super::super::sst::{self, BlockRead, CcBlocks, TableCursor};
use super::options::DbOptions;
use super::read::{cache_charge, FilePins};
use super::tables::{check_bytes, dr_chunks, dr_span};

use super::{sst_name, Corruption, DbError, Inner, Sst};

/// RocksDB's implicit iterator readahead over one file (BlockPrefetcher): block reads that
/// follow each other count up; past `auto_readahead_after` of them a read fetches the block
/// and what follows it up to the readahead size, which doubles each time up to its maximum;
/// a read out of sequence starts over.
struct Readahead {
    /// Bytes [start, end) of the file already in the prefetch buffer.
    buffered: (u64, u64),
    /// End of the last block read, to tell a sequential read.
    next_offset: Option<u64>,
    sequential_reads: u32,
    size: u64,
}

impl Readahead {
    fn new(opts: &DbOptions) -> Self {
        Readahead {
            buffered: (0, 0),
            next_offset: None,
            sequential_reads: 0,
            size: opts.initial_auto_readahead_size,
        }
    }

    /// The device read (length from `offset`) a block of `len` bytes at `offset` needs, or
    /// None when the prefetch buffer holds it.
    fn read_for(&mut self, offset: u64, len: u64, opts: &DbOptions) -> Option<u64> {
        let end = offset + len;
        let sequential = self.next_offset == Some(offset);
        self.next_offset = Some(end);
        if self.buffered.0 <= offset && end <= self.buffered.1 {
            return None;
        }
        if !sequential {
            self.sequential_reads = 0;
            self.size = opts.initial_auto_readahead_size;
        }
        self.sequential_reads += 1;
        if self.sequential_reads <= opts.auto_readahead_after || self.size == 0 {
            return Some(len);
        }
        let read = len.max(self.size);
        self.buffered = (offset, offset + read);
        self.size = (self.size * 2).min(opts.max_auto_readahead_size);
        Some(read)
    }
}

/// A scan's source of SST entries in key order: one L0 table, or a sorted level whose next
/// file is opened only when the merge reaches it (RocksDB's LevelIterator). A scan thus
/// decodes, and charges reads for, the blocks it returns, not the first block of every file
/// past its start.
struct SstSource<'a> {
    files: std::slice::IterMut<'a, Sst>,
    current: Option<(u64, TableCursor<'a>)>,
    target: &'a [u8],
    /// Data blocks decoded, by table number, in order.
    blocks_read: Vec<(u64, BlockRead)>,
}

impl<'a> SstSource<'a> {
    fn new(files: &'a mut [Sst], target: &'a [u8]) -> Self {
        SstSource {
            files: files.iter_mut(),
            current: None,
            target,
            blocks_read: Vec::new(),
        }
    }

    fn next_entry(&mut self) -> Result<Option<sst::Entry>, FormatError> {
        loop {
            if let Some((number, c)) = &mut self.current {
                if let Some(e) = c.next_entry()? {
                    return Ok(Some(e));
                }
                let number = *number;
                self.blocks_read
                    .extend(c.blocks_read.drain(..).map(|h| (number, h)));
                self.current = None;
            }
            let Some(f) = self.files.next() else {
                return Ok(None);
            };
            self.current = Some((f.number, f.table.cursor(self.target)?));
        }
    }

    fn into_blocks_read(mut self) -> Vec<(u64, BlockRead)> {
        if let Some((number, c)) = self.current.take() {
            self.blocks_read
                .extend(c.blocks_read.into_iter().map(|h| (number, h)));
        }
        self.blocks_read
    }
}

impl Inner {
    /// Up to `limit` live keys ≥ `start` with their values, in key order.
    pub async fn scan(
        &self,
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        let out = self.scan_locked(start, limit).await?;
        // CPU of seeking each level and stepping through the entries returned (the blocks'
        // reads were timed by the scan).
        let levels = 1 + self
            .stats
            .borrow()
            .level_files
            .iter()
            .filter(|&&n| n > 0)
            .count() as u64;
        self.cpu(levels * self.opts.cpu.read_ns + out.len() as u64 * self.opts.cpu.merge_entry_ns)
            .await;
        Ok(out)
    }

    async fn scan_locked(
        &self,
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        // Under the lock, CPU only: the merge of the memtables and the tables' blocks (held
        // in memory). The device reads of the blocks it decoded come after the lock is
        // released, as a RocksDB iterator reads from a referenced version without the mutex
        // (see `get_locked`).
        let mut st = self.st.lock().await;
        let target = key::lookup_key(start, key::MAX_SEQUENCE);
        // Sources in internal-key order: the memtables (in memory) and a cursor per table
        // that reads blocks only as the merge reaches them.
        let mut out = Vec::new();
        let mut blocks: Vec<(u64, BlockRead)> = Vec::new();
        {
            let st = &mut *st;
            let mut cursors = Vec::new();
            for (l, files) in st.levels.iter_mut().enumerate() {
                if l == 0 {
                    // L0's tables overlap: each is a source of its own.
                    for f in files.iter_mut() {
                        if f.largest.as_slice() >= start {
                            cursors.push(SstSource::new(std::slice::from_mut(f), &target));
                        }
                    }
                } else {
                    // A sorted level: one source from the first file that can hold `start`.
                    let first = files.partition_point(|f| f.largest.as_slice() < start);
                    if first < files.len() {
                        cursors.push(SstSource::new(&mut files[first..], &target));
                    }
                }
            }
            // Memtable entries ≥ start, taken lazily from the ordered maps.
            type MemIter<'m> = Box<dyn Iterator<Item = (Vec<u8>, &'m [u8])> + 'm>;
            let mut mem_iters: Vec<MemIter<'_>> = vec![Box::new(st.mem.entries_from(start))];
            for imm in st.imms.iter().rev() {
                mem_iters.push(Box::new(imm.mem.entries_from(start)));
            }
            // Heads of every source; the smallest internal key goes next.
            let n_tables = cursors.len();
            let mut heads: Vec<Option<(Vec<u8>, Vec<u8>)>> = Vec::new();
            for c in cursors.iter_mut() {
                heads.push(c.next_entry()?);
            }
            for it in mem_iters.iter_mut() {
                heads.push(it.next().map(|(k, v)| (k, v.to_vec())));
            }
            let mut last: Option<Vec<u8>> = None;
            while out.len() < limit {
                let Some(min) =
                    (0..heads.len())
                        .filter(|&i| heads[i].is_some())
                        .min_by(|&a, &b| {
                            let (ka, kb) = (
                                &heads[a].as_ref().expect("some").0,
                                &heads[b].as_ref().expect("some").0,
                            );
                            key::compare(ka, kb)
                        })
                else {
                    break;
                };
                let (k, v) = heads[min].take().expect("some");
                heads[min] = if min < n_tables {
                    cursors[min].next_entry()?
                } else {
                    mem_iters[min - n_tables]
                        .next()
                        .map(|(k, v)| (k, v.to_vec()))
                };
                let (uk, _, t) =
                    key::parse(&k).ok_or_else(|| DbError::from(Corruption::InternalKey))?;
                if last.as_deref() == Some(uk) {
                    continue; // an older version
                }
                last = Some(uk.to_vec());
                if t == ValueType::Value {
                    out.push((uk.to_vec(), v));
                }
            }
            for c in cursors {
                blocks.extend(c.into_blocks_read());
            }
        }
        // CCZNS tables' chunks, to size the prefetches and check what they return.
        let mut cc_tables: BTreeMap<u64, Rc<CcBlocks>> = BTreeMap::new();
        for (number, h) in &blocks {
            if h.cc && !cc_tables.contains_key(number) {
                let cc = st
                    .levels
                    .iter()
                    .flatten()
                    .find(|f| f.number == *number)
                    .and_then(|f| f.table.cc_blocks())
                    .ok_or_else(|| {
                        DbError::from(Corruption::NotCcTable {
                            file: sst_name(*number),
                        })
                    })?;
                cc_tables.insert(*number, cc);
            }
        }
        drop(st);
        let files: BTreeSet<u64> = blocks.iter().map(|b| b.0).collect();
        let pins = FilePins::new(&self.pins, files.into_iter());
        // The blocks the scan decoded come from the device unless cached, through each file's
        // implicit readahead.
        let mut prefetch: Option<(u64, Readahead)> = None;
        // CCZNS: the compressed range [start, end) of the file the last DR prefetched.
        let mut cc_buffered: Option<(u64, u64, u64)> = None;
        let mut buf = Vec::new();
        for (number, h) in blocks {
            if self.cache.borrow_mut().lookup(number, h.offset) {
                continue;
            }
            if h.cc {
                let inside = cc_buffered
                    .is_some_and(|(n, lo, hi)| n == number && lo <= h.offset && h.offset < hi);
                if !inside {
                    let cc = cc_tables.get(&number).expect("gathered above");
                    let range = self.cc_prefetch(cc, number, h.offset).await?;
                    cc_buffered = Some((number, range.0, range.1));
                }
            } else {
                if prefetch.as_ref().is_none_or(|(n, _)| *n != number) {
                    prefetch = Some((number, Readahead::new(&self.opts)));
                }
                let ra = &mut prefetch.as_mut().expect("set").1;
                if let Some(len) = ra.read_for(h.offset, h.stored, &self.opts) {
                    buf.resize(len as usize, 0);
                    self.fs.read(&sst_name(number), h.offset, &mut buf).await?;
                }
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
        Ok(out)
    }

    /// An iterator's CCZNS prefetch from the chunk at `offset` of table `number`: one
    /// multi-chunk DR of up to `prefetch_bytes` of compressed data (a single-chunk DR when
    /// multi-chunk DR is off), checked against the table. Returns the compressed range read.
    async fn cc_prefetch(
        &self,
        table: &CcBlocks,
        number: u64,
        offset: u64,
    ) -> Result<(u64, u64), DbError> {
        let cc = self.opts.compression.cc().cloned().unwrap_or_default();
        let name = sst_name(number);
        let chunks = table.chunks();
        let i = chunks
            .binary_search_by_key(&offset, |c| c.offset)
            .map_err(|_| {
                DbError::from(Corruption::NoChunk {
                    file: name.clone(),
                    offset,
                })
            })?;
        let end = if cc.multi_chunk_dr {
            let mdts = self.fs.io().max_transfer_bytes();
            dr_span(chunks, i, cc.prefetch_bytes, mdts, self.fs.io().lba_bytes())
        } else {
            i + 1
        };
        let hi = chunks[end - 1].offset + chunks[end - 1].post as u64;
        let mut buf = std::mem::take(&mut *self.prefetch_buf.borrow_mut());
        buf.clear();
        let read = dr_chunks(&self.fs, &name, &chunks[i..end], &mut buf).await;
        let checked = read
            .and_then(|()| check_bytes(table.bytes(offset, buf.len() as u64), &name, offset, &buf));
        *self.prefetch_buf.borrow_mut() = buf;
        checked.map(|()| (offset, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readahead_starts_after_two_sequential_reads_and_doubles() {
        let opts = DbOptions::default();
        let mut ra = Readahead::new(&opts);
        let b = 4096;
        // Two sequential block reads go alone; the third fetches 8 KiB.
        assert_eq!(ra.read_for(0, b, &opts), Some(b));
        assert_eq!(ra.read_for(b, b, &opts), Some(b));
        assert_eq!(ra.read_for(2 * b, b, &opts), Some(8 << 10));
        // The next block was in that read.
        assert_eq!(ra.read_for(3 * b, b, &opts), None);
        // Then 16 KiB, 32 KiB ... up to 256 KiB.
        assert_eq!(ra.read_for(4 * b, b, &opts), Some(16 << 10));
        let mut off = 8 * b;
        let mut last = 0;
        for _ in 0..200 {
            if let Some(n) = ra.read_for(off, b, &opts) {
                last = n;
            }
            off += b;
        }
        assert_eq!(last, 256 << 10);
        // A jump starts over.
        assert_eq!(ra.read_for(10 << 20, b, &opts), Some(b));
        assert_eq!(ra.read_for((10 << 20) + b, b, &opts), Some(b));
        assert_eq!(ra.read_for((10 << 20) + 2 * b, b, &opts), Some(8 << 10));
    }
}
