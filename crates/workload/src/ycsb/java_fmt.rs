//! Numbers as YCSB's Java prints them: Double.toString, DecimalFormat("#.##"), the
//! percentile ordinals of OneMeasurementHdrHistogram, and the values exporters write.

/// A value as an exporter writes it: Java ints and longs plainly, doubles as Double.toString.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Double(f64),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Double(d) => f.write_str(&java_double(*d)),
        }
    }
}

/// Java's Double.toString.
pub fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let a = d.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{d}");
        if s.contains('.') {
            s
        } else {
            s + ".0"
        }
    } else {
        let s = format!("{d:e}");
        let (m, e) = s.split_once('e').expect("exponent");
        let m = if m.contains('.') {
            m.to_string()
        } else {
            format!("{m}.0")
        };
        format!("{m}E{e}")
    }
}

/// Java's DecimalFormat("#.##").
pub fn dec2(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞" } else { "-∞" }.into();
    }
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "-0".into()
    } else {
        s.to_string()
    }
}

/// OneMeasurementHdrHistogram.ordinal: 95 -> "95th", 99.9 -> "99.9".
pub fn ordinal(p: f64) -> String {
    if p % 1.0 == 0.0 {
        let j = p as i64;
        let suffix = match j % 100 {
            11..=13 => "th",
            _ => ["th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"][(j % 10) as usize],
        };
        format!("{j}{suffix}")
    } else {
        java_double(p)
    }
}
