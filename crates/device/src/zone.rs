//! Zone states (ZNS §6.2) and the per-zone record the controller keeps.

use std::fmt;

/// Zone state, with the ZS codes of the ZNS command set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ZoneState {
    Empty,
    ImplicitlyOpened,
    ExplicitlyOpened,
    Closed,
    ReadOnly,
    Full,
    Offline,
}

impl ZoneState {
    /// The ZS value (upper nibble of the descriptor's state byte).
    pub fn code(self) -> u8 {
        match self {
            ZoneState::Empty => 0x1,
            ZoneState::ImplicitlyOpened => 0x2,
            ZoneState::ExplicitlyOpened => 0x3,
            ZoneState::Closed => 0x4,
            ZoneState::ReadOnly => 0xd,
            ZoneState::Full => 0xe,
            ZoneState::Offline => 0xf,
        }
    }

    pub fn from_code(code: u8) -> Option<ZoneState> {
        Some(match code {
            0x1 => ZoneState::Empty,
            0x2 => ZoneState::ImplicitlyOpened,
            0x3 => ZoneState::ExplicitlyOpened,
            0x4 => ZoneState::Closed,
            0xd => ZoneState::ReadOnly,
            0xe => ZoneState::Full,
            0xf => ZoneState::Offline,
            _ => return None,
        })
    }

    /// nvme-cli's name for the state.
    pub fn name(self) -> &'static str {
        match self {
            ZoneState::Empty => "EMPTY",
            ZoneState::ImplicitlyOpened => "IMP_OPENED",
            ZoneState::ExplicitlyOpened => "EXP_OPENED",
            ZoneState::Closed => "CLOSED",
            ZoneState::ReadOnly => "READONLY",
            ZoneState::Full => "FULL",
            ZoneState::Offline => "OFFLINE",
        }
    }

    pub fn is_open(self) -> bool {
        matches!(
            self,
            ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened
        )
    }

    pub fn is_active(self) -> bool {
        self.is_open() || self == ZoneState::Closed
    }
}

impl fmt::Display for ZoneState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the host sees of a zone (one Report Zones descriptor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneDescriptor {
    pub state: ZoneState,
    /// Zone Start LBA.
    pub zslba: u64,
    /// Zone capacity in LBAs.
    pub capacity: u64,
    /// Write pointer; all ones when it is not valid (read only, offline).
    pub wp: u64,
    /// Zone attributes byte (bit 0: finished by controller).
    pub attributes: u8,
    /// Byte write pointer relative to the zone start (CCZNS; `(wp - zslba) × lba` otherwise).
    pub byte_wp: u64,
    /// A CCZNS padding zone.
    pub padding: bool,
}

impl ZoneDescriptor {
    /// A ZNS+ TL-open zone (its attributes say so).
    pub fn is_tl_open(&self) -> bool {
        self.attributes & ZA_TL_OPEN != 0
    }
}

/// The controller's record of one zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Zone {
    pub state: ZoneState,
    pub zslba: u64,
    pub capacity: u64,
    /// Next LBA to write, absolute.
    pub wp: u64,
    /// Bytes from the zone start that hold host data (the rest reads as zeros): the byte write
    /// pointer. `wp` is the LBA holding the next byte (`zslba + bytes / lba`) except after
    /// Finish, which moves the write pointer but writes no host data.
    pub bytes: u64,
    /// A CCZNS padding zone (chosen at explicit open): every compressed write ends on an LBA
    /// boundary, so plain writes can follow it.
    pub padding: bool,
    pub attributes: u8,
    /// When the zone was last opened (orders implicit closes, oldest first).
    pub open_seq: u64,
}

/// Zone attribute bit of a ZNS+ TL-open zone (a vendor bit: the ZNS specification reserves
/// bits 2-6 of the Zone Attributes; standard tools see an Explicitly Opened zone).
pub const ZA_TL_OPEN: u8 = 0x20;

impl Zone {
    /// A ZNS+ TL-open zone (overwritable in sparse sequential order).
    pub fn is_tl_open(&self) -> bool {
        self.attributes & ZA_TL_OPEN != 0
    }

    pub fn descriptor(&self) -> ZoneDescriptor {
        let wp = match self.state {
            ZoneState::ReadOnly | ZoneState::Offline => u64::MAX,
            _ => self.wp,
        };
        ZoneDescriptor {
            state: self.state,
            zslba: self.zslba,
            capacity: self.capacity,
            wp,
            attributes: self.attributes,
            byte_wp: self.bytes,
            padding: self.padding,
        }
    }

    pub fn end_of_capacity(&self) -> u64 {
        self.zslba + self.capacity
    }
}
