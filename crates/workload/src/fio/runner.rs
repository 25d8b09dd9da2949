//! Running fio jobs on the virtual clock.
//!
//! Each job is `iodepth` tasks sharing one job state that hands out the next I/O. Jobs in one
//! group start together; a job with `stonewall` starts a new group after every earlier job has
//! finished. In zonemode=zbd, as in fio: sequential writes go to each zone's write pointer,
//! a zone whose room is smaller than the block size is finished and the job moves on, a full
//! zone met when entering it is reset first; reads stay below write pointers
//! (`read_beyond_wp=0`); random reads pick a zone and an offset among written blocks.
//!
//! With `compressed_io=1` (a CCZNS device) writes are compressed writes at each zone's byte
//! write pointer, `bs / compressed_chunk` chunks each, and reads are decompressed reads of
//! chunks that compressed writes of this run put there (the run keeps the chunk index a host
//! would: offset, feedback size and size before compression of every chunk, from the CW
//! feedback). One chunk per I/O gives single-chunk commands; more give multi-chunk ones, whose
//! output budget is set by prefix-chunk prediction (CCZNS §III-C): the first chunk's ratio
//! times the compressed range.

use std::cell::RefCell;
use std::rc::Rc;

use device::cmd::wire;
use device::{Command, DeviceHandle, Layout, Status, ZoneAction, ZoneState};
use report::LatencyHistogram;
use sim::{Rng, Sim};

use super::options::{Direction, JobSpec, Pattern, ZoneMode};
use super::FioError;

/// Counts for one direction of one job.
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub io_bytes: u64,
    pub ios: u64,
    pub clat: LatencyHistogram,
}

impl DirStats {
    pub fn merge(&mut self, o: &DirStats) {
        self.io_bytes += o.io_bytes;
        self.ios += o.ios;
        self.clat.merge(&o.clat);
    }
}

/// What one job did.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub spec: JobSpec,
    pub group: u32,
    pub read: DirStats,
    pub write: DirStats,
    /// From the group's start to the job's last completion.
    pub runtime_ns: u64,
    /// First failure: an NVMe status or a job that found nothing to do.
    pub error: Option<String>,
    pub zone_resets: u64,
    pub zone_finishes: u64,
    /// Multi-chunk DRs whose predicted budget held fewer chunks than asked for.
    pub dr_short_reads: u64,
}

/// What a whole run did.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub jobs: Vec<JobResult>,
    /// Virtual time when the last job finished.
    pub sim_end_ns: u64,
}

struct Io {
    lba: u64,
    nlb: u32,
    wait_until: Option<u64>,
    cc: Option<CcIo>,
}

/// The CCZNS part of an I/O.
#[derive(Clone, Copy)]
enum CcIo {
    /// A CW at byte `intra` of the block.
    Write { intra: u32 },
    /// A DR of `chunks` chunks whose compressed range is `cnlb` blocks less `pdsz` bytes.
    Read {
        intra: u32,
        cnlb: u32,
        pdsz: u32,
        chunks: u32,
    },
}

/// One chunk a CW wrote, as the host indexes it.
#[derive(Clone, Copy, Debug)]
struct ChunkEntry {
    /// From the zone start, in the zone's compressed byte space.
    offset: u64,
    feedback: u32,
    pre: u32,
}

/// The chunk index of every zone, shared by the jobs of a run.
type ChunkIndex = Rc<RefCell<Vec<Vec<ChunkEntry>>>>;

struct JobState {
    spec: JobSpec,
    g: Rc<Layout>,
    bs_lbas: u64,
    /// Region in LBAs: [start, end). In zbd mode both are zone aligned.
    start: u64,
    end: u64,
    cur_zone: u64,
    entering_zone: bool,
    /// A zone just reset whose first write waits for the reset to complete: (zone, bytes
    /// already given out from its start, when the reset completes). Other workers write after
    /// them, not at the start too (they meet the zone reset and empty, that first write not
    /// yet submitted), and wait for the reset as well, so the writes reach the zone in order.
    reserved: Option<(u64, u64, u64)>,
    pos: u64,
    issued: u64,
    target: u64,
    deadline: Option<u64>,
    rng: Rng,
    done: bool,
    idle_scans: u64,
    result: JobResult,
    last_done: u64,
    group_start: u64,
    /// CCZNS: chunk bytes and chunks per I/O, the run's chunk index, and the next chunk of
    /// the current zone for sequential reads.
    chunk: u64,
    chunks_per_io: u64,
    index: ChunkIndex,
    chunk_cursor: usize,
}

impl JobState {
    fn first_zone(&self) -> u64 {
        self.start / self.g.zone_size_lbas
    }
    fn end_zone(&self) -> u64 {
        self.end.div_ceil(self.g.zone_size_lbas)
    }
    /// Move to the next zone of the region. Past its end the job starts over only when it is
    /// time based or has an explicit io_size, as in fio; otherwise it is done.
    fn advance_zone(&mut self) {
        self.cur_zone += 1;
        if self.cur_zone >= self.end_zone() {
            self.cur_zone = self.first_zone();
            if !(self.spec.time_based || self.spec.io_size.is_some()) {
                self.done = true;
            }
        }
        self.entering_zone = true;
        self.pos = self.cur_zone * self.g.zone_size_lbas;
        self.chunk_cursor = 0;
    }

    fn fail(&mut self, msg: String) -> Option<Io> {
        if self.result.error.is_none() {
            self.result.error = Some(msg);
        }
        self.done = true;
        None
    }

    fn zone_mgmt(
        &mut self,
        dev: &DeviceHandle,
        now: u64,
        zone: u64,
        action: ZoneAction,
    ) -> Result<u64, Status> {
        let slba = zone * self.g.zone_size_lbas;
        let c = dev.with(|c| {
            c.submit(
                sim::SimInstant::from_ns(now),
                Command::ZoneMgmtSend {
                    slba,
                    action,
                    select_all: false,
                },
            )
        });
        if c.status != Status::SUCCESS {
            return Err(c.status);
        }
        if action == ZoneAction::Reset {
            self.index.borrow_mut()[zone as usize].clear();
        }
        match action {
            ZoneAction::Reset => self.result.zone_resets += 1,
            ZoneAction::Finish => self.result.zone_finishes += 1,
            _ => {}
        }
        Ok(c.done_at.as_ns())
    }

    fn next_io(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
        if self.done || (!self.spec.time_based && self.issued >= self.target) {
            return None;
        }
        if self.deadline.is_some_and(|d| now >= d) {
            return None;
        }
        let io = match (self.spec.zonemode, self.spec.direction, self.spec.pattern) {
            (ZoneMode::Zbd, Direction::Read, Pattern::Sequential) if self.spec.compressed_io => {
                self.next_dr_seq()
            }
            (ZoneMode::Zbd, Direction::Read, Pattern::Random) if self.spec.compressed_io => {
                self.next_dr_rand()
            }
            (ZoneMode::Zbd, Direction::Write, _) => self.next_zbd_write(dev, now),
            (ZoneMode::Zbd, Direction::Read, Pattern::Sequential) => self.next_zbd_seq_read(dev),
            (ZoneMode::Zbd, Direction::Read, Pattern::Random) => self.next_zbd_rand_read(dev),
            (ZoneMode::None, _, Pattern::Sequential) => {
                if self.pos + self.bs_lbas > self.end {
                    self.pos = self.start;
                }
                let lba = self.pos;
                self.pos += self.bs_lbas;
                Some(Io {
                    lba,
                    nlb: self.bs_lbas as u32,
                    wait_until: None,
                    cc: None,
                })
            }
            (ZoneMode::None, _, Pattern::Random) => {
                let slots = (self.end - self.start) / self.bs_lbas;
                let lba = self.start + self.rng.below(slots) * self.bs_lbas;
                Some(Io {
                    lba,
                    nlb: self.bs_lbas as u32,
                    wait_until: None,
                    cc: None,
                })
            }
        };
        if io.is_some() {
            self.issued += self.bs_lbas * self.g.lba_bytes;
        }
        io
    }

    fn next_zbd_write(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
        let lba = self.g.lba_bytes;
        let bs = self.bs_lbas;
        let cc = self.spec.compressed_io;
        for _ in 0..=2 * (self.end_zone() - self.first_zone()) {
            let d = dev.with(|c| c.zone(self.cur_zone as u32));
            if matches!(d.state, ZoneState::ReadOnly | ZoneState::Offline) {
                self.advance_zone();
                continue;
            }
            // In bytes; a CW needs room for its data uncompressed (the worst case).
            let cap = d.capacity * lba;
            let mut used = if d.state == ZoneState::Full {
                cap
            } else {
                d.byte_wp
            };
            let mut wait_until = None;
            match self.reserved {
                Some((z, given, t)) if z == self.cur_zone && (used < given || now < t) => {
                    used = used.max(given);
                    wait_until = Some(t);
                }
                Some(_) => self.reserved = None,
                None => {}
            }
            let room = cap - used;
            if room >= bs * lba {
                self.entering_zone = false;
                if let Some((z, given, _)) = self.reserved.as_mut() {
                    if *z == self.cur_zone {
                        *given = used + bs * lba;
                    }
                }
                return Some(Io {
                    lba: d.zslba + used / lba,
                    nlb: bs as u32,
                    wait_until,
                    cc: cc.then_some(CcIo::Write {
                        intra: (used % lba) as u32,
                    }),
                });
            }
            if self.entering_zone && used > 0 {
                // A zone met full (or too full) on entry is reset, as fio does.
                return match self.zone_mgmt(dev, now, self.cur_zone, ZoneAction::Reset) {
                    Ok(t) => {
                        self.entering_zone = false;
                        // A compressed write's footprint is known only once it is made: the
                        // others must find the byte write pointer as it then stands.
                        if !cc {
                            self.reserved = Some((self.cur_zone, bs * lba, t));
                        }
                        Some(Io {
                            lba: d.zslba,
                            nlb: bs as u32,
                            wait_until: Some(t),
                            cc: cc.then_some(CcIo::Write { intra: 0 }),
                        })
                    }
                    Err(s) => self.fail(format!("zone reset at LBA {}: {s}", d.zslba)),
                };
            }
            if room > 0 && d.state != ZoneState::Full {
                // Less than a block left: finish the zone rather than leave it open.
                if let Err(s) = self.zone_mgmt(dev, now, self.cur_zone, ZoneAction::Finish) {
                    return self.fail(format!("zone finish at LBA {}: {s}", d.zslba));
                }
            }
            self.advance_zone();
            if self.done {
                return None;
            }
        }
        self.fail("no writable zone in the job's region".into())
    }

    /// A DR of chunks `first..first + k` of zone `zone` (k = chunks per I/O).
    fn dr_io(&self, zone: u64, entries: &[ChunkEntry]) -> Io {
        let lba = self.g.lba_bytes;
        let (head, last) = (entries[0], entries[entries.len() - 1]);
        let (start, end) = (head.offset, last.offset + last.feedback as u64);
        let cnlb = (end.div_ceil(lba) - start / lba) as u32;
        let pdsz = (end.div_ceil(lba) * lba - end) as u32;
        let nlb = if entries.len() == 1 {
            (head.pre as u64).div_ceil(lba)
        } else {
            // Prefix-chunk prediction: the whole range decompresses like its first chunk.
            let predicted = (end - start) as f64 * head.pre as f64 / head.feedback as f64;
            (predicted.ceil() as u64)
                .div_ceil(lba)
                .max((head.pre as u64).div_ceil(lba))
                .min(self.g.max_transfer_bytes / lba)
        };
        Io {
            lba: zone * self.g.zone_size_lbas + start / lba,
            nlb: nlb as u32,
            wait_until: None,
            cc: Some(CcIo::Read {
                intra: (start % lba) as u32,
                cnlb,
                pdsz,
                chunks: entries.len() as u32,
            }),
        }
    }

    /// Chunks of another size than this job's `compressed_chunk` cannot make its I/Os.
    fn check_chunk_size(&mut self, entries_pre: Option<u32>) -> bool {
        match entries_pre {
            Some(pre) if pre as u64 != self.chunk => {
                self.fail(format!(
                    "compressed_chunk: the chunks written are {pre} bytes, this job reads chunks \
                     of {} (set compressed_chunk={pre} and bs to a multiple of it)",
                    self.chunk
                ));
                false
            }
            _ => true,
        }
    }

    fn next_dr_seq(&mut self) -> Option<Io> {
        let k = self.chunks_per_io as usize;
        let zones = self.end_zone() - self.first_zone();
        for _ in 0..=zones {
            let head = self.index.borrow()[self.cur_zone as usize]
                .first()
                .map(|e| e.pre);
            if !self.check_chunk_size(head) {
                return None;
            }
            let io = {
                let index = self.index.borrow();
                let entries = &index[self.cur_zone as usize];
                (self.chunk_cursor + k <= entries.len()).then(|| {
                    self.dr_io(
                        self.cur_zone,
                        &entries[self.chunk_cursor..self.chunk_cursor + k],
                    )
                })
            };
            if let Some(io) = io {
                self.chunk_cursor += k;
                self.idle_scans = 0;
                return Some(io);
            }
            self.idle_scans += 1;
            if self.idle_scans > zones {
                break;
            }
            self.advance_zone();
            if self.done {
                break;
            }
        }
        if self.result.read.ios == 0 && self.issued == 0 {
            return self.fail(NO_CHUNKS.into());
        }
        self.done = true;
        None
    }

    fn next_dr_rand(&mut self) -> Option<Io> {
        let k = self.chunks_per_io as usize;
        let (first, zones) = (self.first_zone(), self.end_zone() - self.first_zone());
        let pick = first + self.rng.below(zones);
        for j in 0..zones {
            let z = first + (pick - first + j) % zones;
            let head = self.index.borrow()[z as usize].first().map(|e| e.pre);
            if !self.check_chunk_size(head) {
                return None;
            }
            let index = self.index.borrow();
            let entries = &index[z as usize];
            let groups = entries.len() / k;
            if groups > 0 {
                let g = self.rng.below(groups as u64) as usize;
                return Some(self.dr_io(z, &entries[g * k..g * k + k]));
            }
        }
        self.fail(NO_CHUNKS.into())
    }

    fn readable_end(&self, d: &device::ZoneDescriptor) -> u64 {
        if self.spec.read_beyond_wp {
            d.zslba + d.capacity
        } else {
            match d.state {
                ZoneState::Full => d.zslba + d.capacity,
                ZoneState::Offline => d.zslba,
                ZoneState::ReadOnly => d.zslba + d.capacity,
                _ => d.wp,
            }
        }
    }

    fn next_zbd_seq_read(&mut self, dev: &DeviceHandle) -> Option<Io> {
        let zones = self.end_zone() - self.first_zone();
        for _ in 0..=zones {
            let d = dev.with(|c| c.zone(self.cur_zone as u32));
            let end = self.readable_end(&d).min(self.end);
            if self.pos.max(self.start) + self.bs_lbas <= end {
                let lba = self.pos.max(self.start);
                self.pos = lba + self.bs_lbas;
                self.idle_scans = 0;
                return Some(Io {
                    lba,
                    nlb: self.bs_lbas as u32,
                    wait_until: None,
                    cc: None,
                });
            }
            self.idle_scans += 1;
            if self.idle_scans > zones {
                break;
            }
            self.advance_zone();
            if self.done {
                return None;
            }
        }
        if self.result.read.ios == 0 && self.issued == 0 {
            return self.fail("nothing to read: no zone in the region holds a block of data below its write pointer".into());
        }
        self.done = true;
        None
    }

    fn next_zbd_rand_read(&mut self, dev: &DeviceHandle) -> Option<Io> {
        let (first, zones) = (self.first_zone(), self.end_zone() - self.first_zone());
        let pick = first + self.rng.below(zones);
        for k in 0..zones {
            let z = first + (pick - first + k) % zones;
            let d = dev.with(|c| c.zone(z as u32));
            let lo = d.zslba.max(self.start);
            let hi = self.readable_end(&d).min(self.end);
            if hi >= lo + self.bs_lbas {
                let slots = (hi - lo - self.bs_lbas) / self.bs_lbas + 1;
                let lba = lo + self.rng.below(slots) * self.bs_lbas;
                return Some(Io {
                    lba,
                    nlb: self.bs_lbas as u32,
                    wait_until: None,
                    cc: None,
                });
            }
        }
        self.fail(
            "nothing to read: no zone in the region holds a block of data below its write pointer"
                .into(),
        )
    }
}

const NO_CHUNKS: &str =
    "nothing to read: compressed_io reads need chunks written by compressed_io \
                         writes earlier in the same run (a job before this one, with stonewall)";

/// Fill `buf` the way fio does for buffer_compress_percentage: in each chunk, the first
/// (100 - pct)% random bytes and the rest zeros. With a `spread`, each 4 KiB page draws its own
/// percentage from pct ± spread (a znslab extension).
fn fill_compressible(rng: &mut Rng, buf: &mut [u8], pct: u32, chunk: u64, spread: u32) {
    if spread == 0 {
        fill_chunks(rng, buf, pct, chunk);
        return;
    }
    for page in buf.chunks_mut(4096) {
        let lo = pct.saturating_sub(spread);
        let hi = (pct + spread).min(100);
        let p = lo + rng.below((hi - lo + 1) as u64) as u32;
        fill_chunks(rng, page, p, chunk);
    }
}

fn fill_chunks(rng: &mut Rng, buf: &mut [u8], pct: u32, chunk: u64) {
    if pct == 0 {
        rng.fill(buf);
        return;
    }
    for c in buf.chunks_mut(chunk as usize) {
        let random = c.len() * (100 - pct as usize) / 100;
        rng.fill(&mut c[..random]);
        c[random..].fill(0);
    }
}

fn setup(
    spec: &JobSpec,
    g: &Rc<Layout>,
    sim: &Sim,
    dev: &DeviceHandle,
    index: usize,
    group: u32,
    chunks: &ChunkIndex,
) -> Result<JobState, FioError> {
    let err = |opt: &str, msg: String| FioError::option(&spec.name, opt, msg);
    let lba = g.lba_bytes;
    if !spec.bs.is_multiple_of(lba) {
        return Err(err(
            "bs",
            format!("{} is not a multiple of the {lba}-byte LBA", spec.bs),
        ));
    }
    let (mdts, mor) = dev.with(|c| (c.identify().mdts_bytes, c.layout().max_open));
    if spec.bs > mdts {
        return Err(err(
            "bs",
            format!(
                "{} is larger than the device's maximum transfer ({mdts} bytes)",
                spec.bs
            ),
        ));
    }
    let bs_lbas = spec.bs / lba;
    if spec.zonemode == ZoneMode::Zbd && bs_lbas > g.zone_capacity_lbas {
        return Err(err(
            "bs",
            format!("{} is larger than the zone capacity", spec.bs),
        ));
    }
    if spec.zonemode == ZoneMode::Zbd && mor != 0 && spec.max_open_zones > mor {
        return Err(err(
            "max_open_zones",
            format!(
                "{} is more than the device supports ({mor})",
                spec.max_open_zones
            ),
        ));
    }
    let dev_bytes = g.namespace_lbas() * lba;
    let mut offset = spec.offset.resolve(dev_bytes) + spec.clone as u64 * spec.offset_increment;
    if spec.zonemode == ZoneMode::Zbd {
        let zb = g.zone_size_lbas * lba;
        offset = offset.div_ceil(zb) * zb;
    }
    if offset >= dev_bytes {
        return Err(err(
            "offset",
            format!("{offset} is at or past the end of the device ({dev_bytes} bytes)"),
        ));
    }
    let size = spec
        .size
        .map(|s| s.resolve(dev_bytes))
        .unwrap_or(dev_bytes - offset)
        .min(dev_bytes - offset);
    let start = offset / lba;
    let mut end = (offset + size) / lba;
    if spec.zonemode == ZoneMode::Zbd {
        end = end.div_ceil(g.zone_size_lbas) * g.zone_size_lbas;
        end = end.min(g.namespace_lbas());
    }
    if end < start + bs_lbas {
        return Err(err(
            "size",
            format!("{size} bytes is less than one block of {}", spec.bs),
        ));
    }
    let chunk = if spec.compressed_chunk == 0 {
        spec.bs
    } else {
        spec.compressed_chunk
    };
    let id = dev.with(|c| c.identify());
    if spec.zonemode == ZoneMode::Zbd && id.csi != device::CommandSet::Zoned {
        return Err(err(
            "zonemode",
            "zbd needs a zoned device; the tcssd design has a conventional namespace \
             (use zonemode=none)"
                .into(),
        ));
    }
    if spec.compressed_io {
        if !id.vendor.compressed_io {
            let design = dev.with(|c| c.config().design);
            return Err(err(
                "compressed_io",
                format!(
                    "needs a device of the cczns design (this one is {})",
                    design.name()
                ),
            ));
        }
        if spec.zonemode != ZoneMode::Zbd {
            return Err(err("compressed_io", "needs zonemode=zbd".into()));
        }
        if !spec.bs.is_multiple_of(chunk) || chunk > u32::MAX as u64 {
            return Err(err(
                "compressed_chunk",
                format!("{chunk} does not divide bs ({})", spec.bs),
            ));
        }
        let slots = bs_lbas * g.metadata_bytes / 4;
        if spec.bs / chunk + 3 > slots {
            return Err(err(
                "compressed_chunk",
                format!(
                    "{} chunks per I/O do not fit the metadata buffer ({slots} slots of 4 bytes)",
                    spec.bs / chunk
                ),
            ));
        }
    }
    let seed = spec.randseed.unwrap_or(sim.seed());
    let rng = Rng::new(seed).stream(&format!("fio.{}.{}.{}", spec.name, spec.clone, index));
    let target = spec.io_size.unwrap_or(size);
    Ok(JobState {
        spec: spec.clone(),
        g: g.clone(),
        bs_lbas,
        start,
        end,
        cur_zone: start / g.zone_size_lbas,
        entering_zone: true,
        reserved: None,
        pos: start,
        issued: 0,
        target,
        deadline: None,
        rng,
        done: false,
        idle_scans: 0,
        result: JobResult {
            spec: spec.clone(),
            group,
            read: DirStats::default(),
            write: DirStats::default(),
            runtime_ns: 0,
            error: None,
            zone_resets: 0,
            zone_finishes: 0,
            dr_short_reads: 0,
        },
        last_done: 0,
        group_start: 0,
        chunk,
        chunks_per_io: spec.bs / chunk,
        index: chunks.clone(),
        chunk_cursor: 0,
    })
}

async fn worker(
    sim: Sim,
    dev: DeviceHandle,
    state: Rc<RefCell<JobState>>,
    pool: Rc<Vec<u8>>,
    worker: usize,
) {
    let (bs_bytes, direction, lba, ms, chunk, index) = {
        let s = state.borrow();
        (
            (s.bs_lbas * s.g.lba_bytes) as usize,
            s.spec.direction,
            s.g.lba_bytes,
            s.g.metadata_bytes as usize,
            s.chunk,
            s.index.clone(),
        )
    };
    // Sized on the first read: a worker that never gets an I/O costs no buffer.
    let mut read_buf = Vec::new();
    let mut metadata = Vec::new();
    let cw_sizes = vec![chunk as u32; bs_bytes / chunk as usize];
    // Each worker walks the data pool from its own place so concurrent writes differ.
    let pool_slots = (pool.len() - bs_bytes) / 4096 + 1;
    let mut slot = (worker * 7919) % pool_slots;
    let start = state.borrow().group_start;
    sim.sleep_until(sim::SimInstant::from_ns(start)).await;
    loop {
        let io = {
            let mut s = state.borrow_mut();
            s.next_io(&dev, sim.now().as_ns())
        };
        let Some(io) = io else { break };
        if let Some(t) = io.wait_until {
            sim.sleep_until(sim::SimInstant::from_ns(t)).await;
        }
        let start = sim.now();
        let mut io_bytes = bs_bytes as u64;
        let mut short = false;
        let comp = match (direction, io.cc) {
            (Direction::Write, cc) => {
                let at = slot * 4096;
                slot = (slot + bs_bytes / 4096 + 1) % pool_slots;
                let data = &pool[at..at + bs_bytes];
                match cc {
                    Some(CcIo::Write { intra }) => {
                        metadata.resize(io.nlb as usize * ms, 0);
                        wire::put_cw_request(&mut metadata, &cw_sizes);
                        let comp = dev
                            .submit(Command::CompressedWrite {
                                slba: io.lba,
                                intra,
                                nlb: io.nlb,
                                data,
                                metadata: &mut metadata,
                                append: false,
                            })
                            .await;
                        if comp.status == Status::SUCCESS {
                            record_chunks(&index, &state, io.lba, intra, &metadata, chunk, lba);
                        }
                        comp
                    }
                    _ => {
                        dev.submit(Command::Write {
                            slba: io.lba,
                            nlb: io.nlb,
                            data,
                            metadata: &[],
                        })
                        .await
                    }
                }
            }
            (
                Direction::Read,
                Some(CcIo::Read {
                    intra,
                    cnlb,
                    pdsz,
                    chunks,
                }),
            ) => {
                read_buf.resize(io.nlb as usize * lba as usize, 0);
                metadata.resize(io.nlb as usize * ms, 0);
                let comp = dev
                    .submit(Command::DecompressedRead {
                        slba: io.lba,
                        intra,
                        cnlb,
                        pdsz,
                        multi: chunks > 1,
                        nlb: io.nlb,
                        data: &mut read_buf,
                        metadata: &mut metadata,
                    })
                    .await;
                let got = wire::dr_feedback(&metadata).unwrap_or_default();
                io_bytes = got.iter().map(|&(pre, _)| pre as u64).sum();
                short = comp.status == Status::SUCCESS && (got.len() as u32) < chunks;
                comp
            }
            (Direction::Read, _) => {
                read_buf.resize(io.nlb as usize * lba as usize, 0);
                dev.submit(Command::Read {
                    slba: io.lba,
                    nlb: io.nlb,
                    data: &mut read_buf,
                    metadata: &mut [],
                })
                .await
            }
        };
        let mut s = state.borrow_mut();
        if comp.status != Status::SUCCESS {
            let what = match (direction, io.cc.is_some()) {
                (Direction::Write, false) => "write",
                (Direction::Write, true) => "compressed write",
                (Direction::Read, false) => "read",
                (Direction::Read, true) => "decompressed read",
            };
            s.fail(format!("{what} at LBA {}: {}", io.lba, comp.status));
            break;
        }
        if short {
            s.result.dr_short_reads += 1;
        }
        let lat = sim.now().since(start).as_ns();
        let stats = if direction == Direction::Write {
            &mut s.result.write
        } else {
            &mut s.result.read
        };
        stats.io_bytes += io_bytes;
        stats.ios += 1;
        stats.clat.record(lat);
        s.last_done = s.last_done.max(sim.now().as_ns());
    }
}

/// Add the chunks of a completed CW at block `slba`, byte `intra`, to the run's index.
fn record_chunks(
    index: &ChunkIndex,
    state: &Rc<RefCell<JobState>>,
    slba: u64,
    intra: u32,
    metadata: &[u8],
    chunk: u64,
    lba: u64,
) {
    let Some(fb) = wire::cw_feedback(metadata, lba) else {
        return;
    };
    let zone_lbas = state.borrow().g.zone_size_lbas;
    let zone = (slba / zone_lbas) as usize;
    let mut offset = (slba % zone_lbas) * lba + intra as u64;
    let mut index = index.borrow_mut();
    let entries = &mut index[zone];
    // Completions may arrive out of order when several CWs are in flight: keep offset order.
    let at = entries.partition_point(|e| e.offset < offset);
    let new: Vec<ChunkEntry> = fb
        .sizes
        .iter()
        .map(|&f| {
            let e = ChunkEntry {
                offset,
                feedback: f,
                pre: chunk as u32,
            };
            offset += f as u64;
            e
        })
        .collect();
    entries.splice(at..at, new);
}

/// What a run may take of the host's memory.
#[derive(Clone, Debug)]
pub struct RunLimits {
    /// Bytes of host memory the job set (and, with `data_in_memory`, the bytes it writes)
    /// may take.
    pub memory_budget: u64,
    /// The device keeps every byte written in memory (no image): the bytes the jobs write
    /// count against the budget too.
    pub data_in_memory: bool,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            memory_budget: device::default_memory_budget(),
            data_in_memory: false,
        }
    }
}

/// Host memory of one job beside its workers: its state, spec and result.
const JOB_BYTES: u64 = 4 << 10;
/// Host memory of one worker beside its buffers: the task, its future and its join handle.
const WORKER_BYTES: u64 = 1 << 10;

impl JobState {
    fn bs_bytes(&self) -> u64 {
        (self.bs_lbas * self.g.lba_bytes).max(1)
    }

    /// Workers (I/Os in flight) the job can use: `iodepth`, or fewer when the job has fewer
    /// I/Os than that to issue (a worker past the last I/O would only find nothing to do).
    fn workers(&self) -> u64 {
        let depth = self.spec.iodepth as u64;
        if self.spec.time_based {
            depth
        } else {
            depth.min(self.target.div_ceil(self.bs_bytes()))
        }
    }

    /// The data pool's bytes: one block for reads, a 4 MiB (or larger) ring for writes.
    fn pool_bytes(&self) -> u64 {
        let bs = self.bs_bytes();
        if self.spec.direction == Direction::Read {
            bs
        } else {
            bs.max(4 << 20) + bs
        }
    }

    /// Host memory the job takes: its state, pool and latency histogram, and per worker its
    /// task and buffers (a read's data, the metadata, a CW's chunk list).
    fn memory_bytes(&self) -> u64 {
        let bs = self.bs_bytes();
        let meta = self.bs_lbas * self.g.metadata_bytes;
        let buffers = meta
            + 4 * self.chunks_per_io
            + if self.spec.direction == Direction::Read {
                bs
            } else {
                0
            };
        let fixed = JOB_BYTES + self.pool_bytes() + LatencyHistogram::bytes_for(u64::MAX);
        fixed.saturating_add(self.workers().saturating_mul(WORKER_BYTES + buffers))
    }

    /// Bytes the job leaves written on the device at most: its I/O size, or for a time-based
    /// job its whole region (a zone met full is reset, so no more than the region stays).
    fn written_bytes(&self) -> u64 {
        if self.spec.direction != Direction::Write {
            return 0;
        }
        let region = (self.end - self.start) * self.g.lba_bytes;
        if self.spec.time_based {
            region
        } else {
            self.target.min(region)
        }
    }
}

/// Refuse a job set whose memory (or, on a device in memory, whose written bytes) would not
/// fit the budget, naming what to lower.
fn check_memory(states: &[JobState], g: &Layout, limits: &RunLimits) -> Result<(), FioError> {
    let budget = limits.memory_budget;
    let human = device::human_bytes;
    let total = states
        .iter()
        .fold(0u64, |t, s| t.saturating_add(s.memory_bytes()));
    if total > budget {
        let big = states
            .iter()
            .max_by_key(|s| s.memory_bytes())
            .expect("a job set over budget has jobs");
        let clones = states
            .iter()
            .filter(|s| s.spec.name == big.spec.name)
            .count();
        return Err(FioError::option(
            &big.spec.name,
            "numjobs",
            format!(
                "the job set needs about {} of host memory, more than the memory budget of {}: \
                 numjobs={clones} jobs of iodepth={} (each I/O in flight a task and its \
                 buffers, bs={}; a job ~{}); lower numjobs, iodepth or bs, or raise --mem-budget",
                human(total),
                human(budget),
                big.spec.iodepth,
                big.spec.bs,
                human(big.memory_bytes()),
            ),
        ));
    }
    if limits.data_in_memory {
        let zone = device::harness::memory_zone_bytes(g);
        let capacity = (g.zone_count as u64).saturating_mul(g.zone_capacity_bytes());
        let written = states
            .iter()
            .fold(0u64, |t, s| t.saturating_add(s.written_bytes()))
            .min(capacity);
        let hint = "create an image (`znslab nvme create IMAGE --preset NAME`) and run on it \
                    with --filename=IMAGE (an image keeps the bytes in a sparse file), or raise \
                    --mem-budget";
        if written > 0 && zone > budget {
            return Err(FioError::new(format!(
                "a zone of this device takes {} of host memory once written (a device in memory \
                 keeps every byte written), more than the memory budget of {}: {hint}",
                human(zone),
                human(budget)
            )));
        }
        if written > budget {
            return Err(FioError::new(format!(
                "the jobs write {} into a device in memory, which keeps every byte written, \
                 more than the memory budget of {}: {hint}",
                human(written),
                human(budget)
            )));
        }
    }
    Ok(())
}

/// Run `jobs` against `dev` until every job is done; returns per-job results. The job set
/// must fit the default memory budget (half the machine's memory).
pub fn run(sim: &Sim, dev: &DeviceHandle, jobs: &[JobSpec]) -> Result<RunResult, FioError> {
    run_with(sim, dev, jobs, &RunLimits::default())
}

/// [`run`] within `limits`.
pub fn run_with(
    sim: &Sim,
    dev: &DeviceHandle,
    jobs: &[JobSpec],
    limits: &RunLimits,
) -> Result<RunResult, FioError> {
    let g = Rc::new(dev.with(|c| c.layout().clone()));
    let chunks: ChunkIndex = Rc::new(RefCell::new(vec![Vec::new(); g.zone_count as usize]));
    // Groups: a stonewall job starts a new one.
    let mut group = 0u32;
    let mut states = Vec::new();
    for (i, spec) in jobs.iter().enumerate() {
        if spec.stonewall && i > 0 {
            group += 1;
        }
        states.push(setup(spec, &g, sim, dev, i, group, &chunks)?);
    }
    check_memory(&states, &g, limits)?;
    let states: Vec<_> = states
        .into_iter()
        .map(|s| Rc::new(RefCell::new(s)))
        .collect();
    // Data pools: one per job, as fio keeps one buffer set per job.
    let pools: Vec<Rc<Vec<u8>>> = states
        .iter()
        .map(|s| {
            let s = s.borrow();
            if s.spec.direction == Direction::Read {
                return Rc::new(vec![0u8; (s.bs_lbas * s.g.lba_bytes) as usize]);
            }
            let mut rng = s.rng.stream("buffers");
            let mut pool = vec![0u8; s.pool_bytes() as usize];
            fill_compressible(
                &mut rng,
                &mut pool,
                s.spec.buffer_compress_percentage,
                s.spec.buffer_compress_chunk,
                s.spec.buffer_compress_spread,
            );
            Rc::new(pool)
        })
        .collect();

    let driver = {
        let (sim, dev, states) = (sim.clone(), dev.clone(), states.clone());
        async move {
            let mut i = 0;
            while i < states.len() {
                let group = states[i].borrow().result.group;
                let group_start = sim.now().as_ns();
                let mut handles = Vec::new();
                while i < states.len() && states[i].borrow().result.group == group {
                    let depth = {
                        let mut s = states[i].borrow_mut();
                        let start = group_start + s.spec.startdelay_ns;
                        s.group_start = start;
                        s.last_done = start;
                        s.deadline = s.spec.runtime_ns.map(|r| start + r);
                        s.workers() as usize
                    };
                    for w in 0..depth {
                        handles.push(sim.spawn(worker(
                            sim.clone(),
                            dev.clone(),
                            states[i].clone(),
                            pools[i].clone(),
                            w,
                        )));
                    }
                    i += 1;
                }
                for h in handles {
                    h.await;
                }
            }
        }
    };
    sim.block_on(driver);
    let mut results = Vec::new();
    let mut sim_end = 0;
    for s in states {
        let mut s = s.borrow_mut();
        // Move the latency histograms out rather than copy them.
        let (read, write) = (
            std::mem::take(&mut s.result.read),
            std::mem::take(&mut s.result.write),
        );
        let mut r = s.result.clone();
        (r.read, r.write) = (read, write);
        r.runtime_ns = s.last_done - s.group_start;
        sim_end = sim_end.max(s.last_done);
        results.push(r);
    }
    Ok(RunResult {
        jobs: results,
        sim_end_ns: sim_end,
    })
}
