//! filebench's random numbers on the simulator's seeded streams: `fb_random64` (a uniform
//! draw scaled to `[0, max - round]` and rounded down to `round`), Knuth's gamma algorithms
//! (`gamma_dist.c`), custom variables (`cvar-gamma`: mean, gamma; `cvar-uniform`: lower,
//! upper; with `min`, `max` and `round` as `fb_cvar.c` applies them) and random variables
//! (`randvar`: type uniform or gamma, mean, gamma in thousandths, min, round, as
//! `fb_random.c`). The numbers differ from filebench's (another generator); their laws do not.

use sim::Rng;

/// A uniform double in [0, 1).
pub fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// `fb_random64(max, round)`: `[0, max - round]`, rounded down to a multiple of `round`.
pub fn fb_random64(rng: &mut Rng, max: u64, round: u64) -> u64 {
    let span = max.saturating_sub(round);
    let normalized = rng.next_u64() as f64 / u64::MAX as f64;
    let mut v = (normalized * span as f64) as u64;
    if let Some(q) = v.checked_div(round) {
        v = q * round;
    }
    v.min(span)
}

/// Knuth's algorithm G (a ≤ 1) or A (a > 1), times `b`: gamma with shape `a`, mean `a * b`.
pub fn gamma_knuth(rng: &mut Rng, a: f64, b: f64) -> f64 {
    if a.is_nan() || a <= 0.0 || !b.is_finite() {
        return 0.0;
    }
    // Bounded retries: a pathological shape never hangs the run.
    for _ in 0..10_000 {
        let x = if a <= 1.0 {
            let p = std::f64::consts::E / (a + std::f64::consts::E);
            let u = unit(rng);
            let mut v = unit(rng);
            while v == 0.0 {
                v = unit(rng);
            }
            let (x, q) = if u < p {
                let x = v.powf(1.0 / a);
                (x, (-x).exp())
            } else {
                let x = 1.0 - v.ln();
                (x, x.powf(a - 1.0))
            };
            if unit(rng) >= q {
                continue;
            }
            x
        } else {
            let y = (std::f64::consts::PI * unit(rng)).tan();
            let s = (2.0 * a - 1.0).sqrt();
            let x = s * y + a - 1.0;
            if x <= 0.0 {
                continue;
            }
            let v = unit(rng);
            if v > (1.0 + y * y) * ((a - 1.0) * (x / (a - 1.0)).ln() - s * y).exp() {
                continue;
            }
            x
        };
        return b * x;
    }
    a * b
}

#[derive(Clone, Debug, PartialEq)]
pub enum Law {
    /// cvar-gamma: mean, gamma (shape).
    CvarGamma { mean: f64, gamma: f64 },
    /// cvar-uniform: lower, upper.
    CvarUniform { lower: f64, upper: f64 },
    /// randvar type=uniform: min + U * 2 (mean - min).
    Uniform { min: f64, mean: f64 },
    /// randvar type=gamma: min + gamma(shape, (mean - min) / shape).
    Gamma { min: f64, mean: f64, gamma: f64 },
}

/// A random variable (`cvar(...)` or `randvar(...)`), drawn anew at each use.
#[derive(Clone, Debug, PartialEq)]
pub struct RandVar {
    pub law: Law,
    /// cvar: clamp to [min, max] after rounding to the nearest `round`.
    pub min: f64,
    pub max: f64,
    pub round: f64,
}

impl RandVar {
    pub fn mean(&self) -> f64 {
        match self.law {
            Law::CvarGamma { mean, .. } => mean,
            Law::CvarUniform { lower, upper } => (lower + upper) / 2.0,
            Law::Uniform { mean, .. } | Law::Gamma { mean, .. } => mean,
        }
    }

    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self.law {
            Law::CvarGamma { mean, gamma } => {
                let v = gamma_knuth(rng, gamma, mean / gamma);
                self.cvar_round(v)
            }
            Law::CvarUniform { lower, upper } => {
                let v = lower + unit(rng) * (upper - lower);
                self.cvar_round(v)
            }
            Law::Uniform { min, mean } => {
                let v = unit(rng) * (2.0 * (mean - min)) + min;
                self.rv_round(v)
            }
            Law::Gamma { min, mean, gamma } => {
                let v = gamma_knuth(rng, gamma, (mean - min) / gamma) + min;
                self.rv_round(v)
            }
        }
    }

    fn cvar_round(&self, v: f64) -> f64 {
        let mut v = v;
        if self.round >= 1.0 {
            let round = self.round as u64;
            let num = v.max(0.0) as u64;
            let lower = num - num % round;
            let upper = lower + round;
            v = if num - lower > upper - num {
                upper
            } else {
                lower
            } as f64;
        }
        v.clamp(self.min, self.max)
    }

    fn rv_round(&self, v: f64) -> f64 {
        if self.round == 0.0 {
            v
        } else {
            (v / self.round).round() * self.round
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_has_its_mean_and_appends_are_below_iosize() {
        let mut rng = Rng::new(7);
        let v = RandVar {
            law: Law::CvarGamma {
                mean: 131072.0,
                gamma: 1.5,
            },
            min: f64::MIN_POSITIVE,
            max: f64::MAX,
            round: 0.0,
        };
        let n = 20_000;
        let mean = (0..n).map(|_| v.sample(&mut rng)).sum::<f64>() / n as f64;
        assert!((mean / 131072.0 - 1.0).abs() < 0.03, "{mean}");
        let small = RandVar {
            law: Law::CvarGamma {
                mean: 1.0,
                gamma: 0.5,
            },
            ..v
        };
        let mean = (0..n).map(|_| small.sample(&mut rng)).sum::<f64>() / n as f64;
        assert!((mean - 1.0).abs() < 0.05, "{mean}");
        let draws: Vec<u64> = (0..10_000)
            .map(|_| fb_random64(&mut rng, 16384, 1))
            .collect();
        assert!(draws.iter().all(|&d| d < 16384));
        let avg = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((avg - 8192.0).abs() < 300.0, "{avg}");
        assert!(fb_random64(&mut rng, 1 << 20, 4096).is_multiple_of(4096));
    }
}
