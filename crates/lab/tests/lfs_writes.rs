//! Buffered writes of the F2FS-like file system run without its lock, as F2FS's
//! `write_begin`/`write_end`: a write that fits in the page cache finishes at once while an
//! fsync holds the lock, and what it wrote is read back, before and after a remount. (Writes
//! beside reads, GC and threaded logging: `lfs_reads.rs`.)

use std::cell::RefCell;
use std::rc::Rc;

mod common;
use common::stack;
use host::fs::FileSystem;
use host::lfs::{Lfs, LfsConfig};
use sim::{Sim, SimDuration};

#[test]
fn a_cached_write_finishes_at_once_while_an_fsync_holds_the_lock() {
    let sim = Sim::new(1);
    let st = stack(&sim, 256 << 20);
    let mut cfg = LfsConfig::zns();
    cfg.page_cache_pages = 256;
    let (io, meta, sim2) = (st.main.io.clone(), st.meta.clone(), sim.clone());
    sim.block_on(async move {
        let fs = Rc::new(
            Lfs::mkfs(io.clone(), meta.clone(), cfg.clone())
                .await
                .unwrap(),
        );
        let big = fs.create("/big").await.unwrap();
        let small = fs.create("/small").await.unwrap();
        // 192 KiB: under the dirty limit (20 % of the 1 MiB cache), so it stays in the cache.
        fs.write(big, 0, &vec![3u8; 192 << 10]).await.unwrap();
        let fsync_end = Rc::new(RefCell::new(None));
        {
            let (fs, sim, end) = (fs.clone(), sim2.clone(), fsync_end.clone());
            sim2.spawn(async move {
                // Holds the lock while its pages and nodes go to the device.
                fs.fsync(big).await.unwrap();
                *end.borrow_mut() = Some(sim.now());
            });
        }
        sim2.sleep(SimDuration::from_us(10)).await;
        let data: Vec<u8> = (0..16 << 10).map(|i| (i * 13 + i / 4096) as u8).collect();
        let t0 = sim2.now();
        fs.write(small, 0, &data).await.unwrap();
        assert_eq!(sim2.now(), t0, "the cached write waited");
        assert!(
            fsync_end.borrow().is_none(),
            "the fsync that held the lock ended first"
        );
        let mut buf = vec![0u8; data.len()];
        assert_eq!(fs.read(small, 0, &mut buf).await.unwrap(), data.len());
        assert!(buf == data, "read back from the cache");
        while fsync_end.borrow().is_none() {
            sim2.sleep(SimDuration::from_ms(1)).await;
        }
        fs.fsync(small).await.unwrap();
        let fs = Rc::try_unwrap(fs).ok().expect("one owner");
        fs.unmount().await.unwrap();
        let fs = Lfs::mount(io, meta, cfg).await.unwrap();
        let small = fs.lookup("/small").await.unwrap();
        let mut buf = vec![0u8; data.len()];
        assert_eq!(fs.read(small, 0, &mut buf).await.unwrap(), data.len());
        assert!(buf == data, "read back from the device after a remount");
        let big = fs.lookup("/big").await.unwrap();
        let mut buf = vec![0u8; 192 << 10];
        assert_eq!(fs.read(big, 0, &mut buf).await.unwrap(), 192 << 10);
        assert!(buf.iter().all(|&b| b == 3), "the fsynced file reads back");
    });
}
