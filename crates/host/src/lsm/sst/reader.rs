//! Reading a table: open (index and filter decoded once), point lookups through the filter
//! and index, cursors for scans, whole-table entries for compaction; a CCZNS table's tail,
//! data region and chunks.

use std::cmp::Ordering;
use std::rc::Rc;

use codec::Coder;

use super::super::bloom;
use super::super::cache::SharedDecodedBlocks;
use super::super::format::{
    cc_unpack_sizes, corrupt, read_block, read_block_into, read_footer, BlockHandle, FormatError,
    TRAILER,
};
use super::super::key::{self, ValueType};
use super::block::Block;
use super::{BlockRead, CcChunk, Entry, CC_REGION_PROPERTY, FILTER_NAME, PROPERTIES_NAME};

/// A table opened from its bytes: the index and filter are read at open, data blocks on
/// demand.
pub struct Table {
    /// A plain table's file; a CCZNS table's bytes after its data region.
    file: Vec<u8>,
    /// Where `file` starts in the table (a CCZNS table's data region length; 0 otherwise).
    base: u64,
    /// A CCZNS table's data blocks (with trailers, decompressed) and where each is.
    cc: Option<Rc<CcBlocks>>,
    /// The index block's entries (separator key, data block handle), decoded once at open;
    /// lookups and cursors binary-search them. Its raw size counts as pinned memory.
    index_entries: Vec<Entry>,
    index_bytes: usize,
    filter: Option<Vec<u8>>,
    coder: Coder,
    /// Where a compressed data block is decompressed, reused by every lookup.
    scratch: Vec<u8>,
    /// The store's decoded blocks and this table's id there (None: decompress every time).
    decoded: Option<(SharedDecodedBlocks, u64)>,
    /// The decoded block the last lookup took from `decoded`.
    current: Option<Rc<[u8]>>,
    /// The data block the last `get` read (None if the filter or index answered).
    last_block: Option<BlockRead>,
}

/// A CCZNS table's data blocks as the device decompresses them (with trailers) and its
/// chunks. Shared ([`Table::cc_blocks`]): a read the store issues after releasing its lock
/// checks what the device returned against them even if a compaction retires the table.
pub struct CcBlocks {
    blocks: Vec<u8>,
    chunks: Vec<CcChunk>,
    /// Where each chunk starts in `blocks`.
    starts: Vec<usize>,
}

impl CcBlocks {
    /// The chunks, in file order.
    pub fn chunks(&self) -> &[CcChunk] {
        &self.chunks
    }

    /// The `len` bytes of the chunks from the one at `offset` on (what a decompressed read
    /// there returns), if a chunk starts there.
    pub fn bytes(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let i = self
            .chunks
            .binary_search_by_key(&offset, |c| c.offset)
            .ok()?;
        self.blocks
            .get(self.starts[i]..self.starts[i].checked_add(len as usize)?)
    }
}

/// A block of the table's tail (handles count from the table's start, the bytes from `base`).
fn tail_block(
    file: &[u8],
    base: u64,
    h: BlockHandle,
    what: &'static str,
    coder: &mut Coder,
) -> Result<Vec<u8>, FormatError> {
    let offset = h
        .offset
        .checked_sub(base)
        .ok_or_else(|| corrupt(what, h.offset, "handle points into the data region"))?;
    read_block(file, BlockHandle { offset, ..h }, what, coder)
}

/// What a table's tail holds: index block, filter, properties.
struct Tail {
    index: Block<'static>,
    filter: Option<Vec<u8>>,
}

fn read_tail(file: &[u8], base: u64, coder: &mut Coder) -> Result<Tail, FormatError> {
    let (meta_h, index_h) = read_footer(file)?;
    let meta = Block::new(
        tail_block(file, base, meta_h, "metaindex block", coder)?,
        meta_h.offset,
    )?;
    let mut filter = None;
    for (name, v) in meta.entries()? {
        let (h, _) = BlockHandle::decode(&v)
            .ok_or_else(|| corrupt("metaindex entry", meta_h.offset, "bad handle"))?;
        if name == FILTER_NAME {
            filter = Some(tail_block(file, base, h, "filter block", coder)?);
        }
    }
    let index = Block::new(
        tail_block(file, base, index_h, "index block", coder)?,
        index_h.offset,
    )?;
    Ok(Tail { index, filter })
}

/// A property's value from a properties block's entries.
fn property(props: &[Entry], name: &str) -> Option<u64> {
    props
        .iter()
        .find(|(k, _)| k == name.as_bytes())
        .and_then(|(_, v)| Some(u64::from_le_bytes(v.as_slice().try_into().ok()?)))
}

/// Bytes of a table's footer.
pub const FOOTER_BYTES: u64 = super::super::format::FOOTER;

/// The metaindex and index handles a table's footer names, from its last bytes.
pub fn footer_handles(file_end: &[u8]) -> Result<(BlockHandle, BlockHandle), FormatError> {
    read_footer(file_end)
}

/// The properties block's handle, from the table's bytes from `base` to its end (which must
/// hold the metaindex).
pub fn properties_handle(file: &[u8], base: u64) -> Result<Option<BlockHandle>, FormatError> {
    let (meta_h, _) = read_footer(file)?;
    let meta = Block::new(
        tail_block(file, base, meta_h, "metaindex block", &mut Coder::new())?,
        meta_h.offset,
    )?;
    for (name, v) in meta.entries()? {
        if name == PROPERTIES_NAME {
            let (h, _) = BlockHandle::decode(&v)
                .ok_or_else(|| corrupt("metaindex entry", meta_h.offset, "bad handle"))?;
            return Ok(Some(h));
        }
    }
    Ok(None)
}

/// A CCZNS table's data region length from its metaindex and properties blocks, given the
/// bytes from `base` on (which must hold both): None for a plain table.
pub fn cc_region(file: &[u8], base: u64) -> Result<Option<u64>, FormatError> {
    let Some(h) = properties_handle(file, base)? else {
        return Ok(None);
    };
    let b = Block::new(
        tail_block(file, base, h, "properties block", &mut Coder::new())?,
        h.offset,
    )?;
    Ok(property(&b.entries()?, CC_REGION_PROPERTY))
}

/// The chunks of a CCZNS table's data region, in order, from its index entries.
fn cc_chunks_of(index: &[Entry], region: u64) -> Result<Vec<CcChunk>, FormatError> {
    let mut chunks = Vec::with_capacity(index.len());
    let mut next = 0u64;
    for (_, v) in index {
        let (h, _) = BlockHandle::decode(v)
            .ok_or_else(|| corrupt("index entry", next, "bad block handle"))?;
        let (post, pre) = cc_unpack_sizes(h.size)
            .ok_or_else(|| corrupt("index entry", h.offset, "bad CCZNS sizes"))?;
        let ok = h.offset == next
            && pre > TRAILER
            && pre <= u16::MAX as u64
            && post > 0
            && h.offset + post <= region;
        if !ok {
            return Err(corrupt(
                "index entry",
                h.offset,
                format!("CCZNS chunk of {post} stored / {pre} raw bytes out of place"),
            ));
        }
        chunks.push(CcChunk {
            offset: h.offset,
            post: post as u32,
            pre: pre as u32,
        });
        next = h.offset + post;
    }
    Ok(chunks)
}

/// The chunks a CCZNS table's data region holds, from the bytes after the region (which
/// `base` is the length of): what a reader must fetch by decompressed reads.
pub fn cc_chunks(tail: &[u8], base: u64) -> Result<Vec<CcChunk>, FormatError> {
    let t = read_tail(tail, base, &mut Coder::new())?;
    cc_chunks_of(&t.index.entries()?, base)
}

impl Table {
    pub fn open(file: Vec<u8>) -> Result<Table, FormatError> {
        let mut coder = Coder::new();
        let t = read_tail(&file, 0, &mut coder)?;
        Ok(Table {
            file,
            base: 0,
            cc: None,
            index_entries: t.index.entries()?,
            index_bytes: t.index.byte_len(),
            filter: t.filter,
            coder,
            scratch: Vec::new(),
            decoded: None,
            current: None,
            last_block: None,
        })
    }

    /// A CCZNS table from the bytes after its data region (`base` long) and the region's
    /// blocks as decompressed reads returned them, back to back.
    pub fn open_cc(tail: Vec<u8>, base: u64, blocks: Vec<u8>) -> Result<Table, FormatError> {
        let mut coder = Coder::new();
        let t = read_tail(&tail, base, &mut coder)?;
        let index_entries = t.index.entries()?;
        let chunks = cc_chunks_of(&index_entries, base)?;
        let mut starts = Vec::with_capacity(chunks.len());
        let mut at = 0usize;
        for c in &chunks {
            starts.push(at);
            at += c.pre as usize;
        }
        if at != blocks.len() {
            return Err(corrupt(
                "data region",
                0,
                format!("{} bytes of blocks for chunks of {at}", blocks.len()),
            ));
        }
        Ok(Table {
            file: tail,
            base,
            cc: Some(Rc::new(CcBlocks {
                blocks,
                chunks,
                starts,
            })),
            index_entries,
            index_bytes: t.index.byte_len(),
            filter: t.filter,
            coder,
            scratch: Vec::new(),
            decoded: None,
            current: None,
            last_block: None,
        })
    }

    /// A CCZNS table's chunks, in file order (empty for a plain table).
    pub fn cc_chunks(&self) -> &[CcChunk] {
        self.cc.as_ref().map_or(&[], |c| &c.chunks)
    }

    /// The `len` bytes of this CCZNS table's chunks from the one at `offset` on (what a
    /// decompressed read there returns), if it has a chunk there.
    pub fn cc_bytes(&self, offset: u64, len: u64) -> Option<&[u8]> {
        self.cc.as_ref()?.bytes(offset, len)
    }

    /// A CCZNS table's blocks and chunks, shared (None for a plain table).
    pub fn cc_blocks(&self) -> Option<Rc<CcBlocks>> {
        self.cc.clone()
    }

    /// Bytes of the data region (a CCZNS table), where the plain bytes start.
    pub fn cc_region(&self) -> Option<u64> {
        self.cc.as_ref().map(|_| self.base)
    }

    /// Keep the blocks this table decompresses for lookups and scans in the store's shared
    /// [`DecodedBlocks`](super::cache::DecodedBlocks), and take them from there.
    pub fn share_decoded(&mut self, decoded: &SharedDecodedBlocks) {
        let id = decoded.borrow_mut().next_table_id();
        self.decoded = Some((decoded.clone(), id));
    }

    /// The data block at index entry `v`. `keep`: a lookup's or a scan's, which may come from
    /// and go to the decoded blocks (a compaction's read of every block does not).
    fn data_block(&mut self, v: &[u8], keep: bool) -> Result<Block<'_>, FormatError> {
        let (h, _) =
            BlockHandle::decode(v).ok_or_else(|| corrupt("index entry", 0, "bad block handle"))?;
        let Some(cc) = &self.cc else {
            self.last_block = Some(BlockRead {
                offset: h.offset,
                stored: h.on_disk(),
                raw: h.size,
                cc: false,
            });
            let decoded = self.decoded.as_ref().filter(|_| keep);
            if let Some(block) = decoded.and_then(|(d, id)| d.borrow().get(*id, h.offset)) {
                let block = &**self.current.insert(block);
                return Block::new(block, h.offset);
            }
            let (raw, decompressed) = read_block_into(
                &self.file,
                h,
                "data block",
                &mut self.coder,
                &mut self.scratch,
            )?;
            if let (Some((d, id)), true) = (decoded, decompressed) {
                d.borrow_mut().insert(*id, h.offset, raw);
            }
            return Block::new(raw, h.offset);
        };
        let i = cc
            .chunks
            .binary_search_by_key(&h.offset, |c| c.offset)
            .map_err(|_| corrupt("index entry", h.offset, "no CCZNS chunk starts here"))?;
        let c = cc.chunks[i];
        self.last_block = Some(BlockRead {
            offset: c.offset,
            stored: c.post as u64,
            raw: c.pre as u64,
            cc: true,
        });
        let chunk = &cc.blocks[cc.starts[i]..cc.starts[i] + c.pre as usize];
        let raw = read_block_into(
            chunk,
            BlockHandle {
                offset: 0,
                size: c.pre as u64 - TRAILER,
            },
            "data block",
            &mut self.coder,
            &mut self.scratch,
        )?
        .0;
        Block::new(raw, h.offset)
    }

    /// Host memory a table reader pins (RocksDB keeps index and filter blocks in memory).
    pub fn index_and_filter_bytes(&self) -> u64 {
        (self.index_bytes + self.filter.as_ref().map_or(0, Vec::len)) as u64
    }

    /// The data block the last [`get`](Self::get) had to read, for the caller to charge its
    /// I/O (None when the filter or index answered without one).
    pub fn last_block(&self) -> Option<BlockRead> {
        self.last_block
    }

    /// The newest entry for `user_key` visible at `seq`: its type and value (a deletion has
    /// an empty value). None if the table has no version of the key at or below `seq`.
    pub fn get(
        &mut self,
        user_key: &[u8],
        seq: u64,
    ) -> Result<Option<(ValueType, Vec<u8>)>, FormatError> {
        self.last_block = None;
        if let Some(f) = &self.filter {
            if !bloom::may_contain(f, user_key) {
                return Ok(None);
            }
        }
        let target = key::lookup_key(user_key, seq);
        let i = self.first_block_for(&target);
        let Some((_, handle)) = self.index_entries.get(i) else {
            return Ok(None);
        };
        let handle = handle.clone();
        let block = self.data_block(&handle, true)?;
        match block.seek(&target, key::compare)? {
            Some((k, v)) => {
                let (uk, _, t) = key::parse(&k)
                    .ok_or_else(|| corrupt("data block", 0, "entry is not an internal key"))?;
                Ok((uk == user_key).then_some((t, v)))
            }
            None => Ok(None),
        }
    }

    /// A cursor over the entries at or after internal key `target`, reading data blocks only as
    /// it reaches them.
    pub fn cursor(&mut self, target: &[u8]) -> Result<TableCursor<'_>, FormatError> {
        let first = self.first_block_for(target);
        Ok(TableCursor {
            table: self,
            next_block: first,
            buf: Vec::new(),
            pos: 0,
            target: target.to_vec(),
            blocks_read: Vec::new(),
        })
    }

    /// The first data block whose last key is ≥ `target`: it holds the first entry ≥ target.
    fn first_block_for(&self, target: &[u8]) -> usize {
        self.index_entries
            .partition_point(|(k, _)| key::compare(k, target) == Ordering::Less)
    }

    /// Every entry, in order.
    pub fn entries(&mut self) -> Result<Vec<Entry>, FormatError> {
        let mut out = Vec::new();
        for i in 0..self.index_entries.len() {
            let handle = self.index_entries[i].1.clone();
            out.extend(self.data_block(&handle, false)?.entries()?);
        }
        Ok(out)
    }
}

/// Entries of one table from a seek position, block by block.
pub struct TableCursor<'a> {
    table: &'a mut Table,
    next_block: usize,
    buf: Vec<Entry>,
    pos: usize,
    target: Vec<u8>,
    /// The data blocks decoded, for the caller to charge their reads.
    pub blocks_read: Vec<BlockRead>,
}

impl TableCursor<'_> {
    /// The next entry, or None at the table's end.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, FormatError> {
        while self.pos == self.buf.len() {
            let Some((_, handle)) = self.table.index_entries.get(self.next_block) else {
                return Ok(None);
            };
            let handle = handle.clone();
            self.next_block += 1;
            self.buf = self.table.data_block(&handle, true)?.entries()?;
            if let Some(h) = self.table.last_block {
                self.blocks_read.push(h);
            }
            self.pos = self
                .buf
                .partition_point(|(k, _)| key::compare(k, &self.target) == Ordering::Less);
        }
        self.pos += 1;
        Ok(Some(std::mem::take(&mut self.buf[self.pos - 1])))
    }
}
