//! db_bench's mixgraph (`MixGraph`, Cao et al., FAST '20): gets, puts and seeks in the
//! ratios given, keys by the power function of key hotness within key ranges whose hotness is
//! a two-term exponential (`GenerateTwoTermExpKeys`), value sizes and scan lengths by the
//! generalized Pareto distribution. Where db_bench seeds `std::mt19937_64` (a key's place in
//! its range, the ranges' shuffle) the simulator's seeded generator stands in.

use sim::{Rng, SimInstant};

use super::bench::{db_err, Duration, Shared, ThreadStats};
use super::output::OpType;
use super::{make_key, DbBenchError};

/// db_bench's `QueryDecider`: the query type (0 get, 1 put, 2 seek) for a random number.
struct QueryDecider {
    bounds: Vec<i64>,
    range: i64,
}

impl QueryDecider {
    fn new(ratios: [f64; 3]) -> QueryDecider {
        let sum: f64 = ratios.iter().sum();
        let mut range = 0i64;
        let mut bounds = Vec::new();
        for r in ratios {
            range += (1000.0 * (r / sum)).ceil() as i64;
            bounds.push(range);
        }
        QueryDecider { bounds, range }
    }

    fn get(&self, rand: i64) -> usize {
        let pos = rand.abs() % self.range.max(1);
        self.bounds.iter().position(|&b| pos < b).unwrap_or(0)
    }
}

/// db_bench's `ParetoCdfInversion`.
fn pareto(u: f64, theta: f64, k: f64, sigma: f64) -> i64 {
    let r = if k == 0.0 {
        theta - sigma * u.ln()
    } else {
        theta + sigma * (u.powf(-k) - 1.0) / k
    };
    r.ceil() as i64
}

/// db_bench's `GenerateTwoTermExpKeys`: key ranges whose hotness follows
/// `a·e^(b·x) + c·e^(d·x)`, shuffled by a generator seeded from their total; keys within a
/// range by the power function (or uniformly).
pub struct KeyRanges {
    /// (start in the hotness space, its width)
    units: Vec<(i64, i64)>,
    rand_max: i64,
    size: i64,
}

impl KeyRanges {
    pub fn new(total: i64, n: i64, a: f64, b: f64, c: f64, d: f64) -> KeyRanges {
        let n = n.max(1);
        let size = (total / n).max(1);
        let mut amplify = 0i64;
        let mut access = Vec::new();
        for pfx in (1..=n).rev() {
            let mut p = a * (b * pfx as f64).exp() + c * (d * pfx as f64).exp();
            if p < 1e-16 {
                p = 0.0;
            }
            if amplify == 0 && p > 0.0 {
                amplify = (1.0 / p).floor() as i64 + 1;
            }
            access.push(if p <= 0.0 {
                0
            } else {
                (amplify as f64 * p).floor() as i64
            });
        }
        let rand_max: i64 = access.iter().sum();
        let mut r = Rng::new(rand_max as u64).stream("keyrange");
        for i in 0..access.len() {
            let pos = r.below(access.len() as u64) as usize;
            access.swap(i, pos);
        }
        let mut units = Vec::new();
        let mut off = 0;
        for w in access {
            units.push((off, w));
            off += w;
        }
        KeyRanges {
            units,
            rand_max,
            size,
        }
    }

    fn key(&self, ini: i64, ka: f64, kb: f64) -> i64 {
        let r = ini % self.rand_max.max(1);
        let (mut lo, mut hi) = (0usize, self.units.len());
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if r < self.units[mid].0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let off = if ka == 0.0 || kb == 0.0 {
            ini % self.size
        } else {
            let u = (ini % self.size) as f64 / self.size as f64;
            let seed = (u / ka).powf(1.0 / kb).ceil() as i64;
            (Rng::new(seed as u64).next_u64() % self.size as u64) as i64
        };
        self.size * lo as i64 + off
    }
}

pub(super) async fn run(
    sh: &Shared,
    st: &mut ThreadStats,
    dur: &mut Duration,
    mut rng: Rng,
    record: &impl Fn(&mut ThreadStats, OpType, u64, SimInstant),
) -> Result<(), DbBenchError> {
    let (sim, db, cfg, p) = (&sh.sim, &sh.db, &sh.cfg, &sh.plan);
    let m = &cfg.mix;
    let num = p.num.max(1) as i64;
    let value_max = m.max_value_size.clamp(1, 1 << 20);
    let scan_max = m.max_scan_len.max(1);
    let query = QueryDecider::new([m.get_ratio, m.put_ratio, m.seek_ratio]);
    let ranges = (m.keyrange_dist != [0.0; 4]).then(|| {
        let [a, b, c, d] = m.keyrange_dist;
        KeyRanges::new(num, m.keyrange_num, a, b, c, d)
    });
    let uniform = m.key_dist_a == 0.0 || m.key_dist_b == 0.0;
    let filler = super::Values::new(&mut rng, cfg.compression_ratio, value_max as usize);
    let mut filler = filler;
    let (mut gets, mut puts, mut seeks, mut get_found, mut seek_found) = (0u64, 0, 0, 0, 0);
    let (mut total_val, mut total_scan) = (0f64, 0f64);
    while !dur.done(sim, 1) {
        let ini = (rng.next_u64() % num as u64) as i64;
        let rand_v = ini % num;
        let u = rand_v as f64 / num as f64;
        let key_id = if uniform {
            ini
        } else if let Some(r) = &ranges {
            r.key(ini, m.key_dist_a, m.key_dist_b)
        } else {
            let seed = (u / m.key_dist_a).powf(1.0 / m.key_dist_b) as i64;
            (Rng::new(seed as u64).next_u64() % num as u64) as i64
        };
        let k = make_key(key_id as u64, p.key_size);
        let t0 = sim.now();
        match query.get(rand_v) {
            0 => {
                gets += 1;
                if let Some(v) = db.get(&k).await.map_err(db_err)? {
                    get_found += 1;
                    st.read_bytes += (k.len() + v.len()) as u64;
                    sh.counters.borrow_mut().bytes_read += v.len() as u64;
                }
                sh.counters.borrow_mut().keys_read += 1;
                record(st, OpType::Read, 1, t0);
            }
            1 => {
                puts += 1;
                let mut size = pareto(u, m.value_theta, m.value_k, m.value_sigma);
                if size < 10 {
                    size = 10;
                } else if size > value_max {
                    size %= value_max;
                }
                total_val += size as f64;
                let v = filler.next(size as usize).to_vec();
                db.put(&k, &v, p.sync).await.map_err(db_err)?;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.keys_written += 1;
                    c.bytes_written += (k.len() + v.len()) as u64;
                    c.synced_writes += u64::from(p.sync);
                }
                record(st, OpType::Write, 1, t0);
            }
            _ => {
                seeks += 1;
                let len = pareto(u, m.iter_theta, m.iter_k, m.iter_sigma).rem_euclid(scan_max);
                let got = db.scan(&k, (len as usize).max(1)).await.map_err(db_err)?;
                let hit = got.first().is_some_and(|(g, _)| *g == k);
                seek_found += u64::from(hit);
                let n = got.len().min(len as usize);
                let bytes: u64 = got[..n]
                    .iter()
                    .map(|(k, v)| (k.len() + v.len()) as u64)
                    .sum();
                st.read_bytes += bytes;
                total_scan += n as f64;
                {
                    let mut c = sh.counters.borrow_mut();
                    c.seeks += 1;
                    c.seeks_found += u64::from(hit);
                    c.nexts += n as u64;
                    c.iter_bytes += bytes;
                }
                record(st, OpType::Seek, 1, t0);
            }
        }
    }
    st.found = get_found + seek_found;
    sh.counters.borrow_mut().keys_found += get_found;
    // db_bench divides doubles: 0/0 prints as glibc prints it.
    let avg = |sum: f64, n: u64| {
        if n == 0 {
            "-nan".to_string()
        } else {
            format!("{:.1}", sum / n as f64)
        }
    };
    st.message = format!(
        "( Gets:{gets} Puts:{puts} Seek:{seeks}, reads {} in {} found, avg size: {} value, {} scan)\n",
        get_found + seek_found,
        gets + seeks,
        avg(total_val, puts),
        avg(total_scan, seeks)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decider_splits_as_db_bench() {
        let q = QueryDecider::new([0.83, 0.14, 0.03]);
        assert_eq!(q.bounds, vec![830, 970, 1000]);
        assert_eq!(q.get(829), 0);
        assert_eq!(q.get(830), 1);
        assert_eq!(q.get(1999), 2);
    }

    #[test]
    fn pareto_is_db_bench_inversion() {
        // theta + sigma * (u^-k - 1) / k, rounded up.
        assert_eq!(pareto(0.5, 0.0, 0.2615, 25.45), 20);
        assert_eq!(pareto(1.0, 0.0, 0.0, 10.0), 0);
    }

    #[test]
    fn key_ranges_cover_the_keys() {
        let r = KeyRanges::new(30_000, 30, 14.18, -2.917, 0.0164, -0.08082);
        assert!(r.rand_max > 0);
        for ini in [0, 1, 999, 29_999] {
            let k = r.key(ini, 0.0, 0.0);
            assert!((0..30_000).contains(&k), "{k}");
        }
    }
}
