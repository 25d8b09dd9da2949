//! Compressed I/O (`compressed_io=1`, a CCZNS device): the run's chunk index of what CWs
//! wrote, and the decompressed reads made from it, with prefix-chunk prediction of a
//! multi-chunk read's output budget (CCZNS §III-C).

use std::cell::RefCell;
use std::rc::Rc;

use device::cmd::wire;

use super::{CcIo, ChunkEntry, ChunkIndex, Io, JobState};
use crate::fio::options::Direction;

impl JobState {
    /// A DR of chunks `first..first + k` of zone `zone` (k = chunks per I/O).
    pub(super) fn dr_io(&self, zone: u64, entries: &[ChunkEntry]) -> Io {
        let lba = self.g.lba_bytes;
        let (head, last) = (entries[0], entries[entries.len() - 1]);
        let (start, end) = (head.offset, last.offset + last.feedback as u64);
        let cnlb = (end.div_ceil(lba) - start / lba) as u32;
        let pdsz = (end.div_ceil(lba) * lba - end) as u32;
        let nlb = if entries.len() == 1 {
            (head.pre as u64).div_ceil(lba)
        } else {
            // Prefix-chunk prediction: the whole range decompresses like its first chunk.
            let predicted = (end - start) as f64 * head.pre as f64 / head.feedback as f64;
            (predicted.ceil() as u64)
                .div_ceil(lba)
                .max((head.pre as u64).div_ceil(lba))
                .min(self.g.max_transfer_bytes / lba)
        };
        Io {
            dir: Direction::Read,
            lba: zone * self.g.zone_size_lbas + start / lba,
            nlb: nlb as u32,
            wait_until: None,
            cc: Some(CcIo::Read {
                intra: (start % lba) as u32,
                cnlb,
                pdsz,
                chunks: entries.len() as u32,
            }),
        }
    }

    /// Chunks of another size than this job's `compressed_chunk` cannot make its I/Os.
    pub(super) fn check_chunk_size(&mut self, entries_pre: Option<u32>) -> bool {
        match entries_pre {
            Some(pre) if pre as u64 != self.chunk => {
                self.fail(format!(
                    "compressed_chunk: the chunks written are {pre} bytes, this job reads chunks \
                     of {} (set compressed_chunk={pre} and bs to a multiple of it)",
                    self.chunk
                ));
                false
            }
            _ => true,
        }
    }

    pub(super) fn next_dr_seq(&mut self) -> Option<Io> {
        let k = self.chunks_per_io as usize;
        let zones = self.end_zone() - self.first_zone();
        for _ in 0..=zones {
            let head = self.index.borrow()[self.cur_zone as usize]
                .first()
                .map(|e| e.pre);
            if !self.check_chunk_size(head) {
                return None;
            }
            let io = {
                let index = self.index.borrow();
                let entries = &index[self.cur_zone as usize];
                (self.chunk_cursor + k <= entries.len()).then(|| {
                    self.dr_io(
                        self.cur_zone,
                        &entries[self.chunk_cursor..self.chunk_cursor + k],
                    )
                })
            };
            if let Some(io) = io {
                self.chunk_cursor += k;
                self.idle_scans = 0;
                return Some(io);
            }
            self.idle_scans += 1;
            if self.idle_scans > zones {
                break;
            }
            self.advance_zone();
            if self.done {
                break;
            }
        }
        if self.result.read.ios == 0 && self.issued == 0 {
            return self.fail(NO_CHUNKS.into());
        }
        self.done = true;
        None
    }

    pub(super) fn next_dr_rand(&mut self) -> Option<Io> {
        let k = self.chunks_per_io as usize;
        let (first, zones) = (self.first_zone(), self.end_zone() - self.first_zone());
        let pick = first + self.rng.below(zones);
        for j in 0..zones {
            let z = first + (pick - first + j) % zones;
            let head = self.index.borrow()[z as usize].first().map(|e| e.pre);
            if !self.check_chunk_size(head) {
                return None;
            }
            let index = self.index.borrow();
            let entries = &index[z as usize];
            let groups = entries.len() / k;
            if groups > 0 {
                let g = self.rng.below(groups as u64) as usize;
                return Some(self.dr_io(z, &entries[g * k..g * k + k]));
            }
        }
        self.fail(NO_CHUNKS.into())
    }
}

const NO_CHUNKS: &str =
    "nothing to read: compressed_io reads need chunks written by compressed_io \
                         writes earlier in the same run (a job before this one, with stonewall)";
/// Add the chunks of a completed CW at block `slba`, byte `intra`, to the run's index.
pub(super) fn record_chunks(
    index: &ChunkIndex,
    state: &Rc<RefCell<JobState>>,
    slba: u64,
    intra: u32,
    metadata: &[u8],
    chunk: u64,
    lba: u64,
) {
    let Some(fb) = wire::cw_feedback(metadata, lba) else {
        return;
    };
    let zone_lbas = state.borrow().g.zone_size_lbas;
    let zone = (slba / zone_lbas) as usize;
    let mut offset = (slba % zone_lbas) * lba + intra as u64;
    let mut index = index.borrow_mut();
    let entries = &mut index[zone];
    // Completions may arrive out of order when several CWs are in flight: keep offset order.
    let at = entries.partition_point(|e| e.offset < offset);
    let new: Vec<ChunkEntry> = fb
        .sizes
        .iter()
        .map(|&f| {
            let e = ChunkEntry {
                offset,
                feedback: f,
                pre: chunk as u32,
            };
            offset += f as u64;
            e
        })
        .collect();
    entries.splice(at..at, new);
}
