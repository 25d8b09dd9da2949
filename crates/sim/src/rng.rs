//! One seeded random number generator, split into streams by label.
//!
//! The algorithm is pinned here (xoshiro256** seeded through SplitMix64) so results never change
//! with a library upgrade. Each component asks for its own stream with [`Rng::stream`]; a stream
//! depends only on the root seed and its label, so adding a consumer shifts no other stream.

/// A small, fast, deterministic PRNG (xoshiro256**).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
    seed: u64,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a 64 of a label, used to derive stream seeds.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s, seed }
    }

    /// The root seed this generator was made from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// An independent stream named `label` (for example `"workload.fio.job0"`).
    pub fn stream(&self, label: &str) -> Rng {
        Rng::new(self.seed ^ fnv1a(label.as_bytes()).rotate_left(17))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; `n` must be positive).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below(0)");
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `numerator / denominator` (integer ratio, no floats).
    pub fn chance(&mut self, numerator: u64, denominator: u64) -> bool {
        self.below(denominator) < numerator
    }

    /// `input` changed in one to four random ways, as a fuzzer's mutator would: a flipped
    /// bit, a truncation, a delimiter or extreme byte, a piece repeated elsewhere, a junk
    /// token (huge, negative, unit-suffixed numbers, NUL, non-ASCII), a byte removed.
    pub fn mutate(&mut self, input: &[u8]) -> Vec<u8> {
        const BYTES: [u8; 12] = [
            b'=', b'\n', b'[', b']', b'0', b'"', b'.', b'-', 0, 0x7f, 0x80, 0xff,
        ];
        const JUNK: [&str; 8] = [
            "99999999999999999999",
            "-1",
            "0",
            "4294967296",
            "1k",
            "%",
            "\0",
            "é",
        ];
        let mut v = input.to_vec();
        for _ in 0..1 + self.below(4) {
            let n = v.len() as u64;
            match self.below(6) {
                0 if n > 0 => {
                    let i = self.below(n) as usize;
                    v[i] ^= 1 << self.below(8);
                }
                1 if n > 0 => v.truncate(self.below(n) as usize),
                2 if n > 0 => {
                    let i = self.below(n) as usize;
                    v[i] = BYTES[self.below(BYTES.len() as u64) as usize];
                }
                3 if n > 1 => {
                    let a = self.below(n) as usize;
                    let b = a + self.below((n as usize - a).min(64) as u64) as usize;
                    let at = self.below(n) as usize;
                    let piece = v[a..b].to_vec();
                    v.splice(at..at, piece);
                }
                4 => {
                    let at = self.below(n + 1) as usize;
                    let junk = JUNK[self.below(JUNK.len() as u64) as usize];
                    v.splice(at..at, junk.bytes());
                }
                _ if n > 0 => {
                    let i = self.below(n) as usize;
                    v.remove(i);
                }
                _ => {}
            }
        }
        v
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for c in &mut chunks {
            c.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let v = self.next_u64().to_le_bytes();
            rest.copy_from_slice(&v[..rest.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_reproducible_by_seed_and_change_the_input() {
        let input = b"[job]\nrw=write\nbs=4k\n";
        let (mut a, mut b) = (Rng::new(9), Rng::new(9));
        let mut changed = 0;
        for _ in 0..100 {
            let (x, y) = (a.mutate(input), b.mutate(input));
            assert_eq!(x, y);
            changed += usize::from(x != input);
        }
        assert!(changed > 90, "{changed}");
        assert!(
            Rng::new(1).mutate(b"").len() <= 20,
            "junk on empty input stays small"
        );
    }

    #[test]
    fn same_seed_same_stream_and_labels_differ() {
        let a = Rng::new(7);
        let mut s1 = a.stream("x");
        let mut s2 = Rng::new(7).stream("x");
        let mut s3 = a.stream("y");
        let v1: Vec<u64> = (0..4).map(|_| s1.next_u64()).collect();
        let v2: Vec<u64> = (0..4).map(|_| s2.next_u64()).collect();
        let v3: Vec<u64> = (0..4).map(|_| s3.next_u64()).collect();
        assert_eq!(v1, v2);
        assert_ne!(v1, v3);
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let v = r.below(10);
            assert!(v < 10);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
}
