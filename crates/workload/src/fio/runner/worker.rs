//! The worker tasks (`iodepth` per job): each takes the job's next I/O, submits it on the
//! virtual clock (split at the device's maximum transfer, several trim ranges at once, zone
//! append, CCZNS compressed commands), and counts its completion, or its error under
//! continue_on_error.

use std::cell::RefCell;
use std::rc::Rc;

use device::cmd::wire;
use device::{Command, Completion, DeviceHandle, Status, ZoneAction};
use sim::Sim;

use super::cczns::record_chunks;
use super::errors;
use super::{CcIo, JobState};
use crate::fio::options::{Direction, ZoneMode};

/// Of commands sent together, the one the I/O completes with: the first that fails, else the
/// last to finish. Returns whether `c` failed.
fn keep_deciding(out: &mut Option<Completion>, c: Completion) -> bool {
    let failed = c.status != Status::SUCCESS;
    let later = out.as_ref().is_none_or(|o| c.done_at > o.done_at);
    if out.as_ref().is_none_or(|o| o.status == Status::SUCCESS) && (failed || later) {
        *out = Some(c);
    }
    failed
}

impl JobState {
    /// An I/O of direction `dir` failed with `errno` at `now`: under continue_on_error (fio's
    /// td_non_fatal_error) it is counted and the job goes on (true); otherwise the job fails.
    fn io_failed(&mut self, dir: Direction, errno: i32, msg: String, now: u64) -> bool {
        if errors::non_fatal(&self.spec.errors, errors::error_type(dir, errno), errno) {
            self.result.count_error(errno, msg);
            self.result.errored(dir, now);
            return true;
        }
        self.fail_errno(msg, errno);
        self.job_over();
        false
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
        if keep_deciding(&mut out, c) {
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
    // Only verify looks at what a read returns; without it the device need not copy the
    // bytes (fio's buffers are never read either).
    let keep_bytes = {
        let s = state.borrow();
        s.spec.verify && s.spec.do_verify
    };
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
                    if keep_deciding(&mut out, c) {
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
                    dev.submit(read_command(io.lba, io.nlb, &mut read_buf, keep_bytes))
                        .await
                } else {
                    // Split at the device's maximum transfer, as the kernel's block layer
                    // does: the parts go out together, the I/O completes with the last.
                    let now = sim.now();
                    let mut last = None::<Completion>;
                    for (i, part) in read_buf.chunks_mut((max_nlb * lba) as usize).enumerate() {
                        let c = dev.with(|c| {
                            c.submit(
                                now,
                                read_command(
                                    io.lba + i as u64 * max_nlb,
                                    (part.len() as u64 / lba) as u32,
                                    part,
                                    keep_bytes,
                                ),
                            )
                        });
                        keep_deciding(&mut last, c);
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
            if s.io_failed(
                direction,
                errors::errno_of(comp.status),
                msg,
                sim.now().as_ns(),
            ) {
                continue;
            }
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
                // A block unlike what was written: EILSEQ, a verify error.
                if s.io_failed(direction, errors::EILSEQ, e, sim.now().as_ns()) {
                    continue;
                }
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
            if s.io_failed(direction, errors::ETIMEDOUT, msg, sim.now().as_ns()) {
                continue;
            }
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

/// A Read of `nlb` blocks at `slba` into `data`; a Read Discard when the bytes are not looked at.
fn read_command(slba: u64, nlb: u32, data: &mut [u8], keep_bytes: bool) -> Command<'_> {
    if keep_bytes {
        Command::Read {
            slba,
            nlb,
            data,
            metadata: &mut [],
        }
    } else {
        Command::ReadDiscard { slba, nlb, data }
    }
}
