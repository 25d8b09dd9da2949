//! Building a table: data blocks cut by RocksDB's flush policy, the index, the filter, the
//! properties, the metaindex and the footer; for a CCZNS table, data blocks grouped into
//! compressed writes and the index built from the stored sizes the device reports.

use std::cmp::Ordering;

use codec::{Codec, Coder};

use super::super::bloom::BloomBuilder;
use super::super::format::{
    cc_pack_sizes, checksum, corrupt, write_block, write_footer, BlockHandle, FormatError, TRAILER,
};
use super::super::key;
use super::block::BlockBuilder;
use super::{TableOptions, TableProperties, CC_REGION_PROPERTY, FILTER_NAME, PROPERTIES_NAME};

/// Builds one table into a byte buffer (the file's contents).
pub struct TableBuilder {
    opts: TableOptions,
    /// The file's bytes not yet taken by [`take_output`](Self::take_output), from `taken` on.
    out: Vec<u8>,
    taken: u64,
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

/// A CCZNS table's data blocks while it is built: the blocks not yet handed out in a
/// compressed write (each with its trailer: the chunk the device compresses), every block's
/// index key and size, and the stored sizes the device reported. Blocks handed out are not
/// kept: the device holds them.
#[derive(Default)]
struct CcBuild {
    /// The blocks from `unsent` on, back to back.
    blocks: Vec<u8>,
    pre: Vec<u32>,
    keys: Vec<Vec<u8>>,
    post: Vec<u32>,
    /// First block not yet handed out in a compressed write.
    unsent: usize,
    /// Compressed writes ready to go, in order.
    ready: Vec<CwBatch>,
}

impl CcBuild {
    /// The blocks not yet handed out become one compressed write (whole LBAs: zero padded).
    fn cut(&mut self) {
        let len = self.blocks.len();
        let mut data = Vec::with_capacity(len.div_ceil(4096) * 4096);
        data.extend_from_slice(&self.blocks);
        data.resize(len.div_ceil(4096) * 4096, 0);
        self.blocks.clear();
        self.ready.push(CwBatch {
            data,
            chunk_sizes: self.pre[self.unsent..].to_vec(),
        });
        self.unsent = self.pre.len();
    }

    fn unsent_bytes(&self) -> usize {
        self.blocks.len()
    }
}

/// One compressed write a CCZNS table needs: whole blocks holding its chunks back to back.
pub struct CwBatch {
    pub data: Vec<u8>,
    pub chunk_sizes: Vec<u32>,
}

impl TableBuilder {
    pub fn new(opts: TableOptions) -> TableBuilder {
        TableBuilder {
            data: BlockBuilder::new(opts.restart_interval),
            index: BlockBuilder::new(1),
            filter: opts.bloom_bits_per_key.map(|_| BloomBuilder::default()),
            out: Vec::new(),
            taken: 0,
            coder: Coder::for_payload(opts.payload.as_ref()),
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
        std::mem::take(&mut self.cc.ready)
    }

    /// Append a block to the table's bytes (see [`write_block`]).
    fn put_block(&mut self, raw: &[u8], codec: Codec) -> (BlockHandle, bool) {
        let (mut h, compressed) = write_block(
            &mut self.out,
            raw,
            codec,
            &mut self.coder,
            &mut self.scratch,
        );
        h.offset += self.taken;
        (h, compressed)
    }

    /// A plain table's bytes built so far and not yet taken, for the caller to write out
    /// while the table is still being built (the table then stays small in memory).
    pub fn take_output(&mut self) -> Vec<u8> {
        self.taken += self.out.len() as u64;
        std::mem::take(&mut self.out)
    }

    /// Bytes built and not yet taken.
    pub fn pending_output(&self) -> usize {
        self.out.len()
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
        self.taken + self.out.len() as u64
    }

    /// Add an entry; internal keys must come in increasing order.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<(), FormatError> {
        if key::parse(ikey).is_none() {
            return Err(corrupt(
                "table entry",
                self.file_size(),
                "not an internal key",
            ));
        }
        if self.props.entries > 0 && key::compare(&self.last_key, ikey) != Ordering::Less {
            return Err(corrupt(
                "table entry",
                self.file_size(),
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
                self.cc.pre.len() as u64,
                format!(
                    "{pre} bytes: a CCZNS chunk size is 16 bits (CW metadata slots); use a \
                     smaller block or value"
                ),
            ));
        }
        let cc = &mut self.cc;
        if cc.unsent_bytes() > 0 && cc.unsent_bytes() + pre > limit {
            cc.cut();
        }
        cc.blocks.extend_from_slice(&raw);
        cc.blocks.push(0);
        cc.blocks
            .extend_from_slice(&checksum(&raw, 0).to_le_bytes());
        cc.pre.push(pre as u32);
        cc.keys.push(self.data_last_key.clone());
        self.props.data_blocks += 1;
        self.props.data_raw_bytes += raw.len() as u64;
        Ok(())
    }

    /// Finish a CCZNS table once every compressed write is done: index entries from the
    /// reported sizes, then filter, index, properties, metaindex and footer, which follow the
    /// data region in the file. Returns those bytes and the properties.
    pub fn finish_cc(mut self) -> Result<(Vec<u8>, TableProperties), FormatError> {
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
        Ok(self.finish_tail(offset))
    }

    /// Write the filter, index, properties, metaindex and footer; the file's bytes not yet
    /// taken (a plain table; a CCZNS one ends with [`finish_cc`](Self::finish_cc)).
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
        self.props.file_bytes = base + self.taken + self.out.len() as u64;
        (self.out, self.props)
    }
}
