//! Named flash configurations, each with its source.

use crate::NandConfig;

/// Channel speed where a paper gives none: ONFI 4.x NV-DDR3 at 800 MT/s on an 8-bit bus
/// (800 MB/s, a 16 KiB page in about 20 µs). An assumption, not a paper's figure.
const ONFI4_CHANNEL_BYTES_PER_S: u64 = 800_000_000;

/// CCZNS (HPCA'25) §V "SSD configurations": 64 dies (8 channels × 8 dies), 16 KiB pages,
/// 32 MiB blocks, 128 GiB in all; TLC read 90 µs, program 700 µs, erase 5 ms.
pub fn cczns_hpca25() -> NandConfig {
    NandConfig {
        channels: 8,
        dies_per_channel: 8,
        planes_per_die: 1,
        blocks_per_plane: 64,  // 128 GiB / 64 dies / 32 MiB
        pages_per_block: 2048, // 32 MiB / 16 KiB
        page_bytes: 16 << 10,
        oob_bytes_per_page: 2048, // typical spare area for a 16 KiB page (assumption)
        multi_plane: false,
        pages_per_program: 1,
        read_latency_ns: 90_000,
        program_latency_ns: 700_000,
        erase_latency_ns: 5_000_000,
        channel_bytes_per_s: ONFI4_CHANNEL_BYTES_PER_S,
    }
}

/// ZNS+ (OSDI'21) §4 and Table 2, TLC column: 16 chips (8 channels × 2 ways), 16 KiB pages,
/// 128 pages per block, 16 GiB; read 60 µs, program 700 µs, DMA 24 µs per page. Erase is not
/// given in Table 2: 5 ms assumed (same TLC class as CCZNS).
pub fn znsplus_tlc() -> NandConfig {
    NandConfig {
        channels: 8,
        dies_per_channel: 2,
        planes_per_die: 1,
        blocks_per_plane: 512, // 16 GiB / 16 chips / 2 MiB
        pages_per_block: 128,
        page_bytes: 16 << 10,
        oob_bytes_per_page: 2048,
        multi_plane: false,
        pages_per_program: 1,
        read_latency_ns: 60_000,
        program_latency_ns: 700_000,
        erase_latency_ns: 5_000_000,
        channel_bytes_per_s: (16384u64 * 1_000_000) / 24, // 16 KiB per 24 µs
    }
}

/// ZNS+ Table 2, MLC column: read 35 µs, program 390 µs, DMA 24 µs. Erase assumed 3 ms.
pub fn znsplus_mlc() -> NandConfig {
    NandConfig {
        read_latency_ns: 35_000,
        program_latency_ns: 390_000,
        erase_latency_ns: 3_000_000,
        ..znsplus_tlc()
    }
}

/// ZNS+ Table 2, Z-NAND column: read 3 µs, program 100 µs, DMA 3.4 µs. Erase assumed 1 ms.
pub fn znsplus_znand() -> NandConfig {
    NandConfig {
        read_latency_ns: 3_000,
        program_latency_ns: 100_000,
        erase_latency_ns: 1_000_000,
        channel_bytes_per_s: (16384u64 * 10_000_000) / 34, // 16 KiB per 3.4 µs
        ..znsplus_tlc()
    }
}

/// Balloon-ZNS (DAC'24) §4: 8 channels × 8 dies, 128 blocks per die, 8192 pages of 4 KiB per
/// block, 256 GiB; QLC read 121 µs, program 1.86 ms, erase 6.34 ms.
pub fn balloon_qlc() -> NandConfig {
    NandConfig {
        channels: 8,
        dies_per_channel: 8,
        planes_per_die: 1,
        blocks_per_plane: 128,
        pages_per_block: 8192,
        page_bytes: 4096,
        oob_bytes_per_page: 512,
        multi_plane: false,
        pages_per_program: 1,
        read_latency_ns: 121_000,
        program_latency_ns: 1_860_000,
        erase_latency_ns: 6_340_000,
        channel_bytes_per_s: ONFI4_CHANNEL_BYTES_PER_S,
    }
}

/// WD ZN540-like, from NVMeVirt's WD_ZN540 parameter set (research/simulator-anchors.md §2.3,
/// research/zenfs-rocksdb.md §4.1): 8 channels × 4 dies, 32 KiB pages programmed 3 at a time
/// (TLC one-shot), channel 450 MB/s, read 50 µs, program 561 µs. A block is sized so that one
/// block per die makes the 1077 MiB zone capacity (1077 pages = 359 one-shot programs);
/// 904 blocks per die give the 904 zones. NVMeVirt ships erase 0; 5 ms is assumed (TLC).
pub fn zn540_like() -> NandConfig {
    NandConfig {
        channels: 8,
        dies_per_channel: 4,
        planes_per_die: 1,
        blocks_per_plane: 904,
        pages_per_block: 1077,
        page_bytes: 32 << 10,
        oob_bytes_per_page: 4096,
        multi_plane: false,
        pages_per_program: 3,
        read_latency_ns: 50_000,
        program_latency_ns: 561_000,
        erase_latency_ns: 5_000_000,
        channel_bytes_per_s: 450_000_000,
    }
}

/// ZenFS+ (IEEE Access 2023) §III: SK hynix's small-zone ZNS SSD, 2 TB in 29,172 zones of
/// 72 MB, one zone per internal parallel unit. The paper gives no flash figures. The geometry
/// is seed-specs B.4-2's: 8 channels × 4 dies (zones 8 apart share a channel, 32 apart a die,
/// as Fig. 3's bands are spaced), 4 planes programmed and read together (64 KiB units), 1152
/// pages per block so one multi-plane block is one 72 MiB zone, 912 blocks per plane (room
/// for 29,184 zones), tPROG 570 µs, erase 3.5 ms. The read time and the channel are
/// calibrated to the paper's Fig. 3 probe (192 KiB reads of zone X beside a reader of zone 0:
/// ~490 µs, ~550 µs on zone 0's channel, ~850 µs on its die; `host/tests/izg.rs`): B.4-2's
/// tR 65 µs on an 800 MB/s channel puts each die's 64 KiB transfers on the channel half the
/// time, so two readers of one channel queue on it (1.45× alone, not 1.12×). tR 80 µs on a
/// 1000 MB/s channel (ONFI 4.1's 1066 MT/s class) gives 496 / 541 / 848 µs.
pub fn zenfsplus_hynix() -> NandConfig {
    NandConfig {
        channels: 8,
        dies_per_channel: 4,
        planes_per_die: 4,
        blocks_per_plane: 912,
        pages_per_block: 1152,
        page_bytes: 16 << 10,
        oob_bytes_per_page: 2048,
        multi_plane: true,
        pages_per_program: 1,
        read_latency_ns: 80_000,
        program_latency_ns: 570_000,
        erase_latency_ns: 3_500_000,
        channel_bytes_per_s: 1_000_000_000,
    }
}

/// A tiny array for fast tests: 2 channels × 2 dies, 4 KiB pages, 16 pages per block, 16 blocks.
pub fn test_min() -> NandConfig {
    NandConfig {
        channels: 2,
        dies_per_channel: 2,
        planes_per_die: 1,
        blocks_per_plane: 16,
        pages_per_block: 16,
        page_bytes: 4096,
        oob_bytes_per_page: 128,
        multi_plane: false,
        pages_per_program: 1,
        read_latency_ns: 50_000,
        program_latency_ns: 500_000,
        erase_latency_ns: 2_000_000,
        channel_bytes_per_s: ONFI4_CHANNEL_BYTES_PER_S,
    }
}

/// Every flash preset by name.
pub fn all() -> Vec<(&'static str, NandConfig)> {
    vec![
        ("cczns", cczns_hpca25()),
        ("znsplus-tlc", znsplus_tlc()),
        ("znsplus-mlc", znsplus_mlc()),
        ("znsplus-znand", znsplus_znand()),
        ("balloon-qlc", balloon_qlc()),
        ("zn540", zn540_like()),
        ("zenfsplus-hynix", zenfsplus_hynix()),
        ("test-min", test_min()),
    ]
}
