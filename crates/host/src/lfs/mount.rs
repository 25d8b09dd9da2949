//! mkfs, mount and roll-forward recovery. Mount reads the newer valid checkpoint pack, the
//! SIT and NAT blocks its bitmaps select (plus the journals), the SSA, every node in the NAT
//! and every directory's dentry blocks; then follows the warm node log from the checkpoint's
//! position (each node footer names the log's next block) and replays the nodes of files with
//! an fsync-marked node (F2FS `recover_fsync_data`), re-adding the dentries of files created
//! since the checkpoint (dentry mark). Every log then starts in a fresh section (sections left
//! partly written are finished; free sections whose zones hold blocks are reset) and a
//! checkpoint is written.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use device::{ZoneAction, ZoneState};
use sim::sync::Mutex;

use super::cache::PageCache;
use super::cp::Cause;
use super::dir::{self, DirIndex};
use super::fs::{io_err, Lfs, LfsError, Log, NodeEntry, State, NO_SEC, ROOT};
use super::layout::{
    decode_nat_entry, decode_sit_entry, decode_ssa, Checkpoint, Geometry, CP_PACK_BLOCKS,
    NAT_PER_BLOCK, SIT_ENTRY_BYTES, SIT_PER_BLOCK,
};
use super::meta::MetaArea;
use super::node::{child_ofs, is_dnode, Blk, Nid, Node, NodeBody, DENT_MARK, FSYNC_MARK, NULL};
use super::seg::{SecState, Sit};
use super::{LfsConfig, LfsCounters, LogType, BLOCK, BLOCKS_PER_SEG};
use crate::zoned::ZonedBackend;

fn setup(e: impl std::fmt::Display) -> LfsError {
    LfsError::Setup(e.to_string())
}

/// Which of its two copies block `i` of the NAT or SIT is current (a checkpoint's bitmap).
fn bit(bits: &[u8], i: u32) -> u32 {
    device::tl_bitmap::bit(bits, i as u64) as u32
}

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    fn build(dev: Rc<B>, meta: Rc<M>, cfg: LfsConfig, geo: Geometry) -> Self {
        let cache = PageCache::new(cfg.page_cache_pages);
        Lfs {
            dev,
            meta,
            lock: Mutex::new(()),
            st: RefCell::new(State {
                cfg,
                geo,
                sit: Sit::new(geo),
                nodes: BTreeMap::new(),
                dirty_nodes: BTreeSet::new(),
                nat_dirty: BTreeSet::new(),
                nat_journal: BTreeSet::new(),
                sit_journal: BTreeSet::new(),
                nat_bits: vec![0; (geo.nat_blocks as usize).div_ceil(8)],
                sit_bits: vec![0; (geo.sit_blocks as usize).div_ceil(8)],
                free_nids: BTreeSet::new(),
                freed_nids: vec![],
                next_nid: ROOT + 1,
                dirs: BTreeMap::new(),
                cache,
                dirty_dents: 0,
                new_pages: 0,
                logs: [Log {
                    sec: NO_SEC,
                    next: 0,
                    tl: false,
                }; 6],
                cp_ver: 0,
                next_pack: 0,
                counters: LfsCounters::default(),
                pending: vec![],
                unwritten: vec![0; geo.zones as usize],
                mapping: None,
                need_cp: false,
                tl_maps: BTreeMap::new(),
                tl_closing: vec![],
                finishing: vec![],
                flusher: Default::default(),
                cp_running: false,
            }),
        }
    }

    /// The backend's zones as (zones, zone blocks, capacity blocks).
    fn dims(dev: &B) -> Result<(u64, u64), LfsError> {
        if dev.lba_bytes() != BLOCK as u64 {
            return Err(setup(format!(
                "the device's {}-byte blocks: lfs needs 4096-byte logical blocks",
                dev.lba_bytes()
            )));
        }
        Ok((
            dev.zone_bytes() / BLOCK as u64,
            dev.zone_capacity_bytes() / BLOCK as u64,
        ))
    }

    async fn probe_mapping(&self) {
        if self.dev.vendor_caps().zone_compaction {
            self.st.borrow_mut().mapping = self.dev.identify_mapping().await.ok().flatten();
        }
    }

    /// Make a file system on `dev` (every zone reset) and `meta`, and mount it.
    pub async fn mkfs(dev: Rc<B>, meta: Rc<M>, cfg: LfsConfig) -> Result<Self, LfsError> {
        let (zb, cap) = Self::dims(&dev)?;
        let zones = dev.report_zones().await.map_err(setup)?;
        let geo = Geometry::new(
            zones.len() as u32,
            zb,
            cap,
            cfg.reserved_sections,
            cfg.overprovision_pct,
        )
        .map_err(setup)?;
        if meta.blocks() < geo.meta_blocks() {
            return Err(setup(format!(
                "the metadata area holds {} blocks, the file system needs {}",
                meta.blocks(),
                geo.meta_blocks()
            )));
        }
        for (z, d) in zones.iter().enumerate() {
            if d.state != ZoneState::Empty {
                dev.zone_action(z as u32, ZoneAction::Reset)
                    .await
                    .map_err(setup)?;
            }
        }
        let zero = vec![0u8; BLOCK];
        meta.write_block(0, &geo.encode_sb()).await.map_err(setup)?;
        for a in 1..geo.ssa_addr(0) {
            meta.write_block(a, &zero).await.map_err(setup)?;
        }
        let fs = Self::build(dev, meta, cfg, geo);
        fs.probe_mapping().await;
        {
            let mut st = fs.st.borrow_mut();
            st.counters.sb_blocks += 1;
            st.nodes.insert(
                ROOT,
                NodeEntry {
                    node: Node::new_inode(ROOT, true, ROOT, b""),
                    addr: NULL,
                    ckpt_addr: NULL,
                    dirty: false,
                },
            );
            st.mark_dirty(ROOT);
            st.dirs.insert(ROOT, DirIndex::default());
        }
        fs.add_dentry(ROOT, b".", ROOT, true).await?;
        fs.add_dentry(ROOT, b"..", ROOT, true).await?;
        fs.checkpoint(Cause::Mkfs).await?;
        Ok(fs)
    }

    /// Mount the file system on `dev` and `meta`, recovering fsynced files written after
    /// the last checkpoint.
    pub async fn mount(dev: Rc<B>, meta: Rc<M>, cfg: LfsConfig) -> Result<Self, LfsError> {
        let (zb, cap) = Self::dims(&dev)?;
        let mut b = vec![0u8; BLOCK];
        meta.read_block(0, &mut b).await.map_err(setup)?;
        let geo = Geometry::decode_sb(&b)
            .ok_or_else(|| setup("no superblock, or one whose numbers do not hold together"))?;
        let zones = dev.report_zones().await.map_err(setup)?;
        if geo.zones != zones.len() as u32
            || geo.zone_blocks as u64 != zb
            || geo.sec_blocks as u64 > cap
            || meta.blocks() < geo.meta_blocks()
        {
            return Err(setup("the superblock does not match the device"));
        }
        let fs = Self::build(dev, meta, cfg, geo);
        fs.probe_mapping().await;
        let mut best: Option<(u64, Checkpoint)> = None;
        for pack in 0..2 {
            let mut blocks = vec![];
            for k in 0..CP_PACK_BLOCKS {
                fs.meta_read(geo.cp_addr(pack) + k, &mut b).await?;
                blocks.push(b.clone());
            }
            if let Some(cp) = Checkpoint::decode(&blocks).filter(|cp| cp.fits(&geo)) {
                if best.as_ref().is_none_or(|(_, c)| c.version < cp.version) {
                    best = Some((pack, cp));
                }
            }
        }
        let (pack, cp) = best.ok_or(LfsError::NoCheckpoint)?;
        fs.load(pack, &cp).await?;
        let chain = fs.roll_forward(&cp).await?;
        if !chain.is_empty() {
            fs.recover(chain).await?;
        }
        fs.settle_zones().await?;
        fs.checkpoint(Cause::Mount).await?;
        Ok(fs)
    }

    async fn meta_read(&self, addr: u64, buf: &mut [u8]) -> Result<(), LfsError> {
        self.meta.read_block(addr, buf).await.map_err(setup)?;
        self.st.borrow_mut().counters.meta_reads += 1;
        Ok(())
    }

    /// The checkpointed state: SIT, NAT, SSA, nodes, directories.
    async fn load(&self, pack: u64, cp: &Checkpoint) -> Result<(), LfsError> {
        let geo = self.st.borrow().geo;
        let mut b = vec![0u8; BLOCK];
        let mut sit = Sit::new(geo);
        for i in 0..geo.sit_blocks {
            self.meta_read(geo.sit_addr(i, bit(&cp.sit_bits, i)), &mut b)
                .await?;
            for k in 0..SIT_PER_BLOCK {
                let seg = i * SIT_PER_BLOCK + k;
                if seg < geo.main_segs {
                    let at = k as usize * SIT_ENTRY_BYTES;
                    sit.load_entry(seg, &decode_sit_entry(&b[at..at + SIT_ENTRY_BYTES]));
                }
            }
        }
        for (seg, e) in &cp.sit_journal {
            if *seg < geo.main_segs {
                sit.load_entry(*seg, e);
            }
        }
        let mut nat: BTreeMap<Nid, Blk> = BTreeMap::new();
        for i in 0..geo.nat_blocks {
            self.meta_read(geo.nat_addr(i, bit(&cp.nat_bits, i)), &mut b)
                .await?;
            for k in 0..NAT_PER_BLOCK {
                let (ino, addr) = decode_nat_entry(&b[9 * k as usize..9 * k as usize + 9]);
                if ino != 0 {
                    nat.insert(i * NAT_PER_BLOCK + k, addr);
                }
            }
        }
        for &(nid, addr) in &cp.nat_journal {
            if addr == NULL {
                nat.remove(&nid);
            } else {
                nat.insert(nid, addr);
            }
        }
        for seg in 0..geo.main_segs {
            if sit.segs[seg as usize].valid > 0 {
                self.meta_read(geo.ssa_addr(seg), &mut b).await?;
                let per = BLOCKS_PER_SEG as usize;
                let at = seg as usize * per;
                sit.owners[at..at + per].copy_from_slice(&decode_ssa(&b));
            }
        }
        for s in 0..geo.zones as usize {
            if sit.secs[s].valid > 0 {
                sit.secs[s].state = SecState::Used;
            }
        }
        sit.dirty_sit.clear();
        sit.dirty_ssa.clear();
        let mut nodes = BTreeMap::new();
        for (&nid, &addr) in &nat {
            if !sit.in_main(addr) {
                return Err(setup(format!(
                    "node {nid}: block {addr} is outside the main area"
                )));
            }
            let node = self.read_node(addr).await?;
            match node {
                Some((n, ..)) if n.nid == nid => {
                    nodes.insert(
                        nid,
                        NodeEntry {
                            node: n,
                            addr,
                            ckpt_addr: addr,
                            dirty: false,
                        },
                    );
                }
                _ => return Err(setup(format!("node {nid} at block {addr} is unreadable"))),
            }
        }
        {
            let mut st = self.st.borrow_mut();
            st.sit = sit;
            st.nodes = nodes;
            st.cp_ver = cp.version;
            st.next_pack = pack ^ 1;
            st.nat_bits = cp.nat_bits.clone();
            st.sit_bits = cp.sit_bits.clone();
            st.nat_journal = cp.nat_journal.iter().map(|e| e.0).collect();
            st.sit_journal = cp.sit_journal.iter().map(|e| e.0).collect();
            st.next_nid = cp.next_nid.max(ROOT + 1);
            st.free_nids = (ROOT + 1..st.next_nid)
                .filter(|n| !st.nodes.contains_key(n))
                .collect();
            st.check_trees().map_err(setup)?;
        }
        self.load_dirs().await
    }

    async fn read_node(&self, addr: Blk) -> Result<Option<(Node, u32, u64, Blk)>, LfsError> {
        let mut b = vec![0u8; BLOCK];
        self.dev
            .read(addr as u64 * BLOCK as u64, &mut b)
            .await
            .map_err(setup)?;
        Ok(Node::decode(&b))
    }

    async fn load_dirs(&self) -> Result<(), LfsError> {
        let dirs: Vec<(Nid, u64)> = {
            let st = self.st.borrow();
            st.nodes
                .iter()
                .filter_map(|(n, e)| e.node.inode().filter(|i| i.is_dir).map(|i| (*n, i.size)))
                .collect()
        };
        let mut b = vec![0u8; BLOCK];
        let main_blocks = self.st.borrow().geo.main_segs as u64 * BLOCKS_PER_SEG as u64;
        for (ino, size) in dirs {
            if size / BLOCK as u64 > main_blocks {
                return Err(setup(format!(
                    "directory {ino} claims {size} bytes, more than the main area holds"
                )));
            }
            let mut idx = DirIndex::default();
            for blk in 0..size / BLOCK as u64 {
                idx.mark(blk, 0, 0, false);
                let addr = self.st.borrow().data_addr(ino, blk);
                if addr == NULL {
                    continue;
                }
                self.dev
                    .read(addr as u64 * BLOCK as u64, &mut b)
                    .await
                    .map_err(setup)?;
                for (slot, child, name) in dir::read_entries(&b) {
                    idx.mark(blk, slot, dir::slots_for(name.len()), true);
                    idx.entries.insert(name, (child, blk, slot));
                }
            }
            self.st.borrow_mut().dirs.insert(ino, idx);
        }
        Ok(())
    }

    /// The warm node log's blocks written after checkpoint `cp`, in log order.
    async fn roll_forward(&self, cp: &Checkpoint) -> Result<Vec<(Blk, Node, u32)>, LfsError> {
        let (mut next, limit) = {
            let st = self.st.borrow();
            let l = cp.logs[LogType::WarmNode as usize];
            let start = if l.sec >= st.geo.zones {
                None
            } else {
                Some(l.next).filter(|&o| o < st.geo.sec_blocks)
            };
            (
                start.map_or(NULL, |o| st.geo.blk(l.sec, o)),
                st.geo.main_segs as usize * BLOCKS_PER_SEG as usize,
            )
        };
        let max_nid = self.st.borrow().geo.max_nid();
        let mut chain = vec![];
        let mut seen = BTreeSet::new();
        while next != NULL && chain.len() < limit && seen.insert(next) {
            if !self.st.borrow().sit.in_main(next) {
                break;
            }
            match self.read_node(next).await? {
                Some((node, marks, ver, nxt))
                    if ver == cp.version && node.nid > ROOT && node.nid < max_nid =>
                {
                    chain.push((next, node, marks));
                    next = nxt;
                }
                _ => break,
            }
        }
        Ok(chain)
    }

    /// Replay the nodes of fsynced files, then rebuild the SIT from the node tree.
    async fn recover(&self, chain: Vec<(Blk, Node, u32)>) -> Result<(), LfsError> {
        let mut last_fsync: BTreeMap<Nid, usize> = BTreeMap::new();
        for (k, (_, n, marks)) in chain.iter().enumerate() {
            if marks & FSYNC_MARK != 0 {
                last_fsync.insert(n.ino, k);
            }
        }
        let mut dentries = vec![];
        {
            let mut st = self.st.borrow_mut();
            for (k, (addr, node, marks)) in chain.into_iter().enumerate() {
                if last_fsync.get(&node.ino).is_none_or(|&l| k > l) {
                    continue;
                }
                if marks & DENT_MARK != 0 {
                    if let Some(i) = node.inode() {
                        dentries.push((i.pino, i.name.clone(), node.nid));
                    }
                }
                let nid = node.nid;
                let ckpt_addr = st.nodes.get(&nid).map_or(NULL, |e| e.ckpt_addr);
                st.free_nids.remove(&nid);
                st.next_nid = st.next_nid.max(nid + 1);
                st.nodes.insert(
                    nid,
                    NodeEntry {
                        node,
                        addr,
                        ckpt_addr,
                        dirty: false,
                    },
                );
                st.nat_dirty.insert(nid);
                st.counters.recovered_nodes += 1;
            }
            st.check_trees().map_err(setup)?;
            st.rebuild_sit();
        }
        for (pino, name, ino) in dentries {
            let add = {
                let st = self.st.borrow();
                st.dirs
                    .get(&pino)
                    .is_some_and(|d| !d.entries.contains_key(&name))
            };
            if add {
                self.add_dentry(pino, &name, ino, false).await?;
            }
        }
        Ok(())
    }

    /// Logs start afresh: sections partly written are finished, free sections with blocks
    /// in their zones reset.
    async fn settle_zones(&self) -> Result<(), LfsError> {
        let zones = self.dev.report_zones().await.map_err(setup)?;
        for (z, d) in zones.iter().enumerate() {
            let state = self.st.borrow().sit.secs[z].state;
            match (state, d.state) {
                (_, ZoneState::Empty | ZoneState::Full) if state != SecState::Free => {}
                (SecState::Free, ZoneState::Empty) => {}
                (SecState::Free, _) => {
                    self.dev
                        .zone_action(z as u32, ZoneAction::Reset)
                        .await
                        .map_err(io_err)?;
                    self.st.borrow_mut().counters.zone_resets += 1;
                }
                _ => {
                    self.dev
                        .zone_action(z as u32, ZoneAction::Finish)
                        .await
                        .map_err(io_err)?;
                }
            }
        }
        Ok(())
    }
}

impl State {
    /// The SIT and SSA from the node tree (after roll-forward), segment types kept where
    /// known.
    /// The node trees as mount found them: every child of an inode exists, belongs to it,
    /// is reached once, sits at the offset its position says and has that offset's body;
    /// every address is unset or in the main area. A tree that is not so is refused here,
    /// not met later by a panic or an endless walk.
    fn check_trees(&self) -> Result<(), String> {
        let mut seen = BTreeSet::new();
        for (&nid, e) in &self.nodes {
            if e.addr != NULL && !self.sit.in_main(e.addr) {
                return Err(format!(
                    "node {nid}: block {} is outside the main area",
                    e.addr
                ));
            }
        }
        for (&ino, e) in &self.nodes {
            if e.node.inode().is_none() {
                continue;
            }
            if e.node.ino != ino || e.node.ofs != 0 {
                return Err(format!(
                    "inode {ino} names inode {} at offset {}",
                    e.node.ino, e.node.ofs
                ));
            }
            let mut stack = vec![ino];
            while let Some(nid) = stack.pop() {
                if !seen.insert(nid) {
                    return Err(format!("node {nid} of inode {ino} is reached twice"));
                }
                let n = &self.nodes[&nid].node;
                if let Some(&a) = n
                    .addrs()
                    .iter()
                    .find(|&&a| a != NULL && !self.sit.in_main(a))
                {
                    return Err(format!(
                        "node {nid}: data block {a} is outside the main area"
                    ));
                }
                for (slot, &c) in n.nids().iter().enumerate() {
                    if c == 0 {
                        continue;
                    }
                    let want = child_ofs(n.ofs, slot);
                    let fits = self.nodes.get(&c).is_some_and(|ch| {
                        let body_ok = match &ch.node.body {
                            NodeBody::Direct(_) => is_dnode(want),
                            NodeBody::Indirect(_) => !is_dnode(want),
                            NodeBody::Inode(_) => false,
                        };
                        ch.node.ino == ino && ch.node.ofs == want && body_ok
                    });
                    if !fits {
                        return Err(format!(
                            "inode {ino}: node {c} (slot {slot} of node {nid}) is not its node \
                             at offset {want}"
                        ));
                    }
                    stack.push(c);
                }
            }
        }
        Ok(())
    }

    fn rebuild_sit(&mut self) {
        let old = std::mem::replace(&mut self.sit, Sit::new(self.geo));
        for (s, g) in old.segs.iter().enumerate() {
            self.sit.segs[s].ty = g.ty;
        }
        for (s, sec) in old.secs.iter().enumerate() {
            self.sit.secs[s].ty = sec.ty;
        }
        let mut blocks = vec![];
        for (nid, e) in &self.nodes {
            if e.addr != NULL {
                blocks.push((e.addr, (*nid, 0u16), Some(self.node_log(*nid))));
            }
            let data_ty = if self.is_dir(e.node.ino) {
                LogType::HotData
            } else {
                LogType::WarmData
            };
            for (k, &a) in e.node.addrs().iter().enumerate() {
                if a != NULL {
                    blocks.push((a, (*nid, k as u16), Some(data_ty)));
                }
            }
        }
        for (b, owner, ty) in blocks {
            if !self.sit.in_main(b) {
                continue;
            }
            let seg = self.geo.seg_of(b) as usize;
            if old.segs[seg].valid == 0 {
                if let Some(t) = ty {
                    self.sit.segs[seg].ty = t;
                    self.sit.secs[seg / self.geo.segs_per_sec as usize].ty = t;
                }
            }
            self.sit.set_valid(b, owner);
        }
        for g in &mut self.sit.segs {
            g.ckpt = g.cur;
        }
        for s in 0..self.geo.zones as usize {
            self.sit.secs[s].state = if self.sit.secs[s].valid > 0 {
                SecState::Used
            } else {
                SecState::Free
            };
        }
        self.sit.dirty_sit = (0..self.geo.main_segs).collect();
    }
}
