//! What the device counts: commands and bytes as a host would count them, and device DRAM.

/// What the device has done, as the host would count it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    pub commands: u64,
    pub failed_commands: u64,
    pub reads: u64,
    pub writes: u64,
    pub appends: u64,
    pub zone_management: u64,
    pub host_bytes_written: u64,
    pub host_bytes_read: u64,
    /// Reads' time in the device from arrival to completion, and the part of it from the data
    /// being ready to its arrival at the host (the transfer, waiting for the link included).
    pub read_ns: u64,
    pub read_transfer_ns: u64,
    /// Bytes read that came from the write buffer instead of flash.
    pub buffer_read_bytes: u64,
    /// Bytes programmed as padding by Finish.
    pub padded_bytes: u64,
    pub zone_resets: u64,
    pub zone_finishes: u64,
    pub implicit_closes: u64,
    /// CCZNS compressed writes and what they carried: bytes before compression, bytes stored
    /// after it, and bytes taken from zones (stored plus padding).
    pub compressed_writes: u64,
    pub cw_logical_bytes: u64,
    pub cw_stored_bytes: u64,
    pub cw_footprint_bytes: u64,
    /// CCZNS decompressed reads: chunks returned, their bytes after decompression, and the
    /// stored bytes read for them.
    pub decompressed_reads: u64,
    pub dr_chunks: u64,
    pub dr_logical_bytes: u64,
    pub dr_stored_bytes: u64,
    /// ZNS+ zone_compaction: commands, blocks copied, and destination chunks copied by
    /// copyback or by read and program.
    pub zone_compactions: u64,
    /// Copy (19h) commands done the same way.
    pub copies: u64,
    pub compaction_blocks: u64,
    pub compaction_copybacks: u64,
    pub compaction_read_programs: u64,
    /// ZNS+ threaded logging: TL_open commands; valid blocks copied into a TL-open zone's new
    /// block group on a write's path or at its close (LBA-ordered plugging) and in the
    /// background on idle chips (PPA-ordered); the chunks copied by copyback and by read and
    /// program.
    pub tl_opens: u64,
    pub plugged_blocks_foreground: u64,
    pub plugged_blocks_background: u64,
    pub plug_copybacks: u64,
    pub plug_read_programs: u64,
    /// TL-open zones closed, the valid blocks their closes plugged (part of
    /// `plugged_blocks_foreground`), and the time from each close's arrival to its last copy
    /// (what a host waiting for the close waits, before the link).
    pub tl_closes: u64,
    pub plugged_blocks_at_close: u64,
    pub tl_close_ns: u64,
    /// At each close's arrival, how long until the busiest of the zone's dies has done the
    /// work already reserved on it (the queue the close's copies wait behind).
    pub tl_close_queue_ns: u64,
}

/// Device DRAM in use, by purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DramUsage {
    /// The zone table: state, write pointer and flash mapping of every zone.
    pub zone_map_bytes: u64,
    pub write_buffer_bytes: u64,
}

impl DramUsage {
    pub fn total_bytes(&self) -> u64 {
        self.zone_map_bytes + self.write_buffer_bytes
    }
}
