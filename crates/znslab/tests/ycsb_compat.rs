//! `znslab ycsb` with YCSB's own workload files (testdata/ycsb/, unchanged) and command
//! lines, in both command forms, its output read by the rules a YCSB-output parser uses, and
//! docs/compat/ycsb.md kept true.

mod common;
use common::{text, znslab, TempDir};

const FILES: [&str; 7] = [
    "workload_template",
    "workloada",
    "workloadb",
    "workloadc",
    "workloadd",
    "workloade",
    "workloadf",
];

fn testdata(name: &str) -> String {
    format!("{}/../../testdata/ycsb/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// YCSB's output as its parsers read it: every line `[SECTION], Metric, value` with a
/// number (Java's long or double, NaN and Infinity included).
fn parse(out: &str) -> Vec<(String, String, f64)> {
    out.lines()
        .map(|line| {
            let parts: Vec<&str> = line.splitn(3, ", ").collect();
            assert_eq!(parts.len(), 3, "not [SECTION], Metric, value: {line:?}");
            let section = parts[0];
            assert!(
                section.starts_with('[') && section.ends_with(']') && section.len() > 2,
                "{line:?}"
            );
            assert!(!parts[1].is_empty(), "{line:?}");
            let v: f64 = parts[2]
                .parse()
                .unwrap_or_else(|_| panic!("not a number: {line:?}"));
            (
                section[1..section.len() - 1].to_string(),
                parts[1].to_string(),
                v,
            )
        })
        .collect()
}

fn value(lines: &[(String, String, f64)], section: &str, metric: &str) -> Option<f64> {
    lines
        .iter()
        .find(|(s, m, _)| s == section && m == metric)
        .map(|l| l.2)
}

fn ok(args: &[&str]) -> (Vec<(String, String, f64)>, String) {
    let o = znslab(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    (parse(&text(&o.stdout)), text(&o.stderr))
}

#[test]
fn ycsbs_own_workload_files_run_unchanged_in_both_command_forms() {
    for name in FILES {
        let wl = testdata(name);
        let small = ["-p", "recordcount=300", "-p", "operationcount=200"];
        // znslab's form.
        let (lines, _) = ok(&[&["ycsb", "run", "-P", &wl][..], &small].concat());
        let overall = lines
            .iter()
            .filter(|(s, m, _)| s == "OVERALL" && m == "RunTime(ms)")
            .count();
        assert_eq!(overall, 1, "{name}: one [OVERALL] block");
        let ops: f64 = lines
            .iter()
            .filter(|(s, m, _)| {
                m == "Operations"
                    && !["CLEANUP", "READ-MODIFY-WRITE", "SCAN-LATENCY-PER-RECORD"]
                        .contains(&s.as_str())
            })
            .map(|l| l.2)
            .sum();
        let rmw = value(&lines, "READ-MODIFY-WRITE", "Operations").unwrap_or(0.0);
        // A read-modify-write is measured as a READ and an UPDATE too.
        assert_eq!(ops - rmw, 200.0, "{name}: {lines:?}");
        assert_eq!(value(&lines, "CLEANUP", "Operations"), Some(1.0), "{name}");
        assert_eq!(value(&lines, "TOTAL_GCs", "Count"), Some(0.0), "{name}");
        // YCSB's form, through bin/ycsb: binding, -s, -threads, -target, rocksdb.dir.
        for phase in ["load", "run"] {
            let (lines, err) = ok(&[
                &[
                    "ycsb",
                    phase,
                    "rocksdb",
                    "-P",
                    &wl,
                    "-s",
                    "-threads",
                    "2",
                    "-target",
                    "100000",
                    "-p",
                    "rocksdb.dir=/tmp/ycsb-rocksdb-data",
                ][..],
                &small,
            ]
            .concat());
            assert_eq!(value(&lines, "CLEANUP", "Operations"), Some(2.0), "{name}");
            let runtime = value(&lines, "OVERALL", "RunTime(ms)").expect("RunTime");
            let n = if phase == "load" { 300.0 } else { 200.0 };
            // 100000 ops/s: at least n / 100 ms.
            assert!(runtime >= n / 100.0 - 1.0, "{name} {phase}: {runtime} ms");
            assert!(err.contains(" sec: "), "{name}: status lines: {err}");
            assert!(err.contains("rocksdb.dir"), "{name}: the notice: {err}");
        }
        if name == "workload_template" {
            // measurementtype=histogram: its lines.
            assert!(value(&lines, "READ", "LatencyVariance(us)").is_some());
        }
    }
}

#[test]
fn a_run_without_an_image_prints_one_overall_block_and_says_it_loaded() {
    let wl = testdata("workloada");
    let o = znslab(&[
        "ycsb",
        "run",
        "-P",
        &wl,
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=100",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.matches("[OVERALL], RunTime(ms)").count(), 1, "{out}");
    assert!(!out.contains("[INSERT]"), "the load is not reported: {out}");
    assert!(text(&o.stderr).contains("loaded 500 records first"));
    parse(&out);
}

#[test]
fn workload_f_counts_a_read_modify_writes_read_and_update_as_ycsb_does() {
    let (lines, _) = ok(&[
        "ycsb",
        "run",
        "-P",
        &testdata("workloadf"),
        "-p",
        "recordcount=500",
        "-p",
        "operationcount=400",
    ]);
    let get = |s: &str, m: &str| value(&lines, s, m).unwrap_or(0.0);
    let rmw = get("READ-MODIFY-WRITE", "Operations");
    assert!(rmw > 100.0, "{lines:?}");
    assert_eq!(get("UPDATE", "Operations"), rmw);
    assert_eq!(get("READ", "Operations"), 400.0);
    assert_eq!(get("READ", "Return=OK"), 400.0);
    // CoreWorkload measures READ-MODIFY-WRITE but reports no status for it.
    assert!(value(&lines, "READ-MODIFY-WRITE", "Return=OK").is_none());
    assert!(value(&lines, "READ-MODIFY-WRITE", "50thPercentileLatency(us)").is_some());
}

#[test]
fn exporters_exportfile_and_percentiles() {
    let dir = TempDir::new("ycsb-export");
    let wl = testdata("workloadc");
    let base = [
        "ycsb",
        "run",
        "-P",
        &wl,
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=100",
    ];
    let o = znslab(
        &[
            &base[..],
            &[
                "-p",
                "exporter=site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON array");
    assert_eq!(v[0]["metric"], "OVERALL");
    assert_eq!(v[0]["measurement"], "RunTime(ms)");
    assert!(text(&o.stderr).contains("[ZNSLAB], HostBytesWritten"));
    let file = dir.path("out.txt");
    let o = znslab(
        &[
            &base[..],
            &[
                "-p",
                &format!("exportfile={file}"),
                "-p",
                "hdrhistogram.percentiles=90,99.9",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("[OVERALL]"));
    let lines = parse(&std::fs::read_to_string(&file).expect("exportfile written"));
    assert!(value(&lines, "READ", "90thPercentileLatency(us)").is_some());
    assert!(value(&lines, "READ", "99.9PercentileLatency(us)").is_some());
    assert!(value(&lines, "READ", "50thPercentileLatency(us)").is_none());
    // timeseries: a series of (ms, average) lines after the summary.
    let (lines, _) = ok(&[
        &base[..],
        &[
            "-p",
            "measurementtype=timeseries",
            "-p",
            "timeseries.granularity=1",
            "-target",
            "20000",
        ],
    ]
    .concat());
    let series = lines
        .iter()
        .filter(|(s, m, _)| s == "READ" && m.parse::<u64>().is_ok())
        .count();
    assert!(series >= 4, "{lines:?}");
}

#[test]
fn status_target_and_maxexecutiontime_run_on_the_virtual_clock() {
    let o = znslab(&[
        "ycsb",
        "run",
        "rocksdb",
        "-P",
        &testdata("workloadb"),
        "-p",
        "recordcount=300",
        "-p",
        "operationcount=0",
        "-p",
        "maxexecutiontime=3",
        "-target",
        "200",
        "-s",
        "-l",
        "lbl",
        "-p",
        "status.interval=1",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines = parse(&text(&o.stdout));
    let runtime = value(&lines, "OVERALL", "RunTime(ms)").expect("runtime");
    assert!((3000.0..3020.0).contains(&runtime), "{runtime}");
    let ops = value(&lines, "OVERALL", "Throughput(ops/sec)").expect("tput") * runtime / 1000.0;
    assert!((595.0..=605.0).contains(&ops), "{ops}");
    let err = text(&o.stderr);
    let status: Vec<&str> = err.lines().filter(|l| l.starts_with("lbl1970-")).collect();
    assert_eq!(status.len(), 5, "at 0, 1, 2, 3 s and the end: {err}");
    assert!(
        status[2].contains(" 2 sec: 400 operations; 200 current ops/sec; "),
        "{err}"
    );
    assert!(status[2].contains("[READ: Count="), "{err}");
    // Without maxexecutiontime, operationcount=0 would never end.
    let o = znslab(&[
        "ycsb",
        "run",
        "-P",
        &testdata("workloadb"),
        "-p",
        "operationcount=0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("maxexecutiontime"));
}

#[test]
fn what_makes_no_sense_here_is_refused_with_a_reason() {
    let wl = testdata("workloada");
    for (args, says) in [
        (vec!["ycsb", "run", "basic", "-P", &wl], "BasicDB"),
        (vec!["ycsb", "run", "mongodb", "-P", &wl], "rocksdb"),
        (vec!["ycsb", "shell", "rocksdb"], "shell"),
        (vec!["ycsb", "run", "rocksdb", "-load", "-P", &wl], "-load"),
        (vec!["ycsb", "load", "-t", "-P", &wl], "-t"),
        (vec!["ycsb", "load", "-db", "site.ycsb.BasicDB"], "db"),
        (
            vec!["ycsb", "load", "-P", &wl, "-p", "dataintegrity=true"],
            "dataintegrity",
        ),
        (
            vec!["ycsb", "load", "-P", &wl, "-p", "measurementtype=raw"],
            "measurementtype",
        ),
        (
            vec![
                "ycsb",
                "load",
                "-P",
                &wl,
                "-p",
                "measurement.histogram.verbose=true",
            ],
            "verbose",
        ),
    ] {
        let o = znslab(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = text(&o.stderr);
        assert!(e.contains(says), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: one line: {e}");
    }
}

/// docs/compat/ycsb.md: every row `| name | example | status |`. A `supported` (or
/// `supported, differs`, or `ignored`) property parses with its example value in a small load;
/// a `refused` one is refused naming it. Flags (rows starting with `-` or a command) likewise.
#[test]
fn the_compatibility_table_is_true() {
    let doc = std::fs::read_to_string(format!(
        "{}/../../docs/compat/ycsb.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("docs/compat/ycsb.md");
    let dir = TempDir::new("ycsb-compat");
    let wl = testdata("workloada");
    let mut rows = 0;
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 5 || !cells[1].starts_with('`') || !cells[2].starts_with('`') {
            continue;
        }
        rows += 1;
        let name = cells[1].trim_matches('`');
        let example = cells[2].trim_matches('`').replace("$TMP", &dir.path(""));
        let status = cells[3];
        let mut args: Vec<String> = vec!["ycsb".into()];
        if name.starts_with('-') || name.starts_with("ycsb ") {
            // A flag or command: the example is the command line after `znslab ycsb`.
            args.extend(example.split_whitespace().map(|s| s.replace("WL", &wl)));
        } else {
            args.extend(
                [
                    "load",
                    "-P",
                    &wl,
                    "-p",
                    "recordcount=20",
                    "-p",
                    &format!("{name}={example}"),
                ]
                .map(String::from),
            );
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = znslab(&a);
        if status.starts_with("refused") {
            assert_eq!(o.status.code(), Some(2), "{name} is refused: {a:?}");
            let e = text(&o.stderr);
            assert!(
                e.contains(name.split_whitespace().last().unwrap_or(name)),
                "{name}: {e}"
            );
        } else {
            assert!(
                status.starts_with("supported") || status.starts_with("ignored"),
                "{name}: status {status:?}"
            );
            assert!(o.status.success(), "{name} ({a:?}): {}", text(&o.stderr));
            if status.starts_with("ignored") {
                assert!(
                    text(&o.stderr).contains("znslab ycsb: "),
                    "{name}: ignored with a notice: {}",
                    text(&o.stderr)
                );
            }
        }
    }
    assert!(rows > 60, "{rows} rows read");
}

/// zonefs's policy flags (db_bench's names): ZenFS+ on its small-zone device runs a workload
/// and reports its reclaiming; a policy zonefs does not have is refused before anything runs.
#[test]
fn the_zenfsplus_policy_flags_run_and_a_wrong_one_is_refused() {
    let wl = testdata("workloada");
    let o = znslab(&[
        "ycsb",
        "run",
        "-P",
        &wl,
        "-p",
        "recordcount=3000",
        "-p",
        "operationcount=3000",
        "--device",
        "zenfsplus-hynix-small",
        "--fs_policy",
        "zenfsplus",
        "--zenfsplus_isolation=false",
        "--max_stripe_width",
        "8",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(
        v["zonefs"]["minor_gc"]["passes"].is_u64(),
        "{}",
        v["zonefs"]
    );
    assert!(v["zonefs"]["full_gc"]["zones_emptied"].is_u64());
    assert!(v["zonefs"]["used_bytes"].as_u64().unwrap() > 0);
    for (flag, says) in [
        ("--fs_policy=f2fs", "--fs_policy=f2fs"),
        ("--izg_probe=guess", "--izg_probe=guess"),
        ("--zenfsplus_reclaim=maybe", "zenfsplus_reclaim"),
    ] {
        let o = znslab(&["ycsb", "run", "-P", &wl, flag]);
        assert!(!o.status.success(), "{flag}");
        assert!(
            text(&o.stderr).contains(says),
            "{flag}: {}",
            text(&o.stderr)
        );
    }
}
