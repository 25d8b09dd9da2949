//! The stack builder: sim → device → host I/O → file system → store, assembled the same way by
//! every command (ycsb, the experiments of the reproductions, torture's workloads, checks and
//! killed children). It owns the order the layers are made in (the device handle, then the
//! host's CPU cores, then the host I/O layer on them), so that two callers given the same
//! seed build the same stack; what a caller does with the layers (mkfs or mount, recover
//! emulated zones first, sample, cut the power) stays with the caller.

use std::path::Path;
use std::rc::Rc;

use device::{Controller, DeviceConfig, DeviceError, DeviceHandle};
use host::lsm::db::{Db, DbError, DbOptions};
use host::zonefs::{FsError, MkfsOptions, ZoneFs};
use host::{HostIo, IoConfig};
use sim::cpu::CpuPool;
use sim::Sim;

/// Where the device's bytes live.
pub enum Media<'a> {
    /// Host memory, gone at the end of the run.
    InMemory(DeviceConfig),
    /// A new (sparse) image file.
    CreateImage(&'a Path, DeviceConfig),
    /// An existing image file, as it was left.
    OpenImage(&'a Path),
}

impl Media<'_> {
    /// The controller on these media.
    pub fn controller(self) -> Result<Controller, DeviceError> {
        match self {
            Media::InMemory(cfg) => Controller::in_memory(cfg),
            Media::CreateImage(path, cfg) => Controller::create_image(path, cfg),
            Media::OpenImage(path) => Controller::open_image(path),
        }
    }
}

/// The layers below the file system: the virtual clock, the device and the host I/O layer on
/// `cores` simulated host cores.
pub struct Stack {
    pub sim: Sim,
    pub dev: DeviceHandle,
    pub cpu: Rc<CpuPool>,
    pub io: Rc<HostIo>,
}

impl Stack {
    /// A stack on `ctl`, driven by `sim`.
    pub fn new(sim: &Sim, ctl: Controller, cores: usize) -> Stack {
        let dev = DeviceHandle::new(sim, ctl);
        Stack::on(sim, &dev, cores)
    }

    /// A host on a device handle someone else keeps too (torture keeps it to cut the power).
    pub fn on(sim: &Sim, dev: &DeviceHandle, cores: usize) -> Stack {
        let cpu = Rc::new(CpuPool::new(sim, cores.max(1)));
        let io = Rc::new(HostIo::new(dev, cpu.clone(), IoConfig::default()));
        Stack {
            sim: sim.clone(),
            dev: dev.clone(),
            cpu,
            io,
        }
    }
}

/// How the file system comes up.
#[derive(Clone, Copy, Debug)]
pub enum FsStart {
    /// Made afresh (`zenfs mkfs`).
    Mkfs(MkfsOptions),
    /// Mounted from what the device holds.
    Mount,
}

/// The file system on `io`.
pub async fn file_system(io: Rc<HostIo>, start: FsStart) -> Result<ZoneFs, FsError> {
    match start {
        FsStart::Mkfs(opts) => ZoneFs::mkfs_with(io, opts).await,
        FsStart::Mount => ZoneFs::mount(io).await,
    }
}

/// The store on `fs` (RocksDB's `DB::Open`: WAL replay included).
pub async fn store(fs: Rc<ZoneFs>, opts: DbOptions) -> Result<Db, DbError> {
    Db::open(fs, opts).await
}
