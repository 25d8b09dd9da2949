//! Virtual time: `u64` nanoseconds since the start of a simulation.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant on the virtual clock, in nanoseconds since the simulation started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimInstant(u64);

/// A span of virtual time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(u64);

impl SimInstant {
    pub const ZERO: SimInstant = SimInstant(0);

    pub const fn from_ns(ns: u64) -> Self {
        SimInstant(ns)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    /// Time elapsed since `earlier`; panics if `earlier` is later (time never runs backwards).
    pub fn since(self, earlier: SimInstant) -> SimDuration {
        SimDuration(
            self.0
                .checked_sub(earlier.0)
                .expect("SimInstant::since: earlier instant is in the future"),
        )
    }
    pub fn saturating_since(self, earlier: SimInstant) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub const fn from_ns(ns: u64) -> Self {
        SimDuration(ns)
    }
    pub const fn from_us(us: u64) -> Self {
        SimDuration(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Self {
        SimDuration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * 1_000_000_000)
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time to move `bytes` at `bytes_per_s`, rounded up to whole nanoseconds.
    pub fn for_bytes(bytes: u64, bytes_per_s: u64) -> Self {
        assert!(bytes_per_s > 0, "bandwidth must be positive");
        // The 64-bit division when the product fits (every transfer but 18 GB ones): a
        // 128-bit one is a library call on the hot path of every command.
        if let Some(p) = bytes.checked_mul(1_000_000_000) {
            return SimDuration(p.div_ceil(bytes_per_s));
        }
        let ns = (bytes as u128 * 1_000_000_000).div_ceil(bytes_per_s as u128);
        SimDuration(u64::try_from(ns).expect("transfer time overflows u64 ns"))
    }
    pub fn checked_mul(self, n: u64) -> Option<SimDuration> {
        self.0.checked_mul(n).map(SimDuration)
    }
}

impl Add<SimDuration> for SimInstant {
    type Output = SimInstant;
    fn add(self, d: SimDuration) -> SimInstant {
        SimInstant(self.0.checked_add(d.0).expect("virtual clock overflow"))
    }
}
impl AddAssign<SimDuration> for SimInstant {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.checked_add(d.0).expect("duration overflow"))
    }
}
impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        *self = *self + d;
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.checked_sub(d.0).expect("negative duration"))
    }
}

impl fmt::Display for SimInstant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}
impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}
