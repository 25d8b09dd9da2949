//! One YCSB experiment on a fresh in-memory device: Load, then workloads one after another on
//! the loaded store, with what the CCZNS evaluation measures per phase: throughput and
//! latency, flash and host write volume, host CPU (mean and the busiest 1 s window) and host
//! memory (mean and peak of the store's memtables, block cache, index and filter blocks),
//! sampled every 100 ms of virtual time.
//!
//! A run on an image resumes phase by phase: after each phase its JSON so far goes into a
//! file beside the image (`IMAGE.phases.json`, with a fingerprint of the experiment), and a
//! run of the same experiment asked to resume finds it there, mounts the image as the killed
//! run left it (a state the device could be in after a power cut, which the store recovers
//! from) and runs the phases still to do. A resumed phase starts from that recovered state:
//! its block cache is cold, and the writes of a phase cut short are in the store.

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::anyhow;
use device::DeviceHandle;
use host::lsm::db::{Db, DbOptions};
use host::zonefs::MkfsOptions;
use serde_json::{json, Value};
use sim::cpu::CpuPool;
use sim::{Sim, SimDuration};
use workload::ycsb::{self, YcsbConfig, YcsbReport};

use crate::stack::{self, FsStart, Media, Stack};

/// What to run.
pub struct Experiment {
    pub device: device::DeviceConfig,
    pub opts: DbOptions,
    pub mkfs: MkfsOptions,
    pub cores: usize,
    /// The Load's configuration (recordcount, dataset, seed).
    pub load: YcsbConfig,
    /// Named workloads run after the Load, in order.
    pub runs: Vec<(String, YcsbConfig)>,
    /// Keep the device's bytes in this (sparse) image file instead of host memory, for runs
    /// whose zones would not fit in RAM; the file is removed at the end.
    pub image: Option<std::path::PathBuf>,
    /// With an image: go on from the phases an interrupted run of the same experiment kept
    /// beside it, if any.
    pub resume: bool,
    /// Stop after this phase as a killed run would, leaving the image and its phases (tests).
    pub stop_after: Option<String>,
}

/// The experiment's identity for resuming: what it runs and on what, as text (Debug output
/// is deterministic), hashed (FNV-1a).
fn fingerprint(e: &Experiment) -> String {
    let text = format!(
        "{:?}|{:?}|{:?}|{:?}|{}|{:?}",
        e.device.to_toml(),
        e.opts,
        e.load,
        e.runs,
        e.cores,
        e.mkfs
    );
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Where a run on `image` keeps the phases it finished.
fn phases_file(image: &std::path::Path) -> std::path::PathBuf {
    let mut name = image.as_os_str().to_owned();
    name.push(".phases.json");
    name.into()
}

/// The phases an interrupted run of this experiment finished, if its image and their file
/// are there and were made by the same experiment.
fn kept_phases(image: &std::path::Path, print: &str) -> Option<Vec<Value>> {
    if !image.exists() {
        return None;
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(phases_file(image)).ok()?).ok()?;
    (v["fingerprint"] == print)
        .then(|| v["phases"].as_array().cloned())
        .flatten()
        .filter(|p| !p.is_empty())
}

/// Keep the phases finished so far beside the image (written whole, then renamed).
fn keep_phases(image: &std::path::Path, print: &str, phases: &[Value]) -> std::io::Result<()> {
    let path = phases_file(image);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    let tmp: std::path::PathBuf = tmp.into();
    let text = serde_json::to_string(&json!({"fingerprint": print, "phases": phases}))?;
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &path)
}

/// The process's peak resident set so far (Linux's VmHWM), if the system says.
fn process_peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What one sample saw: time, CPU busy so far (all cores), store memory.
#[derive(Clone, Copy)]
struct Sample {
    t_ns: u64,
    busy_ns: u64,
    mem: u64,
}

const SAMPLE_NS: u64 = 100_000_000;

fn store_memory(db: &Db) -> u64 {
    let s = db.stats();
    s.memtable_bytes as u64 + s.block_cache_bytes + s.index_filter_bytes
}

/// Run it; one JSON object per phase plus the device's totals. An error (say, the device ran
/// out of space) ends the experiment and is reported in the JSON, with the phases done.
pub fn run(e: Experiment) -> anyhow::Result<Value> {
    let sim = Sim::new(e.load.seed);
    let print = fingerprint(&e);
    let kept = match (&e.image, e.resume) {
        (Some(path), true) => kept_phases(path, &print),
        _ => None,
    };
    let ctl = match (&e.image, &kept) {
        (Some(path), Some(_)) => Media::OpenImage(path),
        (Some(path), None) => Media::CreateImage(path, e.device.clone()),
        (None, _) => Media::InMemory(e.device.clone()),
    }
    .controller()
    .map_err(|err| anyhow!("{err}"))?;
    let resumed_after = kept
        .as_ref()
        .and_then(|p| p.last())
        .map(|p| p["phase"].clone());
    // The emulator's memo of decompressed chunks (speed only) sized to hold the dataset, so
    // that scans re-reading tables cost a copy rather than the codec: 256 MiB to 1 GiB.
    let dataset = e.load.recordcount * (e.load.fieldcount * e.load.fieldlength) as u64;
    let mut ctl = ctl;
    ctl.set_decompress_memo_bytes(dataset.clamp(256 << 20, 1 << 30) as usize);
    ctl.set_payload_model(e.opts.table.payload.as_ref());
    // Removes the image and its phases however the run ends (a killed run leaves them, and
    // so does one stopped by `stop_after`).
    struct RemoveOnDrop(Option<std::path::PathBuf>, Rc<std::cell::Cell<bool>>);
    impl Drop for RemoveOnDrop {
        fn drop(&mut self) {
            if let (Some(p), false) = (&self.0, self.1.get()) {
                let _ = std::fs::remove_file(p);
                let _ = std::fs::remove_file(phases_file(p));
            }
        }
    }
    let stopped = Rc::new(std::cell::Cell::new(false));
    let _image = RemoveOnDrop(e.image.clone(), stopped.clone());
    let Stack { dev, cpu, io, .. } = Stack::new(&sim, ctl, e.cores);
    let wall = std::time::Instant::now();
    let samples: Rc<RefCell<Vec<Sample>>> = Rc::default();
    let done = Rc::new(std::cell::Cell::new(false));
    let (sim2, dev2, cpu2) = (sim.clone(), dev.clone(), cpu.clone());
    let stopped2 = stopped.clone();
    let stop_after = e.stop_after.clone();
    let max_active_io_zones = e.mkfs.max_active_io_zones;
    let result = sim.block_on(async move {
        let start = match kept {
            Some(_) => FsStart::Mount,
            None => FsStart::Mkfs(e.mkfs),
        };
        let fs = stack::file_system(io, start)
            .await
            .map_err(|err| anyhow!("zonefs: {err}"))?;
        // Not kept on the device: again after a resumed run's mount.
        fs.limit_active_io_zones(max_active_io_zones);
        let db = Rc::new(
            stack::store(Rc::new(fs), e.opts)
                .await
                .map_err(|err| anyhow!("store: {err}"))?,
        );
        // The sampler.
        {
            let (sim3, db3, cpu3, samples, done) = (
                sim2.clone(),
                db.clone(),
                cpu2.clone(),
                samples.clone(),
                done.clone(),
            );
            sim2.spawn(async move {
                while !done.get() {
                    let busy = cpu3.busy_per_core().iter().map(|d| d.as_ns()).sum();
                    samples.borrow_mut().push(Sample {
                        t_ns: sim3.now().as_ns(),
                        busy_ns: busy,
                        mem: store_memory(&db3),
                    });
                    sim3.sleep(SimDuration::from_ns(SAMPLE_NS)).await;
                }
            });
        }
        let mut phases = kept.unwrap_or_default();
        let mut error = None;
        let plan: Vec<(String, YcsbConfig, bool)> =
            std::iter::once(("load".to_string(), e.load.clone(), true))
                .chain(e.runs.iter().map(|(n, c)| (n.clone(), c.clone(), false)))
                .skip(phases.len())
                .collect();
        for (name, cfg, loading) in plan {
            let before = measures(&sim2, &dev2, &cpu2, &db);
            let (wall_before, memo_before) = (
                std::time::Instant::now(),
                dev2.with(|c| c.decompress_memo_hits()),
            );
            let r = if loading {
                ycsb::load(&sim2, &db, &cfg).await
            } else {
                ycsb::run(&sim2, &db, &cfg).await
            };
            let r = match r {
                Ok(r) => r,
                Err(err) => {
                    error = Some(format!("{name}: {err}"));
                    break;
                }
            };
            // A Load's write volume includes the flushes and compactions it left behind.
            if loading {
                if let Err(err) = db.wait_for_background().await {
                    error = Some(format!("{name}: {err}"));
                    break;
                }
            }
            let after = measures(&sim2, &dev2, &cpu2, &db);
            phases.push(phase_json(
                &name,
                &r,
                &before,
                &after,
                &samples.borrow(),
                e.cores,
                &db,
            ));
            // The emulator's own cost of the phase (not a figure: the machine's wall time, how
            // often the device's memo spared it the real codec, the most host memory the
            // device's bytes took so far, and the process's peak RSS so far: with --jobs
            // above 1 that is every run's in the process together).
            let memo = dev2.with(|c| c.decompress_memo_hits());
            let device_peak = dev2.with(|c| c.peak_resident_bytes());
            if let Some(p) = phases.last_mut() {
                p["emulator"] = json!({
                    "wall_s": wall_before.elapsed().as_secs_f64(),
                    "decompress_memo_hits": memo.0 - memo_before.0,
                    "decompress_memo_misses": memo.1 - memo_before.1,
                    "device_memory_peak_bytes": device_peak,
                    "process_peak_rss_bytes": process_peak_rss(),
                });
            }
            if let Some(path) = &e.image {
                keep_phases(path, &print, &phases).map_err(|err| {
                    anyhow!("keeping the phases beside {}: {err}", path.display())
                })?;
            }
            if e.stop_after.as_deref() == Some(name.as_str()) {
                stopped2.set(true);
                break;
            }
        }
        done.set(true);
        let s = db.stats();
        let now = sim2.now().as_ns();
        let device_compression = dev2.with(|c| workload::fio::compression_json(c, now));
        Ok::<_, anyhow::Error>(json!({
            "phases": phases,
            "error": error,
            // The phase after which an interrupted run was resumed (its device and store
            // totals below count from there), or null.
            "resumed_after": resumed_after,
            "level_files": s.level_files,
            "level_bytes": s.level_bytes,
            "compactions": s.compactions,
            "zonefs": crate::setup::zonefs_json(&db.fs().stats()),
            "io": {
                "compressed_writes": db.fs().io().counters().compressed_writes,
                "decompressed_reads": db.fs().io().counters().decompressed_reads,
            },
            "device_compression": device_compression,
        }))
    })?;
    if stopped.get() {
        anyhow::bail!(
            "stopped after phase {} as asked; the image and its phases are kept",
            stop_after.as_deref().unwrap_or("?")
        );
    }
    let mut v = result;
    v["wall_s"] = json!(wall.elapsed().as_secs_f64());
    v["virtual_s"] = json!(sim.now().as_ns() as f64 / 1e9);
    Ok(v)
}

/// Counters at a phase boundary: time, flash bytes (data; Finish's padding apart), host
/// bytes, CPU busy.
struct Measures {
    t_ns: u64,
    flash: u64,
    finish_padding: u64,
    host_written: u64,
    busy_ns: u64,
    /// The store's write stalls so far (memtables full, too many L0 files) and slowdowns.
    stalls_ns: [u64; 3],
}

fn measures(sim: &Sim, dev: &DeviceHandle, cpu: &CpuPool, db: &Db) -> Measures {
    let st = db.stats();
    let (flash, finish_padding, host_written) = dev.with(|c| {
        (
            c.flash_counters().bytes_programmed,
            c.counters().padded_bytes,
            c.counters().host_bytes_written,
        )
    });
    Measures {
        t_ns: sim.now().as_ns(),
        flash: flash.saturating_sub(finish_padding),
        finish_padding,
        host_written,
        busy_ns: cpu.busy_per_core().iter().map(|d| d.as_ns()).sum(),
        stalls_ns: [st.stall_memtable_ns, st.stall_l0_ns, st.slowdown_ns],
    }
}

fn phase_json(
    name: &str,
    r: &YcsbReport,
    before: &Measures,
    after: &Measures,
    samples: &[Sample],
    cores: usize,
    db: &Db,
) -> Value {
    let secs = (after.t_ns - before.t_ns).max(1) as f64 / 1e9;
    let within: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.t_ns >= before.t_ns && s.t_ns <= after.t_ns)
        .collect();
    // The busiest 1 s window (10 samples) of the phase; a shorter phase is one window.
    let per_window = ((1_000_000_000 / SAMPLE_NS) as usize)
        .min(within.len().saturating_sub(1))
        .max(1);
    let cpu_max = within
        .windows(per_window + 1)
        .map(|w| {
            let (a, b) = (w[0], w[per_window]);
            (b.busy_ns - a.busy_ns) as f64 / ((b.t_ns - a.t_ns).max(1) as f64 * cores as f64)
        })
        .fold(f64::NAN, f64::max);
    let cpu_max = if cpu_max.is_nan() {
        // Under two samples: the phase's mean is all there is.
        (after.busy_ns - before.busy_ns) as f64 / (secs * 1e9 * cores as f64)
    } else {
        cpu_max
    };
    let mem_mean = if within.is_empty() {
        store_memory(db) as f64
    } else {
        within.iter().map(|s| s.mem as f64).sum::<f64>() / within.len() as f64
    };
    let mem_max = within.iter().map(|s| s.mem).max().unwrap_or(0);
    let ops = r.by_op.iter().map(|(op, s)| {
        (
            op.to_string(),
            json!({
                "count": s.latency.count(),
                "not_found": s.not_found,
                "mean_us": s.latency.mean() / 1e3,
                "p99_us": s.latency.percentile(99.0) as f64 / 1e3,
                "p99.9_us": s.latency.percentile(99.9) as f64 / 1e3,
                "p99.99_us": s.latency.percentile(99.99) as f64 / 1e3,
            }),
        )
    });
    json!({
        "phase": name,
        "runtime_s": r.seconds,
        "throughput_ops_per_s": r.ops as f64 / r.seconds.max(1e-12),
        "operations": ops.collect::<serde_json::Map<_, _>>(),
        // Write volume: what reached flash as data (a zone Finish's padding is counted apart:
        // at small scales one Finish of a 1 GiB zone would outweigh the whole Load).
        "flash_bytes_programmed": after.flash - before.flash,
        "finish_padding_bytes": after.finish_padding - before.finish_padding,
        "host_bytes_written": after.host_written - before.host_written,
        "cpu_mean_pct": 100.0 * (after.busy_ns - before.busy_ns) as f64 / (secs * 1e9 * cores as f64),
        "cpu_max_pct": if cpu_max.is_nan() { Value::Null } else { json!(100.0 * cpu_max) },
        "memory_mean_bytes": mem_mean,
        "memory_max_bytes": mem_max,
        // Why a Load is slow: time writers waited on full memtables, on L0, and slowed down.
        "stall_memtable_s": (after.stalls_ns[0] - before.stalls_ns[0]) as f64 / 1e9,
        "stall_l0_s": (after.stalls_ns[1] - before.stalls_ns[1]) as f64 / 1e9,
        "slowdown_s": (after.stalls_ns[2] - before.stalls_ns[2]) as f64 / 1e9,
        // The part CCZNS's larger index entries grow (Table V): index and filter blocks.
        "index_filter_bytes": db.stats().index_filter_bytes,
    })
}
