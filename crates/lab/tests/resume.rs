//! A run on an image resumes phase by phase: stopped after a phase (as a killed run would
//! be), the same experiment asked to resume mounts the image, keeps the phases done and runs
//! the rest; the image and its phases file go once the run is whole.

use host::lsm::db::DbOptions;
use lab::experiment::{run, Experiment};
use serde_json::Value;
use workload::ycsb::YcsbConfig;

fn experiment(image: &std::path::Path, resume: bool, stop_after: Option<&str>) -> Experiment {
    let mut opts = DbOptions {
        write_buffer_size: 256 << 10,
        target_file_size: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        ..DbOptions::default()
    };
    workload::scheme::by_name("zstd")
        .expect("scheme")
        .apply(&mut opts);
    let mut load = YcsbConfig {
        recordcount: 4000,
        operationcount: 600,
        seed: 7,
        ..YcsbConfig::default()
    };
    load.load_file(include_str!("../../../workloads/workloada"))
        .expect("workload a");
    load.recordcount = 4000;
    load.operationcount = 600;
    let mut c = load.clone();
    c.load_file(include_str!("../../../workloads/workloadc"))
        .expect("workload c");
    c.recordcount = 4000;
    c.operationcount = 600;
    Experiment {
        device: device::presets::by_name("cczns").expect("preset"),
        mkfs: opts.mkfs_options(Default::default()),
        opts,
        cores: 4,
        runs: vec![("a".into(), load.clone()), ("c".into(), c)],
        load,
        image: Some(image.to_path_buf()),
        resume,
        stop_after: stop_after.map(str::to_string),
    }
}

/// A phase's figures without the emulator's own wall-clock cost.
fn figures(p: &Value) -> Value {
    let mut p = p.clone();
    p.as_object_mut().expect("phase").remove("emulator");
    p
}

#[test]
fn a_run_cut_short_goes_on_from_the_phases_it_finished() {
    let dir = std::env::temp_dir().join(format!("znslab-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let image = dir.join("run.img");
    let phases = dir.join("run.img.phases.json");

    let whole = run(experiment(&image, false, None)).expect("runs");
    assert!(!image.exists() && !phases.exists(), "removed at the end");
    assert_eq!(whole["resumed_after"], Value::Null);

    let e = run(experiment(&image, true, Some("a"))).expect_err("stops");
    assert!(e.to_string().contains("stopped after phase a"), "{e}");
    assert!(
        image.exists() && phases.exists(),
        "a cut-short run leaves both"
    );

    // Not asked to resume: it starts over (and its figures are the whole run's).
    let again = run(experiment(&image, false, None)).expect("runs");
    assert_eq!(
        figures(&again["phases"][1]),
        figures(&whole["phases"][1]),
        "same run, same figures"
    );
    let _ = run(experiment(&image, true, Some("a")));

    let resumed = run(experiment(&image, true, None)).expect("resumes");
    assert_eq!(resumed["resumed_after"], "a");
    let names: Vec<&str> = resumed["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| p["phase"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["load", "a", "c"]);
    // The phases kept are the cut-short run's, which are the whole run's.
    for i in 0..2 {
        assert_eq!(figures(&resumed["phases"][i]), figures(&whole["phases"][i]));
    }
    // The resumed phase read every record (from a recovered store with a cold cache).
    let c = &resumed["phases"][2]["operations"]["READ"];
    assert_eq!(c["count"], 600);
    assert_eq!(c["not_found"], 0, "{c}");
    assert!(!image.exists() && !phases.exists(), "removed once whole");
    let _ = std::fs::remove_dir_all(&dir);
}
