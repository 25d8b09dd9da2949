//! The `lfs` workload of `znslab torture`: the file workload (`files.rs`) on the F2FS-like file
//! system (`host::lfs`) on a small ZNS+ device in an image file, its in-place metadata on a
//! conventional device in a second image (F2FS's multi-device mode). Each seed draws the
//! file system's scheme: ZNS (segment compaction by host copies), IZC (by zone_compaction) or
//! ZNS+ (IZC, threaded logging through TL_open with the device's plugging, periodic
//! checkpoints). Writers first fill most of the space, so compaction and threaded logging run
//! before the cut.
//!
//! At the cut every host task stops where it stands; both devices keep what their
//! capacitor-protected buffers took (their images are closed as the capacitors would) and
//! are opened again; the file system mounts (checkpoint, roll-forward of fsynced files), its
//! tables agree with its node tree, and the oracle checks every file.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use device::{Controller, DeviceConfig};
use host::fs::FileSystem;
use host::lfs::{Lfs, LfsConfig};
use sim::{Rng, Sim, SimInstant};

use super::files;
use super::files_log::{Event, Log, SharedLog};
use super::RemoveOnDrop;
use crate::stack::FsStack;

/// The file system's schemes a seed draws from.
pub(crate) const LFS_SCHEMES: [&str; 4] = ["zns", "izc", "znsplus", "zns-inflight"];

/// ZNS+'s MLC device (Table 2) shrunk: 4 chips (8 MiB zones of four 2 MiB segments), 16 zones
/// and 4 spare block groups per chip.
fn main_device() -> DeviceConfig {
    let mut cfg = device::presets::znsplus_mlc();
    cfg.name = "znsplus-torture".into();
    cfg.nand.channels = 4;
    cfg.nand.dies_per_channel = 1;
    cfg.zones.count = Some(16);
    cfg.nand.blocks_per_plane = 20;
    cfg
}

pub(crate) fn lfs_config(scheme: &str) -> LfsConfig {
    let base = match scheme {
        "zns" => LfsConfig::zns(),
        "izc" => LfsConfig::izc(),
        // GC's host reads in flight together: blocks read while writers and writeback run.
        "zns-inflight" => LfsConfig {
            gc_reads: host::lfs::GcReads::InFlight,
            ..LfsConfig::zns()
        },
        _ => LfsConfig::zns_plus(),
    };
    LfsConfig {
        // A 128 MiB volume: f2fs-tools' reserve (18 sections at least) would not fit.
        reserved_sections: Some(3),
        overprovision_pct: Some(5.0),
        page_cache_pages: 256,
        ..base
    }
}

/// A seed's scheme and power cut, drawn from its own stream of `rng`.
pub(crate) fn draw(rng: &Rng) -> (&'static str, u64) {
    let mut l = rng.stream("lfs");
    let scheme = LFS_SCHEMES[l.below(LFS_SCHEMES.len() as u64) as usize];
    // The writers fill most of the volume in the first ~0.6 s; cuts up to 2.5 s meet
    // compaction, threaded logging and checkpoints.
    let cut_ns = 1 + l.below(2_500_000_000);
    (scheme, cut_ns)
}

/// The image of the metadata device beside main image `main`.
pub(crate) fn meta_image(main: &Path) -> PathBuf {
    main.with_extension("meta.img")
}

/// Create both images (the main device at `main`, the metadata device beside it).
pub(crate) fn create_images(main: &Path) -> Result<(Controller, Controller), String> {
    let m = Controller::create_image(main, main_device()).map_err(|e| e.to_string())?;
    let meta = Controller::create_image(&meta_image(main), device::presets::znsplus_meta())
        .map_err(|e| e.to_string())?;
    Ok((m, meta))
}

/// Open both images, as a process powering the devices on would.
fn open_images(main: &Path) -> Result<(Controller, Controller), String> {
    let mut m = Controller::open_image(main).map_err(|e| format!("opening the image: {e}"))?;
    let mut meta = Controller::open_image(&meta_image(main))
        .map_err(|e| format!("opening the metadata image: {e}"))?;
    m.power_cycle();
    meta.power_cycle();
    Ok((m, meta))
}

/// Make the file system on `st` and start three writers on it (each first filling a sixth of
/// the 128 MiB volume), logging into `log`. The first error stops its writer and lands in
/// `failed`.
pub(crate) fn start(
    sim: &Sim,
    st: &FsStack,
    rng: &Rng,
    scheme: &str,
    log: SharedLog,
    failed: Rc<RefCell<Option<String>>>,
) {
    let (io, meta) = (st.main.io.clone(), st.meta.clone());
    let (rng, cfg) = (rng.clone(), lfs_config(scheme));
    sim.spawn(async move {
        match Lfs::mkfs(io, meta, cfg).await {
            Ok(fs) => {
                if let Err(e) = log.record(Event::Made) {
                    *failed.borrow_mut() = Some(e.to_string());
                    return;
                }
                files::start(Rc::new(fs), &rng, 3, 5000, log, failed);
            }
            Err(e) => *failed.borrow_mut() = Some(format!("mkfs: {e}")),
        }
    });
}

/// What a seed checked, and what the device did before the cut.
#[derive(Default)]
pub(crate) struct Checked {
    pub files: usize,
    pub blocks: u64,
    pub zone_compactions: u64,
    pub tl_opens: u64,
    pub zone_resets: u64,
}

/// Power on the devices in the images at `main` and check them against `log`: legal zones,
/// the file system mounts (checkpoint, roll-forward), its tables agree with its node tree,
/// and every file is as the log allows. Returns the files and blocks checked.
pub(crate) fn check_power_on(
    main: &Path,
    seed: u64,
    scheme: &str,
    log: Log,
) -> Result<(usize, u64), String> {
    let (m, meta) = open_images(main)?;
    super::check::check_zones(&m)?;
    let sim = Sim::new(seed ^ 0x5eed);
    let st = FsStack::new(&sim, m, meta, 4);
    if !log.made {
        return Ok((0, 0));
    }
    let (io, meta) = (st.main.io.clone(), st.meta.clone());
    let cfg = lfs_config(scheme);
    let files = log.files.len();
    let blocks = sim.block_on(async move {
        let fs = Lfs::mount(io, meta, cfg)
            .await
            .map_err(|e| format!("mount after power-on: {e}"))?;
        fs.check_consistency()
            .map_err(|e| format!("after power-on: {e}"))?;
        files::check(&fs, &log).await
    })?;
    Ok((files, blocks))
}

/// A process that powers the devices on, mounts (replaying the checkpoint and rolling fsynced
/// files forward, which writes) and reads every file over and over, until it is killed.
pub(crate) fn recover_and_read(main: &Path, seed: u64, scheme: &str) -> Result<(), String> {
    let (m, meta) = open_images(main)?;
    let sim = Sim::new(seed ^ 0x5eed);
    let st = FsStack::new(&sim, m, meta, 4);
    let (io, meta) = (st.main.io.clone(), st.meta.clone());
    let cfg = lfs_config(scheme);
    sim.block_on(async move {
        let fs = Lfs::mount(io, meta, cfg)
            .await
            .map_err(|e| format!("mount: {e}"))?;
        let mut buf = vec![0u8; 64 << 10];
        for _ in 0..1000 {
            for d in ["/w0", "/w1", "/w2"] {
                let names = match fs.readdir(d).await {
                    Ok(n) => n,
                    Err(host::fs::FsError::NotFound(_)) => continue,
                    Err(e) => return Err(format!("readdir {d}: {e}")),
                };
                for n in names {
                    let path = format!("{d}/{n}");
                    let ino = fs.lookup(&path).await.map_err(|e| format!("{path}: {e}"))?;
                    let size = fs.size(ino).map_err(|e| format!("{path}: {e}"))?;
                    let mut at = 0;
                    while at < size {
                        let n = fs
                            .read(ino, at, &mut buf)
                            .await
                            .map_err(|e| format!("read {path}: {e}"))?;
                        if n == 0 {
                            break;
                        }
                        at += n as u64;
                    }
                }
            }
        }
        Ok(())
    })
}

/// Run seed `seed`'s file workload to `cut_ns`, cut the power, bring both devices back and
/// check. Err: what was wrong.
pub(crate) fn one_seed(
    seed: u64,
    rng: &Rng,
    scheme: &'static str,
    cut_ns: u64,
    dir: &Path,
    verbose: bool,
) -> Result<Checked, String> {
    let main_path = dir.join(format!("znslab-torture-{}-{seed}.img", std::process::id()));
    let _rm = (
        RemoveOnDrop(main_path.clone()),
        RemoveOnDrop(meta_image(&main_path)),
    );
    let (main, meta) = create_images(&main_path)?;
    let sim = Sim::new(seed);
    let st = FsStack::new(&sim, main, meta, 4);
    let log: SharedLog = Rc::default();
    let failed = Rc::new(RefCell::new(None));
    start(&sim, &st, rng, scheme, log.clone(), failed.clone());
    sim.run_until(SimInstant::from_ns(cut_ns));
    if let Some(e) = failed.borrow_mut().take() {
        return Err(format!("before the cut: {e}"));
    }
    sim.power_cut();
    let (main_dev, meta_dev) = (st.main.dev.clone(), st.meta_dev.clone());
    let k = main_dev.with(|c| c.counters().clone());
    if verbose {
        eprintln!(
            "lfs {scheme}: the device took {} zone_compactions, {} TL_opens ({} blocks plugged), \
             {} resets before the cut at {:.3} s; the writers wrote {} blocks",
            k.zone_compactions,
            k.tl_opens,
            k.plugged_blocks_foreground + k.plugged_blocks_background,
            k.zone_resets,
            cut_ns as f64 / 1e9,
            log.get().blocks_written()
        );
    }
    drop(st);
    for (dev, what) in [(main_dev, "main"), (meta_dev, "metadata")] {
        let ctl = dev.into_controller().ok_or(format!(
            "a task still holds the {what} device after the power cut"
        ))?;
        ctl.close()
            .map_err(|e| format!("saving the {what} image: {e}"))?;
    }
    let (files, blocks) = check_power_on(&main_path, seed, scheme, log.snapshot())?;
    Ok(Checked {
        files,
        blocks,
        zone_compactions: k.zone_compactions,
        tl_opens: k.tl_opens,
        zone_resets: k.zone_resets,
    })
}
