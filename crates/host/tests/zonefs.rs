//! zonefs on the emulated device: files round trip, survive unmount and power cuts, deletions
//! reset zones, the metadata log rolls, and a full device says so. (CCZNS padding zones:
//! `zonefs_padding.rs`.)

mod common;

use std::rc::Rc;

use common::{bytes, host, read_all, test_min_device as device};
use device::{presets, Controller, DeviceHandle};
use host::zonefs::{FsError, Lifetime, MkfsOptions, ZoneFs};
use sim::Sim;

#[test]
fn files_round_trip_and_survive_a_remount() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let files = [
        ("000010.sst", Lifetime::Medium, bytes(1, 300_000)),
        ("000011.sst", Lifetime::Long, bytes(2, 70_000)),
        ("MANIFEST-000001", Lifetime::NotSet, bytes(3, 5_000)),
    ];
    let f2 = files.clone();
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        for (name, life, data) in &f2 {
            let mut w = fs.writer(name, *life).await.expect("creates");
            for piece in data.chunks(40_000) {
                w.append(piece).await.expect("appends");
            }
            w.close().await.expect("closes");
        }
        for (name, _, data) in &f2 {
            assert_eq!(&read_all(&fs, name).await, data, "{name}");
        }
        // A range in the middle, across an extent boundary.
        let mut mid = vec![0u8; 50_000];
        fs.read("000010.sst", 250_000, &mut mid)
            .await
            .expect("reads");
        assert_eq!(mid, f2[0].2[250_000..300_000]);
        let s = fs.stats();
        assert_eq!(s.used_bytes, 375_000);
        assert_eq!(s.files, 3);
        assert!(matches!(
            fs.writer("000010.sst", Lifetime::Medium).await,
            Err(FsError::Exists(_))
        ));
    });
    // Reboot: a new host mounts what the device holds.
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        assert_eq!(fs.list().len(), 3);
        for (name, _, data) in &files {
            assert_eq!(&read_all(&fs, name).await, data, "{name} after remount");
        }
    });
}

#[test]
fn deleting_the_last_live_data_resets_zones() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        let mut w = fs.writer("a.sst", Lifetime::Medium).await.expect("creates");
        w.append(&bytes(4, 600_000)).await.expect("appends");
        w.close().await.expect("closes");
        let before = fs.stats();
        fs.delete("a.sst").await.expect("deletes");
        let after = fs.stats();
        assert_eq!(after.used_bytes, 0);
        assert!(
            after.free_bytes >= before.free_bytes + 600_000,
            "{before:?} {after:?}"
        );
        assert!(matches!(
            fs.delete("a.sst").await,
            Err(FsError::NotFound(_))
        ));
    });
}

#[test]
fn a_power_cut_keeps_synced_data_and_what_reached_the_zone() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let data = bytes(5, 1_500_000);
    let d2 = data.clone();
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        let mut w = fs
            .writer("wal.sst", Lifetime::Short)
            .await
            .expect("creates");
        w.append(&d2[..100_000]).await.expect("appends");
        w.sync().await.expect("syncs");
        // A full buffer reaches the device without a sync, the rest stays in host memory.
        w.append(&d2[100_000..]).await.expect("appends");
        // Power cut: nothing more happens (the writer and the host's state are lost).
        std::mem::forget(w);
    });
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        let got = read_all(&fs, "wal.sst").await;
        assert!(got.len() >= 100_000, "synced data lost: {}", got.len());
        // What came back is a prefix of what was written, padding aside.
        let n = got.len().min(data.len());
        let real = (0..n).take_while(|&i| got[i] == data[i]).count();
        assert!(
            real >= 100_000 + (1 << 20) - 8192,
            "only {real} bytes match"
        );
    });
}

#[test]
fn the_metadata_log_rolls_and_mount_follows_it() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        // Each create, close and delete is a 4 KiB record: a 256 KiB zone fills quickly.
        for i in 0..40 {
            let name = format!("{i:06}.log");
            let mut w = fs.writer(&name, Lifetime::Short).await.expect("creates");
            w.append(&bytes(i, 3000)).await.expect("appends");
            w.close().await.expect("closes");
            if i % 2 == 0 {
                fs.delete(&name).await.expect("deletes");
            }
        }
        assert!(fs.stats().meta_rolls >= 1, "{:?}", fs.stats());
    });
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        assert_eq!(fs.list().len(), 20);
        for i in (1..40).step_by(2) {
            let name = format!("{i:06}.log");
            assert_eq!(read_all(&fs, &name).await, bytes(i, 3000), "{name}");
        }
    });
}

#[test]
fn a_full_device_reports_no_space() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        let mut w = fs
            .writer("big.sst", Lifetime::Extreme)
            .await
            .expect("creates");
        let chunk = bytes(6, 1 << 20);
        let mut err = None;
        for _ in 0..8 {
            if let Err(e) = w.append(&chunk).await {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("13 IO zones of 256 KiB cannot take 8 MiB");
        assert!(matches!(e, FsError::NoSpace(_)), "{e}");
    });
}

#[test]
fn zones_are_shared_by_lifetime_as_zenfs_allocates_them() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        assert!(matches!(fs.extents("x"), Err(FsError::NotFound(_))));
        let zone = 256u64 << 10; // test-min's zone size
        let put = async |name: &str, life: Lifetime| {
            let mut w = fs.writer(name, life).await.expect("creates");
            w.append(&bytes(7, 20_000)).await.expect("appends");
            w.close().await.expect("closes");
            fs.extents(name).expect("exists")[0].start / zone
        };
        let medium = put("l0.sst", Lifetime::Medium).await;
        // A shorter-lived file prefers a zone whose data outlives it (distance 1)...
        assert_eq!(put("wal.log", Lifetime::Short).await, medium);
        // ...a longer-lived one does not (distance 100): a fresh zone.
        let long = put("l2.sst", Lifetime::Long).await;
        assert_ne!(long, medium);
        // Same lifetime as an open zone (distance 50) only when no better zone exists:
        // a second Long file goes to the empty zones first.
        let long2 = put("l2b.sst", Lifetime::Long).await;
        assert_ne!(long2, long);
    });
}

#[test]
fn a_wal_syncs_without_metadata_and_mount_walks_its_pieces() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let pieces: Vec<Vec<u8>> = (0..40)
        .map(|i| bytes(100 + i, 5_000 + 97 * i as usize))
        .collect();
    let p2 = pieces.clone();
    let records = sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        let mut w = fs
            .writer("000003.log", Lifetime::Short)
            .await
            .expect("creates");
        let before = io_records(&fs);
        for p in &p2[..30] {
            w.append(p).await.expect("appends");
            w.sync().await.expect("syncs");
        }
        let synced_records = io_records(&fs) - before;
        // Ten more appended but never synced: lost with the host's memory.
        for p in &p2[30..] {
            w.append(p).await.expect("appends");
        }
        std::mem::forget(w);
        synced_records
    });
    // Syncs wrote data only: at most one record per zone the WAL moved into.
    assert!(records <= 4, "{records} metadata records for 30 syncs");
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        // Exactly the synced bytes, contiguous: no padding inside the file.
        assert_eq!(read_all(&fs, "000003.log").await, pieces[..30].concat());
    });
}

/// Metadata records written so far (each is one write to a metadata zone).
fn io_records(fs: &ZoneFs) -> u64 {
    fs.meta_records()
}

/// Found with the store's concurrent flush and compaction: an allocation that finished the
/// cheapest zone let another allocation pick that zone while the Finish was in flight, whose
/// write then met ZONE_FULL.
#[test]
fn concurrent_writers_never_write_a_zone_being_finished() {
    // 64 zones, still only 6 active (4 for files) and 6 open (3 non-WAL writers at once):
    // writers contend for active zones.
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = 64;
    cfg.zones.max_open = 6;
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let io = host(&sim, &dev);
    let fs = sim.block_on(async move { Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs")) });
    let lifetimes = [
        Lifetime::Short,
        Lifetime::Medium,
        Lifetime::Long,
        Lifetime::Extreme,
    ];
    for w in 0..6u64 {
        let fs = fs.clone();
        sim.spawn(async move {
            for f in 0..3u64 {
                let name = format!("w{w}-{f}.sst");
                let mut wr = fs
                    .writer(&name, lifetimes[((w + f) % 4) as usize])
                    .await
                    .expect("creates");
                wr.append(&bytes(w * 10 + f, 100_000 + 7_000 * w as usize))
                    .await
                    .expect("appends");
                wr.close().await.expect("closes");
                if f % 2 == 0 {
                    fs.delete(&name).await.expect("deletes");
                }
            }
        });
    }
    sim.run();
    let fs2 = fs.clone();
    sim.block_on(async move {
        for w in 0..6u64 {
            let name = format!("w{w}-1.sst");
            assert_eq!(
                read_all(&fs2, &name).await,
                bytes(w * 10 + 1, 100_000 + 7_000 * w as usize)
            );
        }
    });
}

#[test]
fn a_device_with_too_few_open_zones_is_refused_by_name() {
    let mut cfg = presets::test_min();
    cfg.zones.max_open = 3;
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let io = host(&sim, &dev);
    let err = sim.block_on(async move { ZoneFs::mkfs(io, 0).await.err().expect("refused") });
    let msg = err.to_string();
    assert!(
        msg.contains("3 open") && msg.contains("keeps 3 open"),
        "{msg}"
    );
}

#[test]
fn the_finish_threshold_finishes_nearly_full_idle_zones() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    sim.block_on(async move {
        // Zones of 256 KiB; finish an idle zone with less than 30% left.
        let fs = Rc::new(ZoneFs::mkfs(io.clone(), 30).await.expect("mkfs"));
        let mut w = fs.writer("a.sst", Lifetime::Medium).await.expect("creates");
        w.append(&bytes(1, 200_000)).await.expect("appends");
        w.close().await.expect("closes");
        let zone_a = fs.extents("a.sst").expect("exists")[0].start / (256 << 10);
        // A WAL allocation does not run the pass...
        let mut wal = fs.writer("1.log", Lifetime::Short).await.expect("creates");
        wal.append(&bytes(2, 10_000)).await.expect("appends");
        wal.close().await.expect("closes");
        assert_eq!(fs.stats().zones.finished_by_threshold, 0);
        // ...a non-WAL one does: zone a (22% left, idle) is finished, and the new file goes
        // elsewhere.
        let mut w = fs.writer("b.sst", Lifetime::Long).await.expect("creates");
        w.append(&bytes(3, 10_000)).await.expect("appends");
        w.close().await.expect("closes");
        assert_eq!(fs.stats().zones.finished_by_threshold, 1);
        let zones = io.report_zones().await.expect("reports");
        assert_eq!(zones[zone_a as usize].state, device::ZoneState::Full);
        // Its data still reads back.
        assert_eq!(read_all(&fs, "a.sst").await, bytes(1, 200_000));
    });
}

#[test]
fn non_wal_writers_wait_for_an_open_token_and_a_wal_takes_the_kept_one() {
    // 6 open zones: 3 non-WAL writers at once, a 4th waits; a WAL may use a 4th token.
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = 64;
    cfg.zones.max_open = 6;
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let io = host(&sim, &dev);
    let sim2 = sim.clone();
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        assert_eq!(
            (fs.open_file_limit(false), fs.open_file_limit(true)),
            (3, 4)
        );
        let mut held = Vec::new();
        for i in 0..3 {
            let mut w = fs
                .writer(&format!("{i}.sst"), Lifetime::Medium)
                .await
                .expect("creates");
            // 1 MiB and a bit: the last zone stays partly written, held by its writer.
            w.append(&bytes(i, (1 << 20) + 100_000))
                .await
                .expect("appends");
            w.sync().await.expect("holds a zone");
            held.push(w);
        }
        // The WAL gets its token at once.
        let mut wal = fs.writer("9.log", Lifetime::Short).await.expect("creates");
        wal.append(&bytes(9, 1 << 20))
            .await
            .expect("a WAL takes the kept token");
        // A 4th SST waits until a writer closes.
        let fs2 = fs.clone();
        let done = Rc::new(std::cell::Cell::new(false));
        let d2 = done.clone();
        sim2.spawn(async move {
            let mut w = fs2
                .writer("3.sst", Lifetime::Medium)
                .await
                .expect("creates");
            w.append(&bytes(3, 1 << 20)).await.expect("appends");
            w.close().await.expect("closes");
            d2.set(true);
        });
        sim2.sleep(sim::SimDuration::from_ms(50)).await;
        assert!(!done.get(), "a 4th non-WAL writer got a zone");
        assert!(fs.stats().zones.open_token_waits > 0);
        // One SST closing is not enough: the WAL holds the token kept for WALs, so other
        // files may hold only 2 now.
        held.pop().expect("one").close().await.expect("closes");
        sim2.sleep(sim::SimDuration::from_ms(500)).await;
        assert!(!done.get(), "the WAL's token went to an SST");
        wal.close().await.expect("closes");
        sim2.sleep(sim::SimDuration::from_ms(500)).await;
        assert!(
            done.get(),
            "the waiting writer went on once a token came back"
        );
        assert_eq!(read_all(&fs, "3.sst").await, bytes(3, 1 << 20));
    });
}

#[test]
fn gc_moves_live_extents_out_of_mostly_dead_zones() {
    // 32 zones of 256 KiB.
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = 32;
    cfg.zones.max_open = 6;
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let io = host(&sim, &dev);
    let sim2 = sim.clone();
    let (dev2, keep) = (dev.clone(), Rc::new(std::cell::RefCell::new(Vec::new())));
    let keep2 = keep.clone();
    sim.block_on(async move {
        let opts = MkfsOptions {
            enable_gc: true,
            ..MkfsOptions::default()
        };
        let fs = Rc::new(ZoneFs::mkfs_with(io, opts).await.expect("mkfs"));
        // Fill the file system with 60 KiB files, one writer at a time, deleting 7 of every
        // 8: zones fill with mostly dead data that no reset gets back.
        let mut i = 0u64;
        loop {
            let name = format!("{i}.sst");
            let mut w = fs.writer(&name, Lifetime::Medium).await.expect("creates");
            w.append(&bytes(i, 60_000)).await.expect("appends");
            w.close().await.expect("closes");
            if i.is_multiple_of(8) {
                keep2.borrow_mut().push(i);
            } else {
                fs.delete(&name).await.expect("deletes");
            }
            i += 1;
            let st = fs.stats();
            if st.free_bytes * 100 / (st.free_bytes + st.used_bytes + st.reclaimable_bytes) < 10 {
                break;
            }
        }
        let before = fs.stats();
        assert!(before.reclaimable_bytes > 0, "{before:?}");
        // Ten seconds on, a write wakes the GC pass.
        sim2.sleep(sim::SimDuration::from_ms(11_000)).await;
        let mut w = fs
            .writer("late.sst", Lifetime::Medium)
            .await
            .expect("creates");
        w.append(&bytes(999, 8_000)).await.expect("appends");
        w.close().await.expect("closes");
        sim2.sleep(sim::SimDuration::from_ms(2_000)).await;
        let after = fs.stats();
        assert_eq!(after.zones.gc_passes, 1, "{after:?}");
        assert!(
            after.zones.gc_extents > 0 && after.zones.gc_bytes_written > 0,
            "{after:?}"
        );
        assert!(
            after.zones.resets > before.zones.resets,
            "migrated zones were reset"
        );
        assert!(
            after.free_bytes > before.free_bytes,
            "{before:?} -> {after:?}"
        );
        let kept = keep2.borrow().clone();
        for &k in &kept {
            assert_eq!(read_all(&fs, &format!("{k}.sst")).await, bytes(k, 60_000));
        }
    });
    // The replace records hold across a remount.
    let io = host(&sim, &dev2);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        let kept = keep.borrow().clone();
        for &k in &kept {
            assert_eq!(read_all(&fs, &format!("{k}.sst")).await, bytes(k, 60_000));
        }
    });
}

/// A sync whose metadata record the device refused fails; its extents are logged by the next
/// record of the file (here its close), so they are there after a remount. (Marked logged
/// before the record was written, they were left out of every later record and lost.)
#[test]
fn extents_of_a_sync_whose_record_failed_are_logged_by_the_next_one() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let data = bytes(9, 1 << 20);
    let (d2, dev2) = (data.clone(), dev.clone());
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        let mut w = fs.writer("a.sst", Lifetime::Medium).await.expect("creates");
        // A full 1 MiB buffer goes to the device at once: the sync only logs the extent.
        w.append(&d2).await.expect("appends");
        dev2.with(|c| {
            c.faults_mut()
                .refusals
                .push_back((device::CommandKind::Write, device::Status::INTERNAL_ERROR))
        });
        let e = w.sync().await.expect_err("the record is refused");
        assert!(e.to_string().contains("INTERNAL_ERROR"), "{e}");
        w.close().await.expect("closes");
    });
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        assert_eq!(read_all(&fs, "a.sst").await, data);
    });
}

#[test]
fn deletes_side_by_side_never_reset_a_zone_a_new_file_took() {
    // Several tasks write files and delete their previous ones, so deletions (each resetting
    // the zones left without live data) run beside each other and beside allocations. A
    // reset chosen by two deletions ran twice, the second time after a new file had taken
    // the zone: its data gone, and the next append refused as not at the write pointer.
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = 32;
    cfg.zones.max_open = 6;
    let sim = Sim::new(3);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let io = host(&sim, &dev);
    let fs = sim.block_on(async move { Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs")) });
    let tasks: Vec<_> = (0..3u64)
        .map(|t| {
            let fs = fs.clone();
            sim.spawn(async move {
                for f in 0..12u64 {
                    let name = format!("t{t}-{f}.sst");
                    let data = bytes(t * 100 + f, 120_000 + 9_000 * t as usize);
                    let mut w = fs.writer(&name, Lifetime::Medium).await?;
                    w.append(&data[..60_000]).await?;
                    w.append(&data[60_000..]).await?;
                    w.close().await?;
                    if f > 0 {
                        fs.delete(&format!("t{t}-{}.sst", f - 1)).await?;
                    }
                }
                Ok::<_, FsError>(())
            })
        })
        .collect();
    let fs2 = fs.clone();
    let s = sim.block_on(async move {
        for t in tasks {
            t.await.expect("writes and deletes");
        }
        for t in 0..3u64 {
            let name = format!("t{t}-11.sst");
            assert_eq!(
                read_all(&fs2, &name).await,
                bytes(t * 100 + 11, 120_000 + 9_000 * t as usize),
                "{name}"
            );
        }
        fs2.stats()
    });
    // Each reset zonefs counts emptied a zone that held data (the device counts only those;
    // besides them, the metadata log's rolls): none was reset twice.
    let device_resets = dev.with(|c| c.counters().zone_resets);
    // Measured: 24 + 2 rolls = 26; 41 resets by zonefs when deletions shared victims.
    assert!(s.zones.resets > 0);
    assert_eq!(s.zones.resets + s.meta_rolls as u64, device_resets, "{s:?}");
}

#[test]
fn setup_errors_read_as_before_they_were_typed() {
    use host::zonefs::SetupError;
    let cases = [
        (
            SetupError::FinishThreshold(101),
            "finish threshold 101%: at most 100",
        ),
        (
            SetupError::PaddingWithGc,
            "padding zones (compressed writes) and GC together: GC moves extents with plain \
             reads and writes, which would lose the device's chunk records",
        ),
        (
            SetupError::PaddingNeedsCczns,
            "padding zones need a CCZNS device (design = \"cczns\")",
        ),
        (
            SetupError::TooFewZones { zones: 4, need: 5 },
            "4 zones: zonefs needs at least 5",
        ),
        (
            SetupError::TooFewOpenZones {
                max_open: 3,
                max_active: 2,
            },
            "the device allows 3 open and 2 active zones: zonefs keeps 3 open and 2 active \
             zones back, as ZenFS does, and needs one more of each",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(FsError::from(e).to_string(), text);
    }
    use host::lsm::db::DbError;
    assert_eq!(
        DbError::TooFewOpenFiles(2).to_string(),
        "the store needs 3 files open for writing besides its WAL (MANIFEST, flush, \
         compaction); zonefs on this device allows 2: give the device at least 6 open and 5 \
         active zones"
    );
    assert_eq!(
        DbError::UnknownEngine("qat-9999".into()).to_string(),
        "compression engine \"qat-9999\": no such profile (znslab devices lists them)"
    );
}

#[test]
fn io_compressed_write_and_store_errors_read_as_before_they_were_typed() {
    use host::lsm::db::{Corruption, DbError, Stop, Stopper};
    use host::zonefs::{CompressedWriteError, SetupError};
    use host::RestoreZonesError;
    let fs = [
        (
            FsError::from(SetupError::TooFewZonesToMount { zones: 4, need: 5 }),
            "too few zones for zonefs",
        ),
        (
            CompressedWriteError::NeedsPaddingZones.into(),
            "compressed writes need padding zones (mkfs with padding_zones)",
        ),
        (
            CompressedWriteError::TooLarge { bytes: 1 << 20 }.into(),
            "a compressed write of 1048576 bytes: larger than the device's transfer size or a \
             zone",
        ),
        (
            CompressedWriteError::Feedback {
                sizes: 3,
                chunks: 4,
                written: 5000,
            }
            .into(),
            "compressed write feedback: 3 sizes for 4 chunks, 5000 bytes taken (not whole \
             blocks: is the zone a padding zone?)",
        ),
    ];
    for (e, text) in fs {
        assert_eq!(e.to_string(), text);
        assert_eq!(DbError::from(e).to_string(), text);
    }
    let corrupt = [
        (
            Corruption::DecompressedChunks {
                file: "000012.sst".into(),
                offset: 4096,
                got: 2,
                want: 3,
            },
            "corrupt 000012.sst: a decompressed read at 4096 returned 2 chunks, the index names 3",
        ),
        (
            Corruption::ShortFile {
                file: "000007.sst".into(),
            },
            "corrupt 000007.sst: shorter than its handles say",
        ),
        (
            Corruption::ManifestLevel { level: 9 },
            "corrupt MANIFEST: level 9",
        ),
        (
            Corruption::WriteBatch {
                wal: "000003.log".into(),
            },
            "corrupt write batch in 000003.log",
        ),
        (Corruption::InternalKey, "corrupt internal key"),
        (
            Corruption::InternalKeyInSst,
            "corrupt internal key in an SST",
        ),
    ];
    for (c, text) in corrupt {
        assert_eq!(DbError::from(c).to_string(), text);
    }
    let stops = [
        (Stopper::BackgroundJob, "a background job"),
        (Stopper::ManifestWrite, "a MANIFEST write"),
        (Stopper::StartingWal, "starting a new WAL"),
        (Stopper::WalWrite, "a WAL write"),
        (Stopper::WalSync, "a WAL sync"),
    ];
    for (what, name) in stops {
        let e = DbError::Stopped(Stop {
            what,
            cause: "no space: zones".into(),
        });
        assert_eq!(
            e.to_string(),
            format!("the store takes no more writes: {name} failed: no space: zones")
        );
    }
    let restore = [
        (
            RestoreZonesError::NotEmulated,
            "the device has zones of its own: nothing to restore",
        ),
        (
            RestoreZonesError::ZoneCount {
                saved: 10,
                device: 12,
            },
            "10 zones saved, the device has 12",
        ),
        (
            RestoreZonesError::StateCode { zone: 3, code: 0xd },
            "zone 3: state code 0xd",
        ),
        (
            RestoreZonesError::WritePointer { zone: 3, wp: 77 },
            "zone 3: write pointer 77 outside the zone",
        ),
    ];
    for (e, text) in restore {
        assert_eq!(e.to_string(), text);
    }
}

/// ZenFS+ §V-A runs ZenFS with 6–12 active zones: `max_active_io_zones` holds the writers to
/// that many zones (finishing one to start another) while the device allows more.
#[test]
fn max_active_io_zones_holds_the_writers_to_that_many_zones() {
    let mut cfg = presets::test_min();
    cfg.nand.blocks_per_plane = 64;
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let io = host(&sim, &dev);
    let opts = MkfsOptions {
        max_active_io_zones: 2,
        ..MkfsOptions::default()
    };
    let fs = sim.block_on(async move { Rc::new(ZoneFs::mkfs_with(io, opts).await.expect("mkfs")) });
    let base = dev.with(|c| c.active_zones());
    let lifetimes = [
        Lifetime::Short,
        Lifetime::Medium,
        Lifetime::Long,
        Lifetime::Extreme,
    ];
    let peak = Rc::new(std::cell::Cell::new(0u32));
    let done = Rc::new(std::cell::Cell::new(0usize));
    for w in 0..4u64 {
        let (fs, done) = (fs.clone(), done.clone());
        sim.spawn(async move {
            for f in 0..3u64 {
                let name = format!("w{w}-{f}.sst");
                let mut wr = fs
                    .writer(&name, lifetimes[w as usize])
                    .await
                    .expect("creates");
                for k in 0..4 {
                    wr.append(&bytes(w * 100 + f * 10 + k, 40_000))
                        .await
                        .expect("appends");
                    wr.sync().await.expect("syncs");
                }
                wr.close().await.expect("closes");
            }
            done.set(done.get() + 1);
        });
    }
    {
        let (dev, peak, done, sim2) = (dev.clone(), peak.clone(), done.clone(), sim.clone());
        sim.spawn(async move {
            while done.get() < 4 {
                peak.set(peak.get().max(dev.with(|c| c.active_zones()) - base));
                sim2.sleep(sim::SimDuration::from_ns(20_000)).await;
            }
        });
    }
    sim.run();
    assert_eq!(done.get(), 4);
    assert!(peak.get() <= 2, "{} IO zones active at once", peak.get());
    assert!(peak.get() == 2, "the writers used both zones");
    let fs2 = fs.clone();
    sim.block_on(async move {
        for w in 0..4u64 {
            let want: Vec<u8> = (0..4)
                .flat_map(|k| bytes(w * 100 + 20 + k, 40_000))
                .collect();
            assert_eq!(read_all(&fs2, &format!("w{w}-2.sst")).await, want);
        }
    });
    assert!(fs.stats().zones.finished_for_token > 0 || fs.stats().zones.open_token_waits > 0);
}
