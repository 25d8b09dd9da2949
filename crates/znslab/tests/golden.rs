//! Golden outputs: one small run of each front end and each paper reproduction at its
//! smallest scale, compared field for field with the JSON checked in under
//! `testdata/golden/` (wall-clock fields aside). A change that moves any figure shows here;
//! when it is meant to, remake the files with `ZNSLAB_BLESS=1 cargo test --release --test
//! golden` and say in the commit which figures moved and why.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Keys whose values are wall-clock time (they differ between two runs of the same seed).
const WALL_CLOCK: [&str; 8] = [
    "timestamp",
    "timestamp_ms",
    "time",
    "wall_time_s",
    "device_commands_per_wall_s",
    "wall_s",
    "emulator",
    "run_wall_sum_s",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn znslab(args: &[&str]) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_znslab"))
        .env("ZNSLAB_CORPUS_DIR", root().join("testdata/corpus"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("runs");
    assert!(
        o.status.success(),
        "znslab {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in WALL_CLOCK {
                m.remove(k);
            }
            m.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

/// The first place two values differ, as a path.
fn first_difference(want: &Value, got: &Value, at: &str) -> Option<String> {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys().chain(b.keys()) {
                let here = format!("{at}/{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_difference(x, y, &here) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some(format!("{here}: {x:?} against {y:?}")),
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{at}/{i}"))),
        (a, b) if a == b => None,
        // JSON numbers parsed back may differ in their last bit (serde_json's default float
        // parser is not exact): a relative difference below 1e-12 is the same figure.
        (Value::Number(x), Value::Number(y))
            if x.as_f64()
                .zip(y.as_f64())
                .is_some_and(|(x, y)| (x - y).abs() <= 1e-12 * x.abs().max(y.abs())) =>
        {
            None
        }
        (a, b) => Some(format!("{at}: {a} in the golden file, {b} now")),
    }
}

/// Compare `got` (stripped) with `testdata/golden/NAME.json`, or write it there when blessing.
fn check(name: &str, mut got: Value) {
    strip(&mut got);
    let path = root().join(format!("testdata/golden/{name}.json"));
    if std::env::var_os("ZNSLAB_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("folder")).expect("golden folder");
        let text = serde_json::to_string_pretty(&got).expect("JSON") + "\n";
        std::fs::write(&path, text).expect("writes the golden file");
        return;
    }
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (ZNSLAB_BLESS=1 makes it)", path.display())),
    )
    .expect("golden JSON");
    if let Some(d) = first_difference(&want, &got, "") {
        panic!("{name}: the output moved from {}: {d}", path.display());
    }
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("JSON output")
}

/// Every JSON file a reproduction wrote into `dir`, by file name.
fn folder(dir: &Path) -> Value {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("output folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut all = serde_json::Map::new();
    for f in files {
        let name = f.file_name().expect("name").to_string_lossy().into_owned();
        all.insert(
            name,
            serde_json::from_str(&std::fs::read_to_string(&f).expect("reads")).expect("JSON"),
        );
    }
    Value::Object(all)
}

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("znslab-golden-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn fio_jobs() {
    let out = znslab(&[
        "fio",
        "--output-format=json",
        "--device=test-min",
        // The golden figures are zonemode=zbd's (fio's default is none).
        "--zonemode=zbd",
        "--name=w",
        "--rw=write",
        "--bs=16k",
        "--size=1m",
        "--name=r",
        "--rw=randread",
        "--bs=4k",
        "--io_size=256k",
        "--stonewall",
    ]);
    check("fio-test-min", json(&out));
    let out = znslab(&["fio", "jobs/cczns-cw-dr.fio", "--output-format=json"]);
    check("fio-cczns-cw-dr", json(&out));
}

#[test]
fn ycsb_runs() {
    let out = znslab(&[
        "ycsb",
        "run",
        "-P",
        "workloads/workloada",
        "-p",
        "recordcount=20000",
        "-p",
        "operationcount=5000",
        "--json",
    ]);
    check("ycsb-a-snappy", json(&out));
    let out = znslab(&[
        "ycsb",
        "run",
        "-P",
        "workloads/workloade",
        "-p",
        "recordcount=20000",
        "-p",
        "operationcount=1000",
        "-p",
        "dataset=amazon",
        "--compression",
        "cc",
        "--json",
    ]);
    check("ycsb-e-amazon-cc", json(&out));
}

#[test]
fn dbbench_runs() {
    let out = znslab(&[
        "dbbench",
        "--benchmarks=fillrandom,readrandom",
        "--num=20000",
        "--write_buffer_size=65536",
        "--compression_type=zstd",
        "--json",
    ]);
    check("dbbench-zstd", json(&out));
}

#[test]
fn paper_reproductions_at_their_smallest_scale() {
    let dir = TempDir::new("fig7");
    let out = dir.0.display().to_string();
    znslab(&[
        "reproduce",
        "cczns-fig7",
        "--size-mib",
        "4",
        "--output",
        &out,
    ]);
    check("reproduce-cczns-fig7", folder(&dir.0));
    let dir = TempDir::new("fig6");
    let out = dir.0.display().to_string();
    znslab(&[
        "reproduce",
        "balloon-fig6",
        "--size-mib",
        "4",
        "--output",
        &out,
    ]);
    check("reproduce-balloon-fig6", folder(&dir.0));
    let dir = TempDir::new("cczns");
    let out = dir.0.display().to_string();
    znslab(&[
        "reproduce",
        "cczns",
        "--scale",
        "0.0005",
        "--jobs",
        "2",
        "--output",
        &out,
    ]);
    check("reproduce-cczns", folder(&dir.0));
}
