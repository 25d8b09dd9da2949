//! The F2FS-like file system (`host::lfs`) on the in-memory ZNS+ backend and on the znsplus
//! device: real bytes back, directories, space freed, GC at high utilisation in every scheme,
//! power cuts, IZC's offload, threaded logging.

use std::collections::BTreeMap;
use std::rc::Rc;

use host::fs::{FileSystem, FsError};
use host::lfs::{CachedCopy, Lfs, LfsConfig, MemMeta};
use host::{HostIo, IoConfig, MemZoned, ZonedBackend};
use sim::{Rng, Sim};

/// `zones` zones of 4 MiB (two segments a section), ZNS+ commands taken.
fn mem_dev(sim: &Sim, zones: u32) -> Rc<MemZoned> {
    Rc::new(MemZoned::new(sim, 4096, zones, 1024, 1024, 14, 14).with_znsplus(6))
}

fn meta() -> Rc<MemMeta> {
    Rc::new(MemMeta::new(1 << 20))
}

fn small(mut cfg: LfsConfig) -> LfsConfig {
    cfg.page_cache_pages = 256;
    cfg
}

fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill(&mut v);
    v
}

async fn read_all<F: FileSystem>(fs: &F, path: &str) -> Vec<u8> {
    let ino = fs.lookup(path).await.unwrap();
    let size = fs.size(ino).unwrap() as usize;
    let mut buf = vec![0u8; size];
    assert_eq!(fs.read(ino, 0, &mut buf).await.unwrap(), size);
    buf
}

#[test]
fn files_read_back_what_was_written_before_and_after_remount() {
    let sim = Sim::new(1);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    let mut rng = sim.rng("lfs-test");
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev.clone(), meta.clone(), small(LfsConfig::zns()))
            .await
            .unwrap();
        let mut model = BTreeMap::new();
        for i in 0..60 {
            let path = format!("/f{i}");
            let ino = fs.create(&path).await.unwrap();
            let len = rng.below(300_000) as usize;
            let data = bytes(&mut rng, len);
            // Written in odd pieces.
            let mut at = 0;
            while at < len {
                let n = (1 + rng.below(20_000) as usize).min(len - at);
                fs.write(ino, at as u64, &data[at..at + n]).await.unwrap();
                at += n;
            }
            model.insert(path, data);
        }
        // A sparse write: the gap reads as zeros.
        let ino = fs.create("/sparse").await.unwrap();
        fs.write(ino, 20_000, b"tail").await.unwrap();
        let mut want = vec![0u8; 20_004];
        want[20_000..].copy_from_slice(b"tail");
        model.insert("/sparse".into(), want);
        for (p, d) in &model {
            assert_eq!(&read_all(&fs, p).await, d, "{p}");
        }
        fs.sync().await.unwrap();
        fs.check_consistency().unwrap();
        drop(fs);
        let fs = Lfs::mount(dev, meta, small(LfsConfig::zns()))
            .await
            .unwrap();
        fs.check_consistency().unwrap();
        for (p, d) in &model {
            assert_eq!(&read_all(&fs, p).await, d, "{p} after remount");
        }
        let c = fs.counters();
        assert!(c.cache_misses > 0 && c.checkpoints.mount == 1);
    });
}

#[test]
fn directories_nest_list_and_refuse_what_posix_refuses() {
    let sim = Sim::new(2);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev.clone(), meta.clone(), small(LfsConfig::izc()))
            .await
            .unwrap();
        fs.mkdir("/a").await.unwrap();
        fs.mkdir("/a/b").await.unwrap();
        // Enough names to take several dentry blocks.
        for i in 0..500 {
            fs.create(&format!("/a/b/file-with-a-longish-name-{i:04}"))
                .await
                .unwrap();
        }
        assert_eq!(fs.readdir("/a").await.unwrap(), vec!["b".to_string()]);
        assert_eq!(fs.readdir("/a/b").await.unwrap().len(), 500);
        assert!(matches!(
            fs.create("/a/b/file-with-a-longish-name-0001").await,
            Err(FsError::Exists(_))
        ));
        assert!(matches!(fs.create("/x/y").await, Err(FsError::NotFound(_))));
        assert!(matches!(fs.rmdir("/a").await, Err(FsError::NotEmpty(_))));
        assert!(matches!(
            fs.unlink("/a").await,
            Err(FsError::IsADirectory(_))
        ));
        assert!(matches!(
            fs.rmdir("/a/b/file-with-a-longish-name-0001").await,
            Err(FsError::NotADirectory(_))
        ));
        let long = format!("/{}", "n".repeat(256));
        assert!(matches!(fs.create(&long).await, Err(FsError::Invalid(_))));
        assert!(fs.stat("/a/b").await.unwrap().is_dir);
        for i in 0..250 {
            fs.unlink(&format!("/a/b/file-with-a-longish-name-{i:04}"))
                .await
                .unwrap();
        }
        fs.create("/a/b/new").await.unwrap();
        fs.sync().await.unwrap();
        drop(fs);
        let fs = Lfs::mount(dev, meta, small(LfsConfig::izc()))
            .await
            .unwrap();
        let names = fs.readdir("/a/b").await.unwrap();
        assert_eq!(names.len(), 251);
        assert!(names.contains(&"new".to_string()));
        assert!(names.contains(&"file-with-a-longish-name-0499".to_string()));
        fs.check_consistency().unwrap();
    });
}

#[test]
fn unlink_frees_space_and_its_sections_come_back_after_a_checkpoint() {
    let sim = Sim::new(3);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    let mut rng = sim.rng("lfs-unlink");
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev, meta, small(LfsConfig::zns())).await.unwrap();
        let free0 = fs.free_sections();
        let data = bytes(&mut rng, 8 << 20);
        for i in 0..4 {
            let ino = fs.create(&format!("/big{i}")).await.unwrap();
            fs.write(ino, 0, &data).await.unwrap();
        }
        fs.sync().await.unwrap();
        let (cap, used) = fs.capacity();
        assert!(used >= 32 << 20 && used < cap, "{used}");
        assert!(fs.free_sections() + 8 <= free0);
        for i in 0..4 {
            fs.unlink(&format!("/big{i}")).await.unwrap();
        }
        assert!(fs.capacity().1 < 1 << 20);
        fs.sync().await.unwrap();
        assert!(
            fs.free_sections() + 2 >= free0,
            "{} vs {free0}",
            fs.free_sections()
        );
        assert!(fs.counters().zone_resets >= 8);
        assert!(matches!(
            fs.lookup("/big0").await,
            Err(FsError::NotFound(_))
        ));
        fs.check_consistency().unwrap();
    });
}

/// Fill ~90 % of the user capacity with files, then rewrite random parts of random files
/// `rounds` times the capacity; check every file. Returns the file system's counters and
/// the files' contents.
fn churn(
    cfg: LfsConfig,
    seed: u64,
    rounds: u64,
) -> (host::lfs::LfsCounters, BTreeMap<String, Vec<u8>>) {
    churn_cut(cfg, seed, rounds, false)
}

/// `churn`, and with `cut` a power cut at its end instead of a sync: files not written since
/// their last fsync must come back exactly.
fn churn_cut(
    cfg: LfsConfig,
    seed: u64,
    rounds: u64,
    cut: bool,
) -> (host::lfs::LfsCounters, BTreeMap<String, Vec<u8>>) {
    let sim = Sim::new(seed);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    let mut rng = Rng::new(seed);
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev.clone(), meta.clone(), cfg.clone())
            .await
            .unwrap();
        let (cap, _) = fs.capacity();
        let file = 256 << 10;
        let files = (cap * 9 / 10 / file) as usize;
        let mut model: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        for i in 0..files {
            let p = format!("/f{i}");
            let ino = fs.create(&p).await.unwrap();
            let d = bytes(&mut rng, file as usize);
            fs.write(ino, 0, &d).await.unwrap();
            model.insert(p, d);
        }
        fs.sync().await.unwrap();
        // Files whose bytes are durable as the model has them.
        let mut clean: std::collections::BTreeSet<String> = model.keys().cloned().collect();
        let mut written = 0;
        while written < rounds * cap {
            let i = rng.below(files as u64);
            let p = format!("/f{i}");
            let ino = fs.lookup(&p).await.unwrap();
            let len = 4096 * (1 + rng.below(16)) as usize;
            let at = 4096 * rng.below((file as usize / 4096 - len / 4096) as u64 + 1) as usize;
            let d = bytes(&mut rng, len);
            fs.write(ino, at as u64, &d).await.unwrap();
            model.get_mut(&p).unwrap()[at..at + len].copy_from_slice(&d);
            clean.remove(&p);
            written += len as u64;
            if rng.chance(1, 50) {
                fs.fsync(ino).await.unwrap();
                clean.insert(p);
            }
        }
        for (p, d) in &model {
            assert_eq!(&read_all(&fs, p).await, d, "{p}");
        }
        if cut {
            let counters = fs.counters();
            drop(fs);
            let fs = Lfs::mount(dev, meta, cfg).await.unwrap();
            fs.check_consistency().unwrap();
            for p in &clean {
                assert_eq!(&read_all(&fs, p).await, &model[p], "{p} after the cut");
            }
            for p in model.keys() {
                assert_eq!(read_all(&fs, p).await.len(), file as usize, "{p}");
            }
            return (counters, model);
        }
        fs.sync().await.unwrap();
        fs.check_consistency().unwrap();
        let counters = fs.counters();
        // Unmount closes the threaded logs' zones.
        fs.unmount().await.unwrap();
        assert!((0..40).all(|z| !dev.is_tl_open(z)));
        let fs = Lfs::mount(dev, meta, cfg).await.unwrap();
        for (p, d) in &model {
            assert_eq!(&read_all(&fs, p).await, d, "{p} after remount");
        }
        (counters, model)
    })
}

#[test]
fn zones_with_a_capacity_of_no_whole_segments_are_finished_when_left() {
    let sim = Sim::new(4);
    // 1100 writable blocks: sections of 1024, a 76-block tail.
    let dev = Rc::new(MemZoned::new(&sim, 4096, 40, 2048, 1100, 14, 14).with_znsplus(6));
    let mut rng = Rng::new(4);
    let d2 = dev.clone();
    sim.block_on(async move {
        let fs = Lfs::mkfs(d2.clone(), meta(), small(LfsConfig::izc()))
            .await
            .unwrap();
        let ino = fs.create("/f").await.unwrap();
        let d = bytes(&mut rng, 20 << 20);
        fs.write(ino, 0, &d).await.unwrap();
        for _ in 0..3 {
            fs.write(ino, 0, &d).await.unwrap();
        }
        fs.sync().await.unwrap();
        assert_eq!(read_all(&fs, "/f").await, d);
        fs.check_consistency().unwrap();
        let zones = d2.report_zones().await.unwrap();
        let open = zones
            .iter()
            .filter(|z| {
                matches!(
                    z.state,
                    device::ZoneState::ImplicitlyOpened
                        | device::ZoneState::ExplicitlyOpened
                        | device::ZoneState::Closed
                )
            })
            .count();
        // Only the six logs' current zones are open.
        assert!(open <= 6, "{open} zones open");
    });
}

#[test]
fn gc_at_ninety_percent_keeps_every_byte() {
    let (c, _) = churn(small(LfsConfig::zns()), 11, 3);
    assert!(c.waf() > 1.0, "{}", c.waf());
    assert!(c.gc_phases.runs >= 10, "{:?}", c.gc_phases);
    assert!(c.sections_reclaimed_sc >= 10);
    assert!(c.checkpoints.gc >= 2);
    assert!(c.gc_host_reads > 0 && c.gc_device_copies == 0);
    // MemZoned takes no time: the reads' time is the page allocations' (1 µs each).
    assert_eq!(c.gc_phases.read_ns, c.gc_host_reads * 1000);
}

#[test]
fn every_scheme_gives_the_same_files_and_izc_offloads_copies() {
    let zns = churn(small(LfsConfig::zns()), 21, 2);
    let izc_h = churn(small(LfsConfig::izc()), 21, 2);
    let izc_d = churn(
        small(LfsConfig {
            cached_copy: CachedCopy::Device,
            ..LfsConfig::izc()
        }),
        21,
        2,
    );
    let cub = churn(
        small(LfsConfig {
            copyback_aware: false,
            ..LfsConfig::izc()
        }),
        21,
        2,
    );
    let plus = churn(small(LfsConfig::zns_plus()), 21, 2);
    for other in [&izc_h, &izc_d, &cub, &plus] {
        assert_eq!(other.1, zns.1);
    }
    let (z, h, d) = (&zns.0, &izc_h.0, &izc_d.0);
    assert!(h.zone_compactions > 0 && h.gc_device_copies > 0);
    assert!(
        h.gc_host_copies < z.gc_host_copies,
        "{} vs {}",
        h.gc_host_copies,
        z.gc_host_copies
    );
    assert_eq!(z.zone_compactions, 0);
    // IZC-D leaves clean cached blocks to the device: no more host copies than IZC-H.
    assert!(d.gc_host_copies <= h.gc_host_copies);
    // MemZoned reports no chip mapping: CAB has nothing to go on, so CAB = CUB here.
    assert_eq!(cub.0.copyback_chunks, 0);
}

#[test]
fn threaded_logging_reclaims_sections_under_zns_plus() {
    let (c, _) = churn(small(LfsConfig::zns_plus()), 31, 3);
    assert!(c.tl_opens > 0 && c.sections_reclaimed_tl > 0, "{c:?}");
    assert!(c.tl_blocks > 0 && c.tl_plug_blocks > 0);
    assert_eq!(c.tl_opens, c.sections_reclaimed_tl);
    assert!(c.tl_closes + 6 >= c.tl_opens);
    // Without threaded logging no section is reclaimed that way.
    let (z, _) = churn(small(LfsConfig::izc()), 31, 3);
    assert_eq!((z.tl_opens, z.sections_reclaimed_tl), (0, 0));
    assert!(z.sections_reclaimed_sc > c.sections_reclaimed_sc);
}

#[test]
fn periodic_checkpoints_follow_pre_invalid_blocks() {
    let cfg = LfsConfig {
        periodic_cp_blocks: Some(2048),
        ..small(LfsConfig::zns_plus())
    };
    let (c, _) = churn(cfg, 41, 2);
    assert!(c.checkpoints.periodic > 0, "{:?}", c.checkpoints);
    let (z, _) = churn(small(LfsConfig::izc()), 41, 2);
    assert_eq!(z.checkpoints.periodic, 0);
}

#[test]
fn power_cuts_during_gc_and_threaded_logging_keep_fsynced_files() {
    for (seed, cfg) in [
        (51, LfsConfig::zns()),
        (52, LfsConfig::izc()),
        (53, LfsConfig::zns_plus()),
        (54, LfsConfig::zns_plus()),
    ] {
        let (c, _) = churn_cut(small(cfg.clone()), seed, 2, true);
        assert!(c.fsyncs > 0 && c.gc_phases.runs > 0);
        if cfg.threaded_logging {
            assert!(c.tl_opens > 0);
        }
    }
}

/// A seeded workload of creates, appends, fsyncs, syncs and unlinks cut at a random
/// operation; after mount every fsynced file has its fsynced bytes and the rest of the
/// state is consistent.
fn power_cut(seed: u64, cfg: LfsConfig) {
    let sim = Sim::new(seed);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    let mut rng = Rng::new(seed);
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev.clone(), meta.clone(), cfg.clone())
            .await
            .unwrap();
        fs.mkdir("/d").await.unwrap();
        fs.sync().await.unwrap();
        let cut = 50 + rng.below(400);
        let mut cur: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut durable: BTreeMap<String, Vec<u8>> = BTreeMap::new();
        let mut next = 0;
        for _ in 0..cut {
            let names: Vec<String> = cur.keys().cloned().collect();
            match rng.below(20) {
                0..=3 => {
                    let p = format!("/d/f{next}");
                    next += 1;
                    fs.create(&p).await.unwrap();
                    cur.insert(p, vec![]);
                }
                4..=13 if !names.is_empty() => {
                    let p = &names[rng.below(names.len() as u64) as usize];
                    let n = 1 + rng.below(40_000) as usize;
                    let d = bytes(&mut rng, n);
                    let ino = fs.lookup(p).await.unwrap();
                    let at = cur[p].len() as u64;
                    fs.write(ino, at, &d).await.unwrap();
                    cur.get_mut(p).unwrap().extend_from_slice(&d);
                }
                14..=17 if !names.is_empty() => {
                    let p = &names[rng.below(names.len() as u64) as usize];
                    fs.fsync(fs.lookup(p).await.unwrap()).await.unwrap();
                    durable.insert(p.clone(), cur[p].clone());
                }
                18 => {
                    fs.sync().await.unwrap();
                    durable = cur.clone();
                }
                _ if !names.is_empty() => {
                    let p = &names[rng.below(names.len() as u64) as usize];
                    fs.unlink(p).await.unwrap();
                    cur.remove(p);
                    // Unlinks are durable only at a checkpoint: the file may come back.
                    durable.remove(p);
                }
                _ => {}
            }
        }
        // Power cut: the mounted object goes away without unmount.
        drop(fs);
        let fs = Lfs::mount(dev.clone(), meta.clone(), cfg.clone())
            .await
            .unwrap();
        fs.check_consistency().unwrap();
        for (p, d) in &durable {
            let got = read_all(&fs, p).await;
            assert!(
                got.len() >= d.len(),
                "{p}: {} bytes, fsynced {}",
                got.len(),
                d.len()
            );
            assert_eq!(&got[..d.len()], &d[..], "{p}");
        }
        // Life goes on, and a second mount after a sync gives the exact state.
        let ino = fs.create("/after").await.unwrap();
        fs.write(ino, 0, b"after the cut").await.unwrap();
        fs.sync().await.unwrap();
        let names = fs.readdir("/d").await.unwrap();
        let mut state = BTreeMap::new();
        for n in &names {
            let p = format!("/d/{n}");
            state.insert(p.clone(), read_all(&fs, &p).await);
        }
        drop(fs);
        let fs = Lfs::mount(dev, meta, cfg).await.unwrap();
        assert_eq!(read_all(&fs, "/after").await, b"after the cut");
        for (p, d) in &state {
            assert_eq!(&read_all(&fs, p).await, d, "{p}");
        }
        fs.check_consistency().unwrap();
    });
}

#[test]
fn power_cuts_keep_fsynced_files_and_checkpoints() {
    for seed in 0..12 {
        power_cut(seed, small(LfsConfig::zns()));
    }
    for seed in 100..106 {
        power_cut(seed, small(LfsConfig::zns_plus()));
    }
}

#[test]
fn fsync_rolls_forward_without_a_checkpoint() {
    let sim = Sim::new(5);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev.clone(), meta.clone(), small(LfsConfig::zns()))
            .await
            .unwrap();
        fs.mkdir("/d").await.unwrap();
        fs.sync().await.unwrap();
        let cps = fs.counters().checkpoints;
        let ino = fs.create("/d/new").await.unwrap();
        fs.write(ino, 0, &vec![7u8; 10_000]).await.unwrap();
        fs.fsync(ino).await.unwrap();
        // No checkpoint: the parent is checkpointed and the file is regular.
        assert_eq!(fs.counters().checkpoints, cps);
        assert_eq!(fs.counters().fsyncs, 1);
        drop(fs);
        let fs = Lfs::mount(dev, meta, small(LfsConfig::zns()))
            .await
            .unwrap();
        assert!(fs.counters().recovered_nodes >= 1);
        assert_eq!(read_all(&fs, "/d/new").await, vec![7u8; 10_000]);
        fs.check_consistency().unwrap();
        // need_do_checkpoint: a file whose directory is not checkpointed, and a directory.
        fs.mkdir("/e").await.unwrap();
        let x = fs.create("/e/x").await.unwrap();
        fs.write(x, 0, b"x").await.unwrap();
        let before = fs.counters().checkpoints.fsync;
        fs.fsync(x).await.unwrap();
        assert_eq!(fs.counters().checkpoints.fsync, before + 1);
        fs.fsync(fs.lookup("/e").await.unwrap()).await.unwrap();
        assert_eq!(fs.counters().checkpoints.fsync, before + 2);
    });
}

/// A `znsplus-mlc` device with fewer chips (4 × 1: 8 MiB zones) and zones (32) than the
/// preset: six open logs and the reserve leave room for files on a small device.
fn znsplus_device(sim: &Sim) -> device::DeviceHandle {
    let mut cfg = device::presets::znsplus_mlc();
    cfg.nand.channels = 4;
    cfg.nand.dies_per_channel = 1;
    cfg.zones.count = Some(32);
    cfg.nand.blocks_per_plane = 36;
    device::DeviceHandle::new(sim, device::Controller::in_memory(cfg).unwrap())
}

/// A host on the device: what a reboot gives.
fn host_io(sim: &Sim, dev: &device::DeviceHandle) -> Rc<HostIo> {
    Rc::new(HostIo::new(
        dev,
        Rc::new(sim::cpu::CpuPool::new(sim, 2)),
        IoConfig::default(),
    ))
}

fn device_cfg(base: LfsConfig) -> LfsConfig {
    LfsConfig {
        reserved_sections: Some(4),
        overprovision_pct: Some(5.0),
        page_cache_pages: 256,
        ..base
    }
}

#[test]
fn izc_gc_runs_end_to_end_on_the_znsplus_device() {
    let izc = device_churn(LfsConfig::izc());
    let c = &izc;
    assert!(c.zone_compactions > 0 && c.gc_device_copies > 0, "{c:?}");
    // The device's identify_mapping lets CAB put whole chunks on their chips.
    assert!(c.copyback_chunks > 0, "{c:?}");
    assert!(c.gc_phases.izc_ns > 0 && c.gc_phases.checkpoint_ns > 0);
    assert_eq!(c.gc_phases.read_ns, 0);
    // The same run with host copies: reads then writes, slower per compaction (Fig. 6).
    let zns = device_churn(LfsConfig::zns());
    let p = zns.gc_phases;
    assert!(p.read_ns > 0 && p.write_ns > 0 && p.izc_ns == 0, "{p:?}");
    // One by one (the default), each host read waits for the one before: at least an MLC
    // array read (35 µs) per block. In flight together (F2FS's code), the read phase takes
    // far less than that.
    assert!(
        p.read_ns > zns.gc_host_reads * 35_000,
        "{} reads took {} ns",
        zns.gc_host_reads,
        p.read_ns
    );
    let fl = device_churn(LfsConfig {
        gc_reads: host::lfs::GcReads::InFlight,
        ..LfsConfig::zns()
    });
    assert!(
        fl.gc_host_reads > 0 && fl.gc_phases.read_ns < fl.gc_host_reads * 35_000 / 2,
        "{} reads in flight took {} ns",
        fl.gc_host_reads,
        fl.gc_phases.read_ns
    );
    let per = |c: &host::lfs::LfsCounters| {
        let p = c.gc_phases;
        (p.init_ns + p.read_ns + p.write_ns + p.izc_ns) / p.runs.max(1)
    };
    eprintln!(
        "NUM izc {} zns {} {:?} {:?}",
        per(&izc),
        per(&zns),
        izc.gc_phases,
        zns.gc_phases
    );
    assert!(
        per(&izc) < per(&zns),
        "IZC {} ns, ZNS {} ns",
        per(&izc),
        per(&zns)
    );
    let cub = device_churn(LfsConfig {
        copyback_aware: false,
        ..LfsConfig::izc()
    });
    let share =
        |c: &host::lfs::LfsCounters| c.copyback_chunks * 4 * 100 / c.gc_device_copies.max(1);
    eprintln!(
        "NUM cab {} cub {} host izc {} zns {}",
        share(&izc),
        share(&cub),
        izc.gc_host_copies,
        zns.gc_host_copies
    );
    assert!(
        share(&izc) > share(&cub),
        "CAB {} %, CUB {} %",
        share(&izc),
        share(&cub)
    );
}

#[test]
fn threaded_logging_runs_end_to_end_on_the_znsplus_device() {
    // The device takes TL_open: ZNS+ reclaims sections by threaded logging there, the device
    // plugs the valid blocks, and every byte reads back (device_churn checks them).
    let c = device_churn(LfsConfig::zns_plus());
    assert!(c.tl_opens > 0 && c.sections_reclaimed_tl > 0, "{c:?}");
}

/// Fill a `znsplus_device` to 70 % with 1 MiB files, rewrite random pieces of them the
/// capacity over, check every byte; the counters.
fn device_churn(base: LfsConfig) -> host::lfs::LfsCounters {
    let sim = Sim::new(7);
    let dev = znsplus_device(&sim);
    let io = host_io(&sim, &dev);
    let mut rng = Rng::new(7);
    let fscfg = device_cfg(base);
    let s2 = sim.clone();
    sim.block_on(async move {
        let fs = Lfs::mkfs(io, meta(), fscfg).await.unwrap();
        let (cap, _) = fs.capacity();
        let file = 1 << 20;
        let files = (cap * 70 / 100 / file) as usize;
        let mut model = BTreeMap::new();
        for i in 0..files {
            let ino = fs.create(&format!("/f{i}")).await.unwrap();
            let d = bytes(&mut rng, file as usize);
            fs.write(ino, 0, &d).await.unwrap();
            model.insert(format!("/f{i}"), d);
        }
        let t0 = s2.now();
        let mut written = 0;
        while written < cap {
            let i = rng.below(files as u64);
            let p = format!("/f{i}");
            let len = 4096 * (1 + rng.below(32)) as usize;
            let at = 4096 * rng.below((file as usize - len) as u64 / 4096 + 1) as usize;
            let d = bytes(&mut rng, len);
            fs.write(fs.lookup(&p).await.unwrap(), at as u64, &d)
                .await
                .unwrap();
            model.get_mut(&p).unwrap()[at..at + len].copy_from_slice(&d);
            written += len as u64;
        }
        for (p, d) in &model {
            assert_eq!(&read_all(&fs, p).await, d, "{p}");
        }
        fs.check_consistency().unwrap();
        assert!(s2.now() > t0);
        fs.counters()
    })
}

/// The shared view of a workload cut by a power failure: the files' contents as written and
/// the files not written since their last completed fsync.
type Model = Rc<
    std::cell::RefCell<(
        BTreeMap<String, Vec<u8>>,
        std::collections::BTreeSet<String>,
    )>,
>;

/// On the device, a power cut at a random instant (mid-write, mid-GC, mid-checkpoint):
/// mount succeeds, the SIT matches the node tree, and every file not written since its
/// last completed fsync reads back exactly.
fn device_power_cut(seed: u64, base: LfsConfig) -> u64 {
    let sim = Sim::new(seed);
    let dev = znsplus_device(&sim);
    let meta = meta();
    let cfg = device_cfg(base);
    let model: Model = Default::default();
    let mut rng = Rng::new(seed);
    let file = 1usize << 20;
    // Fill 60 % and sync.
    let (io, m2, c2, mo) = (
        host_io(&sim, &dev),
        meta.clone(),
        cfg.clone(),
        model.clone(),
    );
    let files = sim.block_on(async move {
        let fs = Lfs::mkfs(io, m2, c2).await.unwrap();
        let files = (fs.capacity().0 * 60 / 100) as usize / file;
        let mut r = Rng::new(seed ^ 1);
        for i in 0..files {
            let p = format!("/f{i}");
            let ino = fs.create(&p).await.unwrap();
            let d = bytes(&mut r, file);
            fs.write(ino, 0, &d).await.unwrap();
            let mut m = mo.borrow_mut();
            m.0.insert(p.clone(), d);
            m.1.insert(p);
        }
        fs.sync().await.unwrap();
        files
    });
    // Churn in a task; cut it at a random instant.
    let (io, m2, c2, mo) = (
        host_io(&sim, &dev),
        meta.clone(),
        cfg.clone(),
        model.clone(),
    );
    let mut r = Rng::new(seed ^ 2);
    let gc_runs = Rc::new(std::cell::Cell::new(0));
    let g2 = gc_runs.clone();
    sim.spawn(async move {
        let fs = Lfs::mount(io, m2, c2).await.unwrap();
        loop {
            g2.set(fs.counters().gc_phases.runs);
            let p = format!("/f{}", r.below(files as u64));
            let ino = fs.lookup(&p).await.unwrap();
            if r.chance(1, 8) {
                fs.fsync(ino).await.unwrap();
                mo.borrow_mut().1.insert(p);
                continue;
            }
            let len = 4096 * (1 + r.below(32)) as usize;
            let at = 4096 * r.below(((file - len) / 4096 + 1) as u64) as usize;
            let d = bytes(&mut r, len);
            mo.borrow_mut().1.remove(&p);
            fs.write(ino, at as u64, &d).await.unwrap();
            mo.borrow_mut().0.get_mut(&p).unwrap()[at..at + len].copy_from_slice(&d);
        }
    });
    let t = sim.now().as_ns() + 200_000_000 + rng.below(1_500_000_000);
    sim.run_until(sim::SimInstant::from_ns(t));
    sim.power_cut();
    let io = host_io(&sim, &dev);
    sim.block_on(async move {
        let fs = Lfs::mount(io, meta, cfg).await.unwrap();
        fs.check_consistency().unwrap();
        // The task is gone: the model is no longer shared.
        let m = model.borrow().clone();
        assert!(!m.1.is_empty());
        for p in &m.1 {
            assert_eq!(read_all(&fs, p).await, m.0[p], "{p} after the cut");
        }
        for p in m.0.keys() {
            assert_eq!(read_all(&fs, p).await.len(), file, "{p}");
        }
    });
    gc_runs.get()
}

#[test]
fn power_cuts_at_random_instants_on_the_device() {
    let mut gc = 0;
    for seed in 1..4 {
        gc += device_power_cut(seed, LfsConfig::izc());
    }
    gc += device_power_cut(9, LfsConfig::zns());
    // ZNS+: cuts in the middle of threaded logging on the device (TL-open zones, plugging).
    for seed in 20..24 {
        gc += device_power_cut(seed, LfsConfig::zns_plus());
    }
    // The cuts come after segment compaction has run.
    assert!(gc > 0);
}

#[test]
fn concurrent_tasks_share_the_file_system_on_the_device() {
    let sim = Sim::new(12);
    let dev = znsplus_device(&sim);
    let io = host_io(&sim, &dev);
    let s2 = sim.clone();
    sim.block_on(async move {
        let fs = Rc::new(
            Lfs::mkfs(io, meta(), device_cfg(LfsConfig::izc()))
                .await
                .unwrap(),
        );
        let mut tasks = vec![];
        for t in 0..8u64 {
            let fs = fs.clone();
            tasks.push(s2.spawn(async move {
                let mut rng = Rng::new(t);
                let mut files = BTreeMap::new();
                for i in 0..20 {
                    let p = format!("/t{t}-{i}");
                    let ino = fs.create(&p).await.unwrap();
                    let n = 1 + rng.below(200_000) as usize;
                    let d = bytes(&mut rng, n);
                    fs.write(ino, 0, &d).await.unwrap();
                    if i % 3 == 0 {
                        fs.fsync(ino).await.unwrap();
                    }
                    // Another task's lookups and reads meanwhile.
                    let _ = fs.readdir("/").await.unwrap();
                    files.insert(p, d);
                }
                for (p, d) in &files {
                    assert_eq!(&read_all(&*fs, p).await, d, "{p}");
                }
            }));
        }
        for t in tasks {
            t.await;
        }
        assert_eq!(fs.readdir("/").await.unwrap().len(), 160);
        fs.check_consistency().unwrap();
    });
}

#[test]
fn files_larger_than_the_cache_and_the_inode_read_back() {
    let sim = Sim::new(4);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    let mut rng = Rng::new(4);
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev.clone(), meta.clone(), small(LfsConfig::zns()))
            .await
            .unwrap();
        let ino = fs.create("/f").await.unwrap();
        // 5120 blocks: past the inode's 923 and the two direct nodes' 2036, into an
        // indirect node; 20 times the page cache.
        let d = bytes(&mut rng, 20 << 20);
        fs.write(ino, 0, &d).await.unwrap();
        assert!(read_all(&fs, "/f").await == d);
        fs.fsync(ino).await.unwrap();
        drop(fs);
        let fs = Lfs::mount(dev, meta, small(LfsConfig::zns()))
            .await
            .unwrap();
        assert!(fs.counters().recovered_nodes >= 3, "{:?}", fs.counters());
        assert!(read_all(&fs, "/f").await == d);
        fs.check_consistency().unwrap();
    });
}

fn errno<T>(r: &Result<T, FsError>) -> Option<i32> {
    r.as_ref().err().map(|e| e.errno())
}

/// Random operations on lfs and on `MemFs` side by side: same results, same errors, same
/// bytes; a clean remount now and then.
fn differential(seed: u64, cfg: LfsConfig) {
    let sim = Sim::new(seed);
    let (dev, meta) = (mem_dev(&sim, 40), meta());
    let mut rng = Rng::new(seed);
    let s2 = sim.clone();
    sim.block_on(async move {
        let mut fs = Lfs::mkfs(dev.clone(), meta.clone(), cfg.clone())
            .await
            .unwrap();
        let mem = host::fs::MemFs::new(&s2, 1 << 40);
        let mut paths: Vec<String> = vec!["/".into()];
        for step in 0..3000 {
            let p = paths[rng.below(paths.len() as u64) as usize].clone();
            let child = format!(
                "{}/n{}",
                if p == "/" { "" } else { p.as_str() },
                rng.below(6)
            );
            match rng.below(12) {
                0 => {
                    let (a, b) = (fs.mkdir(&child).await, mem.mkdir(&child).await);
                    assert_eq!(errno(&a), errno(&b), "mkdir {child}");
                    if a.is_ok() {
                        paths.push(child);
                    }
                }
                1 | 2 => {
                    let (a, b) = (fs.create(&child).await, mem.create(&child).await);
                    assert_eq!(errno(&a), errno(&b), "create {child}");
                    if a.is_ok() {
                        paths.push(child);
                    }
                }
                3..=5 => {
                    let (a, b) = (fs.lookup(&p).await, mem.lookup(&p).await);
                    assert_eq!(errno(&a), errno(&b), "lookup {p}");
                    if let (Ok(x), Ok(y)) = (a, b) {
                        let at = rng.below(300_000);
                        let n = rng.below(70_000) as usize;
                        let d = bytes(&mut rng, n);
                        let (a, b) = (fs.write(x, at, &d).await, mem.write(y, at, &d).await);
                        assert_eq!(errno(&a), errno(&b), "write {p}");
                    }
                }
                6 | 7 => {
                    let (a, b) = (fs.lookup(&p).await, mem.lookup(&p).await);
                    if let (Ok(x), Ok(y)) = (a, b) {
                        let at = rng.below(300_000);
                        let n = rng.below(100_000) as usize;
                        let (mut u, mut v) = (vec![1u8; n], vec![2u8; n]);
                        let (a, b) = (fs.read(x, at, &mut u).await, mem.read(y, at, &mut v).await);
                        assert_eq!(errno(&a), errno(&b), "read {p}");
                        if let (Ok(k), Ok(l)) = (a, b) {
                            assert_eq!(k, l, "read {p} at {at}");
                            assert!(u[..k] == v[..l], "read {p} at {at}: bytes differ");
                        }
                    }
                }
                8 => {
                    let (a, b) = (fs.unlink(&p).await, mem.unlink(&p).await);
                    assert_eq!(errno(&a), errno(&b), "unlink {p}");
                    if a.is_ok() {
                        paths.retain(|q| q != &p);
                    }
                }
                9 => {
                    let (a, b) = (fs.rmdir(&p).await, mem.rmdir(&p).await);
                    assert_eq!(errno(&a), errno(&b), "rmdir {p}");
                    if a.is_ok() {
                        paths.retain(|q| q != &p);
                    }
                }
                10 => {
                    if let Ok(x) = fs.lookup(&p).await {
                        fs.fsync(x).await.unwrap();
                    }
                    let (a, b) = (fs.readdir(&p).await, mem.readdir(&p).await);
                    assert_eq!(a, b, "readdir {p}");
                }
                _ => {
                    if step % 5 == 0 {
                        fs.unmount().await.unwrap();
                        fs = Lfs::mount(dev.clone(), meta.clone(), cfg.clone())
                            .await
                            .unwrap();
                        fs.check_consistency().unwrap();
                    } else {
                        fs.sync().await.unwrap();
                    }
                }
            }
        }
        for p in &paths {
            let (a, b) = (fs.stat(p).await.unwrap(), mem.stat(p).await.unwrap());
            assert_eq!((a.size, a.is_dir), (b.size, b.is_dir), "{p}");
        }
        fs.check_consistency().unwrap();
    });
}

#[test]
fn random_operations_behave_as_memfs() {
    for seed in 0..6 {
        differential(seed, small(LfsConfig::zns()));
        differential(seed + 10, small(LfsConfig::zns_plus()));
    }
}
