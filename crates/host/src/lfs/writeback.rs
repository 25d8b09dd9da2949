//! Dirty-page writeback as Linux's flusher does it for the guest the paper ran (ZNS+ §4:
//! Linux 4.10, 2 GiB), with its defaults (`mm/page-writeback.c`, `vm.dirty_*`):
//! - a writer that finds more than `dirty_ratio` (20 %) of the page cache dirty writes back
//!   itself (`balance_dirty_pages`) until below `dirty_background_ratio` (10 %);
//! - every `dirty_writeback_centisecs` (5 s) the flusher writes back inodes dirty for longer
//!   than `dirty_expire_centisecs` (30 s), and, above the background ratio, the oldest dirty
//!   inodes until below it.
//!
//! The flusher runs on the writer's path at its 5 s ticks rather than as a thread of its own,
//! under the file-system lock (it allocates blocks), taken only when there is work: a tick
//! due or the cache over `dirty_ratio`. A file is stamped dirty at the write that dirtied it
//! (`dirty_since`); directories' dentry pages at the next tick.

use sim::{SimDuration, SimInstant};

use super::fs::Lfs;
use super::meta::MetaArea;
use super::node::Nid;
use crate::fs::FsError;
use crate::zoned::ZonedBackend;

/// The flusher's settings (Linux's `vm.dirty_*` sysctls).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Writeback {
    /// `dirty_background_ratio`: above this share of the cache dirty, write back in the
    /// background (percent).
    pub background_pct: u64,
    /// `dirty_ratio`: above this share a writer writes back itself (percent).
    pub throttle_pct: u64,
    /// `dirty_expire_centisecs`: an inode dirty this long is written back.
    pub expire: SimDuration,
    /// `dirty_writeback_centisecs`: the flusher's period; zero turns the flusher off.
    pub interval: SimDuration,
}

impl Default for Writeback {
    /// Linux's defaults: 10 %, 20 %, 30 s, 5 s.
    fn default() -> Self {
        Writeback {
            background_pct: 10,
            throttle_pct: 20,
            expire: SimDuration::from_secs(30),
            interval: SimDuration::from_secs(5),
        }
    }
}

/// The flusher's state.
#[derive(Debug, Default)]
pub(super) struct Flusher {
    /// The flusher's last tick.
    pub last_tick: SimInstant,
    /// When each dirty inode was first seen dirty at a tick.
    pub dirty_since: std::collections::BTreeMap<Nid, SimInstant>,
}

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    /// After a write to `ino`: the writer's throttle, then the flusher if its tick is due.
    pub(super) async fn balance_dirty_pages(&self, ino: Nid) -> Result<(), FsError> {
        {
            // The inode's dirtied time (Linux's `inode->dirtied_when`), if it was clean.
            let now = self.dev.sim().now();
            let mut st = self.st.borrow_mut();
            if st.cache.dirty_count(ino) > 0 {
                st.flusher.dirty_since.entry(ino).or_insert(now);
            }
        }
        if !self.st.borrow().writeback_due(self.dev.sim().now()) {
            return Ok(());
        }
        let _g = self.lock.lock().await;
        // Another writer may have done the work while this one waited: decided again.
        let now = self.dev.sim().now();
        let (wb, background, over, due) = {
            let st = self.st.borrow();
            let wb = st.cfg.writeback;
            let background = st.cache.capacity() as u64 * wb.background_pct / 100;
            (
                wb,
                background,
                st.over_dirty_limit(),
                st.flusher_tick_due(now),
            )
        };
        if over {
            self.st.borrow_mut().counters.writeback_throttled += 1;
            self.write_back_oldest(background).await?;
        }
        if !due {
            return Ok(());
        }
        let expired: Vec<Nid> = {
            let mut st = self.st.borrow_mut();
            st.flusher.last_tick = now;
            let dirty_now = st.cache.dirty_inodes();
            let f = &mut st.flusher;
            f.dirty_since
                .retain(|n, _| dirty_now.binary_search(n).is_ok());
            for n in dirty_now {
                f.dirty_since.entry(n).or_insert(now);
            }
            f.dirty_since
                .iter()
                .filter(|(_, &t)| now >= t + wb.expire)
                .map(|(&n, _)| n)
                .collect()
        };
        if !expired.is_empty() {
            self.st.borrow_mut().counters.writeback_expired += expired.len() as u64;
            for n in expired {
                self.write_back_one(n).await?;
            }
        }
        if self.st.borrow().cache.dirty_pages() as u64 > background {
            self.write_back_oldest(background).await?;
        }
        self.flush().await
    }

    /// Write back inodes, the longest dirty first, until at most `target` pages are dirty;
    /// then inodes dirtied since the last tick, in inode order.
    async fn write_back_oldest(&self, target: u64) -> Result<(), FsError> {
        let over = || self.st.borrow().cache.dirty_pages() as u64 > target;
        let mut by_age: Vec<(SimInstant, Nid)> = {
            let st = self.st.borrow();
            st.flusher
                .dirty_since
                .iter()
                .map(|(&n, &t)| (t, n))
                .collect()
        };
        by_age.sort_unstable();
        for (_, n) in by_age {
            if !over() {
                break;
            }
            if self.st.borrow().cache.dirty_count(n) > 0 {
                self.write_back_one(n).await?;
            }
        }
        while over() {
            let Some(n) = self.st.borrow().cache.first_dirty_inode() else {
                break;
            };
            self.write_back_one(n).await?;
        }
        self.flush().await
    }

    async fn write_back_one(&self, ino: Nid) -> Result<(), FsError> {
        let pages = self.st.borrow().cache.dirty_count(ino) as u64;
        self.writeback_inode(ino, true).await?;
        let mut st = self.st.borrow_mut();
        st.flusher.dirty_since.remove(&ino);
        st.counters.writeback_pages += pages;
        Ok(())
    }
}

impl super::fs::State {
    /// Whether a writer has writeback to do at `now`: the flusher's tick is due, or more than
    /// `dirty_ratio` of the cache is dirty.
    pub(super) fn writeback_due(&self, now: SimInstant) -> bool {
        self.flusher_tick_due(now) || self.over_dirty_limit()
    }

    /// The flusher's tick is due at `now` (never with the flusher off).
    fn flusher_tick_due(&self, now: SimInstant) -> bool {
        let wb = self.cfg.writeback;
        wb.interval > SimDuration::ZERO && now >= self.flusher.last_tick + wb.interval
    }

    /// More than `dirty_ratio` of the cache is dirty: a writer writes back itself.
    fn over_dirty_limit(&self) -> bool {
        let limit = self.cache.capacity() as u64 * self.cfg.writeback.throttle_pct / 100;
        self.cache.dirty_pages() as u64 > limit
    }
}
