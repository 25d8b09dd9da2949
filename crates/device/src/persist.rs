//! The controller's side of keeping its image a state the device could be in after a power
//! cut (the order is described in `storage.rs`): a commit after each command (and before each
//! erase inside one; `design/persist.rs` writes the records), the memory budget, the sync
//! setting, and loading an image back, finishing what a kill interrupted.

use std::io;

use crate::controller::Controller;
use crate::design::persist as records;
use crate::status::Status;
use crate::storage::Storage;
use crate::zone::ZoneState;

impl Controller {
    /// Make the image hold what was applied so far. Called after every command that may change
    /// anything, and inside one before it erases (so the region may be written again). A
    /// failed image write fails the command with Internal Error and names the cause in
    /// [`image_error`](Self::image_error).
    pub(crate) fn persist_command(&mut self) -> Result<(), Status> {
        let (design, mut m) = self.split();
        m.commit(design)
    }

    /// An image read or write failed: Internal Error, with the cause kept for the user.
    pub(crate) fn image_failed(&mut self, what: &str, e: &io::Error) -> Status {
        self.split().1.image_failed(what, e)
    }

    /// Balloon and tcssd keep a device in memory's bytes in their own regions, not in the
    /// zone store that counts them as they come: every 64 commands their bytes are added up
    /// against the budget, and past it the command fails and says why (at most 64 commands'
    /// bytes over it).
    pub(crate) fn check_memory_budget(&mut self) -> Result<(), Status> {
        if self.design.tables().is_none() || !self.counters.commands.is_multiple_of(64) {
            return Ok(());
        }
        let Storage::Memory(_, _, _, budget) = &self.storage else {
            return Ok(());
        };
        let held = budget.held + self.design.resident_bytes();
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
        records::note_image_error(&self.storage, &mut self.image_error, what, e);
    }

    /// The last failure writing or reading the image (the cause of an Internal Error), once.
    pub fn image_error(&mut self) -> Option<String> {
        self.image_error.take()
    }

    /// Save everything now (a checkpoint of a design's tables; every zone record), and sync
    /// when asked to. Flush does less: every command is recorded already.
    pub fn save_zone_table(&mut self) -> io::Result<()> {
        let (design, mut m) = self.split();
        records::checkpoint(&mut m, design.tables())
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

    /// Load zone records, the newest checkpoint and the journal after it, or what the design
    /// rebuilds from the media (CCZNS: chunk records from the OOB). Returns the bytes the
    /// designs hold in partial program units.
    pub(crate) fn load_image(&mut self) -> io::Result<u64> {
        let lba = self.layout.lba_bytes;
        let unit = self.layout.geometry.unit_bytes;
        let mut zones = std::mem::take(&mut self.zones);
        let r = self.load_into(&mut zones, lba, unit);
        self.zones = zones;
        r
    }

    fn load_into(
        &mut self,
        zones: &mut [crate::zone::Zone],
        lba: u64,
        unit: u64,
    ) -> io::Result<u64> {
        let (design, mut m) = self.split();
        let Storage::Image(img) = &mut *m.storage else {
            return Ok(0);
        };
        match design.tables() {
            Some(tables) => records::load_tables(img, zones, tables, lba, unit),
            None => {
                img.load_zones(zones, lba)?;
                design.load(&mut m, zones)?;
                Ok(0)
            }
        }
    }

    /// A Reset records the zone Empty before it punches its bytes (or frees its segments); a
    /// kill between the two leaves an Empty zone with stale bytes. Finish those resets.
    pub(crate) fn finish_interrupted_resets(&mut self) -> io::Result<()> {
        for zi in 0..self.zones.len() {
            if self.zones[zi].state != ZoneState::Empty {
                continue;
            }
            let (design, mut m) = self.split();
            if design.finish_interrupted_reset(&mut m, zi)? {
                self.persist_command()
                    .map_err(|_| io::Error::other(self.image_error.clone().unwrap_or_default()))?;
            }
        }
        Ok(())
    }
}
