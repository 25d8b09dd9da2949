//! Corrupt on-media records never panic: WAL logs and their write batches, zonefs metadata
//! records whose checksums were made to match their corrupt payloads, and random block
//! handles, varints and internal keys give a value or an error. SST files with flipped bits are
//! in `sst.rs` (`corrupt_files_give_errors_not_panics_or_wrong_answers`). A short
//! corpus-driven run of what the torture issue asks of cargo-fuzz targets, by seed.

use host::lsm::format::{get_varint, BlockHandle};
use host::lsm::key;
use host::lsm::log::{read_log, LogWriter};
use host::lsm::memtable::WriteBatch;
use host::zonefs::meta::{decode_log, encode, frame, FileMeta, Record, Superblock};
use sim::Rng;

fn batch(rng: &mut Rng) -> WriteBatch {
    let mut b = WriteBatch::default();
    for i in 0..1 + rng.below(6) {
        let k = format!("key{i:04}").into_bytes();
        if rng.below(4) == 0 {
            b.delete(&k);
        } else {
            let mut v = vec![0u8; rng.below(300) as usize];
            rng.fill(&mut v);
            b.put(&k, &v);
        }
    }
    b
}

#[test]
fn mutated_write_batches_and_wal_logs_decode_or_are_refused() {
    let mut rng = Rng::new(0x3a1);
    for i in 0..5000 {
        let b = batch(&mut rng);
        let enc = b.encode(i);
        assert_eq!(WriteBatch::decode(&enc), Some((i, b.clone())));
        let bad = rng.mutate(&enc);
        let r = std::panic::catch_unwind(|| WriteBatch::decode(&bad));
        assert!(r.is_ok(), "batch {i} panicked: {bad:?}");
    }
    // Whole logs of several records, corrupted: read_log keeps a valid prefix or says why.
    for i in 0..2000 {
        let mut w = LogWriter::at(0);
        let mut log = Vec::new();
        let mut records = Vec::new();
        for s in 0..1 + rng.below(5) {
            let rec = batch(&mut rng).encode(s);
            w.add(&rec, &mut log);
            records.push(rec);
        }
        let bad = rng.mutate(&log);
        let r = std::panic::catch_unwind(|| read_log(&bad).map(|l| l.records.len()));
        assert!(r.is_ok(), "log {i} panicked");
    }
}

#[test]
fn metadata_records_with_matching_checksums_but_corrupt_payloads_are_refused() {
    const BLOCK: usize = 4096;
    let mut rng = Rng::new(0x2f5);
    let sb = Superblock {
        uuid: "4c1e2b8a-0000-4000-8000-000000000001".into(),
        sequence: 1,
        flags: 0,
        block_bytes: BLOCK as u32,
        zone_blocks: 262_144,
        zones: 128,
        finish_threshold: 0,
        izg_groups: 0,
        plus: None,
    };
    let records = [
        Record::Update(FileMeta {
            id: 7,
            links: vec!["000007.sst".into()],
            size: 1 << 20,
            ..FileMeta::default()
        }),
        Record::Deletion {
            id: 7,
            link: "000007.sst".into(),
        },
        Record::Snapshot(Vec::new()),
    ];
    let (mut accepted, mut refused) = (0, 0);
    for i in 0..6000 {
        let r = &records[i % records.len()];
        // The payload: the framed record less its 8-byte header and block padding.
        let framed = encode(r, BLOCK);
        let len = u32::from_le_bytes(framed[4..8].try_into().expect("4 bytes")) as usize;
        let payload = &framed[8..8 + len];
        let mut log = frame(&sb.encode(), BLOCK);
        log.extend(frame(&rng.mutate(payload), BLOCK));
        let got = std::panic::catch_unwind(|| decode_log(&log, BLOCK).map(|(_, r)| r.len()));
        match got {
            Ok(Ok(_)) => accepted += 1,
            Ok(Err(e)) => {
                assert!(!e.to_string().is_empty());
                refused += 1;
            }
            Err(_) => panic!("record {i} panicked"),
        }
    }
    assert!(refused > 1000, "{accepted} accepted, {refused} refused");
}

#[test]
fn random_bytes_as_handles_varints_and_keys_never_panic() {
    let mut rng = Rng::new(0x6b);
    for _ in 0..50_000 {
        let mut b = vec![0u8; rng.below(24) as usize];
        rng.fill(&mut b);
        if !b.is_empty() && rng.below(2) == 0 {
            // Continuation bits all set: the longest varints.
            for x in b.iter_mut().take(11) {
                *x |= 0x80;
            }
        }
        let _ = get_varint(&b);
        let _ = BlockHandle::decode(&b);
        let _ = key::parse(&b);
    }
}
