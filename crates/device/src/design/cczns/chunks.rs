//! CCZNS chunk metadata, kept in the OOB area of the flash page where each chunk starts
//! (CCZNS §III-D): offset in the page, post-compression size and feedback size; znslab adds the
//! pre-compression size and a raw flag (the artifact keeps the pre size too). The controller keeps
//! every zone's records in memory; an image also persists them per page, from which reopening
//! rebuilds the records and the byte write pointer.
//!
//! OOB of one flash page (little endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0-3 | fill: bytes of the page that hold data (a page after the last written one: 0) |
//! | 4-5 | number of records |
//! | 6-7 | reserved |
//! | 8 + 16 × i | record i: offset in page u32, post u32, feedback u32, pre u32 (bit 31: stored raw) |

/// One compressed chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChunkRecord {
    /// First stored byte, from the zone start.
    pub offset: u64,
    /// Stored bytes (after compression).
    pub post: u32,
    /// Bytes reported to the host and taken from the zone: `post` plus any padding.
    pub feedback: u32,
    /// Bytes before compression.
    pub pre: u32,
    /// Stored uncompressed because compression did not make it smaller.
    pub raw: bool,
}

pub(crate) const OOB_HEADER_BYTES: usize = 8;
pub(crate) const OOB_RECORD_BYTES: usize = 16;
const RAW_BIT: u32 = 1 << 31;

/// How many records fit in the OOB of one page.
pub(crate) fn records_per_page(oob_bytes_per_page: u32) -> usize {
    (oob_bytes_per_page as usize).saturating_sub(OOB_HEADER_BYTES) / OOB_RECORD_BYTES
}

/// The smallest footprint a chunk may take so that no page has more chunk starts than its OOB
/// holds records (a smaller compressed chunk is padded up to it in its feedback size).
pub(crate) fn min_footprint(page_bytes: u64, oob_bytes_per_page: u32) -> u64 {
    page_bytes.div_ceil(records_per_page(oob_bytes_per_page).max(1) as u64)
}

/// Encode page `page`'s OOB: its fill and the records that start in it.
pub(crate) fn encode_page(
    page_bytes: u64,
    page: u64,
    fill: u64,
    records: &[ChunkRecord],
    out: &mut [u8],
) {
    out.fill(0);
    out[0..4].copy_from_slice(&(fill as u32).to_le_bytes());
    out[4..6].copy_from_slice(&(records.len() as u16).to_le_bytes());
    for (i, r) in records.iter().enumerate() {
        let at = OOB_HEADER_BYTES + i * OOB_RECORD_BYTES;
        let rec = &mut out[at..at + OOB_RECORD_BYTES];
        rec[0..4].copy_from_slice(&((r.offset - page * page_bytes) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&r.post.to_le_bytes());
        rec[8..12].copy_from_slice(&r.feedback.to_le_bytes());
        let pre = r.pre | if r.raw { RAW_BIT } else { 0 };
        rec[12..16].copy_from_slice(&pre.to_le_bytes());
    }
}

/// Decode page `page`'s OOB into its fill, appending its records to `records`. Refuses an OOB
/// that contradicts itself (offsets outside the page, a fill beyond the page, sizes of zero).
pub(crate) fn decode_page(
    page_bytes: u64,
    page: u64,
    oob: &[u8],
    records: &mut Vec<ChunkRecord>,
) -> Result<u64, String> {
    if oob.len() < OOB_HEADER_BYTES {
        return Err(format!(
            "page {page}: an OOB of {} bytes has no room for its {OOB_HEADER_BYTES}-byte header",
            oob.len()
        ));
    }
    let u32_at = |at: usize| u32::from_le_bytes(oob[at..at + 4].try_into().expect("4 bytes"));
    let fill = u32_at(0) as u64;
    let count = u16::from_le_bytes([oob[4], oob[5]]) as usize;
    if fill > page_bytes {
        return Err(format!(
            "page {page}: fill {fill} exceeds the page ({page_bytes} bytes)"
        ));
    }
    if OOB_HEADER_BYTES + count * OOB_RECORD_BYTES > oob.len() {
        return Err(format!(
            "page {page}: {count} records do not fit in the OOB"
        ));
    }
    let mut prev_end = None;
    for i in 0..count {
        let at = OOB_HEADER_BYTES + i * OOB_RECORD_BYTES;
        let in_page = u32_at(at) as u64;
        let post = u32_at(at + 4);
        let feedback = u32_at(at + 8);
        let pre_raw = u32_at(at + 12);
        let pre = pre_raw & !RAW_BIT;
        if in_page >= fill || post == 0 || feedback < post || pre == 0 {
            return Err(format!("page {page}: record {i} is inconsistent"));
        }
        let offset = page * page_bytes + in_page;
        if prev_end.is_some_and(|e| offset < e) {
            return Err(format!("page {page}: record {i} overlaps the one before"));
        }
        prev_end = Some(offset + feedback as u64);
        records.push(ChunkRecord {
            offset,
            post,
            feedback,
            pre,
            raw: pre_raw & RAW_BIT != 0,
        });
    }
    Ok(fill)
}

/// For fuzz targets and tests outside the crate: page `page`'s OOB decoded into its fill and
/// its number of records, or what is wrong with it.
pub fn decode_oob_page(page_bytes: u64, page: u64, oob: &[u8]) -> Result<(u64, usize), String> {
    let mut records = Vec::new();
    decode_page(page_bytes, page, oob, &mut records).map(|fill| (fill, records.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_oob_round_trips_and_rejects_nonsense() {
        let recs = vec![
            ChunkRecord {
                offset: 16384 + 10,
                post: 1000,
                feedback: 1000,
                pre: 4096,
                raw: false,
            },
            ChunkRecord {
                offset: 16384 + 1010,
                post: 4096,
                feedback: 5000,
                pre: 4096,
                raw: true,
            },
        ];
        let mut oob = vec![0u8; 2048];
        encode_page(16384, 1, 7000, &recs, &mut oob);
        let mut back = Vec::new();
        assert_eq!(decode_page(16384, 1, &oob, &mut back), Ok(7000));
        assert_eq!(back, recs);

        let mut bad = oob.clone();
        bad[0..4].copy_from_slice(&20000u32.to_le_bytes());
        assert!(decode_page(16384, 1, &bad, &mut Vec::new()).is_err());
        let mut bad = oob.clone();
        bad[4..6].copy_from_slice(&500u16.to_le_bytes());
        assert!(decode_page(16384, 1, &bad, &mut Vec::new()).is_err());
        let mut bad = oob;
        bad[8 + 16..8 + 20].copy_from_slice(&5u32.to_le_bytes()); // second starts inside first
        assert!(decode_page(16384, 1, &bad, &mut Vec::new()).is_err());
    }

    #[test]
    fn minimum_footprint_bounds_records_per_page() {
        let m = records_per_page(2048);
        assert_eq!(m, 127);
        let fp = min_footprint(16384, 2048);
        // Starts at least fp apart: at most m of them in one page.
        assert!((16384 - 1) / fp < m as u64);
    }
}
