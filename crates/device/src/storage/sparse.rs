//! A zone's bytes kept compact: each whole 4 KiB page in the run encoding of
//! `codec::modeled` (runs of one byte, literals). A modeled payload writes mostly runs (values,
//! block padding, compressed bytes' padding), so an in-memory device holding one needs memory
//! for the keys and structures only, not for the bytes it pretends to store. Written in order
//! (zones are), read anywhere; the last partial page stays raw until it fills.

use codec::modeled;

/// Bytes per encoded page.
pub(crate) const PAGE: usize = 4096;

#[derive(Debug, Default)]
pub(crate) struct SparseBytes {
    /// Whole pages, encoded back to back.
    arena: Vec<u8>,
    /// Where each whole page's encoding starts in `arena`.
    starts: Vec<u64>,
    /// The bytes after the last whole page, raw.
    tail: Vec<u8>,
}

impl SparseBytes {
    pub fn len(&self) -> u64 {
        (self.starts.len() * PAGE + self.tail.len()) as u64
    }

    /// Host memory held.
    pub fn held(&self) -> u64 {
        (self.arena.len() + self.tail.len() + self.starts.len() * 8) as u64
    }

    pub fn extend(&mut self, mut data: &[u8]) {
        if !self.tail.is_empty() {
            let take = (PAGE - self.tail.len()).min(data.len());
            self.tail.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.tail.len() == PAGE {
                let page = std::mem::take(&mut self.tail);
                self.push_page(&page);
                self.tail = page;
                self.tail.clear();
            }
        }
        let mut pages = data.chunks_exact(PAGE);
        for p in &mut pages {
            self.push_page(p);
        }
        self.tail.extend_from_slice(pages.remainder());
    }

    fn push_page(&mut self, page: &[u8]) {
        self.starts.push(self.arena.len() as u64);
        modeled::encode(page, &mut self.arena);
    }

    /// Decode whole page `p` into `out` (PAGE bytes).
    fn decode_page(&self, p: usize, out: &mut [u8]) {
        let start = self.starts[p] as usize;
        let end = self
            .starts
            .get(p + 1)
            .map_or(self.arena.len(), |&e| e as usize);
        modeled::decode(&self.arena[start..end], out).expect("a page its encoder wrote");
    }

    /// Copy bytes [off, off + out.len()) into `out` (the caller checked the range).
    pub fn read(&self, off: u64, out: &mut [u8]) {
        let whole = (self.starts.len() * PAGE) as u64;
        let mut o = 0;
        let mut at = off;
        let mut page_buf = [0u8; PAGE];
        while o < out.len() {
            let left = out.len() - o;
            if at >= whole {
                let from = (at - whole) as usize;
                out[o..].copy_from_slice(&self.tail[from..from + left]);
                return;
            }
            let p = (at / PAGE as u64) as usize;
            let in_page = (at % PAGE as u64) as usize;
            let n = (PAGE - in_page).min(left);
            if n == PAGE {
                self.decode_page(p, &mut out[o..o + PAGE]);
            } else {
                self.decode_page(p, &mut page_buf);
                out[o..o + n].copy_from_slice(&page_buf[in_page..in_page + n]);
            }
            o += n;
            at += n as u64;
        }
    }

    /// Every byte, raw (a zone that must be overwritten in place goes back to plain bytes).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = vec![0; self.len() as usize];
        self.read(0, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modeled_like(len: usize, seed: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut x = seed | 1;
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.extend_from_slice(format!("user{}", x % 1_000_000_007).as_bytes());
            let run = (x % 1500) as usize;
            let b = if x.is_multiple_of(3) { 0xA5 } else { 0 };
            out.resize(out.len() + run, b);
            out.extend_from_slice(&x.to_le_bytes()[..(x % 9) as usize]);
        }
        out.truncate(len);
        out
    }

    #[test]
    fn writes_in_any_pieces_read_back_anywhere() {
        let data = modeled_like(5 * PAGE + 123, 7);
        let mut s = SparseBytes::default();
        let mut at = 0;
        for piece in [1, 4095, 4096, 3000, 9000, 100, 5000] {
            let end = (at + piece).min(data.len());
            s.extend(&data[at..end]);
            at = end;
            assert_eq!(s.len(), at as u64);
        }
        s.extend(&data[at..]);
        assert_eq!(s.to_vec(), data);
        for (off, len) in [
            (0, 1),
            (4090, 20),
            (4096, 4096),
            (100, 3 * PAGE),
            (5 * PAGE, 123),
        ] {
            let mut out = vec![0xEE; len];
            s.read(off as u64, &mut out);
            assert_eq!(out, &data[off..off + len], "{off}+{len}");
        }
        assert!(s.held() < data.len() as u64 / 4, "{}", s.held());
    }

    #[test]
    fn dense_and_edge_pages_round_trip() {
        let dense: Vec<u8> = (0..3 * PAGE as u32).map(|i| (i * 31 % 251) as u8).collect();
        let mut pages = dense.clone();
        pages.extend(vec![0u8; PAGE]);
        pages.extend(vec![7u8; PAGE]);
        pages.extend((0..PAGE).map(|i| if i % 9 == 0 { 1 } else { 0 }));
        pages.extend([vec![0u8; PAGE - 3], vec![5, 5, 5]].concat());
        let mut s = SparseBytes::default();
        s.extend(&pages);
        assert_eq!(s.to_vec(), pages);
    }
}
