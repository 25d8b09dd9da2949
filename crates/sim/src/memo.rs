//! A memory of byte strings within a byte budget: what the emulator keeps only so as not to
//! redo real work it already did (decompressing a chunk or a block again). Speed only: whoever
//! uses it must charge virtual time as if it were not there.
//!
//! Entries leave in the order they came, except that one read since it was last passed over
//! gets a second chance (CLOCK): a scan's skewed re-reads keep their hot chunks when the budget
//! is smaller than what the scans touch, where plain first-in, first-out lost them.
//!
//! An ordered map, not a hashed one: nothing below the CLI leaves an order to chance.

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

pub struct ByteMemo<K> {
    budget: usize,
    used: usize,
    /// The bytes, and whether they were read since the clock hand last passed them.
    map: BTreeMap<K, (Rc<[u8]>, Cell<bool>)>,
    /// Keys in the order they came (or were given their second chance); the first leaves
    /// first when the budget is spent, unless it was read meanwhile.
    order: VecDeque<K>,
}

impl<K: Ord + Clone> ByteMemo<K> {
    pub fn new(budget: usize) -> ByteMemo<K> {
        ByteMemo {
            budget,
            used: 0,
            map: BTreeMap::new(),
            order: VecDeque::new(),
        }
    }

    pub fn get(&self, key: &K) -> Option<&Rc<[u8]>> {
        self.map.get(key).map(|(b, read)| {
            read.set(true);
            b
        })
    }

    pub fn contains(&self, key: &K) -> bool {
        self.map.contains_key(key)
    }

    /// Remember `bytes` under `key` (replacing what it held), making room by forgetting the
    /// oldest. Something larger than the whole budget is not kept.
    pub fn insert(&mut self, key: K, bytes: &[u8]) {
        if bytes.len() > self.budget {
            return;
        }
        // A key replaced keeps its place in the queue (unless making room takes it).
        let mut queued = match self.map.remove(&key) {
            Some((b, _)) => {
                self.used -= b.len();
                true
            }
            None => false,
        };
        while self.used + bytes.len() > self.budget {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if old == key {
                queued = false;
                continue;
            }
            if self
                .map
                .get(&old)
                .is_some_and(|(_, read)| read.replace(false))
            {
                // Read since the hand last passed: a second chance at the back. Bits are
                // cleared as the hand goes, so a full turn finds one to evict.
                self.order.push_back(old);
            } else if let Some((b, _)) = self.map.remove(&old) {
                self.used -= b.len();
            }
        }
        self.map
            .insert(key.clone(), (bytes.into(), Cell::new(false)));
        if !queued {
            self.order.push_back(key);
        }
        self.used += bytes.len();
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
        self.used = 0;
    }

    /// Bytes remembered now.
    pub fn used(&self) -> usize {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_leave_first_within_the_budget() {
        let mut m = ByteMemo::new(10);
        m.insert(1, b"abcd");
        m.insert(2, b"efgh");
        assert_eq!(m.get(&1).map(|b| &b[..]), Some(&b"abcd"[..]));
        m.insert(1, b"ABCD"); // replaced in place: still the oldest, same bytes used
        assert_eq!(m.used(), 8);
        m.insert(3, b"ijkl"); // 12 > 10: key 1 goes
        assert!(!m.contains(&1));
        assert!(m.contains(&2) && m.contains(&3));
        m.insert(4, b"more than ten bytes"); // larger than the budget: not kept
        assert!(!m.contains(&4));
        assert!(m.used() <= 10);
        m.clear();
        assert!(!m.contains(&3));
        assert_eq!(m.used(), 0);
    }

    #[test]
    fn an_entry_read_since_the_hand_passed_gets_a_second_chance() {
        let mut m = ByteMemo::new(12);
        for k in 1..=3 {
            m.insert(k, b"abcd");
        }
        assert!(m.get(&1).is_some()); // read: 1 goes to the back instead of leaving
        m.insert(4, b"efgh");
        assert!(
            m.contains(&1) && !m.contains(&2),
            "the oldest unread one left"
        );
        // Its chance is spent: unread since, it is the next to go after 3.
        m.insert(5, b"ijkl");
        assert!(!m.contains(&3) && m.contains(&1));
        m.insert(6, b"mnop");
        assert!(!m.contains(&1));
        // Every entry read: a full turn of the hand clears them and the oldest leaves.
        for k in [4, 5, 6] {
            assert!(m.get(&k).is_some());
        }
        m.insert(7, b"qrst");
        assert!(!m.contains(&4) && m.contains(&5) && m.contains(&6) && m.contains(&7));
        assert_eq!(m.used(), 12);
    }
}
