//! zonefs's metadata log (superblock, file updates, deletions, snapshots) as read at mount.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = host::zonefs::meta::decode_log(data, 4096) {
        assert!(!e.to_string().is_empty());
    }
});
