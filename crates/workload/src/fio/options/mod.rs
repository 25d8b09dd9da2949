//! fio option names and values, turned into typed job specifications. [`values`] parses
//! option values (sizes, times, `rw=` forms); [`catalog`] knows every option of fio's table
//! and what znslab does with it.

mod catalog;
mod fio_names;
mod values;

pub use catalog::{
    engine_refusal, status, Status, COMMAND_LINE_ONLY, DIFFERS, FIO_ALIASES, FIO_OPTIONS,
};
pub use values::{
    expand_env, parse_distribution, parse_rw, parse_size, parse_time_ns, parse_time_unit,
    Direction, Distribution, Mix, Pattern, Size,
};

use super::{FioError, Section};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneMode {
    /// fio's default: no zone awareness, I/O goes where the offsets say, errors and all.
    None,
    /// fio's zonemode=zbd: writes at write pointers, reads below them, trims reset zones.
    Zbd,
    /// fio's zonemode=strided: `zonesize` bytes in each window of `zonerange`, then the
    /// next window `zoneskip` further on (offsets as in zonemode none).
    Strided,
}

/// One job (one clone, after numjobs is expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub name: String,
    /// Which clone of a numjobs job this is (0-based).
    pub clone: u32,
    /// The job's direction; with `mix` the first of its directions (reads for rw/randrw,
    /// writes for trimwrite).
    pub direction: Direction,
    pub pattern: Pattern,
    pub mix: Mix,
    /// rw/randrw: percent of I/Os that are reads.
    pub rwmixread: u32,
    /// `rw=...:N`: sequential jobs add N bytes after each I/O (negative: backwards); random
    /// ones take a new random offset every N I/Os.
    pub rw_modifier: Option<i64>,
    /// The largest block size (buffers are sized for it); every I/O's with a fixed `bs`.
    pub bs: u64,
    /// `bsrange`/`bs=min-max`: the smallest block size (I/O sizes are drawn between the two,
    /// multiples of it).
    pub bs_min: u64,
    /// `bssplit`: block sizes and their percentages of the I/Os.
    pub bssplit: Vec<(u64, u32)>,
    pub size: Option<Size>,
    pub io_size: Option<Size>,
    pub number_ios: Option<u64>,
    pub offset: Size,
    pub offset_increment: u64,
    pub loops: u32,
    pub iodepth: u32,
    /// Wait for earlier jobs to finish before starting (starts a new reporting group).
    pub stonewall: bool,
    /// Start after the named job has finished.
    pub wait_for: Option<String>,
    pub zonemode: ZoneMode,
    /// `zonesize`: must match the device's zone size in zonemode=zbd, as in fio.
    pub zone_size: Option<u64>,
    /// zonemode was given (fio: without it, a zonesize means strided).
    pub zonemode_given: bool,
    pub zone_range: Option<u64>,
    pub zone_skip: u64,
    pub max_open_zones: u32,
    pub job_max_open_zones: u32,
    pub ignore_zone_limits: bool,
    pub zone_reset_threshold: f64,
    pub zone_reset_frequency: f64,
    pub buffer_compress_percentage: u32,
    pub buffer_compress_chunk: u64,
    /// znslab extension: each 4 KiB page of the buffers draws its percentage uniformly from
    /// buffer_compress_percentage ± this, so page compression ratios vary as real data's do.
    pub buffer_compress_spread: u32,
    pub runtime_ns: Option<u64>,
    /// Wait this long after the group starts before the first I/O (not counted in runtime).
    pub startdelay_ns: u64,
    /// I/Os completed in the first ramp_time after the job starts are not counted.
    pub ramp_time_ns: u64,
    pub time_based: bool,
    pub group_reporting: bool,
    pub randseed: Option<u64>,
    pub random_distribution: Distribution,
    /// Bytes per second the job may issue (0 = no limit); `rate_iops` is turned into this.
    pub rate_bytes: u64,
    /// rate_process=poisson: exponential gaps between I/Os instead of even ones.
    pub rate_poisson: bool,
    /// Idle time after every `thinktime_blocks` I/Os.
    pub thinktime_ns: u64,
    pub thinktime_blocks: u64,
    /// `lat_percentiles`/`clat_percentiles`, and `percentile_list` (passed to the results).
    pub lat_percentiles: bool,
    pub clat_percentiles: bool,
    pub percentile_list: Option<Vec<f64>>,
    pub filename: Option<String>,
    pub ioengine: String,
    pub read_beyond_wp: bool,
    /// `verify=`: written blocks are read back and compared with the bytes written.
    pub verify: bool,
    /// The verify method named (md5, crc32c, ...), for messages.
    pub verify_method: String,
    pub do_verify: bool,
    pub verify_backlog: u64,
    pub numjobs: u32,
    /// `write_mode=zone_append` (io_uring_cmd): writes are Zone Append commands.
    pub zone_append: bool,
    /// `flow`: the job's weight among the jobs of its `flow_id`; `flow_sleep` their stall.
    pub flow: u32,
    pub flow_id: u32,
    pub flow_sleep_ns: u64,
    /// `exitall`: when this job finishes, the other jobs of its group stop.
    pub exitall: bool,
    /// CCZNS: writes become compressed writes (CW) and reads decompressed reads (DR).
    pub compressed_io: bool,
    /// Chunk size of CW/DR in bytes; 0 = bs (single-chunk commands). bs / chunk chunks per I/O.
    pub compressed_chunk: u64,
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: String::new(),
            clone: 0,
            direction: Direction::Read,
            pattern: Pattern::Sequential,
            mix: Mix::Single,
            rwmixread: 50,
            rw_modifier: None,
            bs: 4096,
            bs_min: 4096,
            bssplit: Vec::new(),
            size: None,
            io_size: None,
            number_ios: None,
            offset: Size::Bytes(0),
            offset_increment: 0,
            loops: 1,
            iodepth: 1,
            stonewall: false,
            wait_for: None,
            zonemode: ZoneMode::None,
            zone_size: None,
            zonemode_given: false,
            zone_range: None,
            zone_skip: 0,
            max_open_zones: 0,
            job_max_open_zones: 0,
            ignore_zone_limits: false,
            zone_reset_threshold: 1.0,
            zone_reset_frequency: 0.0,
            buffer_compress_percentage: 0,
            buffer_compress_chunk: 512,
            buffer_compress_spread: 0,
            runtime_ns: None,
            startdelay_ns: 0,
            ramp_time_ns: 0,
            time_based: false,
            group_reporting: false,
            randseed: None,
            random_distribution: Distribution::Random,
            rate_bytes: 0,
            rate_poisson: false,
            thinktime_ns: 0,
            thinktime_blocks: 1,
            lat_percentiles: false,
            clat_percentiles: true,
            percentile_list: None,
            filename: None,
            ioengine: "libaio".into(),
            read_beyond_wp: false,
            verify: false,
            verify_method: String::new(),
            do_verify: true,
            verify_backlog: 0,
            compressed_io: false,
            compressed_chunk: 0,
            numjobs: 1,
            zone_append: false,
            flow: 0,
            flow_id: 0,
            flow_sleep_ns: 0,
            exitall: false,
        }
    }
}

impl JobSpec {
    /// The job reads (alone or mixed).
    pub fn reads(&self) -> bool {
        self.direction == Direction::Read
    }
    /// The job writes (alone or mixed).
    pub fn writes(&self) -> bool {
        self.direction == Direction::Write || self.mix == Mix::ReadWrite
    }
    /// The job trims (alone or in trimwrite).
    pub fn trims(&self) -> bool {
        self.direction == Direction::Trim || self.mix == Mix::TrimWrite
    }
}

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
    match status(key) {
        Some(Status::Supported) => {}
        Some(Status::Notice(why)) => {
            // Ignoring these is only harmless at fio's default: another value changes the
            // sizes a job reads or the shape of fio's output.
            let default = match key {
                "kb_base" => Some(("1024", "sizes here are read with kb_base=1024")),
                "unified_rw_reporting" => Some((
                    "0",
                    "read and write are reported apart (fio's default, none)",
                )),
                _ => None,
            };
            if let Some((want, why)) = default {
                let v = value.unwrap_or(want);
                if v != want && !(key == "unified_rw_reporting" && v == "none") {
                    return Err(FioError::option(
                        job,
                        key,
                        format!("'{v}': only {want} is supported: {why}"),
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
            let mut ranges = Vec::new();
            for part in v.split(',').filter(|p| !p.trim().is_empty()) {
                let (lo, hi) = match part.split_once('-') {
                    Some((a, b)) => (bytes(a)?, bytes(b)?),
                    None => (bytes(part)?, bytes(part)?),
                };
                if lo == 0 || hi < lo {
                    return Err(bad(part, "a positive size or a range min-max"));
                }
                ranges.push((lo, hi));
            }
            if ranges.is_empty() {
                return Err(bad(v, "a size (like 4k, 1m, 2g)"));
            }
            if ranges.iter().any(|r| *r != ranges[0]) {
                return Err(FioError::option(
                    job,
                    key,
                    "separate read/write/trim block sizes are not supported yet",
                ));
            }
            (spec.bs_min, spec.bs) = ranges[0];
            spec.bssplit.clear();
        }
        "bssplit" => {
            let v = need()?;
            let sets: Vec<&str> = v.split(',').filter(|p| !p.trim().is_empty()).collect();
            if sets.iter().any(|s| *s != sets[0]) || sets.is_empty() {
                return Err(FioError::option(
                    job,
                    key,
                    "separate read/write/trim splits are not supported yet",
                ));
            }
            let mut split = Vec::new();
            let mut unset = 0;
            for part in sets[0].split(':') {
                let (size, pct) = match part.split_once('/') {
                    Some((s, p)) if !p.trim().is_empty() => (bytes(s)?, Some(percent(p)?)),
                    Some((s, _)) => (bytes(s)?, None),
                    None => (bytes(part)?, None),
                };
                if size == 0 {
                    return Err(bad(part, "a positive block size"));
                }
                unset += pct.is_none() as u32;
                split.push((size, pct));
            }
            let given: u32 = split.iter().filter_map(|(_, p)| *p).sum();
            if given > 100 || (unset == 0 && given != 100) {
                return Err(bad(v, "block sizes whose percentages add up to 100"));
            }
            // As fio: sizes without a percentage share what the others leave.
            let share = (100 - given).checked_div(unset).unwrap_or(0);
            let mut split: Vec<(u64, u32)> = split
                .into_iter()
                .map(|(s, p)| (s, p.unwrap_or(share)))
                .filter(|(_, p)| *p > 0)
                .collect();
            let total: u32 = split.iter().map(|(_, p)| p).sum();
            if let Some(last) = split.last_mut() {
                last.1 += 100 - total.min(100);
            }
            spec.bs = split.iter().map(|(s, _)| *s).max().unwrap_or(4096);
            spec.bs_min = split.iter().map(|(s, _)| *s).min().unwrap_or(4096);
            spec.bssplit = split;
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
