//! Encodings shared by every block: varints, block handles, the 5-byte block trailer
//! (compression type and checksum) and the footer.
//!
//! Follows RocksDB's block-based table (format_version 5, research/zenfs-rocksdb.md §2.2):
//! checksum = low 32 bits of XXH3-64 over contents and type byte (RocksDB 8.11's default);
//! compressed blocks start with a varint32 of the raw length (RocksDB's compression format 2,
//! used here for every codec, Snappy too).

use codec::{Codec, Coder};
use xxhash_rust::xxh3::Xxh3;

/// Errors reading a table: what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("corrupt {what} at offset {offset}: {why}")]
    Corrupt {
        what: &'static str,
        offset: u64,
        why: String,
    },
}

pub(crate) fn corrupt(what: &'static str, offset: u64, why: impl Into<String>) -> FormatError {
    FormatError::Corrupt {
        what,
        offset,
        why: why.into(),
    }
}

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decode a varint at the start of `b`: (value, bytes used).
pub fn get_varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= ((byte & 0x7f) as u64) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Where a block is: offset and size of its contents (the 5-byte trailer follows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }

    pub fn decode(b: &[u8]) -> Option<(BlockHandle, usize)> {
        let (offset, n1) = get_varint(b)?;
        let (size, n2) = get_varint(&b[n1..])?;
        Some((BlockHandle { offset, size }, n1 + n2))
    }

    /// Bytes the block takes in the file, trailer included.
    pub fn on_disk(&self) -> u64 {
        // Saturating: a handle read from a damaged file may hold any size.
        self.size.saturating_add(TRAILER)
    }
}

/// CCZNS's index-entry size for a block the device compressed (seed-artifacts §1.8): the
/// handle's size field packs the block's size in the file (post-compression, which locates the
/// next block) and its size before compression (block and trailer, which sizes the DR output).
/// The post size goes first, 3 bits per nibble from the least significant end, every nibble
/// but the last with 0x8 set; the pre size follows above the last nibble. RocksDB's varint of
/// the size field carries it unchanged.
pub fn cc_pack_sizes(post: u64, pre: u64) -> u64 {
    let mut packed = 0u64;
    let mut shift = 0;
    let mut rest = post;
    loop {
        let nibble = rest & 7;
        rest >>= 3;
        let more = if rest > 0 { 8 } else { 0 };
        packed |= (nibble | more) << shift;
        shift += 4;
        if rest == 0 {
            break;
        }
    }
    packed | pre.checked_shl(shift).unwrap_or(0)
}

/// The (post, pre) sizes of a CCZNS index entry's packed size; None when no terminating nibble
/// is found or the pre size does not survive the packing (a corrupt entry).
pub fn cc_unpack_sizes(packed: u64) -> Option<(u64, u64)> {
    let mut post = 0u64;
    for i in 0..16 {
        let nibble = (packed >> (4 * i)) & 0xf;
        post |= (nibble & 7) << (3 * i);
        if nibble & 8 == 0 {
            let pre = packed.checked_shr(4 * (i + 1)).unwrap_or(0);
            return Some((post, pre));
        }
    }
    None
}

pub const TRAILER: u64 = 5;
/// format_version 5 footer: checksum type, two handles padded to 40 bytes, version, magic.
pub const FOOTER: u64 = 53;
pub const MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
pub const FORMAT_VERSION: u32 = 5;
const CHECKSUM_XXH3: u8 = 4;

/// A compression type with this bit is a modeled payload's block (no codec ran: its bytes are
/// a zero-run encoding, see `codec::modeled`); RocksDB's types stay below it.
pub const MODELED_TYPE: u8 = 0x80;

/// RocksDB's compression type byte for a codec.
pub fn compression_type(c: Codec) -> u8 {
    match c {
        Codec::None => 0,
        Codec::Snappy => 1,
        Codec::Deflate(_) => 2,
        Codec::Lz4 => 4,
        Codec::Zstd(_) => 7,
    }
}

pub fn checksum(contents: &[u8], t: u8) -> u32 {
    // XXH3 over contents then the type byte, as RocksDB extends it; low 32 bits. Streamed, so
    // no block is copied to append one byte.
    let mut h = Xxh3::new();
    h.update(contents);
    h.update(&[t]);
    h.digest() as u32
}

/// Append a block: compressed with `codec` if that saves more than 12.5% (RocksDB's
/// `GoodCompressionRatio`), else raw; then the trailer. Returns its handle and whether it was
/// stored compressed.
pub fn write_block(
    out: &mut Vec<u8>,
    raw: &[u8],
    codec: Codec,
    coder: &mut Coder,
    scratch: &mut Vec<u8>,
) -> (BlockHandle, bool) {
    let offset = out.len() as u64;
    let mut t = 0u8;
    if codec != Codec::None {
        scratch.clear();
        put_varint(scratch, raw.len() as u64);
        coder.compress(codec, raw, scratch);
        if (scratch.len() as u64) < raw.len() as u64 - raw.len() as u64 / 8 {
            t = compression_type(codec);
            if coder.is_modeled() {
                t |= MODELED_TYPE;
            }
        }
    }
    let contents: &[u8] = if t != 0 { scratch } else { raw };
    let sum = checksum(contents, t);
    out.extend_from_slice(contents);
    out.push(t);
    out.extend_from_slice(&sum.to_le_bytes());
    (
        BlockHandle {
            offset,
            size: contents.len() as u64,
        },
        t != 0,
    )
}

/// The codec a compression type byte names (levels do not matter to decompression).
pub fn codec_of_type(t: u8) -> Option<Codec> {
    Some(match t {
        0 => Codec::None,
        1 => Codec::Snappy,
        2 => Codec::Deflate(1),
        4 => Codec::Lz4,
        7 => Codec::ZSTD1,
        _ => return None,
    })
}

/// Check a block's trailer and return its raw contents (decompressed if it was compressed).
pub fn read_block(
    file: &[u8],
    h: BlockHandle,
    what: &'static str,
    coder: &mut Coder,
) -> Result<Vec<u8>, FormatError> {
    // Tail blocks only (read once per table open), so the copy does not matter.
    let mut scratch = Vec::new();
    read_block_into(file, h, what, coder, &mut scratch).map(|(b, _)| b.to_vec())
}

/// [`read_block`] without a copy: a block stored raw is borrowed from `file`, a compressed
/// one is decompressed into `scratch` (reused across calls, so no allocation per lookup).
/// Also says whether it was decompressed.
pub fn read_block_into<'a>(
    file: &'a [u8],
    h: BlockHandle,
    what: &'static str,
    coder: &mut Coder,
    scratch: &'a mut Vec<u8>,
) -> Result<(&'a [u8], bool), FormatError> {
    let (contents, t) = checked_contents(file, h, what)?;
    if t == 0 {
        return Ok((contents, false));
    }
    let codec = codec_of_type(t & !MODELED_TYPE)
        .ok_or_else(|| corrupt(what, h.offset, format!("unknown compression type {t}")))?;
    let (raw_len, n) =
        get_varint(contents).ok_or_else(|| corrupt(what, h.offset, "bad raw length"))?;
    if raw_len > 1 << 31 {
        return Err(corrupt(what, h.offset, "raw length over 2 GiB"));
    }
    scratch.clear();
    scratch.resize(raw_len as usize, 0);
    let done = if t & MODELED_TYPE != 0 {
        codec::modeled::decode(&contents[n..], scratch)
    } else {
        coder.decompress(codec, &contents[n..], scratch)
    };
    done.map_err(|e| corrupt(what, h.offset, e.to_string()))?;
    Ok((scratch, true))
}

/// A block as read from the device (`bytes`: its stored form, trailer included; `offset`:
/// where it is in its file, for messages): checked, and decompressed if it was compressed
/// (also said). A block stored raw keeps its buffer (the trailer cut off), so a read costs
/// no copy.
pub fn decode_block(
    mut bytes: Vec<u8>,
    offset: u64,
    what: &'static str,
    coder: &mut Coder,
) -> Result<(Vec<u8>, bool), FormatError> {
    let size = (bytes.len() as u64)
        .checked_sub(TRAILER)
        .ok_or_else(|| corrupt(what, offset, "shorter than a block trailer"))?;
    let h = BlockHandle { offset: 0, size };
    let mut scratch = Vec::new();
    let decompressed = read_block_into(&bytes, h, what, coder, &mut scratch)
        .map_err(|FormatError::Corrupt { why, .. }| corrupt(what, offset, why))?
        .1;
    if decompressed {
        return Ok((scratch, true));
    }
    bytes.truncate(size as usize);
    Ok((bytes, false))
}

/// A block's contents and compression type, after checking that its handle lies inside the
/// file and its checksum matches.
fn checked_contents<'a>(
    file: &'a [u8],
    h: BlockHandle,
    what: &'static str,
) -> Result<(&'a [u8], u8), FormatError> {
    let end = h
        .offset
        .checked_add(h.on_disk())
        .filter(|&e| e <= file.len() as u64)
        .ok_or_else(|| corrupt(what, h.offset, "handle points past the end of the file"))?;
    let contents = &file[h.offset as usize..(h.offset + h.size) as usize];
    let t = file[(h.offset + h.size) as usize];
    let sum = u32::from_le_bytes(
        file[(end - 4) as usize..end as usize]
            .try_into()
            .expect("4 bytes"),
    );
    if checksum(contents, t) != sum {
        return Err(corrupt(what, h.offset, "checksum mismatch"));
    }
    Ok((contents, t))
}

/// The footer: checksum type, metaindex and index handles, format version, magic.
pub fn write_footer(out: &mut Vec<u8>, metaindex: BlockHandle, index: BlockHandle) {
    let start = out.len();
    out.push(CHECKSUM_XXH3);
    metaindex.encode(out);
    index.encode(out);
    out.resize(start + 1 + 40, 0);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&MAGIC.to_le_bytes());
}

pub fn read_footer(file: &[u8]) -> Result<(BlockHandle, BlockHandle), FormatError> {
    let len = file.len() as u64;
    if len < FOOTER {
        return Err(corrupt("footer", 0, "file shorter than a footer"));
    }
    let f = &file[(len - FOOTER) as usize..];
    let at = len - FOOTER;
    if u64::from_le_bytes(f[45..53].try_into().expect("8 bytes")) != MAGIC {
        return Err(corrupt("footer", at, "bad magic (not a block-based table)"));
    }
    let version = u32::from_le_bytes(f[41..45].try_into().expect("4 bytes"));
    if version != FORMAT_VERSION || f[0] != CHECKSUM_XXH3 {
        return Err(corrupt(
            "footer",
            at,
            format!("format version {version}, checksum type {}", f[0]),
        ));
    }
    let (meta, n) =
        BlockHandle::decode(&f[1..41]).ok_or_else(|| corrupt("footer", at, "bad metaindex"))?;
    let (index, _) =
        BlockHandle::decode(&f[1 + n..41]).ok_or_else(|| corrupt("footer", at, "bad index"))?;
    Ok((meta, index))
}

#[cfg(test)]
mod tests {

    #[test]
    fn cc_index_sizes_round_trip_as_the_cczns_code_packs_them() {
        // The worked example of seed-artifacts §1.8: post 1500, pre 4101.
        assert_eq!(cc_pack_sizes(1500, 4101), (4101 << 16) | 0x2FBC);
        assert_eq!(cc_pack_sizes(1500, 4101), 268_775_356);
        for post in [0u64, 1, 7, 8, 63, 64, 511, 512, 4095, 4101, 65_535, 1 << 20] {
            for pre in [0u64, 1, 4096, 4101, 65_535] {
                assert_eq!(cc_unpack_sizes(cc_pack_sizes(post, pre)), Some((post, pre)));
            }
        }
        // Every nibble continued: no terminator, not a size.
        assert_eq!(cc_unpack_sizes(u64::MAX), None);
    }
    use super::*;

    #[test]
    fn varints_round_trip_and_refuse_overlong() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(get_varint(&b), Some((v, b.len())));
        }
        assert_eq!(get_varint(&[0x80; 11]), None);
        assert_eq!(get_varint(&[0x80]), None);
    }

    #[test]
    fn blocks_keep_raw_what_does_not_compress_and_catch_corruption() {
        let mut coder = Coder::new();
        let mut scratch = Vec::new();
        let mut file = Vec::new();
        let text = b"abcdefgh".repeat(500);
        let (h1, c1) = write_block(&mut file, &text, Codec::ZSTD1, &mut coder, &mut scratch);
        let mut noise = vec![0u8; 4000];
        sim::Rng::new(1).fill(&mut noise);
        let (h2, c2) = write_block(&mut file, &noise, Codec::ZSTD1, &mut coder, &mut scratch);
        assert!(c1 && !c2);
        assert!(h1.size < 200);
        assert_eq!(
            read_block(&file, h1, "data block", &mut coder).unwrap(),
            text
        );
        assert_eq!(
            read_block(&file, h2, "data block", &mut coder).unwrap(),
            noise
        );
        file[h2.offset as usize + 7] ^= 1;
        let e = read_block(&file, h2, "data block", &mut coder).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
        let far = BlockHandle {
            offset: 1 << 40,
            size: 1,
        };
        assert!(read_block(&file, far, "index block", &mut coder).is_err());
    }
}
