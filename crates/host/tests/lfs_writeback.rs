//! The LFS page cache's dirty writeback (Linux's `vm.dirty_*` defaults): a writer over
//! `dirty_ratio` writes back until under `dirty_background_ratio`; a file dirty longer than
//! `dirty_expire` is written back at the flusher's next tick; with the flusher off, dirty
//! pages stay in the cache until eviction or fsync; a large writeback runs foreground GC page
//! by page (F2FS's `f2fs_balance_fs` after each data page).

use std::rc::Rc;

use host::fs::FileSystem;
use host::lfs::{Lfs, LfsConfig, MemMeta, Writeback};
use host::MemZoned;
use sim::{Sim, SimDuration};

fn setup(sim: &Sim, writeback: Writeback) -> (Rc<MemZoned>, Rc<MemMeta>, LfsConfig) {
    let dev = Rc::new(MemZoned::new(sim, 4096, 40, 1024, 1024, 14, 14).with_znsplus(6));
    let mut cfg = LfsConfig::zns();
    cfg.page_cache_pages = 1000;
    cfg.writeback = writeback;
    (dev, Rc::new(MemMeta::new(1 << 20)), cfg)
}

#[test]
fn a_writer_over_dirty_ratio_writes_back_to_the_background_ratio() {
    let sim = Sim::new(1);
    let (dev, meta, cfg) = setup(&sim, Writeback::default());
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev, meta, cfg).await.unwrap();
        let page = vec![7u8; 4096];
        let a = fs.create("/a").await.unwrap();
        // 150 pages: over 10 % (100) but not 20 % (200) of the cache: nothing written back.
        for i in 0..150 {
            fs.write(a, i * 4096, &page).await.unwrap();
        }
        assert_eq!(fs.dirty_pages_of(a), 150);
        assert_eq!(fs.counters().writeback_throttled, 0);
        // Past 200 the writer writes back (the oldest file first) until at most 100.
        let b = fs.create("/b").await.unwrap();
        for i in 0..60 {
            fs.write(b, i * 4096, &page).await.unwrap();
        }
        let c = fs.counters();
        assert_eq!(c.writeback_throttled, 1, "once over 200");
        assert_eq!(fs.dirty_pages_of(a), 0, "the oldest file went first");
        assert!(fs.dirty_pages() <= 100, "{}", fs.dirty_pages());
        assert!(c.writeback_pages >= 150, "{}", c.writeback_pages);
        assert!(c.data_blocks() >= 150, "the pages reached the device");
    });
}

#[test]
fn a_file_dirty_past_the_expiry_is_written_back_at_the_next_tick() {
    let sim = Sim::new(1);
    let (dev, meta, cfg) = setup(&sim, Writeback::default());
    let sim2 = sim.clone();
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev, meta, cfg).await.unwrap();
        let a = fs.create("/a").await.unwrap();
        fs.write(a, 0, &[1u8; 40_000]).await.unwrap();
        let b = fs.create("/b").await.unwrap();
        sim2.sleep(SimDuration::from_secs(20)).await;
        fs.write(b, 0, &[2u8; 4096]).await.unwrap();
        assert_eq!(fs.dirty_pages_of(a), 10, "20 s: not expired yet");
        sim2.sleep(SimDuration::from_secs(11)).await;
        fs.write(b, 4096, &[2u8; 4096]).await.unwrap();
        assert_eq!(fs.dirty_pages_of(a), 0, "31 s: written back");
        assert_eq!(fs.dirty_pages_of(b), 2, "b is 11 s dirty");
        assert_eq!(fs.counters().writeback_expired, 1);
        // The data reads back from the device.
        let mut buf = vec![0u8; 40_000];
        assert_eq!(fs.read(a, 0, &mut buf).await.unwrap(), 40_000);
        assert!(buf.iter().all(|&x| x == 1));
    });
}

#[test]
fn with_the_flusher_off_dirty_pages_wait_for_eviction() {
    let sim = Sim::new(1);
    let off = Writeback {
        background_pct: 100,
        throttle_pct: 100,
        expire: SimDuration::from_secs(30),
        interval: SimDuration::ZERO,
    };
    let (dev, meta, cfg) = setup(&sim, off);
    let sim2 = sim.clone();
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev, meta, cfg).await.unwrap();
        let a = fs.create("/a").await.unwrap();
        fs.write(a, 0, &vec![3u8; 600 * 4096]).await.unwrap();
        sim2.sleep(SimDuration::from_secs(100)).await;
        fs.write(a, 0, &[4u8; 10]).await.unwrap();
        assert_eq!(fs.dirty_pages_of(a), 600);
        assert_eq!(fs.counters().writeback_pages, 0);
    });
}

/// F2FS's `__write_data_page` calls `f2fs_balance_fs` after every data page it writes back
/// (not for reclaim): a writeback of many sections' worth of pages runs foreground GC as it
/// goes, so free sections never fall below the GC threshold, and (ZNS+) hybrid segment
/// recycling is not pushed into forced threaded logging by one large writeback.
#[test]
fn a_large_writeback_runs_foreground_gc_page_by_page() {
    let sim = Sim::new(1);
    let dev = Rc::new(MemZoned::new(&sim, 4096, 40, 1024, 1024, 14, 14).with_znsplus(6));
    let meta = Rc::new(MemMeta::new(1 << 20));
    let off = Writeback {
        background_pct: 100,
        throttle_pct: 100,
        expire: SimDuration::from_secs(30),
        interval: SimDuration::ZERO,
    };
    let cfg = LfsConfig {
        page_cache_pages: 8192,
        writeback: off,
        ..LfsConfig::izc()
    };
    let mut rng = sim.rng("wb-gc");
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev, meta, cfg).await.unwrap();
        let reserved = fs.geometry().reserved_secs;
        let sec_bytes = fs.geometry().sec_blocks as u64 * 4096;
        let (cap, _) = fs.capacity();
        let file = 256u64 << 10;
        let files = cap * 70 / 100 / file;
        let mut inos = vec![];
        for i in 0..files {
            let ino = fs.create(&format!("/f{i}")).await.unwrap();
            fs.write(ino, 0, &vec![i as u8; file as usize])
                .await
                .unwrap();
            inos.push(ino);
        }
        fs.sync().await.unwrap();
        // Scattered overwrites, synced: the sections hold invalid blocks, free space is at
        // the GC threshold.
        for _ in 0..6 {
            for _ in 0..2000 {
                let ino = inos[rng.below(files) as usize];
                let at = 4096 * rng.below(file / 4096);
                fs.write(ino, at, &[9u8; 4096]).await.unwrap();
            }
            fs.sync().await.unwrap();
        }
        // One file rewritten whole, four sections' worth of dirty pages, then fsync'ed: its
        // writeback allocates four sections.
        let big = fs.create("/big").await.unwrap();
        fs.write(big, 0, &vec![7u8; 4 * sec_bytes as usize])
            .await
            .unwrap();
        let before = fs.counters().gc_phases.runs;
        fs.fsync(big).await.unwrap();
        let after = fs.counters();
        assert!(
            after.gc_phases.runs >= before + 3,
            "compactions during the writeback: {} -> {}",
            before,
            after.gc_phases.runs
        );
        assert!(
            fs.free_sections() >= reserved,
            "{} free sections, {} reserved",
            fs.free_sections(),
            reserved
        );
        fs.check_consistency().unwrap();
    });
}
