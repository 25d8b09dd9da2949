//! SST format: round trips, newest-version lookups, Bloom filters, block sizes, and corrupt
//! files that give errors instead of panics or wrong answers.

use std::collections::BTreeMap;

use codec::Codec;
use host::lsm::key::{self, ValueType};
use host::lsm::sst::{Table, TableBuilder, TableOptions};
use sim::Rng;

/// Entries: for each of `n` keys, one to three versions (the newest possibly a deletion),
/// values half text-like (compressible), half random.
fn dataset(n: u32, rng: &mut Rng) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut entries = Vec::new();
    for i in 0..n {
        let user = format!("user{:010}", i * 7).into_bytes();
        let versions = 1 + rng.below(3);
        for v in (0..versions).rev() {
            let seq = 10 + i as u64 * 4 + v;
            let deleted = v == versions - 1 && rng.below(10) == 0;
            let t = if deleted {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let value = if deleted {
                Vec::new()
            } else if rng.below(2) == 0 {
                format!("value of {i} version {v} ").repeat(8).into_bytes()
            } else {
                let mut b = vec![0u8; 100];
                rng.fill(&mut b);
                b
            };
            entries.push((key::internal_key(&user, seq, t), value));
        }
    }
    entries
}

fn build(
    entries: &[(Vec<u8>, Vec<u8>)],
    opts: TableOptions,
) -> (Vec<u8>, host::lsm::sst::TableProperties) {
    let mut b = TableBuilder::new(opts);
    for (k, v) in entries {
        b.add(k, v).expect("in order");
    }
    b.finish()
}

fn opts(codec: Codec, bloom: Option<u32>) -> TableOptions {
    TableOptions {
        codec,
        bloom_bits_per_key: bloom,
        ..TableOptions::default()
    }
}

#[test]
fn tables_round_trip_with_every_codec() {
    let mut rng = Rng::new(1);
    let entries = dataset(3000, &mut rng);
    for codec in [
        Codec::None,
        Codec::Snappy,
        Codec::Lz4,
        Codec::ZSTD1,
        Codec::Deflate(1),
    ] {
        let (file, props) = build(&entries, opts(codec, Some(10)));
        assert_eq!(props.entries, entries.len() as u64);
        assert_eq!(props.file_bytes, file.len() as u64);
        let t = Table::open(&file, 0).expect("opens");
        assert_eq!(
            t.entries_from_file(&file).expect("reads"),
            entries,
            "{}",
            codec.name()
        );
        if codec != Codec::None {
            assert!(
                props.data_bytes < props.data_raw_bytes,
                "{} {props:?}",
                codec.name()
            );
        }
    }
}

#[test]
fn lookups_find_the_newest_visible_version() {
    let mut rng = Rng::new(2);
    let entries = dataset(5000, &mut rng);
    let (file, _) = build(&entries, opts(Codec::ZSTD1, Some(10)));
    let t = Table::open(&file, 0).expect("opens");
    // Expected: for each user key, versions newest first.
    type Versions = Vec<(u64, ValueType, Vec<u8>)>;
    let mut by_key: BTreeMap<Vec<u8>, Versions> = BTreeMap::new();
    for (k, v) in &entries {
        let (u, seq, ty) = key::parse(k).expect("internal key");
        by_key
            .entry(u.to_vec())
            .or_default()
            .push((seq, ty, v.clone()));
    }
    for (user, versions) in &by_key {
        let (seq, ty, v) = &versions[0];
        assert_eq!(
            t.get_from_file(&file, user, key::MAX_SEQUENCE)
                .expect("reads"),
            Some((*ty, v.clone()))
        );
        // As of just before the newest version, the one before it (or nothing).
        let older = t.get_from_file(&file, user, seq - 1).expect("reads");
        assert_eq!(older, versions.get(1).map(|(_, t, v)| (*t, v.clone())));
    }
    for i in 0..2000u32 {
        let missing = format!("user{:010}", i * 7 + 3);
        assert_eq!(
            t.get_from_file(&file, missing.as_bytes(), key::MAX_SEQUENCE)
                .expect("reads"),
            None
        );
    }
}

#[test]
fn data_blocks_are_cut_near_the_block_size() {
    let mut rng = Rng::new(3);
    let entries = dataset(20_000, &mut rng);
    let (_, p) = build(&entries, opts(Codec::None, None));
    let mean = p.data_raw_bytes / p.data_blocks;
    assert!((3600..=4200).contains(&mean), "mean raw block {mean} bytes");
    // Random values do not compress by 12.5%: some blocks are kept raw.
    let (_, p) = build(&entries, opts(Codec::ZSTD1, None));
    assert!(p.data_bytes < p.data_raw_bytes);
    let (_, p) = build(
        &entries
            .iter()
            .map(|(k, _)| {
                let mut v = vec![0u8; 200];
                rng.fill(&mut v);
                (k.clone(), v)
            })
            .collect::<Vec<_>>(),
        opts(Codec::ZSTD1, None),
    );
    assert_eq!(p.blocks_compression_rejected, p.data_blocks);
}

#[test]
fn out_of_order_or_malformed_keys_are_refused() {
    let mut b = TableBuilder::new(TableOptions::default());
    b.add(&key::internal_key(b"b", 1, ValueType::Value), b"x")
        .expect("first");
    let e = b
        .add(&key::internal_key(b"a", 1, ValueType::Value), b"x")
        .expect_err("order");
    assert!(e.to_string().contains("out of order"), "{e}");
    // The same user key with a newer sequence sorts first, so it is out of order too.
    assert!(b
        .add(&key::internal_key(b"b", 2, ValueType::Value), b"x")
        .is_err());
    assert!(b.add(b"short", b"x").is_err());
}

#[test]
fn corrupt_files_give_errors_not_panics_or_wrong_answers() {
    let mut rng = Rng::new(4);
    let entries = dataset(800, &mut rng);
    let (file, _) = build(&entries, opts(Codec::ZSTD1, Some(10)));
    let probe: Vec<&Vec<u8>> = entries.iter().step_by(37).map(|(k, _)| k).collect();
    for round in 0..300 {
        let mut bad = file.clone();
        let at = rng.below(bad.len() as u64) as usize;
        bad[at] ^= 1 << (round % 8);
        if round % 50 == 0 {
            bad.truncate(rng.below(bad.len() as u64) as usize);
        }
        let Ok(t) = Table::open(&bad, 0) else {
            continue;
        };
        for k in &probe {
            let (user, _, _) = key::parse(k).expect("internal key");
            if let Ok(got) = t.get_from_file(&bad, user, key::MAX_SEQUENCE) {
                // A flipped bit the checksums cannot see (footer padding, a filter bit that
                // only adds "maybe") must still give the right answer.
                let want = entries
                    .iter()
                    .find(|(ek, _)| key::user_key(ek) == user)
                    .map(|(ek, v)| (key::parse(ek).expect("ik").2, v.clone()));
                assert_eq!(got, want, "round {round}, byte {at}");
            }
        }
    }
}
