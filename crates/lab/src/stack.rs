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

/// The layers below an F2FS-like file system: the zoned device's stack (its main area) and a
/// conventional device beside it for the in-place metadata (F2FS's multi-device mode; preset
/// `znsplus-meta`), on the same clock and host cores.
pub struct FsStack {
    pub main: Stack,
    pub meta_dev: DeviceHandle,
    pub meta: Rc<DeviceMeta>,
}

impl FsStack {
    pub fn new(sim: &Sim, main: Controller, meta: Controller, cores: usize) -> FsStack {
        let main = Stack::new(sim, main, cores);
        let meta_dev = DeviceHandle::new(sim, meta);
        let io = Rc::new(HostIo::new(
            &meta_dev,
            main.cpu.clone(),
            IoConfig::default(),
        ));
        FsStack {
            main,
            meta_dev,
            meta: Rc::new(DeviceMeta::new(io)),
        }
    }
}

/// The devices an F2FS-like file system of `fs_bytes` runs on: `preset` (a ZNS+ device) with
/// its zone count cut to the size (the paper's 16 GiB is 512 zones of 32 MiB) and 16 spare
/// block groups per chip (seed-specs A.4 item 5), and the conventional `znsplus-meta` for its
/// metadata.
pub fn lfs_devices(preset: &str, fs_bytes: u64) -> anyhow::Result<(DeviceConfig, DeviceConfig)> {
    let main = crate::setup::load_device(preset)?;
    let main = fit_to_fs(main, fs_bytes).map_err(|e| anyhow::anyhow!("--device {preset}: {e}"))?;
    Ok((main, device::presets::znsplus_meta()))
}

/// ZNS+ device `main` with its zone count cut to a file system of `fs_bytes` and 16 spare
/// block groups per chip (seed-specs A.4 item 5).
pub fn fit_to_fs(mut main: DeviceConfig, fs_bytes: u64) -> anyhow::Result<DeviceConfig> {
    if main.design != device::DesignName::Znsplus {
        anyhow::bail!("the F2FS-like file system runs on a znsplus device");
    }
    let layout = main.layout().map_err(|e| anyhow::anyhow!("{e}"))?;
    let zone = layout.zone_capacity_bytes();
    let zones = fs_bytes / zone;
    if zones < 8 {
        anyhow::bail!(
            "--fs-size {fs_bytes}: at least 8 zones of {} MiB (the file system keeps six logs \
             and a reserve)",
            zone >> 20
        );
    }
    if zones + 16 > u32::MAX as u64 / 4 {
        anyhow::bail!("--fs-size {fs_bytes}: more zones than a device takes");
    }
    let per_die = layout.erase_units_per_zone_per_die.max(1);
    main.zones.count = Some(zones as u32);
    main.nand.blocks_per_plane = ((zones + 16) * per_die) as u32;
    Ok(main)
}

/// A conventional device as an array of 4 KiB metadata blocks, each read or written by one
/// command at any address (no zones: its host I/O layer's emulated zones are bypassed).
pub struct DeviceMeta {
    io: Rc<HostIo>,
    /// LBAs per 4 KiB block, and blocks the namespace holds.
    lbas_per_block: u64,
    blocks: u64,
}

/// The metadata block size (F2FS's block).
const META_BLOCK: u64 = 4096;

impl DeviceMeta {
    pub fn new(io: Rc<HostIo>) -> DeviceMeta {
        let lba = io.lba_bytes().max(1);
        let lbas_per_block = (META_BLOCK / lba).max(1);
        let ns = io.device().with(|c| c.layout().namespace_lbas());
        DeviceMeta {
            io,
            lbas_per_block,
            blocks: ns / lbas_per_block,
        }
    }

    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    fn check(&self, op: &str, addr: u64, len: usize) -> Result<u64, String> {
        if addr >= self.blocks || len as u64 != META_BLOCK {
            return Err(format!(
                "metadata {op} of block {addr} ({len} bytes): the device holds {} blocks of 4 KiB",
                self.blocks
            ));
        }
        Ok(addr * self.lbas_per_block)
    }

    /// Read block `addr` (never written: zeros).
    pub async fn read_block(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        let slba = self.check("read", addr, buf.len())?;
        let comp = self
            .io
            .submit(device::Command::Read {
                slba,
                nlb: self.lbas_per_block as u32,
                data: buf,
                metadata: &mut [],
            })
            .await;
        match comp.status {
            device::Status::SUCCESS => Ok(()),
            // Never written (deallocated): zeros.
            device::Status::DEALLOCATED_OR_UNWRITTEN_BLOCK => {
                buf.fill(0);
                Ok(())
            }
            s => Err(format!(
                "metadata read of block {addr}: NVMe status {s}: {}",
                s.description()
            )),
        }
    }

    /// Write block `addr`.
    pub async fn write_block(&self, addr: u64, data: &[u8]) -> Result<(), String> {
        let slba = self.check("write", addr, data.len())?;
        let comp = self
            .io
            .submit(device::Command::Write {
                slba,
                nlb: self.lbas_per_block as u32,
                data,
                metadata: &[],
            })
            .await;
        if comp.status != device::Status::SUCCESS {
            return Err(format!(
                "metadata write of block {addr}: NVMe status {}: {}",
                comp.status,
                comp.status.description()
            ));
        }
        Ok(())
    }
}

impl host::lfs::MetaArea for DeviceMeta {
    fn blocks(&self) -> u64 {
        DeviceMeta::blocks(self)
    }
    async fn read_block(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        DeviceMeta::read_block(self, addr, buf).await
    }
    async fn write_block(&self, addr: u64, data: &[u8]) -> Result<(), String> {
        DeviceMeta::write_block(self, addr, data).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_blocks_on_the_conventional_device_round_trip_and_take_time() {
        let sim = Sim::new(1);
        let main = Controller::in_memory(device::presets::znsplus_mlc()).expect("main");
        let meta = Controller::in_memory(device::presets::znsplus_meta()).expect("meta");
        let st = FsStack::new(&sim, main, meta, 4);
        let m = st.meta.clone();
        assert!(m.blocks() >= 50_000);
        let sim2 = sim.clone();
        sim.block_on(async move {
            let mut buf = vec![7u8; 4096];
            m.read_block(12345, &mut buf).await.unwrap();
            assert!(buf.iter().all(|&b| b == 0), "never written: zeros");
            for a in [0u64, 1, 12345, 12345, 7] {
                let data = vec![(a % 251) as u8 + 1; 4096];
                m.write_block(a, &data).await.unwrap();
                m.read_block(a, &mut buf).await.unwrap();
                assert_eq!(buf, data);
            }
            assert!(m.write_block(m.blocks(), &buf).await.is_err());
            assert!(m.read_block(0, &mut buf[..100]).await.is_err());
            assert!(sim2.now() > sim::SimInstant::ZERO, "the device took time");
        });
    }
}
