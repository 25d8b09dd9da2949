//! SST files: footer, index, filter, properties and data blocks. The input is either a whole
//! file, or (first byte odd) a patch to a valid table: offset, then bytes XORed in there, so
//! the fuzzer reaches past the checksums.
#![no_main]
use std::sync::OnceLock;

use host::lsm::key::{self, ValueType};
use host::lsm::sst::{Table, TableBuilder, TableOptions};
use libfuzzer_sys::fuzz_target;

fn valid() -> &'static Vec<u8> {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let mut b = TableBuilder::new(TableOptions {
            block_size: 512,
            codec: codec::Codec::ZSTD1,
            bloom_bits_per_key: Some(10),
            ..TableOptions::default()
        });
        for i in 0..400u64 {
            let k = key::internal_key(format!("key{i:06}").as_bytes(), i + 1, ValueType::Value);
            b.add(&k, format!("value {i} of the table ").repeat(3).as_bytes())
                .expect("in order");
        }
        b.finish().0
    })
}

fuzz_target!(|data: &[u8]| {
    let file = match data.first() {
        Some(b) if b & 1 == 1 && data.len() >= 4 => {
            let mut f = valid().clone();
            let at = u16::from_le_bytes([data[1], data[2]]) as usize * 7 % f.len();
            for (i, x) in data[3..].iter().enumerate() {
                if let Some(y) = f.get_mut(at + i) {
                    *y ^= x;
                }
            }
            f
        }
        _ => data.to_vec(),
    };
    if let Ok(mut t) = Table::open(file) {
        let _ = t.entries();
    }
});
