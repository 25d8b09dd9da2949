//! The issuing loop: which I/O a job gives out next, and the worker tasks (`iodepth` per job)
//! that submit those I/Os on the virtual clock and count their completions.

use std::cell::RefCell;
use std::rc::Rc;

use device::cmd::wire;
use device::{Command, DeviceHandle, Status, ZoneAction};
use sim::Sim;

use super::cczns::record_chunks;
use super::distribution::Sampler;
use super::errors;
use super::{CcIo, Io, JobState};
use crate::fio::options::{Direction, Mix, Pattern, ZoneMode};

/// Per-job state of the choices made I/O by I/O: the job's index in the run, the random
/// run of `rw=rand...:N`, the block a trimwrite trimmed and writes next, and the I/Os since
/// the last thinktime.
#[derive(Default)]
pub(super) struct Flow {
    pub(super) job: usize,
    /// `flow`: registered with its flow, I/Os counted, and the job is over (once).
    pub(super) in_flow: bool,
    pub(super) flow_ios: u64,
    pub(super) over: bool,
    pub(super) run_left: u64,
    pub(super) pending_write: Option<u64>,
    pub(super) since_think: u64,
    /// random_distribution, set up for the region on the first random offset.
    pub(super) sampler: Option<Sampler>,
    /// zonemode=strided: the window's start and the blocks done in it.
    pub(super) window: Option<u64>,
    pub(super) window_done: u64,
    /// num_range: the trim's ranges after its first, (lba, blocks), taken by the worker.
    pub(super) more_ranges: Vec<(u64, u32)>,
    /// The direction of the I/O being chosen, and the start of the last random-job I/O
    /// (rw_sequencer=identical repeats it).
    pub(super) dir: Option<Direction>,
    pub(super) last_start: u64,
    /// thinktime: the whole job issues nothing before this (fio's job thread sleeps).
    pub(super) think_until: u64,
}

impl JobState {
    pub(super) fn fail(&mut self, msg: String) -> Option<Io> {
        self.fail_errno(msg, errors::EIO)
    }

    pub(super) fn fail_errno(&mut self, msg: String, errno: i32) -> Option<Io> {
        if self.result.error.is_none() {
            self.result.error = Some(msg);
            self.result.errno = errno;
        }
        self.done = true;
        None
    }

    /// The direction of the next I/O: the job's, or for rw/randrw one drawn by rwmixread,
    /// or for trimwrite a trim and then a write of the same block.
    fn next_dir(&mut self) -> Direction {
        match self.spec.mix {
            Mix::Single => self.spec.direction,
            Mix::ReadWrite => {
                if self.rng.below(100) < self.spec.rwmixread as u64 {
                    Direction::Read
                } else {
                    Direction::Write
                }
            }
            Mix::TrimWrite => {
                if self.flow.pending_write.is_some() {
                    Direction::Write
                } else {
                    Direction::Trim
                }
            }
        }
    }

    /// The next block of a job without zone awareness: sequential (with `rw=...:N` holes or
    /// backwards steps, as fio's get_next_seq_offset) or random (a new random offset every
    /// N I/Os).
    fn next_plain_lba(&mut self) -> u64 {
        if self.spec.zonemode == ZoneMode::Strided {
            return self.next_strided_lba();
        }
        self.next_region_lba()
    }

    /// zonemode=strided, as fio's setup_strided_zone_mode: the job works in a window of
    /// `zonerange` at `window`; after `zonesize` bytes there it moves `zonerange + zoneskip`
    /// on (back to the start past the end), the skipped bytes counting as done.
    fn next_strided_lba(&mut self) -> u64 {
        let lba = self.g.lba_bytes;
        let size = self.spec.zone_size.unwrap_or(1) / lba;
        let range =
            (self.spec.zone_range.or(self.spec.zone_size).unwrap_or(1) / lba).max(self.bs_lbas);
        let skip = self.spec.zone_skip / lba;
        let (start, end) = (self.start, self.end);
        let window = self.flow.window.unwrap_or(start);
        let mut window = window.max(start);
        if self.flow.window_done >= size.max(1) {
            self.flow.window_done = 0;
            window += range + skip;
            self.issued += skip * lba;
            if window >= end {
                window = start;
            }
            self.pos = window;
        }
        self.flow.window = Some(window);
        // The I/O stays in the window: [window, window + range).
        (self.start, self.end) = (window, (window + range).min(end));
        if self.pos >= self.end || self.pos < self.start {
            self.pos = self.start;
        }
        let lba_at = self.next_region_lba();
        (self.start, self.end) = (start, end);
        self.flow.window_done += self.bs_lbas;
        lba_at
    }

    fn next_region_lba(&mut self) -> u64 {
        let bs = self.bs_lbas;
        match self.spec.pattern {
            Pattern::Sequential => {
                let m = self.spec.rw_modifier.unwrap_or(0) / self.g.lba_bytes as i64;
                let (start, end) = (self.start as i64, self.end as i64);
                let mut lba = self.pos as i64;
                if m != 0 && self.pos != self.start {
                    lba += m;
                    if lba < start || lba + bs as i64 > end {
                        lba = if m > 0 { start } else { end + m };
                    }
                }
                if lba < start || lba + bs as i64 > end {
                    lba = start;
                }
                self.pos = lba as u64 + bs;
                lba as u64
            }
            Pattern::Random => {
                let dir = self.flow.dir.unwrap_or(self.spec.direction);
                let perc = self.spec.percentage_random[dir as usize];
                if self.flow.run_left > 0 && self.pos + bs <= self.end {
                    self.flow.run_left -= 1;
                    // rw_sequencer=identical: the run repeats its first offset.
                    if self.spec.rw_identical {
                        return self.flow.last_start;
                    }
                } else if perc < 100
                    && self.pos + bs <= self.end
                    && 1 + self.rng.below(100) as u32 > perc
                {
                    // percentage_random: this new offset continues sequentially (fio's
                    // should_do_random said no).
                    self.flow.run_left = self.spec.rw_modifier.unwrap_or(1).max(1) as u64 - 1;
                } else {
                    // Offsets are multiples of the smallest block size (fio's blockalign).
                    // (One alignment for all directions: the smallest block size of any.)
                    let align = (self.spec.bs_min / self.g.lba_bytes).max(1);
                    let slots = ((self.end - self.start) / align).max(1);
                    if self.flow.sampler.is_none() {
                        self.flow.sampler = Some(Sampler::new(
                            &self.spec.random_distribution,
                            slots,
                            self.g.lba_bytes * align,
                            &mut self.rng,
                        ));
                    }
                    let s = self.flow.sampler.as_ref().expect("set above");
                    let idx = s.next(&mut self.rng, slots);
                    self.pos = (self.start + idx * align).min(self.end.saturating_sub(bs));
                    self.flow.run_left = self.spec.rw_modifier.unwrap_or(1).max(1) as u64 - 1;
                }
                let lba = self.pos;
                self.pos += bs;
                self.flow.last_start = lba;
                lba
            }
        }
    }

    /// The block size of the next I/O of direction `dir` in LBAs: drawn from its `bssplit`,
    /// or between its `bsrange` ends (in multiples of the smaller), or its fixed `bs`.
    fn next_bs_lbas(&mut self, dir: Direction) -> u64 {
        let lba = self.g.lba_bytes;
        // bs_is_seq_rand: the read sizes are the sequential I/Os', the write sizes the
        // random I/Os'.
        let index = match (self.spec.bs_is_seq_rand, self.spec.pattern) {
            (false, _) => dir as usize,
            (true, Pattern::Sequential) => Direction::Read as usize,
            (true, Pattern::Random) => Direction::Write as usize,
        };
        let sizes = &self.spec.block_sizes[index];
        if !sizes.split.is_empty() {
            let r = self.rng.below(100) as u32;
            let mut acc = 0;
            for &(size, pct) in &sizes.split {
                acc += pct;
                if r < acc {
                    return size / lba;
                }
            }
            return sizes.split[sizes.split.len() - 1].0 / lba;
        }
        if sizes.min < sizes.max {
            let lo = sizes.min / lba;
            if self.spec.bs_unaligned {
                // Any whole number of blocks in the range, not only multiples of the smallest.
                return lo + self.rng.below(sizes.max / lba - lo + 1);
            }
            let steps = (sizes.max / lba - lo) / lo;
            return lo * (1 + self.rng.below(steps + 1));
        }
        sizes.max / lba
    }

    /// fio's flow_threshold_exceeded: a job whose share of its flow's I/Os is above its share
    /// of the flow's weight waits (flow_sleep, or 10 µs) before its next I/O.
    pub(super) fn flow_stall(&mut self) -> Option<u64> {
        if self.spec.flow == 0 || self.flow.over {
            return None;
        }
        let mut sh = self.shared.borrow_mut();
        let f = sh.flows.entry(self.spec.flow_id).or_default();
        if !self.flow.in_flow {
            self.flow.in_flow = true;
            f.1 += self.spec.flow as u64;
        }
        if f.0 > 0
            && (self.flow.flow_ios as f64 / f.0 as f64)
                > (self.spec.flow as f64 / f.1.max(1) as f64)
        {
            return Some(self.spec.flow_sleep_ns.max(10_000));
        }
        f.0 += 1;
        self.flow.flow_ios += 1;
        None
    }

    /// The job has no more I/O: it leaves its flow, and with exitall ends its group.
    pub(super) fn job_over(&mut self) {
        if std::mem::replace(&mut self.flow.over, true) {
            return;
        }
        let mut sh = self.shared.borrow_mut();
        if self.flow.in_flow {
            if let Some(f) = sh.flows.get_mut(&self.spec.flow_id) {
                f.1 = f.1.saturating_sub(self.spec.flow as u64);
            }
        }
        if self.spec.exitall {
            sh.exit_groups.push(self.result.group);
        }
    }

    pub(super) fn next_io(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
        if self
            .shared
            .borrow()
            .exit_groups
            .contains(&self.result.group)
        {
            return None;
        }
        let fixed_bs = self.bs_lbas;
        let io = self.next_io_sized(dev, now);
        self.bs_lbas = fixed_bs;
        io
    }

    fn next_io_sized(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
        let over = self.done
            || (!self.spec.time_based && self.issued >= self.target)
            || self.deadline.is_some_and(|d| now >= d);
        if over {
            // verify: a writing job reads back what it wrote once its writes are over.
            if self.verify.phase || self.start_verify_phase() {
                return self.next_verify_read();
            }
            return None;
        }
        if self.verify_due() {
            if let Some(io) = self.next_verify_read() {
                return Some(io);
            }
        }
        // As fio's fill_io_u: the direction first, then the block size for it.
        let dir = self.next_dir();
        self.flow.dir = Some(dir);
        self.bs_lbas = self.next_bs_lbas(dir);
        let mut io = match (self.spec.zonemode, dir, self.spec.pattern) {
            (ZoneMode::Zbd, Direction::Read, Pattern::Sequential) if self.spec.compressed_io => {
                self.next_dr_seq()
            }
            (ZoneMode::Zbd, Direction::Read, Pattern::Random) if self.spec.compressed_io => {
                self.next_dr_rand()
            }
            (ZoneMode::Zbd, Direction::Write, Pattern::Random) => {
                self.next_zbd_rand_write(dev, now)
            }
            (ZoneMode::Zbd, Direction::Write, _) => self.next_zbd_write(dev, now),
            (ZoneMode::Zbd, Direction::Read, Pattern::Sequential) => self.next_zbd_seq_read(dev),
            (ZoneMode::Zbd, Direction::Read, Pattern::Random) => self.next_zbd_rand_read(dev),
            (ZoneMode::Zbd, Direction::Trim, _) => self.next_zbd_trim(dev),
            (ZoneMode::None | ZoneMode::Strided, _, _) => {
                let lba = match (dir, self.flow.pending_write.take()) {
                    (Direction::Write, Some(lba)) => lba,
                    (Direction::Write, None) if self.spr.is_some() => self.sprandom_lba()?,
                    _ => self.next_plain_lba(),
                };
                if dir == Direction::Trim {
                    self.forget(lba, lba + self.bs_lbas);
                }
                if dir == Direction::Trim && self.spec.mix == Mix::TrimWrite {
                    self.flow.pending_write = Some(lba);
                }
                // num_range: a trim of several ranges, each at its own offset and size
                // (fio's fill_multi_range_io_u).
                if dir == Direction::Trim && self.spec.num_range > 1 {
                    self.flow.more_ranges.clear();
                    let first = self.bs_lbas;
                    for _ in 1..self.spec.num_range {
                        self.bs_lbas = self.next_bs_lbas(dir);
                        let at = self.next_plain_lba();
                        self.forget(at, at + self.bs_lbas);
                        self.issued += self.bs_lbas * self.g.lba_bytes;
                        self.flow.more_ranges.push((at, self.bs_lbas as u32));
                    }
                    self.bs_lbas = first;
                }
                Some(Io {
                    dir,
                    lba,
                    nlb: self.bs_lbas as u32,
                    wait_until: None,
                    cc: None,
                })
            }
        };
        // A job whose writes just ran out reads back what it wrote (verify) before it ends.
        if io.is_none() && (self.verify.phase || self.start_verify_phase()) {
            return self.next_verify_read();
        }
        if let Some(io) = io.as_mut() {
            io.dir = dir;
            let issued = self.issued;
            self.issued += self.bs_lbas * self.g.lba_bytes;
            // rate / rate_iops: the job issues no faster than its rate from its start.
            if self.spec.rate_bytes > 0 {
                let at = if self.spec.rate_poisson {
                    // fio's usec_for_io under rate_process=poisson: exponential gaps whose
                    // mean is one I/O at the rate, -ln(u) for u uniform in (0, 1].
                    let at = self.group_start.saturating_add(self.poisson_next_ns);
                    let mean_ns = self.bs_lbas as f64 * self.g.lba_bytes as f64 * 1e9
                        / self.spec.rate_bytes as f64;
                    let u = (self.rng.below(1 << 53) + 1) as f64 / (1u64 << 53) as f64;
                    // (f64 as u64 saturates: a tiny rate cannot wrap the clock around.)
                    self.poisson_next_ns = self
                        .poisson_next_ns
                        .saturating_add((mean_ns * -u.ln()) as u64);
                    at
                } else {
                    self.group_start
                        + (issued as u128 * 1_000_000_000 / self.spec.rate_bytes as u128) as u64
                };
                if at > now {
                    io.wait_until = Some(io.wait_until.map_or(at, |t| t.max(at)));
                }
            }
            // thinktime: idle after every thinktime_blocks I/Os, counted as they are issued
            // or (fio's default, thinktime_blocks_type=complete) as they complete.
            if self.spec.thinktime_ns > 0 {
                if self.spec.thinktime_on_issue {
                    self.flow.since_think += 1;
                }
                if self.flow.since_think >= self.spec.thinktime_blocks {
                    self.flow.since_think = 0;
                    self.flow.think_until = now + self.spec.thinktime_ns;
                }
                // Every worker of the job waits out a thinktime, as fio's one job thread does.
                let at = self.flow.think_until;
                if at > now {
                    io.wait_until = Some(io.wait_until.map_or(at, |t| t.max(at)));
                }
            }
        }
        io
    }
}

/// Submit a write of `nlb` blocks at `slba` split at the device's maximum transfer
/// (`max_nlb` blocks), as the kernel's block layer does: the parts go out together and the
/// I/O completes with the last (or with the first part that fails).
async fn submit_split<'a>(
    sim: &Sim,
    dev: &DeviceHandle,
    slba: u64,
    nlb: u32,
    max_nlb: u64,
    cmd: impl Fn(u64, u32, usize) -> Command<'a>,
) -> device::Completion {
    let lba_bytes = dev.with(|c| c.identify().lba_bytes) as usize;
    let now = sim.now();
    let mut out: Option<device::Completion> = None;
    let mut done = 0u64;
    while done < nlb as u64 {
        let part = (nlb as u64 - done).min(max_nlb);
        let c = dev.with(|c| {
            c.submit(
                now,
                cmd(slba + done, part as u32, done as usize * lba_bytes),
            )
        });
        done += part;
        let failed = c.status != Status::SUCCESS;
        let later = out.as_ref().is_none_or(|o| c.done_at > o.done_at);
        if out.as_ref().is_none_or(|o| o.status == Status::SUCCESS) && (failed || later) {
            out = Some(c);
        }
        if failed {
            break;
        }
    }
    let c = out.expect("at least one part");
    sim.sleep_until(c.done_at).await;
    c
}

pub(super) async fn worker(
    sim: Sim,
    dev: DeviceHandle,
    state: Rc<RefCell<JobState>>,
    pool: Rc<Vec<u8>>,
    worker: usize,
) {
    let max_nlb = dev
        .with(|c| {
            let id = c.identify();
            id.mdts_bytes / id.lba_bytes
        })
        .max(1);
    let (append, zone_lbas) = {
        let s = state.borrow();
        (s.spec.zone_append, s.g.zone_size_lbas.max(1))
    };
    let (bs_bytes, zbd, lba, ms, chunk, index) = {
        let s = state.borrow();
        (
            (s.bs_lbas * s.g.lba_bytes) as usize,
            s.spec.zonemode == ZoneMode::Zbd,
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
    let mut writes_done = 0u64;
    let mut dedupe = {
        let s = state.borrow();
        (s.spec.dedupe.percentage > 0).then(|| {
            let step = bs_bytes / 4096 + 1;
            // The working set: dedupe_working_set_percentage of the job's bytes, in buffers
            // of the pool's walk, at most the whole pool.
            let ws = (s.target * s.spec.dedupe.working_set_percentage as u64 / 100)
                .div_ceil(bs_bytes.max(1) as u64) as usize;
            DedupeState {
                rng: s.rng.stream(&format!("dedupe.{worker}")),
                percentage: s.spec.dedupe.percentage,
                working_set: s
                    .spec
                    .dedupe
                    .working_set
                    .then_some(ws.clamp(1, pool_slots / step)),
                step,
                start: slot,
                pool_slots,
                last: None,
            }
        })
    };
    let start = state.borrow().group_start;
    sim.sleep_until(sim::SimInstant::from_ns(start)).await;
    loop {
        let stall = state.borrow_mut().flow_stall();
        if let Some(t) = stall {
            sim.sleep_until(sim::SimInstant::from_ns(sim.now().as_ns() + t))
                .await;
            continue;
        }
        let gate = state.borrow_mut().lat_gate(sim.now().as_ns());
        if let Some(n) = gate {
            n.notified().await; // latency_target: the depth's I/Os are in flight
            continue;
        }
        let (io, generation, more_ranges) = {
            let mut s = state.borrow_mut();
            let io = s.next_io(&dev, sim.now().as_ns());
            let generation = io.as_ref().map_or(0, |io| s.zone_generation(io.lba));
            (io, generation, std::mem::take(&mut s.flow.more_ranges))
        };
        let Some(io) = io else {
            state.borrow_mut().job_over();
            break;
        };
        if let Some(t) = io.wait_until {
            // A wait (rate, thinktime) that ends past the runtime ends the job, as fio's
            // runtime check after its rate sleep does: the I/O is not issued.
            let deadline = state.borrow().deadline;
            if deadline.is_some_and(|d| t >= d) {
                if let Some(d) = deadline {
                    sim.sleep_until(sim::SimInstant::from_ns(d)).await;
                }
                state.borrow_mut().job_over();
                break;
            }
            sim.sleep_until(sim::SimInstant::from_ns(t)).await;
        }
        let start = sim.now();
        let direction = io.dir;
        {
            let mut s = state.borrow_mut();
            s.result.submitted(direction, start.as_ns());
            s.lat_submitted();
        }
        let mut written_at = None;
        let mut written_lba = io.lba;
        let mut io_bytes =
            (io.nlb as u64 + more_ranges.iter().map(|r| r.1 as u64).sum::<u64>()) * lba;
        let mut short = false;
        let comp = match (direction, io.cc) {
            // fio's zbd mode makes a trim a zone reset (zbd_do_io_u_trim).
            (Direction::Trim, _) if zbd => {
                let comp = dev
                    .submit(Command::ZoneMgmtSend {
                        slba: io.lba,
                        action: ZoneAction::Reset,
                        select_all: false,
                    })
                    .await;
                if comp.status == Status::SUCCESS {
                    state.borrow_mut().result.zone_resets += 1;
                }
                comp
            }
            (Direction::Trim, _) if more_ranges.is_empty() => {
                dev.submit(Command::Deallocate {
                    slba: io.lba,
                    nlb: io.nlb,
                })
                .await
            }
            (Direction::Trim, _) => {
                // num_range: every range at once; the I/O completes with the last (or the
                // first that fails).
                let now = sim.now();
                let mut out: Option<device::Completion> = None;
                for &(slba, nlb) in std::iter::once(&(io.lba, io.nlb)).chain(&more_ranges) {
                    let c = dev.with(|c| c.submit(now, Command::Deallocate { slba, nlb }));
                    let failed = c.status != Status::SUCCESS;
                    let later = out.as_ref().is_none_or(|o| c.done_at > o.done_at);
                    if out.as_ref().is_none_or(|o| o.status == Status::SUCCESS) && (failed || later)
                    {
                        out = Some(c);
                    }
                    if failed {
                        break;
                    }
                }
                let c = out.expect("at least one range");
                sim.sleep_until(c.done_at).await;
                c
            }
            (Direction::Write, cc) => {
                let at = match dedupe.as_mut().and_then(|d| d.duplicate()) {
                    Some(dup) => dup * 4096,
                    None => {
                        let at = slot * 4096;
                        if let Some(d) = dedupe.as_mut() {
                            d.unique(slot);
                        }
                        slot = (slot + bs_bytes / 4096 + 1) % pool_slots;
                        at
                    }
                };
                written_at = Some(at);
                state
                    .borrow_mut()
                    .write_in_flight(io.lba, io.nlb, &pool, at);
                let data = &pool[at..at + io_bytes as usize];
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
                    _ if append => {
                        let zone = io.lba / zone_lbas * zone_lbas;
                        let c = dev
                            .submit(Command::ZoneAppend {
                                zslba: zone,
                                nlb: io.nlb,
                                data,
                                metadata: &[],
                            })
                            .await;
                        // The device says where the data went.
                        written_lba = c.result;
                        c
                    }
                    _ => {
                        submit_split(&sim, &dev, io.lba, io.nlb, max_nlb, |slba, nlb, off| {
                            Command::Write {
                                slba,
                                nlb,
                                data: &data[off..off + nlb as usize * lba as usize],
                                metadata: &[],
                            }
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
                if io.nlb as u64 <= max_nlb {
                    dev.submit(Command::Read {
                        slba: io.lba,
                        nlb: io.nlb,
                        data: &mut read_buf,
                        metadata: &mut [],
                    })
                    .await
                } else {
                    // Split at the device's maximum transfer, as the kernel's block layer
                    // does: the parts go out together, the I/O completes with the last.
                    let now = sim.now();
                    let mut last = None::<device::Completion>;
                    for (i, part) in read_buf.chunks_mut((max_nlb * lba) as usize).enumerate() {
                        let c = dev.with(|c| {
                            c.submit(
                                now,
                                Command::Read {
                                    slba: io.lba + i as u64 * max_nlb,
                                    nlb: (part.len() as u64 / lba) as u32,
                                    data: part,
                                    metadata: &mut [],
                                },
                            )
                        });
                        let worse = c.status != Status::SUCCESS
                            || last.as_ref().is_none_or(|l| c.done_at > l.done_at);
                        if last.as_ref().is_none_or(|l| l.status == Status::SUCCESS) && worse {
                            last = Some(c);
                        }
                    }
                    let c = last.expect("at least one part");
                    sim.sleep_until(c.done_at).await;
                    c
                }
            }
        };
        let mut s = state.borrow_mut();
        let (now_ns, ok) = (sim.now().as_ns(), comp.status == Status::SUCCESS);
        let counted = ok && now_ns >= s.group_start + s.spec.ramp_time_ns;
        if let Err(e) = s.lat_completed(now_ns - start.as_ns(), now_ns, counted) {
            s.fail(e);
            s.job_over();
            break;
        }
        if comp.status != Status::SUCCESS {
            let what = match (direction, io.cc.is_some()) {
                (Direction::Trim, _) if zbd => "trim (zone reset)",
                (Direction::Trim, _) => "trim",
                (Direction::Write, false) => "write",
                (Direction::Write, true) => "compressed write",
                (Direction::Read, false) => "read",
                (Direction::Read, true) => "decompressed read",
            };
            let msg = format!("{what} at LBA {}: {}", io.lba, comp.status);
            let errno = errors::errno_of(comp.status);
            let etype = errors::error_type(direction, errno);
            // continue_on_error: a non-fatal error is counted and the job goes on.
            if errors::non_fatal(&s.spec.errors, etype, errno) {
                s.result.count_error(errno, msg);
                s.result.errored(direction, sim.now().as_ns());
                continue;
            }
            s.fail_errno(msg, errno);
            s.job_over();
            break;
        }
        if short {
            s.result.dr_short_reads += 1;
        }
        if let Some(at) = written_at {
            s.record_write(written_lba, io.nlb, &pool, at, generation);
            // fsync/fdatasync every N writes: Linux sends a device without a volatile write
            // cache no Flush, so the sync completes at once (1 ns, the histogram's floor).
            writes_done += 1;
            for every in [s.spec.fsync_every, s.spec.fdatasync_every] {
                if every > 0 && writes_done.is_multiple_of(every) {
                    s.result.sync.record(1);
                }
            }
        }
        if direction == Direction::Read && io.cc.is_none() {
            if let Err(e) = s.check_read(io.lba, io.nlb, &read_buf) {
                if errors::non_fatal(&s.spec.errors, errors::ERROR_VERIFY_TYPE, errors::EILSEQ) {
                    s.result.count_error(errors::EILSEQ, e);
                    s.result.errored(direction, sim.now().as_ns());
                    continue;
                }
                s.fail_errno(e, errors::EILSEQ);
                s.job_over();
                break;
            }
        }
        let lat = sim.now().since(start).as_ns();
        // max_latency: fio's lat_fatal, an ETIMEDOUT error (continue_on_error may cover it).
        let max = s.spec.max_latency_ns[direction as usize];
        if max > 0 && lat > max && direction != Direction::Trim {
            let msg = format!(
                "max latency exceeded: latency of {lat} nsec exceeds specified max ({max} nsec) at LBA {}",
                io.lba
            );
            let etype = errors::error_type(direction, errors::ETIMEDOUT);
            if errors::non_fatal(&s.spec.errors, etype, errors::ETIMEDOUT) {
                s.result.count_error(errors::ETIMEDOUT, msg);
                s.result.errored(direction, sim.now().as_ns());
                continue;
            }
            s.fail_errno(msg, errors::ETIMEDOUT);
            s.job_over();
            break;
        }
        s.last_done = s.last_done.max(sim.now().as_ns());
        // ramp_time: I/Os that complete in the job's first ramp_time are not counted.
        if sim.now().as_ns() < s.group_start + s.spec.ramp_time_ns {
            s.result.not_counted(direction, sim.now().as_ns());
            continue;
        }
        if s.spec.thinktime_ns > 0 && !s.spec.thinktime_on_issue {
            s.flow.since_think += 1;
        }
        let job_start = s.stats_start();
        let stats = match direction {
            Direction::Write => &mut s.result.write,
            Direction::Read => &mut s.result.read,
            Direction::Trim => &mut s.result.trim,
        };
        stats.io_bytes += io_bytes;
        stats.ios += 1;
        stats.clat.record(lat);
        stats.completed_at(io_bytes, lat, sim.now().as_ns(), job_start);
    }
}

/// fio's get_buf_state under dedupe_percentage: that share of the writes repeat a buffer
/// (the last unique one, or one of the working set's), the others take the next unique one.
struct DedupeState {
    rng: sim::Rng,
    percentage: u32,
    /// Buffers in the working set (dedupe_mode=working_set).
    working_set: Option<usize>,
    /// Pool slots between a worker's consecutive buffers, the first one, the pool's slots.
    step: usize,
    start: usize,
    pool_slots: usize,
    last: Option<usize>,
}

impl DedupeState {
    /// The pool slot a duplicate write repeats, or None for a unique write.
    fn duplicate(&mut self) -> Option<usize> {
        let v = 1 + self.rng.below(100) as u32;
        if v > self.percentage {
            return None;
        }
        match self.working_set {
            Some(n) => {
                let i = self.rng.below(n as u64) as usize;
                Some((self.start + i * self.step) % self.pool_slots)
            }
            None => self.last,
        }
    }

    fn unique(&mut self, slot: usize) {
        self.last = Some(slot);
    }
}
