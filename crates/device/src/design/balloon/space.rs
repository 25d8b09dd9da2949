//! What gives Balloon-ZNS flash back: a zone's extra segment returned to the pool when it
//! leaves the open states, a reset freeing its segments, migration of a full zone's residues
//! into its own home segment (§3.1), reclamation of the extra segment with the fewest live
//! residue bytes when free SSBs run short (§3.1), and the erase behind each of them (recorded
//! in the image before its bytes go).

use nand::DieId;
use sim::SimInstant;

use super::{seg_append, Balloon, Extent, SegId, SegKind};
use crate::design::Media;

impl Balloon {
    /// A zone leaves the open states: the extra segment it wrote goes back to the pool.
    pub(crate) fn release_extra(&mut self, m: &mut Media<'_>, zi: usize) {
        let b = &mut *self;
        let Some(id) = b.zones[zi].extra.take() else {
            return;
        };
        let s = b.seg_mut(id);
        s.owner = None;
        let (empty, room) = (s.valid == 0, s.len() < s.cap);
        if empty {
            // Every residue in it was reset or moved: nothing to keep.
            self.free(m, id, 0);
        } else if room {
            b.pool.push(id);
        }
    }

    /// Erase a segment's blocks and give its SSBs back.
    pub(super) fn free(&mut self, m: &mut Media<'_>, id: SegId, ready: u64) -> u64 {
        let b = &mut *self;
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
        if m.commit(self).is_ok() {
            if let crate::storage::Storage::Image(img) = &m.storage {
                let _ = img.erase_flash(addr, s.cap);
            }
        }
        // Buffered bytes that never reached flash give their buffer space back.
        let per_ssb = self.lay.dies_per_ssb;
        s.region
            .erase(m, SimInstant::from_ns(ready), s.ssbs * per_ssb, |d| {
                DieId(s.group * per_ssb + d)
            })
            .as_ns()
    }

    /// Reset: free the zone's home segments, drop its residues (an extra segment left with no
    /// live residue and no writer is freed at once). Returns when the erases are done.
    pub(crate) fn reset(&mut self, m: &mut Media<'_>, zi: usize, ready: u64) -> u64 {
        self.release_extra(m, zi);
        let b = &mut *self;
        let z = std::mem::take(&mut b.zones[zi]);
        let mut done = ready;
        for (id, _) in z.home {
            done = done.max(self.free(m, id, ready));
        }
        for e in z.residues {
            let b = &mut *self;
            let Some(s) = b.segments[e.seg].as_mut() else {
                continue;
            };
            if s.kind != SegKind::Extra {
                continue;
            }
            s.valid -= e.len;
            if s.valid == 0 && s.owner.is_none() {
                done = done.max(self.free(m, e.seg, ready));
            }
        }
        done
    }

    /// The zone is fully written: move its residues into its last home segment if they fit
    /// there (§3.1), so the extra segments can be reclaimed without copying them.
    pub(crate) fn migrate(&mut self, m: &mut Media<'_>, zi: usize, ready: u64) {
        self.release_extra(m, zi);
        let b = &mut *self;
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
        let b = &*self;
        for e in &b.zones[zi].residues {
            if seg_append(b, m.storage, e.seg, e.seg_off, e.len, &mut moved).is_err() {
                return;
            }
        }
        let b = &mut *self;
        let old = std::mem::take(&mut b.zones[zi].residues);
        let dst_off = b.seg(home).len();
        b.seg_mut(home).region.bytes.extend(&moved);
        let mut seen = Vec::new();
        let mut read_done = ready;
        for e in &old {
            read_done =
                read_done.max(self.read_bytes(m, e.seg, e.seg_off, e.len, ready, &mut seen));
        }
        let b = &mut *self;
        b.zones[zi].residues.push(Extent {
            stream: 0,
            seg: home,
            seg_off: dst_off,
            len: total,
        });
        b.counters.migrations += 1;
        b.counters.migrated_bytes += total;
        for e in old {
            let s = self.seg_mut(e.seg);
            s.valid -= e.len;
            if s.valid == 0 && s.owner.is_none() {
                self.free(m, e.seg, read_done);
            }
        }
        m.buffer_admit(SimInstant::from_ns(read_done), total);
        self.flush(m, home, read_done);
    }

    /// Reclaim one extra segment (§3.1 residue space reclamation): the one with the fewest
    /// live residue bytes and no writer; its live residues are copied to another extra segment
    /// and it is erased. False when no segment would give space back.
    pub(super) fn reclaim_one(&mut self, m: &mut Media<'_>, t: u64) -> bool {
        let b = &mut *self;
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
            let b = &*self;
            let e = b.zones[zi].residues[k];
            let mut bytes = Vec::new();
            if seg_append(b, m.storage, victim, e.seg_off, e.len, &mut bytes).is_err() {
                return false;
            }
            let read_done = self.read_bytes(m, victim, e.seg_off, e.len, t, &mut seen);
            let mut pieces = Vec::new();
            let mut at = 0u64;
            while at < e.len {
                let b = &mut *self;
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
                s.region
                    .bytes
                    .extend(&bytes[at as usize..(at + take) as usize]);
                s.valid += take;
                pieces.push(Extent {
                    stream: e.stream + at,
                    seg: id,
                    seg_off,
                    len: take,
                });
                at += take;
                m.buffer_admit(SimInstant::from_ns(read_done), take);
                self.flush(m, id, read_done);
            }
            moved_bytes += e.len;
            let b = &mut *self;
            b.zones[zi].residues.splice(k..k + 1, pieces);
        }
        if let Some(id) = dst {
            let b = &mut *self;
            if b.seg(id).len() < b.seg(id).cap {
                b.pool.push(id);
            }
        }
        let b = &mut *self;
        b.counters.reclamations += 1;
        b.counters.reclaimed_bytes += moved_bytes;
        b.seg_mut(victim).valid = 0;
        self.free(m, victim, t);
        true
    }
}
