//! Zones kept in host memory: each zone's descriptor and the zone state machine a zoned drive
//! applies (writes at the write pointer up to the capacity, Full at its end, Reset, Finish,
//! Open, Close), as pure state changes. [`HostIo`](crate::HostIo) keeps one for the zones it
//! emulates on a conventional namespace (and issues the I/O around it: a Reset's Deallocate,
//! recovery by DULBE reads); [`MemZoned`](super::MemZoned) keeps one beside its bytes.

use device::{Status, ZoneAction, ZoneDescriptor, ZoneState};

/// Why [`HostIo::restore_emulated_zones`] refused a saved zone table (it changed nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RestoreZonesError {
    /// The device is a zoned one: it keeps its own zones.
    #[error("the device has zones of its own: nothing to restore")]
    NotEmulated,
    /// The table holds `saved` zones; the device has `device`.
    #[error("{saved} zones saved, the device has {device}")]
    ZoneCount { saved: usize, device: usize },
    /// Zone `zone`'s state code is none a restored zone can have.
    #[error("zone {zone}: state code {code:#x}")]
    StateCode { zone: usize, code: u8 },
    /// Zone `zone`'s write pointer `wp` (an LBA) lies outside the zone.
    #[error("zone {zone}: write pointer {wp} outside the zone")]
    WritePointer { zone: usize, wp: u64 },
}

pub(crate) struct ZoneTable {
    zones: Vec<ZoneDescriptor>,
    lba_bytes: u64,
}

impl ZoneTable {
    /// `count` empty zones of `zone_lbas` blocks, `capacity_lbas` of them writable.
    pub(crate) fn new(count: u32, zone_lbas: u64, capacity_lbas: u64, lba_bytes: u64) -> Self {
        ZoneTable {
            zones: (0..count as u64)
                .map(|i| ZoneDescriptor {
                    state: ZoneState::Empty,
                    zslba: i * zone_lbas,
                    capacity: capacity_lbas,
                    wp: i * zone_lbas,
                    attributes: 0,
                    byte_wp: 0,
                    padding: false,
                })
                .collect(),
            lba_bytes,
        }
    }

    pub(crate) fn descriptors(&self) -> &[ZoneDescriptor] {
        &self.zones
    }

    pub(crate) fn get(&self, zone: usize) -> Option<ZoneDescriptor> {
        self.zones.get(zone).copied()
    }

    /// The status a zoned drive refuses a write of `nlb` blocks at `slba` of `zone` with (at
    /// the write pointer, inside the capacity, not Full), or None.
    pub(crate) fn check_write(&self, zone: usize, slba: u64, nlb: u64) -> Option<Status> {
        let z = &self.zones[zone];
        match z.state {
            ZoneState::Full => Some(Status::ZONE_FULL),
            _ if slba != z.wp => Some(Status::ZONE_INVALID_WRITE),
            _ if slba + nlb > z.zslba + z.capacity => Some(Status::ZONE_BOUNDARY_ERROR),
            _ => None,
        }
    }

    /// `nlb` blocks were written at `zone`'s write pointer.
    pub(crate) fn advance(&mut self, zone: usize, nlb: u64) {
        let z = &mut self.zones[zone];
        z.wp += nlb;
        z.byte_wp = (z.wp - z.zslba) * self.lba_bytes;
        z.state = if z.wp == z.zslba + z.capacity {
            ZoneState::Full
        } else if z.state == ZoneState::ExplicitlyOpened {
            z.state
        } else {
            ZoneState::ImplicitlyOpened
        };
    }

    /// The state and write pointer `action` takes zone `z` to, or the status refusing it.
    pub(crate) fn transition(
        z: &ZoneDescriptor,
        action: ZoneAction,
    ) -> Result<(ZoneState, u64), Status> {
        Ok(match action {
            ZoneAction::Reset => (ZoneState::Empty, z.zslba),
            ZoneAction::Finish => (ZoneState::Full, z.zslba + z.capacity),
            ZoneAction::Open | ZoneAction::OpenPadding if z.state == ZoneState::Full => {
                return Err(Status::ZONE_INVALID_TRANSITION)
            }
            ZoneAction::Open => (ZoneState::ExplicitlyOpened, z.wp),
            // An open zone closes even at its start (QEMU's choice, as the device makes it).
            ZoneAction::Close => match z.state {
                ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened => {
                    (ZoneState::Closed, z.wp)
                }
                ZoneState::Closed => (z.state, z.wp),
                _ => return Err(Status::ZONE_INVALID_TRANSITION),
            },
            // Padding zones are CCZNS's; host memory cannot take an offline zone.
            ZoneAction::OpenPadding | ZoneAction::Offline | ZoneAction::Other(_) => {
                return Err(Status::INVALID_FIELD)
            }
        })
    }

    /// Zone `zone` is now in `state` with write pointer `wp`.
    pub(crate) fn set(&mut self, zone: usize, state: ZoneState, wp: u64) {
        let z = &mut self.zones[zone];
        z.state = state;
        z.wp = wp;
        z.byte_wp = (wp - z.zslba) * self.lba_bytes;
    }

    /// Each zone's state code (ZS) and write pointer.
    pub(crate) fn table(&self) -> Vec<(u8, u64)> {
        self.zones.iter().map(|z| (z.state.code(), z.wp)).collect()
    }

    /// Restore from [`ZoneTable::table`]'s output; open zones come back closed, as a zoned
    /// drive's do after a power cycle. Changes nothing on an error, which names the zone.
    pub(crate) fn restore(&mut self, table: &[(u8, u64)]) -> Result<(), RestoreZonesError> {
        let mut next = self.zones.clone();
        if table.len() != next.len() {
            return Err(RestoreZonesError::ZoneCount {
                saved: table.len(),
                device: next.len(),
            });
        }
        for (i, (z, &(code, wp))) in next.iter_mut().zip(table).enumerate() {
            let state = ZoneState::from_code(code)
                .filter(|s| !matches!(s, ZoneState::ReadOnly | ZoneState::Offline))
                .ok_or(RestoreZonesError::StateCode { zone: i, code })?;
            if wp < z.zslba || wp > z.zslba + z.capacity {
                return Err(RestoreZonesError::WritePointer { zone: i, wp });
            }
            z.state = match state {
                ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened if wp == z.zslba => {
                    ZoneState::Empty
                }
                ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened => ZoneState::Closed,
                s => s,
            };
            z.wp = wp;
            z.byte_wp = (wp - z.zslba) * self.lba_bytes;
        }
        self.zones = next;
        Ok(())
    }

    /// After a power cut: zone `i` holds `written[i]` blocks from its start, and comes back
    /// Empty, Closed or Full by it.
    pub(crate) fn recovered(&mut self, written: &[u64]) {
        for (z, &w) in self.zones.iter_mut().zip(written) {
            z.wp = z.zslba + w;
            z.byte_wp = w * self.lba_bytes;
            z.state = match w {
                0 => ZoneState::Empty,
                w if w == z.capacity => ZoneState::Full,
                _ => ZoneState::Closed,
            };
        }
    }
}
