//! A resource's reservations in virtual time, with gap filling.

/// Non-overlapping busy intervals `[start, end)` of one resource (a die, a channel, a link).
///
/// Requests are placed in the earliest gap that fits at or after the instant they become ready,
/// so an operation that becomes ready early is not queued behind one reserved for later.
/// Intervals live in a sorted `Vec`; those that ended are dropped from the front by `prune`.
/// Few are live at once (about one per outstanding operation), so this beats a tree.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    busy: Vec<(u64, u64)>,
    /// Index of the first interval not pruned yet.
    head: usize,
    busy_ns: u64,
}

impl Timeline {
    pub fn new() -> Self {
        Self::default()
    }

    fn live(&self) -> &[(u64, u64)] {
        &self.busy[self.head..]
    }

    /// Earliest start `>= earliest` at which `[start, start + dur)` is free.
    pub fn fit(&self, earliest: u64, dur: u64) -> u64 {
        self.find(earliest, dur).0
    }

    /// Reserve the earliest free `[start, start + dur)` with `start >= earliest`; returns
    /// `start` (one search for what `fit` then `reserve` would do).
    pub fn take(&mut self, earliest: u64, dur: u64) -> u64 {
        let (start, at) = self.find(earliest, dur);
        self.reserve_at(at, start, dur);
        start
    }

    /// Where the earliest fit starts and the index of `busy` it goes before.
    pub fn find(&self, earliest: u64, dur: u64) -> (u64, usize) {
        let live = self.live();
        // Intervals are disjoint and sorted, so their ends are sorted too.
        let first = live.partition_point(|&(_, e)| e <= earliest);
        let mut t = earliest;
        let mut at = live.len();
        for (i, &(s, e)) in live[first..].iter().enumerate() {
            if s >= t + dur {
                at = first + i;
                break;
            }
            t = t.max(e);
        }
        (t, self.head + at)
    }

    /// Mark `[start, start + dur)` busy; it must be free (use [`fit`](Self::fit) first).
    pub fn reserve(&mut self, start: u64, dur: u64) {
        let at = self.head + self.live().partition_point(|&(s, _)| s < start);
        self.reserve_at(at, start, dur);
    }

    /// [`reserve`](Self::reserve) where the interval goes before `busy[at]` (from [`find`]).
    pub fn reserve_at(&mut self, at: usize, start: u64, dur: u64) {
        if dur == 0 {
            return;
        }
        let end = start + dur;
        let i = at;
        let merge_prev = i > self.head && {
            let pe = self.busy[i - 1].1;
            assert!(pe <= start, "timeline overlap at {start}");
            pe == start
        };
        let merge_next = i < self.busy.len() && {
            let ns = self.busy[i].0;
            assert!(ns >= end, "timeline overlap at {ns}");
            ns == end
        };
        match (merge_prev, merge_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
        self.busy_ns += dur;
    }

    /// Forget intervals that ended at or before `now`; they can no longer matter.
    pub fn prune(&mut self, now: u64) {
        self.head += self.live().partition_point(|&(_, e)| e <= now);
        if self.head > 64 && self.head * 2 > self.busy.len() {
            self.busy.drain(..self.head);
            self.head = 0;
        }
    }

    /// Total time ever reserved.
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// When the last reservation ends (0 if none is pending).
    pub fn last_end(&self) -> u64 {
        self.live().last().map(|(_, e)| *e).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_gaps_and_merges_neighbours() {
        let mut t = Timeline::new();
        t.reserve(100, 50); // [100,150)
        assert_eq!(t.fit(0, 100), 0);
        assert_eq!(t.fit(0, 101), 150);
        assert_eq!(t.fit(120, 10), 150);
        t.reserve(0, 100); // merges with [100,150)
        t.reserve(300, 10);
        assert_eq!(t.fit(0, 151), 310);
        assert_eq!(t.fit(0, 150), 150);
        assert_eq!(t.busy_ns(), 160);
        t.prune(160);
        assert_eq!(t.fit(0, 1), 0);
        assert_eq!(t.last_end(), 310);
    }

    #[test]
    fn take_places_as_fit_then_reserve() {
        let (mut a, mut b) = (Timeline::new(), Timeline::new());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut now = 0;
        for i in 0..20_000 {
            let (earliest, dur) = (now + next(500), next(60));
            let s = a.fit(earliest, dur);
            a.reserve(s, dur);
            assert_eq!(b.take(earliest, dur), s, "step {i}");
            if i % 64 == 0 {
                now += next(200);
                a.prune(now);
                b.prune(now);
            }
        }
        assert_eq!(a.live(), b.live());
        assert_eq!(a.busy_ns(), b.busy_ns());
    }

    #[test]
    #[should_panic(expected = "overlap")]
    fn double_booking_is_a_bug() {
        let mut t = Timeline::new();
        t.reserve(10, 10);
        t.reserve(15, 10);
    }
}
