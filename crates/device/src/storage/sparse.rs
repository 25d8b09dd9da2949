//! A zone's bytes kept compact: each whole 4 KiB page in the run encoding of
//! `codec::modeled` (runs of one byte, literals). A modeled payload writes mostly runs (values,
//! block padding, compressed bytes' padding), so an in-memory device holding one needs memory
//! for the keys and structures only, not for the bytes it pretends to store. Written in order
//! (zones are), read anywhere; the last partial page stays raw until it fills.

use codec::modeled;

/// Bytes per encoded page.
pub(crate) const PAGE: usize = 4096;

/// The most a page's run encoding takes: the page as one literal, its header and the
/// token's (runs are at least 8 bytes and take at most 4 to say).
const MAX_PAGE_ENCODING: usize = PAGE + 16;

/// Segments grow from this size to the largest, doubling: a zone's encodings are never
/// copied to grow (one growing buffer was reallocated and its pages faulted in again at every
/// doubling: 8 % of a modeled CC run at S = 1).
const FIRST_SEGMENT: usize = 64 << 10;
const LAST_SEGMENT: usize = 1 << 20;

#[derive(Debug, Default)]
pub(crate) struct SparseBytes {
    /// Whole pages, encoded back to back in segments (a page never spans two).
    segments: Vec<Vec<u8>>,
    /// Where each whole page's encoding starts: segment, offset in it.
    starts: Vec<(u32, u32)>,
    /// The bytes after the last whole page, raw.
    tail: Vec<u8>,
}

impl SparseBytes {
    pub fn len(&self) -> u64 {
        (self.starts.len() * PAGE + self.tail.len()) as u64
    }

    /// Host memory held.
    pub fn held(&self) -> u64 {
        let encoded: usize = self.segments.iter().map(Vec::len).sum();
        (encoded + self.tail.len() + self.starts.len() * 8) as u64
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
        let room = self.segments.last().map_or(0, |s| s.capacity() - s.len());
        if room < MAX_PAGE_ENCODING {
            let size = self
                .segments
                .last()
                .map_or(FIRST_SEGMENT, |s| (2 * s.capacity()).min(LAST_SEGMENT));
            self.segments.push(Vec::with_capacity(size));
        }
        let seg = self.segments.len() - 1;
        let arena = &mut self.segments[seg];
        self.starts.push((seg as u32, arena.len() as u32));
        modeled::encode(page, arena);
    }

    /// Decode whole page `p` into `out` (PAGE bytes).
    fn decode_page(&self, p: usize, out: &mut [u8]) {
        let (seg, start) = self.starts[p];
        let arena = &self.segments[seg as usize];
        let end = match self.starts.get(p + 1) {
            Some(&(next_seg, next)) if next_seg == seg => next as usize,
            _ => arena.len(),
        };
        modeled::decode(&arena[start as usize..end], out).expect("a page its encoder wrote");
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
    fn pages_across_segments_read_back() {
        // Dense pages take a whole page each: 64 KiB holds 15, so 300 pages fill segments of
        // 64 KiB, 128 KiB, ... 1 MiB; mixed with sparse ones so segments end unevenly.
        let mut data = Vec::new();
        for i in 0..300u32 {
            if i % 7 == 3 {
                data.extend(modeled_like(PAGE, i as u64));
            } else {
                data.extend((0..PAGE as u32).map(|j| ((j * 31 + i * 17) % 251) as u8));
            }
        }
        let mut s = SparseBytes::default();
        s.extend(&data);
        assert!(s.segments.len() > 3, "{} segments", s.segments.len());
        assert!(s.segments.iter().all(|g| g.capacity() <= LAST_SEGMENT));
        assert_eq!(s.to_vec(), data);
        let mut out = vec![0; 3 * PAGE];
        for p in [0, 14, 15, 16, 45, 46, 298] {
            let len = (3 * PAGE).min(data.len() - p * PAGE - 10);
            s.read((p * PAGE + 10) as u64, &mut out[..len]);
            assert_eq!(
                &out[..len],
                &data[p * PAGE + 10..p * PAGE + 10 + len],
                "page {p}"
            );
        }
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
