//! Threaded logging on zones whose capacity is not whole 2 MiB segments: the file system
//! uses the whole segments and leaves the tail unwritten, and TL_open's bitmap still covers
//! the whole capacity, as the device requires (before, every TL_open was refused there and
//! the file system fell back to plain logging without a word).

use std::rc::Rc;

use host::fs::FileSystem;
use host::lfs::{Lfs, LfsConfig, MemMeta};
use host::MemZoned;
use sim::{Rng, Sim};

#[test]
fn threaded_logging_opens_zones_with_a_tail_past_the_last_segment() {
    let sim = Sim::new(5);
    // Zones of 1200 blocks, 1100 writable: two segments of 512, a tail of 76.
    let dev = Rc::new(MemZoned::new(&sim, 4096, 40, 1200, 1100, 14, 14).with_znsplus(6));
    let meta = Rc::new(MemMeta::new(1 << 20));
    let mut cfg = LfsConfig::zns_plus();
    cfg.page_cache_pages = 256;
    let mut rng = Rng::new(5);
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev, meta, cfg).await.unwrap();
        let (cap, _) = fs.capacity();
        let file = 256u64 << 10;
        let files = cap * 9 / 10 / file;
        let mut inos = vec![];
        for i in 0..files {
            let ino = fs.create(&format!("/f{i}")).await.unwrap();
            fs.write(ino, 0, &vec![i as u8; file as usize])
                .await
                .unwrap();
            inos.push(ino);
        }
        let mut last = vec![0u8; files as usize];
        for round in 1..=3 * files {
            let i = rng.below(files) as usize;
            let v = (round % 250) as u8 + 1;
            fs.write(inos[i], 0, &vec![v; file as usize]).await.unwrap();
            last[i] = v;
        }
        fs.sync().await.unwrap();
        let c = fs.counters();
        assert!(c.tl_opens > 0, "{c:?}");
        let mut buf = vec![0u8; file as usize];
        for (i, &ino) in inos.iter().enumerate() {
            fs.read(ino, 0, &mut buf).await.unwrap();
            let want = if last[i] == 0 { i as u8 } else { last[i] };
            assert!(buf.iter().all(|&b| b == want), "file {i}");
        }
    });
}
