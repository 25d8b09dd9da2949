//! The client: a load or run phase as YCSB's client threads (tasks on the virtual clock) doing
//! the configured mix against the store, the RocksDB binding's record layout and
//! read-merge-write updates, and YCSB's `[OVERALL]` / `[READ]` report lines.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use host::lsm::db::Db;
use report::LatencyHistogram;
use sim::{Rng, Sim};

use super::generator::{key_name, scrambled_zipfian, Keys, Zipfian};
use super::properties::{Distribution, YcsbConfig, YcsbError};

/// The RocksDB binding's record: per field `[u32 BE name len][name][u32 BE value len][value]`;
/// values are YCSB's RandomByteIterator bytes (printable, from 5-7-bit slices of random ints).
pub(super) fn record(rng: &mut Rng, fields: &[usize], fieldlength: usize) -> Vec<u8> {
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
pub(super) fn merge(base: &[u8], update: &[u8]) -> Vec<u8> {
    pub(super) fn fields(b: &[u8]) -> BTreeMap<Vec<u8>, Vec<u8>> {
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
