//! The raw-zone workload of `znslab torture` (fio with `zonemode=zbd` on the bare device):
//! three jobs, each on its own zones, write runs of 1-16 blocks at the write pointer, now and
//! then finish or reset a zone. Every block holds a pattern named by its zone, the zone's
//! generation (resets so far) and its index, so whatever reads back after the power cut can
//! be told apart: written in this generation, or not.
//!
//! Checked after power-on: below the write pointer every block holds its pattern; the write
//! pointer is at or past every acknowledged write and not past what was issued; a zone whose
//! Finish or Reset was acknowledged shows it (one in flight may or may not have happened).

use std::cell::RefCell;
use std::rc::Rc;

use device::{Command, Controller, ZoneAction, ZoneState};

use super::kill::{self, Ack};
use host::HostIo;
use sim::{Rng, Sim};

/// Jobs writing at once (fio `numjobs`).
const JOBS: u32 = 3;

/// What the host knows of one zone.
#[derive(Clone, Debug, Default)]
pub struct ZoneLog {
    /// Resets acknowledged.
    generation: u64,
    /// Bytes from the zone start acknowledged written.
    acked_end: u64,
    /// Bytes from the zone start issued (acknowledged or in flight).
    issued_end: u64,
    /// A Finish was acknowledged (this generation).
    finished: bool,
    /// A Finish or Reset issued, not acknowledged.
    finish_in_flight: bool,
    reset_in_flight: bool,
}

impl ZoneLog {
    /// As numbers, for `--kill`'s acknowledgement file.
    pub fn to_words(&self) -> [u64; 6] {
        [
            self.generation,
            self.acked_end,
            self.issued_end,
            self.finished as u64,
            self.finish_in_flight as u64,
            self.reset_in_flight as u64,
        ]
    }

    pub fn from_words(w: [u64; 6]) -> ZoneLog {
        ZoneLog {
            generation: w[0],
            acked_end: w[1],
            issued_end: w[2],
            finished: w[3] != 0,
            finish_in_flight: w[4] != 0,
            reset_in_flight: w[5] != 0,
        }
    }
}

/// The host's log of every zone the jobs use (zone index → log).
pub type RawLog = Rc<RefCell<Vec<ZoneLog>>>;

/// Fill `buf` (whole blocks starting at block `first` of `zone`) with the pattern of
/// `generation`: each 8-byte word from a hash of where it is.
fn pattern(seed: u64, zone: u32, generation: u64, first: u64, buf: &mut [u8]) {
    for (b, block) in buf.chunks_mut(4096).enumerate() {
        let base = splitmix(
            seed ^ (zone as u64) << 40 ^ generation << 20 ^ (first + b as u64).rotate_left(7),
        );
        for (w, word) in block.chunks_mut(8).enumerate() {
            let v = base.wrapping_add(w as u64);
            word.copy_from_slice(&v.to_le_bytes()[..word.len()]);
        }
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Spawn the jobs on `io`; they run until the power is cut. The first error a job meets is
/// put in `failed` (a legal workload never meets one).
pub fn spawn(
    sim: &Sim,
    io: Rc<HostIo>,
    rng: &Rng,
    log: RawLog,
    failed: Rc<RefCell<Option<String>>>,
    ack: Ack,
) {
    let zones = io.zone_count().min(24);
    *log.borrow_mut() = vec![ZoneLog::default(); io.zone_count() as usize];
    let seed = rng.seed();
    for job in 0..JOBS {
        let (io, log, failed, ack) = (io.clone(), log.clone(), failed.clone(), ack.clone());
        let mut rng = rng.stream(&format!("raw.job{job}"));
        let mine: Vec<u32> = (job..zones).step_by(JOBS as usize).collect();
        sim.spawn(async move {
            if let Err(e) = job_loop(&io, &mut rng, seed, &mine, &log, &ack).await {
                failed
                    .borrow_mut()
                    .get_or_insert(format!("raw job {job}: {e}"));
            }
        });
    }
}

async fn job_loop(
    io: &HostIo,
    rng: &mut Rng,
    seed: u64,
    mine: &[u32],
    log: &RawLog,
    ack: &Ack,
) -> Result<(), String> {
    // `--kill`'s child logs a zone's state after each change, before going on.
    let logged = |z: usize| kill::log_zone(ack, z, &log.borrow()[z]);
    let lba = io.lba_bytes();
    let cap = io.zone_capacity_bytes();
    let mut buf = Vec::new();
    let mut at = 0usize; // which of `mine` is being written
    loop {
        let zone = mine[at];
        let z = zone as usize;
        let start = zone as u64 * io.zone_bytes();
        let (generation, end, full) = {
            let l = &log.borrow()[z];
            (l.generation, l.acked_end, l.finished || l.acked_end == cap)
        };
        if full {
            // On to the next zone; reset it first when it has been used.
            at = (at + 1) % mine.len();
            let next = mine[at] as usize;
            let used = log.borrow()[next].acked_end > 0 || log.borrow()[next].finished;
            if used {
                log.borrow_mut()[next].reset_in_flight = true;
                logged(next)?;
                io.zone_action(next as u32, ZoneAction::Reset)
                    .await
                    .map_err(|e| e.to_string())?;
                {
                    let mut l = log.borrow_mut();
                    let g = l[next].generation + 1;
                    l[next] = ZoneLog {
                        generation: g,
                        ..ZoneLog::default()
                    };
                }
                logged(next)?;
            }
            continue;
        }
        match rng.below(50) {
            0 => {
                log.borrow_mut()[z].finish_in_flight = true;
                logged(z)?;
                io.zone_action(zone, ZoneAction::Finish)
                    .await
                    .map_err(|e| e.to_string())?;
                {
                    let mut l = log.borrow_mut();
                    l[z].finish_in_flight = false;
                    l[z].finished = true;
                }
                logged(z)?;
            }
            1 if end > 0 => {
                log.borrow_mut()[z].reset_in_flight = true;
                logged(z)?;
                io.zone_action(zone, ZoneAction::Reset)
                    .await
                    .map_err(|e| e.to_string())?;
                log.borrow_mut()[z] = ZoneLog {
                    generation: generation + 1,
                    ..ZoneLog::default()
                };
                logged(z)?;
            }
            _ => {
                let blocks = (1 + rng.below(16)).min((cap - end) / lba);
                buf.resize((blocks * lba) as usize, 0);
                pattern(seed, zone, generation, end / lba, &mut buf);
                log.borrow_mut()[z].issued_end = end + blocks * lba;
                logged(z)?;
                io.write(start + end, &buf)
                    .await
                    .map_err(|e| e.to_string())?;
                log.borrow_mut()[z].acked_end = end + blocks * lba;
                logged(z)?;
            }
        }
    }
}

/// After power-on: every zone the jobs used against the host's log. Returns the blocks
/// checked.
pub fn check(ctl: &mut Controller, seed: u64, log: &[ZoneLog]) -> Result<u64, String> {
    let lay = ctl.layout().clone();
    let lba = lay.lba_bytes;
    let cap = lay.zone_capacity_lbas * lba;
    let mut checked = 0;
    let mut want = Vec::new();
    let mut got = Vec::new();
    for (zi, l) in log.iter().enumerate() {
        let z = ctl.zone(zi as u32);
        let start = zi as u64 * lay.zone_size_lbas;
        let wp = match z.state {
            ZoneState::Full => cap,
            _ => (z.wp - start) * lba,
        };
        let reset_happened = l.reset_in_flight && z.state == ZoneState::Empty;
        let what = || {
            format!(
                "zone {zi} ({:?}, write pointer at byte {wp}): {l:?}",
                z.state
            )
        };
        if reset_happened {
            continue;
        }
        if l.finished && z.state != ZoneState::Full {
            return Err(format!("{}: its Finish was acknowledged", what()));
        }
        if z.state == ZoneState::Full {
            if !(l.finished || l.finish_in_flight || l.issued_end == cap) {
                return Err(format!(
                    "{}: full, but nobody filled or finished it",
                    what()
                ));
            }
        } else if wp < l.acked_end || wp > l.issued_end {
            return Err(format!(
                "{}: the write pointer is not between the acknowledged and the issued end",
                what()
            ));
        }
        // The data below the write pointer (up to what was written): this generation's.
        let written = wp.min(l.issued_end);
        want.resize(written as usize, 0);
        got.resize(written as usize, 0);
        pattern(seed, zi as u32, l.generation, 0, &mut want);
        let mut meta = vec![0u8; 16 * lay.metadata_bytes as usize];
        for (p, piece) in got.chunks_mut(16 * lba as usize).enumerate() {
            let slba = start + p as u64 * 16;
            let nlb = piece.len() as u64 / lba;
            let c = ctl.submit(
                sim::SimInstant::ZERO,
                Command::Read {
                    slba,
                    nlb: nlb as u32,
                    data: piece,
                    metadata: &mut meta[..(nlb * lay.metadata_bytes) as usize],
                },
            );
            if !c.status.is_success() {
                return Err(format!("{}: reading LBA {slba} back: {}", what(), c.status));
            }
        }
        if let Some(i) = (0..written as usize).find(|&i| want[i] != got[i]) {
            return Err(format!(
                "{}: byte {i} reads {:#04x}, written {:#04x} (block {} of generation {})",
                what(),
                got[i],
                want[i],
                i as u64 / lba,
                l.generation
            ));
        }
        checked += written / lba;
    }
    Ok(checked)
}
