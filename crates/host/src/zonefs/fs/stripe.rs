//! ZenFS+'s striped files (§IV-C): a flush or compaction output is written a stripe at a time,
//! one 192 KiB unit to each zone of its stripe group, the units in parallel; each unit is an
//! extent, so the metadata log and mount need nothing new. A stripe group is held by one
//! writer at a time and shared by the files of one write class one after another
//! ([`super::super::plus`] decides which). A striped file keeps what its last sync logged: it
//! has no active extent for mount to repair (RocksDB syncs an SST before it names it).

use super::super::meta::Extent;
use super::super::plus::{
    choose_group, GroupDecision, GroupView, StripeGroup, WriteClass, STRIPE_UNIT,
};
use super::{FsError, ZoneFs, META_ZONES};
use crate::io::IoError;
use crate::zoned::ZonedBackend;

/// One unit of a stripe on its way: the zone, where it lands, its bytes and the padded length.
struct Piece {
    zone: usize,
    pos: u64,
    from: usize,
    len: usize,
    padded: u64,
}

impl<B: ZonedBackend> ZoneFs<B> {
    pub(super) fn class_of(&self, id: u64) -> WriteClass {
        self.st
            .borrow()
            .files
            .get(&id)
            .map_or(WriteClass::OTHER, |f| f.class)
    }

    /// Bytes of one stripe for files of `class`; `None` when they are not striped (ZenFS's
    /// policy, or a WAL or MANIFEST).
    pub(super) fn stripe_bytes(&self, class: WriteClass) -> Option<usize> {
        let (cfg, map) = self.plus?;
        class
            .striped()
            .then(|| cfg.width(map, class) * STRIPE_UNIT as usize)
    }

    /// Write `data` to striped file `id`: unit by unit over its stripe group's zones, a stripe
    /// of units in parallel; a group with a member short of room is retired and a new one
    /// taken.
    pub(super) async fn write_striped(&self, id: u64, data: &[u8]) -> Result<(), FsError> {
        let mut at = 0usize;
        while at < data.len() {
            let key = self.stripe_group_of(id).await?;
            let pieces = {
                let st = self.st.borrow();
                let g = st.group(key).expect("held group");
                let k = g.zones.len();
                let mut pieces = Vec::with_capacity(k);
                let mut a = at;
                for i in 0..k {
                    if a == data.len() {
                        break;
                    }
                    let len = (STRIPE_UNIT as usize).min(data.len() - a);
                    let padded = (len as u64).div_ceil(self.block) * self.block;
                    let zone = g.zones[(g.next + i) % k];
                    let z = &st.zones[zone];
                    if z.remaining() < padded {
                        pieces.clear();
                        break;
                    }
                    pieces.push(Piece {
                        zone,
                        pos: z.start + z.wp,
                        from: a,
                        len,
                        padded,
                    });
                    a += len;
                }
                pieces
            };
            if pieces.is_empty() {
                self.retire_group(key).await?;
                continue;
            }
            let tasks: Vec<_> = pieces
                .iter()
                .map(|p| {
                    let io = self.io.clone();
                    let mut unit = data[p.from..p.from + p.len].to_vec();
                    unit.resize(p.padded as usize, 0);
                    let pos = p.pos;
                    self.io
                        .sim()
                        .clone()
                        .spawn(async move { io.write(pos, &unit).await })
                })
                .collect();
            let mut results = Vec::with_capacity(tasks.len());
            for task in tasks {
                results.push(task.await);
            }
            let mut failed: Option<IoError> = None;
            let mut st = self.st.borrow_mut();
            for (p, r) in pieces.iter().zip(results) {
                match r {
                    Ok(()) => {
                        st.zones[p.zone].wp += p.padded;
                        if failed.is_none() {
                            st.zones[p.zone].used += p.len as u64;
                            let f = st.files.get_mut(&id).expect("file");
                            f.meta.extents.push(Extent {
                                start: p.pos,
                                len: p.len as u64,
                            });
                            f.meta.size += p.len as u64;
                        }
                    }
                    Err(e) => failed = failed.or(Some(e)),
                }
            }
            if let Some(g) = st.group_mut(key) {
                g.next = (g.next + pieces.len()) % g.zones.len();
            }
            drop(st);
            if let Some(e) = failed {
                return Err(e.into());
            }
            at = pieces.last().map_or(at, |p| p.from + p.len);
        }
        Ok(())
    }

    /// The stripe group file `id` writes (its first member zone names it), taking one as the
    /// policy says.
    async fn stripe_group_of(&self, id: u64) -> Result<usize, FsError> {
        let (cfg, map) = self.plus.expect("a striped file under ZenFS+");
        loop {
            let decision = {
                let st = self.st.borrow();
                let f = st
                    .files
                    .get(&id)
                    .ok_or(FsError::NotFound(format!("file {id}")))?;
                if let Some(key) = f.group {
                    return Ok(key);
                }
                let view = GroupView {
                    zones: &st.zones,
                    groups: &st.groups,
                    first_zone: META_ZONES,
                    map,
                    active_limit: st.active_limit,
                };
                (choose_group(&cfg, &view, f.class), f.class, f.meta.lifetime)
            };
            let (decision, class, lifetime) = decision;
            let members = match decision {
                GroupDecision::Take(i) => {
                    let mut st = self.st.borrow_mut();
                    st.groups[i].busy = true;
                    st.groups[i].zones.clone()
                }
                GroupDecision::New(members) => {
                    let mut st = self.st.borrow_mut();
                    let serial = st.next_stripe;
                    st.next_stripe += 1;
                    for &z in &members {
                        st.zones[z].stripe = serial;
                        st.zones[z].grouped = true;
                        st.zones[z].lifetime = lifetime;
                        st.zones[z].level = class.level;
                    }
                    st.groups.push(StripeGroup {
                        zones: members.clone(),
                        class,
                        busy: true,
                        next: 0,
                    });
                    members
                }
                GroupDecision::Retire(i) => {
                    let key = self.st.borrow().groups[i].zones[0];
                    self.retire_group(key).await?;
                    continue;
                }
                GroupDecision::Wait => {
                    self.zone_freed.notified().await;
                    continue;
                }
                GroupDecision::NoSpace => {
                    // Dead zones the minor GC has not reset yet are space, and so are the
                    // groups the full GC can empty (short of free space, the partition may
                    // still hold empty zones to copy into, but not one in every IZG).
                    if self.reset_unused().await? > 0 || self.full_gc().await? > 0 {
                        continue;
                    }
                    return Err(FsError::NoSpace("no zones for a stripe group"));
                }
            };
            let mut st = self.st.borrow_mut();
            for &z in &members {
                st.zones[z].busy = true;
            }
            st.files.get_mut(&id).expect("file").group = Some(members[0]);
            return Ok(members[0]);
        }
    }

    /// Close stripe group `key` for good: its zones leave it, and those not full are finished
    /// (a group is filled evenly, so they are nearly full; finishing gives the device its
    /// active zones back). The file holding it, if any, lets go of it.
    async fn retire_group(&self, key: usize) -> Result<(), FsError> {
        let partial = {
            let mut st = self.st.borrow_mut();
            let Some(i) = st.groups.iter().position(|g| g.zones[0] == key) else {
                return Ok(());
            };
            let g = st.groups.swap_remove(i);
            for f in st.files.values_mut() {
                if f.group == Some(key) {
                    f.group = None;
                }
            }
            // The zones to finish are marked at once: while the first Finish is in flight,
            // a WAL's allocation must not take the next one, nor write it before its Finish
            // (found by killed-process torture: ZONE_FULL).
            let mut partial = Vec::new();
            for &z in &g.zones {
                let zone = &mut st.zones[z];
                zone.grouped = false;
                zone.busy = false;
                if zone.is_active() {
                    zone.in_action = true;
                    partial.push(z);
                }
            }
            partial
        };
        let mut result = Ok(());
        for z in partial {
            if result.is_ok() {
                result = self.finish_zone(z).await;
            } else {
                self.st.borrow_mut().zones[z].in_action = false;
            }
        }
        self.zone_freed.notify_waiters();
        result?;
        self.reset_unused_unless_deferred().await
    }

    /// File `id` lets go of its stripe group (closed): the group stays open for the next file
    /// of its class.
    pub(super) fn release_group(&self, id: u64) {
        let mut st = self.st.borrow_mut();
        let Some(key) = st.files.get_mut(&id).and_then(|f| f.group.take()) else {
            return;
        };
        let zones = match st.group_mut(key) {
            Some(g) => {
                g.busy = false;
                g.zones.clone()
            }
            None => return,
        };
        for z in zones {
            st.zones[z].busy = false;
        }
        drop(st);
        self.zone_freed.notify_waiters();
    }
}
