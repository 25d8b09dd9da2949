//! The host I/O layer: one write in flight per zone, MDTS splitting, queue depth, host CPU,
//! errors as values.

use std::rc::Rc;

use device::{presets, Controller, DeviceHandle, Status, ZoneAction, ZoneState};
use host::{HostIo, IoConfig, IoError};
use sim::cpu::CpuPool;
use sim::Sim;

fn setup(cfg: device::DeviceConfig, io: IoConfig, cores: usize) -> (Sim, Rc<HostIo>, Rc<CpuPool>) {
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let cpu = Rc::new(CpuPool::new(&sim, cores));
    let io = Rc::new(HostIo::new(&dev, cpu.clone(), io));
    (sim, io, cpu)
}

fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

/// Run `n` tasks, task `k` doing `f(k)`; returns when the last ends (virtual ns).
fn run_tasks<F, Fut>(sim: &Sim, n: usize, f: F) -> u64
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = ()> + 'static,
{
    for k in 0..n {
        sim.spawn(f(k));
    }
    sim.run();
    sim.now().as_ns()
}

#[test]
fn writes_to_one_zone_go_one_at_a_time_and_in_order() {
    let (sim, io, _) = setup(presets::test_min(), IoConfig::default(), 4);
    let chunk = 64 << 10;
    // Four writers to zone 0, each at its own offset, all started at once: the zone lock
    // queues them in arrival order, so each meets the write pointer.
    let one_zone = run_tasks(&sim, 4, |k| {
        let io = io.clone();
        async move {
            let data = pattern(k as u8, chunk);
            io.write((k * chunk) as u64, &data).await.expect("in order");
        }
    });
    assert_eq!(io.device().with(|c| c.zone(0).state), ZoneState::Full);
    assert!(io.counters().zone_lock_wait_ns > 0);

    // The same four writes to four zones run side by side.
    let (sim2, io2, _) = setup(presets::test_min(), IoConfig::default(), 4);
    let zone = io2.zone_bytes() as usize;
    let four_zones = run_tasks(&sim2, 4, |k| {
        let io = io2.clone();
        async move {
            let data = pattern(k as u8, chunk);
            io.write((k * zone) as u64, &data).await.expect("own zone");
        }
    });
    // One write in flight per zone: never two commands at once for zone 0; four for four zones.
    assert_eq!(io.counters().max_in_flight, 1);
    assert_eq!(io2.counters().max_in_flight, 4);
    assert!(four_zones <= one_zone, "{four_zones} vs {one_zone}");

    // Read back what each writer wrote.
    let io_r = io.clone();
    sim.spawn(async move {
        for k in 0..4 {
            let mut buf = vec![0u8; chunk];
            io_r.read((k * chunk) as u64, &mut buf)
                .await
                .expect("reads");
            assert_eq!(buf, pattern(k as u8, chunk));
        }
    });
    sim.run();
}

#[test]
fn large_transfers_are_split_at_mdts() {
    let mut cfg = presets::test_min();
    cfg.controller.max_transfer_bytes = 16 << 10;
    cfg.controller.zone_append_max_bytes = 16 << 10;
    let (sim, io, cpu) = setup(cfg, IoConfig::default(), 2);
    let data = pattern(9, 128 << 10);
    let io2 = io.clone();
    let d2 = data.clone();
    sim.spawn(async move {
        io2.write(0, &d2).await.expect("writes");
        let mut back = vec![0u8; d2.len()];
        io2.read(0, &mut back).await.expect("reads");
        assert_eq!(back, d2);
    });
    sim.run();
    let c = io.counters();
    assert_eq!((c.writes, c.reads), (8, 8));
    assert_eq!(c.bytes_written, 128 << 10);
    // Host CPU: every command paid submission and completion, on the pool's cores.
    assert_eq!(c.cpu_ns, c.commands * 3_000);
    let busy: u64 = cpu.busy_per_core().iter().map(|d| d.as_ns()).sum();
    assert_eq!(busy, c.cpu_ns);
}

#[test]
fn queue_depth_bounds_commands_in_flight() {
    let io_cfg = IoConfig {
        queue_depth: 2,
        ..IoConfig::default()
    };
    let (sim, io, _) = setup(presets::test_min(), io_cfg, 8);
    let io2 = io.clone();
    sim.spawn(async move {
        io2.write(0, &pattern(3, 8 * 4096)).await.expect("writes");
    });
    sim.run();
    // Eight readers at once: reads take no zone lock, but only two queue slots exist.
    let t0 = sim.now().as_ns();
    run_tasks(&sim, 8, |k| {
        let io = io.clone();
        async move {
            let mut buf = vec![0u8; 4096];
            io.read(k as u64 * 4096, &mut buf).await.expect("reads");
            assert_eq!(buf, pattern(3, 8 * 4096)[k * 4096..(k + 1) * 4096]);
        }
    });
    assert_eq!(io.counters().max_in_flight, 2);
    assert!(sim.now().as_ns() > t0);
}

#[test]
fn errors_name_the_operation_and_the_lba() {
    let (sim, io, _) = setup(presets::test_min(), IoConfig::default(), 1);
    let io2 = io.clone();
    sim.spawn(async move {
        // Not at the write pointer.
        let e = io2.write(8192, &[0u8; 4096]).await.expect_err("wp is 0");
        assert_eq!(e.status(), Some(Status::ZONE_INVALID_WRITE));
        assert!(e.to_string().contains("LBA 2"), "{e}");
        // Across a zone boundary, and not whole blocks: refused before the device sees them.
        let zone = io2.zone_bytes();
        let e = io2
            .write(zone - 4096, &[0u8; 8192])
            .await
            .expect_err("crosses");
        assert!(
            matches!(
                e,
                IoError::Invalid {
                    why: "crosses a zone boundary",
                    ..
                }
            ),
            "{e}"
        );
        let e = io2.write(0, &[0u8; 100]).await.expect_err("partial block");
        assert!(e.status().is_none());
        // Zone management errors come back too.
        let e = io2
            .zone_action(0, ZoneAction::Close)
            .await
            .expect_err("empty zone");
        assert_eq!(e.status(), Some(Status::ZONE_INVALID_TRANSITION));
    });
    sim.run();
    assert_eq!(io.counters().commands, 2);
}

#[test]
fn report_zones_covers_every_zone_in_mdts_pieces() {
    let mut cfg = presets::test_min();
    cfg.controller.max_transfer_bytes = 4096; // 63 descriptors per command
    cfg.zones.count = Some(16);
    let (sim, io, _) = setup(cfg, IoConfig::default(), 1);
    let io2 = io.clone();
    sim.spawn(async move {
        io2.write(0, &[1u8; 4096]).await.expect("writes");
        io2.zone_action(3, ZoneAction::Open).await.expect("opens");
        let zones = io2.report_zones().await.expect("reports");
        assert_eq!(zones.len(), 16);
        assert_eq!(zones[0].state, ZoneState::ImplicitlyOpened);
        assert_eq!(zones[0].wp, 1);
        assert_eq!(zones[3].state, ZoneState::ExplicitlyOpened);
    });
    sim.run();
}

/// Text that compresses about 2:1, different per seed.
fn text(seed: u64, len: usize) -> Vec<u8> {
    let words = [
        "zone", "chunk", "flash", "write", "pointer", "compress", "host", "die",
    ];
    let mut v = Vec::with_capacity(len);
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    while v.len() < len {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.extend_from_slice(words[(x >> 60) as usize % words.len()].as_bytes());
        v.extend_from_slice(format!(" {} ", (x >> 40) % 1000).as_bytes());
    }
    v.truncate(len);
    v
}

#[test]
fn compressed_writes_and_decompressed_reads_round_trip_chunks() {
    let (sim, io, _) = setup(presets::test_cczns(), IoConfig::default(), 2);
    sim.block_on(async move {
        let chunks = [text(1, 4100), text(2, 3000), text(3, 4096)];
        let sizes: Vec<u32> = chunks.iter().map(|c| c.len() as u32).collect();
        let mut data = chunks.concat();
        data.resize(data.len().div_ceil(4096) * 4096, 0);
        // At the zone start: feedback per chunk, the zone took less than the data.
        let fb = io.compressed_write(0, &data, &sizes).await.expect("writes");
        assert_eq!(fb.sizes.len(), 3);
        let stored: u64 = fb.sizes.iter().map(|&s| s as u64).sum();
        assert!(stored < 11_196 && fb.written >= stored, "{fb:?}");
        // The next CW goes at the byte write pointer; anywhere else is refused by status.
        let more = text(4, 4096);
        let wrong = io.compressed_write(fb.written + 512, &more, &[4096]).await;
        assert_eq!(
            wrong.expect_err("not at the write pointer").status(),
            Some(Status::ZONE_INVALID_WRITE)
        );
        let fb2 = io
            .compressed_write(fb.written, &more, &[4096])
            .await
            .expect("appends");
        // Single-chunk DR of the second chunk: exactly its bytes.
        let second = fb.sizes[0] as u64;
        let mut out = vec![0u8; 4096];
        let got = io
            .decompressed_read(second, fb.sizes[1] as u64, false, &mut out)
            .await
            .expect("reads");
        assert_eq!(got, vec![(3000, fb.sizes[1])]);
        assert_eq!(&out[..3000], &chunks[1][..]);
        // Multi-chunk DR of everything: every chunk back to back.
        let mut out = vec![0u8; 16 << 10];
        let got = io
            .decompressed_read(0, fb.written + fb2.written, true, &mut out)
            .await
            .expect("reads");
        assert_eq!(got.len(), 4);
        let all = [chunks.concat(), more.clone()].concat();
        assert_eq!(&out[..all.len()], &all[..]);
        let c = io.counters();
        assert_eq!((c.compressed_writes, c.cw_chunks), (2, 4));
        assert_eq!((c.decompressed_reads, c.dr_chunks), (2, 5));
        // Bad requests are refused before reaching the device, naming why.
        let err = io.compressed_write(fb.written, &more, &[5000]).await;
        assert!(err
            .expect_err("chunks beyond data")
            .to_string()
            .contains("chunks"));
    });
}

#[test]
fn a_plain_zns_device_refuses_compressed_commands() {
    let (sim, io, _) = setup(presets::test_min(), IoConfig::default(), 2);
    sim.block_on(async move {
        let data = text(1, 4096);
        let err = io
            .compressed_write(0, &data, &[4096])
            .await
            .expect_err("no CW");
        assert_eq!(err.status(), Some(Status::INVALID_FIELD));
    });
}

/// Emulated zones come back after a power cut from what the compressing block SSD holds:
/// DULBE reads find where each zone's written blocks end. Written, partly written, reset and
/// untouched zones come back Full, Closed, Empty and Empty; data reads back.
#[test]
fn emulated_zones_are_recovered_from_the_drive_after_a_power_cut() {
    let cfg = presets::test_tcssd();
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let io = Rc::new(HostIo::new(
        &dev,
        Rc::new(CpuPool::new(&sim, 1)),
        IoConfig::default(),
    ));
    let zb = io.zone_bytes();
    let cap = io.zone_capacity_bytes();
    let data = pattern(3, cap as usize);
    let d2 = data.clone();
    let io2 = io.clone();
    sim.block_on(async move {
        io2.write(0, &d2).await.expect("fills zone 0");
        io2.write(zb, &d2[..5 * 4096])
            .await
            .expect("zone 1: 5 blocks");
        io2.write(2 * zb, &d2[..4096])
            .await
            .expect("zone 2: 1 block");
        io2.zone_action(2, ZoneAction::Reset).await.expect("resets");
    });
    // Power cut: the host's zone table is gone; a new host finds it again.
    drop(io);
    let io = Rc::new(HostIo::new(
        &dev,
        Rc::new(CpuPool::new(&sim, 1)),
        IoConfig::default(),
    ));
    sim.block_on(async move {
        let before = io.report_zones().await.expect("reports");
        assert_eq!(
            before[0].state,
            ZoneState::Empty,
            "a new host knows nothing"
        );
        io.recover_emulated_zones().await.expect("recovers");
        let z = io.report_zones().await.expect("reports");
        let lba = io.lba_bytes();
        assert_eq!((z[0].state, z[0].wp), (ZoneState::Full, cap / lba));
        assert_eq!((z[1].state, z[1].wp - z[1].zslba), (ZoneState::Closed, 5));
        assert_eq!((z[2].state, z[2].wp), (ZoneState::Empty, z[2].zslba));
        assert_eq!(z[3].state, ZoneState::Empty);
        // DULBE is off again: unwritten blocks read as zeros; the data is there.
        let mut b = vec![1u8; 4096];
        io.read(2 * zb, &mut b).await.expect("reads");
        assert!(b.iter().all(|&x| x == 0));
        let mut back = vec![0u8; 5 * 4096];
        io.read(zb, &mut back).await.expect("reads");
        assert_eq!(back, data[..5 * 4096]);
        // Writing goes on at the recovered write pointer, and not elsewhere.
        io.write(zb + 5 * 4096, &data[..4096])
            .await
            .expect("appends");
        let e = io
            .write(zb + 9 * 4096, &data[..4096])
            .await
            .expect_err("not at the wp");
        assert_eq!(e.status(), Some(Status::ZONE_INVALID_WRITE));
    });
}
