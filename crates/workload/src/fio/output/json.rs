//! fio's JSON and JSON+ output (stat.c `show_thread_status_json`, `add_ddir_status_json`,
//! `add_ddir_lat_json`, `json_array_add_disk_util`), keys in fio's order, plus the `znslab`
//! object of device figures.

use device::Controller;
use report::{round3, LatencyHistogram};
use serde_json::{json, Map, Value};

use super::super::runner::{DirExt, DirStats, IoStat, RunResult};
use super::fmt::{ctime, fio_bins};
use super::{device_json, groups, per_of_agg, reported, JobOutput, OutputSpec};

/// A latency object (`slat_ns`, `clat_ns`, `lat_ns`): min, max, mean, stddev, N, and with
/// `percentiles` the percentile map (and with json+ fio's histogram `bins`).
fn lat_json(h: &LatencyHistogram, o: &JobOutput, percentiles: bool, plus: bool) -> Value {
    let mut v = h.fio_json();
    let m = v.as_object_mut().expect("an object");
    if o.percentiles != report::FIO_PERCENTILES {
        let mut pct = Map::new();
        for p in &o.percentiles {
            pct.insert(format!("{p:.6}"), h.percentile(*p).into());
        }
        m.insert("percentile".into(), pct.into());
    }
    if !percentiles {
        m.remove("percentile");
    }
    if plus && percentiles && h.count() > 0 {
        let bins: Map<String, Value> = fio_bins(h)
            .into_iter()
            .map(|(k, n)| (k.to_string(), n.into()))
            .collect();
        m.insert("bins".into(), bins.into());
    }
    v
}

fn bw_bytes(d: &DirStats, runtime_ns: u64) -> f64 {
    if runtime_ns == 0 {
        0.0
    } else {
        d.io_bytes as f64 * 1e9 / runtime_ns as f64
    }
}

/// One direction (`read`, `write`, `trim`).
fn dir_json(d: &DirStats, runtime_ns: u64, o: &JobOutput, plus: bool, agg: u64) -> Value {
    let bw = bw_bytes(d, runtime_ns);
    let iops = if runtime_ns == 0 {
        0.0
    } else {
        d.ios as f64 * 1e9 / runtime_ns as f64
    };
    // znslab records no submission latency (submission takes no virtual time): slat is an
    // empty statistic and lat is clat.
    let slat = LatencyHistogram::new();
    let mut v = json!({
        "io_bytes": d.io_bytes,
        "io_kbytes": d.io_bytes / 1024,
        "bw_bytes": bw.round() as u64,
        "bw": (bw / 1024.0).round() as u64,
        "iops": round3(iops),
        // fio's per-direction runtime: 0 for a direction that moved nothing.
        "runtime": if d.ios == 0 { 0 } else { runtime_ns / 1_000_000 },
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
    });
    let m = v.as_object_mut().expect("an object");
    // slat_ns kept the (zero) percentile map it always had here.
    m.insert("slat_ns".into(), slat.fio_json());
    m.insert(
        "clat_ns".into(),
        lat_json(&d.clat, o, o.clat_percentiles, plus),
    );
    // lat_ns always carried a percentile map in znslab's output; json+ adds bins with
    // lat_percentiles as fio does.
    m.insert(
        "lat_ns".into(),
        lat_json(&d.clat, o, true, plus && o.lat_percentiles),
    );
    let e: &DirExt = &d.ext;
    let (bw_agg, bw_mean, bw_dev) = if e.bw.samples > 0 {
        (per_of_agg(agg, e.bw.mean), e.bw.mean, e.bw.stddev())
    } else {
        (0.0, 0.0, 0.0)
    };
    let stat = |s: &IoStat| (s.min, s.max);
    m.insert("bw_min".into(), stat(&e.bw).0.into());
    m.insert("bw_max".into(), stat(&e.bw).1.into());
    m.insert("bw_agg".into(), round6(bw_agg).into());
    m.insert("bw_mean".into(), round6(bw_mean).into());
    m.insert("bw_dev".into(), round6(bw_dev).into());
    m.insert("bw_samples".into(), e.bw.samples.into());
    m.insert("iops_min".into(), stat(&e.iops).0.into());
    m.insert("iops_max".into(), stat(&e.iops).1.into());
    m.insert("iops_mean".into(), round6(e.iops.mean).into());
    m.insert("iops_stddev".into(), round6(e.iops.stddev()).into());
    m.insert("iops_samples".into(), e.iops.samples.into());
    v
}

/// fio prints floats with six decimals.
pub(crate) fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Shares of a map in percent, at least `floor` for a non-empty entry.
fn shares(map: &[u64], total: u64, floor: f64) -> Vec<f64> {
    map.iter()
        .map(|&n| {
            if total == 0 {
                return 0.0;
            }
            let p = n as f64 / total as f64 * 100.0;
            if n > 0 && p < floor {
                floor
            } else {
                p
            }
        })
        .collect()
}

/// fio's `stat_calc_dist`: shares of a map in percent, at least 0.1 for a non-empty entry.
pub(crate) fn dist(map: &[u64], total: u64) -> Vec<f64> {
    shares(map, total, 0.1)
}

/// fio's `stat_calc_lat`: shares in percent, at least 0.01 for a non-empty bucket.
pub(crate) fn lat_dist(map: &[u64], total: u64) -> Vec<f64> {
    shares(map, total, 0.01)
}

/// A job's figures summed over its directions: depth map, latency buckets, I/Os.
pub(crate) struct JobSums {
    pub ios: u64,
    pub issued: u64,
    pub depth: [u64; 7],
    pub lat_n: [u64; 10],
    pub lat_u: [u64; 10],
    pub lat_m: [u64; 12],
}

/// The directions' counts summed; `issued` counts every I/O submitted (fio's total_io_u),
/// those that failed under continue_on_error or completed in ramp_time included.
pub(crate) fn sums(dirs: &[&DirStats]) -> JobSums {
    let mut s = JobSums {
        ios: dirs.iter().map(|d| d.ios).sum(),
        issued: dirs
            .iter()
            .map(|d| d.ext.depth_map.iter().sum::<u64>())
            .sum(),
        depth: [0; 7],
        lat_n: [0; 10],
        lat_u: [0; 10],
        lat_m: [0; 12],
    };
    for d in dirs.iter().map(|d| &d.ext) {
        for i in 0..7 {
            s.depth[i] += d.depth_map[i];
        }
        for i in 0..10 {
            s.lat_n[i] += d.lat_n[i];
            s.lat_u[i] += d.lat_u[i];
        }
        for i in 0..12 {
            s.lat_m[i] += d.lat_m[i];
        }
    }
    s
}

fn named(keys: &[&str], vals: &[f64]) -> Value {
    let m: Map<String, Value> = keys
        .iter()
        .zip(vals)
        .map(|(k, v)| (k.to_string(), round6(*v).into()))
        .collect();
    m.into()
}

pub(crate) const LAT_KEYS: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
pub(crate) const LAT_M_KEYS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

fn options_json(opts: &[(String, String)]) -> Value {
    let m: Map<String, Value> = opts
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    m.into()
}

/// The disk fio would have found under the job's file: the emulated namespace, with the
/// jobs' I/O counts and latency sums (ms) and the share of the run it had I/O in flight.
pub(crate) struct DiskUtil {
    pub name: String,
    pub ios: [u64; 2],
    pub ticks: [u64; 2],
    pub util: f64,
}

pub(crate) fn disk_util(result: &RunResult) -> DiskUtil {
    let mut ios = [0u64; 2];
    let mut ticks = [0u128; 2];
    // Busy time: in each group, the longest any job had I/O in flight.
    let mut busy: std::collections::BTreeMap<u32, u64> = Default::default();
    for j in &result.jobs {
        for (i, d) in [&j.read, &j.write, &j.trim].into_iter().enumerate() {
            // Disk stats count reads and writes; a trim adds to the busy time only.
            if i < 2 {
                ios[i] += d.ios;
            }
            if i < 2 {
                ticks[i] += d.ext.ticks_ns;
            }
            let b = busy.entry(j.group).or_default();
            *b = (*b).max(d.ext.busy_ns);
        }
    }
    let busy: u64 = busy.values().sum();
    let util = if result.sim_end_ns == 0 {
        0.0
    } else {
        (100.0 * busy as f64 / result.sim_end_ns as f64).min(100.0)
    };
    DiskUtil {
        name: "znslab0n1".into(),
        ios,
        ticks: ticks.map(|t| (t / 1_000_000) as u64),
        util,
    }
}

/// fio's JSON output with the `znslab` object added.
pub(crate) fn json_value(
    result: &RunResult,
    c: &Controller,
    seed: u64,
    wall_s: f64,
    spec: &OutputSpec,
) -> Value {
    let rep = reported(result, spec);
    let gs = groups(&rep);
    let plus = spec.formats.json_plus;
    let jobs: Vec<Value> = rep
        .iter()
        .map(|r| {
            let j = &r.job;
            let g = gs.iter().find(|g| g.id == j.group);
            let agg = |i: usize| g.map_or(0, |g| g.agg[i]);
            let mut m = Map::new();
            m.insert("jobname".into(), j.spec.name.clone().into());
            m.insert("groupid".into(), j.group.into());
            m.insert(
                "error".into(),
                j.reported_error().map_or(0, |(errno, _)| errno).into(),
            );
            m.insert("znslab_error".into(), j.error.clone().into());
            m.insert("eta".into(), 0.into());
            m.insert(
                "elapsed".into(),
                ((j.runtime_ns as f64 / 1e9).ceil() as u64).into(),
            );
            if !r.out.options.is_empty() {
                m.insert("job options".into(), options_json(&r.out.options));
            }
            m.insert(
                "read".into(),
                dir_json(&j.read, j.runtime_ns, r.out, plus, agg(0)),
            );
            m.insert(
                "write".into(),
                dir_json(&j.write, j.runtime_ns, r.out, plus, agg(1)),
            );
            m.insert(
                "trim".into(),
                dir_json(&j.trim, j.runtime_ns, r.out, plus, 0),
            );
            m.insert(
                "sync".into(),
                json!({"total_ios": j.sync.count(), "lat_ns": j.sync.fio_json()}),
            );
            m.insert("job_runtime".into(), (j.runtime_ns / 1_000_000).into());
            // No host CPU is modelled: fio's CPU and fault figures are 0.
            for k in ["usr_cpu", "sys_cpu"] {
                m.insert(k.into(), 0.0.into());
            }
            for k in ["ctx", "majf", "minf"] {
                m.insert(k.into(), 0.into());
            }
            let s = sums(&[&j.read, &j.write, &j.trim]);
            m.insert(
                "iodepth_level".into(),
                named(
                    &["1", "2", "4", "8", "16", "32", ">=64"],
                    &dist(&s.depth, s.issued),
                ),
            );
            // Each submission and each reaping handles one I/O: fio's 1-4 bucket.
            let one = dist(&[0, s.ios, 0, 0, 0, 0, 0], s.ios);
            let sub_keys = ["0", "4", "8", "16", "32", "64", ">=64"];
            m.insert("iodepth_submit".into(), named(&sub_keys, &one));
            m.insert("iodepth_complete".into(), named(&sub_keys, &one));
            m.insert(
                "latency_ns".into(),
                named(&LAT_KEYS, &lat_dist(&s.lat_n, s.ios)),
            );
            m.insert(
                "latency_us".into(),
                named(&LAT_KEYS, &lat_dist(&s.lat_u, s.ios)),
            );
            m.insert(
                "latency_ms".into(),
                named(&LAT_M_KEYS, &lat_dist(&s.lat_m, s.ios)),
            );
            if j.spec.errors.continue_on != 0 {
                m.insert("total_err".into(), j.total_err.into());
                m.insert("first_error".into(), j.first_error.into());
            }
            let (depth, target, percentile, window) = super::steady::latency_figures(j);
            m.insert("latency_depth".into(), depth.into());
            m.insert("latency_target".into(), target.into());
            m.insert("latency_percentile".into(), round6(percentile).into());
            m.insert("latency_window".into(), window.into());
            if let Some(ss) = &j.steady {
                m.insert("steadystate".into(), super::steady::steadystate_json(ss));
            }
            m.insert("zone_resets".into(), j.zone_resets.into());
            m.insert("zone_finishes".into(), j.zone_finishes.into());
            Value::Object(m)
        })
        .collect();
    let du = disk_util(result);
    let mut root = Map::new();
    root.insert("fio version".into(), super::VERSION.into());
    root.insert("timestamp".into(), (spec.unix_time_ms / 1000).into());
    root.insert("timestamp_ms".into(), spec.unix_time_ms.into());
    root.insert("time".into(), ctime(spec.unix_time_ms / 1000).into());
    if !spec.global_options.is_empty() {
        root.insert("global options".into(), options_json(&spec.global_options));
    }
    root.insert("jobs".into(), jobs.into());
    root.insert(
        "disk_util".into(),
        json!([{
            "name": du.name,
            "read_ios": du.ios[0],
            "write_ios": du.ios[1],
            "read_merges": 0,
            "write_merges": 0,
            "read_ticks": du.ticks[0],
            "write_ticks": du.ticks[1],
            "in_queue": du.ticks[0] + du.ticks[1],
            "util": round6(du.util),
        }]),
    );
    root.insert("znslab".into(), device_json(c, result, seed, wall_s));
    Value::Object(root)
}
