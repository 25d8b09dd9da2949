//! A modeled payload (issue 25) agrees with real bytes: for every CCZNS scheme, the same run
//! made both ways writes within 5% of the same bytes to the device and to flash (over the Load
//! and over the whole run) and loads within 5% of the same throughput; its short workloads
//! within 15% (see below). The size model is measured on the shipped test corpus (and kept
//! beside it in `testdata/corpus/gcide.sizes.json`).

use lab::spec::{DeviceChoice, HostOptions, Payload, RunSpec, StoreOptions, Work, YcsbRun};
use serde_json::Value;

fn run(scheme: &str, payload: Payload) -> Value {
    let sch = workload::scheme::by_name(scheme).expect("scheme");
    let spec = RunSpec {
        name: format!("{scheme}-{payload:?}"),
        title: String::new(),
        seed: 3,
        device: DeviceChoice::Named(sch.device.to_string()),
        work: Work::Ycsb(YcsbRun {
            host: HostOptions {
                cores: 16,
                // `reproduce cczns`'s store at its smallest scale.
                store: StoreOptions {
                    block_bytes: 4096,
                    write_buffer_bytes: 256 << 10,
                    target_file_size_bytes: 256 << 10,
                    max_bytes_for_level_base: 1 << 20,
                    block_cache_bytes: 4 << 20,
                },
            },
            scheme: scheme.into(),
            dataset: "amazon".into(),
            records: 24_000,
            operations: 8_000,
            threads: 1,
            workloads: vec!["a".into(), "c".into()],
            device_scale: None,
            image: None,
            resume: false,
            payload,
            zonefs: Default::default(),
        }),
        tags: Default::default(),
    };
    spec.run().expect("runs").json
}

fn close(what: &str, real: f64, modeled: f64, bound: f64) -> Option<String> {
    let off = (modeled - real).abs() / real.max(1.0);
    (off > bound).then(|| format!("{what}: real {real:.0}, modeled {modeled:.0} ({off:.3})"))
}

#[test]
fn every_scheme_writes_and_loads_within_five_percent_of_real_bytes() {
    std::env::set_var(
        "ZNSLAB_CORPUS_DIR",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/corpus"),
    );
    let mut misses = Vec::new();
    for scheme in [
        "no",
        "snappy",
        "qat",
        "zstd",
        "zstdpc",
        "balloon",
        "tcssd",
        "cc",
        "cc-single-dr",
        "cc-single-cw",
    ] {
        let (r, m) = (run(scheme, Payload::Real), run(scheme, Payload::Modeled));
        let phases = r["phases"].as_array().expect("phases");
        assert_eq!(phases.len(), 3, "{scheme}: load, a, c");
        let figure = |v: &Value, i: usize, key: &str| v["phases"][i][key].as_f64().expect(key);
        // The Load within 5%. A workload of a few thousand operations starts on a tree one
        // L0 file more or less than the other payload's (sizes differ by a few percent, and a
        // flush falls a little earlier or later), which moves its read cost by up to ~12%
        // here either way (cc: 15 532 DRs real, 13 977 modeled): 15%. At `reproduce cczns
        // --scale 0.02` the phases are long enough for 5% (docs/commands/reproduce.md).
        for i in 0..phases.len() {
            let key = "throughput_ops_per_s";
            let what = format!("{scheme} phase {i} ops/s");
            let bound = if i == 0 { 0.05 } else { 0.15 };
            misses.extend(close(&what, figure(&r, i, key), figure(&m, i, key), bound));
        }
        // Write volumes over the Load and over the whole run (a workload's own volume moves
        // with the one flush or compaction falling before or after its end).
        for key in ["host_bytes_written", "flash_bytes_programmed"] {
            let total = |v: &Value| (0..phases.len()).map(|i| figure(v, i, key)).sum::<f64>();
            let load = format!("{scheme} load {key}");
            misses.extend(close(&load, figure(&r, 0, key), figure(&m, 0, key), 0.05));
            let run = format!("{scheme} run {key}");
            misses.extend(close(&run, total(&r), total(&m), 0.05));
        }
    }
    assert!(misses.is_empty(), "{misses:#?}");
}
