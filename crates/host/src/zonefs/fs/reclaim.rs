//! ZenFS+'s proactive reclaiming (§IV-D), the R of its configurations: zones whose data is all
//! dead are not reset when their last file goes (that puts a reset on the deleting job's
//! path); a minor GC every `GC_INTERVAL_S` of virtual time resets them instead, the zones of
//! L0 first, one reset per zone in parallel (each zone is on its own die group, so a striped
//! group's members reset side by side), and never copies. An allocation that finds no empty
//! zone resets dead ones at once rather than fail.
//!
//! The full GC: after a minor pass, while a partition's free space (empty and dead zones) is
//! below 10 % of its zones (B.4-3, taken per partition: with isolation a full compaction
//! partition cannot borrow the flush partition's room; 12 % to stop), the partition's stripe
//! group with the fewest live bytes (lower levels first, `plus::full_gc_victim`) has its live
//! extents copied into a GC zone of the partition and is reset.

use std::rc::Rc;

use device::ZoneAction;

use super::super::plus::{allowed_zones, full_gc_victim, full_gc_wanted, JobKind, WriteClass};
use super::{FsError, ZoneFs, META_ZONES};
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
            if st.reclaim_running || now.since(st.last_reclaim) < st.gc_interval {
                return;
            }
            st.reclaim_running = true;
            st.last_reclaim = now;
        }
        let me = self.clone();
        self.io.sim().spawn(async move {
            // A failed reset leaves its zone dead and unreset, a failed copy the extents where
            // they were; the next pass tries again.
            if me.minor_gc().await.is_ok() {
                let _ = me.full_gc().await;
            }
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

    /// The zones of each partition ZenFS+ writes (flush, WAL and MANIFEST; compaction), one
    /// partition without isolation.
    fn partitions(&self) -> Vec<Vec<bool>> {
        let Some((cfg, map)) = self.plus else {
            return Vec::new();
        };
        let n = self.st.borrow().zones.len();
        let of = |kind| allowed_zones(&cfg, map, META_ZONES, n, WriteClass { kind, level: 1 });
        if cfg.isolation {
            vec![of(JobKind::Flush), of(JobKind::Compaction)]
        } else {
            vec![of(JobKind::Compaction)]
        }
    }

    /// Bytes of the partition's zones that are empty or dead, and of all of them.
    fn free_space(&self, part: &[bool]) -> (u64, u64) {
        let st = self.st.borrow();
        let mine = || {
            st.zones
                .iter()
                .zip(part)
                .filter(|(_, &p)| p)
                .map(|(z, _)| z)
        };
        let free = mine()
            .filter(|z| (z.wp == 0 && !z.finished && !z.busy && !z.grouped) || z.is_dead())
            .map(|z| z.capacity)
            .sum();
        (free, mine().map(|z| z.capacity).sum())
    }

    /// ZenFS+'s full GC (see the module), in each partition short of free space: returns the
    /// zones it emptied by copying. Does nothing under ZenFS's policy.
    /// One pass at a time: a caller that finds one running (the timer's, or a writer's that
    /// met NoSpace) waits for it and then looks again, rather than fail for want of the
    /// reserve the running pass holds.
    pub async fn full_gc(&self) -> Result<usize, FsError> {
        while self.st.borrow().full_gc_running {
            self.zone_freed.notified().await;
        }
        self.st.borrow_mut().full_gc_running = true;
        let result = async {
            let mut emptied = 0;
            for part in self.partitions() {
                let (free, capacity) = self.free_space(&part);
                if full_gc_wanted(free, capacity, false) {
                    self.st.borrow_mut().counters.full_gc_passes += 1;
                    emptied += self.full_gc_in(&part).await?;
                }
            }
            Ok(emptied)
        }
        .await;
        self.st.borrow_mut().full_gc_running = false;
        self.zone_freed.notify_waiters();
        result
    }

    async fn full_gc_in(&self, part: &[bool]) -> Result<usize, FsError> {
        let mut gc_zone: Option<usize> = None;
        let mut emptied = 0;
        let result: Result<(), FsError> = async {
            let mut last_free = None;
            loop {
                let (free, capacity) = self.free_space(part);
                if !full_gc_wanted(free, capacity, true) {
                    return Ok(());
                }
                // Each round must gain room, the GC zone's counted (copying a group that is
                // nearly all live into a GC zone finished early gains none, and would go
                // round for ever).
                let have = free + gc_zone.map_or(0, |g| self.st.borrow().zones[g].remaining());
                if last_free.is_some_and(|f| have <= f) {
                    return Ok(());
                }
                last_free = Some(have);
                // Zones outside the partition are hidden as busy.
                let view: Vec<_> = self
                    .st
                    .borrow()
                    .zones
                    .iter()
                    .zip(part)
                    .map(|(z, &p)| {
                        let mut z = z.clone();
                        z.busy |= !p;
                        z
                    })
                    .collect();
                let Some(victims) = full_gc_victim(&view) else {
                    return Ok(());
                };
                {
                    let mut st = self.st.borrow_mut();
                    for &i in &victims {
                        st.zones[i].in_action = true;
                    }
                }
                let moved = self.empty_zones(&victims, &mut gc_zone, part).await;
                let still_live = {
                    let mut st = self.st.borrow_mut();
                    for &i in &victims {
                        st.zones[i].in_action = false;
                    }
                    victims.iter().any(|&i| st.zones[i].used > 0)
                };
                moved?;
                self.reset_unused().await?;
                if still_live {
                    // An extent found no room (or its file was written meanwhile): stop
                    // rather than choose the same group again.
                    return Ok(());
                }
                emptied += victims.len();
                self.st.borrow_mut().counters.full_gc_zones += victims.len() as u64;
            }
        }
        .await;
        if let Some(z) = gc_zone {
            self.st.borrow_mut().zones[z].grouped = false;
            if self.st.borrow().zones[z].is_active() {
                self.finish_zone(z).await?;
            }
        }
        result?;
        Ok(emptied)
    }

    /// Copy the live extents of `victims` into the GC zone (a zone of their partition the GC
    /// holds as a group member, so no writer takes it), taking a fresh one when it is short
    /// of room for a whole victim.
    async fn empty_zones(
        &self,
        victims: &[usize],
        gc_zone: &mut Option<usize>,
        part: &[bool],
    ) -> Result<(), FsError> {
        for &zi in victims {
            // Room for the zone's live extents, each padded to the block as a copy lands.
            let (need, level, lifetime) = {
                let st = self.st.borrow();
                let z = &st.zones[zi];
                let (lo, hi) = (z.start, z.start + z.capacity);
                let need: u64 = st
                    .files
                    .values()
                    .flat_map(|f| f.meta.extents.iter())
                    .filter(|e| e.start >= lo && e.start < hi)
                    .map(|e| e.len.div_ceil(self.block) * self.block)
                    .sum();
                (need, z.level, z.lifetime)
            };
            if gc_zone.is_none_or(|g| self.st.borrow().zones[g].remaining() < need) {
                if let Some(old) = gc_zone.take() {
                    self.st.borrow_mut().zones[old].grouped = false;
                    if self.st.borrow().zones[old].is_active() {
                        self.finish_zone(old).await?;
                    }
                }
                // An empty zone of the partition, within the active limit.
                let mut st = self.st.borrow_mut();
                let active = st.zones.iter().filter(|z| z.counts_active()).count() as u32;
                if active >= st.active_limit {
                    return Ok(());
                }
                let Some(g) = (0..st.zones.len()).find(|&i| {
                    let z = &st.zones[i];
                    part[i] && z.wp == 0 && !z.finished && !z.busy && !z.grouped && !z.in_action
                }) else {
                    return Ok(());
                };
                let z = &mut st.zones[g];
                z.grouped = true;
                z.level = level;
                z.lifetime = lifetime;
                *gc_zone = Some(g);
            }
            let g = gc_zone.expect("a GC zone");
            self.migrate_zone(zi, &|fs, _, room| {
                let mut st = fs.st.borrow_mut();
                let z = &mut st.zones[g];
                (!z.busy && z.remaining() >= room).then(|| {
                    z.busy = true;
                    g
                })
            })
            .await?;
            // Emptied: reset at once, so the zone is room for the next copy (the reserve of
            // one zone is enough only so).
            if self.st.borrow().zones[zi].used == 0 {
                self.io
                    .zone_action(zi as u32 + META_ZONES, ZoneAction::Reset)
                    .await?;
                let mut st = self.st.borrow_mut();
                st.counters.resets += 1;
                st.zones[zi].clear();
            }
        }
        Ok(())
    }
}
