//! The issuing loop: which I/O a job gives out next, and the worker tasks (`iodepth` per job)
//! that submit those I/Os on the virtual clock and count their completions.

use std::cell::RefCell;
use std::rc::Rc;

use device::cmd::wire;
use device::{Command, DeviceHandle, Status};
use sim::Sim;

use super::cczns::record_chunks;
use super::{CcIo, Io, JobState};
use crate::fio::options::{Direction, Pattern, ZoneMode};

impl JobState {
    pub(super) fn fail(&mut self, msg: String) -> Option<Io> {
        if self.result.error.is_none() {
            self.result.error = Some(msg);
        }
        self.done = true;
        None
    }
    pub(super) fn next_io(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
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
}

pub(super) async fn worker(
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
        state
            .borrow_mut()
            .result
            .submitted(direction == Direction::Write, start.as_ns());
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
        let job_start = s.group_start;
        let stats = if direction == Direction::Write {
            &mut s.result.write
        } else {
            &mut s.result.read
        };
        stats.io_bytes += io_bytes;
        stats.ios += 1;
        stats.clat.record(lat);
        stats.completed_at(io_bytes, lat, sim.now().as_ns(), job_start);
        s.last_done = s.last_done.max(sim.now().as_ns());
    }
}
