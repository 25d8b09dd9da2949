//! The image file: a device's configuration, zone table, bytes and design tables in one sparse
//! file, written in an order that survives the process being killed at any instant, and held
//! by one process at a time. The layout and the order are described in `storage.rs`.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::layout::Layout;

mod ecc;
mod journal;
use crate::zone::{Zone, ZoneState};
pub(crate) use ecc::is_ecc_error;
use ecc::{ECC_ENTRY, ECC_UNIT};
pub(crate) use journal::Logged;
use journal::{Log, HEADER_AREA};

const MAGIC: &[u8; 8] = b"ZNSLABv3";
/// Magics of older formats, refused with a message instead of "bad magic".
const OLD_MAGICS: [&[u8; 8]; 2] = [b"ZNSLABv1", b"ZNSLABv2"];
const HOLDER_OFFSET: u64 = 60 << 10;
const HOLDER_BYTES: usize = 64;
const ZONE_TABLE_OFFSET: u64 = 64 << 10;
pub(crate) const RECORD_BYTES: u64 = 32;
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
    let own_flash = layout.own_flash();
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

    /// Write `bytes` at byte `offset` of zone `zone`'s out-of-band area (past its end:
    /// refused).
    pub fn write_oob_bytes(&self, zone: u32, offset: u64, bytes: &[u8]) -> io::Result<()> {
        if offset + bytes.len() as u64 > self.zone_oob_bytes {
            return Err(io::Error::other(
                "record larger than the zone's out-of-band area",
            ));
        }
        self.file.write_all_at(
            bytes,
            self.oob_offset + zone as u64 * self.zone_oob_bytes + offset,
        )
    }

    /// Read bytes of zone `zone`'s out-of-band area.
    pub fn read_oob_bytes(&self, zone: u32, offset: u64, out: &mut [u8]) -> io::Result<()> {
        if offset + out.len() as u64 > self.zone_oob_bytes {
            return Err(io::Error::other(
                "record larger than the zone's out-of-band area",
            ));
        }
        self.file.read_exact_at(
            out,
            self.oob_offset + zone as u64 * self.zone_oob_bytes + offset,
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
