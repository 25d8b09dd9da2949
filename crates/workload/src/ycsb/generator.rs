//! Keys: YCSB's key naming (`user` + FNV-64 of the key number with hashed insert order), its
//! zipfian generators (θ = 0.99, scrambled over 10^10 items, or latest), and the key chooser a
//! phase shares between its client threads.

use sim::Rng;

use super::properties::{Distribution, FieldLengths, YcsbConfig};

/// YCSB's Utils.fnvhash64.
pub fn fnvhash64(mut val: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        h ^= octet;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    (h as i64).unsigned_abs()
}

pub fn key_name(keynum: u64, hashed: bool) -> Vec<u8> {
    key_name_padded(keynum, hashed, 1)
}

/// CoreWorkload.buildKeyName: `user`, zeros up to `zeropadding` digits, the key number
/// (hashed unless insertorder=ordered).
pub fn key_name_padded(keynum: u64, hashed: bool, zeropadding: usize) -> Vec<u8> {
    let n = if hashed { fnvhash64(keynum) } else { keynum };
    format!("user{n:0>zeropadding$}").into_bytes()
}

/// A uniform double in [0, 1) (53 bits), as the phase draws its operation.
pub(super) fn unit(rng: &mut Rng) -> f64 {
    rng.below(1 << 53) as f64 / (1u64 << 53) as f64
}

/// Field lengths as CoreWorkload.getFieldLengthGenerator draws them.
#[derive(Clone, Debug)]
pub(super) enum FieldLengthGen {
    Constant(usize),
    Uniform(u64, u64),
    Zipfian(u64, Zipfian),
    Histogram {
        block: u64,
        buckets: Vec<u64>,
        area: u64,
    },
}

impl FieldLengthGen {
    pub(super) fn new(cfg: &YcsbConfig) -> FieldLengthGen {
        let (min, max) = (cfg.minfieldlength, cfg.fieldlength as u64);
        match &cfg.fieldlengths {
            FieldLengths::Constant => FieldLengthGen::Constant(cfg.fieldlength),
            FieldLengths::Uniform => FieldLengthGen::Uniform(min, max),
            FieldLengths::Zipfian => {
                FieldLengthGen::Zipfian(min, Zipfian::new((max - min + 1).max(2)))
            }
            FieldLengths::Histogram { block, buckets } => FieldLengthGen::Histogram {
                block: *block,
                area: buckets.iter().sum(),
                buckets: buckets.clone(),
            },
        }
    }

    /// A constant length draws nothing (so records are drawn as before these existed).
    pub(super) fn next(&self, rng: &mut Rng, max: u64) -> usize {
        match self {
            FieldLengthGen::Constant(n) => *n,
            FieldLengthGen::Uniform(lo, hi) => (lo + rng.below(hi - lo + 1)) as usize,
            FieldLengthGen::Zipfian(lo, z) => (lo + z.next(rng)).min(max) as usize,
            FieldLengthGen::Histogram {
                block,
                buckets,
                area,
            } => {
                // HistogramGenerator.nextValue.
                let mut number = rng.below(*area) as i64;
                for (i, b) in buckets.iter().enumerate().take(buckets.len() - 1) {
                    number -= *b as i64;
                    if number <= 0 {
                        return ((i as u64 + 1) * block) as usize;
                    }
                }
                ((buckets.len() as u64 - 1) * block) as usize
            }
        }
    }
}
/// YCSB's ZipfianGenerator (Gray et al.), θ = 0.99.
#[derive(Clone, Debug)]
pub(crate) struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    pub(crate) fn zeta(n: u64, theta: f64) -> f64 {
        (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
    }

    pub(crate) fn with_zeta(items: u64, zetan: f64) -> Zipfian {
        let theta = 0.99;
        let zeta2 = Self::zeta(2, theta);
        Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    pub(crate) fn new(items: u64) -> Zipfian {
        Self::with_zeta(items, Self::zeta(items, 0.99))
    }

    pub(crate) fn next(&self, rng: &mut Rng) -> u64 {
        let u = rng.below(1 << 53) as f64 / (1u64 << 53) as f64;
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        ((self.items as f64) * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64
    }
}

/// ScrambledZipfianGenerator: a zipfian over 10^10 items (ζ precomputed by YCSB), hashed.
pub(super) fn scrambled_zipfian() -> Zipfian {
    Zipfian::with_zeta(10_000_000_000, 26.469_028_201_783_02)
}

/// Shared state of a phase: the key chooser and what inserts have acknowledged.
pub(super) struct Keys {
    pub(super) cfg: YcsbConfig,
    pub(super) zipf: Option<Zipfian>,
    /// Key numbers handed to inserts so far (load: recordcount; run: grows with inserts).
    pub(super) inserted: u64,
    /// Inserts handed out and not acknowledged yet: reads choose only below the smallest
    /// (YCSB's AcknowledgedCounterGenerator), so they never ask for a record in flight.
    pub(super) pending: std::collections::BTreeSet<u64>,
    /// SequentialGenerator's counter.
    pub(super) sequence: u64,
}

impl Keys {
    pub(super) fn choose(&mut self, rng: &mut Rng) -> u64 {
        let acked = self.pending.first().copied().unwrap_or(self.inserted);
        let n = acked.max(1);
        // CoreWorkload's key range: insertstart..insertstart+insertcount. At its defaults
        // (0 and recordcount) keys are chosen as before insertstart existed.
        let (lo, span) = (self.cfg.insertstart, self.cfg.request_span().max(1));
        let ranged = self.cfg.insertstart > 0 || self.cfg.insertcount.is_some();
        // nextKeynum: draw again while the key is past the last acknowledged insert.
        let within = |k: u64| k < n;
        match self.cfg.distribution {
            Distribution::Uniform if ranged => loop {
                let k = lo + rng.below(span);
                if within(k) {
                    return k;
                }
            },
            Distribution::Zipfian if ranged => {
                let z = self.zipf.as_ref().expect("zipfian");
                loop {
                    let k = lo + fnvhash64(z.next(rng)) % (span + 2 * self.expected_inserts());
                    if within(k) {
                        return k;
                    }
                }
            }
            Distribution::Hotspot => {
                // HotspotIntegerGenerator over lo..lo+span-1.
                let hot = (span as f64 * self.cfg.hotspotdatafraction) as u64;
                let cold = span - hot;
                loop {
                    let k = if unit(rng) < self.cfg.hotspotopnfraction {
                        lo + rng.below(hot.max(1))
                    } else {
                        lo + hot + rng.below(cold.max(1))
                    };
                    if within(k) {
                        return k;
                    }
                }
            }
            Distribution::Exponential => {
                // ExponentialGenerator(percentile, recordcount * frac), counted back from the
                // latest acknowledged insert.
                let gamma = -(1.0 - self.cfg.exponential_percentile / 100.0).ln()
                    / (self.cfg.recordcount as f64 * self.cfg.exponential_frac);
                loop {
                    let x = -(1.0 - unit(rng)).ln() / gamma;
                    let back = if x.is_finite() && x < i32::MAX as f64 {
                        x as u64
                    } else {
                        u64::MAX
                    };
                    if back < n {
                        return n - 1 - back;
                    }
                }
            }
            Distribution::Sequential => loop {
                let k = lo + self.sequence % span;
                self.sequence += 1;
                if within(k) {
                    return k;
                }
            },
            Distribution::Uniform => rng.below(n),
            Distribution::Zipfian => {
                let z = self.zipf.as_ref().expect("zipfian");
                loop {
                    let k = fnvhash64(z.next(rng)) % (n + 2 * self.expected_inserts());
                    if k < n {
                        return k;
                    }
                }
            }
            Distribution::Latest => {
                let z = self.zipf.as_ref().expect("zipfian");
                n - 1 - z.next(rng).min(n - 1)
            }
        }
    }

    pub(super) fn expected_inserts(&self) -> u64 {
        (self.cfg.operationcount as f64 * self.cfg.insert) as u64
    }
}
