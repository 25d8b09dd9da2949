//! Checkpoints (F2FS `write_checkpoint`): dirty dentry pages (all dirty pages for `sync`),
//! every dirty node, then the NAT and SIT changes (into the checkpoint's summary journals
//! while they fit, 38 NAT and 6 SIT entries, else whole blocks into their shadow copies with
//! the version bitmaps flipped), the SSA blocks of segments whose summaries changed, and the
//! checkpoint pack into the other of the two slots. Then prefree sections become free and
//! their zones are reset.

use super::fs::{io_err, Lfs};
use super::layout::{self, encode_nat_entry, encode_sit_entry, Checkpoint, LogPos};
use super::meta::MetaArea;
use super::node::NULL;
use super::{LogType, BLOCK, BLOCKS_PER_SEG};
use crate::fs::FsError;
use crate::zoned::ZonedBackend;
use device::ZoneAction;

/// Why a checkpoint is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    Gc,
    Sync,
    Fsync,
    Periodic,
    /// Few node ids left free while unlinks' ids wait for a checkpoint (`balance_fs`).
    Nids,
    Mount,
    Mkfs,
}

/// Marks a checkpoint running (`State::cp_running`) until dropped, on every way out.
struct CpRunning<'a>(&'a std::cell::RefCell<super::fs::State>);

impl<'a> CpRunning<'a> {
    fn start(st: &'a std::cell::RefCell<super::fs::State>) -> Self {
        st.borrow_mut().cp_running = true;
        CpRunning(st)
    }
}

impl Drop for CpRunning<'_> {
    fn drop(&mut self) {
        self.0.borrow_mut().cp_running = false;
    }
}

fn flip(bits: &mut [u8], i: u32) -> u32 {
    bits[i as usize / 8] ^= 1 << (i % 8);
    (bits[i as usize / 8] >> (i % 8) & 1) as u32
}

impl<B: ZonedBackend, M: MetaArea> Lfs<B, M> {
    pub(super) async fn checkpoint(&self, cause: Cause) -> Result<(), FsError> {
        let all_data = matches!(cause, Cause::Sync | Cause::Mount | Cause::Mkfs);
        let sim = self.dev.sim().clone();
        let t0 = sim.now();
        let (nodes0, closes0, close_ns0) = {
            let st = self.st.borrow();
            let c = &st.counters;
            (c.node_blocks(), c.tl_closes, c.tl_close_ns)
        };
        // Every log has a current section (F2FS keeps six open), so the checkpoint records
        // where each writes next (roll-forward starts at the warm node log's).
        for ty in LogType::ALL {
            if self.st.borrow().logs[ty as usize].sec == super::fs::NO_SEC {
                let _ = self.new_section(ty).await;
            }
        }
        let inos = self.st.borrow().cache.dirty_inodes();
        for ino in inos {
            if all_data || self.st.borrow().is_dir(ino) {
                self.writeback_inode(ino, false).await?;
            }
        }
        // From here to the pack, buffered writes wait (F2FS's `block_operations`).
        let _held = CpRunning::start(&self.st);
        loop {
            let dirty: Vec<_> = {
                let st = self.st.borrow();
                st.dirty_nodes
                    .iter()
                    .map(|n| (*n, st.node_log(*n)))
                    .collect()
            };
            if dirty.is_empty() {
                break;
            }
            for (nid, ty) in dirty {
                self.write_node(nid, ty, 0).await?;
            }
        }
        self.flush().await?;
        let t1 = sim.now();
        self.write_nat().await?;
        self.write_sit().await?;
        self.write_ssa().await?;
        let t2 = sim.now();
        // Zones left since (threaded logs to close, tails to finish) before any reset.
        self.flush().await?;
        let t3 = sim.now();
        let blocks = {
            let st = self.st.borrow();
            let mut logs = [LogPos::default(); 6];
            for (k, l) in st.logs.iter().enumerate() {
                // A threaded log records the block it writes next, so roll-forward starts
                // there without the bitmap it was opened with.
                let next = match l.tl {
                    true => st.tl_next(l.sec, l.next).unwrap_or(st.geo.sec_blocks),
                    false => l.next,
                };
                logs[k] = LogPos {
                    sec: l.sec,
                    next,
                    tl: l.tl,
                };
            }
            let cp = Checkpoint {
                version: st.cp_ver + 1,
                next_nid: st.next_nid,
                logs,
                nat_bits: st.nat_bits.clone(),
                sit_bits: st.sit_bits.clone(),
                nat_journal: st
                    .nat_journal
                    .iter()
                    .map(|n| (*n, st.nodes.get(n).map_or(NULL, |e| e.addr)))
                    .collect(),
                sit_journal: st
                    .sit_journal
                    .iter()
                    .map(|s| (*s, st.sit.sit_entry(*s)))
                    .collect(),
            };
            cp.encode()
        };
        let base = {
            let st = self.st.borrow();
            st.geo.cp_addr(st.next_pack)
        };
        for (k, b) in blocks.iter().enumerate() {
            self.meta
                .write_block(base + k as u64, b)
                .await
                .map_err(io_err)?;
        }
        let t4 = sim.now();
        let prefree = {
            let mut st = self.st.borrow_mut();
            st.counters.cp_blocks += blocks.len() as u64;
            st.cp_ver += 1;
            st.next_pack ^= 1;
            let nat = std::mem::take(&mut st.nat_dirty);
            for nid in nat {
                if let Some(e) = st.nodes.get_mut(&nid) {
                    e.ckpt_addr = e.addr;
                }
            }
            let freed = std::mem::take(&mut st.freed_nids);
            st.free_nids.extend(freed);
            st.need_cp = false;
            let c = &mut st.counters.checkpoints;
            match cause {
                Cause::Gc => c.gc += 1,
                Cause::Sync => c.sync += 1,
                Cause::Fsync => c.fsync += 1,
                Cause::Periodic => c.periodic += 1,
                Cause::Nids => c.nids += 1,
                Cause::Mount => c.mount += 1,
                Cause::Mkfs => c.mkfs += 1,
            }
            st.sit.checkpointed()
        };
        for sec in prefree {
            self.dev
                .zone_action(sec, ZoneAction::Reset)
                .await
                .map_err(io_err)?;
            self.st.borrow_mut().counters.zone_resets += 1;
        }
        let t5 = sim.now();
        let mut st = self.st.borrow_mut();
        let nodes = st.counters.node_blocks() - nodes0;
        let (closes, close_ns) = (st.counters.tl_closes, st.counters.tl_close_ns);
        let c = &mut st.counters.cp_times;
        c.tl_close_ns += close_ns - close_ns0;
        c.nodes_ns += t1.since(t0).as_ns();
        c.meta_ns += t2.since(t1).as_ns();
        c.close_ns += t3.since(t2).as_ns();
        c.pack_ns += t4.since(t3).as_ns();
        c.reset_ns += t5.since(t4).as_ns();
        c.node_blocks += nodes;
        c.tl_closes += closes - closes0;
        let all = t5.since(t0).as_ns();
        match cause {
            Cause::Gc => c.gc_ns += all,
            Cause::Periodic => c.periodic_ns += all,
            _ => c.other_ns += all,
        }
        Ok(())
    }

    async fn write_nat(&self) -> Result<(), FsError> {
        let blocks: Vec<(u64, Vec<u8>)> = {
            let mut st = self.st.borrow_mut();
            let st = &mut *st;
            st.nat_journal.extend(st.nat_dirty.iter().copied());
            if st.nat_journal.len() <= layout::NAT_JOURNAL {
                return Ok(());
            }
            let journal = std::mem::take(&mut st.nat_journal);
            let mut ids: Vec<u32> = journal.iter().map(|n| n / layout::NAT_PER_BLOCK).collect();
            ids.dedup();
            let mut out = vec![];
            for i in ids {
                let mut b = vec![0u8; BLOCK];
                for k in 0..layout::NAT_PER_BLOCK {
                    let nid = i * layout::NAT_PER_BLOCK + k;
                    let (ino, addr) = st
                        .nodes
                        .get(&nid)
                        .filter(|e| e.addr != NULL)
                        .map_or((0, NULL), |e| (e.node.ino, e.addr));
                    encode_nat_entry(ino, addr, &mut b[9 * k as usize..9 * k as usize + 9]);
                }
                let copy = flip(&mut st.nat_bits, i);
                out.push((st.geo.nat_addr(i, copy), b));
            }
            st.counters.nat_blocks += out.len() as u64;
            out
        };
        for (a, b) in blocks {
            self.meta.write_block(a, &b).await.map_err(io_err)?;
        }
        Ok(())
    }

    async fn write_sit(&self) -> Result<(), FsError> {
        let blocks: Vec<(u64, Vec<u8>)> = {
            let mut st = self.st.borrow_mut();
            let dirty = std::mem::take(&mut st.sit.dirty_sit);
            st.sit_journal.extend(dirty);
            if st.sit_journal.len() <= layout::SIT_JOURNAL {
                return Ok(());
            }
            let journal = std::mem::take(&mut st.sit_journal);
            let mut ids: Vec<u32> = journal.iter().map(|s| s / layout::SIT_PER_BLOCK).collect();
            ids.dedup();
            let mut out = vec![];
            for i in ids {
                let mut b = vec![0u8; BLOCK];
                for k in 0..layout::SIT_PER_BLOCK {
                    let seg = i * layout::SIT_PER_BLOCK + k;
                    if seg < st.geo.main_segs {
                        let at = k as usize * layout::SIT_ENTRY_BYTES;
                        encode_sit_entry(
                            &st.sit.sit_entry(seg),
                            &mut b[at..at + layout::SIT_ENTRY_BYTES],
                        );
                    }
                }
                let copy = flip(&mut st.sit_bits, i);
                out.push((st.geo.sit_addr(i, copy), b));
            }
            st.counters.sit_blocks += out.len() as u64;
            out
        };
        for (a, b) in blocks {
            self.meta.write_block(a, &b).await.map_err(io_err)?;
        }
        Ok(())
    }

    async fn write_ssa(&self) -> Result<(), FsError> {
        let blocks: Vec<(u64, Vec<u8>)> = {
            let mut st = self.st.borrow_mut();
            let dirty = std::mem::take(&mut st.sit.dirty_ssa);
            let per = BLOCKS_PER_SEG as usize;
            let out: Vec<_> = dirty
                .into_iter()
                .map(|seg| {
                    let owners = &st.sit.owners[seg as usize * per..(seg as usize + 1) * per];
                    let node = st.sit.segs[seg as usize].ty.is_node();
                    (st.geo.ssa_addr(seg), layout::encode_ssa(owners, node))
                })
                .collect();
            st.counters.ssa_blocks += out.len() as u64;
            out
        };
        for (a, b) in blocks {
            self.meta.write_block(a, &b).await.map_err(io_err)?;
        }
        Ok(())
    }
}

impl LogType {
    /// Whether GC moves a victim of this type's data to the hot data log (else cold).
    pub fn gc_data_log(self) -> LogType {
        if self == LogType::HotData {
            LogType::HotData
        } else {
            LogType::ColdData
        }
    }
}
