//! A run as data: what to run (a device, host options, a compression scheme, a dataset, a
//! workload, a seed), serialisable to JSON or TOML so that a run list can be written out, read
//! back, or handed to another process; and how one is run ([`RunSpec::run`]). Its result is
//! the run's JSON ([`RunResult`]), with the spec's `tags` appended in order.
//!
//! Every table refuses fields it does not know (`deny_unknown_fields`), naming them, as the
//! device's configuration does.

use std::path::PathBuf;

use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use workload::dataset::Dataset;
use workload::scheme;
use workload::ycsb::YcsbConfig;

use crate::zonefs_spec::ZonefsSpec;

/// One run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// The file its result is kept in (`main-cc-amazon-4k-20m.json`).
    pub name: String,
    /// One line naming it in progress reports.
    pub title: String,
    /// The seed of the run's virtual machine and workload.
    pub seed: u64,
    /// The device (for a YCSB run, its scheme's device: `cczns`, `cczns-balloon`, `tcssd`).
    pub device: DeviceChoice,
    /// What runs on it.
    pub work: Work,
    /// Appended to the result's JSON object, in order (what a report finds the run by).
    #[serde(default)]
    pub tags: Map<String, Value>,
}

/// A device: a preset's name or a TOML file's path (`--device`), or a whole configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DeviceChoice {
    Named(String),
    Config(Box<device::DeviceConfig>),
}

impl DeviceChoice {
    pub fn config(&self) -> anyhow::Result<device::DeviceConfig> {
        match self {
            DeviceChoice::Named(n) => crate::setup::load_device(n),
            DeviceChoice::Config(c) => Ok((**c).clone()),
        }
    }
}

/// The workload of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Work {
    Ycsb(YcsbRun),
    Fio(FioRun),
    /// A file workload on the F2FS-like file system over a ZNS+ device (ZNS+ OSDI'21 §4).
    Files(crate::files_run::FilesRun),
    /// A db_bench command line on the store on zonefs (ZenFS+'s runs).
    Dbbench(crate::dbbench_run::DbBenchRun),
}

/// A fio job file on a fresh in-memory device; the figures of its job `main` in one direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FioRun {
    /// The job file's text.
    pub job: String,
    /// Which of the main job's figures: read or write.
    pub direction: String,
    /// Named in front of an error the run ends with.
    #[serde(default)]
    pub context: Option<String>,
}

/// A YCSB Load then workloads one after another on the loaded store (`experiment`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct YcsbRun {
    #[serde(default)]
    pub host: HostOptions,
    /// The store's compression scheme (`workload::scheme`: no, snappy, qat, zstd, zstdpc,
    /// balloon, cc, tcssd, cc-single-dr, cc-single-cw).
    pub scheme: String,
    /// amazon, reddit or random.
    pub dataset: String,
    /// Records the Load inserts.
    pub records: u64,
    /// Operations per workload.
    pub operations: u64,
    /// YCSB client threads (YCSB's default: 1).
    #[serde(default = "one")]
    pub threads: usize,
    /// The workloads after the Load, in order: a to f, `a-uniform`, `b-uniform` (YCSB's core
    /// workload files of the repository's `workloads/`).
    #[serde(default)]
    pub workloads: Vec<String>,
    /// Scale the device's flash blocks (pages per block) by this fraction (`--scale-device`).
    #[serde(default)]
    pub device_scale: Option<f64>,
    /// Keep the device in this sparse image file instead of memory (removed at the end).
    #[serde(default)]
    pub image: Option<PathBuf>,
    /// With an image: go on from the phases an interrupted run of the same run kept beside
    /// it (reproduce's --resume), instead of starting over.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resume: bool,
    /// `real` (the default: values are the dataset's bytes, codecs run) or `modeled` (values
    /// are runs of one byte of the same sizes, stored sizes drawn from the codec's measured
    /// distribution: `codec::modeled`).
    #[serde(default, skip_serializing_if = "Payload::is_real")]
    pub payload: Payload,
    /// zonefs's policy and mkfs choices (default: ZenFS's policy, as before ZenFS+).
    #[serde(default, skip_serializing_if = "ZonefsSpec::is_default")]
    pub zonefs: ZonefsSpec,
}

/// What a run's values are made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Payload {
    #[default]
    Real,
    Modeled,
}

impl Payload {
    pub fn is_real(&self) -> bool {
        *self == Payload::Real
    }

    pub fn parse(s: &str) -> anyhow::Result<Payload> {
        match s {
            "real" => Ok(Payload::Real),
            "modeled" => Ok(Payload::Modeled),
            _ => anyhow::bail!("payload {s:?}: use real or modeled"),
        }
    }

    /// The size model a run with `dataset` uses (None for real bytes).
    pub fn model(self, dataset: Dataset) -> anyhow::Result<Option<codec::Modeled>> {
        Ok(match self {
            Payload::Real => None,
            Payload::Modeled => Some(codec::Modeled(workload::dataset::size_model(dataset)?)),
        })
    }
}

fn one() -> usize {
    1
}

/// The host: its cores and the store's sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostOptions {
    /// Simulated host cores. Default 16: CCZNS §V-A's VM.
    pub cores: usize,
    pub store: StoreOptions,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            cores: 16,
            store: StoreOptions::default(),
        }
    }
}

/// The store sizes that shape its tree. Defaults: `host::lsm::db::DbOptions`'s, RocksDB 8.11's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreOptions {
    /// Data block size (RocksDB `block_size`; CCZNS §V-A runs 4 KiB).
    pub block_bytes: usize,
    /// Memtable size (RocksDB `write_buffer_size`, 64 MiB).
    pub write_buffer_bytes: usize,
    /// Table file size (RocksDB `target_file_size_base`, 64 MiB).
    pub target_file_size_bytes: u64,
    /// L1's target size (RocksDB `max_bytes_for_level_base`, 256 MiB).
    pub max_bytes_for_level_base: u64,
    /// Block cache capacity (RocksDB's 32 MiB when none is given; CCZNS §V-A gives 4 GB).
    pub block_cache_bytes: u64,
}

impl Default for StoreOptions {
    fn default() -> Self {
        let d = host::lsm::db::DbOptions::default();
        StoreOptions {
            block_bytes: d.table.block_size,
            write_buffer_bytes: d.write_buffer_size,
            target_file_size_bytes: d.target_file_size,
            max_bytes_for_level_base: d.max_bytes_for_level_base,
            block_cache_bytes: d.block_cache_bytes,
        }
    }
}

impl StoreOptions {
    pub fn db_options(&self) -> host::lsm::db::DbOptions {
        let mut o = host::lsm::db::DbOptions::default();
        o.table.block_size = self.block_bytes;
        o.write_buffer_size = self.write_buffer_bytes;
        o.target_file_size = self.target_file_size_bytes;
        o.max_bytes_for_level_base = self.max_bytes_for_level_base;
        o.block_cache_bytes = self.block_cache_bytes;
        o
    }
}

/// What a run gave: its name (the spec's) and its JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub name: String,
    pub json: Value,
}

/// A list of runs, as a TOML file holds them (`[[run]]` tables).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunList {
    #[serde(default)]
    pub run: Vec<RunSpec>,
}

impl RunList {
    pub fn from_toml(text: &str) -> anyhow::Result<RunList> {
        toml::from_str(text).map_err(|e| anyhow!("run list: {e}"))
    }

    pub fn to_toml(&self) -> anyhow::Result<String> {
        toml::to_string(self).map_err(|e| anyhow!("run list: {e}"))
    }
}

/// The YCSB workload files, embedded (the repository's `workloads/`).
fn workload_text(name: &str) -> &'static str {
    match name {
        "a" | "a-uniform" => include_str!("../../../workloads/workloada"),
        "b" | "b-uniform" => include_str!("../../../workloads/workloadb"),
        "c" => include_str!("../../../workloads/workloadc"),
        "d" => include_str!("../../../workloads/workloadd"),
        "e" => include_str!("../../../workloads/workloade"),
        _ => include_str!("../../../workloads/workloadf"),
    }
}

impl RunSpec {
    /// Run it here, on this thread.
    pub fn run(&self) -> anyhow::Result<RunResult> {
        let mut v = match &self.work {
            Work::Ycsb(y) => self.run_ycsb(y)?,
            Work::Files(f) => crate::files_run::run(f, self.device.config()?, self.seed)?,
            Work::Dbbench(d) => {
                // The spec's seed first: a --seed in the command line wins (gflags keeps the
                // last).
                let mut args = vec![format!("--seed={}", self.seed)];
                args.extend(d.args.iter().cloned());
                crate::dbbench_run::run(&args, self.device.config()?)?
            }
            Work::Fio(f) => {
                let r = crate::fio_run::run_job(
                    &f.job,
                    &self.device.config()?,
                    self.seed,
                    &f.direction,
                );
                match &f.context {
                    Some(c) => r.with_context(|| c.clone())?,
                    None => r?,
                }
            }
        };
        for (k, t) in &self.tags {
            v[k.as_str()] = t.clone();
        }
        Ok(RunResult {
            name: self.name.clone(),
            json: v,
        })
    }

    fn run_ycsb(&self, y: &YcsbRun) -> anyhow::Result<Value> {
        let sch = scheme::by_name(&y.scheme).context("scheme")?;
        let mut opts = y.host.store.db_options();
        sch.apply(&mut opts);
        let (records, ops) = (y.records, y.operations);
        let dataset = Dataset::parse(&y.dataset)?;
        let payload = y.payload.model(dataset)?;
        opts.table.payload = payload.clone();
        let mut load = YcsbConfig {
            recordcount: records,
            operationcount: ops,
            dataset,
            payload,
            seed: self.seed,
            ..YcsbConfig::default()
        };
        load.load_file(workload_text("a"))?;
        load.recordcount = records;
        load.operationcount = ops;
        load.threads = y.threads;
        let runs = y
            .workloads
            .iter()
            .map(|w| {
                let mut c = load.clone();
                c.load_file(workload_text(w))?;
                c.recordcount = records;
                c.operationcount = ops;
                c.threads = y.threads;
                if w.ends_with("uniform") {
                    c.set("requestdistribution", "uniform")?;
                }
                Ok((w.to_string(), c))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut device = self.device.config()?;
        if let Some(s) = y.device_scale {
            // Zones are whole blocks on half the dies: fewer pages per block, smaller zones.
            device.nand = device.nand.with_blocks_scaled(s);
            device
                .layout()
                .map_err(|e| anyhow!("--scale-device at scale {s}: {e}"))?;
        }
        let e = crate::experiment::Experiment {
            device,
            mkfs: opts.mkfs_options(y.zonefs.mkfs_options()?),
            opts,
            cores: y.host.cores,
            load,
            runs,
            image: y.image.clone(),
            resume: y.resume,
            stop_after: None,
        };
        crate::experiment::run(e)
    }
}

/// A run's JSON read back from `path`, if there is one.
pub fn read_result(path: &std::path::Path) -> anyhow::Result<Option<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .with_context(|| format!("{}: not a run's JSON", path.display())),
        Err(_) => Ok(None),
    }
}

/// A spec's tags from (key, value) pairs, in order.
pub fn tags(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_run_list_goes_to_toml_and_back() {
        let spec = RunSpec {
            name: "main-cc-amazon-4k-20m.json".into(),
            title: "main cc amazon".into(),
            seed: 1,
            device: DeviceChoice::Named("cczns".into()),
            work: Work::Ycsb(YcsbRun {
                host: HostOptions::default(),
                scheme: "cc".into(),
                dataset: "amazon".into(),
                records: 40_000,
                operations: 10_000,
                threads: 1,
                workloads: vec!["a".into(), "c".into()],
                device_scale: None,
                image: None,
                resume: false,
                payload: Payload::Real,
                zonefs: ZonefsSpec::default(),
            }),
            tags: tags(&[("scheme", json!("cc")), ("records", json!(40_000))]),
        };
        let mut list = RunList { run: vec![spec] };
        let text = list.to_toml().expect("to toml");
        assert!(
            !text.contains("payload"),
            "real bytes are the default: {text}"
        );
        assert_eq!(RunList::from_toml(&text).expect("from toml"), list);
        // A modeled payload goes through the list too.
        if let Work::Ycsb(y) = &mut list.run[0].work {
            y.payload = Payload::Modeled;
        }
        let text = list.to_toml().expect("to toml");
        assert!(text.contains("payload = \"modeled\""), "{text}");
        assert_eq!(RunList::from_toml(&text).expect("from toml"), list);
    }

    #[test]
    fn unknown_fields_are_refused_by_name() {
        let text =
            "[[run]]\nname = \"x\"\ntitle = \"x\"\nseed = 1\ndevice = \"cczns\"\ntags = {}\n\
                    [run.work]\nkind = \"ycsb\"\nscheme = \"cc\"\ndataset = \"amazon\"\n\
                    records = 1\noperations = 1\n[run.work.host]\ncorez = 3\n";
        let e = RunList::from_toml(text).expect_err("refused").to_string();
        assert!(e.contains("corez"), "{e}");
    }
}
