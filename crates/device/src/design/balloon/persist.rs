//! Balloon-ZNS's tables in an image: the whole of them for a checkpoint, what one command
//! changed for a journal record, and both read back (the order is in `storage.rs`).

use serde::{Deserialize, Serialize};

use super::{BZone, Balloon, BalloonCounters, SegId, SegKind, Segment};
use crate::design::region::FlashRegion;

/// A segment as the image's table keeps it (its bytes are in the flash section).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SavedSegment {
    id: SegId,
    kind: SegKind,
    row: u32,
    group: u32,
    ssbs: u32,
    len: u64,
    valid: u64,
    owner: Option<usize>,
}

/// The Balloon-ZNS tables, as saved in an image (zone-level map, window starts, residue
/// extents, segment table: what the device keeps in capacitor-protected DRAM).
#[derive(Serialize, Deserialize)]
pub(crate) struct SavedBalloon {
    segments: Vec<SavedSegment>,
    zones: Vec<(usize, BZone)>,
    pool: Vec<SegId>,
    counters: BalloonCounters,
}

/// What changed since the last record: segments (None: freed), zones, the pool, counters.
#[derive(Serialize, Deserialize)]
pub(crate) struct BalloonDelta {
    segments: Vec<(SegId, Option<SavedSegment>)>,
    zones: Vec<(usize, BZone)>,
    pool: Vec<SegId>,
    counters: BalloonCounters,
}

/// The tables as the image last recorded them, to find what changed.
#[derive(Default)]
pub(crate) struct Recorded {
    segments: Vec<Option<SavedSegment>>,
    zones: Vec<BZone>,
    pool: Vec<SegId>,
}

fn saved_segment(id: SegId, s: &Segment) -> SavedSegment {
    SavedSegment {
        id,
        kind: s.kind,
        row: s.row,
        group: s.group,
        ssbs: s.ssbs,
        len: s.len(),
        valid: s.valid,
        owner: s.owner,
    }
}

impl Balloon {
    /// Write the segment bytes the image lacks (before any record that points at them).
    pub(crate) fn persist_bytes(&mut self, img: &crate::storage::ImageFile) -> std::io::Result<()> {
        let lay = &self.lay;
        for s in self.segments.iter_mut().flatten() {
            s.region.bytes.persist(img, super::seg_addr(lay, s))?;
        }
        Ok(())
    }

    /// What changed since the last record or checkpoint (None: nothing).
    pub(crate) fn take_delta(&mut self) -> Option<BalloonDelta> {
        let r = &mut self.recorded;
        let n = self.segments.len().max(r.segments.len());
        r.segments.resize(n, None);
        let mut segments = Vec::new();
        for (id, rec) in r.segments.iter_mut().enumerate() {
            let now = self.segments.get(id).and_then(|s| s.as_ref());
            let now = now.map(|s| saved_segment(id, s));
            if *rec != now {
                segments.push((id, now.clone()));
                *rec = now;
            }
        }
        r.zones.resize_with(self.zones.len(), BZone::default);
        let mut zones = Vec::new();
        for (i, (rec, now)) in r.zones.iter_mut().zip(&self.zones).enumerate() {
            if rec != now {
                zones.push((i, now.clone()));
                *rec = now.clone();
            }
        }
        if segments.is_empty() && zones.is_empty() && r.pool == self.pool {
            return None;
        }
        r.pool.clone_from(&self.pool);
        Some(BalloonDelta {
            segments,
            zones,
            pool: self.pool.clone(),
            counters: self.counters.clone(),
        })
    }

    /// The whole tables, for a checkpoint (what changed is recorded by it).
    pub(crate) fn saved(&mut self) -> SavedBalloon {
        self.recorded.segments = (0..self.segments.len())
            .map(|id| self.segments[id].as_ref().map(|s| saved_segment(id, s)))
            .collect();
        self.recorded.zones = self.zones.clone();
        self.recorded.pool = self.pool.clone();
        SavedBalloon {
            segments: self.recorded.segments.iter().flatten().cloned().collect(),
            zones: self
                .zones
                .iter()
                .enumerate()
                .filter(|(_, z)| z.cur.page > 0 || !z.home.is_empty())
                .map(|(i, z)| (i, z.clone()))
                .collect(),
            pool: self.pool.clone(),
            counters: self.counters.clone(),
        }
    }

    /// Rebuild from a checkpoint and the journal records after it. Returns the bytes still in
    /// partial program units (they sit in the capacitor-protected buffer).
    pub(crate) fn restore(
        &mut self,
        mut t: SavedBalloon,
        deltas: Vec<BalloonDelta>,
        unit: u64,
    ) -> std::io::Result<u64> {
        let bad = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidData, m);
        if !deltas.is_empty() {
            let mut segs: std::collections::BTreeMap<SegId, SavedSegment> =
                t.segments.into_iter().map(|s| (s.id, s)).collect();
            let mut zones: std::collections::BTreeMap<usize, BZone> = t.zones.into_iter().collect();
            for d in deltas {
                for (id, s) in d.segments {
                    match s {
                        Some(s) => segs.insert(id, s),
                        None => segs.remove(&id),
                    };
                }
                zones.extend(d.zones);
                t.pool = d.pool;
                t.counters = d.counters;
            }
            t.segments = segs.into_values().collect();
            t.zones = zones.into_iter().collect();
        }
        let g = self.lay.groups as usize;
        let mut buffered = 0;
        for s in t.segments {
            let first = s.row as usize * g + s.group as usize;
            let cap = s.ssbs as u64 * self.lay.ssb_bytes;
            if first + s.ssbs as usize > self.ssb_owner.len() || s.len > cap {
                return Err(bad(format!("balloon table: segment {} out of range", s.id)));
            }
            if self.ssb_owner[first..first + s.ssbs as usize]
                .iter()
                .any(|o| o.is_some())
            {
                return Err(bad(format!(
                    "balloon table: segment {} shares its SSBs",
                    s.id
                )));
            }
            let mut seg = Segment {
                kind: s.kind,
                row: s.row,
                group: s.group,
                ssbs: s.ssbs,
                cap,
                // The bytes stay in the image until read.
                region: FlashRegion::in_image(s.len),
                valid: s.valid,
                owner: s.owner,
            };
            seg.region.flash.issued = s.len / unit * unit;
            buffered += s.len - seg.region.flash.issued;
            if self.segments.len() <= s.id {
                self.segments.resize_with(s.id + 1, || None);
            }
            for o in &mut self.ssb_owner[first..first + s.ssbs as usize] {
                *o = Some(s.id);
            }
            self.free_ssbs -= s.ssbs;
            self.segments[s.id] = Some(seg);
        }
        self.free_slots = (0..self.segments.len())
            .filter(|&i| self.segments[i].is_none())
            .collect();
        for (i, z) in t.zones {
            *self
                .zones
                .get_mut(i)
                .ok_or_else(|| bad(format!("balloon table: zone {i}")))? = z;
        }
        self.pool = t.pool;
        self.counters = t.counters;
        // What was just read is what the image holds.
        self.recorded.segments = (0..self.segments.len())
            .map(|id| self.segments[id].as_ref().map(|s| saved_segment(id, s)))
            .collect();
        self.recorded.zones = self.zones.clone();
        self.recorded.pool = self.pool.clone();
        Ok(buffered)
    }
}

impl Balloon {
    /// Does zone `zi` still hold pages or segments (a Reset the image recorded but a kill
    /// interrupted)?
    pub(crate) fn zone_holds_data(&self, zi: usize) -> bool {
        let z = &self.zones[zi];
        z.cur.page > 0 || !z.home.is_empty() || !z.residues.is_empty() || z.extra.is_some()
    }
}
