//! fio's output formats, key for key and line for line as fio 3.33 (stat.c) prints them:
//! `normal` ([`normal`]), `json` and `json+` ([`json`]), `terse` ([`terse`]), plus znslab's own
//! device figures ([`znslab`]), which come after fio's block (text) or under the `znslab` key
//! (JSON) so fio's parsers never meet them.
//!
//! This file holds what the formats share: which formats to print ([`Formats`]), the
//! output options of each job (`*_percentiles`, `percentile_list`, taken from the job
//! sections before the jobs are built, see [`split_output_options`]), the jobs as fio reports
//! them (one per job, or per group with `group_reporting`) and the run status groups.
//!
//! Wall-clock fields are `timestamp`, `timestamp_ms`, `time` (and the date in the normal
//! output's job lines), `znslab.wall_time_s` and `znslab.device_commands_per_wall_s`;
//! everything else is a pure function of seed and config.

pub mod fmt;
mod json;
mod normal;
mod steady;
mod terse;
mod znslab;

pub use znslab::{compression_json, device_json};

use ::device::Controller;
use serde_json::Value;

use super::runner::{DirStats, JobResult, RunResult};
use super::{FioError, Section};

/// The version string printed where fio prints `fio-3.33`.
pub const VERSION: &str = concat!("znslab-", env!("CARGO_PKG_VERSION"));

/// Which of fio's output formats to print (`--output-format=normal,json`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Formats {
    pub normal: bool,
    pub json: bool,
    pub json_plus: bool,
    pub terse: bool,
}

impl Formats {
    /// fio's `--output-format` value: a comma-separated list of normal, json, json+, terse.
    pub fn parse(v: &str) -> Result<Formats, FioError> {
        let mut f = Formats::default();
        for part in v.split(',') {
            match part.trim() {
                "normal" => f.normal = true,
                "json" => f.json = true,
                "json+" => {
                    f.json = true;
                    f.json_plus = true
                }
                "terse" => f.terse = true,
                x => {
                    return Err(FioError {
                        job: None,
                        option: Some("output-format".into()),
                        message: format!("'{x}' is not normal, json, json+ or terse"),
                    })
                }
            }
        }
        Ok(f)
    }
}

/// fio's default `percentile_list` and its precision.
const DEFAULT_PERCENTILES: [f64; 17] = report::FIO_PERCENTILES;

/// The output options of one job section (after its globals), and the options it gave.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutput {
    /// The options the section gave with a value, in order, as fio echoes them under
    /// `job options` (and `name` first for a job named with `--name`).
    pub options: Vec<(String, String)>,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    /// `percentile_list`, and the digits after the point fio prints them with.
    pub percentiles: Vec<f64>,
    pub precision: usize,
}

impl Default for JobOutput {
    fn default() -> Self {
        JobOutput {
            options: Vec::new(),
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            percentiles: DEFAULT_PERCENTILES.to_vec(),
            precision: 2,
        }
    }
}

/// What to print and how.
#[derive(Clone, Debug, Default)]
pub struct OutputSpec {
    pub formats: Formats,
    /// `--terse-version`: 3 (the default) or 2, 4, 5.
    pub terse_version: u32,
    /// The `[global]` options given with a value (`global options` in JSON).
    pub global_options: Vec<(String, String)>,
    /// One per job section, in order.
    pub jobs: Vec<JobOutput>,
    pub unix_time_ms: u64,
}

const OUTPUT_OPTIONS: [&str; 4] = [
    "clat_percentiles",
    "lat_percentiles",
    "slat_percentiles",
    "percentile_list",
];

fn apply_output_option(
    o: &mut JobOutput,
    job: &str,
    key: &str,
    value: Option<&str>,
) -> Result<(), FioError> {
    let flag = |v: Option<&str>| match v {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(x) => Err(FioError::option(job, key, format!("'{x}' is not 0 or 1"))),
    };
    match key {
        "clat_percentiles" => o.clat_percentiles = flag(value)?,
        "lat_percentiles" => o.lat_percentiles = flag(value)?,
        "slat_percentiles" => o.slat_percentiles = flag(value)?,
        "percentile_list" => {
            let v = value.ok_or_else(|| FioError::option(job, key, "needs a value"))?;
            let mut list = Vec::new();
            let mut precision = 0;
            for p in v.split(':') {
                let x: f64 = p
                    .trim()
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite())
                    .ok_or_else(|| {
                        FioError::option(job, key, format!("'{p}' is not a percentage"))
                    })?;
                if !(0.0..=100.0).contains(&x) {
                    return Err(FioError::option(
                        job,
                        key,
                        format!("{p} is out of range (0 to 100)"),
                    ));
                }
                if let Some((_, frac)) = p.trim().split_once('.') {
                    precision =
                        precision.max(frac.chars().take_while(char::is_ascii_digit).count());
                }
                list.push(x);
            }
            if list.len() > 20 {
                return Err(FioError::option(
                    job,
                    key,
                    "more than 20 percentiles (fio's FIO_IO_U_LIST_MAX_LEN)",
                ));
            }
            // fio sorts the list before use; a 0 ends it.
            list.sort_by(f64::total_cmp);
            list.retain(|&x| x != 0.0);
            o.percentiles = list;
            o.precision = precision;
        }
        _ => unreachable!("only output options come here"),
    }
    Ok(())
}

/// Take the output options (`clat_percentiles`, `lat_percentiles`, `slat_percentiles`,
/// `percentile_list`) out of the sections, which then go to [`super::build_jobs`], and note
/// what each job section gave (for `job options`). `named_on_cli[i]` says section `i` came
/// from `--name` (fio then echoes `name` too).
pub fn split_output_options(
    sections: &[Section],
    named_on_cli: &[bool],
) -> Result<(Vec<Section>, OutputSpec), FioError> {
    let mut spec = OutputSpec {
        terse_version: 3,
        ..OutputSpec::default()
    };
    let mut global = JobOutput::default();
    let mut rest = Vec::new();
    let valued = |s: &Section| -> Vec<(String, String)> {
        s.options
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| (k.clone(), v.clone())))
            .collect()
    };
    for (i, s) in sections.iter().enumerate() {
        let mut kept = Section {
            name: s.name.clone(),
            options: Vec::new(),
        };
        let mut out = if s.name == "global" {
            JobOutput::default()
        } else {
            JobOutput {
                options: Vec::new(),
                ..global.clone()
            }
        };
        for (k, v) in &s.options {
            if OUTPUT_OPTIONS.contains(&k.as_str()) {
                apply_output_option(&mut out, &s.name, k, v.as_deref())?;
            } else {
                kept.options.push((k.clone(), v.clone()));
            }
        }
        if s.name == "global" {
            spec.global_options.extend(valued(s));
            global = JobOutput {
                options: Vec::new(),
                ..out
            };
        } else {
            if named_on_cli.get(i).copied().unwrap_or(false) {
                out.options.push(("name".into(), s.name.clone()));
            }
            out.options.extend(valued(s));
            spec.jobs.push(out);
        }
        rest.push(kept);
    }
    Ok((rest, spec))
}

/// A job (or a group with group_reporting) as fio reports it.
pub(crate) struct Reported<'a> {
    pub job: JobResult,
    /// Jobs reported together.
    pub members: u32,
    pub out: &'a JobOutput,
}

/// Which job section each job came from: a new section at each first clone.
fn section_of(result: &RunResult) -> Vec<usize> {
    let mut s = 0usize;
    let mut out = Vec::with_capacity(result.jobs.len());
    for (i, j) in result.jobs.iter().enumerate() {
        if i > 0 && j.spec.clone == 0 {
            s += 1;
        }
        out.push(s);
    }
    out
}

/// Jobs as fio reports them: one entry per job, or per group with group_reporting.
pub(crate) fn reported<'a>(result: &RunResult, spec: &'a OutputSpec) -> Vec<Reported<'a>> {
    static DEFAULT: std::sync::OnceLock<JobOutput> = std::sync::OnceLock::new();
    let default = DEFAULT.get_or_init(JobOutput::default);
    let sections = section_of(result);
    let mut out: Vec<Reported<'a>> = Vec::new();
    for (j, s) in result.jobs.iter().zip(sections) {
        if j.spec.group_reporting {
            if let Some(r) = out
                .iter_mut()
                .find(|r| r.job.group == j.group && r.job.spec.group_reporting)
            {
                let agg = &mut r.job;
                agg.read.merge(&j.read);
                agg.write.merge(&j.write);
                agg.trim.merge(&j.trim);
                agg.runtime_ns = agg.runtime_ns.max(j.runtime_ns);
                agg.zone_resets += j.zone_resets;
                agg.zone_finishes += j.zone_finishes;
                // fio's group takes the steady state of its last job (which keeps the window).
                if j.steady.is_some() {
                    agg.steady = j.steady.clone();
                }
                // ... and its latency_qd (stat.c takes each job's in turn).
                agg.latency_depth = j.latency_depth;
                if agg.error.is_none() {
                    agg.error = j.error.clone();
                    agg.errno = j.errno;
                }
                agg.total_err += j.total_err;
                agg.sync.merge(&j.sync);
                if agg.first_error_text.is_none() {
                    agg.first_error = j.first_error;
                    agg.first_error_text = j.first_error_text.clone();
                }
                r.members += 1;
                continue;
            }
        }
        out.push(Reported {
            job: j.clone(),
            members: 1,
            out: spec.jobs.get(s).unwrap_or(default),
        });
    }
    out
}

/// fio's per-direction runtime in ms: a direction that moved data ran at least 1 ms.
pub(crate) fn runtime_ms(d: &DirStats, runtime_ns: u64) -> u64 {
    if d.ios == 0 {
        0
    } else {
        (runtime_ns / 1_000_000).max(1)
    }
}

/// A run status group (fio's `struct group_run_stats`), per direction: read, write.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupStats {
    pub id: u32,
    pub min_run: [u64; 2],
    pub max_run: [u64; 2],
    pub min_bw: [u64; 2],
    pub max_bw: [u64; 2],
    pub io_bytes: [u64; 2],
    /// Bytes/s: the group's bytes over its longest runtime.
    pub agg: [u64; 2],
}

/// fio's run status groups, from the jobs as reported.
pub(crate) fn groups(rep: &[Reported]) -> Vec<GroupStats> {
    let mut gs: Vec<GroupStats> = Vec::new();
    for r in rep {
        let g = match gs.iter().position(|g| g.id == r.job.group) {
            Some(i) => &mut gs[i],
            None => {
                gs.push(GroupStats {
                    id: r.job.group,
                    min_bw: [u64::MAX; 2],
                    ..GroupStats::default()
                });
                gs.last_mut().expect("just pushed")
            }
        };
        for (i, d) in [&r.job.read, &r.job.write].into_iter().enumerate() {
            let run = runtime_ms(d, r.job.runtime_ns);
            if run == 0 {
                continue;
            }
            if g.min_run[i] == 0 || run < g.min_run[i] {
                g.min_run[i] = run;
            }
            g.max_run[i] = g.max_run[i].max(run);
            let bw = d.io_bytes * 1000 / run;
            g.min_bw[i] = g.min_bw[i].min(bw);
            g.max_bw[i] = g.max_bw[i].max(bw);
            g.io_bytes[i] += d.io_bytes;
        }
    }
    for g in &mut gs {
        for i in 0..2 {
            g.agg[i] = (g.io_bytes[i] * 1000)
                .checked_div(g.max_run[i])
                .unwrap_or(0);
            if g.min_bw[i] == u64::MAX {
                g.min_bw[i] = 0;
            }
        }
    }
    gs.sort_by_key(|g| g.id);
    gs
}

/// fio's `convert_agg_kbytes_percent`: a job's mean bandwidth sample (KiB/s) as a share of
/// its group's aggregate.
pub(crate) fn per_of_agg(agg_bytes: u64, mean_kib: f64) -> f64 {
    if agg_bytes > 1024 {
        (mean_kib * 100.0 / (agg_bytes as f64 / 1024.0)).min(100.0)
    } else {
        100.0
    }
}

/// Every format asked for, in fio's order (terse, JSON, normal), as one text.
pub fn render(
    result: &RunResult,
    c: &Controller,
    seed: u64,
    wall_s: f64,
    spec: &OutputSpec,
) -> String {
    let mut out = String::new();
    // fio prints the job lines as the jobs start, so they come before every format's results.
    if spec.formats.normal {
        out.push_str(&normal::start_text(result));
    }
    if spec.formats.terse {
        out.push_str(&terse::terse_output(result, c, spec));
    }
    if spec.formats.json {
        let v = json::json_value(result, c, seed, wall_s, spec);
        out.push_str(&serde_json::to_string_pretty(&v).unwrap_or_default());
        out.push('\n');
    }
    if spec.formats.normal {
        out.push_str(&normal::normal_text(result, c, seed, wall_s, spec));
    }
    out
}

fn default_spec(unix_time_ms: u64) -> OutputSpec {
    OutputSpec {
        terse_version: 3,
        unix_time_ms,
        ..OutputSpec::default()
    }
}

/// fio's JSON output (`--output-format=json`) with the `znslab` object added, for jobs
/// whose output options are fio's defaults.
pub fn json_output(
    result: &RunResult,
    c: &Controller,
    seed: u64,
    wall_s: f64,
    unix_time_s: u64,
) -> Value {
    json::json_value(result, c, seed, wall_s, &default_spec(unix_time_s * 1000))
}

/// fio's JSON output as `spec` asks (its formats aside), with the `znslab` object added.
pub fn json_output_with(
    result: &RunResult,
    c: &Controller,
    seed: u64,
    wall_s: f64,
    spec: &OutputSpec,
) -> Value {
    json::json_value(result, c, seed, wall_s, spec)
}

/// fio's normal output, then a block of device figures, for jobs whose output options are
/// fio's defaults.
pub fn normal_output(result: &RunResult, c: &Controller, seed: u64, wall_s: f64) -> String {
    normal::start_text(result) + &normal::normal_text(result, c, seed, wall_s, &default_spec(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse_jobfile;

    #[test]
    fn output_options_leave_the_sections_and_reach_each_job() {
        let s = parse_jobfile(
            "[global]\nbs=4k\nlat_percentiles=1\ngroup_reporting\n[a]\nrw=read\npercentile_list=99.5:50\n[b]\nclat_percentiles=0\n",
        )
        .expect("parse");
        let (rest, spec) = split_output_options(&s, &[false, false, true]).expect("valid");
        assert!(rest
            .iter()
            .all(|x| x.options.iter().all(|(k, _)| !k.contains("percentile"))));
        assert_eq!(rest[0].options.len(), 2);
        assert_eq!(
            spec.global_options,
            vec![
                ("bs".into(), "4k".into()),
                ("lat_percentiles".into(), "1".into())
            ]
        );
        let (a, b) = (&spec.jobs[0], &spec.jobs[1]);
        assert!(a.lat_percentiles && a.clat_percentiles);
        assert_eq!((a.percentiles.clone(), a.precision), (vec![50.0, 99.5], 1));
        assert_eq!(a.options[1], ("percentile_list".into(), "99.5:50".into()));
        assert!(b.lat_percentiles && !b.clat_percentiles);
        assert_eq!(b.options[0], ("name".into(), "b".into()));
        assert_eq!(b.precision, 2);
        for bad in [
            "percentile_list=50:abc",
            "percentile_list=101",
            "lat_percentiles=2",
        ] {
            let s = parse_jobfile(&format!("[a]\n{bad}\n")).expect("parse");
            let e = split_output_options(&s, &[false]).expect_err(bad);
            assert_eq!(e.job.as_deref(), Some("a"), "{bad}");
        }
        assert!(Formats::parse("normal,json+").expect("ok").json_plus);
        assert!(Formats::parse("xml").is_err());
    }
}
