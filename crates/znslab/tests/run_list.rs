//! A run is data: `reproduce cczns --write-runs FILE` writes the evaluation's run list, and
//! `znslab run FILE` runs it with the same results as the reproduction gives; a bad list is
//! refused naming what is wrong, before anything runs.

mod common;

use common::{text, znslab, TempDir};
use serde_json::Value;

/// A run's JSON without its wall-clock fields.
fn figures(path: &str) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in ["timestamp", "wall_s", "wall_time_s", "emulator", "time"] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("result")).expect("json");
    strip(&mut v);
    v
}

#[test]
fn a_written_run_list_runs_as_the_reproduction_does() {
    let t = TempDir::new("run-list");
    let runs = t.path("runs.toml");
    let base = [
        "reproduce",
        "cczns",
        "--scale",
        "0.0005",
        "--only",
        "main-zstd-amazon",
        "--jobs",
        "1",
    ];
    let mut write = base.to_vec();
    write.extend(["--write-runs", &runs]);
    let o = znslab(&write);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("wrote 1 runs"));

    let out = t.path("out");
    let o = znslab(&["run", &runs, "--output", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("1 runs, 1 done, 0 failed"));

    let rep = t.path("rep");
    let mut reproduce = base.to_vec();
    reproduce.extend(["--output", &rep]);
    let o = znslab(&reproduce);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let name = "main-zstd-amazon-4k-20m.json";
    assert_eq!(
        figures(&format!("{out}/{name}")),
        figures(&format!("{rep}/{name}"))
    );
}

#[test]
fn a_bad_run_list_is_refused_naming_the_field() {
    let t = TempDir::new("run-list-bad");
    let runs = t.path("bad.toml");
    std::fs::write(
        &runs,
        "[[run]]\nname = \"x.json\"\ntitle = \"x\"\nseed = 1\ndevice = \"test-min\"\nspeed = 3\n\
         [run.work]\nkind = \"fio\"\njob = \"[main]\\nrw=write\\nbs=4k\\nsize=64k\\n\"\ndirection = \"write\"\n",
    )
    .expect("write");
    let o = znslab(&["run", &runs, "--output", &t.path("out")]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("speed"), "{}", text(&o.stderr));
    assert!(!std::path::Path::new(&t.path("out")).exists());
}

#[test]
fn znsplus_seeds_give_one_run_per_seed_and_other_targets_refuse_them() {
    let t = TempDir::new("run-list-seeds");
    let runs = t.path("runs.toml");
    let o = znslab(&[
        "reproduce",
        "znsplus",
        "--only",
        "main-fileserver-zns-mlc",
        "--seed",
        "3",
        "--seeds",
        "2",
        "--write-runs",
        &runs,
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("wrote 2 runs"),
        "{}",
        text(&o.stdout)
    );
    let list = std::fs::read_to_string(&runs).expect("runs");
    for seed in [3, 4] {
        let name = format!("main-fileserver-zns-mlc-u90-c16-l2-seed{seed}.json");
        assert!(list.contains(&name), "{name} in {list}");
    }
    let o = znslab(&["reproduce", "cczns", "--seeds", "2", "--write-runs", &runs]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("--seeds"), "{}", text(&o.stderr));
    let o = znslab(&[
        "reproduce",
        "znsplus",
        "--seeds",
        "0",
        "--write-runs",
        &runs,
    ]);
    assert!(!o.status.success());
}

#[test]
fn write_runs_with_resume_lists_only_what_is_missing_and_only_runs_one() {
    // How another executor resumes and splits a sweep: the binary lists the runs whose JSON
    // in --output is not good yet, and `run --only NAME` runs one of a shared list.
    let t = TempDir::new("run-list-resume");
    let out = t.path("out");
    let base = [
        "reproduce",
        "cczns",
        "--scale",
        "0.0005",
        "--only",
        "main-zstd-",
        "--output",
        &out,
    ];
    let all = t.path("all.toml");
    let mut write = base.to_vec();
    write.extend(["--write-runs", &all, "--resume"]);
    let o = znslab(&write);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("wrote 3 runs"),
        "{}",
        text(&o.stdout)
    );
    let one = "main-zstd-amazon-4k-20m.json";
    let o = znslab(&["run", &all, "--only", one, "--output", &out, "--jobs", "1"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("1 runs, 1 done"),
        "{}",
        text(&o.stdout)
    );
    let rest = t.path("rest.toml");
    let mut write = base.to_vec();
    write.extend(["--write-runs", &rest, "--resume"]);
    let o = znslab(&write);
    assert!(
        text(&o.stdout).contains("wrote 2 runs"),
        "{}",
        text(&o.stdout)
    );
    assert!(!std::fs::read_to_string(&rest).expect("list").contains(one));
    // A name the list lacks is refused, naming the ones it has.
    let o = znslab(&["run", &all, "--only", "nope.json", "--output", &out]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("--only nope.json: no run of"),
        "{}",
        text(&o.stderr)
    );
    assert!(text(&o.stderr).contains(one));
}
