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

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::rc::Rc;

use device::{Controller, DeviceConfig};
use host::lfs::{Lfs, LfsConfig};
use sim::{Rng, Sim, SimInstant};

use super::files::{self, FilesLog};
use super::RemoveOnDrop;
use crate::stack::FsStack;

/// The file system's schemes a seed draws from.
pub(crate) const LFS_SCHEMES: [&str; 3] = ["zns", "izc", "znsplus"];

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

fn lfs_config(scheme: &str) -> LfsConfig {
    let base = match scheme {
        "zns" => LfsConfig::zns(),
        "izc" => LfsConfig::izc(),
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

/// What a seed checked, and what the device did before the cut.
#[derive(Default)]
pub(crate) struct Checked {
    pub files: usize,
    pub blocks: u64,
    pub zone_compactions: u64,
    pub tl_opens: u64,
    pub zone_resets: u64,
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
    let meta_path = dir.join(format!(
        "znslab-torture-{}-{seed}-meta.img",
        std::process::id()
    ));
    let _rm = (
        RemoveOnDrop(main_path.clone()),
        RemoveOnDrop(meta_path.clone()),
    );
    let main = Controller::create_image(&main_path, main_device()).map_err(|e| e.to_string())?;
    let meta = Controller::create_image(&meta_path, device::presets::znsplus_meta())
        .map_err(|e| e.to_string())?;
    let cfg = lfs_config(scheme);

    let sim = Sim::new(seed);
    let st = FsStack::new(&sim, main, meta, 4);
    let log: FilesLog = Rc::default();
    let failed = Rc::new(RefCell::new(None));
    let made = Rc::new(Cell::new(false));
    {
        let (io, meta, log, failed, made) = (
            st.main.io.clone(),
            st.meta.clone(),
            log.clone(),
            failed.clone(),
            made.clone(),
        );
        let (rng, cfg) = (rng.clone(), cfg.clone());
        sim.spawn(async move {
            match Lfs::mkfs(io, meta, cfg).await {
                Ok(fs) => {
                    made.set(true);
                    // Three writers, each first filling a sixth of the 128 MiB volume.
                    files::start(Rc::new(fs), &rng, 3, 5000, log, failed);
                }
                Err(e) => *failed.borrow_mut() = Some(format!("mkfs: {e}")),
            }
        });
    }
    sim.run_until(SimInstant::from_ns(cut_ns));
    if let Some(e) = failed.borrow_mut().take() {
        return Err(format!("before the cut: {e}"));
    }
    sim.power_cut();
    let (main_dev, meta_dev) = (st.main.dev.clone(), st.meta_dev.clone());
    let k = main_dev.with(|c| c.counters().clone());
    let mut checked = Checked {
        zone_compactions: k.zone_compactions,
        tl_opens: k.tl_opens,
        zone_resets: k.zone_resets,
        ..Checked::default()
    };
    if verbose {
        eprintln!(
            "lfs {scheme}: the device took {} zone_compactions, {} TL_opens ({} blocks plugged), \
             {} resets before the cut",
            k.zone_compactions,
            k.tl_opens,
            k.plugged_blocks_foreground + k.plugged_blocks_background,
            k.zone_resets
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

    // Power on.
    let main = Controller::open_image(&main_path).map_err(|e| format!("reopening: {e}"))?;
    let meta = Controller::open_image(&meta_path).map_err(|e| format!("reopening: {e}"))?;
    let sim = Sim::new(seed ^ 0x5eed);
    let st = FsStack::new(&sim, main, meta, 4);
    if !made.get() {
        return Ok(checked);
    }
    let (io, meta) = (st.main.io.clone(), st.meta.clone());
    let files = log.borrow().len();
    let blocks = sim.block_on(async move {
        let fs = Lfs::mount(io, meta, cfg)
            .await
            .map_err(|e| format!("mount after power-on: {e}"))?;
        fs.check_consistency()
            .map_err(|e| format!("after power-on: {e}"))?;
        let n = files::check(&fs, &log).await?;
        Ok::<u64, String>(n)
    })?;
    checked.files = files;
    checked.blocks = blocks;
    Ok(checked)
}
