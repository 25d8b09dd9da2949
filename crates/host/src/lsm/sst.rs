//! Block-based SST files (research/zenfs-rocksdb.md §2.2): data blocks of internal keys with
//! restart points, cut by RocksDB's flush policy; an optional full Bloom filter on user keys;
//! an index block (one entry per data block: a key ≥ every key in the block and < the next
//! block's first key, and the block's handle); a properties block; a metaindex; the footer.
//! Every block carries the 5-byte trailer of [`format`](super::format).
//!
//! Deviations from RocksDB, all in what a reader of these files sees, none in I/O sizes worth
//! noting: index keys are the block's last key (RocksDB shortens them), index handles are full
//! (format_version 4's delta encoding is not used), properties are a handful of counters.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::rc::Rc;

use codec::{Codec, Coder};

use super::bloom::{self, BloomBuilder};
use super::cache::SharedDecodedBlocks;
use super::format::{
    cc_pack_sizes, cc_unpack_sizes, checksum, corrupt, get_varint, put_varint, read_block,
    read_block_into, read_footer, write_block, write_footer, BlockHandle, FormatError, TRAILER,
};
use super::key::{self, ValueType};

/// A key and its value, as a table holds them.
pub type Entry = (Vec<u8>, Vec<u8>);

const FILTER_NAME: &[u8] = b"fullfilter.rocksdb.BuiltinBloomFilter";
const PROPERTIES_NAME: &[u8] = b"rocksdb.properties";
/// Property of a CCZNS table: the length of its data region (the device-compressed data
/// blocks at the start of the file); absent in a plain table.
pub const CC_REGION_PROPERTY: &str = "znslab.cczns.data.region";

/// How tables are built (RocksDB 8.11's defaults, `BlockBasedTableOptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableOptions {
    pub block_size: usize,
    pub block_size_deviation: usize,
    pub restart_interval: usize,
    /// Bloom filter bits per key; None = no filter (RocksDB's default).
    pub bloom_bits_per_key: Option<u32>,
    /// Codec for data and index blocks (per block, kept only if it saves > 12.5%).
    pub codec: Codec,
    /// CCZNS (§IV-B): data blocks go to the device uncompressed, grouped into compressed
    /// writes of up to this many bytes (RocksDB's 1 MiB file write buffer; a value below the
    /// block size makes every block its own single-chunk CW). Index entries are built after
    /// the device has reported each block's stored size. None = a plain table.
    pub cc_write_buffer: Option<usize>,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            block_size_deviation: 10,
            restart_interval: 16,
            bloom_bits_per_key: None,
            codec: Codec::None,
            cc_write_buffer: None,
        }
    }
}

/// Entries with shared-prefix compression and a restart point every `interval` entries.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    interval: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    pub fn new(interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            interval: interval.max(1),
            last_key: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Size of the block if finished now.
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.counter < self.interval {
            key.iter()
                .zip(&self.last_key)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
            0
        };
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, (key.len() - shared) as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.counter += 1;
    }

    /// The finished block's bytes; the builder is empty again afterwards.
    pub fn finish(&mut self) -> Vec<u8> {
        // The next block starts with this one's room (no regrowing entry by entry).
        let room = self.buf.capacity();
        let mut out = std::mem::replace(&mut self.buf, Vec::with_capacity(room));
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts = vec![0];
        self.counter = 0;
        self.last_key.clear();
        out
    }
}

/// A decoded block, for iteration and seeks.
pub struct Block<'a> {
    /// Borrowed from the table's bytes when the block is stored raw, or from its scratch
    /// buffer when it was decompressed: no copy and no allocation per lookup.
    data: Cow<'a, [u8]>,
    restarts_at: usize,
    restarts: usize,
    /// File offset, for error messages.
    offset: u64,
}

impl<'a> Block<'a> {
    pub fn new(data: impl Into<Cow<'a, [u8]>>, offset: u64) -> Result<Block<'a>, FormatError> {
        let data = data.into();
        let bad = |why: &str| corrupt("block", offset, why);
        if data.len() < 4 {
            return Err(bad("shorter than its restart count"));
        }
        let n = u32::from_le_bytes(data[data.len() - 4..].try_into().expect("4 bytes")) as usize;
        let restarts_at = (data.len() - 4)
            .checked_sub(
                n.checked_mul(4)
                    .ok_or_else(|| bad("restart count overflows"))?,
            )
            .ok_or_else(|| bad("restart array larger than the block"))?;
        if n == 0 {
            return Err(bad("no restart points"));
        }
        Ok(Block {
            data,
            restarts_at,
            restarts: n,
            offset,
        })
    }

    fn restart(&self, i: usize) -> usize {
        let at = self.restarts_at + 4 * i;
        u32::from_le_bytes(self.data[at..at + 4].try_into().expect("4 bytes")) as usize
    }

    /// Decode the entry at `pos` on top of `key` (the previous key); returns the value's range
    /// and the next entry's position.
    fn entry(&self, pos: usize, key: &mut Vec<u8>) -> Result<(usize, usize, usize), FormatError> {
        let bad = || corrupt("block entry", self.offset + pos as u64, "malformed");
        let b = &self.data[..self.restarts_at];
        let mut p = pos;
        let mut field = || -> Result<usize, FormatError> {
            let (v, n) = get_varint(b.get(p..).ok_or_else(bad)?).ok_or_else(bad)?;
            p += n;
            usize::try_from(v).map_err(|_| bad())
        };
        let (shared, non_shared, value_len) = (field()?, field()?, field()?);
        if shared > key.len() || p + non_shared + value_len > b.len() {
            return Err(bad());
        }
        key.truncate(shared);
        key.extend_from_slice(&b[p..p + non_shared]);
        let v = p + non_shared;
        Ok((v, v + value_len, v + value_len))
    }

    /// Every entry in order.
    pub fn entries(&self) -> Result<Vec<Entry>, FormatError> {
        let mut out = Vec::new();
        let mut key = Vec::new();
        let mut pos = 0;
        while pos < self.restarts_at {
            let (v0, v1, next) = self.entry(pos, &mut key)?;
            out.push((key.clone(), self.data[v0..v1].to_vec()));
            pos = next;
        }
        Ok(out)
    }

    /// The first entry whose key is ≥ `target` under `cmp`, if any.
    pub fn seek(
        &self,
        target: &[u8],
        cmp: impl Fn(&[u8], &[u8]) -> Ordering,
    ) -> Result<Option<Entry>, FormatError> {
        // The last restart point whose key is < target; scan from there.
        let (mut lo, mut hi) = (0usize, self.restarts - 1);
        let mut key = Vec::new();
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            key.clear();
            self.entry(self.restart(mid), &mut key)?;
            if cmp(&key, target) == Ordering::Less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        key.clear();
        let mut pos = self.restart(lo);
        while pos < self.restarts_at {
            let (v0, v1, next) = self.entry(pos, &mut key)?;
            if cmp(&key, target) != Ordering::Less {
                return Ok(Some((key, self.data[v0..v1].to_vec())));
            }
            pos = next;
        }
        Ok(None)
    }
}

/// What a finished table holds, as RocksDB's table properties count it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableProperties {
    pub entries: u64,
    pub raw_key_bytes: u64,
    pub raw_value_bytes: u64,
    pub data_blocks: u64,
    /// Data blocks before and after compression (trailers not counted), and those stored
    /// raw because compression saved 12.5% or less.
    pub data_raw_bytes: u64,
    pub data_bytes: u64,
    pub blocks_compression_rejected: u64,
    pub index_bytes: u64,
    pub filter_bytes: u64,
    pub file_bytes: u64,
}

/// Builds one table into a byte buffer (the file's contents).
pub struct TableBuilder {
    opts: TableOptions,
    out: Vec<u8>,
    data: BlockBuilder,
    index: BlockBuilder,
    filter: Option<BloomBuilder>,
    coder: Coder,
    scratch: Vec<u8>,
    props: TableProperties,
    /// The last data block's handle, whose index entry waits for the next key.
    pending: Option<BlockHandle>,
    /// The last key of the last data block written (its index key).
    data_last_key: Vec<u8>,
    last_key: Vec<u8>,
    cc: CcBuild,
    /// A CCZNS table's data region length, once known.
    cc_region: Option<u64>,
}

/// A CCZNS table's data blocks while it is built: every block with its trailer (the chunk the
/// device compresses), its index key, and the stored sizes the device reported.
#[derive(Default)]
struct CcBuild {
    blocks: Vec<u8>,
    pre: Vec<u32>,
    keys: Vec<Vec<u8>>,
    post: Vec<u32>,
    /// First block not yet handed out in a compressed write, where it starts in `blocks`, and
    /// the bytes from it on.
    unsent: usize,
    unsent_at: usize,
    unsent_bytes: usize,
    /// Block ranges ready to go as one compressed write each, with where each starts.
    ready: Vec<(std::ops::Range<usize>, usize)>,
}

impl CcBuild {
    /// The blocks not yet handed out become one compressed write.
    fn cut(&mut self) {
        self.ready
            .push((self.unsent..self.pre.len(), self.unsent_at));
        self.unsent = self.pre.len();
        self.unsent_at += self.unsent_bytes;
        self.unsent_bytes = 0;
    }
}

/// One compressed write a CCZNS table needs: whole blocks holding its chunks back to back.
pub struct CwBatch {
    pub data: Vec<u8>,
    pub chunk_sizes: Vec<u32>,
}

/// Where a data block read goes: its offset in the file, the bytes it takes there (for a
/// CCZNS block its stored size), its size once read (trailer included), and whether it is
/// a CCZNS block (read by decompressed read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRead {
    pub offset: u64,
    pub stored: u64,
    pub raw: u64,
    pub cc: bool,
}

/// A CCZNS table's chunk: file offset, stored size, size before compression (block and
/// trailer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcChunk {
    pub offset: u64,
    pub post: u32,
    pub pre: u32,
}

impl TableBuilder {
    pub fn new(opts: TableOptions) -> TableBuilder {
        TableBuilder {
            data: BlockBuilder::new(opts.restart_interval),
            index: BlockBuilder::new(1),
            filter: opts.bloom_bits_per_key.map(|_| BloomBuilder::default()),
            out: Vec::new(),
            coder: Coder::new(),
            scratch: Vec::new(),
            props: TableProperties::default(),
            pending: None,
            data_last_key: Vec::new(),
            last_key: Vec::new(),
            cc: CcBuild::default(),
            cc_region: None,
            opts,
        }
    }

    /// Compressed writes ready to be issued (CCZNS tables): issue them in order and report
    /// each one's per-chunk stored sizes with [`cc_written`](Self::cc_written).
    pub fn take_cws(&mut self) -> Vec<CwBatch> {
        let cc = &mut self.cc;
        let mut out = Vec::new();
        for (r, start) in cc.ready.drain(..) {
            let len: usize = cc.pre[r.clone()].iter().map(|&p| p as usize).sum();
            let mut data = Vec::with_capacity(len.div_ceil(4096) * 4096);
            data.extend_from_slice(&cc.blocks[start..start + len]);
            data.resize(len.div_ceil(4096) * 4096, 0);
            out.push(CwBatch {
                data,
                chunk_sizes: cc.pre[r].to_vec(),
            });
        }
        out
    }

    /// Append a block to the table's bytes (see [`write_block`]).
    fn put_block(&mut self, raw: &[u8], codec: Codec) -> (BlockHandle, bool) {
        write_block(
            &mut self.out,
            raw,
            codec,
            &mut self.coder,
            &mut self.scratch,
        )
    }

    /// The stored sizes the device reported for the chunks of the next compressed write.
    pub fn cc_written(&mut self, post: &[u32]) {
        self.cc.post.extend_from_slice(post);
    }

    /// End the data blocks (CCZNS tables): the last compressed write becomes ready.
    pub fn finish_data(&mut self) -> Result<(), FormatError> {
        if !self.data.is_empty() {
            self.flush_data()?;
        }
        if self.cc.unsent < self.cc.pre.len() {
            self.cc.cut();
        }
        Ok(())
    }

    /// Bytes written so far (completed blocks).
    pub fn file_size(&self) -> u64 {
        self.out.len() as u64
    }

    /// Add an entry; internal keys must come in increasing order.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<(), FormatError> {
        if key::parse(ikey).is_none() {
            return Err(corrupt(
                "table entry",
                self.out.len() as u64,
                "not an internal key",
            ));
        }
        if self.props.entries > 0 && key::compare(&self.last_key, ikey) != Ordering::Less {
            return Err(corrupt(
                "table entry",
                self.out.len() as u64,
                "keys out of order",
            ));
        }
        // RocksDB's FlushBlockBySizePolicy.
        let est = self.data.estimated_size();
        let entry = ikey.len() + value.len() + 12;
        let full = est >= self.opts.block_size
            || (est + entry > self.opts.block_size
                && est * 100 >= self.opts.block_size * (100 - self.opts.block_size_deviation));
        if !self.data.is_empty() && full {
            self.flush_data()?;
        }
        if let Some(h) = self.pending.take() {
            self.add_index_entry(h);
        }
        if let Some(f) = &mut self.filter {
            f.add(key::user_key(ikey));
        }
        self.data.add(ikey, value);
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        self.props.entries += 1;
        self.props.raw_key_bytes += ikey.len() as u64;
        self.props.raw_value_bytes += value.len() as u64;
        Ok(())
    }

    fn add_index_entry(&mut self, h: BlockHandle) {
        let mut v = Vec::with_capacity(20);
        h.encode(&mut v);
        // The block's last key separates it from the next block.
        self.index.add(&self.data_last_key, &v);
    }

    fn flush_data(&mut self) -> Result<(), FormatError> {
        self.data_last_key = self.data.last_key().to_vec();
        let raw = self.data.finish();
        if let Some(limit) = self.opts.cc_write_buffer {
            return self.cc_block(raw, limit);
        }
        let (h, compressed) = self.put_block(&raw, self.opts.codec);
        self.props.data_blocks += 1;
        self.props.data_raw_bytes += raw.len() as u64;
        self.props.data_bytes += h.size;
        if self.opts.codec != Codec::None && !compressed {
            self.props.blocks_compression_rejected += 1;
        }
        self.pending = Some(h);
        Ok(())
    }

    /// A CCZNS data block: kept with its (uncompressed) trailer for a compressed write; the
    /// buffered blocks go as one write when this one would overflow the buffer.
    fn cc_block(&mut self, raw: Vec<u8>, limit: usize) -> Result<(), FormatError> {
        let pre = raw.len() + TRAILER as usize;
        if pre > u16::MAX as usize {
            return Err(corrupt(
                "data block",
                self.cc.blocks.len() as u64,
                format!(
                    "{pre} bytes: a CCZNS chunk size is 16 bits (CW metadata slots); use a \
                     smaller block or value"
                ),
            ));
        }
        let cc = &mut self.cc;
        if cc.unsent_bytes > 0 && cc.unsent_bytes + pre > limit {
            cc.cut();
        }
        cc.blocks.extend_from_slice(&raw);
        cc.blocks.push(0);
        cc.blocks
            .extend_from_slice(&checksum(&raw, 0).to_le_bytes());
        cc.pre.push(pre as u32);
        cc.keys.push(self.data_last_key.clone());
        cc.unsent_bytes += pre;
        self.props.data_blocks += 1;
        self.props.data_raw_bytes += raw.len() as u64;
        Ok(())
    }

    /// Finish a CCZNS table once every compressed write is done: index entries from the
    /// reported sizes, then filter, index, properties, metaindex and footer, which follow the
    /// data region in the file. Returns those bytes, the properties and the data blocks (with
    /// trailers, as the device decompresses them).
    pub fn finish_cc(mut self) -> Result<(Vec<u8>, TableProperties, Vec<u8>), FormatError> {
        self.finish_data()?;
        let cc = std::mem::take(&mut self.cc);
        if cc.post.len() != cc.pre.len() || !cc.ready.is_empty() {
            return Err(corrupt(
                "table",
                0,
                format!(
                    "{} data blocks but {} stored sizes reported",
                    cc.pre.len(),
                    cc.post.len()
                ),
            ));
        }
        let mut offset = 0u64;
        for ((key, &pre), &post) in cc.keys.iter().zip(&cc.pre).zip(&cc.post) {
            let h = BlockHandle {
                offset,
                size: cc_pack_sizes(post as u64, pre as u64),
            };
            let mut v = Vec::with_capacity(20);
            h.encode(&mut v);
            self.index.add(key, &v);
            offset += post as u64;
        }
        self.props.data_bytes = offset;
        self.cc_region = Some(offset);
        let (tail, props) = self.finish_tail(offset);
        Ok((tail, props, cc.blocks))
    }

    /// Write the filter, index, properties, metaindex and footer; the file's bytes (a plain
    /// table; a CCZNS one ends with [`finish_cc`](Self::finish_cc)).
    pub fn finish(mut self) -> (Vec<u8>, TableProperties) {
        if !self.data.is_empty() {
            // A plain table's block write cannot fail.
            let _ = self.flush_data();
        }
        if let Some(h) = self.pending.take() {
            self.add_index_entry(h);
        }
        self.finish_tail(0)
    }

    /// Filter, index, properties, metaindex and footer, their handles counted from `base`
    /// (where these bytes start in the file).
    fn finish_tail(mut self, base: u64) -> (Vec<u8>, TableProperties) {
        let at = |mut h: BlockHandle| {
            h.offset += base;
            h
        };
        let mut meta: Vec<(&[u8], BlockHandle)> = Vec::new();
        if let (Some(f), Some(bits)) = (&mut self.filter, self.opts.bloom_bits_per_key) {
            let bytes = f.finish(bits);
            let (h, _) = self.put_block(&bytes, Codec::None);
            self.props.filter_bytes = h.size;
            meta.push((FILTER_NAME, at(h)));
        }
        let index = self.index.finish();
        let (index_h, _) = self.put_block(&index, self.opts.codec);
        self.props.index_bytes = index_h.size;
        let index_h = at(index_h);
        let mut pb = BlockBuilder::new(1);
        let p = &self.props;
        let mut fields: Vec<(&str, u64)> = vec![
            ("rocksdb.data.size", p.data_bytes),
            ("rocksdb.index.size", p.index_bytes),
            ("rocksdb.num.data.blocks", p.data_blocks),
            ("rocksdb.num.entries", p.entries),
            ("rocksdb.raw.key.size", p.raw_key_bytes),
            ("rocksdb.raw.value.size", p.raw_value_bytes),
        ];
        if let Some(region) = self.cc_region {
            fields.push((CC_REGION_PROPERTY, region));
        }
        fields.sort_by_key(|f| f.0);
        for (name, v) in fields {
            pb.add(name.as_bytes(), &v.to_le_bytes());
        }
        let props_raw = pb.finish();
        let (props_h, _) = self.put_block(&props_raw, Codec::None);
        meta.push((PROPERTIES_NAME, at(props_h)));
        meta.sort_by(|a, b| a.0.cmp(b.0));
        let mut mb = BlockBuilder::new(1);
        for (name, h) in meta {
            let mut v = Vec::new();
            h.encode(&mut v);
            mb.add(name, &v);
        }
        let meta_raw = mb.finish();
        let (meta_h, _) = self.put_block(&meta_raw, Codec::None);
        write_footer(&mut self.out, at(meta_h), index_h);
        self.props.file_bytes = base + self.out.len() as u64;
        (self.out, self.props)
    }
}

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
pub const FOOTER_BYTES: u64 = super::format::FOOTER;

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
            index_bytes: t.index.data.len(),
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
            index_bytes: t.index.data.len(),
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
