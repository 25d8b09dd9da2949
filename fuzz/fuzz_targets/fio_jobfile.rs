//! fio job files: jobs or an error naming what was wrong.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(sections) = workload::fio::parse_jobfile(&text) {
        if let Err(e) = workload::fio::build_jobs(&sections) {
            assert!(!e.to_string().is_empty());
        }
    }
});
