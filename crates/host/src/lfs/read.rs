//! File reads without the file-system lock, as F2FS's read path (`f2fs_mpage_readpages` takes
//! page locks only): a read runs beside writes, GC and checkpoints and contends with them for
//! host cores, the link and the chips (§2.3: the host's copies are "disturbed by user IO
//! requests"). What keeps it right without the lock:
//! * an address is looked up and read from the device; when the read is back the address is
//!   looked up again, and a block that moved meanwhile (GC, an overwrite) is read again;
//! * a block whose section has writes not on the device yet (queued, being written, or a
//!   zone_compaction's destination) is read under the lock after a flush, as before;
//! * the read makes room by evicting clean pages only and never writes a page back (a locked
//!   call changes a page it loaded before it next awaits, so losing a clean page between its
//!   awaits costs it nothing); a page read goes into the cache only if no one put it there
//!   meanwhile and a clean page made room for it.
//!
//! A read is atomic per 4 KiB page, not per call, as Linux's for regular files.

use super::fs::Lfs;
use super::meta::MetaArea;
use super::node::{Nid, NULL};
use super::BLOCK;
use crate::fs::FsError;
use crate::zoned::ZonedBackend;

/// Tries of a block that keeps moving before it is read under the lock.
const TRIES: u32 = 3;

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    /// Bytes `offset..offset + out.len()` of file `ino` into `out` (within its size).
    pub(super) async fn read_file(
        &self,
        ino: Nid,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), FsError> {
        if out.is_empty() {
            return Ok(());
        }
        let last = (offset + out.len() as u64 - 1) / BLOCK as u64;
        let mut idx = offset / BLOCK as u64;
        let mut tries = 0;
        while idx <= last {
            let next = if tries >= TRIES {
                self.read_locked(ino, idx, offset, out).await?
            } else {
                self.read_run(ino, idx, last, offset, out).await?
            };
            tries = if next == idx { tries + 1 } else { 0 };
            idx = next;
        }
        Ok(())
    }

    /// Blocks from `idx` (up to `last`) into `out`: a cached page, a hole, or one device read
    /// of consecutive blocks. Returns the next block to read (`idx` again if it moved while
    /// it was read).
    async fn read_run(
        &self,
        ino: Nid,
        idx: u64,
        last: u64,
        offset: u64,
        out: &mut [u8],
    ) -> Result<u64, FsError> {
        let (addr, run) = {
            let mut st = self.st.borrow_mut();
            if let Some(p) = st.cache.get((ino, idx)) {
                copy_block(out, offset, idx, &p.data);
                st.counters.cache_hits += 1;
                return Ok(idx + 1);
            }
            let addr = st.data_addr(ino, idx);
            if addr == NULL {
                copy_block(out, offset, idx, &[0; BLOCK]);
                return Ok(idx + 1);
            }
            if st.is_unwritten(addr) {
                (NULL, 0) // read under the lock, below
            } else {
                (addr, st.read_run(ino, idx, last, addr))
            }
        };
        if run == 0 {
            return self.read_locked(ino, idx, offset, out).await;
        }
        self.page_alloc_cost(run).await;
        let mut data = vec![0u8; run as usize * BLOCK];
        if self
            .dev
            .read(addr as u64 * BLOCK as u64, &mut data)
            .await
            .is_err()
        {
            // A block that moved may have gone from a zone since reset: under the lock the
            // read is of where the block is now, and its error is the caller's.
            return self.read_locked(ino, idx, offset, out).await;
        }
        let mut st = self.st.borrow_mut();
        for k in 0..run {
            let i = idx + k;
            if let Some(p) = st.cache.get((ino, i)) {
                copy_block(out, offset, i, &p.data);
                st.counters.cache_hits += 1;
                continue;
            }
            if st.data_addr(ino, i) != addr + k as u32 {
                st.counters.read_retries += 1;
                return Ok(i);
            }
            let page = &data[k as usize * BLOCK..(k as usize + 1) * BLOCK];
            copy_block(out, offset, i, page);
            st.counters.cache_misses += 1;
            st.evict_clean(1);
            if st.cache.len() < st.cache.capacity() {
                st.cache.insert((ino, i), page.into(), false);
            }
        }
        Ok(idx + run)
    }

    /// Block `idx` into `out` under the file-system lock (queued writes flushed first).
    async fn read_locked(
        &self,
        ino: Nid,
        idx: u64,
        offset: u64,
        out: &mut [u8],
    ) -> Result<u64, FsError> {
        let _g = self.lock.lock().await;
        self.st.borrow_mut().counters.reads_locked += 1;
        self.load_page(ino, idx, true).await?;
        let mut st = self.st.borrow_mut();
        match st.cache.get((ino, idx)) {
            Some(p) => copy_block(out, offset, idx, &p.data),
            None => copy_block(out, offset, idx, &[0; BLOCK]),
        }
        Ok(idx + 1)
    }
}

/// The part of block `idx` (`page`) that falls in `out`, which holds the file's bytes from
/// `offset`.
fn copy_block(out: &mut [u8], offset: u64, idx: u64, page: &[u8]) {
    let start = idx * BLOCK as u64;
    let from = start.max(offset);
    let to = (start + BLOCK as u64).min(offset + out.len() as u64);
    if from >= to {
        return;
    }
    let (a, b) = ((from - start) as usize, (to - start) as usize);
    let (c, d) = ((from - offset) as usize, (to - offset) as usize);
    out[c..d].copy_from_slice(&page[a..b]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_block_takes_the_overlap_only() {
        let page: Vec<u8> = (0..BLOCK).map(|i| i as u8).collect();
        // out holds bytes 4000..4200 of the file: the last 96 of block 0, 104 of block 1.
        let mut out = vec![0xffu8; 200];
        copy_block(&mut out, 4000, 0, &page);
        assert_eq!(&out[..96], &page[4000..4096]);
        assert!(out[96..].iter().all(|&b| b == 0xff));
        copy_block(&mut out, 4000, 1, &page);
        assert_eq!(&out[96..], &page[..104]);
        // A block outside the range changes nothing.
        let before = out.clone();
        copy_block(&mut out, 4000, 2, &page);
        assert_eq!(out, before);
    }
}
