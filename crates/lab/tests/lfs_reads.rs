//! Reads of the F2FS-like file system run without its lock, as F2FS's read path: a read of
//! a file on the device finishes while a write holds the lock, and every page a read returns
//! is a version of it that was there at some instant of the read while writers overwrite
//! pages, GC moves them (host copies, zone_compaction) and threaded logging writes over
//! invalid blocks. The writers' buffered writes run without the lock too (`lfs_writes.rs`);
//! when they are done, every page holds the last version written.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

mod common;
use common::stack;
use host::fs::FileSystem;
use host::lfs::{Lfs, LfsConfig};
use sim::{Rng, Sim, SimDuration};

const PAGE: usize = 4096;

#[test]
fn a_read_from_the_device_finishes_while_a_write_holds_the_lock() {
    let sim = Sim::new(1);
    let st = stack(&sim, 256 << 20);
    let mut cfg = LfsConfig::zns();
    cfg.page_cache_pages = 256;
    let (io, meta, sim2) = (st.main.io.clone(), st.meta.clone(), sim.clone());
    sim.block_on(async move {
        let fs = Rc::new(Lfs::mkfs(io, meta, cfg).await.unwrap());
        let a_data: Vec<u8> = (0..1 << 20).map(|i| (i * 7 + i / 4096) as u8).collect();
        let a = fs.create("/a").await.unwrap();
        fs.write(a, 0, &a_data).await.unwrap();
        fs.fsync(a).await.unwrap();
        // b's pages push a's out of the 1 MiB cache: a is read from the device below.
        let b = fs.create("/b").await.unwrap();
        fs.write(b, 0, &vec![2u8; 1 << 20]).await.unwrap();
        fs.fsync(b).await.unwrap();
        let c = fs.create("/c").await.unwrap();
        let write_end = Rc::new(RefCell::new(None));
        {
            let (fs, sim, end) = (fs.clone(), sim2.clone(), write_end.clone());
            sim2.spawn(async move {
                // 8 MiB through a 1 MiB cache: written back as it goes, all under the lock.
                fs.write(c, 0, &vec![3u8; 8 << 20]).await.unwrap();
                *end.borrow_mut() = Some(sim.now());
            });
        }
        sim2.sleep(SimDuration::from_us(50)).await;
        let t0 = sim2.now();
        let mut buf = vec![0u8; 1 << 20];
        assert_eq!(fs.read(a, 0, &mut buf).await.unwrap(), 1 << 20);
        let read_end = sim2.now();
        assert!(buf == a_data, "a reads back as written");
        assert!(read_end > t0, "the read went to the device");
        assert!(
            write_end.borrow().is_none(),
            "the read finished at {read_end:?} before the write that held the lock"
        );
        while write_end.borrow().is_none() {
            sim2.sleep(SimDuration::from_ms(1)).await;
        }
    });
}

/// Per page: the version the last finished write left, and the newest a write has started.
#[derive(Default, Clone, Copy)]
struct Versions {
    done: u64,
    started: u64,
}

fn page_bytes(file: u64, page: u64, version: u64) -> Vec<u8> {
    let mut p = vec![(file * 31 + page * 7 + version) as u8; PAGE];
    p[..8].copy_from_slice(&file.to_le_bytes());
    p[8..16].copy_from_slice(&page.to_le_bytes());
    p[16..24].copy_from_slice(&version.to_le_bytes());
    p
}

/// Writers overwrite random pages of files that fill most of a small file system (so GC
/// runs), readers read random ranges and check each page against the versions: at least the
/// one finished when the read began, at most the newest started when it ended.
fn churn(scheme: LfsConfig, seed: u64) -> host::lfs::LfsCounters {
    const FILES: u64 = 12;
    const PAGES: u64 = 300; // 1.2 MiB a file: 24 MiB of a 64 MiB file system
    let sim = Sim::new(seed);
    let st = stack(&sim, 64 << 20);
    let mut cfg = scheme;
    cfg.page_cache_pages = 512;
    let (io, meta, sim2) = (st.main.io.clone(), st.meta.clone(), sim.clone());
    sim.block_on(async move {
        let fs = Rc::new(Lfs::mkfs(io, meta, cfg).await.unwrap());
        let mut inos = vec![];
        for f in 0..FILES {
            let ino = fs.create(&format!("/f{f}")).await.unwrap();
            for p in 0..PAGES {
                fs.write(ino, p * PAGE as u64, &page_bytes(f, p, 0))
                    .await
                    .unwrap();
            }
            inos.push(ino);
        }
        let model: Rc<RefCell<BTreeMap<(u64, u64), Versions>>> = Rc::default();
        let inos = Rc::new(inos);
        let active = Rc::new(RefCell::new(0u32));
        let readers = Rc::new(RefCell::new(4u32));
        for w in 0..4u64 {
            let (fs, model, inos, active) =
                (fs.clone(), model.clone(), inos.clone(), active.clone());
            let (sim, readers) = (sim2.clone(), readers.clone());
            *active.borrow_mut() += 1;
            sim2.spawn(async move {
                let mut rng = Rng::new(seed * 100 + w);
                let mut n = 0;
                while n < 1500 || (*readers.borrow() > 0 && n < 20_000) {
                    n += 1;
                    let (f, p) = (rng.below(FILES), rng.below(PAGES));
                    let v = {
                        let mut m = model.borrow_mut();
                        let e = m.entry((f, p)).or_default();
                        e.started += 1;
                        e.started
                    };
                    fs.write(inos[f as usize], p * PAGE as u64, &page_bytes(f, p, v))
                        .await
                        .unwrap();
                    {
                        let mut m = model.borrow_mut();
                        let e = m.get_mut(&(f, p)).unwrap();
                        e.done = e.done.max(v);
                    }
                    if rng.below(20) == 0 {
                        fs.fsync(inos[f as usize]).await.unwrap();
                    }
                    // Room for the readers between writes.
                    sim.sleep(SimDuration::from_us(20)).await;
                }
                *active.borrow_mut() -= 1;
            });
        }
        let reads = Rc::new(RefCell::new(0u64));
        for r in 0..4u64 {
            let (fs, model, inos, active, reads, readers) = (
                fs.clone(),
                model.clone(),
                inos.clone(),
                active.clone(),
                reads.clone(),
                readers.clone(),
            );
            sim2.spawn(async move {
                let mut rng = Rng::new(seed * 1000 + r);
                let mut mine = 0;
                while *active.borrow() > 0 || mine < 60 {
                    mine += 1;
                    let f = rng.below(FILES);
                    let first = rng.below(PAGES);
                    let n = 1 + rng.below(64).min(PAGES - first - 1);
                    let lo: Vec<u64> = (first..first + n)
                        .map(|p| model.borrow().get(&(f, p)).map_or(0, |e| e.done))
                        .collect();
                    let mut buf = vec![0u8; n as usize * PAGE];
                    let got = fs
                        .read(inos[f as usize], first * PAGE as u64, &mut buf)
                        .await
                        .unwrap();
                    assert_eq!(got, buf.len());
                    for (k, page) in buf.chunks(PAGE).enumerate() {
                        let p = first + k as u64;
                        let v = u64::from_le_bytes(page[16..24].try_into().unwrap());
                        let hi = model.borrow().get(&(f, p)).map_or(0, |e| e.started);
                        assert!(
                            page == page_bytes(f, p, v).as_slice() && lo[k] <= v && v <= hi,
                            "file {f} page {p}: version {v} read, expected {}..={hi}",
                            lo[k]
                        );
                    }
                    *reads.borrow_mut() += 1;
                }
                *readers.borrow_mut() -= 1;
            });
        }
        while *active.borrow() > 0 || *readers.borrow() > 0 {
            sim2.sleep(SimDuration::from_ms(1)).await;
        }
        assert!(*reads.borrow() >= 240, "{} reads", reads.borrow());
        // Nothing in flight now: every page holds the last version written to it.
        for f in 0..FILES {
            let mut buf = vec![0u8; PAGES as usize * PAGE];
            fs.read(inos[f as usize], 0, &mut buf).await.unwrap();
            for (p, page) in buf.chunks(PAGE).enumerate() {
                let v = model.borrow().get(&(f, p as u64)).map_or(0, |e| e.done);
                assert!(
                    page == page_bytes(f, p as u64, v).as_slice(),
                    "file {f} page {p}: not version {v}, the last written"
                );
            }
        }
        fs.counters()
    })
}

#[test]
fn reads_beside_writes_and_host_copy_gc_return_whole_pages_of_a_current_version() {
    let c = churn(LfsConfig::zns(), 1);
    assert!(c.gc_host_copies > 0, "GC copied through the host");
    assert!(c.read_retries > 0, "blocks moved under reads: {c:?}");
    assert!(c.reads_locked > 0, "blocks not on the device yet: {c:?}");
    assert!(c.writes_held_by_cp > 0, "writes met checkpoints: {c:?}");
}

#[test]
fn reads_beside_zone_compaction_and_threaded_logging_return_current_versions() {
    let c = churn(LfsConfig::zns_plus(), 2);
    assert!(
        c.gc_device_copies + c.sections_reclaimed_tl > 0,
        "zone_compaction or threaded logging ran"
    );
}
