//! What a run may take of the host's memory: `znslab fio` refuses, before it starts, a device
//! in memory asked to hold more than the memory budget and a job set too large for it, and a
//! job set sized by its I/Os runs in little memory however deep its queues are.

mod common;
use common::{text, znslab};

use std::process::{Command, Output};

/// `znslab ARGS` with its address space limited to `kib` KiB (an allocation past it fails and
/// aborts the process instead of taking the machine's memory).
fn znslab_limited(kib: u64, args: &[&str]) -> Output {
    let cmd = format!("ulimit -v {kib} && exec \"$0\" \"$@\"",);
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .arg(env!("CARGO_BIN_EXE_znslab"))
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn fio_refuses_to_write_more_than_the_budget_into_a_device_in_memory() {
    let dir = std::env::temp_dir().join(format!("znslab-memlim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let toml = dir.join("wide.toml");
    let o = znslab(&["devices", "--show", "test-min"]);
    let base = text(&o.stdout);
    assert!(base.contains("blocks_per_plane = 16"), "{base}");
    // 256 zones of 256 KiB: 64 MiB of capacity.
    std::fs::write(
        &toml,
        base.replace("blocks_per_plane = 16", "blocks_per_plane = 256"),
    )
    .expect("write toml");
    let device = format!("--device={}", toml.display());
    let job = ["--name=w", "--rw=write", "--bs=64k", "--mem-budget=16m"];

    let mut args = vec!["fio", device.as_str(), "--size=32m"];
    args.extend(job);
    let o = znslab(&args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the jobs write 32.0 MiB into a device in memory")
            && err.contains("memory budget of 16.0 MiB")
            && err.contains("--filename=IMAGE"),
        "{err}"
    );

    // Within the budget it runs; reads write nothing.
    let mut args = vec!["fio", device.as_str(), "--size=8m"];
    args.extend(job);
    args.extend([
        "--name=r",
        "--stonewall",
        "--rw=read",
        "--bs=64k",
        "--io_size=64m",
    ]);
    let o = znslab(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));

    // A zone larger than the budget cannot even be started (the store reserves it whole).
    let o = znslab(&[
        "fio",
        "--name=w",
        "--rw=write",
        "--bs=128k",
        "--size=1m",
        "--mem-budget=512m",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("a zone of this device takes 1.0 GiB"), "{err}");

    // The default budget (half the machine's memory) refuses 100 GiB on the default device.
    let o = znslab(&["fio", "--name=w", "--rw=write", "--bs=128k", "--size=100g"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the jobs write 100.0 GiB"), "{err}");

    let o = znslab(&["fio", "--mem-budget=lots"]);
    assert!(text(&o.stderr).contains("--mem-budget: 'lots' is not a size"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fio_runs_thousands_of_deep_jobs_in_the_memory_their_ios_need() {
    // 4095 readers of 16 blocks each, iodepth 65536: 16 workers each suffice.
    let o = znslab_limited(
        3 << 20,
        &[
            "fio",
            "--device=test-min",
            "--name=fill",
            "--rw=write",
            "--bs=64k",
            "--name=w",
            "--stonewall",
            "--rw=randread",
            "--bs=4k",
            "--size=64k",
            "--iodepth=65536",
            "--ioengine=libaio",
            "--numjobs=4095",
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 4096);
    let ios: u64 = jobs[1..]
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().expect("ios"))
        .sum();
    assert_eq!(ios, 4095 * 16);
}

#[test]
fn fio_refuses_a_job_set_beyond_the_budget_naming_numjobs_iodepth_and_bs() {
    let o = znslab_limited(
        3 << 20,
        &[
            "fio",
            "--device=test-min",
            "--name=w",
            "--rw=randread",
            "--bs=4k",
            "--size=64k",
            "--iodepth=65536",
            "--ioengine=libaio",
            "--numjobs=4096",
            "--time_based",
            "--runtime=1s",
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the job set needs about 1.3 TiB of host memory")
            && err.contains("numjobs=4096")
            && err.contains("iodepth=65536")
            && err.contains("bs=4096"),
        "{err}"
    );
    // --mem-budget lowers it for a set that the default takes.
    let o = znslab(&[
        "fio",
        "--device=test-min",
        "--name=w",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--iodepth=4",
        "--ioengine=libaio",
        "--numjobs=2",
        "--mem-budget=4m",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("numjobs=2 jobs of iodepth=4"), "{err}");
}
