//! What a host learns from the device: Identify (the namespace's shape and limits, its command
//! set, vendor-specific capabilities) and the admin commands that set features.

/// Identify Namespace (NVM and ZNS command set fields) and the controller's limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identify {
    /// Namespace size in LBAs.
    pub nsze: u64,
    pub ncap: u64,
    /// LBAs holding data.
    pub nuse: u64,
    pub lba_bytes: u64,
    /// Metadata bytes per LBA (MS).
    pub metadata_bytes: u64,
    /// Zone size in LBAs (ZSZE).
    pub zsze: u64,
    /// Zone capacity in LBAs (the same for every zone here).
    pub zcap: u64,
    pub zone_count: u32,
    /// Max open resources, 0's based; `0xffff_ffff` = no limit.
    pub mor: u32,
    /// Max active resources, 0's based; `0xffff_ffff` = no limit.
    pub mar: u32,
    /// Zone Append size limit in bytes.
    pub zasl_bytes: u64,
    /// Maximum data transfer size in bytes.
    pub mdts_bytes: u64,
    /// Zone operation characteristics (no variable capacity, no active excursions).
    pub zoc: u16,
    /// Optional zoned command support (no read across zone boundaries, no ZRWA).
    pub ozcs: u16,
    /// The namespace's I/O command set (CSI): zoned, or a conventional NVM namespace on which
    /// zone commands are Invalid Opcode and any LBA is writable.
    pub csi: CommandSet,
    /// Vendor-specific capabilities (Identify Controller bytes 3072-4095).
    pub vendor: VendorCaps,
}

/// An I/O command set a namespace speaks (Identify's CSI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandSet {
    /// NVM command set (CSI 00h): a conventional namespace.
    Nvm,
    /// Zoned Namespace command set (CSI 02h).
    Zoned,
}

/// What a device offers beyond the NVMe and ZNS specifications, as a host learns it from the
/// vendor-specific part of Identify Controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VendorCaps {
    /// CCZNS: compressed write (CW), decompressed read (DR) and padding zones (Open with ZSASO).
    pub compressed_io: bool,
    /// Deallocate (Dataset Management) and the DULBE error-recovery feature.
    pub deallocate: bool,
    /// ZNS+: zone_compaction (vendor opcode 81h), identify_mapping (86h), and Copy (19h,
    /// ONCS bit 8) done the same way.
    pub zone_compaction: bool,
    /// ZNS+: TL_open (vendor opcode 85h), threaded logging's sparse sequential overwrite.
    pub tl_open: bool,
}

/// Admin commands the controller takes besides Identify.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdminCommand {
    /// Set Features (09h): feature `fid` with `cdw11`.
    SetFeatures { fid: u8, cdw11: u32 },
}

/// Feature identifiers (Set/Get Features).
pub mod feature {
    /// Error Recovery (05h); CDW11 bit 16 is DULBE.
    pub const ERROR_RECOVERY: u8 = 0x05;
    /// DULBE, in Error Recovery's CDW11.
    pub const DULBE: u32 = 1 << 16;
}
