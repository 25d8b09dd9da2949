//! Where the real bytes live: sparse in memory, or in an image file.
//!
//! Zones are written sequentially, so a zone's data is always a prefix of it: the memory store
//! keeps one growing buffer per zone (only written bytes cost memory), and the image file keeps
//! each zone at a fixed offset of a sparse file. The image also holds the device configuration
//! and the zone table, so `znslab nvme` commands can reopen it. Layout:
//!
//! | offset | bytes | what |
//! |---|---|---|
//! | 0 | 8 | magic `ZNSLABv3` |
//! | 8 | 4 | config length N, little endian |
//! | 12 | N | device configuration, TOML |
//! | 60 KiB | 64 | the process holding the image for writing: pid u32, then its name (see [`lock`]) |
//! | 64 KiB | 32 × zones | zone records: state u8, attributes u8, padding u8, 5 reserved, wp u64, bytes u64, reserved u64 |
//! | data_offset | capacity × zones | zone data, zone `z` at `data_offset + z × capacity_bytes` |
//! | meta_offset | capacity_lbas × ms × zones | per-LBA metadata, same order |
//! | oob_offset | pages × oob × zones | the OOB of every flash page of every zone (CCZNS chunk metadata) |
//! | flash_offset | the flash's bytes | designs with their own flash layout (balloon, tcssd): the flash, by physical address |
//! | ecc_offset | 8 per 4 KiB × zones | checksums of each zone's bytes: CRC32C u32, bytes covered u32, per 4 KiB unit |
//! | ecc_flash_offset | 8 per 4 KiB of flash | the same for a design's own flash |
//! | table_offset | 4 KiB | those designs' checkpoint headers: two slots of 64 bytes (see below) |
//! | table_offset + 4 KiB | 256 MiB | their journal: records of what each command changed |
//! | after the journal | to the end | their checkpoints: the whole table (JSON), two places in turn |
//!
//! # Crash consistency
//!
//! A process may be killed at any instant (a kill, a crash, the machine's OOM killer); the
//! image it leaves must be a state the device could be in after a power cut at that point of
//! its virtual time. The device's write buffer is capacitor-protected, so that state holds
//! every command that completed, and any prefix of the one in flight. The image is written in
//! an order that guarantees this without the process's help (every write below is a `pwrite`
//! that reaches the page cache before the next begins, so a killed process leaves a prefix of
//! them; a record of at most 64 bytes inside one 4 KiB page is never torn by a kill):
//!
//! - **Stored bytes before their checksums**, one CRC32C per 4 KiB unit with the length it
//!   covers; an entry covering bytes a killed process left past the last record is cut back
//!   to what the record covers before those bytes are written over.
//! - **Zone data before the zone record that covers it.** A write stores its bytes (and, on
//!   CCZNS, the OOB of the pages it touched) and then rewrites that zone's 32-byte record
//!   before the command completes. Killed between the two, the zone reports its old write
//!   pointer: the write did not happen. (CCZNS rebuilds byte write pointers from the OOB at
//!   power-on, so there the OOB is the record.)
//! - **The record that forgets a zone before the punch that frees it.** Reset writes the
//!   zone's Empty record first and then punches its data, metadata and OOB; killed between,
//!   the zone is Empty and its stale bytes are punched again at the next read-write open.
//! - **Designs with their own maps (balloon, tcssd)**: after each command, the new flash
//!   bytes are written, then one journal record (CRC32C, sequence number) holding everything
//!   the command changed: the zone records it touched and the entries of the design's tables.
//!   An erase inside a command (garbage collection, reclamation, reset) first journals what
//!   the command changed so far, then punches, so the region can be written again. When the
//!   journal grows past twice the last checkpoint (16 MiB at least) or fills, and at close,
//!   the whole table is written as a checkpoint to the place the last one does not use, and then the inactive header slot is switched to point
//!   at it (a header carries its own CRC: a torn header loses to the other slot). Opening
//!   loads the newest valid checkpoint and replays the records that follow it, in sequence
//!   order, to the first one missing or corrupt.
//!
//! Loss of the host machine's power (the page cache lost) is a separate guarantee: with
//! `sync` on (the CLI's `--image-sync`), every command that changed the image is followed by an
//! `fdatasync` before it completes (and every checkpoint by one), so the file on disk holds
//! every completed command even then, as a drive with power-loss protection does. Off by
//! default: one fdatasync per write command costs far more than the write itself.

use std::io;

mod sparse;

pub(crate) use crate::image::ImageFile;
use crate::layout::Layout;
use sparse::SparseBytes;

pub(crate) enum Storage {
    /// Per zone bytes, and the zone capacity in bytes and metadata bytes (reserved on first
    /// write so a zone's buffer never moves while it fills), and the bytes held against the
    /// host memory they may take.
    Memory(Vec<ZoneBytes>, u64, u64, MemoryBudget),
    Image(ImageFile),
}

/// Zone bytes an in-memory device holds, and the most it may: a write past that fails (with
/// the reason kept for the user) instead of the process running out of memory.
pub(crate) struct MemoryBudget {
    pub held: u64,
    /// The most `held` has been.
    pub peak: u64,
    pub limit: u64,
    /// Zones written from now on keep their bytes page-encoded ([`SparseBytes`]): a modeled
    /// payload's runs (values, padding) then cost next to no memory.
    pub sparse: bool,
}

#[derive(Default)]
pub(crate) struct ZoneBytes {
    data: Vec<u8>,
    /// The zone's bytes when kept sparse (then `data` is empty).
    sparse: Option<SparseBytes>,
    metadata: Vec<u8>,
}

impl ZoneBytes {
    fn len(&self) -> u64 {
        self.sparse
            .as_ref()
            .map_or(self.data.len() as u64, SparseBytes::len)
    }

    /// Host memory held.
    fn held(&self) -> u64 {
        self.sparse
            .as_ref()
            .map_or(self.data.len() as u64, SparseBytes::held)
            + self.metadata.len() as u64
    }
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
    /// In memory with a modeled payload: the bytes from `spilled` on whose pages went
    /// page-encoded ([`SparseBytes`]); `tail` follows them.
    packed: SparseBytes,
}

impl AppendBytes {
    /// `len` bytes already in an image (a region read back from its tables).
    pub fn in_image(len: u64) -> AppendBytes {
        AppendBytes {
            tail: Vec::new(),
            spilled: len,
            persisted: len,
            packed: SparseBytes::default(),
        }
    }

    pub fn len(&self) -> u64 {
        self.tail_start() + self.tail.len() as u64
    }

    /// Where `tail` starts.
    fn tail_start(&self) -> u64 {
        self.spilled + self.packed.len()
    }

    /// Bytes held in memory.
    pub fn resident(&self) -> u64 {
        self.tail.len() as u64 + self.packed.held()
    }

    pub fn extend(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
    }

    /// Grow with zeros to `len` bytes (a gap before the next slot or unit).
    pub fn zero_to(&mut self, len: u64) {
        self.tail.resize((len - self.tail_start()) as usize, 0);
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
        // Then the packed pages, then the tail.
        let (packed_end, mut at) = (self.tail_start(), split);
        if at < out.len() && off + (at as u64) < packed_end {
            let from = off + at as u64 - self.spilled;
            let n = ((packed_end - (off + at as u64)) as usize).min(out.len() - at);
            self.packed.read(from, &mut out[at..at + n]);
            at += n;
        }
        if at < out.len() {
            let from = (off + at as u64 - packed_end) as usize;
            let rest = out.len() - at;
            out[at..].copy_from_slice(&self.tail[from..from + rest]);
        }
        Ok(())
    }

    /// On an image, move the bytes in memory there once they pass a quarter of the region's
    /// `cap` (at most SPILL_BYTES) or fill it. A failed write keeps them in memory.
    pub fn spill(&mut self, storage: &Storage, addr: u64, cap: u64) {
        let img = match storage {
            Storage::Image(img) => img,
            Storage::Memory(_, _, _, budget) => {
                // A modeled payload in memory: whole pages of the tail go page-encoded.
                let whole = self.tail.len() / sparse::PAGE * sparse::PAGE;
                if budget.sparse && whole >= 16 * sparse::PAGE {
                    self.packed.extend(&self.tail[..whole]);
                    self.tail.drain(..whole);
                }
                return;
            }
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

impl Storage {
    pub fn memory(layout: &Layout) -> Storage {
        let zones = (0..layout.zone_count)
            .map(|_| ZoneBytes::default())
            .collect();
        Storage::Memory(
            zones,
            layout.zone_capacity_bytes(),
            layout.zone_capacity_lbas * layout.metadata_bytes,
            MemoryBudget {
                held: 0,
                peak: 0,
                limit: crate::layout::default_memory_budget(),
                sparse: false,
            },
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
            Storage::Memory(zones, cap, meta_cap, budget) => {
                // The metadata buffer grows with zeros up to `meta_offset` first.
                let meta_more = if metadata.is_empty() {
                    0
                } else {
                    (meta_offset + metadata.len() as u64)
                        .saturating_sub(zones[zone as usize].metadata.len() as u64)
                };
                let more = data.len() as u64 + meta_more;
                if budget.held + more > budget.limit {
                    return Err(io::Error::other(format!(
                        "the device in memory would hold more than its memory budget of {} \
                         (half this machine's memory unless set): keep it in an image file \
                         instead (fio: --filename=IMAGE; ycsb: --image IMAGE)",
                        crate::layout::human_bytes(budget.limit)
                    )));
                }
                let z = &mut zones[zone as usize];
                assert_eq!(z.len(), offset, "zone data is written sequentially");
                if budget.sparse && z.data.is_empty() {
                    let before = z.held();
                    z.sparse.get_or_insert_default().extend(data);
                    if !metadata.is_empty() {
                        z.metadata.resize(meta_offset as usize, 0);
                        z.metadata.extend_from_slice(metadata);
                    }
                    budget.held += z.held() - before;
                    budget.peak = budget.peak.max(budget.held);
                    return Ok(());
                }
                budget.held += more;
                budget.peak = budget.peak.max(budget.held);
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
            Storage::Image(img) => img.write_zone(zone, offset, data, meta_offset, metadata),
        }
    }

    /// Store `data` at byte `offset` of zone `zone`, over bytes already there or past its
    /// written end (a gap reads as zeros): a ZNS+ TL-open zone's sparse sequential overwrite.
    /// Whole 4 KiB checksum units only on an image (a kill between the bytes and their
    /// checksums leaves a unit that fails its check: the caller makes sure nothing reads it
    /// until it is written again).
    pub fn overwrite(
        &mut self,
        zone: u32,
        offset: u64,
        data: &[u8],
        meta_offset: u64,
        metadata: &[u8],
    ) -> io::Result<()> {
        match self {
            Storage::Memory(zones, _, _, budget) => {
                let z = &mut zones[zone as usize];
                if let Some(sp) = z.sparse.take() {
                    // Overwritten in place (a ZNS+ TL-open zone): back to plain bytes.
                    let before = sp.held();
                    z.data = sp.to_vec();
                    budget.held = budget.held - before + z.data.len() as u64;
                    budget.peak = budget.peak.max(budget.held);
                }
                let len = z.data.len() as u64;
                let end = offset + data.len() as u64;
                if end > len {
                    // Past the written end: grow with zeros first (counted against the budget).
                    let gap = vec![0u8; (end - len) as usize];
                    self.write(zone, len, &gap, 0, &[])?;
                }
                let Storage::Memory(zones, ..) = self else {
                    unreachable!("matched above")
                };
                let z = &mut zones[zone as usize];
                z.data[offset as usize..end as usize].copy_from_slice(data);
                if !metadata.is_empty() {
                    let mend = meta_offset as usize + metadata.len();
                    if z.metadata.len() < mend {
                        z.metadata.resize(mend, 0);
                    }
                    z.metadata[meta_offset as usize..mend].copy_from_slice(metadata);
                }
                Ok(())
            }
            Storage::Image(img) => img.write_zone(zone, offset, data, meta_offset, metadata),
        }
    }

    /// Write `bytes` at byte `offset` of zone `zone`'s out-of-band area (image only): design
    /// records that live and die with the zone (a Reset punches them).
    pub fn write_zone_oob(&mut self, zone: u32, offset: u64, bytes: &[u8]) -> io::Result<()> {
        match self {
            Storage::Memory(..) => Ok(()),
            Storage::Image(img) => img.write_oob_bytes(zone, offset, bytes),
        }
    }

    /// Read the same (None in memory, where nothing reopens).
    pub fn read_zone_oob(&self, zone: u32, offset: u64, out: &mut [u8]) -> io::Result<bool> {
        match self {
            Storage::Memory(..) => Ok(false),
            Storage::Image(img) => img.read_oob_bytes(zone, offset, out).map(|()| true),
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
                match &z.sparse {
                    Some(sp) => sp.read(offset, buf),
                    None => buf.copy_from_slice(&z.data[o..o + buf.len()]),
                }
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
            Storage::Image(img) => img.read_zone(zone, offset, buf, meta_offset, metadata),
        }
    }

    /// Persist the OOB of flash page `page` of zone `zone` (image only: in memory the
    /// controller's own records are the only copy, as nothing reopens a memory device).
    pub fn write_oob(&mut self, zone: u32, page: u64, oob: &[u8]) -> io::Result<()> {
        match self {
            Storage::Memory(..) => Ok(()),
            Storage::Image(img) => img.write_oob(zone, page, oob),
        }
    }

    /// Forget a zone's data (reset). An image punches holes over the zone's data, metadata and
    /// OOB, so the file gives the space back and a reopen finds no stale chunk records.
    pub fn reset(&mut self, zone: u32) -> io::Result<()> {
        match self {
            Storage::Memory(zones, _, _, budget) => {
                let z = std::mem::take(&mut zones[zone as usize]);
                budget.held = budget.held.saturating_sub(z.held());
                Ok(())
            }
            Storage::Image(img) => img.punch_zone(zone),
        }
    }

    /// Keep zones written from now on page-encoded (in memory; no effect on an image).
    pub fn set_sparse(&mut self, sparse: bool) {
        if let Storage::Memory(_, _, _, budget) = self {
            budget.sparse = sparse;
        }
    }

    /// The most zone bytes an in-memory device may hold (no effect on an image).
    pub fn set_memory_budget(&mut self, bytes: u64) {
        if let Storage::Memory(_, _, _, budget) = self {
            budget.limit = bytes;
        }
    }

    pub fn is_image(&self) -> bool {
        matches!(self, Storage::Image(_))
    }

    pub fn is_read_only(&self) -> bool {
        matches!(self, Storage::Image(img) if img.is_read_only())
    }

    /// Bytes of host memory the store holds.
    pub fn resident_bytes(&self) -> u64 {
        match self {
            Storage::Memory(_, _, _, budget) => budget.held,
            Storage::Image(_) => 0,
        }
    }

    /// The most host memory the store has held.
    pub fn peak_resident_bytes(&self) -> u64 {
        match self {
            Storage::Memory(_, _, _, budget) => budget.peak,
            Storage::Image(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A modeled payload's region in memory: whole pages go page-encoded as it grows, reads
    /// across the packed pages and the tail give back what was appended.
    #[test]
    fn a_packed_region_reads_back_what_was_appended() {
        let layout = crate::presets::test_min().layout().expect("layout");
        let mut storage = Storage::memory(&layout);
        storage.set_sparse(true);
        let mut region = AppendBytes::default();
        let mut want = Vec::new();
        for i in 0..40u32 {
            let mut piece = format!("key{i}").into_bytes();
            piece.resize(
                3000 + (i as usize * 37) % 2000,
                if i % 2 == 0 { 0x56 } else { 0 },
            );
            region.extend(&piece);
            want.extend(&piece);
            region.zero_to(want.len() as u64 + 100);
            want.resize(want.len() + 100, 0);
            region.spill(&storage, 0, 1 << 30);
        }
        assert!(region.packed.len() > 0, "pages were packed");
        assert!(region.resident() < want.len() as u64 / 4);
        assert_eq!(region.len(), want.len() as u64);
        for (off, len) in [
            (0, want.len()),
            (4000, 9000),
            (want.len() - 5000, 5000),
            (7, 1),
        ] {
            let mut out = vec![0xEE; len];
            region
                .read(&storage, 0, off as u64, &mut out)
                .expect("read");
            assert_eq!(out, &want[off..off + len], "{off}+{len}");
        }
    }
}
