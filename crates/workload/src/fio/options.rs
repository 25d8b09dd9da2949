//! fio option names and values, turned into typed job specifications.

use super::{FioError, Section};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Sequential,
    Random,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneMode {
    /// No zone awareness: I/O goes where the offsets say, errors and all.
    None,
    /// fio's zonemode=zbd: writes at write pointers, reads below them.
    Zbd,
}

/// A size that may be a percentage of the device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Bytes(u64),
    Percent(f64),
}

impl Size {
    pub fn resolve(self, device_bytes: u64) -> u64 {
        match self {
            Size::Bytes(b) => b,
            Size::Percent(p) => (device_bytes as f64 * p / 100.0) as u64,
        }
    }
}

/// One job (one clone, after numjobs is expanded).
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    pub name: String,
    /// Which clone of a numjobs job this is (0-based).
    pub clone: u32,
    pub direction: Direction,
    pub pattern: Pattern,
    pub bs: u64,
    pub size: Option<Size>,
    pub io_size: Option<u64>,
    pub offset: Size,
    pub offset_increment: u64,
    pub iodepth: u32,
    /// Wait for earlier jobs to finish before starting (starts a new reporting group).
    pub stonewall: bool,
    pub zonemode: ZoneMode,
    pub max_open_zones: u32,
    pub buffer_compress_percentage: u32,
    pub buffer_compress_chunk: u64,
    /// znslab extension: each 4 KiB page of the buffers draws its percentage uniformly from
    /// buffer_compress_percentage ± this, so page compression ratios vary as real data's do.
    pub buffer_compress_spread: u32,
    pub runtime_ns: Option<u64>,
    /// Wait this long after the group starts before the first I/O (not counted in runtime).
    pub startdelay_ns: u64,
    pub time_based: bool,
    pub group_reporting: bool,
    pub randseed: Option<u64>,
    pub filename: Option<String>,
    pub ioengine: String,
    pub read_beyond_wp: bool,
    pub numjobs: u32,
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
            bs: 4096,
            size: None,
            io_size: None,
            offset: Size::Bytes(0),
            offset_increment: 0,
            iodepth: 1,
            stonewall: false,
            zonemode: ZoneMode::Zbd,
            max_open_zones: 0,
            buffer_compress_percentage: 0,
            buffer_compress_chunk: 512,
            buffer_compress_spread: 0,
            runtime_ns: None,
            startdelay_ns: 0,
            time_based: false,
            group_reporting: false,
            randseed: None,
            filename: None,
            ioengine: "libaio".into(),
            read_beyond_wp: false,
            compressed_io: false,
            compressed_chunk: 0,
            numjobs: 1,
        }
    }
}

/// Parse a size the way fio does (`kb_base=1024`): `4k`, `128KiB`, `1m`, `2g`, `50%`.
pub fn parse_size(v: &str) -> Option<Size> {
    let v = v.trim();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.trim().parse().ok()?;
        return (p > 0.0 && p <= 100.0).then_some(Size::Percent(p));
    }
    let lower = v.to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (num, unit) = lower.split_at(digits_end);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult).map(Size::Bytes)
}

/// Parse a time; plain numbers are seconds (fio's default unit for runtime).
pub fn parse_time_ns(v: &str) -> Option<u64> {
    let lower = v.trim().to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (num, unit) = lower.split_at(digits_end);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit {
        "" | "s" | "sec" => 1_000_000_000,
        "ms" | "msec" => 1_000_000,
        "us" | "usec" => 1_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

fn parse_bool(job: &str, key: &str, v: Option<&str>) -> Result<bool, FioError> {
    match v {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(x) => Err(FioError::option(job, key, format!("'{x}' is not 0 or 1"))),
    }
}

fn apply(spec: &mut JobSpec, job: &str, key: &str, value: Option<&str>) -> Result<(), FioError> {
    let need = || value.ok_or_else(|| FioError::option(job, key, "needs a value"));
    let bad = |v: &str, what: &str| FioError::option(job, key, format!("'{v}' is not {what}"));
    let number = |v: &str| v.trim().parse::<u64>().map_err(|_| bad(v, "a number"));
    let bytes = |v: &str| match parse_size(v) {
        Some(Size::Bytes(b)) => Ok(b),
        _ => Err(bad(v, "a size (like 4k, 1m, 2g)")),
    };
    match key {
        "name" | "description" | "thread" => {}
        "rw" | "readwrite" => {
            let v = need()?;
            let (d, p) = match v {
                "read" => (Direction::Read, Pattern::Sequential),
                "write" => (Direction::Write, Pattern::Sequential),
                "randread" => (Direction::Read, Pattern::Random),
                "randwrite" => (Direction::Write, Pattern::Random),
                "rw" | "readwrite" | "randrw" | "trim" | "randtrim" | "trimwrite" => {
                    return Err(FioError::option(
                        job,
                        key,
                        format!("'{v}' is not supported yet (use read, write or randread)"),
                    ))
                }
                _ => return Err(bad(v, "one of read, write, randread, randwrite")),
            };
            spec.direction = d;
            spec.pattern = p;
        }
        "bs" | "blocksize" => {
            let v = need()?;
            if v.contains(',') {
                return Err(FioError::option(
                    job,
                    key,
                    "separate read/write block sizes are not supported",
                ));
            }
            spec.bs = bytes(v)?;
            if spec.bs == 0 {
                return Err(bad(v, "a positive size"));
            }
        }
        "size" => {
            spec.size = Some(
                parse_size(need()?)
                    .ok_or_else(|| bad(value.unwrap_or(""), "a size or percentage"))?,
            )
        }
        "io_size" | "io_limit" => spec.io_size = Some(bytes(need()?)?),
        "offset" => {
            spec.offset = parse_size(need()?)
                .ok_or_else(|| bad(value.unwrap_or(""), "a size or percentage"))?
        }
        "offset_increment" => spec.offset_increment = bytes(need()?)?,
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
                v => return Err(bad(v, "zbd or none (strided is not supported)")),
            }
        }
        "max_open_zones" | "job_max_open_zones" => spec.max_open_zones = number(need()?)? as u32,
        "buffer_compress_percentage" => {
            let p = number(need()?)?;
            if p > 100 {
                return Err(bad(value.unwrap_or(""), "a percentage (0-100)"));
            }
            spec.buffer_compress_percentage = p as u32;
        }
        "buffer_compress_spread" => {
            let p = number(need()?)?;
            if p > 100 {
                return Err(bad(value.unwrap_or(""), "percentage points (0-100)"));
            }
            spec.buffer_compress_spread = p as u32;
        }
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
        "runtime" | "timeout" => {
            let v = need()?;
            spec.runtime_ns =
                Some(parse_time_ns(v).ok_or_else(|| bad(v, "a time (like 10, 500ms, 2m)"))?);
        }
        "time_based" => spec.time_based = parse_bool(job, key, value)?,
        "group_reporting" => spec.group_reporting = parse_bool(job, key, value)?,
        "randseed" => spec.randseed = Some(number(need()?)?),
        "filename" => spec.filename = Some(need()?.to_string()),
        "ioengine" => {
            let v = need()?;
            match v {
                "libaio" | "io_uring" | "io_uring_cmd" | "psync" | "sync" | "pvsync" | "pvsync2" => spec.ioengine = v.into(),
                _ => return Err(bad(v, "an engine znslab models (libaio, io_uring, io_uring_cmd, psync, sync, pvsync, pvsync2)")),
            }
        }
        "direct" => {
            parse_bool(job, key, value)?;
        }
        "read_beyond_wp" => spec.read_beyond_wp = parse_bool(job, key, value)?,
        "compressed_io" => spec.compressed_io = parse_bool(job, key, value)?,
        "compressed_chunk" => {
            spec.compressed_chunk = bytes(need()?)?;
            if spec.compressed_chunk == 0 {
                return Err(bad("0", "a positive size"));
            }
        }
        _ => return Err(FioError::option(job, key, "unknown or unsupported option")),
    }
    Ok(())
}

/// fio's `FIO_MAX_JOBS`: jobs (numjobs clones included) one run may have.
pub const MAX_JOBS: usize = 4096;

/// Combine `[global]` sections with each job section and expand numjobs into clones.
pub fn build_jobs(sections: &[Section]) -> Result<Vec<JobSpec>, FioError> {
    let mut global = JobSpec::default();
    let mut jobs = Vec::new();
    for s in sections {
        if s.name == "global" {
            for (k, v) in &s.options {
                apply(&mut global, "global", k, v.as_deref())?;
            }
            continue;
        }
        let mut spec = JobSpec {
            name: s.name.clone(),
            ..global.clone()
        };
        // Only the job's own stonewall separates it from earlier jobs.
        spec.stonewall = false;
        for (k, v) in &s.options {
            apply(&mut spec, &s.name, k, v.as_deref())?;
        }
        if matches!(
            spec.ioengine.as_str(),
            "psync" | "sync" | "pvsync" | "pvsync2"
        ) {
            spec.iodepth = 1; // synchronous engines have one I/O in flight, as in fio
        }
        if spec.zonemode == ZoneMode::Zbd
            && spec.direction == Direction::Write
            && spec.pattern == Pattern::Random
        {
            return Err(FioError::option(
                &s.name,
                "rw",
                "randwrite is impossible on sequential-write-required zones (zonemode=zbd); use rw=write",
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
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::parse_jobfile;

    #[test]
    fn sizes_and_times() {
        assert_eq!(parse_size("128k"), Some(Size::Bytes(128 << 10)));
        assert_eq!(parse_size("1MiB"), Some(Size::Bytes(1 << 20)));
        assert_eq!(parse_size("3g"), Some(Size::Bytes(3 << 30)));
        assert_eq!(parse_size("50%"), Some(Size::Percent(50.0)));
        assert_eq!(parse_size("12q"), None);
        assert_eq!(parse_time_ns("10"), Some(10_000_000_000));
        assert_eq!(parse_time_ns("500ms"), Some(500_000_000));
        assert_eq!(parse_time_ns("soon"), None);
    }

    #[test]
    fn globals_jobs_and_clones() {
        let s = parse_jobfile("[global]\nbs=128k\niodepth=4\n[w]\nrw=write\nnumjobs=3\noffset_increment=1g\n[r]\nstonewall\nrw=randread\nioengine=psync\n").expect("parse");
        let jobs = build_jobs(&s).expect("valid");
        assert_eq!(jobs.len(), 4);
        assert_eq!(jobs[0].bs, 128 << 10);
        assert_eq!(
            jobs.iter().map(|j| j.clone).collect::<Vec<_>>(),
            vec![0, 1, 2, 0]
        );
        assert!(!jobs[0].stonewall && jobs[3].stonewall);
        assert_eq!(jobs[3].iodepth, 1);
        assert_eq!(jobs[3].pattern, Pattern::Random);
    }

    #[test]
    fn errors_name_job_and_option() {
        let e = build_jobs(&parse_jobfile("[a]\nbs=12q\n").expect("parse")).expect_err("bad size");
        assert_eq!(
            (e.job.as_deref(), e.option.as_deref()),
            (Some("a"), Some("bs"))
        );
        let e =
            build_jobs(&parse_jobfile("[a]\nfrobnicate=1\n").expect("parse")).expect_err("unknown");
        assert_eq!(e.option.as_deref(), Some("frobnicate"));
        let e = build_jobs(&parse_jobfile("[a]\nrw=randwrite\nzonemode=zbd\n").expect("parse"))
            .expect_err("randwrite");
        assert!(e.to_string().contains("randwrite is impossible"), "{e}");
        let e = build_jobs(&parse_jobfile("[a]\ntime_based\n").expect("parse"))
            .expect_err("no runtime");
        assert_eq!(e.option.as_deref(), Some("time_based"));
        assert!(build_jobs(&parse_jobfile("[global]\nbs=4k\n").expect("parse")).is_err());
        // The second clone's offset would wrap around to the first one's.
        let e = build_jobs(
            &parse_jobfile("[a]\nnumjobs=2\noffset_increment=18446744073709551615\n")
                .expect("parse"),
        )
        .expect_err("offset past any device");
        assert_eq!(e.option.as_deref(), Some("offset_increment"));
    }
}
