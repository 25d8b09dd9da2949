//! Which I/O a job gives out next: direction, block size, offset (plain, strided, zoned via
//! `zones.rs`), and the waits for rate, thinktime and flow. The tasks that submit them are in
//! `worker.rs`.

use device::DeviceHandle;

use super::distribution::Sampler;
use super::errors;
use super::{Io, JobState};
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
