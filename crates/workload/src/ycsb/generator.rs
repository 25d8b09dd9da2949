//! Keys: YCSB's key naming (`user` + FNV-64 of the key number with hashed insert order), its
//! zipfian generators (θ = 0.99, scrambled over 10^10 items, or latest), and the key chooser a
//! phase shares between its client threads.

use sim::Rng;

use super::properties::{Distribution, YcsbConfig};

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
    let n = if hashed { fnvhash64(keynum) } else { keynum };
    format!("user{n}").into_bytes()
}
/// YCSB's ZipfianGenerator (Gray et al.), θ = 0.99.
#[derive(Clone, Debug)]
pub(super) struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

impl Zipfian {
    pub(super) fn zeta(n: u64, theta: f64) -> f64 {
        (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
    }

    pub(super) fn with_zeta(items: u64, zetan: f64) -> Zipfian {
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

    pub(super) fn new(items: u64) -> Zipfian {
        Self::with_zeta(items, Self::zeta(items, 0.99))
    }

    pub(super) fn next(&self, rng: &mut Rng) -> u64 {
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
}

impl Keys {
    pub(super) fn choose(&self, rng: &mut Rng) -> u64 {
        let acked = self.pending.first().copied().unwrap_or(self.inserted);
        let n = acked.max(1);
        match self.cfg.distribution {
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
