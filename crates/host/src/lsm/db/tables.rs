//! Tables on zonefs: writing one as its entries come (plain: a 1 MiB write buffer at a time;
//! CCZNS: data blocks in compressed writes as the write buffer fills, the rest plain), and
//! reading a data block for a reader (the block cache, or one device read: a plain block, or
//! a CCZNS chunk by a single-chunk decompressed read, checked against the table's index).

use std::rc::Rc;

use super::super::cache::DataBlock;
use super::super::key;
use super::super::memtable::MemTable;
use super::super::sst::{decode_block, BlockRead, CcChunk, Table, TableBuilder};
use super::options::DbOptions;

use super::{sst_name, Corruption, DbError, Inner, Sst};
use crate::zonefs::plus::{JobKind, WriteClass};
use crate::zonefs::{FileWriter, Lifetime, ZoneFs, WRITE_BUFFER};

/// CNLB is 8 bits: a DR's compressed range spans at most 255 blocks.
const DR_MAX_BLOCKS: u64 = 255;

/// The end (exclusive) of the chunks from `i` one multi-chunk DR takes: at least chunk `i`,
/// then while the stored bytes stay within `max_stored`, the range within CNLB's 255 blocks
/// and the decompressed bytes within `max_raw`.
pub(super) fn dr_span(
    chunks: &[CcChunk],
    i: usize,
    max_stored: u64,
    max_raw: u64,
    block: u64,
) -> usize {
    let start = chunks[i].offset;
    let (mut end, mut raw) = (i + 1, chunks[i].pre as u64);
    while let Some(c) = chunks.get(end) {
        let stored = c.offset + c.post as u64 - start;
        let blocks = (start % block + stored).div_ceil(block);
        if stored > max_stored || blocks > DR_MAX_BLOCKS || raw + c.pre as u64 > max_raw {
            break;
        }
        raw += c.pre as u64;
        end += 1;
    }
    end
}

/// One decompressed read of `chunks` (consecutive; multi-chunk when more than one), appended
/// to `out` and checked against the sizes the index names.
pub(super) async fn dr_chunks(
    fs: &ZoneFs,
    name: &str,
    chunks: &[CcChunk],
    out: &mut Vec<u8>,
) -> Result<(), DbError> {
    let (first, last) = (chunks[0], chunks[chunks.len() - 1]);
    let stored = last.offset + last.post as u64 - first.offset;
    let raw: u64 = chunks.iter().map(|c| c.pre as u64).sum();
    let got = fs
        .decompressed_read(name, first.offset, stored, chunks.len() > 1, raw, out)
        .await?;
    check_chunks(name, chunks, &got)
}

/// A DR returned exactly the chunks the index names, with their sizes.
fn check_chunks(name: &str, want: &[CcChunk], got: &[(u32, u32)]) -> Result<(), DbError> {
    let same = want.len() == got.len()
        && want
            .iter()
            .zip(got)
            .all(|(w, &(pre, post))| w.pre == pre && w.post == post);
    if same {
        Ok(())
    } else {
        Err(Corruption::DecompressedChunks {
            file: name.to_string(),
            offset: want.first().map_or(0, |c| c.offset),
            got: got.len(),
            want: want.len(),
        }
        .into())
    }
}

/// A plain read of `len` bytes of `name` at `offset`, all of which must be there.
pub(super) async fn read_exact(
    fs: &ZoneFs,
    name: &str,
    offset: u64,
    buf: &mut [u8],
) -> Result<(), DbError> {
    if fs.read(name, offset, buf).await? != buf.len() {
        return Err(Corruption::ShortFile {
            file: name.to_string(),
        }
        .into());
    }
    Ok(())
}

/// What a block takes in the block cache: its raw size (a compressed block is cached
/// decompressed, so at least a block's worth).
pub(super) fn cache_charge(h: &BlockRead, opts: &DbOptions) -> u64 {
    if h.cc {
        h.raw
    } else {
        h.raw.max(opts.table.block_size as u64)
    }
}

/// A table being written, entry by entry: a CCZNS table's data blocks leave in compressed
/// writes as its write buffer fills; a plain table's bytes are appended a write buffer
/// (1 MiB) at a time, as RocksDB's file writer flushes its buffer.
pub(super) struct TableWriter {
    builder: TableBuilder,
    writer: FileWriter,
    fs: Rc<ZoneFs>,
    cc: bool,
    number: u64,
    smallest: Option<Vec<u8>>,
    largest: Vec<u8>,
    /// Key and value bytes added (where a compaction cuts its outputs).
    added_bytes: u64,
}

/// What the file system is told about a table file at its creation: ZenFS's lifetime hint,
/// and the job and level (ZenFS+).
#[derive(Clone, Copy, Debug)]
pub(super) struct FileHint {
    pub lifetime: Lifetime,
    pub class: WriteClass,
}

impl TableWriter {
    pub(super) async fn new(
        fs: &Rc<ZoneFs>,
        opts: &DbOptions,
        number: u64,
        hint: FileHint,
    ) -> Result<TableWriter, DbError> {
        Ok(TableWriter {
            builder: TableBuilder::new(opts.table.clone()),
            writer: fs
                .writer_for(&sst_name(number), hint.lifetime, hint.class)
                .await?,
            fs: fs.clone(),
            cc: opts.table.cc_write_buffer.is_some(),
            number,
            smallest: None,
            largest: Vec::new(),
            added_bytes: 0,
        })
    }

    /// Add an entry (internal keys in order).
    pub(super) async fn add(&mut self, k: &[u8], v: &[u8]) -> Result<(), DbError> {
        self.builder.add(k, v)?;
        let uk = key::user_key(k);
        if self.smallest.is_none() {
            self.smallest = Some(uk.to_vec());
        }
        self.largest.clear();
        self.largest.extend_from_slice(uk);
        self.added_bytes += (k.len() + v.len()) as u64;
        if self.cc {
            issue_cws(&mut self.writer, &mut self.builder).await?;
        } else if self.builder.pending_output() >= WRITE_BUFFER {
            self.writer.append(&self.builder.take_output()).await?;
        }
        Ok(())
    }

    pub(super) fn added_bytes(&self) -> u64 {
        self.added_bytes
    }

    /// Give the table up after a failure: its file goes, and with it the zone it held open
    /// (a writer dropped half way would keep its open-zone token until the next mount).
    pub(super) async fn abandon(self) {
        let TableWriter { fs, number, .. } = self;
        let _ = fs.delete(&sst_name(number)).await;
    }

    /// Write what is left and close the file: the table, opened from its tail. On a failure
    /// the file is deleted.
    pub(super) async fn finish(self) -> Result<Sst, DbError> {
        let (fs, number) = (self.fs.clone(), self.number);
        let r = self.finish_table().await;
        if r.is_err() {
            let _ = fs.delete(&sst_name(number)).await;
        }
        r
    }

    async fn finish_table(self) -> Result<Sst, DbError> {
        let TableWriter {
            mut builder,
            mut writer,
            cc,
            number,
            smallest,
            largest,
            ..
        } = self;
        let (tail, base, props) = if cc {
            // The index is built from the sizes the device reported and written after the
            // data region (plain).
            builder.finish_data()?;
            issue_cws(&mut writer, &mut builder).await?;
            let (tail, props) = builder.finish_cc()?;
            (tail, props.data_bytes, props)
        } else {
            let (rest, props) = builder.finish();
            let base = props.file_bytes - rest.len() as u64;
            (rest, base, props)
        };
        let table = Table::open(&tail, base)?;
        writer.append(&tail).await?;
        writer.close().await?;
        Ok(Sst {
            number,
            size: props.file_bytes,
            shape: (props.entries, props.data_raw_bytes, props.data_blocks),
            smallest: smallest.unwrap_or_default(),
            largest,
            table,
        })
    }
}

/// Issue the compressed writes a CCZNS table's builder has ready, handing the device's stored
/// sizes back to it.
async fn issue_cws(w: &mut FileWriter, b: &mut TableBuilder) -> Result<(), DbError> {
    for cw in b.take_cws() {
        let post = w.append_compressed(&cw.data, &cw.chunk_sizes).await?;
        b.cc_written(&post);
    }
    Ok(())
}

impl Inner {
    /// Write a memtable's entries as SST `number`.
    pub(super) async fn write_sst(
        fs: &Rc<ZoneFs>,
        opts: &DbOptions,
        mem: &MemTable,
        number: u64,
    ) -> Result<Sst, DbError> {
        let hint = FileHint {
            lifetime: Lifetime::Medium,
            class: WriteClass {
                kind: JobKind::Flush,
                level: 0,
            },
        };
        let mut w = TableWriter::new(fs, opts, number, hint).await?;
        for (k, v) in mem.entries() {
            if let Err(e) = w.add(&k, v).await {
                w.abandon().await;
                return Err(e);
            }
        }
        w.finish().await
    }

    /// Data block `i` of `sst` for a lookup or scan: from the block cache, or read from the
    /// device (a plain block, or its CCZNS chunk by a single-chunk decompressed read),
    /// decoded and cached. Also says whether the device read it.
    pub(super) async fn fetch_block(
        &self,
        sst: &Sst,
        i: usize,
    ) -> Result<(DataBlock, bool), DbError> {
        let h = sst.table.blocks()[i];
        if let Some(b) = self.cache.borrow_mut().lookup(sst.number, h.offset) {
            return Ok((b, false));
        }
        let name = sst_name(sst.number);
        let bytes = if h.cc {
            let mut buf = Vec::with_capacity(h.raw as usize);
            let chunk = sst.table.cc_chunks()[i];
            dr_chunks(&self.fs, &name, &[chunk], &mut buf).await?;
            buf
        } else {
            let mut buf = vec![0u8; h.stored as usize];
            read_exact(&self.fs, &name, h.offset, &mut buf).await?;
            buf
        };
        let block = self.decode(sst, h, bytes)?;
        Ok((block, true))
    }

    /// A block `sst` returned from the device (`bytes`, its stored form or its CCZNS chunk),
    /// decoded, and kept in the block cache unless a compaction retired the table meanwhile.
    pub(super) fn decode(
        &self,
        sst: &Sst,
        h: BlockRead,
        bytes: Vec<u8>,
    ) -> Result<DataBlock, DbError> {
        let (mut block, decompressed) = decode_block(h, bytes, &mut self.coder.borrow_mut())?;
        // The cache charges a block its length: it must not hold more (a CCZNS chunk's read
        // buffer is rounded up to whole LBAs, a decompression's grows by doubling; cached
        // as they were, a CC run at S = 1 held 8 GB for a 4 GiB cache).
        block.shrink_to_fit();
        if decompressed {
            self.stats.borrow_mut().host_decompressed_bytes += block.len() as u64;
        }
        let block = Rc::new(block);
        if !self.doomed.borrow().contains_key(&sst.number) {
            self.cache.borrow_mut().insert(
                sst.number,
                h.offset,
                cache_charge(&h, &self.opts),
                block.clone(),
            );
        }
        Ok(block)
    }
}
