//! fio option names and values, turned into typed job specifications. [`values`] parses
//! option values (sizes, times, `rw=` forms); [`catalog`] knows every option of fio's table
//! and what znslab does with it.

mod catalog;
mod features;
mod fio_names;
mod spec;
mod values;

pub use catalog::{
    engine_refusal, status, Status, COMMAND_LINE_ONLY, DEFAULT_ONLY, DIFFERS, FIO_ALIASES,
    FIO_OPTIONS,
};
pub use values::{
    expand_env, parse_distribution, parse_rw, parse_size, parse_time_ns, parse_time_unit,
    Direction, Distribution, Mix, Pattern, Size,
};

mod lists;
use lists::{errno_named, parse_bssplit, parse_pattern, per_direction, split_per_direction};

pub use features::{LatencyTarget, SpRandom, SsMetric, SteadyState};
pub use spec::{ErrorPolicy, JobSpec, ZoneMode, ERROR_READ, ERROR_VERIFY, ERROR_WRITE};

use super::{FioError, Section};

fn parse_bool(job: &str, key: &str, v: Option<&str>) -> Result<bool, FioError> {
    values::bool_value(v)
        .ok_or_else(|| FioError::option(job, key, format!("'{}' is not 0 or 1", v.unwrap_or(""))))
}

fn parse_fraction(job: &str, key: &str, v: &str) -> Result<f64, FioError> {
    let t = v.trim();
    let f = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match f {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(FioError::option(
            job,
            key,
            format!("'{v}' is not a fraction between 0 and 1"),
        )),
    }
}

/// A `read,write,trim` value whose parts must agree (separate values are not supported).
fn one_for_all<'a>(job: &str, key: &str, v: &'a str) -> Result<&'a str, FioError> {
    let parts: Vec<&str> = v
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    match parts.first() {
        Some(first) if parts.iter().all(|p| p == first) => Ok(first),
        _ => Err(FioError::option(
            job,
            key,
            format!("'{v}': separate read/write/trim values are not supported yet"),
        )),
    }
}

/// Apply one option to `spec`. Options accepted and ignored push a one-line notice.
fn apply(
    spec: &mut JobSpec,
    job: &str,
    key: &str,
    value: Option<&str>,
    notices: &mut Vec<String>,
) -> Result<(), FioError> {
    let expanded = value.map(expand_env);
    let value = expanded.as_deref().map(str::trim);
    let need = || value.ok_or_else(|| FioError::option(job, key, "needs a value"));
    let bad = |v: &str, what: &str| FioError::option(job, key, format!("'{v}' is not {what}"));
    let number = |v: &str| v.trim().parse::<u64>().map_err(|_| bad(v, "a number"));
    let bytes = |v: &str| match parse_size(v) {
        Some(Size::Bytes(b)) => Ok(b),
        _ => Err(bad(v, "a size (like 4k, 1m, 2g)")),
    };
    let size_or_zones = |v: &str| match parse_size(v) {
        Some(s @ (Size::Bytes(_) | Size::Zones(_))) => Ok(s),
        _ => Err(bad(v, "a size (like 4k, 1m, 2g, 8z)")),
    };
    let percent = |v: &str| match number(v) {
        Ok(p) if p <= 100 => Ok(p as u32),
        _ => Err(bad(v, "a percentage (0-100)")),
    };
    features::observe(spec, key, value);
    match status(key) {
        Some(Status::Supported) => {}
        Some(Status::Notice(why)) => {
            if let Some((_, defaults, only)) = DEFAULT_ONLY.iter().find(|(n, ..)| *n == key) {
                let v = value.unwrap_or(defaults[0]);
                if !defaults.contains(&v) {
                    return Err(FioError::option(
                        job,
                        key,
                        format!("'{v}': only {} is supported: {only}", defaults.join(" or ")),
                    ));
                }
            }
            let n = format!("option '{key}' accepted and ignored: {why}");
            if !notices.contains(&n) {
                notices.push(n);
            }
            return Ok(());
        }
        Some(Status::Refused(why)) => return Err(FioError::option(job, key, why)),
        None if !COMPRESS_EXTENSIONS.contains(&key) => {
            return Err(FioError::option(
                job,
                key,
                "unknown option (fio has no such option)",
            ))
        }
        None => {}
    }
    if let Some(r) = features::apply(spec, job, key, value) {
        return r;
    }
    match key {
        "name" | "description" | "new_group" | "randrepeat" | "allrandrepeat" | "norandommap"
        | "create_serialize" => {}
        "write_zone_remainder" => {
            if parse_bool(job, key, value)? {
                return Err(FioError::option(
                    job,
                    key,
                    "writing zone remainders is not supported yet",
                ));
            }
        }
        "wait_for" => spec.wait_for = Some(need()?.to_string()),
        "rw" | "readwrite" => {
            let v = need()?;
            let f = parse_rw(v).map_err(|e| FioError::option(job, key, e))?;
            spec.direction = f.direction;
            spec.pattern = f.pattern;
            spec.mix = f.mix;
            spec.rw_modifier = f.modifier;
        }
        "rwmixread" => spec.rwmixread = percent(need()?)?,
        "rwmixwrite" => spec.rwmixread = 100 - percent(need()?)?,
        "bs" | "blocksize" | "bsrange" | "blocksize_range" => {
            let v = need()?;
            let mut any = false;
            for (dir, part) in per_direction(v).into_iter().enumerate() {
                let Some(part) = part else { continue };
                let (lo, hi) = match part.split_once('-') {
                    Some((a, b)) => (bytes(a)?, bytes(b)?),
                    None => (bytes(part)?, bytes(part)?),
                };
                if lo == 0 || hi < lo {
                    return Err(bad(part, "a positive size or a range min-max"));
                }
                let b = &mut spec.block_sizes[dir];
                (b.min, b.max) = (lo, hi);
                any = true;
            }
            if !any {
                return Err(bad(v, "a size (like 4k, 1m, 2g)"));
            }
            spec.settle_block_sizes();
        }
        "bssplit" => {
            let v = need()?;
            let mut any = false;
            for (dir, set) in split_per_direction(v).into_iter().enumerate() {
                let Some(set) = set else { continue };
                spec.block_sizes[dir].split = parse_bssplit(set, v, &bad, &bytes, &percent)?;
                any = true;
            }
            if !any {
                return Err(bad(v, "block sizes whose percentages add up to 100"));
            }
            spec.settle_block_sizes();
        }
        "flow" => {
            let v = need()?;
            spec.flow = v
                .trim()
                .parse::<i64>()
                .ok()
                .filter(|f| *f >= 0 && *f <= u32::MAX as i64)
                .ok_or_else(|| bad(v, "a weight (a number of 0 or more)"))?
                as u32;
        }
        "flow_id" => spec.flow_id = number(need()?)? as u32,
        "flow_sleep" => {
            let v = need()?;
            spec.flow_sleep_ns =
                parse_time_unit(v, 1_000).ok_or_else(|| bad(v, "a time (like 10, 1ms)"))?;
        }
        "flow_watermark" => {
            number(need()?)?;
        }
        "exitall" => spec.exitall = parse_bool(job, key, value)?,
        "atomic" => spec.atomic = parse_bool(job, key, value)?,
        "zero_buffers" => spec.zero_buffers = parse_bool(job, key, value)?,
        "fsync" => spec.fsync_every = number(need()?)?,
        "percentage_random" | "percentage_sequential" => {
            let v = need()?;
            for (dir, part) in per_direction(v).into_iter().enumerate() {
                if let Some(part) = part {
                    let p = percent(part)?;
                    spec.percentage_random[dir] =
                        if key == "percentage_random" { p } else { 100 - p };
                }
            }
        }
        "offset_align" => spec.offset_align = bytes(need()?)?,
        "bs_is_seq_rand" => spec.bs_is_seq_rand = parse_bool(job, key, value)?,
        "bs_unaligned" | "blocksize_unaligned" => spec.bs_unaligned = parse_bool(job, key, value)?,
        "thinktime_blocks_type" => match need()? {
            "complete" => spec.thinktime_on_issue = false,
            "issue" => spec.thinktime_on_issue = true,
            v => return Err(bad(v, "complete or issue")),
        },
        "rw_sequencer" => match need()? {
            "sequential" => spec.rw_identical = false,
            "identical" => spec.rw_identical = true,
            v => return Err(bad(v, "sequential or identical")),
        },
        "max_latency" => {
            let v = need()?;
            for (dir, part) in per_direction(v).into_iter().enumerate() {
                if let Some(part) = part {
                    spec.max_latency_ns[dir] = parse_time_unit(part, 1_000)
                        .ok_or_else(|| bad(part, "a time (like 500, 10ms; microseconds without a unit)"))?;
                }
            }
        }
        "fdatasync" => spec.fdatasync_every = number(need()?)?,
        "buffer_pattern" => {
            let v = need()?;
            spec.buffer_pattern = parse_pattern(v).map_err(|e| FioError::option(job, key, e))?;
            // As fio's str_buffer_pattern_cb: the pattern wins over zero_buffers.
            spec.zero_buffers = false;
        }
        "verify_write_sequence" => spec.verify_write_sequence = parse_bool(job, key, value)?,
        "num_range" => {
            let v = need()?;
            spec.num_range = number(v)
                .ok()
                .filter(|n| (1..=256).contains(n))
                .ok_or_else(|| bad(v, "a number of ranges from 1 to 256 (Dataset Management's limit)"))?
                as u32;
        }
        "dedupe_percentage" => spec.dedupe.percentage = percent(need()?)?,
        "dedupe_mode" => match need()? {
            "repeat" => spec.dedupe.working_set = false,
            "working_set" => spec.dedupe.working_set = true,
            v => return Err(bad(v, "repeat or working_set")),
        },
        "dedupe_working_set_percentage" => {
            spec.dedupe.working_set_percentage = percent(need()?)?;
        }
        "dedupe_global" => spec.dedupe.global = parse_bool(job, key, value)?,
        "continue_on_error" => {
            let v = need()?;
            spec.errors.continue_on = match v.to_ascii_lowercase().as_str() {
                "none" | "0" => 0,
                "read" => ERROR_READ,
                "write" => ERROR_WRITE,
                "io" => ERROR_READ | ERROR_WRITE,
                "verify" => ERROR_VERIFY,
                "all" | "1" => 0xffff,
                _ => return Err(bad(v, "none, read, write, io, verify, all, 0 or 1")),
            };
        }
        "ignore_error" => {
            // fio's str_ignore_error_cb: read,write,verify lists of errnos (names or
            // numbers, ':'-separated); a type given a list is continued on.
            let v = need()?;
            let lists: Vec<&str> = v.split(',').collect();
            if lists.len() > 3 {
                return Err(bad(v, "at most three lists (read,write,verify)"));
            }
            for (bit, list) in lists.iter().enumerate() {
                let mut errnos = Vec::new();
                for name in list.split(':').map(str::trim) {
                    if name.is_empty() {
                        break;
                    }
                    errnos.push(errno_named(name).ok_or_else(|| {
                        bad(name, "an error name (like EIO, ENOSPC) or number")
                    })?);
                }
                if !errnos.is_empty() {
                    spec.errors.continue_on |= 1 << bit;
                    spec.errors.ignore[bit] = Some(errnos);
                }
            }
        }
        "write_mode" => match need()? {
            "write" => spec.zone_append = false,
            "zone_append" => spec.zone_append = true,
            v @ ("uncor" | "zeroes" | "verify") => {
                return Err(FioError::option(
                    job,
                    key,
                    format!(
                    "'{v}': write uncorrectable, write zeroes and verify commands are not modelled"
                ),
                ))
            }
            v if v.contains('/') => {
                return Err(FioError::option(
                    job,
                    key,
                    format!("'{v}': mixed write modes are not supported (write uncorrectable, write zeroes and verify commands are not modelled)"),
                ))
            }
            v => return Err(bad(v, "one of write, uncor, zeroes, verify, zone_append")),
        },
        "exit_what" => match need()? {
            "group" | "stonewall" | "all" => {}
            v => return Err(bad(v, "one of group, stonewall, all")),
        },
        "size" | "filesize" => {
            spec.size = Some(
                parse_size(need()?)
                    .ok_or_else(|| bad(value.unwrap_or(""), "a size or percentage"))?,
            )
        }
        "io_size" | "io_limit" => spec.io_size = Some(size_or_zones(need()?)?),
        "number_ios" => spec.number_ios = Some(number(need()?)?).filter(|n| *n > 0),
        "offset" | "fileoffset" => {
            spec.offset = parse_size(need()?)
                .ok_or_else(|| bad(value.unwrap_or(""), "a size or percentage"))?
        }
        "offset_increment" => spec.offset_increment = bytes(need()?)?,
        "loops" => {
            spec.loops = u32::try_from(number(need()?)?)
                .ok()
                .filter(|l| *l > 0)
                .ok_or_else(|| bad(value.unwrap_or(""), "a positive number"))?
        }
        "numjobs" => {
            spec.numjobs = u32::try_from(number(need()?)?)
                .map_err(|_| bad(value.unwrap_or(""), "a small number"))?;
            if spec.numjobs == 0 {
                return Err(bad("0", "a positive number"));
            }
        }
        "iodepth" => {
            spec.iodepth = u32::try_from(number(need()?)?)
                .map_err(|_| bad(value.unwrap_or(""), "a small number"))?;
            if spec.iodepth == 0 || spec.iodepth > 65536 {
                return Err(bad(value.unwrap_or(""), "between 1 and 65536"));
            }
        }
        "stonewall" | "wait_for_previous" => spec.stonewall = parse_bool(job, key, value)?,
        "zonemode" => {
            spec.zonemode = match need()? {
                "zbd" => ZoneMode::Zbd,
                "none" => ZoneMode::None,
                "strided" => ZoneMode::Strided,
                v => return Err(bad(v, "one of none, strided, zbd")),
            };
            spec.zonemode_given = true;
        }
        "zonesize" => spec.zone_size = Some(bytes(need()?)?).filter(|z| *z > 0),
        "zonecapacity" => {
            bytes(need()?)?;
            notices.push(
                "option 'zonecapacity' accepted and ignored: zonemode=zbd takes the zones of \
                 the device"
                    .into(),
            );
        }
        "zonerange" => spec.zone_range = Some(bytes(need()?)?).filter(|z| *z > 0),
        "zoneskip" => match size_or_zones(need()?)? {
            Size::Bytes(b) => spec.zone_skip = b,
            Size::Zones(0) => spec.zone_skip = 0,
            _ => {
                return Err(FioError::option(
                    job,
                    key,
                    "a skip in zones is not supported yet (give bytes)",
                ))
            }
        },
        "max_open_zones" => spec.max_open_zones = number(need()?)? as u32,
        "job_max_open_zones" => spec.job_max_open_zones = number(need()?)? as u32,
        "ignore_zone_limits" => spec.ignore_zone_limits = parse_bool(job, key, value)?,
        "zone_reset_threshold" => spec.zone_reset_threshold = parse_fraction(job, key, need()?)?,
        "zone_reset_frequency" => spec.zone_reset_frequency = parse_fraction(job, key, need()?)?,
        "buffer_compress_percentage" => spec.buffer_compress_percentage = percent(need()?)?,
        "buffer_compress_spread" => spec.buffer_compress_spread = percent(need()?)?,
        "buffer_compress_chunk" => {
            spec.buffer_compress_chunk = bytes(need()?)?;
            if spec.buffer_compress_chunk == 0 {
                return Err(bad("0", "a positive size"));
            }
        }
        "startdelay" => {
            let v = need()?;
            spec.startdelay_ns =
                parse_time_ns(v).ok_or_else(|| bad(v, "a time (like 10, 500ms, 2m)"))?;
        }
        "ramp_time" => {
            let v = need()?;
            spec.ramp_time_ns =
                parse_time_ns(v).ok_or_else(|| bad(v, "a time (like 10, 500ms, 2m)"))?;
        }
        "runtime" | "timeout" => {
            let v = need()?;
            spec.runtime_ns =
                Some(parse_time_ns(v).ok_or_else(|| bad(v, "a time (like 10, 500ms, 2m)"))?)
                    .filter(|r| *r > 0);
        }
        "time_based" => spec.time_based = parse_bool(job, key, value)?,
        "group_reporting" => spec.group_reporting = parse_bool(job, key, value)?,
        "randseed" => spec.randseed = Some(number(need()?)?),
        "rate" => {
            let v = one_for_all(job, key, need()?)?;
            spec.rate_bytes = bytes(v)?;
        }
        "rate_iops" => {
            let v = one_for_all(job, key, need()?)?;
            spec.rate_bytes = number(v)?.saturating_mul(spec.bs);
        }
        "rate_process" => {
            spec.rate_poisson = match need()? {
                "linear" => false,
                "poisson" => true,
                v => return Err(bad(v, "linear or poisson")),
            }
        }
        "thinktime" => {
            let v = need()?;
            spec.thinktime_ns =
                parse_time_unit(v, 1_000).ok_or_else(|| bad(v, "a time (like 20, 10ms)"))?;
        }
        "thinktime_blocks" => {
            spec.thinktime_blocks = number(need()?)?.max(1);
        }
        "lat_percentiles" => spec.lat_percentiles = parse_bool(job, key, value)?,
        "clat_percentiles" => spec.clat_percentiles = parse_bool(job, key, value)?,
        "slat_percentiles" => {
            parse_bool(job, key, value)?;
        }
        "percentile_list" => {
            let v = need()?;
            let list = v
                .split(':')
                .map(|p| {
                    p.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|p| (0.0..=100.0).contains(p))
                })
                .collect::<Option<Vec<f64>>>()
                .filter(|l| !l.is_empty() && l.len() <= 20)
                .ok_or_else(|| bad(v, "up to 20 percentiles (0-100) separated by ':'"))?;
            spec.percentile_list = Some(list);
        }
        "filename" => spec.filename = Some(need()?.to_string()),
        "ioengine" => {
            let v = need()?;
            if let Some(why) = engine_refusal(v) {
                return Err(FioError::option(job, key, why));
            }
            spec.ioengine = v.into();
        }
        "read_beyond_wp" => spec.read_beyond_wp = parse_bool(job, key, value)?,
        "verify" => {
            let v = need()?;
            const METHODS: &[&str] = &[
                "md5",
                "crc64",
                "crc32",
                "crc32c",
                "crc32c-intel",
                "crc16",
                "crc7",
                "sha1",
                "sha256",
                "sha512",
                "sha3-224",
                "sha3-256",
                "sha3-384",
                "sha3-512",
                "xxhash",
                "meta",
                "pattern",
                "null",
                "pattern_hdr",
            ];
            if v == "0" {
                spec.verify = false;
            } else if METHODS.contains(&v) {
                spec.verify = v != "null";
                spec.verify_method = v.to_string();
            } else {
                return Err(bad(
                    v,
                    "a verify method of fio (md5, crc32c, sha256, pattern, ...)",
                ));
            }
        }
        "do_verify" => spec.do_verify = parse_bool(job, key, value)?,
        "verify_fatal" => {
            parse_bool(job, key, value)?;
        }
        "verify_backlog" => spec.verify_backlog = number(need()?)?,
        "verify_pattern" | "verify_interval" | "verify_offset" | "verify_pattern_interval" => {
            need()?;
        }
        "fill_device" | "fill_fs" => {
            if parse_bool(job, key, value)? {
                spec.size = Some(Size::Percent(100.0));
            }
        }
        "compressed_io" => spec.compressed_io = parse_bool(job, key, value)?,
        "compressed_chunk" => {
            spec.compressed_chunk = bytes(need()?)?;
            if spec.compressed_chunk == 0 {
                return Err(bad("0", "a positive size"));
            }
        }
        "random_distribution" => {
            spec.random_distribution =
                parse_distribution(need()?).map_err(|e| FioError::option(job, key, e))?;
        }
        _ => return Err(FioError::option(job, key, "not supported yet")),
    }
    Ok(())
}

/// znslab's own job options (not in fio's table).
const COMPRESS_EXTENSIONS: &[&str] = &[
    "compressed_io",
    "compressed_chunk",
    "buffer_compress_spread",
];

/// fio's `FIO_MAX_JOBS`: jobs (numjobs clones included) one run may have.
pub const MAX_JOBS: usize = 4096;

/// Combine `[global]` sections with each job section and expand numjobs into clones.
pub fn build_jobs(sections: &[Section]) -> Result<Vec<JobSpec>, FioError> {
    build_jobs_with_notices(sections).map(|(jobs, _)| jobs)
}

/// [`build_jobs`], also returning the one-line notices of options accepted and ignored.
pub fn build_jobs_with_notices(
    sections: &[Section],
) -> Result<(Vec<JobSpec>, Vec<String>), FioError> {
    let mut global = JobSpec::default();
    let mut jobs: Vec<JobSpec> = Vec::new();
    let mut notices = Vec::new();
    for s in sections {
        // fio takes any section whose name starts with "global" as global options.
        // An engine znslab cannot model is refused before its own options are looked at.
        for (k, v) in &s.options {
            if k == "ioengine" {
                if let Some(why) = v
                    .as_deref()
                    .map(expand_env)
                    .as_deref()
                    .and_then(engine_refusal)
                {
                    return Err(FioError::option(&s.name, k, why));
                }
            }
        }
        if s.name.starts_with("global") {
            for (k, v) in &s.options {
                apply(&mut global, "global", k, v.as_deref(), &mut notices)?;
            }
            continue;
        }
        // Every option of [global] applies to each job, stonewall included (as in fio).
        let mut spec = JobSpec {
            name: s.name.clone(),
            ..global.clone()
        };
        for (k, v) in &s.options {
            apply(&mut spec, &s.name, k, v.as_deref(), &mut notices)?;
        }
        if matches!(
            spec.ioengine.as_str(),
            "psync" | "sync" | "pvsync" | "pvsync2" | "vsync"
        ) {
            spec.iodepth = 1; // synchronous engines have one I/O in flight, as in fio
        }
        if let Some(w) = &spec.wait_for {
            if !jobs.iter().any(|j| &j.name == w) {
                return Err(FioError::option(
                    &s.name,
                    "wait_for",
                    format!("no earlier job is named '{w}'"),
                ));
            }
        }
        // As fio's init.c: a zonesize without a zonemode means strided.
        if !spec.zonemode_given && spec.zone_size.is_some() {
            spec.zonemode = ZoneMode::Strided;
        }
        if spec.zone_size.is_some() && spec.zonemode == ZoneMode::None {
            return Err(FioError::option(
                &s.name,
                "zonesize",
                "zonemode=none and zonesize are not compatible (as in fio)",
            ));
        }
        if spec.zonemode == ZoneMode::Strided && spec.zone_size.is_none() {
            return Err(FioError::option(
                &s.name,
                "zonesize",
                "must be given with zonemode=strided (as in fio)",
            ));
        }
        if spec.zone_append && (spec.zonemode != ZoneMode::Zbd || spec.compressed_io) {
            return Err(FioError::option(
                &s.name,
                "write_mode",
                "zone_append needs zonemode=zbd (as in fio) and no compressed_io",
            ));
        }
        if spec.zonemode == ZoneMode::Zbd && spec.zone_skip > 0 {
            return Err(FioError::option(
                &s.name,
                "zoneskip",
                "is not supported yet with zonemode=zbd",
            ));
        }
        if spec.compressed_io && spec.mix != Mix::Single {
            return Err(FioError::option(
                &s.name,
                "compressed_io",
                "needs rw=read, write, randread or randwrite",
            ));
        }
        if spec.compressed_io
            && spec.pattern == Pattern::Random
            && spec.direction == Direction::Write
        {
            return Err(FioError::option(
                &s.name,
                "compressed_io",
                "random compressed writes are not supported (use rw=write)",
            ));
        }
        if spec.num_range > 1 && (spec.direction != Direction::Trim || spec.mix != Mix::Single) {
            return Err(FioError::option(
                &s.name,
                "num_range",
                "is for trims only (rw=trim or randtrim), as in fio",
            ));
        }
        for n in features::check(&spec)? {
            if !notices.contains(&n) {
                notices.push(n);
            }
        }
        if spec.time_based && spec.runtime_ns.is_none() {
            return Err(FioError::option(&s.name, "time_based", "needs a runtime"));
        }
        // The last clone starts (numjobs - 1) x offset_increment past the offset: past 1 EiB
        // it is past any device (and near 2^64 its offset would wrap around to the start).
        if (spec.numjobs as u64 - 1)
            .checked_mul(spec.offset_increment)
            .is_none_or(|b| b > 1 << 60)
        {
            return Err(FioError::option(
                &s.name,
                "offset_increment",
                format!(
                    "{} clone(s) x {} bytes is past any device",
                    spec.numjobs - 1,
                    spec.offset_increment
                ),
            ));
        }
        if jobs.len() as u64 + spec.numjobs as u64 > MAX_JOBS as u64 {
            return Err(FioError::option(
                &s.name,
                "numjobs",
                format!("the jobs would number more than fio's limit of {MAX_JOBS}"),
            ));
        }
        for clone in 0..spec.numjobs {
            jobs.push(JobSpec {
                clone,
                stonewall: spec.stonewall && clone == 0,
                ..spec.clone()
            });
        }
    }
    if jobs.is_empty() {
        return Err(FioError::new(
            "no jobs defined (add a [job] section or --name=job)",
        ));
    }
    Ok((jobs, notices))
}

#[cfg(test)]
mod tests;
