//! The image file: a device's configuration, zone table, bytes and design tables in one sparse
//! file, written in an order that survives the process being killed at any instant, and held
//! by one process at a time. The layout and the order are described in `storage.rs`.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::layout::Layout;
use crate::zone::{Zone, ZoneState};

const MAGIC: &[u8; 8] = b"ZNSLABv3";
/// Magics of older formats, refused with a message instead of "bad magic".
const OLD_MAGICS: [&[u8; 8]; 2] = [b"ZNSLABv1", b"ZNSLABv2"];
const HOLDER_OFFSET: u64 = 60 << 10;
const HOLDER_BYTES: usize = 64;
const ZONE_TABLE_OFFSET: u64 = 64 << 10;
pub(crate) const RECORD_BYTES: u64 = 32;
/// The design tables' journal (sparse: only written records take space, and a checkpoint
/// gives it back).
const JOURNAL_BYTES: u64 = 256 << 20;
/// Checkpoint when the journal passes this, or twice the last checkpoint, whichever is more.
const JOURNAL_SOFT_LIMIT: u64 = 16 << 20;
const HEADER_AREA: u64 = 4096;
const SLOT_BYTES: u64 = 64;
const SLOT_MAGIC: &[u8; 4] = b"ZCKP";
const JOURNAL_RECORD_HEADER: u64 = 16;
/// Stored bytes are checked in units of this many bytes, as a drive's ECC checks codewords:
/// each unit's entry is its CRC32C and how many of its bytes it covers (units fill as a zone
/// or region is appended to).
const ECC_UNIT: u64 = 4096;
const ECC_ENTRY: u64 = 8;

/// The message of a read whose bytes do not match their checksum (a drive's Unrecovered
/// Read Error).
pub(crate) const ECC_MISMATCH: &str = "stored bytes do not match their checksum";

pub(crate) fn is_ecc_error(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidData && e.to_string().starts_with(ECC_MISMATCH)
}

/// How a process holds an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenMode {
    /// Commands that change the image: an exclusive lock.
    ReadWrite,
    /// Commands that only read (report zones, read, identify): a shared lock, and the file
    /// may be read-only.
    ReadOnly,
}

pub(crate) struct ImageFile {
    file: File,
    path: PathBuf,
    read_only: bool,
    /// fdatasync after every command that changed the image, and at each checkpoint
    /// (survives the host's own power loss).
    pub sync: bool,
    data_offset: u64,
    meta_offset: u64,
    zone_bytes: u64,
    zone_meta_bytes: u64,
    oob_offset: u64,
    /// OOB bytes of one flash page, and of all pages of a zone.
    oob_bytes: u64,
    zone_oob_bytes: u64,
    flash_offset: u64,
    /// Checksum entries of each zone's bytes, and of a design's own flash.
    ecc_offset: u64,
    zone_ecc_bytes: u64,
    ecc_flash_offset: u64,
    table_offset: u64,
    log: Log,
}

/// A design's tables as an image holds them: the newest checkpoint, and the journal records
/// written after it, in order.
pub(crate) struct Logged {
    pub checkpoint: Vec<u8>,
    pub records: Vec<Vec<u8>>,
}

/// Where the design tables' journal stands.
#[derive(Debug, Default)]
struct Log {
    /// The newest checkpoint: its generation, header slot, place and length.
    gen: u64,
    slot: usize,
    active: Option<(u64, u64)>,
    /// Sequence number of the next record, and where it goes in the journal.
    next_seq: u64,
    pos: u64,
}

/// Where the sections of an image start, for a layout.
struct Offsets {
    data: u64,
    meta: u64,
    oob: u64,
    zone_bytes: u64,
    zone_meta_bytes: u64,
    oob_bytes: u64,
    zone_oob_bytes: u64,
    flash: u64,
    ecc: u64,
    zone_ecc_bytes: u64,
    ecc_flash: u64,
    table: u64,
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn offsets(layout: &Layout) -> Offsets {
    let zones = layout.zone_count as u64;
    let data = align_up(ZONE_TABLE_OFFSET + RECORD_BYTES * zones, 1 << 20);
    let zone_bytes = layout.zone_capacity_bytes();
    let zone_meta_bytes = layout.zone_capacity_lbas * layout.metadata_bytes;
    let meta = align_up(data + zone_bytes * zones, 1 << 20);
    let oob = align_up(meta + zone_meta_bytes * zones, 1 << 20);
    let oob_bytes = layout.geometry.oob_bytes_per_page as u64;
    let zone_oob_bytes = zone_bytes.div_ceil(layout.geometry.page_bytes as u64) * oob_bytes;
    let flash = align_up(oob + zone_oob_bytes * zones, 1 << 20);
    let own_flash = layout.balloon.is_some() || layout.tcssd_superblocks.is_some();
    let flash_bytes = if own_flash {
        layout.geometry.total_bytes()
    } else {
        0
    };
    let ecc = align_up(flash + flash_bytes, 1 << 20);
    let zone_ecc_bytes = zone_bytes.div_ceil(ECC_UNIT) * ECC_ENTRY;
    let ecc_flash = align_up(ecc + zone_ecc_bytes * zones, 1 << 20);
    let table = align_up(
        ecc_flash + flash_bytes.div_ceil(ECC_UNIT) * ECC_ENTRY,
        1 << 20,
    );
    Offsets {
        data,
        meta,
        oob,
        flash,
        ecc,
        zone_ecc_bytes,
        ecc_flash,
        table,
        zone_bytes,
        zone_meta_bytes,
        oob_bytes,
        zone_oob_bytes,
    }
}

/// The length an image of `layout` has at least (its sections up to the checkpoint headers).
pub(crate) fn min_len(layout: &Layout) -> u64 {
    offsets(layout).table + HEADER_AREA
}

/// Take the image's lock without waiting: exclusive to change it, shared to read it. A second
/// writer, or a writer beside readers, is refused with the holder named where it is known.
fn lock(file: &File, path: &Path, mode: OpenMode) -> io::Result<()> {
    let op = match mode {
        OpenMode::ReadWrite => libc::LOCK_EX,
        OpenMode::ReadOnly => libc::LOCK_SH,
    } | libc::LOCK_NB;
    // SAFETY: flock on a descriptor we own, with integer flags.
    if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
        return Err(err);
    }
    let holder = read_holder(file)
        .map(|(pid, name)| format!("process {pid} ({name})"))
        .unwrap_or_else(|| "another process (reading it)".to_string());
    Err(io::Error::new(
        io::ErrorKind::WouldBlock,
        format!(
            "{} is in use by {holder}; an image is used by one process at a time \
             (commands that only read it may share it)",
            path.display()
        ),
    ))
}

/// The process recorded as holding the image for writing, if it still runs.
fn read_holder(file: &File) -> Option<(u32, String)> {
    let mut rec = [0u8; HOLDER_BYTES];
    file.read_exact_at(&mut rec, HOLDER_OFFSET).ok()?;
    let pid = u32::from_le_bytes(rec[0..4].try_into().expect("4 bytes"));
    if pid == 0 || !Path::new(&format!("/proc/{pid}")).exists() {
        return None;
    }
    let end = rec[4..]
        .iter()
        .position(|&b| b == 0)
        .map_or(rec.len(), |n| n + 4);
    Some((pid, String::from_utf8_lossy(&rec[4..end]).into_owned()))
}

fn holder_record() -> [u8; HOLDER_BYTES] {
    let mut rec = [0u8; HOLDER_BYTES];
    rec[0..4].copy_from_slice(&std::process::id().to_le_bytes());
    let name = std::fs::read_to_string("/proc/self/comm").unwrap_or_else(|_| "znslab".into());
    let name = name.trim().as_bytes();
    let n = name.len().min(HOLDER_BYTES - 5);
    rec[4..4 + n].copy_from_slice(&name[..n]);
    rec
}

impl ImageFile {
    fn from_offsets(file: File, path: &Path, read_only: bool, o: Offsets) -> ImageFile {
        ImageFile {
            file,
            path: path.to_path_buf(),
            read_only,
            sync: false,
            data_offset: o.data,
            meta_offset: o.meta,
            zone_bytes: o.zone_bytes,
            zone_meta_bytes: o.zone_meta_bytes,
            oob_offset: o.oob,
            oob_bytes: o.oob_bytes,
            zone_oob_bytes: o.zone_oob_bytes,
            flash_offset: o.flash,
            ecc_offset: o.ecc,
            zone_ecc_bytes: o.zone_ecc_bytes,
            ecc_flash_offset: o.ecc_flash,
            table_offset: o.table,
            log: Log::default(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Create an image for `layout` at `path` (replacing a file there, once its lock is ours),
    /// storing `config_toml` in its header.
    pub fn create(path: &Path, layout: &Layout, config_toml: &str) -> io::Result<ImageFile> {
        if config_toml.len() as u64 > HOLDER_OFFSET - 12 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "device configuration too large for the image header",
            ));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        lock(&file, path, OpenMode::ReadWrite)?;
        file.set_len(0)?;
        let mut header = Vec::with_capacity(12 + config_toml.len());
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&(config_toml.len() as u32).to_le_bytes());
        header.extend_from_slice(config_toml.as_bytes());
        file.write_all_at(&header, 0)?;
        file.write_all_at(&holder_record(), HOLDER_OFFSET)?;
        file.set_len(min_len(layout))?;
        Ok(Self::from_offsets(file, path, false, offsets(layout)))
    }

    /// Open an image and read the configuration text in its header. The lock is taken before
    /// anything is read; the file's length is checked once the layout is known
    /// ([`attach`](Self::attach)).
    pub fn open(path: &Path, mode: OpenMode) -> io::Result<(File, String)> {
        let file = OpenOptions::new()
            .read(true)
            .write(mode == OpenMode::ReadWrite)
            .open(path)?;
        lock(&file, path, mode)?;
        let found = file.metadata()?.len();
        let mut head = [0u8; 12];
        if found < ZONE_TABLE_OFFSET {
            return Err(invalid(format!(
                "truncated, or not a znslab device image (too short for the header): expected \
                 at least {ZONE_TABLE_OFFSET} bytes, found {found}"
            )));
        }
        file.read_exact_at(&mut head, 0)?;
        if OLD_MAGICS.iter().any(|m| &head[..8] == *m) {
            return Err(invalid(format!(
                "made by an older znslab ({}); this one reads {}: create it again",
                String::from_utf8_lossy(&head[..8]),
                String::from_utf8_lossy(MAGIC)
            )));
        }
        if &head[..8] != MAGIC {
            return Err(invalid("not a znslab device image (bad magic)".into()));
        }
        let len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as u64;
        if len > HOLDER_OFFSET - 12 {
            return Err(invalid("corrupt image header (config length)".into()));
        }
        let mut text = vec![0u8; len as usize];
        file.read_exact_at(&mut text, 12)?;
        let text = String::from_utf8(text)
            .map_err(|_| invalid("corrupt image header (config is not UTF-8)".into()))?;
        Ok((file, text))
    }

    /// The image opened by [`open`](Self::open), for `layout`: checks its length and, for a
    /// writer, records this process as the holder.
    pub fn attach(
        file: File,
        path: &Path,
        layout: &Layout,
        mode: OpenMode,
    ) -> io::Result<ImageFile> {
        let expected = min_len(layout);
        let found = file.metadata()?.len();
        if found < expected {
            return Err(invalid(format!(
                "truncated (shorter than the layout in its header): expected at least \
                 {expected} bytes, found {found}"
            )));
        }
        if mode == OpenMode::ReadWrite {
            file.write_all_at(&holder_record(), HOLDER_OFFSET)?;
        }
        Ok(Self::from_offsets(
            file,
            path,
            mode == OpenMode::ReadOnly,
            offsets(layout),
        ))
    }

    // ---- zone bytes ------------------------------------------------------------------------

    pub fn write_zone(
        &self,
        zone: u32,
        offset: u64,
        data: &[u8],
        meta_offset: u64,
        metadata: &[u8],
    ) -> io::Result<()> {
        let (data_base, ecc_base) = self.zone_bases(zone);
        self.write_checked(data_base, ecc_base, offset, data)?;
        if !metadata.is_empty() {
            self.file.write_all_at(
                metadata,
                self.meta_offset + zone as u64 * self.zone_meta_bytes + meta_offset,
            )?;
        }
        Ok(())
    }

    pub fn read_zone(
        &self,
        zone: u32,
        offset: u64,
        buf: &mut [u8],
        meta_offset: u64,
        metadata: &mut [u8],
    ) -> io::Result<()> {
        let (data_base, ecc_base) = self.zone_bases(zone);
        self.file.read_exact_at(buf, data_base + offset)?;
        self.ecc_check(data_base, ecc_base, offset, buf)?;
        if !metadata.is_empty() {
            self.file.read_exact_at(
                metadata,
                self.meta_offset + zone as u64 * self.zone_meta_bytes + meta_offset,
            )?;
        }
        Ok(())
    }

    /// Were bytes ever stored in zone `zone` and not punched since (its first checksum entry)?
    pub fn zone_touched(&self, zone: u32) -> io::Result<bool> {
        let (_, ecc_base) = self.zone_bases(zone);
        Ok(self.read_entries(ecc_base, 0, 1)?[0] != (0, 0))
    }

    /// Punch a zone's data, metadata and OOB: they read back as zeros.
    /// The checksum entries go last: while the first one stands, [`zone_touched`](Self::zone_touched) says the
    /// zone still has bytes to punch (a kill in between is finished at the next open).
    pub fn punch_zone(&self, zone: u32) -> io::Result<()> {
        let z = zone as u64;
        self.punch(
            self.oob_offset + z * self.zone_oob_bytes,
            self.zone_oob_bytes,
        )?;
        self.punch(
            self.meta_offset + z * self.zone_meta_bytes,
            self.zone_meta_bytes,
        )?;
        self.punch(self.data_offset + z * self.zone_bytes, self.zone_bytes)?;
        self.punch(
            self.ecc_offset + z * self.zone_ecc_bytes,
            self.zone_ecc_bytes,
        )
    }

    pub fn write_oob(&self, zone: u32, page: u64, oob: &[u8]) -> io::Result<()> {
        self.file.write_all_at(
            oob,
            self.oob_offset + zone as u64 * self.zone_oob_bytes + page * self.oob_bytes,
        )
    }

    /// Read the OOB of flash page `page` of zone `zone`.
    pub fn read_oob(&self, zone: u32, page: u64, out: &mut [u8]) -> io::Result<()> {
        debug_assert_eq!(out.len() as u64, self.oob_bytes);
        self.file.read_exact_at(
            out,
            self.oob_offset + zone as u64 * self.zone_oob_bytes + page * self.oob_bytes,
        )
    }

    // ---- a design's own flash --------------------------------------------------------------

    /// Write bytes of the flash (balloon, tcssd) at physical byte address `addr`.
    pub fn write_flash(&self, addr: u64, bytes: &[u8]) -> io::Result<()> {
        self.write_checked(self.flash_offset, self.ecc_flash_offset, addr, bytes)
    }

    pub fn read_flash(&self, addr: u64, out: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(out, self.flash_offset + addr)?;
        self.ecc_check(self.flash_offset, self.ecc_flash_offset, addr, out)
    }

    /// An erased range of the flash (whole checksum units): give its file space back.
    pub fn erase_flash(&self, addr: u64, len: u64) -> io::Result<()> {
        self.punch(self.flash_offset + addr, len)?;
        self.punch(
            self.ecc_flash_offset + addr / ECC_UNIT * ECC_ENTRY,
            len.div_ceil(ECC_UNIT) * ECC_ENTRY,
        )
    }

    // ---- checksums of stored bytes ---------------------------------------------------------

    fn zone_bases(&self, zone: u32) -> (u64, u64) {
        (
            self.data_offset + zone as u64 * self.zone_bytes,
            self.ecc_offset + zone as u64 * self.zone_ecc_bytes,
        )
    }

    fn read_entries(&self, ecc_base: u64, first: u64, n: u64) -> io::Result<Vec<(u32, u64)>> {
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
    fn write_checked(
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
    fn ecc_check(&self, data_base: u64, ecc_base: u64, offset: u64, buf: &[u8]) -> io::Result<()> {
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

    /// Deallocate a byte range of the file; it reads back as zeros.
    fn punch(&self, offset: u64, len: u64) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: fallocate on a file descriptor we own, with plain integer arguments.
        let rc = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EOPNOTSUPP) {
            // A file system without hole punching: write zeros over the range instead.
            let zeros = vec![0u8; 1 << 20];
            let mut at = 0;
            while at < len {
                let n = (len - at).min(zeros.len() as u64);
                self.file.write_all_at(&zeros[..n as usize], offset + at)?;
                at += n;
            }
            return Ok(());
        }
        Err(err)
    }

    // ---- zone records ----------------------------------------------------------------------

    /// Load the zone records into `zones` (a record never written leaves its zone empty).
    pub fn load_zones(&self, zones: &mut [Zone], lba_bytes: u64) -> io::Result<()> {
        let mut buf = vec![0u8; RECORD_BYTES as usize * zones.len()];
        self.file.read_exact_at(&mut buf, ZONE_TABLE_OFFSET)?;
        for (z, rec) in zones
            .iter_mut()
            .zip(buf.chunks_exact(RECORD_BYTES as usize))
        {
            decode_zone(rec.try_into().expect("32 bytes"), z, lba_bytes)?;
        }
        Ok(())
    }

    /// Rewrite zone `zi`'s record: one 32-byte write inside one page, so a kill never tears it.
    pub fn save_zone(&self, zi: usize, zone: &Zone) -> io::Result<()> {
        self.file.write_all_at(
            &encode_zone(zone),
            ZONE_TABLE_OFFSET + zi as u64 * RECORD_BYTES,
        )
    }

    /// Make what was written durable against the host's power loss, when asked to.
    pub fn sync_if_asked(&self) -> io::Result<()> {
        if self.sync {
            self.file.sync_data()?;
        }
        Ok(())
    }

    // ---- the design tables' checkpoints and journal ----------------------------------------

    fn journal_offset(&self) -> u64 {
        self.table_offset + HEADER_AREA
    }

    fn checkpoint_base(&self) -> u64 {
        self.journal_offset() + JOURNAL_BYTES
    }

    /// Read the newest valid checkpoint and the journal records after it, in order; `None`
    /// when no checkpoint was ever written. Leaves the journal ready for the next record.
    pub fn log_load(&mut self) -> io::Result<Option<Logged>> {
        let mut head = [0u8; (2 * SLOT_BYTES) as usize];
        self.file.read_exact_at(&mut head, self.table_offset)?;
        let mut best: Option<(u64, usize, u64, u64, u32, u64)> = None;
        for slot in 0..2 {
            let h = &head[slot * SLOT_BYTES as usize..(slot + 1) * SLOT_BYTES as usize];
            let Some(parsed) = parse_slot(h) else {
                continue;
            };
            if best.is_none_or(|b| parsed.0 > b.0) {
                best = Some((parsed.0, slot, parsed.1, parsed.2, parsed.3, parsed.4));
            }
        }
        let Some((gen, slot, off, len, crc, next_seq)) = best else {
            return Ok(None);
        };
        let mut table = vec![0u8; len as usize];
        self.file.read_exact_at(&mut table, off)?;
        if crc32c::crc32c(&table) != crc {
            return Err(invalid(format!(
                "design table checkpoint {gen} fails its checksum"
            )));
        }
        self.log = Log {
            gen,
            slot,
            active: Some((off, len)),
            next_seq,
            pos: 0,
        };
        // Replay what follows, to the first record missing, torn or out of sequence.
        let mut records = Vec::new();
        let mut hdr = [0u8; JOURNAL_RECORD_HEADER as usize];
        loop {
            let at = self.log.pos;
            if at + JOURNAL_RECORD_HEADER > JOURNAL_BYTES {
                break;
            }
            self.file
                .read_exact_at(&mut hdr, self.journal_offset() + at)?;
            let len = u32::from_le_bytes(hdr[0..4].try_into().expect("4")) as u64;
            let crc = u32::from_le_bytes(hdr[4..8].try_into().expect("4"));
            let seq = u64::from_le_bytes(hdr[8..16].try_into().expect("8"));
            if len == 0
                || seq != self.log.next_seq
                || at + JOURNAL_RECORD_HEADER + len > JOURNAL_BYTES
            {
                break;
            }
            let mut payload = vec![0u8; len as usize];
            self.file.read_exact_at(
                &mut payload,
                self.journal_offset() + at + JOURNAL_RECORD_HEADER,
            )?;
            if crc32c::crc32c_append(crc32c::crc32c(&hdr[8..16]), &payload) != crc {
                break;
            }
            records.push(payload);
            self.log.pos = at + JOURNAL_RECORD_HEADER + len;
            self.log.next_seq += 1;
        }
        Ok(Some(Logged {
            checkpoint: table,
            records,
        }))
    }

    /// Append one journal record. `false`: the journal has no room (checkpoint instead).
    pub fn log_append(&mut self, payload: &[u8]) -> io::Result<bool> {
        let len = payload.len() as u64;
        if self.log.pos + JOURNAL_RECORD_HEADER + len > JOURNAL_BYTES {
            return Ok(false);
        }
        let mut rec = Vec::with_capacity((JOURNAL_RECORD_HEADER + len) as usize);
        let seq = self.log.next_seq.to_le_bytes();
        let crc = crc32c::crc32c_append(crc32c::crc32c(&seq), payload);
        rec.extend_from_slice(&(len as u32).to_le_bytes());
        rec.extend_from_slice(&crc.to_le_bytes());
        rec.extend_from_slice(&seq);
        rec.extend_from_slice(payload);
        self.file
            .write_all_at(&rec, self.journal_offset() + self.log.pos)?;
        self.log.pos += rec.len() as u64;
        self.log.next_seq += 1;
        Ok(true)
    }

    /// Has the journal grown enough that a checkpoint is due?
    pub fn log_wants_checkpoint(&self) -> bool {
        let last = self.log.active.map_or(0, |(_, len)| len);
        self.log.pos > JOURNAL_SOFT_LIMIT.max(2 * last)
    }

    /// Write the whole table as the new checkpoint: to a place the current one does not use,
    /// then its header into the other slot, then give the journal's space back.
    pub fn log_checkpoint(&mut self, table: &[u8]) -> io::Result<()> {
        let base = self.checkpoint_base();
        let len = table.len() as u64;
        let off = match self.log.active {
            Some((a_off, _)) if base + len <= a_off => base,
            Some((a_off, a_len)) => align_up(a_off + a_len, 4096),
            None => base,
        };
        self.file.write_all_at(table, off)?;
        self.sync_if_asked()?;
        let gen = self.log.gen + 1;
        let slot = if self.log.active.is_some() {
            1 - self.log.slot
        } else {
            0
        };
        let mut h = [0u8; SLOT_BYTES as usize];
        h[0..4].copy_from_slice(SLOT_MAGIC);
        h[4..12].copy_from_slice(&gen.to_le_bytes());
        h[12..20].copy_from_slice(&off.to_le_bytes());
        h[20..28].copy_from_slice(&len.to_le_bytes());
        h[28..32].copy_from_slice(&crc32c::crc32c(table).to_le_bytes());
        h[32..40].copy_from_slice(&self.log.next_seq.to_le_bytes());
        let hcrc = crc32c::crc32c(&h[..60]);
        h[60..64].copy_from_slice(&hcrc.to_le_bytes());
        self.file
            .write_all_at(&h, self.table_offset + slot as u64 * SLOT_BYTES)?;
        // From here this checkpoint is the one the image opens with: the next is placed
        // around it, whatever fails below.
        let used = self.log.pos;
        self.log.gen = gen;
        self.log.slot = slot;
        self.log.active = Some((off, len));
        self.log.pos = 0;
        // The records before this checkpoint are no longer needed (their sequence numbers are
        // below the checkpoint's, so replay would skip them anyway): giving their space back
        // may fail harmlessly.
        if used > 0 {
            let _ = self.punch(self.journal_offset(), align_up(used, 4096));
        }
        self.sync_if_asked()
    }
}

/// A checkpoint header slot: (generation, offset, length, table CRC, next sequence number).
fn parse_slot(h: &[u8]) -> Option<(u64, u64, u64, u32, u64)> {
    if &h[0..4] != SLOT_MAGIC {
        return None;
    }
    let hcrc = u32::from_le_bytes(h[60..64].try_into().ok()?);
    if crc32c::crc32c(&h[..60]) != hcrc {
        return None;
    }
    let u64_at = |a: usize| u64::from_le_bytes(h[a..a + 8].try_into().expect("8 bytes"));
    Some((
        u64_at(4),
        u64_at(12),
        u64_at(20),
        u32::from_le_bytes(h[28..32].try_into().ok()?),
        u64_at(32),
    ))
}

/// A zone's 32-byte record.
pub(crate) fn encode_zone(z: &Zone) -> [u8; RECORD_BYTES as usize] {
    let mut rec = [0u8; RECORD_BYTES as usize];
    rec[0] = z.state.code();
    rec[1] = z.attributes;
    rec[2] = z.padding as u8;
    rec[8..16].copy_from_slice(&z.wp.to_le_bytes());
    rec[16..24].copy_from_slice(&z.bytes.to_le_bytes());
    rec
}

/// Load a record into `z` (state 0: never written, the zone stays empty), refusing one that
/// contradicts the zone's geometry.
pub(crate) fn decode_zone(
    rec: &[u8; RECORD_BYTES as usize],
    z: &mut Zone,
    lba_bytes: u64,
) -> io::Result<()> {
    if rec[0] == 0 {
        return Ok(());
    }
    let state = ZoneState::from_code(rec[0])
        .ok_or_else(|| invalid(format!("bad zone state {:#x} in image", rec[0])))?;
    let wp = u64::from_le_bytes(rec[8..16].try_into().expect("8 bytes"));
    let bytes = u64::from_le_bytes(rec[16..24].try_into().expect("8 bytes"));
    if wp < z.zslba || wp > z.end_of_capacity() || bytes > z.capacity * lba_bytes {
        return Err(invalid(format!(
            "zone at LBA {} has a corrupt record",
            z.zslba
        )));
    }
    z.state = state;
    z.attributes = rec[1];
    z.wp = wp;
    z.bytes = bytes;
    z.padding = rec[2] == 1;
    Ok(())
}

impl Drop for ImageFile {
    fn drop(&mut self) {
        if !self.read_only {
            // No longer the holder (a killed process leaves its pid, which `read_holder`
            // checks is still running).
            let _ = self.file.write_all_at(&[0u8; HOLDER_BYTES], HOLDER_OFFSET);
        }
    }
}
