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
        let frac = || {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(|| bad("not a proportion between 0 and 1"))
        };
        match name {
            "recordcount" => self.recordcount = num()?,
            "operationcount" => self.operationcount = num()?,
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
            "fieldcount" => self.fieldcount = num()?.max(1) as usize,
            "fieldlength" => self.fieldlength = num()? as usize,
            "insertorder" => {
                self.hashed = match value.trim() {
                    "hashed" => true,
                    "ordered" => false,
                    _ => return Err(bad("use hashed or ordered")),
                }
            }
            "maxscanlength" => self.maxscanlength = num()?.max(1),
            "threadcount" => self.threads = num()?.max(1) as usize,
            "dataset" => {
                self.dataset =
                    crate::dataset::Dataset::parse(value.trim()).map_err(|e| bad(&e.to_string()))?
            }
            // Accepted and without effect here.
            "workload"
            | "readallfields"
            | "writeallfields"
            | "scanlengthdistribution"
            | "table"
            | "minscanlength"
            | "zeropadding"
            | "fieldlengthdistribution"
            | "dataintegrity"
            | "measurementtype" => {}
            _ => return Err(bad("unknown property")),
        }
        Ok(())
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
                        let len = 1 + rng.below(cfg.maxscanlength) as usize;
                        !db.scan(&key_name(k, cfg.hashed), len)
                            .await
                            .map_err(err)?
                            .is_empty()
                    }
                    _ => {
                        // UPDATE and READ-MODIFY-WRITE: the binding reads, overlays one field,
                        // writes the whole record back.
                        let k = keys.borrow().choose(&mut rng);
                        let name = key_name(k, cfg.hashed);
                        let old = db.get(&name).await.map_err(err)?;
                        let new = match &values {
                            // A dataset value is one blob: the update replaces it.
                            Some(vals) => vals.next(&mut rng),
                            None => {
                                let field = rng.below(cfg.fieldcount as u64) as usize;
                                let upd = record(&mut rng, &[field], cfg.fieldlength);
                                merge(old.as_deref().unwrap_or(&[]), &upd)
                            }
                        };
                        db.put(&name, &new, false).await.map_err(err)?;
                        old.is_some()
                    }
                };
                if let Some(p) = &cfg.progress {
                    p.tick(if loading { "load" } else { "run" }, i + 1, total);
                }
                let mut m = by_op.borrow_mut();
                let s = m.entry(op).or_default();
                s.latency.record(sim.now().since(t0).as_ns());
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
}
