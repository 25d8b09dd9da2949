//! Block I/O of the file system: pages read into the cache, dirty pages written back,
//! node blocks written, block allocation in the six logs (a log's next free section, or with
//! threaded logging a TL_open'ed dirty section chosen by hybrid segment recycling), the queue
//! of writes issued in address order (merged into requests of `max_write_bytes`), and fsync.

use super::fs::{io_err, Lfs, NO_SEC};
use super::meta::MetaArea;
use super::node::{Blk, Nid, DENT_MARK, FSYNC_MARK, NULL};
use super::seg::hsr_choice;
use super::{LogType, BLOCK};
use crate::fs::FsError;
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    /// Make room for `n` more pages: evict clean pages least recently used first; a dirty
    /// one has its inode's dirty pages written back first.
    pub(super) async fn make_room(&self, n: usize) -> Result<(), FsError> {
        loop {
            let victim = {
                let st = self.st.borrow();
                if st.cache.len() + n <= st.cache.capacity() {
                    return Ok(());
                }
                match st.cache.oldest() {
                    Some(k) => (k, st.cache.state(k) == Some(true)),
                    None => return Ok(()),
                }
            };
            if victim.1 {
                self.writeback_inode(victim.0 .0, false).await?;
                self.flush().await?;
            }
            // A buffered write may have dirtied it again meanwhile: then it stays.
            let mut st = self.st.borrow_mut();
            if st.cache.state(victim.0) == Some(false) {
                st.cache.remove(victim.0);
            }
        }
    }

    /// The host's cost of allocating `n` page-cache pages for reads (A.4-11).
    pub(super) async fn page_alloc_cost(&self, n: u64) {
        let ns = self.st.borrow().cfg.page_alloc_ns * n;
        if ns > 0 {
            self.dev.sim().sleep(sim::SimDuration::from_ns(ns)).await;
        }
    }

    /// Page (`ino`, `idx`) into the cache: read from its block when `need_old` and it has
    /// one, zeros otherwise.
    pub(super) async fn load_page(
        &self,
        ino: Nid,
        idx: u64,
        need_old: bool,
    ) -> Result<(), FsError> {
        {
            let mut st = self.st.borrow_mut();
            if st.cache.get((ino, idx)).is_some() {
                st.counters.cache_hits += 1;
                return Ok(());
            }
        }
        self.make_room(1).await?;
        let addr = if need_old {
            self.st.borrow().data_addr(ino, idx)
        } else {
            NULL
        };
        let mut buf = vec![0u8; BLOCK];
        if addr != NULL {
            self.flush().await?;
            self.page_alloc_cost(1).await;
            self.dev
                .read(addr as u64 * BLOCK as u64, &mut buf)
                .await
                .map_err(io_err)?;
            self.st.borrow_mut().counters.cache_misses += 1;
        }
        // A buffered write may have put the page there meanwhile: it is newer.
        let mut st = self.st.borrow_mut();
        if !st.cache.contains((ino, idx)) {
            st.cache.insert((ino, idx), buf.into(), false);
        }
        Ok(())
    }

    /// Issue the queued writes in address order, consecutive blocks of a zone merged.
    pub(super) async fn flush(&self) -> Result<(), FsError> {
        let (mut pending, max) = {
            let mut st = self.st.borrow_mut();
            let max = (st.cfg.max_write_bytes as usize / BLOCK).max(1);
            (std::mem::take(&mut st.pending), max)
        };
        let zone_blocks = self.st.borrow().geo.zone_blocks;
        pending.sort_by_key(|p| p.0);
        let mut i = 0;
        while i < pending.len() {
            let start = pending[i].0;
            let mut j = i + 1;
            while j < pending.len()
                && j - i < max
                && pending[j].0 == start + (j - i) as u32
                && pending[j].0 / zone_blocks == start / zone_blocks
            {
                j += 1;
            }
            let mut buf = Vec::with_capacity((j - i) * BLOCK);
            for p in &pending[i..j] {
                buf.extend_from_slice(&p.1);
            }
            let r = self.dev.write(start as u64 * BLOCK as u64, &buf).await;
            // On the device now (or, after an error, never to be: no reader waits for them).
            let upto = if r.is_ok() { j } else { pending.len() };
            {
                let mut st = self.st.borrow_mut();
                for p in &pending[i..upto] {
                    st.mark_unwritten(p.0, -1);
                }
            }
            r.map_err(io_err)?;
            i = j;
        }
        // Threaded logs left since the last flush: closed once their last writes are in.
        let closing = std::mem::take(&mut self.st.borrow_mut().tl_closing);
        for sec in closing {
            self.close_tl(sec).await?;
        }
        let finishing = std::mem::take(&mut self.st.borrow_mut().finishing);
        for sec in finishing {
            self.dev
                .zone_action(sec, device::ZoneAction::Finish)
                .await
                .map_err(io_err)?;
        }
        Ok(())
    }

    /// The block log `ty` will write next (a node footer's `next_blkaddr`).
    pub(super) fn peek(&self, ty: LogType) -> Blk {
        let st = self.st.borrow();
        let l = st.logs[ty as usize];
        if l.sec == NO_SEC {
            return NULL;
        }
        let off = if l.tl {
            st.tl_next(l.sec, l.next)
        } else {
            Some(l.next).filter(|&o| o < st.geo.sec_blocks)
        };
        off.map_or(NULL, |o| st.geo.blk(l.sec, o))
    }

    /// The next block of log `ty`; a new section when the current one is used up (taken at
    /// once, so the log always knows its next block).
    pub(super) async fn alloc_block(&self, ty: LogType) -> Result<Blk, FsError> {
        for _ in 0..3 {
            let got = {
                let mut st = self.st.borrow_mut();
                let l = st.logs[ty as usize];
                let off = if l.sec == NO_SEC {
                    None
                } else if l.tl {
                    st.tl_next(l.sec, l.next)
                } else {
                    Some(l.next).filter(|&o| o < st.geo.sec_blocks)
                };
                off.map(|o| {
                    st.logs[ty as usize].next = o + 1;
                    if l.tl {
                        st.counters.tl_blocks += 1;
                    }
                    st.geo.blk(l.sec, o)
                })
            };
            if let Some(b) = got {
                if self.peek(ty) == NULL {
                    // Take the next section now; if none is free, the next call retries.
                    let _ = self.new_section(ty).await;
                }
                return Ok(b);
            }
            self.new_section(ty).await?;
        }
        Err(FsError::NoSpace)
    }

    /// Log `ty` leaves its section for a free one, or (threaded logging, when free space is
    /// low and hybrid segment recycling says so) a dirty one of its type, TL_open'ed.
    pub(super) async fn new_section(&self, ty: LogType) -> Result<(), FsError> {
        self.flush().await?;
        let old = self.st.borrow().logs[ty as usize];
        if old.sec != NO_SEC && old.tl {
            // The block just allocated there is not queued yet: close at the next flush.
            self.st.borrow_mut().tl_closing.push(old.sec);
        }
        // A zone whose capacity is not whole segments keeps a tail no log writes: finish it
        // so it holds no open or active resource.
        let cap = self.dev.zone_capacity_bytes() / BLOCK as u64;
        if old.sec != NO_SEC && !old.tl && cap > self.st.borrow().geo.sec_blocks as u64 {
            // After the block just allocated there is written: at the next flush.
            self.st.borrow_mut().finishing.push(old.sec);
        }
        let choice = {
            let mut st = self.st.borrow_mut();
            if old.sec != NO_SEC {
                st.sit.close_sec(old.sec);
                st.logs[ty as usize].sec = NO_SEC;
            }
            let demand = st.demand_secs();
            let free = st.sit.free_secs();
            let need_ssr = free <= demand + st.geo.reserved_secs + 1;
            if st.cfg.threaded_logging
                && self.dev.vendor_caps().tl_open
                && ty != LogType::ColdData
                && need_ssr
            {
                let forced = free <= demand + st.geo.reserved_secs / 2;
                let ssr = st.sit.ssr_victim(ty);
                let lfs = st.sit.greedy_victim().map(|s| {
                    let sec = &st.sit.secs[s as usize];
                    (sec.valid as u64, !sec.ty.is_node())
                });
                let c = hsr_choice(&st.cfg, ssr.map(|s| s.1 as u64), lfs, forced);
                let pick = ssr.filter(|s| c.threaded && s.0 != old.sec).map(|s| s.0);
                if pick.is_some() {
                    st.counters.tl_opens_forced += forced as u64;
                    st.counters.tl_greedy_valid += lfs.map_or(0, |l| l.0);
                }
                pick
            } else {
                None
            }
        };
        if let Some(sec) = choice {
            let mut map = self.st.borrow().sit.tl_bitmap(sec);
            // The device takes a bit per block of the zone capacity; blocks past the last
            // whole segment are never written here: invalid.
            let cap_blocks = self.dev.zone_capacity_bytes() / BLOCK as u64;
            map.resize(map.len().max(cap_blocks.div_ceil(8) as usize), 0);
            if self.dev.tl_open(sec, &map, false).await.is_ok() {
                let mut st = self.st.borrow_mut();
                st.sit.open_sec(sec, ty);
                st.tl_maps.insert(sec, map);
                st.logs[ty as usize] = super::fs::Log {
                    sec,
                    next: 0,
                    tl: true,
                };
                st.counters.tl_opens += 1;
                st.counters.tl_plug_blocks += st.sit.ckpt_valid(sec) as u64;
                st.counters.sections_reclaimed_tl += 1;
                return Ok(());
            }
        }
        let mut st = self.st.borrow_mut();
        let sec = st.sit.pick_free(0).ok_or(FsError::NoSpace)?;
        st.sit.open_sec(sec, ty);
        st.logs[ty as usize] = super::fs::Log {
            sec,
            next: 0,
            tl: false,
        };
        Ok(())
    }

    /// Close a TL-open zone (the device plugs it to its end).
    pub(super) async fn close_tl(&self, sec: u32) -> Result<(), FsError> {
        let t = self.dev.sim().now();
        self.dev.tl_open(sec, &[], true).await.map_err(io_err)?;
        let mut st = self.st.borrow_mut();
        st.counters.tl_close_ns += self.dev.sim().now().since(t).as_ns();
        st.counters.tl_closes += 1;
        st.tl_maps.remove(&sec);
        Ok(())
    }

    /// Write back every dirty page of `ino` (its blocks allocated in its log, its node
    /// pointers moved); the writes are queued. `balance`: a regular file's page written back
    /// by the flusher, a throttled writer or fsync is followed by `balance_fs` (periodic
    /// checkpoint, foreground GC), as F2FS's `__write_data_page` calls `f2fs_balance_fs`
    /// after each page not written for reclaim; dentry pages (controlled by checkpoints),
    /// reclaim and checkpoints' own writeback do not.
    pub(super) async fn writeback_inode(&self, ino: Nid, balance: bool) -> Result<(), FsError> {
        let (keys, ty) = {
            let st = self.st.borrow();
            let ty = if st.is_dir(ino) {
                LogType::HotData
            } else {
                LogType::WarmData
            };
            (st.cache.dirty_of(ino), ty)
        };
        let balance = balance && ty == LogType::WarmData;
        for (_, idx) in keys {
            // A compaction run by an earlier page's balance may have written this one.
            if self.st.borrow().cache.state((ino, idx)) != Some(true) {
                continue;
            }
            let b = self.alloc_block(ty).await?;
            {
                let mut st = self.st.borrow_mut();
                let (nid, slot) = st.ensure_dnode(ino, idx)?;
                let old = st.nodes[&nid].node.addrs()[slot];
                if old == NULL {
                    st.new_pages -= 1;
                } else {
                    st.sit.invalidate(old);
                }
                st.sit.set_valid(b, (nid, slot as u16));
                if let Some(e) = st.nodes.get_mut(&nid) {
                    e.node.addrs_mut()[slot] = b;
                }
                st.mark_dirty(nid);
                if ty == LogType::HotData {
                    st.dirty_dents -= 1;
                }
                st.cache.set_dirty((ino, idx), false);
                let data = st.cache.peek((ino, idx)).map(|p| p.data.to_vec());
                st.queue_write(b, data.unwrap_or_else(|| vec![0; BLOCK]));
                st.counters.log_blocks[ty as usize] += 1;
            }
            if balance {
                // Boxed: balance_fs's checkpoint writes dentry pages back through here.
                Box::pin(self.balance_fs()).await?;
            }
        }
        Ok(())
    }

    /// Write node `nid` to log `ty` with footer `marks`; the write is queued.
    pub(super) async fn write_node(
        &self,
        nid: Nid,
        ty: LogType,
        marks: u32,
    ) -> Result<(), FsError> {
        let b = self.alloc_block(ty).await?;
        let next = self.peek(ty);
        let mut st = self.st.borrow_mut();
        let cp_ver = st.cp_ver;
        let Some(e) = st.nodes.get_mut(&nid) else {
            return Ok(());
        };
        let old = e.addr;
        e.addr = b;
        let was_dirty = std::mem::replace(&mut e.dirty, false);
        let block = e.node.encode(marks, cp_ver, next);
        if was_dirty {
            st.dirty_nodes.remove(&nid);
        }
        if old != NULL {
            st.sit.invalidate(old);
        }
        st.sit.set_valid(b, (nid, 0));
        st.nat_dirty.insert(nid);
        st.queue_write(b, block);
        st.counters.log_blocks[ty as usize] += 1;
        Ok(())
    }

    /// fsync of file `ino` (F2FS `f2fs_do_sync_file`): its dirty data, then, unless a
    /// checkpoint is needed (`need_do_checkpoint`), its dirty nodes to the warm node log, the
    /// last with the fsync mark and the inode with the dentry mark if it is not checkpointed.
    pub(super) async fn do_fsync(&self, ino: Nid) -> Result<(), FsError> {
        self.writeback_inode(ino, true).await?;
        self.flush().await?;
        let need_cp = {
            let st = self.st.borrow();
            let e = &st.nodes[&ino];
            let pino = e.node.inode().map_or(0, |i| i.pino);
            let parent_cp = st.nodes.get(&pino).is_some_and(|p| p.ckpt_addr != NULL);
            // space_for_roll_forward: the blocks written since the checkpoint fit.
            let room = st.sit.valid_total + st.new_pages < st.geo.user_blocks();
            st.is_dir(ino) || st.need_cp || !parent_cp || !room
        };
        if need_cp {
            return self.checkpoint(super::cp::Cause::Fsync).await;
        }
        let dirty: Vec<Nid> = {
            let st = self.st.borrow();
            let mut v: Vec<Nid> = st
                .file_nodes(ino)
                .into_iter()
                .filter(|n| st.nodes[n].dirty)
                .collect();
            // The inode last: it carries the size and the marks.
            v.sort_by_key(|&n| (n == ino, n));
            v
        };
        let count = dirty.len();
        for (k, nid) in dirty.into_iter().enumerate() {
            let mut marks = 0;
            if k + 1 == count {
                marks |= FSYNC_MARK;
            }
            if nid == ino && self.st.borrow().nodes[&ino].ckpt_addr == NULL {
                marks |= DENT_MARK;
            }
            self.write_node(nid, LogType::WarmNode, marks).await?;
        }
        self.flush().await
    }
}
