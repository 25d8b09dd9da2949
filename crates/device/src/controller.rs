//! The controller: zones and their resources, the write buffer, timing state and counters.
//! Commands are dispatched from here to one file each under `cmd/`.

use std::io;
use std::path::Path;

use nand::{ConfigError, Flash, FlashCounters, Timeline};
use sim::{SimDuration, SimInstant};

use crate::cmd::{Command, Completion};
use crate::config::DeviceConfig;
use crate::design::{self, Design, Media};
use crate::engine::{Engine, EngineCounters};
use crate::faults::Faults;
use crate::image::OpenMode;
use crate::layout::Layout;
use crate::status::Status;
use crate::storage::{ImageFile, Storage};
use crate::zone::{Zone, ZoneDescriptor, ZoneState};

pub use crate::counters::{DeviceCounters, DramUsage};
pub use crate::identify::{feature, AdminCommand, CommandSet, Identify, VendorCaps};
pub(crate) use crate::write_buffer::{WriteBuffer, ZoneFlash};

mod emulator;

/// Opening or creating a device failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceError {
    #[error("invalid device configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("device image {path}: {source}")]
    Image { path: String, source: io::Error },
}

/// An NVMe ZNS controller with one zoned namespace.
pub struct Controller {
    pub(crate) config: DeviceConfig,
    pub(crate) layout: Layout,
    pub(crate) zones: Vec<Zone>,
    pub(crate) zone_flash: Vec<ZoneFlash>,
    pub(crate) open_count: u32,
    pub(crate) active_count: u32,
    open_seq: u64,
    pub(crate) flash: Flash,
    pub(crate) link_to_device: Timeline,
    pub(crate) link_to_host: Timeline,
    pub(crate) write_buffer: WriteBuffer,
    pub(crate) storage: Storage,
    pub(crate) counters: DeviceCounters,
    pub(crate) overhead: SimDuration,
    /// Zones changed since the image last recorded them (see `persist.rs`).
    pub(crate) dirty_zones: Vec<u32>,
    pub(crate) zone_is_dirty: Vec<bool>,
    /// The last failure writing the image, for the error a user sees (the command itself
    /// fails with Internal Error, as a drive's would).
    pub(crate) image_error: Option<String>,
    /// A design table's journal record failed to reach the image: the next commit writes a
    /// whole checkpoint instead.
    pub(crate) tables_unrecorded: bool,
    closed: bool,
    pub(crate) engine: Engine,
    /// Reused buffer for compressed bytes on their way to or from storage.
    pub(crate) staging: Vec<u8>,
    /// What differs between designs: their state and their part of each command.
    pub(crate) design: Box<dyn Design>,
    /// Faults injected by tests and torture (none unless asked for).
    faults: Faults,
    /// Deallocated or Unwritten Logical Block Error: reads of such blocks fail instead of
    /// returning zeros (Set Features, Error Recovery). Off at power-on.
    pub(crate) dulbe: bool,
}

impl Controller {
    /// A device whose bytes live in memory (sparse: only written data costs memory).
    pub fn in_memory(config: DeviceConfig) -> Result<Controller, DeviceError> {
        let layout = config.layout()?;
        let storage = Storage::memory(&layout);
        let design = design::build(&config, &layout, false);
        Ok(Self::build(config, layout, storage, design))
    }

    /// A device in memory whose design is `design` instead of the one `config` names (a design
    /// built outside this crate: see `docs/adding-a-device-design.md`). The configuration's
    /// own design must be one whose layout fits it (`zns` for a design that keeps bytes in
    /// zones).
    pub fn with_design(
        config: DeviceConfig,
        design: Box<dyn Design>,
    ) -> Result<Controller, DeviceError> {
        let layout = config.layout()?;
        let storage = Storage::memory(&layout);
        Ok(Self::build(config, layout, storage, design))
    }

    /// Create a device image file (replacing any file at `path`, once its lock is ours).
    pub fn create_image(path: &Path, config: DeviceConfig) -> Result<Controller, DeviceError> {
        let layout = config.layout()?;
        let io_err = |source| DeviceError::Image {
            path: path.display().to_string(),
            source,
        };
        let img = ImageFile::create(path, &layout, &config.to_toml()).map_err(io_err)?;
        let design = design::build(&config, &layout, true);
        let mut c = Self::build(config, layout, Storage::Image(img), design);
        c.save_zone_table().map_err(io_err)?;
        Ok(c)
    }

    /// Open a device image made by [`create_image`](Self::create_image), to change it.
    pub fn open_image(path: &Path) -> Result<Controller, DeviceError> {
        Self::open_image_as(path, OpenMode::ReadWrite)
    }

    /// Open a device image, to change it or only to read it (a shared lock; the file may be
    /// read-only; commands that would change it fail with Namespace Write Protected).
    pub fn open_image_as(path: &Path, mode: OpenMode) -> Result<Controller, DeviceError> {
        let io_err = |source| DeviceError::Image {
            path: path.display().to_string(),
            source,
        };
        let (file, text) = ImageFile::open(path, mode).map_err(io_err)?;
        let config = DeviceConfig::from_toml(&text)?;
        let layout = config.layout()?;
        let img = ImageFile::attach(file, path, &layout, mode).map_err(io_err)?;
        let design = design::build(&config, &layout, true);
        let mut c = Self::build(config, layout, Storage::Image(img), design);
        // Until it is loaded, nothing may be saved over what the image holds (a failed open
        // drops the controller, and dropping saves).
        c.closed = true;
        let buffered = c.load_image().map_err(io_err)?;
        c.recount_resources();
        // Everything written earlier is on flash now, except partial program units, which
        // the capacitor-protected buffer still holds (and whose space it still takes).
        let u = c.layout.geometry.unit_bytes;
        let in_buffer = buffered;
        for (zi, (z, zf)) in c.zones.iter().zip(c.zone_flash.iter_mut()).enumerate() {
            // A TL-open zone's new block group is programmed up to its write pointer.
            let written = if z.is_tl_open() {
                (z.wp - z.zslba) * c.layout.lba_bytes
            } else {
                z.bytes
            };
            zf.issued = if z.state == ZoneState::Full {
                z.capacity * c.layout.lba_bytes
            } else {
                written / u * u
            };
            let part = c.write_buffer.part_of(zi as u32);
            c.write_buffer.hold(part, written.saturating_sub(zf.issued));
        }
        c.write_buffer.hold(0, in_buffer);
        if mode == OpenMode::ReadWrite {
            c.finish_interrupted_resets().map_err(io_err)?;
        }
        c.closed = false;
        Ok(c)
    }

    fn build(
        config: DeviceConfig,
        layout: Layout,
        storage: Storage,
        design: Box<dyn Design>,
    ) -> Controller {
        let zones = (0..layout.zone_count)
            .map(|i| {
                let zslba = i as u64 * layout.zone_size_lbas;
                Zone {
                    state: ZoneState::Empty,
                    zslba,
                    capacity: layout.zone_capacity_lbas,
                    wp: zslba,
                    bytes: 0,
                    padding: false,
                    attributes: 0,
                    open_seq: 0,
                }
            })
            .collect();
        let profile = codec::profile::by_name(&config.compression.engine)
            .expect("engine profile checked by DeviceConfig::layout");
        Controller {
            design,
            faults: Faults::default(),
            dulbe: false,
            engine: Engine::new(config.compression.codec, profile),
            staging: Vec::new(),
            zone_flash: vec![ZoneFlash::default(); layout.zone_count as usize],
            zones,
            open_count: 0,
            active_count: 0,
            open_seq: 0,
            flash: Flash::new(layout.geometry.clone()),
            link_to_device: Timeline::new(),
            link_to_host: Timeline::new(),
            write_buffer: WriteBuffer::new(
                config.controller.write_buffer_bytes,
                if config.controller.write_buffer_per_zone_group {
                    layout.zone_groups
                } else {
                    1
                },
            ),
            storage,
            counters: DeviceCounters::default(),
            overhead: SimDuration::from_ns(config.controller.command_overhead_ns),
            dirty_zones: Vec::new(),
            zone_is_dirty: vec![false; layout.zone_count as usize],
            image_error: None,
            tables_unrecorded: false,
            closed: false,
            config,
            layout,
        }
    }

    pub fn config(&self) -> &DeviceConfig {
        &self.config
    }
    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn counters(&self) -> &DeviceCounters {
        &self.counters
    }
    pub fn flash(&self) -> &Flash {
        &self.flash
    }
    pub fn flash_counters(&self) -> &FlashCounters {
        self.flash.counters()
    }
    /// Record each die's busy time in buckets of `bucket_ns` from now on (chip utilisation
    /// over time, ZNS+ Fig. 10); read it with `flash().busy_series()`.
    pub fn record_busy_series(&mut self, bucket_ns: u64) {
        self.flash.record_busy_series(bucket_ns);
    }
    /// The in-device compression engine's work so far.
    pub fn engine_counters(&self) -> EngineCounters {
        self.engine.counters()
    }
    /// The engine profile and codec the device compresses with.
    pub fn engine_profile(&self) -> &codec::EngineProfile {
        &self.engine.profile
    }
    pub fn open_zones(&self) -> u32 {
        self.open_count
    }
    pub fn active_zones(&self) -> u32 {
        self.active_count
    }

    /// Busy time of the host link in each direction (to device, to host); a half-duplex link's
    /// whole busy time is in the first.
    pub fn link_busy(&self) -> (SimDuration, SimDuration) {
        (
            SimDuration::from_ns(self.link_to_device.busy_ns()),
            SimDuration::from_ns(self.link_to_host.busy_ns()),
        )
    }

    pub fn dram(&self) -> DramUsage {
        DramUsage {
            // State, attributes, write pointer, written length and flash base of each zone;
            // Balloon-ZNS adds window starts and residue extents.
            zone_map_bytes: self.layout.zone_count as u64 * 32 + self.design.table_dram_bytes(),
            write_buffer_bytes: self.write_buffer.capacity(),
        }
    }

    pub fn zone_count(&self) -> u32 {
        self.layout.zone_count
    }

    /// The descriptor of zone `index` (no command, no cost).
    pub fn zone(&self, index: u32) -> ZoneDescriptor {
        self.zones[index as usize].descriptor()
    }

    pub fn identify(&self) -> Identify {
        let zero_based = |n: u32| if n == 0 { u32::MAX } else { n - 1 };
        Identify {
            nsze: self.layout.namespace_lbas(),
            ncap: self.layout.namespace_lbas(),
            nuse: self
                .zones
                .iter()
                .map(|z| z.bytes.div_ceil(self.layout.lba_bytes))
                .sum(),
            lba_bytes: self.layout.lba_bytes,
            metadata_bytes: self.layout.metadata_bytes,
            zsze: self.layout.zone_size_lbas,
            zcap: self.layout.zone_capacity_lbas,
            zone_count: self.layout.zone_count,
            mor: zero_based(self.layout.max_open),
            mar: zero_based(self.layout.max_active),
            zasl_bytes: self.layout.zone_append_max_bytes,
            mdts_bytes: self.layout.max_transfer_bytes,
            zoc: 0,
            ozcs: 0,
            csi: self.design.command_set(),
            vendor: self.design.vendor_caps(),
        }
    }

    /// An admin command. Set Features, Error Recovery (FID 05h), CDW11 bit 16 sets DULBE on a
    /// design that deallocates (Identify's `vendor.deallocate`), Invalid Field elsewhere; it is
    /// off again at power-on. Other features are Invalid Field.
    pub fn admin(&mut self, command: AdminCommand) -> Status {
        match command {
            AdminCommand::SetFeatures { fid, cdw11 } if fid == feature::ERROR_RECOVERY => {
                let dulbe = cdw11 & feature::DULBE != 0;
                if dulbe && !self.identify().vendor.deallocate {
                    return Status::INVALID_FIELD;
                }
                self.dulbe = dulbe;
                Status::SUCCESS
            }
            AdminCommand::SetFeatures { .. } => Status::INVALID_FIELD,
        }
    }

    /// Execute one command submitted at `now`. The functional result (status, state, bytes) is
    /// applied at once; `done_at` says when the host sees the completion.
    pub fn submit(&mut self, now: SimInstant, command: Command<'_>) -> Completion {
        self.counters.commands += 1;
        if self.counters.commands.is_multiple_of(64) {
            self.flash.prune(now);
            self.link_to_device.prune(now.as_ns());
            self.link_to_host.prune(now.as_ns());
            self.engine.prune(now.as_ns());
        }
        let ready = now + self.overhead;
        let zoned = matches!(
            command,
            Command::ZoneMgmtSend { .. } | Command::ZoneMgmtRecv { .. }
        );
        let changes = !matches!(
            command,
            Command::Read { .. }
                | Command::ReadDiscard { .. }
                | Command::DecompressedRead { .. }
                | Command::ZoneMgmtRecv { .. }
                | Command::IdentifyMapping { .. }
        );
        let adds_bytes = matches!(
            command,
            Command::Write { .. }
                | Command::ZoneAppend { .. }
                | Command::CompressedWrite { .. }
                | Command::ZoneCompaction { .. }
                | Command::Copy { .. }
        );
        let znsplus = matches!(
            command,
            Command::ZoneCompaction { .. } | Command::Copy { .. } | Command::IdentifyMapping { .. }
        );
        let tl_open = matches!(command, Command::TlOpen { .. });
        // A conventional namespace has no zone commands, other designs no compressed ones;
        // injected faults end a command early.
        let compressed = matches!(
            command,
            Command::CompressedWrite { .. } | Command::DecompressedRead { .. }
        );
        let caps = self.design.vendor_caps();
        let refused = if zoned && self.design.command_set() == CommandSet::Nvm {
            Some(Status::INVALID_OPCODE)
        } else if changes && self.storage.is_read_only() {
            Some(Status::NAMESPACE_WRITE_PROTECTED)
        } else if let Some(status) = self.faults.check(&command) {
            Some(status)
        } else if (znsplus && !caps.zone_compaction) || (tl_open && !caps.tl_open) {
            // A vendor opcode this design does not have.
            Some(Status::INVALID_OPCODE)
        } else if compressed && !caps.compressed_io {
            // CDW12 bit 16 on a device without compressed I/O.
            Some(Status::INVALID_FIELD)
        } else if compressed && self.design.chunk_table().is_none() {
            // A design that says it takes compressed I/O but keeps no chunk records: refused
            // here rather than met halfway through the command.
            Some(Status::INTERNAL_ERROR)
        } else {
            None
        };
        let result = match command {
            _ if refused.is_some() => Err(refused.unwrap_or(Status::INTERNAL_ERROR)),
            Command::Read {
                slba,
                nlb,
                data,
                metadata,
            } => self.read(ready, slba, nlb, data, metadata, true),
            Command::ReadDiscard { slba, nlb, data } => {
                self.read(ready, slba, nlb, data, &mut [], false)
            }
            Command::Write {
                slba,
                nlb,
                data,
                metadata,
            } => self.write(ready, slba, nlb, data, metadata, false),
            Command::ZoneAppend {
                zslba,
                nlb,
                data,
                metadata,
            } => self.write(ready, zslba, nlb, data, metadata, true),
            Command::CompressedWrite {
                slba,
                intra,
                nlb,
                data,
                metadata,
                append,
            } => self.compressed_write(ready, slba, intra, nlb, data, metadata, append),
            Command::DecompressedRead {
                slba,
                intra,
                cnlb,
                pdsz,
                multi,
                nlb,
                data,
                metadata,
            } => self.decompressed_read(ready, slba, intra, cnlb, pdsz, multi, nlb, data, metadata),
            Command::ZoneMgmtSend {
                slba,
                action,
                select_all,
            } => self.zone_mgmt_send(ready, slba, action, select_all),
            Command::ZoneMgmtRecv {
                slba,
                filter,
                partial,
                extended,
                buffer,
            } => self.zone_mgmt_recv(ready, slba, filter, partial, extended, buffer),
            Command::Flush => self.flush(ready),
            Command::Deallocate { slba, nlb } => self.deallocate(ready, slba, nlb),
            Command::ZoneCompaction { zslba, pairs } => self.zone_compaction(ready, zslba, pairs),
            Command::Copy { sdlba, ranges } => self.copy(ready, sdlba, ranges),
            Command::IdentifyMapping { data } => self.identify_mapping(ready, data),
            Command::TlOpen {
                zslba,
                close_only,
                bitmap,
            } => self.tl_open(ready, zslba, close_only, bitmap),
        };
        // Before the host hears of it, the image holds what the command changed.
        let result = match (result, changes) {
            (Ok(r), true) => {
                let persisted = self.persist_command().map(|()| r);
                // A device in memory past its budget refuses writes (never what frees memory).
                match (persisted, adds_bytes) {
                    (Ok(r), true) => self.check_memory_budget().map(|()| r),
                    (p, _) => p,
                }
            }
            (Err(s), true) => {
                // A failed command may have changed state too (an implicit close, a Select All
                // that stopped part way): that is kept as well, but the failure is reported.
                let _ = self.persist_command();
                Err(s)
            }
            (r, false) => r,
        };
        // Work the device starts itself happens at command boundaries, in virtual time, and
        // yields to the host: it runs after the arriving command has queued its own flash work,
        // so it takes only dies still idle with that command issued (ZNS+ §3.2.2: background
        // plugging "when the target flash chip is idle"; the artifact's FEMU runs it at the end
        // of each submission-queue pass, after the commands the pass fetched). It changes no
        // bytes the command persisted.
        let (design, mut m) = self.split();
        design.background(&mut m, now);
        match result {
            Ok((result, done)) => Completion {
                status: Status::SUCCESS,
                result,
                done_at: done,
            },
            Err(status) => {
                self.counters.failed_commands += 1;
                Completion {
                    status,
                    result: 0,
                    done_at: ready,
                }
            }
        }
    }

    /// Turn a zone read-only or offline, as a media failure would (for tests and torture).
    /// Releases the zone's open and active resources; buffered data is kept readable.
    pub fn inject_zone_condition(&mut self, index: u32, state: ZoneState) {
        assert!(
            matches!(state, ZoneState::ReadOnly | ZoneState::Offline),
            "only READONLY or OFFLINE can be injected"
        );
        self.set_state(index as usize, state);
        let _ = self.persist_command();
    }

    /// The faults injected so far, to add to or clear (media errors, refused commands).
    pub fn faults_mut(&mut self) -> &mut Faults {
        &mut self.faults
    }

    /// Persist and close; reports an image write failure that drop would have to swallow.
    /// Power on after a power loss: the zones that were open come back Closed (their data and
    /// write pointers kept), as a ZNS drive's open zones do across a power cycle; the
    /// capacitor-protected write buffer kept everything acknowledged.
    pub fn power_cycle(&mut self) {
        self.design.power_cycle();
        self.dulbe = false;
        for zi in 0..self.zones.len() {
            // A ZNS+ TL-open zone stays so (its bitmap and write pointer are kept): the host
            // goes on filling it, or closes it.
            if self.zones[zi].state.is_open() && !self.zones[zi].is_tl_open() {
                self.set_state(zi, ZoneState::Closed);
            }
        }
        let _ = self.persist_command();
    }

    /// The device's design (to downcast with `as_any` in tests and reports).
    pub fn design(&self) -> &dyn Design {
        &*self.design
    }

    /// The name of the device's design (for reports; behaviour follows Identify).
    pub fn design_name(&self) -> &'static str {
        self.design.name()
    }

    /// Balloon-ZNS counters (balloon design only).
    pub fn balloon_counters(&self) -> Option<crate::BalloonCounters> {
        let b = self
            .design
            .as_any()
            .downcast_ref::<design::balloon::Balloon>()?;
        Some(b.counters.clone())
    }

    /// TCSSD FTL counters (tcssd design only).
    pub fn tcssd_counters(&self) -> Option<crate::TcssdCounters> {
        let t = self
            .design
            .as_any()
            .downcast_ref::<design::tcssd::Tcssd>()?;
        Some(t.counters.clone())
    }

    /// The design, lent with the device's media it may use (disjoint borrows of the
    /// controller's fields).
    pub(crate) fn split(&mut self) -> (&mut dyn Design, Media<'_>) {
        (
            &mut *self.design,
            Media {
                layout: &self.layout,
                config: &self.config,
                zones: &self.zones,
                zone_flash: &mut self.zone_flash,
                flash: &mut self.flash,
                link_to_device: &mut self.link_to_device,
                buffer: &mut self.write_buffer,
                storage: &mut self.storage,
                engine: &mut self.engine,
                staging: &mut self.staging,
                counters: &mut self.counters,
                dulbe: self.dulbe,
                journal: design::persist::JournalMarks {
                    dirty_zones: &mut self.dirty_zones,
                    zone_is_dirty: &mut self.zone_is_dirty,
                    tables_unrecorded: &mut self.tables_unrecorded,
                    image_error: &mut self.image_error,
                },
            },
        )
    }

    pub fn close(mut self) -> io::Result<()> {
        self.closed = true;
        self.save_zone_table()
    }

    /// Let go of the image as a killed process would: no checkpoint, no last save (tests of
    /// what the image holds at every instant).
    #[doc(hidden)]
    pub fn drop_without_saving(mut self) {
        self.closed = true;
    }

    // ---- zone resources -------------------------------------------------------------------

    /// Move zone `zi` to `new`, keeping the open and active counts right.
    pub(crate) fn set_state(&mut self, zi: usize, new: ZoneState) {
        let old = self.zones[zi].state;
        if old.is_open() {
            self.open_count -= 1;
        }
        if old.is_active() {
            self.active_count -= 1;
        }
        if new.is_open() {
            self.open_count += 1;
            if !old.is_open() {
                self.open_seq += 1;
                self.zones[zi].open_seq = self.open_seq;
            }
        }
        if new.is_active() {
            self.active_count += 1;
        }
        self.zones[zi].state = new;
        self.mark_zone_dirty(zi);
        if old.is_open() && !new.is_open() {
            let (design, mut m) = self.split();
            design.zone_left_open(&mut m, zi);
        }
    }

    fn recount_resources(&mut self) {
        self.open_count = self.zones.iter().filter(|z| z.state.is_open()).count() as u32;
        self.active_count = self.zones.iter().filter(|z| z.state.is_active()).count() as u32;
    }

    /// Validate: can zone `zi` become open (an active resource if it is not active yet, and an
    /// open one)? `Some(v)`: only by implicitly closing zone `v`, the oldest implicitly opened.
    /// Changes nothing; [`take_open`](Self::take_open) applies it.
    pub(crate) fn check_open(&self, zi: usize) -> Result<Option<usize>, Status> {
        let state = self.zones[zi].state;
        if state.is_open() {
            return Ok(None);
        }
        let (mor, mar) = (self.layout.max_open, self.layout.max_active);
        if !state.is_active() && mar != 0 && self.active_count >= mar {
            return Err(Status::ZONE_TOO_MANY_ACTIVE);
        }
        if mor != 0 && self.open_count >= mor {
            if !self.config.controller.auto_transition {
                return Err(Status::ZONE_TOO_MANY_OPEN);
            }
            return self
                .zones
                .iter()
                .enumerate()
                .filter(|(i, z)| *i != zi && z.state == ZoneState::ImplicitlyOpened)
                .min_by_key(|(_, z)| z.open_seq)
                .map(|(i, _)| Some(i))
                .ok_or(Status::ZONE_TOO_MANY_OPEN);
        }
        Ok(None)
    }

    /// Apply what [`check_open`](Self::check_open) decided: close the victim, if any.
    pub(crate) fn take_open(&mut self, _zi: usize, victim: Option<usize>) {
        if let Some(v) = victim {
            self.set_state(v, ZoneState::Closed);
            self.counters.implicit_closes += 1;
        }
    }

    /// The checks every data command starts with: a block count, buffers that match it (the
    /// metadata buffer empty or `nlb × MS` bytes), and a transfer within `limit` bytes (MDTS, or
    /// ZASL for appends). Returns the data bytes.
    pub(crate) fn check_transfer(
        &self,
        nlb: u32,
        data_len: usize,
        meta_len: usize,
        limit: u64,
    ) -> Result<u64, Status> {
        let bytes = nlb as u64 * self.layout.lba_bytes;
        let meta_ok = meta_len == 0 || meta_len as u64 == nlb as u64 * self.layout.metadata_bytes;
        if nlb == 0 || data_len as u64 != bytes || !meta_ok || bytes > limit {
            return Err(Status::INVALID_FIELD);
        }
        Ok(bytes)
    }

    // ---- timing helpers -------------------------------------------------------------------

    /// Move `bytes` across the link toward the device starting no earlier than `t`.
    pub(crate) fn transfer_to_device(&mut self, t: u64, bytes: u64) -> u64 {
        let rate = self.layout.link_bytes_per_s;
        design::transfer(&mut self.link_to_device, rate, t, bytes)
    }

    /// Move `bytes` across the link toward the host starting no earlier than `t` (on the one
    /// shared timeline if the link is half duplex).
    pub(crate) fn transfer_to_host(&mut self, t: u64, bytes: u64) -> u64 {
        let rate = self.layout.link_bytes_per_s;
        let link = if self.layout.link_half_duplex {
            &mut self.link_to_device
        } else {
            &mut self.link_to_host
        };
        design::transfer(link, rate, t, bytes)
    }

    pub(crate) fn buffer_admit(&mut self, t: u64, bytes: u64) -> u64 {
        self.write_buffer.admit(0, t, bytes)
    }

    /// Hand every complete unit (or stripe) of zone `zi` up to `end` bytes to flash.
    pub(crate) fn flush_zone_units(&mut self, zi: usize, end: u64, ready: u64) {
        let ready = SimInstant::from_ns(ready);
        design::zns::flush_zone_units(&mut self.split().1, zi, end, ready);
    }

    /// Timing of reading bytes `from..to` of zone `zi` (see `design::zns`).
    pub(crate) fn read_zone_bytes(
        &mut self,
        zi: usize,
        from: u64,
        to: u64,
        ready: SimInstant,
    ) -> u64 {
        design::zns::read_zone_bytes(&mut self.split().1, zi, from, to, ready).as_ns()
    }

    /// The zone checks every write starts with: a writable state, and an LBA below the zone
    /// capacity (LBAs between capacity and size are not writable at all).
    pub(crate) fn check_writable(&self, zone: &Zone, slba: u64) -> Result<(), Status> {
        match zone.state {
            ZoneState::Full => Err(Status::ZONE_FULL),
            ZoneState::ReadOnly => Err(Status::ZONE_READ_ONLY),
            ZoneState::Offline => Err(Status::ZONE_OFFLINE),
            _ if slba >= zone.end_of_capacity() => Err(Status::ZONE_BOUNDARY_ERROR),
            _ => Ok(()),
        }
    }

    pub(crate) fn zone_index(&self, lba: u64) -> usize {
        (lba / self.layout.zone_size_lbas) as usize
    }

    pub(crate) fn mark_zone_dirty(&mut self, zi: usize) {
        if !self.zone_is_dirty[zi] {
            self.zone_is_dirty[zi] = true;
            self.dirty_zones.push(zi as u32);
        }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if !self.closed {
            // Everything is on the image already; a checkpoint makes the next open quicker.
            // Errors here cannot be returned; `close` reports them for callers that care.
            let _ = self.save_zone_table();
        }
    }
}
