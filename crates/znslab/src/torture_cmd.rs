//! `znslab torture`: seeded power cuts through the device, the file system and the store.
//!
//! Each seed draws a workload (db_bench overwrite or fillbatch, YCSB A or E, db_bench with four
//! writer threads, or fio on the raw zones: see `WORKLOADS` and `torture_raw`), a compression
//! scheme for the store (any of eight, CCZNS's on the cczns design) and a device design
//! (CCZNS, plain ZNS, Balloon-ZNS, or a compressing block SSD under zones the host emulates),
//! on a small device kept in an image file, and runs until a random virtual instant; one seed
//! in four meets an injected fault first (the next write, read or zone command refused with a
//! failure status), which may stop the workload with an error naming it. Reads and scans
//! before the cut must see the last acknowledged values. Then the power goes: every host task
//! is dropped where it stands (`Sim::power_cut`: memtables, file-system state, commands
//! waiting for completions); the device keeps what its capacitor-protected buffer held, which
//! is every command it took (its tables are saved as its capacitors would, and read back from
//! the image). At power-on its open zones are closed and its faults are gone. Then it is
//! checked: zone states and write pointers are legal, the file system mounts (on emulated
//! zones after the host found them again), the store opens, every write acknowledged as
//! synced (and all its writer made before it) reads back with a value written at or after it,
//! nothing reads back that was never written, the store as a whole holds what a prefix of the
//! acknowledged batches in WAL order left (point-in-time recovery), and raw zones hold their
//! patterns below their write pointers. A failing seed prints the one command that replays it.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

use device::{presets, CommandKind, Controller, DeviceHandle, Status, ZoneState};
use host::lsm::db::{CcOptions, Db, DbOptions};
use host::lsm::memtable::WriteBatch;
use host::zonefs::ZoneFs;
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::{Rng, Sim, SimDuration, SimInstant};

use crate::torture_kill::{self, Ack};
use crate::torture_raw;

#[derive(clap::Args)]
pub struct Args {
    /// Seeds to run, from `--seed` on.
    #[arg(long, default_value_t = 100)]
    pub(crate) seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Start no new seed after this many seconds of wall time.
    #[arg(long)]
    pub(crate) time_limit: Option<f64>,
    /// Folder for the device images (default: the system's temporary folder).
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// After each power-on, print every WAL's size and extents (for replaying a failure).
    #[arg(long)]
    pub(crate) verbose: bool,
    /// Run this workload on every seed instead of a drawn one: kv, fillbatch, ycsb-a, ycsb-e,
    /// threads, raw.
    #[arg(long)]
    pub(crate) workload: Option<String>,
    /// Run the store with this compression scheme on every seed instead of a drawn one (cc
    /// schemes run on the cczns design).
    #[arg(long)]
    pub(crate) scheme: Option<String>,
    /// Run on this device design on every seed instead of a drawn one: cczns, zns, balloon,
    /// tcssd (a compressing block SSD under zones the host emulates; store workloads only).
    #[arg(long)]
    pub(crate) design: Option<String>,
    /// Inject no faults (by default one seed in four meets one before its cut: the next
    /// write, read or zone command refused with a failure status).
    #[arg(long)]
    pub(crate) no_faults: bool,
    /// Kill real processes instead of cutting the simulated power: each seed runs its
    /// workload in a child `znslab` process on an image, SIGKILLs it at a random wall-clock
    /// instant (sometimes again while a second child mounts, recovers and reads), then
    /// checks the image in a fresh process against what the child acknowledged.
    #[arg(long)]
    pub(crate) kill: bool,
    /// (`--kill`'s child) Run one phase on `--image`, logging to `--ack-log`: workload or
    /// recover.
    #[arg(long, hide = true)]
    pub(crate) kill_child: Option<String>,
    #[arg(long, hide = true)]
    pub(crate) image: Option<PathBuf>,
    #[arg(long, hide = true)]
    pub(crate) ack_log: Option<PathBuf>,
}

/// The statuses an injected fault ends a command with.
const FAULT_STATUSES: [Status; 8] = [
    Status::INTERNAL_ERROR,
    Status::UNRECOVERED_READ_ERROR,
    Status::ZONE_READ_ONLY,
    Status::ZONE_OFFLINE,
    Status::ZONE_FULL,
    Status::ZONE_INVALID_WRITE,
    Status::ZONE_TOO_MANY_ACTIVE,
    Status::CAPACITY_EXCEEDED,
];

/// A fault a seed meets: from `at_ns` on, the next command of `kind` ends with `status`.
#[derive(Clone, Copy)]
struct Fault {
    kind: CommandKind,
    status: Status,
    at_ns: u64,
}

/// Every device design torture runs on.
const ALL_DESIGNS: [&str; 4] = ["cczns", "zns", "balloon", "tcssd"];
/// The workloads a seed draws from. kv: db_bench overwrite, random keys, one sync in 16;
/// fillbatch: db_bench fillseq with `--batch_size` 1-16, one sync in 8; ycsb-a: half reads of
/// hot keys, half updates; ycsb-e: short scans, reads, updates; threads: db_bench overwrite
/// with `--threads 4`, each writer its own keys, batches of 1-4, reads and scans; raw: fio on
/// the bare zones.
pub(crate) const WORKLOADS: [&str; 6] = ["kv", "fillbatch", "ycsb-a", "ycsb-e", "threads", "raw"];
/// Every scheme the store runs under torture.
const ALL_SCHEMES: [&str; 8] = [
    "no",
    "snappy",
    "qat",
    "zstd",
    "zstdpc",
    "cc",
    "cc-single-dr",
    "cc-single-cw",
];

/// How a store workload draws its operations.
pub(crate) struct Mix {
    /// Percent of operations that are point reads, checked against the last acknowledged
    /// value (read-your-writes before the cut).
    read_pct: u64,
    /// Percent that are scans of up to 8 keys, checked likewise.
    scan_pct: u64,
    /// Writes per batch: 1 to this.
    batch_max: u64,
    sequential: bool,
    /// Keys drawn skewed towards the low ones (YCSB's hot set), not uniformly.
    hot: bool,
    /// One write (batch) in this many is synced.
    sync_one_in: u64,
    /// Reader tasks beside the writers (lookups and scans of hot keys).
    readers: usize,
    /// Writer tasks, each with its own keys (db_bench `--threads`).
    writers: usize,
}

impl Mix {
    fn of(workload: &str) -> Mix {
        let kv = Mix {
            read_pct: 0,
            scan_pct: 0,
            batch_max: 1,
            sequential: false,
            hot: false,
            sync_one_in: 16,
            readers: 0,
            writers: 1,
        };
        match workload {
            "fillbatch" => Mix {
                batch_max: 16,
                sequential: true,
                sync_one_in: 8,
                ..kv
            },
            "ycsb-a" => Mix {
                read_pct: 50,
                hot: true,
                readers: 2,
                ..kv
            },
            "ycsb-e" => Mix {
                read_pct: 10,
                scan_pct: 40,
                hot: true,
                readers: 2,
                ..kv
            },
            "threads" => Mix {
                read_pct: 20,
                scan_pct: 10,
                batch_max: 4,
                writers: 4,
                ..kv
            },
            _ => kv,
        }
    }
}

/// Choices forced from the command line.
#[derive(Clone, Copy, Default)]
pub(crate) struct Forced {
    pub(crate) workload: Option<&'static str>,
    pub(crate) scheme: Option<&'static str>,
    pub(crate) design: Option<&'static str>,
    pub(crate) no_faults: bool,
}

const SCHEMES: [&str; 3] = ["no", "zstd", "cc"];
const DESIGNS: [&str; 3] = ["cczns", "zns", "balloon"];
/// Keys the workload draws from: few enough that most are written many times over.
pub(crate) const KEYS: u64 = 400;

/// What one seed did.
#[derive(Default)]
struct Outcome {
    workload: &'static str,
    scheme: &'static str,
    design: &'static str,
    acknowledged: usize,
    synced: usize,
    keys_checked: usize,
    /// Raw workload: blocks read back and compared.
    blocks_checked: u64,
    /// Reads and scans checked before the cut.
    reads_checked: usize,
    /// A fault was set, was met by a command, stopped the workload with an error naming it.
    fault_injected: bool,
    fault_fired: bool,
    fault_reported: bool,
    /// The cut came before the file system was made: only the device was checked.
    before_mkfs: bool,
}

/// One acknowledged write: its key and value (None: a delete).
pub(crate) type Write = (u64, Option<Vec<u8>>);

/// What one writer did before the cut. Writers own disjoint keys (writer `w` of `n` the keys
/// `k % n == w`), so each key's history is one writer's, in that writer's order.
#[derive(Default)]
pub(crate) struct WriterLog {
    /// Its acknowledged writes, in order.
    pub(crate) acked: Vec<Acked>,
    /// Its writes up to here were acknowledged by (or before) a synced write of its own.
    pub(crate) synced: usize,
    /// Its batch in flight at the cut (issued, not acknowledged): it may or may not persist.
    pub(crate) pending: Vec<Write>,
}

type Logs = Rc<RefCell<Vec<WriterLog>>>;

/// One acknowledged write, with its sequence number (its place in the WAL among every
/// writer's) and whether it ends its batch.
pub(crate) struct Acked {
    pub(crate) key: u64,
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) seq: u64,
    pub(crate) ends_batch: bool,
}

impl WriterLog {
    /// Its batch in flight was acknowledged at sequence `seq`, synced or not.
    pub(crate) fn acknowledge_pending(&mut self, seq: u64, sync: bool) {
        let writes = std::mem::take(&mut self.pending);
        let n = writes.len() as u64;
        self.acked
            .extend((0..).zip(writes).map(|(i, (key, value))| Acked {
                key,
                value,
                seq: seq + i,
                ends_batch: i + 1 == n,
            }));
        if sync {
            self.synced = self.acked.len();
        }
    }

    /// Per key of this writer: the values it may hold after power-on — every value written
    /// from its last synced write on (the synced one included, and the batch in flight, never
    /// synced), or, with no synced write, any written value or none at all.
    fn allowed_values<'a>(&'a self, allowed: &mut BTreeMap<u64, Vec<Option<&'a Vec<u8>>>>) {
        let mut last_synced: BTreeMap<u64, usize> = BTreeMap::new();
        for (i, a) in self.acked[..self.synced].iter().enumerate() {
            last_synced.insert(a.key, i);
        }
        let writes = self.acked.iter().map(|a| (a.key, &a.value));
        for (i, (k, v)) in writes
            .chain(self.pending.iter().map(|(k, v)| (*k, v)))
            .enumerate()
        {
            let from = last_synced.get(&k).copied();
            let a = allowed.entry(k).or_insert_with(|| {
                if from.is_none() {
                    vec![None]
                } else {
                    Vec::new()
                }
            });
            if from.is_none_or(|f| i >= f) {
                a.push(v.as_ref());
            }
        }
    }
}

/// After power-on the store must hold what a prefix of the acknowledged batches left, in
/// their WAL order (sequence numbers), a prefix reaching at least the newest synced batch: the
/// WAL is written in order and recovered to a point in time (RocksDB's point-in-time recovery),
/// so a batch never comes back without every batch before it, nor in part. A key holding a
/// value of its writer's batch in flight at the cut fits any prefix (that batch's place in
/// the order is unknown). `observed`: every key's value after power-on.
fn check_prefix(
    logs: &[WriterLog],
    observed: &BTreeMap<u64, Option<Vec<u8>>>,
) -> Result<(), String> {
    let writers = logs.len().max(1) as u64;
    // Every acknowledged write in WAL order.
    let mut ops: Vec<&Acked> = logs.iter().flat_map(|l| &l.acked).collect();
    ops.sort_by_key(|a| a.seq);
    let synced = logs
        .iter()
        .filter(|l| l.synced > 0)
        .map(|l| l.acked[l.synced - 1].seq)
        .max();
    let seen = |k: u64| observed.get(&k).and_then(|v| v.as_ref());
    let in_flight = |k: u64| {
        logs[(k % writers) as usize]
            .pending
            .iter()
            .any(|(pk, pv)| *pk == k && pv.as_ref() == seen(k))
    };
    // Each key's value after the prefix so far (absent: never written).
    let mut state: BTreeMap<u64, Option<&Vec<u8>>> = BTreeMap::new();
    let fits = |state: &BTreeMap<u64, Option<&Vec<u8>>>, k: u64| {
        state.get(&k).copied().flatten() == seen(k) || in_flight(k)
    };
    let mut differ = observed.keys().filter(|&&k| !fits(&state, k)).count();
    // The prefix that came closest: (keys that differ, up to which sequence; None: no batch,
    // a prefix only when nothing was synced).
    let mut best = synced.is_none().then_some((differ, None));
    for a in &ops {
        let before = fits(&state, a.key);
        state.insert(a.key, a.value.as_ref());
        match (before, fits(&state, a.key)) {
            (true, false) => differ += 1,
            (false, true) => differ -= 1,
            _ => {}
        }
        if a.ends_batch
            && synced.is_none_or(|s| a.seq >= s)
            && best.is_none_or(|(fewest, _)| differ < fewest)
        {
            best = Some((differ, Some(a.seq)));
        }
    }
    let (fewest, p) = best.unwrap_or((differ, None));
    if fewest == 0 {
        return Ok(());
    }
    // None fits: name a key that differs from the prefix that came closest.
    let mut state: BTreeMap<u64, Option<&Vec<u8>>> = BTreeMap::new();
    for a in ops.iter().take_while(|a| p.is_some_and(|p| a.seq <= p)) {
        state.insert(a.key, a.value.as_ref());
    }
    let k = observed.keys().copied().find(|&k| !fits(&state, k));
    Err(format!(
        "after power-on the store holds no prefix of the acknowledged writes in WAL order \
         ({} writes, the newest synced at sequence {synced:?}): at best, up to sequence {p:?}, \
         {} keys differ{}",
        ops.len(),
        fewest,
        k.map_or(String::new(), |k| format!(
            ", key {k} reads {} where that prefix left {}",
            show(seen(k).map(|v| &v[..])),
            show(state.get(&k).copied().flatten().map(|v| &v[..]))
        ))
    ))
}

/// One writer task of a store workload: writes (and reads back) its own keys.
struct Writer {
    db: Db,
    /// Its number, of `mix.writers`.
    w: usize,
    mix: Rc<Mix>,
    logs: Logs,
    issued: Issued,
    reads_checked: Rc<Cell<usize>>,
    /// `--kill`'s child: where each batch is logged before it is issued and when it is
    /// acknowledged (see `torture_kill`).
    ack: Ack,
}

impl Writer {
    /// One of its keys: index `i` of the `KEYS / writers` it owns.
    fn own(&self, i: u64) -> u64 {
        i * self.mix.writers as u64 + self.w as u64
    }

    fn owns(&self, k: u64) -> bool {
        k % self.mix.writers as u64 == self.w as u64
    }

    /// Runs until an error; reads and scans are checked against its acknowledged writes
    /// (read-your-writes), other writers' keys in scans against what they issued.
    async fn run(self, mut wl: Rng) -> Result<(), String> {
        let (db, mix) = (&self.db, &*self.mix);
        let per = KEYS / mix.writers as u64;
        let draw = |wl: &mut Rng| {
            let i = if mix.hot {
                let top = wl.below(per) + 1;
                wl.below(top)
            } else {
                wl.below(per)
            };
            self.own(i)
        };
        // The last acknowledged value of every key written (None: deleted).
        let mut latest: BTreeMap<u64, Option<Vec<u8>>> = BTreeMap::new();
        let mut next = 0u64;
        loop {
            if mix.read_pct + mix.scan_pct > 0 {
                let r = wl.below(100);
                let k = draw(&mut wl);
                if r < mix.read_pct {
                    let got = db.get(&key(k)).await.map_err(|e| e.to_string())?;
                    if got.as_ref() != latest.get(&k).and_then(|v| v.as_ref()) {
                        return Err(format!(
                            "before the cut, key {k} reads {}, not its last acknowledged value",
                            show(got.as_deref())
                        ));
                    }
                    self.reads_checked.set(self.reads_checked.get() + 1);
                    continue;
                }
                if r < mix.read_pct + mix.scan_pct {
                    let got = db.scan(&key(k), 8).await.map_err(|e| e.to_string())?;
                    check_scan(k, &got, &latest, |n| self.owns(n), &self.issued.borrow())?;
                    self.reads_checked.set(self.reads_checked.get() + 1);
                    continue;
                }
            }
            let n = if mix.batch_max > 1 {
                1 + wl.below(mix.batch_max)
            } else {
                1
            };
            let mut batch = WriteBatch::default();
            let mut writes = Vec::new();
            let mut sync = false;
            for i in 0..n {
                let k = if mix.sequential {
                    next = (next + 1) % per;
                    self.own(next)
                } else {
                    draw(&mut wl)
                };
                if i == 0 {
                    sync = wl.below(mix.sync_one_in) == 0;
                }
                let seq = self.logs.borrow()[self.w].acked.len() + writes.len();
                let v = (wl.below(8) != 0).then(|| value(&mut wl, seq));
                match &v {
                    Some(v) => batch.put(&key(k), v),
                    None => batch.delete(&key(k)),
                }
                writes.push((k, v));
            }
            for (k, v) in &writes {
                if let Some(v) = v {
                    self.issued
                        .borrow_mut()
                        .entry(*k)
                        .or_default()
                        .push(v.clone());
                }
            }
            self.logs.borrow_mut()[self.w].pending = writes.clone();
            torture_kill::log_pending(&self.ack, self.w, &writes)?;
            let seq = db
                .write_seq(&batch, sync)
                .await
                .map_err(|e| e.to_string())?
                .ok_or("an empty batch")?;
            for (k, v) in &writes {
                latest.insert(*k, v.clone());
            }
            self.logs.borrow_mut()[self.w].acknowledge_pending(seq, sync);
            torture_kill::log_acked(&self.ack, self.w, seq, sync)?;
        }
    }
}

/// A writer's scan of 8 from its key `k`: keys in order from `k`; its own keys (`owns`) with
/// their last acknowledged values (`latest`) and none of its live keys in the range missing;
/// other writers' keys with a value they issued.
fn check_scan(
    k: u64,
    got: &[(Vec<u8>, Vec<u8>)],
    latest: &BTreeMap<u64, Option<Vec<u8>>>,
    owns: impl Fn(u64) -> bool,
    issued: &BTreeMap<u64, Vec<Vec<u8>>>,
) -> Result<(), String> {
    let wrong = |what: String| Err(format!("before the cut, a scan from key {k} {what}"));
    let mut last: Option<u64> = None;
    for (kb, v) in got {
        let Some(n) = key_number(kb).filter(|&n| n >= k && last.is_none_or(|l| n > l)) else {
            return wrong(format!("returned key {} out of order", show(Some(kb))));
        };
        let right = if owns(n) {
            latest.get(&n).and_then(|v| v.as_ref()) == Some(v)
        } else {
            was_issued(issued, n, v)
        };
        if !right {
            return wrong(format!(
                "returned key {n} with {}, not its last acknowledged (or an issued) value",
                show(Some(v))
            ));
        }
        last = Some(n);
    }
    // Where a full scan stopped, its own keys beyond were not asked for.
    let end = if got.len() == 8 { last } else { None };
    let missing = latest
        .range(k..)
        .take_while(|(n, _)| end.is_none_or(|e| **n <= e))
        .filter(|(_, v)| v.is_some())
        .map(|(n, _)| *n)
        .find(|n| !got.iter().any(|(kb, _)| key_number(kb) == Some(*n)));
    match missing {
        Some(n) => wrong(format!(
            "missed key {n}, live by an acknowledged write ({} pairs returned)",
            got.len()
        )),
        None => Ok(()),
    }
}

/// Every value the writers have issued per key, acknowledged or not.
type Issued = Rc<RefCell<BTreeMap<u64, Vec<Vec<u8>>>>>;

/// Whether a writer issued `v` for key `k`: what a reader beside the writers may see.
fn was_issued(issued: &BTreeMap<u64, Vec<Vec<u8>>>, k: u64, v: &[u8]) -> bool {
    issued.get(&k).is_some_and(|vs| vs.iter().any(|w| w == v))
}

pub(crate) fn key(k: u64) -> Vec<u8> {
    format!("key{k:06}").into_bytes()
}

/// The number in a key `key()` made.
fn key_number(k: &[u8]) -> Option<u64> {
    std::str::from_utf8(k.strip_prefix(b"key")?)
        .ok()?
        .parse()
        .ok()
}

fn value(rng: &mut Rng, seq: usize) -> Vec<u8> {
    let mut v = format!("v{seq}-").into_bytes();
    let words = ["zone ", "flash ", "the ", "index ", "of ", "host "];
    for _ in 0..10 + rng.below(60) {
        v.extend_from_slice(words[rng.below(words.len() as u64) as usize].as_bytes());
    }
    v
}

/// A value or key for a message: its first bytes, or "nothing".
/// A reader beside the writer: lookups and 8-key scans of hot keys, each value checked to
/// be one the writer issued for its key (which one depends on the race with the writer), scan
/// keys in order from the start key. Stops at the first error or wrong value, in `failed`.
pub(crate) fn spawn_reader(
    sim: &Sim,
    db: &Db,
    mut rng: Rng,
    issued: &Issued,
    reads_checked: &Rc<Cell<usize>>,
    failed: &Rc<RefCell<Option<String>>>,
) {
    let (db, issued, reads_checked, failed) = (
        db.clone(),
        issued.clone(),
        reads_checked.clone(),
        failed.clone(),
    );
    sim.spawn(async move {
        let run = async {
            let was_issued = |k: u64, v: &[u8]| was_issued(&issued.borrow(), k, v);
            loop {
                let top = rng.below(KEYS) + 1;
                let k = rng.below(top);
                if rng.below(2) == 0 {
                    let got = db.get(&key(k)).await.map_err(|e| e.to_string())?;
                    if let Some(v) = got.as_deref().filter(|v| !was_issued(k, v)) {
                        return Err(format!(
                            "before the cut, a reader got for key {k} {}, never written",
                            show(Some(v))
                        ));
                    }
                } else {
                    let got = db.scan(&key(k), 8).await.map_err(|e| e.to_string())?;
                    let mut last: Option<u64> = None;
                    for (kb, v) in &got {
                        let n = key_number(kb).filter(|&n| n >= k && last.is_none_or(|l| n > l));
                        let Some(n) = n.filter(|&n| was_issued(n, v)) else {
                            return Err(format!(
                                "before the cut, a reader's scan from key {k} returned key {} \
                                 with {}: out of order or never written",
                                show(Some(kb)),
                                show(Some(v))
                            ));
                        };
                        last = Some(n);
                    }
                }
                reads_checked.set(reads_checked.get() + 1);
            }
            #[allow(unreachable_code)]
            Ok::<(), String>(())
        };
        if let Err(e) = run.await {
            failed.borrow_mut().get_or_insert(e);
        }
    });
}

fn show(v: Option<&[u8]>) -> String {
    v.map_or("nothing".to_string(), |v| {
        String::from_utf8_lossy(&v[..v.len().min(24)]).into_owned()
    })
}

pub(crate) fn store_options(scheme: &str) -> anyhow::Result<DbOptions> {
    let mut opts = DbOptions {
        write_buffer_size: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        target_file_size: 64 << 10,
        ..DbOptions::default()
    };
    let s = workload::scheme::by_name(scheme).ok_or_else(|| anyhow::anyhow!("scheme {scheme}"))?;
    s.apply(&mut opts);
    if let Some(cc) = opts.cc.as_mut() {
        // Small CWs, so a flush of a 64 KiB memtable takes several.
        *cc = CcOptions {
            write_buffer: 16 << 10,
            ..cc.clone()
        };
    }
    Ok(opts)
}

/// What a seed draws: its workload, scheme, design, cut and fault.
pub(crate) struct Drawn {
    pub(crate) rng: Rng,
    pub(crate) workload: &'static str,
    pub(crate) scheme: &'static str,
    pub(crate) design: &'static str,
    pub(crate) cut_ns: u64,
    fault: Option<Fault>,
}

/// Run seed `seed` to its power cut and check what came back. Err: the scheme, the cut's
/// instant and what was wrong.
fn one(
    seed: u64,
    dir: &std::path::Path,
    verbose: bool,
    forced: &Forced,
) -> Result<Outcome, (&'static str, &'static str, u64, String)> {
    let Drawn {
        rng,
        workload,
        scheme,
        design,
        cut_ns,
        fault,
    } = draw(seed, forced);
    let label = if workload == "raw" { "raw" } else { scheme };
    one_cut(
        seed, rng, workload, scheme, design, cut_ns, fault, dir, verbose,
    )
    .map_err(|e| {
        let e = match fault {
            Some(f) => format!(
                "{e} [{workload}; fault from {:.3} ms: the next {:?} command ends {}]",
                f.at_ns as f64 / 1e6,
                f.kind,
                f.status.name()
            ),
            None => format!("{e} [{workload}]"),
        };
        (label, design, cut_ns, e)
    })
}

/// Seed `seed`'s draws (`forced` fixes some of them).
pub(crate) fn draw(seed: u64, forced: &Forced) -> Drawn {
    let mut rng = Rng::new(seed);
    let drawn = SCHEMES[rng.below(SCHEMES.len() as u64) as usize];
    // The device design: CCZNS for the cc scheme; for the others also plain ZNS or Balloon-ZNS.
    let design = if drawn == "cc" {
        "cczns"
    } else {
        DESIGNS[rng.below(DESIGNS.len() as u64) as usize]
    };
    let window = if rng.below(4) == 0 {
        400_000_000
    } else {
        60_000_000
    };
    // Mostly inside the first tens of milliseconds, where flushes and compactions run.
    let cut_ns = 1 + rng.below(window);
    // Drawn from a stream of their own, so the draws above (and the seeds of the regression
    // tests, replayed with --workload kv and their scheme) stay as they were.
    let mut mix = rng.stream("mix");
    let workload = forced
        .workload
        .unwrap_or(WORKLOADS[mix.below(WORKLOADS.len() as u64) as usize]);
    // Raw zones need a zoned device.
    let workload = match (workload, forced.design) {
        ("raw", Some("tcssd")) => "kv",
        (w, _) => w,
    };
    let siblings: &[&'static str] = match drawn {
        "zstd" => &["zstd", "snappy", "zstdpc", "qat"],
        "cc" => &["cc", "cc-single-dr", "cc-single-cw"],
        _ => &[drawn],
    };
    let scheme = forced
        .scheme
        .unwrap_or(siblings[mix.below(siblings.len() as u64) as usize]);
    // A store workload with a host scheme may run on the compressing block SSD, zones
    // emulated by the host (a stream of its own again).
    let mut d = rng.stream("design");
    let design = if scheme.starts_with("cc") {
        "cczns"
    } else if let Some(forced) = forced.design {
        forced
    } else if workload != "raw" && d.below(4) == 0 {
        "tcssd"
    } else {
        design
    };
    // A design fixed on the command line that CCZNS commands cannot run on: a drawn cc
    // scheme gives way to no compression.
    let (scheme, design) = match forced.design {
        Some(f) if f != "cczns" && scheme.starts_with("cc") => ("no", f),
        _ => (scheme, design),
    };
    // Its own stream too: the regression seeds replay with --no-faults.
    let mut f = rng.stream("fault");
    let fault = (!forced.no_faults && f.below(4) == 0).then(|| Fault {
        kind: [CommandKind::Write, CommandKind::Read, CommandKind::ZoneMgmt][f.below(3) as usize],
        status: FAULT_STATUSES[f.below(FAULT_STATUSES.len() as u64) as usize],
        at_ns: f.below(cut_ns),
    });
    Drawn {
        rng,
        workload,
        scheme,
        design,
        cut_ns,
        fault,
    }
}

/// The small device every seed runs on, of design `design`.
pub(crate) fn device_config(design: &str) -> device::DeviceConfig {
    let mut cfg = match design {
        "zns" => presets::test_min(),
        "balloon" => presets::test_balloon(),
        "tcssd" => presets::test_tcssd(),
        _ => presets::test_cczns(),
    };
    cfg.nand.blocks_per_plane = 64; // 64 zones of 256 KiB
    cfg.zones.max_open = 6;
    cfg
}

/// A workload running on a device: what it has logged so far, for the check after power-on.
pub(crate) struct Scenario {
    pub(crate) logs: Logs,
    /// The file system was made.
    pub(crate) made: Rc<Cell<bool>>,
    pub(crate) failed: Rc<RefCell<Option<String>>>,
    pub(crate) reads_checked: Rc<Cell<usize>>,
    pub(crate) raw_log: torture_raw::RawLog,
}

/// Start `workload` on `dev` as tasks of `sim` (mkfs first for the store workloads); each
/// acknowledgement goes to `ack` too when given.
pub(crate) fn start_workload(
    sim: &Sim,
    dev: &DeviceHandle,
    rng: &Rng,
    workload: &'static str,
    opts: &DbOptions,
    ack: Ack,
) -> Scenario {
    let mkfs = opts.mkfs_options(Default::default());
    let sc = Scenario {
        logs: Rc::default(),
        made: Rc::new(Cell::new(false)),
        failed: Rc::default(),
        reads_checked: Rc::new(Cell::new(0usize)),
        raw_log: Rc::default(),
    };
    let io = Rc::new(HostIo::new(
        dev,
        Rc::new(CpuPool::new(sim, 2)),
        IoConfig::default(),
    ));
    if workload == "raw" {
        torture_raw::spawn(sim, io, rng, sc.raw_log.clone(), sc.failed.clone(), ack);
        return sc;
    }
    let (logs, made, failed) = (sc.logs.clone(), sc.made.clone(), sc.failed.clone());
    let opts = opts.clone();
    let mix = Mix::of(workload);
    // Writer 0 draws from the stream a single writer always drew from, so seeds of the
    // one-writer workloads replay as they did.
    let writers: Vec<Rng> = (0..mix.writers)
        .map(|w| match w {
            0 => rng.stream("workload"),
            w => rng.stream(&format!("workload-{w}")),
        })
        .collect();
    logs.borrow_mut()
        .resize_with(mix.writers, WriterLog::default);
    let reads_checked = sc.reads_checked.clone();
    // YCSB's workloads also get readers beside the writer, as YCSB runs several client
    // threads: lookups and scans that read tables after releasing the store's lock while
    // flushes and compactions retire them.
    let readers: Vec<Rng> = (0..mix.readers)
        .map(|i| rng.stream(&format!("reader-{i}")))
        .collect();
    // Every value the writers have issued per key (acknowledged or not): what a reader
    // beside them may see.
    let issued: Issued = Rc::default();
    let sim2 = sim.clone();
    sim.spawn(async move {
        let run = async {
            let fs = Rc::new(
                ZoneFs::mkfs_with(io, mkfs)
                    .await
                    .map_err(|e| e.to_string())?,
            );
            made.set(true);
            torture_kill::log_made(&ack)?;
            let db = Db::open(fs, opts).await.map_err(|e| e.to_string())?;
            for rl in readers {
                spawn_reader(&sim2, &db, rl, &issued, &reads_checked, &failed);
            }
            let mix = Rc::new(mix);
            let mut writers = writers.into_iter().enumerate();
            let (_, first) = writers.next().ok_or("no writer")?;
            // The other writers run as tasks of their own (db_bench --threads).
            for (w, wl) in writers {
                let writer = Writer {
                    db: db.clone(),
                    w,
                    mix: mix.clone(),
                    logs: logs.clone(),
                    issued: issued.clone(),
                    reads_checked: reads_checked.clone(),
                    ack: ack.clone(),
                };
                let failed = failed.clone();
                sim2.spawn(async move {
                    if let Err(e) = writer.run(wl).await {
                        failed.borrow_mut().get_or_insert(e);
                    }
                });
            }
            Writer {
                db,
                w: 0,
                mix,
                logs,
                issued,
                reads_checked,
                ack,
            }
            .run(first)
            .await
        };
        if let Err(e) = run.await {
            failed.borrow_mut().get_or_insert(e);
        }
    });
    sc
}

#[allow(clippy::too_many_arguments)]
fn one_cut(
    seed: u64,
    rng: Rng,
    workload: &'static str,
    scheme: &'static str,
    design: &'static str,
    cut_ns: u64,
    fault: Option<Fault>,
    dir: &std::path::Path,
    verbose: bool,
) -> Result<Outcome, String> {
    let opts = store_options(scheme).map_err(|e| e.to_string())?;
    let path = dir.join(format!("znslab-torture-{}-{seed}.img", std::process::id()));
    let _remove = RemoveOnDrop(path.clone());
    let ctl = Controller::create_image(&path, device_config(design))
        .map_err(|e| format!("image: {e}"))?;

    // Before the cut.
    let sim = Sim::new(seed);
    let dev = DeviceHandle::new(&sim, ctl);
    let sc = start_workload(&sim, &dev, &rng, workload, &opts, None);
    if let Some(f) = fault {
        let (sim2, dev2) = (sim.clone(), dev.clone());
        sim.spawn(async move {
            sim2.sleep(SimDuration::from_ns(f.at_ns)).await;
            dev2.with(|c| c.faults_mut().refusals.push_back((f.kind, f.status)));
        });
    }
    sim.run_until(SimInstant::from_ns(cut_ns));
    // An injected fault may stop the workload, with an error that names it; any other error
    // is a failure.
    let fired = dev.with(|c| c.faults_mut().fired);
    let mut fault_reported = false;
    if let Some(e) = sc.failed.borrow_mut().take() {
        match fault {
            Some(f) if fired > 0 && e.contains(f.status.name()) => {
                if verbose {
                    eprintln!("the injected fault stopped the workload: {e}");
                }
                fault_reported = true
            }
            _ => return Err(format!("before the cut: {e}")),
        }
    }
    sim.power_cut();
    let ctl = dev
        .into_controller()
        .ok_or("a task still holds the device after the power cut")?;
    // The capacitors save the tables; power comes back.
    ctl.close().map_err(|e| format!("saving the image: {e}"))?;
    let logs = sc.logs.take();
    let mut out = Outcome {
        fault_injected: fault.is_some(),
        fault_fired: fired > 0,
        fault_reported,
        workload,
        scheme,
        design,
        reads_checked: sc.reads_checked.get(),
        acknowledged: logs.iter().map(|l| l.acked.len()).sum(),
        synced: logs.iter().map(|l| l.synced).sum(),
        ..Outcome::default()
    };
    let raw = sc.raw_log.take();
    let checked = check_power_on(
        &path,
        seed,
        workload,
        design,
        &opts,
        logs,
        &raw,
        sc.made.get(),
        verbose,
    )?;
    out.keys_checked = checked.keys;
    out.blocks_checked = checked.blocks;
    out.before_mkfs = checked.before_mkfs;
    Ok(out)
}

/// Deletes a seed's image when the seed is done with it.
pub(crate) struct RemoveOnDrop(pub(crate) PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What the check after power-on read back.
#[derive(Default)]
pub(crate) struct Checked {
    pub(crate) keys: usize,
    pub(crate) blocks: u64,
    /// The file system was never made: only the device was checked.
    pub(crate) before_mkfs: bool,
}

/// Power on the device in the image at `path` and check it against what the workload logged:
/// legal zones; raw zones holding their patterns; or the file system mounting, the store
/// opening, every synced write there and the store a prefix of the WAL order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_power_on(
    path: &std::path::Path,
    seed: u64,
    workload: &str,
    design: &str,
    opts: &DbOptions,
    logs: Vec<WriterLog>,
    raw: &[torture_raw::ZoneLog],
    made: bool,
    verbose: bool,
) -> Result<Checked, String> {
    let mut ctl = Controller::open_image(path).map_err(|e| format!("reopening: {e}"))?;
    ctl.power_cycle();

    // The device: legal zones (a conventional namespace has none of its own).
    let lay = ctl.layout().clone();
    let zoned = design != "tcssd";
    for zi in (0..ctl.zone_count()).filter(|_| zoned) {
        let z = ctl.zone(zi);
        let start = zi as u64 * lay.zone_size_lbas;
        let legal = match z.state {
            ZoneState::Empty => z.wp == start && z.byte_wp == 0,
            // Closed at its start too: an explicitly opened zone nothing was written to yet.
            ZoneState::Closed => {
                (start..start + lay.zone_capacity_lbas).contains(&z.wp)
                    && z.wp == start + z.byte_wp / lay.lba_bytes
            }
            ZoneState::Full => z.wp == start + lay.zone_capacity_lbas,
            _ => false,
        };
        let in_range = z.byte_wp <= lay.zone_capacity_lbas * lay.lba_bytes;
        if !legal || !in_range {
            return Err(format!("after power-on, zone {zi} is {z:?}"));
        }
    }
    let mut out = Checked::default();
    if workload == "raw" {
        out.blocks = torture_raw::check(&mut ctl, seed, raw)?;
        return Ok(out);
    }
    if !made {
        out.before_mkfs = true;
        return Ok(out);
    }

    // The file system and the store come back; acknowledged writes are checked.
    let sim = Sim::new(seed ^ 0x9e37_79b9);
    let dev = DeviceHandle::new(&sim, ctl);
    let io = Rc::new(HostIo::new(
        &dev,
        Rc::new(CpuPool::new(&sim, 2)),
        IoConfig::default(),
    ));
    let opts = opts.clone();
    out.keys = sim.block_on(async move {
        // On emulated zones the host first finds its zones again on the drive.
        io.recover_emulated_zones()
            .await
            .map_err(|e| format!("recovering the emulated zones: {e}"))?;
        let fs = Rc::new(ZoneFs::mount(io).await.map_err(|e| format!("mount: {e}"))?);
        if verbose {
            let mut all: Vec<String> = fs.list();
            all.sort();
            eprintln!(
                "files: {}",
                all.iter()
                    .map(|n| format!("{n} {}", fs.size(n).unwrap_or(0)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for name in fs.list() {
                if name.ends_with(".log") {
                    let ex = fs.extents(&name).unwrap_or_default();
                    eprintln!("{name}: size {:?} extents {:?}", fs.size(&name), ex);
                    // What lies in the gaps between consecutive pieces: the length header
                    // a sparse piece would start with.
                    for w in ex.windows(2) {
                        let next = (w[0].start + w[0].len).div_ceil(4096) * 4096;
                        if w[1].start != next + 8 {
                            let mut b = vec![0u8; 4096];
                            let _ = fs.io().read(next, &mut b).await;
                            let len = u64::from_le_bytes(b[..8].try_into().expect("8"));
                            eprintln!("  gap at {next}..{}: header {len}", w[1].start - 8);
                        }
                    }
                }
            }
        }
        let db = Db::open(fs, opts)
            .await
            .map_err(|e| format!("store open: {e}"))?;
        // Per key: the values it may hold now (`WriterLog::allowed_values`).
        let mut allowed: BTreeMap<u64, Vec<Option<&Vec<u8>>>> = BTreeMap::new();
        for l in &logs {
            l.allowed_values(&mut allowed);
        }
        let mut observed = BTreeMap::new();
        for k in 0..KEYS {
            let got = db
                .get(&key(k))
                .await
                .map_err(|e| format!("reading key {k}: {e}"))?;
            observed.insert(k, got.clone());
            let ok = match allowed.get(&k) {
                Some(a) => a.contains(&got.as_ref()),
                None => got.is_none(),
            };
            if !ok {
                let what = got.map_or("nothing".to_string(), |v| {
                    String::from_utf8_lossy(&v[..v.len().min(24)]).into_owned()
                });
                let w = (k % logs.len() as u64) as usize;
                return Err(format!(
                    "key {k} reads {what}: not a value written at or after its last synced write \
                     (its writer {w} of {}: {} writes acknowledged, {} up to a sync)",
                    logs.len(),
                    logs[w].acked.len(),
                    logs[w].synced
                ));
            }
        }
        check_prefix(&logs, &observed)?;
        Ok::<usize, String>(KEYS as usize)
    })?;
    Ok(out)
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.kill_child.is_some() {
        return torture_kill::child(&a);
    }
    let dir = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    let pick = |flag: &str, given: &Option<String>, from: &[&'static str]| {
        given
            .as_deref()
            .map(|g| {
                from.iter()
                    .copied()
                    .find(|w| *w == g)
                    .ok_or_else(|| anyhow::anyhow!("--{flag} {g}: not one of {}", from.join(", ")))
            })
            .transpose()
    };
    let forced = Forced {
        workload: pick("workload", &a.workload, &WORKLOADS)?,
        scheme: pick("scheme", &a.scheme, &ALL_SCHEMES)?,
        design: pick("design", &a.design, &ALL_DESIGNS)?,
        no_faults: a.no_faults,
    };
    if let (Some(d), Some(s)) = (forced.design, forced.scheme) {
        if d != "cczns" && s.starts_with("cc") {
            anyhow::bail!("--scheme {s} needs --design cczns (CCZNS commands), not {d}");
        }
    }
    if forced.design == Some("tcssd") && forced.workload == Some("raw") {
        anyhow::bail!("--workload raw runs on zoned designs only, not tcssd");
    }
    if a.kill {
        return torture_kill::run(&a, &forced, &dir);
    }
    let mut replay_flags = String::new();
    if let Some(w) = forced.workload {
        replay_flags += &format!(" --workload {w}");
    }
    if let Some(s) = forced.scheme {
        replay_flags += &format!(" --scheme {s}");
    }
    if let Some(d) = forced.design {
        replay_flags += &format!(" --design {d}");
    }
    if forced.no_faults {
        replay_flags += " --no-faults";
    }
    let wall = std::time::Instant::now();
    let (mut ran, mut failures, mut acked, mut synced, mut keys, mut early) = (0, 0, 0, 0, 0, 0);
    let (mut reads, mut blocks) = (0, 0);
    let (mut injected, mut fired, mut reported) = (0, 0, 0);
    let mut by_workload: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_scheme: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_design: BTreeMap<&str, u64> = BTreeMap::new();
    for seed in a.seed..a.seed + a.seeds {
        if a.time_limit
            .is_some_and(|t| wall.elapsed().as_secs_f64() > t)
        {
            break;
        }
        ran += 1;
        match one(seed, &dir, a.verbose, &forced).map_err(|(scheme, design, cut_ns, e)| {
            format!(
                "{e} [scheme {scheme} on {design}, cut at {:.3} ms]",
                cut_ns as f64 / 1e6
            )
        }) {
            Ok(o) => {
                acked += o.acknowledged;
                synced += o.synced;
                keys += o.keys_checked;
                reads += o.reads_checked;
                blocks += o.blocks_checked;
                injected += u64::from(o.fault_injected);
                fired += u64::from(o.fault_fired);
                reported += u64::from(o.fault_reported);
                early += u64::from(o.before_mkfs);
                *by_workload.entry(o.workload).or_default() += 1;
                if o.workload != "raw" {
                    *by_scheme.entry(o.scheme).or_default() += 1;
                }
                *by_design.entry(o.design).or_default() += 1;
            }
            Err(e) => {
                failures += 1;
                println!("seed {seed}: FAILED: {e}");
                println!(
                    "  replay: znslab torture --seed {seed} --seeds 1{replay_flags} --verbose"
                );
            }
        }
    }
    let count = |m: &BTreeMap<&str, u64>| {
        m.iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "torture: {ran} seeds, {ran} power cuts ({early} before mkfs finished), {acked} store \
         writes acknowledged ({synced} up to a sync), {keys} keys checked after power-on, \
         {reads} reads and scans checked before the cut, {blocks} raw zone blocks read back, \
         {injected} faults injected ({fired} met a command, {reported} stopped the workload \
         with an error naming them), {failures} failed; workloads: {}; schemes: {}; devices: {}; {:.1} s",
        count(&by_workload),
        count(&by_scheme),
        count(&by_design),
        wall.elapsed().as_secs_f64()
    );
    Ok(if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(k: u64, v: &str) -> (Vec<u8>, Vec<u8>) {
        (key(k), v.as_bytes().to_vec())
    }

    /// Writer 0 of 2 owns the even keys: 0, 2 and 4 live, 6 deleted; writer 1 issued "b1" and
    /// "b3" for keys 1 and 3.
    fn check(got: &[(Vec<u8>, Vec<u8>)]) -> Result<(), String> {
        let latest: BTreeMap<u64, Option<Vec<u8>>> = [
            (0, Some(b"a0".to_vec())),
            (2, Some(b"a2".to_vec())),
            (4, Some(b"a4".to_vec())),
            (6, None),
        ]
        .into();
        let issued: BTreeMap<u64, Vec<Vec<u8>>> =
            [(1, vec![b"b1".to_vec()]), (3, vec![b"b3".to_vec()])].into();
        check_scan(0, got, &latest, |n| n % 2 == 0, &issued)
    }

    #[test]
    fn a_writers_scan_sees_its_own_keys_exactly_and_others_as_issued() {
        let all = [pair(0, "a0"), pair(1, "b1"), pair(2, "a2"), pair(4, "a4")];
        assert_eq!(check(&all), Ok(()));
        // Writer 1's key 3 not written yet, or deleted: not checked.
        assert_eq!(
            check(&[pair(0, "a0"), pair(2, "a2"), pair(4, "a4")]),
            Ok(())
        );
        // Own key with an old value, a missing own key, a deleted key, another writer's key
        // with a value it never issued, keys out of order.
        let stale = [pair(0, "a0"), pair(2, "old"), pair(4, "a4")];
        assert!(check(&stale).unwrap_err().contains("key 2 with old"));
        let missing = [pair(0, "a0"), pair(4, "a4")];
        assert!(check(&missing).unwrap_err().contains("missed key 2"));
        let deleted = [pair(0, "a0"), pair(2, "a2"), pair(4, "a4"), pair(6, "a6")];
        assert!(check(&deleted).unwrap_err().contains("key 6"));
        let foreign = [pair(0, "a0"), pair(1, "zz"), pair(2, "a2"), pair(4, "a4")];
        assert!(check(&foreign).unwrap_err().contains("key 1 with zz"));
        let unordered = [pair(2, "a2"), pair(0, "a0"), pair(4, "a4")];
        assert!(check(&unordered).unwrap_err().contains("out of order"));
        // A full scan (8 pairs) stops at its last key: own keys beyond it are not missing.
        let full: Vec<_> = (0..8).map(|i| pair(i * 2 + 1, "x")).collect();
        let issued: BTreeMap<u64, Vec<Vec<u8>>> =
            (0..8).map(|i| (i * 2 + 1, vec![b"x".to_vec()])).collect();
        let latest: BTreeMap<u64, Option<Vec<u8>>> = [(20, Some(b"a".to_vec()))].into();
        assert_eq!(
            check_scan(1, &full, &latest, |n| n % 2 == 0, &issued),
            Ok(())
        );
        let latest: BTreeMap<u64, Option<Vec<u8>>> = [(10, Some(b"a".to_vec()))].into();
        assert!(check_scan(1, &full, &latest, |n| n % 2 == 0, &issued).is_err());
    }

    #[test]
    fn after_power_on_the_store_holds_a_prefix_of_the_wal_order() {
        let v = |s: &str| Some(s.as_bytes().to_vec());
        // Two writers (even and odd keys). Writer 0: batch {k0=a, k2=b} at sequences 1-2,
        // then k0=c at 5. Writer 1: k1=x at 3, k3=y at 4 (separate batches); its k5=z in
        // flight at the cut.
        let at = |key, value: &str, seq, ends_batch| Acked {
            key,
            value: v(value),
            seq,
            ends_batch,
        };
        let logs = |synced0: usize| {
            vec![
                WriterLog {
                    acked: vec![
                        at(0, "a", 1, false),
                        at(2, "b", 2, true),
                        at(0, "c", 5, true),
                    ],
                    synced: synced0,
                    pending: vec![],
                },
                WriterLog {
                    acked: vec![at(1, "x", 3, true), at(3, "y", 4, true)],
                    synced: 0,
                    pending: vec![(5, v("z"))],
                },
            ]
        };
        let seen = |vals: [Option<Vec<u8>>; 6]| -> BTreeMap<u64, Option<Vec<u8>>> {
            vals.into_iter()
                .enumerate()
                .map(|(k, v)| (k as u64, v))
                .collect()
        };
        let ok = |synced0, vals| check_prefix(&logs(synced0), &seen(vals));
        // Nothing, the first batch, up to k1, up to k3, everything: prefixes.
        assert_eq!(ok(0, [None, None, None, None, None, None]), Ok(()));
        assert_eq!(ok(0, [v("a"), None, v("b"), None, None, None]), Ok(()));
        assert_eq!(ok(0, [v("a"), v("x"), v("b"), v("y"), None, None]), Ok(()));
        assert_eq!(ok(0, [v("c"), v("x"), v("b"), v("y"), None, None]), Ok(()));
        // The batch in flight fits anywhere.
        assert_eq!(ok(0, [v("a"), None, v("b"), None, None, v("z")]), Ok(()));
        // A later write without an earlier one (each key alone would pass), half a batch,
        // and less than the newest synced write: no prefix.
        let e = ok(0, [None, v("x"), None, None, None, None]).unwrap_err();
        assert!(e.contains("no prefix"), "{e}");
        assert!(ok(0, [v("c"), None, v("b"), v("y"), None, None]).is_err());
        assert!(ok(0, [v("a"), None, None, None, None, None]).is_err());
        assert!(ok(2, [None, None, None, None, None, None]).is_err());
        assert_eq!(ok(2, [v("a"), None, v("b"), None, None, None]), Ok(()));
    }

    #[test]
    fn after_power_on_a_key_may_hold_what_came_from_its_writers_last_sync_on() {
        let w = |k, v: &str| (k, Some(v.as_bytes().to_vec()));
        let acked = [w(0, "1"), w(0, "2"), w(2, "3"), (0, None), w(0, "4")];
        let log = WriterLog {
            acked: (0..)
                .zip(acked)
                .map(|(seq, (key, value))| Acked {
                    key,
                    value,
                    seq,
                    ends_batch: true,
                })
                .collect(),
            synced: 3,
            pending: vec![w(2, "5"), w(4, "6")],
        };
        let mut allowed = BTreeMap::new();
        log.allowed_values(&mut allowed);
        let vals = |k| {
            allowed[&k]
                .iter()
                .map(|v: &Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned()))
                .collect::<Vec<_>>()
        };
        let s = |v: &str| Some(v.to_string());
        // Key 0: synced at "2"; the later delete and "4" may or may not have landed.
        assert_eq!(vals(0), [s("2"), None, s("4")]);
        // Key 2: synced at "3"; the batch in flight may have landed.
        assert_eq!(vals(2), [s("3"), s("5")]);
        // Key 4: never synced, only in flight: nothing or its value.
        assert_eq!(vals(4), [None, s("6")]);
    }
}
