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
    /// Writes keys in order (fillseq, fillbatch) or at random (the others).
    Write {
        seq: bool,
    },
    ReadRandom,
    MultiReadRandom,
    ReadSeq,
    SeekRandom,
    UpdateRandom,
    Delete {
        seq: bool,
    },
    ReadRandomWriteRandom,
    ReadWhileWriting,
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
}

/// The benchmarks znslab runs (db_bench's names).
pub const KNOWN: &[&str] = &[
    "fillseq",
    "fillbatch",
    "fillrandom",
    "overwrite",
    "fillsync",
    "fill100K",
    "readrandom",
    "readmissing",
    "multireadrandom",
    "readseq",
    "readreverse",
    "seekrandom",
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
        kind: Kind::Write { seq: false },
        num: cfg.num,
        ops: writes,
        batch: cfg.batch_size.max(1),
        value_size: cfg.value_size,
        key_size: cfg.key_size,
        sync: cfg.sync,
    };
    match name {
        "fillseq" => p.kind = Kind::Write { seq: true },
        "fillbatch" => {
            p.kind = Kind::Write { seq: true };
            p.batch = 1000;
        }
        "fillrandom" | "overwrite" => {}
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
        "readrandom" | "readmissing" => {
            p.kind = Kind::ReadRandom;
            p.ops = reads;
            if name == "readmissing" {
                p.key_size += 1;
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
        "seekrandom" => {
            p.kind = Kind::SeekRandom;
            p.ops = reads;
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
        "readwhilewriting" => {
            p.kind = Kind::ReadWhileWriting;
            p.ops = reads;
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
struct ThreadStats {
    ops: u64,
    found: u64,
    written: u64,
    read_bytes: u64,
    finish: SimInstant,
    hist: BTreeMap<OpType, Histogram>,
    message: String,
}

/// db_bench's `Duration`: `ops` operations, or with `seconds` > 0 until that much time has
/// passed, looked at every `stage` operations.
struct Duration {
    seconds: u64,
    ops: u64,
    stage: u64,
    done: u64,
    start: SimInstant,
}

impl Duration {
    fn done(&mut self, sim: &Sim, n: u64) -> bool {
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
struct Shared {
    sim: Sim,
    db: Rc<Db>,
    cfg: DbBenchConfig,
    plan: Plan,
    name: String,
    latency: RefCell<LatencyHistogram>,
    counters: Rc<RefCell<Counters>>,
    ops_done: Cell<u64>,
    total: u64,
}

impl Shared {
    fn tick(&self) {
        self.ops_done.set(self.ops_done.get() + 1);
        if let Some(p) = &self.cfg.progress {
            p.tick(&self.name, self.ops_done.get(), self.total);
        }
    }
}

fn db_err(e: host::lsm::db::DbError) -> DbBenchError {
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
        counters,
        ops_done: Cell::new(0),
        total: plan.ops.saturating_mul(threads as u64),
    });
    let mut handles = Vec::new();
    // readwhilewriting's writer runs while any reader does.
    let readers_left = Rc::new(Cell::new(threads));
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
    let writer = if plan.kind == Kind::ReadWhileWriting {
        let sh = sh.clone();
        let mut rng = Rng::new(cfg.seed).stream("writer");
        let mut values = ValueSource::new(&mut rng, cfg, plan.value_size, dataset.clone());
        let left = readers_left.clone();
        Some(sim.clone().spawn(async move {
            while left.get() > 0 {
                let k = make_key(rng.below(sh.cfg.num), sh.cfg.key_size);
                let v = values.next(&mut rng);
                sh.db.put(&k, &v, sh.cfg.sync).await.map_err(db_err)?;
                let mut c = sh.counters.borrow_mut();
                c.keys_written += 1;
                c.bytes_written += (k.len() + v.len()) as u64;
                c.synced_writes += u64::from(sh.cfg.sync);
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
        for _ in 0..n {
            sh.tick();
        }
    };
    match p.kind {
        Kind::Write { seq } => {
            let mut i = 0u64;
            while !dur.done(sim, p.batch) {
                let t0 = sim.now();
                let mut batch = WriteBatch::default();
                let mut bytes = 0;
                for _ in 0..p.batch {
                    let n = if seq { i } else { rng.below(p.num.max(1)) };
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
        Kind::ReadWhileWriting => {
            let (mut read, mut found) = (0u64, 0u64);
            while !dur.done(sim, 1) {
                let t0 = sim.now();
                let k = make_key(rng.below(p.num.max(1)), p.key_size);
                read += 1;
                if let Some(v) = db.get(&k).await.map_err(db_err)? {
                    found += 1;
                    st.read_bytes += (k.len() + v.len()) as u64;
                    sh.counters.borrow_mut().bytes_read += v.len() as u64;
                }
                sh.counters.borrow_mut().keys_read += 1;
                record(&mut st, OpType::Read, 1, t0);
            }
            st.found = found;
            sh.counters.borrow_mut().keys_found += found;
            st.message = format!("({found} of {read} found)\n");
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
        Kind::MixGraph => mixgraph(sh, &mut st, &mut dur, rng, &record).await?,
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

/// db_bench's `QueryDecider`: the query type (0 get, 1 put, 2 seek) for a random number.
struct QueryDecider {
    bounds: Vec<i64>,
    range: i64,
}

impl QueryDecider {
    fn new(ratios: [f64; 3]) -> QueryDecider {
        let sum: f64 = ratios.iter().sum();
        let mut range = 0i64;
        let mut bounds = Vec::new();
        for r in ratios {
            range += (1000.0 * (r / sum)).ceil() as i64;
            bounds.push(range);
        }
        QueryDecider { bounds, range }
    }

    fn get(&self, rand: i64) -> usize {
        let pos = rand.abs() % self.range.max(1);
        self.bounds.iter().position(|&b| pos < b).unwrap_or(0)
    }
}

/// db_bench's `ParetoCdfInversion`.
fn pareto(u: f64, theta: f64, k: f64, sigma: f64) -> i64 {
    let r = if k == 0.0 {
        theta - sigma * u.ln()
    } else {
        theta + sigma * (u.powf(-k) - 1.0) / k
    };
    r.ceil() as i64
}

/// db_bench's `GenerateTwoTermExpKeys`: key ranges whose hotness follows
/// `a·e^(b·x) + c·e^(d·x)`, shuffled by a generator seeded from their total; keys within a
/// range by the power function (or uniformly).
pub struct KeyRanges {
    /// (start in the hotness space, its width)
    units: Vec<(i64, i64)>,
    rand_max: i64,
    size: i64,
}

impl KeyRanges {
    pub fn new(total: i64, n: i64, a: f64, b: f64, c: f64, d: f64) -> KeyRanges {
        let n = n.max(1);
        let size = (total / n).max(1);
        let mut amplify = 0i64;
        let mut access = Vec::new();
        for pfx in (1..=n).rev() {
            let mut p = a * (b * pfx as f64).exp() + c * (d * pfx as f64).exp();
            if p < 1e-16 {
                p = 0.0;
            }
            if amplify == 0 && p > 0.0 {
                amplify = (1.0 / p).floor() as i64 + 1;
            }
            access.push(if p <= 0.0 {
                0
            } else {
                (amplify as f64 * p).floor() as i64
            });
        }
        let rand_max: i64 = access.iter().sum();
        let mut r = Rng::new(rand_max as u64).stream("keyrange");
        for i in 0..access.len() {
            let pos = r.below(access.len() as u64) as usize;
            access.swap(i, pos);
        }
        let mut units = Vec::new();
        let mut off = 0;
        for w in access {
            units.push((off, w));
            off += w;
        }
        KeyRanges {
            units,
            rand_max,
            size,
        }
    }

    fn key(&self, ini: i64, ka: f64, kb: f64) -> i64 {
        let r = ini % self.rand_max.max(1);
        let (mut lo, mut hi) = (0usize, self.units.len());
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if r < self.units[mid].0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let off = if ka == 0.0 || kb == 0.0 {
            ini % self.size
        } else {
            let u = (ini % self.size) as f64 / self.size as f64;
            let seed = (u / ka).powf(1.0 / kb).ceil() as i64;
            (Rng::new(seed as u64).next_u64() % self.size as u64) as i64
        };
        self.size * lo as i64 + off
    }
}

async fn mixgraph(
    sh: &Shared,
    st: &mut ThreadStats,
    dur: &mut Duration,
    mut rng: Rng,
    record: &impl Fn(&mut ThreadStats, OpType, u64, SimInstant),
) -> Result<(), DbBenchError> {
    let (sim, db, cfg, p) = (&sh.sim, &sh.db, &sh.cfg, &sh.plan);
    let m = &cfg.mix;
    let num = p.num.max(1) as i64;
    let value_max = m.max_value_size.clamp(1, 1 << 20);
    let scan_max = m.max_scan_len.max(1);
    let query = QueryDecider::new([m.get_ratio, m.put_ratio, m.seek_ratio]);
    let ranges = (m.keyrange_dist != [0.0; 4]).then(|| {
        let [a, b, c, d] = m.keyrange_dist;
        KeyRanges::new(num, m.keyrange_num, a, b, c, d)
    });
    let uniform = m.key_dist_a == 0.0 || m.key_dist_b == 0.0;
    let filler = super::Values::new(&mut rng, cfg.compression_ratio, value_max as usize);
    let mut filler = filler;
    let (mut gets, mut puts, mut seeks, mut get_found, mut seek_found) = (0u64, 0, 0, 0, 0);
    let (mut total_val, mut total_scan) = (0f64, 0f64);
    while !dur.done(sim, 1) {
        let ini = (rng.next_u64() % num as u64) as i64;
        let rand_v = ini % num;
        let u = rand_v as f64 / num as f64;
        let key_id = if uniform {
            ini
        } else if let Some(r) = &ranges {
            r.key(ini, m.key_dist_a, m.key_dist_b)
        } else {
            let seed = (u / m.key_dist_a).powf(1.0 / m.key_dist_b) as i64;
            (Rng::new(seed as u64).next_u64() % num as u64) as i64
        };
        let k = make_key(key_id as u64, p.key_size);
        let t0 = sim.now();
        match query.get(rand_v) {
            0 => {
                gets += 1;
                if let Some(v) = db.get(&k).await.map_err(db_err)? {
                    get_found += 1;
                    st.read_bytes += (k.len() + v.len()) as u64;
                    sh.counters.borrow_mut().bytes_read += v.len() as u64;
                }
                sh.counters.borrow_mut().keys_read += 1;
                record(st, OpType::Read, 1, t0);
            }
            1 => {
                puts += 1;
                let mut size = pareto(u, m.value_theta, m.value_k, m.value_sigma);
                if size < 10 {
                    size = 10;
                } else if size > value_max {
                    size %= value_max;
                }
                total_val += size as f64;
                let v = filler.next(size as usize).to_vec();
                db.put(&k, &v, p.sync).await.map_err(db_err)?;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.keys_written += 1;
                    c.bytes_written += (k.len() + v.len()) as u64;
                    c.synced_writes += u64::from(p.sync);
                }
                record(st, OpType::Write, 1, t0);
            }
            _ => {
                seeks += 1;
                let len = pareto(u, m.iter_theta, m.iter_k, m.iter_sigma).rem_euclid(scan_max);
                let got = db.scan(&k, (len as usize).max(1)).await.map_err(db_err)?;
                let hit = got.first().is_some_and(|(g, _)| *g == k);
                seek_found += u64::from(hit);
                let n = got.len().min(len as usize);
                let bytes: u64 = got[..n]
                    .iter()
                    .map(|(k, v)| (k.len() + v.len()) as u64)
                    .sum();
                st.read_bytes += bytes;
                total_scan += n as f64;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.seeks += 1;
                    c.seeks_found += u64::from(hit);
                    c.nexts += n as u64;
                    c.iter_bytes += bytes;
                }
                record(st, OpType::Seek, 1, t0);
            }
        }
    }
    st.found = get_found + seek_found;
    sh.counters.borrow_mut().keys_found += get_found;
    st.message = format!(
        "( Gets:{gets} Puts:{puts} Seek:{seeks}, reads {} in {} found, avg size: {:.1} value, {:.1} scan)\n",
        get_found + seek_found,
        gets + seeks,
        total_val / puts as f64,
        total_scan / seeks as f64
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decider_splits_as_db_bench() {
        let q = QueryDecider::new([0.83, 0.14, 0.03]);
        assert_eq!(q.bounds, vec![830, 970, 1000]);
        assert_eq!(q.get(829), 0);
        assert_eq!(q.get(830), 1);
        assert_eq!(q.get(1999), 2);
    }

    #[test]
    fn pareto_is_db_bench_inversion() {
        // theta + sigma * (u^-k - 1) / k, rounded up.
        assert_eq!(pareto(0.5, 0.0, 0.2615, 25.45), 20);
        assert_eq!(pareto(1.0, 0.0, 0.0, 10.0), 0);
    }

    #[test]
    fn key_ranges_cover_the_keys() {
        let r = KeyRanges::new(30_000, 30, 14.18, -2.917, 0.0164, -0.08082);
        assert!(r.rand_max > 0);
        for ini in [0, 1, 999, 29_999] {
            let k = r.key(ini, 0.0, 0.0);
            assert!((0..30_000).contains(&k), "{k}");
        }
    }
}
