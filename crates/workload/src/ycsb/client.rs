//! The client: a load or run phase as YCSB's client threads (tasks on the virtual clock) doing
//! the configured mix against the store (throttled to `target`, stopped by
//! `maxexecutiontime`), the RocksDB binding's record layout and read-merge-write updates, and
//! the phase's figures: znslab's per-operation statistics and YCSB's measurements
//! ([`super::measure`]), with YCSB's status lines as the virtual clock passes.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use host::lsm::db::Db;
use report::LatencyHistogram;
use sim::{Rng, Sim};

use super::generator::{key_name_padded, scrambled_zipfian, unit, FieldLengthGen, Keys, Zipfian};
use super::measure::{self, Measurements};
use super::properties::{Distribution, YcsbConfig, YcsbError};

/// The RocksDB binding's record: per field `[u32 BE name len][name][u32 BE value len][value]`;
/// values are YCSB's RandomByteIterator bytes (printable, from 5-7-bit slices of random ints).
#[cfg(test)]
pub(super) fn record(rng: &mut Rng, fields: &[usize], fieldlength: usize) -> Vec<u8> {
    record_fields(
        rng,
        "field",
        fields,
        &FieldLengthGen::Constant(fieldlength),
        fieldlength as u64,
    )
}

/// A record of `fields` named `prefix` + number, each of a length drawn from `lengths`.
pub(super) fn record_fields(
    rng: &mut Rng,
    prefix: &str,
    fields: &[usize],
    lengths: &FieldLengthGen,
    max_length: u64,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.len() * (max_length as usize + 14));
    for &f in fields {
        let fieldlength = lengths.next(rng, max_length);
        let name = format!("{prefix}{f}");
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

/// A phase's figures: znslab's per-operation statistics (`by_op`, which the JSON outputs
/// show; a read-modify-write's read and update are counted under READ-MODIFY-WRITE only) and
/// YCSB's measurements as YCSB names and counts them (`measurements`).
#[derive(Clone, Debug)]
pub struct YcsbReport {
    pub phase: &'static str,
    pub seconds: f64,
    /// Operations done (operationcount, or fewer when maxexecutiontime stopped the phase).
    pub ops: u64,
    pub by_op: BTreeMap<&'static str, OpStats>,
    pub measurements: Measurements,
}

impl YcsbReport {
    /// YCSB's RunTime(ms): whole virtual milliseconds.
    pub fn runtime_ms(&self) -> u64 {
        (self.seconds * 1e3).floor() as u64
    }

    /// What YCSB's exporter writes (Text unless `exporter` says otherwise).
    pub fn export(&self) -> String {
        measure::render(
            self.measurements.cfg.exporter,
            &self.measurements.export(self.runtime_ms(), self.ops),
        )
    }

    /// YCSB's text output (the Text exporter's lines, whatever `exporter` says).
    pub fn text(&self) -> String {
        measure::render(
            measure::Exporter::Text,
            &self.measurements.export(self.runtime_ms(), self.ops),
        )
    }
}

/// Load: insert records insertstart..insertstart+insertcount (recordcount records by default).
pub async fn load(sim: &Sim, db: &Rc<Db>, cfg: &YcsbConfig) -> Result<YcsbReport, YcsbError> {
    phase(sim, db, cfg, true).await
}

/// Run: operationcount operations of the configured mix on a loaded store.
pub async fn run(sim: &Sim, db: &Rc<Db>, cfg: &YcsbConfig) -> Result<YcsbReport, YcsbError> {
    phase(sim, db, cfg, false).await
}

/// StatusThread's state: lines are due every `status.interval` virtual seconds; each is printed
/// when the first operation after it completes (or at the end), with the figures of that
/// moment, so they are those YCSB's thread would have seen at the deadline.
struct Status {
    start: sim::SimInstant,
    next_ms: u64,
    interval_ms: u64,
    last_ops: u64,
    interval_start_ms: u64,
}

impl Status {
    #[allow(clippy::too_many_arguments)]
    fn due(
        &mut self,
        cfg: &YcsbConfig,
        m: &mut Measurements,
        now: sim::SimInstant,
        done: u64,
        todo: u64,
        last: bool,
    ) {
        let elapsed = now.since(self.start).as_ns() / 1_000_000;
        let clock_ms =
            |e: u64| self.start.since(sim::SimInstant::from_ns(0)).as_ns() / 1_000_000 + e;
        // The lines of the deadlines passed (at the end: those passed before it, as the
        // status thread's wait ends at the deadline unless the clients finished first), then
        // at the end the final line.
        while last || self.next_ms <= elapsed {
            let periodic = self.next_ms < elapsed || (!last && self.next_ms == elapsed);
            let at = if periodic { self.next_ms } else { elapsed };
            let line = measure::status_line(
                &cfg.label,
                clock_ms(at),
                at,
                done,
                todo,
                self.last_ops,
                self.interval_start_ms,
                &m.summary(),
            );
            cfg.emit_status(&line);
            self.last_ops = done;
            self.interval_start_ms = at;
            if !periodic {
                break;
            }
            self.next_ms += self.interval_ms;
        }
    }
}

async fn phase(
    sim: &Sim,
    db: &Rc<Db>,
    cfg: &YcsbConfig,
    loading: bool,
) -> Result<YcsbReport, YcsbError> {
    let mut cfg = cfg.clone();
    cfg.prepare()?;
    cfg.check(!loading)?;
    cfg.measure.check().map_err(|why| YcsbError::Property {
        name: "measurementtype".into(),
        why,
    })?;
    let cfg = cfg;
    let values = match &cfg.payload {
        Some(m) if cfg.dataset.corpus().is_some() => {
            Some(Rc::new(crate::dataset::Values::modeled(cfg.dataset, &m.0)))
        }
        _ => crate::dataset::Values::open(cfg.dataset)?.map(Rc::new),
    };
    let keys = Rc::new(RefCell::new(Keys {
        zipf: match cfg.distribution {
            Distribution::Zipfian => Some(scrambled_zipfian()),
            Distribution::Latest => Some(Zipfian::new(cfg.recordcount.max(2))),
            _ => None,
        },
        inserted: if loading {
            cfg.insertstart
        } else {
            cfg.recordcount
        },
        pending: Default::default(),
        sequence: 0,
        cfg: cfg.clone(),
    }));
    let lengths = Rc::new(FieldLengthGen::new(&cfg));
    let scan_zipf = Rc::new(if cfg.scanzipfian {
        Some(Zipfian::new(
            (cfg.maxscanlength - cfg.minscanlength + 1).max(2),
        ))
    } else {
        None
    });
    let by_op: Rc<RefCell<BTreeMap<&'static str, OpStats>>> = Rc::default();
    let ycsb = Rc::new(RefCell::new(Measurements::new(
        cfg.measure.clone(),
        cfg.status,
    )));
    // operationcount 0 runs until maxexecutiontime (check() refuses it without one).
    let total = if loading {
        cfg.insertcount.unwrap_or(cfg.recordcount)
    } else if cfg.operationcount == 0 {
        u64::MAX
    } else {
        cfg.operationcount
    };
    let next_op = Rc::new(std::cell::Cell::new(0u64));
    let done = Rc::new(std::cell::Cell::new(0u64));
    let start = sim.now();
    let status = Rc::new(RefCell::new(Status {
        start,
        next_ms: 0,
        interval_ms: cfg.status_interval.saturating_mul(1000).max(1),
        last_ops: 0,
        interval_start_ms: 0,
    }));
    let todo = {
        let (done, total) = (done.clone(), total);
        move || {
            if total == u64::MAX {
                0
            } else {
                total - done.get()
            }
        }
    };
    if cfg.status {
        status
            .borrow_mut()
            .due(&cfg, &mut ycsb.borrow_mut(), start, 0, todo(), false);
    }
    let deadline = (cfg.maxexecutiontime > 0)
        .then(|| start + sim::SimDuration::from_secs(cfg.maxexecutiontime));
    // Client: the target spread over the threads, as nanoseconds between one thread's ops.
    let tick_ns = (cfg.target > 0).then(|| 1e9 * cfg.threads as f64 / cfg.target as f64);
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
        let (ycsb, status, done, todo, lengths, scan_zipf) = (
            ycsb.clone(),
            status.clone(),
            done.clone(),
            todo.clone(),
            lengths.clone(),
            scan_zipf.clone(),
        );
        let mut rng = Rng::new(cfg.seed).stream(&format!(
            "ycsb-{}-{t}",
            if loading { "load" } else { "run" }
        ));
        let all_fields: Vec<usize> = (0..cfg.fieldcount).collect();
        let max_length = cfg.max_field_length();
        handles.push(sim.clone().spawn(async move {
            let thread_start = sim.now();
            if let Some(tick) = tick_ns {
                // ClientThread: below one op per ms and thread, start at a random point of
                // the first tick.
                if tick >= 1e6 {
                    let mut r = Rng::new(cfg.seed).stream(&format!("ycsb-target-{t}"));
                    sim.sleep(sim::SimDuration::from_ns(r.below(tick as u64)))
                        .await;
                }
            }
            let thread_start = if tick_ns.is_some() {
                sim.now()
            } else {
                thread_start
            };
            let mut mine = 0u64;
            loop {
                let i = next_op.get();
                if i >= total || deadline.is_some_and(|d| sim.now() >= d) {
                    break;
                }
                next_op.set(i + 1);
                let op: &'static str = if loading {
                    "INSERT"
                } else {
                    let x = unit(&mut rng);
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
                let mut t_mid = t0;
                let mut scanned = 0usize;
                let err = |e: host::lsm::db::DbError| YcsbError::Db(e.to_string());
                let key = |k: u64| key_name_padded(k, cfg.hashed, cfg.zeropadding);
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
                            None => record_fields(
                                &mut rng,
                                &cfg.fieldnameprefix,
                                &all_fields,
                                &lengths,
                                max_length,
                            ),
                        };
                        if let Some(d) = &cfg.dump {
                            let k = key(keynum);
                            let mut d = d.borrow_mut();
                            d.extend_from_slice(&(k.len() as u32).to_le_bytes());
                            d.extend_from_slice(&k);
                            d.extend_from_slice(&(v.len() as u32).to_le_bytes());
                            d.extend_from_slice(&v);
                        }
                        db.put(&key(keynum), &v, false).await.map_err(err)?;
                        keys.borrow_mut().pending.remove(&keynum);
                        true
                    }
                    "READ" => {
                        let k = keys.borrow_mut().choose(&mut rng);
                        db.get(&key(k)).await.map_err(err)?.is_some()
                    }
                    "SCAN" => {
                        let k = keys.borrow_mut().choose(&mut rng);
                        let len = match scan_zipf.as_ref() {
                            Some(z) => {
                                (cfg.minscanlength + z.next(&mut rng)).min(cfg.maxscanlength)
                            }
                            None => {
                                cfg.minscanlength
                                    + rng.below(cfg.maxscanlength - cfg.minscanlength + 1)
                            }
                        } as usize;
                        scanned = db.scan(&key(k), len).await.map_err(err)?.len();
                        scanned > 0
                    }
                    _ => {
                        // UPDATE and READ-MODIFY-WRITE: the binding reads, overlays one field
                        // (every field with writeallfields), writes the whole record back; a
                        // record that is not there is not written (the binding returns
                        // NOT_FOUND).
                        let k = keys.borrow_mut().choose(&mut rng);
                        let name = key(k);
                        let old = db.get(&name).await.map_err(err)?;
                        t_mid = sim.now();
                        // The new value is drawn either way, so that the operations after
                        // this one draw what they would have.
                        let new = match &values {
                            // A dataset value is one blob: the update replaces it.
                            Some(vals) => vals.next(&mut rng),
                            None => {
                                let upd = if cfg.writeallfields {
                                    record_fields(
                                        &mut rng,
                                        &cfg.fieldnameprefix,
                                        &all_fields,
                                        &lengths,
                                        max_length,
                                    )
                                } else {
                                    let field = rng.below(cfg.fieldcount as u64) as usize;
                                    record_fields(
                                        &mut rng,
                                        &cfg.fieldnameprefix,
                                        &[field],
                                        &lengths,
                                        max_length,
                                    )
                                };
                                merge(old.as_deref().unwrap_or(&[]), &upd)
                            }
                        };
                        if old.is_some() {
                            db.put(&name, &new, false).await.map_err(err)?;
                        }
                        old.is_some()
                    }
                };
                mine += 1;
                if let Some(p) = &cfg.progress {
                    if total != u64::MAX {
                        p.tick(if loading { "load" } else { "run" }, i + 1, total);
                    }
                }
                let now = sim.now();
                let latency = now.since(t0).as_ns();
                // YCSB's measurements (DBWrapper and CoreWorkload), after any status line
                // that fell due before this operation completed.
                {
                    let mut y = ycsb.borrow_mut();
                    if cfg.status {
                        status
                            .borrow_mut()
                            .due(&cfg, &mut y, now, done.get(), todo(), false);
                    }
                    let ms = now.since(start).as_ns() / 1_000_000;
                    let db_op = |y: &mut Measurements, name: &str, ns: u64, ok: bool| {
                        if ok {
                            y.measure(name, ns, ms);
                            y.report_status(name, "OK");
                        } else {
                            let failed = y.cfg.failed_name(name, "NOT_FOUND");
                            y.measure(&failed, ns, ms);
                            y.report_status(name, "NOT_FOUND");
                        }
                    };
                    match op {
                        "READ-MODIFY-WRITE" => {
                            // doTransactionReadModifyWrite: the read and the update are
                            // measured as such, and the whole under READ-MODIFY-WRITE.
                            db_op(&mut y, "READ", t_mid.since(t0).as_ns(), found);
                            db_op(&mut y, "UPDATE", now.since(t_mid).as_ns(), found);
                            y.measure("READ-MODIFY-WRITE", latency, ms);
                        }
                        "SCAN" => {
                            db_op(&mut y, "SCAN", latency, true);
                            if scanned > 0 {
                                y.measure(
                                    "SCAN-LATENCY-PER-RECORD",
                                    latency / 1000 / scanned as u64 * 1000,
                                    ms,
                                );
                            }
                        }
                        _ => db_op(&mut y, op, latency, found),
                    }
                }
                done.set(done.get() + 1);
                {
                    let mut m = by_op.borrow_mut();
                    if op == "UPDATE" && !found {
                        // YCSB's DBWrapper: a failed operation's latency goes to OP-FAILED,
                        // its status to OP's return counts.
                        m.entry("UPDATE-FAILED")
                            .or_default()
                            .latency
                            .record(latency);
                        m.entry(op).or_default().not_found += 1;
                    } else {
                        let s = m.entry(op).or_default();
                        s.latency.record(latency);
                        if found {
                            s.ok += 1;
                        } else {
                            s.not_found += 1;
                        }
                    }
                }
                if let Some(tick) = tick_ns {
                    // throttleNanos: the next op of this thread waits for its tick.
                    let due = thread_start + sim::SimDuration::from_ns((mine as f64 * tick) as u64);
                    if due > sim.now() {
                        sim.sleep_until(due).await;
                    }
                }
            }
            // DB.cleanup, measured per thread (nothing to wait for: the store stays open).
            let ms = sim.now().since(start).as_ns() / 1_000_000;
            ycsb.borrow_mut().measure("CLEANUP", 0, ms);
            Ok::<(), YcsbError>(())
        }));
    }
    for h in handles {
        h.await?;
    }
    if cfg.status {
        status.borrow_mut().due(
            &cfg,
            &mut ycsb.borrow_mut(),
            sim.now(),
            done.get(),
            todo(),
            true,
        );
    }
    let by_op = by_op.borrow().clone();
    let measurements = ycsb.borrow().clone();
    Ok(YcsbReport {
        phase: if loading { "load" } else { "run" },
        seconds: sim.now().since(start).as_ns() as f64 / 1e9,
        ops: done.get(),
        by_op,
        measurements,
    })
}
