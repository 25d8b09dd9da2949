//! YCSB on the store: Load then each core workload; every read finds its record, inserts
//! grow the key space, scans return records, updates keep records whole.

use std::rc::Rc;

use device::{presets, Controller, DeviceHandle};
use host::lsm::db::{Db, DbOptions};
use host::zonefs::ZoneFs;
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::Sim;
use workload::ycsb::{self, YcsbConfig};

fn workload(name: &str, records: u64, ops: u64) -> YcsbConfig {
    let mut c = YcsbConfig::default();
    let path = format!("{}/../../workloads/{name}", env!("CARGO_MANIFEST_DIR"));
    c.load_file(&std::fs::read_to_string(path).expect("workload file"))
        .expect("parses");
    c.recordcount = records;
    c.operationcount = ops;
    c.threads = 4;
    c
}

#[test]
fn every_core_workload_runs_after_a_load() {
    let sim = Sim::new(1);
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
        let opts = DbOptions {
            write_buffer_size: 1 << 20,
            ..DbOptions::default()
        };
        let db = Rc::new(Db::open(fs, opts).await.expect("opens"));
        let load = ycsb::load(&sim2, &db, &workload("workloada", 4000, 0))
            .await
            .expect("loads");
        assert_eq!(load.by_op["INSERT"].ok, 4000);
        assert!(db.stats().flushes > 0, "records reached SSTs");
        for name in ["workloada", "workloadb", "workloadc", "workloadf"] {
            let r = ycsb::run(&sim2, &db, &workload(name, 4000, 2000))
                .await
                .expect("runs");
            assert_eq!(r.ops, 2000);
            for (op, s) in &r.by_op {
                assert_eq!(s.not_found, 0, "{name} {op}: a loaded record was missing");
            }
            assert!(r.text().contains("[OVERALL], Throughput(ops/sec)"));
        }
        // D inserts new records and reads the latest ones.
        let d = ycsb::run(&sim2, &db, &workload("workloadd", 4000, 2000))
            .await
            .expect("runs");
        assert!(d.by_op["INSERT"].ok > 50, "{:?}", d.by_op["INSERT"].ok);
        assert_eq!(d.by_op["READ"].not_found, 0);
        // E scans.
        let e = ycsb::run(&sim2, &db, &workload("workloade", 4000, 300))
            .await
            .expect("runs");
        assert!(e.by_op["SCAN"].ok > 250);
        // Records stay whole after updates: 10 fields of 100 bytes in the binding's layout.
        let some = db
            .get(&ycsb::key_name(7, true))
            .await
            .expect("reads")
            .expect("present");
        assert_eq!(some.len(), 10 * (4 + 6 + 4 + 100));
    });
}

/// The RocksDB binding's update reads the record first and, when it is not there, returns
/// NOT_FOUND and writes nothing; YCSB reports it under UPDATE-FAILED and as UPDATE's
/// Return=NOT_FOUND.
#[test]
fn an_update_of_a_missing_record_writes_nothing() {
    let sim = Sim::new(1);
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
        ycsb::load(&sim2, &db, &workload("workloada", 100, 0))
            .await
            .expect("loads");
        // A run that believes in 200 records: half its updates meet no record.
        let mut c = workload("workloada", 200, 400);
        c.set("readproportion", "0").expect("set");
        c.set("updateproportion", "1").expect("set");
        let r = ycsb::run(&sim2, &db, &c).await.expect("runs");
        let failed = r.by_op["UPDATE-FAILED"].latency.count();
        assert!(failed > 100, "{failed} updates of missing records");
        assert_eq!(r.by_op["UPDATE"].not_found, failed);
        assert_eq!(r.by_op["UPDATE"].ok + failed, 400);
        let text = r.text();
        assert!(
            text.contains(&format!("[UPDATE], Return=NOT_FOUND, {failed}"))
                && text.contains("[UPDATE-FAILED], Operations"),
            "{text}"
        );
        for k in 100..200 {
            assert!(
                db.get(&ycsb::key_name(k, true))
                    .await
                    .expect("reads")
                    .is_none(),
                "record {k} was never inserted, yet an update wrote it"
            );
        }
    });
}
