//! `random_distribution=`: where random offsets fall, as fio's lib/zipf.c, lib/gauss.c and
//! io_u.c's zoned generator place them (uniform draws from the job's seeded stream).

use sim::Rng;

use crate::fio::options::Distribution;

/// fio's `__hash_u64` (hash.h): spreads the popular ranks over the region.
fn hash_u64(v: u64) -> u64 {
    v.wrapping_mul(0x61C8_8646_80B5_83EB)
}

/// A uniform draw in [0, 1).
fn uni(rng: &mut Rng) -> f64 {
    rng.below(1 << 32) as f64 / (1u64 << 32) as f64
}

/// A distribution set up for a region of `n` blocks.
pub(super) enum Sampler {
    Uniform,
    Zipf {
        theta: f64,
        zetan: f64,
        zeta2: f64,
        off: u64,
    },
    Pareto {
        pow: f64,
        off: u64,
    },
    Normal {
        stddev: u64,
    },
    /// (cumulative access percent, first block, blocks)
    Zoned(Vec<(u32, u64, u64)>),
}

impl Sampler {
    pub(super) fn new(d: &Distribution, n: u64, lba_bytes: u64, rng: &mut Rng) -> Sampler {
        let n = n.max(1);
        match d {
            Distribution::Random => Sampler::Uniform,
            Distribution::Zipf(theta) => {
                let zetan = (0..n.min(10_000_000))
                    .map(|i| (1.0 / (i + 1) as f64).powf(*theta))
                    .sum();
                Sampler::Zipf {
                    theta: *theta,
                    zetan,
                    zeta2: 1.0 + 0.5f64.powf(*theta),
                    off: rng.below(u32::MAX as u64),
                }
            }
            Distribution::Pareto(h) => Sampler::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
                off: rng.below(u32::MAX as u64),
            },
            Distribution::Normal(dev) => Sampler::Normal {
                stddev: ((n as f64 * dev / 100.0).ceil() as u64).min(n / 2),
            },
            Distribution::Zoned(parts) => {
                let mut out = Vec::new();
                let (mut acc, mut start) = (0, 0u64);
                for &(access, size_pct) in parts {
                    acc += access;
                    let blocks = (n * size_pct as u64 / 100).max(1);
                    out.push((acc, start.min(n - 1), blocks.min(n - start.min(n - 1))));
                    start += blocks;
                }
                Sampler::Zoned(out)
            }
            Distribution::ZonedAbs(parts) => {
                let mut out = Vec::new();
                let (mut acc, mut start) = (0, 0u64);
                for &(access, bytes) in parts {
                    acc += access;
                    let blocks = (bytes / lba_bytes).max(1);
                    out.push((acc, start.min(n - 1), blocks.min(n - start.min(n - 1))));
                    start += blocks;
                }
                Sampler::Zoned(out)
            }
        }
    }

    /// The next block index in `0..n`.
    pub(super) fn next(&self, rng: &mut Rng, n: u64) -> u64 {
        let n = n.max(1);
        match self {
            Sampler::Uniform => rng.below(n),
            Sampler::Zipf {
                theta,
                zetan,
                zeta2,
                off,
            } => {
                let u = uni(rng);
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let z = u * zetan;
                let val = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                hash_u64(val - 1).wrapping_add(*off) % n
            }
            Sampler::Pareto { pow, off } => {
                let v = ((n - 1) as f64 * uni(rng).powf(*pow)) as u64;
                hash_u64(v).wrapping_add(*off) % n
            }
            Sampler::Normal { stddev } => {
                let mut sum: u64 = (0..12).map(|_| rng.below(n + 1)).sum();
                sum = sum.div_ceil(12);
                if *stddev > 0 {
                    let r = uni(rng);
                    let mut dev = (*stddev as f64 * r) as i64 - *stddev as i64 / 2;
                    while dev + sum as i64 >= n as i64 {
                        dev /= 2;
                    }
                    sum = (sum as i64 + dev).max(0) as u64;
                }
                hash_u64(sum) % n
            }
            Sampler::Zoned(parts) => {
                let v = 1 + rng.below(100) as u32;
                let &(_, first, blocks) = parts
                    .iter()
                    .find(|(acc, _, _)| v <= *acc)
                    .unwrap_or(&parts[parts.len() - 1]);
                (first + rng.below(blocks.max(1))).min(n - 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fio::options::parse_distribution;

    fn draws(spec: &str, n: u64) -> Vec<u64> {
        let mut rng = Rng::new(7);
        let d = parse_distribution(spec).expect("valid");
        let s = Sampler::new(&d, n, 4096, &mut rng);
        (0..10_000).map(|_| s.next(&mut rng, n)).collect()
    }

    #[test]
    fn zoned_keeps_each_share_of_accesses_in_its_range() {
        let v = draws("zoned:60/10:40/90", 1000);
        let low = v.iter().filter(|x| **x < 100).count();
        assert!((5700..6300).contains(&low), "{low}");
        assert!(v.iter().all(|x| *x < 1000));
        let v = draws("zoned_abs:100/40k", 1000);
        assert!(v.iter().all(|x| *x < 10), "40 KiB is 10 blocks");
    }

    #[test]
    fn zipf_and_pareto_concentrate_normal_spreads() {
        for spec in ["zipf:1.2", "pareto:0.2"] {
            let v = draws(spec, 1000);
            let mut counts = vec![0u32; 1000];
            for x in &v {
                counts[*x as usize] += 1;
            }
            counts.sort_unstable();
            let top10: u32 = counts.iter().rev().take(10).sum();
            assert!(
                top10 > 3000,
                "{spec}: the 10 hottest blocks got {top10} of 10000"
            );
        }
        let v = draws("normal:10", 1000);
        assert!(v.iter().all(|x| *x < 1000));
        assert_eq!(draws("random", 1000).len(), 10_000);
    }
}
