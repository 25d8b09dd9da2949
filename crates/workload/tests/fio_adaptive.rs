//! fio's jobs that adapt to what they measure: steady-state detection (`ss`, `ss_dur`,
//! `ss_ramp`, `ss_interval`: the job stops once its window of IOPS, bandwidth or latency
//! samples is steady) and the latency target (`latency_target` and its window, percentile
//! and `latency_run`: the queue-depth search), with the output keys fio's stat.c prints.

use device::{presets, Controller, DeviceHandle};
use sim::Sim;
use workload::fio::{build_jobs, json_output, normal_output, parse_jobfile, run, RunResult};

fn run_job(job: &str) -> (RunResult, serde_json::Value, String) {
    let sim = Sim::new(7);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::test_tcssd()).expect("ok"),
    );
    let jobs = build_jobs(&parse_jobfile(job).expect("parses")).expect("builds");
    let r = run(&sim, &dev, &jobs).expect("runs");
    let c = dev.into_controller().expect("sole owner");
    let j = json_output(&r, &c, 7, 0.0, 0);
    let n = normal_output(&r, &c, 7, 0.0);
    (r, j, n)
}

fn refused(job: &str) -> String {
    let jobs = build_jobs(&parse_jobfile(job).expect("parses"));
    match jobs {
        Err(e) => e.to_string(),
        Ok(jobs) => {
            let sim = Sim::new(7);
            let dev = DeviceHandle::new(
                &sim,
                Controller::in_memory(presets::test_tcssd()).expect("ok"),
            );
            run(&sim, &dev, &jobs).expect_err("refused").to_string()
        }
    }
}

/// The job ran to its 5 s runtime (and the I/Os in flight then completed).
fn ran_5s(ns: u64) -> bool {
    (5_000_000_000..5_001_000_000).contains(&ns)
}

fn keys(v: &serde_json::Value) -> Vec<&str> {
    v.as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect()
}

const READS: &str = "[job]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=4\ntime_based=1\n";

#[test]
fn steady_iops_on_a_steady_device_stops_the_job_early() {
    let (r, j, n) = run_job(&format!("{READS}runtime=60s\nss=iops:10%\nss_dur=2s\n"));
    let job = &r.jobs[0];
    assert_eq!(job.error, None);
    // Checks at 1 s and 2 s fill the two-sample window; the second finds it steady.
    assert!(
        (2_000_000_000..3_100_000_000).contains(&job.runtime_ns),
        "ran {} ns",
        job.runtime_ns
    );
    let ss = &j["jobs"][0]["steadystate"];
    assert_eq!(
        keys(ss),
        [
            "ss",
            "duration",
            "attained",
            "criterion",
            "max_deviation",
            "slope",
            "data"
        ]
    );
    assert_eq!(ss["ss"], "iops:10.000000%");
    assert_eq!(ss["duration"], 2);
    assert_eq!(ss["attained"], 1);
    assert!(ss["criterion"].as_str().unwrap().ends_with('%'));
    assert_eq!(keys(&ss["data"]), ["bw_mean", "iops_mean", "iops", "bw"]);
    let iops: Vec<u64> = ss["data"]["iops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(iops.len(), 2);
    // The samples are IOPS over each second: they agree with the job's own figure.
    let job_iops = job.read.ios as f64 / (job.runtime_ns as f64 / 1e9);
    for s in &iops {
        assert!(
            (*s as f64 / job_iops - 1.0).abs() < 0.05,
            "{s} vs {job_iops}"
        );
    }
    assert_eq!(
        ss["data"]["iops_mean"].as_u64().unwrap(),
        iops.iter().sum::<u64>() / 2
    );
    // The keys sit after the latency target's, as stat.c prints them.
    let job_keys = keys(&j["jobs"][0]);
    let at = |k: &str| job_keys.iter().position(|x| *x == k).unwrap();
    assert_eq!(at("steadystate"), at("latency_window") + 1);
    let line = n
        .lines()
        .find(|l| l.starts_with("  steadystate  : "))
        .expect("steady-state line");
    assert!(
        line.starts_with("  steadystate  : attained=yes, bw=") && line.contains(", iops mean dev="),
        "{line}"
    );
}

#[test]
fn a_criterion_that_cannot_be_met_runs_to_the_runtime() {
    // An absolute slope below 0 cannot be: the window is full but never steady.
    let (r, j, n) = run_job(&format!("{READS}runtime=5s\nss=iops_slope:0\nss_dur=3s\n"));
    assert!(ran_5s(r.jobs[0].runtime_ns), "{}", r.jobs[0].runtime_ns);
    let ss = &j["jobs"][0]["steadystate"];
    assert_eq!(ss["attained"], 0);
    assert_eq!(ss["ss"], "iops_slope:0.000000");
    assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 3);
    assert!(n.contains("  steadystate  : attained=no, "), "{n}");
    assert!(n.contains(", iops slope=0.000\n"), "{n}");
}

#[test]
fn jobs_without_steady_state_print_no_steadystate() {
    let (_, j, n) = run_job(&format!("{READS}runtime=1s\n"));
    assert!(j["jobs"][0].get("steadystate").is_none());
    assert!(!n.contains("steadystate"));
}

#[test]
fn steady_state_waits_for_its_ramp_and_judges_latency() {
    let (r, j, n) = run_job(&format!(
        "{READS}runtime=30s\nsteadystate=lat:20%\nsteadystate_duration=2\n\
         steadystate_ramp_time=2s\nsteadystate_check_interval=1s\n"
    ));
    // Samples are kept from one interval after the ramp (the check at 3 s), so the window
    // of two is full and steady at 4 s.
    assert!(
        (4_000_000_000..5_000_000_000).contains(&r.jobs[0].runtime_ns),
        "ran {} ns",
        r.jobs[0].runtime_ns
    );
    let ss = &j["jobs"][0]["steadystate"];
    assert_eq!(ss["attained"], 1);
    assert_eq!(ss["ss"], "lat:20.000000%");
    assert_eq!(
        keys(&ss["data"]),
        ["bw_mean", "iops_mean", "lat_mean", "lat_ns", "iops", "bw"]
    );
    let mean_ns = r.jobs[0].read.clat.mean();
    let lat_mean = ss["data"]["lat_mean"].as_f64().unwrap();
    assert!(
        (lat_mean / mean_ns - 1.0).abs() < 0.05,
        "{lat_mean} vs {mean_ns}"
    );
    assert!(n.contains(", lat="), "{n}");
    assert!(n.contains("nsec, lat mean dev="), "{n}");
}

#[test]
fn with_group_reporting_the_group_stops_together() {
    let (r, j, _) = run_job(&format!(
        "{READS}runtime=30s\nss=bw:5%\nss_dur=2s\nnumjobs=3\ngroup_reporting=1\n"
    ));
    assert_eq!(r.jobs.len(), 3);
    for job in &r.jobs {
        assert!(job.runtime_ns < 3_100_000_000, "{}", job.runtime_ns);
        assert!(job.steady.as_ref().unwrap().attained);
    }
    // Only the group's last job keeps the window, and the group is reported with it.
    assert!(!r.jobs[0].steady.as_ref().unwrap().has_data);
    assert!(r.jobs[2].steady.as_ref().unwrap().has_data);
    let jobs = j["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    let ss = &jobs[0]["steadystate"];
    assert_eq!(ss["attained"], 1);
    // The samples are the group's bandwidth, in bytes/s: three jobs' worth.
    let bw = ss["data"]["bw_mean"].as_f64().unwrap();
    let group_bw = jobs[0]["read"]["bw_bytes"].as_f64().unwrap();
    assert!((bw / group_bw - 1.0).abs() < 0.05, "{bw} vs {group_bw}");
}

#[test]
fn bad_steady_state_options_are_refused_as_fio_refuses_them() {
    for (opts, want) in [
        ("ss=iops", "a threshold must be given"),
        ("ss=nope:1", "'nope' is not one of iops"),
        ("ss=iops:x%", "could not parse the threshold percentage"),
        ("ss_dur=1s", "must be a multiple of ss_interval"),
        (
            "ss_dur=3s\nss_interval=2s",
            "must be a multiple of ss_interval",
        ),
        ("ss_dur=2s\nss_interval=500ms", "must be at least 1s"),
        ("ss_dur=soon", "is not a time"),
    ] {
        let e = refused(&format!("{READS}runtime=5s\n{opts}\n"));
        assert!(e.contains(want), "{opts}: {e}");
    }
    // Jobs of one reporting group must agree (fio's td_steadystate_init).
    let e = refused(
        "[global]\nrw=read\nruntime=1s\n[a]\nss=iops:1%\nss_dur=2s\n[b]\nss=bw:1%\nss_dur=2s\n",
    );
    assert!(
        e.contains("must be consistent within reporting groups"),
        "{e}"
    );
    let e = refused(
        "[global]\nrw=read\nruntime=1s\n[a]\nss_dur=2s\n[b]\nstonewall\nss_dur=2s\nss_interval=2s\nss_dur=4s\n",
    );
    assert!(e.contains("must be globally equal"), "{e}");
    // A stonewall starts a new group, which may differ.
    let (r, _, _) = run_job(
        "[global]\nrw=randread\ntime_based=1\nruntime=3s\n[a]\nss=iops:50%\nss_dur=2s\n\
         [b]\nstonewall\nss=bw:50%\nss_dur=2s\n",
    );
    assert!(r.jobs.iter().all(|j| j.steady.as_ref().unwrap().attained));
}

const LAT: &str =
    "[job]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=32\ntime_based=1\nruntime=5s\n";

#[test]
fn a_target_far_above_the_latency_climbs_to_iodepth_and_ends() {
    let (r, j, n) = run_job(&format!(
        "{LAT}latency_target=1000\nlatency_window=100ms\nlatency_percentile=99\n"
    ));
    let job = &r.jobs[0];
    assert_eq!(job.error, None);
    assert_eq!(job.latency_depth, 32);
    // Depths 1, 2, 4, 8, 16, 32, then 32 again (the final window), each 100 ms: the job
    // ends long before its runtime, its figures those of the final window only.
    assert!(job.runtime_ns <= 150_000_000, "{}", job.runtime_ns);
    let jj = &j["jobs"][0];
    assert_eq!(jj["latency_depth"], 32);
    assert_eq!(jj["latency_target"], 1_000_000);
    assert_eq!(jj["latency_percentile"], 99.0);
    assert_eq!(jj["latency_window"], 100_000);
    assert!(
        n.contains("     latency   : target=1000000, window=100000, percentile=99.00%, depth=32\n"),
        "{n}"
    );
    // The final window ran at depth 32.
    assert!(jj["iodepth_level"]["32"].as_f64().unwrap() > 99.0);
}

#[test]
fn latency_run_keeps_the_job_running_at_its_depth() {
    let (r, _, _) = run_job(&format!(
        "{LAT}latency_target=1000\nlatency_window=100ms\nlatency_run=1\n"
    ));
    assert!(ran_5s(r.jobs[0].runtime_ns), "{}", r.jobs[0].runtime_ns);
    assert_eq!(r.jobs[0].latency_depth, 32);
}

#[test]
fn a_target_below_the_latency_at_depth_one_settles_at_one() {
    let (r, j, _) = run_job(&format!(
        "{LAT}latency_target=1\nlatency_window=100ms\nlatency_percentile=99\n"
    ));
    let job = &r.jobs[0];
    assert_eq!(job.error, None);
    assert_eq!(job.latency_depth, 1);
    assert!(ran_5s(job.runtime_ns), "{}", job.runtime_ns);
    assert_eq!(j["jobs"][0]["latency_depth"], 1);
    assert_eq!(j["jobs"][0]["iodepth_level"]["1"], 100.0);
    // At percentile 100 a completion over the target at depth 1 fails the job, as fio's
    // lat_fatal.
    let (r, _, _) = run_job(&format!("{LAT}latency_target=1\nlatency_window=100ms\n"));
    let e = r.jobs[0].error.as_deref().unwrap_or("");
    assert!(e.contains("exceeds specified max (1000 nsec)"), "{e}");
}

#[test]
fn without_a_target_the_latency_keys_keep_fio_defaults() {
    let (_, j, n) = run_job(&format!("{READS}runtime=100ms\n"));
    let jj = &j["jobs"][0];
    assert_eq!(jj["latency_depth"], 4);
    assert_eq!(jj["latency_target"], 0);
    assert_eq!(jj["latency_percentile"], 100.0);
    assert_eq!(jj["latency_window"], 0);
    assert!(n.contains("     latency   : target=0, window=0, percentile=100.00%, depth=4\n"));
    for (opts, want) in [
        ("latency_percentile=101", "is not a percentage"),
        ("latency_target=fast", "is not a time"),
        ("latency_run=maybe", "is not 0 or 1"),
    ] {
        let e = refused(&format!("{READS}runtime=1s\n{opts}\n"));
        assert!(e.contains(want), "{opts}: {e}");
    }
}

#[test]
fn ss_dur_alone_judges_fios_default_criterion() {
    // fio's default steadystate is iops_slope:0.01%; ss_dur turns it on.
    let (r, j, _) = run_job(&format!("{READS}runtime=30s\nss_dur=3s\n"));
    let ss = &j["jobs"][0]["steadystate"];
    assert_eq!(ss["ss"], "iops_slope:0.010000%");
    assert_eq!(ss["attained"], 1);
    assert!(
        r.jobs[0].runtime_ns < 4_100_000_000,
        "{}",
        r.jobs[0].runtime_ns
    );
    // An absolute bandwidth limit is a size in bytes/s.
    let (_, j, _) = run_job(&format!("{READS}runtime=3s\nss=bw:5m\nss_dur=2s\n"));
    assert_eq!(j["jobs"][0]["steadystate"]["ss"], "bw:5242880.000000");
}
