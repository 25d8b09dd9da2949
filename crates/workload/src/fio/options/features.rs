//! The options of three fio features, one sub-struct of [`super::JobSpec`] each: steady-state
//! detection (`steadystate`/`ss`, `ss_dur`, `ss_ramp`, `ss_interval`, as options.c's
//! str_steadystate_cb and init.c's checks), the latency target (`latency_target`,
//! `latency_window`, `latency_percentile`, `latency_run`) and SanDisk random preconditioning
//! (`sprandom`, `spr_op`, `spr_num_regions`, `spr_cs`). The runner's parts are
//! runner/steadystate.rs, runner/latency_target.rs and runner/sprandom.rs.

use super::values::{parse_size, parse_time_unit, Size};
use super::JobSpec;
use crate::fio::FioError;

/// What steady state is judged on (fio's FIO_SS_IOPS, FIO_SS_BW, FIO_SS_LAT).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsMetric {
    Iops,
    Bw,
    Lat,
}

/// `steadystate=METRIC[_slope]:LIMIT[%]` and its duration, ramp and check interval.
/// Steady state is on when `dur_us` is not 0 (fio: `ss_dur`), with fio's default criterion
/// `iops_slope:0.01%` when no `steadystate=` is given.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyState {
    pub metric: SsMetric,
    /// `_slope`: the least-squares slope, not the largest deviation from the mean.
    pub slope: bool,
    /// The limit is a percentage of the window's mean.
    pub pct: bool,
    /// As fio keeps it: IOPS, bytes/s, or for an absolute `lat` limit the number of
    /// microseconds given (fio compares it with latencies in ns unchanged).
    pub limit: f64,
    pub dur_us: u64,
    pub ramp_us: u64,
    pub interval_us: u64,
}

impl Default for SteadyState {
    fn default() -> Self {
        SteadyState {
            metric: SsMetric::Iops,
            slope: true,
            pct: true,
            limit: 0.01,
            dur_us: 0,
            ramp_us: 0,
            interval_us: 1_000_000,
        }
    }
}

impl SteadyState {
    pub fn enabled(&self) -> bool {
        self.dur_us > 0
    }
}

/// `latency_target` and its companions: find the highest queue depth whose completions
/// meet the target (io_u.c's lat_target_* ), fio's `latency_target` being off at 0.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyTarget {
    pub target_ns: u64,
    pub window_us: u64,
    pub percentile: f64,
    pub run: bool,
}

impl Default for LatencyTarget {
    fn default() -> Self {
        LatencyTarget {
            target_ns: 0,
            window_us: 0,
            percentile: 100.0,
            run: false,
        }
    }
}

/// `sprandom` (SanDisk random preconditioning) and its region count, over-provisioning
/// and cache size.
#[derive(Clone, Debug, PartialEq)]
pub struct SpRandom {
    pub enabled: bool,
    pub num_regions: u32,
    pub op: f64,
    pub cache_bytes: u64,
    /// The options fio's sprandom checks when they are given: random_generator (lfsr
    /// only), norandommap (1 only) and nrfiles (1 only).
    pub random_generator: Option<String>,
    pub norandommap: Option<bool>,
    pub nr_files: Option<String>,
}

impl Default for SpRandom {
    fn default() -> Self {
        SpRandom {
            enabled: false,
            num_regions: 100,
            op: 0.15,
            cache_bytes: 0,
            random_generator: None,
            norandommap: None,
            nr_files: None,
        }
    }
}

/// fio's str_to_float: a leading number (strtod), anything after it ignored.
fn leading_float(s: &str) -> Option<f64> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == '-' || c == '+') && i == 0)
                || ((c == 'e' || c == 'E') && i > 0))
        })
        .map_or(s.len(), |(i, _)| i);
    s[..end].parse().ok()
}

/// Note the options sprandom's checks look at (they are otherwise handled elsewhere).
pub(super) fn observe(spec: &mut JobSpec, key: &str, value: Option<&str>) {
    let v = || value.map(|v| v.trim().to_string());
    match key {
        "random_generator" => spec.sprandom.random_generator = v(),
        "norandommap" => spec.sprandom.norandommap = super::values::bool_value(value),
        "nrfiles" | "nr_files" => spec.sprandom.nr_files = v(),
        _ => {}
    }
}

/// Apply one of these features' options; `None` when `key` is none of theirs.
pub(super) fn apply(
    spec: &mut JobSpec,
    job: &str,
    key: &str,
    value: Option<&str>,
) -> Option<Result<(), FioError>> {
    let err = |msg: String| FioError::option(job, key, msg);
    let need = || value.ok_or_else(|| err("needs a value".into()));
    // fio's FIO_OPT_STR_VAL_TIME: plain numbers in seconds (is_seconds) or microseconds.
    let time_us = |default_unit_ns: u64| -> Result<u64, FioError> {
        let v = need()?;
        parse_time_unit(v, default_unit_ns)
            .map(|ns| ns / 1000)
            .ok_or_else(|| err(format!("'{v}' is not a time (like 10, 500ms, 2m)")))
    };
    let r = match key {
        "steadystate" | "ss" => {
            need()
                .and_then(|v| parse_ss(v).map_err(err))
                .map(|(m, s, p, l)| {
                    let ss = &mut spec.steady;
                    (ss.metric, ss.slope, ss.pct, ss.limit) = (m, s, p, l);
                })
        }
        "steadystate_duration" | "ss_dur" => {
            time_us(1_000_000_000).map(|us| spec.steady.dur_us = us)
        }
        "steadystate_ramp_time" | "ss_ramp" => {
            time_us(1_000_000_000).map(|us| spec.steady.ramp_us = us)
        }
        "steadystate_check_interval" | "ss_interval" => {
            time_us(1_000_000_000).map(|us| spec.steady.interval_us = us)
        }
        // fio keeps latency_target in us and multiplies it by 1000 (init.c) to compare it
        // with latencies in ns.
        "latency_target" => time_us(1_000).map(|us| spec.latency.target_ns = us * 1000),
        "latency_window" => time_us(1_000).map(|us| spec.latency.window_us = us),
        "latency_percentile" => {
            need().and_then(
                |v| match leading_float(v).filter(|p| (0.0..=100.0).contains(p)) {
                    Some(p) => {
                        spec.latency.percentile = p;
                        Ok(())
                    }
                    None => Err(err(format!("'{v}' is not a percentage (0-100)"))),
                },
            )
        }
        "latency_run" => match super::values::bool_value(value) {
            Some(b) => {
                spec.latency.run = b;
                Ok(())
            }
            None => Err(err(format!("'{}' is not 0 or 1", value.unwrap_or("")))),
        },
        "sprandom" => match super::values::bool_value(value) {
            Some(b) => {
                spec.sprandom.enabled = b;
                Ok(())
            }
            None => Err(err(format!("'{}' is not 0 or 1", value.unwrap_or("")))),
        },
        "spr_num_regions" => need().and_then(|v| match v.trim().parse::<u32>() {
            Ok(n) if n > 0 => {
                spec.sprandom.num_regions = n;
                Ok(())
            }
            _ => Err(err(format!("'{v}' is not a positive number"))),
        }),
        "spr_op" => need().and_then(|v| match leading_float(v) {
            Some(op) if op > 0.0 && op < 1.0 => {
                spec.sprandom.op = op;
                Ok(())
            }
            _ => Err(err(format!("'{v}' is not a fraction between 0 and 1"))),
        }),
        "spr_cs" => need().and_then(|v| match parse_size(v) {
            Some(Size::Bytes(b)) => {
                spec.sprandom.cache_bytes = b;
                Ok(())
            }
            _ => Err(err(format!("'{v}' is not a size (like 4k, 1m, 2g)"))),
        }),
        _ => return None,
    };
    Some(r)
}

/// options.c's str_steadystate_cb: `METRIC[_slope]:LIMIT`, the limit a percentage (`%`),
/// IOPS (a float), a latency (a time, plain numbers in us) or a bandwidth (a size, bytes/s).
fn parse_ss(v: &str) -> Result<(SsMetric, bool, bool, f64), String> {
    let (name, limit) = match v.split_once(':') {
        Some((n, l)) => (n.trim(), Some(l)),
        None => (v.trim(), None),
    };
    let (metric, slope) = match name {
        "iops" => (SsMetric::Iops, false),
        "iops_slope" => (SsMetric::Iops, true),
        "bw" => (SsMetric::Bw, false),
        "bw_slope" => (SsMetric::Bw, true),
        "lat" => (SsMetric::Lat, false),
        "lat_slope" => (SsMetric::Lat, true),
        _ => {
            return Err(format!(
                "'{name}' is not one of iops, iops_slope, bw, bw_slope, lat, lat_slope"
            ))
        }
    };
    let Some(nr) = limit.map(str::trim).filter(|l| !l.is_empty()) else {
        return Err("a threshold must be given with the criterion (like iops:2%)".into());
    };
    if let Some(p) = nr.find('%') {
        return leading_float(&nr[..p])
            .map(|l| (metric, slope, true, l))
            .ok_or_else(|| format!("could not parse the threshold percentage '{nr}'"));
    }
    let limit = match metric {
        SsMetric::Iops => leading_float(nr),
        SsMetric::Lat => parse_time_unit(nr, 1_000).map(|ns| (ns / 1000) as f64),
        SsMetric::Bw => match parse_size(nr) {
            Some(Size::Bytes(b)) => Some(b as f64),
            _ => None,
        },
    };
    limit
        .map(|l| (metric, slope, false, l))
        .ok_or_else(|| format!("could not parse the threshold '{nr}'"))
}

/// init.c's and steadystate.c's checks of one job, made once its options are all read;
/// the notes fio prints (`sprandom sets ...`).
pub(super) fn check(spec: &JobSpec) -> Result<Vec<String>, FioError> {
    let mut notes = Vec::new();
    let ss = &spec.steady;
    if ss.enabled() {
        let err = |o: &str, m: String| FioError::option(&spec.name, o, m);
        if ss.interval_us / 1000 < 1000 {
            return Err(err(
                "ss_interval",
                "must be at least 1s (as fio requires)".into(),
            ));
        }
        if !ss.dur_us.is_multiple_of(ss.interval_us) || ss.dur_us <= ss.interval_us {
            return Err(err(
                "ss_dur",
                format!(
                    "{}us must be a multiple of ss_interval ({}us) and longer (as fio requires)",
                    ss.dur_us, ss.interval_us
                ),
            ));
        }
    }
    let spr = &spec.sprandom;
    if spr.enabled {
        // fio's td_write && td_random: randwrite, or randrw (whose reads are plain random).
        let random_write = spec.writes()
            && spec.pattern == super::Pattern::Random
            && spec.mix != super::Mix::TrimWrite;
        let err = |o: &str, m: &str| Err(FioError::option(&spec.name, o, m));
        if !random_write {
            return err(
                "sprandom",
                "requires random write, random_generator=lfsr, norandommap=1 (as fio)",
            );
        }
        if spr.random_generator.as_deref().is_some_and(|g| g != "lfsr") {
            return err(
                "random_generator",
                "sprandom requires random_generator=lfsr (as fio)",
            );
        }
        if spr.norandommap == Some(false) {
            return err("norandommap", "sprandom requires norandommap=1 (as fio)");
        }
        if spr.nr_files.as_deref().is_some_and(|n| n != "1") {
            return err("nrfiles", "sprandom supports only one file (as fio)");
        }
        if spec.zonemode == super::ZoneMode::Zbd || spec.compressed_io {
            return err(
                "sprandom",
                "overwrites blocks at random: not with zonemode=zbd or compressed_io",
            );
        }
        if spec.zonemode == super::ZoneMode::Strided {
            return err("sprandom", "is not supported yet with zonemode=strided");
        }
        if spr.random_generator.is_none() {
            notes.push("sprandom sets random_generator=lfsr (as fio)".to_string());
        }
        if spr.norandommap.is_none() {
            notes.push("sprandom sets norandommap=1 (as fio)".to_string());
        }
    }
    Ok(notes)
}
