//! The ZNS+ design (OSDI'21 §3.2): zone_compaction moves real bytes between zones inside the
//! device, by copyback for a whole chunk that stays on its chip and by read + program
//! otherwise; every validation failure has its status and changes nothing; identify_mapping
//! names the chip of every chunk as the layout places it; other designs refuse both opcodes.

mod common;

use common::Dev;
use device::ChunkMapping;
use device::{presets, Command, DeviceConfig, Status, ZoneAction, ZoneMapping, ZoneState};
use sim::SimInstant;

/// ZNS+'s MLC device (Table 2) with 8 zones instead of 512, and no spare block groups.
fn small() -> DeviceConfig {
    let mut cfg = presets::znsplus_mlc();
    cfg.nand.blocks_per_plane = 8;
    cfg.zones.count = Some(8);
    cfg
}

const CHUNK: u64 = 4; // 16 KiB pages of 4 KiB blocks

/// A device whose zone 0 holds `chunks` chunks of random data, all programmed by `now`.
fn filled(chunks: u64) -> (Dev, Vec<u8>) {
    let mut d = Dev::new(small());
    let (data, _) = d.random(chunks * CHUNK);
    let c = d.submit(Command::Write {
        slba: 0,
        nlb: (chunks * CHUNK) as u32,
        data: &data,
        metadata: &[],
    });
    assert_eq!(c.status, Status::SUCCESS);
    d.now += sim::SimDuration::from_ms(100);
    (d, data)
}

fn compact(d: &mut Dev, zslba: u64, pairs: &[(u64, u64)]) -> Status {
    d.submit(Command::ZoneCompaction { zslba, pairs }).status
}

#[test]
fn copies_land_at_their_destinations_by_copyback_when_the_chip_is_the_same() {
    let (mut d, data) = filled(8);
    let z1 = d.zslba(1);
    // Chunks 0 and 1 of zone 0 to chunks 0 and 1 of zone 1: every zone puts chunk j on chip
    // j mod 16, so both are copybacks. Then chunk 2 to chunk 2's place but block by block in
    // reverse: read + program.
    let mut pairs: Vec<(u64, u64)> = (0..2 * CHUNK).map(|i| (i, z1 + i)).collect();
    pairs.extend((0..CHUNK).map(|i| (2 * CHUNK + i, z1 + 3 * CHUNK - 1 - i)));
    let before = d.c.flash_counters().copybacks;
    let start = d.now;
    assert_eq!(compact(&mut d, z1, &pairs), Status::SUCCESS);
    assert!(d.now > start, "the copies take flash time");
    let k = d.c.counters();
    assert_eq!((k.zone_compactions, k.compaction_blocks), (1, 12));
    assert_eq!((k.compaction_copybacks, k.compaction_read_programs), (2, 1));
    assert_eq!(d.c.flash_counters().copybacks - before, 2);
    let z = d.c.zone(1);
    assert_eq!((z.wp, z.state), (z1 + 12, ZoneState::ImplicitlyOpened));
    let (s, got) = d.read(z1, 12);
    assert_eq!(s, Status::SUCCESS);
    let lba = d.lba();
    assert_eq!(got[..8 * lba], data[..8 * lba]);
    for i in 0..CHUNK as usize {
        let src = (2 * CHUNK as usize + i) * lba;
        let dst = (3 * CHUNK as usize - 1 - i) * lba;
        assert_eq!(got[dst..dst + lba], data[src..src + lba], "block {i}");
    }
    // A chunk moved to another chip's place is read and programmed, not copied back.
    let z2 = d.zslba(2);
    let pairs: Vec<(u64, u64)> = (0..CHUNK).map(|i| (i, z2 + CHUNK + i)).collect();
    assert_eq!(d.write(z2, CHUNK), Status::SUCCESS);
    assert_eq!(compact(&mut d, z2, &pairs), Status::SUCCESS);
    assert_eq!(d.c.counters().compaction_copybacks, 2);
}

#[test]
fn a_copyback_is_faster_than_read_and_program() {
    let time = |shift: u64| {
        let (mut d, _) = filled(16);
        let z1 = d.zslba(1);
        if shift > 0 {
            assert_eq!(d.write(z1, shift * CHUNK), Status::SUCCESS);
            d.now += sim::SimDuration::from_ms(100);
        }
        let pairs: Vec<(u64, u64)> = (0..16 * CHUNK)
            .map(|i| (i, z1 + shift * CHUNK + i))
            .collect();
        let t = d.now;
        assert_eq!(compact(&mut d, z1, &pairs), Status::SUCCESS);
        d.now.since(t).as_ns()
    };
    let (same_chip, other_chip) = (time(0), time(1));
    assert!(same_chip < other_chip, "{same_chip} ns vs {other_chip} ns");
}

#[test]
fn a_partial_last_chunk_waits_in_the_buffer_and_reads_back() {
    let (mut d, data) = filled(2);
    let z1 = d.zslba(1);
    let pairs: Vec<(u64, u64)> = (0..6).map(|i| (i, z1 + i)).collect();
    assert_eq!(compact(&mut d, z1, &pairs), Status::SUCCESS);
    // The zone goes on with host writes after the copied blocks.
    assert_eq!(d.write(z1 + 6, 2), Status::SUCCESS);
    let (_, got) = d.read(z1, 6);
    assert_eq!(got, data[..6 * d.lba()]);
}

#[test]
fn every_invalid_compaction_is_refused_with_nothing_changed() {
    let (mut d, _) = filled(4);
    let (z1, z2) = (d.zslba(1), d.zslba(2));
    let nsze = d.c.identify().nsze;
    let good = |n: u64| (0..n).map(|i| (i, z1 + i)).collect::<Vec<_>>();
    let too_many: Vec<(u64, u64)> = (0..513).map(|i| (i % 16, z1 + i)).collect();
    type Case = (&'static str, u64, Vec<(u64, u64)>, Status);
    let cases: Vec<Case> = vec![
        ("no pairs", z1, vec![], Status::INVALID_FIELD),
        ("513 pairs", z1, too_many, Status::INVALID_FIELD),
        (
            "zone past the namespace",
            nsze,
            good(1),
            Status::LBA_OUT_OF_RANGE,
        ),
        ("not a zone start", z1 + 1, good(1), Status::INVALID_FIELD),
        (
            "source past the namespace",
            z1,
            vec![(nsze, z1)],
            Status::LBA_OUT_OF_RANGE,
        ),
        (
            "source never written",
            z1,
            vec![(16, z1)],
            Status::LBA_OUT_OF_RANGE,
        ),
        (
            "destination in another zone",
            z1,
            vec![(0, z2)],
            Status::INVALID_FIELD,
        ),
        (
            "a source twice",
            z1,
            vec![(0, z1), (0, z1 + 1)],
            Status::INVALID_FIELD,
        ),
        (
            "a destination twice",
            z1,
            vec![(0, z1), (1, z1)],
            Status::INVALID_FIELD,
        ),
        (
            "not at the write pointer",
            z1,
            vec![(0, z1 + 1)],
            Status::ZONE_INVALID_WRITE,
        ),
        (
            "a hole",
            z1,
            vec![(0, z1), (1, z1 + 2)],
            Status::ZONE_INVALID_WRITE,
        ),
    ];
    for (what, zslba, pairs, status) in cases {
        let before = (d.c.zone(1), d.c.counters().zone_compactions);
        assert_eq!(compact(&mut d, zslba, &pairs), status, "{what}");
        assert_eq!(
            (d.c.zone(1), d.c.counters().zone_compactions),
            before,
            "{what}"
        );
    }
    // A full zone, and one whose end the copies would pass (capacity = size here, so the
    // last destinations are in the next zone: Invalid Field, checked before the capacity).
    let cap = d.cap();
    assert_eq!(
        d.submit(Command::ZoneMgmtSend {
            slba: z2,
            action: ZoneAction::Finish,
            select_all: false
        })
        .status,
        Status::SUCCESS
    );
    assert_eq!(compact(&mut d, z2, &[(0, z2)]), Status::ZONE_FULL);
    let z3 = d.zslba(3);
    let mut at = 0;
    while at < cap - 2 {
        let n = (cap - 2 - at).min(512);
        assert_eq!(d.write(z3 + at, n), Status::SUCCESS);
        at += n;
    }
    let pairs: Vec<(u64, u64)> = (0..4).map(|i| (i, z3 + cap - 2 + i)).collect();
    assert_eq!(compact(&mut d, z3, &pairs), Status::INVALID_FIELD);
    // Filling the capacity exactly makes the zone Full.
    assert_eq!(compact(&mut d, z3, &pairs[..2]), Status::SUCCESS);
    assert_eq!(d.c.zone(3).state, ZoneState::Full);
    // An offline source zone.
    d.c.inject_zone_condition(0, ZoneState::Offline);
    assert_eq!(compact(&mut d, z1, &[(0, z1)]), Status::ZONE_OFFLINE);
}

#[test]
fn other_designs_refuse_the_vendor_opcodes() {
    let mut d = Dev::min();
    assert_eq!(d.write(0, 4), Status::SUCCESS);
    let z1 = d.zslba(1);
    assert_eq!(compact(&mut d, z1, &[(0, z1)]), Status::INVALID_OPCODE);
    let mut buf = vec![0u8; 4096];
    let c = d.submit(Command::IdentifyMapping { data: &mut buf });
    assert_eq!(c.status, Status::INVALID_OPCODE);
}

/// identify_mapping's (FCG, chip) of every chunk names the die the layout puts it on.
fn check_mapping(cfg: DeviceConfig) -> ChunkMapping {
    let mut d = Dev::new(cfg);
    let mut buf = vec![0u8; 4096];
    let c = d.c.submit(
        SimInstant::ZERO,
        Command::IdentifyMapping { data: &mut buf },
    );
    assert_eq!(c.status, Status::SUCCESS);
    let map = ChunkMapping::parse(&buf).expect("version 1");
    let l = d.c.layout().clone();
    let chunk_lbas = 1u64 << map.chunk_lbas_log2;
    assert_eq!(chunk_lbas * l.lba_bytes, l.geometry.unit_bytes);
    let mut seen = std::collections::BTreeMap::new();
    for zone in 0..l.zone_count.min(8) {
        for chunk in 0..(l.zone_capacity_lbas / chunk_lbas).min(64) {
            let lba = zone as u64 * l.zone_size_lbas + chunk * chunk_lbas;
            let die = l.die_at(zone, chunk * l.geometry.unit_bytes);
            let id = map.chip_of(lba);
            assert_eq!(*seen.entry(id).or_insert(die), die, "lba {lba}");
        }
    }
    map
}

#[test]
fn identify_mapping_names_each_chunks_chip() {
    let map = check_mapping(small());
    // §4: 16 chips in one group, 4-block chunks, 8192-block zones.
    assert_eq!(
        (
            map.chip_id_shift,
            map.chip_id_bits,
            map.fcg_id_shift,
            map.fcg_id_bits
        ),
        (2, 4, 13, 0)
    );
    let mut half = small();
    half.zones.mapping = ZoneMapping::HalfDies;
    assert_eq!(check_mapping(half).fcg_id_bits, 1);
    let mut groups = small();
    groups.zones.mapping = ZoneMapping::DieGroups {
        channels_per_zone: 2,
        dies_per_channel_per_zone: 1,
    };
    groups.nand.blocks_per_plane = 64;
    assert_eq!(check_mapping(groups).fcg_id_bits, 3);
}

#[test]
fn copyback_is_read_plus_program_without_transfers_as_table_2_says() {
    // Table 2: copyback latency normalised to read-and-program, TLC 0.94, MLC 0.90,
    // Z-NAND 0.94: (tR + tPROG) / (tR + tPROG + 2 DMA) with the presets' timings.
    for (cfg, paper) in [
        (presets::znsplus_tlc(), 0.94),
        (presets::znsplus_mlc(), 0.90),
        (presets::znsplus_znand(), 0.94),
    ] {
        let n = &cfg.nand;
        let dma = n.page_bytes as f64 / n.channel_bytes_per_s as f64 * 1e9;
        let (r, p) = (n.read_latency_ns as f64, n.program_latency_ns as f64);
        let ratio = (r + p) / (r + p + 2.0 * dma);
        assert!((ratio - paper).abs() < 0.005, "{}: {ratio}", cfg.name);
    }
}

#[test]
fn copies_past_the_zone_capacity_are_a_boundary_error() {
    let mut cfg = small();
    cfg.zones.capacity_bytes = Some(28 << 20);
    cfg.zones.size_bytes = Some(32 << 20);
    let mut d = Dev::new(cfg);
    assert_eq!(d.write(0, 8), Status::SUCCESS);
    let z1 = d.zslba(1);
    let cap = d.cap();
    let mut at = 0;
    while at < cap - 2 {
        let n = (cap - 2 - at).min(512);
        assert_eq!(d.write(z1 + at, n), Status::SUCCESS);
        at += n;
    }
    let pairs: Vec<(u64, u64)> = (0..4).map(|i| (i, z1 + cap - 2 + i)).collect();
    assert_eq!(compact(&mut d, z1, &pairs), Status::ZONE_BOUNDARY_ERROR);
    assert_eq!(d.c.zone(1).wp, z1 + cap - 2);
}

/// Time of a Reset of a full zone, and of a write to it right after.
fn reset_then_write(cfg: DeviceConfig) -> (u64, u64) {
    let mut d = Dev::new(cfg);
    let cap = d.cap();
    let mut at = 0;
    while at < cap {
        assert_eq!(d.write(at, 512.min(cap - at)), Status::SUCCESS);
        at += 512;
    }
    d.now += sim::SimDuration::from_ms(1000);
    let t = d.now;
    let c = d.submit(Command::ZoneMgmtSend {
        slba: 0,
        action: ZoneAction::Reset,
        select_all: false,
    });
    assert_eq!(c.status, Status::SUCCESS);
    let reset = c.done_at.since(t).as_ns();
    // A whole stripe, so it is programmed at once.
    let (data, _) = d.random(64);
    let t = d.now;
    let c = d.c.submit(
        t,
        Command::Write {
            slba: 0,
            nlb: 64,
            data: &data,
            metadata: &[],
        },
    );
    assert_eq!(c.status, Status::SUCCESS);
    d.now = c.done_at;
    // Read it back from flash once programmed: the program waited for a free block group.
    let (_, back) = d.read(0, 64);
    assert_eq!(back, data);
    (reset, d.now.since(t).as_ns())
}

#[test]
fn a_reset_takes_a_spare_block_group_and_erases_the_old_one_in_the_background() {
    let erase = small().nand.erase_latency_ns;
    // The presets keep 16 spare blocks per chip beyond the zones'.
    let mut spare = small();
    spare.zones.count = Some(4);
    let d = Dev::new(spare.clone());
    let z =
        d.c.design()
            .as_any()
            .downcast_ref::<device::design::znsplus::Znsplus>()
            .expect("znsplus");
    assert_eq!(z.spare_groups(), vec![4u64]);
    let (reset, _) = reset_then_write(spare);
    assert!(reset < erase / 10, "reset {reset} ns with a spare waiting");
    // Without spares the zone waits for its own erase, as on plain ZNS.
    let (reset, _) = reset_then_write(small());
    assert!(reset >= erase, "reset {reset} ns without a spare");
    let mut plain = small();
    plain.design = device::DesignName::Zns;
    let (reset, _) = reset_then_write(plain);
    assert!(reset >= erase, "plain ZNS reset {reset} ns");
}

#[test]
fn the_background_erase_delays_reads_on_its_dies() {
    let mut cfg = small();
    cfg.zones.count = Some(4);
    let mut d = Dev::new(cfg);
    let cap = d.cap();
    for zone in 0..2u64 {
        let mut at = 0;
        while at < cap {
            assert_eq!(d.write(zone * cap + at, 512.min(cap - at)), Status::SUCCESS);
            at += 512;
        }
    }
    d.now += sim::SimDuration::from_ms(1000);
    let t = d.now;
    let c = d.c.submit(
        t,
        Command::ZoneMgmtSend {
            slba: 0,
            action: ZoneAction::Reset,
            select_all: false,
        },
    );
    assert_eq!(c.status, Status::SUCCESS);
    // Zone 1 shares every die with zone 0: a read there waits for the erase.
    let mut buf = vec![0u8; 4096];
    let r = d.c.submit(
        c.done_at,
        Command::Read {
            slba: cap,
            nlb: 1,
            data: &mut buf,
            metadata: &mut [],
        },
    );
    let erase = small().nand.erase_latency_ns;
    assert!(
        r.done_at.since(t).as_ns() >= erase,
        "the read went around the erase"
    );
}

#[test]
fn chip_utilisation_over_time_in_100_ms_buckets() {
    let mut d = Dev::new(small());
    d.c.record_busy_series(100_000_000);
    // Fill one zone: 16 chips programming in parallel.
    let cap = d.cap();
    let mut at = 0;
    while at < cap {
        assert_eq!(d.write(at, 512.min(cap - at)), Status::SUCCESS);
        at += 512;
    }
    let s = d.c.flash().busy_series().expect("recording").clone();
    let mean = s.mean();
    assert!(!mean.is_empty());
    assert!(mean.iter().all(|&u| (0.0..=1.0).contains(&u)), "{mean:?}");
    assert!(mean[0] > 0.5, "the writes keep the chips busy: {mean:?}");
    // The busy time adds up to the flash work: 2048 programs of 16 KiB at 390 µs + transfer.
    let total: u64 = s.per_die.iter().flatten().sum();
    assert!(total >= 2048 * 390_000, "{total}");
}

#[test]
fn copy_takes_ranges_to_the_write_pointer_within_its_limits() {
    let (mut d, data) = filled(4);
    let z1 = d.zslba(1);
    let copy = |d: &mut Dev, sdlba: u64, ranges: &[(u64, u32)]| {
        d.submit(Command::Copy { sdlba, ranges }).status
    };
    // Blocks 8-11 then 0-3, and block 0 once more: sources may repeat in a Copy.
    assert_eq!(copy(&mut d, z1, &[(8, 4), (0, 4), (0, 1)]), Status::SUCCESS);
    let lba = d.lba();
    let (_, got) = d.read(z1, 9);
    assert_eq!(got[..4 * lba], data[8 * lba..12 * lba]);
    assert_eq!(got[4 * lba..8 * lba], data[..4 * lba]);
    assert_eq!(got[8 * lba..], data[..lba]);
    assert_eq!(
        (d.c.counters().copies, d.c.counters().zone_compactions),
        (1, 0)
    );
    // Not at the write pointer; past its limits; nothing to copy.
    assert_eq!(copy(&mut d, z1, &[(0, 1)]), Status::ZONE_INVALID_WRITE);
    let many: Vec<(u64, u32)> = (0..129).map(|i| (i % 16, 1)).collect();
    assert_eq!(
        copy(&mut d, z1 + 9, &many),
        Status::COMMAND_SIZE_LIMIT_EXCEEDED
    );
    assert_eq!(
        copy(&mut d, z1 + 9, &[(0, 513)]),
        Status::COMMAND_SIZE_LIMIT_EXCEEDED
    );
    assert_eq!(copy(&mut d, z1 + 9, &[]), Status::INVALID_FIELD);
    assert_eq!(d.c.zone(1).wp, z1 + 9);
    // Plain ZNS has no Copy (ONCS bit 8 clear).
    let mut p = Dev::min();
    assert_eq!(p.write(0, 1), Status::SUCCESS);
    let z = p.zslba(1);
    assert_eq!(copy(&mut p, z, &[(0, 1)]), Status::INVALID_OPCODE);
}

#[test]
fn very_many_spare_blocks_cost_no_memory() {
    // The fuzz harness found a configuration whose ~2^36 spare blocks once took a list entry
    // each (hundreds of GB).
    let mut cfg = small();
    cfg.nand.blocks_per_plane = u32::MAX;
    let c = device::Controller::in_memory(cfg).expect("a valid device");
    {
        let z = c
            .design()
            .as_any()
            .downcast_ref::<device::design::znsplus::Znsplus>()
            .expect("znsplus");
        assert_eq!(z.spare_groups(), vec![u32::MAX as u64 - 8]);
    }
}

#[test]
fn blocks_a_finish_left_unwritten_copy_as_zeros() {
    let mut d = Dev::new(small());
    assert_eq!(d.write(0, 1), Status::SUCCESS);
    let c = d.submit(Command::ZoneMgmtSend {
        slba: 0,
        action: ZoneAction::Finish,
        select_all: false,
    });
    assert_eq!(c.status, Status::SUCCESS);
    // Block 31 is below the finished zone's write pointer but was never written.
    let z1 = d.zslba(1);
    assert_eq!(
        compact(&mut d, z1, &[(0, z1), (31, z1 + 1)]),
        Status::SUCCESS
    );
    let (_, got) = d.read(z1, 2);
    let lba = d.lba();
    assert!(got[..lba].iter().any(|&b| b != 0));
    assert!(got[lba..].iter().all(|&b| b == 0));
}

#[test]
fn random_command_sequences_on_znsplus_never_panic() {
    // The fuzz harness's command mix (compactions, identify_mapping, TL_open, writes, resets,
    // finishes, power cycles...) on small znsplus devices, from fixed seeds.
    let mut rng = sim::Rng::new(0x2b5);
    for _ in 0..1500 {
        let mut cfg = presets::test_min();
        cfg.design = device::DesignName::Znsplus;
        // Most with spare block groups (TL_open needs one per TL-open zone).
        if rng.below(4) != 0 {
            cfg.zones.count = Some(8 + rng.below(8) as u32);
        }
        let mut ops = vec![0u8; 64 + rng.below(600) as usize];
        rng.fill(&mut ops);
        let _ = device::harness::run_config(cfg, &ops, 1 << 30);
    }
}

#[test]
fn without_copyback_every_copy_is_a_read_and_a_program_with_the_same_bytes() {
    // `[znsplus] copyback = false` (§4.2's "w/o cpbk", §4.6's Cosmos+): the same compaction
    // as above copies the same bytes, by read + program only, and takes longer.
    let run = |copyback: bool| {
        let mut cfg = small();
        cfg.znsplus.copyback = copyback;
        let mut d = Dev::new(cfg);
        let (data, _) = d.random(8 * CHUNK);
        let w = Command::Write {
            slba: 0,
            nlb: (8 * CHUNK) as u32,
            data: &data,
            metadata: &[],
        };
        assert_eq!(d.submit(w).status, Status::SUCCESS);
        d.now += sim::SimDuration::from_ms(100);
        let z1 = d.zslba(1);
        let pairs: Vec<(u64, u64)> = (0..4 * CHUNK).map(|i| (i, z1 + i)).collect();
        let start = d.now;
        assert_eq!(compact(&mut d, z1, &pairs), Status::SUCCESS);
        let took = d.now.as_ns() - start.as_ns();
        let k = d.c.counters().clone();
        let (s, got) = d.read(z1, 4 * CHUNK);
        assert_eq!(s, Status::SUCCESS);
        assert_eq!(got[..], data[..got.len()]);
        (k.compaction_copybacks, k.compaction_read_programs, took)
    };
    let (cb_on, rp_on, t_on) = run(true);
    let (cb_off, rp_off, t_off) = run(false);
    assert_eq!((cb_on, rp_on), (4, 0));
    assert_eq!((cb_off, rp_off), (0, 4));
    assert!(
        t_off > t_on,
        "{t_off} vs {t_on} ns: the pages cross the channel twice"
    );
}
