//! IO zones: allocation (ZenFS's AllocateIOZone), the finish threshold, finishing, taking and
//! releasing a zone for a writer, and resetting zones that hold no live data.

use device::ZoneAction;

use super::{lifetime_diff, FsError, ZoneFs, FLAG_PADDING, META_ZONES, RESERVED_OPEN_NON_WAL};

impl ZoneFs {
    /// The zone a file of `lifetime` should write next (ZenFS's AllocateIOZone).
    pub(super) async fn allocate(&self, lifetime: u32, wal: bool) -> Result<usize, FsError> {
        if !wal {
            self.apply_finish_threshold().await?;
        }
        // An open token: a zone held by a writer is an open zone.
        loop {
            let (held, limit) = {
                let st = self.st.borrow();
                let held = st.zones.iter().filter(|z| z.busy).count() as u32;
                let reserve = if wal { 2 } else { RESERVED_OPEN_NON_WAL };
                (held, st.open_limit - reserve)
            };
            if held < limit {
                break;
            }
            self.st.borrow_mut().counters.open_token_waits += 1;
            self.zone_freed.notified().await;
        }
        enum Pick {
            Open(usize),
            Empty(usize),
            Finish(usize),
            Wait,
        }
        loop {
            let pick = {
                let st = self.st.borrow();
                let mut best: Option<(u32, usize)> = None;
                for (i, z) in st.zones.iter().enumerate() {
                    if z.busy || z.in_action || z.used == 0 || z.remaining() == 0 {
                        continue;
                    }
                    let d = lifetime_diff(z.lifetime, lifetime);
                    // Ties go to the later zone (ZenFS compares with <=).
                    if best.is_none_or(|(bd, _)| d <= bd) {
                        best = Some((d, i));
                    }
                }
                // A zone a writer holds counts as active even before its first write lands,
                // or concurrent allocations overrun the device's active limit.
                let active = st
                    .zones
                    .iter()
                    .filter(|z| z.is_active() || (z.busy && !z.finished))
                    .count() as u32;
                let empty = st
                    .zones
                    .iter()
                    .position(|z| z.wp == 0 && !z.busy && !z.finished && !z.in_action);
                // The idle partial zone with the least room left, to finish for a token.
                let cheapest = st
                    .zones
                    .iter()
                    .enumerate()
                    .filter(|(_, z)| !z.busy && !z.in_action && z.is_active())
                    .min_by_key(|(_, z)| z.remaining())
                    .map(|(i, _)| i);
                match (best, empty) {
                    (Some((d, i)), _) if d < 50 => Pick::Open(i),
                    (_, Some(e)) if active < st.active_limit => Pick::Empty(e),
                    (Some((50, i)), _) => Pick::Open(i),
                    (_, Some(_)) if cheapest.is_some() => Pick::Finish(cheapest.expect("checked")),
                    // Every active zone has a writer: wait for one to let go.
                    (_, Some(_)) if active > 0 => Pick::Wait,
                    _ => return Err(FsError::NoSpace("zone allocation failure")),
                }
            };
            let i = match pick {
                Pick::Finish(c) => {
                    self.st.borrow_mut().counters.finished_for_token += 1;
                    self.finish_zone(c).await?;
                    continue;
                }
                Pick::Wait => {
                    self.zone_freed.notified().await;
                    continue;
                }
                Pick::Open(i) => i,
                Pick::Empty(e) => {
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

    /// Finish every idle, partly written zone with less than the finish threshold left
    /// (ZenFS's ApplyFinishThreshold).
    async fn apply_finish_threshold(&self) -> Result<(), FsError> {
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            let pct = st.sb.finish_threshold as u64;
            if pct == 0 {
                return Ok(());
            }
            let mut victims = Vec::new();
            for (i, z) in st.zones.iter_mut().enumerate() {
                if !z.busy
                    && !z.in_action
                    && z.is_active()
                    && z.remaining() * 100 < z.capacity * pct
                {
                    z.in_action = true; // chosen: no writer takes it before its turn
                    victims.push(i);
                }
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
    pub(super) async fn reset_unused(&self) -> Result<(), FsError> {
        // Chosen and marked at once: several tasks delete files side by side (a compaction,
        // the last lookup of a retired table), and a victim chosen by two would be reset twice,
        // the second time perhaps after a new file was allocated in it.
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            let mut victims = Vec::new();
            for (i, z) in st.zones.iter_mut().enumerate() {
                if !z.busy && !z.in_action && z.used == 0 && (z.wp > 0 || z.finished) {
                    z.in_action = true;
                    victims.push(i);
                }
            }
            victims
        };
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
                    let z = &mut st.zones[i];
                    z.wp = 0;
                    z.finished = false;
                    z.lifetime = 0;
                }
            }
            self.st.borrow_mut().zones[i].in_action = false;
        }
        Ok(result?)
    }
}
