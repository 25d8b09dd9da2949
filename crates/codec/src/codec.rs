//! The codecs: real compressors on real bytes, one reusable context each.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::modeled::{self, Modeled, SizeModel};

/// A codec and its level. Written as `none`, `zstd-1` (any zstd level, negative = fast),
/// `lz4`, `snappy`, `deflate-1` (libdeflate levels 1-12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Codec {
    None,
    Zstd(i32),
    Lz4,
    Snappy,
    Deflate(i32),
}

/// A codec name or a (de)compression that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    #[error("unknown codec {0:?} (expected none, zstd-N, lz4, snappy or deflate-N)")]
    UnknownCodec(String),
    #[error("codec {codec}: level {level} out of range {range}")]
    BadLevel {
        codec: &'static str,
        level: i32,
        range: &'static str,
    },
    #[error("{codec}: corrupt input ({detail})")]
    Corrupt { codec: String, detail: String },
    #[error("{codec}: decompressed {got} bytes, expected {expected}")]
    SizeMismatch {
        codec: String,
        got: usize,
        expected: usize,
    },
}

impl Codec {
    /// zstd's level 1, which CCZNS, Balloon-ZNS and RocksDB's ZSTD scheme use.
    pub const ZSTD1: Codec = Codec::Zstd(1);

    pub fn name(self) -> String {
        match self {
            Codec::None => "none".into(),
            Codec::Zstd(l) => format!("zstd-{l}"),
            Codec::Lz4 => "lz4".into(),
            Codec::Snappy => "snappy".into(),
            Codec::Deflate(l) => format!("deflate-{l}"),
        }
    }

    /// The largest output `compress` can produce for `len` input bytes.
    pub fn max_compressed_len(self, len: usize) -> usize {
        match self {
            Codec::None => len,
            Codec::Zstd(_) => zstd::zstd_safe::compress_bound(len),
            Codec::Lz4 => lz4_flex::block::get_maximum_output_size(len),
            Codec::Snappy => snap::raw::max_compress_len(len),
            // libdeflate's bound for one block plus headers; generous and cheap.
            Codec::Deflate(_) => len + len / 8 + 64,
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Codec {
    type Err = CodecError;
    fn from_str(s: &str) -> Result<Codec, CodecError> {
        let unknown = || CodecError::UnknownCodec(s.to_string());
        let level = |rest: &str| rest.parse::<i32>().map_err(|_| unknown());
        match s {
            "none" => return Ok(Codec::None),
            "lz4" => return Ok(Codec::Lz4),
            "snappy" => return Ok(Codec::Snappy),
            "zstd" => return Ok(Codec::Zstd(1)),
            "deflate" => return Ok(Codec::Deflate(1)),
            _ => {}
        }
        if let Some(rest) = s.strip_prefix("zstd-") {
            let l = level(rest)?;
            if !(-7..=22).contains(&l) || l == 0 {
                return Err(CodecError::BadLevel {
                    codec: "zstd",
                    level: l,
                    range: "-7..=-1 or 1..=22",
                });
            }
            return Ok(Codec::Zstd(l));
        }
        if let Some(rest) = s.strip_prefix("deflate-") {
            let l = level(rest)?;
            if !(1..=12).contains(&l) {
                return Err(CodecError::BadLevel {
                    codec: "deflate",
                    level: l,
                    range: "1..=12",
                });
            }
            return Ok(Codec::Deflate(l));
        }
        Err(unknown())
    }
}

impl TryFrom<String> for Codec {
    type Error = CodecError;
    fn try_from(s: String) -> Result<Codec, CodecError> {
        s.parse()
    }
}

impl From<Codec> for String {
    fn from(c: Codec) -> String {
        c.name()
    }
}

/// Contexts for every codec, created on first use and reused (a zstd context per call would
/// cost more than compressing a 4 KiB chunk). One per engine or thread of the simulation.
///
/// A coder made by [`Coder::modeled`] runs no codec: sizes come from a measured distribution
/// and the bytes from a run encoding (see [`crate::modeled`]).
#[derive(Default)]
pub struct Coder {
    model: Option<Arc<SizeModel>>,
    zstd_c: Vec<(i32, zstd::bulk::Compressor<'static>)>,
    zstd_d: Option<zstd::bulk::Decompressor<'static>>,
    snap_e: Option<snap::raw::Encoder>,
    snap_d: Option<snap::raw::Decoder>,
    deflate_c: Vec<(i32, libdeflater::Compressor)>,
    deflate_d: Option<libdeflater::Decompressor>,
}

impl Coder {
    pub fn new() -> Coder {
        Coder::default()
    }

    /// A coder for a modeled payload: `compress` gives sizes drawn from `model`.
    pub fn modeled(model: Arc<SizeModel>) -> Coder {
        Coder {
            model: Some(model),
            ..Coder::default()
        }
    }

    /// A real coder, or a modeled one when `model` is given.
    pub fn for_payload(model: Option<&Modeled>) -> Coder {
        model.map_or_else(Coder::new, |m| Coder::modeled(m.0.clone()))
    }

    /// Whether this coder models sizes instead of running codecs.
    pub fn is_modeled(&self) -> bool {
        self.model.is_some()
    }

    /// Compress `src` with `codec`, appending the output to `dst`; returns the output length.
    pub fn compress(&mut self, codec: Codec, src: &[u8], dst: &mut Vec<u8>) -> usize {
        let start = dst.len();
        if let (Some(m), false) = (&self.model, codec == Codec::None) {
            let census = modeled::encode(src, dst);
            // The encoding says everything the bytes do, in far fewer bytes to hash.
            let hash = xxhash_rust::xxh3::xxh3_64(&dst[start..]);
            let n = m.stored_len(codec, &census, hash, dst.len() - start);
            dst.resize(start + n, modeled::PAD);
            return n;
        }
        dst.resize(start + codec.max_compressed_len(src.len()), 0);
        let out = &mut dst[start..];
        let n = match codec {
            Codec::None => {
                out[..src.len()].copy_from_slice(src);
                src.len()
            }
            Codec::Zstd(level) => {
                let c = match self.zstd_c.iter().position(|(l, _)| *l == level) {
                    Some(i) => &mut self.zstd_c[i].1,
                    None => {
                        let c = zstd::bulk::Compressor::new(level).expect("valid zstd level");
                        self.zstd_c.push((level, c));
                        &mut self.zstd_c.last_mut().expect("just pushed").1
                    }
                };
                c.compress_to_buffer(src, out)
                    .expect("output sized by compress_bound")
            }
            Codec::Lz4 => lz4_flex::block::compress_into(src, out).expect("output sized by bound"),
            Codec::Snappy => self
                .snap_e
                .get_or_insert_with(snap::raw::Encoder::new)
                .compress(src, out)
                .expect("output sized by max_compress_len"),
            Codec::Deflate(level) => {
                let c = match self.deflate_c.iter().position(|(l, _)| *l == level) {
                    Some(i) => &mut self.deflate_c[i].1,
                    None => {
                        let lvl = libdeflater::CompressionLvl::new(level)
                            .expect("deflate level checked at parse");
                        self.deflate_c
                            .push((level, libdeflater::Compressor::new(lvl)));
                        &mut self.deflate_c.last_mut().expect("just pushed").1
                    }
                };
                c.deflate_compress(src, out).expect("output sized by bound")
            }
        };
        dst.truncate(start + n);
        n
    }

    /// Decompress `src` into exactly `dst.len()` bytes.
    pub fn decompress(
        &mut self,
        codec: Codec,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<(), CodecError> {
        if self.model.is_some() && codec != Codec::None {
            return modeled::decode(src, dst);
        }
        let corrupt = |detail: String| CodecError::Corrupt {
            codec: codec.name(),
            detail,
        };
        let got = match codec {
            Codec::None => {
                if src.len() != dst.len() {
                    src.len()
                } else {
                    dst.copy_from_slice(src);
                    src.len()
                }
            }
            Codec::Zstd(_) => {
                let d = match &mut self.zstd_d {
                    Some(d) => d,
                    None => self.zstd_d.insert(
                        zstd::bulk::Decompressor::new().map_err(|e| corrupt(e.to_string()))?,
                    ),
                };
                d.decompress_to_buffer(src, dst)
                    .map_err(|e| corrupt(e.to_string()))?
            }
            Codec::Lz4 => {
                lz4_flex::block::decompress_into(src, dst).map_err(|e| corrupt(e.to_string()))?
            }
            Codec::Snappy => self
                .snap_d
                .get_or_insert_with(snap::raw::Decoder::new)
                .decompress(src, dst)
                .map_err(|e| corrupt(e.to_string()))?,
            Codec::Deflate(_) => self
                .deflate_d
                .get_or_insert_with(libdeflater::Decompressor::new)
                .deflate_decompress(src, dst)
                .map_err(|e| corrupt(e.to_string()))?,
        };
        if got != dst.len() {
            return Err(CodecError::SizeMismatch {
                codec: codec.name(),
                got,
                expected: dst.len(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize) -> Vec<u8> {
        let words = b"zone write pointer flash page compressed chunk metadata ";
        (0..n)
            .map(|i| words[(i * 7 + i / 13) % words.len()])
            .collect()
    }

    #[test]
    fn every_codec_round_trips_and_shrinks_text() {
        let src = text(4096);
        let mut coder = Coder::new();
        for codec in [
            Codec::None,
            Codec::Zstd(1),
            Codec::Zstd(-3),
            Codec::Zstd(9),
            Codec::Lz4,
            Codec::Snappy,
            Codec::Deflate(1),
            Codec::Deflate(6),
        ] {
            let mut out = vec![0xAA; 3]; // appends after what is there
            let n = coder.compress(codec, &src, &mut out);
            assert_eq!(out.len(), 3 + n);
            if codec != Codec::None {
                assert!(n < src.len() / 2, "{codec}: {n}");
            }
            let mut back = vec![0; src.len()];
            coder.decompress(codec, &out[3..], &mut back).unwrap();
            assert_eq!(back, src, "{codec}");
        }
    }

    #[test]
    fn corrupt_or_wrong_size_input_is_an_error() {
        let mut coder = Coder::new();
        let mut out = Vec::new();
        coder.compress(Codec::Zstd(1), &text(4096), &mut out);
        let mut back = vec![0; 4000];
        assert!(coder.decompress(Codec::Zstd(1), &out, &mut back).is_err());
        let garbage = vec![0x5Au8; 100];
        for codec in [Codec::Zstd(1), Codec::Lz4, Codec::Snappy, Codec::Deflate(1)] {
            let mut back = vec![0; 4096];
            assert!(
                coder.decompress(codec, &garbage, &mut back).is_err(),
                "{codec}"
            );
        }
    }

    #[test]
    fn names_parse_both_ways() {
        for s in ["none", "zstd-1", "zstd--3", "lz4", "snappy", "deflate-6"] {
            assert_eq!(s.parse::<Codec>().unwrap().name(), s);
        }
        assert_eq!("zstd".parse::<Codec>().unwrap(), Codec::Zstd(1));
        assert!(matches!(
            "zstd-40".parse::<Codec>(),
            Err(CodecError::BadLevel { .. })
        ));
        assert!(matches!(
            "brotli".parse::<Codec>(),
            Err(CodecError::UnknownCodec(_))
        ));
    }
}
