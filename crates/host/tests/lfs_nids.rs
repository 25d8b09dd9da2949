//! Node ids an unlink frees come back at the next checkpoint (F2FS's NAT entry stays dirty
//! until then); when few ids are left and some wait for a checkpoint, `balance_fs` takes one
//! (F2FS's `f2fs_balance_fs_bg` checkpoints when its NAT cache outgrows its memory share).

use std::rc::Rc;

use host::fs::FileSystem;
use host::lfs::{Lfs, LfsConfig, MemMeta};
use host::MemZoned;
use sim::Sim;

/// A run that creates and deletes many more files than the volume has node ids, with no
/// sync of its own, never runs out of them.
#[test]
fn creating_and_deleting_more_files_than_node_ids_does_not_run_out() {
    let sim = Sim::new(1);
    let dev = Rc::new(MemZoned::new(&sim, 4096, 40, 1024, 1024, 14, 14).with_znsplus(6));
    let meta = Rc::new(MemMeta::new(1 << 20));
    let mut cfg = LfsConfig::zns();
    cfg.page_cache_pages = 1000;
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev, meta, cfg).await.unwrap();
        let max = fs.geometry().max_nid() as u64;
        assert!(max < 50_000, "a small volume: {max} ids");
        fs.mkdir("/d").await.unwrap();
        for i in 0..2 * max {
            let path = format!("/d/f{}", i % 100);
            if i >= 100 {
                fs.unlink(&path).await.unwrap();
            }
            let ino = fs
                .create(&path)
                .await
                .unwrap_or_else(|e| panic!("create number {i} of {max} ids: {e}"));
            fs.write(ino, 0, &[1u8; 100]).await.unwrap();
        }
        let c = fs.counters().checkpoints;
        assert!(c.nids >= 1, "{c:?}");
        fs.check_consistency().unwrap();
    });
}
