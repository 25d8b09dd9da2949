//! `znslab torture --kill`: the device image against real processes killed at random.
//!
//! Each seed draws its workload, scheme and design as the power-cut torture does (no injected
//! faults), creates the image, and runs the workload in a child `znslab` process (this
//! command, in a hidden child mode). The child appends a line to an acknowledgement file for
//! every batch before it issues it and after it is acknowledged (raw zones: each zone's log
//! after each change), and goes on only once the line is written, so the file holds at least
//! everything the child was told. The parent SIGKILLs it at a random wall-clock instant. Half
//! of the store seeds then run a second child that powers the device on, recovers the zones a
//! host emulates, mounts the file system, opens the store (WAL replay and flush) and reads,
//! the way a read-only YCSB run does, and kill it too at a random instant: during mount,
//! recovery or the reads. Then this process opens the image as a fresh process would and
//! checks it as the power-cut torture does against the acknowledgement file.
//!
//! A killed process loses nothing that reached the kernel: this tests the order in which the
//! image is written (storage.rs), not the host's own power loss (`--sync`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};

use device::{Controller, DeviceHandle, OpenMode};
use sim::{Rng, Sim, SimDuration, SimInstant};

use crate::stack::{self, FsStack, FsStart, Stack};

use super::files_log::{Event, FilesLog, Log};
use super::lfs;
use super::raw::ZoneLog;
use super::store::{key, Write, KEYS};
use super::{
    check_power_on, device_config, draw, start_workload, store_options, Drawn, Forced, Options,
    RemoveOnDrop, WriterLog, WORKLOADS,
};

/// Where a child logs what it was told (None: not a child).
pub(crate) type Ack = Option<Rc<RefCell<File>>>;

/// Virtual time a child runs for if nobody kills it.
const CHILD_VIRTUAL_NS: u64 = 60_000_000_000;

fn write_line(ack: &Ack, line: &str) -> Result<(), String> {
    if let Some(f) = ack {
        // One write per line, unbuffered: once it returns, a kill cannot take it back.
        f.borrow_mut()
            .write_all(line.as_bytes())
            .map_err(|e| format!("acknowledgement file: {e}"))?;
    }
    Ok(())
}

/// The file system is made.
pub(crate) fn log_made(ack: &Ack) -> Result<(), String> {
    write_line(ack, "M\n")
}

/// Writer `w` is about to issue `writes` as one batch.
pub(crate) fn log_pending(ack: &Ack, w: usize, writes: &[Write]) -> Result<(), String> {
    if ack.is_none() {
        return Ok(());
    }
    let mut line = format!("P {w}");
    for (k, v) in writes {
        match v {
            Some(v) => line += &format!(" {k}:{}", hex(v)),
            None => line += &format!(" {k}:-"),
        }
    }
    line.push('\n');
    write_line(ack, &line)
}

/// Writer `w`'s pending batch was acknowledged at sequence `seq`, synced or not.
pub(crate) fn log_acked(ack: &Ack, w: usize, seq: u64, sync: bool) -> Result<(), String> {
    write_line(ack, &format!("A {w} {seq} {}\n", sync as u8))
}

/// Raw zone `z`'s log changed.
pub(crate) fn log_zone(ack: &Ack, z: usize, l: &ZoneLog) -> Result<(), String> {
    if ack.is_none() {
        return Ok(());
    }
    let w = l.to_words();
    write_line(
        ack,
        &format!(
            "Z {z} {} {} {} {} {} {}\n",
            w[0], w[1], w[2], w[3], w[4], w[5]
        ),
    )
}

fn hex(v: &[u8]) -> String {
    v.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What a child's acknowledgement file says it was told.
#[derive(Default)]
struct Acks {
    made: bool,
    logs: Vec<WriterLog>,
    raw: Vec<ZoneLog>,
}

/// Read an acknowledgement file; a torn last line (the kill came mid-write) is dropped.
fn read_acks(path: &Path, zones: usize) -> Result<Acks, String> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        // Killed before it made the file: it was told nothing.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(format!("acknowledgement file: {e}")),
    };
    let text = String::from_utf8_lossy(&text);
    let mut acks = Acks {
        raw: vec![ZoneLog::default(); zones],
        ..Acks::default()
    };
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    for line in complete.lines() {
        let bad = || format!("acknowledgement file: bad line {line:?}");
        let mut f = line.split(' ');
        match f.next() {
            Some("M") => acks.made = true,
            Some("P") => {
                // Writers are few (db_bench --threads 4): a larger number is a bad line.
                let w: usize = f
                    .next()
                    .and_then(|w| w.parse().ok())
                    .filter(|&w| w < 1024)
                    .ok_or_else(bad)?;
                if acks.logs.len() <= w {
                    acks.logs.resize_with(w + 1, WriterLog::default);
                }
                let mut pending = Vec::new();
                for kv in f {
                    let (k, v) = kv.split_once(':').ok_or_else(bad)?;
                    let k: u64 = k.parse().map_err(|_| bad())?;
                    let v = if v == "-" {
                        None
                    } else {
                        Some(unhex(v).ok_or_else(bad)?)
                    };
                    pending.push((k, v));
                }
                acks.logs[w].pending = pending;
            }
            Some("A") => {
                let mut num = || f.next().and_then(|x| x.parse::<u64>().ok()).ok_or_else(bad);
                let (w, seq, sync) = (num()? as usize, num()?, num()? == 1);
                acks.logs
                    .get_mut(w)
                    .ok_or_else(bad)?
                    .acknowledge_pending(seq, sync);
            }
            Some("Z") => {
                let nums: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
                let [z, a, b, c, d, e, g] = nums[..] else {
                    return Err(bad());
                };
                let slot = acks.raw.get_mut(z as usize).ok_or_else(bad)?;
                *slot = ZoneLog::from_words([a, b, c, d, e, g]);
            }
            _ => return Err(bad()),
        }
    }
    Ok(acks)
}

/// What a child is told on its command line (`znslab torture --kill-child PHASE --image ...`,
/// the hidden flags `one` below passes).
#[derive(Clone, Debug, Default)]
pub struct ChildArgs {
    /// workload or recover (None: workload).
    pub kill_child: Option<String>,
    pub image: Option<PathBuf>,
    pub ack_log: Option<PathBuf>,
    pub seed: u64,
    /// The workload and scheme the parent drew (None: draw them again from the seed).
    pub workload: Option<String>,
    pub scheme: Option<String>,
    pub design: Option<String>,
}

/// The child: run one phase on the image, logging acknowledgements, until killed (or its
/// virtual time runs out).
pub fn child(a: &ChildArgs) -> anyhow::Result<ExitCode> {
    // Die with the parent: a child left behind would hold the image's lock.
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    let phase = a.kill_child.as_deref().unwrap_or("workload");
    let image = a
        .image
        .as_ref()
        .ok_or_else(|| anyhow::anyhow!("--kill-child needs --image"))?;
    let forced = Forced {
        workload: None,
        scheme: None,
        design: None,
        no_faults: true,
    };
    let d = draw(a.seed, &forced);
    if a.workload.as_deref() == Some("lfs") {
        return lfs_child(a, phase, image, &d);
    }
    // The parent passes what it drew (possibly forced); the child uses the same.
    let workload = a.workload.as_deref().unwrap_or(d.workload);
    let workload: &'static str = WORKLOADS
        .iter()
        .copied()
        .find(|w| *w == workload)
        .ok_or_else(|| anyhow::anyhow!("--workload {workload}"))?;
    let scheme = a.scheme.as_deref().unwrap_or(d.scheme);
    let opts = store_options(scheme, d.jobs)?;
    let sim = Sim::new(a.seed);
    match phase {
        "workload" => {
            let ack_path = a
                .ack_log
                .as_ref()
                .ok_or_else(|| anyhow::anyhow!("--kill-child needs --ack-log"))?;
            let ack: Ack = Some(Rc::new(RefCell::new(File::create(ack_path)?)));
            let ctl = Controller::open_image(image).map_err(|e| anyhow::anyhow!("{e}"))?;
            let dev = DeviceHandle::new(&sim, ctl);
            let design = a.design.as_deref().unwrap_or(d.design);
            let sc = start_workload(&sim, &dev, &d.rng, workload, &opts, design, ack);
            sim.run_until(SimInstant::from_ns(CHILD_VIRTUAL_NS));
            if let Some(e) = sc.failed.borrow_mut().take() {
                eprintln!("child: {e}");
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        "recover" if workload == "raw" => {
            // A read-only run on raw zones: report and read every zone, as nvme-cli would.
            let mut ctl = Controller::open_image_as(image, OpenMode::ReadOnly)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let lba = ctl.layout().lba_bytes;
            let mut buf = vec![0u8; 16 * lba as usize];
            loop {
                for zi in 0..ctl.zone_count() {
                    let z = ctl.zone(zi);
                    let _ = ctl.submit(
                        SimInstant::ZERO,
                        device::Command::Read {
                            slba: z.zslba,
                            nlb: 16,
                            data: &mut buf,
                            metadata: &mut [],
                        },
                    );
                }
            }
        }
        "recover" => {
            let mut ctl = Controller::open_image(image).map_err(|e| anyhow::anyhow!("{e}"))?;
            ctl.power_cycle();
            let Stack { io, .. } = Stack::new(&sim, ctl, 2);
            let mut rng = Rng::new(a.seed).stream("recover");
            let r = sim.block_on(async move {
                io.recover_emulated_zones()
                    .await
                    .map_err(|e| format!("recovering the emulated zones: {e}"))?;
                let fs = Rc::new(
                    stack::file_system(io, FsStart::Mount)
                        .await
                        .map_err(|e| format!("mount: {e}"))?,
                );
                let db = stack::store(fs, opts)
                    .await
                    .map_err(|e| format!("store open: {e}"))?;
                // Reads only, as `ycsb run` of workload C would.
                for _ in 0..1_000_000 {
                    let k = rng.below(KEYS);
                    db.get(&key(k)).await.map_err(|e| format!("get: {e}"))?;
                }
                Ok::<(), String>(())
            });
            if let Err(e) = r {
                eprintln!("child: {e}");
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        other => anyhow::bail!("--kill-child {other}: workload or recover"),
    }
}

/// The child of an lfs seed: the file workload on the two images, each call logged to the
/// acknowledgement file (`files_log.rs`); or a process that mounts and reads.
fn lfs_child(a: &ChildArgs, phase: &str, image: &Path, d: &Drawn) -> anyhow::Result<ExitCode> {
    let scheme = match a.scheme.as_deref() {
        Some(s) => lfs::LFS_SCHEMES
            .iter()
            .copied()
            .find(|x| *x == s)
            .ok_or_else(|| anyhow::anyhow!("--scheme {s}: not one of {:?}", lfs::LFS_SCHEMES))?,
        None => lfs::draw(&d.rng).0,
    };
    let r = match phase {
        "workload" => {
            let ack_path = a
                .ack_log
                .as_ref()
                .ok_or_else(|| anyhow::anyhow!("--kill-child needs --ack-log"))?;
            let log = Rc::new(FilesLog::with_journal(File::create(ack_path)?));
            let main = Controller::open_image(image).map_err(|e| anyhow::anyhow!("{e}"))?;
            let meta = Controller::open_image(&lfs::meta_image(image))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let sim = Sim::new(a.seed);
            let st = FsStack::new(&sim, main, meta, 4);
            let failed = Rc::new(RefCell::new(None));
            lfs::start(&sim, &st, &d.rng, scheme, log.clone(), failed.clone());
            // What the device has done, every 50 ms of virtual time, for the report.
            let (dev, sim2, failed2) = (st.main.dev.clone(), sim.clone(), failed.clone());
            sim.spawn(async move {
                loop {
                    sim2.sleep(SimDuration::from_ms(50)).await;
                    let k = dev.with(|c| c.counters().clone());
                    let e = Event::Device([k.zone_compactions, k.tl_opens, k.zone_resets]);
                    if let Err(e) = log.record(e) {
                        failed2.borrow_mut().get_or_insert(e.to_string());
                    }
                }
            });
            sim.run_until(SimInstant::from_ns(CHILD_VIRTUAL_NS));
            let e = failed.borrow_mut().take();
            e.map_or(Ok(()), Err)
        }
        "recover" => lfs::recover_and_read(image, a.seed, scheme),
        other => anyhow::bail!("--kill-child {other}: workload or recover"),
    };
    if let Err(e) = r {
        eprintln!("child: {e}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// How one child ended.
enum End {
    Killed,
    /// It ended by itself first: with this status and what it printed.
    Exited(std::process::ExitStatus, String),
}

/// Run a child phase and SIGKILL it after `delay` (unless it ends first).
fn run_child(args: &[String], delay: Duration, err_path: &Path) -> anyhow::Result<End> {
    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(File::create(err_path)?)
        .spawn()?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            let err = std::fs::read_to_string(err_path).unwrap_or_default();
            return Ok(End::Exited(status, err));
        }
        if start.elapsed() >= delay {
            child.kill()?; // SIGKILL
            child.wait()?;
            return Ok(End::Killed);
        }
        std::thread::sleep(Duration::from_micros(200).min(delay));
    }
}

/// Run one child phase and kill it after `delay`; count how it ended in `t`. Err: it failed
/// by itself before its kill.
fn run_phase(
    args: &[String],
    delay: Duration,
    err_path: &Path,
    recovering: bool,
    verbose: bool,
    t: &mut Tally,
) -> Result<(), String> {
    let what = if recovering {
        "the recovering child"
    } else {
        "the child"
    };
    match run_child(args, delay, err_path).map_err(|e| format!("running {what}: {e}"))? {
        End::Killed if recovering => t.recover_kills += 1,
        End::Killed => t.kills += 1,
        End::Exited(status, err) if status.success() => {
            t.exited_first += 1;
            if verbose {
                eprintln!("{what} finished before its kill: {}", err.trim());
            }
        }
        End::Exited(status, err) => {
            return Err(format!(
                "{what} failed before its kill ({status}): {}",
                err.trim()
            ))
        }
    }
    Ok(())
}

/// What `--kill` counted.
#[derive(Default)]
struct Tally {
    seeds: u64,
    kills: u64,
    recover_kills: u64,
    exited_first: u64,
    before_mkfs: u64,
    acked: usize,
    synced: usize,
    keys: usize,
    blocks: u64,
    files: usize,
    file_blocks: u64,
    /// What the lfs children's devices had done before their kills: zone_compactions,
    /// TL_opens, resets.
    lfs_device: [u64; 3],
    failures: u64,
    by_design: BTreeMap<&'static str, u64>,
    by_workload: BTreeMap<&'static str, u64>,
    by_scheme: BTreeMap<&'static str, u64>,
}

/// `znslab torture --kill`: every line of the report goes to `out`. Ok(true): no seed failed.
pub fn run(
    a: &Options,
    forced: &Forced,
    dir: &Path,
    out: &mut dyn FnMut(&str),
) -> anyhow::Result<bool> {
    let wall = Instant::now();
    let mut t = Tally::default();
    for seed in a.seed..a.seed + a.seeds {
        if a.time_limit
            .is_some_and(|l| wall.elapsed().as_secs_f64() > l)
        {
            break;
        }
        t.seeds += 1;
        let forced = Forced {
            no_faults: true,
            ..*forced
        };
        let d = draw(seed, &forced);
        // An lfs seed draws its own scheme (zns, izc, znsplus).
        let d = if d.workload == "lfs" {
            Drawn {
                scheme: lfs::draw(&d.rng).0,
                design: "znsplus",
                ..d
            }
        } else {
            d
        };
        let r = if d.workload == "lfs" {
            one_lfs(seed, &d, dir, a.verbose, &mut t)
        } else {
            one(seed, &d, dir, a.verbose, &mut t)
        };
        if let Err(e) = r {
            t.failures += 1;
            out(&format!(
                "seed {seed}: FAILED: {e} [{} on {}, {}]",
                d.workload, d.design, d.scheme
            ));
            out(&format!(
                "  replay: znslab torture --kill --seed {seed} --seeds 1 --workload {} --scheme {} \
                 --design {} --verbose (the kill's instant is wall-clock: it lands elsewhere \
                 in the child's work each time)",
                d.workload, d.scheme, d.design
            ));
        }
    }
    let count = |m: &BTreeMap<&str, u64>| {
        m.iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if t.by_workload.contains_key("lfs") {
        out(&format!(
            "lfs: {} files and {} file blocks checked after the kills; before them the devices \
             took {} zone_compactions, {} TL_opens, {} zone resets",
            t.files, t.file_blocks, t.lfs_device[0], t.lfs_device[1], t.lfs_device[2]
        ));
    }
    out(&format!(
        "torture --kill: {} seeds, {} processes killed ({} while recovering or reading), {} \
         ended before their kill, {} killed before mkfs finished; {} store writes acknowledged \
         ({} up to a sync), {} keys checked after power-on, {} raw zone blocks read back, {} \
         failed; workloads: {}; schemes: {}; devices: {}; {:.1} s",
        t.seeds,
        t.kills + t.recover_kills,
        t.recover_kills,
        t.exited_first,
        t.before_mkfs,
        t.acked,
        t.synced,
        t.keys,
        t.blocks,
        t.failures,
        count(&t.by_workload),
        count(&t.by_scheme),
        count(&t.by_design),
        wall.elapsed().as_secs_f64()
    ));
    Ok(t.failures == 0)
}

/// The arguments of seed `seed`'s child, on image `img` logging to `acks` (the phase last).
fn child_args(seed: u64, d: &Drawn, img: &Path, acks: &Path) -> Vec<String> {
    [
        "torture",
        "--seed",
        &seed.to_string(),
        "--workload",
        d.workload,
        "--scheme",
        d.scheme,
        "--design",
        d.design,
        "--image",
        &img.display().to_string(),
        "--ack-log",
        &acks.display().to_string(),
        "--kill-child",
        "workload",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A seed's files in the torture folder: the image, the children's acknowledgement file and
/// their stderr, each removed when this is dropped (with the lfs metadata image, if any).
struct SeedFiles {
    img: PathBuf,
    acks: PathBuf,
    err: PathBuf,
    _cleanup: Vec<RemoveOnDrop>,
}

impl SeedFiles {
    fn new(dir: &Path, seed: u64, lfs_meta: bool) -> SeedFiles {
        let base = dir.join(format!("znslab-kill-{}-{seed}", std::process::id()));
        let (img, acks, err) = (
            base.with_extension("img"),
            base.with_extension("acks"),
            base.with_extension("stderr"),
        );
        let mut cleanup = vec![
            RemoveOnDrop(img.clone()),
            RemoveOnDrop(acks.clone()),
            RemoveOnDrop(err.clone()),
        ];
        if lfs_meta {
            cleanup.push(RemoveOnDrop(lfs::meta_image(&img)));
        }
        SeedFiles {
            img,
            acks,
            err,
            _cleanup: cleanup,
        }
    }
}

/// One lfs seed: make both images, run the file workload in a child and kill it, in half the
/// seeds also a child that mounts and reads, then check against the file log the child wrote.
fn one_lfs(seed: u64, d: &Drawn, dir: &Path, verbose: bool, t: &mut Tally) -> Result<(), String> {
    let paths = SeedFiles::new(dir, seed, true);
    let (img, acks_path, err_path) = (&paths.img, &paths.acks, &paths.err);
    let (main, meta) = lfs::create_images(img).map_err(|e| format!("creating the images: {e}"))?;
    for c in [main, meta] {
        c.close().map_err(|e| format!("creating the images: {e}"))?;
    }
    let mut k = Rng::new(seed).stream("kill");
    // The writers fill most of the volume in their first ~0.6 s of virtual time, about the
    // first second of wall time; compaction, threaded logging and checkpoints come after.
    let delay_us = if k.below(4) == 0 {
        1_000 + k.below(300_000)
    } else {
        300_000 + k.below(4_000_000)
    };
    let mut args = child_args(seed, d, img, acks_path);
    run_phase(
        &args,
        Duration::from_micros(delay_us),
        err_path,
        false,
        verbose,
        t,
    )?;
    let text = match std::fs::read(acks_path) {
        Ok(t) => String::from_utf8_lossy(&t).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("acknowledgement file: {e}")),
    };
    let log = Log::replay(&text)?;
    if verbose {
        let unlinked = log.files.values().filter(|f| f.unlinked).count();
        eprintln!(
            "seed {seed} ({}): killed after {:.3} s; the child made {} files ({unlinked} \
             unlinked) and wrote {} blocks; its device took {} zone_compactions, {} TL_opens, \
             {} resets",
            d.scheme,
            delay_us as f64 / 1e6,
            log.files.len(),
            log.blocks_written(),
            log.device[0],
            log.device[1],
            log.device[2]
        );
    }
    if log.made && k.below(2) == 0 {
        let n = args.len();
        args[n - 1] = "recover".into();
        let delay = Duration::from_micros(1_000 + k.below(500_000));
        run_phase(&args, delay, err_path, true, verbose, t)?;
    }
    t.before_mkfs += u64::from(!log.made);
    for (sum, n) in t.lfs_device.iter_mut().zip(log.device) {
        *sum += n;
    }
    let (files, blocks) = lfs::check_power_on(img, seed, d.scheme, log)?;
    t.files += files;
    t.file_blocks += blocks;
    *t.by_design.entry(d.design).or_default() += 1;
    *t.by_workload.entry(d.workload).or_default() += 1;
    *t.by_scheme.entry(d.scheme).or_default() += 1;
    Ok(())
}

/// One seed: create, run and kill the child(ren), check.
fn one(seed: u64, d: &Drawn, dir: &Path, verbose: bool, t: &mut Tally) -> Result<(), String> {
    let paths = SeedFiles::new(dir, seed, false);
    let (img, acks_path, err_path) = (&paths.img, &paths.acks, &paths.err);
    let cfg = device_config(d.design);
    let zones = Controller::create_image(img, cfg)
        .and_then(|c| {
            let n = c.zone_count();
            c.close().map_err(|source| device::DeviceError::Image {
                path: img.display().to_string(),
                source,
            })?;
            Ok(n)
        })
        .map_err(|e| format!("creating the image: {e}"))?;
    let mut k = Rng::new(seed).stream("kill");
    // Most kills inside the first few hundred milliseconds: start-up, mkfs, flushes and
    // compactions; some later.
    let delay_us = if k.below(4) == 0 {
        1_000 + k.below(1_500_000)
    } else {
        1_000 + k.below(300_000)
    };
    let mut args = child_args(seed, d, img, acks_path);
    run_phase(
        &args,
        Duration::from_micros(delay_us),
        err_path,
        false,
        verbose,
        t,
    )?;
    let acks = read_acks(acks_path, zones as usize)?;
    // Half the seeds: a second process powers on, recovers and reads, and is killed too.
    if (acks.made || d.workload == "raw") && k.below(2) == 0 {
        let n = args.len();
        args[n - 1] = "recover".into();
        let delay = Duration::from_micros(1_000 + k.below(150_000));
        run_phase(&args, delay, err_path, true, verbose, t)?;
    }
    let opts = store_options(d.scheme, d.jobs).map_err(|e| e.to_string())?;
    let acked = acks.logs.iter().map(|l| l.acked.len()).sum::<usize>();
    let synced = acks.logs.iter().map(|l| l.synced).sum::<usize>();
    let checked = check_power_on(
        img, seed, d.workload, &opts, acks.logs, &acks.raw, acks.made, verbose,
    )?;
    t.acked += acked;
    t.synced += synced;
    t.keys += checked.keys;
    t.blocks += checked.blocks;
    t.before_mkfs += u64::from(checked.before_mkfs);
    *t.by_design.entry(d.design).or_default() += 1;
    *t.by_workload.entry(d.workload).or_default() += 1;
    if d.workload != "raw" {
        *t.by_scheme.entry(d.scheme).or_default() += 1;
    }
    Ok(())
}
