//! The cost side of commands: read latency from its parts, buffer hits, write bandwidth bound
//! by dies or by the link, die-group isolation, and the flash time of reset and finish.

use device::{
    presets, Command, Controller, DeviceConfig, DeviceHandle, Status, ZoneAction, ZoneMapping,
};
use sim::{Sim, SimDuration, SimInstant};
use std::rc::Rc;

fn ns_for(bytes: u64, bps: u64) -> u64 {
    SimDuration::for_bytes(bytes, bps).as_ns()
}

/// Write `bytes` sequentially in 128 KiB commands to each zone in `zones`, one task per zone,
/// all starting at time zero. Returns when the last byte is on flash (sustained bandwidth: the
/// write buffer would otherwise absorb the tail of a short run).
fn write_zones(cfg: DeviceConfig, zones: &[u32], bytes: u64) -> (u64, Controller) {
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let data = Rc::new(vec![0x5au8; 128 << 10]);
    let zone_lbas = dev.with(|c| c.layout().zone_size_lbas);
    for &z in zones {
        let (dev, data) = (dev.clone(), data.clone());
        sim.spawn(async move {
            let mut lba = z as u64 * zone_lbas;
            for _ in 0..bytes / (128 << 10) {
                let c = dev
                    .submit(Command::Write {
                        slba: lba,
                        nlb: 32,
                        data: &data,
                        metadata: &[],
                    })
                    .await;
                assert_eq!(c.status, Status::SUCCESS);
                lba += 32;
            }
        });
    }
    let end = sim.run().now.as_ns();
    let c = dev.into_controller().expect("sole owner");
    (end.max(c.flash().idle_at().as_ns()), c)
}

#[test]
fn read_latency_is_overhead_array_read_channel_and_link() {
    let cfg = presets::cczns();
    let l = cfg.layout().expect("valid");
    let g = l.geometry.clone();
    let mut c = Controller::in_memory(cfg.clone()).expect("valid");
    let data = vec![1u8; 1 << 20];
    let w = c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 256,
            data: &data,
            metadata: &[],
        },
    );
    assert_eq!(w.status, Status::SUCCESS);
    let t = c.flash().idle_at();
    let mut buf = vec![0u8; 4096];
    let r = c.submit(
        t,
        Command::Read {
            slba: 0,
            nlb: 1,
            data: &mut buf,
            metadata: &mut [],
        },
    );
    let want = cfg.controller.command_overhead_ns
        + g.read_latency.as_ns()
        + ns_for(4096, g.channel_bytes_per_s)
        + ns_for(4096, l.link_bytes_per_s);
    assert_eq!(r.done_at.since(t).as_ns(), want);
    assert_eq!(want, 5_000 + 90_000 + 5_120 + 1_040);
}

#[test]
fn buffered_data_is_read_without_flash() {
    let cfg = presets::cczns();
    let l = cfg.layout().expect("valid");
    let mut c = Controller::in_memory(cfg.clone()).expect("valid");
    // One block: far below a flash page, so it stays in the write buffer.
    let data = vec![3u8; 4096];
    let w = c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 1,
            data: &data,
            metadata: &[],
        },
    );
    let mut buf = vec![0u8; 4096];
    let r = c.submit(
        w.done_at,
        Command::Read {
            slba: 0,
            nlb: 1,
            data: &mut buf,
            metadata: &mut [],
        },
    );
    assert_eq!(buf, data);
    assert_eq!(c.flash_counters().reads, 0);
    assert_eq!(c.flash_counters().programs, 0);
    assert_eq!(
        r.done_at.since(w.done_at).as_ns(),
        cfg.controller.command_overhead_ns + ns_for(4096, l.link_bytes_per_s)
    );
    assert_eq!(c.counters().buffer_read_bytes, 4096);
}

#[test]
fn four_zones_reach_the_program_bandwidth_of_64_dies() {
    let cfg = presets::cczns();
    let g = cfg.layout().expect("valid").geometry;
    let bytes = 64 << 20;
    let (end, c) = write_zones(cfg, &[0, 1, 2, 3], bytes);
    let bw = 4.0 * bytes as f64 * 1e9 / end as f64;
    let per_die = g.unit_bytes as f64 * 1e9
        / (g.transfer_time(g.unit_bytes) + g.program_latency).as_ns() as f64;
    let bound = 64.0 * g.unit_bytes as f64 * 1e9 / g.program_latency.as_ns() as f64;
    // Within 10% of what 64 dies can program, and never above it (transfer included).
    assert!(
        bw > 0.9 * bound && bw <= 64.0 * per_die * 1.001,
        "bw {bw:.0} vs bound {bound:.0}"
    );
    assert_eq!(c.flash_counters().bytes_programmed, 4 * bytes);
}

#[test]
fn one_zone_gets_half_the_dies() {
    let cfg = presets::cczns();
    let g = cfg.layout().expect("valid").geometry;
    let bytes = 64 << 20;
    let (end, _) = write_zones(cfg, &[0], bytes);
    let bw = bytes as f64 * 1e9 / end as f64;
    let half = 32.0 * g.unit_bytes as f64 * 1e9
        / (g.transfer_time(g.unit_bytes) + g.program_latency).as_ns() as f64;
    assert!(
        (bw / half - 1.0).abs() < 0.06,
        "bw {bw:.0} vs half {half:.0}"
    );
}

#[test]
fn zones_in_different_die_groups_do_not_contend() {
    let cfg = presets::cczns_small_zones();
    assert!(matches!(cfg.zones.mapping, ZoneMapping::DieGroups { .. }));
    let bytes = 16 << 20;
    let (alone, _) = write_zones(cfg.clone(), &[0], bytes);
    let (two_groups, _) = write_zones(cfg.clone(), &[0, 1], bytes);
    let (same_group, _) = write_zones(cfg, &[0, 64], bytes);
    assert!(
        (two_groups as f64) < alone as f64 * 1.05,
        "{two_groups} vs {alone}"
    );
    assert!(
        (same_group as f64) > alone as f64 * 1.8,
        "{same_group} vs {alone}"
    );
}

#[test]
fn a_slow_link_bounds_writes() {
    let mut cfg = presets::cczns();
    cfg.pcie.lanes = 1;
    cfg.pcie.lane_bytes_per_s = 200_000_000;
    let bytes = 16 << 20;
    let (end, c) = write_zones(cfg, &[0, 1, 2, 3], bytes);
    let bw = 4.0 * bytes as f64 * 1e9 / end as f64;
    assert!((bw / 200e6 - 1.0).abs() < 0.03, "bw {bw:.0}");
    assert!(c.link_busy().0.as_ns() >= end * 97 / 100);
}

#[test]
fn reset_erases_and_finish_pads_on_the_dies() {
    let cfg = presets::test_min();
    let l = cfg.layout().expect("valid");
    let g = l.geometry.clone();
    let mut c = Controller::in_memory(cfg).expect("valid");
    // Two stripes of data (8 pages on 4 dies), then finish: the rest of the zone is padded.
    let data = vec![9u8; 8 * 4096];
    let w = c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 8,
            data: &data,
            metadata: &[],
        },
    );
    let t = c.flash().idle_at().max(w.done_at);
    let f = c.submit(
        t,
        Command::ZoneMgmtSend {
            slba: 0,
            action: ZoneAction::Finish,
            select_all: false,
        },
    );
    assert_eq!(f.status, Status::SUCCESS);
    let units_per_die = (l.zone_capacity_lbas - 8) / l.dies_per_zone as u64;
    let per_unit = (g.transfer_time(g.unit_bytes) + g.program_latency).as_ns();
    assert!(f.done_at.since(t).as_ns() >= units_per_die * per_unit);
    assert_eq!(c.counters().padded_bytes, (l.zone_capacity_lbas - 8) * 4096);
    assert_eq!(c.flash_counters().bytes_programmed, l.zone_capacity_bytes());
    // Reset erases the zone's block on each of its 4 dies in parallel.
    let r = c.submit(
        f.done_at,
        Command::ZoneMgmtSend {
            slba: 0,
            action: ZoneAction::Reset,
            select_all: false,
        },
    );
    assert_eq!(
        r.done_at.since(f.done_at).as_ns(),
        c.config().controller.command_overhead_ns + g.erase_latency.as_ns()
    );
    assert_eq!(c.flash_counters().erases, 4);
    // Another zone with one stripe on flash: its reset takes an erase; then, empty, none.
    let w = c.submit(
        r.done_at,
        Command::Write {
            slba: 64,
            nlb: 4,
            data: &data[..4 * 4096],
            metadata: &[],
        },
    );
    let t2 = c.flash().idle_at().max(w.done_at);
    let e = c.submit(
        t2,
        Command::ZoneMgmtSend {
            slba: 64,
            action: ZoneAction::Reset,
            select_all: false,
        },
    );
    assert!(e.done_at.since(t2).as_ns() >= g.erase_latency.as_ns());
    let again = c.submit(
        t2,
        Command::ZoneMgmtSend {
            slba: 64,
            action: ZoneAction::Reset,
            select_all: false,
        },
    );
    assert_eq!(again.status, Status::SUCCESS);
    assert_eq!(
        again.done_at.since(t2).as_ns(),
        c.config().controller.command_overhead_ns
    );
}

#[test]
fn stripe_flush_waits_for_a_whole_stripe() {
    let mut cfg = presets::test_min();
    cfg.controller.flush_unit = device::FlushUnit::Stripe;
    let mut c = Controller::in_memory(cfg).expect("valid");
    let data = vec![4u8; 3 * 4096];
    // Three of the four units of a stripe: nothing goes to flash yet.
    c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 3,
            data: &data,
            metadata: &[],
        },
    );
    assert_eq!(c.flash_counters().programs, 0);
    // The fourth completes the stripe: all four dies program.
    c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 3,
            nlb: 1,
            data: &data[..4096],
            metadata: &[],
        },
    );
    assert_eq!(c.flash_counters().programs, 4);
    let busy: Vec<u64> = c.flash().die_busy().iter().map(|d| d.as_ns()).collect();
    assert!(busy.iter().all(|b| *b == busy[0] && *b > 0), "{busy:?}");
}

#[test]
fn page_flush_programs_each_unit_as_it_fills() {
    let mut c = Controller::in_memory(presets::test_min()).expect("valid");
    let data = vec![4u8; 4096];
    c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 1,
            data: &data,
            metadata: &[],
        },
    );
    assert_eq!(c.flash_counters().programs, 1);
}

#[test]
fn a_full_write_buffer_delays_writes_until_programs_free_it() {
    let mut cfg = presets::test_min();
    cfg.controller.write_buffer_bytes = 16 << 10; // one stripe: 4 units of 4 KiB
    let g = cfg.layout().expect("valid").geometry;
    let mut c = Controller::in_memory(cfg).expect("valid");
    let data = vec![6u8; 16 << 10];
    let first = c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 4,
            data: &data,
            metadata: &[],
        },
    );
    // The first stripe fits at once; the second must wait for a program of the first to end.
    assert!(first.done_at.as_ns() < g.program_latency.as_ns());
    let second = c.submit(
        first.done_at,
        Command::Write {
            slba: 4,
            nlb: 4,
            data: &data,
            metadata: &[],
        },
    );
    assert!(
        second.done_at.as_ns() > g.program_latency.as_ns(),
        "{:?}",
        second.done_at
    );
}

#[test]
fn a_femu_like_finish_programs_only_the_buffered_partial_unit() {
    let mut cfg = presets::test_min();
    cfg.controller.finish_pads_flash = false;
    let l = cfg.layout().expect("valid");
    let unit = l.geometry.unit_bytes;
    let mut c = Controller::in_memory(cfg).expect("valid");
    // Ten LBAs: two whole units on flash or in the buffer, and a partial one.
    let data = vec![3u8; 10 * 4096];
    let w = c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 10,
            data: &data,
            metadata: &[],
        },
    );
    let t = c.flash().idle_at().max(w.done_at);
    let f = c.submit(
        t,
        Command::ZoneMgmtSend {
            slba: 0,
            action: ZoneAction::Finish,
            select_all: false,
        },
    );
    assert_eq!(f.status, Status::SUCCESS);
    let programmed = c.flash_counters().bytes_programmed;
    assert_eq!(programmed, (10 * 4096u64).div_ceil(unit) * unit);
    assert_eq!(c.counters().padded_bytes, programmed - 10 * 4096);
    // The zone is full and reads back what was written.
    assert_eq!(c.zone(0).state, device::ZoneState::Full);
    let mut out = vec![0u8; 10 * 4096];
    let r = c.submit(
        f.done_at,
        Command::Read {
            slba: 0,
            nlb: 10,
            data: &mut out,
            metadata: &mut [],
        },
    );
    assert_eq!(r.status, Status::SUCCESS);
    assert_eq!(out, data);
}

/// A one-block read of block 0 at time `t` while a 512 KiB write of zone 1 arrives at the
/// same instant, on a link of `duplex`: the read's latency and the device's read counters.
fn read_beside_a_large_write(duplex: device::Duplex) -> (u64, u64, u64) {
    let mut cfg = presets::znsplus_mlc();
    cfg.pcie.duplex = duplex;
    let l = cfg.layout().expect("valid");
    let mut c = Controller::in_memory(cfg).expect("valid");
    let data = vec![7u8; 512 << 10];
    let w = c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 128,
            data: &data,
            metadata: &[],
        },
    );
    assert_eq!(w.status, Status::SUCCESS);
    let t = c.flash().idle_at();
    // The read's data is ready after the array read, while the write's data still crosses.
    let w2 = c.submit(
        t,
        Command::Write {
            slba: l.zone_size_lbas,
            nlb: 128,
            data: &data,
            metadata: &[],
        },
    );
    assert_eq!(w2.status, Status::SUCCESS);
    let mut buf = vec![0u8; 4096];
    let r = c.submit(
        t,
        Command::Read {
            slba: 0,
            nlb: 1,
            data: &mut buf,
            metadata: &mut [],
        },
    );
    assert_eq!(r.status, Status::SUCCESS);
    assert_eq!(buf, data[..4096]);
    let k = c.counters();
    (r.done_at.since(t).as_ns(), k.read_ns, k.read_transfer_ns)
}

#[test]
fn a_half_duplex_link_makes_a_read_wait_for_a_write_crossing_it() {
    let (full, full_ns, full_xfer) = read_beside_a_large_write(device::Duplex::Full);
    let (half, half_ns, half_xfer) = read_beside_a_large_write(device::Duplex::Half);
    let link = presets::znsplus_mlc()
        .layout()
        .expect("valid")
        .link_bytes_per_s;
    let write_xfer = ns_for(512 << 10, link);
    // Full duplex: the read's 4 KiB cross beside the write's data.
    assert_eq!(full_xfer, ns_for(4096, link));
    assert!(full < write_xfer, "{full} ns");
    // Half duplex: they wait for the write's 437 µs on the one timeline.
    assert!(half >= write_xfer, "{half} ns against {write_xfer}");
    assert!(half_xfer >= write_xfer - full + full_xfer, "{half_xfer}");
    // The counters hold each read's whole time in the device.
    assert_eq!(full_ns, full);
    assert_eq!(half_ns, half);
}

/// A multi-plane die senses one page on every plane at once: a read of the four planes' pages
/// costs one array read and the transfer of all four (ZenFS+'s small-zone preset).
#[test]
fn a_multi_plane_read_senses_the_planes_together() {
    let cfg = presets::zenfsplus_hynix_small();
    let l = cfg.layout().expect("valid");
    let g = l.geometry.clone();
    assert_eq!(g.read_bytes, 4 * g.page_bytes as u64);
    let mut c = Controller::in_memory(cfg.clone()).expect("valid");
    let data = vec![1u8; 2 << 20];
    let w = c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba: 0,
            nlb: 512,
            data: &data,
            metadata: &[],
        },
    );
    assert_eq!(w.status, Status::SUCCESS);
    let t = c.flash().idle_at();
    let mut buf = vec![0u8; 64 << 10];
    let r = c.submit(
        t,
        Command::Read {
            slba: 0,
            nlb: 16,
            data: &mut buf,
            metadata: &mut [],
        },
    );
    let want = cfg.controller.command_overhead_ns
        + g.read_latency.as_ns()
        + ns_for(64 << 10, g.channel_bytes_per_s)
        + ns_for(64 << 10, l.link_bytes_per_s);
    assert_eq!(r.done_at.since(t).as_ns(), want);
}

/// A write buffer split per die group: one group's full part delays its own writes only.
#[test]
fn a_write_buffer_split_per_die_group_delays_only_its_group() {
    let mut cfg = presets::cczns_small_zones();
    cfg.design = device::DesignName::Zns;
    cfg.controller.write_buffer_bytes = 64 * (16 << 10); // one 16 KiB unit per die
    cfg.controller.write_buffer_per_zone_group = true;
    let l = cfg.layout().expect("valid");
    let program = l.geometry.program_latency.as_ns();
    let mut c = Controller::in_memory(cfg).expect("valid");
    let data = vec![6u8; 16 << 10];
    let write = |c: &mut Controller, zone: u64, unit: u64, at: SimInstant| {
        c.submit(
            at,
            Command::Write {
                slba: zone * l.zone_size_lbas + unit * 4,
                nlb: 4,
                data: &data,
                metadata: &[],
            },
        )
    };
    let first = write(&mut c, 0, 0, SimInstant::ZERO);
    assert!(first.done_at.as_ns() < program);
    // Zone 0's part is full until its program ends; zone 1 (another die) writes at once.
    let other = write(&mut c, 1, 0, first.done_at);
    assert!(other.done_at.as_ns() < program, "{:?}", other.done_at);
    let same = write(&mut c, 0, 1, first.done_at);
    assert!(same.done_at.as_ns() > program, "{:?}", same.done_at);
}

#[test]
fn a_split_write_buffer_is_for_the_zns_design_and_whole_stripes() {
    let mut cfg = presets::cczns();
    cfg.controller.write_buffer_per_zone_group = true;
    let e = cfg.layout().expect_err("cczns design");
    assert!(e.to_string().contains("write_buffer_per_zone_group"), "{e}");
    let mut cfg = presets::zenfsplus_hynix_small();
    cfg.controller.write_buffer_bytes = 32 * (64 << 10) - 4096;
    let e = cfg.layout().expect_err("less than a unit per die");
    assert!(e.to_string().contains("less than one stripe"), "{e}");
}
