//! lsm: a RocksDB-like store. For now its on-media format: block-based SST files
//! ([`sst`]) with internal keys, data blocks with restart points, per-block compression and
//! checksums, a Bloom filter, an index, a metaindex and a footer.

pub mod bloom;
pub mod cache;
pub mod db;
pub mod format;
pub mod key;
pub mod log;
pub mod memtable;
pub mod sst;
