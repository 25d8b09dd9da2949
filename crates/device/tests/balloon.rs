//! The Balloon-ZNS design: host-transparent compression into slots, truncated pages and their
//! residues, adaptive slot sizes, residue migration and reclamation, incompressible zones, and
//! running out of flash.

mod common;

use common::Dev;
use device::{presets, Command, Controller, Status, ZoneAction, ZoneState};
use sim::Rng;

const PAGE: usize = 4096;

/// A page that compresses to about `1 / ratio` (random head of every 256 B block, zeros after);
/// `ratio == 1` is random.
fn page(rng: &mut Rng, ratio: usize) -> Vec<u8> {
    let mut v = vec![0u8; PAGE];
    let random = 256usize.div_ceil(ratio);
    for block in v.chunks_mut(256) {
        rng.fill(&mut block[..random]);
    }
    v
}

/// `pages` pages, each random with one chance in `every` (never if 0), else of ratio 4.
fn mixed(rng: &mut Rng, pages: usize, every: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(pages * PAGE);
    for _ in 0..pages {
        let raw = every > 0 && rng.below(every) == 0;
        out.extend(page(rng, if raw { 1 } else { 4 }));
    }
    out
}

fn balloon() -> Dev {
    Dev::new(presets::test_balloon())
}

fn write(d: &mut Dev, slba: u64, data: &[u8]) -> Status {
    d.submit(Command::Write {
        slba,
        nlb: (data.len() / PAGE) as u32,
        data,
        metadata: &[],
    })
    .status
}

fn read(d: &mut Dev, slba: u64, pages: usize) -> Vec<u8> {
    let mut data = vec![0xAAu8; pages * PAGE];
    let s = d
        .submit(Command::Read {
            slba,
            nlb: pages as u32,
            data: &mut data,
            metadata: &mut [],
        })
        .status;
    assert_eq!(s, Status::SUCCESS, "read at {slba}");
    data
}

fn counters(d: &Dev) -> device::BalloonCounters {
    d.c.balloon_counters().expect("balloon design")
}

/// Write a whole zone in 8-page commands; returns what was written.
fn fill_zone(d: &mut Dev, zone: u32, every: u64) -> Result<Vec<u8>, Status> {
    let cap = d.cap() as usize;
    let z = d.zslba(zone);
    let mut all = Vec::new();
    for i in (0..cap).step_by(8) {
        let data = mixed(&mut d.rng, 8, every);
        match write(d, z + i as u64, &data) {
            Status::SUCCESS => all.extend(data),
            s => return Err(s),
        }
    }
    Ok(all)
}

#[test]
fn layout_expands_logical_capacity_and_refuses_what_it_cannot_do() {
    let d = balloon();
    // 16 superblocks of 256 KiB, expansion ratio 2: 32 logical zones.
    assert_eq!(d.c.zone_count(), 32);
    let b = d.c.layout().balloon.clone().expect("balloon layout");
    assert_eq!((b.groups, b.dies_per_ssb, b.ssb_bytes), (4, 1, 64 << 10));
    assert_eq!(b.window_pages, 8);
    assert_eq!(
        presets::balloon_qlc().layout().expect("valid").zone_count,
        256
    );

    let mut cfg = presets::test_balloon();
    cfg.lba.metadata_bytes = 16;
    assert_eq!(
        cfg.layout().expect_err("metadata").field,
        "device.lba.metadata_bytes"
    );
    let mut cfg = presets::test_balloon();
    cfg.balloon.sub_superblocks = 3;
    assert_eq!(
        cfg.layout().expect_err("3 does not divide 4 dies").field,
        "device.balloon.sub_superblocks"
    );
    let mut cfg = presets::test_balloon();
    cfg.balloon.expansion_percent = 50;
    assert!(cfg.layout().is_err());
}

#[test]
fn an_image_keeps_slots_residues_and_tables_across_reopening() {
    let path = std::env::temp_dir().join(format!("znslab-balloon-{}.img", std::process::id()));
    let mut d = Dev {
        c: Controller::create_image(&path, presets::test_balloon()).expect("creates"),
        now: sim::SimInstant::ZERO,
        rng: Rng::new(9),
    };
    let full = fill_zone(&mut d, 0, 3).expect("fits");
    // Full segments left memory for the image; the zone reads back from there.
    let resident = d.c.design_resident_bytes();
    assert!(
        resident < full.len() as u64 / 4,
        "{resident} bytes still in memory"
    );
    assert_eq!(read(&mut d, 0, 64), full);
    let z1 = d.zslba(1);
    let part = mixed(&mut d.rng, 13, 2);
    assert_eq!(write(&mut d, z1, &part), Status::SUCCESS);
    let before = counters(&d);
    assert!(before.truncated_pages > 0);
    d.c.close().expect("saves");

    let mut d = Dev {
        c: Controller::open_image(&path).expect("reopens"),
        now: sim::SimInstant::ZERO,
        rng: Rng::new(10),
    };
    assert_eq!(counters(&d), before);
    assert_eq!(d.state(0), ZoneState::Full);
    assert_eq!(d.c.zone(1).wp, z1 + 13);
    assert_eq!(read(&mut d, 0, 64), full);
    assert_eq!(read(&mut d, z1, 13), part);
    // Zone 1 goes on where it stopped (same window, same slot), and reads back whole.
    let more = mixed(&mut d.rng, 51, 2);
    assert_eq!(write(&mut d, z1 + 13, &more), Status::SUCCESS);
    let zone1 = [part.clone(), more].concat();
    assert_eq!(read(&mut d, z1, 64), zone1);
    // A reset after reopening frees what the tables said the zone held.
    assert_eq!(d.mgmt(0, ZoneAction::Reset), Status::SUCCESS);
    drop(d);
    let mut d = Dev {
        c: Controller::open_image(&path).expect("reopens again"),
        now: sim::SimInstant::ZERO,
        rng: Rng::new(11),
    };
    assert_eq!(d.state(0), ZoneState::Empty);
    assert!(read(&mut d, 0, 4).iter().all(|&b| b == 0));
    assert_eq!(read(&mut d, z1, 64), zone1);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn pages_round_trip_through_slots_and_residues() {
    let mut d = balloon();
    let data = fill_zone(&mut d, 0, 4).expect("fits");
    assert_eq!(d.state(0), ZoneState::Full);
    assert_eq!(read(&mut d, 0, 64), data);
    // Single pages, and a range crossing windows.
    for p in [0usize, 7, 8, 33, 63] {
        assert_eq!(
            read(&mut d, p as u64, 1),
            &data[p * PAGE..(p + 1) * PAGE],
            "page {p}"
        );
    }
    assert_eq!(read(&mut d, 5, 20), &data[5 * PAGE..25 * PAGE]);
    let c = counters(&d);
    assert_eq!(c.pages_written, 64);
    assert_eq!(c.windows, 8);
    assert!(c.truncated_pages > 0, "{c:?}");
    // Compression saved flash: slots plus residues well under the logical bytes.
    assert!(
        c.slot_bytes + c.residue_bytes < 64 * PAGE as u64 * 6 / 10,
        "{c:?}"
    );
    // Pages past the write pointer of another zone read as zeros.
    let z1 = d.zslba(1);
    let two = mixed(&mut d.rng, 2, 0);
    assert_eq!(write(&mut d, z1, &two), Status::SUCCESS);
    assert!(read(&mut d, z1 + 2, 3).iter().all(|&b| b == 0));
}

#[test]
fn slot_size_follows_the_previous_window() {
    let mut d = balloon();
    // Window 0 at the first slot (8 units = 2048 B); ratio-4 pages take ~1 KiB + header.
    let w0: Vec<u8> = (0..8).flat_map(|_| page(&mut d.rng, 4)).collect();
    assert_eq!(write(&mut d, 0, &w0), Status::SUCCESS);
    let after0 = counters(&d).slot_bytes;
    assert_eq!(after0, 8 * 2048);
    let w1: Vec<u8> = (0..8).flat_map(|_| page(&mut d.rng, 4)).collect();
    assert_eq!(write(&mut d, 8, &w1), Status::SUCCESS);
    let slot1 = (counters(&d).slot_bytes - after0) / 8;
    assert!((1024..2048).contains(&slot1), "window 1 slot {slot1}");
    assert_eq!(slot1 % 256, 0);
    assert_eq!(counters(&d).truncated_pages, 0);
    assert_eq!(read(&mut d, 0, 16), [w0, w1].concat());
}

#[test]
fn a_truncated_page_takes_two_serialized_flash_reads() {
    let mut d = balloon();
    // Page 0 random (truncated at the 2 KiB first slot), page 1 compressible.
    let data = [page(&mut d.rng, 1), page(&mut d.rng, 4)].concat();
    assert_eq!(write(&mut d, 0, &data), Status::SUCCESS);
    // Fill a few more pages so the pages reach flash, then let programs finish.
    // Residues reach flash once a program unit of them fills: six more random pages.
    let mut rest: Vec<u8> = (0..6).flat_map(|_| page(&mut d.rng, 1)).collect();
    rest.extend(mixed(&mut d.rng, 24, 0));
    assert_eq!(write(&mut d, 2, &rest), Status::SUCCESS);
    d.now += sim::SimDuration::from_ns(100_000_000);
    assert_eq!(counters(&d).truncated_pages, 7);
    let tr = presets::test_balloon().nand.read_latency_ns;

    let t0 = d.now;
    assert_eq!(read(&mut d, 0, 1), &data[..PAGE]);
    let truncated = d.now.since(t0).as_ns();
    let t1 = d.now;
    assert_eq!(read(&mut d, 1, 1), &data[PAGE..]);
    let whole = d.now.since(t1).as_ns();
    assert_eq!(counters(&d).two_read_pages, 1);
    assert!(truncated >= 2 * tr, "truncated read {truncated} ns");
    assert!(whole < 2 * tr, "plain read {whole} ns");
}

#[test]
fn an_incompressible_zone_goes_raw_on_a_whole_superblock() {
    let mut d = balloon();
    let data = fill_zone(&mut d, 0, 1).expect("fits");
    let c = counters(&d);
    assert_eq!(c.raw_windows, 7, "{c:?}");
    // One SSB (window 0) plus a whole superblock of 4 SSBs for the rest.
    assert_eq!(c.home_ssbs, 5, "{c:?}");
    assert_eq!(read(&mut d, 0, 64), data);
    // Reset gives every sub-superblock back.
    assert_eq!(d.mgmt(0, ZoneAction::Reset), Status::SUCCESS);
    let c = counters(&d);
    assert_eq!((c.home_ssbs, c.extra_ssbs), (0, 0), "{c:?}");
}

#[test]
fn residues_move_home_when_a_zone_fills_with_room_left() {
    let mut d = balloon();
    // Mostly ratio-4 data: home needs ~1.3 SSBs, the few residues fit in the rest.
    let data = fill_zone(&mut d, 0, 16).expect("fits");
    let c = counters(&d);
    assert!(c.truncated_pages > 0, "{c:?}");
    assert_eq!(c.migrations, 1, "{c:?}");
    assert_eq!(
        c.extra_ssbs, 0,
        "the extra SSB emptied and was freed: {c:?}"
    );
    assert_eq!(read(&mut d, 0, 64), data);
}

#[test]
fn finish_migrates_too_and_closed_zones_share_extra_ssbs() {
    let mut d = balloon();
    let a = mixed(&mut d.rng, 16, 2);
    assert_eq!(write(&mut d, 0, &a), Status::SUCCESS);
    assert_eq!(counters(&d).extra_ssbs, 1);
    assert_eq!(d.mgmt(0, ZoneAction::Close), Status::SUCCESS);
    // Zone 1 takes the extra SSB zone 0 let go of, instead of a new one.
    let z1 = d.zslba(1);
    let b = mixed(&mut d.rng, 16, 2);
    assert_eq!(write(&mut d, z1, &b), Status::SUCCESS);
    assert_eq!(counters(&d).extra_ssbs, 1);
    assert_eq!(d.mgmt(0, ZoneAction::Finish), Status::SUCCESS);
    assert!(counters(&d).migrations >= 1);
    assert_eq!(read(&mut d, 0, 16), a);
    assert_eq!(read(&mut d, z1, 16), b);
}

#[test]
fn reclamation_frees_residue_space_and_out_of_space_changes_nothing() {
    let mut d = balloon();
    let mut live: Vec<(u32, Vec<u8>)> = Vec::new();
    let mut zone = 0u32;
    let mut failed = None;
    // Fill zones with residue-heavy data until flash runs out; zones 0 and 2 are reset after
    // zone 3 is written, leaving dead residues in the extra SSBs they shared with zones 1 and 3.
    while zone < d.c.zone_count() {
        match fill_zone(&mut d, zone, 3) {
            Ok(data) => live.push((zone, data)),
            Err(s) => {
                failed = Some((zone, s));
                break;
            }
        }
        if zone == 3 {
            for z in [0, 2] {
                assert_eq!(d.mgmt(z, ZoneAction::Reset), Status::SUCCESS);
            }
            live.retain(|(z, _)| *z % 2 == 1);
        }
        zone += 1;
    }
    let c = counters(&d);
    let (zone, status) =
        failed.expect("64 SSBs of 64 KiB cannot hold 30 zones of 256 KiB at ratio ~2");
    assert_eq!(status, Status::CAPACITY_EXCEEDED);
    assert!(c.reclamations > 0, "{c:?}");
    assert!(c.reclaimed_bytes > 0, "{c:?}");
    // The failed write changed nothing: the write pointer is where the last success left it.
    let wp = d.c.zone(zone).wp;
    assert_eq!((wp - d.zslba(zone)) % 8, 0);
    // A whole zone of random pages needs more sub-superblocks than are left: refused, and
    // nothing changes.
    let before = counters(&d);
    let state = d.state(zone);
    let more = mixed(&mut d.rng, 64, 1);
    assert_eq!(write(&mut d, wp, &more), Status::CAPACITY_EXCEEDED);
    assert_eq!((d.c.zone(zone).wp, d.state(zone)), (wp, state));
    assert_eq!(counters(&d).pages_written, before.pages_written);
    // Everything acknowledged reads back, relocated residues included.
    for (z, data) in &live {
        let slba = d.zslba(*z);
        assert_eq!(&read(&mut d, slba, 64), data, "zone {z}");
    }
    // Resetting a zone makes room again.
    let (z, _) = live[0];
    assert_eq!(d.mgmt(z, ZoneAction::Reset), Status::SUCCESS);
    assert_eq!(write(&mut d, wp, &more[..8 * PAGE]), Status::SUCCESS);
}

#[test]
fn compressed_write_and_padding_zones_are_cczns_only() {
    let mut d = balloon();
    assert_eq!(d.mgmt(0, ZoneAction::OpenPadding), Status::INVALID_FIELD);
    let data = vec![0u8; PAGE];
    let mut md = [];
    let s = d
        .submit(Command::CompressedWrite {
            slba: 0,
            intra: 0,
            nlb: 1,
            data: &data,
            metadata: &mut md,
            append: false,
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    // Zone Append works like a write and returns where the data landed.
    let comp = d.submit(Command::ZoneAppend {
        zslba: 0,
        nlb: 1,
        data: &data,
        metadata: &[],
    });
    assert_eq!((comp.status, comp.result), (Status::SUCCESS, 0));
    assert_eq!(read(&mut d, 0, 1), data);
}

#[test]
fn pages_sensed_together_cost_one_flash_read() {
    // Eight compressible pages in 2 KiB slots fill four 4 KiB flash pages; read back in one
    // command, they cost four reads when each flash page is sensed alone, one when the four
    // are the sectors of one physical page (`pages_per_read`).
    let reads = |pages_per_read: u32| {
        let mut cfg = presets::test_balloon();
        cfg.nand.pages_per_program = 4;
        cfg.balloon.pages_per_read = pages_per_read;
        let mut d = Dev::new(cfg);
        let data = mixed(&mut d.rng, 64, 0);
        assert_eq!(write(&mut d, 0, &data), Status::SUCCESS);
        d.now += sim::SimDuration::from_ns(100_000_000);
        let before = d.c.flash_counters().reads;
        assert_eq!(read(&mut d, 0, 8), &data[..8 * PAGE]);
        d.c.flash_counters().reads - before
    };
    assert_eq!(reads(1), 4);
    assert_eq!(reads(4), 1);
    // A sense larger than the program unit is refused by name.
    let mut cfg = presets::test_balloon();
    cfg.balloon.pages_per_read = 2;
    let err = Controller::in_memory(cfg)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("balloon.pages_per_read"), "{err}");
}
