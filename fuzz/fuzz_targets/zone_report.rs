//! Zone Management Receive buffers (Report Zones): descriptors or None.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = device::parse_report(data);
});
