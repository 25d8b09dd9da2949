//! `znslab fio`'s output against real fio's: the JSON and JSON+ key structure of fio 3.33's
//! own output (testdata/fio-output/), fio's `tools/fio_jsonplus_clat2csv` on znslab's json+,
//! the terse line's fields, the normal output's lines, and the output options.

mod common;
use common::{text, znslab, TempDir};

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

fn testdata(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fio-output")
        .join(name)
        .display()
        .to_string()
}

/// A job like the one behind fio's samples (globals, a write and a random read, 500 ms
/// windows of bandwidth samples), on the small test device.
const JOB: &str = "[global]\nioengine=libaio\nzonemode=zbd\nbs=4k\niodepth=4\n\n[w]\nrw=write\ntime_based\nruntime=1200ms\n\n[r]\nstonewall\nrw=randread\nsize=512k\n";

fn run(dir: &TempDir, extra: &[&str]) -> String {
    let job = dir.path("job.fio");
    std::fs::write(&job, JOB).expect("job file");
    let mut args = vec!["fio", job.as_str(), "--device=test-min"];
    args.extend_from_slice(extra);
    let o = znslab(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// Every key path of a JSON value with its type; object members whose keys are data (bins,
/// option echoes) are one wildcard path.
fn paths(v: &Value, at: &str, out: &mut BTreeMap<String, &'static str>) {
    let ty = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    out.insert(at.to_string(), ty);
    match v {
        Value::Object(m) => {
            let wild = ["/bins", "/job options", "/global options"]
                .iter()
                .any(|w| at.ends_with(w));
            for (k, x) in m {
                let k = if wild { "*" } else { k.as_str() };
                paths(x, &format!("{at}/{k}"), out);
            }
        }
        Value::Array(a) => {
            // The union over the elements (a read job has read bins, a write job write bins).
            for x in a {
                paths(x, &format!("{at}/[]"), out);
            }
        }
        _ => {}
    }
}

fn assert_has_fio_keys(fio_file: &str, ours: &Value) {
    let fio: Value =
        serde_json::from_str(&std::fs::read_to_string(testdata(fio_file)).expect("sample"))
            .expect("fio's JSON");
    let (mut want, mut got) = (BTreeMap::new(), BTreeMap::new());
    paths(&fio, "", &mut want);
    paths(ours, "", &mut got);
    let mut missing = Vec::new();
    for (p, ty) in &want {
        match got.get(p) {
            None => missing.push(format!("{p} (missing)")),
            Some(t) if t != ty => missing.push(format!("{p}: fio {ty}, znslab {t}")),
            _ => {}
        }
    }
    assert!(
        missing.is_empty(),
        "{fio_file}: keys fio prints that znslab does not:\n{}",
        missing.join("\n")
    );
}

#[test]
fn json_has_every_key_fio_prints_with_its_type() {
    let dir = TempDir::new("fio-json-keys");
    let v: Value = serde_json::from_str(&run(&dir, &["--output-format=json"])).expect("json");
    assert_has_fio_keys("fio-3.33-randrw.json", &v);
    assert!(v["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
    // The options as the job file gave them, as fio echoes them.
    assert_eq!(v["global options"]["bs"], "4k");
    assert_eq!(v["jobs"][0]["job options"]["runtime"], "1200ms");
    assert!(v["jobs"][0]["job options"].get("time_based").is_none());
    // Bandwidth and IOPS sampled every 500 ms of virtual time: 1200 ms give two samples.
    let w = &v["jobs"][0]["write"];
    assert_eq!(w["bw_samples"], 2, "{w}");
    assert_eq!(w["iops_samples"], 2);
    assert!(w["bw_min"].as_u64().expect("int") > 0);
    assert!(w["bw_min"].as_u64() <= w["bw_max"].as_u64());
    let depth: f64 = ["1", "2", "4", "8", "16", "32", ">=64"]
        .iter()
        .map(|k| v["jobs"][0]["iodepth_level"][k].as_f64().expect("float"))
        .sum();
    assert!((depth - 100.0).abs() < 0.5, "{depth}");
    assert_eq!(v["jobs"][0]["latency_depth"], 4);
    assert_eq!(v["disk_util"][0]["write_ios"], w["total_ios"]);
}

#[test]
fn json_plus_has_fio_bins_that_fios_own_tool_reads() {
    let dir = TempDir::new("fio-jsonplus");
    let out = dir.path("out.json");
    run(&dir, &["--output-format=json+", &format!("--output={out}")]);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("--output file")).expect("json");
    assert_has_fio_keys("fio-3.33-randrw.jsonplus.json", &v);
    let clat = &v["jobs"][0]["write"]["clat_ns"];
    let bins = clat["bins"].as_object().expect("bins");
    let n: u64 = bins.values().map(|c| c.as_u64().expect("count")).sum();
    assert_eq!(n, clat["N"].as_u64().expect("N"));

    // fio's tools/fio_jsonplus_clat2csv, where python3 (with six) is at hand.
    let ok = std::process::Command::new("python3")
        .args(["-c", "import six"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipping fio_jsonplus_clat2csv: no python3 with six");
        return;
    }
    let csv = dir.path("lat.csv");
    // Convert, then let the tool check its CSV against the JSON.
    for extra in [None, Some("--validate")] {
        let o = std::process::Command::new("python3")
            .args([&testdata("fio_jsonplus_clat2csv"), &out, &csv])
            .args(extra)
            .output()
            .expect("python3 runs");
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    // The CSV of the write job: the bins' values in ns and their counts.
    let csv = std::fs::read_to_string(dir.path("lat_job0.csv")).expect("job 0 csv");
    let header: Vec<&str> = csv.lines().next().expect("header").split(", ").collect();
    let col = header
        .iter()
        .position(|h| h.trim() == "write_clat_ns_count")
        .expect("write clat column");
    let mut from_csv = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if let Ok(c) = f[col].parse::<u64>() {
            from_csv.insert(f[0].parse::<u64>().expect("ns"), c);
        }
    }
    let from_json: BTreeMap<u64, u64> = bins
        .iter()
        .map(|(k, c)| (k.parse().expect("ns"), c.as_u64().expect("count")))
        .collect();
    assert_eq!(from_csv, from_json);
}

#[test]
fn terse_lines_have_fios_fields() {
    let fio = std::fs::read_to_string(testdata("fio-3.33-randrw.terse")).expect("sample");
    let fields = |l: &str| l.split(';').count();
    let dir = TempDir::new("fio-terse");
    let ours = run(&dir, &["--minimal"]);
    let lines: Vec<&str> = ours.lines().collect();
    assert_eq!(lines.len(), 2, "{ours}");
    for l in &lines {
        assert_eq!(fields(l), fields(fio.trim_end()), "{l}");
        assert!(l.starts_with("3;znslab-"), "{l}");
    }
    // Write job: KiB written is field 47 (1-based), the disk's name 4 from the end.
    let f: Vec<&str> = lines[0].split(';').collect();
    assert_eq!(f[2], "w");
    assert_ne!(f[46], "0");
    assert_eq!(f[f.len() - 9], "znslab0n1");
    // Version 5 adds bw samples and IOPS figures (6 per direction) and the trim direction.
    let v5 = run(&dir, &["--output-format=terse", "--terse-version=5"]);
    let n5 = fields(v5.lines().next().expect("line"));
    let n3 = fields(lines[0]);
    assert_eq!(n5, n3 + 41 + 3 * 6, "{v5}");
}

#[test]
fn normal_output_lines_are_fios() {
    let dir = TempDir::new("fio-normal");
    let s = run(&dir, &["--lat_percentiles=1", "--percentile_list=50:99.5"]);
    let lines: Vec<&str> = s.lines().collect();
    // Every line of fio's block is one fio prints; znslab's own block comes after it.
    let ours_start = lines
        .iter()
        .position(|l| l.starts_with("znslab device stats"))
        .expect("znslab block");
    let fio_prefixes = [
        "w: (g=0): rw=write, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=libaio, iodepth=4",
        "r: (g=1): rw=randread,",
        "znslab-",
        "Starting 2 processes",
        "w: (groupid=0, jobs=1): err= 0: pid=",
        "r: (groupid=1, jobs=1): err= 0: pid=",
        "  write: IOPS=",
        "  read: IOPS=",
        "    clat (",
        "     lat (",
        "    clat percentiles (",
        "    lat percentiles (",
        "     | 50.0th=[",
        "   bw (  KiB/s): min=",
        "   iops        : min=",
        "  lat (",
        "  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0",
        "  IO depths    : 1=",
        "     submit    : 0=",
        "     complete  : 0=",
        "     issued rwts: total=",
        "     latency   : target=0, window=0, percentile=100.00%, depth=4",
        "Run status group ",
        "  WRITE: bw=",
        "   READ: bw=",
        "Disk stats (read/write):",
        "  znslab0n1: ios=",
    ];
    for l in &lines[..ours_start] {
        assert!(
            l.is_empty() || fio_prefixes.iter().any(|p| l.starts_with(p)),
            "not a line fio prints: {l:?}\n{s}"
        );
    }
    assert!(
        s.contains("; 0 zone resets") || s.contains(" zone resets\n"),
        "{s}"
    );
    assert!(s.contains("     | 50.0th=["), "{s}");
    assert!(s.contains("99.5th=["), "{s}");
}

#[test]
fn several_formats_print_in_fios_order() {
    let dir = TempDir::new("fio-formats");
    let s = run(&dir, &["--output-format=normal,json,terse"]);
    let terse = s.find("3;znslab-").expect("terse");
    let json = s.find("{\n").expect("json");
    let normal = s.find("Run status group").expect("normal");
    assert!(terse < json && json < normal, "{s}");
    // The job lines come first, as fio prints them when the jobs start.
    let header = s.find("w: (g=0): rw=write").expect("job line");
    assert!(header < terse, "{s}");
    let o = znslab(&["fio", "--name=x", "--output-format=xml"]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("output-format"),
        "{}",
        text(&o.stderr)
    );
    let o = znslab(&["fio", "--name=x", "--percentile_list=50:101"]);
    assert!(
        text(&o.stderr).contains("percentile_list"),
        "{}",
        text(&o.stderr)
    );
    let o = znslab(&["fio", "--name=x", "--terse-version=7"]);
    assert!(
        text(&o.stderr).contains("--terse-version"),
        "{}",
        text(&o.stderr)
    );
}

/// docs/compat/fio-output.md's option table: every option marked supported is taken.
#[test]
fn the_compat_table_s_supported_output_options_are_taken() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/compat/fio-output.md"),
    )
    .expect("compat table");
    let examples = [
        (
            "--output-format=normal,json,json+,terse",
            "--output-format=normal,json+,terse",
        ),
        ("--minimal", "--minimal"),
        ("--terse-version=2/3/4/5", "--terse-version=5"),
        ("--output=FILE", "--output=OUT"),
        ("clat_percentiles", "--clat_percentiles=0"),
        ("lat_percentiles", "--lat_percentiles=1"),
        ("slat_percentiles", "--slat_percentiles=1"),
        ("percentile_list", "--percentile_list=50:99.99"),
    ];
    let dir = TempDir::new("fio-compat-table");
    let mut seen = 0;
    for row in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if !cells[2].starts_with("supported") {
            continue;
        }
        // The options are the `quoted` spans of the first cell.
        for opt in cells[1].split('`').skip(1).step_by(2) {
            let (_, arg) = examples
                .iter()
                .find(|(name, _)| *name == opt)
                .unwrap_or_else(|| panic!("no example for {opt}"));
            let arg = arg.replace("OUT", &dir.path("out"));
            let o = znslab(&[
                "fio",
                "--device=test-min",
                "--name=w",
                "--rw=write",
                "--size=64k",
                &arg,
            ]);
            assert!(o.status.success(), "{arg}: {}", text(&o.stderr));
            seen += 1;
        }
    }
    assert_eq!(seen, examples.len());
}
