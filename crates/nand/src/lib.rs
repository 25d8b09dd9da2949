//! # nand: flash geometry, timing and resource timelines (layer 2)
//!
//! A flash array of channels × dies per channel × planes, with erase blocks of pages and OOB
//! bytes per page. Every die and every channel is a [`Timeline`] of reservations: a read holds
//! the die for the array read and then die and channel together for the transfer; a program
//! holds die and channel for the transfer and then the die for the program; erase and copyback
//! hold only the die. An operation asks for the earliest slot at or after the instant it becomes
//! ready and gets back its completion time, so later operations can fill gaps left by earlier
//! reservations (a channel is never held idle behind a busy die).
//!
//! May depend on: `sim` (time types). Leaves out: what the bytes are and where zones live; the
//! device layer decides which die and page an operation touches.

mod config;
mod flash;
pub mod presets;
mod timeline;

pub use config::{ConfigError, Geometry, NandConfig, MAX_OPERATION_NS};
pub use flash::{BusySeries, DieId, Flash, FlashCounters, OpKind};
pub use timeline::Timeline;
