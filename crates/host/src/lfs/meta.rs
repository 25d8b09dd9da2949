//! The metadata area seam: superblock, checkpoint pair, SIT, NAT and SSA are rewritten in
//! place, which a zoned main area cannot take. F2FS needs a conventional region for them
//! (conventional zones or a second device; FEMU's ZNS+ keeps them before the partition,
//! charged as plain page writes). [`MemMeta`] holds them in host memory without time; a
//! device-backed area goes behind the same trait.
#![allow(async_fn_in_trait)]

use std::cell::RefCell;
use std::collections::BTreeMap;

use super::BLOCK;

/// A randomly writable array of 4 KiB blocks.
pub trait MetaArea: 'static {
    /// Blocks it holds.
    fn blocks(&self) -> u64;
    /// Read block `addr` (never written: zeros).
    async fn read_block(&self, addr: u64, buf: &mut [u8]) -> Result<(), String>;
    /// Write block `addr`.
    async fn write_block(&self, addr: u64, data: &[u8]) -> Result<(), String>;
}

/// Metadata blocks in host memory: no time, nothing lost at a power cut (what was written
/// stays, as on a capacitor-backed conventional region).
pub struct MemMeta {
    blocks: u64,
    data: RefCell<BTreeMap<u64, Box<[u8]>>>,
}

impl MemMeta {
    pub fn new(blocks: u64) -> MemMeta {
        MemMeta {
            blocks,
            data: RefCell::new(BTreeMap::new()),
        }
    }
}

impl MetaArea for MemMeta {
    fn blocks(&self) -> u64 {
        self.blocks
    }
    async fn read_block(&self, addr: u64, buf: &mut [u8]) -> Result<(), String> {
        if addr >= self.blocks || buf.len() != BLOCK {
            return Err(format!("metadata read of block {addr} out of range"));
        }
        match self.data.borrow().get(&addr) {
            Some(b) => buf.copy_from_slice(b),
            None => buf.fill(0),
        }
        Ok(())
    }
    async fn write_block(&self, addr: u64, data: &[u8]) -> Result<(), String> {
        if addr >= self.blocks || data.len() != BLOCK {
            return Err(format!("metadata write of block {addr} out of range"));
        }
        // All-zero blocks read back the same without being held.
        if data.iter().all(|&b| b == 0) {
            self.data.borrow_mut().remove(&addr);
        } else {
            self.data.borrow_mut().insert(addr, data.into());
        }
        Ok(())
    }
}
