//! CCZNS: compressed writes into padding zones (the device compresses, the file grows by what
//! the zone took) and decompressed reads of a file's chunks.

use super::super::meta::Extent;
use super::{CompressedWriteError, FsError, ZoneFs};
use crate::zoned::ZonedBackend;

impl<B: ZonedBackend> ZoneFs<B> {
    /// Write one CCZNS compressed write for file `id`: `data` (whole blocks, at most the
    /// device's transfer size) holds the chunks of `chunk_sizes` back to back; the device
    /// compresses each and the file grows by what the zone took. A zone with less room than
    /// the uncompressed data is finished and another taken, as CCZNS's ZenFS abandons it.
    /// Returns each chunk's size in the file (its footprint; the last one padded to a block).
    pub(super) async fn write_compressed(
        &self,
        id: u64,
        data: &[u8],
        chunk_sizes: &[u32],
    ) -> Result<Vec<u32>, FsError> {
        if !self.padding_zones() {
            return Err(CompressedWriteError::NeedsPaddingZones.into());
        }
        let need = data.len() as u64;
        if need > self.io.zone_capacity_bytes() || need > self.io.max_transfer_bytes() {
            return Err(CompressedWriteError::TooLarge { bytes: need }.into());
        }
        let zi = loop {
            let (zone, lifetime) = {
                let st = self.st.borrow();
                let f = st
                    .files
                    .get(&id)
                    .ok_or(FsError::NotFound(format!("file {id}")))?;
                (f.zone, f.meta.lifetime)
            };
            match zone {
                Some(z) if self.st.borrow().zones[z].remaining() >= need => break z,
                Some(z) => {
                    self.st.borrow_mut().files.get_mut(&id).expect("file").zone = None;
                    if self.st.borrow().zones[z].remaining() > 0 {
                        self.finish_zone(z).await?;
                    }
                    self.release_zone(z).await?;
                }
                None => {
                    let z = self
                        .allocate(lifetime, false, super::super::plus::WriteClass::OTHER)
                        .await?;
                    if self.st.borrow().zones[z].remaining() < need {
                        self.finish_zone(z).await?;
                        self.release_zone(z).await?;
                        continue;
                    }
                    self.take_zone(id, z).await?;
                    break z;
                }
            }
        };
        let pos = {
            let st = self.st.borrow();
            st.zones[zi].start + st.zones[zi].wp
        };
        let fb = self.io.compressed_write(pos, data, chunk_sizes).await?;
        if fb.sizes.len() != chunk_sizes.len() || fb.written % self.block != 0 {
            return Err(CompressedWriteError::Feedback {
                sizes: fb.sizes.len(),
                chunks: chunk_sizes.len(),
                written: fb.written,
            }
            .into());
        }
        self.extend(id, zi, pos, fb.written, fb.written).await?;
        Ok(fb.sizes)
    }

    /// CCZNS decompressed read from file `name`: the chunks stored in `compressed_len` bytes
    /// from file offset `offset` (where a chunk starts), at most `budget` decompressed bytes,
    /// appended to `out`. Single-chunk returns the chunk at `offset`. A range over several
    /// extents takes one command per extent (CCZNS's ZenFS concatenates their feedback).
    /// Returns each chunk's (decompressed, stored) size.
    pub async fn decompressed_read(
        &self,
        name: &str,
        offset: u64,
        compressed_len: u64,
        multi: bool,
        budget: u64,
        out: &mut Vec<u8>,
    ) -> Result<Vec<(u32, u32)>, FsError> {
        let (id, extents) = self.begin_read(name)?;
        let result = self
            .dr_extents(&extents, offset, compressed_len, multi, budget, out)
            .await;
        self.end_read(id);
        result
    }

    async fn dr_extents(
        &self,
        extents: &[Extent],
        offset: u64,
        compressed_len: u64,
        multi: bool,
        mut budget: u64,
        out: &mut Vec<u8>,
    ) -> Result<Vec<(u32, u32)>, FsError> {
        let mut chunks = Vec::new();
        let mut file_off = 0u64;
        let end = offset + compressed_len;
        for e in extents {
            let (lo, hi) = (offset.max(file_off), end.min(file_off + e.len));
            file_off += e.len;
            if lo >= hi || budget == 0 {
                continue;
            }
            let dev = e.start + (lo - (file_off - e.len));
            let room = budget
                .div_ceil(self.block)
                .saturating_mul(self.block)
                .min(self.io.max_transfer_bytes());
            let at = out.len();
            out.resize(at + room as usize, 0);
            let got = self
                .io
                .decompressed_read(dev, hi - lo, multi, &mut out[at..])
                .await?;
            let bytes: u64 = got.iter().map(|c| c.0 as u64).sum();
            out.truncate(at + bytes as usize);
            budget = budget.saturating_sub(bytes);
            chunks.extend(got);
            if !multi {
                break;
            }
        }
        Ok(chunks)
    }
}
