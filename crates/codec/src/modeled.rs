//! The modeled payload (`--payload=modeled`, issue 25): compressed sizes drawn from a codec's
//! measured distribution instead of running the codec.
//!
//! In a modeled run the values are runs of one byte ([`VALUE`]) of the dataset's sizes (keys
//! and every structure around them stay real), so a block is mostly runs. A [`Coder`] built
//! with a [`SizeModel`] "compresses" a buffer by encoding its runs (cheap and exactly
//! reversible), counting what its bytes stand for ([`Census`]), and padding the encoding to a
//! stored size: record bytes (values and literals) at a ratio drawn from the distribution the
//! real codec gave on the dataset's own records of that size ([`SizeModel::stored_len`]), zero
//! runs (block and LBA padding, zero in a real run too) as nothing, [`PAD`] runs (compressed
//! bytes) whole. It "decompresses" by decoding the runs. Virtual time is charged by the
//! engine profiles on raw sizes as in a real run, so only stored sizes differ, and they follow
//! the measured distribution.
//!
//! The draw is a pure function of the input's bytes (an xxh3 hash of their encoding picks the
//! quantile), so a run is as deterministic as a real one. A buffer whose encoding is longer than the draw (a
//! Bloom filter, dense metadata) is stored at its encoding's length: incompressible data stays
//! incompressible, and modeled output compressed again (a host-compressed table on a
//! compressing device) stays its size, as real compressed data does.
//!
//! [`Coder`]: crate::Coder

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::{Codec, CodecError, Coder};

/// First byte of every modeled encoding.
const MAGIC: u8 = 0xA5;
/// The byte a modeled value is made of (`Values::modeled`): record data whose compressed size
/// the model draws. Zeros are left for what is zero in a real run too (block and LBA padding),
/// which real codecs compress to next to nothing.
pub const VALUE: u8 = 0x56;
/// What pads an encoding to its drawn size: it stands for compressed bytes, which no codec
/// shrinks again.
pub const PAD: u8 = 0xA5;
/// log2 of the smallest size class.
const FIRST_CLASS_LOG2: u32 = 8;
/// Quantiles kept per input size: 0, 1/64, ..., 1.
pub const QUANTILES: usize = 65;
/// Input sizes the distribution is measured at (bytes): powers of two from 2^FIRST_CLASS_LOG2;
/// others interpolate in log size.
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
        // Size classes are consecutive powers of two: class c at log2 = FIRST_CLASS_LOG2 + c.
        let len = (raw_len.max(1) as f64).log2();
        let last = SIZE_CLASSES.len() - 1;
        if len <= FIRST_CLASS_LOG2 as f64 {
            return Some(at(0));
        }
        if len >= (FIRST_CLASS_LOG2 as usize + last) as f64 {
            return Some(at(last));
        }
        let c = len.floor() as usize - FIRST_CLASS_LOG2 as usize;
        let f = len - (FIRST_CLASS_LOG2 as usize + c) as f64;
        Some(at(c) * (1.0 - f) + at(c + 1) * f)
    }

    /// The stored size of bytes whose [`Census`] is `c` compressed by `codec`: their record
    /// bytes at a ratio drawn from the measured distribution for that many bytes (at a
    /// quantile `hash` picks), their padding whole, their zero and other runs as nothing;
    /// never below what `encoded` (their run encoding) takes. Bytes that hold padding are
    /// compressed already: their literals are kept whole too.
    pub fn stored_len(&self, codec: Codec, c: &Census, hash: u64, encoded: usize) -> usize {
        let u = (hash >> 11) as f64 / (1u64 << 53) as f64;
        let data = c.data as usize;
        // Bytes beside padding are compressed output too (the encodings it pads).
        let drawn = match self.ratio(codec, data, u) {
            Some(r) if c.padding == 0 => (r * data as f64).ceil() as usize,
            _ => data,
        };
        (drawn + c.padding as usize).max(encoded)
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

/// Leading bytes of `s` equal to `b`, eight at a time.
fn run_of(s: &[u8], b: u8) -> usize {
    let word = u64::from_ne_bytes([b; 8]);
    let mut n = 0;
    for w in s.chunks_exact(8) {
        let x = u64::from_ne_bytes(w.try_into().expect("8 bytes")) ^ word;
        if x != 0 {
            return n + (x.to_le().trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + s[n..].iter().take_while(|&&c| c == b).count()
}

/// Runs shorter than this stay inside a literal.
const MIN_RUN: usize = 8;

/// What a modeled buffer's bytes stand for, as its encoder counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    /// Record bytes: literals (keys, headers) and runs of [`VALUE`] (a value's bytes).
    pub data: u64,
    /// Runs of [`PAD`]: compressed bytes, which do not compress again.
    pub padding: u64,
    /// Runs of zeros or of another byte: compress to next to nothing in a real codec.
    pub runs: u64,
}

const T_RUN: u8 = 0;
const T_LITERAL: u8 = 1;

/// Append the run encoding of `src` to `out`: the magic, the length, then tokens (a run:
/// 0, its byte, its length; a literal: 1, its length, its bytes). Returns what the bytes
/// stand for.
pub fn encode(src: &[u8], out: &mut Vec<u8>) -> Census {
    out.push(MAGIC);
    put_varint(out, src.len() as u64);
    let mut c = Census::default();
    let (mut i, mut lit) = (0, 0);
    let flush = |out: &mut Vec<u8>, c: &mut Census, from: usize, to: usize| {
        if from < to {
            out.push(T_LITERAL);
            put_varint(out, (to - from) as u64);
            out.extend_from_slice(&src[from..to]);
            c.data += (to - from) as u64;
        }
    };
    while i < src.len() {
        let b = src[i];
        let run = run_of(&src[i..], b);
        if run < MIN_RUN {
            i += run;
            continue;
        }
        flush(out, &mut c, lit, i);
        out.push(T_RUN);
        out.push(b);
        put_varint(out, run as u64);
        match b {
            VALUE => c.data += run as u64,
            PAD => c.padding += run as u64,
            _ => c.runs += run as u64,
        }
        i += run;
        lit = i;
    }
    flush(out, &mut c, lit, src.len());
    c
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
        let t = *src.get(at).ok_or_else(|| bad("cut short"))?;
        at += 1;
        let byte = match t {
            T_RUN => {
                at += 1;
                Some(*src.get(at - 1).ok_or_else(|| bad("cut short"))?)
            }
            T_LITERAL => None,
            _ => return Err(bad("unknown token")),
        };
        let n = get_varint(src, &mut at).ok_or_else(|| bad("bad length"))?;
        if n == 0 || n > (dst.len() - o) as u64 {
            return Err(bad("token past the end"));
        }
        let n = n as usize;
        match byte {
            Some(b) => dst[o..o + n].fill(b),
            None => {
                let lit = src
                    .get(at..at + n)
                    .ok_or_else(|| bad("literal cut short"))?;
                dst[o..o + n].copy_from_slice(lit);
                at += n;
            }
        }
        o += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Modeled records: keys, then values of VALUE bytes.
    fn record_stream(len: usize, seed: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        let mut k = seed as u64 * 7919;
        while out.len() < len {
            k = k.wrapping_mul(6364136223846793005).wrapping_add(1);
            out.extend_from_slice(format!("user{}", k % 1_000_000_007).as_bytes());
            out.resize(out.len() + 300 + (k % 900) as usize, VALUE);
        }
        out.truncate(len);
        out
    }

    #[test]
    fn runs_round_trip_and_are_small() {
        for (i, len) in [0usize, 1, 7, 8, 9, 100, 4096, 65536]
            .into_iter()
            .enumerate()
        {
            let src = record_stream(len, i);
            let mut enc = vec![0xEE]; // appends after what is there
            let c = encode(&src, &mut enc);
            assert_eq!(c.data, len as u64, "keys and values are record data");
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
    fn size_classes_are_the_powers_of_two_ratio_assumes() {
        for (i, &s) in SIZE_CLASSES.iter().enumerate() {
            assert_eq!(s, 1 << (FIRST_CLASS_LOG2 as usize + i));
        }
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
        assert!(decode(&[MAGIC, 4, T_RUN, 0, 0], &mut [0; 4]).is_err());
        assert!(decode(&[MAGIC, 4, T_RUN, 0, 0xff, 0xff, 0x0f], &mut [0; 4]).is_err());
        assert!(decode(&[MAGIC, 4, 7, 0, 4], &mut [0; 4]).is_err());
        assert!(decode(&[MAGIC, 4, T_LITERAL, 4, 1, 2], &mut [0; 4]).is_err());
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
        let c = encode(&src, &mut enc);
        let h = xxh3_64(&enc);
        let a = m.stored_len(Codec::ZSTD1, &c, h, enc.len());
        // Zeros (block padding) add nothing; PAD (compressed bytes) adds itself.
        let mut padded = src.clone();
        padded.extend([0u8; 4096]);
        padded.extend([PAD; 100]);
        let c2 = encode(&padded, &mut Vec::new());
        assert_eq!((c2.data, c2.runs, c2.padding), (4096, 4096, 100));
        assert_eq!(m.stored_len(Codec::ZSTD1, &c2, h, 0), 4096 + 100);
        let mut zeros = src.clone();
        zeros.extend([0u8; 4096]);
        let c3 = encode(&zeros, &mut Vec::new());
        assert_eq!(m.stored_len(Codec::ZSTD1, &c3, h, 0), a);
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
        assert_eq!(m.stored_len(Codec::ZSTD1, &c, h, 4000), 4000);
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
        // Through a Coder: round trip, and modeled output compressed again stays its size.
        let mut coder = Coder::modeled(Arc::new(m.clone()));
        assert!(coder.is_modeled());
        let mut once = Vec::new();
        let n = coder.compress(Codec::ZSTD1, &src, &mut once);
        assert_eq!(n, a);
        assert!(n < src.len() / 2, "{n}");
        let mut back = vec![0; src.len()];
        coder.decompress(Codec::ZSTD1, &once, &mut back).unwrap();
        assert_eq!(back, src);
        let mut twice = Vec::new();
        let again = coder.compress(Codec::ZSTD1, &once, &mut twice);
        assert!(again >= once.len(), "{again} < {}", once.len());
        let mut back2 = vec![0; once.len()];
        coder.decompress(Codec::ZSTD1, &twice, &mut back2).unwrap();
        assert_eq!(back2, once);
        // A damaged table is refused.
        let mut bad = m.clone();
        bad.codecs[0].ratios[2].pop();
        assert!(bad.validate().is_err());
        bad = m.clone();
        bad.codecs[0].ratios[0][0] = f32::NAN;
        assert!(bad.validate().is_err());
    }
}
