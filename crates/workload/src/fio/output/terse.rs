//! fio's terse output (`--minimal`, `--output-format=terse`; stat.c
//! `show_thread_status_terse_all`, `show_ddir_status_terse`): one `;`-separated line per
//! reported job, in terse version 3 (the default), 2, 4 or 5.

use std::fmt::Write as _;

use device::Controller;
use report::LatencyHistogram;

use super::super::runner::{DirStats, RunResult};
use super::json::{disk_util, dist, lat_dist, sums};
use super::{groups, reported, runtime_ms, JobOutput, OutputSpec};

/// fio's `FIO_IO_U_LIST_MAX_LEN`: terse prints this many percentile fields.
const LIST_MAX: usize = 20;

fn lat4(out: &mut String, h: &LatencyHistogram) {
    if h.count() == 0 {
        out.push_str(";0;0;0.000000;0.000000");
    } else {
        let _ = write!(
            out,
            ";{};{};{:.6};{:.6}",
            h.min() / 1000,
            h.max() / 1000,
            h.mean() / 1000.0,
            h.stddev() / 1000.0
        );
    }
}

fn ddir(out: &mut String, d: &DirStats, runtime_ns: u64, o: &JobOutput, agg: u64, ver: u32) {
    let runt = runtime_ms(d, runtime_ns);
    let bw = (1000 * d.io_bytes).checked_div(runt).unwrap_or(0) / 1024;
    let iops = (1000 * d.ios).checked_div(runt).unwrap_or(0);
    let _ = write!(out, ";{};{bw};{iops};{runt}", d.io_bytes >> 10);
    // slat: none is modelled.
    out.push_str(";0;0;0.000000;0.000000");
    lat4(out, &d.clat);
    let with = (o.clat_percentiles || o.lat_percentiles) && d.clat.count() > 0;
    for i in 0..LIST_MAX {
        match o.percentiles.get(i) {
            Some(p) if with => {
                let _ = write!(out, ";{p:.6}%={}", d.clat.percentile(*p) / 1000);
            }
            _ => out.push_str(";0%=0"),
        }
    }
    lat4(out, &d.clat);
    let e = &d.ext;
    if e.bw.samples > 0 {
        let p = if agg > 0 {
            (e.bw.mean * 100.0 / (agg / 1024) as f64).min(100.0)
        } else {
            100.0
        };
        let _ = write!(
            out,
            ";{};{};{p:.6}%;{:.6};{:.6}",
            e.bw.min,
            e.bw.max,
            e.bw.mean,
            e.bw.stddev()
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
    if ver == 5 {
        let _ = write!(out, ";{}", e.bw.samples);
        if e.iops.samples > 0 {
            let _ = write!(
                out,
                ";{};{};{:.6};{:.6};{}",
                e.iops.min,
                e.iops.max,
                e.iops.mean,
                e.iops.stddev(),
                e.iops.samples
            );
        } else {
            out.push_str(";0;0;0.000000;0.000000;0");
        }
    }
}

/// One terse line per reported job.
pub(crate) fn terse_output(result: &RunResult, _c: &Controller, spec: &OutputSpec) -> String {
    let ver = spec.terse_version;
    let rep = reported(result, spec);
    let gs = groups(&rep);
    let du = disk_util(result);
    let mut out = String::new();
    for r in &rep {
        let j = &r.job;
        let agg = |i: usize| gs.iter().find(|g| g.id == j.group).map_or(0, |g| g.agg[i]);
        let err = j.reported_error().map_or(0, |(errno, _)| errno);
        if ver == 2 {
            let _ = write!(out, "2;{};{};{err}", j.spec.name, j.group);
        } else {
            let _ = write!(
                out,
                "{ver};{};{};{};{err}",
                super::VERSION,
                j.spec.name,
                j.group
            );
        }
        ddir(&mut out, &j.read, j.runtime_ns, r.out, agg(0), ver);
        ddir(&mut out, &j.write, j.runtime_ns, r.out, agg(1), ver);
        if ver == 2 || ver == 4 || ver == 5 {
            ddir(&mut out, &j.trim, j.runtime_ns, r.out, 0, ver);
        }
        out.push_str(";0.000000%;0.000000%;0;0;0");
        let s = sums(&[&j.read, &j.write, &j.trim]);
        for v in dist(&s.depth, s.issued) {
            let _ = write!(out, ";{v:3.1}%");
        }
        // stat_calc_lat_nu: the ns buckets count in the first us bucket.
        let mut lat_u = lat_dist(&s.lat_u, s.ios);
        if s.ios > 0 {
            lat_u[0] += 100.0 * s.lat_n.iter().sum::<u64>() as f64 / s.ios as f64;
        }
        for v in lat_u {
            let _ = write!(out, ";{v:3.2}%");
        }
        for v in lat_dist(&s.lat_m, s.ios) {
            let _ = write!(out, ";{v:3.2}%");
        }
        if ver >= 3 {
            let _ = write!(
                out,
                ";{};{};{};0;0;{};{};{};{:3.2}%",
                du.name,
                du.ios[0],
                du.ios[1],
                du.ticks[0],
                du.ticks[1],
                du.ticks[0] + du.ticks[1],
                du.util
            );
        }
        if j.spec.errors.continue_on != 0 {
            let _ = write!(out, ";{};{}", j.total_err, j.first_error);
        }
        out.push('\n');
    }
    out
}
