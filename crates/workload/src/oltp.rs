//! An OLTP-like file workload: the I/O a file system sees under MySQL/InnoDB running tpcc or
//! YCSB (ZNS+ OSDI'21 §4, Tab. 3: "tpcc-mysql, DB 12 GB, 1 GB buffer pool, 16 connections";
//! "YCSB on MySQL, 32 connections"). A **stand-in**: znslab has no InnoDB, so this generator
//! reproduces the file traffic only (`seed-specs.md` A.4 item 10), and figures from it are
//! checked for orderings, never for the paper's numbers.
//!
//! The model: a data file of 16 KiB pages behind an LRU buffer pool in host memory; each
//! client runs transactions that touch `reads` pages (a miss reads the page from the file; a
//! full pool evicts its least recently used page, writing it first if dirty), dirty `writes`
//! of them (a fraction is a probability), and commit by appending a redo record (512 B-4 KiB)
//! to a circular redo log and fsyncing it. A page cleaner, every `flush_interval`, writes the
//! dirty pages through the doublewrite buffer: a batch of up to 2 MiB written to the
//! doublewrite file and fsynced, then each page in place and the data file fsynced.
//!
//! Pages hold self-describing bytes (page number and version), so a run writes real data
//! without keeping page images in memory.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use host::fs::{FileSystem, FsError, Ino};
use sim::cpu::CpuPool;
use sim::{Rng, SimDuration};

use crate::ycsb::generator::Zipfian;

/// Which OLTP benchmark's access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OltpKind {
    /// tpcc-mysql: 12 pages per transaction, 6 dirtied; each client mostly on its home
    /// warehouse (90 %), uniform inside it.
    Tpcc,
    /// YCSB workload A on MySQL: one row (page) read or updated (50/50), zipfian θ 0.99.
    YcsbA,
    /// YCSB workload F: one row read, or read-modify-written (50/50), zipfian θ 0.99.
    YcsbF,
}

impl OltpKind {
    pub fn name(self) -> &'static str {
        match self {
            OltpKind::Tpcc => "tpcc",
            OltpKind::YcsbA => "ycsb-a",
            OltpKind::YcsbF => "ycsb-f",
        }
    }

    pub fn parse(s: &str) -> Option<OltpKind> {
        match s {
            "tpcc" => Some(OltpKind::Tpcc),
            "ycsb-a" => Some(OltpKind::YcsbA),
            "ycsb-f" => Some(OltpKind::YcsbF),
            _ => None,
        }
    }
}

/// The workload's parameters. Defaults: the paper's set-up at scale 1 (§4, Tab. 3).
#[derive(Clone, Debug)]
pub struct OltpSpec {
    pub kind: OltpKind,
    /// The data file (Tab. 3: "DB 12 GB").
    pub data_bytes: u64,
    /// The buffer pool (Tab. 3: "1 GB InnoDB buffer pool").
    pub pool_bytes: u64,
    /// InnoDB's page (16 KiB, its default).
    pub page_bytes: u64,
    /// Client connections (Tab. 3: 16 for tpcc, 32 for YCSB).
    pub threads: u32,
    /// Pages touched per transaction and how many of them are dirtied (a fraction is a
    /// probability); A.4 item 10: tpcc 12 and 6, YCSB 1 and 0.5.
    pub reads: u32,
    pub writes: f64,
    /// Redo record size range per commit (A.4 item 10: 512 B-4 KiB).
    pub redo_min: u64,
    pub redo_max: u64,
    /// The circular redo log (InnoDB's default: 2 files of 48 MiB).
    pub log_bytes: u64,
    /// The page cleaner's period (InnoDB's: once a second) and the doublewrite buffer
    /// (2 MiB: 128 pages).
    pub flush_interval: SimDuration,
    pub doublewrite_bytes: u64,
    /// Host CPU per transaction besides the I/O (SQL processing; an assumption: the paper
    /// gives none).
    pub tx_cpu: SimDuration,
}

impl OltpSpec {
    /// The paper's set-up of `kind` at scale `s` (the data file and pool shrink with it).
    pub fn paper(kind: OltpKind, s: f64) -> OltpSpec {
        let (threads, reads, writes) = match kind {
            OltpKind::Tpcc => (16, 12, 6.0),
            OltpKind::YcsbA | OltpKind::YcsbF => (32, 1, 0.5),
        };
        let scaled = |b: f64| ((b * s) as u64 / (16 << 10)).max(64) * (16 << 10);
        OltpSpec {
            kind,
            data_bytes: scaled(12.0 * (1u64 << 30) as f64),
            pool_bytes: scaled((1u64 << 30) as f64),
            page_bytes: 16 << 10,
            threads,
            reads,
            writes,
            redo_min: 512,
            redo_max: 4096,
            log_bytes: 96 << 20,
            flush_interval: SimDuration::from_ms(1000),
            doublewrite_bytes: 2 << 20,
            tx_cpu: SimDuration::from_us(50),
        }
    }

    fn pages(&self) -> u64 {
        self.data_bytes / self.page_bytes
    }

    /// Refuse what cannot run, naming the field.
    pub fn check(&self) -> Result<(), String> {
        if self.page_bytes == 0 || !self.page_bytes.is_multiple_of(4096) {
            return Err(format!(
                "page_bytes {}: a multiple of 4096",
                self.page_bytes
            ));
        }
        if self.pages() < 2 || self.pool_bytes < self.page_bytes {
            return Err("data_bytes and pool_bytes: at least two pages and one".into());
        }
        if self.threads == 0 || self.reads == 0 || self.writes < 0.0 {
            return Err("threads and reads at least 1, writes not negative".into());
        }
        if self.redo_min == 0 || self.redo_min > self.redo_max || self.redo_max > self.log_bytes {
            return Err("redo_min ≤ redo_max ≤ log_bytes, redo_min at least 1".into());
        }
        if self.doublewrite_bytes < self.page_bytes {
            return Err("doublewrite_bytes: at least one page".into());
        }
        Ok(())
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OltpStats {
    pub transactions: u64,
    /// Transactions per second of virtual time.
    pub tps: f64,
    pub page_reads: u64,
    pub page_writes: u64,
    pub doublewrite_bytes: u64,
    pub redo_bytes: u64,
    pub fsyncs: u64,
    /// Mean transaction latency.
    pub mean_latency_ns: u64,
    pub elapsed_ns: u64,
}

/// The workload's files, made by [`prepare`].
#[derive(Clone, Copy, Debug)]
pub struct OltpFiles {
    pub data: Ino,
    pub doublewrite: Ino,
    pub redo: Ino,
}

/// A page's bytes: its number and version in every 16-byte word.
fn page_image(page: u64, version: u64, out: &mut [u8]) {
    for (i, w) in out.chunks_mut(16).enumerate() {
        w[..8].copy_from_slice(&page.to_le_bytes());
        w[8..16].copy_from_slice(&(version ^ (i as u64) << 40).to_le_bytes());
    }
}

/// Create the files under `dir` and write the whole data file (a load, not timed by the
/// caller's measurement), and the redo log and doublewrite area once.
pub async fn prepare<F: FileSystem>(
    fs: &F,
    dir: &str,
    spec: &OltpSpec,
) -> Result<OltpFiles, FsError> {
    spec.check().map_err(FsError::Invalid)?;
    fs.mkdir(dir).await?;
    let data = fs.create(&format!("{dir}/ibdata")).await?;
    let doublewrite = fs.create(&format!("{dir}/doublewrite")).await?;
    let redo = fs.create(&format!("{dir}/ib_logfile")).await?;
    let chunk = 64u64;
    let mut buf = vec![0u8; (chunk * spec.page_bytes) as usize];
    let mut page = 0;
    while page < spec.pages() {
        let n = chunk.min(spec.pages() - page);
        for (i, p) in buf
            .chunks_mut(spec.page_bytes as usize)
            .take(n as usize)
            .enumerate()
        {
            page_image(page + i as u64, 0, p);
        }
        let len = (n * spec.page_bytes) as usize;
        fs.write(data, page * spec.page_bytes, &buf[..len]).await?;
        page += n;
    }
    let zeros = vec![0u8; 1 << 20];
    for (ino, bytes) in [
        (doublewrite, spec.doublewrite_bytes),
        (redo, spec.log_bytes),
    ] {
        let mut at = 0;
        while at < bytes {
            let n = (bytes - at).min(zeros.len() as u64) as usize;
            fs.write(ino, at, &zeros[..n]).await?;
            at += n as u64;
        }
    }
    fs.sync().await?;
    Ok(OltpFiles {
        data,
        doublewrite,
        redo,
    })
}

/// The buffer pool: LRU order of the pages it holds, their versions and dirtiness.
struct Pool {
    capacity: u64,
    /// page → (last use, dirty).
    pages: BTreeMap<u64, (u64, bool)>,
    /// last use → page.
    lru: BTreeMap<u64, u64>,
    clock: u64,
    /// page → version written last (0: as loaded).
    versions: BTreeMap<u64, u64>,
    redo_at: u64,
    stats: OltpStats,
    latency_sum: u64,
}

impl Pool {
    fn touch(&mut self, page: u64, dirty: bool) {
        self.clock += 1;
        let old = self.pages.insert(page, (self.clock, dirty));
        if let Some((t, d)) = old {
            self.lru.remove(&t);
            self.pages.insert(page, (self.clock, d || dirty));
        }
        self.lru.insert(self.clock, page);
        if dirty {
            *self.versions.entry(page).or_insert(0) += 1;
        }
    }

    /// The least recently used page when the pool is full: removed, with its dirtiness.
    fn evict(&mut self) -> Option<(u64, bool)> {
        if (self.pages.len() as u64) < self.capacity {
            return None;
        }
        let (_, page) = self.lru.pop_first()?;
        let (_, dirty) = self.pages.remove(&page)?;
        Some((page, dirty))
    }

    /// Take up to `n` dirty pages (marking them clean), in page order.
    fn take_dirty(&mut self, n: usize) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for (&p, e) in self.pages.iter_mut() {
            if out.len() == n {
                break;
            }
            if e.1 {
                e.1 = false;
                out.push((p, *self.versions.get(&p).unwrap_or(&0)));
            }
        }
        out
    }
}

/// Write `pages` (page, version) through the doublewrite file, then in place.
async fn flush_pages<F: FileSystem>(
    fs: &F,
    files: &OltpFiles,
    spec: &OltpSpec,
    pool: &RefCell<Pool>,
    pages: &[(u64, u64)],
) -> Result<(), FsError> {
    if pages.is_empty() {
        return Ok(());
    }
    let pb = spec.page_bytes as usize;
    let mut batch = vec![0u8; pages.len() * pb];
    for (i, &(p, v)) in pages.iter().enumerate() {
        page_image(p, v, &mut batch[i * pb..(i + 1) * pb]);
    }
    fs.write(files.doublewrite, 0, &batch).await?;
    fs.fsync(files.doublewrite).await?;
    for (i, &(p, _)) in pages.iter().enumerate() {
        fs.write(
            files.data,
            p * spec.page_bytes,
            &batch[i * pb..(i + 1) * pb],
        )
        .await?;
    }
    fs.fsync(files.data).await?;
    let mut pl = pool.borrow_mut();
    pl.stats.page_writes += pages.len() as u64;
    pl.stats.doublewrite_bytes += batch.len() as u64;
    pl.stats.fsyncs += 2;
    Ok(())
}

/// Run the workload for `runtime` of virtual time with the files [`prepare`] made.
pub async fn run<F: FileSystem>(
    fs: Rc<F>,
    cpu: Rc<CpuPool>,
    spec: OltpSpec,
    files: OltpFiles,
    runtime: SimDuration,
    rng: Rng,
) -> Result<OltpStats, FsError> {
    spec.check().map_err(FsError::Invalid)?;
    let sim = fs.sim().clone();
    let start = sim.now();
    let end = start + runtime;
    let pool = Rc::new(RefCell::new(Pool {
        capacity: spec.pool_bytes / spec.page_bytes,
        pages: BTreeMap::new(),
        lru: BTreeMap::new(),
        clock: 0,
        versions: BTreeMap::new(),
        redo_at: 0,
        stats: OltpStats::default(),
        latency_sum: 0,
    }));
    let spec = Rc::new(spec);
    let zipf = Rc::new(Zipfian::new(spec.pages()));
    let mut tasks = Vec::new();
    for t in 0..spec.threads {
        let (fs, cpu, spec, pool, zipf) = (
            fs.clone(),
            cpu.clone(),
            spec.clone(),
            pool.clone(),
            zipf.clone(),
        );
        let mut rng = rng.stream(&format!("oltp-client-{t}"));
        let sim2 = sim.clone();
        tasks.push(sim.spawn(async move {
            while sim2.now() < end {
                let began = sim2.now();
                transaction(&*fs, &files, &spec, &pool, &zipf, &mut rng, t).await?;
                cpu.run(spec.tx_cpu).await;
                let mut pl = pool.borrow_mut();
                pl.stats.transactions += 1;
                pl.latency_sum += sim2.now().since(began).as_ns();
            }
            Ok::<(), FsError>(())
        }));
    }
    // The page cleaner.
    {
        let (fs, spec, pool, sim2) = (fs.clone(), spec.clone(), pool.clone(), sim.clone());
        tasks.push(sim.spawn(async move {
            let batch = (spec.doublewrite_bytes / spec.page_bytes) as usize;
            while sim2.now() < end {
                sim2.sleep(spec.flush_interval).await;
                loop {
                    let pages = pool.borrow_mut().take_dirty(batch);
                    if pages.is_empty() {
                        break;
                    }
                    flush_pages(&*fs, &files, &spec, &pool, &pages).await?;
                }
            }
            Ok(())
        }));
    }
    for t in tasks {
        t.await?;
    }
    let mut pl = pool.borrow_mut();
    let elapsed = sim.now().since(start).as_ns().max(1);
    pl.stats.elapsed_ns = elapsed;
    pl.stats.tps = pl.stats.transactions as f64 * 1e9 / elapsed as f64;
    pl.stats.mean_latency_ns = pl.latency_sum / pl.stats.transactions.max(1);
    Ok(pl.stats.clone())
}

/// The pages one transaction of client `t` touches.
fn pick_pages(spec: &OltpSpec, zipf: &Zipfian, rng: &mut Rng, t: u32) -> Vec<u64> {
    let pages = spec.pages();
    (0..spec.reads)
        .map(|_| match spec.kind {
            OltpKind::Tpcc => {
                // Warehouses: one per client at least; 90 % of accesses on the home one.
                let wh = (spec.threads as u64).max(pages / 6400).min(pages);
                let per = pages / wh;
                let home = t as u64 % wh;
                let w = if rng.below(10) < 9 {
                    home
                } else {
                    rng.below(wh)
                };
                w * per + rng.below(per.max(1))
            }
            OltpKind::YcsbA | OltpKind::YcsbF => {
                // Scrambled, as YCSB's keys are, so hot pages spread over the file.
                crate::ycsb::fnvhash64(zipf.next(rng)) % pages
            }
        })
        .collect()
}

async fn transaction<F: FileSystem>(
    fs: &F,
    files: &OltpFiles,
    spec: &OltpSpec,
    pool: &RefCell<Pool>,
    zipf: &Zipfian,
    rng: &mut Rng,
    t: u32,
) -> Result<(), FsError> {
    let pages = pick_pages(spec, zipf, rng, t);
    let mut writes = spec.writes.floor() as u32;
    let frac = spec.writes - spec.writes.floor();
    if frac > 0.0 && (rng.below(1 << 20) as f64) < frac * (1u64 << 20) as f64 {
        writes += 1;
    }
    let mut buf = vec![0u8; spec.page_bytes as usize];
    for (i, &page) in pages.iter().enumerate() {
        let dirty = (i as u32) < writes;
        let cached = pool.borrow().pages.contains_key(&page);
        if !cached {
            // A miss: make room (a dirty victim is written first), then read the page.
            let victim = pool.borrow_mut().evict();
            if let Some((v, true)) = victim {
                let version = *pool.borrow().versions.get(&v).unwrap_or(&0);
                flush_pages(fs, files, spec, pool, &[(v, version)]).await?;
            }
            fs.read(files.data, page * spec.page_bytes, &mut buf)
                .await?;
            pool.borrow_mut().stats.page_reads += 1;
        }
        pool.borrow_mut().touch(page, dirty);
    }
    if writes > 0 {
        // Commit: a redo record appended to the circular log, fsynced.
        let len = spec.redo_min + rng.below(spec.redo_max - spec.redo_min + 1);
        let at = {
            let mut pl = pool.borrow_mut();
            if pl.redo_at + len > spec.log_bytes {
                pl.redo_at = 0;
            }
            let at = pl.redo_at;
            pl.redo_at += len;
            pl.stats.redo_bytes += len;
            pl.stats.fsyncs += 1;
            at
        };
        let mut rec = vec![0u8; len as usize];
        rng.fill(&mut rec);
        fs.write(files.redo, at, &rec).await?;
        fs.fsync(files.redo).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use host::fs::MemFs;
    use sim::Sim;

    fn small(kind: OltpKind) -> OltpSpec {
        let mut s = OltpSpec::paper(kind, 1.0 / 1024.0);
        s.threads = 4;
        s.tx_cpu = SimDuration::from_us(500);
        s
    }

    fn run_on_memfs(spec: OltpSpec) -> (OltpStats, Vec<u8>, u64) {
        let sim = Sim::new(1);
        let fs = Rc::new(MemFs::new(&sim, 1 << 30));
        let cpu = Rc::new(CpuPool::new(&sim, 4));
        let s = spec.clone();
        sim.block_on(async move {
            let files = prepare(&*fs, "/db", &s).await.expect("prepares");
            let stats = run(
                fs.clone(),
                cpu,
                s.clone(),
                files,
                SimDuration::from_ms(1500),
                Rng::new(9),
            )
            .await
            .expect("runs");
            let mut page = vec![0u8; s.page_bytes as usize];
            fs.read(files.data, 0, &mut page).await.expect("reads");
            (stats, page, fs.size(files.data).expect("size"))
        })
    }

    #[test]
    fn transactions_read_dirty_commit_and_flush_as_configured() {
        for kind in [OltpKind::Tpcc, OltpKind::YcsbA, OltpKind::YcsbF] {
            let spec = small(kind);
            let (st, page0, size) = run_on_memfs(spec.clone());
            assert!(st.transactions > 100, "{kind:?}: {st:?}");
            assert_eq!(size, spec.data_bytes, "the data file keeps its size");
            // Every page read is a miss; redo grows with the commits; the cleaner writes
            // through the doublewrite buffer (two fsyncs a batch).
            assert!(st.page_reads > 0 && st.page_writes > 0, "{kind:?}: {st:?}");
            assert_eq!(st.doublewrite_bytes, st.page_writes * spec.page_bytes);
            assert!(st.redo_bytes >= 512 && st.fsyncs > 2, "{kind:?}: {st:?}");
            // Page 0 holds its own number in every word (self-describing, any version).
            assert!(page0.chunks(16).all(|w| w[..8] == 0u64.to_le_bytes()));
        }
    }

    #[test]
    fn same_seed_same_run_and_bad_specs_are_refused() {
        let a = run_on_memfs(small(OltpKind::YcsbA)).0;
        let b = run_on_memfs(small(OltpKind::YcsbA)).0;
        assert_eq!(a, b);
        let mut bad = small(OltpKind::Tpcc);
        bad.page_bytes = 1000;
        assert!(bad.check().unwrap_err().contains("page_bytes"));
        bad = small(OltpKind::Tpcc);
        bad.redo_min = 0;
        assert!(bad.check().is_err());
        assert_eq!(OltpKind::parse("ycsb-f"), Some(OltpKind::YcsbF));
        assert_eq!(OltpKind::parse("tpcc").map(OltpKind::name), Some("tpcc"));
    }
}
