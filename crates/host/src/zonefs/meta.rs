//! ZenFS's metadata (research/zenfs-rocksdb.md §1.4-1.5): a 512-byte superblock and a log of
//! records in a metadata zone. Each record is `[masked crc32c][length][payload]` zero-padded
//! to the block size, so every record starts on a block boundary and is one zone append; the
//! CRC covers the length bytes and the payload. A payload starts with a tag: 1 full snapshot
//! of every file, 2 file update (extents appended since the last sync), 3 file deletion (one
//! link), 4 end (the zone was rolled), 5 file replace (extents swapped, after GC). File
//! records are (tag, value) pairs: 1 id, 3 size, 4 lifetime, 5 extent, 6 mtime, 7 active
//! extent start, 8 sparse, 9 link name. Replay applies the records in order and stops at the
//! end record or the end of the log; a CRC mismatch or a malformed record is an error naming
//! its offset (ZenFS refuses to mount a corrupt log: there is no torn-tail tolerance, because
//! each record is a single append).

use std::collections::BTreeMap;

use super::plus::PlusConfig;

/// "ZENF".
pub const MAGIC: u32 = 0x5a45_4e46;
pub const FORMAT_VERSION: u32 = 2;
pub const SUPERBLOCK_BYTES: usize = 512;
const NO_ACTIVE: u64 = u64::MAX;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    #[error("corrupt metadata at byte {offset}: {why}")]
    Corrupt { offset: u64, why: String },
}

fn corrupt(offset: usize, why: impl Into<String>) -> MetaError {
    MetaError::Corrupt {
        offset: offset as u64,
        why: why.into(),
    }
}

/// The superblock: first record of every metadata zone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    pub uuid: String,
    /// Incremented at every metadata-zone roll; mount replays the zone with the highest.
    pub sequence: u32,
    pub flags: u32,
    pub block_bytes: u32,
    /// Zone size in blocks.
    pub zone_blocks: u32,
    pub zones: u32,
    pub finish_threshold: u32,
    /// Independent zone groups the IZG probe found at mkfs: zone z is in group z % this
    /// (0: none probed). Kept in bytes older superblocks left zero.
    pub izg_groups: u32,
    /// The ZenFS+ policy the file system was made for (mount uses it unless told
    /// otherwise): IZGs given, maximum width, isolation, reclaiming. `None`: ZenFS's.
    pub plus: Option<PlusConfig>,
}

/// The bits of a superblock's ZenFS+ word: IZGs (16 bits), width (8), isolation, reclaim,
/// and the top bit set when the word is present.
fn encode_plus(p: Option<PlusConfig>) -> u32 {
    p.map_or(0, |p| {
        1 << 31
            | p.izgs.min(PlusConfig::MAX_IZGS)
            | p.max_width.min(PlusConfig::MAX_WIDTH) << 16
            | u32::from(p.isolation) << 24
            | u32::from(p.reclaim) << 25
    })
}

fn decode_plus(w: u32) -> Option<PlusConfig> {
    (w >> 31 == 1).then_some(PlusConfig {
        izgs: w & 0xffff,
        max_width: (w >> 16) & 0xff,
        isolation: w >> 24 & 1 == 1,
        reclaim: w >> 25 & 1 == 1,
    })
}

impl Superblock {
    pub const FLAG_GC: u32 = 1;

    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(SUPERBLOCK_BYTES);
        b.extend_from_slice(&MAGIC.to_le_bytes());
        let mut uuid = [0u8; 37];
        let u = self.uuid.as_bytes();
        uuid[..u.len().min(36)].copy_from_slice(&u[..u.len().min(36)]);
        b.extend_from_slice(&uuid);
        for v in [
            self.sequence,
            FORMAT_VERSION,
            self.flags,
            self.block_bytes,
            self.zone_blocks,
            self.zones,
            self.finish_threshold,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let mut rest = [0u8; 256 + 64 + 123];
        rest[..4].copy_from_slice(&self.izg_groups.to_le_bytes());
        rest[4..8].copy_from_slice(&encode_plus(self.plus).to_le_bytes());
        let version = b"znslab zonefs";
        rest[256..256 + version.len()].copy_from_slice(version);
        b.extend_from_slice(&rest);
        debug_assert_eq!(b.len(), SUPERBLOCK_BYTES);
        b
    }

    pub fn decode(b: &[u8]) -> Result<Superblock, MetaError> {
        if b.len() != SUPERBLOCK_BYTES {
            return Err(corrupt(
                0,
                format!("superblock of {} bytes, not 512", b.len()),
            ));
        }
        let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        if u32_at(0) != MAGIC {
            return Err(corrupt(0, "bad superblock magic (not a zonefs)"));
        }
        let version = u32_at(45);
        if version != FORMAT_VERSION {
            return Err(corrupt(
                45,
                format!("on-disk version {version}, expected {FORMAT_VERSION}"),
            ));
        }
        let uuid = &b[4..41];
        let end = uuid.iter().position(|&c| c == 0).unwrap_or(36);
        let uuid = std::str::from_utf8(&uuid[..end])
            .map_err(|_| corrupt(4, "uuid is not text"))?
            .to_string();
        Ok(Superblock {
            uuid,
            sequence: u32_at(41),
            flags: u32_at(49),
            block_bytes: u32_at(53),
            zone_blocks: u32_at(57),
            zones: u32_at(61),
            finish_threshold: u32_at(65),
            izg_groups: u32_at(69),
            plus: decode_plus(u32_at(73)),
        })
    }
}

/// A file extent: `len` bytes at device byte `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub start: u64,
    pub len: u64,
}

/// A file as the log records it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileMeta {
    pub id: u64,
    pub size: u64,
    /// RocksDB write lifetime hint (0 not set, 1 none, 2 short, 3 medium, 4 long, 5 extreme).
    pub lifetime: u32,
    pub extents: Vec<Extent>,
    pub mtime: u64,
    /// Where the extent being written began (a file open for writing).
    pub active_start: Option<u64>,
    pub sparse: bool,
    pub links: Vec<String>,
}

/// One log record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    Snapshot(Vec<FileMeta>),
    /// Scalar fields, links if any, and the extents added since the last record.
    Update(FileMeta),
    Deletion {
        id: u64,
        link: String,
    },
    End,
    /// Like an update, but the extents replace the file's (after GC migration).
    Replace(FileMeta),
}

fn put_prefixed(out: &mut Vec<u8>, b: &[u8]) {
    crate::lsm::format::put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn encode_file(f: &FileMeta) -> Vec<u8> {
    let mut b = Vec::new();
    let tag = |b: &mut Vec<u8>, t: u32| b.extend_from_slice(&t.to_le_bytes());
    tag(&mut b, 1);
    b.extend_from_slice(&f.id.to_le_bytes());
    tag(&mut b, 3);
    b.extend_from_slice(&f.size.to_le_bytes());
    tag(&mut b, 4);
    b.extend_from_slice(&f.lifetime.to_le_bytes());
    for e in &f.extents {
        tag(&mut b, 5);
        let mut x = Vec::with_capacity(16);
        x.extend_from_slice(&e.start.to_le_bytes());
        x.extend_from_slice(&e.len.to_le_bytes());
        put_prefixed(&mut b, &x);
    }
    tag(&mut b, 6);
    b.extend_from_slice(&f.mtime.to_le_bytes());
    tag(&mut b, 7);
    b.extend_from_slice(&f.active_start.unwrap_or(NO_ACTIVE).to_le_bytes());
    if f.sparse {
        tag(&mut b, 8);
    }
    for l in &f.links {
        tag(&mut b, 9);
        put_prefixed(&mut b, l.as_bytes());
    }
    b
}

/// A little reader over a record's bytes that reports where it went wrong.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
    base: usize,
}

impl<'a> Cursor<'a> {
    fn err(&self, why: &str) -> MetaError {
        corrupt(self.base + self.at, why.to_string())
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], MetaError> {
        let s = self
            .b
            .get(
                self.at
                    ..self
                        .at
                        .checked_add(n)
                        .ok_or_else(|| self.err("length overflows"))?,
            )
            .ok_or_else(|| self.err("record ends early"))?;
        self.at += n;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, MetaError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, MetaError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn prefixed(&mut self) -> Result<&'a [u8], MetaError> {
        let (n, used) = crate::lsm::format::get_varint(&self.b[self.at..])
            .ok_or_else(|| self.err("bad length prefix"))?;
        self.at += used;
        let n = usize::try_from(n).map_err(|_| self.err("length overflows"))?;
        self.take(n)
    }
    fn done(&self) -> bool {
        self.at >= self.b.len()
    }
}

fn decode_file(b: &[u8], base: usize) -> Result<FileMeta, MetaError> {
    let mut c = Cursor { b, at: 0, base };
    if c.u32()? != 1 {
        return Err(c.err("file record does not start with its id"));
    }
    let mut f = FileMeta {
        id: c.u64()?,
        ..FileMeta::default()
    };
    while !c.done() {
        match c.u32()? {
            3 => f.size = c.u64()?,
            4 => f.lifetime = c.u32()?,
            5 => {
                let x = c.prefixed()?;
                if x.len() != 16 {
                    return Err(c.err("extent is not 16 bytes"));
                }
                f.extents.push(Extent {
                    start: u64::from_le_bytes(x[..8].try_into().expect("8 bytes")),
                    len: u64::from_le_bytes(x[8..].try_into().expect("8 bytes")),
                });
            }
            6 => f.mtime = c.u64()?,
            7 => f.active_start = Some(c.u64()?).filter(|&s| s != NO_ACTIVE),
            8 => f.sparse = true,
            9 => {
                let l = c.prefixed()?;
                let name = std::str::from_utf8(l).map_err(|_| c.err("link name is not UTF-8"))?;
                f.links.push(name.to_string());
            }
            t => return Err(c.err(&format!("unknown file record tag {t}"))),
        }
    }
    Ok(f)
}

fn payload(r: &Record) -> Vec<u8> {
    let mut p = Vec::new();
    match r {
        Record::Snapshot(files) => {
            p.extend_from_slice(&1u32.to_le_bytes());
            let mut blob = Vec::new();
            for f in files {
                put_prefixed(&mut blob, &encode_file(f));
            }
            put_prefixed(&mut p, &blob);
        }
        Record::Update(f) | Record::Replace(f) => {
            let tag: u32 = if matches!(r, Record::Update(_)) { 2 } else { 5 };
            p.extend_from_slice(&tag.to_le_bytes());
            put_prefixed(&mut p, &encode_file(f));
        }
        Record::Deletion { id, link } => {
            p.extend_from_slice(&3u32.to_le_bytes());
            let mut x = id.to_le_bytes().to_vec();
            put_prefixed(&mut x, link.as_bytes());
            put_prefixed(&mut p, &x);
        }
        Record::End => p.extend_from_slice(&4u32.to_le_bytes()),
    }
    p
}

fn mask(crc: u32) -> u32 {
    (crc.rotate_right(15)).wrapping_add(0xa282_ead8)
}

/// Frame any payload (a record's, or the superblock) and pad it to `block` bytes.
pub fn frame(payload: &[u8], block: usize) -> Vec<u8> {
    let len = (payload.len() as u32).to_le_bytes();
    let crc = crc32c::crc32c_append(crc32c::crc32c(&len), payload);
    let mut out = Vec::with_capacity((8 + payload.len()).div_ceil(block) * block);
    out.extend_from_slice(&mask(crc).to_le_bytes());
    out.extend_from_slice(&len);
    out.extend_from_slice(payload);
    out.resize(out.len().div_ceil(block) * block, 0);
    out
}

/// A record framed and padded, ready for one zone append.
pub fn encode(r: &Record, block: usize) -> Vec<u8> {
    frame(&payload(r), block)
}

/// Split a log (the bytes of a metadata zone up to its write pointer) into framed payloads
/// with their offsets.
fn frames(log: &[u8], block: usize) -> Result<Vec<(usize, &[u8])>, MetaError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 8 <= log.len() {
        if log[at..at + 8].iter().all(|&b| b == 0) {
            // Zeros: the end of what was written (a finished zone's padding).
            break;
        }
        let crc = u32::from_le_bytes(log[at..at + 4].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(log[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
        let end = (at + 8)
            .checked_add(len)
            .filter(|&e| e <= log.len())
            .ok_or_else(|| corrupt(at, format!("record of {len} bytes runs past the log")))?;
        let body = &log[at + 8..end];
        if mask(crc32c::crc32c_append(
            crc32c::crc32c(&log[at + 4..at + 8]),
            body,
        )) != crc
        {
            return Err(corrupt(at, "record checksum mismatch"));
        }
        out.push((at, body));
        at = (end.div_ceil(block) * block).max(at + block);
    }
    Ok(out)
}

/// Decode a metadata zone's log: its superblock and its records, up to the end record.
pub fn decode_log(log: &[u8], block: usize) -> Result<(Superblock, Vec<Record>), MetaError> {
    let frames = frames(log, block)?;
    let Some(&(_, sb)) = frames.first() else {
        return Err(corrupt(0, "no superblock"));
    };
    let sb = Superblock::decode(sb)?;
    let mut records = Vec::new();
    for &(at, body) in &frames[1..] {
        let mut c = Cursor {
            b: body,
            at: 0,
            base: at + 8,
        };
        let r = match c.u32()? {
            1 => {
                let blob = c.prefixed()?;
                let mut files = Vec::new();
                let mut fc = Cursor {
                    b: blob,
                    at: 0,
                    base: at + 8,
                };
                while !fc.done() {
                    let start = fc.at;
                    let f = fc.prefixed()?;
                    files.push(decode_file(f, at + 8 + start)?);
                }
                Record::Snapshot(files)
            }
            t @ (2 | 5) => {
                let f = decode_file(c.prefixed()?, at + 8)?;
                if t == 2 {
                    Record::Update(f)
                } else {
                    Record::Replace(f)
                }
            }
            3 => {
                let x = c.prefixed()?;
                let mut d = Cursor {
                    b: x,
                    at: 0,
                    base: at + 8,
                };
                let id = d.u64()?;
                let link = std::str::from_utf8(d.prefixed()?)
                    .map_err(|_| corrupt(at, "link name is not UTF-8"))?
                    .to_string();
                Record::Deletion { id, link }
            }
            4 => Record::End,
            t => return Err(corrupt(at, format!("unknown record tag {t}"))),
        };
        let end = r == Record::End;
        records.push(r);
        if end {
            break;
        }
    }
    Ok((sb, records))
}

/// The files a sequence of records leaves, by id.
pub fn replay(records: &[Record]) -> BTreeMap<u64, FileMeta> {
    let mut files: BTreeMap<u64, FileMeta> = BTreeMap::new();
    for r in records {
        match r {
            Record::Snapshot(all) => {
                files = all.iter().map(|f| (f.id, f.clone())).collect();
            }
            Record::Update(u) | Record::Replace(u) => {
                let f = files.entry(u.id).or_insert_with(|| FileMeta {
                    id: u.id,
                    ..FileMeta::default()
                });
                if matches!(r, Record::Replace(_)) {
                    f.extents.clear();
                }
                // An update prepared before a metadata roll but written after its snapshot
                // repeats extents the snapshot already holds: a file's extents never share a
                // start, so those are skipped.
                for e in &u.extents {
                    if !f.extents.iter().any(|x| x.start == e.start) {
                        f.extents.push(*e);
                    }
                }
                f.size = u.size;
                f.lifetime = u.lifetime;
                f.mtime = u.mtime;
                f.active_start = u.active_start;
                f.sparse = u.sparse;
                if !u.links.is_empty() {
                    f.links = u.links.clone();
                }
            }
            Record::Deletion { id, link } => {
                if let Some(f) = files.get_mut(id) {
                    f.links.retain(|l| l != link);
                    if f.links.is_empty() {
                        files.remove(id);
                    }
                }
            }
            Record::End => break,
        }
    }
    files
}
