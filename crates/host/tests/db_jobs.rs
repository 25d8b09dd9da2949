//! The store's background job limits (RocksDB's max_background_jobs and friends) and write
//! buffers (max_write_buffer_number): compactions side by side on disjoint inputs, several
//! immutable memtables waiting for their flushes, the writer stall when all the memtables are
//! full, and recovery after a power cut with several memtables unflushed.

use std::collections::BTreeMap;
use std::rc::Rc;

use device::{presets, Controller, DeviceHandle};
use host::lsm::db::{Compression, Db, DbOptions, DbStats};
use host::zonefs::ZoneFs;
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::{Rng, Sim};

mod common;
use common::{key, value};

fn small() -> DbOptions {
    DbOptions {
        write_buffer_size: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        target_file_size: 16 << 10,
        ..DbOptions::default()
    }
}

#[test]
fn rocksdb_job_limits_from_the_flags() {
    let mut o = DbOptions::default();
    let lim = |o: &DbOptions| (o.max_background_flushes, o.max_background_compactions);
    o.set_background_jobs(2, -1, -1).expect("ok");
    assert_eq!(lim(&o), (1, 1), "RocksDB's default: one of each");
    o.set_background_jobs(8, -1, -1).expect("ok");
    assert_eq!(lim(&o), (2, 6));
    o.set_background_jobs(1, -1, -1).expect("ok");
    assert_eq!(lim(&o), (1, 1));
    // Either flag given: both count on their own (at least one each); the jobs do not.
    o.set_background_jobs(8, 3, -1).expect("ok");
    assert_eq!(lim(&o), (1, 3));
    o.set_background_jobs(2, -1, 4).expect("ok");
    assert_eq!(lim(&o), (4, 1));
    assert!(o.set_background_jobs(1 << 20, -1, -1).is_err());
    // RocksDB's speedup count: the smaller of twice the trigger and a quarter of the way
    // to the slowdown trigger.
    assert_eq!(DbOptions::default().l0_speedup_files(), 8);
}

/// Writes `n` keys (of `keys`) with `opts` on `cores` host cores, returning the stats and checking
/// every key after the background work.
fn fill(opts: DbOptions, n: u64, keys: u64, cores: usize) -> DbStats {
    let (sim, dev) = common::store_device(128);
    let io = Rc::new(HostIo::new(
        &dev,
        Rc::new(CpuPool::new(&sim, cores)),
        IoConfig::default(),
    ));
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        let db = Db::open(fs.clone(), opts.clone()).await.expect("opens");
        let mut rng = Rng::new(5);
        let mut model = BTreeMap::new();
        for i in 0..n {
            let k = key(rng.below(keys));
            let v = value(&mut rng, i);
            db.put(&k, &v, false).await.expect("puts");
            model.insert(k, v);
        }
        db.wait_for_background().await.expect("background");
        let s = db.stats();
        for (k, v) in &model {
            assert_eq!(db.get(k).await.expect("reads").as_ref(), Some(v));
        }
        let all = db.scan(b"", usize::MAX).await.expect("scans");
        assert_eq!(all.len(), model.len());
        db.flush().await.expect("flushes");
        db.close().await.expect("closes");
        // Reopened, the MANIFEST's edits of the compactions that ran side by side give the
        // same contents.
        let db = Db::open(fs, opts).await.expect("reopens");
        for (k, v) in &model {
            assert_eq!(db.get(k).await.expect("reads").as_ref(), Some(v));
        }
        s
    })
}

#[test]
fn two_compactions_run_at_once_on_disjoint_levels() {
    let opts = DbOptions {
        level_compaction_dynamic_level_bytes: false,
        level_multiplier: 2,
        level0_trigger: 2,
        level0_slowdown: 4,
        level0_stop: 8,
        ..small()
    };
    let mut many = opts.clone();
    many.set_background_jobs(8, -1, -1).expect("ok");
    assert_eq!(many.max_background_compactions, 6);
    let s = fill(many, 6000, 3000, 4);
    assert!(s.max_running_compactions >= 2, "{s:?}");
    // Never two L0 compactions at once; a deeper one beside L0's, or two deeper ones.
    assert!(!s.concurrent_compaction_levels.contains(&(0, 0)), "{s:?}");
    assert!(
        s.concurrent_compaction_levels
            .iter()
            .any(|&(a, b)| a != b && (a == 0 || b == 0)),
        "{s:?}"
    );
    // The default runs one at a time.
    let s = fill(opts, 6000, 3000, 4);
    assert_eq!(s.max_running_compactions, 1, "{s:?}");
    assert!(s.concurrent_compaction_levels.is_empty());
}

/// Slow flushes (each entry merged costs 20 µs), with `buffers` write buffers and `flushes` flush workers.
fn slow(buffers: usize, flushes: i64) -> DbOptions {
    let mut o = DbOptions {
        max_write_buffer_number: buffers,
        compression: Compression::host(codec::Codec::ZSTD1),
        ..small()
    };
    // Writes cheap beside the flushes' work.
    o.cpu.write_ns = 100;
    o.cpu.merge_entry_ns = 20_000;
    o.set_background_jobs(2, -1, flushes).expect("ok");
    o
}

#[test]
fn a_writer_stalls_only_once_max_write_buffer_number_memtables_are_full() {
    let two = fill(slow(2, -1), 3000, 900, 4);
    let four = fill(slow(4, -1), 3000, 900, 4);
    assert_eq!(two.max_immutable_memtables, 1, "{two:?}");
    assert!(two.stall_memtable_ns > 0, "{two:?}");
    // Up to three immutable memtables wait; the writer stalls only then, so for less time.
    assert_eq!(four.max_immutable_memtables, 3, "{four:?}");
    assert!(four.stall_memtable_ns > 0, "{four:?}");
    assert!(
        four.stall_memtable_ns < two.stall_memtable_ns,
        "{four:?} {two:?}"
    );
    assert_eq!(four.flushes, two.flushes);
    // Two flush workers flush two memtables at once and install them in order.
    let par = fill(slow(4, 2), 3000, 900, 4);
    assert!(par.max_immutable_memtables >= 2, "{par:?}");
}

#[test]
fn a_power_cut_with_several_immutable_memtables_keeps_every_synced_write() {
    for flushes in [1, 2] {
        // The device lives in an image file; the cut copies it at the instant three memtables
        // wait for their flushes (after a synced write), and a new host on a new clock opens
        // the copy: the WALs of every unflushed memtable must still be there.
        let dir =
            std::env::temp_dir().join(format!("znslab-imm-cut-{}-{flushes}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (image, cut_image) = (dir.join("dev.img"), dir.join("cut.img"));
        let mut cfg = presets::test_min();
        cfg.nand.blocks_per_plane = 128;
        cfg.zones.max_open = 6;
        let sim = Sim::new(1);
        let dev = DeviceHandle::new(&sim, Controller::create_image(&image, cfg).expect("image"));
        let io = Rc::new(HostIo::new(
            &dev,
            Rc::new(CpuPool::new(&sim, 4)),
            IoConfig::default(),
        ));
        let opts = slow(5, flushes);
        let opts2 = opts.clone();
        let (dev2, image2, cut_image2) = (dev.clone(), image.clone(), cut_image.clone());
        let (model, synced_upto, flushed) = sim.block_on(async move {
            let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
            let db = Db::open(fs, opts).await.expect("opens");
            let mut rng = Rng::new(9);
            let mut model: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
            let mut i = 0u64;
            // Write until three memtables wait for their flushes (after at least one flush
            // installed beside waiting ones), then sync one more write and cut.
            loop {
                let k = key(rng.below(2000));
                let v = value(&mut rng, i);
                let s = db.stats();
                let cut = s.immutable_memtables >= 3 && s.flushes >= 1;
                let sync = cut || i % 40 == 39;
                db.put(&k, &v, sync).await.expect("puts");
                model.push((k, v));
                if cut {
                    dev2.with(|c| c.save_zone_table()).expect("zone table");
                    std::fs::copy(&image2, &cut_image2).expect("copy");
                    let n = model.len();
                    return (model, n, db.stats().flushes);
                }
                i += 1;
                assert!(i < 100_000, "the memtables never piled up");
            }
        });
        assert!(flushed >= 1);
        let sim = Sim::new(2);
        let dev = DeviceHandle::new(&sim, Controller::open_image(&cut_image).expect("opens"));
        let io = common::host(&sim, &dev);
        sim.block_on(async move {
            let fs = Rc::new(ZoneFs::mount(io).await.expect("mounts"));
            let db = Db::open(fs, opts2).await.expect("reopens");
            let mut last: BTreeMap<&[u8], usize> = BTreeMap::new();
            for (n, (k, _)) in model[..synced_upto].iter().enumerate() {
                last.insert(k, n);
            }
            for (k, &n) in &last {
                let got = db.get(k).await.expect("reads").expect("synced key present");
                assert_eq!(got, model[n].1, "{}", String::from_utf8_lossy(k));
            }
        });
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn compaction_debt_alone_lets_compactions_run_side_by_side() {
    // L0's file count hardly calls for speed (its speedup count is 8, slowdowns are far):
    // RocksDB's compaction debt does, past the larger of an eighth of the bottommost tables
    // and twice the base level's target (128 KiB here).
    let mut opts = DbOptions {
        level_compaction_dynamic_level_bytes: false,
        level_multiplier: 2,
        level0_slowdown: 1000,
        level0_stop: 2000,
        ..small()
    };
    assert_eq!(opts.l0_speedup_files(), 8);
    opts.set_background_jobs(8, -1, -1).expect("ok");
    let s = fill(opts, 6000, 3000, 4);
    assert!(s.max_running_compactions >= 2, "{s:?}");
    assert!(
        s.concurrent_compaction_levels
            .iter()
            .any(|&(a, b)| a > 0 && b > 0),
        "{s:?}"
    );
    assert_eq!((s.stall_l0_ns, s.slowdown_ns), (0, 0), "{s:?}");
}
