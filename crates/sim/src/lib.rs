//! # sim: the virtual-time engine (layer 1)
//!
//! A single-threaded async executor on a virtual clock with nanosecond resolution. Events are
//! ordered by `(time, sequence)`, so ties break in the order they were scheduled and the same
//! program gives the same interleaving every time.
//!
//! What it gives the layers above: [`Sim`] (spawn, now, sleep_until, run), [`JoinHandle`],
//! virtual-time [`sync`] primitives (mutex, semaphore, channel, notify), a pool of simulated host
//! CPU [`cpu::CpuPool`] cores whose busy time is counted, one seeded [`rng::Rng`] that is
//! split into independent streams by label, and a [`ByteMemo`] for work the emulator need not
//! redo (speed only).
//!
//! May depend on: nothing but `std`. Leaves out: anything about storage. Nothing in this crate
//! reads the wall clock.

pub mod cpu;
mod executor;
mod memo;
pub mod rng;
pub mod sync;
mod time;

pub use executor::{JoinHandle, RunOutcome, Sim, Sleep};
pub use memo::ByteMemo;
pub use rng::Rng;
pub use time::{SimDuration, SimInstant};
