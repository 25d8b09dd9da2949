//! `Work::Files` (ZNS+ §4's runs): the F2FS-like file system on a ZNS+ device under a
//! filebench personality and the OLTP stand-in, measured after a warm-up. Each scheme does
//! its own kind of copying, and the run list of `reproduce znsplus` is well formed.

use lab::files_run::{self, FilesRun};

fn run(scheme: &str, workload: &str) -> serde_json::Value {
    let r = FilesRun {
        scheme: scheme.into(),
        workload: workload.into(),
        fs_bytes: 1 << 30,
        utilisation_pct: 90,
        page_cache_bytes: 64 << 20,
        warmup_s: 3,
        measure_s: 3,
        cores: 4,
        trace: true,
        device_scale: Some(0.0625),
    };
    files_run::run(&r, device::presets::znsplus_mlc(), 1).expect("run")
}

#[test]
fn each_scheme_copies_its_own_way_under_fileserver() {
    let zns = run("zns", "fileserver");
    let plus = run("znsplus", "fileserver");
    for v in [&zns, &plus] {
        assert!(
            v["throughput"]["ops_per_s"].as_f64().unwrap() > 100.0,
            "{v}"
        );
        assert!(
            v["compactions"].as_f64().unwrap() + v["sections_reclaimed_tl"].as_f64().unwrap() > 0.0,
            "{v}"
        );
        let u = v["utilisation"].as_f64().unwrap();
        assert!((0.8..0.99).contains(&u), "utilisation {u}");
        let w = v["window_s"].as_f64().unwrap();
        assert!((2.9..3.3).contains(&w), "window {w}");
        let n = v["chip_utilisation_trace"].as_array().unwrap().len();
        assert!((29..=31).contains(&n), "{n} intervals of 100 ms");
    }
    // ZNS copies through the host, never by zone_compaction or threaded logging.
    assert!(zns["gc_host_copies"].as_f64().unwrap() > 0.0);
    assert_eq!(zns["gc_device_copies"].as_f64().unwrap(), 0.0);
    assert_eq!(zns["sections_reclaimed_tl"].as_f64().unwrap(), 0.0);
    // ZNS+ reclaims sections by threaded logging, the device plugging their valid blocks.
    assert!(
        plus["sections_reclaimed_tl"].as_f64().unwrap() > 0.0,
        "{plus}"
    );
    let plugged = plus["plugged_blocks_foreground"].as_f64().unwrap()
        + plus["plugged_blocks_background"].as_f64().unwrap();
    assert!(plugged > 0.0, "{plus}");
}

#[test]
fn the_oltp_stand_in_runs_and_bad_runs_are_refused_by_name() {
    let v = run("izc", "tpcc");
    assert!(v["throughput"]["ops_per_s"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["gc_host_copies"].as_f64().unwrap() + v["gc_device_copies"].as_f64().unwrap() >= 0.0);
    let mut r = FilesRun {
        scheme: "zns-lp".into(),
        workload: "fileserver".into(),
        fs_bytes: 1 << 30,
        utilisation_pct: 90,
        page_cache_bytes: 64 << 20,
        warmup_s: 1,
        measure_s: 1,
        cores: 4,
        trace: false,
        device_scale: None,
    };
    let e = files_run::run(&r, device::presets::znsplus_mlc(), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("zns-lp"), "{e}");
    r.scheme = "zns".into();
    r.workload = "webmail".into();
    let e = files_run::run(&r, device::presets::znsplus_mlc(), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("webmail"), "{e}");
    r.workload = "varmail".into();
    let e = files_run::run(&r, device::presets::cczns(), 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("znsplus"), "{e}");
}

#[test]
fn out_of_range_settings_are_refused_before_anything_runs() {
    let base = FilesRun {
        scheme: "zns".into(),
        workload: "fileserver".into(),
        fs_bytes: 1 << 30,
        utilisation_pct: 90,
        page_cache_bytes: 64 << 20,
        warmup_s: 1,
        measure_s: 1,
        cores: 4,
        trace: false,
        device_scale: Some(0.0625),
    };
    let bad = [
        FilesRun {
            warmup_s: u64::MAX,
            ..base.clone()
        },
        FilesRun {
            measure_s: 0,
            ..base.clone()
        },
        FilesRun {
            utilisation_pct: 100,
            ..base.clone()
        },
        FilesRun {
            cores: 0,
            ..base.clone()
        },
        FilesRun {
            device_scale: Some(2.0),
            ..base.clone()
        },
        FilesRun {
            fs_bytes: 4 << 20,
            ..base.clone()
        },
    ];
    for r in bad {
        assert!(
            files_run::run(&r, device::presets::znsplus_mlc(), 1).is_err(),
            "{r:?}"
        );
    }
}
