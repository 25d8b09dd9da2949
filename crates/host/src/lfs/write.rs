//! Buffered writes without the file-system lock, as F2FS's `f2fs_write_begin`/`write_end`: a
//! write copies its bytes into page-cache pages and returns; the blocks are allocated and
//! written later by writeback (the flusher, a throttled writer, fsync, a checkpoint). F2FS
//! takes no file-system-wide lock on this path except
//! * `f2fs_balance_fs`'s GC lock, when free sections are short (or a checkpoint is due): the
//!   write runs foreground GC under the lock first;
//! * `f2fs_lock_op` while a checkpoint blocks operations: the write waits for it to end;
//! * page reclaim, when no clean page can make room: under the lock (it writes pages back).
//!
//! So a write runs beside GC, threaded-logging closes and other files' writeback until it
//! needs free space or the dirty limit throttles it (`writeback.rs`). What keeps it right:
//! every change a write makes (a page's bytes and dirty bit, the file's size) happens between
//! two awaits, and the locked paths that write pages back take a page's bytes and clear its
//! dirty bit in one step, so a page dirtied again meanwhile stays dirty; reclaim and GC drop
//! clean pages only.

use super::fs::{Lfs, State};
use super::meta::MetaArea;
use super::node::{Nid, NULL};
use super::BLOCK;
use crate::fs::FsError;
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    /// Bytes `data` at `offset` of file `ino` into its cached pages (the caller checked the
    /// range).
    pub(super) async fn write_file(
        &self,
        ino: Nid,
        offset: u64,
        data: &[u8],
    ) -> Result<(), FsError> {
        if self.st.borrow().balance_due() {
            let _g = self.lock.lock().await;
            self.balance_fs().await?;
        }
        self.st.borrow_mut().counters.user_bytes += data.len() as u64;
        let mut done = 0;
        while done < data.len() {
            let pos = offset + done as u64;
            let (idx, at) = (pos / BLOCK as u64, (pos % BLOCK as u64) as usize);
            let len = (BLOCK - at).min(data.len() - done);
            if self.st.borrow().cp_running {
                // A checkpoint holds operations off (F2FS's `f2fs_lock_op`); it runs under
                // the lock, so taking the lock waits for its end.
                self.st.borrow_mut().counters.writes_held_by_cp += 1;
                drop(self.lock.lock().await);
            }
            // No await between the check above and the change.
            if self
                .st
                .borrow_mut()
                .put_page(ino, idx, at, &data[done..done + len])?
            {
                done += len;
            } else {
                self.fill_page(ino, idx, len < BLOCK).await?;
            }
        }
        Ok(())
    }

    /// Page (`ino`, `idx`) into the cache for a write: its old contents read without the
    /// lock when a partial write needs them and a clean page makes room; otherwise under the
    /// lock, writing dirty pages back to make room.
    async fn fill_page(&self, ino: Nid, idx: u64, partial: bool) -> Result<(), FsError> {
        let need_old = self.st.borrow().needs_old(ino, idx, partial);
        if need_old {
            let mut old = vec![0u8; BLOCK];
            self.read_file(ino, idx * BLOCK as u64, &mut old).await?;
            if self.st.borrow().cache.contains((ino, idx)) {
                return Ok(());
            }
        }
        let _g = self.lock.lock().await;
        self.st.borrow_mut().counters.writes_reclaim += 1;
        self.load_page(ino, idx, need_old).await
    }
}

impl State {
    /// Whether `balance_fs` has work: a periodic checkpoint due, node ids short, or too few
    /// free sections (F2FS's `has_not_enough_free_secs`).
    pub fn balance_due(&self) -> bool {
        self.periodic_cp_due() || self.nids_low() || self.not_enough_free_secs(0, 0)
    }

    /// Whether a `partial` write of page (`ino`, `idx`) needs its old contents: the page is
    /// within the file and has a block (a whole page, one past the end or a hole needs none).
    fn needs_old(&self, ino: Nid, idx: u64, partial: bool) -> bool {
        partial
            && idx * (BLOCK as u64) < self.inode_size(ino).unwrap_or(0)
            && self.data_addr(ino, idx) != NULL
    }

    /// `bytes` at byte `at` of page (`ino`, `idx`) of regular file `ino`, if that needs no
    /// I/O: the page is cached, or it needs no old contents (a whole page, past the end of
    /// the file, or a hole) and a clean page makes room. `Ok(false)`: it needs I/O first.
    pub fn put_page(
        &mut self,
        ino: Nid,
        idx: u64,
        at: usize,
        bytes: &[u8],
    ) -> Result<bool, FsError> {
        // Removed while the writer waited.
        if !matches!(self.nodes.get(&ino).and_then(|e| e.node.inode()), Some(i) if !i.is_dir) {
            return Err(FsError::NotFound(format!("inode {ino}")));
        }
        if self.cache.get((ino, idx)).is_some() {
            self.counters.cache_hits += 1;
        } else {
            if self.needs_old(ino, idx, bytes.len() < BLOCK) {
                return Ok(false);
            }
            self.evict_clean(1);
            if self.cache.len() >= self.cache.capacity() {
                return Ok(false);
            }
            self.cache.insert((ino, idx), vec![0; BLOCK].into(), false);
        }
        self.dirty_page(ino, idx)?;
        if let Some(p) = self.cache.get((ino, idx)) {
            p.data[at..at + bytes.len()].copy_from_slice(bytes);
        }
        // The size grows page by page: a write cut short by ENOSPC keeps what it wrote.
        let upto = idx * BLOCK as u64 + (at + bytes.len()) as u64;
        if let Some(i) = self.nodes.get_mut(&ino).and_then(|e| e.node.inode_mut()) {
            if upto > i.size {
                i.size = upto;
                self.mark_dirty(ino);
            }
        }
        Ok(true)
    }
}
