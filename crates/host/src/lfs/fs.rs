//! The file system: its in-memory state (node tree with NAT addresses, SIT/SSA, directory
//! indexes, page cache, the six logs), name resolution, and the `FileSystem` implementation.
//! Operations that allocate blocks or change the name space hold one lock (they are
//! serialised) and end with their writes issued; reads (`read.rs`) and buffered writes
//! (`write.rs`) run beside them.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use sim::sync::Mutex;
use sim::Sim;

use super::cache::PageCache;
use super::dir::{self, DirIndex};
use super::layout::Geometry;
use super::meta::MetaArea;
use super::node::{node_path, Blk, Nid, Node, NodeBody, NAME_LEN, NULL};
use super::seg::Sit;
use super::{LfsConfig, LfsCounters, LogType, BLOCK};
use crate::fs::{split_path, FileStat, FileSystem, FsError, Ino};
use crate::zoned::ZonedBackend;

/// The root directory's inode (F2FS: node 1, meta 2, root 3).
pub const ROOT: Nid = 3;
pub(super) const NO_SEC: u32 = u32::MAX;

/// Why mkfs or mount failed.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum LfsError {
    #[error("lfs: {0}")]
    Setup(String),
    #[error("lfs: no valid checkpoint on the metadata area")]
    NoCheckpoint,
    #[error("lfs: {0}")]
    Fs(#[from] FsError),
}

/// A node and where it is.
pub(super) struct NodeEntry {
    pub node: Node,
    /// On the media now (`NULL`: never written).
    pub addr: Blk,
    /// At the last checkpoint.
    pub ckpt_addr: Blk,
    pub dirty: bool,
}

/// A log's current section and next block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Log {
    pub sec: u32,
    pub next: u32,
    pub tl: bool,
}

pub(super) struct State {
    pub cfg: LfsConfig,
    pub geo: Geometry,
    pub sit: Sit,
    pub nodes: BTreeMap<Nid, NodeEntry>,
    /// Nodes changed since they were last written.
    pub dirty_nodes: BTreeSet<Nid>,
    pub nat_dirty: BTreeSet<Nid>,
    pub nat_journal: BTreeSet<Nid>,
    pub sit_journal: BTreeSet<u32>,
    pub nat_bits: Vec<u8>,
    pub sit_bits: Vec<u8>,
    pub free_nids: BTreeSet<Nid>,
    pub freed_nids: Vec<Nid>,
    pub next_nid: Nid,
    pub dirs: BTreeMap<Nid, DirIndex>,
    pub cache: PageCache,
    pub dirty_dents: usize,
    /// Dirty pages with no block yet (counted against the user capacity).
    pub new_pages: u64,
    pub logs: [Log; 6],
    /// Version of the last checkpoint written.
    pub cp_ver: u64,
    /// The next checkpoint pack (0 or 1).
    pub next_pack: u64,
    pub counters: LfsCounters,
    pub pending: Vec<(Blk, Vec<u8>)>,
    /// Per section, blocks that have their address but are not on the device yet (queued,
    /// being written, or the destinations of a zone_compaction not yet sent): a read without
    /// the file-system lock must not take them from the device.
    pub unwritten: Vec<u32>,
    pub mapping: Option<device::ChunkMapping>,
    /// F2FS's SBI_NEED_CP: the next fsync checkpoints.
    pub need_cp: bool,
    /// The bitmaps TL-open sections were opened with (the device refuses writes over their
    /// set bits even after a checkpoint turned those blocks into holes here).
    pub tl_maps: BTreeMap<u32, Vec<u8>>,
    /// TL-open sections their logs left, closed at the next flush.
    pub tl_closing: Vec<u32>,
    /// Zones with an unused tail their logs left, finished at the next flush.
    pub finishing: Vec<u32>,
    pub flusher: super::writeback::Flusher,
    /// A checkpoint is writing its nodes and tables: buffered writes wait (`write.rs`).
    pub cp_running: bool,
}

/// An F2FS-like log-structured file system on zoned backend `B` and metadata area `M`.
pub struct Lfs<B: ZonedBackend, M: MetaArea> {
    pub(super) dev: Rc<B>,
    pub(super) meta: Rc<M>,
    pub(super) lock: Mutex<()>,
    pub(super) st: RefCell<State>,
}

pub(super) fn io_err(e: impl std::fmt::Display) -> FsError {
    FsError::Io(e.to_string())
}

impl State {
    /// The next block threaded logging may write in section `sec` at or after `from`.
    pub fn tl_next(&self, sec: u32, mut from: u32) -> Option<u32> {
        let map = self.tl_maps.get(&sec);
        loop {
            let o = self.sit.next_hole(sec, from)?;
            if map.is_none_or(|m| !device::tl_bitmap::bit(m, o as u64)) {
                return Some(o);
            }
            from = o + 1;
        }
    }
    pub fn is_dir(&self, ino: Nid) -> bool {
        self.nodes
            .get(&ino)
            .and_then(|e| e.node.inode())
            .is_some_and(|i| i.is_dir)
    }
    pub fn inode_size(&self, ino: Nid) -> Option<u64> {
        self.nodes.get(&ino)?.node.inode().map(|i| i.size)
    }
    pub fn mark_dirty(&mut self, nid: Nid) {
        if let Some(e) = self.nodes.get_mut(&nid) {
            if !e.dirty {
                e.dirty = true;
                self.dirty_nodes.insert(nid);
            }
        }
    }
    pub fn alloc_nid(&mut self) -> Result<Nid, FsError> {
        if let Some(n) = self.free_nids.pop_first() {
            return Ok(n);
        }
        if self.next_nid >= self.geo.max_nid() {
            return Err(FsError::NoSpace);
        }
        self.next_nid += 1;
        Ok(self.next_nid - 1)
    }
    /// The node holding file block `idx`'s pointer and the slot, if it exists.
    pub fn dnode_of(&self, ino: Nid, idx: u64) -> Option<(Nid, usize)> {
        let path = node_path(idx)?;
        let mut nid = ino;
        for (slot, _) in &path.chain {
            let n = *self.nodes.get(&nid)?.node.nids().get(*slot)?;
            if n == 0 {
                return None;
            }
            nid = n;
        }
        Some((nid, path.slot))
    }
    /// Queue block `b`'s write of `data` (issued by the next flush).
    pub fn queue_write(&mut self, b: Blk, data: Vec<u8>) {
        self.mark_unwritten(b, 1);
        self.pending.push((b, data));
    }
    /// `n` blocks from `b` are assigned but not on the device yet (or, `n` < 0, now are).
    pub fn mark_unwritten(&mut self, b: Blk, n: i32) {
        let sec = self.geo.sec_of(b) as usize;
        if let Some(c) = self.unwritten.get_mut(sec) {
            *c = c.saturating_add_signed(n);
        }
    }
    /// Whether block `b`'s section has blocks not on the device yet.
    pub fn is_unwritten(&self, b: Blk) -> bool {
        let sec = self.geo.sec_of(b) as usize;
        self.unwritten.get(sec).is_none_or(|&c| c > 0)
    }
    /// How many of blocks `idx..=last` of `ino` one device read from `addr` (block `idx`'s)
    /// takes: not cached, consecutive on the device in one section, at most
    /// `max_write_bytes`.
    pub fn read_run(&self, ino: Nid, idx: u64, last: u64, addr: Blk) -> u64 {
        let max = (self.cfg.max_write_bytes / BLOCK as u64).max(1);
        let mut run = 1;
        while idx + run <= last
            && run < max
            && !self.cache.contains((ino, idx + run))
            && self.data_addr(ino, idx + run) == addr + run as u32
            && self.geo.sec_of(addr + run as u32) == self.geo.sec_of(addr)
        {
            run += 1;
        }
        run
    }
    pub fn data_addr(&self, ino: Nid, idx: u64) -> Blk {
        self.dnode_of(ino, idx)
            .and_then(|(nid, slot)| self.nodes.get(&nid)?.node.addrs().get(slot).copied())
            .unwrap_or(NULL)
    }
    /// The node for file block `idx`, created (with the nodes above it) if missing.
    pub fn ensure_dnode(&mut self, ino: Nid, idx: u64) -> Result<(Nid, usize), FsError> {
        let path = node_path(idx).ok_or_else(|| FsError::Invalid(format!("block {idx}")))?;
        let mut nid = ino;
        for &(slot, ofs) in &path.chain {
            let child = self
                .nodes
                .get(&nid)
                .map(|e| e.node.nids()[slot])
                .unwrap_or(0);
            if child != 0 {
                nid = child;
                continue;
            }
            let c = self.alloc_nid()?;
            self.nodes.insert(
                c,
                NodeEntry {
                    node: Node::new_child(c, ino, ofs),
                    addr: NULL,
                    ckpt_addr: NULL,
                    dirty: false,
                },
            );
            self.mark_dirty(c);
            if let Some(e) = self.nodes.get_mut(&nid) {
                e.node.nids_mut()[slot] = c;
            }
            self.mark_dirty(nid);
            nid = c;
        }
        Ok((nid, path.slot))
    }
    /// Every node of file `ino`, the inode first.
    pub fn file_nodes(&self, ino: Nid) -> Vec<Nid> {
        let mut out = vec![];
        let mut stack = vec![ino];
        while let Some(n) = stack.pop() {
            if let Some(e) = self.nodes.get(&n) {
                out.push(n);
                stack.extend(e.node.nids().iter().rev().filter(|&&c| c != 0));
            }
        }
        out
    }
    /// The log a node goes to: direct nodes (and inodes) of directories hot, of files warm;
    /// indirect nodes cold.
    pub fn node_log(&self, nid: Nid) -> LogType {
        let Some(e) = self.nodes.get(&nid) else {
            return LogType::WarmNode;
        };
        match e.node.body {
            NodeBody::Indirect(_) => LogType::ColdNode,
            _ if self.is_dir(e.node.ino) => LogType::HotNode,
            _ => LogType::WarmNode,
        }
    }
    pub fn resolve(&self, path: &str) -> Result<Nid, FsError> {
        if path == "/" {
            return Ok(ROOT);
        }
        let (parent, name) = split_path(path).ok_or_else(|| FsError::Invalid(path.into()))?;
        let dir = self.resolve(parent)?;
        let idx = self
            .dirs
            .get(&dir)
            .ok_or_else(|| FsError::NotADirectory(parent.into()))?;
        idx.entries
            .get(name.as_bytes())
            .map(|e| e.0)
            .ok_or_else(|| FsError::NotFound(path.into()))
    }
    /// `has_not_enough_free_secs` (F2FS 4.10): free + freed ≤ node + 2·dent + R + needed,
    /// R = reserved sections, halved with threaded logging (seed-specs A.1.6).
    pub fn not_enough_free_secs(&self, freed: u32, needed: u32) -> bool {
        let r = if self.cfg.threaded_logging {
            self.geo.reserved_secs / 2
        } else {
            self.geo.reserved_secs
        };
        self.sit.free_secs() + freed <= self.demand_secs() + r + needed
    }
    /// Sections the dirty nodes and dentry pages would fill: node_secs + 2·dent_secs.
    /// ZNS+'s periodic checkpoint is due: pre-invalid blocks reached θ_PI.
    pub fn periodic_cp_due(&self) -> bool {
        self.cfg
            .periodic_cp_blocks
            .is_some_and(|th| self.sit.uc_blocks >= th)
    }

    /// Fewer than 1/64 of the node ids are free while unlinks' ids wait for a checkpoint.
    pub fn nids_low(&self) -> bool {
        let max = self.geo.max_nid() as usize;
        let left = max.saturating_sub(self.next_nid as usize) + self.free_nids.len();
        left < max / 64 && !self.freed_nids.is_empty()
    }

    pub fn demand_secs(&self) -> u32 {
        let per = self.geo.sec_blocks as usize;
        (self.dirty_nodes.len().div_ceil(per) + 2 * self.dirty_dents.div_ceil(per)) as u32
    }
}

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    /// What the file system did so far.
    pub fn counters(&self) -> LfsCounters {
        self.st.borrow().counters.clone()
    }
    /// Dirty pages in the page cache, and of inode `ino`.
    pub fn dirty_pages(&self) -> usize {
        self.st.borrow().cache.dirty_pages()
    }
    pub fn dirty_pages_of(&self, ino: u64) -> usize {
        Nid::try_from(ino).map_or(0, |n| self.st.borrow().cache.dirty_count(n))
    }
    pub fn geometry(&self) -> Geometry {
        self.st.borrow().geo
    }
    pub fn config(&self) -> LfsConfig {
        self.st.borrow().cfg.clone()
    }
    /// Free sections now.
    pub fn free_sections(&self) -> u32 {
        self.st.borrow().sit.free_secs()
    }
    pub fn backend(&self) -> &Rc<B> {
        &self.dev
    }

    /// Unmount: everything durable (a checkpoint), then the threaded logs' zones closed (the
    /// device plugs them). Dropping the file system without this is a power cut.
    pub async fn unmount(self) -> Result<(), FsError> {
        let _g = self.lock.lock().await;
        self.checkpoint(super::cp::Cause::Sync).await?;
        let tl: Vec<u32> = {
            let mut st = self.st.borrow_mut();
            let mut v: Vec<u32> = st.logs.iter().filter(|l| l.tl).map(|l| l.sec).collect();
            v.append(&mut st.tl_closing);
            v
        };
        for sec in tl {
            self.close_tl(sec).await?;
        }
        Ok(())
    }

    /// Check that the SIT agrees with the node tree: every block a node points to (and every
    /// node's own block) is valid with that owner, and nothing else is.
    pub fn check_consistency(&self) -> Result<(), String> {
        let st = self.st.borrow();
        let mut live = BTreeMap::new();
        for (nid, e) in &st.nodes {
            if e.addr != NULL {
                live.insert(e.addr, (*nid, 0u16));
            }
            for (k, a) in e.node.addrs().iter().enumerate() {
                if *a != NULL && live.insert(*a, (*nid, k as u16)).is_some() {
                    return Err(format!("block {a} pointed to twice"));
                }
            }
        }
        if live.len() as u64 != st.sit.valid_total {
            return Err(format!(
                "{} live blocks, SIT counts {}",
                live.len(),
                st.sit.valid_total
            ));
        }
        for (b, owner) in live {
            if !st.sit.is_valid(b) {
                return Err(format!("live block {b} invalid in the SIT"));
            }
            if st.sit.owner(b) != owner {
                return Err(format!(
                    "block {b} summary {:?}, owner {owner:?}",
                    st.sit.owner(b)
                ));
            }
        }
        Ok(())
    }

    /// F2FS's `f2fs_balance_fs`: periodic checkpoint (ZNS+) and foreground GC.
    pub(super) async fn balance_fs(&self) -> Result<(), FsError> {
        let periodic = self.st.borrow().periodic_cp_due();
        if periodic {
            self.checkpoint(super::cp::Cause::Periodic).await?;
        }
        // A node id an unlink freed is reused only after a checkpoint (F2FS's NAT entry stays
        // dirty until then); F2FS's `f2fs_balance_fs_bg` checkpoints when its NAT cache
        // outgrows its share of memory. Here: when fewer than 1/64 of the ids are free and
        // some wait for a checkpoint. Without it, creates fail with "no space" once a run
        // has made as many files as the volume has ids, however many it deleted.
        let nids_low = self.st.borrow().nids_low();
        if nids_low {
            self.checkpoint(super::cp::Cause::Nids).await?;
        }
        if self.st.borrow().not_enough_free_secs(0, 0) {
            self.fg_gc().await?;
        }
        Ok(())
    }

    /// Add `name` → `ino` to directory `dir`'s dentry blocks.
    pub(super) async fn add_dentry(
        &self,
        dir: Nid,
        name: &[u8],
        ino: Nid,
        is_dir: bool,
    ) -> Result<(), FsError> {
        let n = dir::slots_for(name.len());
        let (blk, slot) = self.st.borrow().dirs[&dir].find_slot(n);
        let fresh = blk as usize == self.st.borrow().dirs[&dir].used.len();
        self.load_page(dir, blk, !fresh).await?;
        let mut st = self.st.borrow_mut();
        st.dirty_page(dir, blk)?;
        if let Some(p) = st.cache.get((dir, blk)) {
            dir::put_entry(&mut p.data, slot, ino, name, is_dir);
        }
        let idx = st.dirs.get_mut(&dir).expect("dir");
        idx.mark(blk, slot, n, true);
        idx.entries.insert(name.to_vec(), (ino, blk, slot));
        if fresh {
            if let Some(i) = st.nodes.get_mut(&dir).and_then(|e| e.node.inode_mut()) {
                i.size = (blk + 1) * BLOCK as u64;
            }
            st.mark_dirty(dir);
        }
        Ok(())
    }

    async fn create_node(&self, path: &str, is_dir: bool) -> Result<Nid, FsError> {
        let _g = self.lock.lock().await;
        self.balance_fs().await?;
        let (parent, name) = split_path(path).ok_or_else(|| FsError::Invalid(path.into()))?;
        if name.len() > NAME_LEN {
            return Err(FsError::Invalid(format!(
                "{path}: name longer than 255 bytes"
            )));
        }
        let (dir, ino) = {
            let mut st = self.st.borrow_mut();
            let dir = st.resolve(parent)?;
            let idx = st
                .dirs
                .get(&dir)
                .ok_or_else(|| FsError::NotADirectory(parent.into()))?;
            if idx.entries.contains_key(name.as_bytes()) {
                return Err(FsError::Exists(path.into()));
            }
            if st.sit.valid_total + st.new_pages + 2 > st.geo.user_blocks() {
                return Err(FsError::NoSpace);
            }
            let ino = st.alloc_nid()?;
            st.nodes.insert(
                ino,
                NodeEntry {
                    node: Node::new_inode(ino, is_dir, dir, name.as_bytes()),
                    addr: NULL,
                    ckpt_addr: NULL,
                    dirty: false,
                },
            );
            st.mark_dirty(ino);
            if is_dir {
                st.dirs.insert(ino, DirIndex::default());
            }
            (dir, ino)
        };
        self.add_dentry(dir, name.as_bytes(), ino, is_dir).await?;
        if is_dir {
            self.add_dentry(ino, b".", ino, true).await?;
            self.add_dentry(ino, b"..", dir, true).await?;
        }
        self.flush().await?;
        Ok(ino)
    }

    async fn remove(&self, path: &str, want_dir: bool) -> Result<(), FsError> {
        let _g = self.lock.lock().await;
        self.balance_fs().await?;
        let (parent, name) = split_path(path).ok_or_else(|| FsError::Invalid(path.into()))?;
        let (dir, ino, blk, slot) = {
            let st = self.st.borrow();
            let dir = st.resolve(parent)?;
            let idx = st
                .dirs
                .get(&dir)
                .ok_or_else(|| FsError::NotADirectory(parent.into()))?;
            let &(ino, blk, slot) = idx
                .entries
                .get(name.as_bytes())
                .ok_or_else(|| FsError::NotFound(path.into()))?;
            match (st.is_dir(ino), want_dir) {
                (true, false) => return Err(FsError::IsADirectory(path.into())),
                (false, true) => return Err(FsError::NotADirectory(path.into())),
                (true, true) if st.dirs[&ino].names().next().is_some() => {
                    return Err(FsError::NotEmpty(path.into()))
                }
                _ => {}
            }
            (dir, ino, blk, slot)
        };
        self.load_page(dir, blk, true).await?;
        {
            let mut st = self.st.borrow_mut();
            st.dirty_page(dir, blk)?;
            let n = dir::slots_for(name.len());
            if let Some(p) = st.cache.get((dir, blk)) {
                dir::clear_entry(&mut p.data, slot, n);
            }
            let idx = st.dirs.get_mut(&dir).expect("dir");
            idx.mark(blk, slot, n, false);
            idx.entries.remove(name.as_bytes());
            st.free_file(ino);
        }
        self.flush().await
    }
}

impl State {
    /// Mark page (`ino`, `idx`) dirty (it is cached); a page with no block yet counts
    /// against the user capacity.
    pub fn dirty_page(&mut self, ino: Nid, idx: u64) -> Result<(), FsError> {
        if self.cache.state((ino, idx)) == Some(false) {
            if self.data_addr(ino, idx) == NULL {
                if self.sit.valid_total + self.new_pages + 1 > self.geo.user_blocks() {
                    return Err(FsError::NoSpace);
                }
                self.new_pages += 1;
            }
            if self.is_dir(ino) {
                self.dirty_dents += 1;
            }
            self.cache.set_dirty((ino, idx), true);
        }
        Ok(())
    }

    /// A page leaves the dirty set without being written (file removed).
    fn forget_page(&mut self, ino: Nid, idx: u64) {
        if self.cache.state((ino, idx)) == Some(true) {
            if self.data_addr(ino, idx) == NULL {
                self.new_pages -= 1;
            }
            if self.is_dir(ino) {
                self.dirty_dents -= 1;
            }
        }
        self.cache.remove((ino, idx));
    }

    /// Remove file or directory `ino`: its pages, blocks and nodes.
    pub fn free_file(&mut self, ino: Nid) {
        for (_, idx) in self.cache.pages_of(ino) {
            self.forget_page(ino, idx);
        }
        for nid in self.file_nodes(ino) {
            let Some(e) = self.nodes.remove(&nid) else {
                continue;
            };
            for &a in e.node.addrs() {
                if a != NULL {
                    self.sit.invalidate(a);
                }
            }
            if e.addr != NULL {
                self.sit.invalidate(e.addr);
            }
            self.dirty_nodes.remove(&nid);
            self.nat_dirty.insert(nid);
            self.freed_nids.push(nid);
        }
        self.dirs.remove(&ino);
    }
}

impl<B: ZonedBackend, M: MetaArea> FileSystem for Lfs<B, M> {
    fn sim(&self) -> &Sim {
        self.dev.sim()
    }
    fn capacity(&self) -> (u64, u64) {
        let st = self.st.borrow();
        (
            st.geo.user_blocks() * BLOCK as u64,
            (st.sit.valid_total + st.new_pages) * BLOCK as u64,
        )
    }
    async fn mkdir(&self, path: &str) -> Result<Ino, FsError> {
        self.create_node(path, true).await.map(|n| n as Ino)
    }
    async fn create(&self, path: &str) -> Result<Ino, FsError> {
        self.create_node(path, false).await.map(|n| n as Ino)
    }
    async fn lookup(&self, path: &str) -> Result<Ino, FsError> {
        self.st.borrow().resolve(path).map(|n| n as Ino)
    }
    async fn stat(&self, path: &str) -> Result<FileStat, FsError> {
        let st = self.st.borrow();
        let ino = st.resolve(path)?;
        let is_dir = st.is_dir(ino);
        Ok(FileStat {
            ino: ino as Ino,
            size: if is_dir {
                0
            } else {
                st.inode_size(ino).unwrap_or(0)
            },
            is_dir,
        })
    }
    async fn readdir(&self, path: &str) -> Result<Vec<String>, FsError> {
        let st = self.st.borrow();
        let ino = st.resolve(path)?;
        let idx = st
            .dirs
            .get(&ino)
            .ok_or_else(|| FsError::NotADirectory(path.into()))?;
        Ok(idx
            .names()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect())
    }
    async fn read(&self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        // Without the file-system lock, as F2FS's read path (`read.rs`).
        let ino = self.file_ino(ino)?;
        let size = self.st.borrow().inode_size(ino).unwrap_or(0);
        if offset >= size || buf.is_empty() {
            return Ok(0);
        }
        let n = (size - offset).min(buf.len() as u64) as usize;
        self.read_file(ino, offset, &mut buf[..n]).await?;
        Ok(n)
    }
    async fn write(&self, ino: Ino, offset: u64, data: &[u8]) -> Result<(), FsError> {
        // Without the file-system lock unless it needs GC, reclaim or writeback, as F2FS's
        // buffered writes (`write.rs`).
        let ino = self.file_ino(ino)?;
        offset
            .checked_add(data.len() as u64)
            .filter(|e| node_path(e / BLOCK as u64).is_some())
            .ok_or_else(|| FsError::Invalid(format!("offset {offset}")))?;
        if data.is_empty() {
            return Ok(());
        }
        self.write_file(ino, offset, data).await?;
        self.balance_dirty_pages(ino).await
    }
    fn size(&self, ino: Ino) -> Result<u64, FsError> {
        let st = self.st.borrow();
        let nid = Nid::try_from(ino).map_err(|_| FsError::NotFound(format!("inode {ino}")))?;
        match st.nodes.get(&nid).and_then(|e| e.node.inode()) {
            Some(i) if i.is_dir => Ok(0),
            Some(i) => Ok(i.size),
            None => Err(FsError::NotFound(format!("inode {ino}"))),
        }
    }
    async fn fsync(&self, ino: Ino) -> Result<(), FsError> {
        let _g = self.lock.lock().await;
        let nid = Nid::try_from(ino).map_err(|_| FsError::NotFound(format!("inode {ino}")))?;
        if !self.st.borrow().nodes.contains_key(&nid) {
            return Err(FsError::NotFound(format!("inode {ino}")));
        }
        self.st.borrow_mut().counters.fsyncs += 1;
        self.balance_fs().await?;
        self.do_fsync(nid).await
    }
    async fn unlink(&self, path: &str) -> Result<(), FsError> {
        self.remove(path, false).await
    }
    async fn rmdir(&self, path: &str) -> Result<(), FsError> {
        self.remove(path, true).await
    }
    async fn sync(&self) -> Result<(), FsError> {
        let _g = self.lock.lock().await;
        self.checkpoint(super::cp::Cause::Sync).await
    }
}

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    fn file_ino(&self, ino: Ino) -> Result<Nid, FsError> {
        let nid = Nid::try_from(ino).map_err(|_| FsError::NotFound(format!("inode {ino}")))?;
        let st = self.st.borrow();
        match st.nodes.get(&nid).and_then(|e| e.node.inode()) {
            Some(i) if i.is_dir => Err(FsError::IsADirectory(format!("inode {ino}"))),
            Some(_) => Ok(nid),
            None => Err(FsError::NotFound(format!("inode {ino}"))),
        }
    }
}
