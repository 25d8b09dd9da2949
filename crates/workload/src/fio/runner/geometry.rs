//! What fio knows of the device: its geometry and limits as Identify reports them (as fio
//! learns a zoned block device's from the kernel), never read from the device's configuration.

use device::DeviceHandle;

#[derive(Clone, Debug)]
pub struct Geometry {
    pub lba_bytes: u64,
    /// Metadata bytes per LBA (MS).
    pub metadata_bytes: u64,
    pub zone_size_lbas: u64,
    pub zone_capacity_lbas: u64,
    pub zone_count: u32,
    /// Max open zones; 0 = no limit.
    pub max_open: u32,
    /// MDTS in bytes.
    pub max_transfer_bytes: u64,
    /// Namespace size in LBAs (NSZE).
    namespace_lbas: u64,
}

impl Geometry {
    pub fn of(dev: &DeviceHandle) -> Geometry {
        let id = dev.with(|c| c.identify());
        // Identify's limits are 0's based, all ones meaning none.
        let limit = |n: u32| if n == u32::MAX { 0 } else { n + 1 };
        Geometry {
            lba_bytes: id.lba_bytes,
            metadata_bytes: id.metadata_bytes,
            zone_size_lbas: id.zsze,
            zone_capacity_lbas: id.zcap,
            zone_count: id.zone_count,
            max_open: limit(id.mor),
            max_transfer_bytes: id.mdts_bytes,
            namespace_lbas: id.nsze,
        }
    }

    pub fn namespace_lbas(&self) -> u64 {
        self.namespace_lbas
    }

    pub fn zone_capacity_bytes(&self) -> u64 {
        self.zone_capacity_lbas * self.lba_bytes
    }
}
