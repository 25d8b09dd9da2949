//! The design tables' journal and checkpoints in an image (balloon, tcssd): records of what each
//! command changed, appended with a CRC and a sequence number, and whole-table checkpoints
//! switched in through two header slots (the order is described in `storage.rs`).

use std::io;
use std::os::unix::fs::FileExt;

use super::{align_up, invalid, ImageFile};

/// The design tables' journal (sparse: only written records take space, and a checkpoint
/// gives it back).
pub(super) const JOURNAL_BYTES: u64 = 256 << 20;
/// Checkpoint when the journal passes this, or twice the last checkpoint, whichever is more.
pub(super) const JOURNAL_SOFT_LIMIT: u64 = 16 << 20;
pub(super) const HEADER_AREA: u64 = 4096;
pub(super) const SLOT_BYTES: u64 = 64;
pub(super) const SLOT_MAGIC: &[u8; 4] = b"ZCKP";
pub(super) const JOURNAL_RECORD_HEADER: u64 = 16;
/// A design's tables as an image holds them: the newest checkpoint, and the journal records
/// written after it, in order.
pub(crate) struct Logged {
    pub checkpoint: Vec<u8>,
    pub records: Vec<Vec<u8>>,
}

/// Where the design tables' journal stands.
#[derive(Debug, Default)]
pub(crate) struct Log {
    /// The newest checkpoint: its generation, header slot, place and length.
    gen: u64,
    slot: usize,
    active: Option<(u64, u64)>,
    /// Sequence number of the next record, and where it goes in the journal.
    next_seq: u64,
    pos: u64,
}

impl ImageFile {
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
        // A header can only name bytes the file holds (never allocate what it merely claims).
        let file_len = self.file.metadata()?.len();
        if off.checked_add(len).is_none_or(|end| end > file_len) {
            return Err(invalid(format!(
                "design table checkpoint {gen} lies past the end of the image ({len} bytes at \
                 {off}, file {file_len} bytes)"
            )));
        }
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
