//! The transparently compressing SSD behind the design seam: a conventional namespace (zone
//! commands are Invalid Opcode), Deallocate and DULBE, and its map's place in the image's
//! journal.

use std::io;

use sim::SimInstant;

use super::{SavedTcssd, Tcssd, TcssdDelta};
use crate::config::DeviceConfig;
use crate::design::persist::TypedTables;
use crate::design::{Design, Media, Tables, ZoneRead, ZoneWrite};
use crate::identify::{CommandSet, VendorCaps};
use crate::layout::Layout;
use crate::status::Status;
use crate::storage::ImageFile;

impl Tcssd {
    /// The FTL a configuration describes; `journal` on an image (see [`Tcssd::journal`]).
    pub(crate) fn from_config(config: &DeviceConfig, layout: &Layout, journal: bool) -> Tcssd {
        let t = &config.tcssd;
        let mut tcssd = Tcssd::new(
            layout.tcssd_superblocks.expect("tcssd layout"),
            layout.zone_capacity_bytes(),
            layout.geometry.dies,
            t.gc_free_superblocks,
            layout.namespace_lbas(),
            t.map_entry_bytes,
        );
        tcssd.journal = journal;
        tcssd
    }
}

impl Design for Tcssd {
    fn name(&self) -> &'static str {
        "tcssd"
    }

    fn command_set(&self) -> CommandSet {
        CommandSet::Nvm
    }

    fn vendor_caps(&self) -> VendorCaps {
        VendorCaps {
            compressed_io: false,
            deallocate: true,
            ..VendorCaps::default()
        }
    }

    // A conventional namespace: the controller never sends zone operations here.
    fn write_zone(&mut self, _m: &mut Media, _w: &ZoneWrite) -> Result<SimInstant, Status> {
        Err(Status::INVALID_OPCODE)
    }

    fn read_zone(&mut self, _m: &mut Media, _r: &mut ZoneRead) -> Result<SimInstant, Status> {
        Err(Status::INVALID_OPCODE)
    }

    fn finish_zone(&mut self, _m: &mut Media, _zone: usize, ready: SimInstant) -> SimInstant {
        ready
    }

    fn reset_zone(
        &mut self,
        _m: &mut Media,
        _zone: usize,
        ready: SimInstant,
        _recorded: bool,
    ) -> (SimInstant, io::Result<()>) {
        (ready, Ok(()))
    }

    fn write_blocks(
        &mut self,
        m: &mut Media,
        slba: u64,
        data: &[u8],
        ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        let done = self.write(m, ready.as_ns(), slba, data)?;
        Ok(SimInstant::from_ns(done))
    }

    fn read_blocks(
        &mut self,
        m: &mut Media,
        slba: u64,
        data: &mut [u8],
        ready: SimInstant,
    ) -> Result<SimInstant, Status> {
        let done = self.read(m, ready.as_ns(), slba, data)?;
        Ok(SimInstant::from_ns(done))
    }

    fn deallocate(&mut self, m: &mut Media, slba: u64, end: u64) {
        Tcssd::deallocate(self, m, slba, end);
    }

    fn tables(&mut self) -> Option<&mut dyn Tables> {
        Some(self)
    }

    /// No zones in the device, nothing a reset leaves behind.
    fn finish_interrupted_reset(&mut self, _m: &mut Media, _zone: usize) -> io::Result<bool> {
        Ok(false)
    }

    fn table_dram_bytes(&self) -> u64 {
        self.counters.map_bytes
    }

    fn resident_bytes(&self) -> u64 {
        self.sbs.iter().map(|s| s.region.bytes.resident()).sum()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl TypedTables for Tcssd {
    type Saved = SavedTcssd;
    type Delta = TcssdDelta;

    fn persist_bytes(&mut self, img: &ImageFile) -> io::Result<()> {
        Tcssd::persist_bytes(self, img)
    }

    fn take_delta(&mut self) -> Option<TcssdDelta> {
        Tcssd::take_delta(self)
    }

    fn saved(&mut self) -> SavedTcssd {
        Tcssd::saved(self)
    }

    fn restore(
        &mut self,
        saved: SavedTcssd,
        deltas: Vec<TcssdDelta>,
        unit: u64,
    ) -> io::Result<u64> {
        Tcssd::restore(self, saved, deltas, unit)
    }
}
