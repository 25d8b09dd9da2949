//! `znslab dbbench` under ZenFS+'s policy: the IZG probe at mkfs kept out of the run's
//! figures, and db_bench's interval report and znslab's series (ZenFS+ Fig. 2, 9, 10).

mod common;

use common::{dbbench_ok as run, dbbench_refused as refused};

/// ZenFS+'s policy from db_bench's command line: mkfs probes the small-zone device's 32
/// independent zone groups (reported, and left out of the run's byte counts), SSTs are striped.
#[test]
fn zenfsplus_probes_the_groups_and_keeps_the_probe_out_of_the_figures() {
    let common = [
        "--benchmarks=fillrandom",
        "--num=30000",
        "--key_size=20",
        "--value_size=800",
        "--write_buffer_size=4194304",
        "--device=zenfsplus-hynix-small",
        "--compression_type=none",
        "--json",
    ];
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut a = common.to_vec();
        a.extend_from_slice(extra);
        serde_json::from_str(&run(&a).0).expect("JSON")
    };
    let plus = json(&["--fs_policy=zenfsplus", "--izg_probe=read"]);
    assert_eq!(plus["izg_probe"]["groups"], 32);
    assert_eq!(plus["izg_probe"]["mode"], "read");
    assert!(plus["izg_probe"]["bytes_read"].as_u64().unwrap() > 0);
    let zenfs = json(&[]);
    assert!(zenfs.get("izg_probe").is_none());
    // The same data written either way: the probe's writes are not the run's.
    let wa = |v: &serde_json::Value| v["write_amplification"].as_f64().unwrap();
    assert!(
        (wa(&plus) / wa(&zenfs) - 1.0).abs() < 0.2,
        "{} {}",
        wa(&plus),
        wa(&zenfs)
    );
    let (out, _) = run(&common[..7]
        .iter()
        .copied()
        .chain(["--fs_policy=zenfsplus", "--izg_probe=read"])
        .collect::<Vec<_>>());
    assert!(
        out.contains("IZG probe:  32 independent zone groups"),
        "{out}"
    );
    refused(
        &[&common[..7], &["--fs_policy=zenfs+"]].concat(),
        "fs_policy",
    );
    refused(
        &[&common[..7], &["--izg_probe=sideways"]].concat(),
        "izg_probe",
    );
}

#[test]
fn report_interval_writes_db_bench_report_file_and_the_series() {
    let dir = common::TempDir::new("dbbench-report");
    let report = dir.path("report.csv");
    let report_arg = format!("--report_file={report}");
    let (out, _) = run(&[
        "--benchmarks=fillrandom",
        "--num=60000",
        "--value_size=800",
        "--write_buffer_size=4194304",
        "--compression_type=none",
        "--report_interval_seconds=1",
        "--latency_interval_ms=100",
        // 49 MB at 20 MB/s: two whole seconds and a part.
        "--benchmark_write_rate_limit=20000000",
        &report_arg,
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let b = &v["benchmarks"][0];
    let secs = b["seconds"].as_f64().unwrap();
    let iv = &b["intervals"];
    // ReporterAgent's file: its header, then one line per whole interval.
    let csv = std::fs::read_to_string(&report).expect("report file");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("secs_elapsed,interval_qps"));
    let rows: Vec<(u64, u64)> = lines
        .map(|l| {
            let (a, b) = l.split_once(',').expect("two columns");
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), secs.floor() as usize, "{csv}");
    assert!(rows.len() >= 2, "{csv}");
    assert!(rows.iter().enumerate().all(|(i, r)| r.0 == i as u64 + 1));
    let in_whole: u64 = rows.iter().map(|r| r.1).sum();
    assert!(in_whole <= 60_000 && in_whole > 0);
    assert_eq!(iv["finished_ops"].as_array().unwrap().len(), rows.len());
    // Every operation in one latency interval, by issue time.
    let lat = iv["latency_us"].as_array().unwrap();
    assert_eq!(lat.len(), (secs * 10.0).ceil() as usize);
    let ops: u64 = lat.iter().map(|l| l["ops"].as_u64().unwrap()).sum();
    assert_eq!(ops, 60_000);
    assert!(lat
        .iter()
        .all(|l| l["p99"].as_f64().unwrap() <= l["max"].as_f64().unwrap() + 1e-9));
    // Flush bytes per second add up to what the flushes wrote.
    let flushed: u64 = v["job_series"]["flush_written_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert!(v["flushes"].as_u64().unwrap() > 0);
    assert!(flushed > 0);
    // Without the flags, none of it.
    let (out, _) = run(&["--benchmarks=fillrandom", "--num=2000", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(v["benchmarks"][0].get("intervals").is_none());
    assert!(v.get("job_series").is_none());
    refused(
        &["--benchmarks=fillrandom", "--report_interval_seconds=-1"],
        "report_interval_seconds",
    );
}
