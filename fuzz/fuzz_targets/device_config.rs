//! Device configuration files (TOML): a device layout or an error naming the field.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(c) = device::DeviceConfig::from_toml(&text) {
        let _ = c.layout();
    }
});
