//! Device configurations at and past their limits: every field a design depends on is checked
//! when the configuration is validated, with an error naming the field, and a device that is
//! accepted runs commands without panicking. Tables that cannot fit the memory budget, images
//! beyond what a file can address and arithmetic that would overflow are refused up front.

use device::harness::{self, Outcome};
use device::{presets, Controller, DeviceConfig};

const MIB: u64 = 1 << 20;

fn refused(cfg: &DeviceConfig) -> device::ConfigError {
    cfg.layout_within(1 << 30).expect_err("refused")
}

fn field(cfg: &DeviceConfig) -> String {
    refused(cfg).field
}

/// Bytes for the harness: a few of every command kind, on several zones.
fn all_commands() -> Vec<u8> {
    let mut ops = Vec::new();
    for round in 0u8..4 {
        for op in 0u8..11 {
            // op, zone (u16), nlb, with_meta, fill kind, then operands and the wait bit.
            ops.extend_from_slice(&[op, round, 0, 3 + round, 1, op % 3]);
            ops.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 1, 1]);
        }
    }
    ops
}

fn runs_clean(cfg: DeviceConfig) {
    match harness::run_config(cfg, &all_commands(), 256 * MIB) {
        Outcome::Ran { commands, .. } => assert!(commands > 0),
        other => panic!("not run: {other:?}"),
    }
}

#[test]
fn cczns_oob_must_hold_a_page_header_and_one_chunk_record() {
    for oob in [0, 8, 16, 23] {
        let mut cfg = presets::test_cczns();
        cfg.nand.oob_bytes_per_page = oob;
        let e = refused(&cfg);
        assert_eq!(e.field, "device.nand.oob_bytes_per_page", "{e}");
        assert!(
            e.message
                .contains(&format!("{oob} is too small for the cczns design"))
                && e.message
                    .contains("at least 24 bytes (a page header of 8 and one chunk record of 16)"),
            "{e}"
        );
    }
    // The smallest OOB that works: one record per page, every chunk at least a page apart.
    let mut cfg = presets::test_cczns();
    cfg.nand.oob_bytes_per_page = 24;
    runs_clean(cfg.clone());
    // And its image reopens with its chunk records.
    let path = std::env::temp_dir().join(format!("znslab-oob24-{}.img", std::process::id()));
    {
        let mut c = Controller::create_image(&path, cfg).expect("created");
        let mut meta = vec![0u8; 2 * 64];
        device::cmd::wire::put_cw_request(&mut meta, &[4096, 4096]);
        let data = vec![7u8; 8192];
        let comp = c.submit(
            sim::SimInstant::ZERO,
            device::Command::CompressedWrite {
                slba: 0,
                intra: 0,
                nlb: 2,
                data: &data,
                metadata: &mut meta,
                append: false,
            },
        );
        assert_eq!(comp.status, device::Status::SUCCESS);
        c.close().expect("saved");
    }
    let c = Controller::open_image(&path).expect("reopens");
    assert!(c.zone(0).byte_wp >= 2 * 4096, "{:?}", c.zone(0));
    drop(c);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn oob_larger_than_its_page_is_refused() {
    let mut cfg = presets::test_min();
    cfg.nand.oob_bytes_per_page = cfg.nand.page_bytes + 1;
    assert_eq!(field(&cfg), "device.nand.oob_bytes_per_page");
}

#[test]
fn tables_beyond_the_memory_budget_are_refused_before_any_file_is_made() {
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = 1_000_000_000;
    cfg.zones.erase_units_per_die = 1;
    let e = cfg.layout().expect_err("a billion zones");
    assert_eq!(e.field, "device.nand.blocks_per_plane", "{e}");
    assert!(e.message.contains("memory budget"), "{e}");
    let path = std::env::temp_dir().join(format!("znslab-huge-{}.img", std::process::id()));
    let _ = std::fs::remove_file(&path);
    assert!(Controller::create_image(&path, cfg).is_err());
    assert!(!path.exists(), "no image file may be left behind");

    // The budget is an argument: a small one refuses what the default takes.
    let cfg = presets::test_min();
    let l = cfg.layout().expect("valid");
    assert!(
        l.table_bytes > 0 && l.table_bytes < MIB,
        "{}",
        l.table_bytes
    );
    let e = cfg.layout_within(l.table_bytes - 1).expect_err("below");
    assert_eq!(e.field, "device.nand.blocks_per_plane");
    cfg.layout_within(l.table_bytes).expect("at the budget");
    let mut counted = presets::test_min();
    counted.zones.count = Some(8);
    assert_eq!(
        counted.layout_within(100).expect_err("tiny").field,
        "device.zones.count"
    );
}

#[test]
fn arithmetic_that_would_overflow_is_refused() {
    // Program unit: 2^31-byte pages × 2^31 pages per program × 2^31 planes.
    let mut cfg = presets::test_min();
    cfg.nand.page_bytes = 1 << 31;
    cfg.nand.oob_bytes_per_page = 0;
    cfg.nand.pages_per_block = 1 << 31;
    cfg.nand.pages_per_program = 1 << 31;
    cfg.nand.planes_per_die = 1 << 31;
    cfg.nand.multi_plane = true;
    assert_eq!(field(&cfg), "device.nand.planes_per_die");
    // Erase unit: a 2^62-byte program unit (2^31 planes of 2^31 bytes) × 4 per block.
    cfg.nand.pages_per_program = 1;
    cfg.nand.pages_per_block = 4;
    assert_eq!(field(&cfg), "device.nand.pages_per_block");
    // The whole flash.
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = u32::MAX;
    cfg.nand.planes_per_die = u32::MAX;
    cfg.nand.page_bytes = 1 << 30;
    cfg.nand.pages_per_block = 1 << 10;
    assert_eq!(field(&cfg), "device.nand.blocks_per_plane");
    // An image past 2^63 bytes though the flash fits in 64 bits.
    let mut cfg = presets::test_min();
    cfg.nand.page_bytes = 1 << 31;
    cfg.nand.pages_per_block = 1 << 20;
    cfg.nand.blocks_per_plane = 1500;
    cfg.nand.planes_per_die = 1;
    cfg.controller.write_buffer_bytes = u64::MAX;
    cfg.pcie.lane_bytes_per_s = u64::MAX / 4;
    cfg.nand.channel_bytes_per_s = u64::MAX;
    let e = refused(&cfg);
    assert!(e.message.contains("2^63"), "{e}");
    // Zones whose LBA span overflows.
    let mut cfg = presets::test_min();
    cfg.zones.size_bytes = Some(u64::MAX / 4096 * 4096);
    assert_eq!(field(&cfg), "device.zones.size_bytes");
    // Link rate × lanes.
    let mut cfg = presets::test_min();
    cfg.pcie.lanes = u32::MAX;
    cfg.pcie.lane_bytes_per_s = u64::MAX;
    assert_eq!(field(&cfg), "device.pcie.lane_bytes_per_s");
}

#[test]
fn times_that_would_run_the_virtual_clock_out_are_refused() {
    for name in ["read", "program", "erase"] {
        let mut cfg = presets::test_min();
        match name {
            "read" => cfg.nand.read_latency_ns = u64::MAX,
            "program" => cfg.nand.program_latency_ns = u64::MAX,
            _ => cfg.nand.erase_latency_ns = u64::MAX,
        }
        assert_eq!(field(&cfg), format!("device.nand.{name}_latency_ns"));
    }
    let mut cfg = presets::test_min();
    cfg.nand.channel_bytes_per_s = 1;
    assert_eq!(field(&cfg), "device.nand.channel_bytes_per_s");
    let mut cfg = presets::test_min();
    cfg.controller.command_overhead_ns = u64::MAX;
    assert_eq!(field(&cfg), "device.controller.command_overhead_ns");
    let mut cfg = presets::test_min();
    cfg.pcie.lanes = 1;
    cfg.pcie.lane_bytes_per_s = 1;
    assert_eq!(field(&cfg), "device.pcie.lane_bytes_per_s");
}

#[test]
fn zns_limits_name_their_field() {
    let mut cfg = presets::test_min();
    cfg.zones.max_open = 17;
    assert_eq!(field(&cfg), "device.zones.max_open");
    let mut cfg = presets::test_min();
    cfg.zones.max_open = 4;
    cfg.zones.max_active = 17;
    assert_eq!(field(&cfg), "device.zones.max_active");
    let mut cfg = presets::test_min();
    cfg.controller.max_transfer_bytes = (65536 + 1) * 4096;
    cfg.controller.write_buffer_bytes = 1 << 40;
    assert_eq!(field(&cfg), "device.controller.max_transfer_bytes");
    cfg.controller.max_transfer_bytes = 65536 * 4096;
    cfg.layout_within(1 << 30).expect("NLB's 16 bits exactly");
    let mut cfg = presets::test_min();
    cfg.nand.pages_per_block = 1 << 23; // 4 dies × 2^23 units: 2^25 in a zone
    assert_eq!(field(&cfg), "device.zones.erase_units_per_die");
    cfg.nand.pages_per_block = 1 << 22; // 2^24, allowed
    cfg.controller.write_buffer_bytes = 1 << 40;
    cfg.layout_within(1 << 30).expect("2^24 units per zone");
}

#[test]
fn balloon_fields_are_checked() {
    let base = presets::test_balloon;
    let mut cfg = base();
    cfg.balloon.expansion_percent = 1601;
    assert_eq!(field(&cfg), "device.balloon.expansion_percent");
    cfg.balloon.expansion_percent = 1600;
    cfg.layout_within(1 << 30).expect("16x");
    for (set, name) in [
        (
            (|c: &mut DeviceConfig| c.balloon.sub_superblocks = 3) as fn(&mut DeviceConfig),
            "sub_superblocks",
        ),
        (|c| c.balloon.sub_superblocks = 0, "sub_superblocks"),
        (|c| c.balloon.windows_per_zone = 0, "windows_per_zone"),
        (|c| c.balloon.windows_per_zone = 3, "windows_per_zone"),
        (|c| c.balloon.slot_percentile = 0, "slot_percentile"),
        (|c| c.balloon.slot_percentile = 101, "slot_percentile"),
        (|c| c.balloon.first_slot_units = 0, "first_slot_units"),
        (|c| c.balloon.first_slot_units = 17, "first_slot_units"),
        (|c| c.balloon.expansion_percent = 99, "expansion_percent"),
        (|c| c.balloon.pages_per_read = 0, "pages_per_read"),
    ] {
        let mut cfg = base();
        set(&mut cfg);
        assert_eq!(field(&cfg), format!("device.balloon.{name}"));
    }
    // Sub-superblocks are numbered in 32 bits.
    let mut cfg = base();
    cfg.nand.channels = 1;
    cfg.nand.dies_per_channel = 4;
    cfg.balloon.sub_superblocks = 4;
    cfg.nand.planes_per_die = 1 << 31;
    cfg.nand.blocks_per_plane = 4;
    assert_eq!(field(&cfg), "device.nand.blocks_per_plane");
}

#[test]
fn tcssd_fields_are_checked() {
    let base = presets::test_tcssd;
    let mut cfg = base();
    cfg.tcssd.map_entry_bytes = 0;
    assert_eq!(field(&cfg), "device.tcssd.map_entry_bytes");
    let mut cfg = base();
    cfg.tcssd.gc_free_superblocks = cfg.nand.blocks_per_plane;
    assert_eq!(field(&cfg), "device.tcssd.gc_free_superblocks");
    // The packed map entry: superblock in 16 bits, offset in 32 bits.
    let mut cfg = base();
    cfg.nand.blocks_per_plane = 65537;
    cfg.nand.planes_per_die = 1;
    let e = refused(&cfg);
    assert_eq!(e.field, "device.nand.blocks_per_plane", "{e}");
    assert!(e.message.contains("16 bits"), "{e}");
    let mut cfg = base();
    cfg.nand.blocks_per_plane = 4;
    cfg.nand.planes_per_die = 1;
    cfg.nand.page_bytes = 1 << 20;
    cfg.nand.oob_bytes_per_page = 0;
    cfg.nand.pages_per_block = 1 << 11;
    cfg.controller.write_buffer_bytes = 1 << 40;
    let e = refused(&cfg);
    assert_eq!(e.field, "device.nand.pages_per_block", "{e}");
    assert!(e.message.contains("32-bit offset"), "{e}");
}

#[test]
fn presets_fit_the_default_budget_and_run() {
    for p in presets::all() {
        let cfg = (p.config)();
        let l = cfg.layout().unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert!(l.table_bytes < 4 << 30, "{}: {}", p.name, l.table_bytes);
        let units = l.zone_capacity_bytes() / l.geometry.unit_bytes;
        assert!(units <= 1 << 19, "{}: {units} units per zone", p.name);
        if harness::memory_zone_bytes(&l) <= 128 * MIB && l.table_bytes <= 128 * MIB {
            runs_clean(cfg);
        }
    }
}
