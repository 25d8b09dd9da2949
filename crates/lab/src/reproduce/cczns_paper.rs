//! The CCZNS reproduction's data: the paper's run list and figures (`data/cczns-paper.toml`),
//! one run of the evaluation, and the model version its results carry.

use serde::Deserialize;

/// The model's version, in every run's JSON: --resume keeps only runs made by the same one.
/// Bump it in a commit that changes any figure (not in one that only makes runs faster).
/// 2: lookups read the device without holding the store's lock (RocksDB's way).
/// 3: so do scans, and zonefs no longer resets a zone two deletions chose (one YCSB thread at
/// 0.005: E moved by 0.02%, zone resets counted 80 -> 72 for ZSTD, the rest identical).
/// 4: compactions stream their merge (outputs written as it goes, not after every input was
/// read), lookups and scans take each data block from the device when the block cache lacks
/// it (per-table readahead and prefetch buffers), a table's number is taken without the
/// store's lock (issue 25).
pub(super) const MODEL_VERSION: u64 = 4;

/// The run list and the paper's figures (`data/cczns-paper.toml`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Paper {
    pub(super) runs: Plan,
    pub(super) figures: Figures,
}

/// Which runs make the evaluation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Plan {
    pub(super) datasets: Vec<String>,
    pub(super) main_schemes: Vec<String>,
    pub(super) main_workloads: Vec<String>,
    pub(super) fig11_schemes: Vec<String>,
    pub(super) fig11_block_kib: Vec<usize>,
    pub(super) fig12_schemes: Vec<String>,
    pub(super) fig12_records_m: Vec<u64>,
    pub(super) ablation_schemes: Vec<String>,
}

/// A figure of the paper beside a scheme.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Versus {
    pub(super) scheme: String,
    pub(super) paper: String,
}

/// The paper's figures the report quotes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Figures {
    pub(super) fig8_cc_vs: Vec<Versus>,
    pub(super) fig9_load_cc_vs: Vec<Versus>,
    pub(super) fig9_other_cc_vs: Vec<Versus>,
    pub(super) fig10: String,
    pub(super) table4_cpu_pct: Vec<(f64, f64)>,
    pub(super) table5_memory_gb: Vec<(f64, f64)>,
    pub(super) fig11: String,
    pub(super) fig12: String,
    pub(super) ablation: String,
}

/// The paper's data file, parsed (it is part of the build: a bad one is a bug).
pub(super) fn paper() -> Paper {
    toml::from_str(include_str!("../../data/cczns-paper.toml")).expect("data/cczns-paper.toml")
}

/// One experiment of the evaluation.
#[derive(Clone)]
pub(super) struct Run {
    /// Which figure(s) it feeds: main, fig11, fig12, ablation.
    pub(super) group: &'static str,
    pub(super) scheme: String,
    pub(super) dataset: String,
    pub(super) block_kib: usize,
    /// Records in millions at S = 1 (10, 20, 30).
    pub(super) records_m: u64,
    /// Workloads after the Load.
    pub(super) runs: Vec<String>,
}

impl Run {
    pub(super) fn describe(&self) -> String {
        format!(
            "{:<8} {:<12} {:<7} {:>2}K {}M",
            self.group, self.scheme, self.dataset, self.block_kib, self.records_m
        )
    }

    pub(super) fn file_name(&self) -> String {
        format!(
            "{}-{}-{}-{}k-{}m.json",
            self.group, self.scheme, self.dataset, self.block_kib, self.records_m
        )
    }
}
