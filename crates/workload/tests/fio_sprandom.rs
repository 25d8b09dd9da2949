//! fio's sprandom (SanDisk random preconditioning): a randwrite job writes the device's
//! physical capacity (its size plus spr_op) once, every block at least once, and ends by
//! itself; fio's requirements are checked as fio checks them.

use device::{presets, Controller, DeviceHandle};
use sim::Sim;
use workload::fio::{build_jobs, parse_jobfile, run, RunResult};

fn run_job(job: &str) -> Result<RunResult, String> {
    let sim = Sim::new(11);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::test_tcssd()).expect("ok"),
    );
    let jobs =
        build_jobs(&parse_jobfile(job).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    run(&sim, &dev, &jobs).map_err(|e| e.to_string())
}

#[test]
fn sprandom_writes_the_physical_capacity_once_and_ends() {
    let r = run_job(
        "[p]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\nsprandom=1\nspr_op=0.15\nspr_num_regions=10\n",
    )
    .expect("runs");
    let j = &r.jobs[0];
    assert_eq!(j.error, None);
    // 256 blocks and 15% more (ceil(256 * 0.15) = 39 blocks), give or take the draws of
    // the invalidations.
    let physical = 256 + 39;
    assert!(
        j.write.ios.abs_diff(physical) <= physical / 10,
        "{} writes",
        j.write.ios
    );
    assert!(j.write.ios > 256);
    // Deterministic: the same seed writes the same.
    let again = run_job(
        "[p]\nrw=randwrite\nbs=4k\nsize=1m\niodepth=8\nsprandom=1\nspr_op=0.15\nspr_num_regions=10\n",
    )
    .expect("runs");
    assert_eq!(again.jobs[0].write.ios, j.write.ios);
    // More over-provisioning, more rewrites.
    let more =
        run_job("[p]\nrw=randwrite\nbs=4k\nsize=1m\nsprandom=1\nspr_op=0.5\nspr_num_regions=10\n")
            .expect("runs");
    assert!(more.jobs[0].write.ios > j.write.ios + 60);
}

#[test]
fn sprandom_requirements_are_fios() {
    for (opts, want) in [
        ("rw=randread", "requires random write"),
        ("rw=write", "requires random write"),
        (
            "rw=randwrite\nrandom_generator=tausworthe",
            "requires random_generator=lfsr",
        ),
        ("rw=randwrite\nnorandommap=0", "requires norandommap=1"),
        ("rw=randwrite\nnrfiles=2", "only one file"),
        ("rw=randwrite\nspr_op=1.5", "not a fraction between 0 and 1"),
        ("rw=randwrite\nspr_num_regions=0", "not a positive number"),
        ("rw=randwrite\nspr_cs=2m", "must be smaller than region_sz"),
        ("rw=randwrite\nspr_num_regions=5000", "less than one block"),
    ] {
        let e = run_job(&format!("[p]\nbs=4k\nsize=1m\nsprandom=1\n{opts}\n"))
            .err()
            .unwrap_or_default();
        assert!(e.contains(want), "{opts}: {e}");
    }
    // random_generator=lfsr and norandommap=1 are what sprandom wants.
    let r = run_job(
        "[p]\nrw=randwrite\nbs=4k\nsize=1m\nsprandom=1\nrandom_generator=lfsr\nnorandommap=1\n",
    )
    .expect("runs");
    assert_eq!(r.jobs[0].error, None);
    // 100 regions of 2.95 blocks write 2 each (fio rounds the region's writes down), and
    // the walk stops at the last region: about 2 x 101 writes.
    assert!(
        (190..=215).contains(&r.jobs[0].write.ios),
        "{}",
        r.jobs[0].write.ios
    );
}

#[test]
fn sprandom_says_what_it_sets_as_fio_does() {
    let s = parse_jobfile("[p]\nrw=randwrite\nsprandom=1\n").expect("parses");
    let (_, notes) = workload::fio::build_jobs_with_notices(&s).expect("builds");
    assert!(notes.contains(&"sprandom sets random_generator=lfsr (as fio)".to_string()));
    assert!(notes.contains(&"sprandom sets norandommap=1 (as fio)".to_string()));
    let s = parse_jobfile("[p]\nrw=randwrite\nsprandom=1\nnorandommap=1\n").expect("parses");
    let (_, notes) = workload::fio::build_jobs_with_notices(&s).expect("builds");
    assert!(!notes.iter().any(|n| n.contains("norandommap")));
}
