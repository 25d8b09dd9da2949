//! Zone Management Receive (7Ah): Report Zones.
//!
//! The buffer gets a 64-byte header (bytes 0-7: number of zones, little endian) and then
//! 64-byte descriptors: byte 0 zone type (2h, sequential write required), byte 1 state in bits
//! 7:4, byte 2 attributes, bytes 8-15 ZCAP, 16-23 ZSLBA, 24-31 write pointer. With Partial
//! Report clear the header counts every matching zone from the one holding `slba` to the end;
//! with it set, only the descriptors returned. Extended reports need descriptor extensions,
//! which this device does not have (Invalid Field).
//!
//! The CCZNS design also fills two reserved fields (a znslab extension): bytes 32-39 hold the
//! byte write pointer relative to the zone start, and bit 0 of byte 40 is set for a padding
//! zone. A plain ZNS device leaves them zero.

use sim::SimInstant;

use crate::cmd::ReportFilter;
use crate::controller::Controller;
use crate::status::Status;
use crate::zone::{ZoneDescriptor, ZoneState};

pub const REPORT_HEADER_BYTES: usize = 64;
pub const REPORT_DESCRIPTOR_BYTES: usize = 64;

impl Controller {
    pub(crate) fn zone_mgmt_recv(
        &mut self,
        ready: SimInstant,
        slba: u64,
        filter: u8,
        partial: bool,
        extended: bool,
        buffer: &mut [u8],
    ) -> Result<(u64, SimInstant), Status> {
        let filter = ReportFilter::from_code(filter).ok_or(Status::INVALID_FIELD)?;
        if extended
            || buffer.len() < REPORT_HEADER_BYTES
            || buffer.len() as u64 > self.layout.max_transfer_bytes
        {
            return Err(Status::INVALID_FIELD);
        }
        if slba >= self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        let room = (buffer.len() - REPORT_HEADER_BYTES) / REPORT_DESCRIPTOR_BYTES;
        buffer.fill(0);
        let mut matched = 0u64;
        let mut returned = 0usize;
        let cczns = self.design.vendor_caps().compressed_io;
        for z in &self.zones[self.zone_index(slba)..] {
            if !filter.matches(z.state) {
                continue;
            }
            matched += 1;
            if returned < room {
                let d = z.descriptor();
                let at = REPORT_HEADER_BYTES + returned * REPORT_DESCRIPTOR_BYTES;
                let out = &mut buffer[at..at + REPORT_DESCRIPTOR_BYTES];
                out[0] = 0x2;
                out[1] = d.state.code() << 4;
                out[2] = d.attributes;
                out[8..16].copy_from_slice(&d.capacity.to_le_bytes());
                out[16..24].copy_from_slice(&d.zslba.to_le_bytes());
                out[24..32].copy_from_slice(&d.wp.to_le_bytes());
                if cczns {
                    out[32..40].copy_from_slice(&d.byte_wp.to_le_bytes());
                    out[40] = d.padding as u8;
                }
                returned += 1;
            } else if partial {
                break;
            }
        }
        let count = if partial { returned as u64 } else { matched };
        buffer[..8].copy_from_slice(&count.to_le_bytes());
        let used = REPORT_HEADER_BYTES + returned * REPORT_DESCRIPTOR_BYTES;
        let done = self.transfer_to_host(ready.as_ns(), used as u64);
        Ok((0, SimInstant::from_ns(done)))
    }
}

/// Decode a Report Zones buffer: the header's zone count and the descriptors present.
/// `byte_wp` and `padding` are only filled by a CCZNS device (zero otherwise).
pub fn parse_report(buffer: &[u8]) -> Option<(u64, Vec<ZoneDescriptor>)> {
    if buffer.len() < REPORT_HEADER_BYTES {
        return None;
    }
    let count = u64::from_le_bytes(buffer[..8].try_into().ok()?);
    let mut out = Vec::new();
    for d in buffer[REPORT_HEADER_BYTES..].chunks_exact(REPORT_DESCRIPTOR_BYTES) {
        if d[0] == 0 {
            break;
        }
        let u = |r: std::ops::Range<usize>| u64::from_le_bytes(d[r].try_into().expect("8 bytes"));
        out.push(ZoneDescriptor {
            state: ZoneState::from_code(d[1] >> 4)?,
            attributes: d[2],
            capacity: u(8..16),
            zslba: u(16..24),
            wp: u(24..32),
            byte_wp: u(32..40),
            padding: d[40] & 1 == 1,
        });
    }
    Some((count, out))
}
