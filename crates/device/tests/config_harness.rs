//! The `device_config` fuzz target's harness on stable Rust: every seed of its corpus
//! (`fuzz/seeds/device_config`) with command sequences appended, and a few hundred generated
//! configurations with fields near their limits (tiny and huge values), each either refused
//! with the field named or made in memory and driven through writes, reads, zone management,
//! compressed I/O and deallocation without a panic and within the memory budget.

use device::harness::{self, Outcome};
use device::{presets, DesignName, DeviceConfig, FlushUnit, ZoneMapping};
use proptest::prelude::*;
use sim::Rng;

const BUDGET: u64 = 64 << 20;

/// Generated configurations that were made and run (ZNSLAB_HARNESS_COUNT=1 prints them).
static RAN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn check(outcome: Outcome) -> Outcome {
    match &outcome {
        Outcome::NotADevice(e) | Outcome::Refused(e) => {
            assert!(e.field.starts_with("device"), "{e}");
            assert!(!e.message.is_empty());
        }
        Outcome::Ran {
            resident_bytes,
            table_bytes,
            ..
        } => assert!(
            resident_bytes + table_bytes <= BUDGET,
            "{resident_bytes} + {table_bytes} bytes"
        ),
    }
    outcome
}

#[test]
fn the_seed_corpus_runs_with_commands() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/device_config");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .expect("seed corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 10, "{}", seeds.len());
    let mut rng = Rng::new(0x5eed);
    let (mut ran, mut commands) = (0, 0);
    for path in &seeds {
        let text = std::fs::read(path).expect("seed");
        check(harness::run(&text, BUDGET));
        for _ in 0..8 {
            let mut input = text.clone();
            input.push(0);
            let mut ops = vec![0u8; 600];
            rng.fill(&mut ops);
            input.extend_from_slice(&ops);
            if let Outcome::Ran { commands: n, .. } = check(harness::run(&input, BUDGET)) {
                ran += 1;
                commands += n;
            }
        }
    }
    // The small presets fit the budget and run; the large ones' 1-2 GiB zones do not.
    assert!(
        ran >= 4 * 8 && commands > 1000,
        "{ran} runs, {commands} commands"
    );
}

/// Values near the limits of a field: zero, one, powers of two and their neighbours, the
/// constants the checks use, and the largest values of the type.
fn near_limit() -> impl Strategy<Value = u64> {
    prop_oneof![
        prop::sample::select(vec![
            0u64,
            1,
            2,
            3,
            4,
            7,
            8,
            15,
            16,
            17,
            23,
            24,
            25,
            63,
            64,
            99,
            100,
            101,
            255,
            256,
            512,
            1000,
            1600,
            1601,
            4095,
            4096,
            4097,
            16384,
            65535,
            65536,
            65537,
            1 << 20,
            1 << 24,
            1 << 31,
            u32::MAX as u64 - 1,
            u32::MAX as u64,
            1 << 32,
            1 << 40,
            10_000_000_000,
            10_000_000_001,
            1 << 62,
            u64::MAX - 1,
            u64::MAX,
        ]),
        any::<u64>(),
        0u64..5000,
    ]
}

fn u32v(v: u64) -> u32 {
    v.min(u32::MAX as u64) as u32
}

/// Set field `which` of `c` to `v` (one of the numeric and choice fields of every table).
fn set_field(c: &mut DeviceConfig, which: u8, v: u64) {
    match which % 38 {
        0 => c.nand.channels = u32v(v),
        1 => c.nand.dies_per_channel = u32v(v),
        2 => c.nand.planes_per_die = u32v(v),
        3 => c.nand.blocks_per_plane = u32v(v),
        4 => c.nand.pages_per_block = u32v(v),
        5 => c.nand.page_bytes = u32v(v),
        6 => c.nand.oob_bytes_per_page = u32v(v),
        7 => c.nand.pages_per_program = u32v(v),
        8 => c.nand.multi_plane = v & 1 == 1,
        9 => c.nand.read_latency_ns = v,
        10 => c.nand.program_latency_ns = v,
        11 => c.nand.erase_latency_ns = v,
        12 => c.nand.channel_bytes_per_s = v,
        13 => c.zones.erase_units_per_die = v,
        14 => c.zones.capacity_bytes = Some(v),
        15 => c.zones.size_bytes = Some(v),
        16 => c.zones.count = Some(u32v(v)),
        17 => c.zones.max_open = u32v(v),
        18 => c.zones.max_active = u32v(v),
        19 => {
            c.zones.mapping = match v % 3 {
                0 => ZoneMapping::AllDies,
                1 => ZoneMapping::HalfDies,
                _ => ZoneMapping::DieGroups {
                    channels_per_zone: u32v(v >> 2 & 0xff),
                    dies_per_channel_per_zone: u32v(v >> 10 & 0xff),
                },
            }
        }
        20 => c.lba.bytes = u32v(v),
        21 => c.lba.metadata_bytes = u32v(v),
        22 => c.pcie.lanes = u32v(v),
        23 => c.pcie.lane_bytes_per_s = v,
        24 => c.controller.write_buffer_bytes = v,
        25 => c.controller.command_overhead_ns = v,
        26 => c.controller.max_transfer_bytes = v,
        27 => c.controller.zone_append_max_bytes = v,
        28 => {
            c.controller.flush_unit = if v & 1 == 1 {
                FlushUnit::Stripe
            } else {
                FlushUnit::Page
            };
            c.controller.finish_pads_flash = v & 2 == 2;
        }
        29 => c.balloon.sub_superblocks = u32v(v),
        30 => c.balloon.windows_per_zone = u32v(v),
        31 => c.balloon.slot_percentile = u32v(v),
        32 => c.balloon.first_slot_units = u32v(v),
        33 => c.balloon.expansion_percent = u32v(v),
        34 => c.balloon.pages_per_read = u32v(v),
        35 => c.tcssd.gc_free_superblocks = u32v(v),
        36 => c.tcssd.map_entry_bytes = u32v(v),
        _ => {
            c.tcssd.expansion_percent = u32v(v);
            c.tcssd.over_provisioning_percent = u32v(v >> 32);
        }
    }
}

fn base(i: u8) -> DeviceConfig {
    match i % 6 {
        0 => presets::test_min(),
        1 => presets::test_cczns(),
        2 => presets::test_balloon(),
        3 => presets::test_tcssd(),
        4 => {
            let mut c = presets::test_min();
            c.design = DesignName::Znsplus;
            c
        }
        _ => {
            let mut c = presets::test_min();
            c.design = DesignName::Cczns;
            c.lba.metadata_bytes = 64;
            c
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn configurations_near_their_limits_are_refused_or_run(
        b in any::<u8>(),
        fields in prop::collection::vec((any::<u8>(), near_limit()), 1..4),
        ops in prop::collection::vec(any::<u8>(), 0..800),
    ) {
        let mut cfg = base(b);
        for (which, v) in fields {
            set_field(&mut cfg, which, v);
        }
        // Through the TOML text, as the fuzz target sees it.
        let mut input = cfg.to_toml().into_bytes();
        input.push(0);
        input.extend_from_slice(&ops);
        match check(harness::run(&input, BUDGET)) {
            Outcome::NotADevice(e) => prop_assert!(false, "its own TOML did not parse: {e}"),
            Outcome::Refused(_) => {}
            Outcome::Ran { .. } => {
                RAN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if std::env::var_os("ZNSLAB_HARNESS_COUNT").is_some() {
                    eprintln!("ran {}", RAN.load(std::sync::atomic::Ordering::Relaxed));
                }
            }
        }
    }
}
