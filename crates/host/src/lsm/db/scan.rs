//! Range scans: a merge of the memtables and a source per table (a sorted level opens its
//! next file only when the merge reaches it), each reading its data blocks as the merge
//! reaches them, from the block cache or the device: through RocksDB's implicit readahead
//! or, for CCZNS tables, multi-chunk prefetches.

use std::rc::Rc;

use super::super::key::{self, ValueType};
use super::super::memtable::MemTable;
use super::super::sst::{block_entries, BlockRead, Entry};
use super::options::DbOptions;
use super::tables::{dr_chunks, dr_span, read_exact};

use super::{smallest_head, sst_name, Corruption, DbError, Inner, Sst};

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

/// One table as a scan reads it: its blocks in order from the one holding `target`, each
/// from the block cache, the table's prefetch buffer, or a device read (RocksDB's
/// per-iterator prefetch buffer: plain tables through [`Readahead`], CCZNS tables by
/// multi-chunk decompressed reads of up to `prefetch_bytes`).
struct TableScan {
    sst: Rc<Sst>,
    next_block: usize,
    readahead: Readahead,
    /// Plain: the bytes the last readahead fetched, and the file offset they start at.
    prefetched: Vec<u8>,
    prefetched_at: u64,
    /// CCZNS: the chunks [first, end) the last prefetch returned, back to back in
    /// `prefetched`, and where each starts there.
    cc_chunks: (usize, usize),
    cc_starts: Vec<usize>,
}

impl TableScan {
    fn new(sst: Rc<Sst>, target: &[u8], opts: &DbOptions) -> TableScan {
        TableScan {
            next_block: sst.table.first_block_for(target),
            sst,
            readahead: Readahead::new(opts),
            prefetched: Vec::new(),
            prefetched_at: 0,
            cc_chunks: (0, 0),
            cc_starts: Vec::new(),
        }
    }

    /// The next block's entries, or None past the table's last block.
    async fn next_block(&mut self, db: &Inner) -> Result<Option<Vec<Entry>>, DbError> {
        let i = self.next_block;
        let Some(&h) = self.sst.table.blocks().get(i) else {
            return Ok(None);
        };
        self.next_block += 1;
        let cached = db.cache.borrow_mut().lookup(self.sst.number, h.offset);
        let block = match cached {
            Some(b) => b,
            None => {
                let bytes = if h.cc {
                    self.cc_chunk(db, i).await?
                } else {
                    self.plain_block(db, h).await?
                };
                db.decode(&self.sst, h, bytes)?
            }
        };
        Ok(Some(block_entries(&block, h.offset)?))
    }

    /// A plain block's stored bytes: from the prefetch buffer, or a read of the block alone
    /// or of the readahead from it.
    async fn plain_block(&mut self, db: &Inner, h: BlockRead) -> Result<Vec<u8>, DbError> {
        let name = sst_name(self.sst.number);
        match self.readahead.read_for(h.offset, h.stored, &db.opts) {
            None => {}
            Some(len) if self.readahead.buffered == (h.offset, h.offset + len) => {
                self.prefetched.resize(len as usize, 0);
                let n = db.fs.read(&name, h.offset, &mut self.prefetched).await?;
                self.prefetched.truncate(n);
                self.prefetched_at = h.offset;
            }
            Some(_) => {
                let mut buf = vec![0u8; h.stored as usize];
                read_exact(&db.fs, &name, h.offset, &mut buf).await?;
                return Ok(buf);
            }
        }
        let at = (h.offset - self.prefetched_at) as usize;
        self.prefetched
            .get(at..at + h.stored as usize)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Corruption::ShortFile { file: name }.into())
    }

    /// A CCZNS chunk's decompressed bytes: from the last prefetch, or a new one from it.
    async fn cc_chunk(&mut self, db: &Inner, i: usize) -> Result<Vec<u8>, DbError> {
        let (first, end) = self.cc_chunks;
        if !(first <= i && i < end) {
            let cc = db.opts.compression.cc().cloned().unwrap_or_default();
            let chunks = self.sst.table.cc_chunks();
            let end = if cc.multi_chunk_dr {
                let mdts = db.fs.io().max_transfer_bytes();
                dr_span(chunks, i, cc.prefetch_bytes, mdts, db.fs.io().lba_bytes())
            } else {
                i + 1
            };
            self.prefetched.clear();
            let name = sst_name(self.sst.number);
            dr_chunks(&db.fs, &name, &chunks[i..end], &mut self.prefetched).await?;
            self.cc_chunks = (i, end);
            self.cc_starts.clear();
            let mut at = 0;
            for c in &chunks[i..end] {
                self.cc_starts.push(at);
                at += c.pre as usize;
            }
        }
        let at = self.cc_starts[i - self.cc_chunks.0];
        let len = self.sst.table.cc_chunks()[i].pre as usize;
        self.prefetched
            .get(at..at + len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| {
                Corruption::ShortFile {
                    file: sst_name(self.sst.number),
                }
                .into()
            })
    }
}

/// A scan's source of SST entries in key order: one L0 table, or a sorted level whose next
/// file is opened only when the merge reaches it (RocksDB's LevelIterator). A scan thus reads
/// the blocks it returns, not the first block of every file past its start.
struct SstSource {
    files: std::vec::IntoIter<Rc<Sst>>,
    current: Option<TableScan>,
    target: Vec<u8>,
    entries: std::vec::IntoIter<Entry>,
}

impl SstSource {
    fn new(files: Vec<Rc<Sst>>, target: &[u8]) -> SstSource {
        SstSource {
            files: files.into_iter(),
            current: None,
            target: target.to_vec(),
            entries: Vec::new().into_iter(),
        }
    }

    async fn next_entry(&mut self, db: &Inner) -> Result<Option<Entry>, DbError> {
        loop {
            if let Some(e) = self.entries.next() {
                return Ok(Some(e));
            }
            if let Some(t) = &mut self.current {
                if let Some(mut block) = t.next_block(db).await? {
                    // The first block read may start below the target.
                    let skip =
                        block.partition_point(|(k, _)| key::compare(k, &self.target).is_lt());
                    block.drain(..skip);
                    self.entries = block.into_iter();
                    continue;
                }
                self.current = None;
            }
            let Some(f) = self.files.next() else {
                return Ok(None);
            };
            self.current = Some(TableScan::new(f, &self.target, &db.opts));
        }
    }
}

/// The active memtable's entries from `start` a scan may reach: all versions of its keys
/// until `limit` of them hold a value (a scan of `limit` keys stops there at the latest; a
/// deletion yields nothing, so keys carry on past it).
fn memtable_window(mem: &MemTable, start: &[u8], limit: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut live = 0;
    let mut last: Option<Vec<u8>> = None;
    for (k, v) in mem.entries_from(start) {
        let Some((uk, _, t)) = key::parse(&k) else {
            continue;
        };
        if last.as_deref() != Some(uk) {
            if live == limit {
                break;
            }
            last = Some(uk.to_vec());
            live += usize::from(t == ValueType::Value);
        }
        out.push((k, v.to_vec()));
    }
    out
}

impl Inner {
    /// Up to `limit` live keys ≥ `start` with their values, in key order.
    pub async fn scan(
        &self,
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        let out = self.scan_versions(start, limit).await?;
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

    async fn scan_versions(
        &self,
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        // Under the lock, CPU only: the active memtable's entries the scan may reach, the
        // immutable memtables and the tables (held by their Rc, as a RocksDB iterator holds
        // its version). The merge and its device reads come after the lock is released.
        let target = key::lookup_key(start, key::MAX_SEQUENCE);
        let (mem, imms, mut sources, held) = {
            let st = self.st.lock().await;
            let mem = memtable_window(&st.mem, start, limit);
            let imms: Vec<Rc<MemTable>> = st.imms.iter().rev().map(|m| m.mem.clone()).collect();
            let mut sources = Vec::new();
            let mut held: Vec<Rc<Sst>> = Vec::new();
            for (l, files) in st.levels.iter().enumerate() {
                if l == 0 {
                    // L0's tables overlap: each is a source of its own.
                    for f in files.iter().filter(|f| f.largest.as_slice() >= start) {
                        sources.push(SstSource::new(vec![f.clone()], &target));
                        held.push(f.clone());
                    }
                } else {
                    // A sorted level: one source from the first file that can hold `start`.
                    let first = files.partition_point(|f| f.largest.as_slice() < start);
                    if first < files.len() {
                        sources.push(SstSource::new(files[first..].to_vec(), &target));
                        held.extend(files[first..].iter().cloned());
                    }
                }
            }
            (mem, imms, sources, held)
        };
        let result = self
            .merge_scan(&mut sources, mem, &imms, start, limit)
            .await;
        drop(sources);
        self.release_tables(held).await?;
        result
    }

    /// The merge: the smallest internal key of every source's head goes next; the newest
    /// version of each user key counts, deletions hide it.
    async fn merge_scan(
        &self,
        sources: &mut [SstSource],
        mem: Vec<Entry>,
        imms: &[Rc<MemTable>],
        start: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, DbError> {
        type MemIter<'m> = Box<dyn Iterator<Item = (Vec<u8>, Vec<u8>)> + 'm>;
        let mut mem_iters: Vec<MemIter<'_>> = vec![Box::new(mem.into_iter())];
        for imm in imms {
            mem_iters.push(Box::new(
                imm.entries_from(start).map(|(k, v)| (k, v.to_vec())),
            ));
        }
        let n_tables = sources.len();
        let mut heads: Vec<Option<Entry>> = Vec::with_capacity(n_tables + mem_iters.len());
        for s in sources.iter_mut() {
            heads.push(s.next_entry(self).await?);
        }
        for it in mem_iters.iter_mut() {
            heads.push(it.next());
        }
        let mut out = Vec::new();
        let mut last: Option<Vec<u8>> = None;
        while out.len() < limit {
            let Some(min) = smallest_head(&heads) else {
                break;
            };
            let (k, v) = heads[min].take().expect("some");
            heads[min] = if min < n_tables {
                sources[min].next_entry(self).await?
            } else {
                mem_iters[min - n_tables].next()
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
        Ok(out)
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
