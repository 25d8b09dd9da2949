//! Garbage collection (ZenFS's GCWorker): a pass every `GC_INTERVAL_S` of virtual time once
//! free space is low, migrating the live extents of mostly-dead full zones into partly written
//! zones of a suiting lifetime.

use std::rc::Rc;

use super::super::meta::{Extent, Record};
use super::{FsError, ZoneFs, FLAG_GC, GC_COPY_BYTES};
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend> ZoneFs<B> {
    /// Start a GC pass if GC is on, none runs and the last began `GC_INTERVAL_S` ago (ZenFS's
    /// GC thread sleeps 10 s between passes; here the writers' progress wakes it, so an idle
    /// file system keeps no task alive).
    pub(super) fn maybe_gc(self: &Rc<Self>) {
        let now = self.io.sim().now();
        {
            let mut st = self.st.borrow_mut();
            if st.sb.flags & FLAG_GC == 0 || st.gc_running || now.since(st.last_gc) < st.gc_interval
            {
                return;
            }
            st.gc_running = true;
            st.last_gc = now;
        }
        let me = self.clone();
        self.io.sim().spawn(async move {
            // A failed pass leaves every file as it was (extents swap only after their copy
            // is written); the next pass tries again.
            let _ = me.gc_pass().await;
            me.st.borrow_mut().gc_running = false;
        });
    }

    /// One GC pass (ZenFS's GCWorker body): move the live extents of every zone the GC
    /// policy picks (by default, when free space is at or below 20%, every full zone whose
    /// garbage share exceeds the threshold).
    pub async fn gc_pass(&self) -> Result<(), FsError> {
        let victims: Vec<usize> = {
            let mut st = self.st.borrow_mut();
            st.counters.gc_passes += 1;
            let victims = self.gc_policy.choose_victims(&st.view());
            for &i in &victims {
                // Chosen: a deletion's reset must not empty it under the migration.
                st.zones[i].in_action = true;
            }
            victims
        };
        let mut result = Ok(());
        for zi in victims {
            if result.is_ok() {
                self.st.borrow_mut().counters.gc_zones += 1;
                result = self
                    .migrate_zone(zi, &|fs, lifetime, room| {
                        fs.take_migrate_zone(lifetime, room)
                    })
                    .await;
            }
            self.st.borrow_mut().zones[zi].in_action = false;
            if result.is_ok() {
                // The zone just emptied (and any other), before the next migration.
                result = self.reset_unused().await.map(|_| ());
            }
        }
        result
    }

    /// Move every extent in zone `zi` of a closed, non-sparse file into the zone `target`
    /// gives for the file's lifetime and the extent's padded length, taken (busy) for the copy
    /// (ZenFS's GC: a partly written zone of a suiting lifetime, never an empty one: GC must
    /// not take an active zone from writers); extents it finds no zone for stay.
    pub(super) async fn migrate_zone(
        &self,
        zi: usize,
        target: &dyn Fn(&Self, u32, u64) -> Option<usize>,
    ) -> Result<(), FsError> {
        let (zstart, zend) = {
            let st = self.st.borrow();
            (
                st.zones[zi].start,
                st.zones[zi].start + st.zones[zi].capacity,
            )
        };
        let in_zone = |e: &Extent| e.start >= zstart && e.start < zend;
        let candidates: Vec<u64> = {
            let st = self.st.borrow();
            st.files
                .iter()
                .filter(|(_, f)| !f.writing && !f.meta.sparse && f.meta.extents.iter().any(in_zone))
                .map(|(&id, _)| id)
                .collect()
        };
        let mut buf = vec![0u8; GC_COPY_BYTES];
        for id in candidates {
            let Some((lifetime, extents)) = self
                .st
                .borrow()
                .files
                .get(&id)
                .map(|f| (f.meta.lifetime, f.meta.extents.clone()))
            else {
                continue; // deleted meanwhile
            };
            let mut moved: Vec<(usize, Extent)> = Vec::new();
            for (k, e) in extents.iter().enumerate().filter(|(_, e)| in_zone(e)) {
                let padded = e.len.div_ceil(self.block) * self.block;
                let Some(target) = target(self, lifetime, padded) else {
                    continue;
                };
                let dst = {
                    let st = self.st.borrow();
                    st.zones[target].start + st.zones[target].wp
                };
                // Copy in 128 KiB reads and appends, the last padded to the block.
                let mut off = 0u64;
                let copied: Result<(), FsError> = async {
                    while off < padded {
                        let n = (padded - off).min(GC_COPY_BYTES as u64) as usize;
                        self.io.read(e.start + off, &mut buf[..n]).await?;
                        self.io.write(dst + off, &buf[..n]).await?;
                        off += n as u64;
                    }
                    Ok(())
                }
                .await;
                let mut st = self.st.borrow_mut();
                st.zones[target].wp += off;
                st.zones[target].busy = false;
                st.counters.gc_bytes_written += off;
                drop(st);
                self.zone_freed.notify_waiters();
                copied?;
                moved.push((
                    k,
                    Extent {
                        start: dst,
                        len: e.len,
                    },
                ));
            }
            if moved.is_empty() {
                continue;
            }
            // Swap the extents once no read of the file is in flight, then log the file's
            // whole extent list (ZenFS's replace record).
            loop {
                match self.st.borrow().files.get(&id) {
                    Some(f) if f.readers > 0 => {}
                    _ => break,
                }
                self.reads_done.notified().await;
            }
            let rec = {
                let mut st = self.st.borrow_mut();
                let Some(f) = st.files.get_mut(&id) else {
                    // Deleted while being copied: the copies are garbage in their zones.
                    continue;
                };
                let mut changes = Vec::new();
                for (k, new) in &moved {
                    let old = f.meta.extents[*k];
                    f.meta.extents[*k] = *new;
                    changes.push((old, *new));
                }
                f.synced = f.meta.extents.len();
                let meta = f.meta.clone();
                for (old, new) in changes {
                    if let Some(z) = st.zone_of(old.start, self.zone_bytes) {
                        st.zones[z].used -= old.len;
                    }
                    if let Some(z) = st.zone_of(new.start, self.zone_bytes) {
                        st.zones[z].used += new.len;
                    }
                }
                st.counters.gc_extents += moved.len() as u64;
                Record::Replace(meta)
            };
            self.log(rec).await?;
        }
        Ok(())
    }

    /// The zone the GC policy picks for a migrated extent of `room` bytes of a file of
    /// `lifetime`, taken for the migration (ZenFS's TakeMigrateZone).
    fn take_migrate_zone(&self, lifetime: u32, room: u64) -> Option<usize> {
        let mut st = self.st.borrow_mut();
        let i = self.gc_policy.choose_target(&st.view(), lifetime, room)?;
        st.zones[i].busy = true;
        Some(i)
    }
}
