//! A fio job file on a fresh in-memory device, reduced to the figures a reproduction compares:
//! bandwidth, IOPS, latency and compression ratio of its job `main`, with the whole fio JSON
//! beside them.

use anyhow::{anyhow, bail};
use serde_json::{json, Value};
use sim::Sim;
use workload::fio;

/// Run job file `text` on a fresh in-memory device; the figures of its `main` job in direction
/// `dir` (read or write), with the whole fio JSON under `fio`.
pub fn run_job(
    text: &str,
    cfg: &device::DeviceConfig,
    seed: u64,
    dir: &str,
) -> anyhow::Result<Value> {
    let sections = fio::parse_jobfile(text).map_err(|e| anyhow!("{e}"))?;
    // Output options (percentiles) are the output's; `job options` echo the job file.
    let (sections, spec) = fio::split_output_options(&sections, &[]).map_err(|e| anyhow!("{e}"))?;
    let jobs = fio::build_jobs(&sections).map_err(|e| anyhow!("{e}"))?;
    let sim = Sim::new(seed);
    let ctl = crate::stack::Media::InMemory(cfg.clone())
        .controller()
        .map_err(|e| anyhow!("{e}"))?;
    let dev = device::DeviceHandle::new(&sim, ctl);
    let result = fio::run(&sim, &dev, &jobs).map_err(|e| anyhow!("{e}"))?;
    if let Some(e) = result.jobs.iter().find_map(|j| j.error.clone()) {
        bail!("{e}");
    }
    let ctl = dev
        .into_controller()
        .ok_or_else(|| anyhow!("internal: device still shared"))?;
    let full = fio::json_output_with(&result, &ctl, seed, 0.0, &spec);
    let main = full["jobs"]
        .as_array()
        .and_then(|js| js.iter().find(|j| j["jobname"] == "main"))
        .cloned()
        .ok_or_else(|| anyhow!("no main job in the output"))?;
    let d = &main[dir];
    let clat = &d["clat_ns"]["percentile"];
    Ok(json!({
        "mb_per_s": d["bw_bytes"].as_f64().unwrap_or(0.0) / 1e6,
        "iops": d["iops"],
        "mean_us": d["clat_ns"]["mean"].as_f64().unwrap_or(0.0) / 1e3,
        "p99_us": clat["99.000000"].as_f64().unwrap_or(0.0) / 1e3,
        "p9999_us": clat["99.990000"].as_f64().unwrap_or(0.0) / 1e3,
        "compression_ratio": full["znslab"]["compression"]["compression_ratio"],
        "fio": full,
    }))
}
