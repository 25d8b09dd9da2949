//! YCSB's properties: the core workload's names and defaults, parsed from `-P file` and
//! `-p name=value`, and checked the way YCSB checks them (counts it reads as Java ints,
//! proportions, scan lengths) before a phase starts.

use std::cell::RefCell;
use std::rc::Rc;

/// YCSB properties, parsed from `-P file` and `-p name=value`.
#[derive(Clone, Debug, PartialEq)]
pub struct YcsbConfig {
    pub recordcount: u64,
    pub operationcount: u64,
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub readmodifywrite: f64,
    pub distribution: Distribution,
    pub fieldcount: usize,
    pub fieldlength: usize,
    pub hashed: bool,
    /// Scan lengths are drawn uniformly from minscanlength..=maxscanlength (YCSB's
    /// `scanlengthdistribution=uniform`, the only one znslab draws).
    pub minscanlength: u64,
    pub maxscanlength: u64,
    pub threads: usize,
    pub seed: u64,
    /// znslab's `dataset` property: random (YCSB's records), amazon, reddit (values of Table III
    /// sizes drawn from a text corpus; updates replace the whole value).
    pub dataset: crate::dataset::Dataset,
    /// Every record the load phase writes, `[u32 len][key][u32 len][value]`, for replaying the
    /// same data into real RocksDB (`tools/rocksdb_crosscheck.py`).
    pub dump: Option<Rc<RefCell<Vec<u8>>>>,
    /// Called as operations complete (the CLI draws a bar with it).
    pub progress: Option<crate::progress::Progress>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    Zipfian,
    Uniform,
    Latest,
}

impl Default for YcsbConfig {
    /// CoreWorkload's defaults.
    fn default() -> Self {
        YcsbConfig {
            recordcount: 1000,
            operationcount: 1000,
            read: 0.95,
            update: 0.05,
            insert: 0.0,
            scan: 0.0,
            readmodifywrite: 0.0,
            distribution: Distribution::Uniform,
            fieldcount: 10,
            fieldlength: 100,
            hashed: true,
            minscanlength: 1,
            maxscanlength: 1000,
            threads: 1,
            seed: 1,
            dataset: crate::dataset::Dataset::Random,
            dump: None,
            progress: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum YcsbError {
    #[error("property {name}: {why}")]
    Property { name: String, why: String },
    #[error("{0}")]
    Db(String),
    #[error(transparent)]
    Dataset(#[from] crate::dataset::DatasetError),
}

impl YcsbConfig {
    /// Apply one `name=value` property; unknown names are refused (YCSB ignores them; a typo
    /// here would silently change an experiment).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), YcsbError> {
        let bad = |why: &str| YcsbError::Property {
            name: name.to_string(),
            why: format!("{value:?}: {why}"),
        };
        let num = || {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| bad("not a whole number"))
        };
        // YCSB reads these as Java ints (Client's operationcount and the load's recordcount,
        // threadcount, fieldlength, min/maxscanlength) and fails on anything larger.
        let int = || {
            num().and_then(|n| {
                if n > JAVA_INT_MAX {
                    Err(bad(&format!(
                        "more than {JAVA_INT_MAX} (YCSB reads it as a Java int)"
                    )))
                } else {
                    Ok(n)
                }
            })
        };
        let positive = |n: u64| {
            if n == 0 {
                Err(bad("must be at least 1"))
            } else {
                Ok(n)
            }
        };
        let frac = || {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(|| bad("not a proportion between 0 and 1"))
        };
        match name {
            "recordcount" => self.recordcount = int()?,
            "operationcount" => self.operationcount = int()?,
            "readproportion" => self.read = frac()?,
            "updateproportion" => self.update = frac()?,
            "insertproportion" => self.insert = frac()?,
            "scanproportion" => self.scan = frac()?,
            "readmodifywriteproportion" => self.readmodifywrite = frac()?,
            "requestdistribution" => {
                self.distribution = match value.trim() {
                    "zipfian" => Distribution::Zipfian,
                    "uniform" => Distribution::Uniform,
                    "latest" => Distribution::Latest,
                    _ => return Err(bad("use zipfian, uniform or latest")),
                }
            }
            "fieldcount" => {
                self.fieldcount = usize::try_from(positive(num()?)?)
                    .map_err(|_| bad("more than this machine can count"))?
            }
            "fieldlength" => self.fieldlength = int()? as usize,
            "insertorder" => {
                self.hashed = match value.trim() {
                    "hashed" => true,
                    "ordered" => false,
                    _ => return Err(bad("use hashed or ordered")),
                }
            }
            "maxscanlength" => self.maxscanlength = positive(int()?)?,
            "minscanlength" => self.minscanlength = positive(int()?)?,
            "threadcount" => self.threads = positive(int()?)? as usize,
            "scanlengthdistribution" => match value.trim() {
                "uniform" => {}
                "zipfian" => {
                    return Err(bad(
                        "znslab draws scan lengths uniformly only (use uniform)",
                    ))
                }
                other => {
                    return Err(bad(&format!(
                        "Distribution \"{other}\" not allowed for scan length (YCSB takes \
                         uniform or zipfian; znslab draws uniform)"
                    )))
                }
            },
            "dataset" => {
                self.dataset =
                    crate::dataset::Dataset::parse(value.trim()).map_err(|e| bad(&e.to_string()))?
            }
            // Accepted and without effect here.
            "workload"
            | "readallfields"
            | "writeallfields"
            | "table"
            | "zeropadding"
            | "fieldlengthdistribution"
            | "dataintegrity"
            | "measurementtype" => {}
            _ => return Err(bad("unknown property")),
        }
        Ok(())
    }

    /// Refuse, before anything runs, what YCSB refuses or what could not run in bounded memory:
    /// a run phase (`running`) whose operation proportions are all 0 (YCSB's operation chooser
    /// is then empty and its first operation fails), minscanlength above maxscanlength, more
    /// than [`MAX_THREADS`] client threads, or records so large that the client threads would
    /// hold more than [`MAX_RECORD_BUFFER_BYTES`] of them at once.
    pub fn check(&self, running: bool) -> Result<(), YcsbError> {
        let bad = |name: &str, why: String| {
            Err(YcsbError::Property {
                name: name.to_string(),
                why,
            })
        };
        if running
            && [
                self.read,
                self.update,
                self.insert,
                self.scan,
                self.readmodifywrite,
            ]
            .iter()
            .all(|&p| p <= 0.0)
        {
            return bad(
                "readproportion",
                "readproportion, updateproportion, insertproportion, scanproportion and \
                 readmodifywriteproportion are all 0: no operation to choose"
                    .into(),
            );
        }
        if self.minscanlength > self.maxscanlength {
            return bad(
                "minscanlength",
                format!(
                    "{} is more than maxscanlength ({})",
                    self.minscanlength, self.maxscanlength
                ),
            );
        }
        if self.threads == 0 || self.threads > MAX_THREADS {
            return bad(
                "threadcount",
                format!("{}: use 1 to {MAX_THREADS} client threads", self.threads),
            );
        }
        let record = self.record_bytes();
        if record.saturating_mul(self.threads as u64) > MAX_RECORD_BUFFER_BYTES {
            let name = if record <= MAX_RECORD_BUFFER_BYTES {
                "threadcount"
            } else if self.fieldcount as u64 > self.fieldlength as u64 {
                "fieldcount"
            } else {
                "fieldlength"
            };
            return bad(
                name,
                format!(
                    "records of {record} bytes (fieldcount {} x fieldlength {} plus field \
                     names) for {} client thread(s) would take more than 1 GiB",
                    self.fieldcount, self.fieldlength, self.threads
                ),
            );
        }
        Ok(())
    }

    /// Bytes of one record as the RocksDB binding lays it out (a dataset's smallest common
    /// value, its 10th percentile, for amazon and reddit), plus its key.
    pub fn record_bytes(&self) -> u64 {
        let value = match self.dataset.min_value_bytes() {
            Some(b) => b,
            None => (self.fieldcount as u64).saturating_mul(
                (self.fieldlength as u64)
                    .saturating_add(8 + 5 + self.fieldcount.to_string().len() as u64),
            ),
        };
        value.saturating_add(4 + 20)
    }

    /// Apply a properties file's text (`name=value` lines, `#` comments).
    pub fn load_file(&mut self, text: &str) -> Result<(), YcsbError> {
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (k, v) = line.split_once('=').ok_or_else(|| YcsbError::Property {
                name: line.to_string(),
                why: "not name=value".into(),
            })?;
            self.set(k.trim(), v.trim())?;
        }
        Ok(())
    }
}

/// The largest value YCSB takes for the counts it reads as Java ints.
pub const JAVA_INT_MAX: u64 = i32::MAX as u64;

/// Client threads a phase may have (each is a task of the simulated client).
pub const MAX_THREADS: usize = 1024;

/// Bytes of records the client threads may hold at once (one each).
pub const MAX_RECORD_BUFFER_BYTES: u64 = 1 << 30;
