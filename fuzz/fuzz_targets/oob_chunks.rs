//! CCZNS chunk metadata in a flash page's OOB, as an image is reopened.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = device::decode_oob_page(16384, 3, data) {
        assert!(e.starts_with("page 3"));
    }
});
