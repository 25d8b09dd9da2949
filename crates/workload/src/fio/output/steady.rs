//! How fio's stat.c prints steady state (the JSON `steadystate` object and the normal
//! output's `steadystate  :` line) and the latency target (the `latency_*` keys and the
//! `latency   :` line of fio 3.33).

use serde_json::{json, Map, Value};

use super::fmt::{num2str, num2str_base, Unit};
use super::json::round6;
use crate::fio::options::SsMetric;
use crate::fio::runner::SteadyData;
use crate::fio::JobResult;

/// C's `%f` of a float (`(float)` cast, six decimals; nan and inf as glibc prints them).
fn c_float(x: f64) -> String {
    let f = x as f32 as f64;
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.into();
    }
    format!("{f:.6}")
}

fn metric_name(ss: &SteadyData) -> &'static str {
    match ss.spec.metric {
        SsMetric::Iops => "iops",
        SsMetric::Lat => "lat",
        SsMetric::Bw => "bw",
    }
}

fn pct(ss: &SteadyData) -> &'static str {
    if ss.spec.pct {
        "%"
    } else {
        ""
    }
}

/// A JSON float as fio prints it (six decimals); NaN and infinities, which JSON cannot
/// hold, as null.
fn float(x: f64) -> Value {
    if x.is_finite() {
        round6(x).into()
    } else {
        Value::Null
    }
}

/// stat.c's `steadystate` object of a job (fio 3.33's keys, with `lat_mean`/`lat_ns` for
/// the `lat` criteria that newer fio added).
pub(crate) fn steadystate_json(ss: &SteadyData) -> Value {
    let mut m = Map::new();
    m.insert(
        "ss".into(),
        format!(
            "{}{}:{}{}",
            metric_name(ss),
            if ss.spec.slope { "_slope" } else { "" },
            c_float(ss.spec.limit),
            pct(ss)
        )
        .into(),
    );
    m.insert("duration".into(), (ss.dur_s as i32).into());
    m.insert("attained".into(), u8::from(ss.attained).into());
    m.insert(
        "criterion".into(),
        format!("{}{}", c_float(ss.criterion), pct(ss)).into(),
    );
    m.insert("max_deviation".into(), float(ss.deviation));
    m.insert("slope".into(), float(ss.slope));
    let mut data = Map::new();
    data.insert("bw_mean".into(), SteadyData::mean(&ss.bw).into());
    data.insert("iops_mean".into(), SteadyData::mean(&ss.iops).into());
    if ss.spec.metric == SsMetric::Lat {
        data.insert("lat_mean".into(), SteadyData::mean(&ss.lat).into());
        data.insert("lat_ns".into(), json!(ss.ordered(&ss.lat)));
    }
    data.insert("iops".into(), json!(ss.ordered(&ss.iops)));
    data.insert("bw".into(), json!(ss.ordered(&ss.bw)));
    m.insert("data".into(), Value::Object(data));
    Value::Object(m)
}

/// stat.c's show_ss_normal line.
pub(crate) fn steadystate_line(ss: &SteadyData) -> String {
    let kib = SteadyData::mean(&ss.bw) / 1024;
    let lat = if ss.spec.metric == SsMetric::Lat {
        // fio converts to usec or msec only with a deviation, which it passes as 0: nsec.
        format!(
            ", lat={}nsec",
            num2str(SteadyData::mean(&ss.lat), 4, false, Unit::None)
        )
    } else {
        String::new()
    };
    format!(
        "  steadystate  : attained={}, bw={} ({}), iops={}{lat}, {}{}={:.3}{}\n",
        if ss.attained { "yes" } else { "no" },
        num2str_base(kib, 4, 1, true, Unit::BytePerSec),
        num2str_base(kib, 4, 1, false, Unit::BytePerSec),
        num2str(SteadyData::mean(&ss.iops), 4, false, Unit::None),
        metric_name(ss),
        if ss.spec.slope { " slope" } else { " mean dev" },
        ss.criterion,
        pct(ss)
    )
}

/// The latency target's figures of a job, as fio 3.33 keeps them (`ts->latency_*`): the
/// depth it settled at (iodepth without a target), the target in ns, the percentile and
/// the window in us.
pub(crate) fn latency_figures(j: &JobResult) -> (u32, u64, f64, u64) {
    let l = &j.spec.latency;
    (j.latency_depth, l.target_ns, l.percentile, l.window_us)
}
