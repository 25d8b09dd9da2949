//! Bad input as users type it: each is refused up front with exit status 2 and a message
//! naming the option, or runs to a sensible end; none hangs, panics or grows without bound.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run znslab; a run still going after `secs` is killed and fails the test (a hang).
fn znslab_within(secs: u64, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_znslab"))
        // The small corpus shipped for tests: no run builds one from the network.
        .env(
            "ZNSLAB_CORPUS_DIR",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/corpus"),
        )
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    // Drain the pipes beside the wait so a chatty run cannot block on a full pipe.
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_t = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("waits") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("znslab {args:?} still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out_t.join().expect("stdout"),
        stderr: err_t.join().expect("stderr"),
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Refused as bad usage (exit 2, no panic), the message naming `what`.
fn refused(o: &Output, what: &str) {
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(e.contains(what), "the message does not name {what}: {e}");
}

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("znslab-bad-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const MAX: &str = "18446744073709551615";

fn workload(name: &str) -> String {
    format!("{}/../../workloads/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn dbbench_write_buffer_size_zero_is_clipped_as_rocksdb_does() {
    let o = znslab_within(
        60,
        &["dbbench", "--num=1000", "--write_buffer_size=0", "--json"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("--write_buffer_size=0 clipped to 65536"),
        "{}",
        text(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["benchmarks"][0]["ops"], 1000);
}

#[test]
fn dbbench_sizes_and_counts_past_any_bound_are_refused_by_name() {
    for flag in ["num", "reads", "threads", "key_size", "value_size", "cores"] {
        let arg = format!("--{flag}={MAX}");
        let o = znslab_within(30, &["dbbench", &arg, "--json"]);
        refused(&o, &format!("--{flag}"));
    }
    for flag in ["threads", "cores", "compression_parallel_threads"] {
        let arg = format!("--{flag}=0");
        let o = znslab_within(30, &["dbbench", "--num=10", &arg]);
        refused(&o, &format!("--{flag}"));
    }
    // More entries than the device holds (128 GiB).
    let o = znslab_within(30, &["dbbench", "--num=10000000000"]);
    refused(&o, "--num");
}

#[test]
fn ycsb_counts_are_refused_as_ycsb_refuses_them() {
    let wa = workload("workloada");
    let we = workload("workloade");
    let run = |wl: &str, extra: &[&str]| {
        let mut args = vec!["ycsb", "run", "-P", wl, "-p", "recordcount=100"];
        args.extend_from_slice(extra);
        znslab_within(30, &args)
    };
    for prop in [
        "recordcount",
        "operationcount",
        "fieldcount",
        "fieldlength",
        "threadcount",
        "maxscanlength",
    ] {
        let p = format!("{prop}={MAX}");
        refused(&run(&wa, &["-p", &p]), prop);
    }
    for prop in ["fieldcount", "threadcount", "maxscanlength"] {
        let p = format!("{prop}=0");
        refused(&run(&wa, &["-p", &p]), prop);
    }
    refused(&run(&wa, &["--threads", "0"]), "--threads");
    refused(&run(&wa, &["--threads", MAX]), "--threads");
    refused(&run(&wa, &["--cores", MAX]), "--cores");
    refused(&run(&wa, &["--cores", "0"]), "--cores");
    // YCSB's operation chooser has nothing to choose from; its first operation fails.
    let o = run(&wa, &["-p", "readproportion=0", "-p", "updateproportion=0"]);
    refused(&o, "are all 0");
    let o = run(&we, &["-p", "scanlengthdistribution=bogus"]);
    refused(&o, "Distribution \"bogus\" not allowed for scan length");
    // More records than the device could hold even compressed.
    let o = znslab_within(
        30,
        &["ycsb", "load", "-P", &wa, "-p", "recordcount=2147483647"],
    );
    refused(&o, "recordcount");
}

#[test]
fn ycsb_run_on_an_image_without_a_file_system_names_the_command_that_makes_one() {
    let dir = TempDir::new("nofs");
    let img = dir.path("e.img");
    let o = znslab_within(30, &["nvme", "create", &img, "--preset", "test-min"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let wa = workload("workloada");
    let o = znslab_within(30, &["ycsb", "run", "-P", &wa, "--image", &img]);
    refused(&o, &format!("znslab ycsb load -P WORKLOAD --image {img}"));
    assert!(!text(&o.stderr).contains("run mkfs"));
}

#[test]
fn a_transfer_over_mdts_names_the_limit() {
    let dir = TempDir::new("mdts");
    let img = dir.path("t.img");
    let out = dir.path("o.bin");
    let o = znslab_within(30, &["nvme", "create", &img, "--preset", "test-min"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // 1024 blocks of 4 KiB: 4 MiB over the 2 MiB MDTS.
    let o = znslab_within(
        30,
        &["nvme", "read", &img, "-s", "0", "-c", "1023", "-d", &out],
    );
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("INVALID_FIELD") && e.contains("exceeds MDTS (2097152 bytes)"),
        "{e}"
    );
    // 0xfffffffe + 1 blocks: nvme-cli's -c is a 16-bit field (NLB), refused by name.
    let o = znslab_within(30, &["nvme", "read", &img, "-c", "0xfffffffe", "-d", &out]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("16-bit"), "{}", text(&o.stderr));
    let o = znslab_within(
        30,
        &[
            "nvme",
            "zns",
            "zone-append",
            &img,
            "-s",
            "0",
            "-z",
            "17592186044416",
            "-d",
            &out,
        ],
    );
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("data transfer of 17592186044416 bytes exceeds ZASL"),
        "{e}"
    );
}

#[test]
fn nvme_create_refuses_an_existing_file_without_force() {
    let dir = TempDir::new("force");
    let img = dir.path("t.img");
    let data = dir.path("d.bin");
    std::fs::write(&data, vec![7u8; 4096]).expect("data");
    let create = |extra: &[&str]| {
        let mut args = vec!["nvme", "create", &img, "--preset", "test-min"];
        args.extend_from_slice(extra);
        znslab_within(30, &args)
    };
    assert!(create(&[]).status.success());
    let o = znslab_within(30, &["nvme", "write", &img, "-s", "0", "-d", &data]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let first_zone_wp = || {
        let o = znslab_within(30, &["nvme", "zns", "report-zones", &img, "-o", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        v["zone_list"][0]["wp"].as_u64().expect("wp")
    };
    assert_eq!(first_zone_wp(), 1);
    refused(
        &create(&[]),
        &format!("{img} exists; pass --force to replace it"),
    );
    assert_eq!(first_zone_wp(), 1, "the refused create changed the image");
    assert!(create(&["--force"]).status.success());
    assert_eq!(first_zone_wp(), 0, "--force made a fresh image");
}

#[test]
fn reproduce_cczns_only_an_unknown_run_makes_nothing_and_lists_the_names() {
    let dir = TempDir::new("only");
    let out = dir.path("out");
    let o = znslab_within(
        30,
        &["reproduce", "cczns", "--only", "bogus", "--output", &out],
    );
    refused(&o, "--only bogus");
    assert!(
        text(&o.stderr).contains("main-cc-amazon-4k-20m"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        !std::path::Path::new(&out).exists(),
        "an output folder was made"
    );
    let o = znslab_within(30, &["reproduce", "cczns", "--jobs", "0", "--output", &out]);
    refused(&o, "--jobs 0");
    assert!(!std::path::Path::new(&out).exists());
}

#[test]
fn a_modeled_payload_is_refused_where_it_cannot_work_and_says_so_where_it_ran() {
    let wa = workload("workloada");
    let load = |extra: &[&str]| {
        let mut args = vec!["ycsb", "load", "-P", &wa, "-p", "recordcount=2000"];
        args.extend_from_slice(extra);
        znslab_within(60, &args)
    };
    refused(&load(&["--payload", "bytes"]), "--payload");
    // YCSB's own random records have no corpus to measure.
    refused(&load(&["--payload", "modeled"]), "corpus dataset");
    let dir = TempDir::new("modeled");
    let img = dir.path("m.img");
    refused(
        &load(&[
            "-p",
            "dataset=amazon",
            "--payload",
            "modeled",
            "--image",
            &img,
        ]),
        "--image",
    );
    assert!(
        !std::path::Path::new(&img).exists(),
        "refused before the image is made"
    );
    let o = load(&["-p", "dataset=amazon", "--payload", "modeled", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["payload"], "modeled");
    assert_eq!(v["phases"][0]["operations"]["INSERT"]["ok"], 2000);
}
