//! fio's number and time formatting: `num2str` (lib/num2str.c), `ctime`, and the bucket
//! scheme of fio's latency histograms (stat.c `plat_val_to_idx`/`plat_idx_to_val`).

use report::LatencyHistogram;

/// What fio's `num2str` appends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    None,
    Byte,
    BytePerSec,
}

/// fio's `num2str(num, maxlen, base = 1, pow2, units)`, carry rounding and all.
pub fn num2str(num: u64, maxlen: usize, pow2: bool, unit: Unit) -> String {
    num2str_base(num, maxlen, 0, pow2, unit)
}

/// fio's `num2str` with a `base` of 1024^`base_steps` (a number already in KiB: 1), which
/// starts the prefix that many steps up whatever `pow2` says, as fio does.
pub fn num2str_base(
    mut num: u64,
    maxlen: usize,
    base_steps: usize,
    pow2: bool,
    unit: Unit,
) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefix = if pow2 { &IEC } else { &SI };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let unit_s = match unit {
        Unit::None => "",
        Unit::Byte => "B",
        Unit::BytePerSec => "B/s",
    };
    let mut post = base_steps;
    let mut modulo: Option<u64> = None;
    let mut carry = false;
    while post < prefix.len() {
        if num.to_string().len() <= maxlen {
            break;
        }
        let m = num % thousand;
        modulo = Some(m);
        num /= thousand;
        carry = m >= thousand / 2;
        post += 1;
    }
    if post >= prefix.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit_s}", prefix[post]);
    };
    let len = num.to_string().len();
    if maxlen as i64 - len as i64 <= 1 {
        if carry {
            num += 1;
        }
        return format!("{num}{}{unit_s}", prefix[post]);
    }
    let prec = maxlen - len - 1;
    let tmp = format!("{:.*}", prec, m as f64 / thousand as f64);
    if tmp.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit_s}", &tmp[2..], prefix[post])
}

/// `ctime` of a Unix time, in UTC: "Thu Nov 26 17:10:55 2026".
pub fn ctime(unix_s: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let (y, m, d) = report::civil_from_days(days);
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {y}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// fio's FIO_IO_U_PLAT_BITS, FIO_IO_U_PLAT_VAL and FIO_IO_U_PLAT_NR (stat.h).
const PLAT_BITS: u32 = 6;
const PLAT_VAL: u64 = 1 << PLAT_BITS;
const PLAT_NR: u64 = 29 * PLAT_VAL;

/// stat.c `plat_val_to_idx`: the bucket of a latency in ns.
pub fn plat_val_to_idx(val: u64) -> u64 {
    let msb = if val == 0 {
        0
    } else {
        63 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val;
    }
    let error_bits = msb - PLAT_BITS;
    let base = u64::from(error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

/// stat.c `plat_idx_to_val`: the value fio reports for a bucket (its middle).
pub fn plat_idx_to_val(idx: u64) -> u64 {
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u64 << (error_bits + u64::from(PLAT_BITS));
    let k = idx % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// fio's histogram of a latency histogram: (bucket value, count) of every non-empty bucket,
/// in increasing order, as json+ prints them under `bins`.
pub fn fio_bins(h: &LatencyHistogram) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (lo, _hi, n) in h.buckets() {
        let v = plat_idx_to_val(plat_val_to_idx(lo));
        match out.last_mut() {
            Some((last, c)) if *last == v => *c += n,
            _ => out.push((v, n)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn num2str_as_fio_prints() {
        // From fio 3.33's own output.
        assert_eq!(num2str(16 << 20, 4, true, Unit::Byte), "16.0MiB");
        assert_eq!(num2str(4096, 4, true, Unit::Byte), "4096B");
        assert_eq!(num2str(131072, 4, true, Unit::Byte), "128KiB");
        assert_eq!(num2str(26800, 4, false, Unit::None), "26.8k");
        assert_eq!(num2str(18300837, 6, false, Unit::None), "18301k");
        assert_eq!(num2str(727889, 6, false, Unit::None), "727889");
        assert_eq!(num2str(109_656_000, 4, true, Unit::BytePerSec), "105MiB/s");
        assert_eq!(num2str(109_656_000, 4, false, Unit::BytePerSec), "110MB/s");
    }

    #[test]
    fn ctime_utc() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_795_713_055), "Thu Nov 26 17:10:55 2026");
    }

    #[test]
    fn plat_buckets_round_trip() {
        // Values below 128 are their own bucket; above, 64 buckets per power of two.
        assert_eq!(plat_val_to_idx(100), 100);
        assert_eq!(plat_idx_to_val(100), 100);
        assert_eq!(plat_val_to_idx(1400), 5 * 64 + (1400 >> 4) % 64);
        // fio 3.33 printed a bin "1400" for a 1404 ns completion, "5152" for ~5.1 us.
        assert_eq!(plat_idx_to_val(plat_val_to_idx(1404)), 1400);
        assert_eq!(plat_idx_to_val(plat_val_to_idx(5150)), 5152);
        assert_eq!(plat_val_to_idx(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn every_bin_of_real_fio_json_plus_is_a_bucket_value() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/fio-output/fio-3.33-randrw.jsonplus.json"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("sample")).expect("json");
        let mut n = 0;
        for dir in ["read", "write"] {
            let bins = v["jobs"][0][dir]["clat_ns"]["bins"]
                .as_object()
                .expect("bins");
            for k in bins.keys() {
                let k: u64 = k.parse().expect("ns");
                assert_eq!(plat_idx_to_val(plat_val_to_idx(k)), k);
                n += 1;
            }
        }
        assert!(n > 100, "{n}");
    }
}
