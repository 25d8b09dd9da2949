//! YCSB property files: a configuration or an error naming what was wrong.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Err(e) = workload::ycsb::YcsbConfig::default().load_file(&text) {
        assert!(!e.to_string().is_empty());
    }
});
