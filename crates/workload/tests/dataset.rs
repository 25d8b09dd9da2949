//! Datasets through the workloads: values of Table III sizes drawn from a corpus file in the
//! corpus directory (a small stand-in corpus here; `znslab corpus build` makes the real ones).

use std::rc::Rc;

use device::{presets, Controller, DeviceHandle};
use host::lsm::db::{Db, DbOptions};
use host::zonefs::ZoneFs;
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::{Rng, Sim};
use workload::dataset::Dataset;
use workload::dbbench::{self, DbBenchConfig};
use workload::ycsb::{self, YcsbConfig};

/// English-like text: words from a small vocabulary, so it compresses as text does.
fn fake_corpus() -> Vec<u8> {
    let words = [
        "the",
        "review",
        "product",
        "quality",
        "would",
        "recommend",
        "price",
        "shipping",
        "arrived",
        "broken",
        "excellent",
        "works",
        "battery",
        "great",
        "after",
        "weeks",
        "returned",
        "seller",
    ];
    let mut rng = Rng::new(5);
    let mut out = Vec::new();
    while out.len() < 600_000 {
        out.extend_from_slice(words[rng.below(words.len() as u64) as usize].as_bytes());
        out.push(if rng.below(12) == 0 { b'\n' } else { b' ' });
    }
    out
}

#[test]
fn datasets_feed_ycsb_and_db_bench_from_the_corpus_directory() {
    let dir = std::env::temp_dir().join(format!("znslab-corpus-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("gcide.txt"), fake_corpus()).expect("corpus");
    std::env::set_var("ZNSLAB_CORPUS_DIR", &dir);

    // db_bench: values average Amazon's 1174 bytes and compress like text.
    let run = |codec| {
        let cfg = DbBenchConfig {
            benchmarks: vec!["fillseq".into(), "readrandom".into()],
            num: 8000,
            write_buffer_size: 1 << 20,
            compression: host::lsm::db::Compression::host(codec),
            dataset: Dataset::Amazon,
            ..DbBenchConfig::default()
        };
        dbbench::run(presets::cczns(), &cfg).expect("runs")
    };
    let plain = run(codec::Codec::None);
    let per_op = plain.results[0].bytes as f64 / 8000.0;
    assert!((1000.0..1400.0).contains(&per_op), "{per_op} bytes per op");
    assert_eq!(plain.results[1].found, 8000);
    let zstd = run(codec::Codec::ZSTD1);
    let stored = |r: &dbbench::DbBenchReport| r.db.level_bytes.iter().sum::<u64>();
    assert!(
        stored(&zstd) * 2 < stored(&plain),
        "{} vs {}",
        stored(&zstd),
        stored(&plain)
    );

    // YCSB: `-p dataset=amazon` loads corpus values and updates replace them whole.
    let sim = Sim::new(2);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::cczns()).expect("valid"),
    );
    let io = Rc::new(HostIo::new(
        &dev,
        Rc::new(CpuPool::new(&sim, 4)),
        IoConfig::default(),
    ));
    let sim2 = sim.clone();
    sim.block_on(async move {
        let fs = Rc::new(ZoneFs::mkfs(io, 0).await.expect("mkfs"));
        let db = Rc::new(Db::open(fs, DbOptions::default()).await.expect("opens"));
        let mut cfg = YcsbConfig::default();
        cfg.set("dataset", "amazon").expect("known dataset");
        cfg.set("recordcount", "2000").expect("ok");
        cfg.set("operationcount", "2000").expect("ok");
        cfg.set("updateproportion", "0.5").expect("ok");
        cfg.set("readproportion", "0.5").expect("ok");
        ycsb::load(&sim2, &db, &cfg).await.expect("loads");
        let r = ycsb::run(&sim2, &db, &cfg).await.expect("runs");
        assert_eq!(r.by_op["READ"].not_found, 0);
        let v = db
            .get(&ycsb::key_name(3, true))
            .await
            .expect("reads")
            .expect("present");
        assert!(
            v.iter()
                .all(|b| b.is_ascii_lowercase() || *b == b' ' || *b == b'\n'),
            "corpus text"
        );
    });
    assert!(YcsbConfig::default().set("dataset", "yelp").is_err());
    std::env::remove_var("ZNSLAB_CORPUS_DIR");
    let _ = std::fs::remove_dir_all(&dir);
}

/// CCZNS §IV-B: the CC scheme (the device compresses, the store keeps the index) reads back
/// every value it wrote, on every dataset, through lookups, a scan and a reopen.
#[test]
fn the_cc_scheme_reads_back_every_value_on_every_dataset() {
    use std::collections::BTreeMap;
    use workload::dataset::Values;
    for dataset in [Dataset::Random, Dataset::Amazon, Dataset::Reddit] {
        let mut cfg = presets::test_cczns();
        cfg.nand.blocks_per_plane = 64;
        cfg.zones.max_open = 6;
        let sim = Sim::new(1);
        let dev = DeviceHandle::new(&sim, Controller::in_memory(cfg).expect("valid"));
        let io = Rc::new(HostIo::new(
            &dev,
            Rc::new(CpuPool::new(&sim, 2)),
            IoConfig::default(),
        ));
        let scheme = workload::scheme::by_name("cc").expect("cc");
        let mut opts = DbOptions {
            write_buffer_size: 128 << 10,
            max_bytes_for_level_base: 512 << 10,
            target_file_size: 128 << 10,
            ..DbOptions::default()
        };
        scheme.apply(&mut opts);
        let fs_opts = opts.mkfs_options(Default::default());
        let values =
            (dataset != Dataset::Random).then(|| Values::from_bytes(dataset, fake_corpus()));
        let io2 = io.clone();
        sim.block_on(async move {
            let fs = Rc::new(ZoneFs::mkfs_with(io2.clone(), fs_opts).await.expect("mkfs"));
            let db = Db::open(fs.clone(), opts.clone()).await.expect("opens");
            let mut rng = Rng::new(7);
            let mut model = BTreeMap::new();
            for i in 0..3000u64 {
                let k = format!("user{:012}", rng.below(2000)).into_bytes();
                let v = match &values {
                    Some(vals) => vals.next(&mut rng),
                    None => {
                        let mut v = vec![0u8; 1000];
                        rng.fill(&mut v);
                        v
                    }
                };
                db.put(&k, &v, i % 500 == 0).await.expect("puts");
                model.insert(k, v);
            }
            db.flush().await.expect("flushes");
            db.wait_for_background().await.expect("background work");
            assert!(io2.counters().compressed_writes > 0, "{dataset:?}");
            for (k, v) in &model {
                assert_eq!(
                    db.get(k).await.expect("reads").as_ref(),
                    Some(v),
                    "{dataset:?}"
                );
            }
            let all = db.scan(b"", usize::MAX).await.expect("scans");
            assert_eq!(all.len(), model.len());
            assert!(all
                .iter()
                .zip(&model)
                .all(|(a, b)| a.0 == *b.0 && a.1 == *b.1));
            db.close().await.expect("closes");
            let db = Db::open(fs, opts).await.expect("reopens");
            for (k, v) in model.iter().step_by(3) {
                assert_eq!(
                    db.get(k).await.expect("reads").as_ref(),
                    Some(v),
                    "{dataset:?}"
                );
            }
        });
    }
}
