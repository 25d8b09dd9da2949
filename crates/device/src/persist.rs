//! How the controller keeps its image a state the device could be in after a power cut, at
//! every instant (the order is described in `storage.rs`): after each command (and before each
//! erase inside one) the zones it changed are recorded; designs with their own maps (balloon,
//! tcssd) write their new flash bytes and journal what changed, and checkpoint their tables
//! when the journal grows and at close.
//! Opening an image loads all of it back and finishes what a kill interrupted.

use std::io;

use serde::{Deserialize, Serialize};

use crate::balloon::{BalloonDelta, SavedBalloon};
use crate::controller::Controller;
use crate::image::{decode_zone, encode_zone, RECORD_BYTES};
use crate::status::Status;
use crate::storage::Storage;
use crate::tcssd::{SavedTcssd, TcssdDelta};
use crate::zone::ZoneState;

/// A zone's record in a checkpoint or journal record (the image's 32 bytes, as numbers).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct ZoneRecord {
    state: u8,
    attributes: u8,
    padding: bool,
    wp: u64,
    bytes: u64,
}

impl ZoneRecord {
    fn encode(self) -> [u8; RECORD_BYTES as usize] {
        let mut rec = [0u8; RECORD_BYTES as usize];
        rec[0] = self.state;
        rec[1] = self.attributes;
        rec[2] = self.padding as u8;
        rec[8..16].copy_from_slice(&self.wp.to_le_bytes());
        rec[16..24].copy_from_slice(&self.bytes.to_le_bytes());
        rec
    }

    fn decode(rec: &[u8; RECORD_BYTES as usize]) -> ZoneRecord {
        ZoneRecord {
            state: rec[0],
            attributes: rec[1],
            padding: rec[2] == 1,
            wp: u64::from_le_bytes(rec[8..16].try_into().expect("8 bytes")),
            bytes: u64::from_le_bytes(rec[16..24].try_into().expect("8 bytes")),
        }
    }
}

/// A design's whole table and every zone record, as a checkpoint holds them.
#[derive(Serialize, Deserialize)]
struct Checkpoint {
    zones: Vec<ZoneRecord>,
    balloon: Option<SavedBalloon>,
    tcssd: Option<SavedTcssd>,
}

/// What one command (or the part of one before an erase) changed.
#[derive(Serialize, Deserialize)]
struct JournalRecord {
    zones: Vec<(u32, ZoneRecord)>,
    balloon: Option<BalloonDelta>,
    tcssd: Option<TcssdDelta>,
}

impl Controller {
    /// Does this design keep its own tables (journalled), or only zone records?
    fn has_tables(&self) -> bool {
        self.balloon.is_some() || self.tcssd.is_some()
    }

    /// Make the image hold what was applied so far. Called after every command that may change
    /// anything, and inside one before it erases (so the region may be written again). A
    /// failed image write fails the command with Internal Error and names the cause in
    /// [`image_error`](Self::image_error).
    pub(crate) fn persist_command(&mut self) -> Result<(), Status> {
        if !self.storage.is_image() || self.storage.is_read_only() {
            // Nothing to record: forget the marks, keeping the list's buffer.
            for &zi in &self.dirty_zones {
                self.zone_is_dirty[zi as usize] = false;
            }
            self.dirty_zones.clear();
            return Ok(());
        }
        let result = if self.has_tables() {
            self.journal_changes()
        } else {
            self.save_dirty_zones()
        };
        // With `sync` on, what a command changed survives the host's power loss before the
        // host hears of it, as a drive with power-loss protection promises.
        let result = result.and_then(|()| match &self.storage {
            Storage::Image(img) => img.sync_if_asked(),
            Storage::Memory(..) => Ok(()),
        });
        result.map_err(|e| {
            self.note_image_error("write", &e);
            Status::INTERNAL_ERROR
        })
    }

    /// An image read or write failed: Internal Error, with the cause kept for the user.
    pub(crate) fn image_failed(&mut self, what: &str, e: &io::Error) -> Status {
        self.note_image_error(what, e);
        if crate::image::is_ecc_error(e) {
            // Bytes changed since they were stored: what a drive's ECC reports.
            Status::UNRECOVERED_READ_ERROR
        } else {
            Status::INTERNAL_ERROR
        }
    }

    /// Balloon and tcssd keep a device in memory's bytes in their own regions, not in the
    /// zone store that counts them as they come: every 64 commands their bytes are added up
    /// against the budget, and past it the command fails and says why (at most 64 commands'
    /// bytes over it).
    pub(crate) fn check_memory_budget(&mut self) -> Result<(), Status> {
        if !self.has_tables() || !self.counters.commands.is_multiple_of(64) {
            return Ok(());
        }
        let Storage::Memory(_, _, _, budget) = &self.storage else {
            return Ok(());
        };
        let held = budget.held
            + self.balloon_resident_bytes().unwrap_or(0)
            + self.tcssd_resident_bytes().unwrap_or(0);
        if held <= budget.limit {
            return Ok(());
        }
        let e = io::Error::other(format!(
            "the device in memory holds {} of flash bytes, more than its memory budget of {} \
             (half this machine's memory unless set): keep it in an image file instead (fio: \
             --filename=IMAGE; ycsb: --image IMAGE)",
            crate::layout::human_bytes(held),
            crate::layout::human_bytes(budget.limit)
        ));
        Err(self.image_failed("write", &e))
    }

    pub(crate) fn note_image_error(&mut self, what: &str, e: &io::Error) {
        let hint = if e.raw_os_error() == Some(libc::ENOSPC) {
            " (the file system holding the image is full)"
        } else {
            ""
        };
        self.image_error = Some(match &self.storage {
            Storage::Image(img) => {
                format!("image {}: {what} failed: {e}{hint}", img.path().display())
            }
            Storage::Memory(..) => format!("{what} failed: {e}"),
        });
    }

    /// The last failure writing or reading the image (the cause of an Internal Error), once.
    pub fn image_error(&mut self) -> Option<String> {
        self.image_error.take()
    }

    fn save_dirty_zones(&mut self) -> io::Result<()> {
        let dirty = self.take_dirty_zones();
        let Storage::Image(img) = &self.storage else {
            return Ok(());
        };
        for (n, &zi) in dirty.iter().enumerate() {
            if let Err(e) = img.save_zone(zi as usize, &self.zones[zi as usize]) {
                // Mark the rest again so a later command retries them.
                for &z in &dirty[n..] {
                    self.mark_zone_dirty(z as usize);
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Balloon, tcssd: new flash bytes first, then one journal record of the zones and
    /// table entries changed; a checkpoint instead when the journal is full or large.
    fn journal_changes(&mut self) -> io::Result<()> {
        if self.tables_unrecorded {
            // A record was lost to an image error (its changes are no longer marked): only a
            // whole checkpoint records them now.
            self.checkpoint()?;
            self.tables_unrecorded = false;
            return Ok(());
        }
        let r = self.journal_record();
        if r.is_err() {
            self.tables_unrecorded = true;
        }
        r
    }

    fn journal_record(&mut self) -> io::Result<()> {
        let Storage::Image(img) = &mut self.storage else {
            return Ok(());
        };
        if let Some(b) = self.balloon.as_mut() {
            b.persist_bytes(img)?;
        }
        if let Some(t) = self.tcssd.as_mut() {
            t.persist_bytes(img)?;
        }
        let dirty = self.take_dirty_zones();
        let record = JournalRecord {
            zones: dirty
                .iter()
                .map(|&zi| {
                    let rec = encode_zone(&self.zones[zi as usize]);
                    (zi, ZoneRecord::decode(&rec))
                })
                .collect(),
            balloon: self.balloon.as_mut().and_then(|b| b.take_delta()),
            tcssd: self.tcssd.as_mut().and_then(|t| t.take_delta()),
        };
        if record.zones.is_empty() && record.balloon.is_none() && record.tcssd.is_none() {
            return Ok(());
        }
        let payload = serde_json::to_vec(&record).map_err(io::Error::other)?;
        let Storage::Image(img) = &mut self.storage else {
            return Ok(());
        };
        if !img.log_append(&payload)? || img.log_wants_checkpoint() {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Write the whole of a design's tables with every zone record (balloon, tcssd), or every
    /// zone record (the others).
    fn checkpoint(&mut self) -> io::Result<()> {
        let tables = self.has_tables();
        let Storage::Image(img) = &mut self.storage else {
            return Ok(());
        };
        if img.is_read_only() {
            return Ok(());
        }
        if !tables {
            self.take_dirty_zones();
            let Storage::Image(img) = &self.storage else {
                return Ok(());
            };
            for (zi, z) in self.zones.iter().enumerate() {
                img.save_zone(zi, z)?;
            }
            return img.sync_if_asked();
        }
        if let Some(b) = self.balloon.as_mut() {
            b.persist_bytes(img)?;
        }
        if let Some(t) = self.tcssd.as_mut() {
            t.persist_bytes(img)?;
        }
        self.take_dirty_zones();
        let table = Checkpoint {
            zones: self
                .zones
                .iter()
                .map(|z| ZoneRecord::decode(&encode_zone(z)))
                .collect(),
            balloon: self.balloon.as_mut().map(|b| b.saved()),
            tcssd: self.tcssd.as_mut().map(|t| t.saved()),
        };
        let json = serde_json::to_vec(&table).map_err(io::Error::other)?;
        let Storage::Image(img) = &mut self.storage else {
            return Ok(());
        };
        img.log_checkpoint(&json)
    }

    /// Save everything now (a checkpoint of a design's tables; every zone record), and sync
    /// when asked to. Flush does less: every command is recorded already.
    pub fn save_zone_table(&mut self) -> io::Result<()> {
        self.checkpoint()
    }

    /// Flush: what the host wrote is recorded already (capacitor-protected); with `sync` on,
    /// make it survive the host's own power loss too.
    pub(crate) fn persist_flush(&mut self) -> Result<(), Status> {
        let r = match &self.storage {
            Storage::Image(img) if !img.is_read_only() => img.sync_if_asked(),
            _ => Ok(()),
        };
        r.map_err(|e| {
            self.note_image_error("fdatasync", &e);
            Status::INTERNAL_ERROR
        })
    }

    /// The most zone bytes a device in memory may hold (default: half the machine's memory);
    /// a write past it fails with Internal Error and says why. No effect on an image.
    pub fn set_memory_budget(&mut self, bytes: u64) {
        self.storage.set_memory_budget(bytes);
    }

    /// Ask for an fdatasync of the image after every command that changed it (and at every
    /// checkpoint): then it survives the host machine's power loss too, not only the process's
    /// death, at the cost of one fdatasync per write. No-op in memory.
    pub fn set_sync(&mut self, on: bool) {
        if let Storage::Image(img) = &mut self.storage {
            img.sync = on;
        }
    }

    /// Load zone records, the newest checkpoint and the journal after it, and (CCZNS) the
    /// chunk records in the OOB. Returns the bytes the designs hold in partial program units.
    pub(crate) fn load_image(&mut self) -> io::Result<u64> {
        let tables = self.has_tables();
        let Storage::Image(img) = &mut self.storage else {
            return Ok(0);
        };
        let lba = self.layout.lba_bytes;
        let unit = self.layout.geometry.unit_bytes;
        if !tables {
            img.load_zones(&mut self.zones, lba)?;
            if self.config.design == crate::config::Design::Cczns {
                self.rebuild_from_oob()?;
            }
            return Ok(0);
        }
        let Some(crate::image::Logged {
            checkpoint: table,
            records,
        }) = img.log_load()?
        else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "no design table checkpoint (the image was not finished being created)",
            ));
        };
        let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
        let cp: Checkpoint =
            serde_json::from_slice(&table).map_err(|e| bad(format!("checkpoint: {e}")))?;
        if cp.zones.len() != self.zones.len() {
            return Err(bad("checkpoint: zone count differs".into()));
        }
        let mut recs: Vec<ZoneRecord> = cp.zones;
        let mut balloon_deltas = Vec::new();
        let mut tcssd_deltas = Vec::new();
        for (n, r) in records.iter().enumerate() {
            let r: JournalRecord =
                serde_json::from_slice(r).map_err(|e| bad(format!("journal record {n}: {e}")))?;
            for (zi, z) in r.zones {
                *recs
                    .get_mut(zi as usize)
                    .ok_or_else(|| bad(format!("journal record {n}: zone {zi}")))? = z;
            }
            balloon_deltas.extend(r.balloon);
            tcssd_deltas.extend(r.tcssd);
        }
        for (z, r) in self.zones.iter_mut().zip(&recs) {
            decode_zone(&r.encode(), z, lba)?;
        }
        let mut buffered = 0;
        if let (Some(b), Some(saved)) = (self.balloon.as_mut(), cp.balloon) {
            buffered += b.restore(saved, balloon_deltas, unit)?;
        }
        if let (Some(t), Some(saved)) = (self.tcssd.as_mut(), cp.tcssd) {
            buffered += t.restore(saved, tcssd_deltas, unit)?;
        }
        Ok(buffered)
    }

    /// A Reset records the zone Empty before it punches its bytes (or frees its segments); a
    /// kill between the two leaves an Empty zone with stale bytes. Finish those resets.
    pub(crate) fn finish_interrupted_resets(&mut self) -> io::Result<()> {
        for zi in 0..self.zones.len() {
            if self.zones[zi].state != ZoneState::Empty {
                continue;
            }
            if self.balloon.is_some() {
                if self.balloon_zone_holds_data(zi) {
                    self.balloon_reset(zi, 0);
                    self.persist_command().map_err(|_| {
                        io::Error::other(self.image_error.clone().unwrap_or_default())
                    })?;
                }
            } else if let Storage::Image(img) = &self.storage {
                if self.tcssd.is_none() && img.zone_touched(zi as u32)? {
                    img.punch_zone(zi as u32)?;
                }
            }
        }
        Ok(())
    }
}
