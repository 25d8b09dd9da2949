//! What gives Balloon-ZNS flash back: a zone's extra segment returned to the pool when it
//! leaves the open states, a reset freeing its segments, migration of a full zone's residues
//! into its own home segment (§3.1), reclamation of the extra segment with the fewest live
//! residue bytes when free SSBs run short (§3.1), and the erase behind each of them (recorded
//! in the image before its bytes go).

use nand::DieId;
use sim::SimInstant;

use super::{seg_append, Extent, SegId, SegKind};
use crate::controller::Controller;

impl Controller {
    /// A zone leaves the open states: the extra segment it wrote goes back to the pool.
    pub(crate) fn balloon_release_extra(&mut self, zi: usize) {
        let Some(b) = self.balloon.as_mut() else {
            return;
        };
        let Some(id) = b.zones[zi].extra.take() else {
            return;
        };
        let s = b.seg_mut(id);
        s.owner = None;
        let (empty, room) = (s.valid == 0, s.len() < s.cap);
        if empty {
            // Every residue in it was reset or moved: nothing to keep.
            self.balloon_free(id, 0);
        } else if room {
            b.pool.push(id);
        }
    }

    /// Erase a segment's blocks and give its SSBs back.
    pub(super) fn balloon_free(&mut self, id: SegId, ready: u64) -> u64 {
        let b = self.balloon.as_mut().expect("balloon design");
        b.pool.retain(|&p| p != id);
        let s = b.segments[id].take().expect("live segment");
        b.free_slots.push(id);
        let g = b.lay.groups as usize;
        let first = s.row as usize * g + s.group as usize;
        for o in &mut b.ssb_owner[first..first + s.ssbs as usize] {
            *o = None;
        }
        b.free_ssbs += s.ssbs;
        match s.kind {
            SegKind::Home => b.counters.home_ssbs -= s.ssbs as u64,
            SegKind::Extra => b.counters.extra_ssbs -= s.ssbs as u64,
        }
        // The image records the segment free before its bytes go (storage.rs); if that
        // record cannot be written, the bytes stay (unreferenced once it is).
        let addr = b.addr(&s);
        if self.persist_command().is_ok() {
            if let crate::storage::Storage::Image(img) = &self.storage {
                let _ = img.erase_flash(addr, s.cap);
            }
        }
        let b = self.balloon.as_mut().expect("balloon design");
        // Buffered bytes that never reached flash give their buffer space back.
        self.write_buffer.discard(s.len() - s.flash.issued);
        let unit = self.layout.geometry.unit_bytes;
        let dies = s.ssbs * b.lay.dies_per_ssb;
        let programmed = s.flash.issued / unit;
        let start = ready.max(s.flash.busy_until);
        let mut done = start;
        for d in 0..dies.min(programmed as u32) {
            let die = DieId(s.group * b.lay.dies_per_ssb + d);
            done = done.max(self.flash.erase(die, 1, SimInstant::from_ns(start)).as_ns());
        }
        done
    }

    /// Reset: free the zone's home segments, drop its residues (an extra segment left with no
    /// live residue and no writer is freed at once). Returns when the erases are done.
    pub(crate) fn balloon_reset(&mut self, zi: usize, ready: u64) -> u64 {
        self.balloon_release_extra(zi);
        let b = self.balloon();
        let z = std::mem::take(&mut b.zones[zi]);
        let mut done = ready;
        for (id, _) in z.home {
            done = done.max(self.balloon_free(id, ready));
        }
        for e in z.residues {
            let b = self.balloon();
            let Some(s) = b.segments[e.seg].as_mut() else {
                continue;
            };
            if s.kind != SegKind::Extra {
                continue;
            }
            s.valid -= e.len;
            if s.valid == 0 && s.owner.is_none() {
                done = done.max(self.balloon_free(e.seg, ready));
            }
        }
        done
    }

    /// The zone is fully written: move its residues into its last home segment if they fit
    /// there (§3.1), so the extra segments can be reclaimed without copying them.
    pub(crate) fn balloon_migrate(&mut self, zi: usize, ready: u64) {
        self.balloon_release_extra(zi);
        let b = self.balloon();
        let z = &b.zones[zi];
        let total: u64 = z.residues.iter().map(|e| e.len).sum();
        let Some(&(home, _)) = z.home.last() else {
            return;
        };
        let in_extra = z
            .residues
            .iter()
            .any(|e| b.seg(e.seg).kind == SegKind::Extra);
        let room = b.seg(home).cap - b.seg(home).len();
        if total == 0 || !in_extra || room < total {
            return;
        }
        // The residues' bytes, read before anything moves (an unreadable image leaves them).
        let mut moved = Vec::with_capacity(total as usize);
        let b = self.balloon.as_ref().expect("balloon design");
        for e in &b.zones[zi].residues {
            if seg_append(b, &self.storage, e.seg, e.seg_off, e.len, &mut moved).is_err() {
                return;
            }
        }
        let b = self.balloon();
        let old = std::mem::take(&mut b.zones[zi].residues);
        let dst_off = b.seg(home).len();
        b.seg_mut(home).bytes.extend(&moved);
        let mut seen = Vec::new();
        let mut read_done = ready;
        for e in &old {
            read_done =
                read_done.max(self.balloon_read_bytes(e.seg, e.seg_off, e.len, ready, &mut seen));
        }
        let b = self.balloon();
        b.zones[zi].residues.push(Extent {
            stream: 0,
            seg: home,
            seg_off: dst_off,
            len: total,
        });
        b.counters.migrations += 1;
        b.counters.migrated_bytes += total;
        for e in old {
            let s = self.balloon().seg_mut(e.seg);
            s.valid -= e.len;
            if s.valid == 0 && s.owner.is_none() {
                self.balloon_free(e.seg, read_done);
            }
        }
        self.buffer_admit(read_done, total);
        self.balloon_flush(home, read_done);
    }

    /// Reclaim one extra segment (§3.1 residue space reclamation): the one with the fewest
    /// live residue bytes and no writer; its live residues are copied to another extra segment
    /// and it is erased. False when no segment would give space back.
    pub(super) fn balloon_reclaim_one(&mut self, t: u64) -> bool {
        let b = self.balloon();
        // Only full segments: the room left in a partial one is used without reclaiming it.
        let victim = b
            .segments
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
            .filter(|(_, s)| {
                s.kind == SegKind::Extra && s.owner.is_none() && s.valid < s.cap && s.len() == s.cap
            })
            .min_by_key(|(_, s)| s.valid)
            .map(|(i, s)| (i, s.valid));
        let Some((victim, valid)) = victim else {
            return false;
        };
        // Somewhere to copy to, checked before anything moves.
        let pool_room: u64 = b
            .pool
            .iter()
            .map(|&id| b.seg(id).cap - b.seg(id).len())
            .sum();
        if valid > pool_room + b.free_ssbs as u64 * b.lay.ssb_bytes {
            return false;
        }
        // Collect (zone, extent index) of live residues in the victim.
        let mut moves = Vec::new();
        for (zi, z) in b.zones.iter().enumerate() {
            for (k, e) in z.residues.iter().enumerate() {
                if e.seg == victim {
                    moves.push((zi, k));
                }
            }
        }
        let mut seen = Vec::new();
        let mut dst: Option<SegId> = None;
        let mut moved_bytes = 0;
        for (zi, k) in moves.into_iter().rev() {
            let b = self.balloon.as_ref().expect("balloon design");
            let e = b.zones[zi].residues[k];
            let mut bytes = Vec::new();
            if seg_append(b, &self.storage, victim, e.seg_off, e.len, &mut bytes).is_err() {
                return false;
            }
            let read_done = self.balloon_read_bytes(victim, e.seg_off, e.len, t, &mut seen);
            let mut pieces = Vec::new();
            let mut at = 0u64;
            while at < e.len {
                let b = self.balloon();
                let id = match dst {
                    Some(id) if b.seg(id).len() < b.seg(id).cap => id,
                    _ => {
                        let found = b.pool.iter().position(|&id| id != victim);
                        let id = match found {
                            Some(i) => b.pool.swap_remove(i),
                            None => b
                                .alloc(SegKind::Extra, false)
                                .expect("room checked before moving"),
                        };
                        dst = Some(id);
                        id
                    }
                };
                let s = b.seg_mut(id);
                let take = (s.cap - s.len()).min(e.len - at);
                let seg_off = s.len();
                s.bytes.extend(&bytes[at as usize..(at + take) as usize]);
                s.valid += take;
                pieces.push(Extent {
                    stream: e.stream + at,
                    seg: id,
                    seg_off,
                    len: take,
                });
                at += take;
                self.buffer_admit(read_done, take);
                self.balloon_flush(id, read_done);
            }
            moved_bytes += e.len;
            let b = self.balloon();
            b.zones[zi].residues.splice(k..k + 1, pieces);
        }
        if let Some(id) = dst {
            let b = self.balloon();
            if b.seg(id).len() < b.seg(id).cap {
                b.pool.push(id);
            }
        }
        let b = self.balloon();
        b.counters.reclamations += 1;
        b.counters.reclaimed_bytes += moved_bytes;
        b.seg_mut(victim).valid = 0;
        self.balloon_free(victim, t);
        true
    }
}
