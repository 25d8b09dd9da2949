//! The modeled payload (`--payload=modeled`, issue 25): compressed sizes drawn from a codec's
//! measured distribution instead of running the codec.
//!
//! In a modeled run the values are zeros of the dataset's sizes (keys and every structure
//! around them stay real), so the bytes a block holds are mostly zero runs. A [`Coder`] built
//! with a [`SizeModel`] "compresses" a buffer by encoding its zero runs (cheap and exactly
//! reversible) and padding that to a size drawn from the distribution the real codec gave on
//! the dataset's own bytes at that input size ([`SizeModel::stored_len`]); it "decompresses"
//! by decoding the zero runs. Virtual time is charged by the engine profiles on raw sizes as
//! in a real run, so only the stored sizes differ, and they follow the measured distribution.
//!
//! The draw is a pure function of the input's bytes (an xxh3 hash picks the quantile), so a
//! run is as deterministic as a real one. A buffer whose zero-run encoding is longer than the
//! draw (a Bloom filter, dense metadata) is stored at its encoding's length: incompressible
//! data stays incompressible.
//!
//! [`Coder`]: crate::Coder

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::{Codec, CodecError, Coder};

/// First byte of every modeled encoding.
const MAGIC: u8 = 0xA5;
/// Quantiles kept per input size: 0, 1/64, ..., 1.
pub const QUANTILES: usize = 65;
/// Input sizes the distribution is measured at (bytes); others interpolate in log size.
pub const SIZE_CLASSES: [u32; 11] = [
    256,
    512,
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
];

/// A run's size model as options hold it: shared, and compared by identity (so options that
/// hold one can stay `Eq`).
#[derive(Clone)]
pub struct Modeled(pub Arc<SizeModel>);

impl std::fmt::Debug for Modeled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Modeled({})", self.0.dataset)
    }
}

impl PartialEq for Modeled {
    fn eq(&self, other: &Modeled) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Modeled {}

/// One codec's measured compressed/raw ratios: `ratios[c][q]` the `q`/64 quantile at input
/// size `SIZE_CLASSES[c]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CodecSizes {
    pub codec: Codec,
    pub ratios: Vec<Vec<f32>>,
}

/// Compressibility of one dataset under each codec, as measured on its bytes (see
/// `znslab corpus model`), and the corpus length a value's offset was drawn below.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeModel {
    pub dataset: String,
    /// The corpus it was measured on: length and xxh3 (a rebuilt corpus is measured again).
    pub corpus_len: u64,
    pub corpus_xxh3: u64,
    pub codecs: Vec<CodecSizes>,
}

impl SizeModel {
    /// Measure every codec in `codecs` on inputs `sample(len, i)` gives (the `i`-th input of
    /// `len` bytes; the caller lays out the dataset's records as the store does).
    pub fn measure(
        dataset: &str,
        corpus: &[u8],
        codecs: &[Codec],
        mut sample: impl FnMut(usize, usize) -> Vec<u8>,
    ) -> SizeModel {
        let mut coder = Coder::new();
        let mut out = Vec::new();
        let inputs: Vec<Vec<Vec<u8>>> = SIZE_CLASSES
            .iter()
            .map(|&len| {
                // About 8 MiB per size, at least 64 inputs and at most 2000.
                let n = ((8usize << 20) / len as usize).clamp(64, 2000);
                (0..n).map(|i| sample(len as usize, i)).collect()
            })
            .collect();
        let codecs = codecs
            .iter()
            .map(|&codec| CodecSizes {
                codec,
                ratios: inputs
                    .iter()
                    .map(|class| {
                        let mut r: Vec<f32> = class
                            .iter()
                            .map(|src| {
                                out.clear();
                                let n = coder.compress(codec, src, &mut out);
                                n as f32 / src.len() as f32
                            })
                            .collect();
                        r.sort_by(f32::total_cmp);
                        (0..QUANTILES)
                            .map(|q| r[(q * (r.len() - 1)).div_ceil(QUANTILES - 1)])
                            .collect()
                    })
                    .collect(),
            })
            .collect();
        SizeModel {
            dataset: dataset.to_string(),
            corpus_len: corpus.len() as u64,
            corpus_xxh3: xxh3_64(corpus),
            codecs,
        }
    }

    /// Check a model read from a file: every codec has a full table of ratios in (0, 2].
    pub fn validate(&self) -> Result<(), String> {
        if self.codecs.is_empty() {
            return Err("no codec measured".into());
        }
        for c in &self.codecs {
            if c.ratios.len() != SIZE_CLASSES.len() || c.ratios.iter().any(|q| q.len() != QUANTILES)
            {
                return Err(format!(
                    "{}: expected {} sizes x {QUANTILES} quantiles",
                    c.codec,
                    SIZE_CLASSES.len()
                ));
            }
            if let Some(r) = c
                .ratios
                .iter()
                .flatten()
                .find(|r| !(r.is_finite() && **r > 0.0 && **r <= 2.0))
            {
                return Err(format!("{}: ratio {r} out of (0, 2]", c.codec));
            }
        }
        Ok(())
    }

    /// The ratio table of `codec` (levels of one codec share the first measured).
    fn table(&self, codec: Codec) -> Option<&CodecSizes> {
        let same_kind = |c: Codec| std::mem::discriminant(&c) == std::mem::discriminant(&codec);
        self.codecs
            .iter()
            .find(|c| c.codec == codec)
            .or_else(|| self.codecs.iter().find(|c| same_kind(c.codec)))
    }

    /// The compressed size `codec` is taken to give `raw_len` bytes at quantile `u` in [0, 1):
    /// the quantiles interpolated at `u`, then between size classes in log size. None when
    /// the codec was not measured.
    pub fn ratio(&self, codec: Codec, raw_len: usize, u: f64) -> Option<f64> {
        let t = self.table(codec)?;
        let at = |class: usize| {
            let q = &t.ratios[class];
            let x = u.clamp(0.0, 1.0) * (QUANTILES - 1) as f64;
            let i = (x.floor() as usize).min(QUANTILES - 2);
            let f = x - i as f64;
            q[i] as f64 * (1.0 - f) + q[i + 1] as f64 * f
        };
        let len = (raw_len.max(1) as f64).log2();
        let first = (SIZE_CLASSES[0] as f64).log2();
        let last = (SIZE_CLASSES[SIZE_CLASSES.len() - 1] as f64).log2();
        if len <= first {
            return Some(at(0));
        }
        if len >= last {
            return Some(at(SIZE_CLASSES.len() - 1));
        }
        let c = SIZE_CLASSES.partition_point(|&s| (s as f64).log2() <= len) - 1;
        let (l0, l1) = (
            (SIZE_CLASSES[c] as f64).log2(),
            (SIZE_CLASSES[c + 1] as f64).log2(),
        );
        let f = (len - l0) / (l1 - l0);
        Some(at(c) * (1.0 - f) + at(c + 1) * f)
    }

    /// The stored size of `src` compressed by `codec`: drawn from the measured distribution at
    /// a quantile its bytes hash to, never below what `encoded` (its zero-run encoding) takes.
    pub fn stored_len(&self, codec: Codec, src: &[u8], encoded: usize) -> usize {
        let h = xxh3_64(src);
        let u = (h >> 11) as f64 / (1u64 << 53) as f64;
        let drawn = match self.ratio(codec, src.len(), u) {
            Some(r) => (r * src.len() as f64).ceil() as usize,
            None => src.len(),
        };
        drawn.max(encoded)
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(src: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *src.get(*at)?;
        *at += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// Leading zero bytes of `s`, eight at a time.
fn zeros_at(s: &[u8]) -> usize {
    let mut n = 0;
    for w in s.chunks_exact(8) {
        let x = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        if x != 0 {
            return n + x.trailing_zeros() as usize / 8;
        }
        n += 8;
    }
    n + s[n..].iter().take_while(|&&b| b == 0).count()
}

/// Zero runs shorter than this stay inside a literal (a varint pair costs two bytes).
const MIN_RUN: usize = 8;

/// Append the zero-run encoding of `src` to `out`: the magic, the length, then pairs of
/// (zero run, literal length, literal bytes).
pub fn encode(src: &[u8], out: &mut Vec<u8>) {
    out.push(MAGIC);
    put_varint(out, src.len() as u64);
    let mut i = 0;
    while i < src.len() {
        let run = zeros_at(&src[i..]);
        let lit = i + run;
        let mut j = lit;
        while j < src.len() {
            if src[j] != 0 {
                j += 1;
                continue;
            }
            let z = zeros_at(&src[j..]);
            if z >= MIN_RUN || j + z == src.len() {
                break;
            }
            j += z;
        }
        put_varint(out, run as u64);
        put_varint(out, (j - lit) as u64);
        out.extend_from_slice(&src[lit..j]);
        i = j;
    }
}

/// Decode what [`encode`] wrote (padding after it is ignored) into exactly `dst`.
pub fn decode(src: &[u8], dst: &mut [u8]) -> Result<(), CodecError> {
    let bad = |detail: &str| CodecError::Corrupt {
        codec: "modeled".into(),
        detail: detail.into(),
    };
    if src.first() != Some(&MAGIC) {
        return Err(bad("not a modeled encoding"));
    }
    let mut at = 1;
    let len = get_varint(src, &mut at).ok_or_else(|| bad("bad length"))?;
    if len != dst.len() as u64 {
        return Err(CodecError::SizeMismatch {
            codec: "modeled".into(),
            got: len.min(usize::MAX as u64) as usize,
            expected: dst.len(),
        });
    }
    let mut o = 0;
    while o < dst.len() {
        let run = get_varint(src, &mut at).ok_or_else(|| bad("bad run"))?;
        let lit = get_varint(src, &mut at).ok_or_else(|| bad("bad literal"))?;
        let end_run = (o as u64)
            .checked_add(run)
            .filter(|&e| e <= dst.len() as u64)
            .ok_or_else(|| bad("run past the end"))? as usize;
        dst[o..end_run].fill(0);
        o = end_run;
        let lit = lit as usize;
        if lit > dst.len() - o || lit > src.len() - at {
            return Err(bad("literal past the end"));
        }
        dst[o..o + lit].copy_from_slice(&src[at..at + lit]);
        o += lit;
        at += lit;
        if run == 0 && lit == 0 {
            return Err(bad("empty pair"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record_stream(len: usize, seed: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut k = seed as u64 * 7919;
        while out.len() < len {
            k = k.wrapping_mul(6364136223846793005).wrapping_add(1);
            out.extend_from_slice(format!("user{:020}", k % 1_000_000_007).as_bytes());
            out.resize(out.len() + 300 + (k % 900) as usize, 0);
        }
        out.truncate(len);
        out
    }

    #[test]
    fn zero_runs_round_trip_and_are_small() {
        for (i, len) in [0usize, 1, 7, 8, 9, 100, 4096, 65536]
            .into_iter()
            .enumerate()
        {
            let src = record_stream(len, i);
            let mut enc = vec![0xEE]; // appends after what is there
            encode(&src, &mut enc);
            let mut back = vec![0x11; len];
            decode(&enc[1..], &mut back).unwrap();
            assert_eq!(back, src, "len {len}");
            if len >= 4096 {
                assert!(enc.len() < len / 10, "{len}: {}", enc.len());
            }
            // Padding after the encoding is ignored.
            enc.resize(enc.len() + 50, 0);
            decode(&enc[1..], &mut back).unwrap();
            assert_eq!(back, src);
        }
        // Dense bytes round trip too (longer than the input: stored at that length).
        let dense: Vec<u8> = (0..4096u32).map(|i| (i * 31 % 251 + 1) as u8).collect();
        let mut enc = Vec::new();
        encode(&dense, &mut enc);
        let mut back = vec![0; 4096];
        decode(&enc, &mut back).unwrap();
        assert_eq!(back, dense);
    }

    #[test]
    fn corrupt_encodings_are_errors_not_panics() {
        let src = record_stream(4096, 3);
        let mut enc = Vec::new();
        encode(&src, &mut enc);
        let mut out = vec![0; 4096];
        for cut in [0, 1, 2, 5, enc.len() / 2] {
            assert!(decode(&enc[..cut], &mut out).is_err(), "cut {cut}");
        }
        let mut wrong = vec![0; 4000];
        assert!(decode(&enc, &mut wrong).is_err());
        let mut flipped = enc.clone();
        flipped[3] ^= 0x7f;
        let _ = decode(&flipped, &mut out); // no panic
        assert!(decode(&[MAGIC, 4, 0, 0], &mut [0; 4]).is_err());
        assert!(decode(&[MAGIC, 4, 0xff, 0xff, 0xff, 0x0f, 0], &mut [0; 4]).is_err());
    }

    fn text(len: usize, i: usize) -> Vec<u8> {
        let words = b"zone write pointer flash page compressed chunk metadata log ";
        (0..len)
            .map(|j| words[(j * 7 + j / 13 + i * 3) % words.len()])
            .collect()
    }

    #[test]
    fn draws_follow_the_measured_ratios() {
        let corpus = text(1 << 16, 0);
        let m = SizeModel::measure("t", &corpus, &[Codec::ZSTD1, Codec::None], text);
        m.validate().unwrap();
        // The draw's quantile comes from the bytes: the same input, the same size.
        let src = record_stream(4096, 1);
        let mut enc = Vec::new();
        encode(&src, &mut enc);
        let a = m.stored_len(Codec::ZSTD1, &src, enc.len());
        assert_eq!(a, m.stored_len(Codec::ZSTD1, &src, enc.len()));
        let lo = m.ratio(Codec::ZSTD1, 4096, 0.0).unwrap() * 4096.0;
        let hi = m.ratio(Codec::ZSTD1, 4096, 1.0).unwrap() * 4096.0;
        assert!((lo.floor() as usize..=hi.ceil() as usize).contains(&a));
        // Codec None: ratio 1; a level of zstd not measured uses zstd-1's table.
        assert!((m.ratio(Codec::None, 5000, 0.5).unwrap() - 1.0).abs() < 0.01);
        assert_eq!(
            m.ratio(Codec::Zstd(3), 4096, 0.3),
            m.ratio(Codec::ZSTD1, 4096, 0.3)
        );
        assert_eq!(m.ratio(Codec::Lz4, 4096, 0.3), None);
        // Never below the encoding's length.
        assert_eq!(m.stored_len(Codec::ZSTD1, &src, 4000), 4000);
        // The mean of many draws is near the measured mean ratio.
        let mut coder = Coder::new();
        let (mut real, mut drawn) = (0usize, 0usize);
        for i in 0..300 {
            let t = text(4096, i + 1000);
            let mut out = Vec::new();
            real += coder.compress(Codec::ZSTD1, &t, &mut out);
            let salted = record_stream(4096, i);
            drawn += (m.ratio(
                Codec::ZSTD1,
                4096,
                xxh3_64(&salted) as f64 / u64::MAX as f64,
            ))
            .unwrap()
            .mul_add(4096.0, 0.0) as usize;
        }
        let r = drawn as f64 / real as f64;
        assert!((0.8..1.25).contains(&r), "{r}");
        // A damaged table is refused.
        let mut bad = m.clone();
        bad.codecs[0].ratios[2].pop();
        assert!(bad.validate().is_err());
        bad = m.clone();
        bad.codecs[0].ratios[0][0] = f32::NAN;
        assert!(bad.validate().is_err());
    }
}
