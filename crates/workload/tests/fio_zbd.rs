//! fio's zonemode=zbd behaviour on the tiny test device: writes at write pointers, resets of
//! full zones met on entry, finishing zones the block size does not divide, reads below write
//! pointers, the errors fio users would expect, and same seed → same output.

use device::{presets, Controller, DeviceHandle, ZoneState};
use sim::Sim;
use workload::fio::{build_jobs, json_output, parse_jobfile, run, FioError, RunResult};

/// Runs `job` with zonemode=zbd in a [global] section before it (fio's default is none).
fn run_on(dev: &DeviceHandle, sim: &Sim, job: &str) -> Result<RunResult, FioError> {
    let jobs = build_jobs(&parse_jobfile(&format!("[global]\nzonemode=zbd\n{job}"))?)?;
    run(sim, dev, &jobs)
}

fn fresh() -> (Sim, DeviceHandle) {
    let sim = Sim::new(5);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::test_min()).expect("valid"),
    );
    (sim, dev)
}

#[test]
fn sequential_write_fills_zones_in_order() {
    let (sim, dev) = fresh();
    let r = run_on(&dev, &sim, "[w]\nrw=write\nbs=16k\nsize=512k\n").expect("runs");
    assert_eq!(r.jobs[0].write.io_bytes, 512 << 10);
    assert_eq!(r.jobs[0].error, None);
    dev.with(|c| {
        assert_eq!(c.zone(0).state, ZoneState::Full);
        assert_eq!(c.zone(1).state, ZoneState::Full);
        assert_eq!(c.zone(2).state, ZoneState::Empty);
    });
    // A second pass meets full zones on entry and resets them first, as fio does.
    let r = run_on(&dev, &sim, "[w]\nrw=write\nbs=16k\nsize=512k\n").expect("runs");
    assert_eq!(r.jobs[0].zone_resets, 2);
    assert_eq!(dev.with(|c| c.counters().zone_resets), 2);
}

#[test]
fn a_block_size_that_does_not_divide_the_zone_finishes_it() {
    let (sim, dev) = fresh();
    // 256 KiB zones, 24 KiB blocks: 10 blocks fit, 16 KiB are left, so the zone is finished.
    let r = run_on(
        &dev,
        &sim,
        "[w]\nrw=write\nbs=24k\nsize=512k\nio_size=264k\n",
    )
    .expect("runs");
    assert_eq!(r.jobs[0].zone_finishes, 1);
    dev.with(|c| {
        assert_eq!(c.zone(0).state, ZoneState::Full);
        assert_eq!(c.zone(1).wp, 64 + 6);
    });
}

#[test]
fn reads_stay_below_the_write_pointer() {
    let (sim, dev) = fresh();
    run_on(&dev, &sim, "[w]\nrw=write\nbs=4k\nsize=40k\n").expect("write");
    let r = run_on(&dev, &sim, "[r]\nrw=read\nbs=4k\n").expect("read");
    assert_eq!(r.jobs[0].read.io_bytes, 40 << 10);
    let r = run_on(&dev, &sim, "[r]\nrw=randread\nbs=8k\nio_size=1m\n").expect("randread");
    assert_eq!(r.jobs[0].read.io_bytes, 1 << 20);
    assert!(dev.with(|c| c.counters().host_bytes_read) >= (1 << 20) + (40 << 10));
}

#[test]
fn nothing_to_read_is_an_error_not_a_hang() {
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[r]\nrw=randread\nbs=4k\nruntime=10ms\ntime_based\n",
    )
    .expect("runs");
    assert!(
        r.jobs[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("nothing to read"),
        "{:?}",
        r.jobs[0].error
    );
}

#[test]
fn time_based_writes_wrap_and_reset() {
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[w]\nrw=write\nbs=16k\nsize=512k\nruntime=200ms\ntime_based\n",
    )
    .expect("runs");
    let j = &r.jobs[0];
    assert!(j.write.io_bytes > 512 << 10, "{}", j.write.io_bytes);
    assert!(j.zone_resets >= 1);
    assert!(
        j.runtime_ns >= 200_000_000 && j.runtime_ns < 210_000_000,
        "{}",
        j.runtime_ns
    );
}

#[test]
fn stonewall_groups_run_one_after_another() {
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[a]\nrw=write\nbs=16k\nsize=256k\n[b]\nstonewall\nrw=read\nbs=16k\nsize=256k\n",
    )
    .expect("runs");
    assert_eq!((r.jobs[0].group, r.jobs[1].group), (0, 1));
    assert_eq!(r.jobs[1].read.io_bytes, 256 << 10);
}

#[test]
fn job_errors_name_the_option() {
    let (sim, dev) = fresh();
    let e = run_on(&dev, &sim, "[w]\nrw=write\nbs=6000\n").expect_err("not LBA aligned");
    assert_eq!(e.option.as_deref(), Some("bs"));
    let e = run_on(&dev, &sim, "[w]\nrw=write\nbs=4k\nmax_open_zones=9\n").expect_err("over MOR");
    assert_eq!(e.option.as_deref(), Some("max_open_zones"));
    let e = run_on(&dev, &sim, "[w]\nrw=write\nbs=512k\n").expect_err("larger than zone");
    assert_eq!(e.option.as_deref(), Some("bs"));
    let e = run_on(&dev, &sim, "[w]\nrw=write\noffset=100g\n").expect_err("past the end");
    assert_eq!(e.option.as_deref(), Some("offset"));
}

#[test]
fn same_seed_same_json() {
    let once = || {
        let (sim, dev) = fresh();
        let r = run_on(&dev, &sim, "[w]\nrw=write\nbs=16k\nsize=1m\nnumjobs=2\noffset_increment=1m\niodepth=3\nioengine=libaio\n[r]\nstonewall\nrw=randread\nbs=4k\niodepth=8\nioengine=libaio\nsize=2m\nruntime=20ms\ntime_based\n")
            .expect("runs");
        let c = dev.into_controller().expect("sole owner");
        serde_json::to_string(&json_output(&r, &c, 5, 0.0, 0)).expect("json")
    };
    let (a, b) = (once(), once());
    assert_eq!(a, b);
    assert!(a.contains("\"die_utilization\""));
}

#[test]
fn startdelay_holds_a_job_back_without_counting_in_its_runtime() {
    let (sim, dev) = fresh();
    let r = run_on(&dev, &sim, "[w]\nrw=write\nsize=64k\nstartdelay=2s\n").expect("runs");
    assert!(r.sim_end_ns >= 2_000_000_000, "{}", r.sim_end_ns);
    assert!(
        r.jobs[0].runtime_ns < 100_000_000,
        "{}",
        r.jobs[0].runtime_ns
    );
    let bad = "[w]\nstartdelay=soon\n";
    assert!(
        workload::fio::build_jobs(&workload::fio::parse_jobfile(bad).expect("parses")).is_err()
    );
}

/// fio's zbd random writes: each goes to the write pointer of a randomly chosen zone, with no
/// more zones open for writing than max_open_zones; full zones are reset (zbd.c).
#[test]
fn random_writes_go_to_write_pointers_of_at_most_max_open_zones() {
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[w]\nrw=randwrite\nbs=16k\nmax_open_zones=2\nio_size=1m\n",
    )
    .expect("runs");
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    assert_eq!(j.write.io_bytes, 1 << 20);
    let touched = (0..16u32)
        .filter(|z| dev.with(|c| c.zone(*z)).state != ZoneState::Empty)
        .count();
    // 1 MiB in 256 KiB zones, two open at a time: 4 full zones plus up to 2 open ones.
    assert!((4..=6).contains(&touched), "{touched} zones written");
    // Time based over a small region: zones fill and are reset, no write ever fails.
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[w]\nrw=randwrite\nbs=64k\nsize=4z\noffset=2z\ntime_based\nruntime=50ms\nnumjobs=2\n",
    )
    .expect("runs");
    assert!(
        r.jobs.iter().all(|j| j.error.is_none()),
        "{:?}",
        r.jobs[0].error
    );
    assert!(r.jobs.iter().map(|j| j.zone_resets).sum::<u64>() > 0);
    assert_eq!(
        dev.with(|c| c.zone(0)).state,
        ZoneState::Empty,
        "outside the region"
    );
}

/// In zbd mode a trim is a zone reset; zonesize must match the device's.
#[test]
fn trims_reset_zones_and_zonesize_must_match() {
    let (sim, dev) = fresh();
    run_on(&dev, &sim, "[w]\nrw=write\nbs=64k\nsize=3z\n").expect("write");
    assert_eq!(dev.with(|c| c.zone(2)).state, ZoneState::Full);
    let r = run_on(&dev, &sim, "[t]\nrw=trim\nbs=256k\nsize=2z\n").expect("trim");
    assert_eq!(r.jobs[0].trim.ios, 2);
    assert_eq!(dev.with(|c| c.zone(0)).state, ZoneState::Empty);
    assert_eq!(dev.with(|c| c.zone(2)).state, ZoneState::Full);
    let e = run_on(&dev, &sim, "[w]\nrw=write\nzonesize=1m\n").expect_err("zone size");
    assert_eq!(e.option.as_deref(), Some("zonesize"));
    assert!(
        e.message.contains("1048576") && e.message.contains("262144"),
        "{e}"
    );
}

/// Regression: a stonewall in [global] makes each job wait for the one before (each its
/// own group), where it used to be dropped and all jobs ran at once.
#[test]
fn stonewall_in_global_runs_jobs_one_after_another() {
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[global]\nstonewall\nbs=16k\nsize=256k\n[a]\nrw=write\n[b]\nrw=read\n[c]\nrw=randread\n",
    )
    .expect("runs");
    assert_eq!(
        r.jobs.iter().map(|j| j.group).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(r.jobs.iter().all(|j| j.error.is_none()));
}

/// io_uring_cmd's write_mode=zone_append: writes are Zone Append commands (the device places
/// them at the write pointer and says where; verify reads them back from there).
#[test]
fn zone_append_writes_land_at_write_pointers() {
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[w]\nrw=randwrite\nbs=8k\nsize=2z\niodepth=4\nioengine=libaio\nwrite_mode=zone_append\nverify=crc32c\n",
    )
    .expect("runs");
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    assert_eq!(j.write.io_bytes, 512 << 10);
    assert_eq!(j.read.io_bytes, 512 << 10, "verified");
    assert_eq!(j.zone_resets, 0, "with verify no zone is reset");
    // One I/O at a time: the job's last write ends its writes, then it verifies.
    let (sim, dev) = fresh();
    let r = run_on(
        &dev,
        &sim,
        "[w]\nrw=randwrite\nbs=8k\nsize=2z\nio_size=1m\nverify=md5\n",
    )
    .expect("runs");
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    assert_eq!((j.write.io_bytes, j.read.io_bytes), (512 << 10, 512 << 10));
    let e = workload::fio::build_jobs(
        &workload::fio::parse_jobfile("[w]\nrw=write\nwrite_mode=zone_append\n").expect("parses"),
    )
    .expect_err("append needs zonemode=zbd");
    assert_eq!(e.option.as_deref(), Some("write_mode"));
}
