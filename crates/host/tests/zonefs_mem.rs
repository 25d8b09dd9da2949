//! zonefs on the in-memory zoned backend (no device, no time): files round trip, survive a
//! remount of the same zones, deletions reset zones, and the backend refuses what a zoned
//! drive refuses.

use std::rc::Rc;

use device::{Status, ZoneAction, ZoneState};
use host::zonefs::{Lifetime, ZoneFs};
use host::{MemZoned, ZonedBackend};
use sim::{Rng, Sim};

/// 16 zones of 64 blocks of 4 KiB (56 writable), 8 open and 8 active.
fn backend(sim: &Sim) -> Rc<MemZoned> {
    Rc::new(MemZoned::new(sim, 4096, 16, 64, 56, 8, 8))
}

fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    Rng::new(seed).fill(&mut v);
    v
}

async fn read_all(fs: &ZoneFs<MemZoned>, name: &str) -> Vec<u8> {
    let size = fs.size(name).expect("exists") as usize;
    let mut buf = vec![0u8; size];
    assert_eq!(fs.read(name, 0, &mut buf).await.expect("reads"), size);
    buf
}

#[test]
fn files_round_trip_remount_and_deletions_reset_zones() {
    let sim = Sim::new(1);
    let mem = backend(&sim);
    let files = [
        ("000010.sst", Lifetime::Medium, bytes(1, 300_000)),
        ("000011.sst", Lifetime::Long, bytes(2, 70_000)),
        ("000012.log", Lifetime::Short, bytes(3, 9_000)),
    ];
    let f = files.clone();
    let m = mem.clone();
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(m.clone(), 0).await.expect("mkfs"));
        for (name, life, data) in &f {
            let mut w = fs.writer(name, *life).await.expect("creates");
            for piece in data.chunks(40_000) {
                w.append(piece).await.expect("appends");
            }
            w.close().await.expect("closes");
        }
        for (name, _, data) in &f {
            assert_eq!(&read_all(&fs, name).await, data, "{name}");
        }
        // A remount of the same zones finds every file.
        drop(fs);
        let fs = ZoneFs::mount(m.clone()).await.expect("mounts");
        for (name, _, data) in &f {
            assert_eq!(&read_all(&fs, name).await, data, "{name} after remount");
        }
        // Deleting the big file leaves zones with no live data: they are reset.
        let written = |zones: &[device::ZoneDescriptor]| {
            zones.iter().filter(|z| z.state != ZoneState::Empty).count()
        };
        let before = written(&m.report_zones().await.expect("report"));
        fs.delete("000010.sst").await.expect("deletes");
        let after = written(&m.report_zones().await.expect("report"));
        assert!(
            after < before,
            "{after} zones written after the deletion, {before} before"
        );
        assert_eq!(fs.stats().zones.resets as usize, before - after);
        assert_eq!(read_all(&fs, "000011.sst").await, f[1].2);
    });
    assert_eq!(sim.now().as_ns(), 0, "the in-memory backend takes no time");
}

#[test]
fn the_backend_refuses_what_a_zoned_drive_refuses() {
    let sim = Sim::new(1);
    let mem = backend(&sim);
    sim.block_on(async move {
        let block = vec![7u8; 4096];
        let zone = mem.zone_bytes();
        mem.write(0, &block).await.expect("at the write pointer");
        let status = |r: Result<(), host::IoError>| r.expect_err("refused").status();
        // Off the write pointer.
        assert_eq!(
            status(mem.write(2 * 4096, &block).await),
            Some(Status::ZONE_INVALID_WRITE)
        );
        // Past the capacity (56 of the zone's 64 blocks), then into a finished zone.
        mem.write(zone, &vec![1u8; 55 * 4096]).await.expect("fits");
        assert_eq!(
            status(mem.write(zone + 55 * 4096, &vec![1u8; 2 * 4096]).await),
            Some(Status::ZONE_BOUNDARY_ERROR)
        );
        mem.zone_action(2, ZoneAction::Finish)
            .await
            .expect("finish");
        assert_eq!(
            status(mem.write(2 * zone, &block).await),
            Some(Status::ZONE_FULL)
        );
        // Closing an empty zone is not a transition.
        assert_eq!(
            status(mem.zone_action(3, ZoneAction::Close).await),
            Some(Status::ZONE_INVALID_TRANSITION)
        );
        // A reset empties the zone and its data reads back as zeros.
        mem.zone_action(0, ZoneAction::Reset).await.expect("reset");
        let mut back = vec![1u8; 4096];
        mem.read(0, &mut back).await.expect("reads");
        assert!(back.iter().all(|&b| b == 0));
        assert_eq!(
            mem.report_zones().await.expect("report")[0].state,
            ZoneState::Empty
        );
    });
}
