//! `znslab filebench`: the paper's workloads (fileserver, varmail) run from the shipped
//! files, with filebench's output lines (stats.c's formats), JSON agreeing with the text,
//! the same output for the same seed, `--set` overrides and line-numbered refusals.

mod common;

use common::{text, znslab, TempDir};

const FILESERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/filebench/fileserver.f"
);
const VARMAIL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../testdata/filebench/varmail.f"
);

fn run(file: &str, extra: &[&str]) -> (String, String, i32) {
    let mut args = vec![
        "filebench",
        file,
        "--runtime",
        "1",
        "--syscall-ns",
        "20000",
        "--fs-size",
        "256m",
        "--fs",
        "memfs",
    ];
    args.extend_from_slice(extra);
    let o = znslab(&args);
    (
        text(&o.stdout),
        text(&o.stderr),
        o.status.code().unwrap_or(-1),
    )
}

/// `%-20s %dops %8.0lfops/s %5.1lfmb/s %8.3fms/op [%.3fms - %5.3fms]`
fn flowop_line(l: &str) -> Option<(String, u64)> {
    let (name, rest) = l.split_at(20.min(l.len()));
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ok = f.len() == 7
        && f[0]
            .strip_suffix("ops")
            .is_some_and(|n| n.parse::<u64>().is_ok())
        && f[1]
            .strip_suffix("ops/s")
            .is_some_and(|n| n.parse::<f64>().is_ok() && !n.contains('.'))
        && f[2]
            .strip_suffix("mb/s")
            .is_some_and(|n| n.split_once('.').is_some_and(|(_, d)| d.len() == 1))
        && f[3]
            .strip_suffix("ms/op")
            .is_some_and(|n| n.split_once('.').is_some_and(|(_, d)| d.len() == 3))
        && f[4].starts_with('[')
        && f[4].ends_with("ms")
        && f[5] == "-"
        && f[6].ends_with("ms]");
    ok.then(|| {
        (
            name.trim_end().to_string(),
            f[0].trim_end_matches("ops").parse().unwrap(),
        )
    })
}

fn flowops(out: &str) -> Vec<(String, u64)> {
    out.lines().filter_map(flowop_line).collect()
}

/// `IO Summary: %5d ops %5.3lf ops/s %0.0lf/%0.0lf rd/wr %5.1lfmb/s %5.3fms/op`
fn summary(out: &str) -> Vec<String> {
    let l = out
        .lines()
        .find(|l| l.contains(": IO Summary: "))
        .expect("IO Summary line");
    let (at, rest) = l.split_once(": IO Summary: ").unwrap();
    assert!(at.split_once('.').is_some_and(|(_, d)| d.len() == 3), "{l}");
    let f: Vec<String> = rest.split_whitespace().map(String::from).collect();
    assert_eq!(f.len(), 8, "{l}");
    assert_eq!(
        (f[1].as_str(), f[3].as_str(), f[5].as_str()),
        ("ops", "ops/s", "rd/wr"),
        "{l}"
    );
    assert!(
        f[2].split_once('.').is_some_and(|(_, d)| d.len() == 3),
        "{l}"
    );
    assert!(f[6].ends_with("mb/s") && f[7].ends_with("ms/op"), "{l}");
    f
}

#[test]
fn fileserver_runs_with_filebenchs_output() {
    let (out, err, code) = run(FILESERVER, &["--set", "nfiles=500", "--set", "nthreads=8"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.starts_with("Filebench Version 1.5-alpha3\n"), "{out}");
    assert!(out.contains("File-server Version 3.0 personality successfully loaded"));
    assert!(
        out.contains(": bigfileset populated: 500 files, avg. dir. width = 20,"),
        "{out}"
    );
    assert!(err.contains("MemFs"), "{err}");
    let ops = flowops(&out);
    let names: Vec<&str> = ops.iter().map(|(n, _)| n.as_str()).collect();
    // stats.c's order: filebench's flowop list, the last defined first.
    assert_eq!(names.first(), Some(&"statfile1"), "{out}");
    assert_eq!(names.last(), Some(&"createfile1"), "{out}");
    assert_eq!(names.len(), 11, "{out}");
    let count = |n: &str| ops.iter().find(|(m, _)| m == n).unwrap().1;
    // The loop: each flowop once per pass (a few passes in flight at the end).
    let c = count("createfile1");
    assert!(c > 100, "{out}");
    for n in [
        "wrtfile1",
        "closefile1",
        "openfile1",
        "appendfilerand1",
        "readfile1",
    ] {
        assert!(count(n).abs_diff(c) <= 8, "{n}: {out}");
    }
    let s = summary(&out);
    let io_ops: u64 = s[0].parse().unwrap();
    assert_eq!(
        io_ops,
        ops.iter().map(|(_, c)| c).sum::<u64>(),
        "all of fileserver's flowops are I/O"
    );
}

#[test]
fn varmail_fsyncs_twice_per_delete() {
    let (out, err, code) = run(VARMAIL, &["--set", "$nfiles=300", "--set", "nthreads=4"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let ops = flowops(&out);
    let count = |n: &str| ops.iter().find(|(m, _)| m == n).unwrap().1;
    let (del, fsync) = (
        count("deletefile1"),
        count("fsyncfile2") + count("fsyncfile3"),
    );
    assert!(del > 100, "{out}");
    assert!(
        fsync + 8 >= 2 * del && (fsync as f64) < 2.2 * del as f64,
        "{fsync} vs {del}"
    );
    assert!(out.contains("bigfileset populated: 300 files"), "{out}");
}

#[test]
fn json_and_text_agree_and_the_seed_decides_the_output() {
    let args = ["--set", "nfiles=200", "--set", "nthreads=4", "--seed", "9"];
    let (a, _, _) = run(VARMAIL, &args);
    let (b, _, _) = run(VARMAIL, &args);
    assert_eq!(a, b, "same seed, same output");
    let (c, _, _) = run(
        VARMAIL,
        &["--set", "nfiles=200", "--set", "nthreads=4", "--seed", "10"],
    );
    assert_ne!(a, c);
    let mut jargs = args.to_vec();
    jargs.extend_from_slice(&["--output-format", "json"]);
    let (j, _, code) = run(VARMAIL, &jargs);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&j).expect("JSON");
    let fl = v["result"]["flowops"].as_array().expect("flowops");
    let text_ops = flowops(&a);
    assert_eq!(fl.len(), text_ops.len());
    for (f, (n, c)) in fl.iter().zip(&text_ops) {
        assert_eq!(f["name"].as_str(), Some(n.as_str()));
        assert_eq!(f["ops"].as_u64(), Some(*c), "{n}");
    }
    let s = summary(&a);
    assert_eq!(v["result"]["io_summary"]["ops"].as_u64(), s[0].parse().ok());
    assert_eq!(
        format!(
            "{:.3}",
            v["result"]["io_summary"]["ops_per_s"].as_f64().unwrap()
        ),
        s[2]
    );
}

#[test]
fn bad_input_is_refused_with_the_line() {
    let dir = TempDir::new("filebench-bad");
    let f = dir.path("bad.f");
    std::fs::write(&f, "set $dir=/t\n\ndefine process name=p\n{\n thread name=t\n {\n  flowop aiowrite name=a,filesetname=x\n }\n}\nrun 5\n").unwrap();
    let (out, err, code) = run(&f, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("bad.f: line 7: flowop aiowrite: refused"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    for (args, what) in [
        (vec!["--set", "nfiles"], "VAR=VALUE"),
        (vec!["--set", "nfile=10"], "no variable $nfile"),
        (vec!["--output-format", "xml"], "--output-format"),
        (vec!["--fs-size", "lots"], "--fs-size"),
        (vec!["--mem-budget", "0"], "--mem-budget"),
        (vec!["--mem-budget", "lots"], "--mem-budget"),
    ] {
        let (_, err, code) = run(FILESERVER, &args);
        assert_eq!(code, 2);
        assert!(err.contains(what), "{err}");
    }
    // Pre-allocation that cannot fit is refused before the run.
    let (_, err, code) = run(FILESERVER, &["--fs-size", "16m"]);
    assert_eq!(code, 2);
    assert!(err.contains("--fs-size"), "{err}");
}

/// A device in memory that reaches its memory budget says so, not only with its status.
#[test]
fn the_memory_budget_is_named_when_the_device_refuses() {
    let o = znslab(&[
        "filebench",
        FILESERVER,
        "--runtime",
        "1",
        "--fs-size",
        "4g",
        "--mem-budget",
        "16m",
    ]);
    let err = text(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("memory budget of 16.0 MiB") && err.contains("INTERNAL_ERROR"),
        "{err}"
    );
}

#[test]
fn filebench_runs_on_the_f2fs_like_file_system_on_a_znsplus_device() {
    // The default file system: the LFS on znsplus-mlc, its figures in the JSON.
    let args = [
        "filebench",
        VARMAIL,
        "--runtime",
        "1",
        "--set",
        "nfiles=2000",
        "--fs-size",
        "2g",
        "--output-format",
        "json",
    ];
    let o = znslab(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(&text(&o.stdout)).expect("json");
    let f = &j["file_system"];
    assert_eq!(f["kind"], "lfs", "{f}");
    assert_eq!(f["scheme"], "znsplus");
    assert!(f["fsyncs"].as_u64().unwrap() > 100, "{f}");
    assert!(f["user_bytes"].as_u64().unwrap() > 0);
    assert!(f["device"]["die_busy_ns"].as_u64().unwrap() > 0, "{f}");
    // A scheme or device it cannot take is refused with its reason.
    for (flag, value, what) in [
        ("--scheme", "lfsx", "--scheme"),
        ("--device", "test-min", "znsplus"),
        ("--fs", "ext4", "--fs"),
    ] {
        let mut a = args.to_vec();
        a.extend([flag, value]);
        let o = znslab(&a);
        assert_ne!(o.status.code(), Some(0));
        assert!(text(&o.stderr).contains(what), "{}", text(&o.stderr));
    }
}
