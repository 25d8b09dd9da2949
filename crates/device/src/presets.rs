//! Named devices, each with its source. `znslab devices` lists these.

use crate::config::{
    BalloonConfig, CompressionConfig, ControllerConfig, DesignName, DeviceConfig, Duplex,
    LbaConfig, PcieConfig, TcssdConfig, ZoneMapping, ZonesConfig,
};

/// Zones of one erase unit per die, sized by the flash, with the given mapping and limits.
fn zones_of(mapping: ZoneMapping, max_open: u32, max_active: u32) -> ZonesConfig {
    ZonesConfig {
        mapping,
        erase_units_per_die: 1,
        capacity_bytes: None,
        size_bytes: None,
        count: None,
        max_open,
        max_active,
    }
}

/// A preset: its name, one line on what it is, and the configuration.
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    pub config: fn() -> DeviceConfig,
}

/// The default device: the CCZNS paper's evaluation SSD.
pub const DEFAULT: &str = "cczns";

/// CCZNS (HPCA'25) §V: 64 dies, 1 GiB zones each over 32 blocks on half of the dies (even zones
/// on channels 0-3, odd on 4-7, "similar to WD ZN540"), 128 GiB, 4 KiB blocks with 64 B of
/// metadata each. Open/active limits are not given; ZN540's 14 is used. The CCZNS design:
/// plain commands behave as on a ZNS SSD (the paper's NO runs on the same device), CW/DR add
/// in-storage zstd-1 on the 11/14 GB/s engines of §V-A.
pub fn cczns() -> DeviceConfig {
    DeviceConfig {
        name: "cczns".into(),
        design: DesignName::Cczns,
        nand: nand::presets::cczns_hpca25(),
        zones: zones_of(ZoneMapping::HalfDies, 14, 14),
        lba: LbaConfig {
            bytes: 4096,
            metadata_bytes: 64,
        },
        pcie: PcieConfig::default(),
        controller: ControllerConfig {
            // CCZNS §V-A: the paper's device is emulated by FEMU, whose Finish moves the write
            // pointer without programming the rest of the zone.
            finish_pads_flash: false,
            ..ControllerConfig::default()
        },
        compression: CompressionConfig::default(),
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig::default(),
        znsplus: Default::default(),
    }
}

/// The CCZNS device with the host link the paper's emulator had: FEMU copies guest memory
/// without modelling PCIe, so its link is as good as unbounded. Modelled as PCIe Gen5 ×16
/// (63 GB/s per direction), far above anything this flash can deliver.
pub fn cczns_femu() -> DeviceConfig {
    DeviceConfig {
        name: "cczns-femu".into(),
        pcie: PcieConfig {
            lanes: 16,
            lane_bytes_per_s: 3_938_000_000,
            duplex: Duplex::Full,
        },
        ..cczns()
    }
}

/// The CCZNS flash with small zones: one die per zone, 64 independent zone groups (ConfZNS
/// "SU" mapping; the small-zone devices of ZenFS+). 384 open/active zones as Samsung PM1731a.
pub fn cczns_small_zones() -> DeviceConfig {
    DeviceConfig {
        name: "cczns-small-zones".into(),
        design: DesignName::Zns,
        zones: ZonesConfig {
            mapping: ZoneMapping::DieGroups {
                channels_per_zone: 1,
                dies_per_channel_per_zone: 1,
            },
            max_open: 384,
            max_active: 384,
            ..cczns().zones
        },
        lba: LbaConfig::default(),
        ..cczns()
    }
}

fn znsplus(name: &str, nand: nand::NandConfig) -> DeviceConfig {
    DeviceConfig {
        name: name.into(),
        design: DesignName::Znsplus,
        // Spare flash block groups are not stated (seed-specs A.4-5): 16 spare blocks per
        // chip beyond the 512 zones' (six LogFBGs and resets that need not wait for erases).
        nand: nand::NandConfig {
            blocks_per_plane: nand.blocks_per_plane + 16,
            ..nand
        },
        // §4: D_zone = 16 chips, one 2 MiB block each: 32 MiB zones, 512 of them (16 GiB).
        zones: ZonesConfig {
            count: Some(512),
            ..zones_of(ZoneMapping::AllDies, 0, 0)
        },
        lba: LbaConfig::default(),
        // Table 2: PCIe Gen2 ×2, 1.2 GB/s (600 MB/s per lane, §4.5). Half duplex as the
        // artifact's emulator: reads and writes take turns on its one DMA timeline
        // (`DMA_next_avail_time`, femu/hw/block/nvme.c:1015-1022 reads, :2480-2498 writes),
        // which is where §2.3's "device-to-host transfer ≈ 44 % of the read latency" comes from.
        pcie: PcieConfig {
            lanes: 2,
            lane_bytes_per_s: 600_000_000,
            duplex: Duplex::Half,
        },
        controller: ControllerConfig {
            write_buffer_bytes: 2 << 20,
            ..ControllerConfig::default()
        },
        compression: CompressionConfig::default(),
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig::default(),
        znsplus: Default::default(),
    }
}

/// ZNS+ (OSDI'21) Table 2 with TLC flash.
pub fn znsplus_tlc() -> DeviceConfig {
    znsplus("znsplus-tlc", nand::presets::znsplus_tlc())
}
/// ZNS+ Table 2 with MLC flash.
pub fn znsplus_mlc() -> DeviceConfig {
    znsplus("znsplus-mlc", nand::presets::znsplus_mlc())
}
/// ZNS+ Table 2 with Z-NAND.
pub fn znsplus_znand() -> DeviceConfig {
    znsplus("znsplus-znand", nand::presets::znsplus_znand())
}

/// Balloon-ZNS DAC'24 §4.1: 256 GB of QLC (121 µs / 1.86 ms / 6.34 ms) on 8 channels × 8 dies,
/// 4 KiB pages, 8192 pages per block; a zone is a 2 GiB superblock (one block on each of the 64
/// dies), split in 8 sub-superblocks of 8 dies. Pages are compressed with Deflate (§2: static
/// Huffman; level 1 here) and timed as Intel QAT 8970, the card §4.1 plugs into FEMU (~25/15 µs
/// per page). Logical capacity is twice the flash (expansion ratio 2, §3.2's example).
pub fn balloon_qlc() -> DeviceConfig {
    DeviceConfig {
        name: "balloon-qlc".into(),
        design: DesignName::Balloon,
        nand: nand::presets::balloon_qlc(),
        zones: zones_of(ZoneMapping::AllDies, 0, 0),
        lba: LbaConfig::default(),
        pcie: PcieConfig::default(),
        controller: ControllerConfig::default(),
        compression: CompressionConfig {
            codec: codec::Codec::Deflate(1),
            engine: "qat-8970".into(),
        },
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig::default(),
        znsplus: Default::default(),
    }
}

/// Base-ZNS of Balloon-ZNS §4.1: the same QLC flash and 2 GiB superblock zones, no compression.
pub fn balloon_base() -> DeviceConfig {
    DeviceConfig {
        name: "balloon-base".into(),
        design: DesignName::Zns,
        ..balloon_qlc()
    }
}

/// CCZNS §V-A's Balloon scheme: Balloon-ZNS on the CCZNS paper's emulated flash (64 TLC dies,
/// 16 KiB pages, 32 MiB blocks), compressing with ZSTD level 1 as the paper's "Balloon-ZNS
/// (ZSTD)" does, on the CCZNS engine. Zones are superblocks (one block on each die, 2 GiB) split
/// in 8 sub-superblocks of 8 dies, as Balloon-ZNS lays them out; the CCZNS paper gives no other
/// layout. Balloon-ZNS compresses 4 KiB pages, so the 16 KiB flash page is modelled as four
/// 4 KiB pages programmed and sensed together (same program bandwidth; pages of one physical
/// page cost one read).
/// Open/active limits as the CCZNS device (14).
pub fn cczns_balloon() -> DeviceConfig {
    DeviceConfig {
        name: "cczns-balloon".into(),
        design: DesignName::Balloon,
        nand: nand::NandConfig {
            page_bytes: 4096,
            pages_per_block: 4 * 2048,
            pages_per_program: 4,
            oob_bytes_per_page: 512,
            ..nand::presets::cczns_hpca25()
        },
        zones: zones_of(ZoneMapping::AllDies, 14, 14),
        compression: CompressionConfig {
            codec: codec::Codec::ZSTD1,
            engine: "cczns-asic".into(),
        },
        balloon: BalloonConfig {
            pages_per_read: 4,
            ..BalloonConfig::default()
        },
        ..balloon_qlc()
    }
}

/// WD ZN540-like (research/zenfs-rocksdb.md §4.1, NVMeVirt WD_ZN540): 904 zones of 2 GiB LBA
/// span and 1077 MiB capacity over 32 dies, 14 open/active, PCIe 3050 MB/s, firmware 13 µs,
/// a write buffer of 10 one-shot units for each of the 14 open zones.
pub fn zn540() -> DeviceConfig {
    DeviceConfig {
        name: "zn540".into(),
        design: DesignName::Zns,
        nand: nand::presets::zn540_like(),
        zones: ZonesConfig {
            capacity_bytes: Some(1077 << 20),
            size_bytes: Some(2 << 30),
            ..zones_of(ZoneMapping::AllDies, 14, 14)
        },
        lba: LbaConfig::default(),
        pcie: PcieConfig {
            lanes: 4,
            lane_bytes_per_s: 762_500_000,
            duplex: Duplex::Full,
        },
        controller: ControllerConfig {
            write_buffer_bytes: (14 * 10 * 96) << 10,
            command_overhead_ns: 13_000,
            ..ControllerConfig::default()
        },
        compression: CompressionConfig::default(),
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig::default(),
        znsplus: Default::default(),
    }
}

/// ZenFS+ (IEEE Access 2023) §III's SK hynix small-zone ZNS SSD: 29,172 zones of 72 MiB
/// (2 TB), each zone one multi-plane block of one die, so zones 32 apart share a die (one
/// independent zone group, IZG) and zones 8 apart a channel; PCIe 3.0 ×4. The flash is
/// seed-specs B.4-2's assumption (`nand::presets::zenfsplus_hynix`); open/active limits are
/// not given: 384 as Samsung PM1731a (B.4-5). A 4 MiB write buffer: two 64 KiB program units
/// per die (B.4-2).
pub fn zenfsplus_hynix() -> DeviceConfig {
    zenfsplus_hynix_zones("zenfsplus-hynix", 29_172)
}

/// `zenfsplus-hynix` with `zones` zones (blocks per plane cut to the zones each die needs):
/// the same dies, channels, zone size and IZGs, a smaller drive, for runs at a scale
/// (seed-specs B.5: zones per die = max(16, 912 · S)).
pub fn zenfsplus_hynix_zones(name: &str, zones: u32) -> DeviceConfig {
    let mut nand = nand::presets::zenfsplus_hynix();
    let dies = nand.channels * nand.dies_per_channel;
    nand.blocks_per_plane = zones.div_ceil(dies).clamp(1, nand.blocks_per_plane);
    DeviceConfig {
        name: name.into(),
        design: DesignName::Zns,
        nand,
        zones: ZonesConfig {
            count: Some(zones),
            ..zones_of(
                ZoneMapping::DieGroups {
                    channels_per_zone: 1,
                    dies_per_channel_per_zone: 1,
                },
                384,
                384,
            )
        },
        lba: LbaConfig::default(),
        pcie: PcieConfig::default(),
        // 4 MiB: two 64 KiB program units for each die (B.4-2), and no more, so a writer
        // cannot queue programs far ahead of a reader of its die (the Fig. 3(b) probe).
        controller: ControllerConfig {
            write_buffer_bytes: 4 << 20,
            write_buffer_per_zone_group: true,
            ..ControllerConfig::default()
        },
        compression: CompressionConfig::default(),
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig::default(),
        znsplus: Default::default(),
    }
}

/// `zenfsplus-hynix` at `reproduce zenfsplus`'s default scale 1/16: 57 zones per die, 1,824
/// zones (128 GiB).
pub fn zenfsplus_hynix_small() -> DeviceConfig {
    zenfsplus_hynix_zones("zenfsplus-hynix-small", 57 * 32)
}

/// A tiny device for fast tests: 4 dies, 16 zones of 256 KiB (64 blocks of 4 KiB), 16 B of
/// metadata per block, 4 open / 6 active zones.
pub fn test_min() -> DeviceConfig {
    DeviceConfig {
        name: "test-min".into(),
        design: DesignName::Zns,
        nand: nand::presets::test_min(),
        zones: zones_of(ZoneMapping::AllDies, 4, 6),
        lba: LbaConfig {
            bytes: 4096,
            metadata_bytes: 16,
        },
        pcie: PcieConfig::default(),
        controller: ControllerConfig {
            write_buffer_bytes: 64 << 10,
            ..ControllerConfig::default()
        },
        compression: CompressionConfig::default(),
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig::default(),
        znsplus: Default::default(),
    }
}

/// `test-min` with the Balloon-ZNS design: 16 superblocks of 4 dies, each split in 4
/// sub-superblocks of one die (64 KiB); 256 KiB zones in 8 windows of 8 pages; 32 zones.
pub fn test_balloon() -> DeviceConfig {
    DeviceConfig {
        name: "test-balloon".into(),
        design: DesignName::Balloon,
        lba: LbaConfig {
            bytes: 4096,
            metadata_bytes: 0,
        },
        compression: CompressionConfig {
            codec: codec::Codec::Deflate(1),
            engine: "qat-8970".into(),
        },
        balloon: BalloonConfig {
            sub_superblocks: 4,
            ..BalloonConfig::default()
        },
        ..test_min()
    }
}

/// A transparently compressing block SSD on the Balloon-ZNS QLC flash (the same 64 dies and
/// QAT-timed Deflate), for comparing in-device compression without zones: a conventional
/// namespace of 2x the flash left after 7% over-provisioning.
pub fn tcssd_qlc() -> DeviceConfig {
    DeviceConfig {
        name: "tcssd-qlc".into(),
        design: DesignName::Tcssd,
        ..balloon_qlc()
    }
}

/// The transparently compressing block SSD on the CCZNS flash, for CCZNS §V's schemes: the
/// same 64 TLC dies and in-storage zstd-1 engine, a conventional namespace of 2x the flash
/// left after 7% over-provisioning (DP-CSD/ScaleFlux-like; the paper argues against this
/// design in §II but does not measure it). The host emulates zones of one 2 GiB superblock
/// over it, with the cczns device's 14 open/active limits.
pub fn cczns_tcssd() -> DeviceConfig {
    DeviceConfig {
        name: "cczns-tcssd".into(),
        design: DesignName::Tcssd,
        nand: nand::presets::cczns_hpca25(),
        zones: zones_of(ZoneMapping::AllDies, 14, 14),
        lba: LbaConfig {
            bytes: 4096,
            metadata_bytes: 0,
        },
        pcie: PcieConfig::default(),
        controller: ControllerConfig::default(),
        compression: CompressionConfig::default(),
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig::default(),
        znsplus: Default::default(),
    }
}

/// The conventional device an F2FS-like file system keeps its in-place metadata on
/// (superblock, checkpoints, SIT, NAT, SSA): F2FS on a ZNS SSD needs a randomly writable
/// device beside it (multi-device mode), and ZNS+'s FEMU kept them in a region charged as plain
/// page writes. A page-mapped FTL without compression (the tcssd design, codec none, no
/// expansion) on 2 chips of the ZNS+ MLC flash (Table 2): 256 MiB.
pub fn znsplus_meta() -> DeviceConfig {
    let mut nand = nand::presets::znsplus_mlc();
    nand.channels = 1;
    nand.dies_per_channel = 2;
    nand.blocks_per_plane = 64;
    DeviceConfig {
        name: "znsplus-meta".into(),
        design: DesignName::Tcssd,
        nand,
        zones: zones_of(ZoneMapping::AllDies, 0, 0),
        lba: LbaConfig {
            bytes: 4096,
            metadata_bytes: 0,
        },
        pcie: PcieConfig::default(),
        controller: ControllerConfig::default(),
        compression: CompressionConfig {
            codec: codec::Codec::None,
            ..CompressionConfig::default()
        },
        balloon: BalloonConfig::default(),
        tcssd: TcssdConfig {
            expansion_percent: 100,
            ..TcssdConfig::default()
        },
        znsplus: Default::default(),
    }
}

/// `test-min` as a transparently compressing SSD: 16 superblocks of 256 KiB, 25% OP, 2x.
pub fn test_tcssd() -> DeviceConfig {
    DeviceConfig {
        name: "test-tcssd".into(),
        design: DesignName::Tcssd,
        lba: LbaConfig {
            bytes: 4096,
            metadata_bytes: 0,
        },
        compression: CompressionConfig {
            codec: codec::Codec::Deflate(1),
            engine: "qat-8970".into(),
        },
        tcssd: TcssdConfig {
            over_provisioning_percent: 25,
            ..TcssdConfig::default()
        },
        ..test_min()
    }
}

/// `test-min` with the CCZNS design and 64 B of metadata per block (room for chunk sizes).
pub fn test_cczns() -> DeviceConfig {
    DeviceConfig {
        name: "test-cczns".into(),
        design: DesignName::Cczns,
        lba: LbaConfig {
            bytes: 4096,
            metadata_bytes: 64,
        },
        ..test_min()
    }
}

pub fn all() -> Vec<Preset> {
    vec![
        Preset {
            name: "cczns",
            summary: "CCZNS HPCA'25 SSD (CCZNS design): 64 TLC dies, 1 GiB zones on half the dies",
            config: cczns,
        },
        Preset {
            name: "cczns-femu",
            summary: "the cczns device with FEMU's unbounded host link (Gen5 x16 stands in)",
            config: cczns_femu,
        },
        Preset {
            name: "cczns-small-zones",
            summary: "CCZNS flash with one die per zone: 32 MiB zones in 64 independent groups",
            config: cczns_small_zones,
        },
        Preset {
            name: "znsplus-tlc",
            summary: "ZNS+ OSDI'21 Table 2 TLC: 16 chips, 32 MiB zones, PCIe Gen2 x2",
            config: znsplus_tlc,
        },
        Preset {
            name: "znsplus-mlc",
            summary: "ZNS+ OSDI'21 Table 2 MLC: 16 chips, 32 MiB zones",
            config: znsplus_mlc,
        },
        Preset {
            name: "znsplus-znand",
            summary: "ZNS+ OSDI'21 Table 2 Z-NAND: 16 chips, 32 MiB zones",
            config: znsplus_znand,
        },
        Preset {
            name: "znsplus-meta",
            summary: "conventional 256 MiB SSD on ZNS+ MLC flash for an LFS's in-place metadata (F2FS multi-device)",
            config: znsplus_meta,
        },
        Preset {
            name: "balloon-qlc",
            summary: "Balloon-ZNS DAC'24 (balloon design): 64 QLC dies, 2 GiB zones, 2x logical",
            config: balloon_qlc,
        },
        Preset {
            name: "balloon-base",
            summary: "Base-ZNS of Balloon-ZNS DAC'24: same QLC flash, 2 GiB superblock zones",
            config: balloon_base,
        },
        Preset {
            name: "cczns-balloon",
            summary: "Balloon-ZNS (ZSTD) on the CCZNS flash: CCZNS §V-A's Balloon scheme",
            config: cczns_balloon,
        },
        Preset {
            name: "tcssd-qlc",
            summary: "transparently compressing block SSD (tcssd design) on the balloon QLC flash",
            config: tcssd_qlc,
        },
        Preset {
            name: "cczns-tcssd",
            summary: "transparently compressing block SSD on the CCZNS flash (zstd-1 engine)",
            config: cczns_tcssd,
        },
        Preset {
            name: "zn540",
            summary: "WD ZN540-like: 32 dies, 904 zones of 2 GiB size / 1077 MiB capacity",
            config: zn540,
        },
        Preset {
            name: "zenfsplus-hynix",
            summary: "ZenFS+ IEEE Access'23 small-zone SSD: 32 dies, 29,172 zones of 72 MiB, one die each",
            config: zenfsplus_hynix,
        },
        Preset {
            name: "zenfsplus-hynix-small",
            summary: "zenfsplus-hynix with 57 zones per die (1,824 zones): reproduce zenfsplus's scale 1/16",
            config: zenfsplus_hynix_small,
        },
        Preset {
            name: "test-min",
            summary: "tiny device for tests: 4 dies, 16 zones of 256 KiB",
            config: test_min,
        },
        Preset {
            name: "test-cczns",
            summary: "test-min with the CCZNS design (CW/DR, byte-addressable zones)",
            config: test_cczns,
        },
        Preset {
            name: "test-balloon",
            summary: "test-min with the Balloon-ZNS design (1-die sub-superblocks)",
            config: test_balloon,
        },
        Preset {
            name: "test-tcssd",
            summary: "test-min as a transparently compressing block SSD (GC, 25% OP)",
            config: test_tcssd,
        },
    ]
}

/// The preset called `name`.
pub fn by_name(name: &str) -> Option<DeviceConfig> {
    all()
        .into_iter()
        .find(|p| p.name == name)
        .map(|p| (p.config)())
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_preset_validates_and_round_trips_through_toml() {
        for p in super::all() {
            let cfg = (p.config)();
            assert_eq!(cfg.name, p.name);
            cfg.layout().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let back = crate::DeviceConfig::from_toml(&cfg.to_toml()).expect("round trip");
            assert_eq!(back, cfg);
        }
    }

    #[test]
    fn unknown_fields_are_named() {
        let mut text = super::test_min().to_toml();
        text = text.replace("[nand]", "[nand]\nchanels = 3");
        let e = crate::DeviceConfig::from_toml(&text).expect_err("typo");
        assert!(e.to_string().contains("chanels"), "{e}");
    }
}
