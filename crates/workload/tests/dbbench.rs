//! db_bench on the store: what a RocksDB user expects of fillseq, fillrandom, readrandom and
//! the write amplification of a run that flushes and compacts.

use device::presets;
use workload::dbbench::{run, DbBenchConfig, DbBenchError};

fn cfg(benchmarks: &[&str], num: u64) -> DbBenchConfig {
    DbBenchConfig {
        benchmarks: benchmarks.iter().map(|s| s.to_string()).collect(),
        num,
        write_buffer_size: 256 << 10,
        ..DbBenchConfig::default()
    }
}

#[test]
fn fillseq_then_readrandom_finds_every_key() {
    let r = run(presets::cczns(), &cfg(&["fillseq", "readrandom"], 20_000)).expect("runs");
    assert_eq!(r.results[0].ops, 20_000);
    assert_eq!(r.results[1].found, 20_000);
    assert!(r.db.flushes > 0);
    // Reads of flushed keys went to the device at first, then to the block cache.
    assert!(
        r.db.block_cache_misses > 0 && r.db.block_cache_hits > 0,
        "{:?}",
        r.db
    );
    assert!(
        r.results[0].line().starts_with("fillseq      :"),
        "{}",
        r.results[0].line()
    );
}

#[test]
fn fillrandom_leaves_about_two_thirds_of_the_keys() {
    let mut c = cfg(&["fillrandom", "readrandom"], 30_000);
    c.bloom_bits = Some(10);
    let r = run(presets::cczns(), &c).expect("runs");
    let found = r.results[1].found as f64 / 30_000.0;
    // num random draws from num keys cover 1 - 1/e of them.
    assert!((0.60..0.66).contains(&found), "{found}");
    // Each of 4 threads draws num keys, as db_bench's threads do: 4 num draws cover
    // 1 - 1/e^4 of them, and the report counts every thread's operations.
    c.threads = 4;
    let r = run(presets::cczns(), &c).expect("runs");
    assert_eq!(r.results[0].ops, 4 * 30_000);
    assert_eq!(r.results[1].ops, 4 * 30_000);
    let found = r.results[1].found as f64 / (4.0 * 30_000.0);
    assert!((0.975..0.99).contains(&found), "{found}");
    // WAL plus SSTs (plus compaction) on the device: more than the user wrote.
    assert!(r.host_bytes_written > r.user_bytes_written, "{r:?}");
    assert!(r.host_cpu_busy_ns > 0);
}

#[test]
fn compression_shrinks_what_the_store_holds() {
    let size = |codec| {
        let mut c = cfg(&["fillseq"], 20_000);
        c.compression = host::lsm::db::Compression::host(codec);
        let r = run(presets::cczns(), &c).expect("runs");
        r.db.level_bytes.iter().sum::<u64>()
    };
    let none = size(codec::Codec::None);
    let zstd = size(codec::Codec::ZSTD1);
    // compression_ratio 0.5: values compress to about half.
    assert!(zstd * 10 < none * 8, "{zstd} vs {none}");
}

#[test]
fn the_cczns_scheme_lets_the_device_compress_and_reads_every_key() {
    let mut c = cfg(&["fillseq", "readrandom"], 20_000);
    c.compression = host::lsm::db::Compression::None;
    let plain = run(presets::cczns(), &c).expect("runs");
    c.compression = host::lsm::db::Compression::Cczns(host::lsm::db::CcOptions::default());
    let r = run(presets::cczns(), &c).expect("runs");
    assert_eq!(r.results[1].found, 20_000);
    // The host writes its blocks uncompressed either way; only CC's reach flash compressed.
    assert!(
        r.flash_bytes_programmed * 10 < plain.flash_bytes_programmed * 9,
        "cc {} vs none {}",
        r.flash_bytes_programmed,
        plain.flash_bytes_programmed
    );
    // On a device without CW/DR the scheme is refused by name, not run wrongly.
    let err = run(presets::zn540(), &c).expect_err("refused").to_string();
    assert!(err.contains("CCZNS") || err.contains("padding"), "{err}");
}

#[test]
fn bad_flags_are_named() {
    let e = run(presets::cczns(), &cfg(&["fillrandom", "nosuch"], 10)).expect_err("unknown");
    assert!(
        matches!(e, DbBenchError::Unknown(ref b) if b == "nosuch"),
        "{e}"
    );
    let mut c = cfg(&["fillrandom"], 10);
    c.compression_ratio = 2.0;
    assert!(run(presets::cczns(), &c)
        .unwrap_err()
        .to_string()
        .contains("compression_ratio"));
}
