//! Mount of a metadata area that is not what the file system wrote: a superblock whose
//! numbers do not hold together, checkpoint packs whose journals point outside the volume.
//! Each is refused with an error, never a panic, a hang or an allocation sized by the bad
//! number; the intact area mounts again afterwards.

use std::rc::Rc;

use host::fs::FileSystem;
use host::lfs::{Lfs, LfsConfig, MemMeta, MetaArea};
use host::MemZoned;
use sim::Sim;

const BLOCK: usize = 4096;

#[test]
fn corrupt_superblocks_and_checkpoint_journals_are_refused() {
    let sim = Sim::new(1);
    let dev = Rc::new(MemZoned::new(&sim, 4096, 40, 1024, 1024, 14, 14).with_znsplus(6));
    let meta = Rc::new(MemMeta::new(1 << 20));
    let mut cfg = LfsConfig::zns();
    cfg.page_cache_pages = 256;
    sim.block_on(async move {
        let fs = Lfs::mkfs(dev.clone(), meta.clone(), cfg.clone())
            .await
            .unwrap();
        for i in 0..5 {
            let ino = fs.create(&format!("/f{i}")).await.unwrap();
            fs.write(ino, 0, &vec![i as u8 + 1; 20_000]).await.unwrap();
        }
        fs.sync().await.unwrap();
        drop(fs);
        let read = |a: u64| {
            let meta = meta.clone();
            async move {
                let mut b = vec![0u8; BLOCK];
                meta.read_block(a, &mut b).await.unwrap();
                b
            }
        };
        // Superblock fields (block 0, little-endian u32 each): segs_per_sec, main_segs,
        // reserved_secs, nat_blocks, sit_blocks, sec_blocks.
        let sb = read(0).await;
        for (field, value) in [
            (4usize, 0u32),
            (5, u32::MAX),
            (6, u32::MAX - 1),
            (8, 1 << 31),
            (9, 1 << 31),
            (3, 7),
        ] {
            let mut bad = sb.clone();
            bad[4 * field..4 * field + 4].copy_from_slice(&value.to_le_bytes());
            meta.write_block(0, &bad).await.unwrap();
            let e = Lfs::mount(dev.clone(), meta.clone(), cfg.clone()).await;
            assert!(e.is_err(), "superblock field {field} = {value} mounted");
            meta.write_block(0, &sb).await.unwrap();
        }
        // Both checkpoint packs' NAT journals (block 1 of packs at 1 and 6) naming a node id
        // past the NAT: no pack is usable.
        let journals = [read(2).await, read(7).await];
        for (k, addr) in [2u64, 7].into_iter().enumerate() {
            let mut bad = journals[k].clone();
            bad[0..2].copy_from_slice(&1u16.to_le_bytes());
            bad[2..6].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
            meta.write_block(addr, &bad).await.unwrap();
        }
        let e = Lfs::mount(dev.clone(), meta.clone(), cfg.clone()).await;
        assert!(e.is_err(), "journals past the NAT mounted");
        for (k, addr) in [2u64, 7].into_iter().enumerate() {
            meta.write_block(addr, &journals[k]).await.unwrap();
        }
        // Intact again: it mounts, and the files are there.
        let fs = Lfs::mount(dev, meta, cfg).await.unwrap();
        for i in 0..5 {
            let ino = fs.lookup(&format!("/f{i}")).await.unwrap();
            assert_eq!(fs.size(ino).unwrap(), 20_000);
        }
    });
}
