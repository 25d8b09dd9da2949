//! YCSB's measurements and what it prints of them: the measurement types (`hdrhistogram`,
//! `histogram`, `timeseries`), their `[OP], Metric, value` lines, the Text, JSON and JSONArray
//! exporters, the `[OVERALL]` and GC lines of Client.exportMeasurements, and the status lines
//! of StatusThread (`-s`), all on the virtual clock. Latencies are recorded in nanoseconds and
//! shown as YCSB shows its microseconds: whole, truncated.

pub use super::java_fmt::{dec2, java_double, ordinal, Value};

use std::collections::BTreeMap;

use report::LatencyHistogram;

/// `measurementtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeasurementType {
    HdrHistogram,
    Histogram,
    TimeSeries,
}

/// `exporter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exporter {
    Text,
    Json,
    JsonArray,
}

/// YCSB's measurement and export properties.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureConfig {
    pub kind: MeasurementType,
    /// `hdrhistogram.percentiles` (YCSB's default "50,95,99").
    pub percentiles: Vec<f64>,
    /// `histogram.buckets` (1000): 1 ms buckets of the histogram type.
    pub buckets: usize,
    /// `measurement.histogram.verbose`: the histogram type prints every bucket.
    pub verbose: bool,
    /// `timeseries.granularity` in ms (1000).
    pub granularity: u64,
    pub exporter: Exporter,
    /// `exportfile`: where the measurements go instead of stdout.
    pub exportfile: Option<String>,
    /// `reportlatencyforeacherror`, `latencytrackederrors`: a failed operation's latency goes to
    /// `OP-STATUS` instead of `OP-FAILED`.
    pub each_error: bool,
    pub tracked_errors: Vec<String>,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            kind: MeasurementType::HdrHistogram,
            percentiles: vec![50.0, 95.0, 99.0],
            buckets: 1000,
            verbose: false,
            granularity: 1000,
            exporter: Exporter::Text,
            exportfile: None,
            each_error: false,
            tracked_errors: Vec::new(),
        }
    }
}

/// Histogram buckets a measurement may have (each op name holds this many counters).
pub const MAX_BUCKETS: usize = 10_000_000;

impl MeasureConfig {
    /// Apply one of YCSB's measurement properties; the error says why the value is refused.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let v = value.trim();
        let boolean = || Ok::<bool, String>(v.eq_ignore_ascii_case("true"));
        match name {
            "measurementtype" => {
                self.kind = match v {
                    "hdrhistogram" => MeasurementType::HdrHistogram,
                    "histogram" => MeasurementType::Histogram,
                    "timeseries" => MeasurementType::TimeSeries,
                    "hdrhistogram+histogram" | "hdrhistogram+raw" | "raw" => {
                        return Err(format!(
                            "{v:?}: not supported (znslab prints hdrhistogram, histogram or \
                             timeseries)"
                        ))
                    }
                    _ => return Err(format!("unknown measurementtype={v}")),
                }
            }
            "measurement.interval" => match v {
                "op" => {}
                "intended" | "both" => {
                    return Err(format!(
                        "{v:?}: not supported (znslab measures from each operation's start: op)"
                    ))
                }
                _ => return Err(format!("unknown measurement.interval={v}")),
            },
            "measurement.histogram.verbose" => self.verbose = boolean()?,
            "hdrhistogram.percentiles" => {
                let mut ps = Vec::new();
                for p in v.split(',') {
                    let x: f64 = p
                        .trim()
                        .parse()
                        .map_err(|_| format!("{p:?} is not a percentile"))?;
                    if !(0.0..=100.0).contains(&x) {
                        return Err(format!("{p}: use percentiles from 0 to 100"));
                    }
                    ps.push(x);
                }
                if ps.len() > 100 {
                    return Err("more than 100 percentiles".into());
                }
                self.percentiles = ps;
            }
            "hdrhistogram.fileoutput" => {
                if boolean()? {
                    return Err(
                        "true: not supported (znslab writes no HdrHistogram log files)".into(),
                    );
                }
            }
            "histogram.buckets" => {
                let b: usize = v
                    .parse()
                    .ok()
                    .filter(|&b| (1..=MAX_BUCKETS).contains(&b))
                    .ok_or_else(|| format!("use 1 to {MAX_BUCKETS} buckets"))?;
                self.buckets = b;
            }
            "timeseries.granularity" => {
                self.granularity = v
                    .parse()
                    .ok()
                    .filter(|&g: &u64| (1..=i32::MAX as u64).contains(&g))
                    .ok_or("use 1 to 2147483647 ms")?
            }
            "exporter" => {
                self.exporter = match v {
                    "site.ycsb.measurements.exporter.TextMeasurementsExporter" => Exporter::Text,
                    "site.ycsb.measurements.exporter.JSONMeasurementsExporter" => Exporter::Json,
                    "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter" => {
                        Exporter::JsonArray
                    }
                    _ => {
                        return Err(
                            "use site.ycsb.measurements.exporter.TextMeasurementsExporter, \
                             JSONMeasurementsExporter or JSONArrayMeasurementsExporter"
                                .into(),
                        )
                    }
                }
            }
            "exportfile" => self.exportfile = Some(v.to_string()),
            "reportlatencyforeacherror" => self.each_error = boolean()?,
            "latencytrackederrors" => {
                self.tracked_errors = v.split(',').map(str::to_string).collect()
            }
            _ => return Err("unknown property".into()),
        }
        Ok(())
    }

    /// What YCSB can print that znslab cannot reproduce.
    pub fn check(&self) -> Result<(), String> {
        if self.verbose && self.kind != MeasurementType::Histogram {
            return Err(
                "measurement.histogram.verbose=true: supported with measurementtype=histogram \
                 only (the HdrHistogram's recorded values are not reproduced)"
                    .into(),
            );
        }
        Ok(())
    }

    /// DBWrapper's name for a failed operation's latency.
    pub fn failed_name(&self, op: &str, status: &str) -> String {
        if self.each_error || self.tracked_errors.iter().any(|e| e == status) {
            format!("{op}-{status}")
        } else {
            format!("{op}-FAILED")
        }
    }
}

/// Whole microseconds, as YCSB's `(int) (ns / 1000)`.
fn us(ns: u64) -> u64 {
    ns / 1000
}

/// One of YCSB's OneMeasurement objects (the type chosen by `measurementtype`).
#[derive(Clone, Debug, Default)]
pub struct Measurement {
    pub name: String,
    /// Every latency (ns) for the hdrhistogram type and the status lines.
    pub hist: LatencyHistogram,
    /// Since the last status line.
    window: LatencyHistogram,
    window_us: (u64, u64),
    /// Histogram type: 1 ms buckets of whole µs, and its sums.
    buckets: Vec<u64>,
    overflow: u64,
    total_us: u64,
    squares_us: f64,
    min_us: Option<u64>,
    max_us: Option<u64>,
    /// Timeseries type: (unit start ms, mean µs) per `granularity` ms since the first value.
    series: Vec<(u64, f64)>,
    series_start_ms: Option<u64>,
    unit: u64,
    unit_sum: u64,
    unit_count: u64,
    /// Return=STATUS counts in the order YCSB's map would print them.
    returns: Vec<(&'static str, u64)>,
}

/// Java's String.hashCode.
fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32))
}

/// The order a Java concurrent hash map of `n` keys iterates them: by bucket of the spread
/// hash, keys of one bucket in insertion order.
fn java_map_order(hashes: &[i32]) -> Vec<usize> {
    let mut table = 16usize;
    while hashes.len() > table * 3 / 4 {
        table *= 2;
    }
    let mut idx: Vec<usize> = (0..hashes.len()).collect();
    idx.sort_by_key(|&i| {
        let h = hashes[i];
        let spread = (h ^ ((h as u32) >> 16) as i32) & 0x7fff_ffff;
        (spread as usize & (table - 1), i)
    });
    idx
}

/// Status.hashCode for the statuses znslab reports.
fn status_hash(name: &str) -> i32 {
    let description = match name {
        "OK" => "The operation completed successfully.",
        "NOT_FOUND" => "The requested record was not found.",
        _ => "The operation failed.",
    };
    let mut r: i32 = 1;
    r = r.wrapping_mul(31).wrapping_add(java_hash(description));
    r = r.wrapping_mul(31).wrapping_add(java_hash(name));
    r
}

impl Measurement {
    fn record(&mut self, cfg: &MeasureConfig, ns: u64, now_ms: u64, status: bool) {
        let u = us(ns);
        match cfg.kind {
            MeasurementType::HdrHistogram => {
                self.hist.record(ns);
                self.total_us += u;
                if status {
                    self.window.record(ns);
                }
            }
            MeasurementType::Histogram => {
                if self.buckets.is_empty() {
                    self.buckets = vec![0; cfg.buckets];
                }
                match self.buckets.get_mut((u / 1000) as usize) {
                    Some(b) => *b += 1,
                    None => self.overflow += 1,
                }
                self.hist.record(ns);
                self.total_us += u;
                self.squares_us += (u as f64) * (u as f64);
                self.min_us = Some(self.min_us.map_or(u, |m| m.min(u)));
                self.max_us = Some(self.max_us.map_or(u, |m| m.max(u)));
            }
            MeasurementType::TimeSeries => {
                let start = *self.series_start_ms.get_or_insert(now_ms);
                let unit = (now_ms - start) / cfg.granularity * cfg.granularity;
                if unit > self.unit {
                    self.end_unit();
                    self.unit = unit;
                }
                self.unit_sum += u;
                self.unit_count += 1;
                self.hist.record(ns);
                self.total_us += u;
                self.min_us = Some(self.min_us.map_or(u, |m| m.min(u)));
                self.max_us = Some(self.max_us.map_or(u, |m| m.max(u)));
            }
        }
        self.window_us.0 += 1;
        self.window_us.1 += u;
    }

    fn end_unit(&mut self) {
        self.series
            .push((self.unit, self.unit_sum as f64 / self.unit_count as f64));
        self.unit_sum = 0;
        self.unit_count = 0;
    }

    fn report_status(&mut self, status: &'static str) {
        match self.returns.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => self.returns.push((status, 1)),
        }
    }

    fn export(&self, cfg: &MeasureConfig, out: &mut Vec<(String, String, Value)>) {
        let name = &self.name;
        let mut w = |m: String, v: Value| out.push((name.clone(), m, v));
        let h = &self.hist;
        match cfg.kind {
            MeasurementType::HdrHistogram => {
                w("Operations".into(), Value::Int(h.count() as i64));
                // The mean of the whole microseconds recorded, as YCSB's histogram of them.
                w(
                    "AverageLatency(us)".into(),
                    Value::Double(if h.count() == 0 {
                        0.0
                    } else {
                        self.total_us as f64 / h.count() as f64
                    }),
                );
                w("MinLatency(us)".into(), Value::Int(us(h.min()) as i64));
                w("MaxLatency(us)".into(), Value::Int(us(h.max()) as i64));
                for &p in &cfg.percentiles {
                    w(
                        format!("{}PercentileLatency(us)", ordinal(p)),
                        Value::Int(us(h.percentile(p)) as i64),
                    );
                }
            }
            MeasurementType::Histogram => {
                let ops = h.count();
                let mean = self.total_us as f64 / ops as f64;
                w("Operations".into(), Value::Int(ops as i64));
                w("AverageLatency(us)".into(), Value::Double(mean));
                w(
                    "LatencyVariance(us)".into(),
                    Value::Double(self.squares_us / ops as f64 - mean * mean),
                );
                w(
                    "MinLatency(us)".into(),
                    Value::Int(self.min_us.map_or(-1, |m| m as i64)),
                );
                w(
                    "MaxLatency(us)".into(),
                    Value::Int(self.max_us.map_or(-1, |m| m as i64)),
                );
                let mut seen = 0u64;
                let mut done95 = false;
                for (i, b) in self.buckets.iter().enumerate() {
                    seen += b;
                    let f = seen as f64 / ops as f64;
                    if !done95 && f >= 0.95 {
                        w(
                            "95thPercentileLatency(us)".into(),
                            Value::Int(i as i64 * 1000),
                        );
                        done95 = true;
                    }
                    if f >= 0.99 {
                        w(
                            "99thPercentileLatency(us)".into(),
                            Value::Int(i as i64 * 1000),
                        );
                        break;
                    }
                }
            }
            MeasurementType::TimeSeries => {
                w("Operations".into(), Value::Int(h.count() as i64));
                w(
                    "AverageLatency(us)".into(),
                    Value::Double(self.total_us as f64 / h.count() as f64),
                );
                w(
                    "MinLatency(us)".into(),
                    Value::Int(self.min_us.map_or(-1, |m| m as i64)),
                );
                w(
                    "MaxLatency(us)".into(),
                    Value::Int(self.max_us.map_or(-1, |m| m as i64)),
                );
            }
        }
        let hashes: Vec<i32> = self.returns.iter().map(|(s, _)| status_hash(s)).collect();
        for i in java_map_order(&hashes) {
            let (s, n) = self.returns[i];
            w(format!("Return={s}"), Value::Int(n as i64));
        }
        match cfg.kind {
            MeasurementType::Histogram if cfg.verbose => {
                for (i, b) in self.buckets.iter().enumerate() {
                    w(i.to_string(), Value::Int(*b as i64));
                }
                if self.buckets.is_empty() {
                    for i in 0..cfg.buckets {
                        w(i.to_string(), Value::Int(0));
                    }
                }
                w(
                    format!(">{}", cfg.buckets),
                    Value::Int(self.overflow as i64),
                );
            }
            MeasurementType::TimeSeries => {
                // checkEndOfUnit(true): the unit in progress ends (an empty one's mean is NaN).
                let mut series = self.series.clone();
                series.push((self.unit, self.unit_sum as f64 / self.unit_count as f64));
                for (t, avg) in series {
                    w(t.to_string(), Value::Double(avg));
                }
            }
            _ => {}
        }
    }

    /// OneMeasurement.getSummary for a status line (and start the next interval).
    fn summary(&mut self, cfg: &MeasureConfig) -> String {
        let s = match cfg.kind {
            MeasurementType::HdrHistogram => {
                let h = &self.window;
                format!(
                    "[{}: Count={}, Max={}, Min={}, Avg={}, 50={}, 90={}, 99={}, 99.9={}, 99.99={}]",
                    self.name,
                    h.count(),
                    us(h.max()),
                    us(h.min()),
                    dec2(if self.window_us.0 == 0 {
                        0.0
                    } else {
                        self.window_us.1 as f64 / self.window_us.0 as f64
                    }),
                    dec2(us(h.percentile(50.0)) as f64),
                    dec2(us(h.percentile(90.0)) as f64),
                    dec2(us(h.percentile(99.0)) as f64),
                    dec2(us(h.percentile(99.9)) as f64),
                    dec2(us(h.percentile(99.99)) as f64),
                )
            }
            _ if self.window_us.0 == 0 => String::new(),
            _ => format!(
                "[{} AverageLatency(us)={}]",
                self.name,
                dec2(self.window_us.1 as f64 / self.window_us.0 as f64)
            ),
        };
        self.window = LatencyHistogram::default();
        self.window_us = (0, 0);
        s
    }
}

/// YCSB's Measurements: one measurement per name, in the order the names came.
#[derive(Clone, Debug, Default)]
pub struct Measurements {
    pub cfg: MeasureConfig,
    list: Vec<Measurement>,
    index: BTreeMap<String, usize>,
    /// Keep interval histograms for status lines.
    pub status: bool,
}

impl Measurements {
    pub fn new(cfg: MeasureConfig, status: bool) -> Self {
        Measurements {
            cfg,
            status,
            ..Default::default()
        }
    }

    fn get(&mut self, name: &str) -> &mut Measurement {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                self.list.push(Measurement {
                    name: name.to_string(),
                    ..Default::default()
                });
                self.index.insert(name.to_string(), self.list.len() - 1);
                self.list.len() - 1
            }
        };
        &mut self.list[i]
    }

    /// Measurements.measure: a latency of `ns` that ended `now_ms` into the phase.
    pub fn measure(&mut self, name: &str, ns: u64, now_ms: u64) {
        let (cfg, status) = (self.cfg.clone(), self.status);
        self.get(name).record(&cfg, ns, now_ms, status);
    }

    /// Measurements.reportStatus.
    pub fn report_status(&mut self, name: &str, status: &'static str) {
        self.get(name).report_status(status);
    }

    /// The measurement of `name`, if anything was measured under it.
    pub fn measurement(&self, name: &str) -> Option<&Measurement> {
        self.index.get(name).map(|&i| &self.list[i])
    }

    /// Measurements.getSummary: every measurement's summary followed by a space.
    pub fn summary(&mut self) -> String {
        let cfg = self.cfg.clone();
        let order = self.order();
        let mut s = String::new();
        for i in order {
            s.push_str(&self.list[i].summary(&cfg));
            s.push(' ');
        }
        s
    }

    fn order(&self) -> Vec<usize> {
        let hashes: Vec<i32> = self.list.iter().map(|m| java_hash(&m.name)).collect();
        java_map_order(&hashes)
    }

    /// Client.exportMeasurements: `[OVERALL]`, the GC lines (zeros: there is no JVM), then
    /// every measurement, as (metric, measurement, value).
    pub fn export(&self, runtime_ms: u64, ops: u64) -> Vec<(String, String, Value)> {
        let mut out = Vec::new();
        let mut w = |a: &str, b: &str, v: Value| out.push((a.to_string(), b.to_string(), v));
        w("OVERALL", "RunTime(ms)", Value::Int(runtime_ms as i64));
        w(
            "OVERALL",
            "Throughput(ops/sec)",
            Value::Double(1000.0 * ops as f64 / runtime_ms as f64),
        );
        w("TOTAL_GCs", "Count", Value::Int(0));
        w("TOTAL_GC_TIME", "Time(ms)", Value::Int(0));
        w(
            "TOTAL_GC_TIME_%",
            "Time(%)",
            Value::Double(0.0 / runtime_ms as f64 * 100.0),
        );
        for i in self.order() {
            self.list[i].export(&self.cfg, &mut out);
        }
        out
    }
}

/// The exporter's text of `lines`.
pub fn render(exporter: Exporter, lines: &[(String, String, Value)]) -> String {
    let json_str = |s: &str| serde_json::to_string(s).expect("a string");
    let object = |(m, n, v): &(String, String, Value)| {
        // Jackson quotes NaN and Infinity (QUOTE_NON_NUMERIC_NUMBERS, on by default).
        let v = match v {
            Value::Double(d) if !d.is_finite() => format!("\"{v}\""),
            _ => v.to_string(),
        };
        format!(
            "{{\n  \"metric\" : {},\n  \"measurement\" : {},\n  \"value\" : {v}\n}}",
            json_str(m),
            json_str(n)
        )
    };
    match exporter {
        Exporter::Text => lines
            .iter()
            .map(|(m, n, v)| format!("[{m}], {n}, {v}\n"))
            .collect(),
        Exporter::JsonArray if lines.is_empty() => "[ ]".into(),
        Exporter::JsonArray => format!(
            "[ {} ]",
            lines.iter().map(object).collect::<Vec<_>>().join(", ")
        ),
        Exporter::Json => lines.iter().map(object).collect::<Vec<_>>().join(" "),
    }
}

/// StatusThread's RemainingFormatter.format.
pub fn remaining(mut seconds: i64) -> String {
    let mut t = String::new();
    let days = seconds / 86_400;
    if days > 0 {
        t += &format!("{days}{}", if days == 1 { " day " } else { " days " });
        seconds -= days * 86_400;
    }
    let hours = seconds / 3600;
    if hours > 0 {
        t += &format!("{hours}{}", if hours == 1 { " hour " } else { " hours " });
        seconds -= hours * 3600;
    }
    if days < 1 {
        let minutes = seconds / 60;
        if minutes > 0 {
            t += &format!(
                "{minutes}{}",
                if minutes == 1 {
                    " minute "
                } else {
                    " minutes "
                }
            );
            // YCSB subtracts minutes-of-seconds here; the seconds are not shown after minutes.
        }
    }
    if t.is_empty() {
        t = seconds.to_string();
        t += if t.len() == 1 {
            " second "
        } else {
            " seconds "
        };
    }
    t
}

/// One StatusThread line: `LABELyyyy-MM-dd HH:mm:ss:SSS N sec: M operations; ...`. The date
/// is the virtual clock counted from the Unix epoch (UTC), so that a seed gives one output.
#[allow(clippy::too_many_arguments)]
pub fn status_line(
    label: &str,
    clock_ms: u64,
    now_ms: u64,
    totalops: u64,
    todoops: u64,
    last_ops: u64,
    interval_start_ms: u64,
    summary: &str,
) -> String {
    let (s, ms) = (clock_ms / 1000, clock_ms % 1000);
    let (days, sod) = (s / 86_400, s % 86_400);
    let (y, m, d) = report::civil_from_days(days as i64);
    let mut msg = format!(
        "{label}{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}:{ms:03} {} sec: {totalops} operations; ",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        now_ms / 1000
    );
    let throughput = 1000.0 * totalops as f64 / now_ms as f64;
    if totalops != 0 {
        let cur = 1000.0 * (totalops - last_ops) as f64 / (now_ms - interval_start_ms) as f64;
        msg += &format!("{} current ops/sec; ", dec2(cur));
    }
    if todoops != 0 {
        let est = (todoops as f64 / throughput).ceil();
        // Java's (long) of a double: saturating, NaN is 0.
        let est = if est.is_nan() { 0 } else { est as i64 };
        msg += &format!("est completion in {}", remaining(est));
    }
    msg += summary;
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_java_prints_them() {
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(554586.385037348), "554586.385037348");
        assert_eq!(java_double(1.25e7), "1.25E7");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(0.0005), "5.0E-4");
        assert_eq!(java_double(f64::NAN), "NaN");
        assert_eq!(java_double(f64::INFINITY), "Infinity");
        assert_eq!(dec2(0.0), "0");
        assert_eq!(dec2(2.5), "2.5");
        assert_eq!(dec2(1.0 / 3.0), "0.33");
        assert_eq!(ordinal(95.0), "95th");
        assert_eq!(ordinal(50.0), "50th");
        assert_eq!(ordinal(1.0), "1st");
        assert_eq!(ordinal(11.0), "11th");
        assert_eq!(ordinal(99.9), "99.9");
        assert_eq!(remaining(5), "5 second ");
        assert_eq!(remaining(12), "12 seconds ");
        assert_eq!(remaining(125), "2 minutes ");
        assert_eq!(remaining(i64::MAX), "106751991167300 days 15 hours ");
    }

    #[test]
    fn java_hash_and_map_order_match_java() {
        assert_eq!(java_hash("READ"), 2511254);
        assert_eq!(java_hash(""), 0);
        // Distinct buckets sort by bucket; one bucket keeps insertion order.
        let order = java_map_order(&[java_hash("UPDATE"), java_hash("READ")]);
        assert_eq!(order.len(), 2);
    }

    #[test]
    fn exporters_write_ycsbs_formats() {
        let lines = vec![
            (
                "OVERALL".to_string(),
                "RunTime(ms)".to_string(),
                Value::Int(12),
            ),
            (
                "OVERALL".to_string(),
                "Throughput(ops/sec)".to_string(),
                Value::Double(2.5),
            ),
        ];
        assert_eq!(
            render(Exporter::Text, &lines),
            "[OVERALL], RunTime(ms), 12\n[OVERALL], Throughput(ops/sec), 2.5\n"
        );
        let a = render(Exporter::JsonArray, &lines);
        assert!(a.starts_with("[ {\n  \"metric\" : \"OVERALL\",\n"), "{a}");
        assert!(a.contains("\n}, {\n") && a.ends_with("\n} ]"), "{a}");
        let v: serde_json::Value = serde_json::from_str(&a).expect("JSON");
        assert_eq!(v[1]["value"], 2.5);
        let odd = [(
            "OVERALL".to_string(),
            "Throughput(ops/sec)".to_string(),
            Value::Double(f64::INFINITY),
        )];
        assert!(render(Exporter::JsonArray, &odd).contains("\"value\" : \"Infinity\""));
        let j = render(Exporter::Json, &lines);
        assert!(j.contains("\n} {\n"), "{j}");
    }

    #[test]
    fn a_status_line_reads_like_ycsbs() {
        let l = status_line("", 10_000, 10_000, 500, 500, 0, 0, "[READ: Count=1] ");
        assert_eq!(
            l,
            "1970-01-01 00:00:10:000 10 sec: 500 operations; 50 current ops/sec; \
             est completion in 10 seconds [READ: Count=1] "
        );
        let first = status_line("x", 0, 0, 0, 10, 0, 0, "");
        assert_eq!(
            first,
            "x1970-01-01 00:00:00:000 0 sec: 0 operations; est completion in 0 second "
        );
    }
}
