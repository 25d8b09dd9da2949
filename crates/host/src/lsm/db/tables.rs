//! Whole tables on zonefs: writing one (plain: built in memory and appended; CCZNS: data
//! blocks in compressed writes as the write buffer fills, the rest plain), and the
//! decompressed reads of a CCZNS table's chunks, checked against its index.

use std::rc::Rc;

use super::super::cache::SharedDecodedBlocks;
use super::super::key;
use super::super::memtable::MemTable;
use super::super::sst::{CcChunk, Table, TableBuilder};
use super::options::DbOptions;

use super::{sst_name, Corruption, DbError, Inner, Sst};
use crate::zonefs::{FileWriter, Lifetime, ZoneFs};

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

/// A new table that keeps its decoded blocks in the store's `decoded`.
pub(super) fn shared(mut table: Table, decoded: &SharedDecodedBlocks) -> Table {
    table.share_decoded(decoded);
    table
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

/// A CCZNS table's whole data region by decompressed reads of up to `max_stored` compressed
/// bytes each (single-chunk reads when `multi` is off), into `out` (kept whole, or only the
/// last read's when not `keep`).
pub(super) async fn dr_region(
    fs: &ZoneFs,
    name: &str,
    chunks: &[CcChunk],
    max_stored: u64,
    multi: bool,
    keep: bool,
    out: &mut Vec<u8>,
) -> Result<(), DbError> {
    let (mdts, block) = (fs.io().max_transfer_bytes(), fs.io().lba_bytes());
    let mut i = 0;
    while i < chunks.len() {
        let end = if multi {
            dr_span(chunks, i, max_stored, mdts, block)
        } else {
            i + 1
        };
        if !keep {
            out.clear();
        }
        dr_chunks(fs, name, &chunks[i..end], out).await?;
        i = end;
    }
    Ok(())
}

/// The bytes a decompressed read at `offset` returned are the table's own chunks there
/// (`expected`: [`Table::cc_bytes`] at `offset`, as long as what came back).
pub(super) fn check_bytes(
    expected: Option<&[u8]>,
    name: &str,
    offset: u64,
    bytes: &[u8],
) -> Result<(), DbError> {
    if expected == Some(bytes) {
        Ok(())
    } else {
        Err(Corruption::DecompressedBytes {
            file: name.to_string(),
            offset,
        }
        .into())
    }
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

impl Inner {
    pub(super) async fn write_sst(
        fs: &Rc<ZoneFs>,
        opts: &DbOptions,
        decoded: &SharedDecodedBlocks,
        mem: &MemTable,
        number: u64,
    ) -> Result<Sst, DbError> {
        let entries: Vec<(Vec<u8>, &[u8])> = mem.entries().collect();
        Self::write_table(
            fs,
            opts,
            decoded,
            entries.iter().map(|(k, v)| (k.as_slice(), *v)),
            number,
            Lifetime::Medium,
        )
        .await
    }

    /// Write entries (internal keys in order) as SST `number`.
    pub(super) async fn write_table<'a>(
        fs: &Rc<ZoneFs>,
        opts: &DbOptions,
        decoded: &SharedDecodedBlocks,
        entries: impl Iterator<Item = (&'a [u8], &'a [u8])>,
        number: u64,
        lifetime: Lifetime,
    ) -> Result<Sst, DbError> {
        let mut b = TableBuilder::new(opts.table.clone());
        let mut smallest = None;
        let mut largest = Vec::new();
        if opts.table.cc_write_buffer.is_none() {
            for (k, v) in entries {
                b.add(k, v)?;
                let uk = key::user_key(k).to_vec();
                smallest.get_or_insert_with(|| uk.clone());
                largest = uk;
            }
            let (bytes, props) = b.finish();
            let mut w = fs.writer(&sst_name(number), lifetime).await?;
            w.append(&bytes).await?;
            w.close().await?;
            return Ok(Sst {
                number,
                size: props.file_bytes,
                shape: (props.entries, props.data_raw_bytes, props.data_blocks),
                smallest: smallest.unwrap_or_default(),
                largest,
                table: shared(Table::open(bytes)?, decoded),
            });
        }
        // CCZNS: data blocks leave in compressed writes as the write buffer fills; the index
        // is built from the sizes the device reported and written after them (plain).
        let mut w = fs.writer(&sst_name(number), lifetime).await?;
        for (k, v) in entries {
            b.add(k, v)?;
            let uk = key::user_key(k).to_vec();
            smallest.get_or_insert_with(|| uk.clone());
            largest = uk;
            issue_cws(&mut w, &mut b).await?;
        }
        b.finish_data()?;
        issue_cws(&mut w, &mut b).await?;
        let (tail, props, blocks) = b.finish_cc()?;
        w.append(&tail).await?;
        w.close().await?;
        Ok(Sst {
            number,
            size: props.file_bytes,
            shape: (props.entries, props.data_raw_bytes, props.data_blocks),
            smallest: smallest.unwrap_or_default(),
            largest,
            table: shared(Table::open_cc(tail, props.data_bytes, blocks)?, decoded),
        })
    }
}
