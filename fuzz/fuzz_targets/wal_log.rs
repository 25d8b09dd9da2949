//! The store's WAL (RocksDB's log format) and the write batches in its records.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(log) = host::lsm::log::read_log(data) {
        for r in &log.records {
            let _ = host::lsm::memtable::WriteBatch::decode(r);
        }
    }
    let _ = host::lsm::memtable::WriteBatch::decode(data);
});
