//! The store workloads of `znslab torture`: the device each seed runs on, its writers (each
//! with keys of its own, every batch logged before it is issued and when it is acknowledged),
//! the readers beside them, and the keys and values they write.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use device::{presets, DeviceHandle};
use host::lsm::db::{Compression, Db, DbOptions};
use host::lsm::memtable::WriteBatch;
use host::zonefs::izg::ProbeConfig;
use host::zonefs::plus::PlusConfig;
use host::zonefs::policy::Policy;
use host::zonefs::MkfsOptions;
use sim::{Rng, Sim, SimDuration};

use crate::stack::{self, FsStart, Stack};

use super::check::{check_scan, WriterLog};
use super::kill::{self, Ack};
use super::raw;

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

/// Keys the workload draws from: few enough that most are written many times over.
pub(crate) const KEYS: u64 = 400;

/// One acknowledged write: its key and value (None: a delete).
pub(crate) type Write = (u64, Option<Vec<u8>>);

pub(crate) type Logs = Rc<RefCell<Vec<WriterLog>>>;

/// One writer task of a store workload: writes (and reads back) its own keys.
pub(crate) struct Writer {
    db: Db,
    /// Its number, of `mix.writers`.
    w: usize,
    mix: Rc<Mix>,
    logs: Logs,
    issued: Issued,
    reads_checked: Rc<Cell<usize>>,
    /// `--kill`'s child: where each batch is logged before it is issued and when it is
    /// acknowledged (see `kill.rs`).
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
            kill::log_pending(&self.ack, self.w, &writes)?;
            let seq = db
                .write_seq(&batch, sync)
                .await
                .map_err(|e| e.to_string())?
                .ok_or("an empty batch")?;
            for (k, v) in &writes {
                latest.insert(*k, v.clone());
            }
            self.logs.borrow_mut()[self.w].acknowledge_pending(seq, sync);
            kill::log_acked(&self.ack, self.w, seq, sync)?;
        }
    }
}

/// Every value the writers have issued per key, acknowledged or not.
pub(crate) type Issued = Rc<RefCell<BTreeMap<u64, Vec<Vec<u8>>>>>;

/// Whether a writer issued `v` for key `k`: what a reader beside the writers may see.
pub(crate) fn was_issued(issued: &BTreeMap<u64, Vec<Vec<u8>>>, k: u64, v: &[u8]) -> bool {
    issued.get(&k).is_some_and(|vs| vs.iter().any(|w| w == v))
}

pub(crate) fn key(k: u64) -> Vec<u8> {
    format!("key{k:06}").into_bytes()
}

/// The number in a key `key()` made.
pub(crate) fn key_number(k: &[u8]) -> Option<u64> {
    std::str::from_utf8(k.strip_prefix(b"key")?)
        .ok()?
        .parse()
        .ok()
}

pub(crate) fn value(rng: &mut Rng, seq: usize) -> Vec<u8> {
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

pub(crate) fn show(v: Option<&[u8]>) -> String {
    v.map_or("nothing".to_string(), |v| {
        String::from_utf8_lossy(&v[..v.len().min(24)]).into_owned()
    })
}

/// The store's background jobs and write buffers a seed runs with (RocksDB's
/// max_background_jobs and max_write_buffer_number; 2 and 2 by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Jobs {
    pub(crate) background_jobs: i64,
    pub(crate) write_buffers: usize,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs {
            background_jobs: 2,
            write_buffers: 2,
        }
    }
}

impl Jobs {
    /// How the summary names it: jobs/buffers.
    pub(crate) fn label(&self) -> String {
        format!("{}/{}", self.background_jobs, self.write_buffers)
    }
}

pub(crate) fn store_options(scheme: &str, jobs: Jobs) -> anyhow::Result<DbOptions> {
    let mut opts = DbOptions {
        write_buffer_size: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        target_file_size: 64 << 10,
        ..DbOptions::default()
    };
    if jobs != Jobs::default() {
        opts.set_background_jobs(jobs.background_jobs, -1, -1)?;
        opts.max_write_buffer_number = jobs.write_buffers;
        // Static level targets (L1 16 KiB, L2 32 KiB, ...) and 16 KiB tables, so the seeds'
        // small key sets fill levels above the last, which compact side by side on disjoint
        // files; L0 compacts from 2 files and writes slow from 4, so RocksDB's
        // compaction pressure (2 files not being compacted) comes within the seed's tens of
        // milliseconds and compactions run side by side.
        opts.level_compaction_dynamic_level_bytes = false;
        opts.level_multiplier = 2;
        opts.max_bytes_for_level_base = 16 << 10;
        opts.target_file_size = 16 << 10;
        opts.level0_trigger = 2;
        opts.level0_slowdown = 4;
    }
    let s = workload::scheme::by_name(scheme).ok_or_else(|| anyhow::anyhow!("scheme {scheme}"))?;
    s.apply(&mut opts);
    if let Compression::Cczns(cc) = &mut opts.compression {
        // Small CWs, so a flush of a 64 KiB memtable takes several.
        cc.write_buffer = 16 << 10;
    }
    Ok(opts)
}

/// The small device every seed runs on, of design `design`.
pub(crate) fn device_config(design: &str) -> device::DeviceConfig {
    if design == "zenfsplus" {
        return zenfsplus_device();
    }
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

/// ZenFS+'s torture device: `test-min`'s four dies with one die per zone (four independent
/// zone groups), zones of 768 KiB (four stripe units), 256 of them, the write buffer split per
/// die.
fn zenfsplus_device() -> device::DeviceConfig {
    let mut cfg = presets::test_min();
    cfg.name = "torture-zenfsplus".into();
    cfg.zones.mapping = device::ZoneMapping::DieGroups {
        channels_per_zone: 1,
        dies_per_channel_per_zone: 1,
    };
    cfg.nand.pages_per_block = 192;
    cfg.nand.blocks_per_plane = 64;
    cfg.zones.max_open = 32;
    cfg.zones.max_active = 32;
    cfg.controller.write_buffer_per_zone_group = true;
    cfg
}

/// zonefs's mkfs options for the store on `design`. On the zenfsplus device, ZenFS+'s policy
/// over all the groups its probe finds, in a configuration drawn from `rng`'s own stream
/// (isolation and reclaiming each on in three seeds of four, the stripe width 2 or 4 IZGs),
/// and how often its GC passes run (`Some` with reclaiming).
fn mkfs_options(design: &str, opts: &DbOptions, rng: &Rng) -> (MkfsOptions, Option<SimDuration>) {
    let mut m = opts.mkfs_options(Default::default());
    let mut gc_every = None;
    if design == "zenfsplus" {
        let mut c = rng.stream("zenfsplus-config");
        let cfg = PlusConfig {
            izgs: 0,
            max_width: [2, 4][c.below(2) as usize],
            isolation: c.below(4) != 0,
            reclaim: c.below(4) != 0,
        };
        // Passes every 2-20 ms instead of 10 s, so a seed's cut can fall in one.
        gc_every = cfg.reclaim.then(|| SimDuration::from_ms(2 + c.below(19)));
        m.policy = Policy::ZenFsPlus(cfg);
        m.izg_probe = Some(ProbeConfig::write_periodic());
    }
    (m, gc_every)
}

/// A workload running on a device: what it has logged so far, for the check after power-on.
pub(crate) struct Scenario {
    pub(crate) logs: Logs,
    /// The file system was made.
    pub(crate) made: Rc<Cell<bool>>,
    pub(crate) failed: Rc<RefCell<Option<String>>>,
    pub(crate) reads_checked: Rc<Cell<usize>>,
    pub(crate) raw_log: raw::RawLog,
    /// The store, once open (taken before the cut, for its stats).
    pub(crate) db: Rc<RefCell<Option<Db>>>,
}

/// Start `workload` on `dev` as tasks of `sim` (mkfs first for the store workloads); each
/// acknowledgement goes to `ack` too when given.
pub(crate) fn start_workload(
    sim: &Sim,
    dev: &DeviceHandle,
    rng: &Rng,
    workload: &'static str,
    opts: &DbOptions,
    design: &str,
    ack: Ack,
) -> Scenario {
    let (mkfs, gc_every) = mkfs_options(design, opts, rng);
    let sc = Scenario {
        logs: Rc::default(),
        made: Rc::new(Cell::new(false)),
        failed: Rc::default(),
        reads_checked: Rc::new(Cell::new(0usize)),
        raw_log: Rc::default(),
        db: Rc::default(),
    };
    let io = Stack::on(sim, dev, 2).io;
    if workload == "raw" {
        raw::spawn(sim, io, rng, sc.raw_log.clone(), sc.failed.clone(), ack);
        return sc;
    }
    let (logs, made, failed) = (sc.logs.clone(), sc.made.clone(), sc.failed.clone());
    let db_slot = sc.db.clone();
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
                stack::file_system(io, FsStart::Mkfs(mkfs))
                    .await
                    .map_err(|e| e.to_string())?,
            );
            if let Some(every) = gc_every {
                fs.set_gc_interval(every);
            }
            made.set(true);
            kill::log_made(&ack)?;
            let db = stack::store(fs, opts).await.map_err(|e| e.to_string())?;
            *db_slot.borrow_mut() = Some(db.clone());
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
