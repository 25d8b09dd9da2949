//! zonemode=zbd: the job's zones, sequential writes at write pointers (finishing a zone too
//! full for a block, resetting a zone met full on entry), and reads below write pointers.

use device::{Command, DeviceHandle, Status, ZoneAction, ZoneState};

use super::{CcIo, Io, JobState};

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
            if !(self.spec.time_based || self.spec.io_size.is_some()) {
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
}
