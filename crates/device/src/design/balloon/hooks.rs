//! Balloon-ZNS behind the design seam: which of its operations each controller hook runs,
//! and its tables' place in the image's journal.

use std::io;

use sim::SimInstant;

use super::persist::{BalloonDelta, SavedBalloon};
use super::{Balloon, PAGE};
use crate::design::persist::TypedTables;
use crate::design::{Design, Media, Tables, ZoneRead, ZoneWrite};
use crate::identify::VendorCaps;
use crate::status::Status;
use crate::storage::ImageFile;

impl Design for Balloon {
    fn name(&self) -> &'static str {
        "balloon"
    }

    fn vendor_caps(&self) -> VendorCaps {
        VendorCaps::default()
    }

    /// Compress the pages and make sure flash has room (reclaiming residue space if it must).
    fn prepare_write(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<(), Status> {
        self.prepare(m, w.zone, w.data, w.ready.as_ns())
    }

    fn write_zone(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status> {
        let done = self.write(m, w.zone, w.data, w.ready.as_ns());
        Ok(SimInstant::from_ns(done))
    }

    /// A zone written in full: its residues may move home.
    fn zone_written(
        &mut self,
        m: &mut Media,
        w: &ZoneWrite,
        done: SimInstant,
        full: bool,
    ) -> Result<(), Status> {
        if full {
            self.migrate(m, w.zone, done.as_ns());
        }
        Ok(())
    }

    fn read_zone(&mut self, m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status> {
        let done = self.read(m, r.zone, r.offset / PAGE, r.data, r.ready.as_ns())?;
        Ok(SimInstant::from_ns(done))
    }

    fn zone_left_open(&mut self, m: &mut Media, zone: usize) {
        self.release_extra(m, zone);
    }

    /// Nothing to pad (zones take sub-superblocks on demand); the zone is written in full, so
    /// its residues may move home.
    fn finish_zone(&mut self, m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant {
        self.migrate(m, zone, ready.as_ns());
        ready
    }

    /// The zone's bytes live in segments, freed (and erased) here, not punched by zone.
    fn reset_zone(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
        _recorded: bool,
    ) -> (SimInstant, io::Result<()>) {
        let done = self.reset(m, zone, ready.as_ns());
        (SimInstant::from_ns(done), Ok(()))
    }

    fn tables(&mut self) -> Option<&mut dyn Tables> {
        Some(self)
    }

    fn finish_interrupted_reset(&mut self, m: &mut Media, zone: usize) -> io::Result<bool> {
        if !self.zone_holds_data(zone) {
            return Ok(false);
        }
        self.reset(m, zone, 0);
        Ok(true)
    }

    fn table_dram_bytes(&self) -> u64 {
        self.table_bytes()
    }

    fn resident_bytes(&self) -> u64 {
        self.segments
            .iter()
            .flatten()
            .map(|s| s.region.bytes.resident())
            .sum()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl TypedTables for Balloon {
    type Saved = SavedBalloon;
    type Delta = BalloonDelta;

    fn persist_bytes(&mut self, img: &ImageFile) -> io::Result<()> {
        Balloon::persist_bytes(self, img)
    }

    fn take_delta(&mut self) -> Option<BalloonDelta> {
        Balloon::take_delta(self)
    }

    fn saved(&mut self) -> SavedBalloon {
        Balloon::saved(self)
    }

    fn restore(
        &mut self,
        saved: SavedBalloon,
        deltas: Vec<BalloonDelta>,
        unit: u64,
    ) -> io::Result<u64> {
        Balloon::restore(self, saved, deltas, unit)
    }
}
