//! fio option values: sizes (`4k`, `50%`, `8z`), times, booleans, and the `rw=` forms with
//! their `:N` offset modifier.

/// A size that may be a percentage of the device or a number of zones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Bytes(u64),
    Percent(f64),
    /// `8z`: whole zones of the device (fio's `size_nz`, `start_offset_nz`, ...).
    Zones(u64),
}

impl Size {
    /// Bytes, given the device's size and its zone size (0 when it has no zones).
    pub fn resolve(self, device_bytes: u64, zone_bytes: u64) -> u64 {
        match self {
            Size::Bytes(b) => b,
            Size::Percent(p) => (device_bytes as f64 * p / 100.0) as u64,
            Size::Zones(n) => n.saturating_mul(zone_bytes),
        }
    }
}

/// Parse a size the way fio does (`kb_base=1024`): `4k`, `128KiB`, `1m`, `2g`, `0x1000`,
/// `50%`, and `8z` (zones).
pub fn parse_size(v: &str) -> Option<Size> {
    let v = v.trim();
    if let Some(p) = v.strip_suffix('%') {
        let p: f64 = p.trim().parse().ok()?;
        return (p > 0.0 && p <= 100.0).then_some(Size::Percent(p));
    }
    let lower = v.to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(Size::Bytes);
    }
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (num, unit) = lower.split_at(digits_end);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "z" => return Some(Size::Zones(n)),
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => return None,
    };
    n.checked_mul(mult).map(Size::Bytes)
}

/// Parse a time; plain numbers are in `default_unit_ns` (seconds for runtime, microseconds
/// for thinktime, as in fio).
pub fn parse_time_unit(v: &str, default_unit_ns: u64) -> Option<u64> {
    let lower = v.trim().to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (num, unit) = lower.split_at(digits_end);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit {
        "" => default_unit_ns,
        "s" | "sec" => 1_000_000_000,
        "ms" | "msec" => 1_000_000,
        "us" | "usec" => 1_000,
        "ns" | "nsec" => 1,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// Parse a time; plain numbers are seconds (fio's default unit for runtime).
pub fn parse_time_ns(v: &str) -> Option<u64> {
    parse_time_unit(v, 1_000_000_000)
}

/// fio's booleans: a bare option is true; 0/1, true/false, yes/no, on/off.
pub fn bool_value(v: Option<&str>) -> Option<bool> {
    match v.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Some(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Some(false),
        _ => None,
    }
}

/// Which directions a job does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
    Trim,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Sequential,
    Random,
}

/// How a job mixes directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// Only `direction`.
    Single,
    /// rw / readwrite / randrw: reads and writes, `rwmixread` percent of them reads.
    ReadWrite,
    /// trimwrite / randtrimwrite: each block trimmed, then written.
    TrimWrite,
}

/// A parsed `rw=` value: direction, pattern, mix, and the `:N` modifier.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RwForm {
    pub direction: Direction,
    pub pattern: Pattern,
    pub mix: Mix,
    /// Sequential: bytes added after each I/O (negative: backwards). Random: I/Os per random
    /// offset (sequential in between).
    pub modifier: Option<i64>,
}

/// Parse `rw=` as fio does, `:N` included (`write:4k`, `read:-8k`, `randread:8`).
pub fn parse_rw(v: &str) -> Result<RwForm, String> {
    let (name, modifier) = match v.split_once(':') {
        Some((n, m)) => {
            let m = m.trim();
            let (neg, digits) = match m.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, m),
            };
            let n_bytes = match parse_size(digits) {
                Some(Size::Bytes(b)) if b <= i64::MAX as u64 => b as i64,
                _ => return Err(format!("'{m}' after ':' is not a size or count")),
            };
            (n.trim(), Some(if neg { -n_bytes } else { n_bytes }))
        }
        None => (v.trim(), None),
    };
    use Direction::*;
    use Mix::*;
    use Pattern::*;
    let (direction, pattern, mix) = match name {
        "read" => (Read, Sequential, Single),
        "write" => (Write, Sequential, Single),
        "trim" => (Trim, Sequential, Single),
        "randread" => (Read, Random, Single),
        "randwrite" => (Write, Random, Single),
        "randtrim" => (Trim, Random, Single),
        "rw" | "readwrite" => (Read, Sequential, ReadWrite),
        "randrw" => (Read, Random, ReadWrite),
        "trimwrite" => (Write, Sequential, TrimWrite),
        "randtrimwrite" => (Write, Random, TrimWrite),
        _ => {
            return Err(format!(
                "'{name}' is not one of read, write, trim, randread, randwrite, randtrim, rw, \
                 readwrite, randrw, trimwrite, randtrimwrite"
            ))
        }
    };
    if pattern == Random && modifier.is_some_and(|m| m <= 0) {
        return Err("the ':N' of a random pattern is a positive number of I/Os".into());
    }
    Ok(RwForm {
        direction,
        pattern,
        mix,
        modifier,
    })
}

/// `random_distribution=`: where random offsets fall.
#[derive(Clone, Debug, PartialEq)]
pub enum Distribution {
    Random,
    /// zipf:theta
    Zipf(f64),
    /// pareto:h
    Pareto(f64),
    /// normal:deviation (percent of the region)
    Normal(f64),
    /// zoned:access%/size%:...
    Zoned(Vec<(u32, u32)>),
    /// zoned_abs:access%/bytes:...
    ZonedAbs(Vec<(u32, u64)>),
}

/// Parse `random_distribution=` as fio's str_random_distribution_cb does.
pub fn parse_distribution(v: &str) -> Result<Distribution, String> {
    let (kind, rest) = v.split_once(':').unwrap_or((v, ""));
    let float = |s: &str| {
        s.trim()
            .parse::<f64>()
            .map_err(|_| format!("'{s}' is not a number"))
    };
    let one = |s: &str| -> Result<f64, String> {
        if s.contains(':') {
            return Err(format!("'{v}': a center (':center') is not supported yet"));
        }
        float(s)
    };
    match kind {
        "random" if rest.is_empty() => Ok(Distribution::Random),
        "zipf" => match one(rest)? {
            t if t > 0.0 && t != 1.0 => Ok(Distribution::Zipf(t)),
            _ => Err("zipf's theta must be above 0 and not 1".into()),
        },
        "pareto" => match one(rest)? {
            h if h > 0.0 && h < 1.0 => Ok(Distribution::Pareto(h)),
            _ => Err("pareto's h must be between 0 and 1".into()),
        },
        "normal" | "gauss" => match one(rest)? {
            d if (0.0..=100.0).contains(&d) => Ok(Distribution::Normal(d)),
            _ => Err("normal's deviation is a percentage (0-100)".into()),
        },
        "zoned" | "zoned_abs" => {
            let mut access_total = 0;
            let mut zoned = Vec::new();
            let mut abs = Vec::new();
            let parts: Vec<&str> = rest.split(':').filter(|p| !p.is_empty()).collect();
            for (i, part) in parts.iter().enumerate() {
                let (a, s) = part
                    .split_once('/')
                    .ok_or_else(|| format!("'{part}' is not access/size"))?;
                let a: u32 = a
                    .trim()
                    .parse()
                    .map_err(|_| format!("'{a}' is not a percentage"))?;
                access_total += a;
                if kind == "zoned" {
                    let used: u32 = zoned.iter().map(|(_, s)| s).sum();
                    let s: u32 = if s.trim().is_empty() && i + 1 == parts.len() {
                        100u32.saturating_sub(used)
                    } else {
                        s.trim()
                            .parse()
                            .map_err(|_| format!("'{s}' is not a percentage"))?
                    };
                    zoned.push((a, s));
                } else {
                    match parse_size(s) {
                        Some(Size::Bytes(b)) if b > 0 => abs.push((a, b)),
                        _ => return Err(format!("'{s}' is not a size")),
                    }
                }
            }
            if access_total != 100 || parts.is_empty() {
                return Err(format!(
                    "the access percentages of '{v}' add up to {access_total}, not 100"
                ));
            }
            if kind == "zoned" {
                if zoned.iter().map(|(_, s)| s).sum::<u32>() > 100 {
                    return Err(format!(
                        "the size percentages of '{v}' add up to more than 100"
                    ));
                }
                Ok(Distribution::Zoned(zoned))
            } else {
                Ok(Distribution::ZonedAbs(abs))
            }
        }
        _ => Err(format!(
            "'{v}' is not one of random, zipf:theta, pareto:h, normal:dev, zoned:..., zoned_abs:..."
        )),
    }
}

/// Substitute `${VAR}` with the environment's value (empty when unset), as fio's
/// `fio_option_dup_subs` does.
pub fn expand_env(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        match rest[i + 2..].find('}') {
            Some(j) if j > 0 => {
                out.push_str(&rest[..i]);
                let name = &rest[i + 2..i + 2 + j];
                out.push_str(&std::env::var(name).unwrap_or_default());
                rest = &rest[i + 3 + j..];
            }
            _ => break,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_times() {
        assert_eq!(parse_size("128k"), Some(Size::Bytes(128 << 10)));
        assert_eq!(parse_size("1MiB"), Some(Size::Bytes(1 << 20)));
        assert_eq!(parse_size("3g"), Some(Size::Bytes(3 << 30)));
        assert_eq!(parse_size("50%"), Some(Size::Percent(50.0)));
        assert_eq!(parse_size("524z"), Some(Size::Zones(524)));
        assert_eq!(parse_size("0x1000"), Some(Size::Bytes(4096)));
        assert_eq!(Size::Zones(8).resolve(1 << 40, 256 << 20), 2 << 30);
        assert_eq!(parse_size("12q"), None);
        assert_eq!(parse_time_ns("10"), Some(10_000_000_000));
        assert_eq!(parse_time_ns("500ms"), Some(500_000_000));
        assert_eq!(parse_time_unit("20", 1_000), Some(20_000));
        assert_eq!(parse_time_ns("soon"), None);
    }

    #[test]
    fn rw_forms() {
        let f = parse_rw("write:112k").expect("ok");
        assert_eq!(
            (f.direction, f.pattern, f.modifier),
            (Direction::Write, Pattern::Sequential, Some(112 << 10))
        );
        assert_eq!(parse_rw("read:-8k").expect("ok").modifier, Some(-8192));
        assert_eq!(parse_rw("randread:8").expect("ok").modifier, Some(8));
        assert_eq!(parse_rw("randrw").expect("ok").mix, Mix::ReadWrite);
        assert_eq!(parse_rw("trimwrite").expect("ok").mix, Mix::TrimWrite);
        assert_eq!(parse_rw("randtrim").expect("ok").direction, Direction::Trim);
        assert!(parse_rw("sideways").is_err());
        assert!(parse_rw("randread:-1").is_err());
    }

    #[test]
    fn distributions() {
        assert_eq!(parse_distribution("zipf:1.2"), Ok(Distribution::Zipf(1.2)));
        assert_eq!(
            parse_distribution("pareto:0.3"),
            Ok(Distribution::Pareto(0.3))
        );
        assert_eq!(
            parse_distribution("zoned:50/5:30/15:20/"),
            Ok(Distribution::Zoned(vec![(50, 5), (30, 15), (20, 80)]))
        );
        assert_eq!(
            parse_distribution("zoned_abs:60/20k:40/1m"),
            Ok(Distribution::ZonedAbs(vec![(60, 20 << 10), (40, 1 << 20)]))
        );
        assert!(parse_distribution("zoned:50/5:30/15").is_err());
        assert!(parse_distribution("zipf:1").is_err());
        assert!(parse_distribution("bimodal").is_err());
    }

    #[test]
    fn env_expansion() {
        std::env::set_var("ZNSLAB_TEST_FIO_BS", "8k");
        assert_eq!(expand_env("${ZNSLAB_TEST_FIO_BS}"), "8k");
        assert_eq!(expand_env("a${ZNSLAB_TEST_UNSET_VAR}b"), "ab");
        assert_eq!(expand_env("${"), "${");
    }
}
