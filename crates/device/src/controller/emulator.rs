//! The emulator's own side of the controller: how it holds and models the payload, the
//! memo that spares the host CPU of decompressing a chunk again, and the host memory its
//! bytes take. None of it is NVMe and none of it changes virtual time.

use std::io;

use super::Controller;
use crate::design::cczns::memo::DecompressMemo;

impl Controller {
    /// Model the payload (issue 25): the compression engine draws stored sizes from `model`
    /// instead of running its codec (see `codec::modeled`); None runs the codec. Set before
    /// any data is written: chunks stored one way are read back the same way.
    pub fn set_payload_model(&mut self, model: Option<&codec::Modeled>) {
        self.engine.coder = codec::Coder::for_payload(model);
        // Its runs (values, padding) would otherwise take the memory real bytes take.
        self.storage.set_sparse(model.is_some());
        if model.is_some() {
            self.set_decompress_memo_bytes(0);
        }
    }

    /// Bytes of decompressed chunks this device may remember (0: none); see `memo.rs`. A
    /// modeled payload decodes as fast as the memo would copy: its memo is off.
    pub fn set_decompress_memo_bytes(&mut self, bytes: usize) {
        let zones = self.zones.len();
        let memo = if self.engine.coder.is_modeled() {
            DecompressMemo::off(zones)
        } else {
            DecompressMemo::new(zones, bytes)
        };
        if let Some(t) = self.design.chunk_table() {
            t.memo = memo;
        }
    }

    /// Decompressed reads' chunks found in the memo and not (emulator statistics).
    pub fn decompress_memo_hits(&mut self) -> (u64, u64) {
        self.design
            .chunk_table()
            .map_or((0, 0), |t| (t.memo.hits, t.memo.misses))
    }

    /// Host memory holding the device's bytes (memory storage only).
    pub fn resident_bytes(&self) -> u64 {
        self.storage.resident_bytes()
    }

    /// The most host memory the device's bytes have taken (memory storage only): what it
    /// stored and had not yet reset.
    pub fn peak_resident_bytes(&self) -> u64 {
        self.storage.peak_resident_bytes()
    }

    /// Host memory holding a design's own flash bytes (balloon, tcssd).
    pub fn design_resident_bytes(&self) -> u64 {
        self.design.resident_bytes()
    }

    /// The bytes the media holds for zone `zone` from byte `offset`, as stored (no design
    /// reads them back; for tests of what a design stores).
    #[doc(hidden)]
    pub fn peek_media(&mut self, zone: u32, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.storage.read(zone, offset, out, 0, &mut [])
    }
}
