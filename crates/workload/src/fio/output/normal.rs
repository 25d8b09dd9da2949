//! fio's normal (text) output, line for line as stat.c prints it (`show_thread_status_normal`,
//! `show_ddir_status`, `display_lat`, `show_clat_percentiles`, `show_latencies`,
//! `show_group_stats`, `print_disk_util`), with the job header lines init.c and backend.c
//! print first; then znslab's device figures under a heading of their own.

use std::fmt::Write as _;

use device::Controller;
use report::LatencyHistogram;

use super::super::options::{Direction, JobSpec, Mix, Pattern};
use super::super::runner::{DirStats, RunResult};
use super::fmt::{ctime, num2str, Unit};
use super::json::{disk_util, dist, lat_dist, sums};
use super::znslab::device_text;
use super::{groups, per_of_agg, reported, runtime_ms, JobOutput, OutputSpec};

fn rw_name(s: &JobSpec) -> &'static str {
    let random = s.pattern == Pattern::Random;
    match (s.mix, s.direction) {
        (Mix::ReadWrite, _) => ["rw", "randrw"][random as usize],
        (Mix::TrimWrite, _) => ["trimwrite", "randtrimwrite"][random as usize],
        (Mix::Single, Direction::Read) => ["read", "randread"][random as usize],
        (Mix::Single, Direction::Write) => ["write", "randwrite"][random as usize],
        (Mix::Single, Direction::Trim) => ["trim", "randtrim"][random as usize],
    }
}

/// init.c's job line (`name: (g=0): rw=..., bs=(R) ..., ioengine=..., iodepth=...`), `...`
/// for the second clone of a numjobs job, then fio's version and `Starting N processes`.
fn header(result: &RunResult) -> String {
    let mut out = String::new();
    for j in &result.jobs {
        let s = &j.spec;
        match s.clone {
            0 => {
                let bs = |d: usize| {
                    let b = &s.block_sizes[d];
                    let n = |v| num2str(v, 4, true, Unit::Byte);
                    format!("{}-{}", n(b.smallest()), n(b.largest()))
                };
                let _ = writeln!(
                    out,
                    "{}: (g={}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}",
                    s.name,
                    j.group,
                    rw_name(s),
                    bs(0),
                    bs(1),
                    bs(2),
                    s.ioengine,
                    s.iodepth
                );
            }
            1 => out.push_str("...\n"),
            _ => {}
        }
    }
    let n = result.jobs.len();
    let _ = writeln!(out, "{}", super::VERSION);
    let _ = writeln!(out, "Starting {n} process{}", if n > 1 { "es" } else { "" });
    out
}

/// stat.c `display_lat`.
fn display_lat(out: &mut String, name: &str, h: &LatencyHistogram) {
    if h.count() == 0 {
        return;
    }
    let (mut min, mut max, mut mean, mut dev) = (h.min(), h.max(), h.mean(), h.stddev());
    let base = if min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0 {
        min /= 1_000_000;
        max /= 1_000_000;
        mean /= 1e6;
        dev /= 1e6;
        "(msec)"
    } else if min > 2000 && max > 99_999 && dev > 1000.0 {
        min /= 1000;
        max /= 1000;
        mean /= 1e3;
        dev /= 1e3;
        "(usec)"
    } else {
        "(nsec)"
    };
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.02}, stdev={dev:5.02}",
        num2str(min, 6, false, Unit::None),
        num2str(max, 6, false, Unit::None)
    );
}

/// stat.c `show_clat_percentiles`.
fn show_percentiles(out: &mut String, pre: &str, h: &LatencyHistogram, o: &JobOutput) {
    if h.count() == 0 || o.percentiles.is_empty() {
        return;
    }
    let mut vals: Vec<u64> = o.percentiles.iter().map(|p| h.percentile(*p)).collect();
    let minv = vals.iter().copied().min().unwrap_or(0);
    let maxv = vals.iter().copied().max().unwrap_or(0);
    let (scale_down, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let time_width = 5.max(((maxv / divisor) as f64).log10() as usize + 1);
    let prec = o.precision;
    let per_line = (80 - 7) / (prec + 10 + time_width);
    let len = vals.len();
    for (j, v) in vals.iter_mut().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let is_last = j == len - 1;
        for _ in 0..scale_down {
            *v = v.div_ceil(1000);
        }
        let _ = write!(
            out,
            " {:>w$.prec$}th=[{:>tw$}]{}",
            o.percentiles[j],
            v,
            if is_last { '\n' } else { ',' },
            w = prec + 3,
            tw = time_width
        );
        if is_last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// stat.c `show_ddir_status` for read or write.
fn show_ddir(
    out: &mut String,
    label: &str,
    d: &DirStats,
    runtime_ns: u64,
    o: &JobOutput,
    group_agg: u64,
    zone_resets: Option<u64>,
) {
    let runt = runtime_ms(d, runtime_ns);
    if runt == 0 {
        return;
    }
    let bw = 1000 * d.io_bytes / runt;
    let iops = 1000 * d.ios / runt;
    let post = zone_resets.map_or(String::new(), |n| format!("; {n} zone resets"));
    let _ = writeln!(
        out,
        "  {label}: IOPS={}, BW={} ({})({}/{runt}msec){post}",
        num2str(iops, 4, false, Unit::None),
        num2str(bw, 4, true, Unit::BytePerSec),
        num2str(bw, 4, false, Unit::BytePerSec),
        num2str(d.io_bytes, 4, true, Unit::Byte),
    );
    // No submission latency is modelled: slat is empty (not printed) and lat is clat.
    display_lat(out, "clat", &d.clat);
    display_lat(out, " lat", &d.clat);
    if o.clat_percentiles {
        show_percentiles(out, "clat", &d.clat, o);
    }
    if o.lat_percentiles {
        show_percentiles(out, "lat", &d.clat, o);
    }
    let e = &d.ext;
    if e.bw.samples > 0 {
        let (mut min, mut max, mut mean, mut dev) =
            (e.bw.min as f64, e.bw.max as f64, e.bw.mean, e.bw.stddev());
        let p = per_of_agg(group_agg, mean);
        let mut unit = "KiB";
        if mean > 1024.0 * 1024.0 {
            min /= 1024.0;
            max /= 1024.0;
            mean /= 1024.0;
            dev /= 1024.0;
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={:5}, max={:5}, per={p:3.2}%, avg={mean:5.02}, stdev={dev:5.02}, samples={}",
            min as u64, max as u64, e.bw.samples
        );
    }
    if e.iops.samples > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            e.iops.min,
            e.iops.max,
            e.iops.mean,
            e.iops.stddev(),
            e.iops.samples
        );
    }
}

fn show_lat(out: &mut String, vals: &[f64], keys: &[&str], unit: &str) {
    let mut line = 0;
    let mut shown = false;
    let mut new_line = true;
    for (v, k) in vals.iter().zip(keys) {
        if *v <= 0.0 {
            continue;
        }
        shown = true;
        if new_line {
            if line > 0 {
                out.push('\n');
            }
            let _ = write!(out, "  lat ({unit})   : ");
            new_line = false;
            line = 0;
        }
        if line > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{k}={v:3.2}%");
        line += 1;
        if line == 5 {
            new_line = true;
        }
    }
    if shown {
        out.push('\n');
    }
}

/// fio's normal output, then znslab's device figures.
/// The job lines fio prints when the jobs start (before any format's results), with the blank
/// line after them.
pub(crate) fn start_text(result: &RunResult) -> String {
    let mut out = header(result);
    out.push('\n');
    out
}

/// The results block of the normal output (after [`start_text`]).
pub(crate) fn normal_text(
    result: &RunResult,
    c: &Controller,
    seed: u64,
    wall_s: f64,
    spec: &OutputSpec,
) -> String {
    let mut out = String::new();
    let rep = reported(result, spec);
    let gs = groups(&rep);
    let date = ctime(spec.unix_time_ms / 1000);
    for r in &rep {
        let j = &r.job;
        let Some(g) = gs.iter().find(|g| g.id == j.group) else {
            continue;
        };
        match j.reported_error() {
            None => {
                let _ = writeln!(
                    out,
                    "{}: (groupid={}, jobs={}): err= 0: pid=0: {date}",
                    j.spec.name, j.group, r.members
                );
            }
            Some((errno, e)) => {
                let _ = writeln!(
                    out,
                    "{}: (groupid={}, jobs={}): err={errno:2} ({e}): pid=0: {date}",
                    j.spec.name, j.group, r.members
                );
            }
        }
        if j.read.io_bytes > 0 {
            show_ddir(
                &mut out,
                "read",
                &j.read,
                j.runtime_ns,
                r.out,
                g.agg[0],
                None,
            );
        }
        if j.write.io_bytes > 0 {
            show_ddir(
                &mut out,
                "write",
                &j.write,
                j.runtime_ns,
                r.out,
                g.agg[1],
                Some(j.zone_resets),
            );
        }
        if j.trim.io_bytes > 0 {
            // Trims are in no run status group here (fio's group figures: read and write).
            show_ddir(&mut out, "trim", &j.trim, j.runtime_ns, r.out, 0, None);
        }
        let s = sums(&[&j.read, &j.write, &j.trim]);
        let keys = [
            "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
        ];
        show_lat(&mut out, &lat_dist(&s.lat_n, s.ios), &keys, "nsec");
        show_lat(&mut out, &lat_dist(&s.lat_u, s.ios), &keys, "usec");
        let mkeys = [
            "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
        ];
        show_lat(&mut out, &lat_dist(&s.lat_m, s.ios), &mkeys, "msec");
        if j.sync.count() > 0 {
            out.push_str("  fsync/fdatasync/sync_file_range:\n");
            display_lat(&mut out, "sync", &j.sync);
            show_percentiles(&mut out, "sync", &j.sync, r.out);
        }
        out.push_str("  cpu          : usr=0.00%, sys=0.00%, ctx=0, majf=0, minf=0\n");
        let d = dist(&s.depth, s.issued);
        let _ = writeln!(
            out,
            "  IO depths    : 1={:3.1}%, 2={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, >=64={:3.1}%",
            d[0], d[1], d[2], d[3], d[4], d[5], d[6]
        );
        let one = dist(&[0, s.ios, 0, 0, 0, 0, 0], s.ios);
        for what in ["submit  ", "complete"] {
            let _ = writeln!(
                out,
                "     {what}  : 0={:3.1}%, 4={:3.1}%, 8={:3.1}%, 16={:3.1}%, 32={:3.1}%, 64={:3.1}%, >=64={:3.1}%",
                one[0], one[1], one[2], one[3], one[4], one[5], one[6]
            );
        }
        let _ = writeln!(
            out,
            "     issued rwts: total={},{},{},0 short=0,0,0,0 dropped=0,0,0,0",
            issued(&j.read),
            issued(&j.write),
            issued(&j.trim)
        );
        if j.spec.errors.continue_on != 0 {
            let _ = writeln!(
                out,
                "     errors    : total={}, first_error={}/<{}>",
                j.total_err,
                j.first_error,
                crate::fio::runner::errors::strerror(j.first_error)
            );
        }
        let (depth, target, percentile, window) = super::steady::latency_figures(j);
        let _ = writeln!(
            out,
            "     latency   : target={target}, window={window}, percentile={percentile:.2}%, depth={depth}"
        );
        if let Some(ss) = &j.steady {
            out.push_str(&super::steady::steadystate_line(ss));
        }
    }
    for g in &gs {
        let _ = writeln!(out, "\nRun status group {} (all jobs):", g.id);
        for (i, label) in ["   READ", "  WRITE"].into_iter().enumerate() {
            if g.max_run[i] == 0 {
                continue;
            }
            let n = |v: u64, p: bool, u: Unit| num2str(v, 4, p, u);
            let _ = writeln!(
                out,
                "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={}-{}msec",
                n(g.agg[i], true, Unit::BytePerSec),
                n(g.agg[i], false, Unit::BytePerSec),
                n(g.min_bw[i], true, Unit::BytePerSec),
                n(g.max_bw[i], true, Unit::BytePerSec),
                n(g.min_bw[i], false, Unit::BytePerSec),
                n(g.max_bw[i], false, Unit::BytePerSec),
                n(g.io_bytes[i], true, Unit::Byte),
                n(g.io_bytes[i], false, Unit::Byte),
                g.min_run[i],
                g.max_run[i]
            );
        }
    }
    let du = disk_util(result);
    let _ = writeln!(
        out,
        "\nDisk stats (read/write):\n  {}: ios={}/{}, merge=0/0, ticks={}/{}, in_queue={}, util={:3.2}%",
        du.name,
        du.ios[0],
        du.ios[1],
        du.ticks[0],
        du.ticks[1],
        du.ticks[0] + du.ticks[1],
        du.util
    );
    out.push_str(&device_text(result, c, seed, wall_s));
    out
}

/// I/Os of a direction issued (fio's total_io_u): every submission, failed ones included.
fn issued(d: &crate::fio::DirStats) -> u64 {
    d.ext.depth_map.iter().sum()
}
