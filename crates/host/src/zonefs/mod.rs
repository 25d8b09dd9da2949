//! zonefs: a ZenFS-like zoned file system. For now its metadata: the superblock and the
//! metadata log of snapshots and edit records, with replay ([`meta`]).

pub mod meta;
