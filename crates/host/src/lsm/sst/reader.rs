//! Reading a table: open from its tail (index and filter decoded once, as RocksDB pins them),
//! where each data block is, point lookups and seeks in a block the caller read, and a CCZNS
//! table's data region and chunks. A table keeps no data block: the caller reads them from
//! the device (through the store's block cache) and decodes them with [`decode_block`].

use std::cmp::Ordering;

use codec::Coder;

use super::super::bloom;
use super::super::format::{
    self, cc_unpack_sizes, corrupt, read_block, read_footer, BlockHandle, FormatError, TRAILER,
};
use super::super::key::{self, ValueType};
use super::block::Block;
use super::{BlockRead, CcChunk, Entry, CC_REGION_PROPERTY, FILTER_NAME, PROPERTIES_NAME};

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

/// What a table's tail holds: index block, filter, the CCZNS data region's length, and where
/// its first block starts (a plain table's data blocks end there).
struct Tail {
    index: Block<'static>,
    filter: Option<Vec<u8>>,
    cc_region: Option<u64>,
    start: u64,
}

/// The footer's index handle and the metaindex's named handles, from the table's bytes from
/// `base` to its end (which must hold the metaindex); also where the first of those blocks
/// and the metaindex starts (a plain table's data blocks end there).
struct Meta {
    index: BlockHandle,
    named: Vec<(Vec<u8>, BlockHandle)>,
    start: u64,
}

fn read_meta(file: &[u8], base: u64, coder: &mut Coder) -> Result<Meta, FormatError> {
    let (meta_h, index_h) = read_footer(file)?;
    let meta = Block::new(
        tail_block(file, base, meta_h, "metaindex block", coder)?,
        meta_h.offset,
    )?;
    let mut start = meta_h.offset.min(index_h.offset);
    let mut named = Vec::new();
    for (name, v) in meta.entries()? {
        let (h, _) = BlockHandle::decode(&v)
            .ok_or_else(|| corrupt("metaindex entry", meta_h.offset, "bad handle"))?;
        start = start.min(h.offset);
        named.push((name, h));
    }
    Ok(Meta {
        index: index_h,
        named,
        start,
    })
}

fn read_tail(file: &[u8], base: u64, coder: &mut Coder) -> Result<Tail, FormatError> {
    let meta = read_meta(file, base, coder)?;
    let (index_h, start) = (meta.index, meta.start);
    let (mut filter, mut cc_region) = (None, None);
    for (name, h) in meta.named {
        if name == FILTER_NAME {
            filter = Some(tail_block(file, base, h, "filter block", coder)?);
        } else if name == PROPERTIES_NAME {
            let b = Block::new(
                tail_block(file, base, h, "properties block", coder)?,
                h.offset,
            )?;
            cc_region = property(&b.entries()?, CC_REGION_PROPERTY);
        }
    }
    let index = Block::new(
        tail_block(file, base, index_h, "index block", coder)?,
        index_h.offset,
    )?;
    Ok(Tail {
        index,
        filter,
        cc_region,
        start,
    })
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
    let meta = read_meta(file, base, &mut Coder::new())?;
    Ok(meta
        .named
        .into_iter()
        .find(|(name, _)| name == PROPERTIES_NAME)
        .map(|(_, h)| h))
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
            && post <= u32::MAX as u64
            && h.offset.checked_add(post).is_some_and(|end| end <= region);
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

/// A table's start of its tail: the first of its filter and index blocks (where a plain
/// table's data blocks end), from its bytes from `base` to its end.
pub fn tail_start(file: &[u8], base: u64) -> Result<u64, FormatError> {
    Ok(read_meta(file, base, &mut Coder::new())?.start)
}

/// A data block as read from the device (a plain table's stored block, or the chunk a CCZNS
/// decompressed read returned), checked against its trailer and decompressed: the bytes
/// [`Table::get_in_block`] and [`block_entries`] take, and whether it was decompressed.
pub fn decode_block(
    read: BlockRead,
    bytes: Vec<u8>,
    coder: &mut Coder,
) -> Result<(Vec<u8>, bool), FormatError> {
    let want = if read.cc { read.raw } else { read.stored };
    if bytes.len() as u64 != want {
        return Err(corrupt(
            "data block",
            read.offset,
            format!("{} bytes read where {want} were expected", bytes.len()),
        ));
    }
    format::decode_block(bytes, read.offset, "data block", coder)
}

/// Every entry of a decoded data block, in order.
pub fn block_entries(block: &[u8], offset: u64) -> Result<Vec<Entry>, FormatError> {
    Block::new(block, offset)?.entries()
}

/// A table's metadata, opened from its tail: the index (one key and one place per data block)
/// and the filter. Its data blocks stay on the device.
pub struct Table {
    /// Per data block: a key ≥ every key in it and < the next block's first key.
    index_keys: Vec<Vec<u8>>,
    /// Per data block: where it is and how it is read.
    blocks: Vec<BlockRead>,
    /// A CCZNS table's chunks (one per data block, in file order) and its data region's
    /// length.
    cc: Option<(Vec<CcChunk>, u64)>,
    index_bytes: usize,
    filter: Option<Vec<u8>>,
}

impl Table {
    /// Open a table from its bytes from `base` to its end, which must hold the tail (filter,
    /// index, properties, metaindex, footer): for a plain table `base` is at most where its
    /// data blocks end, for a CCZNS table the data region's length.
    pub fn open(tail: &[u8], base: u64) -> Result<Table, FormatError> {
        let t = read_tail(tail, base, &mut Coder::new())?;
        let entries = t.index.entries()?;
        let index_bytes = t.index.byte_len();
        let (blocks, cc) = match t.cc_region {
            Some(region) => {
                if region != base {
                    return Err(corrupt(
                        "table",
                        base,
                        format!("CCZNS data region of {region} bytes, tail read from {base}"),
                    ));
                }
                let chunks = cc_chunks_of(&entries, region)?;
                let blocks = chunks
                    .iter()
                    .map(|c| BlockRead {
                        offset: c.offset,
                        stored: c.post as u64,
                        raw: c.pre as u64,
                        cc: true,
                    })
                    .collect();
                (blocks, Some((chunks, region)))
            }
            None => {
                // Data blocks lie in file order before the tail: a damaged index must not
                // size a read past the file or send a reader backwards.
                let mut blocks = Vec::with_capacity(entries.len());
                let mut end = 0u64;
                for (_, v) in &entries {
                    let (h, _) = BlockHandle::decode(v)
                        .ok_or_else(|| corrupt("index entry", 0, "bad block handle"))?;
                    let next = h.offset.checked_add(h.on_disk());
                    if h.offset < end || next.is_none_or(|n| n > t.start) {
                        return Err(corrupt("index entry", h.offset, "block out of place"));
                    }
                    end = next.unwrap_or(end);
                    blocks.push(BlockRead {
                        offset: h.offset,
                        stored: h.on_disk(),
                        raw: h.size,
                        cc: false,
                    });
                }
                (blocks, None)
            }
        };
        Ok(Table {
            index_keys: entries.into_iter().map(|(k, _)| k).collect(),
            blocks,
            cc,
            index_bytes,
            filter: t.filter,
        })
    }

    /// A CCZNS table's chunks, in file order (empty for a plain table).
    pub fn cc_chunks(&self) -> &[CcChunk] {
        self.cc.as_ref().map_or(&[], |c| &c.0)
    }

    /// Bytes of the data region (a CCZNS table), where the plain bytes start.
    pub fn cc_region(&self) -> Option<u64> {
        self.cc.as_ref().map(|c| c.1)
    }

    /// Where each data block is, in file order.
    pub fn blocks(&self) -> &[BlockRead] {
        &self.blocks
    }

    /// Host memory a table reader pins (RocksDB keeps index and filter blocks in memory).
    pub fn index_and_filter_bytes(&self) -> u64 {
        (self.index_bytes + self.filter.as_ref().map_or(0, Vec::len)) as u64
    }

    /// The data block a lookup of `user_key` at `seq` reads: None when the filter rules the
    /// key out or every key of the table is below it.
    pub fn block_for_get(&self, user_key: &[u8], seq: u64) -> Option<usize> {
        if let Some(f) = &self.filter {
            if !bloom::may_contain(f, user_key) {
                return None;
            }
        }
        let i = self.first_block_for(&key::lookup_key(user_key, seq));
        (i < self.blocks.len()).then_some(i)
    }

    /// The first data block whose last key is ≥ `target`: it holds the first entry ≥ target
    /// (the block count when there is none).
    pub fn first_block_for(&self, target: &[u8]) -> usize {
        self.index_keys
            .partition_point(|k| key::compare(k, target) == Ordering::Less)
    }

    /// In a decoded data block (number `i`), the newest entry for `user_key` visible at `seq`:
    /// its type and value (a deletion has an empty value), if the block holds one.
    pub fn get_in_block(
        &self,
        i: usize,
        block: &[u8],
        user_key: &[u8],
        seq: u64,
    ) -> Result<Option<(ValueType, Vec<u8>)>, FormatError> {
        let offset = self.blocks.get(i).map_or(0, |b| b.offset);
        let target = key::lookup_key(user_key, seq);
        match Block::new(block, offset)?.seek(&target, key::compare)? {
            Some((k, v)) => {
                let (uk, _, t) = key::parse(&k)
                    .ok_or_else(|| corrupt("data block", offset, "entry is not an internal key"))?;
                Ok((uk == user_key).then_some((t, v)))
            }
            None => Ok(None),
        }
    }

    /// A data block's stored bytes in a whole plain table's `file` (for tests and tools that
    /// hold the file).
    fn stored_in<'f>(&self, file: &'f [u8], i: usize) -> Result<&'f [u8], FormatError> {
        let b = self.blocks[i];
        if b.cc {
            return Err(corrupt(
                "table",
                b.offset,
                "a CCZNS table's blocks are on the device",
            ));
        }
        file.get(b.offset as usize..(b.offset + b.stored) as usize)
            .ok_or_else(|| corrupt("data block", b.offset, "past the end of the file"))
    }

    /// [`get_in_block`](Self::get_in_block) on a whole plain table held in memory.
    pub fn get_from_file(
        &self,
        file: &[u8],
        user_key: &[u8],
        seq: u64,
    ) -> Result<Option<(ValueType, Vec<u8>)>, FormatError> {
        let Some(i) = self.block_for_get(user_key, seq) else {
            return Ok(None);
        };
        let (block, _) = decode_block(
            self.blocks[i],
            self.stored_in(file, i)?.to_vec(),
            &mut Coder::new(),
        )?;
        self.get_in_block(i, &block, user_key, seq)
    }

    /// Every entry of a whole plain table held in memory, in order.
    pub fn entries_from_file(&self, file: &[u8]) -> Result<Vec<Entry>, FormatError> {
        let mut coder = Coder::new();
        let mut out = Vec::new();
        for i in 0..self.blocks.len() {
            let (block, _) = decode_block(
                self.blocks[i],
                self.stored_in(file, i)?.to_vec(),
                &mut coder,
            )?;
            out.extend(block_entries(&block, self.blocks[i].offset)?);
        }
        Ok(out)
    }
}
