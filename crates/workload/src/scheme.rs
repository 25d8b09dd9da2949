//! The comparison schemes of CCZNS §V-A: where compression happens, as a device preset, store
//! options and mkfs options. `znslab ycsb --scheme NAME` and `znslab reproduce cczns` use them.

use host::lsm::db::{CcOptions, DbOptions};

/// One scheme.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheme {
    /// Command-line name.
    pub name: &'static str,
    /// The paper's abbreviation (Fig. 8-10, Tables IV and V).
    pub label: &'static str,
    /// Device preset.
    pub device: &'static str,
    /// Host block codec (None when the host does not compress).
    pub codec: codec::Codec,
    /// RocksDB's `CompressionOptions::parallel_threads`.
    pub parallel_threads: usize,
    /// Engine profile that times the host codec (QAT); None = the codec's CPU profile.
    pub engine: Option<&'static str>,
    /// CCZNS commands (the device compresses, the store keeps the index).
    pub cc: Option<CcOptions>,
}

impl Scheme {
    fn host(name: &'static str, label: &'static str, codec: codec::Codec) -> Scheme {
        Scheme {
            name,
            label,
            device: "cczns",
            codec,
            parallel_threads: 1,
            engine: None,
            cc: None,
        }
    }

    /// Apply to store options.
    pub fn apply(&self, opts: &mut DbOptions) {
        opts.table.codec = self.codec;
        opts.compression_parallel_threads = self.parallel_threads;
        opts.compression_engine = self.engine.map(str::to_string);
        opts.cc = self.cc.clone();
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
            engine: Some("qat-8970"),
            ..Scheme::host("qat", "Q", Codec::Deflate(1))
        },
        // ZSTD+ZNS: level 1.
        Scheme::host("zstd", "Z", Codec::ZSTD1),
        // ZSTDPC+ZNS: ZSTD with 6 compression threads.
        Scheme {
            parallel_threads: 6,
            ..Scheme::host("zstdpc", "ZP", Codec::ZSTD1)
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
            cc: Some(CcOptions::default()),
            ..Scheme::host("cc", "CC", Codec::None)
        },
        // §V-D: multi-chunk CW with single-chunk DR.
        Scheme {
            cc: Some(CcOptions {
                multi_chunk_dr: false,
                ..CcOptions::default()
            }),
            ..Scheme::host("cc-single-dr", "CC-sDR", Codec::None)
        },
        // §V-D: single-chunk CW with multi-chunk DR.
        Scheme {
            cc: Some(CcOptions {
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
