//! The controller's capacitor-protected write buffer, and each zone's (or flash region's)
//! progress through it to flash.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use nand::{DieId, Flash};
use sim::SimInstant;

/// Write buffer space: bytes in use and when programs give them back. One part for the whole
/// device, or one part per independent die group (`write_buffer_per_zone_group`), each with
/// its share of the capacity, so one group's writes cannot queue programs far ahead of
/// another's reads.
pub(crate) struct WriteBuffer {
    parts: Vec<Part>,
}

struct Part {
    capacity: u64,
    in_use: u64,
    releases: BinaryHeap<Reverse<(u64, u64)>>,
    /// Admission is first come, first served.
    admit_floor: u64,
}

impl WriteBuffer {
    /// An empty buffer of `capacity` bytes in `parts` equal parts.
    pub(crate) fn new(capacity: u64, parts: u32) -> WriteBuffer {
        let parts = parts.max(1);
        WriteBuffer {
            parts: (0..parts)
                .map(|_| Part {
                    capacity: capacity / parts as u64,
                    in_use: 0,
                    releases: BinaryHeap::new(),
                    admit_floor: 0,
                })
                .collect(),
        }
    }

    pub(crate) fn capacity(&self) -> u64 {
        self.parts.iter().map(|p| p.capacity).sum()
    }

    /// The part serving die group `group` (the only part when the buffer is not split).
    pub(crate) fn part_of(&self, group: u32) -> usize {
        group as usize % self.parts.len()
    }

    /// Earliest time at or after `t` when `bytes` fit in `part`; takes them.
    pub(crate) fn admit(&mut self, part: usize, t: u64, bytes: u64) -> u64 {
        let p = &mut self.parts[part];
        let mut t = t.max(p.admit_floor);
        while let Some(Reverse((rt, b))) = p.releases.peek().copied() {
            let short = p.in_use + bytes > p.capacity;
            if rt > t && !short {
                break;
            }
            p.releases.pop();
            t = t.max(rt);
            p.in_use -= b;
        }
        // Still short with nothing left to release means the buffer holds only partial units
        // that no program will free: let the write through rather than wait forever.
        p.in_use += bytes;
        p.admit_floor = t;
        t
    }

    pub(crate) fn release_at(&mut self, part: usize, t: u64, bytes: u64) {
        if bytes > 0 {
            self.parts[part].releases.push(Reverse((t, bytes)));
        }
    }

    pub(crate) fn discard(&mut self, part: usize, bytes: u64) {
        self.parts[part].in_use -= bytes;
    }

    /// Part `part`, for a zone's programs to give their units back to.
    pub(crate) fn part(&mut self, part: usize) -> BufferPart<'_> {
        BufferPart(self, part)
    }

    /// Bytes taken in `part` without a program to give them back (recovery: partial units).
    pub(crate) fn hold(&mut self, part: usize, bytes: u64) {
        self.parts[part].in_use += bytes;
    }
}

/// One part of the write buffer (see [`WriteBuffer::part`]).
pub(crate) struct BufferPart<'a>(&'a mut WriteBuffer, usize);

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
        buffer: BufferPart<'_>,
        die_of: impl Fn(u64) -> DieId,
    ) {
        while self.issued + unit <= target {
            let off = self.issued;
            let start = ready.max(self.erased_at);
            let done = flash
                .program(die_of(off), unit, SimInstant::from_ns(start))
                .as_ns();
            buffer.0.release_at(buffer.1, done, unit);
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
