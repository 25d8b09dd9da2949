//! Options whose value is a list: per-direction values (`read,write,trim`) as fio's parse.c
//! and str_split_parse split them, a direction's `bssplit`, and errno names for
//! `ignore_error`, and byte patterns (`buffer_pattern`).

use super::FioError;

/// A `read,write,trim` value of an integer option (fio's parse.c for options with three
/// offsets): one value is for all three; an empty part leaves that direction at its default;
/// a last value also applies to the directions after it unless a comma ends the list
/// (`bs=8k,32k` is 32k for writes and trims, `bs=8k,32k,` leaves trims alone).
pub(super) fn per_direction(v: &str) -> [Option<&str>; 3] {
    let parts: Vec<&str> = v.split(',').map(str::trim).take(3).collect();
    let mut out = [None; 3];
    for (dir, slot) in out.iter_mut().enumerate() {
        let part = match parts.get(dir) {
            Some(p) => *p,
            None => parts.last().copied().unwrap_or(""),
        };
        if !part.is_empty() {
            *slot = Some(part);
        }
    }
    out
}

/// The `read,write,trim` sets of a split option (fio's str_split_parse): one set is for all
/// three; with two, the second is for writes and trims; an empty set sets nothing.
pub(super) fn split_per_direction(v: &str) -> [Option<&str>; 3] {
    let parts: Vec<&str> = v.splitn(3, ',').map(str::trim).collect();
    let pick = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    match parts.len() {
        1 => [pick(0), pick(0), pick(0)],
        2 => [pick(0), pick(1), pick(1)],
        _ => [pick(0), pick(1), pick(2)],
    }
}

/// One direction's `bssplit` set: `size/percent:size/percent...`, sizes without a
/// percentage sharing what the others leave (as fio's bssplit_ddir).
pub(super) fn parse_bssplit(
    set: &str,
    whole: &str,
    bad: &dyn Fn(&str, &str) -> FioError,
    bytes: &dyn Fn(&str) -> Result<u64, FioError>,
    percent: &dyn Fn(&str) -> Result<u32, FioError>,
) -> Result<Vec<(u64, u32)>, FioError> {
    let mut split = Vec::new();
    let mut unset = 0;
    for part in set.split(':') {
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
        return Err(bad(whole, "block sizes whose percentages add up to 100"));
    }
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
    Ok(split)
}

/// An errno by name (fio's str2error: E2BIG ... ) or number (decimal or 0x hex).
pub(super) fn errno_named(name: &str) -> Option<i32> {
    if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        return i32::from_str_radix(hex, 16)
            .ok()
            .filter(|e| *e != 0)
            .map(i32::abs);
    }
    if let Ok(n) = name.parse::<i32>() {
        return (n != 0).then_some(n.abs());
    }
    // fio's str2error table (options.c): Linux's errno names, the errno being the place
    // in the list plus one, EWOULDBLOCK and EDEADLOCK standing for EAGAIN and EDEADLK.
    const NAMES: &[&str] = &[
        "EPERM",
        "ENOENT",
        "ESRCH",
        "EINTR",
        "EIO",
        "ENXIO",
        "E2BIG",
        "ENOEXEC",
        "EBADF",
        "ECHILD",
        "EAGAIN",
        "ENOMEM",
        "EACCES",
        "EFAULT",
        "ENOTBLK",
        "EBUSY",
        "EEXIST",
        "EXDEV",
        "ENODEV",
        "ENOTDIR",
        "EISDIR",
        "EINVAL",
        "ENFILE",
        "EMFILE",
        "ENOTTY",
        "ETXTBSY",
        "EFBIG",
        "ENOSPC",
        "ESPIPE",
        "EROFS",
        "EMLINK",
        "EPIPE",
        "EDOM",
        "ERANGE",
        "EDEADLK",
        "ENAMETOOLONG",
        "ENOLCK",
        "ENOSYS",
        "ENOTEMPTY",
        "ELOOP",
        "EWOULDBLOCK",
        "ENOMSG",
        "EIDRM",
        "ECHRNG",
        "EL2NSYNC",
        "EL3HLT",
        "EL3RST",
        "ELNRNG",
        "EUNATCH",
        "ENOCSI",
        "EL2HLT",
        "EBADE",
        "EBADR",
        "EXFULL",
        "ENOANO",
        "EBADRQC",
        "EBADSLT",
        "EDEADLOCK",
        "EBFONT",
        "ENOSTR",
        "ENODATA",
        "ETIME",
        "ENOSR",
        "ENONET",
        "ENOPKG",
        "EREMOTE",
        "ENOLINK",
        "EADV",
        "ESRMNT",
        "ECOMM",
        "EPROTO",
        "EMULTIHOP",
        "EDOTDOT",
        "EBADMSG",
        "EOVERFLOW",
        "ENOTUNIQ",
        "EBADFD",
        "EREMCHG",
        "ELIBACC",
        "ELIBBAD",
        "ELIBSCN",
        "ELIBMAX",
        "ELIBEXEC",
        "EILSEQ",
        "ERESTART",
        "ESTRPIPE",
        "EUSERS",
        "ENOTSOCK",
        "EDESTADDRREQ",
        "EMSGSIZE",
        "EPROTOTYPE",
        "ENOPROTOOPT",
        "EPROTONOSUPPORT",
        "ESOCKTNOSUPPORT",
        "EOPNOTSUPP",
        "EPFNOSUPPORT",
        "EAFNOSUPPORT",
        "EADDRINUSE",
        "EADDRNOTAVAIL",
        "ENETDOWN",
        "ENETUNREACH",
        "ENETRESET",
        "ECONNABORTED",
        "ECONNRESET",
        "ENOBUFS",
        "EISCONN",
        "ENOTCONN",
        "ESHUTDOWN",
        "ETOOMANYREFS",
        "ETIMEDOUT",
        "ECONNREFUSED",
        "EHOSTDOWN",
        "EHOSTUNREACH",
        "EALREADY",
        "EINPROGRESS",
        "ESTALE",
        "EUCLEAN",
        "ENOTNAM",
        "ENAVAIL",
        "EISNAM",
        "EREMOTEIO",
        "EDQUOT",
        "ENOMEDIUM",
        "EMEDIUMTYPE",
        "ECANCELED",
        "ENOKEY",
        "EKEYEXPIRED",
        "EKEYREVOKED",
        "EKEYREJECTED",
        "EOWNERDEAD",
        "ENOTRECOVERABLE",
        "ERFKILL",
        "EHWPOISON",
    ];
    match name {
        "EWOULDBLOCK" => return Some(11),
        "EDEADLOCK" => return Some(35),
        _ => {}
    }
    NAMES.iter().position(|n| *n == name).map(|i| i as i32 + 1)
}

/// Bytes a pattern gives at most (fio's MAX_PATTERN_SIZE is 128 MiB; the pool repeats it).
const MAX_PATTERN_BYTES: usize = 1 << 20;

/// A byte pattern as fio's parse_and_fill_pattern reads it: `0x` hex bytes (any length, an
/// odd first digit alone), decimal integers in [INT_MIN, INT_MAX] as their little-endian
/// bytes (0 as one zero byte), `"strings"` and `'files'` (their first MiB), back to back.
pub(super) fn parse_pattern(v: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = v;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('"') {
            let end = r
                .find('"')
                .ok_or_else(|| format!("'{v}': a string without its closing \""))?;
            out.extend_from_slice(&r.as_bytes()[..end]);
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix('\'') {
            let end = r
                .find('\'')
                .ok_or_else(|| format!("'{v}': a file name without its closing '"))?;
            let name = &r[..end];
            let bytes = std::fs::read(name).map_err(|e| format!("pattern file '{name}': {e}"))?;
            out.extend_from_slice(&bytes[..bytes.len().min(MAX_PATTERN_BYTES)]);
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let mut digits = r.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(r.len());
            // fio's look-back: in 0xff0x14 the second 0x starts a new number.
            if digits < r.len()
                && digits > 0
                && r[digits - 1..].to_ascii_lowercase().starts_with("0x")
            {
                digits -= 1;
            }
            if digits == 0 {
                return Err(format!("'{v}': 0x without hex digits"));
            }
            let hex = &r[..digits];
            let (first, pairs) = hex.split_at(digits % 2);
            if !first.is_empty() {
                out.push(u8::from_str_radix(first, 16).map_err(|e| e.to_string())?);
            }
            for i in (0..pairs.len()).step_by(2) {
                out.push(u8::from_str_radix(&pairs[i..i + 2], 16).map_err(|e| e.to_string())?);
            }
            rest = &r[digits..];
        } else {
            let end = rest
                .char_indices()
                .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
                .map_or(rest.len(), |(i, _)| i);
            let n: i64 = rest[..end]
                .parse()
                .map_err(|_| format!("'{v}': '{rest}' is not a number, \"string\" or 'file'"))?;
            if n < i32::MIN as i64 || n > i32::MAX as i64 {
                return Err(format!("'{v}': {n} is outside [INT_MIN, INT_MAX]"));
            }
            let mut val = n as i32 as u32;
            if val == 0 {
                out.push(0);
            }
            while val != 0 {
                out.push(val as u8);
                val >>= 8;
            }
            rest = &rest[end..];
        }
        if out.len() > MAX_PATTERN_BYTES {
            return Err(format!(
                "'{v}': a pattern of more than {MAX_PATTERN_BYTES} bytes"
            ));
        }
    }
    if out.is_empty() {
        return Err(format!("'{v}': an empty pattern"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_pattern;

    #[test]
    fn patterns_as_fio_parses_them() {
        assert_eq!(
            parse_pattern("0xdeadface").unwrap(),
            [0xde, 0xad, 0xfa, 0xce]
        );
        assert_eq!(parse_pattern("0xabc").unwrap(), [0x0a, 0xbc]);
        assert_eq!(parse_pattern("-12").unwrap(), [0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(parse_pattern("0").unwrap(), [0]);
        assert_eq!(parse_pattern("258").unwrap(), [2, 1]);
        assert_eq!(parse_pattern("\"abcd\"").unwrap(), b"abcd");
        assert_eq!(
            parse_pattern("0xdeadface\"ab\"-12").unwrap(),
            [0xde, 0xad, 0xfa, 0xce, b'a', b'b', 0xf4, 0xff, 0xff, 0xff]
        );
        assert_eq!(parse_pattern("0xff0x14").unwrap(), [0xff, 0x14]);
        assert!(parse_pattern("\"open").is_err());
        assert!(parse_pattern("zz").is_err());
        assert!(parse_pattern("99999999999").is_err());
    }
}
