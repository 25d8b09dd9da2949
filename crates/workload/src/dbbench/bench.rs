//! The benchmarks' loops, as db_bench's methods run them (`DoWrite`, `ReadRandom`,
//! `SeekRandom`, `ReadSequential`, `UpdateRandom`, `DoDelete`, `ReadRandomWriteRandom`,
//! `MixGraph`, `ReadWhileWriting`'s `BGWriter`): each of `threads` threads does its own
//! `num` (or `reads`, `deletes`) operations, or runs for `--duration` simulated seconds; each
//! thread keeps its own figures and db_bench's merge of them makes the report line.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use host::lsm::db::Db;
use host::lsm::memtable::WriteBatch;
use report::LatencyHistogram;
use sim::{Rng, Sim, SimInstant};

use super::output::{Histogram, OpType};
use super::{make_key, BenchResult, DbBenchConfig, DbBenchError, ValueSource};

/// What one benchmark does, from its name (db_bench's dispatch in `Benchmark::Run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Writes keys in order (fillseq, fillbatch), at random (the others), or each key once
    /// in a random order (filluniquerandom).
    Write {
        seq: bool,
        unique: bool,
    },
    /// readrandom; with `Plan::writer`, readwhilewriting.
    ReadRandom,
    MultiReadRandom,
    ReadSeq,
    SeekRandom,
    UpdateRandom,
    Delete {
        seq: bool,
    },
    ReadRandomWriteRandom,
    MixGraph,
    /// compact: flush and wait for the compactions (one op, a report line).
    Compact,
    /// No report line: flush, waitforcompaction, stats, levelstats.
    Flush,
    WaitForCompaction,
    Stats,
    LevelStats,
}

/// A benchmark's parameters after db_bench's per-name adjustments.
#[derive(Clone, Debug)]
pub struct Plan {
    pub kind: Kind,
    /// Keys are drawn from 0..num (fillsync, fill100K: num/1000).
    pub num: u64,
    /// Operations each thread does (without --duration).
    pub ops: u64,
    pub batch: u64,
    pub value_size: usize,
    pub key_size: usize,
    pub sync: bool,
    /// One more thread writes random keys while the others run (readwhilewriting,
    /// seekrandomwhilewriting); its writes are not in the report.
    pub writer: bool,
}

/// The benchmarks znslab runs (db_bench's names).
pub const KNOWN: &[&str] = &[
    "fillseq",
    "fillbatch",
    "fillrandom",
    "filluniquerandom",
    "overwrite",
    "fillsync",
    "fill100K",
    "readrandom",
    "readrandomsmall",
    "readmissing",
    "multireadrandom",
    "readseq",
    "readtocache",
    "readreverse",
    "seekrandom",
    "seekrandomwhilewriting",
    "updaterandom",
    "deleterandom",
    "deleteseq",
    "readrandomwriterandom",
    "readwhilewriting",
    "mixgraph",
    "compact",
    "flush",
    "waitforcompaction",
    "stats",
    "levelstats",
];

pub fn plan(name: &str, cfg: &DbBenchConfig) -> Option<Plan> {
    let reads = cfg.reads.unwrap_or(cfg.num);
    let writes = cfg.writes.unwrap_or(cfg.num);
    let mut p = Plan {
        kind: Kind::Write {
            seq: false,
            unique: false,
        },
        num: cfg.num,
        ops: writes,
        batch: cfg.batch_size.max(1),
        value_size: cfg.value_size,
        key_size: cfg.key_size,
        sync: cfg.sync,
        writer: false,
    };
    let seq = Kind::Write {
        seq: true,
        unique: false,
    };
    match name {
        "fillseq" => p.kind = seq,
        "fillbatch" => {
            p.kind = seq;
            p.batch = 1000;
        }
        "fillrandom" | "overwrite" => {}
        "filluniquerandom" => {
            p.kind = Kind::Write {
                seq: false,
                unique: true,
            }
        }
        "fillsync" => {
            p.num /= 1000;
            p.ops = p.num;
            p.sync = true;
        }
        "fill100K" => {
            p.num /= 1000;
            p.ops = p.num;
            p.value_size = 100 * 1000;
        }
        "readrandom" | "readmissing" | "readrandomsmall" | "readwhilewriting" => {
            p.kind = Kind::ReadRandom;
            p.ops = reads;
            match name {
                "readmissing" => p.key_size += 1,
                "readrandomsmall" => p.ops /= 1000,
                "readwhilewriting" => p.writer = true,
                _ => {}
            }
        }
        "multireadrandom" => {
            p.kind = Kind::MultiReadRandom;
            p.ops = reads;
        }
        "readseq" | "readreverse" => {
            p.kind = Kind::ReadSeq;
            p.ops = reads;
        }
        // db_bench: one thread reads num entries.
        "readtocache" => {
            p.kind = Kind::ReadSeq;
            p.ops = cfg.num;
        }
        "seekrandom" | "seekrandomwhilewriting" => {
            p.kind = Kind::SeekRandom;
            p.ops = reads;
            p.writer = name == "seekrandomwhilewriting";
        }
        "updaterandom" => {
            p.kind = Kind::UpdateRandom;
            p.ops = readwrites(cfg);
        }
        "deleterandom" | "deleteseq" => {
            p.kind = Kind::Delete {
                seq: name == "deleteseq",
            };
            p.ops = cfg.deletes.unwrap_or(cfg.num);
        }
        "readrandomwriterandom" => {
            p.kind = Kind::ReadRandomWriteRandom;
            p.ops = readwrites(cfg);
        }
        "mixgraph" => {
            p.kind = Kind::MixGraph;
            p.ops = reads;
        }
        "compact" => p.kind = Kind::Compact,
        "flush" => p.kind = Kind::Flush,
        "waitforcompaction" => p.kind = Kind::WaitForCompaction,
        "stats" => p.kind = Kind::Stats,
        "levelstats" => p.kind = Kind::LevelStats,
        _ => return None,
    }
    Some(p)
}

/// db_bench's `readwrites_`: num, unless --reads or --writes is given (the larger).
fn readwrites(cfg: &DbBenchConfig) -> u64 {
    match (cfg.reads, cfg.writes) {
        (None, None) => cfg.num,
        (r, w) => r.unwrap_or(0).max(w.unwrap_or(0)),
    }
}

/// Counters the `--statistics` block reports (RocksDB's ticker names), beyond the store's.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub keys_written: u64,
    pub bytes_written: u64,
    pub keys_read: u64,
    pub keys_found: u64,
    pub bytes_read: u64,
    pub seeks: u64,
    pub seeks_found: u64,
    pub nexts: u64,
    pub iter_bytes: u64,
    pub synced_writes: u64,
    pub multiget_calls: u64,
    pub multiget_keys: u64,
    pub deletes: u64,
}

/// One thread's figures (db_bench's `Stats`).
pub(super) struct ThreadStats {
    pub(super) ops: u64,
    pub(super) found: u64,
    pub(super) written: u64,
    pub(super) read_bytes: u64,
    pub(super) finish: SimInstant,
    pub(super) hist: BTreeMap<OpType, Histogram>,
    pub(super) message: String,
}

/// db_bench's `Duration`: `ops` operations, or with `seconds` > 0 until that much time has
/// passed, looked at every `stage` operations.
pub(super) struct Duration {
    seconds: u64,
    ops: u64,
    stage: u64,
    done: u64,
    start: SimInstant,
}

impl Duration {
    pub(super) fn done(&mut self, sim: &Sim, n: u64) -> bool {
        let prev = self.done;
        self.done += n;
        if self.seconds > 0 {
            let stage = self.stage.max(1);
            if self.done / stage != prev / stage {
                return sim.now().since(self.start).as_ns() / 1_000_000_000 >= self.seconds;
            }
            return false;
        }
        self.done > self.ops
    }
}

/// Shared by one benchmark's threads.
pub(super) struct Shared {
    pub(super) sim: Sim,
    pub(super) db: Rc<Db>,
    pub(super) cfg: DbBenchConfig,
    pub(super) plan: Plan,
    name: String,
    latency: RefCell<LatencyHistogram>,
    intervals: RefCell<super::intervals::IntervalRecorder>,
    pub(super) counters: Rc<RefCell<Counters>>,
    ops_done: Cell<u64>,
    total: u64,
    /// `--benchmark_write_rate_limit`: when the next write may start (shared by the threads,
    /// as db_bench's `write_rate_limiter`).
    write_next: Cell<SimInstant>,
}

impl Shared {
    /// db_bench's `write_rate_limiter->Request(bytes)` after a write: wait until `bytes` fit
    /// in `--benchmark_write_rate_limit` bytes per second (a smooth rate where RocksDB's
    /// limiter refills every 100 ms).
    async fn limit_writes(&self, bytes: u64) {
        let rate = self.cfg.benchmark_write_rate_limit;
        if rate == 0 {
            return;
        }
        let now = self.sim.now();
        let start = if self.write_next.get() > now {
            self.write_next.get()
        } else {
            now
        };
        let ns = (bytes as u128 * 1_000_000_000 / rate as u128).min(u64::MAX as u128) as u64;
        self.write_next.set(start + sim::SimDuration::from_ns(ns));
        if start > now {
            self.sim.sleep_until(start).await;
        }
    }

    fn tick(&self) {
        self.ops_done.set(self.ops_done.get() + 1);
        if let Some(p) = &self.cfg.progress {
            p.tick(&self.name, self.ops_done.get(), self.total);
        }
    }
}

pub(super) fn db_err(e: host::lsm::db::DbError) -> DbBenchError {
    DbBenchError::Db(e.to_string())
}

pub async fn run_bench(
    sim: &Sim,
    db: &Rc<Db>,
    name: &str,
    plan: Plan,
    cfg: &DbBenchConfig,
    dataset: Option<Rc<crate::dataset::Values>>,
    counters: Rc<RefCell<Counters>>,
) -> Result<BenchResult, DbBenchError> {
    let start = sim.now();
    let threads = cfg.threads;
    let sh = Rc::new(Shared {
        sim: sim.clone(),
        db: db.clone(),
        cfg: cfg.clone(),
        plan: plan.clone(),
        name: name.to_string(),
        latency: RefCell::new(LatencyHistogram::new()),
        intervals: RefCell::new(super::intervals::IntervalRecorder::new(
            start,
            cfg.report_interval_seconds,
            cfg.latency_interval_ms,
        )),
        counters,
        ops_done: Cell::new(0),
        total: plan.ops.saturating_mul(threads as u64),
        write_next: Cell::new(sim.now()),
    });
    let mut handles = Vec::new();
    // readwhilewriting's writer runs while any reader does.
    let readers_left = Rc::new(Cell::new(threads));
    // readtocache runs one thread.
    let threads = if name == "readtocache" { 1 } else { threads };
    for t in 0..threads {
        let sh = sh.clone();
        let mut rng = Rng::new(cfg.seed).stream(&format!("{name}-{t}"));
        let values = ValueSource::new(&mut rng, cfg, plan.value_size, dataset.clone());
        let left = readers_left.clone();
        handles.push(sim.clone().spawn(async move {
            let r = thread(&sh, t, rng, values).await;
            left.set(left.get() - 1);
            r
        }));
    }
    let writer = if plan.writer {
        let sh = sh.clone();
        let mut rng = Rng::new(cfg.seed).stream("writer");
        let mut values = ValueSource::new(&mut rng, cfg, plan.value_size, dataset.clone());
        let left = readers_left.clone();
        Some(sim.clone().spawn(async move {
            while left.get() > 0 {
                let k = make_key(rng.below(sh.cfg.num), sh.cfg.key_size);
                let v = values.next(&mut rng);
                sh.db.put(&k, &v, sh.cfg.sync).await.map_err(db_err)?;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.keys_written += 1;
                    c.bytes_written += (k.len() + v.len()) as u64;
                    c.synced_writes += u64::from(sh.cfg.sync);
                }
                sh.limit_writes((k.len() + v.len()) as u64).await;
            }
            Ok::<(), DbBenchError>(())
        }))
    } else {
        None
    };
    let mut stats = Vec::new();
    for h in handles {
        stats.push(h.await?);
    }
    if let Some(w) = writer {
        w.await?;
    }
    let elapsed = sim.now().since(start).as_ns() as f64 / 1e9;
    let mut hist: BTreeMap<OpType, Histogram> = BTreeMap::new();
    for s in &stats {
        for (op, h) in &s.hist {
            hist.entry(*op).or_default().merge(h);
        }
    }
    let latency = sh.latency.borrow().clone();
    let intervals = sh
        .intervals
        .replace(super::intervals::IntervalRecorder::new(start, 0, 0));
    Ok(BenchResult {
        name: name.to_string(),
        ops: stats.iter().map(|s| s.ops).sum(),
        found: stats.iter().map(|s| s.found).sum(),
        seconds: elapsed,
        thread_seconds: stats
            .iter()
            .map(|s| s.finish.since(start).as_ns() as f64 / 1e9)
            .sum(),
        bytes: stats.iter().map(|s| s.written).sum(),
        read_bytes: stats.iter().map(|s| s.read_bytes).sum(),
        latency,
        hist,
        // db_bench keeps the message of one thread.
        message: stats
            .iter()
            .map(|s| s.message.clone())
            .find(|m| !m.is_empty())
            .unwrap_or_default(),
        printed: super::Printed::Line,
        intervals: intervals.finish(sim.now()),
    })
}

async fn thread(
    sh: &Shared,
    t: usize,
    mut rng: Rng,
    mut values: ValueSource,
) -> Result<ThreadStats, DbBenchError> {
    let (sim, db, cfg, p) = (&sh.sim, &sh.db, &sh.cfg, &sh.plan);
    let mut st = ThreadStats {
        ops: 0,
        found: 0,
        written: 0,
        read_bytes: 0,
        finish: sim.now(),
        hist: BTreeMap::new(),
        message: String::new(),
    };
    let mut dur = Duration {
        seconds: cfg.duration,
        ops: p.ops,
        stage: cfg.ops_between_duration_checks,
        done: 0,
        start: sim.now(),
    };
    let record = |st: &mut ThreadStats, op: OpType, n: u64, t0: SimInstant| {
        let ns = sim.now().since(t0).as_ns();
        st.ops += n;
        st.hist.entry(op).or_default().add(ns / 1000);
        sh.latency.borrow_mut().record(ns);
        sh.intervals.borrow_mut().record(t0, sim.now(), ns, n);
        for _ in 0..n {
            sh.tick();
        }
    };
    match p.kind {
        Kind::Write { seq, unique } => {
            let mut i = 0u64;
            // db_bench's UNIQUE_RANDOM: 0..num shuffled, drawn in turn.
            let order: Vec<u64> = if unique {
                let mut v: Vec<u64> = (0..p.num).collect();
                for j in (1..v.len()).rev() {
                    v.swap(j, rng.below(j as u64 + 1) as usize);
                }
                v
            } else {
                Vec::new()
            };
            while !dur.done(sim, p.batch) {
                let t0 = sim.now();
                let mut batch = WriteBatch::default();
                let mut bytes = 0;
                for _ in 0..p.batch {
                    let n = if seq {
                        i
                    } else if unique {
                        order[(i % p.num.max(1)) as usize]
                    } else {
                        rng.below(p.num.max(1))
                    };
                    i += 1;
                    let k = make_key(n, p.key_size);
                    let v = values.next(&mut rng);
                    bytes += (k.len() + v.len()) as u64;
                    batch.put(&k, &v);
                }
                db.write(&batch, p.sync).await.map_err(db_err)?;
                st.written += bytes;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.keys_written += p.batch;
                    c.bytes_written += bytes;
                    c.synced_writes += u64::from(p.sync);
                }
                record(&mut st, OpType::Write, p.batch, t0);
                // After the op's time is taken, as db_bench resets the op's start after it.
                sh.limit_writes(bytes).await;
            }
        }
        Kind::ReadRandom | Kind::MultiReadRandom => {
            let multi = p.kind == Kind::MultiReadRandom;
            let per = if multi { p.batch } else { 1 };
            let (mut read, mut found) = (0u64, 0u64);
            while !dur.done(sim, per) {
                let t0 = sim.now();
                for _ in 0..per {
                    let k = make_key(rng.below(p.num.max(1)), p.key_size);
                    read += 1;
                    if let Some(v) = db.get(&k).await.map_err(db_err)? {
                        found += 1;
                        st.read_bytes += (k.len() + v.len()) as u64;
                        sh.counters.borrow_mut().bytes_read += v.len() as u64;
                    }
                }
                {
                    let mut c = sh.counters.borrow_mut();
                    c.keys_read += per;
                    if multi {
                        c.multiget_calls += 1;
                        c.multiget_keys += per;
                    }
                }
                record(&mut st, OpType::Read, per, t0);
            }
            st.found = found;
            sh.counters.borrow_mut().keys_found += found;
            st.message = if multi {
                format!("({found} of {read} found)")
            } else {
                format!("({found} of {read} found)\n")
            };
        }
        Kind::ReadSeq => {
            // One iterator from the first key, `reads` entries (db_bench's ReadSequential,
            // which --duration does not bound), read in chunks of 1024; each chunk's time is
            // spread over its entries.
            let mut next: Vec<u8> = Vec::new();
            let mut left = p.ops;
            sh.counters.borrow_mut().seeks += 1;
            while left > 0 {
                let want = left.min(1024);
                let t0 = sim.now();
                let got = db.scan(&next, want as usize).await.map_err(db_err)?;
                let n = got.len() as u64;
                let bytes: u64 = got.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum();
                st.read_bytes += bytes;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.nexts += n;
                    c.iter_bytes += bytes;
                }
                let ns = sim.now().since(t0).as_ns();
                if let Some(each) = ns.checked_div(n) {
                    sh.intervals.borrow_mut().record(t0, sim.now(), each, n);
                }
                for _ in 0..n {
                    st.hist.entry(OpType::Read).or_default().add(ns / n / 1000);
                    sh.latency.borrow_mut().record(ns / n);
                    sh.tick();
                }
                st.ops += n;
                left = left.saturating_sub(n);
                match got.last() {
                    Some((k, _)) if n == want => {
                        next = k.clone();
                        next.push(0);
                    }
                    _ => break,
                }
            }
        }
        Kind::SeekRandom => {
            let (mut read, mut found) = (0u64, 0u64);
            while !dur.done(sim, 1) {
                let t0 = sim.now();
                let k = make_key(rng.below(p.num.max(1)), p.key_size);
                let got = db
                    .scan(&k, cfg.seek_nexts.max(1) as usize)
                    .await
                    .map_err(db_err)?;
                read += 1;
                let hit = got.first().is_some_and(|(g, _)| *g == k);
                found += u64::from(hit);
                let nexts = got.len().min(cfg.seek_nexts as usize);
                let bytes: u64 = got[..nexts]
                    .iter()
                    .map(|(k, v)| (k.len() + v.len()) as u64)
                    .sum();
                st.read_bytes += bytes;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.seeks += 1;
                    c.seeks_found += u64::from(hit);
                    c.nexts += nexts as u64;
                    c.iter_bytes += bytes;
                }
                record(&mut st, OpType::Seek, 1, t0);
            }
            st.found = found;
            st.message = format!("({found} of {read} found)\n");
        }
        Kind::UpdateRandom => {
            let (mut updates, mut found) = (0u64, 0u64);
            while !dur.done(sim, 1) {
                let t0 = sim.now();
                let k = make_key(rng.below(p.num.max(1)), p.key_size);
                updates += 1;
                if let Some(v) = db.get(&k).await.map_err(db_err)? {
                    found += 1;
                    st.read_bytes += (k.len() + v.len()) as u64;
                    sh.counters.borrow_mut().bytes_read += v.len() as u64;
                }
                let v = values.next(&mut rng);
                db.put(&k, &v, p.sync).await.map_err(db_err)?;
                st.written += (k.len() + v.len()) as u64;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.keys_read += 1;
                    c.keys_written += 1;
                    c.bytes_written += (k.len() + v.len()) as u64;
                    c.synced_writes += u64::from(p.sync);
                }
                record(&mut st, OpType::Update, 1, t0);
            }
            st.found = found;
            sh.counters.borrow_mut().keys_found += found;
            st.message = format!("( updates:{updates} found:{found})");
        }
        Kind::Delete { seq } => {
            let mut i = 0u64;
            while !dur.done(sim, p.batch) {
                let t0 = sim.now();
                let mut batch = WriteBatch::default();
                for _ in 0..p.batch {
                    let n = if seq { i } else { rng.below(p.num.max(1)) };
                    i += 1;
                    batch.delete(&make_key(n, p.key_size));
                }
                db.write(&batch, p.sync).await.map_err(db_err)?;
                sh.counters.borrow_mut().deletes += p.batch;
                record(&mut st, OpType::Delete, p.batch, t0);
            }
        }
        Kind::ReadRandomWriteRandom => {
            let (mut reads, mut writes, mut found) = (0u64, 0u64, 0u64);
            let (mut get_w, mut put_w) = (0u32, 0u32);
            while !dur.done(sim, 1) {
                if get_w == 0 && put_w == 0 {
                    get_w = cfg.readwritepercent;
                    put_w = 100 - get_w;
                }
                let t0 = sim.now();
                let k = make_key(rng.below(p.num.max(1)), p.key_size);
                if get_w > 0 {
                    if let Some(v) = db.get(&k).await.map_err(db_err)? {
                        found += 1;
                        sh.counters.borrow_mut().bytes_read += v.len() as u64;
                    }
                    sh.counters.borrow_mut().keys_read += 1;
                    get_w -= 1;
                    reads += 1;
                    record(&mut st, OpType::Read, 1, t0);
                } else {
                    let v = values.next(&mut rng);
                    db.put(&k, &v, p.sync).await.map_err(db_err)?;
                    {
                        let mut c = sh.counters.borrow_mut();
                        c.keys_written += 1;
                        c.bytes_written += (k.len() + v.len()) as u64;
                        c.synced_writes += u64::from(p.sync);
                    }
                    put_w -= 1;
                    writes += 1;
                    record(&mut st, OpType::Write, 1, t0);
                }
            }
            st.found = found;
            sh.counters.borrow_mut().keys_found += found;
            st.message = format!(
                "( reads:{reads} writes:{writes} total:{} found:{found})",
                reads + writes
            );
        }
        Kind::MixGraph => super::mixgraph::run(sh, &mut st, &mut dur, rng, &record).await?,
        Kind::Compact => {
            // db_bench's Compact counts no operation (the report says 1).
            db.flush().await.map_err(db_err)?;
        }
        Kind::Flush | Kind::WaitForCompaction | Kind::Stats | Kind::LevelStats => {}
    }
    let _ = t;
    st.finish = sim.now();
    Ok(st)
}
