//! zonefs: a ZenFS-like zoned file system: its metadata (superblock, log of snapshots and
//! edit records, replay: [`meta`]), the zone policies (allocation and GC as pure decisions:
//! [`policy`]) and the file system on the host I/O layer ([`fs`]).

pub mod fs;
pub mod izg;
pub mod meta;
pub mod plus;
pub mod policy;

pub use fs::{
    CompressedWriteError, FileWriter, FsError, FsStats, Lifetime, MkfsOptions, SetupError,
    ZoneCounters, ZoneFs, WRITE_BUFFER,
};
pub use policy::{Policy, ZenFsPolicy};
