//! The run: filesets laid out and pre-allocated (untimed, as filebench's "Populating and
//! pre-allocating filesets" phase), then every thread instance of every process as a task
//! on the simulator looping over its flowops (each `iters` times) as `flowop_start` does,
//! until `run N` virtual seconds pass (in 1-second steps, as `parser_pause`) or a flowop
//! ends the run (`finishoncount`, no file left with `set mode quit firstdone`, an error).
//! The flowops themselves are in [`super::ops`]. Every file-system call first costs the
//! host CPU `syscall_ns` (so time passes even on a file system that takes none).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use host::fs::{FileSystem, Ino};
use sim::cpu::CpuPool;
use sim::sync::Notify;
use sim::{Rng, Sim, SimDuration, SimInstant};

use super::fileset::{FilesetState, Pick, What};
use super::model::{Flowop, Mode, Workload};
use super::stats::{FlowStats, FlowopLine, LogLine, Snapshot};
use super::FbError;

/// The engine's own settings (not filebench's).
#[derive(Clone, Debug)]
pub struct Config {
    /// Host CPU time each system call costs (default 1 µs).
    pub syscall_ns: u64,
    /// How much each call's cost varies, in percent either side.
    pub syscall_jitter_pct: u64,
    /// Host cores the threads' system calls share.
    pub cores: usize,
    /// CPU time of one iteration of `hog` (filebench writes a byte per iteration).
    pub hog_ns_per_iter: u64,
    /// Overrides the script's `run N` (seconds).
    pub runtime: Option<u64>,
    /// Bound on a run with no time limit (`run` without seconds in the quit modes).
    pub max_runtime: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            syscall_ns: 1000,
            syscall_jitter_pct: 100,
            cores: 4,
            hog_ns_per_iter: 1,
            runtime: None,
            max_runtime: 600,
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct Report {
    pub log: Vec<LogLine>,
    /// The statistics printed (psrun prints one per period, then the final one).
    pub snapshots: Vec<Snapshot>,
    /// Why there are no valid results, if a flowop failed.
    pub failed: Option<String>,
    /// Files that existed after pre-allocation, and their bytes.
    pub preallocated_files: u64,
    pub preallocated_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Abort {
    No,
    Done,
    Error,
}

/// An open file descriptor of a thread: its fileset entry (None once deleted through it).
#[derive(Clone, Debug)]
pub(super) struct Fd {
    pub set: usize,
    pub entry: Option<u32>,
    pub ino: Ino,
    pub off: u64,
}

/// What a flowop returned (FILEBENCH_OK, _NORSC, _ERROR) or that the run is stopping.
#[derive(Debug)]
pub(super) enum Out {
    Ok,
    NoRsc,
    Error(String),
    Abort,
}

pub(super) struct ThreadState {
    pub fds: Vec<Option<Fd>>,
    pub rng: Rng,
    pub buf: Vec<u8>,
    pub memsize: u64,
    /// This thread's own flowop figures (targets of limits are looked up here).
    pub local: Vec<FlowStats>,
    pub last: Vec<u64>,
    pub bucket: Vec<i64>,
    /// `process (NAME,N), thread (NAME,N)` for print.
    pub label: String,
}

pub(super) struct Shared<F> {
    pub fs: F,
    pub sim: Sim,
    pub cpu: CpuPool,
    pub cfg: Config,
    pub w: Workload,
    pub sets: Vec<RefCell<FilesetState>>,
    pub notify: Notify,
    /// Per flowop definition (FLOW_MASTER), in definition order.
    pub masters: RefCell<Vec<FlowStats>>,
    /// controlstats: every I/O flowop of every thread, never cleared.
    pub control: RefCell<FlowStats>,
    pub abort: Cell<Abort>,
    pub events_taken: Cell<u64>,
    pub events_start: Cell<SimInstant>,
    pub log: RefCell<Vec<LogLine>>,
    pub start: SimInstant,
    pub pattern: Vec<u8>,
    pub failure: RefCell<Option<String>>,
}

const PATTERN_BYTES: usize = 1 << 20;
/// filebench's FILE_ALLOC_BLOCK: pre-allocation writes in 1 MiB pieces.
const ALLOC_BLOCK: u64 = 1 << 20;

impl<F: FileSystem> Shared<F> {
    pub fn info(&self, text: impl Into<String>) {
        let at = self.sim.now().since(self.start).as_secs_f64();
        self.log.borrow_mut().push(LogLine {
            at,
            text: text.into(),
            stderr: false,
        });
    }
    pub fn error(&self, text: impl Into<String>) {
        let at = self.sim.now().since(self.start).as_secs_f64();
        self.log.borrow_mut().push(LogLine {
            at,
            text: text.into(),
            stderr: true,
        });
    }
    pub fn aborted(&self) -> bool {
        self.abort.get() != Abort::No
    }

    /// One system call's CPU cost: `syscall_ns`, varied by ±`syscall_jitter_pct` % (a
    /// kernel's calls never take exactly the same time; without it, threads on a file
    /// system that takes no time run in lockstep and filebench's shared pick rotors fall
    /// into a fixed pattern that deletes some files and appends to others forever).
    pub async fn sys(&self, rng: &mut Rng) {
        let base = self.cfg.syscall_ns;
        if base > 0 {
            let j = base * self.cfg.syscall_jitter_pct.min(100) / 100;
            let cost = base - j + if j > 0 { rng.below(2 * j + 1) } else { 0 };
            self.cpu.run(SimDuration::from_ns(cost)).await;
        }
    }

    /// `n` bytes to write: the seeded pattern from a random offset.
    pub fn data(&self, rng: &mut Rng, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n);
        let mut at = rng.below(PATTERN_BYTES as u64) as usize;
        while out.len() < n {
            let take = (n - out.len()).min(PATTERN_BYTES - at);
            out.extend_from_slice(&self.pattern[at..at + take]);
            at = 0;
        }
        out
    }

    /// `fileset_pick`, waiting while no entry is idle.
    pub async fn pick(
        &self,
        set: usize,
        what: What,
        exists: bool,
        index: Option<u64>,
    ) -> Result<Option<u32>, Out> {
        loop {
            if self.aborted() {
                return Err(Out::Abort);
            }
            match self.sets[set].borrow_mut().pick(what, exists, index) {
                Pick::Got(e) => return Ok(Some(e)),
                Pick::Empty => return Ok(None),
                Pick::Wait => {}
            }
            self.notify.notified().await;
        }
    }

    /// Wait until entry `i` is not busy, and take it.
    pub async fn grab(
        &self,
        set: usize,
        what: What,
        i: u32,
        take_idle: impl Fn(&FilesetState) -> bool,
    ) -> Result<(), Out> {
        loop {
            if self.aborted() {
                return Err(Out::Abort);
            }
            {
                let mut st = self.sets[set].borrow_mut();
                let take = take_idle(&st);
                if st.grab(what, i, take) {
                    return Ok(());
                }
            }
            self.notify.notified().await;
        }
    }

    pub fn unbusy(&self, set: usize, what: What, i: u32, exists: Option<bool>, open_incr: i64) {
        self.sets[set]
            .borrow_mut()
            .unbusy(what, i, exists, open_incr);
        self.notify.notify_waiters();
    }

    /// `flowop_endop`.
    pub fn endop(
        &self,
        ts: &mut ThreadState,
        gid: usize,
        li: usize,
        fo: &Flowop,
        t0: SimInstant,
        bytes: u64,
    ) {
        let lat = self.sim.now().since(t0).as_ns();
        let (r, w) = (fo.kind.reads(), fo.kind.writes());
        self.masters.borrow_mut()[gid].record(lat, bytes, r, w);
        ts.local[li].record(lat, bytes, r, w);
        if fo.kind.is_io() {
            let mut c = self.control.borrow_mut();
            c.count += 1;
            c.bytes += bytes;
            if r {
                c.rcount += 1;
            } else if w {
                c.wcount += 1;
            }
        }
    }

    /// Wait for `n` events of the event generator (`eventgen rate=`).
    pub async fn events(&self, n: u64) {
        let rate = self.w.eventgen_rate.max(1) as u128;
        loop {
            if self.aborted() {
                return;
            }
            let since = self.sim.now().since(self.events_start.get()).as_ns() as u128;
            let made = (since * rate / 1_000_000_000) as u64;
            let want = self.events_taken.get() + n;
            if made >= want {
                self.events_taken.set(want);
                return;
            }
            let due_ns = (want as u128 * 1_000_000_000).div_ceil(rate);
            let due = self.events_start.get()
                + SimDuration::from_ns(due_ns.min(u64::MAX as u128 / 2) as u64);
            self.sim.sleep_until(due).await;
        }
    }

    /// `stats_snap`'s lines: the breakdown (one log entry, as filebench logs it) and the summary.
    fn log_snapshot(&self, s: &Snapshot) {
        let mut lines = s.breakdown();
        let first = lines.remove(0);
        self.info(format!("{first}\n{}", lines.join("\n")));
        self.info(s.summary());
    }

    fn snapshot(&self, stats_start: SimInstant, order: &[(usize, String, bool)]) -> Snapshot {
        let now = self.sim.now();
        let masters = self.masters.borrow();
        Snapshot {
            seconds: now.since(stats_start).as_secs_f64().max(1e-9),
            at: now.since(self.start).as_secs_f64(),
            flowops: order
                .iter()
                .map(|(gid, name, io)| FlowopLine {
                    name: name.clone(),
                    io: *io,
                    stats: masters[*gid],
                })
                .collect(),
        }
    }
}

/// Lay out every fileset and check that the pre-allocated files fit the file system.
pub(super) fn layout<F: FileSystem>(
    fs: &F,
    w: &Workload,
    seed: u64,
) -> Result<Vec<FilesetState>, FbError> {
    let mut rng = Rng::new(seed).stream("filebench-fileset");
    let sets: Vec<FilesetState> = w
        .filesets
        .iter()
        .map(|d| FilesetState::populate(d, &mut rng))
        .collect();
    let want: u64 = sets
        .iter()
        .zip(&w.filesets)
        .map(|(s, d)| (s.bytes as u128 * d.prealloc as u128 / 100) as u64)
        .sum();
    let (cap, used) = fs.capacity();
    if want > cap.saturating_sub(used) {
        return Err(FbError::new(format!(
            "the filesets' pre-allocated files take about {want} bytes, more than the file system's {} free: lower $nfiles or the file size, or give a larger --fs-size",
            cap.saturating_sub(used)
        )));
    }
    Ok(sets)
}

async fn mkdir_p<F: FileSystem>(fs: &F, path: &str) -> Result<(), FbError> {
    let mut at = String::new();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        at.push('/');
        at.push_str(part);
        match fs.mkdir(&at).await {
            Ok(_) | Err(host::fs::FsError::Exists(_)) => {}
            Err(e) => return Err(FbError::new(format!("mkdir {at}: {e}"))),
        }
    }
    Ok(())
}

/// Run the workload on `fs`.
pub async fn run<F: FileSystem>(
    fs: F,
    w: Workload,
    cfg: Config,
    seed: u64,
) -> Result<Report, FbError> {
    let sim = fs.sim().clone();
    let sets = layout(&fs, &w, seed)?;
    let mut prng = Rng::new(seed).stream("filebench-data");
    let mut pattern = vec![0u8; PATTERN_BYTES];
    prng.fill(&mut pattern);
    let cpu = CpuPool::new(&sim, cfg.cores.max(1));
    let n_flowops: usize = w
        .processes
        .iter()
        .flat_map(|p| &p.threads)
        .map(|t| t.flowops.len())
        .sum();
    let sh = Rc::new(Shared {
        sim: sim.clone(),
        cpu,
        sets: sets.into_iter().map(RefCell::new).collect(),
        notify: Notify::new(),
        masters: RefCell::new(vec![FlowStats::default(); n_flowops]),
        control: RefCell::new(FlowStats::default()),
        abort: Cell::new(Abort::No),
        events_taken: Cell::new(0),
        events_start: Cell::new(sim.now()),
        log: RefCell::new(Vec::new()),
        start: sim.now(),
        pattern,
        failure: RefCell::new(None),
        cfg,
        w,
        fs,
    });
    for l in &sh.w.log {
        sh.info(l.clone());
    }
    let (files, bytes) = preallocate(&sh, seed).await?;
    // Threads, in filebench's list order (the last defined process first).
    let mut order = Vec::new();
    let mut gid = 0;
    let mut starts = Vec::new();
    for (pi, p) in sh.w.processes.iter().enumerate() {
        for (ti, t) in p.threads.iter().enumerate() {
            for f in &t.flowops {
                order.push((gid, f.name.clone(), f.kind.is_io()));
                gid += 1;
            }
            starts.push((pi, ti, gid - t.flowops.len()));
        }
    }
    order.reverse();
    let mut handles = Vec::new();
    for pi in (0..sh.w.processes.len()).rev() {
        let p = &sh.w.processes[pi];
        sh.info(format!("Starting {} {} instances", p.instances, p.name));
        for pinst in 0..p.instances {
            for &(spi, ti, base) in starts.iter().filter(|s| s.0 == pi) {
                let t = &sh.w.processes[spi].threads[ti];
                for tinst in 0..t.instances {
                    let rng = Rng::new(seed)
                        .stream(&format!("filebench-thread-{pi}-{pinst}-{ti}-{tinst}"));
                    let sh2 = sh.clone();
                    handles.push(sim.spawn(async move {
                        thread_main(sh2, pi, pinst, ti, tinst, base, rng).await
                    }));
                }
            }
        }
    }
    let threads = handles.len();
    let alive = Rc::new(Cell::new(threads));
    sh.info("Running...");
    let mut stats_start = sim.now();
    sh.events_start.set(sim.now());
    *sh.masters.borrow_mut() = vec![FlowStats::default(); n_flowops];
    let mut runtime = sh.cfg.runtime.unwrap_or(sh.w.runtime);
    if runtime == 0 && sh.w.mode == Mode::Timeout {
        runtime = 60;
    }
    let bounded = runtime == 0;
    if bounded {
        runtime = sh.cfg.max_runtime;
    }
    // Watch for every thread having stopped (quit alldone, or all done by themselves).
    let mut waiters = Vec::new();
    for h in handles {
        let (alive, sh2) = (alive.clone(), sh.clone());
        waiters.push(sim.spawn(async move {
            h.await;
            alive.set(alive.get() - 1);
            if alive.get() == 0 && sh2.abort.get() == Abort::No {
                sh2.abort.set(Abort::Done);
            }
        }));
    }
    let mut snapshots = Vec::new();
    let (period, reset) = match sh.w.psrun_period {
        Some(p) if p < 0 => (p.unsigned_abs(), true),
        Some(p) => (p as u64, false),
        None => (runtime, false),
    };
    let mut slept = 0u64;
    loop {
        let step = period.min(runtime - slept).max(1);
        let mut done = 0;
        while done < step {
            sim.sleep(SimDuration::from_secs(1)).await;
            done += 1;
            if sh.aborted() {
                break;
            }
        }
        slept += done;
        if sh.aborted() || slept >= runtime {
            break;
        }
        let s = sh.snapshot(stats_start, &order);
        sh.log_snapshot(&s);
        snapshots.push(s);
        if reset {
            stats_start = sim.now();
            *sh.masters.borrow_mut() = vec![FlowStats::default(); n_flowops];
        }
    }
    if bounded && !sh.aborted() {
        sh.error(format!(
            "the run had no time limit and was stopped after {runtime} seconds (use --runtime to change)"
        ));
    }
    sh.info(format!("Run took {slept} seconds..."));
    let failed = sh.abort.get() == Abort::Error;
    if failed {
        sh.error("NO VALID RESULTS! Filebench run terminated prematurely");
    } else {
        let s = sh.snapshot(stats_start, &order);
        sh.log_snapshot(&s);
        snapshots.push(s);
    }
    if sh.abort.get() == Abort::No {
        sh.abort.set(Abort::Done);
    }
    sh.notify.notify_waiters();
    sh.info("Shutting down processes");
    for wtr in waiters {
        wtr.await;
    }
    let log = sh.log.borrow().clone();
    let failure = sh.failure.borrow().clone();
    Ok(Report {
        log,
        snapshots,
        failed: if failed {
            Some(failure.unwrap_or_else(|| "the run stopped early".into()))
        } else {
            None
        },
        preallocated_files: files,
        preallocated_bytes: bytes,
    })
}

/// `fileset_createsets`: directories, then each file with probability prealloc/100.
async fn preallocate<F: FileSystem>(sh: &Rc<Shared<F>>, seed: u64) -> Result<(u64, u64), FbError> {
    sh.info("Populating and pre-allocating filesets");
    let mut rng = Rng::new(seed).stream("filebench-prealloc");
    let (mut files, mut bytes) = (0, 0);
    for si in (0..sh.sets.len()).rev() {
        let def = &sh.w.filesets[si];
        {
            let st = sh.sets[si].borrow();
            if def.entries == 0 && def.leafdirs == 0 {
                sh.error("Fileset has no files or leafdirs");
            }
            if !def.single_file {
                sh.info(format!(
                    "{} populated: {} files, avg. dir. width = {}, avg. dir. depth = {:.1}, {} leafdirs, {:.3}MB total size",
                    def.name,
                    def.entries,
                    st.meanwidth as i64,
                    st.meandepth,
                    def.leafdirs,
                    st.bytes as f64 / 1024.0 / 1024.0
                ));
            }
            sh.info(format!("Removing {} tree (if exists)", def.name));
            sh.info(format!("Pre-allocating directories in {} tree", def.name));
        }
        let (root, dirs) = {
            let st = sh.sets[si].borrow();
            (st.root.clone(), st.dirs.clone())
        };
        mkdir_p(&sh.fs, &root).await?;
        for d in dirs.iter().filter(|d| !d.is_empty()) {
            let p = format!("{root}{d}");
            sh.fs
                .mkdir(&p)
                .await
                .map_err(|e| FbError::new(format!("mkdir {p}: {e}")))?;
        }
        sh.info(format!("Pre-allocating files in {} tree", def.name));
        let n = sh.sets[si].borrow().files.len() as u32;
        for i in 0..n {
            if rng.below(100) >= def.prealloc {
                continue;
            }
            let (path, size) = {
                let st = sh.sets[si].borrow();
                (st.path(What::File, i), st.files[i as usize].size)
            };
            let ino =
                sh.fs.create(&path).await.map_err(|e| {
                    FbError::new(format!("Failed to pre-allocate file {path}: {e}"))
                })?;
            let mut off = 0;
            while off < size {
                let n = (size - off).min(ALLOC_BLOCK) as usize;
                let data = sh.data(&mut rng, n);
                sh.fs.write(ino, off, &data).await.map_err(|e| {
                    FbError::new(format!("Failed to pre-allocate file {path}: {e}"))
                })?;
                off += n as u64;
            }
            let mut st = sh.sets[si].borrow_mut();
            let busy = st.pick(What::File, false, Some(i as u64));
            debug_assert_eq!(busy, Pick::Got(i));
            st.unbusy(What::File, i, Some(true), 0);
            files += 1;
            bytes += size;
        }
        let n = sh.sets[si].borrow().leafdirs.len() as u32;
        for i in 0..n {
            if rng.below(100) >= def.prealloc {
                continue;
            }
            let path = sh.sets[si].borrow().path(What::LeafDir, i);
            sh.fs
                .mkdir(&path)
                .await
                .map_err(|e| FbError::new(format!("mkdir {path}: {e}")))?;
            let mut st = sh.sets[si].borrow_mut();
            let _ = st.pick(What::LeafDir, false, Some(i as u64));
            st.unbusy(What::LeafDir, i, Some(true), 0);
        }
    }
    sh.info("Waiting for pre-allocation to finish (in case of a parallel pre-allocation)");
    sh.info("Population and pre-allocation of filesets completed");
    Ok((files, bytes))
}

/// One thread instance: `flowop_start`'s loop.
async fn thread_main<F: FileSystem>(
    sh: Rc<Shared<F>>,
    pi: usize,
    pinst: u64,
    ti: usize,
    tinst: u64,
    base: usize,
    rng: Rng,
) {
    let p = &sh.w.processes[pi];
    let t = &p.threads[ti];
    let n = t.flowops.len();
    let mut ts = ThreadState {
        fds: vec![None; super::model::MAXFD as usize + 1],
        rng,
        buf: Vec::new(),
        memsize: t.memsize,
        local: vec![FlowStats::default(); n],
        last: vec![0; n],
        bucket: vec![0; n],
        label: format!("process ({},{pinst}), thread ({},{tinst})", p.name, t.name),
    };
    'run: loop {
        for (li, fo) in t.flowops.iter().enumerate() {
            let iters = fo.iters.get(&mut ts.rng);
            for _ in 0..iters {
                if sh.aborted() {
                    break 'run;
                }
                let before = sh.sim.now();
                let out = super::ops::flowop(&sh, &mut ts, base + li, li, fo, &t.flowops).await;
                if sh.sim.now() == before {
                    // A flowop that made no call (a no-op eventlimit, a 0-byte append) still
                    // costs the loop a call's time: virtual time always advances.
                    sh.sim
                        .sleep(SimDuration::from_ns(sh.cfg.syscall_ns.max(1000)))
                        .await;
                }
                match out {
                    Out::Ok => {}
                    Out::Abort => break 'run,
                    Out::Error(_) if sh.aborted() => break 'run,
                    Out::Error(why) => {
                        sh.error(why.clone());
                        sh.error(format!(
                            "{}-{}: flowop {}-{} failed",
                            t.name, tinst, fo.name, tinst
                        ));
                        sh.failure.borrow_mut().get_or_insert(why);
                        sh.abort.set(Abort::Error);
                        sh.notify.notify_waiters();
                        break 'run;
                    }
                    Out::NoRsc => {
                        match sh.w.mode {
                            Mode::FirstDone => {
                                if sh.abort.get() == Abort::No {
                                    sh.abort.set(Abort::Done);
                                }
                            }
                            Mode::AllDone => {}
                            Mode::Timeout => {
                                sh.error(format!(
                                    "WARNING! Run stopped early:\n                flowop {}-{} could not obtain a file. Please\n                reduce runtime, increase fileset entries ($nfiles), or switch modes.",
                                    fo.name, tinst
                                ));
                                sh.failure.borrow_mut().get_or_insert(format!(
                                    "flowop {} could not obtain a file (all busy or none left)",
                                    fo.name
                                ));
                                sh.abort.set(Abort::Error);
                            }
                        }
                        sh.notify.notify_waiters();
                        break 'run;
                    }
                }
            }
        }
        // Give the executor a turn even if no flowop awaited anything.
        sh.sim.yield_now().await;
    }
}
