//! Tests of the language and the engine on MemFs.

use super::*;
use host::fs::MemFs;
use sim::Sim;

fn shipped(name: &str) -> String {
    let p = format!(
        "{}/../../testdata/filebench/{name}.f",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).expect(&p)
}

fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

pub(super) fn run_on_memfs(
    src: &str,
    overrides: &[(&str, &str)],
    runtime: u64,
    seed: u64,
) -> (Workload, Report) {
    let w = prepare(src, &set(overrides), seed).expect("prepares");
    let sim = Sim::new(seed);
    let fs = MemFs::new(&sim, 1 << 30);
    // 20 µs a call keeps the op counts (and the test's wall time) small.
    let cfg = Config {
        runtime: Some(runtime),
        syscall_ns: 20_000,
        ..Config::default()
    };
    let w2 = w.clone();
    let r = sim
        .block_on(async move { run(fs, w2, cfg, seed).await })
        .expect("runs");
    (w, r)
}

fn ops(r: &Report, name: &str) -> u64 {
    r.snapshots
        .last()
        .expect("stats")
        .flowops
        .iter()
        .find(|f| f.name == name)
        .expect(name)
        .stats
        .count
}

#[test]
fn the_shipped_workloads_parse() {
    for f in ["fileserver", "varmail", "webserver", "oltp"] {
        parse(&shipped(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    // oltp parses, and is refused when resolved: its flowops need aio and semaphores.
    let e = prepare(&shipped("oltp"), &[], 1).unwrap_err().to_string();
    assert!(
        e.contains("aiowrite") && e.contains("refused") && e.starts_with("line "),
        "{e}"
    );
    let w = prepare(&shipped("webserver"), &set(&[("nfiles", "50")]), 1).expect("webserver");
    assert_eq!(w.filesets.len(), 2);
    assert_eq!(w.processes[0].threads[0].instances, 100);
    assert_eq!(w.processes[0].threads[0].flowops.len(), 31);
}

#[test]
fn refused_constructs_name_their_line() {
    for (src, line, what) in [
        ("set $xx=1\nsystem \"ls\"\n", 2, "system"),
        ("\n\ndefine flowop name=x\n", 3, "composite"),
        (
            "define fileset name=a,path=/t,entries=1,dirwidth=2,bogus=3\n",
            1,
            "bogus",
        ),
        (
            "define process name=p\n{\n thread name=t\n {\n  flowop semblock name=s\n }\n}\n",
            5,
            "semblock",
        ),
        (
            "define process name=p\n{\n thread name=t\n {\n  flowop frobnicate name=s\n }\n}\n",
            5,
            "frobnicate",
        ),
        ("set $xx=randvar(type=tabular, min=1)\n", 1, "tabular"),
        ("define randvar name=$xx, type=gamma\n", 1, "randvar"),
        ("enable lathist\n", 1, "lathist"),
        ("set $ss=cvar(type=cvar-weibull)\n", 1, "cvar-weibull"),
        ("echo \"x\"\nrun $nope\n", 2, "$nope"),
    ] {
        let e = prepare(src, &[], 1).expect_err(src);
        assert_eq!(e.line, Some(line), "{src}: {e}");
        assert!(e.to_string().contains(what), "{src}: {e}");
        assert!(!e.to_string().contains('\n'), "one line: {e}");
    }
}

#[test]
fn varmail_runs_its_flowop_loop() {
    let (_, r) = run_on_memfs(
        &shipped("varmail"),
        &[("nfiles", "200"), ("nthreads", "4")],
        2,
        3,
    );
    assert!(r.failed.is_none(), "{:?}", r.log);
    let del = ops(&r, "deletefile1");
    let fsync = ops(&r, "fsyncfile2") + ops(&r, "fsyncfile3");
    assert!(del > 1000, "{del}");
    // Each loop deletes once and fsyncs twice; a delete of a file another thread has open is
    // skipped (not counted), so fsyncs are at least twice the deletes and not far above.
    assert!(
        fsync >= 2 * del - 8 && (fsync as f64) < 2.2 * del as f64,
        "{fsync} vs {del}"
    );
    // Loops in flight when the statistics are taken: at most one per thread.
    assert!(ops(&r, "createfile2") - ops(&r, "closefile2") <= 4);
    let s = r.snapshots.last().unwrap();
    assert!((s.seconds - 2.0).abs() < 0.01, "{}", s.seconds);
}

#[test]
fn fileserver_runs_and_the_same_seed_gives_the_same_output() {
    let ov = [("nfiles", "300"), ("nthreads", "5"), ("filesize", "16k")];
    let (w, a) = run_on_memfs(&shipped("fileserver"), &ov, 1, 5);
    assert!(a.failed.is_none(), "{:?}", a.log);
    assert!(ops(&a, "createfile1") > 50);
    let wr = a
        .snapshots
        .last()
        .unwrap()
        .flowops
        .iter()
        .find(|f| f.name == "wrtfile1")
        .unwrap()
        .stats;
    // writewholefile of a fixed 16k file: 16k per op.
    assert_eq!(wr.bytes, wr.count * 16384);
    let (_, b) = run_on_memfs(&shipped("fileserver"), &ov, 1, 5);
    assert_eq!(render_text(&a), render_text(&b));
    assert_eq!(render_json(&a, &w), render_json(&b, &w));
    let (_, c) = run_on_memfs(&shipped("fileserver"), &ov, 1, 6);
    assert_ne!(render_text(&a).0, render_text(&c).0);
}

#[test]
fn psrun_prints_the_statistics_every_period() {
    let src = "set $dir=/t\ndefine fileset name=fs,path=$dir,entries=10,dirwidth=5,prealloc\n\
               define process name=p\n{\n thread name=t\n {\n  flowop statfile name=s1,filesetname=fs\n }\n}\npsrun -1 3\n";
    let w = prepare(src, &[], 1).expect("prepares");
    let sim = Sim::new(1);
    let fs = MemFs::new(&sim, 1 << 20);
    let cfg = Config {
        syscall_ns: 100_000,
        ..Config::default()
    };
    let r = sim
        .block_on(async move { run(fs, w, cfg, 1).await })
        .expect("runs");
    let (out, _) = render_text(&r);
    assert_eq!(out.matches("IO Summary:").count(), 3, "{out}");
    // -1: cleared after each period, so each second counts about the same.
    let counts: Vec<u64> = r
        .snapshots
        .iter()
        .map(|s| s.flowops[0].stats.count)
        .collect();
    assert!(
        counts.iter().all(|&c| (9_000..=11_000).contains(&c)),
        "{counts:?}"
    );
}

#[test]
fn flowops_that_take_no_time_still_let_the_clock_run() {
    // eventlimit without eventgen does nothing; the run must still end after 1 s, and a
    // deletefile on an fd that is not open (no fileset) fails instead of panicking.
    let src = "set $dir=/t\ndefine fileset name=fs,path=$dir,entries=10,dirwidth=5,prealloc\n\
               define process name=p\n{\n thread name=t\n {\n  flowop eventlimit name=e1,iters=1000000\n }\n}\nrun 1\n";
    let (_, r) = run_on_memfs(src, &[], 1, 1);
    assert!(r.failed.is_none());
    let src = "set $dir=/t\ndefine fileset name=fs,path=$dir,entries=10,dirwidth=5,prealloc\n\
               define process name=p\n{\n thread name=t\n {\n  flowop deletefile name=d1,fd=3\n }\n}\nrun 1\n";
    let (_, r) = run_on_memfs(src, &[], 1, 1);
    assert!(
        r.failed
            .as_deref()
            .is_some_and(|f| f.contains("NO fileset")),
        "{:?}",
        r.failed
    );
}
