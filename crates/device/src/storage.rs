//! Where the real bytes live: sparse in memory, or in an image file.
//!
//! Zones are written sequentially, so a zone's data is always a prefix of it: the memory store
//! keeps one growing buffer per zone (only written bytes cost memory), and the image file keeps
//! each zone at a fixed offset of a sparse file. The image also holds the device configuration
//! and the zone table, so `znslab nvme` commands can reopen it. Layout:
//!
//! | offset | bytes | what |
//! |---|---|---|
//! | 0 | 8 | magic `ZNSLABv1` |
//! | 8 | 4 | config length N, little endian |
//! | 12 | N | device configuration, TOML |
//! | 64 KiB | 32 × zones | zone records: state u8, attributes u8, padding u8, 5 reserved, wp u64, bytes u64, reserved u64 |
//! | data_offset | capacity × zones | zone data, zone `z` at `data_offset + z × capacity_bytes` |
//! | meta_offset | capacity_lbas × ms × zones | per-LBA metadata, same order |
//! | oob_offset | pages × oob × zones | the OOB of every flash page of every zone (CCZNS chunk metadata) |
//! | flash_offset | the flash's bytes | designs with their own flash layout (balloon, tcssd): the flash, by physical address |
//! | table_offset | 8 + N | those designs' FTL tables: length, then JSON (to the end of the file) |

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::layout::Layout;
use crate::zone::{Zone, ZoneState};

const MAGIC: &[u8; 8] = b"ZNSLABv2";
const TABLE_OFFSET: u64 = 64 << 10;
const RECORD_BYTES: u64 = 32;

pub(crate) enum Storage {
    /// Per zone bytes, and the zone capacity in bytes and metadata bytes (reserved on first
    /// write so a zone's buffer never moves while it fills).
    Memory(Vec<ZoneBytes>, u64, u64),
    Image(ImageFile),
}

#[derive(Default)]
pub(crate) struct ZoneBytes {
    data: Vec<u8>,
    metadata: Vec<u8>,
}

/// In-memory bytes of an `AppendBytes` past which an image-backed device moves them to the
/// image (a quarter of a smaller region): a large run otherwise holds every byte it wrote.
const SPILL_BYTES: u64 = 4 << 20;

/// An append-only run of flash bytes at a fixed flash address (a Balloon-ZNS segment, a tcssd
/// superblock). On an image, the front `spilled` bytes live only in the image and the rest in
/// `tail`; `persisted` bytes have reached the image (the tables that point at them are
/// written by the next save).
#[derive(Debug, Default)]
pub(crate) struct AppendBytes {
    tail: Vec<u8>,
    spilled: u64,
    persisted: u64,
}

impl AppendBytes {
    /// `len` bytes already in an image (a region read back from its tables).
    pub fn in_image(len: u64) -> AppendBytes {
        AppendBytes {
            tail: Vec::new(),
            spilled: len,
            persisted: len,
        }
    }

    pub fn len(&self) -> u64 {
        self.spilled + self.tail.len() as u64
    }

    /// Bytes held in memory.
    pub fn resident(&self) -> u64 {
        self.tail.len() as u64
    }

    pub fn extend(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
    }

    /// Grow with zeros to `len` bytes (a gap before the next slot or unit).
    pub fn zero_to(&mut self, len: u64) {
        self.tail.resize((len - self.spilled) as usize, 0);
    }

    /// Copy bytes [off, off + out.len()) into `out`: the part before `spilled` from the image
    /// at flash address `addr + off`, the rest from memory.
    pub fn read(
        &self,
        storage: &Storage,
        addr: u64,
        off: u64,
        out: &mut [u8],
    ) -> Result<(), crate::status::Status> {
        use crate::status::Status;
        let end = off + out.len() as u64;
        if end > self.len() {
            return Err(Status::INTERNAL_ERROR);
        }
        let split = (self.spilled.clamp(off, end) - off) as usize;
        if split > 0 {
            let Storage::Image(img) = storage else {
                return Err(Status::INTERNAL_ERROR);
            };
            img.read_flash(addr + off, &mut out[..split])
                .map_err(|_| Status::UNRECOVERED_READ_ERROR)?;
        }
        if split < out.len() {
            let from = (off + split as u64 - self.spilled) as usize;
            let rest = out.len() - split;
            out[split..].copy_from_slice(&self.tail[from..from + rest]);
        }
        Ok(())
    }

    /// On an image, move the bytes in memory there once they pass a quarter of the region's
    /// `cap` (at most SPILL_BYTES) or fill it. A failed write keeps them in memory.
    pub fn spill(&mut self, storage: &Storage, addr: u64, cap: u64) {
        let Storage::Image(img) = storage else {
            return;
        };
        let limit = SPILL_BYTES.min(cap / 4);
        let full = self.len() == cap && !self.tail.is_empty();
        if (self.tail.len() as u64) < limit.max(1) && !full {
            return;
        }
        if self.persist(img, addr).is_ok() {
            self.spilled = self.len();
            self.tail = Vec::new();
        }
    }

    /// Write to the image what it lacks.
    pub fn persist(&mut self, img: &ImageFile, addr: u64) -> io::Result<()> {
        if self.persisted < self.len() {
            let from = (self.persisted - self.spilled) as usize;
            img.write_flash(addr + self.persisted, &self.tail[from..])?;
            self.persisted = self.len();
        }
        Ok(())
    }
}

pub(crate) struct ImageFile {
    file: File,
    data_offset: u64,
    meta_offset: u64,
    zone_bytes: u64,
    zone_meta_bytes: u64,
    oob_offset: u64,
    /// OOB bytes of one flash page, and of all pages of a zone.
    oob_bytes: u64,
    zone_oob_bytes: u64,
    flash_offset: u64,
    table_offset: u64,
}

/// Where the sections of an image start, for a layout.
struct Offsets {
    data: u64,
    meta: u64,
    oob: u64,
    end: u64,
    zone_bytes: u64,
    zone_meta_bytes: u64,
    oob_bytes: u64,
    zone_oob_bytes: u64,
    flash: u64,
    table: u64,
}

/// Ask Linux for transparent huge pages on a large zone buffer: filling a zone then faults in
/// 2 MiB at a time instead of 4 KiB (page faults were most of the wall time of a write job).
fn advise_huge_pages(ptr: *const u8, len: usize) {
    const HUGE: usize = 2 << 20;
    let start = (ptr as usize).div_ceil(HUGE) * HUGE;
    let end = (ptr as usize + len) / HUGE * HUGE;
    if end > start {
        // SAFETY: the range lies inside the Vec's own allocation; MADV_HUGEPAGE only changes
        // how the kernel backs those pages, never their contents, and failure is harmless.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

impl ImageFile {
    fn offsets(layout: &Layout) -> Offsets {
        let zones = layout.zone_count as u64;
        let data = align_up(TABLE_OFFSET + RECORD_BYTES * zones, 1 << 20);
        let zone_bytes = layout.zone_capacity_bytes();
        let zone_meta_bytes = layout.zone_capacity_lbas * layout.metadata_bytes;
        let meta = align_up(data + zone_bytes * zones, 1 << 20);
        let oob = align_up(meta + zone_meta_bytes * zones, 1 << 20);
        let oob_bytes = layout.geometry.oob_bytes_per_page as u64;
        let zone_oob_bytes = zone_bytes.div_ceil(layout.geometry.page_bytes as u64) * oob_bytes;
        let flash = align_up(oob + zone_oob_bytes * zones, 1 << 20);
        let own_flash = layout.balloon.is_some() || layout.tcssd_superblocks.is_some();
        let table = flash
            + if own_flash {
                layout.geometry.total_bytes()
            } else {
                0
            };
        Offsets {
            data,
            meta,
            oob,
            end: table,
            flash,
            table,
            zone_bytes,
            zone_meta_bytes,
            oob_bytes,
            zone_oob_bytes,
        }
    }

    fn from_offsets(file: File, o: Offsets) -> ImageFile {
        ImageFile {
            file,
            data_offset: o.data,
            meta_offset: o.meta,
            zone_bytes: o.zone_bytes,
            zone_meta_bytes: o.zone_meta_bytes,
            oob_offset: o.oob,
            oob_bytes: o.oob_bytes,
            zone_oob_bytes: o.zone_oob_bytes,
            flash_offset: o.flash,
            table_offset: o.table,
        }
    }

    /// Write bytes of the flash (balloon, tcssd) at physical byte address `addr`.
    pub fn write_flash(&self, addr: u64, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all_at(bytes, self.flash_offset + addr)
    }

    pub fn read_flash(&self, addr: u64, out: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(out, self.flash_offset + addr)
    }

    /// An erased range of the flash: give its file space back.
    pub fn erase_flash(&self, addr: u64, len: u64) -> io::Result<()> {
        self.punch(self.flash_offset + addr, len)
    }

    /// Replace the FTL table (balloon, tcssd) and sync.
    pub fn save_table(&self, table: &[u8]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(8 + table.len());
        buf.extend_from_slice(&(table.len() as u64).to_le_bytes());
        buf.extend_from_slice(table);
        self.file.write_all_at(&buf, self.table_offset)?;
        self.file.set_len(self.table_offset + buf.len() as u64)?;
        self.file.sync_data()
    }

    /// The FTL table last saved, if any.
    pub fn load_table(&self) -> io::Result<Option<Vec<u8>>> {
        let mut len = [0u8; 8];
        if self.file.metadata()?.len() < self.table_offset + 8 {
            return Ok(None);
        }
        self.file.read_exact_at(&mut len, self.table_offset)?;
        let len = u64::from_le_bytes(len);
        if len == 0 {
            return Ok(None);
        }
        if len > 1 << 40 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "corrupt FTL table length in image",
            ));
        }
        let mut buf = vec![0u8; len as usize];
        self.file.read_exact_at(&mut buf, self.table_offset + 8)?;
        Ok(Some(buf))
    }

    /// Create (or truncate) an image for `layout`, storing `config_toml` in its header.
    pub fn create(path: &Path, layout: &Layout, config_toml: &str) -> io::Result<ImageFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        if config_toml.len() as u64 > TABLE_OFFSET - 12 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "device configuration too large for the image header",
            ));
        }
        let mut header = Vec::with_capacity(12 + config_toml.len());
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&(config_toml.len() as u32).to_le_bytes());
        header.extend_from_slice(config_toml.as_bytes());
        file.write_all_at(&header, 0)?;
        let o = Self::offsets(layout);
        file.set_len(o.end)?;
        Ok(Self::from_offsets(file, o))
    }

    /// Read the configuration text stored in an image's header.
    pub fn read_config(path: &Path) -> io::Result<(File, String)> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let mut head = [0u8; 12];
        file.read_exact_at(&mut head, 0)?;
        if &head[..8] != MAGIC {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not a znslab device image (bad magic)",
            ));
        }
        let len = u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as u64;
        if len > TABLE_OFFSET - 12 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "corrupt image header (config length)",
            ));
        }
        let mut text = vec![0u8; len as usize];
        file.read_exact_at(&mut text, 12)?;
        let text = String::from_utf8(text).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "corrupt image header (config is not UTF-8)",
            )
        })?;
        Ok((file, text))
    }

    pub fn open(file: File, layout: &Layout) -> ImageFile {
        Self::from_offsets(file, Self::offsets(layout))
    }

    /// Deallocate a byte range of the file; it reads back as zeros.
    fn punch(&self, offset: u64, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
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

    /// Read the OOB of flash page `page` of zone `zone`.
    pub fn read_oob(&self, zone: u32, page: u64, out: &mut [u8]) -> io::Result<()> {
        debug_assert_eq!(out.len() as u64, self.oob_bytes);
        self.file.read_exact_at(
            out,
            self.oob_offset + zone as u64 * self.zone_oob_bytes + page * self.oob_bytes,
        )
    }

    /// Load zone records saved by [`save_zones`](Self::save_zones) into `zones`.
    pub fn load_zones(&self, zones: &mut [Zone], lba_bytes: u64) -> io::Result<()> {
        let mut buf = vec![0u8; RECORD_BYTES as usize * zones.len()];
        self.file.read_exact_at(&mut buf, TABLE_OFFSET)?;
        for (z, rec) in zones
            .iter_mut()
            .zip(buf.chunks_exact(RECORD_BYTES as usize))
        {
            if rec[0] == 0 {
                continue; // never saved: stays empty
            }
            let state = ZoneState::from_code(rec[0]).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("bad zone state {:#x} in image", rec[0]),
                )
            })?;
            let wp = u64::from_le_bytes(rec[8..16].try_into().expect("8 bytes"));
            let bytes = u64::from_le_bytes(rec[16..24].try_into().expect("8 bytes"));
            if wp < z.zslba || wp > z.end_of_capacity() || bytes > z.capacity * lba_bytes {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("zone at LBA {} has a corrupt record", z.zslba),
                ));
            }
            z.state = state;
            z.attributes = rec[1];
            z.wp = wp;
            z.bytes = bytes;
            z.padding = rec[2] == 1;
        }
        Ok(())
    }

    pub fn save_zones(&self, zones: &[Zone]) -> io::Result<()> {
        let mut buf = vec![0u8; RECORD_BYTES as usize * zones.len()];
        for (z, rec) in zones
            .iter()
            .zip(buf.chunks_exact_mut(RECORD_BYTES as usize))
        {
            rec[0] = z.state.code();
            rec[1] = z.attributes;
            rec[8..16].copy_from_slice(&z.wp.to_le_bytes());
            rec[2] = z.padding as u8;
            rec[16..24].copy_from_slice(&z.bytes.to_le_bytes());
        }
        self.file.write_all_at(&buf, TABLE_OFFSET)?;
        self.file.sync_data()
    }

    /// The bytes every image of `layout` has at least: everything before its FTL table.
    pub(crate) fn min_len(layout: &Layout) -> u64 {
        Self::offsets(layout).end
    }

    /// The bytes every image starts with (header and configuration, up to the zone table).
    pub(crate) const HEADER_LEN: u64 = TABLE_OFFSET;
}

impl Storage {
    pub fn memory(layout: &Layout) -> Storage {
        let zones = (0..layout.zone_count)
            .map(|_| ZoneBytes::default())
            .collect();
        Storage::Memory(
            zones,
            layout.zone_capacity_bytes(),
            layout.zone_capacity_lbas * layout.metadata_bytes,
        )
    }

    /// Store `data` at byte `offset` of zone `zone` (always at the zone's written end).
    pub fn write(
        &mut self,
        zone: u32,
        offset: u64,
        data: &[u8],
        meta_offset: u64,
        metadata: &[u8],
    ) -> io::Result<()> {
        match self {
            Storage::Memory(zones, cap, meta_cap) => {
                let z = &mut zones[zone as usize];
                assert_eq!(
                    z.data.len() as u64,
                    offset,
                    "zone data is written sequentially"
                );
                if z.data.capacity() == 0 {
                    // Untouched pages cost nothing until written; no reallocation copies later.
                    z.data.reserve_exact(*cap as usize);
                    advise_huge_pages(z.data.as_ptr(), z.data.capacity());
                    if !metadata.is_empty() {
                        z.metadata.reserve_exact(*meta_cap as usize);
                    }
                }
                z.data.extend_from_slice(data);
                if !metadata.is_empty() {
                    z.metadata.resize(meta_offset as usize, 0);
                    z.metadata.extend_from_slice(metadata);
                }
                Ok(())
            }
            Storage::Image(img) => {
                img.file.write_all_at(
                    data,
                    img.data_offset + zone as u64 * img.zone_bytes + offset,
                )?;
                if !metadata.is_empty() {
                    img.file.write_all_at(
                        metadata,
                        img.meta_offset + zone as u64 * img.zone_meta_bytes + meta_offset,
                    )?;
                }
                Ok(())
            }
        }
    }

    /// Fill `buf` from byte `offset` of zone `zone`; the caller zero-fills beyond written data.
    pub fn read(
        &self,
        zone: u32,
        offset: u64,
        buf: &mut [u8],
        meta_offset: u64,
        metadata: &mut [u8],
    ) -> io::Result<()> {
        match self {
            Storage::Memory(zones, ..) => {
                let z = &zones[zone as usize];
                let o = offset as usize;
                buf.copy_from_slice(&z.data[o..o + buf.len()]);
                if !metadata.is_empty() {
                    let mo = meta_offset as usize;
                    // Blocks written without metadata read it back as zeros.
                    let have = z.metadata.len().saturating_sub(mo).min(metadata.len());
                    if have > 0 {
                        metadata[..have].copy_from_slice(&z.metadata[mo..mo + have]);
                    }
                    metadata[have..].fill(0);
                }
                Ok(())
            }
            Storage::Image(img) => {
                img.file
                    .read_exact_at(buf, img.data_offset + zone as u64 * img.zone_bytes + offset)?;
                if !metadata.is_empty() {
                    img.file.read_exact_at(
                        metadata,
                        img.meta_offset + zone as u64 * img.zone_meta_bytes + meta_offset,
                    )?;
                }
                Ok(())
            }
        }
    }

    /// Persist the OOB of flash page `page` of zone `zone` (image only: in memory the
    /// controller's own records are the only copy, as nothing reopens a memory device).
    pub fn write_oob(&mut self, zone: u32, page: u64, oob: &[u8]) -> io::Result<()> {
        match self {
            Storage::Memory(..) => Ok(()),
            Storage::Image(img) => img.file.write_all_at(
                oob,
                img.oob_offset + zone as u64 * img.zone_oob_bytes + page * img.oob_bytes,
            ),
        }
    }

    /// Forget a zone's data (reset). An image punches holes over the zone's data, metadata and
    /// OOB, so the file gives the space back and a reopen finds no stale chunk records.
    pub fn reset(&mut self, zone: u32) -> io::Result<()> {
        match self {
            Storage::Memory(zones, ..) => {
                zones[zone as usize] = ZoneBytes::default();
                Ok(())
            }
            Storage::Image(img) => {
                let z = zone as u64;
                img.punch(img.data_offset + z * img.zone_bytes, img.zone_bytes)?;
                img.punch(
                    img.meta_offset + z * img.zone_meta_bytes,
                    img.zone_meta_bytes,
                )?;
                img.punch(img.oob_offset + z * img.zone_oob_bytes, img.zone_oob_bytes)
            }
        }
    }

    pub fn is_image(&self) -> bool {
        matches!(self, Storage::Image(_))
    }

    /// Bytes of host memory the store holds.
    pub fn resident_bytes(&self) -> u64 {
        match self {
            Storage::Memory(zones, ..) => zones
                .iter()
                .map(|z| (z.data.len() + z.metadata.len()) as u64)
                .sum(),
            Storage::Image(_) => 0,
        }
    }
}
