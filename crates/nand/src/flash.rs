//! The flash array: one timeline per die and per channel, and the counters.

use sim::{SimDuration, SimInstant};

use crate::{Geometry, Timeline};

/// A die, numbered channel-major: die `d` sits on channel `d % channels`, way `d / channels`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DieId(pub u32);

/// Flash operation kinds, for counters and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    Erase,
    Copyback,
}

/// What the flash array has done so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlashCounters {
    pub bytes_programmed: u64,
    pub bytes_read: u64,
    pub programs: u64,
    pub reads: u64,
    pub erases: u64,
    pub copybacks: u64,
}

/// The flash array's timing state.
#[derive(Clone, Debug)]
pub struct Flash {
    geometry: Geometry,
    dies: Vec<Timeline>,
    channels: Vec<Timeline>,
    counters: FlashCounters,
    /// Busy time per die in fixed buckets, when asked for ([`Flash::record_busy_series`]).
    series: Option<BusySeries>,
}

/// Each die's busy time in consecutive buckets of `bucket_ns` of virtual time (ZNS+ Fig. 10's
/// chip utilisation, 100 ms buckets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusySeries {
    pub bucket_ns: u64,
    /// `per_die[d][i]`: ns die `d` was busy in `[i * bucket_ns, (i + 1) * bucket_ns)`.
    pub per_die: Vec<Vec<u64>>,
}

impl BusySeries {
    fn add(&mut self, die: usize, start: u64, dur: u64) {
        let b = self.bucket_ns;
        let row = &mut self.per_die[die];
        let (mut t, end) = (start, start.saturating_add(dur));
        while t < end {
            let i = (t / b) as usize;
            let bucket_end = (t / b + 1).saturating_mul(b).min(end);
            if row.len() <= i {
                row.resize(i + 1, 0);
            }
            row[i] += bucket_end - t;
            t = bucket_end;
        }
    }

    /// The mean utilisation over all dies of each bucket, 0-1.
    pub fn mean(&self) -> Vec<f64> {
        let n = self.per_die.iter().map(Vec::len).max().unwrap_or(0);
        let dies = self.per_die.len().max(1) as f64;
        (0..n)
            .map(|i| {
                let busy: u64 = self
                    .per_die
                    .iter()
                    .map(|r| r.get(i).copied().unwrap_or(0))
                    .sum();
                busy as f64 / (dies * self.bucket_ns as f64)
            })
            .collect()
    }
}

impl Flash {
    pub fn new(geometry: Geometry) -> Self {
        Flash {
            dies: vec![Timeline::new(); geometry.dies as usize],
            channels: vec![Timeline::new(); geometry.channels as usize],
            counters: FlashCounters::default(),
            series: None,
            geometry,
        }
    }

    /// Start recording each die's busy time in buckets of `bucket_ns` (off by default: a long
    /// run's series grows with its virtual time).
    pub fn record_busy_series(&mut self, bucket_ns: u64) {
        self.series = Some(BusySeries {
            bucket_ns: bucket_ns.max(1),
            per_die: vec![Vec::new(); self.dies.len()],
        });
    }

    /// The busy series recorded so far, if asked for.
    pub fn busy_series(&self) -> Option<&BusySeries> {
        self.series.as_ref()
    }

    /// Reserve die `d` for `[start, start + dur)`, which goes before its `busy[at]`.
    fn hold_die(&mut self, d: usize, at: usize, start: u64, dur: u64) {
        self.dies[d].reserve_at(at, start, dur);
        if let Some(s) = self.series.as_mut() {
            s.add(d, start, dur);
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    pub fn counters(&self) -> &FlashCounters {
        &self.counters
    }

    pub fn channel_of(&self, die: DieId) -> usize {
        (die.0 % self.geometry.channels) as usize
    }

    /// Drop reservations that ended before `now`.
    pub fn prune(&mut self, now: SimInstant) {
        for t in self.dies.iter_mut().chain(self.channels.iter_mut()) {
            t.prune(now.as_ns());
        }
    }

    /// Read `bytes` (at most one program unit) from `die`: array read, then transfer.
    /// Returns when the data is in the controller.
    pub fn read(&mut self, die: DieId, bytes: u64, ready: SimInstant) -> SimInstant {
        let t_r = self.geometry.read_latency.as_ns();
        let x = self.geometry.transfer_time(bytes).as_ns();
        let ch = self.channel_of(die);
        let d = die.0 as usize;
        let mut t = ready.as_ns();
        let (start, die_at, ch_at) = loop {
            let (s, die_at) = self.dies[d].find(t, t_r + x);
            let (c, ch_at) = self.channels[ch].find(s + t_r, x);
            if c == s + t_r {
                break (s, die_at, ch_at);
            }
            t = c - t_r;
        };
        self.hold_die(d, die_at, start, t_r + x);
        self.channels[ch].reserve_at(ch_at, start + t_r, x);
        self.counters.reads += 1;
        self.counters.bytes_read += bytes;
        SimInstant::from_ns(start + t_r + x)
    }

    /// Program one unit of `bytes` on `die`: transfer, then program. Returns when it is durable.
    pub fn program(&mut self, die: DieId, bytes: u64, ready: SimInstant) -> SimInstant {
        let t_p = self.geometry.program_latency.as_ns();
        let x = self.geometry.transfer_time(bytes).as_ns();
        let ch = self.channel_of(die);
        let d = die.0 as usize;
        let mut t = ready.as_ns();
        let (start, die_at, ch_at) = loop {
            let (s, die_at) = self.dies[d].find(t, x + t_p);
            let (c, ch_at) = self.channels[ch].find(s, x);
            if c == s {
                break (s, die_at, ch_at);
            }
            t = c;
        };
        self.hold_die(d, die_at, start, x + t_p);
        self.channels[ch].reserve_at(ch_at, start, x);
        self.counters.programs += 1;
        self.counters.bytes_programmed += bytes;
        SimInstant::from_ns(start + x + t_p)
    }

    /// Program `units` whole units on `die` back to back (finish padding). The channel is
    /// charged one transfer per unit, each placed right before its program.
    pub fn program_many(&mut self, die: DieId, units: u64, ready: SimInstant) -> SimInstant {
        let mut t = ready;
        for _ in 0..units {
            t = self.program(die, self.geometry.unit_bytes, t);
        }
        t
    }

    /// Erase `count` erase units on `die`, one after another.
    pub fn erase(&mut self, die: DieId, count: u64, ready: SimInstant) -> SimInstant {
        let dur = self
            .geometry
            .erase_latency
            .checked_mul(count)
            .expect("erase time overflow")
            .as_ns();
        let d = die.0 as usize;
        let (start, at) = self.dies[d].find(ready.as_ns(), dur);
        self.hold_die(d, at, start, dur);
        self.counters.erases += count;
        SimInstant::from_ns(start + dur)
    }

    /// Copy one unit inside `die` without crossing the channel (copyback: read then program).
    pub fn copyback(&mut self, die: DieId, ready: SimInstant) -> SimInstant {
        let dur = (self.geometry.read_latency + self.geometry.program_latency).as_ns();
        let d = die.0 as usize;
        let (start, at) = self.dies[d].find(ready.as_ns(), dur);
        self.hold_die(d, at, start, dur);
        self.counters.copybacks += 1;
        self.counters.bytes_programmed += self.geometry.unit_bytes;
        SimInstant::from_ns(start + dur)
    }

    /// Busy time reserved so far on each die.
    pub fn die_busy(&self) -> Vec<SimDuration> {
        self.dies
            .iter()
            .map(|t| SimDuration::from_ns(t.busy_ns()))
            .collect()
    }

    /// Busy time reserved so far on each channel.
    pub fn channel_busy(&self) -> Vec<SimDuration> {
        self.channels
            .iter()
            .map(|t| SimDuration::from_ns(t.busy_ns()))
            .collect()
    }

    /// When the last reservation on `die` ends: at and after it, the die is idle.
    pub fn die_idle_at(&self, die: DieId) -> SimInstant {
        SimInstant::from_ns(self.dies[die.0 as usize].last_end())
    }

    /// When the last reservation on any die ends.
    pub fn idle_at(&self) -> SimInstant {
        SimInstant::from_ns(self.dies.iter().map(|t| t.last_end()).max().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets;

    fn flash() -> Flash {
        Flash::new(presets::cczns_hpca25().validate("nand").expect("valid"))
    }

    #[test]
    fn read_is_array_read_then_transfer() {
        let mut f = flash();
        let g = f.geometry().clone();
        let done = f.read(DieId(0), 4096, SimInstant::ZERO);
        assert_eq!(
            done.as_ns(),
            g.read_latency.as_ns() + g.transfer_time(4096).as_ns()
        );
        // A second read on the same die waits for the first; one on another channel does not.
        let second = f.read(DieId(0), 4096, SimInstant::ZERO);
        assert_eq!(second.as_ns(), 2 * done.as_ns());
        let other = f.read(DieId(1), 4096, SimInstant::ZERO);
        assert_eq!(other, done);
    }

    #[test]
    fn dies_on_one_channel_share_the_bus() {
        let mut f = flash();
        let g = f.geometry().clone();
        let x = g.transfer_time(16384).as_ns();
        // Dies 0 and 8 are both on channel 0: their transfers cannot overlap.
        let a = f.read(DieId(0), 16384, SimInstant::ZERO);
        let b = f.read(DieId(8), 16384, SimInstant::ZERO);
        assert_eq!(b.as_ns(), a.as_ns() + x);
    }

    #[test]
    fn channel_is_not_held_behind_a_busy_die() {
        let mut f = flash();
        let g = f.geometry().clone();
        // Queue three programs on die 0; die 8 (same channel) must still start at once.
        for _ in 0..3 {
            f.program(DieId(0), g.unit_bytes, SimInstant::ZERO);
        }
        let other = f.program(DieId(8), g.unit_bytes, SimInstant::ZERO);
        let x = g.transfer_time(g.unit_bytes).as_ns();
        assert_eq!(other.as_ns(), 2 * x + g.program_latency.as_ns());
        assert_eq!(f.counters().programs, 4);
        assert_eq!(f.counters().bytes_programmed, 4 * g.unit_bytes);
    }

    #[test]
    fn busy_series_buckets_each_dies_time() {
        let mut f = flash();
        f.record_busy_series(1_000_000); // 1 ms buckets
        let g = f.geometry().clone();
        // An erase (5 ms) from t = 0.5 ms fills bucket 0 half and buckets 1-4, half of 5.
        f.erase(DieId(0), 1, SimInstant::from_ns(500_000));
        let s = f.busy_series().expect("on");
        let row = &s.per_die[0];
        assert_eq!(g.erase_latency.as_ns(), 5_000_000);
        assert_eq!(
            row,
            &vec![500_000, 1_000_000, 1_000_000, 1_000_000, 1_000_000, 500_000]
        );
        assert!(s.per_die[1].is_empty());
        let dies = f.geometry().dies as f64;
        assert!((s.mean()[1] - 1.0 / dies).abs() < 1e-12);
    }

    #[test]
    fn erase_and_copyback_hold_only_the_die() {
        let mut f = flash();
        let g = f.geometry().clone();
        let e = f.erase(DieId(0), 2, SimInstant::ZERO);
        assert_eq!(e.as_ns(), 2 * g.erase_latency.as_ns());
        let r = f.read(DieId(8), 4096, SimInstant::ZERO);
        assert_eq!(
            r.as_ns(),
            g.read_latency.as_ns() + g.transfer_time(4096).as_ns()
        );
        let c = f.copyback(DieId(1), SimInstant::ZERO);
        assert_eq!(c.as_ns(), (g.read_latency + g.program_latency).as_ns());
        assert_eq!(f.channel_busy()[1].as_ns(), 0);
        assert_eq!(f.die_busy()[0].as_ns(), 2 * g.erase_latency.as_ns());
    }
}
