//! YCSB's properties: the core workload's names and defaults, parsed from `-P file` and
//! `-p name=value`, and checked the way YCSB checks them (counts it reads as Java ints,
//! proportions, scan lengths) before a phase starts. Every property of CoreWorkload and Client
//! is supported, accepted with a notice (`notices`) where it changes nothing here, or refused
//! with a reason (docs/compat/ycsb.md lists them).

use std::cell::RefCell;
use std::rc::Rc;

use super::java_props::{java_properties, parse_histogram};

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
    /// A modeled payload (issue 25): values are runs of one byte of the dataset's sizes and the
    /// store and device draw stored sizes from this model. None: real bytes.
    pub payload: Option<codec::Modeled>,
    /// Every record the load phase writes, `[u32 len][key][u32 len][value]`, for replaying the
    /// same data into real RocksDB (`tools/rocksdb_crosscheck.py`).
    pub dump: Option<Rc<RefCell<Vec<u8>>>>,
    /// Called as operations complete (the CLI draws a bar with it).
    pub progress: Option<crate::progress::Progress>,
    /// YCSB's `insertstart` and `insertcount`: the load inserts key numbers
    /// insertstart..insertstart+insertcount (insertcount: recordcount when unset), and requests
    /// choose among them.
    pub insertstart: u64,
    pub insertcount: Option<u64>,
    /// Digits a key number is padded to with zeros (`zeropadding`, YCSB's default 1).
    pub zeropadding: usize,
    /// Field names are `fieldnameprefix` + number (`field` by default).
    pub fieldnameprefix: String,
    /// How field lengths are drawn (`fieldlengthdistribution`, `minfieldlength`).
    pub fieldlengths: FieldLengths,
    pub minfieldlength: u64,
    /// Scan lengths: uniform (the default) or zipfian over minscanlength..=maxscanlength.
    pub scanzipfian: bool,
    /// `writeallfields`: an update writes every field (else one chosen at random).
    pub writeallfields: bool,
    /// `hotspotdatafraction`, `hotspotopnfraction` (requestdistribution=hotspot).
    pub hotspotdatafraction: f64,
    pub hotspotopnfraction: f64,
    /// `exponential.percentile`, `exponential.frac` (requestdistribution=exponential).
    pub exponential_percentile: f64,
    pub exponential_frac: f64,
    /// Client's `target` (operations per second over all threads; 0 = unlimited).
    pub target: u64,
    /// Client's `maxexecutiontime` in virtual seconds (0 = none).
    pub maxexecutiontime: u64,
    /// YCSB's measurement and output settings.
    pub measure: super::measure::MeasureConfig,
    /// `-s` / `status=true`: status lines on stderr every `status.interval` virtual seconds.
    pub status: bool,
    pub status_interval: u64,
    /// `label` (`-l`): the prefix of status lines.
    pub label: String,
    /// `fieldlengthhistogram`: the file fieldlengthdistribution=histogram reads (hist.txt).
    pub fieldlengthhistogram: String,
    /// Where status lines go (stderr when unset).
    pub status_sink: Option<StatusSink>,
    /// Properties accepted without effect here, one line each, to print on stderr.
    pub notices: Vec<String>,
}

/// Receives YCSB's status lines (`-s`).
#[derive(Clone)]
pub struct StatusSink(pub Rc<dyn Fn(&str)>);

impl std::fmt::Debug for StatusSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StatusSink")
    }
}

impl PartialEq for StatusSink {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// YCSB's `fieldlengthdistribution`.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldLengths {
    Constant,
    Uniform,
    Zipfian,
    /// HistogramGenerator: block size and bucket weights from `fieldlengthhistogram`.
    Histogram {
        block: u64,
        buckets: Vec<u64>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    Zipfian,
    Uniform,
    Latest,
    /// HotspotIntegerGenerator (hotspotdatafraction, hotspotopnfraction).
    Hotspot,
    /// ExponentialGenerator: keys counted back from the latest insert.
    Exponential,
    /// SequentialGenerator: insertstart, insertstart+1, ... round and round.
    Sequential,
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
            payload: None,
            dump: None,
            progress: None,
            insertstart: 0,
            insertcount: None,
            zeropadding: 1,
            fieldnameprefix: "field".into(),
            fieldlengths: FieldLengths::Constant,
            minfieldlength: 1,
            scanzipfian: false,
            writeallfields: false,
            hotspotdatafraction: 0.2,
            hotspotopnfraction: 0.8,
            exponential_percentile: 95.0,
            exponential_frac: 0.8571428571,
            target: 0,
            maxexecutiontime: 0,
            measure: Default::default(),
            status: false,
            status_interval: 10,
            label: String::new(),
            fieldlengthhistogram: "hist.txt".into(),
            status_sink: None,
            notices: Vec::new(),
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
        let boolean = || match value.trim() {
            // Java's Boolean.parseBoolean: "true" in any case is true, anything else false.
            v if v.eq_ignore_ascii_case("true") => Ok(true),
            v if v.eq_ignore_ascii_case("false") => Ok(false),
            _ => Err(bad("use true or false")),
        };
        let real = || {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| bad("not a number"))
        };
        let v = value.trim();
        // A property YCSB reads that changes nothing here: accepted, with a notice when its
        // value is not YCSB's default (at the default it would change nothing in YCSB either).
        let mut notice = |default: &str, why: &str| {
            if v != default {
                let line = format!("property {name}={v}: {why}");
                if !self.notices.contains(&line) {
                    self.notices.push(line);
                }
            }
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
                self.distribution = match v {
                    "zipfian" => Distribution::Zipfian,
                    "uniform" => Distribution::Uniform,
                    "latest" => Distribution::Latest,
                    "hotspot" => Distribution::Hotspot,
                    "exponential" => Distribution::Exponential,
                    "sequential" => Distribution::Sequential,
                    _ => {
                        return Err(bad(
                            "Unknown request distribution (use uniform, zipfian, latest, \
                             hotspot, exponential or sequential)",
                        ))
                    }
                }
            }
            "fieldcount" => {
                self.fieldcount = usize::try_from(positive(int()?)?)
                    .map_err(|_| bad("more than this machine can count"))?
            }
            "fieldlength" => self.fieldlength = int()? as usize,
            "minfieldlength" => self.minfieldlength = positive(int()?)?,
            "fieldlengthdistribution" => {
                self.fieldlengths = match v {
                    "constant" => FieldLengths::Constant,
                    "uniform" => FieldLengths::Uniform,
                    "zipfian" => FieldLengths::Zipfian,
                    "histogram" => FieldLengths::Histogram {
                        block: 0,
                        buckets: Vec::new(),
                    },
                    _ => {
                        return Err(bad(
                            "Unknown field length distribution (use constant, uniform, \
                             zipfian or histogram)",
                        ))
                    }
                }
            }
            "fieldlengthhistogram" => self.fieldlengthhistogram = v.to_string(),
            "fieldnameprefix" => self.fieldnameprefix = value.to_string(),
            "insertorder" => {
                // CoreWorkload: "hashed" hashes, anything else is ordered.
                self.hashed = match v {
                    "hashed" => true,
                    "ordered" => false,
                    _ => return Err(bad("use hashed or ordered")),
                }
            }
            "insertstart" => self.insertstart = int()?,
            "insertcount" => self.insertcount = Some(int()?),
            "zeropadding" => {
                let n = int()?;
                if n > 64 {
                    return Err(bad("use 1 to 64 digits"));
                }
                self.zeropadding = n as usize
            }
            "maxscanlength" => self.maxscanlength = positive(int()?)?,
            "minscanlength" => self.minscanlength = positive(int()?)?,
            "threadcount" => self.threads = positive(int()?)? as usize,
            "scanlengthdistribution" => {
                self.scanzipfian = match v {
                    "uniform" => false,
                    "zipfian" => true,
                    other => {
                        return Err(bad(&format!(
                            "Distribution \"{other}\" not allowed for scan length (use uniform \
                             or zipfian)"
                        )))
                    }
                }
            }
            "writeallfields" => self.writeallfields = boolean()?,
            "hotspotdatafraction" => self.hotspotdatafraction = frac()?,
            "hotspotopnfraction" => self.hotspotopnfraction = frac()?,
            "exponential.percentile" => {
                let p = real()?;
                if !(p > 0.0 && p < 100.0) {
                    return Err(bad("use a percentile above 0 and below 100"));
                }
                self.exponential_percentile = p
            }
            "exponential.frac" => {
                let f = real()?;
                if f <= 0.0 {
                    return Err(bad("use a fraction above 0"));
                }
                self.exponential_frac = f
            }
            "target" => self.target = int()?,
            "maxexecutiontime" => self.maxexecutiontime = int()?,
            "status" => self.status = boolean()?,
            "status.interval" => self.status_interval = positive(int()?)?,
            "label" => self.label = value.to_string(),
            "dataset" => {
                self.dataset = crate::dataset::Dataset::parse(v).map_err(|e| bad(&e.to_string()))?
            }
            "workload" => {
                if v != "site.ycsb.workloads.CoreWorkload" {
                    return Err(bad("znslab runs YCSB's core workload only \
                         (site.ycsb.workloads.CoreWorkload)"));
                }
            }
            "dataintegrity" => {
                if boolean()? {
                    return Err(bad(
                        "not supported: znslab writes YCSB's random values, not the \
                         deterministic ones a VERIFY checks",
                    ));
                }
            }
            "hdrhistogram.output.path" => notice(
                "",
                "only read with hdrhistogram.fileoutput=true, which znslab refuses",
            ),
            "measurementtype"
            | "measurement.interval"
            | "measurement.histogram.verbose"
            | "hdrhistogram.percentiles"
            | "hdrhistogram.fileoutput"
            | "histogram.buckets"
            | "timeseries.granularity"
            | "exporter"
            | "exportfile"
            | "reportlatencyforeacherror"
            | "latencytrackederrors" => {
                self.measure
                    .set(name, value)
                    .map_err(|why| YcsbError::Property {
                        name: name.to_string(),
                        why,
                    })?
            }
            // What YCSB reads and that changes no figure here.
            "readallfields" => {
                boolean()?;
                notice(
                    "true",
                    "the RocksDB binding reads whole records either way; no figure changes",
                )
            }
            "readallfieldsbyname" => {
                boolean()?;
                notice(
                    "false",
                    "the RocksDB binding reads whole records either way; no figure changes",
                )
            }
            "table" => notice(
                "usertable",
                "one table per run: its name changes no figure (keys are not prefixed with it)",
            ),
            "core_workload_insertion_retry_limit" | "core_workload_insertion_retry_interval" => {
                int()?;
                notice(
                    if name.ends_with("limit") { "0" } else { "3" },
                    "the store's inserts do not fail transiently; nothing is retried",
                )
            }
            "core_workload_insertion_keep_going_on_error" => {
                boolean()?;
                notice("false", "the store's inserts do not fail transiently")
            }
            "measurement.trackjvm" => {
                boolean()?;
                notice(
                    "false",
                    "there is no JVM to track; nothing is printed for it",
                )
            }
            "spin.sleep" => {
                boolean()?;
                notice(
                    "false",
                    "throttling waits on the virtual clock; no figure changes",
                )
            }
            "dotransactions" => {
                boolean()?;
                let line = format!(
                    "property {name}={v}: the phase (load or run) decides, as YCSB's launcher \
                     appends -load or -t last"
                );
                if !self.notices.contains(&line) {
                    self.notices.push(line);
                }
            }
            "db" => match v {
                "site.ycsb.db.rocksdb.RocksDBClient" => {}
                _ => {
                    return Err(bad(
                        "znslab runs the RocksDB binding (site.ycsb.db.rocksdb.RocksDBClient) \
                         on its store only",
                    ))
                }
            },
            "rocksdb.dir" => {
                let line = format!(
                    "property rocksdb.dir={v}: the store lives on the emulated device; use \
                     --image FILE to keep it between load and run"
                );
                if !self.notices.contains(&line) {
                    self.notices.push(line);
                }
            }
            "rocksdb.optionsfile" => {
                return Err(bad(
                    "not supported: the store's options come from znslab's flags \
                     (--compression, --device, mkfs options)",
                ))
            }
            // In YCSB's workload_template but read by no class of YCSB's core: YCSB ignores
            // them, and so does znslab.
            "maxscanrate" | "scanoptimelimit" | "discardscannedrecord" => {
                let line = format!(
                    "property {name}={v}: read by no part of YCSB's core (it ignores it); ignored"
                );
                if !self.notices.contains(&line) {
                    self.notices.push(line);
                }
            }
            _ if name.starts_with("htrace.") => {
                let line = format!("property {name}: HTrace tracing is not emulated; ignored");
                if !self.notices.contains(&line) {
                    self.notices.push(line);
                }
            }
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
        if self.insertcount.is_some() || self.insertstart > 0 {
            let span = self
                .insertcount
                .unwrap_or(self.recordcount.saturating_sub(self.insertstart));
            if self.recordcount < self.insertstart + span || (running && span == 0) {
                return bad(
                    "insertcount",
                    format!(
                        "insertstart {} + insertcount {span} is more than recordcount {} (or \
                         no records to choose from): YCSB's \"Invalid combination of \
                         insertstart, insertcount and recordcount.\"",
                        self.insertstart, self.recordcount
                    ),
                );
            }
        }
        if !running && self.insertcount.unwrap_or(self.recordcount) == 0 {
            return bad(
                "recordcount",
                "0 records to load: in YCSB a load of 0 inserts without end (not supported \
                 here; give a count)"
                    .into(),
            );
        }
        if running && self.operationcount == 0 && self.maxexecutiontime == 0 {
            return bad(
                "operationcount",
                "0 means no limit in YCSB: set maxexecutiontime too, or the run never ends".into(),
            );
        }
        if running && self.distribution == Distribution::Hotspot {
            let span = self.request_span();
            let hot = (span as f64 * self.hotspotdatafraction) as u64;
            if (hot == 0 && self.hotspotopnfraction > 0.0)
                || (hot == span && self.hotspotopnfraction < 1.0)
            {
                return bad(
                    "hotspotdatafraction",
                    format!(
                        "{}: a hot set of {hot} of {span} records leaves the {} set empty \
                         while hotspotopnfraction {} sends operations to it",
                        self.hotspotdatafraction,
                        if hot == 0 { "hot" } else { "cold" },
                        self.hotspotopnfraction
                    ),
                );
            }
        }
        if !matches!(self.fieldlengths, FieldLengths::Constant)
            && self.minfieldlength > self.max_field_length()
        {
            return bad(
                "minfieldlength",
                format!(
                    "{} is more than fieldlength ({})",
                    self.minfieldlength, self.fieldlength
                ),
            );
        }
        if let FieldLengths::Histogram { buckets, .. } = &self.fieldlengths {
            if buckets.is_empty() {
                return bad(
                    "fieldlengthhistogram",
                    format!("{}: not read yet (call prepare)", self.fieldlengthhistogram),
                );
            }
        }
        let zipf_range = |lo: u64, hi: u64| hi.saturating_sub(lo) > MAX_ZIPFIAN_ITEMS;
        if self.scanzipfian && zipf_range(self.minscanlength, self.maxscanlength) {
            return bad(
                "maxscanlength",
                format!(
                    "a zipfian over more than {MAX_ZIPFIAN_ITEMS} scan lengths is not supported"
                ),
            );
        }
        if self.fieldlengths == FieldLengths::Zipfian
            && zipf_range(self.minfieldlength, self.fieldlength as u64)
        {
            return bad(
                "fieldlength",
                format!(
                    "a zipfian over more than {MAX_ZIPFIAN_ITEMS} field lengths is not supported"
                ),
            );
        }
        if self.status && self.status_interval == 0 {
            return bad("status.interval", "must be at least 1".into());
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

    /// Print a status line: to the sink, or stderr.
    pub fn emit_status(&self, line: &str) {
        match &self.status_sink {
            Some(s) => (s.0)(line),
            None => eprintln!("{line}"),
        }
    }

    /// Key numbers requests choose among: insertcount, or recordcount - insertstart.
    pub fn request_span(&self) -> u64 {
        self.insertcount
            .unwrap_or(self.recordcount.saturating_sub(self.insertstart))
    }

    /// The longest field the field length distribution draws.
    pub fn max_field_length(&self) -> u64 {
        match &self.fieldlengths {
            FieldLengths::Histogram { block, buckets } => {
                block.saturating_mul(buckets.len() as u64)
            }
            _ => self.fieldlength as u64,
        }
    }

    /// Read what the properties name: the field length histogram file
    /// (fieldlengthdistribution=histogram), in YCSB's format (`BlockSize\tN`, then
    /// `bucket\tcount` lines from bucket 0 in order).
    pub fn prepare(&mut self) -> Result<(), YcsbError> {
        if let FieldLengths::Histogram { buckets, .. } = &self.fieldlengths {
            if buckets.is_empty() {
                let path = self.fieldlengthhistogram.clone();
                let text = std::fs::read_to_string(&path).map_err(|e| YcsbError::Property {
                    name: "fieldlengthhistogram".into(),
                    why: format!("Couldn't read field length histogram file: {path}: {e}"),
                })?;
                self.fieldlengths = parse_histogram(&text).map_err(|why| YcsbError::Property {
                    name: "fieldlengthhistogram".into(),
                    why: format!("{path}: {why}"),
                })?;
            }
        }
        Ok(())
    }

    /// Bytes of one record as the RocksDB binding lays it out (a dataset's smallest common
    /// value, its 10th percentile, for amazon and reddit), plus its key.
    pub fn record_bytes(&self) -> u64 {
        let value = match self.dataset.min_value_bytes() {
            Some(b) => b,
            None => {
                (self.fieldcount as u64).saturating_mul(self.max_field_length().saturating_add(
                    8 + self.fieldnameprefix.len() as u64
                        + self.fieldcount.to_string().len() as u64,
                ))
            }
        };
        value.saturating_add(4 + 20)
    }

    /// Apply a properties file's text as Java's Properties.load reads it: `#` and `!`
    /// comments, `name=value`, `name: value` or `name value`, lines continued with `\\`, and
    /// Java's escapes.
    pub fn load_file(&mut self, text: &str) -> Result<(), YcsbError> {
        for (k, v) in java_properties(text).map_err(|line| YcsbError::Property {
            name: line,
            why: "a malformed \\uXXXX escape".into(),
        })? {
            self.set(k.trim(), &v)?;
        }
        Ok(())
    }
}

/// The widest range a (non-scrambled) zipfian of lengths draws from: YCSB sums ζ over it.
pub const MAX_ZIPFIAN_ITEMS: u64 = 100_000_000;

/// The largest value YCSB takes for the counts it reads as Java ints.
pub const JAVA_INT_MAX: u64 = i32::MAX as u64;

/// Client threads a phase may have (each is a task of the simulated client).
pub const MAX_THREADS: usize = 1024;

/// Bytes of records the client threads may hold at once (one each).
pub const MAX_RECORD_BUFFER_BYTES: u64 = 1 << 30;
