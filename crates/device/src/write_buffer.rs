//! The controller's capacitor-protected write buffer, and each zone's (or flash region's)
//! progress through it to flash.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use nand::{DieId, Flash};
use sim::SimInstant;

/// Write buffer space: bytes in use and when programs give them back.
pub(crate) struct WriteBuffer {
    pub(crate) capacity: u64,
    pub(crate) in_use: u64,
    releases: BinaryHeap<Reverse<(u64, u64)>>,
    /// Admission is first come, first served.
    admit_floor: u64,
}

impl WriteBuffer {
    /// An empty buffer of `capacity` bytes.
    pub(crate) fn new(capacity: u64) -> WriteBuffer {
        WriteBuffer {
            capacity,
            in_use: 0,
            releases: BinaryHeap::new(),
            admit_floor: 0,
        }
    }
}

impl WriteBuffer {
    /// Earliest time at or after `t` when `bytes` fit; takes them.
    pub(crate) fn admit(&mut self, t: u64, bytes: u64) -> u64 {
        let mut t = t.max(self.admit_floor);
        while let Some(Reverse((rt, b))) = self.releases.peek().copied() {
            let short = self.in_use + bytes > self.capacity;
            if rt > t && !short {
                break;
            }
            self.releases.pop();
            t = t.max(rt);
            self.in_use -= b;
        }
        // Still short with nothing left to release means the buffer holds only partial units
        // that no program will free: let the write through rather than wait forever.
        self.in_use += bytes;
        self.admit_floor = t;
        t
    }

    pub(crate) fn release_at(&mut self, t: u64, bytes: u64) {
        if bytes > 0 {
            self.releases.push(Reverse((t, bytes)));
        }
    }

    pub(crate) fn discard(&mut self, bytes: u64) {
        self.in_use -= bytes;
    }
}

/// Per zone: how much of it has gone to flash, and which programs are still running.
#[derive(Default, Clone, Debug)]
pub(crate) struct ZoneFlash {
    /// Bytes from the zone start handed to flash (a multiple of the program unit).
    pub issued: u64,
    /// (end offset of a unit, program completion in ns), in offset order.
    pub pending: VecDeque<(u64, u64)>,
    /// When the zone's last program or erase completes.
    pub busy_until: u64,
    /// When the zone's last erase completes; its programs may not start before.
    pub erased_at: u64,
}

impl ZoneFlash {
    /// Hand every `unit` below byte `target` not yet issued to flash, data ready at `ready`:
    /// each program on the die `die_of(offset)` names, its buffer space given back when it
    /// completes. Zones, Balloon-ZNS segments and TCSSD superblocks all fill this way.
    pub(crate) fn program_up_to(
        &mut self,
        target: u64,
        unit: u64,
        ready: u64,
        flash: &mut Flash,
        buffer: &mut WriteBuffer,
        die_of: impl Fn(u64) -> DieId,
    ) {
        while self.issued + unit <= target {
            let off = self.issued;
            let start = ready.max(self.erased_at);
            let done = flash
                .program(die_of(off), unit, SimInstant::from_ns(start))
                .as_ns();
            buffer.release_at(done, unit);
            self.pending.push_back((off + unit, done));
            self.busy_until = self.busy_until.max(done);
            self.issued = off + unit;
        }
    }

    /// Is byte `offset` still held in the write buffer at time `t` (not issued to flash, or its
    /// program of a `unit`-byte unit not done)?
    pub(crate) fn holds(&mut self, offset: u64, t: u64, unit: u64) -> bool {
        while let Some(&(_, done)) = self.pending.front() {
            if done > t {
                break;
            }
            self.pending.pop_front();
        }
        if offset >= self.issued {
            return true;
        }
        let i = self.pending.partition_point(|&(end, _)| end <= offset);
        self.pending
            .get(i)
            .is_some_and(|&(end, done)| end - unit <= offset && done > t)
    }
}
