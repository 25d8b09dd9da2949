//! zonefs under ZenFS+'s policy on the small-zone device: flush and compaction outputs are
//! striped over zones of different independent zone groups (IZGs), written in parallel,
//! isolated from each other, read back across a remount and a power cut.

use std::rc::Rc;

use device::{presets, Controller, DeviceHandle};
use host::zonefs::izg::ProbeConfig;
use host::zonefs::plus::{JobKind, PlusConfig, WriteClass, STRIPE_UNIT};
use host::zonefs::policy::Policy;
use host::zonefs::{Lifetime, MkfsOptions, ZoneFs};
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::{Rng, Sim};

fn device() -> (Sim, DeviceHandle) {
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::zenfsplus_hynix_small()).expect("valid"),
    );
    (sim, dev)
}

fn host(sim: &Sim, dev: &DeviceHandle) -> Rc<HostIo> {
    Rc::new(HostIo::new(
        dev,
        Rc::new(CpuPool::new(sim, 8)),
        IoConfig::default(),
    ))
}

fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    Rng::new(seed).fill(&mut v);
    v
}

fn plus(cfg: PlusConfig) -> MkfsOptions {
    MkfsOptions {
        izg_probe: Some(ProbeConfig {
            write_bytes: Some(4 << 20),
            ..ProbeConfig::write_periodic()
        }),
        policy: Policy::ZenFsPlus(cfg),
        ..MkfsOptions::default()
    }
}

const FLUSH: WriteClass = WriteClass {
    kind: JobKind::Flush,
    level: 0,
};

fn compaction(level: u32) -> WriteClass {
    WriteClass {
        kind: JobKind::Compaction,
        level,
    }
}

async fn write(fs: &Rc<ZoneFs>, name: &str, class: WriteClass, data: &[u8]) {
    let mut w = fs
        .writer_for(name, Lifetime::Medium, class)
        .await
        .expect("creates");
    for piece in data.chunks(100_000) {
        w.append(piece).await.expect("appends");
    }
    w.close().await.expect("closes");
}

async fn read_all(fs: &ZoneFs, name: &str) -> Vec<u8> {
    let mut buf = vec![0u8; fs.size(name).expect("exists") as usize];
    fs.read(name, 0, &mut buf).await.expect("reads");
    buf
}

/// The IZGs (device zone % 32) a file's extents lie in.
fn izgs_of(fs: &ZoneFs, name: &str) -> Vec<u64> {
    let zone_bytes = fs.io().zone_bytes();
    let mut g: Vec<u64> = fs
        .extents(name)
        .expect("exists")
        .iter()
        .map(|e| (e.start / zone_bytes) % 32)
        .collect();
    g.sort_unstable();
    g.dedup();
    g
}

#[test]
fn striped_files_round_trip_stay_in_their_partitions_and_survive_a_remount() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let files = [
        ("000010.sst", FLUSH, bytes(1, 3_000_000)),
        ("000011.sst", compaction(1), bytes(2, 7_000_001)),
        ("000012.sst", compaction(2), bytes(3, 500_000)),
    ];
    let f2 = files.clone();
    sim.block_on(async move {
        let fs = Rc::new(
            ZoneFs::mkfs_with(io, plus(PlusConfig::default()))
                .await
                .expect("mkfs"),
        );
        for (name, class, data) in &f2 {
            write(&fs, name, *class, data).await;
        }
        for (name, _, data) in &f2 {
            assert_eq!(&read_all(&fs, name).await, data, "{name}");
            let e = fs.extents(name).expect("exists");
            assert!(e.iter().all(|e| e.len <= STRIPE_UNIT), "{name}: {e:?}");
        }
        // Flush writes IZGs 0-3 (four wide), compaction 4-15 (twelve wide).
        assert_eq!(izgs_of(&fs, "000010.sst"), vec![0, 1, 2, 3]);
        assert_eq!(izgs_of(&fs, "000011.sst"), (4..16).collect::<Vec<_>>());
        // Levels never share a zone.
        let zones = |name: &str| {
            let zb = fs.io().zone_bytes();
            let mut z: Vec<u64> = fs
                .extents(name)
                .unwrap()
                .iter()
                .map(|e| e.start / zb)
                .collect();
            z.sort_unstable();
            z.dedup();
            z
        };
        let (l1, l2) = (zones("000011.sst"), zones("000012.sst"));
        assert!(l1.iter().all(|z| !l2.contains(z)), "{l1:?} {l2:?}");
    });
    let io = host(&sim, &dev);
    sim.block_on(async move {
        // Mount takes the policy the superblock keeps.
        let fs = Rc::new(ZoneFs::mount(io).await.expect("mounts"));
        for (name, _, data) in &files {
            assert_eq!(&read_all(&fs, name).await, data, "{name}");
        }
        // New files after the mount go to new groups and read back too.
        let more = bytes(9, 3_000_000);
        write(&fs, "000013.sst", compaction(1), &more).await;
        assert_eq!(read_all(&fs, "000013.sst").await, more);
        assert_eq!(izgs_of(&fs, "000013.sst"), (4..16).collect::<Vec<_>>());
    });
}

/// Twelve zones on twelve dies take a compaction output at twelve dies' speed: against
/// ZenFS's one zone at a time, several times faster (the paper's Fig. 8 mechanism); read back
/// 2 MiB at a time (a compaction's readahead), its pieces are read at once, also faster.
#[test]
fn a_striped_file_is_written_and_read_several_times_faster_than_one_zone_at_a_time() {
    let time = |opts: MkfsOptions| {
        let (sim, dev) = device();
        let io = host(&sim, &dev);
        sim.block_on(async move {
            let fs = Rc::new(ZoneFs::mkfs_with(io, opts).await.expect("mkfs"));
            let data = bytes(4, 48 << 20);
            let t = fs.io().sim().now();
            write(&fs, "000020.sst", compaction(1), &data).await;
            let written = fs.io().sim().now().since(t).as_ns();
            fs.io().sim().sleep(sim::SimDuration::from_ms(100)).await;
            let t = fs.io().sim().now();
            let mut back = vec![0u8; 2 << 20];
            for (i, want) in data.chunks(2 << 20).enumerate() {
                let n = fs
                    .read("000020.sst", (i as u64) << 21, &mut back)
                    .await
                    .expect("reads");
                assert_eq!(&back[..n], want);
            }
            (written, fs.io().sim().now().since(t).as_ns())
        })
    };
    let zenfs = time(MkfsOptions::default());
    let striped = time(plus(PlusConfig::default()));
    eprintln!("48 MiB written, read: ZenFS {zenfs:?} ns, ZenFS+ {striped:?} ns");
    assert!(zenfs.0 > 6 * striped.0, "{zenfs:?} against {striped:?}");
    assert!(zenfs.1 > 4 * striped.1, "{zenfs:?} against {striped:?}");
}

/// A power cut loses what a striped file wrote after its last sync, never what it synced, and
/// the file system mounts.
#[test]
fn a_power_cut_keeps_what_a_striped_file_synced() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let data = bytes(6, 5_000_000);
    let d2 = data.clone();
    sim.block_on(async move {
        let fs = Rc::new(
            ZoneFs::mkfs_with(io, plus(PlusConfig::default()))
                .await
                .expect("mkfs"),
        );
        let mut w = fs
            .writer_for("000030.sst", Lifetime::Medium, compaction(1))
            .await
            .expect("creates");
        w.append(&d2[..3_000_000]).await.expect("appends");
        w.sync().await.expect("syncs");
        w.append(&d2[3_000_000..]).await.expect("appends");
        std::mem::forget(w);
    });
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount_with(io, Policy::ZenFsPlus(PlusConfig::default()))
            .await
            .expect("mounts");
        let got = read_all(&fs, "000030.sst").await;
        assert_eq!(got, data[..3_000_000]);
    });
}

/// A ZenFS+ configuration the superblock could not keep is refused at mkfs, not stored
/// clamped (mount would then run another configuration than mkfs did).
#[test]
fn a_configuration_the_superblock_cannot_keep_is_refused() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let e = sim
        .block_on(ZoneFs::mkfs_with(
            io,
            plus(PlusConfig {
                max_width: 256,
                ..PlusConfig::default()
            }),
        ))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("width of 256"), "{e}");
}

/// The small-zone device with zones of 2.25 MiB (36 multi-plane pages), so stripe groups
/// fill after a few MiB.
fn short_zones() -> (Sim, DeviceHandle) {
    let mut cfg = presets::zenfsplus_hynix_zones("zenfsplus-short", 16 * 32);
    cfg.nand.pages_per_block = 36;
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    (sim, dev)
}

fn plus_short(reclaim: bool) -> MkfsOptions {
    MkfsOptions {
        izg_probe: Some(ProbeConfig {
            write_bytes: Some(1 << 20),
            ..ProbeConfig::write_periodic()
        }),
        ..plus(PlusConfig {
            reclaim,
            ..PlusConfig::default()
        })
    }
}

/// §IV-D's minor GC: with reclaiming, a deleted file's dead zones stay until the pass, which
/// resets exactly the zones holding no live data and no open group; without it, the delete
/// resets them (ZenFS's behaviour).
#[test]
fn minor_gc_resets_only_dead_zones_and_reclaiming_defers_resets_to_it() {
    for reclaim in [true, false] {
        let (sim, dev) = short_zones();
        let io = host(&sim, &dev);
        let sim2 = sim.clone();
        sim.block_on(async move {
            let fs = Rc::new(
                ZoneFs::mkfs_with(io, plus_short(reclaim))
                    .await
                    .expect("mkfs"),
            );
            // 12 MiB over a flush group of four 2.25 MiB zones: the first group fills and
            // retires, the file goes on in a second group.
            let a = bytes(1, 12 << 20);
            write(&fs, "000010.sst", FLUSH, &a).await;
            let b = bytes(2, 1 << 20);
            write(&fs, "000011.sst", compaction(1), &b).await;
            let before = fs.stats().zones.resets;
            fs.delete("000010.sst").await.expect("deletes");
            let at_delete = fs.stats().zones.resets - before;
            if reclaim {
                assert_eq!(at_delete, 0, "reclaiming leaves the resets to the minor GC");
                // The first group's four zones are dead; the second group is open (its
                // zones wait for the next flush) and the compaction file is live.
                assert_eq!(fs.minor_gc().await.expect("minor GC"), 4);
                assert_eq!(fs.minor_gc().await.expect("minor GC"), 0);
                let z = fs.stats().zones;
                assert_eq!((z.minor_gc_passes, z.minor_gc_resets), (2, 4));
                // The pass comes by itself once 10 s of virtual time have gone by.
                sim2.sleep(sim::SimDuration::from_secs(11)).await;
                write(&fs, "000012.sst", FLUSH, &bytes(3, 1 << 20)).await;
                sim2.sleep(sim::SimDuration::from_secs(1)).await;
                assert_eq!(fs.stats().zones.minor_gc_passes, 3);
            } else {
                assert_eq!(at_delete, 4, "without reclaiming the delete resets");
                assert_eq!(fs.stats().zones.minor_gc_passes, 0);
            }
            assert_eq!(read_all(&fs, "000011.sst").await, b);
        });
    }
}

/// With resets left to the minor GC, a device whose free zones are all dead still takes
/// new files: allocation resets dead zones rather than fail.
#[test]
fn reclaiming_never_runs_out_of_space_that_dead_zones_hold() {
    let (sim, dev) = short_zones();
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs_with(io, plus_short(true)).await.expect("mkfs"));
        // 512 zones of 2.25 MiB = 1.1 GiB; write and delete 3 GiB in 24 MiB files without
        // letting virtual time reach the minor GC's period.
        for i in 0..128u64 {
            let name = format!("{:06}.sst", 100 + i);
            write(&fs, &name, compaction(1), &bytes(i, 24 << 20)).await;
            fs.delete(&name).await.expect("deletes");
        }
        assert!(fs.stats().zones.resets > 0);
    });
}

/// §IV-D's full GC: with a partition short of free space, the groups with the least live data
/// are copied out and reset; every live file reads back the same, before and after a remount
/// (the copies are logged as the files' new extents).
#[test]
fn full_gc_keeps_every_live_extent_and_frees_the_partition() {
    full_gc_run(true);
}

/// A burst of writes between two GC passes fills the partition: the writer that meets NoSpace
/// runs the full GC itself, in the empty zone writers leave it (without that reserve, this
/// fails at the 262nd table).
#[test]
fn the_full_gc_reserve_lets_a_writer_that_meets_no_space_make_room() {
    full_gc_run(false);
}

/// Four times the compaction partition of tables through the full GC, run every 10 tables
/// (`timer`) or only when a writer meets NoSpace.
/// The small-zone device with zones of 0.75 MiB (12 multi-plane pages), whose partitions a
/// few hundred MiB fill, and ZenFS+ over all its groups with groups of four zones (a group is
/// as small a share of this small partition as the paper's 16-zone groups are of its 29,172
/// zones' partitions).
fn gc_device(seed: u64) -> (Sim, DeviceHandle, MkfsOptions) {
    let mut cfg = presets::zenfsplus_hynix_zones("zenfsplus-short", 16 * 32);
    cfg.nand.pages_per_block = 12;
    let sim = Sim::new(seed);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
    let opts = MkfsOptions {
        izg_probe: Some(ProbeConfig {
            write_bytes: Some(256 << 10),
            ..ProbeConfig::write_periodic()
        }),
        ..plus(PlusConfig {
            izgs: 0,
            max_width: 4,
            ..PlusConfig::default()
        })
    };
    (sim, dev, opts)
}

fn full_gc_run(timer: bool) {
    let (sim, dev, opts) = gc_device(1);
    let io = host(&sim, &dev);
    let fs = sim.block_on(async move { Rc::new(ZoneFs::mkfs_with(io, opts).await.expect("mkfs")) });
    let fs2 = fs.clone();
    let kept: Vec<(String, Vec<u8>)> = sim.block_on(async move {
        let fs = fs2;
        // The compaction partition (24 IZGs x 16 zones of 0.75 MiB = 288 MiB) written four
        // times over with 1 MiB L1 and L2 tables, two of every three deleted as they go, the
        // last 220 of the others kept (220 MiB live, 76 % of the partition): only the GCs make
        // room, and the reserve they keep lets them always make it (no NoSpace).
        let mut kept: std::collections::VecDeque<(String, Vec<u8>)> = Default::default();
        for i in 0..4 * 288u64 {
            let name = format!("{:06}.sst", 100 + i);
            let data = bytes(1000 + i, 1 << 20);
            let class = compaction(1 + (i % 2) as u32);
            let mut w = fs
                .writer_for(&name, Lifetime::Medium, class)
                .await
                .expect("creates");
            w.append(&data)
                .await
                .unwrap_or_else(|e| panic!("table {i}: {e}"));
            w.close().await.unwrap_or_else(|e| panic!("table {i}: {e}"));
            if i % 3 == 2 {
                kept.push_back((name, data));
                if kept.len() > 220 {
                    let (old, _) = kept.pop_front().expect("kept");
                    fs.delete(&old).await.expect("deletes");
                }
            } else {
                fs.delete(&name).await.expect("deletes");
            }
            // Dead zones are space only once reset: the minor GC's work, then the full GC's
            // (as the 10 s timer runs them; 10 tables are well within the 10 % trigger).
            if timer && (i + 1).is_multiple_of(10) {
                fs.minor_gc().await.expect("minor GC");
                fs.full_gc().await.expect("full GC");
            }
        }
        Vec::from(kept)
    });
    let z = fs.stats().zones;
    assert_eq!(kept.len(), 220);
    assert!(z.full_gc_passes > 0 && z.full_gc_zones > 0, "{z:?}");
    assert!(z.gc_bytes_written > 0);
    // It copied less than it freed: the victims were mostly dead.
    assert!(
        z.gc_bytes_written < z.full_gc_zones * (3 << 18),
        "{} bytes copied to empty {} zones",
        z.gc_bytes_written,
        z.full_gc_zones
    );
    let fs4 = fs.clone();
    let k2 = kept.clone();
    sim.block_on(async move {
        for (name, data) in &k2 {
            assert_eq!(&read_all(&fs4, name).await, data, "{name}");
        }
    });
    drop(fs);
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        for (name, data) in &kept {
            assert_eq!(&read_all(&fs, name).await, data, "{name} after a remount");
        }
    });
}

/// Power cuts while the full GC copies and resets (§IV-D under cuts): every table closed and
/// not deleted reads back whole after the remount, whichever GC step the cut fell in (a copy
/// written but not logged, logged but its zone not reset, a victim reset).
#[test]
fn power_cuts_during_the_full_gc_keep_every_closed_table() {
    let mut cut_in_gc = 0;
    for seed in 1..=4u64 {
        let (sim, dev, opts) = gc_device(seed);
        let io = host(&sim, &dev);
        let fs =
            sim.block_on(async move { Rc::new(ZoneFs::mkfs_with(io, opts).await.expect("mkfs")) });
        // The tables closed and not deleted (a delete takes its table out first).
        type Model = Rc<std::cell::RefCell<std::collections::BTreeMap<String, Vec<u8>>>>;
        let model: Model = Rc::default();
        let (fs2, m2) = (fs.clone(), model.clone());
        sim.spawn(async move {
            let mut ring = std::collections::VecDeque::new();
            for i in 0..8 * 288u64 {
                let name = format!("{:06}.sst", 100 + i);
                let data = bytes(seed * 10_000 + i, 1 << 20);
                let mut w = fs2
                    .writer_for(&name, Lifetime::Medium, compaction(1 + (i % 2) as u32))
                    .await
                    .expect("creates");
                w.append(&data).await.expect("appends");
                w.close().await.expect("closes");
                m2.borrow_mut().insert(name.clone(), data);
                let gone = if i % 3 == 2 {
                    ring.push_back(name);
                    (ring.len() > 200).then(|| ring.pop_front().expect("kept"))
                } else {
                    Some(name)
                };
                if let Some(g) = gone {
                    m2.borrow_mut().remove(&g);
                    fs2.delete(&g).await.expect("deletes");
                }
            }
        });
        // Run until the full GC has run a few times, then a little more, and cut.
        let mut rng = Rng::new(seed);
        let passes = 1 + rng.below(6);
        while fs.stats().zones.full_gc_passes < passes {
            sim.run_until(sim.now() + sim::SimDuration::from_ms(5));
        }
        sim.run_until(sim.now() + sim::SimDuration::from_us(rng.below(40_000)));
        let z = fs.stats().zones;
        cut_in_gc += usize::from(z.full_gc_zones > 0);
        sim.power_cut();
        drop(fs);
        let io = host(&sim, &dev);
        let kept = model.borrow().clone();
        assert!(kept.len() > 50, "{} tables", kept.len());
        sim.block_on(async move {
            let fs = ZoneFs::mount(io).await.expect("mounts");
            for (name, data) in &kept {
                assert_eq!(
                    &read_all(&fs, name).await,
                    data,
                    "{name} after the cut (seed {seed})"
                );
            }
        });
    }
    assert!(cut_in_gc > 0);
}
