//! The commands the controller accepts, one file each, and what a command returns.
//!
//! Every handler follows the same three steps: validate (return a [`Status`] and change
//! nothing), apply (zone state and bytes), cost (link and flash reservations → `done_at`).

mod compressed_write;
mod deallocate;
mod decompressed_read;
mod flush;
mod read;
mod tl_open;
pub mod wire;
mod write;
mod zone_compaction;
mod zone_mgmt_recv;
mod zone_mgmt_send;

use sim::SimInstant;

use crate::status::Status;
use crate::zone::ZoneState;

pub use tl_open::{any_bit, bit, TL_OPEN_HEADER_BYTES};
pub use zone_compaction::{
    compaction_payload, parse_compaction_payload, ChunkMapping, COMPACTION_PAYLOAD_BYTES,
    MAPPING_BYTES, MAX_COMPACTION_PAIRS, MAX_COPY_BLOCKS, MAX_COPY_RANGES,
};
pub use zone_mgmt_recv::{parse_report, REPORT_DESCRIPTOR_BYTES, REPORT_HEADER_BYTES};

/// One NVMe command with its data buffers. `nlb` is a count of blocks (1-based; NVMe's wire
/// field is 0's based). Metadata buffers are empty or hold `nlb × MS` bytes.
#[derive(Debug)]
pub enum Command<'a> {
    /// Read (02h).
    Read {
        slba: u64,
        nlb: u32,
        data: &'a mut [u8],
        metadata: &'a mut [u8],
    },
    /// A Read (02h) whose bytes the host drops, as fio's reads without verify (the buffer is
    /// never looked at). The same checks, statuses, timing and counters as Read; an in-memory
    /// device does not copy the bytes, so `data` keeps whatever it held (an image still reads
    /// them, so a damaged block still fails). Not an NVMe command: a host-side shortcut that
    /// spares benchmarks the copy in real-bytes mode.
    ReadDiscard {
        slba: u64,
        nlb: u32,
        data: &'a mut [u8],
    },
    /// Write (01h): must start at the zone's write pointer.
    Write {
        slba: u64,
        nlb: u32,
        data: &'a [u8],
        metadata: &'a [u8],
    },
    /// Zone Append (7Dh): `zslba` names the zone; the result is the LBA written.
    ZoneAppend {
        zslba: u64,
        nlb: u32,
        data: &'a [u8],
        metadata: &'a [u8],
    },
    /// CCZNS compressed write (CW): a Write (or Zone Append) with CDW12 bit 16 set. `data`
    /// holds the chunks uncompressed, back to back; `metadata` (`nlb × MS` bytes) carries the
    /// chunk sizes in and the feedback out (see [`wire`]). The write starts at byte
    /// `slba × lba + intra` of the namespace, which must be the zone's byte write pointer; an
    /// append gives the zone start and `intra` 0, and its result is the byte address written.
    CompressedWrite {
        slba: u64,
        intra: u32,
        nlb: u32,
        data: &'a [u8],
        metadata: &'a mut [u8],
        append: bool,
    },
    /// CCZNS decompressed read (DR): a Read with CDW12 bit 16 set. The compressed range starts
    /// at byte `intra` of LBA `slba` and spans `cnlb` LBAs less `pdsz` bytes at the end; the
    /// output budget is `nlb` LBAs. Single-chunk returns the chunk that starts there;
    /// multi-chunk (CDW12 bit 25) every whole chunk of the range that fits the budget. The
    /// result is the number of chunks; the metadata gets their sizes.
    DecompressedRead {
        slba: u64,
        intra: u32,
        cnlb: u32,
        pdsz: u32,
        multi: bool,
        nlb: u32,
        data: &'a mut [u8],
        metadata: &'a mut [u8],
    },
    /// Zone Management Send (79h).
    ZoneMgmtSend {
        slba: u64,
        action: ZoneAction,
        select_all: bool,
    },
    /// Zone Management Receive (7Ah), Report Zones into `buffer` in the spec's layout.
    /// `filter` is the raw ZRASF value (0-7).
    ZoneMgmtRecv {
        slba: u64,
        filter: u8,
        partial: bool,
        extended: bool,
        buffer: &'a mut [u8],
    },
    /// Flush (00h).
    Flush,
    /// Dataset Management (09h) with Attribute Deallocate, one range of `nlb` blocks from
    /// `slba` (TRIM; the conventional tcssd namespace only).
    Deallocate { slba: u64, nlb: u32 },
    /// ZNS+ zone_compaction (vendor 81h): copy each pair's source block to its destination in
    /// the zone starting at `zslba`, inside the device.
    ZoneCompaction { zslba: u64, pairs: &'a [(u64, u64)] },
    /// Copy (19h, format 0): the blocks of `ranges` (SLBA, block count) to consecutive LBAs
    /// from `sdlba`, inside the device (designs that copy inside themselves).
    Copy {
        sdlba: u64,
        ranges: &'a [(u64, u32)],
    },
    /// ZNS+ identify_mapping (vendor 86h): the chunk → chip bit fields, into 4 KiB.
    IdentifyMapping { data: &'a mut [u8] },
    /// ZNS+ TL_open (vendor 85h): make the zone at `zslba` overwritable in sparse sequential
    /// order where `bitmap` (one bit per block of the zone capacity, LSB first; 1 = valid,
    /// kept) is 0; `close_only` closes the zone's threaded log without opening it again.
    TlOpen {
        zslba: u64,
        close_only: bool,
        bitmap: &'a [u8],
    },
}

/// Zone Send Action (ZSA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneAction {
    Close,
    Finish,
    Open,
    /// CCZNS: Open with the action-specific option bit (ZSASO, CDW13 bit 9) set, which makes
    /// the zone a padding zone (§III-E). Its wire code is Open's.
    OpenPadding,
    Reset,
    Offline,
    /// Any other ZSA value; refused with Invalid Field.
    Other(u8),
}

impl ZoneAction {
    pub fn from_code(code: u8) -> ZoneAction {
        match code {
            1 => ZoneAction::Close,
            2 => ZoneAction::Finish,
            3 => ZoneAction::Open,
            4 => ZoneAction::Reset,
            5 => ZoneAction::Offline,
            c => ZoneAction::Other(c),
        }
    }

    pub fn code(self) -> u8 {
        match self {
            ZoneAction::Close => 1,
            ZoneAction::Finish => 2,
            ZoneAction::Open | ZoneAction::OpenPadding => 3,
            ZoneAction::Reset => 4,
            ZoneAction::Offline => 5,
            ZoneAction::Other(c) => c,
        }
    }

    /// The zones a Select All applies to (ZNS §5.3: which states each action takes).
    pub(crate) fn select_all_scope(self, state: ZoneState) -> bool {
        use ZoneState::*;
        match self {
            ZoneAction::Open | ZoneAction::OpenPadding => state == Closed,
            ZoneAction::Close => state.is_open(),
            ZoneAction::Finish => state.is_active(),
            ZoneAction::Reset => state.is_active() || state == Full,
            ZoneAction::Offline => state == ReadOnly,
            ZoneAction::Other(_) => false,
        }
    }
}

/// Report Zones filter (ZRASF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFilter {
    All = 0,
    Empty = 1,
    ImplicitlyOpened = 2,
    ExplicitlyOpened = 3,
    Closed = 4,
    Full = 5,
    ReadOnly = 6,
    Offline = 7,
}

impl ReportFilter {
    pub fn from_code(code: u8) -> Option<ReportFilter> {
        use ReportFilter::*;
        [
            All,
            Empty,
            ImplicitlyOpened,
            ExplicitlyOpened,
            Closed,
            Full,
            ReadOnly,
            Offline,
        ]
        .get(code as usize)
        .copied()
    }

    pub fn matches(self, state: ZoneState) -> bool {
        use ZoneState as S;
        match self {
            ReportFilter::All => true,
            ReportFilter::Empty => state == S::Empty,
            ReportFilter::ImplicitlyOpened => state == S::ImplicitlyOpened,
            ReportFilter::ExplicitlyOpened => state == S::ExplicitlyOpened,
            ReportFilter::Closed => state == S::Closed,
            ReportFilter::Full => state == S::Full,
            ReportFilter::ReadOnly => state == S::ReadOnly,
            ReportFilter::Offline => state == S::Offline,
        }
    }
}

/// A command's completion: its status, its result dwords and when the host sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub status: Status,
    /// Completion dwords 0-1: the LBA written by Zone Append, the byte address written by a
    /// compressed append, the chunks returned by a decompressed read; 0 otherwise.
    pub result: u64,
    pub done_at: SimInstant,
}
