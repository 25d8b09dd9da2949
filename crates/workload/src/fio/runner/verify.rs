//! Data verification (fio's `verify=`): the run keeps, for every block a job with `verify`
//! wrote, the bytes it wrote (its data pool and the place in it); reads of such a block are
//! compared with them byte for byte. A writing job verifies what it wrote after its writes
//! (`do_verify`), or every `verify_backlog` writes; a reading job with `verify` checks what it
//! reads. Zone resets forget the blocks of the zone. Also the run's state shared by its jobs.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use super::zones::ZbdShared;
use super::{Io, JobState};
use crate::fio::options::Direction;

/// A block a verifying job wrote: the pool its bytes came from, where in it, and its length
/// in LBAs.
pub(super) struct Written {
    pool: Rc<Vec<u8>>,
    at: usize,
    nlb: u32,
}

/// What the jobs of a run share: zonemode=zbd's write zones, the blocks written to verify,
/// the flows (`flow_id`: I/Os counted and the weights of the running jobs), and the groups
/// an `exitall` job has ended.
#[derive(Default)]
pub(super) struct Shared {
    pub(super) zbd: ZbdShared,
    written: BTreeMap<u64, Written>,
    /// verify_write_sequence=0: the writes to a block before its last (at most
    /// [`EARLIER_WRITES`]), any of which a read may find there.
    earlier: BTreeMap<u64, VecDeque<Written>>,
    pub(super) flows: BTreeMap<u32, (u64, u64)>,
    pub(super) exit_groups: Vec<u32>,
    /// Resets of each zone so far: a write that completes after a reset of its zone (issued
    /// before it) is not what the zone holds.
    zone_resets: BTreeMap<u64, u64>,
}

pub(super) type SharedRun = Rc<RefCell<Shared>>;

/// Earlier writes to a block kept for verify_write_sequence=0.
const EARLIER_WRITES: usize = 8;

/// A job's verification progress.
#[derive(Default)]
pub(super) struct VerifyState {
    /// Blocks (start LBAs) written and not yet verified, in the order written.
    queue: VecDeque<u64>,
    /// The job is past its writes, reading back what it wrote.
    pub(super) phase: bool,
}

impl JobState {
    /// Resets so far of the zone holding `lba` (0 without zones).
    pub(super) fn zone_generation(&self, lba: u64) -> u64 {
        match self.g.zone_size_lbas {
            0 => 0,
            z => *self
                .shared
                .borrow()
                .zone_resets
                .get(&(lba / z))
                .unwrap_or(&0),
        }
    }

    /// A zone was reset (or trimmed whole in zbd mode): forget what it held.
    pub(super) fn zone_was_reset(&mut self, zone: u64) {
        let z = self.g.zone_size_lbas;
        *self
            .shared
            .borrow_mut()
            .zone_resets
            .entry(zone)
            .or_default() += 1;
        self.forget(zone * z, (zone + 1) * z);
    }

    /// Record a completed write of a verifying job, issued when its zone had had
    /// `generation` resets.
    pub(super) fn record_write(
        &mut self,
        lba: u64,
        nlb: u32,
        pool: &Rc<Vec<u8>>,
        at: usize,
        generation: u64,
    ) {
        if !self.spec.verify || self.zone_generation(lba) != generation {
            return;
        }
        let w = Written {
            pool: pool.clone(),
            at,
            nlb,
        };
        let mut sh = self.shared.borrow_mut();
        if let Some(old) = sh.written.insert(lba, w) {
            if !self.spec.verify_write_sequence {
                let e = sh.earlier.entry(lba).or_default();
                if e.len() == EARLIER_WRITES {
                    e.pop_front();
                }
                e.push_back(old);
            }
        }
        drop(sh);
        if self.spec.do_verify {
            self.verify.queue.push_back(lba);
        }
    }

    /// verify_write_sequence=0: a write is on its way to `lba`; a read racing it may find its
    /// bytes there before it completes (fio: any self-consistent block passes).
    pub(super) fn write_in_flight(&mut self, lba: u64, nlb: u32, pool: &Rc<Vec<u8>>, at: usize) {
        if !self.spec.verify || self.spec.verify_write_sequence {
            return;
        }
        let e = self.shared.borrow_mut();
        let mut e = std::cell::RefMut::map(e, |s| s.earlier.entry(lba).or_default());
        if e.len() == EARLIER_WRITES {
            e.pop_front();
        }
        e.push_back(Written {
            pool: pool.clone(),
            at,
            nlb,
        });
    }

    /// Forget the blocks of LBAs `[from, to)` (a zone reset or a trim).
    pub(super) fn forget(&mut self, from: u64, to: u64) {
        let mut s = self.shared.borrow_mut();
        if s.written.is_empty() {
            return;
        }
        let keys: Vec<u64> = s.written.range(from..to).map(|(k, _)| *k).collect();
        for k in keys {
            s.written.remove(&k);
            s.earlier.remove(&k);
        }
    }

    /// The next verify read: of the oldest block written and not yet verified (still there).
    pub(super) fn next_verify_read(&mut self) -> Option<Io> {
        while let Some(lba) = self.verify.queue.pop_front() {
            let nlb = self.shared.borrow().written.get(&lba).map(|w| w.nlb);
            if let Some(nlb) = nlb {
                return Some(Io {
                    dir: Direction::Read,
                    lba,
                    nlb,
                    wait_until: None,
                    cc: None,
                });
            }
        }
        None
    }

    /// Verify reads are due now: past the writes, or `verify_backlog` writes wait.
    pub(super) fn verify_due(&self) -> bool {
        self.spec.verify
            && self.spec.do_verify
            && (self.verify.phase
                || (self.spec.verify_backlog > 0
                    && self.verify.queue.len() as u64 >= self.spec.verify_backlog))
    }

    /// Start the verify phase of a writing job whose writes are over; true when it has
    /// blocks to read back.
    pub(super) fn start_verify_phase(&mut self) -> bool {
        if !self.spec.verify
            || !self.spec.do_verify
            || !self.spec.writes()
            || self.verify.phase
            || self.result.error.is_some()
        {
            return false;
        }
        self.verify.phase = true;
        self.done = false;
        !self.verify.queue.is_empty()
    }

    /// Check the bytes read at `lba` against those written there; the error names the block.
    pub(super) fn check_read(&self, lba: u64, nlb: u32, data: &[u8]) -> Result<(), String> {
        if !(self.spec.verify && self.spec.do_verify) {
            return Ok(());
        }
        let s = self.shared.borrow();
        let Some(w) = s.written.get(&lba).filter(|w| w.nlb == nlb) else {
            return Ok(());
        };
        let len = (w.nlb as u64 * self.g.lba_bytes) as usize;
        let holds = |w: &Written| data.len() >= len && data[..len] == w.pool[w.at..w.at + len];
        let earlier = || {
            s.earlier
                .get(&lba)
                .is_some_and(|e| e.iter().any(|w| w.nlb == nlb && holds(w)))
        };
        let passes = holds(w) || (!self.spec.verify_write_sequence && earlier());
        if !passes {
            let first = data
                .iter()
                .zip(&w.pool[w.at..w.at + len])
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(format!(
                "verify ({}): the {len} bytes read at LBA {lba} differ from those written \
                 (first at byte {first})",
                self.spec.verify_method
            ));
        }
        Ok(())
    }
}
