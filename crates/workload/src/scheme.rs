//! The comparison schemes of CCZNS §V-A: where compression happens, as a device preset, store
//! options and mkfs options. `znslab ycsb --scheme NAME` and `znslab reproduce cczns` use them.

use host::lsm::db::{CcOptions, Compression, DbOptions};

/// One scheme.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheme {
    /// Command-line name.
    pub name: &'static str,
    /// The paper's abbreviation (Fig. 8-10, Tables IV and V).
    pub label: &'static str,
    /// Device preset.
    pub device: &'static str,
    /// Where the store's blocks are compressed: not at all, by the host CPU (inline or on
    /// RocksDB's `CompressionOptions::parallel_threads`), on a peripheral engine (QAT), or by
    /// the device through CCZNS's commands (the store keeps the index).
    pub compression: Compression,
}

impl Scheme {
    fn host(name: &'static str, label: &'static str, codec: codec::Codec) -> Scheme {
        Scheme {
            name,
            label,
            device: "cczns",
            compression: Compression::host(codec),
        }
    }

    /// Apply to store options.
    pub fn apply(&self, opts: &mut DbOptions) {
        opts.compression = self.compression.clone();
    }
}

/// The paper's seven schemes, in its order (with the transparent block SSD before CC), then
/// the two ablations of §V-D.
pub fn all() -> Vec<Scheme> {
    use codec::Codec;
    vec![
        // NO+ZNS: no compression.
        Scheme::host("no", "N", Codec::None),
        // Snappy+ZNS: host CPU.
        Scheme::host("snappy", "S", Codec::Snappy),
        // QAT(deflate)+ZNS: RocksDB's QAT plugin on an Intel QAT 8970 card.
        Scheme {
            compression: Compression::Peripheral {
                codec: Codec::Deflate(1),
                engine: "qat-8970".into(),
                threads: 1,
            },
            ..Scheme::host("qat", "Q", Codec::None)
        },
        // ZSTD+ZNS: level 1.
        Scheme::host("zstd", "Z", Codec::ZSTD1),
        // ZSTDPC+ZNS: ZSTD with 6 compression threads.
        Scheme {
            compression: Compression::host(Codec::ZSTD1).with_threads(6),
            ..Scheme::host("zstdpc", "ZP", Codec::None)
        },
        // Balloon-ZNS(ZSTD): the device compresses transparently; the host writes raw.
        Scheme {
            device: "cczns-balloon",
            ..Scheme::host("balloon", "B", Codec::None)
        },
        // Not in the paper's figures: a transparently compressing block SSD (§II's DP-CSD /
        // ScaleFlux design) under the same store, on zones the host emulates (Reset = TRIM).
        Scheme {
            device: "cczns-tcssd",
            ..Scheme::host("tcssd", "T", Codec::None)
        },
        // CCZNS(ZSTD): multi-chunk CW and DR.
        Scheme {
            compression: Compression::Cczns(CcOptions::default()),
            ..Scheme::host("cc", "CC", Codec::None)
        },
        // §V-D: multi-chunk CW with single-chunk DR.
        Scheme {
            compression: Compression::Cczns(CcOptions {
                multi_chunk_dr: false,
                ..CcOptions::default()
            }),
            ..Scheme::host("cc-single-dr", "CC-sDR", Codec::None)
        },
        // §V-D: single-chunk CW with multi-chunk DR.
        Scheme {
            compression: Compression::Cczns(CcOptions {
                multi_chunk_cw: false,
                ..CcOptions::default()
            }),
            ..Scheme::host("cc-single-cw", "CC-sCW", Codec::None)
        },
    ]
}

pub fn by_name(name: &str) -> Option<Scheme> {
    all().into_iter().find(|s| s.name == name)
}

/// The names, for error messages.
pub fn names() -> String {
    all().iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}
