//! # host: software on the emulated device (layer 5)
//!
//! For now the host I/O layer ([`io`]): what the kernel and its NVMe driver do between a file
//! system and the device; and the LSM store's on-media format ([`lsm`]). The zoned file system
//! and the store itself will sit on them.
//!
//! May depend on: `sim`, `device` (and what they use). Leaves out: workloads and reporting.

pub mod fs;
pub mod io;
pub mod lfs;
pub mod lsm;
pub mod zoned;
pub mod zonefs;

pub use io::{HostIo, IoConfig, IoCounters, IoError};
pub use zoned::RestoreZonesError;
pub use zoned::{MemZoned, ZonedBackend};
