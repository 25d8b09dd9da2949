//! zonemode=zbd: the job's zones, sequential writes at write pointers (finishing a zone too
//! full for a block, resetting a zone met full on entry), random writes at the write pointers
//! of randomly chosen zones within the open-zone limit (fio's zbd.c), trims as zone resets,
//! and reads below write pointers.

use device::{Command, DeviceHandle, Status, ZoneAction, ZoneState};

use super::{CcIo, Io, JobState};
use crate::fio::options::{Direction, Pattern};

/// The run's write zones (fio's `zbdi->write_zones[]`, shared by every job of the device):
/// each with the index of the job that opened it, and fio's zone_reset_frequency counter.
#[derive(Default)]
pub(super) struct ZbdShared {
    write_zones: Vec<(u64, usize)>,
    write_cnt: u64,
}

impl JobState {
    pub(super) fn first_zone(&self) -> u64 {
        self.start / self.g.zone_size_lbas
    }
    pub(super) fn end_zone(&self) -> u64 {
        self.end.div_ceil(self.g.zone_size_lbas)
    }
    /// Move to the next zone of the region. Past its end the job starts over only when it is
    /// time based or has an explicit io_size, as in fio; otherwise it is done.
    pub(super) fn advance_zone(&mut self) {
        self.cur_zone += 1;
        if self.cur_zone >= self.end_zone() {
            self.cur_zone = self.first_zone();
            if !(self.spec.time_based
                || self.spec.io_size.is_some()
                || self.spec.loops > 1
                || self.spec.number_ios.is_some())
            {
                self.done = true;
            }
        }
        self.entering_zone = true;
        self.pos = self.cur_zone * self.g.zone_size_lbas;
        self.chunk_cursor = 0;
    }
    pub(super) fn zone_mgmt(
        &mut self,
        dev: &DeviceHandle,
        now: u64,
        zone: u64,
        action: ZoneAction,
    ) -> Result<u64, Status> {
        let slba = zone * self.g.zone_size_lbas;
        let c = dev.with(|c| {
            c.submit(
                sim::SimInstant::from_ns(now),
                Command::ZoneMgmtSend {
                    slba,
                    action,
                    select_all: false,
                },
            )
        });
        if c.status != Status::SUCCESS {
            return Err(c.status);
        }
        if action == ZoneAction::Reset {
            self.index.borrow_mut()[zone as usize].clear();
            self.zone_was_reset(zone);
        }
        match action {
            ZoneAction::Reset => self.result.zone_resets += 1,
            ZoneAction::Finish => self.result.zone_finishes += 1,
            _ => {}
        }
        Ok(c.done_at.as_ns())
    }
    pub(super) fn next_zbd_write(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
        let lba = self.g.lba_bytes;
        let bs = self.bs_lbas;
        let cc = self.spec.compressed_io;
        for _ in 0..=2 * (self.end_zone() - self.first_zone()) {
            let d = dev.with(|c| c.zone(self.cur_zone as u32));
            if matches!(d.state, ZoneState::ReadOnly | ZoneState::Offline) {
                self.advance_zone();
                continue;
            }
            // In bytes; a CW needs room for its data uncompressed (the worst case).
            let cap = d.capacity * lba;
            let mut used = if d.state == ZoneState::Full {
                cap
            } else {
                d.byte_wp
            };
            let mut wait_until = None;
            match self.reserved {
                Some((z, given, t)) if z == self.cur_zone && (used < given || now < t) => {
                    used = used.max(given);
                    wait_until = Some(t);
                }
                Some(_) => self.reserved = None,
                None => {}
            }
            let room = cap - used;
            if room >= bs * lba {
                self.entering_zone = false;
                if let Some((z, given, _)) = self.reserved.as_mut() {
                    if *z == self.cur_zone {
                        *given = used + bs * lba;
                    }
                }
                return Some(Io {
                    dir: Direction::Write,
                    lba: d.zslba + used / lba,
                    nlb: bs as u32,
                    wait_until,
                    cc: cc.then_some(CcIo::Write {
                        intra: (used % lba) as u32,
                    }),
                });
            }
            if self.entering_zone && used > 0 {
                // A zone met full (or too full) on entry is reset, as fio does.
                return match self.zone_mgmt(dev, now, self.cur_zone, ZoneAction::Reset) {
                    Ok(t) => {
                        self.entering_zone = false;
                        // A compressed write's footprint is known only once it is made: the
                        // others must find the byte write pointer as it then stands.
                        if !cc {
                            self.reserved = Some((self.cur_zone, bs * lba, t));
                        }
                        Some(Io {
                            dir: Direction::Write,
                            lba: d.zslba,
                            nlb: bs as u32,
                            wait_until: Some(t),
                            cc: cc.then_some(CcIo::Write { intra: 0 }),
                        })
                    }
                    Err(s) => self.fail(format!("zone reset at LBA {}: {s}", d.zslba)),
                };
            }
            if room > 0 && d.state != ZoneState::Full {
                // Less than a block left: finish the zone rather than leave it open.
                if let Err(s) = self.zone_mgmt(dev, now, self.cur_zone, ZoneAction::Finish) {
                    return self.fail(format!("zone finish at LBA {}: {s}", d.zslba));
                }
            }
            self.advance_zone();
            if self.done {
                return None;
            }
        }
        self.fail("no writable zone in the job's region".into())
    }
    pub(super) fn readable_end(&self, d: &device::ZoneDescriptor) -> u64 {
        if self.spec.read_beyond_wp {
            d.zslba + d.capacity
        } else {
            match d.state {
                ZoneState::Full => d.zslba + d.capacity,
                ZoneState::Offline => d.zslba,
                ZoneState::ReadOnly => d.zslba + d.capacity,
                _ => d.wp,
            }
        }
    }

    pub(super) fn next_zbd_seq_read(&mut self, dev: &DeviceHandle) -> Option<Io> {
        let zones = self.end_zone() - self.first_zone();
        for _ in 0..=zones {
            let d = dev.with(|c| c.zone(self.cur_zone as u32));
            let end = self.readable_end(&d).min(self.end);
            if self.pos.max(self.start) + self.bs_lbas <= end {
                let lba = self.pos.max(self.start);
                self.pos = lba + self.bs_lbas;
                self.idle_scans = 0;
                return Some(Io {
                    dir: Direction::Read,
                    lba,
                    nlb: self.bs_lbas as u32,
                    wait_until: None,
                    cc: None,
                });
            }
            self.idle_scans += 1;
            if self.idle_scans > zones {
                break;
            }
            self.advance_zone();
            if self.done {
                return None;
            }
        }
        if self.result.read.ios == 0 && self.issued == 0 {
            return self.fail("nothing to read: no zone in the region holds a block of data below its write pointer".into());
        }
        self.done = true;
        None
    }

    pub(super) fn next_zbd_rand_read(&mut self, dev: &DeviceHandle) -> Option<Io> {
        let (first, zones) = (self.first_zone(), self.end_zone() - self.first_zone());
        let pick = first + self.rng.below(zones);
        for k in 0..zones {
            let z = first + (pick - first + k) % zones;
            let d = dev.with(|c| c.zone(z as u32));
            let lo = d.zslba.max(self.start);
            let hi = self.readable_end(&d).min(self.end);
            if hi >= lo + self.bs_lbas {
                let slots = (hi - lo - self.bs_lbas) / self.bs_lbas + 1;
                let lba = lo + self.rng.below(slots) * self.bs_lbas;
                return Some(Io {
                    dir: Direction::Read,
                    lba,
                    nlb: self.bs_lbas as u32,
                    wait_until: None,
                    cc: None,
                });
            }
        }
        self.fail(
            "nothing to read: no zone in the region holds a block of data below its write pointer"
                .into(),
        )
    }

    /// Bytes a block-sized write still fits in zone `d` (capacity minus what is written).
    fn room(&self, d: &device::ZoneDescriptor) -> u64 {
        match d.state {
            ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline => 0,
            _ => (d.zslba + d.capacity).saturating_sub(d.wp),
        }
    }

    /// The write zone limit: max_open_zones, or the device's when none is given (fio's
    /// `zbd_set_max_write_zones`); 0 = no limit.
    fn max_write_zones(&self) -> u64 {
        if self.spec.ignore_zone_limits || self.g.max_open == 0 {
            self.spec.max_open_zones as u64
        } else if self.spec.max_open_zones == 0 {
            self.g.max_open as u64
        } else {
            (self.spec.max_open_zones as u64).min(self.g.max_open as u64)
        }
    }

    /// fio's zone_reset_threshold/frequency: once the region holds at least threshold x its
    /// size of valid data, every 1/frequency-th write resets the zone it goes to.
    fn reset_due(&mut self, dev: &DeviceHandle) -> bool {
        let f = self.spec.zone_reset_frequency;
        if f <= 0.0 {
            return false;
        }
        let (first, end) = (self.first_zone(), self.end_zone());
        let valid: u64 = dev.with(|c| {
            (first..end)
                .map(|z| {
                    let d = c.zone(z as u32);
                    d.wp.saturating_sub(d.zslba).min(d.capacity)
                })
                .sum::<u64>()
        }) * self.g.lba_bytes;
        let region = (self.end - self.start) * self.g.lba_bytes;
        if (valid as f64) < region as f64 * self.spec.zone_reset_threshold {
            return false;
        }
        let mut sh = self.shared.borrow_mut();
        let z = &mut sh.zbd;
        if z.write_cnt == 0 {
            z.write_cnt = (1.0 / f).min(u32::MAX as f64) as u64;
        }
        z.write_cnt -= 1;
        z.write_cnt == 0
    }

    /// A random write in zonemode=zbd, as fio's zbd_adjust_block/zbd_convert_to_write_zone: a
    /// randomly chosen zone of the region (or, with the write zones at their limit, one of
    /// those), reset first when full (or when zone_reset_frequency says so), written at its
    /// write pointer.
    pub(super) fn next_zbd_rand_write(&mut self, dev: &DeviceHandle, now: u64) -> Option<Io> {
        let (first, end) = (self.first_zone(), self.end_zone());
        let bs = self.bs_lbas;
        let me = self.flow.job;
        let limit = self.max_write_zones();
        let job_limit = self.spec.job_max_open_zones as u64;
        // Zones that cannot take another block leave the write zones (fio drops a zone once
        // written to its capacity).
        // Zones that cannot take another block leave the write zones (fio drops a zone once
        // written to its capacity); one with a remainder smaller than a block is finished
        // (zbd_convert_to_write_zone), so that it stops counting against the active limit.
        let mut too_full = Vec::new();
        {
            let mut sh = self.shared.borrow_mut();
            sh.zbd.write_zones.retain(|&(zone, _)| {
                let d = dev.with(|c| c.zone(zone as u32));
                let room = self.room(&d);
                if room > 0 && room < bs {
                    too_full.push(zone);
                }
                room >= bs
            });
        }
        for zone in too_full {
            if let Err(s) = self.zone_mgmt(dev, now, zone, ZoneAction::Finish) {
                return self.fail(format!(
                    "zone finish at LBA {}: {s}",
                    zone * self.g.zone_size_lbas
                ));
            }
        }
        let pick = first + self.rng.below(end - first);
        let mut zone = pick;
        if limit != 0 {
            let mut sh = self.shared.borrow_mut();
            let z = &mut sh.zbd;
            let mine = z.write_zones.iter().filter(|(_, j)| *j == me).count() as u64;
            if !z.write_zones.iter().any(|(w, _)| *w == pick) {
                if (z.write_zones.len() as u64) < limit && (job_limit == 0 || mine < job_limit) {
                    z.write_zones.push((pick, me));
                } else {
                    let ours: Vec<u64> = z
                        .write_zones
                        .iter()
                        .filter(|(w, j)| (first..end).contains(w) && (job_limit == 0 || *j == me))
                        .map(|(w, _)| *w)
                        .collect();
                    if ours.is_empty() {
                        drop(sh);
                        return self.fail(format!(
                            "no write zone available: {} zones are open for writing (the \
                             max_open_zones limit) and none is in this job's region",
                            limit
                        ));
                    }
                    zone = ours[self.rng.below(ours.len() as u64) as usize];
                }
            }
        }
        let mut d = dev.with(|c| c.zone(zone as u32));
        if matches!(d.state, ZoneState::ReadOnly | ZoneState::Offline) {
            return self.fail(format!("zone at LBA {} is {:?}", d.zslba, d.state));
        }
        // With verify, fio resets no zone (that would lose data to verify): a full zone is
        // passed over for the next one with room; with none left the job's writes are over.
        if self.spec.verify && self.room(&d) < bs {
            let n = end - first;
            let sh = self.shared.borrow();
            let open = &sh.zbd.write_zones;
            let can_open = limit == 0 || (open.len() as u64) < limit;
            let next = (1..n).map(|k| first + (zone - first + k) % n).find(|&z| {
                let dz = dev.with(|c| c.zone(z as u32));
                self.room(&dz) >= bs && (can_open || open.iter().any(|(w, _)| *w == z))
            });
            drop(sh);
            let Some(z) = next else {
                self.done = true;
                return None;
            };
            if limit != 0 {
                let mut sh = self.shared.borrow_mut();
                if !sh.zbd.write_zones.iter().any(|(w, _)| *w == z) {
                    sh.zbd.write_zones.push((z, me));
                }
            }
            let d = dev.with(|c| c.zone(z as u32));
            return Some(Io {
                dir: Direction::Write,
                lba: d.wp,
                nlb: bs as u32,
                wait_until: None,
                cc: None,
            });
        }
        if (!self.spec.verify && self.reset_due(dev)) || self.room(&d) < bs {
            if let Err(s) = self.zone_mgmt(dev, now, zone, ZoneAction::Reset) {
                return self.fail(format!("zone reset at LBA {}: {s}", d.zslba));
            }
            d = dev.with(|c| c.zone(zone as u32));
            if d.capacity < bs {
                return self.fail(format!(
                    "zone capacity {} is smaller than the block size {}",
                    d.capacity * self.g.lba_bytes,
                    self.spec.bs
                ));
            }
        }
        Some(Io {
            dir: Direction::Write,
            lba: d.wp,
            nlb: bs as u32,
            wait_until: None,
            cc: None,
        })
    }

    /// A trim in zonemode=zbd: fio resets the zone (zbd_do_io_u_trim). Sequential trims take
    /// the zones in turn; random ones a random zone, or the next one that holds data.
    pub(super) fn next_zbd_trim(&mut self, dev: &DeviceHandle) -> Option<Io> {
        let (first, end) = (self.first_zone(), self.end_zone());
        let zone = if self.spec.pattern == Pattern::Sequential {
            // Past the region's end advance_zone ends the job: this trim is its last.
            let z = self.cur_zone;
            self.advance_zone();
            z
        } else {
            let pick = first + self.rng.below(end - first);
            (0..end - first)
                .map(|k| first + (pick - first + k) % (end - first))
                .find(|&z| {
                    let d = dev.with(|c| c.zone(z as u32));
                    d.wp > d.zslba || d.state == ZoneState::Full
                })
                .unwrap_or(pick)
        };
        self.index.borrow_mut()[zone as usize].clear();
        self.zone_was_reset(zone);
        Some(Io {
            dir: Direction::Trim,
            lba: zone * self.g.zone_size_lbas,
            nlb: self.bs_lbas as u32,
            wait_until: None,
            cc: None,
        })
    }
}
