//! CCZNS decompressed read (DR), single- and multi-chunk.
//!
//! Validate, in this order: design (CCZNS only), block count and buffers (a metadata buffer is
//! required), transfer size, fields (intra offset and PDSZ below the block size, CNLB ≥ 1),
//! namespace range, zone boundary, offline zone, then legality against the chunk records (the
//! OOB): a chunk must start exactly at the range start and end inside the range, and must fit
//! the output budget (Invalid Field otherwise). Multi-chunk goes on with the chunks that follow
//! while they start and end inside the range and fit both the data budget and the metadata
//! slots. Apply: read the stored bytes, decompress each chunk into the output (a corrupt chunk
//! is an Unrecovered Read Error), zero the rest, fill the feedback. Cost: flash reads for the
//! pages of the compressed bytes not in the write buffer, each chunk through the decompression
//! engine, then the decompressed data and the metadata to the host.

use codec::Direction;
use sim::SimInstant;

use crate::cmd::wire::{set_slot, slots};
use crate::controller::Controller;
use crate::status::Status;
use crate::zone::ZoneState;

/// The chunks a DR returns, as validation chose them.
struct DrPlan {
    zone: usize,
    /// Index of the first chosen chunk record, how many, and their bytes once decompressed.
    first: usize,
    take: usize,
    out_bytes: u64,
}

impl Controller {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn decompressed_read(
        &mut self,
        ready: SimInstant,
        slba: u64,
        intra: u32,
        cnlb: u32,
        pdsz: u32,
        multi: bool,
        nlb: u32,
        data: &mut [u8],
        metadata: &mut [u8],
    ) -> Result<(u64, SimInstant), Status> {
        let plan = self.validate_decompressed_read(
            slba,
            intra,
            cnlb,
            pdsz,
            multi,
            nlb,
            data.len(),
            metadata,
        )?;
        self.apply_decompressed_read(ready, &plan, data, metadata)
    }

    /// Validate a DR and choose its chunks from the records; changes nothing.
    #[allow(clippy::too_many_arguments)]
    fn validate_decompressed_read(
        &self,
        slba: u64,
        intra: u32,
        cnlb: u32,
        pdsz: u32,
        multi: bool,
        nlb: u32,
        data_len: usize,
        metadata: &[u8],
    ) -> Result<DrPlan, Status> {
        let lba = self.layout.lba_bytes;
        let budget = self.check_transfer(
            nlb,
            data_len,
            metadata.len(),
            self.layout.max_transfer_bytes,
        )?;
        if metadata.is_empty() || slots(metadata) < 3 {
            return Err(Status::INVALID_FIELD);
        }
        if intra as u64 >= lba || pdsz as u64 >= lba || cnlb == 0 {
            return Err(Status::INVALID_FIELD);
        }
        let end_lba = slba
            .checked_add(cnlb as u64)
            .ok_or(Status::LBA_OUT_OF_RANGE)?;
        if end_lba > self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        let zi = self.zone_index(slba);
        if self.zone_index(end_lba - 1) != zi {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        let zone = self.zones[zi];
        if zone.state == ZoneState::Offline {
            return Err(Status::ZONE_OFFLINE);
        }
        let base = (slba - zone.zslba) * lba;
        let (start, end) = (base + intra as u64, base + cnlb as u64 * lba - pdsz as u64);
        if start >= end {
            return Err(Status::INVALID_FIELD);
        }

        // Legality and selection, from the chunk records.
        let recs = &self
            .design
            .chunks()
            .expect("compressed I/O checked by the controller")
            .chunks[zi];
        let first = recs
            .binary_search_by_key(&start, |r| r.offset)
            .map_err(|_| Status::INVALID_FIELD)?;
        let max_pairs = (slots(metadata) - 1) / 2;
        let mut take = 0usize;
        let mut out_bytes = 0u64;
        for r in &recs[first..] {
            let fits_range = r.offset + r.post as u64 <= end;
            let fits_budget = out_bytes + r.pre as u64 <= budget && take < max_pairs;
            if r.offset >= end || !fits_range || !fits_budget {
                if take == 0 {
                    return Err(Status::INVALID_FIELD);
                }
                break;
            }
            take += 1;
            out_bytes += r.pre as u64;
            if !multi {
                break;
            }
        }
        Ok(DrPlan {
            zone: zi,
            first,
            take,
            out_bytes,
        })
    }

    /// Read, decompress (or take from the memo) and return the chosen chunks; cost it.
    fn apply_decompressed_read(
        &mut self,
        ready: SimInstant,
        plan: &DrPlan,
        data: &mut [u8],
        metadata: &mut [u8],
    ) -> Result<(u64, SimInstant), Status> {
        let (zi, first, take, out_bytes) = (plan.zone, plan.first, plan.take, plan.out_bytes);
        let chosen = &self.table().chunks[zi][first..first + take];
        let stored_from = chosen[0].offset;
        let last = chosen[take - 1];
        let stored_to = last.offset + last.post as u64;

        // Apply: decompress each chunk into the output, or copy it from the memo; the stored
        // bytes are read only when some chunk is not there.
        let table = self.table();
        let all_remembered = table.chunks[zi][first..first + take]
            .iter()
            .all(|r| r.raw || table.memo.contains(zi, r.offset));
        let mut staged = std::mem::take(&mut self.staging);
        staged.clear();
        if !all_remembered {
            staged.resize((stored_to - stored_from) as usize, 0);
            let read = self
                .storage
                .read(zi as u32, stored_from, &mut staged, 0, &mut [])
                .map_err(|e| self.image_failed("read", &e));
            if let Err(s) = read {
                self.staging = staged;
                return Err(s);
            }
        }
        let mut pos = 0usize;
        let mut failed = false;
        for k in first..first + take {
            let r = self.table().chunks[zi][k];
            let dst = &mut data[pos..pos + r.pre as usize];
            pos += r.pre as usize;
            if r.raw && all_remembered {
                // A raw chunk is its stored bytes; read just them.
                if let Err(e) = self.storage.read(zi as u32, r.offset, dst, 0, &mut []) {
                    self.staging = staged;
                    return Err(self.image_failed("read", &e));
                }
                continue;
            }
            let src_at = (r.offset - stored_from) as usize;
            let src = staged.get(src_at..src_at + r.post as usize);
            if r.raw {
                dst.copy_from_slice(src.expect("stored bytes read"));
            } else if let Some(b) = self.table().memo.get(zi, r.offset) {
                dst.copy_from_slice(b);
            } else {
                let src = src.expect("stored bytes read");
                if self
                    .engine
                    .coder
                    .decompress(self.engine.codec, src, dst)
                    .is_err()
                {
                    failed = true;
                    break;
                }
                self.table().memo.offer(zi, r.offset, dst);
            }
        }
        self.staging = staged;
        if failed {
            return Err(Status::UNRECOVERED_READ_ERROR);
        }
        data[pos..].fill(0);
        metadata.fill(0);
        set_slot(metadata, 0, take as u32);
        let sizes: Vec<(u32, u32)> = self.table().chunks[zi][first..first + take]
            .iter()
            .map(|r| (r.pre, r.feedback))
            .collect();
        for (k, &(pre, fb)) in sizes.iter().enumerate() {
            set_slot(metadata, 1 + 2 * k, pre);
            set_slot(metadata, 2 + 2 * k, fb);
        }

        // Cost: the flash pages of the stored bytes, the engine, the link.
        let data_ready = self.read_zone_bytes(zi, stored_from, stored_to, ready);
        let mut decompressed = data_ready;
        for &(pre, _) in &sizes {
            decompressed = decompressed.max(self.engine.run(
                Direction::Decompress,
                data_ready,
                pre as u64,
            ));
        }
        let done = self.transfer_to_host(decompressed, out_bytes + metadata.len() as u64);

        let c = &mut self.counters;
        c.decompressed_reads += 1;
        c.dr_chunks += take as u64;
        c.dr_logical_bytes += out_bytes;
        c.dr_stored_bytes += stored_to - stored_from;
        c.host_bytes_read += out_bytes;
        Ok((take as u64, SimInstant::from_ns(done)))
    }
}
