//! zonefs's CCZNS padding zones: compressed writes (CW) share zones with plain writes and read
//! back, compressed files move on and release their zones, and the options that cannot go
//! together are refused.

mod common;

use std::rc::Rc;

use common::{bytes, host, test_min_device as device};
use device::{presets, Controller, DeviceHandle};
use host::zonefs::{Lifetime, MkfsOptions, ZoneFs};
use sim::{Rng, Sim};

/// Text that compresses about 3:1, as chunks of `chunk` bytes.
fn text(seed: u64, len: usize) -> Vec<u8> {
    const WORDS: [&str; 12] = [
        "zone ",
        "append ",
        "the ",
        "flash ",
        "compressed ",
        "write ",
        "of ",
        "a ",
        "block ",
        "host ",
        "index ",
        "pointer ",
    ];
    let mut rng = Rng::new(seed);
    let mut v = Vec::with_capacity(len + 16);
    while v.len() < len {
        v.extend_from_slice(WORDS[rng.below(WORDS.len() as u64) as usize].as_bytes());
        if rng.below(10) == 0 {
            v.extend_from_slice(format!("{} ", rng.below(100_000)).as_bytes());
        }
    }
    v.truncate(len);
    v
}

fn cczns_device() -> (Sim, DeviceHandle) {
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::test_cczns()).expect("valid"),
    );
    (sim, dev)
}

fn padding() -> MkfsOptions {
    MkfsOptions {
        padding_zones: true,
        ..MkfsOptions::default()
    }
}

#[test]
fn compressed_writes_share_padding_zones_with_plain_writes_and_read_back() {
    let (sim, dev) = cczns_device();
    let io = host(&sim, &dev);
    let chunks: Vec<Vec<u8>> = (0..40).map(|i| text(i, 3000 + 37 * i as usize)).collect();
    let c2 = chunks.clone();
    let layout = sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs_with(io, padding()).await.expect("mkfs"));
        let mut w = fs
            .writer("000001.sst", Lifetime::Medium)
            .await
            .expect("creates");
        // Chunks in CWs of 10 (each a whole number of blocks), then a plain tail.
        let mut posts = Vec::new();
        for group in c2.chunks(10) {
            let mut data: Vec<u8> = group.concat();
            data.resize(data.len().div_ceil(4096) * 4096, 0);
            let sizes: Vec<u32> = group.iter().map(|c| c.len() as u32).collect();
            let got = w.append_compressed(&data, &sizes).await.expect("CW");
            assert_eq!(got.len(), 10);
            // Padding zone: each CW ends on a block.
            assert_eq!(got.iter().map(|&s| s as u64).sum::<u64>() % 4096, 0);
            posts.extend(got);
        }
        let region: u64 = posts.iter().map(|&p| p as u64).sum();
        let raw: usize = c2.iter().map(Vec::len).sum();
        assert!(region * 2 < raw as u64, "{region} stored for {raw}");
        w.append(b"plain tail after the compressed region")
            .await
            .expect("appends");
        w.close().await.expect("closes");
        assert_eq!(fs.size("000001.sst").expect("exists"), region + 38);
        // The tail reads back plainly at the end of the compressed region.
        let mut tail = vec![0u8; 38];
        fs.read("000001.sst", region, &mut tail)
            .await
            .expect("reads");
        assert_eq!(&tail, b"plain tail after the compressed region");
        posts
    });
    // After a remount, every chunk by single-chunk DR, and all by multi-chunk DRs.
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = ZoneFs::mount(io).await.expect("mounts");
        let mut off = 0u64;
        for (i, c) in chunks.iter().enumerate() {
            let mut out = Vec::new();
            let got = fs
                .decompressed_read(
                    "000001.sst",
                    off,
                    layout[i] as u64,
                    false,
                    c.len() as u64,
                    &mut out,
                )
                .await
                .expect("DR");
            assert_eq!(got.len(), 1);
            assert_eq!(&out, c, "chunk {i}");
            off += layout[i] as u64;
        }
        let mut out = Vec::new();
        let raw: u64 = chunks.iter().map(|c| c.len() as u64).sum();
        let got = fs
            .decompressed_read("000001.sst", 0, off, true, raw, &mut out)
            .await
            .expect("multi-chunk DR");
        assert_eq!(got.len(), 40);
        assert_eq!(out, chunks.concat());
        // A DR that does not start on a chunk is refused by the device, not misread.
        let mut out = Vec::new();
        assert!(fs
            .decompressed_read("000001.sst", 100, 2000, false, 8192, &mut out)
            .await
            .is_err());
    });
}

#[test]
fn compressed_files_move_to_a_new_zone_and_release_their_open_zones() {
    let (sim, dev) = cczns_device();
    let io = host(&sim, &dev);
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs_with(io, padding()).await.expect("mkfs"));
        // Incompressible 96 KiB CWs: a 256 KiB zone takes two, the third moves on. Many files
        // one after another: explicitly opened zones are closed as files let go of them, or
        // the device's 4 open zones would run out.
        for f in 0..12u64 {
            let name = format!("{f:06}.sst");
            let mut w = fs.writer(&name, Lifetime::Medium).await.expect("creates");
            let mut all = Vec::new();
            for k in 0..3u64 {
                let data = bytes(f * 10 + k, 96 << 10);
                w.append_compressed(&data, &[(96 << 10) as u32])
                    .await
                    .expect("CW");
                all.push(data);
            }
            w.close().await.expect("closes");
            let mut out = Vec::new();
            let size = fs.size(&name).expect("exists");
            fs.decompressed_read(&name, 0, size, true, 3 * (96 << 10), &mut out)
                .await
                .expect("DR across extents");
            assert_eq!(out, all.concat());
            if f % 2 == 1 {
                fs.delete(&format!("{:06}.sst", f - 1))
                    .await
                    .expect("deletes");
            }
        }
    });
}

#[test]
fn padding_zones_need_a_cczns_device_and_exclude_gc() {
    let (sim, dev) = device();
    let io = host(&sim, &dev);
    let (sim2, dev2) = cczns_device();
    let io2 = host(&sim2, &dev2);
    sim.block_on(async move {
        let e = ZoneFs::mkfs_with(io, padding())
            .await
            .err()
            .expect("refused");
        assert!(e.to_string().contains("CCZNS"), "{e}");
    });
    sim2.block_on(async move {
        let opts = MkfsOptions {
            enable_gc: true,
            ..padding()
        };
        let e = ZoneFs::mkfs_with(io2.clone(), opts)
            .await
            .err()
            .expect("refused");
        assert!(e.to_string().contains("GC"), "{e}");
        // Without padding zones a compressed write is refused by name.
        let fs = Rc::new(ZoneFs::mkfs(io2, 0).await.expect("mkfs"));
        let mut w = fs.writer("a.sst", Lifetime::Medium).await.expect("creates");
        let e = w
            .append_compressed(&[7u8; 4096], &[4096])
            .await
            .expect_err("refused");
        assert!(e.to_string().contains("padding"), "{e}");
    });
}
