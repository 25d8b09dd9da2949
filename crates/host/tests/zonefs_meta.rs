//! zonefs metadata: the superblock, log records and their replay after a cut at any record.

use host::zonefs::meta::{decode_log, encode, frame, replay, Extent, FileMeta, Record, Superblock};
use sim::Rng;

const BLOCK: usize = 4096;

fn superblock(seq: u32) -> Superblock {
    Superblock {
        uuid: "4c1e2b8a-0000-4000-8000-000000000001".into(),
        sequence: seq,
        flags: Superblock::FLAG_GC,
        block_bytes: BLOCK as u32,
        zone_blocks: 262_144,
        zones: 128,
        finish_threshold: 10,
        izg_groups: 7,
        plus: Some(host::zonefs::plus::PlusConfig {
            izgs: 12,
            max_width: 8,
            isolation: false,
            reclaim: true,
        }),
    }
}

/// A random history of file creations, extent updates, renames, deletions, replaces and a
/// snapshot in the middle, as ZenFS would log it.
fn history(rng: &mut Rng, n: usize) -> Vec<Record> {
    let mut out = Vec::new();
    let mut live: Vec<FileMeta> = Vec::new();
    let mut next_id = 1;
    for i in 0..n {
        match rng.below(10) {
            0..=2 => {
                let f = FileMeta {
                    id: next_id,
                    lifetime: rng.below(6) as u32,
                    active_start: Some(rng.below(1 << 30) * 4096),
                    sparse: rng.below(4) == 0,
                    links: vec![format!("{next_id:06}.sst")],
                    ..FileMeta::default()
                };
                next_id += 1;
                live.push(f.clone());
                out.push(Record::Update(f));
            }
            3..=5 if !live.is_empty() => {
                let k = rng.below(live.len() as u64) as usize;
                let f = &mut live[k];
                let e = Extent {
                    start: rng.below(1 << 30) * 4096,
                    len: 1 + rng.below(1 << 20),
                };
                f.size += e.len;
                f.mtime = i as u64;
                let mut u = f.clone();
                u.extents = vec![e];
                out.push(Record::Update(u));
            }
            6 if !live.is_empty() => {
                let k = rng.below(live.len() as u64) as usize;
                let f = live.remove(k);
                out.push(Record::Deletion {
                    id: f.id,
                    link: f.links[0].clone(),
                });
            }
            7 if !live.is_empty() => {
                let k = rng.below(live.len() as u64) as usize;
                let mut u = live[k].clone();
                u.extents = vec![Extent {
                    start: 4096 * rng.below(1000),
                    len: u.size,
                }];
                out.push(Record::Replace(u));
            }
            8 => out.push(Record::Snapshot(replay(&out).into_values().collect())),
            _ => {}
        }
    }
    out
}

#[test]
fn superblock_round_trips_and_refuses_strangers() {
    let sb = superblock(7);
    let b = sb.encode();
    assert_eq!(b.len(), 512);
    assert_eq!(Superblock::decode(&b), Ok(sb));
    let mut bad = b.clone();
    bad[0] ^= 1;
    assert!(Superblock::decode(&bad)
        .unwrap_err()
        .to_string()
        .contains("magic"));
    assert!(Superblock::decode(&b[..100]).is_err());
}

#[test]
fn the_log_replays_after_a_cut_at_any_record() {
    let mut rng = Rng::new(5);
    let records = history(&mut rng, 300);
    let mut log = frame(&superblock(1).encode(), BLOCK);
    let mut ends = vec![log.len()];
    for r in &records {
        log.extend(encode(r, BLOCK));
        ends.push(log.len());
    }
    for (k, &end) in ends.iter().enumerate() {
        let (sb, got) = decode_log(&log[..end], BLOCK).expect("decodes");
        assert_eq!(sb.sequence, 1);
        assert_eq!(got, records[..k], "cut after {k} records");
        assert_eq!(replay(&got), replay(&records[..k]));
    }
    // The whole history, replayed, holds the files the history left.
    let files = replay(&records);
    assert!(!files.is_empty());
    // A record cut in its middle (the bytes after the write pointer read as zeros or are
    // missing) is an error naming its offset, not a panic.
    let (_, short) =
        decode_log(&log[..ends[10] + 6], BLOCK).expect("a partial header is past the end");
    assert_eq!(short, records[..10]);
    let e = decode_log(&log[..ends[10] + 20], BLOCK).expect_err("a record runs past the log");
    assert!(e.to_string().contains(&format!("byte {}", ends[10])), "{e}");
}

#[test]
fn an_end_record_stops_replay_and_corruption_is_refused() {
    let f = FileMeta {
        id: 9,
        size: 10,
        extents: vec![Extent { start: 0, len: 10 }],
        links: vec!["a.log".into()],
        ..FileMeta::default()
    };
    let mut log = frame(&superblock(2).encode(), BLOCK);
    log.extend(encode(&Record::Update(f.clone()), BLOCK));
    log.extend(encode(&Record::End, BLOCK));
    log.extend(encode(
        &Record::Deletion {
            id: 9,
            link: "a.log".into(),
        },
        BLOCK,
    ));
    let (_, recs) = decode_log(&log, BLOCK).expect("decodes");
    assert_eq!(recs.len(), 2);
    assert_eq!(replay(&recs).get(&9), Some(&f));

    let mut rng = Rng::new(8);
    for _ in 0..500 {
        let mut bad = log.clone();
        let at = rng.below(bad.len() as u64) as usize;
        bad[at] ^= 1 << rng.below(8);
        match decode_log(&bad, BLOCK) {
            // A flip in padding changes nothing.
            Ok((_, r)) => assert_eq!(r, recs, "flip at {at} changed the log silently"),
            Err(e) => assert!(e.to_string().contains("corrupt"), "{e}"),
        }
    }
    assert!(decode_log(&[], BLOCK).is_err());
}

/// An update prepared before a metadata roll and written after the roll's snapshot repeats
/// extents the snapshot holds; replay keeps each extent once.
#[test]
fn replay_keeps_an_extent_once_when_an_update_repeats_the_snapshot() {
    let e = |start| Extent { start, len: 100 };
    let f = FileMeta {
        id: 3,
        links: vec!["000003.log".into()],
        extents: vec![e(0), e(4096), e(8192)],
        size: 300,
        ..FileMeta::default()
    };
    let late = FileMeta {
        extents: vec![e(8192), e(12288)],
        size: 400,
        ..f.clone()
    };
    let files = replay(&[Record::Snapshot(vec![f]), Record::Update(late)]);
    let starts: Vec<u64> = files[&3].extents.iter().map(|x| x.start).collect();
    assert_eq!(starts, vec![0, 4096, 8192, 12288]);
}
