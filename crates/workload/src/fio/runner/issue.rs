//! The issuing loop: which I/O a job gives out next, and the worker tasks (`iodepth` per job)
//! that submit those I/Os on the virtual clock and count their completions.

use std::cell::RefCell;
use std::rc::Rc;

use device::cmd::wire;
use device::{Command, DeviceHandle, Status, ZoneAction};
use sim::Sim;

use super::cczns::record_chunks;
use super::{CcIo, Io, JobState};
use crate::fio::options::{Direction, Mix, Pattern, ZoneMode};

/// Per-job state of the choices made I/O by I/O: the job's index in the run, the random
/// run of `rw=rand...:N`, the block a trimwrite trimmed and writes next, and the I/Os since
/// the last thinktime.
#[derive(Default)]
pub(super) struct Flow {
    pub(super) job: usize,
    pub(super) run_left: u64,
    pub(super) pending_write: Option<u64>,
    pub(super) since_think: u64,
}

impl JobState {
    pub(super) fn fail(&mut self, msg: String) -> Option<Io> {
        if self.result.error.is_none() {
            self.result.error = Some(msg);
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
                if self.flow.run_left > 0 && self.pos + bs <= self.end {
                    self.flow.run_left -= 1;
                } else {
                    let slots = (self.end - self.start) / bs;
                    self.pos = self.start + self.rng.below(slots) * bs;
                    self.flow.run_left = self.spec.rw_modifier.unwrap_or(1).max(1) as u64 - 1;
                }
                let lba = self.pos;
                self.pos += bs;
                lba
            }
        }
    }

    pub(super) fn next_io(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
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
        let dir = self.next_dir();
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
            (ZoneMode::None, _, _) => {
                let lba = match (dir, self.flow.pending_write.take()) {
                    (Direction::Write, Some(lba)) => lba,
                    _ => self.next_plain_lba(),
                };
                if dir == Direction::Trim {
                    self.forget(lba, lba + self.bs_lbas);
                }
                if dir == Direction::Trim && self.spec.mix == Mix::TrimWrite {
                    self.flow.pending_write = Some(lba);
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
        if let Some(io) = io.as_mut() {
            io.dir = dir;
            let issued = self.issued;
            self.issued += self.bs_lbas * self.g.lba_bytes;
            // rate / rate_iops: the job issues no faster than its rate from its start.
            if self.spec.rate_bytes > 0 {
                let at = self.group_start
                    + (issued as u128 * 1_000_000_000 / self.spec.rate_bytes as u128) as u64;
                if at > now {
                    io.wait_until = Some(io.wait_until.map_or(at, |t| t.max(at)));
                }
            }
            // thinktime: idle after every thinktime_blocks I/Os.
            if self.spec.thinktime_ns > 0 {
                self.flow.since_think += 1;
                if self.flow.since_think >= self.spec.thinktime_blocks {
                    self.flow.since_think = 0;
                    let at = now + self.spec.thinktime_ns;
                    io.wait_until = Some(io.wait_until.map_or(at, |t| t.max(at)));
                }
            }
        }
        io
    }
}

pub(super) async fn worker(
    sim: Sim,
    dev: DeviceHandle,
    state: Rc<RefCell<JobState>>,
    pool: Rc<Vec<u8>>,
    worker: usize,
) {
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
        let direction = io.dir;
        let mut written_at = None;
        let mut io_bytes = bs_bytes as u64;
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
            (Direction::Trim, _) => {
                dev.submit(Command::Deallocate {
                    slba: io.lba,
                    nlb: io.nlb,
                })
                .await
            }
            (Direction::Write, cc) => {
                let at = slot * 4096;
                slot = (slot + bs_bytes / 4096 + 1) % pool_slots;
                written_at = Some(at);
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
                (Direction::Trim, _) if zbd => "trim (zone reset)",
                (Direction::Trim, _) => "trim",
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
        if let Some(at) = written_at {
            s.record_write(io.lba, io.nlb, &pool, at);
        }
        if direction == Direction::Read && io.cc.is_none() {
            if let Err(e) = s.check_read(io.lba, &read_buf) {
                s.fail(e);
                break;
            }
        }
        let lat = sim.now().since(start).as_ns();
        s.last_done = s.last_done.max(sim.now().as_ns());
        // ramp_time: I/Os that complete in the job's first ramp_time are not counted.
        if sim.now().as_ns() < s.group_start + s.spec.ramp_time_ns {
            continue;
        }
        let stats = match direction {
            Direction::Write => &mut s.result.write,
            Direction::Read => &mut s.result.read,
            Direction::Trim => &mut s.result.trim,
        };
        stats.io_bytes += io_bytes;
        stats.ios += 1;
        stats.clat.record(lat);
    }
}
