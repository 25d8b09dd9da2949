//! ZenFS+'s proactive reclaiming (§IV-D), the R of its configurations: zones whose data is all
//! dead are not reset when their last file goes (that puts a reset on the deleting job's
//! path); a minor GC every `GC_INTERVAL_S` of virtual time resets them instead, the zones of
//! L0 first, one reset per zone in parallel (each zone is on its own die group, so a striped
//! group's members reset side by side), and never copies. An allocation that finds no empty
//! zone resets dead ones at once rather than fail.
//!
//! Not built yet: the full GC under the free-space trigger (greedy, lower levels first), so a
//! device filled with live data ends in NoSpace as ZenFS's policy without GC does.

use std::rc::Rc;

use device::ZoneAction;

use super::{FsError, ZoneFs, GC_INTERVAL_S, META_ZONES};
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend> ZoneFs<B> {
    /// ZenFS+ with reclaiming: dead zones wait for the minor GC.
    pub(super) fn defers_resets(&self) -> bool {
        matches!(self.plus, Some((cfg, _)) if cfg.reclaim)
    }

    /// Reset dead zones now unless the minor GC owns that (ZenFS's reset after a delete).
    pub(super) async fn reset_unused_unless_deferred(&self) -> Result<(), FsError> {
        if self.defers_resets() {
            return Ok(());
        }
        self.reset_unused().await.map(|_| ())
    }

    /// Start a minor GC pass if reclaiming is on, none runs and the last began
    /// `GC_INTERVAL_S` ago (the writers' progress wakes it, as `maybe_gc`).
    pub(super) fn maybe_reclaim(self: &Rc<Self>) {
        if !self.defers_resets() {
            return;
        }
        let now = self.io.sim().now();
        {
            let mut st = self.st.borrow_mut();
            if st.reclaim_running
                || now.since(st.last_reclaim).as_ns() < GC_INTERVAL_S * 1_000_000_000
            {
                return;
            }
            st.reclaim_running = true;
            st.last_reclaim = now;
        }
        let me = self.clone();
        self.io.sim().spawn(async move {
            // A failed reset leaves its zone dead and unreset; the next pass tries again.
            let _ = me.minor_gc().await;
            me.st.borrow_mut().reclaim_running = false;
        });
    }

    /// One minor GC pass: reset every zone no file, writer or action holds and whose live
    /// bytes are 0, lower levels first, the resets in parallel. Returns the zones reset.
    pub async fn minor_gc(&self) -> Result<usize, FsError> {
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            st.counters.minor_gc_passes += 1;
            let mut victims: Vec<usize> = (0..st.zones.len())
                .filter(|&i| st.zones[i].is_dead())
                .collect();
            victims.sort_by_key(|&i| (st.zones[i].level, i));
            for &i in &victims {
                st.zones[i].in_action = true;
            }
            victims
        };
        let tasks: Vec<_> = victims
            .iter()
            .map(|&i| {
                let io = self.io.clone();
                self.io.sim().clone().spawn(async move {
                    io.zone_action(i as u32 + META_ZONES, ZoneAction::Reset)
                        .await
                })
            })
            .collect();
        let mut result = Ok(());
        let mut reset = 0;
        for (&i, task) in victims.iter().zip(tasks) {
            let r = task.await;
            let mut st = self.st.borrow_mut();
            if r.is_ok() {
                st.counters.resets += 1;
                st.counters.minor_gc_resets += 1;
                st.zones[i].clear();
                reset += 1;
            }
            st.zones[i].in_action = false;
            if result.is_ok() {
                result = r;
            }
        }
        self.zone_freed.notify_waiters();
        result?;
        Ok(reset)
    }
}
