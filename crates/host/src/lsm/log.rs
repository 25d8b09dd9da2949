//! RocksDB's log format (`db/log_format.h`), used by the WAL and the MANIFEST: the file is cut
//! in 32 KiB blocks; a record is one or more fragments `[masked crc32c u32][length u16][type u8]
//! [payload]` (FULL, or FIRST, MIDDLE..., LAST when it spans blocks); a block's tail shorter than
//! a header is zero-filled. Reading stops cleanly at the end of the data or at a torn tail (a
//! fragment cut short, or zeros), and reports corruption in the middle as an error.

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;
const FULL: u8 = 1;
const FIRST: u8 = 2;
const MIDDLE: u8 = 3;
const LAST: u8 = 4;

fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Appends records to a log held as bytes (the caller writes them to its file).
#[derive(Default)]
pub struct LogWriter {
    /// Offset within the current 32 KiB block.
    block_offset: usize,
}

impl LogWriter {
    /// A writer continuing a log that already holds `len` bytes.
    pub fn at(len: u64) -> LogWriter {
        LogWriter {
            block_offset: (len % BLOCK as u64) as usize,
        }
    }

    /// Append `record` to `out` as fragments.
    pub fn add(&mut self, record: &[u8], out: &mut Vec<u8>) {
        let mut left = record;
        let mut first = true;
        loop {
            let room = BLOCK - self.block_offset;
            if room < HEADER {
                out.resize(out.len() + room, 0);
                self.block_offset = 0;
                continue;
            }
            let n = left.len().min(room - HEADER);
            let last = n == left.len();
            let t = match (first, last) {
                (true, true) => FULL,
                (true, false) => FIRST,
                (false, true) => LAST,
                (false, false) => MIDDLE,
            };
            let crc = crc32c::crc32c_append(crc32c::crc32c(&[t]), &left[..n]);
            out.extend_from_slice(&mask(crc).to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.push(t);
            out.extend_from_slice(&left[..n]);
            self.block_offset += HEADER + n;
            left = &left[n..];
            first = false;
            if last {
                return;
            }
        }
    }
}

/// A log's records, read back.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LogRead {
    pub records: Vec<Vec<u8>>,
    /// The log ended in a torn record (a crash while writing it): dropped, not an error.
    pub torn_tail: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("corrupt log at byte {offset}: {why}")]
pub struct LogError {
    pub offset: u64,
    pub why: &'static str,
}

/// Read every complete record of `log`.
pub fn read_log(log: &[u8]) -> Result<LogRead, LogError> {
    let mut out = LogRead::default();
    let mut pending: Option<Vec<u8>> = None;
    let mut at = 0usize;
    while at < log.len() {
        let in_block = at % BLOCK;
        if BLOCK - in_block < HEADER {
            at += BLOCK - in_block;
            continue;
        }
        if at + HEADER > log.len() {
            out.torn_tail = true;
            break;
        }
        let h = &log[at..at + HEADER];
        if h.iter().all(|&b| b == 0) {
            // Zero fill: the writer stopped here (or a block's padded end).
            let next = (at / BLOCK + 1) * BLOCK;
            if next >= log.len() || log[at..next.min(log.len())].iter().all(|&b| b == 0) {
                if next >= log.len() {
                    break;
                }
                at = next;
                continue;
            }
            return Err(LogError {
                offset: at as u64,
                why: "zeros before the end of a block",
            });
        }
        let crc = u32::from_le_bytes(h[..4].try_into().expect("4 bytes"));
        let len = u16::from_le_bytes([h[4], h[5]]) as usize;
        let t = h[6];
        if at + HEADER + len > log.len() {
            out.torn_tail = true;
            break;
        }
        if in_block + HEADER + len > BLOCK {
            return Err(LogError {
                offset: at as u64,
                why: "fragment crosses a block boundary",
            });
        }
        let payload = &log[at + HEADER..at + HEADER + len];
        if mask(crc32c::crc32c_append(crc32c::crc32c(&[t]), payload)) != crc {
            // A bad checksum on the last fragment of the log is a torn write; before it,
            // corruption.
            if at + HEADER + len >= log.len() {
                out.torn_tail = true;
                break;
            }
            return Err(LogError {
                offset: at as u64,
                why: "checksum mismatch",
            });
        }
        match (t, pending.as_mut()) {
            (FULL, None) => out.records.push(payload.to_vec()),
            (FIRST, None) => pending = Some(payload.to_vec()),
            (MIDDLE, Some(p)) => p.extend_from_slice(payload),
            (LAST, Some(p)) => {
                p.extend_from_slice(payload);
                out.records.push(pending.take().expect("pending"));
            }
            _ => {
                return Err(LogError {
                    offset: at as u64,
                    why: "fragment out of sequence",
                })
            }
        }
        at += HEADER + len;
    }
    if pending.is_some() {
        out.torn_tail = true;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<Vec<u8>> {
        let mut rng = sim::Rng::new(3);
        (0..200)
            .map(|i| {
                let len = [0usize, 1, 100, 5000, 40_000, 100_000][i % 6] + rng.below(50) as usize;
                let mut v = vec![0u8; len];
                rng.fill(&mut v);
                v
            })
            .collect()
    }

    #[test]
    fn records_round_trip_across_blocks() {
        let recs = records();
        let mut log = Vec::new();
        let mut w = LogWriter::default();
        for r in &recs {
            w.add(r, &mut log);
        }
        let got = read_log(&log).expect("reads");
        assert!(!got.torn_tail);
        assert_eq!(got.records, recs);
        // A writer resumed at the log's length continues it.
        let mut w2 = LogWriter::at(log.len() as u64);
        w2.add(b"after reopen", &mut log);
        assert_eq!(
            read_log(&log).expect("reads").records.last().unwrap(),
            b"after reopen"
        );
    }

    #[test]
    fn a_cut_anywhere_keeps_every_whole_record_before_it() {
        let recs = records();
        let mut log = Vec::new();
        let mut w = LogWriter::default();
        let mut ends = Vec::new();
        for r in &recs {
            w.add(r, &mut log);
            ends.push(log.len());
        }
        let mut rng = sim::Rng::new(9);
        for _ in 0..300 {
            let cut = rng.below(log.len() as u64 + 1) as usize;
            let got = read_log(&log[..cut]).expect("a cut is not corruption");
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            assert_eq!(got.records.len(), whole, "cut at {cut}");
            assert_eq!(got.records, recs[..whole]);
        }
    }

    #[test]
    fn corruption_in_the_middle_is_an_error() {
        let mut log = Vec::new();
        let mut w = LogWriter::default();
        for r in records().iter().take(20) {
            w.add(r, &mut log);
        }
        let mut rng = sim::Rng::new(4);
        for _ in 0..200 {
            let mut bad = log.clone();
            let at = rng.below(bad.len() as u64 / 2) as usize;
            bad[at] ^= 1 << rng.below(8);
            // Never a panic; never the original records with one changed.
            if let Ok(r) = read_log(&bad) {
                assert!(r.records.len() < 20 || r.records == read_log(&log).unwrap().records);
            }
        }
    }
}
