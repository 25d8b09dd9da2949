//! IO zones: allocation (ZenFS's AllocateIOZone), the finish threshold, finishing, taking and
//! releasing a zone for a writer, and resetting zones that hold no live data.

use device::ZoneAction;

use super::super::plus::WriteClass;
use super::super::policy::{AllocRequest, Decision};
use super::{FsError, ZoneFs, FLAG_PADDING, META_ZONES};
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend> ZoneFs<B> {
    /// The zone a file of `lifetime` should write next, as the allocation policy decides
    /// (ZenFS's AllocateIOZone by default): zones to finish first, an open token, then the
    /// zone, finishing one or waiting for a writer to let go as told.
    pub(super) async fn allocate(
        &self,
        lifetime: u32,
        wal: bool,
        class: WriteClass,
    ) -> Result<usize, FsError> {
        let req = AllocRequest {
            lifetime,
            wal,
            class,
        };
        self.apply_finish_threshold(&req).await?;
        while !self
            .allocator
            .has_open_token(&self.st.borrow().view(), &req)
        {
            self.st.borrow_mut().counters.open_token_waits += 1;
            self.zone_freed.notified().await;
        }
        loop {
            let decision = self.allocator.choose(&self.st.borrow().view(), &req);
            let i = match decision {
                Decision::Finish(c) => {
                    self.st.borrow_mut().counters.finished_for_token += 1;
                    self.finish_zone(c).await?;
                    continue;
                }
                Decision::Wait => {
                    self.zone_freed.notified().await;
                    continue;
                }
                Decision::NoSpace => {
                    // Dead zones the minor GC has not reset yet (ZenFS+) are space, and so
                    // are the groups its full GC can empty.
                    if self.reset_unused().await? > 0 || self.full_gc().await? > 0 {
                        continue;
                    }
                    return Err(FsError::NoSpace("zone allocation failure"));
                }
                Decision::Open(i) => i,
                Decision::Empty(e) => {
                    self.st.borrow_mut().zones[e].lifetime = lifetime;
                    e
                }
            };
            self.st.borrow_mut().zones[i].busy = true;
            let fresh = self.st.borrow().zones[i].wp == 0;
            if fresh && self.padding_zones() {
                // An explicit open with the padding option; released zones are closed again
                // (`release_zone`), as the device never closes an explicitly opened zone.
                if let Err(e) = self
                    .io
                    .zone_action(i as u32 + META_ZONES, ZoneAction::OpenPadding)
                    .await
                {
                    self.st.borrow_mut().zones[i].busy = false;
                    self.zone_freed.notify_waiters();
                    return Err(e.into());
                }
            }
            return Ok(i);
        }
    }

    /// Finish the idle zones the policy names before an allocation (ZenFS's
    /// ApplyFinishThreshold: partly written zones with less than the threshold left).
    async fn apply_finish_threshold(&self, req: &AllocRequest) -> Result<(), FsError> {
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            let victims = self.allocator.finish_first(&st.view(), req);
            for &i in &victims {
                st.zones[i].in_action = true; // chosen: no writer takes it before its turn
            }
            victims
        };
        let mut result = Ok(());
        for i in victims {
            if result.is_ok() {
                self.st.borrow_mut().counters.finished_by_threshold += 1;
                result = self.finish_zone(i).await;
            }
            self.st.borrow_mut().zones[i].in_action = false;
        }
        result
    }

    pub(super) async fn finish_zone(&self, i: usize) -> Result<(), FsError> {
        // Marked first: another allocation running while the Finish is in flight must not
        // pick this zone (found with concurrent flush and compaction writers), nor a deletion
        // reset it.
        {
            let mut st = self.st.borrow_mut();
            st.zones[i].finished = true;
            st.zones[i].in_action = true;
        }
        let done = self
            .io
            .zone_action(i as u32 + META_ZONES, ZoneAction::Finish)
            .await;
        self.st.borrow_mut().zones[i].in_action = false;
        done?;
        Ok(())
    }

    /// File `id` writes zone `z` from now on: its active extent starts at the zone's write
    /// pointer, and that start is durable before data goes there.
    pub(super) async fn take_zone(&self, id: u64, z: usize) -> Result<(), FsError> {
        {
            let mut st = self.st.borrow_mut();
            let start = st.zones[z].start + st.zones[z].wp;
            let f = st.files.get_mut(&id).expect("file");
            f.zone = Some(z);
            f.meta.active_start = Some(start);
        }
        self.sync_meta(id, false).await
    }

    pub(super) fn padding_zones(&self) -> bool {
        self.st.borrow().sb.flags & FLAG_PADDING != 0
    }

    /// A writer lets go of zone `zi`. With padding zones a zone that is not full is closed
    /// first (it was opened explicitly, and only the host closes those); it stays owned until
    /// the Close completes so no other writer reaches it in between.
    pub(super) async fn release_zone(&self, zi: usize) -> Result<(), FsError> {
        let close = {
            let st = self.st.borrow();
            let z = &st.zones[zi];
            st.sb.flags & FLAG_PADDING != 0 && !z.finished && z.wp < z.capacity
        };
        let result = if close {
            self.io
                .zone_action(zi as u32 + META_ZONES, ZoneAction::Close)
                .await
        } else {
            Ok(())
        };
        self.st.borrow_mut().zones[zi].busy = false;
        self.zone_freed.notify_waiters();
        Ok(result?)
    }

    /// Reset every idle IO zone that holds no live data (ZenFS's ResetUnusedIOZones).
    pub(super) async fn reset_unused(&self) -> Result<usize, FsError> {
        // Chosen and marked at once: several tasks delete files side by side (a compaction,
        // the last lookup of a retired table), and a victim chosen by two would be reset twice,
        // the second time perhaps after a new file was allocated in it.
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            let mut victims = Vec::new();
            for (i, z) in st.zones.iter_mut().enumerate() {
                if z.is_dead() {
                    z.in_action = true;
                    victims.push(i);
                }
            }
            victims
        };
        let mut reset = 0;
        let mut result = Ok(());
        for i in victims {
            if result.is_ok() {
                result = self
                    .io
                    .zone_action(i as u32 + META_ZONES, ZoneAction::Reset)
                    .await;
                if result.is_ok() {
                    let mut st = self.st.borrow_mut();
                    st.counters.resets += 1;
                    st.zones[i].clear();
                    reset += 1;
                }
            }
            self.st.borrow_mut().zones[i].in_action = false;
        }
        result?;
        Ok(reset)
    }
}
