//! Foreground GC by segment compaction (F2FS 4.10 `f2fs_gc`, ZNS+ §3.1): checkpoint first if
//! prefree sections exist, then greedy victims (fewest valid blocks) until enough sections are
//! free, then a checkpoint. A victim's node blocks are rewritten by the host; its data blocks
//! go to the cold data log (hot for dentry blocks) by:
//! * ZNS: host reads of every valid block not cached (one by one, or in flight together as
//!   F2FS's code sends them: `GcReads`), then one large write;
//! * IZC: per victim segment, one zone_compaction for the blocks not cached (IZC-H) or not
//!   dirty (IZC-D); the host writes the others, and reads and writes every block of a chunk
//!   holding a dirty page. With copyback-aware allocation (CAB) a fully valid source chunk
//!   gets the lowest free destination chunk on its own chip (seed-specs A.1.8).
//!
//! Phase times (Fig. 6) go to the counters: ZNS init/read/write/checkpoint, IZC
//! init/IZC/checkpoint.

use std::collections::{BTreeMap, BTreeSet};

use super::cp::Cause;
use super::fs::{io_err, Lfs, NO_SEC};
use super::meta::MetaArea;
use super::node::{start_index, Blk, Nid};
use super::seg::SecState;
use super::{CachedCopy, GcCopy, GcReads, LogType, BLOCK};
use crate::fs::FsError;
use crate::zoned::ZonedBackend;

/// A valid data block to move.
#[derive(Clone, Copy, Debug)]
struct Move {
    src: Blk,
    nid: Nid,
    slot: usize,
    ino: Nid,
    idx: u64,
}

/// CAB's slot assignment (seed-specs A.1.8): the region `[start, start + n)` cut in
/// chunk-aligned slots of 4; each whole source chunk (its index in `items` and chip) takes
/// the lowest free slot on its chip, in source order; every other item the lowest free
/// position left, in source order. `items[i]` = (source block, whole-chunk id or none);
/// `chip` maps a block to its chip. Returns the destination of each item.
pub fn cab_assign(
    items: &[(Blk, Option<u32>)],
    start: Blk,
    chip: &dyn Fn(Blk) -> (u64, u64),
) -> Vec<Blk> {
    let n = items.len() as Blk;
    let mut dst = vec![Blk::MAX; items.len()];
    let mut slots: BTreeMap<(u64, u64), Vec<Blk>> = BTreeMap::new();
    let mut s = start.div_ceil(4) * 4;
    while s + 4 <= start + n {
        slots.entry(chip(s)).or_default().push(s);
        s += 4;
    }
    for v in slots.values_mut() {
        v.reverse();
    }
    let mut taken = BTreeSet::new();
    let mut i = 0;
    while i < items.len() {
        let whole = items[i].1.is_some()
            && i + 4 <= items.len()
            && (1..4).all(|k| items[i + k].1 == items[i].1);
        if whole {
            if let Some(slot) = slots.get_mut(&chip(items[i].0)).and_then(|v| v.pop()) {
                for k in 0..4 {
                    dst[i + k] = slot + k as Blk;
                    taken.insert(slot + k as Blk);
                }
            }
            i += 4;
        } else {
            i += 1;
        }
    }
    let mut free = (start..start + n).filter(|b| !taken.contains(b));
    for d in dst.iter_mut().filter(|d| **d == Blk::MAX) {
        *d = free.next().expect("as many positions as items");
    }
    dst
}

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    pub(super) async fn fg_gc(&self) -> Result<(), FsError> {
        let sim = self.dev.sim().clone();
        self.st.borrow_mut().counters.fg_gc_calls += 1;
        if !self.st.borrow().sit.prefree_secs().is_empty() {
            let t = sim.now();
            self.checkpoint(Cause::Gc).await?;
            self.st.borrow_mut().counters.gc_phases.checkpoint_ns += sim.now().since(t).as_ns();
        }
        let zones = self.st.borrow().geo.zones;
        let mut freed = 0;
        for _ in 0..zones {
            if !self.st.borrow().not_enough_free_secs(freed, 0) {
                break;
            }
            let t0 = sim.now();
            let Some(victim) = self.st.borrow().sit.greedy_victim() else {
                break;
            };
            self.st.borrow_mut().sit.gc_victim = Some(victim);
            let moved = self.migrate(victim, t0).await;
            self.st.borrow_mut().sit.gc_victim = None;
            moved?;
            let mut st = self.st.borrow_mut();
            st.counters.gc_phases.runs += 1;
            if st.sit.secs[victim as usize].state == SecState::Prefree {
                freed += 1;
                st.counters.sections_reclaimed_sc += 1;
            }
        }
        let t = sim.now();
        self.checkpoint(Cause::Gc).await?;
        self.st.borrow_mut().counters.gc_phases.checkpoint_ns += sim.now().since(t).as_ns();
        Ok(())
    }

    /// Move every valid block out of section `victim`.
    async fn migrate(&self, victim: u32, t0: sim::SimInstant) -> Result<(), FsError> {
        self.flush().await?;
        let sim = self.dev.sim().clone();
        let (ty, nodes, moves) = {
            let st = self.st.borrow();
            let ty = st.sit.secs[victim as usize].ty;
            let (mut nodes, mut moves) = (vec![], vec![]);
            for off in 0..st.geo.sec_blocks {
                let b = st.geo.blk(victim, off);
                if !st.sit.is_valid(b) {
                    continue;
                }
                let (nid, slot) = st.sit.owner(b);
                let Some(e) = st.nodes.get(&nid) else {
                    continue;
                };
                if e.addr == b {
                    nodes.push((nid, st.node_log(nid)));
                } else if e.node.addrs().get(slot as usize) == Some(&b) {
                    moves.push(Move {
                        src: b,
                        nid,
                        slot: slot as usize,
                        ino: e.node.ino,
                        idx: start_index(e.node.ofs) + slot as u64,
                    });
                }
            }
            (ty, nodes, moves)
        };
        let dest = ty.gc_data_log();
        let izc = {
            let st = self.st.borrow();
            st.cfg.gc_copy == GcCopy::Izc
                && self.dev.vendor_caps().zone_compaction
                && !st.logs[dest as usize].tl
        };
        let t_init = sim.now();
        self.st.borrow_mut().counters.gc_phases.init_ns += t_init.since(t0).as_ns();
        for (nid, log) in &nodes {
            self.write_node(*nid, *log, 0).await?;
        }
        {
            let mut st = self.st.borrow_mut();
            st.counters.gc_node_copies += nodes.len() as u64;
            st.counters.gc_host_copies += nodes.len() as u64;
        }
        self.flush().await?;
        if izc {
            self.izc_copy(&moves, dest).await?;
            self.st.borrow_mut().counters.gc_phases.izc_ns += sim.now().since(t_init).as_ns();
        } else {
            let t_node = sim.now();
            self.st.borrow_mut().counters.gc_phases.write_ns += t_node.since(t_init).as_ns();
            self.host_copy(&moves, dest, true).await?;
        }
        Ok(())
    }

    /// The host copies `moves`: cached pages as they are, the others read first (each
    /// waiting for the one before, or all in flight together: `GcReads`); then one large
    /// write. `timed`: account read and write phases.
    async fn host_copy(&self, moves: &[Move], dest: LogType, timed: bool) -> Result<(), FsError> {
        let sim = self.dev.sim().clone();
        let t0 = sim.now();
        let (in_flight, max_bytes) = {
            let cfg = &self.st.borrow().cfg;
            (cfg.gc_reads == GcReads::InFlight, cfg.max_write_bytes)
        };
        // A read merges its neighbours up to the block layer's request size.
        let max_blocks = (max_bytes.min(self.dev.max_transfer_bytes()) as usize / BLOCK).max(1);
        let mut datas: Vec<Option<Vec<u8>>> = Vec::with_capacity(moves.len());
        // Reads in flight: (first index in `moves`, blocks, the read); and the run of
        // neighbouring blocks the next read will take.
        let mut reads = Vec::new();
        let mut run: Option<(usize, usize)> = None;
        let submit = |(i, n): (usize, usize)| {
            let dev = self.dev.clone();
            let pos = moves[i].src as u64 * BLOCK as u64;
            let read = sim.spawn(async move {
                let mut buf = vec![0u8; n * BLOCK];
                dev.read(pos, &mut buf).await.map(|()| buf)
            });
            (i, n, read)
        };
        for (i, m) in moves.iter().enumerate() {
            let cached = {
                let mut st = self.st.borrow_mut();
                let state = st.cache.state((m.ino, m.idx));
                match state {
                    Some(true) => st.counters.gc_cached_dirty_blocks += 1,
                    Some(false) => st.counters.gc_cached_clean_blocks += 1,
                    None => {}
                }
                st.cache.peek((m.ino, m.idx)).map(|p| p.data.to_vec())
            };
            if cached.is_some() {
                datas.push(cached);
                continue;
            }
            // The page-cache page the read goes into is allocated first (§3.1); a frame is
            // reclaimed from clean pages only (a writeback here would move blocks under the
            // compaction).
            self.st.borrow_mut().evict_clean(1);
            self.page_alloc_cost(1).await;
            if !in_flight {
                let mut buf = vec![0u8; BLOCK];
                self.dev
                    .read(m.src as u64 * BLOCK as u64, &mut buf)
                    .await
                    .map_err(io_err)?;
                datas.push(Some(self.gc_read_done(m, buf)));
                continue;
            }
            datas.push(None);
            run = match run {
                Some((j, n))
                    if j + n == i && moves[j].src + n as Blk == m.src && n < max_blocks =>
                {
                    Some((j, n + 1))
                }
                Some(r) => {
                    reads.push(submit(r));
                    Some((i, 1))
                }
                None => Some((i, 1)),
            };
        }
        if let Some(r) = run {
            reads.push(submit(r));
        }
        for (i, n, read) in reads {
            let buf = read.await.map_err(io_err)?;
            for (k, block) in buf.chunks_exact(BLOCK).enumerate() {
                datas[i + k] = Some(self.gc_read_done(&moves[i + k], block.to_vec()));
            }
            debug_assert_eq!(buf.len(), n * BLOCK);
        }
        let datas: Vec<Vec<u8>> = datas.into_iter().map(Option::unwrap_or_default).collect();
        let t1 = sim.now();
        for (m, data) in moves.iter().zip(datas) {
            // A writeback for a page frame may have moved the block already.
            if !self.st.borrow().is_at(m) {
                continue;
            }
            let b = self.alloc_block(dest).await?;
            let mut st = self.st.borrow_mut();
            // A dirty page goes as it is now (a buffered write may have changed it since it
            // was taken above) and is clean after; a clean one equals its block.
            let data = match st.cache.state((m.ino, m.idx)) {
                Some(true) => {
                    st.cache.set_dirty((m.ino, m.idx), false);
                    if st.is_dir(m.ino) {
                        st.dirty_dents -= 1;
                    }
                    st.cache
                        .peek((m.ino, m.idx))
                        .map_or(data, |p| p.data.to_vec())
                }
                _ => data,
            };
            st.move_block(m, b);
            st.queue_write(b, data);
            st.counters.log_blocks[dest as usize] += 1;
            st.counters.gc_host_copies += 1;
        }
        self.flush().await?;
        if timed {
            let t2 = sim.now();
            let mut st = self.st.borrow_mut();
            st.counters.gc_phases.read_ns += t1.since(t0).as_ns();
            st.counters.gc_phases.write_ns += t2.since(t1).as_ns();
        }
        Ok(())
    }

    /// A GC read of `m`'s block came back with `block`: counted, and kept in the page cache
    /// when its page is not there and a frame is free.
    fn gc_read_done(&self, m: &Move, block: Vec<u8>) -> Vec<u8> {
        let mut st = self.st.borrow_mut();
        st.counters.gc_host_reads += 1;
        if !st.cache.contains((m.ino, m.idx)) && st.cache.len() < st.cache.capacity() {
            st.cache.insert((m.ino, m.idx), block.clone().into(), false);
        }
        block
    }

    /// IZC: per victim segment, zone_compaction for what the device may copy, host copies
    /// for the rest.
    async fn izc_copy(&self, moves: &[Move], dest: LogType) -> Result<(), FsError> {
        let mut by_seg: BTreeMap<u32, Vec<Move>> = BTreeMap::new();
        {
            let st = self.st.borrow();
            for m in moves {
                by_seg.entry(st.geo.seg_of(m.src)).or_default().push(*m);
            }
        }
        for (_, seg_moves) in by_seg {
            let (device, host) = self.classify(&seg_moves);
            self.device_copy(&device, dest).await?;
            self.host_copy(&host, dest, false).await?;
        }
        Ok(())
    }

    /// Split a segment's moves into device copies (with whole-chunk ids) and host copies.
    fn classify(&self, moves: &[Move]) -> (Vec<(Move, Option<u32>)>, Vec<Move>) {
        let mut st = self.st.borrow_mut();
        let izc_h = st.cfg.cached_copy == CachedCopy::Host;
        let mut chunks: BTreeMap<Blk, Vec<(Move, Option<bool>)>> = BTreeMap::new();
        for m in moves {
            let state = st.cache.state((m.ino, m.idx));
            chunks.entry(m.src / 4).or_default().push((*m, state));
        }
        let (mut device, mut host) = (vec![], vec![]);
        for (chunk, group) in chunks {
            let dirty = group.iter().any(|g| g.1 == Some(true));
            for g in &group {
                match g.1 {
                    Some(true) => st.counters.gc_cached_dirty_blocks += 1,
                    Some(false) => st.counters.gc_cached_clean_blocks += 1,
                    None => {}
                }
            }
            if dirty {
                host.extend(group.iter().map(|g| g.0));
                continue;
            }
            let to_device: Vec<Move> = group
                .iter()
                .filter(|g| !(izc_h && g.1 == Some(false)))
                .map(|g| g.0)
                .collect();
            let whole = to_device.len() == 4 && group.len() == 4;
            host.extend(
                group
                    .iter()
                    .filter(|g| izc_h && g.1 == Some(false))
                    .map(|g| g.0),
            );
            device.extend(to_device.into_iter().map(|m| (m, whole.then_some(chunk))));
        }
        (device, host)
    }

    /// zone_compaction of `items` into log `dest` (which is in LFS mode), region by region
    /// up to a section end.
    async fn device_copy(
        &self,
        items: &[(Move, Option<u32>)],
        dest: LogType,
    ) -> Result<(), FsError> {
        let mut pos = 0;
        while pos < items.len() {
            self.flush().await?;
            let room = {
                let st = self.st.borrow();
                let l = st.logs[dest as usize];
                if l.sec == NO_SEC || l.tl {
                    0
                } else {
                    st.geo.sec_blocks - l.next
                }
            };
            if room == 0 {
                self.new_section(dest).await?;
                continue;
            }
            let n = (items.len() - pos)
                .min(room as usize)
                .min(device::MAX_COMPACTION_PAIRS);
            let piece = &items[pos..pos + n];
            let pairs = {
                let mut st = self.st.borrow_mut();
                let l = st.logs[dest as usize];
                let start = st.geo.blk(l.sec, l.next);
                st.logs[dest as usize].next += n as u32;
                let srcs: Vec<(Blk, Option<u32>)> =
                    piece.iter().map(|(m, w)| (m.src, *w)).collect();
                let dsts: Vec<Blk> = match st.mapping {
                    Some(map) if st.cfg.copyback_aware => {
                        cab_assign(&srcs, start, &|b| map.chip_of(b as u64))
                    }
                    _ => (start..start + n as Blk).collect(),
                };
                let eligible = st
                    .mapping
                    .map_or(0, |map| copyback_chunks(&srcs, &dsts, &map));
                for ((m, _), d) in piece.iter().zip(&dsts) {
                    st.move_block(m, *d);
                    st.mark_unwritten(*d, 1);
                }
                st.counters.gc_device_copies += n as u64;
                st.counters.zone_compactions += 1;
                st.counters.copyback_chunks += eligible;
                let pairs: Vec<(u64, u64)> = srcs
                    .iter()
                    .zip(&dsts)
                    .map(|(s, d)| (s.0 as u64, *d as u64))
                    .collect();
                pairs
            };
            let r = self.dev.zone_compaction(&pairs).await;
            {
                let mut st = self.st.borrow_mut();
                for &(_, d) in &pairs {
                    st.mark_unwritten(d as Blk, -1);
                }
            }
            r.map_err(io_err)?;
            if self.st.borrow().logs[dest as usize].next >= self.st.borrow().geo.sec_blocks {
                let _ = self.new_section(dest).await;
            }
            pos += n;
        }
        Ok(())
    }
}

/// Destination chunks whose four sources are one whole source chunk, in order, on the same
/// chip: what the device copies by copyback.
fn copyback_chunks(srcs: &[(Blk, Option<u32>)], dsts: &[Blk], map: &device::ChunkMapping) -> u64 {
    let by_dst: BTreeMap<Blk, Blk> = dsts.iter().zip(srcs).map(|(d, s)| (*d, s.0)).collect();
    let mut n = 0;
    for (&d, &s) in &by_dst {
        if d % 4 != 0 || s % 4 != 0 {
            continue;
        }
        let whole = (1..4).all(|k| by_dst.get(&(d + k)) == Some(&(s + k)));
        if whole && map.chip_of(d as u64) == map.chip_of(s as u64) {
            n += 1;
        }
    }
    n
}

impl super::fs::State {
    /// Drop up to `n` clean pages, least recently used first, while the cache is full.
    pub(super) fn evict_clean(&mut self, n: usize) {
        let mut freed = 0;
        while freed < n && self.cache.len() >= self.cache.capacity() {
            match self.cache.oldest_clean() {
                Some(k) => {
                    self.cache.remove(k);
                    freed += 1;
                }
                None => break,
            }
        }
    }

    /// Whether `m`'s block is still where the move found it.
    fn is_at(&self, m: &Move) -> bool {
        self.nodes
            .get(&m.nid)
            .and_then(|e| e.node.addrs().get(m.slot))
            == Some(&m.src)
    }

    /// Data block `m` now lives at `b`.
    fn move_block(&mut self, m: &Move, b: Blk) {
        self.sit.invalidate(m.src);
        self.sit.set_valid(b, (m.nid, m.slot as u16));
        if let Some(e) = self.nodes.get_mut(&m.nid) {
            e.node.addrs_mut()[m.slot] = b;
        }
        self.mark_dirty(m.nid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cab_gives_whole_chunks_a_slot_on_their_chip() {
        // 4 chips, chunk c on chip c % 4 (blocks 4c..4c+3).
        let chip = |b: Blk| (0u64, (b as u64 / 4) % 4);
        // Sources: whole chunk on chip 1 (blocks 4..8), a partial block 17, whole chunk on
        // chip 3 (blocks 12..16).
        let items: Vec<(Blk, Option<u32>)> = [4, 5, 6, 7]
            .iter()
            .map(|&b| (b, Some(1)))
            .chain([(17, None)])
            .chain([12, 13, 14, 15].iter().map(|&b| (b, Some(3))))
            .collect();
        // Region from block 100 (chunk 25, chip 1), 9 blocks: slots 100 (chip 1), 104 (chip 2).
        let d = cab_assign(&items, 100, &chip);
        assert_eq!(&d[..4], &[100, 101, 102, 103]);
        // Chip 3 has no slot: the chunk and the partial block fill what is left, in order.
        assert_eq!(&d[4..], &[104, 105, 106, 107, 108]);
        let map = device::ChunkMapping {
            lba_bytes: 4096,
            chunk_lbas_log2: 2,
            chip_id_shift: 2,
            chip_id_bits: 2,
            fcg_id_shift: 20,
            fcg_id_bits: 0,
            stripe_bits: 0,
            dies: 4,
            dies_per_zone: 4,
        };
        assert_eq!(copyback_chunks(&items, &d, &map), 1);
        // Copyback-unaware: in order; no chunk lands on its chip here.
        let cub: Vec<Blk> = (100..109).collect();
        assert_eq!(copyback_chunks(&items, &cub, &map), 1);
        let cub: Vec<Blk> = (101..110).collect();
        assert_eq!(copyback_chunks(&items, &cub, &map), 0);
    }
}
