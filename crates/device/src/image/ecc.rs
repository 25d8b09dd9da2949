//! Checksums of an image's stored bytes: a CRC32C per 4 KiB unit of every zone's bytes and of
//! a design's own flash, with the length it covers, written after the bytes and checked on
//! every read (what a drive's ECC would catch).

use std::io;
use std::os::unix::fs::FileExt;

use super::ImageFile;

/// Stored bytes are checked in units of this many bytes, as a drive's ECC checks codewords:
/// each unit's entry is its CRC32C and how many of its bytes it covers (units fill as a zone
/// or region is appended to).
pub(super) const ECC_UNIT: u64 = 4096;
pub(super) const ECC_ENTRY: u64 = 8;

/// The message of a read whose bytes do not match their checksum (a drive's Unrecovered
/// Read Error).
const ECC_MISMATCH: &str = "stored bytes do not match their checksum";

pub(crate) fn is_ecc_error(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidData && e.to_string().starts_with(ECC_MISMATCH)
}

impl ImageFile {
    pub(super) fn zone_bases(&self, zone: u32) -> (u64, u64) {
        (
            self.data_offset + zone as u64 * self.zone_bytes,
            self.ecc_offset + zone as u64 * self.zone_ecc_bytes,
        )
    }

    pub(super) fn read_entries(
        &self,
        ecc_base: u64,
        first: u64,
        n: u64,
    ) -> io::Result<Vec<(u32, u64)>> {
        let mut raw = vec![0u8; (n * ECC_ENTRY) as usize];
        self.file
            .read_exact_at(&mut raw, ecc_base + first * ECC_ENTRY)?;
        Ok(raw
            .chunks_exact(ECC_ENTRY as usize)
            .map(|e| {
                let crc = u32::from_le_bytes(e[0..4].try_into().expect("4 bytes"));
                let len = u32::from_le_bytes(e[4..8].try_into().expect("4 bytes")) as u64;
                (crc, len)
            })
            .collect())
    }

    /// Before bytes are written at `offset` inside a checksum unit: the CRC of the unit's
    /// bytes before `offset`. An entry covering more than those (bytes a killed process wrote
    /// after the last record that counts, now to be written over) is first cut back to them,
    /// so that a kill between the new bytes and their entry leaves an entry that still
    /// matches what it covers.
    fn ecc_prefix(&self, data_base: u64, ecc_base: u64, offset: u64) -> io::Result<u32> {
        let unit_start = offset / ECC_UNIT * ECC_UNIT;
        if offset == unit_start {
            return Ok(0);
        }
        let (crc, len) = self.read_entries(ecc_base, unit_start / ECC_UNIT, 1)?[0];
        if len == offset - unit_start {
            return Ok(crc);
        }
        let mut before = vec![0u8; (offset - unit_start) as usize];
        self.file
            .read_exact_at(&mut before, data_base + unit_start)?;
        let crc = crc32c::crc32c(&before);
        let mut entry = [0u8; ECC_ENTRY as usize];
        entry[0..4].copy_from_slice(&crc.to_le_bytes());
        entry[4..8].copy_from_slice(&(before.len() as u32).to_le_bytes());
        self.file
            .write_all_at(&entry, ecc_base + unit_start / ECC_UNIT * ECC_ENTRY)?;
        Ok(crc)
    }

    /// Store `data` at byte `offset` of a stream whose bytes start at `data_base` and whose
    /// checksum entries start at `ecc_base`: the bytes first, then their entries (a kill
    /// between the two leaves entries covering the bytes before them, still right).
    pub(super) fn write_checked(
        &self,
        data_base: u64,
        ecc_base: u64,
        offset: u64,
        data: &[u8],
    ) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut crc = self.ecc_prefix(data_base, ecc_base, offset)?;
        self.file.write_all_at(data, data_base + offset)?;
        let first = offset / ECC_UNIT;
        let end = offset + data.len() as u64;
        let units = end.div_ceil(ECC_UNIT) - first;
        let mut entries = Vec::with_capacity((units * ECC_ENTRY) as usize);
        let mut at = offset;
        while at < end {
            let unit_start = at / ECC_UNIT * ECC_UNIT;
            let unit_end = (unit_start + ECC_UNIT).min(end);
            let piece = &data[(at - offset) as usize..(unit_end - offset) as usize];
            crc = if at == unit_start {
                crc32c::crc32c(piece)
            } else {
                crc32c::crc32c_append(crc, piece)
            };
            entries.extend_from_slice(&crc.to_le_bytes());
            entries.extend_from_slice(&((unit_end - unit_start) as u32).to_le_bytes());
            at = unit_end;
        }
        self.file
            .write_all_at(&entries, ecc_base + first * ECC_ENTRY)
    }

    /// Check bytes [offset, offset + buf.len()) just read against their units' checksums
    /// (a unit only partly in `buf` is read whole); a mismatch is an error that
    /// [`is_ecc_error`] recognises. Units with no entry (never written) are not checked.
    pub(super) fn ecc_check(
        &self,
        data_base: u64,
        ecc_base: u64,
        offset: u64,
        buf: &[u8],
    ) -> io::Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let end = offset + buf.len() as u64;
        let first = offset / ECC_UNIT;
        let units = end.div_ceil(ECC_UNIT) - first;
        let entries = self.read_entries(ecc_base, first, units)?;
        let mut unit = Vec::new();
        for (i, (crc, len)) in entries.into_iter().enumerate() {
            if len == 0 || len > ECC_UNIT {
                continue;
            }
            let start = (first + i as u64) * ECC_UNIT;
            let bytes: &[u8] = if start >= offset && start + len <= end {
                &buf[(start - offset) as usize..(start + len - offset) as usize]
            } else {
                unit.resize(len as usize, 0);
                self.file.read_exact_at(&mut unit, data_base + start)?;
                &unit
            };
            if crc32c::crc32c(bytes) != crc {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{ECC_MISMATCH} (the {len} bytes at file offset {})",
                        data_base + start
                    ),
                ));
            }
        }
        Ok(())
    }
}
