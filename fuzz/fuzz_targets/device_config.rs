//! Device configuration files (TOML), then a short command sequence on the device they make:
//! the TOML up to the first NUL byte gives a device layout or an error naming the field; an
//! accepted device is made in memory within a 64 MiB memory budget (so the fuzzer never
//! allocates gigabytes) and runs the writes, reads, zone management, compressed writes and
//! reads, flushes, deallocations and power cycles the bytes after the NUL choose
//! (`device::harness`). Nothing may panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let device::harness::Outcome::Ran {
        resident_bytes,
        table_bytes,
        ..
    } = device::harness::run(data, 64 << 20)
    {
        assert!(resident_bytes + table_bytes <= 64 << 20);
    }
});
