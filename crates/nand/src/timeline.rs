//! A resource's reservations in virtual time, with gap filling.

use std::collections::BTreeMap;

/// Non-overlapping busy intervals `[start, end)` of one resource (a die, a channel, a link).
///
/// Requests are placed in the earliest gap that fits at or after the instant they become ready,
/// so an operation that becomes ready early is not queued behind one reserved for later.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    busy: BTreeMap<u64, u64>,
    busy_ns: u64,
}

impl Timeline {
    pub fn new() -> Self {
        Self::default()
    }

    /// Earliest start `>= earliest` at which `[start, start + dur)` is free.
    pub fn fit(&self, earliest: u64, dur: u64) -> u64 {
        let mut t = earliest;
        if let Some((_, &end)) = self.busy.range(..=t).next_back() {
            t = t.max(end);
        }
        for (&s, &e) in self.busy.range(t..) {
            if s >= t + dur {
                break;
            }
            t = t.max(e);
        }
        t
    }

    /// Mark `[start, start + dur)` busy; it must be free (use [`fit`](Self::fit) first).
    pub fn reserve(&mut self, start: u64, dur: u64) {
        if dur == 0 {
            return;
        }
        let mut s = start;
        let mut e = start + dur;
        if let Some((&ps, &pe)) = self.busy.range(..=s).next_back() {
            assert!(pe <= s, "timeline overlap at {s}");
            if pe == s {
                self.busy.remove(&ps);
                s = ps;
            }
        }
        if let Some(&ne) = self.busy.get(&e) {
            self.busy.remove(&e);
            e = ne;
        } else if let Some((&ns, _)) = self.busy.range(start..).next() {
            assert!(ns >= start + dur, "timeline overlap at {ns}");
        }
        self.busy.insert(s, e);
        self.busy_ns += dur;
    }

    /// Forget intervals that ended at or before `now`; they can no longer matter.
    pub fn prune(&mut self, now: u64) {
        while let Some(entry) = self.busy.first_entry() {
            if *entry.get() > now {
                break;
            }
            entry.remove();
        }
    }

    /// Total time ever reserved.
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// When the last reservation ends (0 if none is pending).
    pub fn last_end(&self) -> u64 {
        self.busy.last_key_value().map(|(_, e)| *e).unwrap_or(0)
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
    #[should_panic(expected = "overlap")]
    fn double_booking_is_a_bug() {
        let mut t = Timeline::new();
        t.reserve(10, 10);
        t.reserve(15, 10);
    }
}
