//! CCZNS compressed write (CW), single- and multi-chunk, by Write or by Zone Append.
//!
//! Validate (`validate_compressed_write`, then `check_footprint` once the chunks are
//! compressed), in this order: design (CCZNS only, checked by the controller), block count and buffers (a metadata buffer is
//! required), transfer size, the chunk list in the metadata (1 ≤ N, room for the feedback, no
//! empty chunk, chunks within the data), namespace range, for append a zone start with intra
//! offset 0, intra offset below the block size, zone state, capacity gap, byte write pointer
//! (write only), then compress, then capacity for the compressed footprint (Zone Boundary
//! Error), then open/active resources. Apply: store the compressed bytes at the byte write
//! pointer, record each chunk in the OOB of the page where it starts, advance the byte write
//! pointer by the footprint, fill the feedback. Cost: buffer space for the footprint, the
//! uncompressed data and metadata over the link, each chunk through the engine, the feedback
//! back to the host; programs follow in the background.
//!
//! Footprint of a chunk: its compressed size, or its raw size if compression did not shrink it;
//! at least the minimum that keeps a page's chunk records within its OOB; in a padding zone the
//! last chunk of the command is padded so the write ends on a block boundary. The feedback size
//! reported for each chunk is its footprint (CCZNS §III-D decouples it from the stored size).

use codec::Direction;
use sim::SimInstant;

use crate::cmd::wire::{set_slot, slot, slots};
use crate::controller::Controller;
use crate::design::cczns::chunks::{self, ChunkRecord};
use crate::design::cczns::{self, ChunkTable};
use crate::status::Status;
use crate::zone::ZoneState;

/// What validation found about a compressed write (before anything is compressed).
struct CwPlan {
    zone: usize,
    /// The zone's byte write pointer, where the write starts.
    start: u64,
    /// Chunks, their bytes before compression, and the data's bytes.
    chunks: usize,
    total_pre: u64,
    bytes: u64,
}

impl Controller {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn compressed_write(
        &mut self,
        ready: SimInstant,
        slba: u64,
        intra: u32,
        nlb: u32,
        data: &[u8],
        metadata: &mut [u8],
        append: bool,
    ) -> Result<(u64, SimInstant), Status> {
        let plan = self.validate_compressed_write(slba, intra, nlb, data, metadata, append)?;
        // Compress into the staging buffer (work the host cannot see), then the checks that
        // need the footprint: capacity, then open and active resources.
        let mut staged = std::mem::take(&mut self.staging);
        let records = self.compress_chunks(&plan, data, metadata, &mut staged);
        let checked = self.check_footprint(&plan, &records);
        let result = match checked {
            Ok(victim) => self
                .apply_compressed_write(ready, &plan, victim, &staged, records, metadata, append),
            Err(s) => Err(s),
        };
        self.staging = staged;
        result
    }

    /// Validate a CW up to its byte write pointer; changes nothing.
    fn validate_compressed_write(
        &self,
        slba: u64,
        intra: u32,
        nlb: u32,
        data: &[u8],
        metadata: &[u8],
        append: bool,
    ) -> Result<CwPlan, Status> {
        let lba = self.layout.lba_bytes;
        let limit = if append {
            self.layout.zone_append_max_bytes
        } else {
            self.layout.max_transfer_bytes
        };
        let bytes = self.check_transfer(nlb, data.len(), metadata.len(), limit)?;
        if metadata.is_empty() {
            return Err(Status::INVALID_FIELD);
        }
        let n = slot(metadata, 0) as usize;
        if n == 0 || n + 3 > slots(metadata) {
            return Err(Status::INVALID_FIELD);
        }
        let mut total_pre = 0u64;
        for i in 1..=n {
            let pre = slot(metadata, i) as u64;
            if pre == 0 {
                return Err(Status::INVALID_FIELD);
            }
            total_pre += pre;
        }
        if total_pre > bytes {
            return Err(Status::INVALID_FIELD);
        }
        if slba >= self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        let zi = self.zone_index(slba);
        let zone = self.zones[zi];
        if (append && (slba != zone.zslba || intra != 0)) || intra as u64 >= lba {
            return Err(Status::INVALID_FIELD);
        }
        self.check_writable(&zone, slba)?;
        let start = zone.bytes;
        if !append && (slba - zone.zslba) * lba + intra as u64 != start {
            return Err(Status::ZONE_INVALID_WRITE);
        }
        Ok(CwPlan {
            zone: zi,
            start,
            chunks: n,
            total_pre,
            bytes,
        })
    }

    /// Compress every chunk into `staged` (raw where compression did not shrink it, padded to
    /// its footprint); returns the chunks' records.
    fn compress_chunks(
        &mut self,
        plan: &CwPlan,
        data: &[u8],
        metadata: &[u8],
        staged: &mut Vec<u8>,
    ) -> Vec<ChunkRecord> {
        let lba = self.layout.lba_bytes;
        let padding = self.zones[plan.zone].padding;
        let min_fp = chunks::min_footprint(
            self.layout.geometry.page_bytes as u64,
            self.layout.geometry.oob_bytes_per_page,
        );
        staged.clear();
        let n = plan.chunks;
        let mut records = Vec::with_capacity(n);
        let mut at = 0usize;
        let mut offset = plan.start;
        for i in 1..=n {
            let pre = slot(metadata, i) as usize;
            let chunk = &data[at..at + pre];
            at += pre;
            let s = staged.len();
            let post = self.engine.coder.compress(self.engine.codec, chunk, staged);
            let raw = post >= pre;
            if raw {
                staged.truncate(s);
                staged.extend_from_slice(chunk);
            }
            let post = staged.len() - s;
            let mut feedback = (post as u64).max(min_fp);
            if i == n && padding {
                feedback = (offset + feedback).div_ceil(lba) * lba - offset;
            }
            staged.resize(s + feedback as usize, 0);
            records.push(ChunkRecord {
                offset,
                post: post as u32,
                feedback: feedback as u32,
                pre: pre as u32,
                raw,
            });
            offset += feedback;
        }
        records
    }

    /// Validate what needs the footprint: the zone's capacity, then open and active resources
    /// (`Some(v)`: opening closes zone `v`); changes nothing.
    fn check_footprint(
        &self,
        plan: &CwPlan,
        records: &[ChunkRecord],
    ) -> Result<Option<usize>, Status> {
        let z = &self.zones[plan.zone];
        let end = records
            .last()
            .map_or(plan.start, |r| r.offset + r.feedback as u64);
        if end > z.capacity * self.layout.lba_bytes {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        self.check_open(plan.zone)
    }

    /// Apply a validated CW (store, move the byte write pointer, record the chunks, fill the
    /// feedback) and cost it. Returns the result dword and when the host sees the completion.
    #[allow(clippy::too_many_arguments)]
    fn apply_compressed_write(
        &mut self,
        ready: SimInstant,
        plan: &CwPlan,
        victim: Option<usize>,
        staged: &[u8],
        records: Vec<ChunkRecord>,
        metadata: &mut [u8],
        append: bool,
    ) -> Result<(u64, SimInstant), Status> {
        let lba = self.layout.lba_bytes;
        let (zi, start, n, bytes) = (plan.zone, plan.start, plan.chunks, plan.bytes);
        let zone = self.zones[zi];
        let offset = records
            .last()
            .map_or(start, |r| r.offset + r.feedback as u64);
        let footprint = offset - start;
        self.take_open(zi, victim);

        // Apply.
        self.storage
            .write(zi as u32, start, staged, 0, &[])
            .map_err(|e| self.image_failed("write", &e))?;
        if !zone.state.is_open() {
            self.set_state(zi, ZoneState::ImplicitlyOpened);
        }
        let z = &mut self.zones[zi];
        z.bytes = offset;
        z.wp = z.zslba + offset / lba;
        let full = offset == z.capacity * lba;
        if full {
            z.wp = z.end_of_capacity();
            self.set_state(zi, ZoneState::Full);
        }
        self.mark_zone_dirty(zi);
        let stored_bytes: u64 = records.iter().map(|r| r.post as u64).sum();
        let pre_sizes: Vec<u64> = records.iter().map(|r| r.pre as u64).collect();
        metadata.fill(0);
        set_slot(metadata, 0, n as u32);
        for (i, r) in records.iter().enumerate() {
            set_slot(metadata, 1 + i, r.feedback);
        }
        set_slot(metadata, n + 1, (footprint / lba) as u32);
        set_slot(metadata, n + 2, (footprint % lba) as u32);
        self.table().chunks[zi].extend_from_slice(&records);
        self.persist_oob(zi, start, offset)?;

        // Cost.
        let t = ready.as_ns();
        let admitted = self.buffer_admit(t, footprint);
        let in_device = self.transfer_to_device(admitted, bytes + metadata.len() as u64);
        let mut compressed = in_device;
        for pre in pre_sizes {
            compressed = compressed.max(self.engine.run(Direction::Compress, in_device, pre));
        }
        self.flush_zone_units(zi, offset, compressed);
        let done = self.transfer_to_host(compressed, metadata.len() as u64);

        let c = &mut self.counters;
        c.compressed_writes += 1;
        c.host_bytes_written += bytes;
        c.cw_logical_bytes += plan.total_pre;
        c.cw_stored_bytes += stored_bytes;
        c.cw_footprint_bytes += footprint;
        let result = if append {
            zone.zslba * lba + start
        } else {
            footprint
        };
        Ok((result, SimInstant::from_ns(done)))
    }

    /// Write the OOB of every page touched by bytes `from..to` of zone `zi`: its fill and the
    /// chunk records that start in it (image only; memory keeps the records alone).
    pub(crate) fn persist_oob(&mut self, zi: usize, from: u64, to: u64) -> Result<(), Status> {
        let (design, mut m) = self.split();
        let table = design
            .chunk_table()
            .expect("compressed I/O checked by the controller");
        cczns::persist_oob(&mut m, table, zi, from, to)
    }

    /// The chunk records (a design with compressed I/O: the controller refuses CW and DR
    /// elsewhere).
    pub(crate) fn table(&mut self) -> &mut ChunkTable {
        self.design
            .chunk_table()
            .expect("compressed I/O checked by the controller")
    }
}
