//! The metadata log: a metadata zone starts with a superblock and a snapshot of every file,
//! then takes one record at a time; a full zone rolls to the next one (end record, Finish,
//! new superblock and snapshot, Reset of the old zone). A file's sync logs the extents it
//! gained since its last record.

use device::ZoneAction;

use super::super::meta::{self, Record};
use super::{FsError, ZoneFs, META_ZONES};
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend> ZoneFs<B> {
    /// Start metadata zone `zone` with sequence `seq`: superblock, then a snapshot of every file.
    pub(super) async fn start_meta_zone(&self, zone: u32, seq: u32) -> Result<(), FsError> {
        let (sb, snap) = {
            let mut st = self.st.borrow_mut();
            st.sb.sequence = seq;
            st.meta_zone = zone;
            st.meta_wp = 0;
            let files = st.files.values().map(|f| f.meta.clone()).collect();
            // What the snapshot holds of each file: extents added while it is written go in
            // the file's next update record, not marked synced (torture seed 193 lost a WAL
            // piece that way).
            let held: Vec<(u64, usize)> = st
                .files
                .iter()
                .map(|(&id, f)| (id, f.meta.extents.len()))
                .collect();
            (st.sb.encode(), (Record::Snapshot(files), held))
        };
        let (snap, held) = snap;
        self.append_meta(&meta::frame(&sb, self.block as usize))
            .await?;
        let snap = meta::encode(&snap, self.block as usize);
        if snap.len() as u64 + self.block > self.io.zone_capacity_bytes() {
            return Err(FsError::NoSpace(
                "the metadata snapshot does not fit one zone",
            ));
        }
        self.append_meta(&snap).await?;
        let mut st = self.st.borrow_mut();
        for (id, n) in held {
            if let Some(f) = st.files.get_mut(&id) {
                f.synced = f.synced.max(n);
            }
        }
        Ok(())
    }

    async fn append_meta(&self, bytes: &[u8]) -> Result<(), FsError> {
        let (zone, wp) = {
            let st = self.st.borrow();
            (st.meta_zone, st.meta_wp)
        };
        self.io
            .write(zone as u64 * self.zone_bytes + wp, bytes)
            .await?;
        self.st.borrow_mut().meta_wp += bytes.len() as u64;
        Ok(())
    }

    /// Log one record; roll to the next metadata zone when this one is full.
    pub(super) async fn log(&self, r: Record) -> Result<(), FsError> {
        let _one_at_a_time = self.meta_lock.lock().await;
        let bytes = meta::encode(&r, self.block as usize);
        let (zone, wp, seq) = {
            let st = self.st.borrow();
            (st.meta_zone, st.meta_wp, st.sb.sequence)
        };
        let cap = self.io.zone_capacity_bytes();
        self.st.borrow_mut().meta_records += 1;
        if wp + bytes.len() as u64 <= cap {
            return self.append_meta(&bytes).await;
        }
        // Roll: end record if it fits, finish the old zone, new superblock and snapshot in the
        // next one (the snapshot holds this record's effect, applied by the caller already),
        // then reset the old zone.
        let end = meta::encode(&Record::End, self.block as usize);
        if wp + end.len() as u64 <= cap {
            self.append_meta(&end).await?;
        }
        self.io.zone_action(zone, ZoneAction::Finish).await?;
        let next = (zone + 1) % META_ZONES;
        self.io.zone_action(next, ZoneAction::Reset).await?;
        self.start_meta_zone(next, seq + 1).await?;
        self.io.zone_action(zone, ZoneAction::Reset).await?;
        Ok(())
    }

    /// Log the extents a file gained since its last record.
    pub(super) async fn sync_meta(&self, id: u64, closing: bool) -> Result<(), FsError> {
        let rec = {
            let mut st = self.st.borrow_mut();
            let f = st
                .files
                .get_mut(&id)
                .ok_or(FsError::NotFound(format!("file {id}")))?;
            if closing {
                f.meta.active_start = None;
                f.writing = false;
            }
            let mut u = f.meta.clone();
            u.extents = f.meta.extents[f.synced..].to_vec();
            let from = f.synced;
            f.synced = f.meta.extents.len();
            (Record::Update(u), from)
        };
        let (rec, from) = rec;
        if closing {
            let z = self
                .st
                .borrow_mut()
                .files
                .get_mut(&id)
                .and_then(|f| f.zone.take());
            if let Some(z) = z {
                self.release_zone(z).await?;
            }
            self.release_group(id);
        }
        let logged = self.log(rec).await;
        if logged.is_err() {
            // Not logged (or not known to be): the next sync logs these extents again (replay
            // keeps an extent once).
            if let Some(f) = self.st.borrow_mut().files.get_mut(&id) {
                f.synced = f.synced.min(from);
            }
        }
        logged
    }
}
