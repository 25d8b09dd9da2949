//! ZNS+ TL_open (OSDI'21 §3.2.2): every refusal has its status and changes nothing; writes
//! to a TL-open zone go at or past the write pointer over invalid blocks only; valid blocks
//! stay readable and blocks given up read as zeros; plugging copies a chunk of valid blocks
//! by copyback and merges the rest; PPA-ordered plugging runs on idle dies in the background;
//! a killed process's image comes back with its TL-open zones closed and nothing lost.

mod common;

use common::Dev;
use device::{presets, Command, Controller, DeviceConfig, Plugging, Status, ZoneAction, ZoneState};
use sim::{SimDuration, SimInstant};

const B: usize = 4096;

/// ZNS+'s MLC device shrunk to 1 MiB zones (256 blocks, 4 KiB pages... 16 KiB chunks on 16
/// chips), 8 zones, 8 spare groups per chip.
fn small(plugging: Plugging) -> DeviceConfig {
    let mut cfg = presets::znsplus_mlc();
    cfg.nand.pages_per_block = 4;
    cfg.nand.blocks_per_plane = 16;
    cfg.zones.count = Some(8);
    cfg.znsplus.plugging = plugging;
    cfg
}

fn tl_open(d: &mut Dev, zslba: u64, valid: &[u8], close_only: bool) -> Status {
    d.submit(Command::TlOpen {
        zslba,
        close_only,
        bitmap: valid,
    })
    .status
}

/// A bitmap of a 256-block zone with `blocks` valid.
fn map(blocks: impl IntoIterator<Item = u64>) -> Vec<u8> {
    let mut m = vec![0u8; 32];
    for b in blocks {
        m[(b / 8) as usize] |= 1 << (b % 8);
    }
    m
}

fn read(d: &mut Dev, slba: u64, n: u64) -> Vec<u8> {
    let mut out = vec![0u8; n as usize * B];
    let s = d
        .submit(Command::Read {
            slba,
            nlb: n as u32,
            data: &mut out,
            metadata: &mut [],
        })
        .status;
    assert_eq!(s, Status::SUCCESS);
    out
}

/// A device whose zone 0 is full of random blocks, all on flash.
fn full_zone(plugging: Plugging) -> (Dev, Vec<u8>) {
    let mut d = Dev::new(small(plugging));
    let cap = d.cap();
    let (data, _) = d.random(cap);
    for (i, piece) in data.chunks(64 * B).enumerate() {
        let c = d.submit(Command::Write {
            slba: i as u64 * 64,
            nlb: (piece.len() / B) as u32,
            data: piece,
            metadata: &[],
        });
        assert_eq!(c.status, Status::SUCCESS);
    }
    d.now += SimDuration::from_ms(100);
    assert_eq!(d.zone(0).state, ZoneState::Full);
    (d, data)
}

#[test]
fn every_refused_tl_open_has_its_status_and_changes_nothing() {
    let (mut d, _) = full_zone(Plugging::Lba);
    let z1 = d.zslba(1);
    let before: Vec<_> = (0..8).map(|z| d.zone(z)).collect();
    let cases: Vec<(u64, Vec<u8>, bool, Status)> = vec![
        (1 << 40, map([]), false, Status::LBA_OUT_OF_RANGE),
        (1, map([]), false, Status::INVALID_FIELD),
        (0, vec![0u8; 31], false, Status::INVALID_FIELD),
        (z1, map([]), false, Status::ZONE_INVALID_TRANSITION), // Empty
        (z1, map([]), true, Status::ZONE_INVALID_TRANSITION),  // close only, not TL-open
    ];
    for (zslba, m, close_only, want) in cases {
        assert_eq!(tl_open(&mut d, zslba, &m, close_only), want, "at {zslba}");
    }
    // Close only of a Full zone: nothing to do.
    assert_eq!(tl_open(&mut d, 0, &[], true), Status::SUCCESS);
    // A valid bit past the write pointer: never-written blocks cannot be valid.
    assert_eq!(d.write(z1, 8), Status::SUCCESS);
    assert_eq!(tl_open(&mut d, z1, &map([8]), false), Status::INVALID_FIELD);
    let mut after: Vec<_> = (0..8).map(|z| d.zone(z)).collect();
    after[1] = before[1];
    assert_eq!(before, after);
    // Other designs: Invalid Opcode.
    let mut plain = Dev::new(presets::test_min());
    assert_eq!(
        tl_open(&mut plain, 0, &map([]), false),
        Status::INVALID_OPCODE
    );
}

#[test]
fn at_most_max_tl_open_zones_and_a_spare_group_each() {
    let mut cfg = small(Plugging::Lba);
    cfg.znsplus.max_tl_open = 2;
    let mut d = Dev::new(cfg);
    for z in 0..3 {
        let zs = d.zslba(z);
        assert_eq!(d.write(zs, 4), Status::SUCCESS);
    }
    assert_eq!(tl_open(&mut d, 0, &map([0]), false), Status::SUCCESS);
    let (z1, z2) = (d.zslba(1), d.zslba(2));
    assert_eq!(tl_open(&mut d, z1, &map([]), false), Status::SUCCESS);
    assert_eq!(
        tl_open(&mut d, z2, &map([]), false),
        Status::ZONE_TOO_MANY_OPEN
    );
    // Opening one of them again closes and reopens it: no new resource.
    assert_eq!(tl_open(&mut d, 0, &map([0, 5]), false), Status::SUCCESS);
    assert_eq!(d.zone(0).wp, 0);
}

#[test]
fn writes_go_past_the_write_pointer_over_invalid_blocks_only() {
    let (mut d, data) = full_zone(Plugging::Lba);
    // Chunks 0 and 2 fully valid, block 5 valid.
    let valid = map([0, 1, 2, 3, 5, 8, 9, 10, 11]);
    assert_eq!(tl_open(&mut d, 0, &valid, false), Status::SUCCESS);
    let z = d.zone(0);
    assert_eq!(
        (z.state, z.wp, z.attributes & 0x20),
        (ZoneState::ExplicitlyOpened, 0, 0x20)
    );
    // Valid blocks read back; invalid ones read as zeros.
    assert_eq!(
        read(&mut d, 0, 6),
        [&data[..4 * B], &[0u8; B][..], &data[5 * B..6 * B]].concat()
    );
    assert_eq!(d.write(5, 1), Status::ZONE_INVALID_WRITE); // a valid block
    assert_eq!(d.write(4, 2), Status::ZONE_INVALID_WRITE); // covers block 5
    assert_eq!(d.write(250, 10), Status::ZONE_BOUNDARY_ERROR);
    let append = d.submit(Command::ZoneAppend {
        zslba: 0,
        nlb: 1,
        data: &[0u8; B],
        metadata: &mut [],
    });
    assert_eq!(append.status, Status::INVALID_ZONE_OPERATION);
    let k0 = d.c.counters().clone();
    // Block 4, then 6-7: chunk 0 is copied by copyback, chunk 1 (4 host, 5 valid, 6-7 host)
    // is merged, and chunk 2 (valid, right after the write) is copied by copyback at once
    // (LBA-ordered plugging).
    let (b4, _) = d.random(1);
    assert_eq!(d.write_data(4, &b4), Status::SUCCESS);
    let (b67, _) = d.random(2);
    assert_eq!(d.write_data(6, &b67), Status::SUCCESS);
    assert_eq!(d.write(5, 1), Status::ZONE_INVALID_WRITE);
    assert_eq!(d.write(3, 1), Status::ZONE_INVALID_WRITE); // behind the write pointer
    let k = d.c.counters().clone();
    assert_eq!(k.plug_copybacks - k0.plug_copybacks, 2);
    assert_eq!(k.plug_read_programs - k0.plug_read_programs, 1);
    assert_eq!(
        k.plugged_blocks_foreground - k0.plugged_blocks_foreground,
        9
    );
    // Skip to block 16: nothing left to copy; blocks 12-15 were given up (zeros).
    let (b16, _) = d.random(1);
    assert_eq!(d.write_data(16, &b16), Status::SUCCESS);
    assert_eq!(d.c.counters().plug_copybacks - k0.plug_copybacks, 2);
    let want = [
        &data[..4 * B],
        &b4[..],
        &data[5 * B..6 * B],
        &b67[..],
        &data[8 * B..12 * B],
        &[0u8; 4 * B][..],
        &b16[..],
    ]
    .concat();
    assert_eq!(read(&mut d, 0, 17), want);
    // Zone compaction into a TL-open zone is refused.
    let c = d.submit(Command::ZoneCompaction {
        zslba: 0,
        pairs: &[(d.zslba(1), 17)],
    });
    assert_ne!(c.status, Status::SUCCESS);
    // Close only: the rest is plugged (valid blocks only: none left), zeros past the pointer.
    assert_eq!(tl_open(&mut d, 0, &[], true), Status::SUCCESS);
    let z = d.zone(0);
    assert_eq!(
        (z.state, z.wp, z.attributes & 0x20),
        (ZoneState::Full, d.cap(), 0)
    );
    assert_eq!(read(&mut d, 0, 17), want);
    assert_eq!(read(&mut d, 17, 1), vec![0u8; B]);
}

#[test]
fn close_and_finish_plug_the_rest_and_reset_frees_both_groups() {
    for action in [ZoneAction::Close, ZoneAction::Finish, ZoneAction::Reset] {
        let (mut d, data) = full_zone(Plugging::Lba);
        assert_eq!(tl_open(&mut d, 0, &map(200..256), false), Status::SUCCESS);
        let spares = d.spares();
        assert_eq!(d.write(0, 8), Status::SUCCESS);
        assert_eq!(d.zone_action(0, action), Status::SUCCESS);
        let z = d.zone(0);
        if action == ZoneAction::Reset {
            assert_eq!((z.state, z.attributes), (ZoneState::Empty, 0));
            assert_eq!(d.spares(), spares.iter().map(|s| s + 1).collect::<Vec<_>>());
            continue;
        }
        assert_eq!((z.state, z.wp), (ZoneState::Full, d.cap()), "{action:?}");
        assert_eq!(read(&mut d, 200, 56), data[200 * B..].to_vec());
        assert_eq!(read(&mut d, 100, 1), vec![0u8; B]);
        // 56 valid blocks = 14 whole chunks by copyback; the old group is a spare again.
        assert_eq!(d.c.counters().plug_copybacks, 14);
        // All of them at the close (the host wrote 0..8 only), which took the copies' time.
        let k = d.c.counters();
        assert_eq!(
            (k.tl_closes, k.plugged_blocks_at_close),
            (1, 56),
            "{action:?}"
        );
        assert!(k.tl_close_ns > 0, "{action:?}");
        // It came right after a write whose program was still running on one of its dies.
        assert!(k.tl_close_queue_ns > 0, "{action:?}");
        assert_eq!(d.spares(), spares.iter().map(|s| s + 1).collect::<Vec<_>>());
    }
}

#[test]
fn ppa_ordered_plugging_copies_valid_chunks_on_idle_dies_in_the_background() {
    let run = |plugging| {
        let (mut d, _) = full_zone(plugging);
        assert_eq!(tl_open(&mut d, 0, &map(8..64), false), Status::SUCCESS);
        assert_eq!(d.write(0, 8), Status::SUCCESS);
        // Idle time, then any command: the background work happens at its boundary.
        for _ in 0..20 {
            d.now += SimDuration::from_ms(5);
            let z3 = d.zslba(3);
            let _ = read(&mut d, z3, 1);
        }
        let before = d.c.counters().clone();
        let t = d.now;
        assert_eq!(d.write(64, 4), Status::SUCCESS);
        let k = d.c.counters().clone();
        (
            k.plugged_blocks_background,
            k.plugged_blocks_foreground - before.plugged_blocks_foreground,
            d.now.since(t),
        )
    };
    let (lba_bg, lba_fg_on_write, _) = run(Plugging::Lba);
    let (ppa_bg, ppa_fg_on_write, _) = run(Plugging::Ppa);
    assert_eq!(lba_bg, 0);
    // LBA order copied the 56 valid blocks right after the first write (foreground); PPA
    // order in the background on idle dies; the last write found nothing left to plug.
    assert_eq!(ppa_bg, 56);
    assert_eq!((lba_fg_on_write, ppa_fg_on_write), (0, 0));
}

#[test]
fn a_killed_process_finds_its_tl_open_zone_as_it_was_and_nothing_lost() {
    let path = std::env::temp_dir().join(format!("znslab-tl-{}.img", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let cfg = small(Plugging::Ppa);
    Controller::create_image(&path, cfg)
        .expect("creates")
        .close()
        .expect("closes");
    let reopen = |seed| Dev {
        c: Controller::open_image(&path).expect("opens"),
        now: SimInstant::ZERO,
        rng: sim::Rng::new(seed),
    };
    let mut d = reopen(3);
    let (data, _) = d.random(256);
    for (i, piece) in data.chunks(64 * B).enumerate() {
        assert_eq!(d.write_data(i as u64 * 64, piece), Status::SUCCESS);
    }
    let valid = map((0..256).filter(|b| b % 3 == 0));
    assert_eq!(tl_open(&mut d, 0, &valid, false), Status::SUCCESS);
    let (b1, _) = d.random(2);
    assert_eq!(d.write_data(1, &b1), Status::SUCCESS);
    // What each block reads: host writes, valid blocks, zeros for blocks given up.
    let expect = |b10: Option<&[u8]>| -> Vec<u8> {
        (0..256usize)
            .flat_map(|b| match b {
                1 | 2 => b1[(b - 1) * B..b * B].to_vec(),
                10 if b10.is_some() => b10.unwrap().to_vec(),
                _ if b % 3 == 0 => data[b * B..(b + 1) * B].to_vec(),
                _ => vec![0u8; B],
            })
            .collect()
    };
    // The process dies twice; the zone is TL-open with its write pointer each time.
    for round in 0..2 {
        let c = std::mem::replace(
            &mut d.c,
            Controller::in_memory(presets::test_min()).unwrap(),
        );
        c.drop_without_saving();
        d = reopen(4 + round);
        let z = d.zone(0);
        assert_eq!(
            (z.state, z.wp, z.attributes & 0x20),
            (ZoneState::ExplicitlyOpened, 3, 0x20)
        );
        assert!(read(&mut d, 0, 256) == expect(None), "round {round}");
        d.c.power_cycle();
        assert_eq!(d.zone(0).wp, 3);
    }
    // It goes on: a write over a valid block is still refused; one past the pointer works.
    assert_eq!(d.write(9, 1), Status::ZONE_INVALID_WRITE);
    let (b10, _) = d.random(1);
    assert_eq!(d.write_data(10, &b10), Status::SUCCESS);
    assert_eq!(tl_open(&mut d, 0, &[], true), Status::SUCCESS);
    let z = d.zone(0);
    assert_eq!(
        (z.state, z.wp, z.attributes & 0x20),
        (ZoneState::Full, 256, 0)
    );
    assert!(read(&mut d, 0, 256) == expect(Some(&b10)));
    d.c.close().expect("closes");
    let mut d = reopen(9);
    assert!(read(&mut d, 0, 256) == expect(Some(&b10)));
    d.c.close().expect("closes");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn ppa_ordered_plugging_lets_each_chip_run_ahead_on_its_own_block() {
    // Chunk 0 (blocks 0-3, on chip 0) waits for the host's block 0; chunks 1-15 are on the
    // other 15 chips and hold valid blocks only: they need not wait for it.
    let (mut d, data) = full_zone(Plugging::Ppa);
    assert_eq!(tl_open(&mut d, 0, &map(1..64), false), Status::SUCCESS);
    for _ in 0..4 {
        d.now += SimDuration::from_ms(5);
        let z3 = d.zslba(3);
        let _ = read(&mut d, z3, 1);
    }
    let k = d.c.counters().clone();
    assert_eq!(k.plugged_blocks_background, 60);
    let (b0, _) = d.random(1);
    assert_eq!(d.write_data(0, &b0), Status::SUCCESS);
    assert_eq!(tl_open(&mut d, 0, &[], true), Status::SUCCESS);
    let k = d.c.counters().clone();
    assert_eq!(
        (k.plugged_blocks_background, k.plugged_blocks_foreground),
        (60, 3)
    );
    assert_eq!(read(&mut d, 0, 64), [&b0[..], &data[B..64 * B]].concat());
}

/// Fill zone `zone` with random blocks.
fn fill(d: &mut Dev, zone: u32) -> Vec<u8> {
    let z = d.zslba(zone);
    let cap = d.cap();
    let (data, _) = d.random(cap);
    for (i, piece) in data.chunks(64 * B).enumerate() {
        assert_eq!(d.write_data(z + i as u64 * 64, piece), Status::SUCCESS);
    }
    data
}

/// A one-block read of `slba` submitted at `t`: how long the host waits.
fn read_latency(d: &mut Dev, t: SimInstant, slba: u64) -> SimDuration {
    let mut out = vec![0u8; B];
    let c = d.c.submit(
        t,
        Command::Read {
            slba,
            nlb: 1,
            data: &mut out,
            metadata: &mut [],
        },
    );
    assert_eq!(c.status, Status::SUCCESS);
    c.done_at.since(t)
}

#[test]
fn background_plugging_yields_to_the_command_whose_arrival_finds_the_die_idle() {
    // Zone 0's chunks 1-15 hold valid blocks only, one on each of chips 1-15. Zone 1's block 4
    // (its chunk 1) is on chunk 1's chip.
    let (mut d, data) = full_zone(Plugging::Ppa);
    fill(&mut d, 1);
    d.now += SimDuration::from_ms(100);
    let z1 = d.zslba(1);
    let chip = d.c.layout().die_at(0, 4 * B as u64);
    assert_eq!(d.c.layout().die_at(1, 4 * B as u64), chip);
    // A read keeps that chip busy while TL_open arrives: the other 14 chunks are plugged at
    // TL_open's boundary, chunk 1 is not.
    let t0 = d.now;
    let unloaded = read_latency(&mut d, t0, z1 + 4);
    let c = d.c.submit(
        t0,
        Command::TlOpen {
            zslba: 0,
            close_only: false,
            bitmap: &map(1..64),
        },
    );
    assert_eq!(c.status, Status::SUCCESS);
    // Later the chip is idle when a host read for it arrives: the read goes first, and is
    // served as fast as on an idle device (queued behind a copyback it would wait tR + tPROG
    // more, 425 µs on MLC).
    let t1 = t0 + SimDuration::from_ms(10);
    assert_eq!(read_latency(&mut d, t1, z1 + 4), unloaded);
    assert_eq!(d.c.counters().plugged_blocks_background, 56);
    // At the next boundary that finds the chip idle, chunk 1 is plugged after all.
    let t2 = t1 + SimDuration::from_ms(10);
    let z3 = d.zslba(3);
    read_latency(&mut d, t2, z3);
    assert_eq!(d.c.counters().plugged_blocks_background, 60);
    d.now = t2 + SimDuration::from_ms(10);
    let (b0, _) = d.random(1);
    assert_eq!(d.write_data(0, &b0), Status::SUCCESS);
    assert_eq!(tl_open(&mut d, 0, &[], true), Status::SUCCESS);
    assert_eq!(read(&mut d, 0, 64), [&b0[..], &data[B..64 * B]].concat());
}

#[test]
fn lba_and_ppa_ordered_plugging_leave_the_same_bytes() {
    // Valid: chunks 2-5 and 9 whole, and every third block of chunks 6-8 and 10-63; the host
    // writes runs of the invalid blocks in increasing order, with idle time between writes.
    let valid_block = |b: u64| matches!(b / 4, 2..=5 | 9) || (b >= 24 && b.is_multiple_of(3));
    let run = |plugging| {
        let (mut d, _) = full_zone(plugging);
        let valid: Vec<u64> = (0..256).filter(|&b| valid_block(b)).collect();
        assert_eq!(tl_open(&mut d, 0, &map(valid), false), Status::SUCCESS);
        let mut b = 0;
        while b < 200 {
            if valid_block(b) {
                b += 1;
                continue;
            }
            let n = (b..200).take_while(|&i| !valid_block(i)).count() as u64;
            assert_eq!(d.write(b, n), Status::SUCCESS);
            d.now += SimDuration::from_ms(1);
            let z3 = d.zslba(3);
            let _ = read(&mut d, z3, 1);
            b += n + 7; // leave some invalid blocks unwritten
        }
        assert_eq!(tl_open(&mut d, 0, &[], true), Status::SUCCESS);
        let k = d.c.counters().clone();
        (
            read(&mut d, 0, 256),
            k.plugged_blocks_foreground + k.plugged_blocks_background,
            k.plugged_blocks_background,
        )
    };
    let (lba_bytes, lba_plugged, lba_bg) = run(Plugging::Lba);
    let (ppa_bytes, ppa_plugged, ppa_bg) = run(Plugging::Ppa);
    assert!(lba_bytes == ppa_bytes);
    assert_eq!(lba_plugged, ppa_plugged);
    assert_eq!(lba_bg, 0);
    assert!(ppa_bg > 0);
}
