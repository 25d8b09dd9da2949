//! Mount: replay the newest metadata zone whose log decodes, rebuild zone usage, repair files
//! that were open for writing at a power cut, roll to a fresh metadata zone and reset zones
//! with no live data.

use std::rc::Rc;

use device::{ZoneAction, ZoneState};

use super::super::meta::{self, Extent, FileMeta, Record, Superblock};
use super::super::plus::WriteClass;
use super::super::policy::Policy;
use super::{FsError, OpenFile, SetupError, ZoneFs, META_ZONES, SPARSE_HEADER};
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend> ZoneFs<B> {
    /// Mount: replay the newest metadata zone whose log decodes, rebuild zone usage, extend
    /// files that were open for writing to their zone's write pointer, roll to a fresh
    /// metadata zone, reset zones with no live data.
    /// The zone policy is the one the file system was made for (ZenFS's, or the ZenFS+
    /// configuration its superblock keeps).
    pub async fn mount(io: Rc<B>) -> Result<ZoneFs<B>, FsError> {
        Self::mount_as(io, None).await
    }

    /// Mount with zone policy `policy`, whatever the file system was made for.
    pub async fn mount_with(io: Rc<B>, policy: Policy) -> Result<ZoneFs<B>, FsError> {
        Self::mount_as(io, Some(policy)).await
    }

    async fn mount_as(io: Rc<B>, policy: Option<Policy>) -> Result<ZoneFs<B>, FsError> {
        let zones = io.report_zones().await?;
        if zones.len() < (META_ZONES + 2) as usize {
            return Err(SetupError::TooFewZonesToMount {
                zones: zones.len(),
                need: META_ZONES + 2,
            }
            .into());
        }
        let block = io.lba_bytes();
        let mut best: Option<(Superblock, Vec<Record>, u32)> = None;
        let mut first_err = None;
        for m in 0..META_ZONES {
            let z = &zones[m as usize];
            let written = (z.wp.saturating_sub(z.zslba)).min(z.capacity) * block;
            if written == 0 || z.state == ZoneState::Offline {
                continue;
            }
            let mut log = vec![0u8; written as usize];
            io.read(z.zslba * block, &mut log).await?;
            match meta::decode_log(&log, block as usize) {
                Ok((sb, recs)) if recs.iter().any(|r| matches!(r, Record::Snapshot(_))) => {
                    if best
                        .as_ref()
                        .is_none_or(|(b, _, _)| sb.sequence > b.sequence)
                    {
                        best = Some((sb, recs, m));
                    }
                }
                Ok(_) => {} // a roll cut before its snapshot: the older zone holds the truth
                Err(e) => first_err = first_err.or(Some(e)),
            }
        }
        let Some((sb, recs, meta_zone)) = best else {
            return Err(match first_err {
                Some(e) => FsError::Meta(e),
                None => FsError::NoFileSystem,
            });
        };
        let izg = (sb.izg_groups > 0).then_some(super::IzgMap {
            groups: sb.izg_groups,
        });
        let policy = policy.unwrap_or(match sb.plus {
            Some(cfg) => Policy::ZenFsPlus(cfg),
            None => Policy::ZenFs,
        });
        let fs = ZoneFs::new(io.clone(), &zones, sb.finish_threshold, policy, izg)?;
        {
            let mut st = fs.st.borrow_mut();
            st.sb = sb.clone();
            st.meta_zone = meta_zone;
            for (i, z) in st.zones.iter_mut().enumerate() {
                let d = &zones[i + META_ZONES as usize];
                z.wp = match d.state {
                    ZoneState::Full => d.capacity * block,
                    _ => (d.wp - d.zslba) * block,
                };
                z.finished = d.state == ZoneState::Full && z.wp < z.capacity;
            }
        }
        let mut replayed = meta::replay(&recs);
        // Repair: a file open for writing at the crash keeps what reached its zone.
        for f in replayed.values_mut() {
            if let Some(start) = f.active_start.take() {
                let zone_end = {
                    let st = fs.st.borrow();
                    st.zone_of(start, fs.zone_bytes)
                        .map(|zi| st.zones[zi].start + st.zones[zi].wp)
                };
                if let Some(end) = zone_end {
                    fs.repair(f, start, end).await?;
                }
                f.size = f.extents.iter().map(|e| e.len).sum();
            }
        }
        {
            let mut st = fs.st.borrow_mut();
            for (id, f) in replayed {
                for e in &f.extents {
                    if let Some(zi) = st.zone_of(e.start, fs.zone_bytes) {
                        st.zones[zi].used += e.len;
                        st.zones[zi].lifetime = f.lifetime;
                    }
                }
                for l in &f.links {
                    st.names.insert(l.clone(), id);
                }
                st.next_id = st.next_id.max(id + 1);
                let synced = f.extents.len();
                st.files.insert(
                    id,
                    OpenFile {
                        meta: f,
                        synced,
                        zone: None,
                        class: WriteClass::OTHER,
                        group: None,
                        writing: false,
                        readers: 0,
                    },
                );
            }
        }
        let next = (meta_zone + 1) % META_ZONES;
        io.zone_action(next, ZoneAction::Reset).await?;
        fs.start_meta_zone(next, sb.sequence + 1).await?;
        for m in 0..META_ZONES {
            if m != next {
                io.zone_action(m, ZoneAction::Reset).await?;
            }
        }
        fs.reset_unused().await?;
        if fs.plus.is_some() {
            // Stripe groups are not kept across a mount: their partly written zones are
            // finished, so no new group or single-zone file mixes into them and the device's
            // active zones come back.
            let partial: Vec<usize> = {
                let st = fs.st.borrow();
                (0..st.zones.len())
                    .filter(|&i| st.zones[i].is_active())
                    .collect()
            };
            for z in partial {
                fs.finish_zone(z).await?;
            }
        }
        Ok(fs)
    }

    /// Extend a file that was open for writing at a power cut with what reached its zone
    /// between `start` and the zone's write pointer `end`: one extent for a buffered file
    /// (padding included, as ZenFS), the pieces the inline headers describe for a sparse one.
    async fn repair(&self, f: &mut FileMeta, start: u64, end: u64) -> Result<(), FsError> {
        let in_zone = |e: &&Extent| e.start >= start && e.start < end;
        if !f.sparse {
            let covered = f
                .extents
                .iter()
                .filter(in_zone)
                .map(|e| e.start + e.len)
                .max()
                .unwrap_or(start);
            if end > covered {
                f.extents.push(Extent {
                    start: covered,
                    len: end - covered,
                });
            }
            return Ok(());
        }
        // Sparse: walk the headers from the last recorded piece on.
        let mut at = f
            .extents
            .iter()
            .filter(in_zone)
            .map(|e| (e.start + e.len).div_ceil(self.block) * self.block)
            .max()
            .unwrap_or(start);
        let mut head = vec![0u8; self.block as usize];
        while at + self.block <= end {
            self.io.read(at, &mut head).await?;
            let len = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
            let padded = (SPARSE_HEADER as u64 + len).div_ceil(self.block) * self.block;
            if len == 0 || at + padded > end {
                break;
            }
            f.extents.push(Extent {
                start: at + SPARSE_HEADER as u64,
                len,
            });
            at += padded;
        }
        Ok(())
    }
}
