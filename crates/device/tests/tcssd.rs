//! The transparently compressing block SSD: a conventional namespace larger than the flash,
//! compressed blocks behind a fine-grained map, GC under overwrite, running out of flash.

mod common;

use std::collections::HashMap;

use common::Dev;
use device::{presets, Command, Status, ZoneAction};
use sim::Rng;

const BLOCK: usize = 4096;

/// Blocks of about `1 / ratio` compressibility (1 = random).
fn blocks(rng: &mut Rng, n: usize, ratio: usize) -> Vec<u8> {
    let mut v = vec![0u8; n * BLOCK];
    let random = 256usize.div_ceil(ratio);
    for b in v.chunks_mut(256) {
        rng.fill(&mut b[..random]);
    }
    v
}

fn write(d: &mut Dev, slba: u64, data: &[u8]) -> Status {
    d.submit(Command::Write {
        slba,
        nlb: (data.len() / BLOCK) as u32,
        data,
        metadata: &[],
    })
    .status
}

fn read(d: &mut Dev, slba: u64, n: usize) -> Vec<u8> {
    let mut data = vec![0xAAu8; n * BLOCK];
    let s = d
        .submit(Command::Read {
            slba,
            nlb: n as u32,
            data: &mut data,
            metadata: &mut [],
        })
        .status;
    assert_eq!(s, Status::SUCCESS);
    data
}

fn tcssd() -> Dev {
    Dev::new(presets::test_tcssd())
}

#[test]
fn namespace_is_larger_than_the_flash_and_the_map_costs_dram() {
    let d = tcssd();
    // 16 superblocks of 256 KiB, 25% OP, expansion 2: 24 superblocks' worth of LBAs.
    let lbas = d.c.layout().namespace_lbas();
    assert_eq!(lbas, 24 * 64);
    let t = d.c.tcssd_counters().expect("tcssd");
    assert_eq!(t.map_bytes, lbas * 8);
    assert!(d.c.dram().zone_map_bytes >= t.map_bytes);
    // The QLC variant: a 2x namespace over 238 GB of flash needs a map of ~0.5 GB of DRAM.
    let big = device::Controller::in_memory(presets::tcssd_qlc()).expect("valid");
    let map = big.tcssd_counters().expect("tcssd").map_bytes;
    assert!(map > 400 << 20, "{map}");
}

#[test]
fn blocks_round_trip_anywhere_and_zone_commands_are_refused() {
    let mut d = tcssd();
    let a = blocks(&mut d.rng, 8, 4);
    let b = blocks(&mut d.rng, 3, 1);
    // Any LBA, any order, across what would be zone boundaries.
    assert_eq!(write(&mut d, 60, &a), Status::SUCCESS);
    assert_eq!(write(&mut d, 5, &b), Status::SUCCESS);
    assert_eq!(read(&mut d, 60, 8), a);
    assert_eq!(read(&mut d, 5, 3), b);
    assert!(read(&mut d, 0, 5).iter().all(|&x| x == 0));
    let last = d.c.layout().namespace_lbas() - 1;
    assert_eq!(write(&mut d, last, &a[..BLOCK]), Status::SUCCESS);
    assert_eq!(write(&mut d, last, &a), Status::LBA_OUT_OF_RANGE);
    assert_eq!(d.mgmt(0, ZoneAction::Open), Status::INVALID_OPCODE);
    let comp = d.submit(Command::ZoneAppend {
        zslba: 0,
        nlb: 1,
        data: &a[..BLOCK],
        metadata: &[],
    });
    assert_eq!(comp.status, Status::INVALID_OPCODE);
    let t = d.c.tcssd_counters().expect("tcssd");
    assert_eq!(t.blocks_written, 12);
    assert!(t.compressed_bytes < 12 * BLOCK as u64);
}

#[test]
fn gc_under_random_overwrite_keeps_every_block() {
    let mut d = tcssd();
    let lbas = d.c.layout().namespace_lbas();
    let mut model: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut rng = Rng::new(11);
    // Ratio-2 data over the whole namespace: 6 MiB logical in ~3 MiB compressed, on 4 MiB of
    // flash; overwritten at random many times over, so GC must copy live blocks out.
    for _ in 0..1500 {
        let slba = rng.below(lbas / 4) * 4;
        let data = blocks(&mut d.rng, 4, 2);
        assert_eq!(write(&mut d, slba, &data), Status::SUCCESS, "lba {slba}");
        for (i, b) in data.chunks(BLOCK).enumerate() {
            model.insert(slba + i as u64, b.to_vec());
        }
    }
    let t = d.c.tcssd_counters().expect("tcssd");
    assert!(t.gc_runs > 0 && t.erases > 0, "{t:?}");
    assert!(t.gc_relocated_bytes > 0, "{t:?}");
    assert!(t.overwritten_blocks > 0);
    // GC's copies are programmed on top of the host's compressed bytes (write amplification);
    // closing a superblock pads its last unit, and the open ones' partial units wait.
    let programmed = d.c.flash_counters().bytes_programmed;
    let moved = t.compressed_bytes + t.gc_relocated_bytes;
    let pad = t.erases * 4096 + 2 * 4096;
    assert!(
        programmed + 2 * 4096 >= moved && programmed <= moved + pad,
        "{programmed} vs {t:?}"
    );
    for (lba, want) in &model {
        assert_eq!(&read(&mut d, *lba, 1), want, "lba {lba}");
    }
}

fn deallocate(d: &mut Dev, slba: u64, nlb: u32) -> Status {
    d.submit(Command::Deallocate { slba, nlb }).status
}

#[test]
fn deallocated_blocks_read_as_zeros_free_their_flash_and_bad_ranges_are_refused() {
    let mut d = tcssd();
    let lbas = d.c.layout().namespace_lbas();
    let data = blocks(&mut d.rng, 16, 2);
    assert_eq!(write(&mut d, 100, &data), Status::SUCCESS);
    let before = d.c.tcssd_counters().expect("tcssd").valid_bytes;
    // The middle eight go; their neighbours stay; a range over never-written blocks is fine.
    assert_eq!(deallocate(&mut d, 104, 8), Status::SUCCESS);
    assert_eq!(deallocate(&mut d, 0, 64), Status::SUCCESS);
    assert!(read(&mut d, 104, 8).iter().all(|&x| x == 0));
    assert_eq!(read(&mut d, 100, 4), &data[..4 * BLOCK]);
    assert_eq!(read(&mut d, 112, 4), &data[12 * BLOCK..]);
    let t = d.c.tcssd_counters().expect("tcssd");
    assert_eq!(t.deallocated_blocks, 8);
    assert!(
        t.valid_bytes < before && t.valid_bytes * 3 > before,
        "{t:?} vs {before}"
    );
    // Refused, changing nothing: past the end, empty, and on a zoned device.
    assert_eq!(deallocate(&mut d, lbas - 4, 8), Status::LBA_OUT_OF_RANGE);
    assert_eq!(
        deallocate(&mut d, u64::MAX - 2, 8),
        Status::LBA_OUT_OF_RANGE
    );
    assert_eq!(deallocate(&mut d, 100, 0), Status::INVALID_FIELD);
    assert_eq!(read(&mut d, 100, 4), &data[..4 * BLOCK]);
    let mut z = Dev::new(presets::test_min());
    assert_eq!(deallocate(&mut z, 0, 8), Status::INVALID_OPCODE);
}

#[test]
fn trim_lets_the_namespace_be_rewritten_with_random_data() {
    // A third of the namespace of random data is 2 MiB of the 3 MiB the flash takes after
    // over-provisioning. Writing the thirds in turn fails at the second without TRIM (the
    // first third stays live); trimming the last third before writing the next lets GC find
    // whole dead superblocks, as a file system resetting a zone does.
    let mut d = tcssd();
    let third = d.c.layout().namespace_lbas() / 3;
    let mut keep = Vec::new();
    for round in 0..6u64 {
        if round > 0 {
            let last = (round - 1) % 3 * third;
            assert_eq!(deallocate(&mut d, last, third as u32), Status::SUCCESS);
        }
        let base = round % 3 * third;
        keep.clear();
        for slba in (base..base + third).step_by(8) {
            let data = blocks(&mut d.rng, 8, 1);
            assert_eq!(
                write(&mut d, slba, &data),
                Status::SUCCESS,
                "round {round} lba {slba}"
            );
            keep.push((slba, data));
        }
    }
    for (slba, data) in &keep {
        assert_eq!(&read(&mut d, *slba, 8), data);
    }
    let t = d.c.tcssd_counters().expect("tcssd");
    assert!(t.erases > 0 && t.deallocated_blocks == 5 * third, "{t:?}");
}

#[test]
fn incompressible_data_runs_out_of_flash_and_a_refused_write_changes_nothing() {
    let mut d = tcssd();
    let lbas = d.c.layout().namespace_lbas();
    let mut written = Vec::new();
    let mut failed_at = None;
    for slba in (0..lbas).step_by(8) {
        let data = blocks(&mut d.rng, 8, 1);
        match write(&mut d, slba, &data) {
            Status::SUCCESS => written.push((slba, data)),
            s => {
                assert_eq!(s, Status::CAPACITY_EXCEEDED);
                failed_at = Some(slba);
                break;
            }
        }
    }
    let at = failed_at.expect("1.5x more random data than flash");
    assert!(at > lbas / 3, "ran out early at {at} of {lbas}");
    assert!(read(&mut d, at, 8).iter().all(|&x| x == 0));
    for (slba, data) in &written {
        assert_eq!(&read(&mut d, *slba, 8), data);
    }
    // Overwriting with compressible data frees room again.
    let small = blocks(&mut d.rng, 8, 8);
    for (slba, _) in written.iter().take(40) {
        assert_eq!(write(&mut d, *slba, &small), Status::SUCCESS);
    }
    assert_eq!(write(&mut d, at, &small), Status::SUCCESS);
    assert_eq!(read(&mut d, at, 8), small);
}

#[test]
fn an_image_keeps_the_map_and_gc_goes_on_after_reopening() {
    let path = std::env::temp_dir().join(format!("znslab-tcssd-{}.img", std::process::id()));
    let open = |p: &std::path::Path, create: bool, seed: u64| Dev {
        c: if create {
            device::Controller::create_image(p, presets::test_tcssd()).expect("creates")
        } else {
            device::Controller::open_image(p).expect("reopens")
        },
        now: sim::SimInstant::ZERO,
        rng: Rng::new(seed),
    };
    let mut d = open(&path, true, 1);
    let lbas = d.c.layout().namespace_lbas();
    let mut model: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut rng = Rng::new(3);
    let mut churn = |d: &mut Dev, model: &mut HashMap<u64, Vec<u8>>, n: usize| {
        for _ in 0..n {
            let slba = rng.below(lbas / 4) * 4;
            let data = blocks(&mut d.rng, 4, 2);
            assert_eq!(write(d, slba, &data), Status::SUCCESS);
            for (i, b) in data.chunks(BLOCK).enumerate() {
                model.insert(slba + i as u64, b.to_vec());
            }
        }
    };
    churn(&mut d, &mut model, 700);
    let before = d.c.tcssd_counters().expect("tcssd");
    assert!(before.gc_runs > 0);
    // Most bytes left memory for the image (a quarter of a superblock at most stays per
    // superblock); GC and reads found them there.
    let resident = d.c.design_resident_bytes();
    assert!(
        resident * 2 < before.valid_bytes,
        "{resident} of {before:?}"
    );
    for (lba, want) in &model {
        assert_eq!(&read(&mut d, *lba, 1), want, "lba {lba} before closing");
    }
    d.c.close().expect("saves");

    let mut d = open(&path, false, 2);
    assert_eq!(d.c.tcssd_counters().expect("tcssd"), before);
    for (lba, want) in &model {
        assert_eq!(&read(&mut d, *lba, 1), want, "lba {lba} after reopen");
    }
    // More overwrites: GC must find the live blocks of superblocks written before the reopen.
    churn(&mut d, &mut model, 700);
    assert!(d.c.tcssd_counters().expect("tcssd").gc_runs > before.gc_runs);
    for (lba, want) in &model {
        assert_eq!(&read(&mut d, *lba, 1), want, "lba {lba}");
    }
    drop(d);
    let _ = std::fs::remove_file(&path);
}

/// DULBE (Set Features, Error Recovery): reads of never-written or deallocated blocks fail
/// with their status instead of returning zeros; off again at power-on; refused on zoned
/// designs, which deallocate nothing.
#[test]
fn dulbe_makes_reads_of_unwritten_and_deallocated_blocks_fail() {
    let mut d = Dev::new(presets::test_tcssd());
    let mut rng = Rng::new(2);
    let data = blocks(&mut rng, 4, 2);
    assert_eq!(write(&mut d, 0, &data), Status::SUCCESS);
    assert_eq!(d.read(8, 1).0, Status::SUCCESS, "zeros while DULBE is off");
    assert_eq!(
        d.c.admin(device::AdminCommand::SetFeatures {
            fid: 5,
            cdw11: 1 << 16
        }),
        Status::SUCCESS
    );
    assert_eq!(d.read(0, 4), (Status::SUCCESS, data.clone()));
    assert_eq!(d.read(3, 2).0, Status::DEALLOCATED_OR_UNWRITTEN_BLOCK);
    let c = d.submit(Command::Deallocate { slba: 1, nlb: 1 });
    assert_eq!(c.status, Status::SUCCESS);
    assert_eq!(d.read(1, 1).0, Status::DEALLOCATED_OR_UNWRITTEN_BLOCK);
    assert_eq!(d.read(0, 1).0, Status::SUCCESS);
    d.c.power_cycle();
    assert_eq!(d.read(1, 1).0, Status::SUCCESS, "off after a power cycle");
    assert_eq!(
        Dev::min().c.admin(device::AdminCommand::SetFeatures {
            fid: 5,
            cdw11: 1 << 16
        }),
        Status::INVALID_FIELD
    );
}

#[test]
fn the_metadata_device_preset_takes_random_block_writes_without_compression() {
    let mut d = Dev::new(device::presets::znsplus_meta());
    let blocks_ns = d.c.layout().namespace_lbas();
    assert!(blocks_ns * 4096 >= 200 << 20, "{blocks_ns} blocks");
    let mut rng = Rng::new(3);
    let mut held = std::collections::BTreeMap::new();
    for i in 0..3000u64 {
        let lba = rng.below(4096);
        let data = blocks(&mut rng, 1, 1);
        assert_eq!(write(&mut d, lba, &data), Status::SUCCESS, "write {i}");
        held.insert(lba, data);
    }
    for (&lba, want) in &held {
        assert!(read(&mut d, lba, 1) == *want, "block {lba}");
    }
    // Incompressible blocks take their whole size: nothing was compressed.
    assert!(d.c.counters().host_bytes_written >= 3000 * 4096);
}
