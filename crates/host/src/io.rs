//! The host I/O layer: queue slots, per-zone write ordering, the metadata buffer, host CPU.
//!
//! Every command takes a submission-queue slot (`queue_depth` of them), costs
//! `submit_cpu_ns` on a host core before it reaches the device and `complete_cpu_ns` after its
//! completion arrives (the kernel's block layer, driver and interrupt), and is split at the
//! device's MDTS. Writes hold their zone's write lock from the first piece to the last, so a
//! zone has one write in flight at a time, as Linux's mq-deadline zone write locking enforces
//! for sequential-write-required zones; reads, appends and other zones go on in parallel.
//! Device errors come back as values naming the operation and the LBA.
//!
//! On a CCZNS device the layer also issues compressed writes (one command per call, at the
//! zone's byte write pointer, under the zone's write lock, chunk sizes in and feedback out
//! through the metadata buffer) and decompressed reads (single- or multi-chunk, by the
//! compressed range's byte address and length).
//!
//! On a conventional namespace (the tcssd design) the layer emulates zones of the device's
//! superblock size, as Linux's dm-zoned does over a conventional drive: it keeps each zone's
//! state and write pointer, refuses writes off the write pointer as the device would, and
//! turns Reset into a Deallocate (TRIM) of the zone's blocks so the device's GC stops copying
//! them. The emulated zones live in host memory only (a new `HostIo` sees them all empty).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use device::{
    parse_report, Command, Completion, DeviceHandle, Status, ZoneAction, ZoneDescriptor, ZoneState,
};
use sim::cpu::CpuPool;
use sim::sync::{Mutex, Semaphore};
use sim::{Sim, SimDuration};

use crate::zoned::table::{RestoreZonesError, ZoneTable};

/// Host I/O costs and limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoConfig {
    /// Commands in flight at once (one NVMe I/O queue pair's depth).
    pub queue_depth: u32,
    /// Host CPU per command before submission (block layer, driver, doorbell) and after
    /// completion (interrupt, completion handling). Assumed 2 µs and 1 µs: none of the papers
    /// gives the split; their host CPU figures are dominated by compression.
    pub submit_cpu_ns: u64,
    pub complete_cpu_ns: u64,
}

impl Default for IoConfig {
    fn default() -> Self {
        IoConfig {
            queue_depth: 1024,
            submit_cpu_ns: 2_000,
            complete_cpu_ns: 1_000,
        }
    }
}

/// What the host I/O layer has done.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IoCounters {
    pub commands: u64,
    pub reads: u64,
    pub writes: u64,
    pub zone_commands: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Host CPU spent on I/O commands.
    pub cpu_ns: u64,
    /// Time writes waited for their zone's write lock (the cost of one write in flight).
    pub zone_lock_wait_ns: u64,
    /// Most commands in flight at once.
    pub max_in_flight: u32,
    /// CCZNS: compressed writes, the chunks they carried and the zone bytes they took;
    /// decompressed reads, the chunks and decompressed bytes they returned.
    pub compressed_writes: u64,
    pub cw_chunks: u64,
    pub cw_zone_bytes: u64,
    pub decompressed_reads: u64,
    pub dr_chunks: u64,
    pub dr_bytes: u64,
}

/// What a compressed write reported: each chunk's size in the zone (its feedback size) and
/// the bytes the write took from the zone (padding included).
pub use device::cmd::wire::CwFeedback;

/// A failed I/O, naming what was asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IoError {
    #[error("{op} at LBA {lba}: NVMe status {status}: {}", status.description())]
    Device {
        op: &'static str,
        lba: u64,
        status: Status,
    },
    #[error("{op} at byte {pos} of {len} bytes: {why}")]
    Invalid {
        op: &'static str,
        pos: u64,
        len: u64,
        why: &'static str,
    },
}

impl IoError {
    /// The NVMe status, for a device error.
    pub fn status(&self) -> Option<Status> {
        match self {
            IoError::Device { status, .. } => Some(*status),
            IoError::Invalid { .. } => None,
        }
    }
}

/// The host's way to the device. Cheap to share behind an `Rc`.
pub struct HostIo {
    sim: Sim,
    dev: DeviceHandle,
    cpu: Rc<CpuPool>,
    cfg: IoConfig,
    slots: Semaphore,
    zone_locks: Vec<Mutex<()>>,
    lba_bytes: u64,
    metadata_bytes: u64,
    zone_lbas: u64,
    zone_capacity_lbas: u64,
    namespace_lbas: u64,
    mdts: u64,
    counters: RefCell<IoCounters>,
    in_flight: Cell<u32>,
    /// Zones the host emulates over a conventional namespace (tcssd design), else None.
    emulated: Option<RefCell<ZoneTable>>,
}

/// A completion's status as a result naming the operation and LBA.
fn device_status(status: Status, op: &'static str, lba: u64) -> Result<(), IoError> {
    if status == Status::SUCCESS {
        Ok(())
    } else {
        Err(IoError::Device { op, lba, status })
    }
}

impl HostIo {
    pub fn new(dev: &DeviceHandle, cpu: Rc<CpuPool>, cfg: IoConfig) -> HostIo {
        // Everything the host knows of the device it learns from Identify.
        let id = dev.with(|c| c.identify());
        let zones = id.zone_count;
        // A conventional namespace: the host emulates the zones (as dm-zoned would).
        let emulated = (id.csi == device::CommandSet::Nvm)
            .then(|| RefCell::new(ZoneTable::new(zones, id.zsze, id.zcap, id.lba_bytes)));
        HostIo {
            emulated,
            sim: dev.sim().clone(),
            dev: dev.clone(),
            cpu,
            slots: Semaphore::new(cfg.queue_depth.max(1) as usize),
            cfg,
            zone_locks: (0..zones).map(|_| Mutex::new(())).collect(),
            lba_bytes: id.lba_bytes,
            metadata_bytes: id.metadata_bytes,
            zone_lbas: id.zsze,
            zone_capacity_lbas: id.zcap,
            namespace_lbas: id.nsze,
            mdts: id.mdts_bytes,
            counters: RefCell::new(IoCounters::default()),
            in_flight: Cell::new(0),
        }
    }

    /// The costs and limits this layer was made with.
    pub fn config(&self) -> &IoConfig {
        &self.cfg
    }
    pub fn lba_bytes(&self) -> u64 {
        self.lba_bytes
    }
    pub fn metadata_bytes(&self) -> u64 {
        self.metadata_bytes
    }
    /// Zone size (the LBA span of a zone) and capacity (its writable part), in bytes.
    /// The largest transfer one command takes (MDTS).
    pub fn max_transfer_bytes(&self) -> u64 {
        self.mdts
    }
    pub fn zone_bytes(&self) -> u64 {
        self.zone_lbas * self.lba_bytes
    }
    pub fn zone_capacity_bytes(&self) -> u64 {
        self.zone_capacity_lbas * self.lba_bytes
    }
    pub fn zone_count(&self) -> u32 {
        self.zone_locks.len() as u32
    }
    pub fn device(&self) -> &DeviceHandle {
        &self.dev
    }
    /// The host cores I/O is charged to (the store charges its own work there too).
    pub fn cpu(&self) -> &Rc<CpuPool> {
        &self.cpu
    }
    pub fn sim(&self) -> &Sim {
        &self.sim
    }
    pub fn counters(&self) -> IoCounters {
        self.counters.borrow().clone()
    }
    /// Commands submitted and not completed yet.
    pub fn in_flight(&self) -> u32 {
        self.in_flight.get()
    }

    /// Submit one command through a queue slot, paying the host CPU on both sides.
    pub async fn submit(&self, cmd: Command<'_>) -> Completion {
        let _slot = self.slots.acquire(1).await;
        self.cpu
            .run(SimDuration::from_ns(self.cfg.submit_cpu_ns))
            .await;
        self.in_flight.set(self.in_flight.get() + 1);
        {
            let mut c = self.counters.borrow_mut();
            c.max_in_flight = c.max_in_flight.max(self.in_flight.get());
        }
        let comp = self.dev.submit(cmd).await;
        self.in_flight.set(self.in_flight.get() - 1);
        self.cpu
            .run(SimDuration::from_ns(self.cfg.complete_cpu_ns))
            .await;
        let mut c = self.counters.borrow_mut();
        c.commands += 1;
        c.cpu_ns += self.cfg.submit_cpu_ns + self.cfg.complete_cpu_ns;
        comp
    }

    /// Check that `len` bytes at byte `pos` are whole blocks inside one zone and the namespace.
    fn check(&self, op: &'static str, pos: u64, len: u64) -> Result<(), IoError> {
        let bad = |why| Err(IoError::Invalid { op, pos, len, why });
        if len == 0 || !pos.is_multiple_of(self.lba_bytes) || !len.is_multiple_of(self.lba_bytes) {
            return bad("not whole blocks");
        }
        let (first, end) = (pos / self.lba_bytes, (pos + len) / self.lba_bytes);
        if end > self.namespace_lbas {
            return bad("past the end of the namespace");
        }
        if first / self.zone_lbas != (end - 1) / self.zone_lbas {
            return bad("crosses a zone boundary");
        }
        Ok(())
    }

    /// Read `buf.len()` bytes at byte `pos` (whole blocks in one zone), MDTS at a time.
    pub async fn read(&self, pos: u64, buf: &mut [u8]) -> Result<(), IoError> {
        self.read_as(pos, buf, true).await
    }

    /// [`HostIo::read`] as Read Discard commands: the same checks, statuses and time, but an
    /// in-memory device leaves `buf` as it was (for probes that want the read's time only).
    pub async fn read_discard(&self, pos: u64, buf: &mut [u8]) -> Result<(), IoError> {
        self.read_as(pos, buf, false).await
    }

    async fn read_as(&self, pos: u64, buf: &mut [u8], copy: bool) -> Result<(), IoError> {
        self.check("read", pos, buf.len() as u64)?;
        let mut at = 0usize;
        let mut metadata = Vec::new();
        for piece in buf.chunks_mut(self.mdts as usize) {
            let slba = (pos + at as u64) / self.lba_bytes;
            let nlb = piece.len() as u64 / self.lba_bytes;
            at += piece.len();
            metadata.clear();
            metadata.resize((nlb * self.metadata_bytes) as usize, 0);
            let len = piece.len() as u64;
            let cmd = if copy {
                Command::Read {
                    slba,
                    nlb: nlb as u32,
                    data: piece,
                    metadata: &mut metadata,
                }
            } else {
                Command::ReadDiscard {
                    slba,
                    nlb: nlb as u32,
                    data: piece,
                }
            };
            let comp = self.submit(cmd).await;
            device_status(comp.status, "read", slba)?;
            let mut c = self.counters.borrow_mut();
            c.reads += 1;
            c.bytes_read += len;
        }
        Ok(())
    }

    /// Take zone `zone`'s write lock (one write in flight per zone), counting the wait.
    async fn lock_zone(&self, zone: usize) -> sim::sync::MutexGuard<'_, ()> {
        let asked = self.sim.now();
        let guard = self.zone_locks[zone].lock().await;
        self.counters.borrow_mut().zone_lock_wait_ns += self.sim.now().since(asked).as_ns();
        guard
    }

    /// Write `data` at byte `pos` (whole blocks in one zone, at its write pointer) holding the
    /// zone's write lock, MDTS at a time.
    pub async fn write(&self, pos: u64, data: &[u8]) -> Result<(), IoError> {
        self.check("write", pos, data.len() as u64)?;
        let zone = (pos / self.lba_bytes / self.zone_lbas) as usize;
        let _lock = self.lock_zone(zone).await;
        self.emulated_check(
            zone,
            pos / self.lba_bytes,
            data.len() as u64 / self.lba_bytes,
        )?;
        let mut at = 0u64;
        for piece in data.chunks(self.mdts as usize) {
            let slba = (pos + at) / self.lba_bytes;
            let nlb = piece.len() as u64 / self.lba_bytes;
            at += piece.len() as u64;
            let comp = self
                .submit(Command::Write {
                    slba,
                    nlb: nlb as u32,
                    data: piece,
                    metadata: &[],
                })
                .await;
            device_status(comp.status, "write", slba)?;
            self.emulated_advance(zone, nlb);
            let mut c = self.counters.borrow_mut();
            c.writes += 1;
            c.bytes_written += piece.len() as u64;
        }
        Ok(())
    }

    /// CCZNS compressed write: the chunks (consecutive pieces of `data` of `chunk_sizes`
    /// bytes) compressed by the device at byte address `pos`, which must be the zone's byte
    /// write pointer. `data` is whole blocks (the bytes past the chunks are not written) and
    /// goes as one command, so it must fit MDTS. Holds the zone's write lock.
    pub async fn compressed_write(
        &self,
        pos: u64,
        data: &[u8],
        chunk_sizes: &[u32],
    ) -> Result<CwFeedback, IoError> {
        let op = "compressed write";
        let len = data.len() as u64;
        let bad = |why| Err(IoError::Invalid { op, pos, len, why });
        let block_start = pos / self.lba_bytes * self.lba_bytes;
        self.check(op, block_start, len)?;
        if len > self.mdts {
            return bad("larger than the device's transfer limit (MDTS)");
        }
        let total: u64 = chunk_sizes.iter().map(|&c| c as u64).sum();
        if chunk_sizes.is_empty() || chunk_sizes.contains(&0) || total > len {
            return bad("chunks empty, or larger than the data");
        }
        let nlb = len / self.lba_bytes;
        let mut metadata = vec![0u8; (nlb * self.metadata_bytes) as usize];
        if !device::cmd::wire::put_cw_request(&mut metadata, chunk_sizes) {
            return bad("too many chunks for the metadata buffer");
        }
        let slba = pos / self.lba_bytes;
        let zone = (slba / self.zone_lbas) as usize;
        let _lock = self.lock_zone(zone).await;
        let comp = self
            .submit(Command::CompressedWrite {
                slba,
                intra: (pos % self.lba_bytes) as u32,
                nlb: nlb as u32,
                data,
                metadata: &mut metadata,
                append: false,
            })
            .await;
        device_status(comp.status, op, slba)?;
        let fb =
            device::cmd::wire::cw_feedback(&metadata, self.lba_bytes).ok_or(IoError::Invalid {
                op,
                pos,
                len,
                why: "the device's feedback does not parse",
            })?;
        let mut c = self.counters.borrow_mut();
        c.writes += 1;
        c.bytes_written += len;
        c.compressed_writes += 1;
        c.cw_chunks += chunk_sizes.len() as u64;
        c.cw_zone_bytes += fb.written;
        Ok(fb)
    }

    /// CCZNS decompressed read of the chunks stored in `compressed_len` bytes from byte
    /// address `pos` (where the first chunk starts) into `out` (whole blocks: the output
    /// budget). Single-chunk returns the chunk at `pos`; multi-chunk every whole chunk of the
    /// range that fits `out`. Returns each chunk's (decompressed, stored) size; the chunks are
    /// back to back at the start of `out`.
    pub async fn decompressed_read(
        &self,
        pos: u64,
        compressed_len: u64,
        multi: bool,
        out: &mut [u8],
    ) -> Result<Vec<(u32, u32)>, IoError> {
        let op = "decompressed read";
        let bad = |why| {
            Err(IoError::Invalid {
                op,
                pos,
                len: compressed_len,
                why,
            })
        };
        let slba = pos / self.lba_bytes;
        let intra = pos % self.lba_bytes;
        let cnlb = (intra + compressed_len).div_ceil(self.lba_bytes);
        let pdsz = cnlb * self.lba_bytes - intra - compressed_len;
        if compressed_len == 0 {
            return bad("an empty range");
        }
        self.check(op, slba * self.lba_bytes, cnlb * self.lba_bytes)?;
        if cnlb > 255 {
            return bad("the range spans more than 255 blocks (CNLB is 8 bits)");
        }
        let nlb = out.len() as u64 / self.lba_bytes;
        if nlb == 0
            || !(out.len() as u64).is_multiple_of(self.lba_bytes)
            || out.len() as u64 > self.mdts
        {
            return bad("the output is not whole blocks within MDTS");
        }
        let mut metadata = vec![0u8; (nlb * self.metadata_bytes) as usize];
        let comp = self
            .submit(Command::DecompressedRead {
                slba,
                intra: intra as u32,
                cnlb: cnlb as u32,
                pdsz: pdsz as u32,
                multi,
                nlb: nlb as u32,
                data: out,
                metadata: &mut metadata,
            })
            .await;
        device_status(comp.status, op, slba)?;
        let chunks = device::cmd::wire::dr_feedback(&metadata).unwrap_or_default();
        let mut c = self.counters.borrow_mut();
        c.reads += 1;
        c.decompressed_reads += 1;
        c.dr_chunks += chunks.len() as u64;
        let bytes: u64 = chunks.iter().map(|&(pre, _)| pre as u64).sum();
        c.dr_bytes += bytes;
        c.bytes_read += bytes;
        Ok(chunks)
    }

    /// Emulated zones: check a write of `nlb` blocks at `slba` of `zone` as a zoned device
    /// would (at the write pointer, inside the capacity).
    fn emulated_check(&self, zone: usize, slba: u64, nlb: u64) -> Result<(), IoError> {
        let Some(zones) = &self.emulated else {
            return Ok(());
        };
        match zones.borrow().check_write(zone, slba, nlb) {
            Some(status) => Err(IoError::Device {
                op: "write",
                lba: slba,
                status,
            }),
            None => Ok(()),
        }
    }

    /// Emulated zones: `nlb` blocks were written at `zone`'s write pointer.
    fn emulated_advance(&self, zone: usize, nlb: u64) {
        if let Some(zones) = &self.emulated {
            zones.borrow_mut().advance(zone, nlb);
        }
    }

    /// Emulated zones: a zone action in host memory; Reset also deallocates the zone's blocks.
    async fn emulated_action(&self, zone: u32, action: ZoneAction) -> Result<(), IoError> {
        let zones = self.emulated.as_ref().expect("emulated zones");
        let slba = zone as u64 * self.zone_lbas;
        let invalid = |status| {
            Err(IoError::Device {
                op: "zone management",
                lba: slba,
                status,
            })
        };
        let Some(z) = zones.borrow().get(zone as usize) else {
            return invalid(Status::LBA_OUT_OF_RANGE);
        };
        self.counters.borrow_mut().zone_commands += 1;
        let (state, wp) = match ZoneTable::transition(&z, action) {
            Ok(next) => next,
            Err(status) => return invalid(status),
        };
        if action == ZoneAction::Reset && (z.wp > z.zslba || z.state == ZoneState::Full) {
            let _lock = self.lock_zone(zone as usize).await;
            let comp = self
                .submit(Command::Deallocate {
                    slba: z.zslba,
                    nlb: u32::try_from(self.zone_lbas).unwrap_or(u32::MAX),
                })
                .await;
            device_status(comp.status, "deallocate", z.zslba)?;
        }
        zones.borrow_mut().set(zone as usize, state, wp);
        Ok(())
    }

    /// Emulated zones (conventional namespace): each zone's state code (ZS) and write pointer,
    /// to keep beside a device image (dm-zoned keeps the like on the drive). None on a zoned
    /// device.
    pub fn emulated_zone_table(&self) -> Option<Vec<(u8, u64)>> {
        Some(self.emulated.as_ref()?.borrow().table())
    }

    /// Restore the emulated zones from `emulated_zone_table`'s output; open zones come back
    /// closed, as a zoned drive's do after a power cycle. Changes nothing on an error, which
    /// names the zone.
    pub fn restore_emulated_zones(&self, table: &[(u8, u64)]) -> Result<(), RestoreZonesError> {
        let zones = self
            .emulated
            .as_ref()
            .ok_or(RestoreZonesError::NotEmulated)?;
        zones.borrow_mut().restore(table)
    }

    /// Set Features, Error Recovery: DULBE on or off.
    fn set_dulbe(&self, on: bool) -> Status {
        let cdw11 = if on { device::feature::DULBE } else { 0 };
        self.dev.with(|c| {
            c.admin(device::AdminCommand::SetFeatures {
                fid: device::feature::ERROR_RECOVERY,
                cdw11,
            })
        })
    }

    /// Emulated zones after a power cut (what dm-zoned reads back from its metadata): each
    /// zone's write pointer is where its written blocks end, found with the device's DULBE
    /// (reads of never-written or deallocated blocks fail) by bisection, as zones are written
    /// in order and a Reset deallocates the whole zone. A zone comes back Empty, Closed or
    /// Full by that write pointer (a Finish that moved it without writing is not seen: the
    /// zone comes back Closed at its last written block, which a ZNS host takes as it would a
    /// zone the drive closed).
    pub async fn recover_emulated_zones(&self) -> Result<(), IoError> {
        let Some(zones) = &self.emulated else {
            return Ok(());
        };
        let status = self.set_dulbe(true);
        device_status(status, "set features (DULBE)", 0)?;
        let mut block = vec![0u8; self.lba_bytes as usize];
        let spans: Vec<(u64, u64)> = zones
            .borrow()
            .descriptors()
            .iter()
            .map(|z| (z.zslba, z.capacity))
            .collect();
        let mut found = Vec::with_capacity(spans.len());
        for (zslba, cap) in spans {
            let (mut lo, mut hi) = (0u64, cap);
            while lo < hi {
                let mid = (lo + hi) / 2;
                match self.read((zslba + mid) * self.lba_bytes, &mut block).await {
                    Ok(()) => lo = mid + 1,
                    Err(e) if e.status() == Some(Status::DEALLOCATED_OR_UNWRITTEN_BLOCK) => {
                        hi = mid
                    }
                    Err(e) => {
                        self.set_dulbe(false);
                        return Err(e);
                    }
                }
            }
            found.push(lo);
        }
        self.set_dulbe(false);
        zones.borrow_mut().recovered(&found);
        Ok(())
    }

    /// A zone management action on zone `zone`.
    pub async fn zone_action(&self, zone: u32, action: ZoneAction) -> Result<(), IoError> {
        if self.emulated.is_some() {
            return self.emulated_action(zone, action).await;
        }
        let slba = zone as u64 * self.zone_lbas;
        let comp = self
            .submit(Command::ZoneMgmtSend {
                slba,
                action,
                select_all: false,
            })
            .await;
        self.counters.borrow_mut().zone_commands += 1;
        device_status(comp.status, "zone management", slba)?;
        Ok(())
    }

    /// ZNS+ zone_compaction (see [`crate::ZonedBackend::zone_compaction`]), holding the
    /// destination zone's write lock.
    pub async fn zone_compaction(&self, pairs: &[(u64, u64)]) -> Result<(), IoError> {
        let op = "zone_compaction";
        let Some(&(_, first)) = pairs.first() else {
            return Err(IoError::Invalid {
                op,
                pos: 0,
                len: 0,
                why: "no blocks to copy",
            });
        };
        let zone = first / self.zone_lbas;
        if zone >= self.zone_count() as u64 {
            return Err(IoError::Invalid {
                op,
                pos: first * self.lba_bytes,
                len: pairs.len() as u64 * self.lba_bytes,
                why: "past the end of the namespace",
            });
        }
        let zslba = zone * self.zone_lbas;
        let _lock = self.lock_zone(zone as usize).await;
        let comp = self.submit(Command::ZoneCompaction { zslba, pairs }).await;
        self.counters.borrow_mut().zone_commands += 1;
        device_status(comp.status, op, zslba)
    }

    /// ZNS+ identify_mapping: None when the device has no such command or its fields are not
    /// powers of two (it answers Invalid Opcode).
    pub async fn identify_mapping(&self) -> Result<Option<device::ChunkMapping>, IoError> {
        let mut data = vec![0u8; device::MAPPING_BYTES];
        let comp = self
            .submit(Command::IdentifyMapping { data: &mut data })
            .await;
        if comp.status == device::Status::INVALID_OPCODE {
            return Ok(None);
        }
        device_status(comp.status, "identify_mapping", 0)?;
        Ok(device::ChunkMapping::parse(&data))
    }

    /// ZNS+ TL_open (see [`crate::ZonedBackend::tl_open`]), holding the zone's write lock.
    pub async fn tl_open(&self, zone: u32, valid: &[u8], close_only: bool) -> Result<(), IoError> {
        let zslba = zone as u64 * self.zone_lbas;
        if zone >= self.zone_count() {
            return Err(IoError::Invalid {
                op: "TL_open",
                pos: zslba * self.lba_bytes,
                len: valid.len() as u64,
                why: "past the end of the namespace",
            });
        }
        let _lock = self.lock_zone(zone as usize).await;
        let comp = self
            .submit(Command::TlOpen {
                zslba,
                close_only,
                bitmap: valid,
            })
            .await;
        self.counters.borrow_mut().zone_commands += 1;
        device_status(comp.status, "TL_open", zslba)
    }

    /// Report every zone (Zone Management Receive, as many commands as MDTS requires).
    pub async fn report_zones(&self) -> Result<Vec<ZoneDescriptor>, IoError> {
        if let Some(zones) = &self.emulated {
            return Ok(zones.borrow().descriptors().to_vec());
        }
        let per = ((self.mdts as usize - device::REPORT_HEADER_BYTES)
            / device::REPORT_DESCRIPTOR_BYTES)
            .max(1);
        let total = self.zone_count() as usize;
        let mut zones = Vec::with_capacity(total);
        let mut buf = Vec::new();
        while zones.len() < total {
            let n = per.min(total - zones.len());
            buf.clear();
            buf.resize(
                device::REPORT_HEADER_BYTES + n * device::REPORT_DESCRIPTOR_BYTES,
                0,
            );
            let slba = zones.len() as u64 * self.zone_lbas;
            let comp = self
                .submit(Command::ZoneMgmtRecv {
                    slba,
                    filter: 0,
                    partial: true,
                    extended: false,
                    buffer: &mut buf,
                })
                .await;
            self.counters.borrow_mut().zone_commands += 1;
            device_status(comp.status, "report zones", slba)?;
            let (_, got) = parse_report(&buf).ok_or(IoError::Invalid {
                op: "report zones",
                pos: slba * self.lba_bytes,
                len: buf.len() as u64,
                why: "malformed report",
            })?;
            if got.is_empty() {
                break;
            }
            zones.extend(got);
        }
        Ok(zones)
    }
}
