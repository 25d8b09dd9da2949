//! Blocks: entries with shared-prefix compression and restart points, built and searched.

use std::borrow::Cow;
use std::cmp::Ordering;

use super::super::format::{corrupt, get_varint, put_varint, FormatError};
use super::Entry;

/// Entries with shared-prefix compression and a restart point every `interval` entries.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    interval: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    pub fn new(interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            interval: interval.max(1),
            last_key: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Size of the block if finished now.
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let shared = if self.counter < self.interval {
            key.iter()
                .zip(&self.last_key)
                .take_while(|(a, b)| a == b)
                .count()
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
            0
        };
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, (key.len() - shared) as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.counter += 1;
    }

    /// The finished block's bytes; the builder is empty again afterwards.
    pub fn finish(&mut self) -> Vec<u8> {
        // The next block starts with this one's room (no regrowing entry by entry).
        let room = self.buf.capacity();
        let mut out = std::mem::replace(&mut self.buf, Vec::with_capacity(room));
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts = vec![0];
        self.counter = 0;
        self.last_key.clear();
        out
    }
}

/// A decoded block, for iteration and seeks.
pub struct Block<'a> {
    /// Borrowed from the table's bytes when the block is stored raw, or from its scratch
    /// buffer when it was decompressed: no copy and no allocation per lookup.
    data: Cow<'a, [u8]>,
    restarts_at: usize,
    restarts: usize,
    /// File offset, for error messages.
    offset: u64,
}

impl<'a> Block<'a> {
    /// The block's bytes (restart array included, trailer not).
    pub(super) fn byte_len(&self) -> usize {
        self.data.len()
    }

    pub fn new(data: impl Into<Cow<'a, [u8]>>, offset: u64) -> Result<Block<'a>, FormatError> {
        let data = data.into();
        let bad = |why: &str| corrupt("block", offset, why);
        if data.len() < 4 {
            return Err(bad("shorter than its restart count"));
        }
        let n = u32::from_le_bytes(data[data.len() - 4..].try_into().expect("4 bytes")) as usize;
        let restarts_at = (data.len() - 4)
            .checked_sub(
                n.checked_mul(4)
                    .ok_or_else(|| bad("restart count overflows"))?,
            )
            .ok_or_else(|| bad("restart array larger than the block"))?;
        if n == 0 {
            return Err(bad("no restart points"));
        }
        Ok(Block {
            data,
            restarts_at,
            restarts: n,
            offset,
        })
    }

    fn restart(&self, i: usize) -> usize {
        let at = self.restarts_at + 4 * i;
        u32::from_le_bytes(self.data[at..at + 4].try_into().expect("4 bytes")) as usize
    }

    /// Decode the entry at `pos` on top of `key` (the previous key); returns the value's range
    /// and the next entry's position.
    fn entry(&self, pos: usize, key: &mut Vec<u8>) -> Result<(usize, usize, usize), FormatError> {
        let bad = || corrupt("block entry", self.offset + pos as u64, "malformed");
        let b = &self.data[..self.restarts_at];
        let mut p = pos;
        let mut field = || -> Result<usize, FormatError> {
            let (v, n) = get_varint(b.get(p..).ok_or_else(bad)?).ok_or_else(bad)?;
            p += n;
            usize::try_from(v).map_err(|_| bad())
        };
        let (shared, non_shared, value_len) = (field()?, field()?, field()?);
        if shared > key.len() || p + non_shared + value_len > b.len() {
            return Err(bad());
        }
        key.truncate(shared);
        key.extend_from_slice(&b[p..p + non_shared]);
        let v = p + non_shared;
        Ok((v, v + value_len, v + value_len))
    }

    /// Every entry in order.
    pub fn entries(&self) -> Result<Vec<Entry>, FormatError> {
        let mut out = Vec::new();
        let mut key = Vec::new();
        let mut pos = 0;
        while pos < self.restarts_at {
            let (v0, v1, next) = self.entry(pos, &mut key)?;
            out.push((key.clone(), self.data[v0..v1].to_vec()));
            pos = next;
        }
        Ok(out)
    }

    /// The first entry whose key is ≥ `target` under `cmp`, if any.
    pub fn seek(
        &self,
        target: &[u8],
        cmp: impl Fn(&[u8], &[u8]) -> Ordering,
    ) -> Result<Option<Entry>, FormatError> {
        // The last restart point whose key is < target; scan from there.
        let (mut lo, mut hi) = (0usize, self.restarts - 1);
        let mut key = Vec::new();
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            key.clear();
            self.entry(self.restart(mid), &mut key)?;
            if cmp(&key, target) == Ordering::Less {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        key.clear();
        let mut pos = self.restart(lo);
        while pos < self.restarts_at {
            let (v0, v1, next) = self.entry(pos, &mut key)?;
            if cmp(&key, target) != Ordering::Less {
                return Ok(Some((key, self.data[v0..v1].to_vec())));
            }
            pos = next;
        }
        Ok(None)
    }
}
