//! CCZNS on the wire: how CW and DR ride in ordinary NVMe Read (02h), Write (01h) and Zone
//! Append (7Dh) commands, and the layout of their metadata buffer. Bits as in the CCZNS artifact
//! (research/seed-artifacts.md §1.2), which uses bits that NVMe 1.4 reserves:
//!
//! | dword | bits | CW (Write / Append) | DR (Read) |
//! |---|---|---|---|
//! | CDW10-11 | all | SLBA | SLBA of the block holding the first compressed byte |
//! | CDW12 | 15:0 | NLB − 1 of the uncompressed data | NLB − 1 of the output budget |
//! | CDW12 | 16 | 1 = CW | 1 = DR |
//! | CDW12 | 25 | — | 1 = multi-chunk, 0 = single-chunk |
//! | CDW13 | 15:8 | — | CNLB: blocks spanned by the compressed range (1-255) |
//! | CDW13 | 31:16 | intra-block byte offset of the write | intra-block byte offset of the first chunk |
//! | CDW14 | 31:0 | — | PDSZ: bytes of the last block that are not part of the range |
//!
//! Metadata buffer (`nlb × MS` bytes), little-endian u32 slots (the artifact uses u16, which
//! caps a chunk below 64 KiB; znslab widens them):
//!
//! | command | direction | slots |
//! |---|---|---|
//! | CW | host → device | `N`, then the pre-compression size of each of the `N` chunks |
//! | CW | device → host | `N`, the feedback size of each chunk, whole blocks consumed, remainder bytes |
//! | DR | device → host | `M` chunks returned, then (pre-compression size, feedback size) per chunk |
//!
//! Written length = whole blocks × LBA size + remainder, as the artifact's hosts compute it.
//! A padding zone adds its padding to the last chunk's feedback size, so the remainder is 0.

use crate::cmd::{Command, ZoneAction};
use crate::status::Status;

pub const CDW12_CC: u32 = 1 << 16;
pub const CDW12_MULTI_CHUNK: u32 = 1 << 25;
/// Zone Management Send CDW13 bit 9 (ZSASO): with Open, make the zone a padding zone.
pub const CDW13_ZSASO: u32 = 1 << 9;

pub const OPC_WRITE: u8 = 0x01;
pub const OPC_READ: u8 = 0x02;
pub const OPC_ZONE_APPEND: u8 = 0x7d;

/// Command dwords 10-15 of an I/O command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoDwords {
    pub cdw10: u32,
    pub cdw11: u32,
    pub cdw12: u32,
    pub cdw13: u32,
    pub cdw14: u32,
    pub cdw15: u32,
}

impl IoDwords {
    fn with_slba_nlb(slba: u64, nlb: u32) -> IoDwords {
        IoDwords {
            cdw10: slba as u32,
            cdw11: (slba >> 32) as u32,
            cdw12: nlb.saturating_sub(1) & 0xffff,
            ..IoDwords::default()
        }
    }

    pub fn slba(&self) -> u64 {
        self.cdw10 as u64 | (self.cdw11 as u64) << 32
    }

    /// NLB as a count (the wire field is 0's based).
    pub fn nlb(&self) -> u32 {
        (self.cdw12 & 0xffff) + 1
    }

    /// A plain read or write.
    pub fn plain(slba: u64, nlb: u32) -> IoDwords {
        Self::with_slba_nlb(slba, nlb)
    }

    /// A compressed write of `nlb` blocks of uncompressed data at byte `intra` of `slba`.
    pub fn compressed_write(slba: u64, intra: u32, nlb: u32) -> IoDwords {
        let mut d = Self::with_slba_nlb(slba, nlb);
        d.cdw12 |= CDW12_CC;
        d.cdw13 = (intra & 0xffff) << 16;
        d
    }

    /// A decompressed read; see the table above.
    pub fn decompressed_read(
        slba: u64,
        intra: u32,
        cnlb: u32,
        pdsz: u32,
        multi: bool,
        nlb: u32,
    ) -> IoDwords {
        let mut d = Self::with_slba_nlb(slba, nlb);
        d.cdw12 |= CDW12_CC | if multi { CDW12_MULTI_CHUNK } else { 0 };
        d.cdw13 = (intra & 0xffff) << 16 | (cnlb & 0xff) << 8;
        d.cdw14 = pdsz;
        d
    }
}

/// Decode a Write (01h) or Zone Append (7Dh): CDW12 bit 16 makes it a CW. Bits this device does
/// not know are refused with Invalid Field rather than ignored.
pub fn decode_write<'a>(
    opcode: u8,
    dw: IoDwords,
    data: &'a [u8],
    metadata: &'a mut [u8],
) -> Result<Command<'a>, Status> {
    let append = match opcode {
        OPC_WRITE => false,
        OPC_ZONE_APPEND => true,
        _ => return Err(Status::INVALID_OPCODE),
    };
    let (slba, nlb) = (dw.slba(), dw.nlb());
    if dw.cdw12 & !(0xffff | CDW12_CC) != 0 {
        return Err(Status::INVALID_FIELD);
    }
    if dw.cdw12 & CDW12_CC != 0 {
        if dw.cdw13 & 0xffff != 0 || dw.cdw14 != 0 {
            return Err(Status::INVALID_FIELD);
        }
        return Ok(Command::CompressedWrite {
            slba,
            intra: dw.cdw13 >> 16,
            nlb,
            data,
            metadata,
            append,
        });
    }
    Ok(if append {
        Command::ZoneAppend {
            zslba: slba,
            nlb,
            data,
            metadata,
        }
    } else {
        Command::Write {
            slba,
            nlb,
            data,
            metadata,
        }
    })
}

/// Decode a Read (02h): CDW12 bit 16 makes it a DR, bit 25 multi-chunk.
pub fn decode_read<'a>(
    dw: IoDwords,
    data: &'a mut [u8],
    metadata: &'a mut [u8],
) -> Result<Command<'a>, Status> {
    let (slba, nlb) = (dw.slba(), dw.nlb());
    if dw.cdw12 & !(0xffff | CDW12_CC | CDW12_MULTI_CHUNK) != 0 {
        return Err(Status::INVALID_FIELD);
    }
    if dw.cdw12 & CDW12_CC != 0 {
        if dw.cdw13 & 0xff != 0 {
            return Err(Status::INVALID_FIELD);
        }
        return Ok(Command::DecompressedRead {
            slba,
            intra: dw.cdw13 >> 16,
            cnlb: (dw.cdw13 >> 8) & 0xff,
            pdsz: dw.cdw14,
            multi: dw.cdw12 & CDW12_MULTI_CHUNK != 0,
            nlb,
            data,
            metadata,
        });
    }
    if dw.cdw12 & CDW12_MULTI_CHUNK != 0 || dw.cdw13 != 0 || dw.cdw14 != 0 {
        return Err(Status::INVALID_FIELD);
    }
    Ok(Command::Read {
        slba,
        nlb,
        data,
        metadata,
    })
}

/// Decode Zone Management Send's CDW13: ZSA, Select All (bit 8), ZSASO (bit 9, Open only).
pub fn decode_zone_send(slba: u64, cdw13: u32) -> Result<Command<'static>, Status> {
    let action = match (ZoneAction::from_code(cdw13 as u8), cdw13 & CDW13_ZSASO != 0) {
        (ZoneAction::Open, true) => ZoneAction::OpenPadding,
        (_, true) => return Err(Status::INVALID_FIELD),
        (a, false) => a,
    };
    Ok(Command::ZoneMgmtSend {
        slba,
        action,
        select_all: cdw13 & (1 << 8) != 0,
    })
}

/// Read slot `i` of a metadata buffer.
pub fn slot(metadata: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(metadata[4 * i..4 * i + 4].try_into().expect("4 bytes"))
}

/// Write slot `i` of a metadata buffer.
pub fn set_slot(metadata: &mut [u8], i: usize, v: u32) {
    metadata[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

/// How many u32 slots a metadata buffer has.
pub fn slots(metadata: &[u8]) -> usize {
    metadata.len() / 4
}

/// Fill a CW request's metadata: the chunk count and pre-compression sizes. Returns false if
/// the buffer is too small (it needs `sizes.len() + 3` slots, room for the feedback).
pub fn put_cw_request(metadata: &mut [u8], sizes: &[u32]) -> bool {
    if slots(metadata) < sizes.len() + 3 {
        return false;
    }
    metadata.fill(0);
    set_slot(metadata, 0, sizes.len() as u32);
    for (i, &s) in sizes.iter().enumerate() {
        set_slot(metadata, 1 + i, s);
    }
    true
}

/// A CW's feedback: each chunk's feedback size and the bytes the write took from the zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CwFeedback {
    pub sizes: Vec<u32>,
    pub written: u64,
}

/// Parse a CW's feedback (`lba_bytes` turns whole blocks plus remainder into bytes).
pub fn cw_feedback(metadata: &[u8], lba_bytes: u64) -> Option<CwFeedback> {
    if slots(metadata) < 1 {
        return None;
    }
    let n = slot(metadata, 0) as usize;
    if slots(metadata) < n + 3 {
        return None;
    }
    Some(CwFeedback {
        sizes: (1..=n).map(|i| slot(metadata, i)).collect(),
        written: slot(metadata, n + 1) as u64 * lba_bytes + slot(metadata, n + 2) as u64,
    })
}

/// Parse a DR's feedback: (pre-compression, feedback) size of each chunk returned.
pub fn dr_feedback(metadata: &[u8]) -> Option<Vec<(u32, u32)>> {
    if slots(metadata) < 1 {
        return None;
    }
    let m = slot(metadata, 0) as usize;
    if slots(metadata) < 1 + 2 * m {
        return None;
    }
    Some(
        (0..m)
            .map(|k| (slot(metadata, 1 + 2 * k), slot(metadata, 2 + 2 * k)))
            .collect(),
    )
}
