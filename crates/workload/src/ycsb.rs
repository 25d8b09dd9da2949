//! YCSB's core workload (research/zenfs-rocksdb.md §3.2) on the store: YCSB's property names,
//! its key naming (`user` + FNV-64 of the key number with hashed insert order), its values
//! (printable random bytes, 10 fields of 100), its distributions (scrambled zipfian with
//! θ = 0.99 over 10^10 items, uniform, latest), the RocksDB binding's record layout and
//! read-merge-write updates, and YCSB's `[OVERALL]` / `[READ]` report lines.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use host::lsm::db::Db;
use report::LatencyHistogram;
use sim::{Rng, Sim};

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

/// YCSB's Utils.fnvhash64.
pub fn fnvhash64(mut val: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        h ^= octet;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    (h as i64).unsigned_abs()
}

pub fn key_name(keynum: u64, hashed: bool) -> Vec<u8> {
    let n = if hashed { fnvhash64(keynum) } else { keynum };
    format!("user{n}").into_bytes()
}

/// YCSB's ZipfianGenerator (Gray et al.), θ = 0.99.
#[derive(Clone, Debug)]
struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    fn zeta(n: u64, theta: f64) -> f64 {
        (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
    }

    fn with_zeta(items: u64, zetan: f64) -> Zipfian {
        let theta = 0.99;
        let zeta2 = Self::zeta(2, theta);
        Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    fn new(items: u64) -> Zipfian {
        Self::with_zeta(items, Self::zeta(items, 0.99))
    }

    fn next(&self, rng: &mut Rng) -> u64 {
        let u = rng.below(1 << 53) as f64 / (1u64 << 53) as f64;
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        ((self.items as f64) * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }
}

/// ScrambledZipfianGenerator: a zipfian over 10^10 items (ζ precomputed by YCSB), hashed.
fn scrambled_zipfian() -> Zipfian {
    Zipfian::with_zeta(10_000_000_000, 26.469_028_201_783_02)
}

/// The RocksDB binding's record: per field `[u32 BE name len][name][u32 BE value len][value]`;
/// values are YCSB's RandomByteIterator bytes (printable, from 5-7-bit slices of random ints).
fn record(rng: &mut Rng, fields: &[usize], fieldlength: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.len() * (fieldlength + 14));
    for &f in fields {
        let name = format!("field{f}");
        out.extend_from_slice(&(name.len() as u32).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(fieldlength as u32).to_be_bytes());
        let mut left = fieldlength;
        while left > 0 {
            let r = rng.next_u64() as u32;
            for (i, mask) in [31u32, 63, 95, 31, 63, 95]
                .iter()
                .enumerate()
                .take(left.min(6))
            {
                out.push(b' ' + ((r >> (5 * i)) & mask) as u8);
            }
            left -= left.min(6);
        }
    }
    out
}

/// Overlay the fields of `update` on `base` (both in the binding's layout).
fn merge(base: &[u8], update: &[u8]) -> Vec<u8> {
    fn fields(b: &[u8]) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let mut m = BTreeMap::new();
        let mut at = 0;
        let take = |at: &mut usize| -> Option<Vec<u8>> {
            let n = u32::from_be_bytes(b.get(*at..*at + 4)?.try_into().ok()?) as usize;
            let v = b.get(*at + 4..*at + 4 + n)?.to_vec();
            *at += 4 + n;
            Some(v)
        };
        while at < b.len() {
            let (Some(k), Some(v)) = (take(&mut at), take(&mut at)) else {
                break;
            };
            m.insert(k, v);
        }
        m
    }
    let mut m = fields(base);
    m.extend(fields(update));
    let mut out = Vec::new();
    for (k, v) in m {
        out.extend_from_slice(&(k.len() as u32).to_be_bytes());
        out.extend_from_slice(&k);
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(&v);
    }
    out
}

/// Per-operation figures.
#[derive(Clone, Debug, Default)]
pub struct OpStats {
    pub latency: LatencyHistogram,
    pub ok: u64,
    pub not_found: u64,
}

/// A phase's figures: YCSB's measurements.
#[derive(Clone, Debug)]
pub struct YcsbReport {
    pub phase: &'static str,
    pub seconds: f64,
    pub ops: u64,
    pub by_op: BTreeMap<&'static str, OpStats>,
}

impl YcsbReport {
    /// YCSB's text output.
    pub fn text(&self) -> String {
        let mut s = format!(
            "[OVERALL], RunTime(ms), {:.0}\n[OVERALL], Throughput(ops/sec), {:.1}\n",
            self.seconds * 1e3,
            self.ops as f64 / self.seconds.max(1e-12)
        );
        for (op, st) in &self.by_op {
            let h = &st.latency;
            let us = |ns: u64| ns as f64 / 1e3;
            s.push_str(&format!("[{op}], Operations, {}\n", h.count()));
            if h.count() == 0 {
                // Every one failed (an UPDATE of records that are not there): its latencies
                // are under OP-FAILED.
                s.push_str(&format!("[{op}], Return=NOT_FOUND, {}\n", st.not_found));
                continue;
            }
            s.push_str(&format!(
                "[{op}], AverageLatency(us), {:.3}\n",
                h.mean() / 1e3
            ));
            s.push_str(&format!("[{op}], MinLatency(us), {:.0}\n", us(h.min())));
            s.push_str(&format!("[{op}], MaxLatency(us), {:.0}\n", us(h.max())));
            for p in [95.0, 99.0, 99.9, 99.99] {
                s.push_str(&format!(
                    "[{op}], {}PercentileLatency(us), {:.0}\n",
                    if p == 95.0 || p == 99.0 {
                        format!("{p:.0}th")
                    } else {
                        format!("{p}th")
                    },
                    us(h.percentile(p))
                ));
            }
            if op.ends_with("-FAILED") {
                continue;
            }
            s.push_str(&format!("[{op}], Return=OK, {}\n", st.ok));
            if st.not_found > 0 {
                s.push_str(&format!("[{op}], Return=NOT_FOUND, {}\n", st.not_found));
            }
        }
        s
    }
}

/// Shared state of a phase: the key chooser and what inserts have acknowledged.
struct Keys {
    cfg: YcsbConfig,
    zipf: Option<Zipfian>,
    /// Key numbers handed to inserts so far (load: recordcount; run: grows with inserts).
    inserted: u64,
    /// Inserts handed out and not acknowledged yet: reads choose only below the smallest
    /// (YCSB's AcknowledgedCounterGenerator), so they never ask for a record in flight.
    pending: std::collections::BTreeSet<u64>,
}

impl Keys {
    fn choose(&self, rng: &mut Rng) -> u64 {
        let acked = self.pending.first().copied().unwrap_or(self.inserted);
        let n = acked.max(1);
        match self.cfg.distribution {
            Distribution::Uniform => rng.below(n),
            Distribution::Zipfian => {
                let z = self.zipf.as_ref().expect("zipfian");
                loop {
                    let k = fnvhash64(z.next(rng)) % (n + 2 * self.expected_inserts());
                    if k < n {
                        return k;
                    }
                }
            }
            Distribution::Latest => {
                let z = self.zipf.as_ref().expect("zipfian");
                n - 1 - z.next(rng).min(n - 1)
            }
        }
    }

    fn expected_inserts(&self) -> u64 {
        (self.cfg.operationcount as f64 * self.cfg.insert) as u64
    }
}

/// Load: insert records 0..recordcount.
pub async fn load(sim: &Sim, db: &Rc<Db>, cfg: &YcsbConfig) -> Result<YcsbReport, YcsbError> {
    phase(sim, db, cfg, true).await
}

/// Run: operationcount operations of the configured mix on a loaded store.
pub async fn run(sim: &Sim, db: &Rc<Db>, cfg: &YcsbConfig) -> Result<YcsbReport, YcsbError> {
    phase(sim, db, cfg, false).await
}

async fn phase(
    sim: &Sim,
    db: &Rc<Db>,
    cfg: &YcsbConfig,
    loading: bool,
) -> Result<YcsbReport, YcsbError> {
    cfg.check(!loading)?;
    let values = crate::dataset::Values::open(cfg.dataset)?.map(Rc::new);
    let keys = Rc::new(RefCell::new(Keys {
        zipf: match cfg.distribution {
            Distribution::Uniform => None,
            Distribution::Zipfian => Some(scrambled_zipfian()),
            Distribution::Latest => Some(Zipfian::new(cfg.recordcount.max(2))),
        },
        inserted: if loading { 0 } else { cfg.recordcount },
        pending: Default::default(),
        cfg: cfg.clone(),
    }));
    let by_op: Rc<RefCell<BTreeMap<&'static str, OpStats>>> = Rc::default();
    let total = if loading {
        cfg.recordcount
    } else {
        cfg.operationcount
    };
    let next_op = Rc::new(std::cell::Cell::new(0u64));
    let start = sim.now();
    let mut handles = Vec::new();
    for t in 0..cfg.threads {
        let values = values.clone();
        let (sim, db, cfg, keys, by_op, next_op) = (
            sim.clone(),
            db.clone(),
            cfg.clone(),
            keys.clone(),
            by_op.clone(),
            next_op.clone(),
        );
        let mut rng = Rng::new(cfg.seed).stream(&format!(
            "ycsb-{}-{t}",
            if loading { "load" } else { "run" }
        ));
        let all_fields: Vec<usize> = (0..cfg.fieldcount).collect();
        handles.push(sim.clone().spawn(async move {
            loop {
                let i = next_op.get();
                if i >= total {
                    return Ok::<(), YcsbError>(());
                }
                next_op.set(i + 1);
                let op: &'static str = if loading {
                    "INSERT"
                } else {
                    let x = rng.below(1 << 53) as f64 / (1u64 << 53) as f64;
                    let mut acc = 0.0;
                    let mut pick = "READ";
                    for (name, p) in [
                        ("READ", cfg.read),
                        ("UPDATE", cfg.update),
                        ("INSERT", cfg.insert),
                        ("SCAN", cfg.scan),
                        ("READ-MODIFY-WRITE", cfg.readmodifywrite),
                    ] {
                        acc += p;
                        if x < acc {
                            pick = name;
                            break;
                        }
                    }
                    pick
                };
                let t0 = sim.now();
                let err = |e: host::lsm::db::DbError| YcsbError::Db(e.to_string());
                let found = match op {
                    "INSERT" => {
                        let keynum = {
                            let mut k = keys.borrow_mut();
                            k.inserted += 1;
                            let n = k.inserted - 1;
                            k.pending.insert(n);
                            n
                        };
                        let v = match &values {
                            Some(vals) => vals.next(&mut rng),
                            None => record(&mut rng, &all_fields, cfg.fieldlength),
                        };
                        if let Some(d) = &cfg.dump {
                            let k = key_name(keynum, cfg.hashed);
                            let mut d = d.borrow_mut();
                            d.extend_from_slice(&(k.len() as u32).to_le_bytes());
                            d.extend_from_slice(&k);
                            d.extend_from_slice(&(v.len() as u32).to_le_bytes());
                            d.extend_from_slice(&v);
                        }
                        db.put(&key_name(keynum, cfg.hashed), &v, false)
                            .await
                            .map_err(err)?;
                        keys.borrow_mut().pending.remove(&keynum);
                        true
                    }
                    "READ" => {
                        let k = keys.borrow().choose(&mut rng);
                        db.get(&key_name(k, cfg.hashed))
                            .await
                            .map_err(err)?
                            .is_some()
                    }
                    "SCAN" => {
                        let k = keys.borrow().choose(&mut rng);
                        let len = (cfg.minscanlength
                            + rng.below(cfg.maxscanlength - cfg.minscanlength + 1))
                            as usize;
                        !db.scan(&key_name(k, cfg.hashed), len)
                            .await
                            .map_err(err)?
                            .is_empty()
                    }
                    _ => {
                        // UPDATE and READ-MODIFY-WRITE: the binding reads, overlays one field,
                        // writes the whole record back; a record that is not there is not
                        // written (the binding returns NOT_FOUND).
                        let k = keys.borrow().choose(&mut rng);
                        let name = key_name(k, cfg.hashed);
                        let old = db.get(&name).await.map_err(err)?;
                        // The new value is drawn either way, so that the operations after
                        // this one draw what they would have.
                        let new = match &values {
                            // A dataset value is one blob: the update replaces it.
                            Some(vals) => vals.next(&mut rng),
                            None => {
                                let field = rng.below(cfg.fieldcount as u64) as usize;
                                let upd = record(&mut rng, &[field], cfg.fieldlength);
                                merge(old.as_deref().unwrap_or(&[]), &upd)
                            }
                        };
                        if old.is_some() {
                            db.put(&name, &new, false).await.map_err(err)?;
                        }
                        old.is_some()
                    }
                };
                if let Some(p) = &cfg.progress {
                    p.tick(if loading { "load" } else { "run" }, i + 1, total);
                }
                let mut m = by_op.borrow_mut();
                let latency = sim.now().since(t0).as_ns();
                if op == "UPDATE" && !found {
                    // YCSB's DBWrapper: a failed operation's latency goes to OP-FAILED, its
                    // status to OP's return counts.
                    m.entry("UPDATE-FAILED")
                        .or_default()
                        .latency
                        .record(latency);
                    m.entry(op).or_default().not_found += 1;
                    continue;
                }
                let s = m.entry(op).or_default();
                s.latency.record(latency);
                if found {
                    s.ok += 1;
                } else {
                    s.not_found += 1;
                }
            }
        }));
    }
    for h in handles {
        h.await?;
    }
    let by_op = by_op.borrow().clone();
    Ok(YcsbReport {
        phase: if loading { "load" } else { "run" },
        seconds: sim.now().since(start).as_ns() as f64 / 1e9,
        ops: total,
        by_op,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_hash_like_ycsb_and_zipfian_is_skewed() {
        assert_eq!(key_name(0, false), b"user0");
        assert_ne!(key_name(1, true), key_name(2, true));
        let z = Zipfian::new(1000);
        let mut rng = Rng::new(1);
        let mut hist = vec![0u32; 1000];
        for _ in 0..100_000 {
            hist[z.next(&mut rng).min(999) as usize] += 1;
        }
        // Item 0 is the most popular, far above the uniform 100.
        assert!(
            hist[0] > 5_000 && hist[0] > hist[10] && hist[10] > hist[500],
            "{:?}",
            &hist[..12]
        );
    }

    #[test]
    fn records_are_printable_and_merge_by_field() {
        let mut rng = Rng::new(2);
        let r = record(&mut rng, &[0, 1, 2], 100);
        assert_eq!(r.len(), 3 * (4 + 6 + 4 + 100));
        let u = record(&mut rng, &[1], 100);
        let m = merge(&r, &u);
        assert_eq!(m.len(), r.len());
        assert!(m.windows(u.len()).any(|w| w == u.as_slice()));
    }

    #[test]
    fn properties_are_checked() {
        let mut c = YcsbConfig::default();
        c.load_file(
            "# workload a\nrecordcount=10\nreadproportion=0.5\nrequestdistribution=zipfian\n",
        )
        .expect("parses");
        assert_eq!(
            (c.recordcount, c.read, c.distribution),
            (10, 0.5, Distribution::Zipfian)
        );
        assert!(c.set("readproportion", "1.5").is_err());
        assert!(c
            .set("recordcunt", "5")
            .unwrap_err()
            .to_string()
            .contains("recordcunt"));
    }

    #[test]
    fn counts_are_checked_as_ycsb_does() {
        let err = |name: &str, value: &str| {
            YcsbConfig::default()
                .set(name, value)
                .expect_err(value)
                .to_string()
        };
        let max = u64::MAX.to_string();
        for name in [
            "recordcount",
            "operationcount",
            "fieldlength",
            "maxscanlength",
            "threadcount",
        ] {
            let e = err(name, &max);
            assert!(e.contains(name) && e.contains("Java int"), "{e}");
        }
        for name in [
            "fieldcount",
            "maxscanlength",
            "minscanlength",
            "threadcount",
        ] {
            let e = err(name, "0");
            assert!(e.contains(name) && e.contains("at least 1"), "{e}");
        }
        let e = err("scanlengthdistribution", "bogus");
        assert!(
            e.contains("Distribution \"bogus\" not allowed for scan length"),
            "{e}"
        );
        assert!(err("scanlengthdistribution", "zipfian").contains("uniform"));
        let mut c = YcsbConfig::default();
        c.set("scanlengthdistribution", "uniform").expect("uniform");
        c.set("recordcount", "2147483647").expect("YCSB's largest");
    }

    #[test]
    fn a_run_without_operations_or_with_huge_records_is_refused() {
        let mut c = YcsbConfig::default();
        for p in [
            "readproportion",
            "updateproportion",
            "insertproportion",
            "scanproportion",
            "readmodifywriteproportion",
        ] {
            c.set(p, "0").expect("a proportion");
        }
        assert!(c.check(false).is_ok(), "a load chooses no operations");
        let e = c.check(true).expect_err("nothing to run").to_string();
        assert!(e.contains("are all 0"), "{e}");
        let c = YcsbConfig {
            minscanlength: 10,
            maxscanlength: 5,
            ..YcsbConfig::default()
        };
        assert!(c
            .check(true)
            .unwrap_err()
            .to_string()
            .contains("minscanlength"));
        let c = YcsbConfig {
            threads: 2000,
            ..YcsbConfig::default()
        };
        assert!(c
            .check(true)
            .unwrap_err()
            .to_string()
            .contains("threadcount"));
        let c = YcsbConfig {
            fieldlength: i32::MAX as usize,
            ..YcsbConfig::default()
        };
        assert!(c
            .check(false)
            .unwrap_err()
            .to_string()
            .contains("fieldlength"));
        assert!(YcsbConfig::default().check(true).is_ok());
    }
}
