//! A compaction's inputs, streamed: each table read front to back in readahead-sized reads
//! (RocksDB's `compaction_readahead_size`, 2 MiB; a CCZNS table's data region by multi-chunk
//! decompressed reads of up to that much, then its plain tail), its data blocks decoded as
//! the merge reaches them. A sorted level's files are one source, opened one after another.
//! Memory: one readahead buffer and one decoded block per source.

use std::rc::Rc;

use super::super::sst::{block_entries, decode_block, Entry};
use super::tables::{dr_chunks, dr_span};
use super::{sst_name, Corruption, DbError, Inner, Sst};

/// One input table being read.
struct InputTable {
    sst: Rc<Sst>,
    next_block: usize,
    /// Plain: the file's bytes [window_at, window_at + window.len()) read so far and not yet
    /// consumed; CCZNS: the decompressed chunks [cc_first, cc_end) of the last read.
    window: Vec<u8>,
    window_at: u64,
    /// How far the file has been read (plain reads go in readahead-sized steps from 0).
    read_to: u64,
    cc_span: (usize, usize),
    cc_at: usize,
}

impl InputTable {
    fn new(sst: Rc<Sst>) -> InputTable {
        InputTable {
            sst,
            next_block: 0,
            window: Vec::new(),
            window_at: 0,
            read_to: 0,
            cc_span: (0, 0),
            cc_at: 0,
        }
    }

    /// The next data block's entries, and its decoded size; None at the table's end (after
    /// reading what is left of the file, as a compaction reads each input whole).
    async fn next_block(&mut self, db: &Inner) -> Result<Option<(Vec<Entry>, u64)>, DbError> {
        let i = self.next_block;
        let Some(&h) = self.sst.table.blocks().get(i) else {
            self.read_rest(db).await?;
            return Ok(None);
        };
        self.next_block += 1;
        let bytes = if h.cc {
            self.cc_chunk(db, i).await?
        } else {
            self.plain_block(db, h.offset, h.stored).await?
        };
        let (block, decompressed) = decode_block(h, bytes, &mut db.coder.borrow_mut())?;
        if decompressed {
            db.stats.borrow_mut().host_decompressed_bytes += block.len() as u64;
        }
        Ok(Some((block_entries(&block, h.offset)?, block.len() as u64)))
    }

    fn readahead(db: &Inner) -> u64 {
        db.opts.compaction_readahead_size.max(4096)
    }

    /// Read the next readahead-sized piece of the file (from `read_to`) into the window.
    async fn read_more(&mut self, db: &Inner) -> Result<bool, DbError> {
        let size = self.sst.size;
        if self.read_to >= size {
            return Ok(false);
        }
        let n = (size - self.read_to).min(Self::readahead(db)) as usize;
        let at = self.window.len();
        self.window.resize(at + n, 0);
        let name = sst_name(self.sst.number);
        let got = db
            .fs
            .read(&name, self.read_to, &mut self.window[at..])
            .await?;
        self.window.truncate(at + got);
        self.read_to += got as u64;
        Ok(got > 0)
    }

    /// A plain block's stored bytes from the window, reading on as far as it ends.
    async fn plain_block(&mut self, db: &Inner, offset: u64, len: u64) -> Result<Vec<u8>, DbError> {
        while self.window_at + (self.window.len() as u64) < offset + len {
            // What lies before the block is consumed: dropped before the window grows (a
            // block's worth or less moves).
            let drop = (offset.saturating_sub(self.window_at) as usize).min(self.window.len());
            self.window.drain(..drop);
            self.window_at += drop as u64;
            if !self.read_more(db).await? {
                return Err(Corruption::ShortFile {
                    file: sst_name(self.sst.number),
                }
                .into());
            }
        }
        let at = (offset - self.window_at) as usize;
        Ok(self.window[at..at + len as usize].to_vec())
    }

    /// A CCZNS chunk's decompressed bytes: from the last multi-chunk read, or a new one of up
    /// to the readahead size from it.
    async fn cc_chunk(&mut self, db: &Inner, i: usize) -> Result<Vec<u8>, DbError> {
        let chunks = self.sst.table.cc_chunks();
        if i >= self.cc_span.1 {
            let multi = db.opts.compression.cc().is_none_or(|c| c.multi_chunk_dr);
            let end = if multi {
                let (mdts, lba) = (db.fs.io().max_transfer_bytes(), db.fs.io().lba_bytes());
                dr_span(chunks, i, db.opts.compaction_readahead_size, mdts, lba)
            } else {
                i + 1
            };
            self.window.clear();
            dr_chunks(
                &db.fs,
                &sst_name(self.sst.number),
                &chunks[i..end],
                &mut self.window,
            )
            .await?;
            self.cc_span = (i, end);
            self.cc_at = 0;
        }
        let len = chunks[i].pre as usize;
        let bytes = self
            .window
            .get(self.cc_at..self.cc_at + len)
            .ok_or_else(|| Corruption::ShortFile {
                file: sst_name(self.sst.number),
            })?
            .to_vec();
        self.cc_at += len;
        Ok(bytes)
    }

    /// The rest of the file after the last block: a CCZNS table's plain tail in readahead
    /// steps from the region's end; a plain table's remaining readahead steps.
    async fn read_rest(&mut self, db: &Inner) -> Result<(), DbError> {
        if let Some(region) = self.sst.table.cc_region() {
            self.read_to = self.read_to.max(region);
        }
        self.window.clear();
        while self.read_more(db).await? {
            self.window.clear();
        }
        Ok(())
    }
}

/// One source of a compaction's merge: an input table, or a sorted level's input files one
/// after another.
pub(super) struct InputSource {
    files: std::vec::IntoIter<Rc<Sst>>,
    current: Option<InputTable>,
    entries: std::vec::IntoIter<Entry>,
}

impl InputSource {
    pub(super) fn new(files: Vec<Rc<Sst>>) -> InputSource {
        InputSource {
            files: files.into_iter(),
            current: None,
            entries: Vec::new().into_iter(),
        }
    }

    /// The next entry, adding the decoded size of each block read to `raw`.
    pub(super) async fn next_entry(
        &mut self,
        db: &Inner,
        raw: &mut u64,
    ) -> Result<Option<Entry>, DbError> {
        loop {
            if let Some(e) = self.entries.next() {
                return Ok(Some(e));
            }
            if let Some(t) = &mut self.current {
                if let Some((block, bytes)) = t.next_block(db).await? {
                    *raw += bytes;
                    self.entries = block.into_iter();
                    continue;
                }
                self.current = None;
            }
            let Some(f) = self.files.next() else {
                return Ok(None);
            };
            self.current = Some(InputTable::new(f));
        }
    }
}
