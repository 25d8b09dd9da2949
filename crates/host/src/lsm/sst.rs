//! Block-based SST files (research/zenfs-rocksdb.md §2.2): data blocks of internal keys with
//! restart points, cut by RocksDB's flush policy; an optional full Bloom filter on user keys;
//! an index block (one entry per data block: a key ≥ every key in the block and < the next
//! block's first key, and the block's handle); a properties block; a metaindex; the footer.
//! Every block carries the 5-byte trailer of [`format`](super::format).
//!
//! Deviations from RocksDB, all in what a reader of these files sees, none in I/O sizes worth
//! noting: index keys are the block's last key (RocksDB shortens them), index handles are full
//! (format_version 4's delta encoding is not used), properties are a handful of counters.

//!
//! The parts: `block` (data and index blocks with restart points), `builder` (building a
//! table, plain or CCZNS with its compressed writes) and `reader` (opening a table from its
//! tail, lookups in blocks the caller read, and a CCZNS table's chunks). This file keeps the options and the
//! types both sides share.

use codec::Codec;

mod block;
mod builder;
mod reader;

pub use block::{Block, BlockBuilder};
pub use builder::{CwBatch, TableBuilder};
pub use reader::{
    block_entries, cc_region, decode_block, footer_handles, properties_handle, tail_start, Table,
    FOOTER_BYTES,
};

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
    /// A modeled payload's size model (issue 25): blocks are "compressed" to drawn sizes, no
    /// codec runs. None = real bytes.
    pub payload: Option<codec::Modeled>,
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
            payload: None,
        }
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
