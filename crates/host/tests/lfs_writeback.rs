//! The LFS page cache's dirty writeback (Linux's `vm.dirty_*` defaults): a writer over
//! `dirty_ratio` writes back until under `dirty_background_ratio`; a file dirty longer than
//! `dirty_expire` is written back at the flusher's next tick; with the flusher off, dirty
//! pages stay in the cache until eviction or fsync.

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
