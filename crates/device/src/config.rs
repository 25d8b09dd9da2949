//! Device configuration as written in TOML: `[nand]`, `[zones]`, `[lba]`, `[pcie]`, `[controller]`.

use codec::Codec;
use nand::{ConfigError, NandConfig};
use serde::{Deserialize, Serialize};

/// A whole device: flash, zones, LBA format, host link and controller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Preset or user name, shown in reports.
    pub name: String,
    /// Which storage manager and command extensions the controller runs.
    #[serde(default)]
    pub design: Design,
    pub nand: NandConfig,
    pub zones: ZonesConfig,
    #[serde(default)]
    pub lba: LbaConfig,
    #[serde(default)]
    pub pcie: PcieConfig,
    #[serde(default)]
    pub controller: ControllerConfig,
    /// The in-device compressor (used by the compressing designs).
    #[serde(default)]
    pub compression: CompressionConfig,
    /// Balloon-ZNS storage management (used by the `balloon` design).
    #[serde(default)]
    pub balloon: BalloonConfig,
    /// The transparently compressing block SSD's FTL (used by the `tcssd` design).
    #[serde(default)]
    pub tcssd: TcssdConfig,
}

/// A device design: one controller, different storage managers and commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// Plain NVMe ZNS.
    #[default]
    Zns,
    /// CCZNS (HPCA'25 §III): compressed-write / decompressed-read, byte-addressable zones,
    /// padding zones, chunk metadata in each flash page's OOB. Plain commands keep working.
    Cczns,
    /// Balloon-ZNS (DAC'24 §3): host-transparent compression of every 4 KiB page into slots of
    /// sub-superblocks, residues of overlarge pages logged in shared extra sub-superblocks.
    Balloon,
    /// A transparently compressing block SSD (DP-CSD, ScaleFlux CSD): a conventional namespace
    /// larger than the flash, every 4 KiB block compressed and packed, a fine-grained map in
    /// device DRAM, device garbage collection with over-provisioning. No zone commands.
    Tcssd,
}

impl Design {
    pub const ALL: [Design; 4] = [Design::Zns, Design::Cczns, Design::Balloon, Design::Tcssd];

    pub fn name(self) -> &'static str {
        match self {
            Design::Zns => "zns",
            Design::Cczns => "cczns",
            Design::Balloon => "balloon",
            Design::Tcssd => "tcssd",
        }
    }
}

/// Balloon-ZNS parameters, under `[balloon]`. Defaults are the paper's (Balloon-ZNS §3.1, §3.2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BalloonConfig {
    /// Sub-superblocks per superblock (§4.1: 1/8 of the superblock). Each takes one block on
    /// `dies / sub_superblocks` dies.
    pub sub_superblocks: u32,
    /// Profiling windows per zone (§3.1: a window is 1/8 of the zone).
    pub windows_per_zone: u32,
    /// Slot size = this percentile of the previous window's compressed page sizes (§3.1: 70).
    pub slot_percentile: u32,
    /// Slot size of a zone's first window in 256 B units (§3.1: half a page, 8 for 4 KiB).
    pub first_slot_units: u32,
    /// Logical capacity as a percentage of the physical capacity (§3.2: the capacity
    /// expansion ratio; 200 = the paper's example of 2).
    pub expansion_percent: u32,
    /// A window whose compression ratio × 100 is below this makes the rest of its zone
    /// incompressible: stored raw on a whole superblock (§3.2 names the watermark but not its
    /// value; 110 is assumed). 0 disables it.
    pub incompressible_below_percent: u32,
    /// Balloon's 4 KiB flash pages sensed by one read: 1 on 4 KiB-page flash; 4 when they
    /// are the sectors of a 16 KiB physical page (the `cczns-balloon` preset), so a slot that
    /// straddles two of them inside one physical page costs one read, as on the real flash.
    pub pages_per_read: u32,
}

impl Default for BalloonConfig {
    fn default() -> Self {
        BalloonConfig {
            sub_superblocks: 8,
            windows_per_zone: 8,
            slot_percentile: 70,
            first_slot_units: 8,
            expansion_percent: 200,
            incompressible_below_percent: 110,
            pages_per_read: 1,
        }
    }
}

/// The transparently compressing SSD's FTL, under `[tcssd]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcssdConfig {
    /// Logical capacity as a percentage of the flash left after over-provisioning (ScaleFlux
    /// CSD 2000 exposes up to 2x; DPZip §2 Challenge #1 discusses the map this costs).
    pub expansion_percent: u32,
    /// Flash kept back from the logical capacity for GC (7% is the usual consumer figure,
    /// an assumption; the papers give none).
    pub over_provisioning_percent: u32,
    /// Garbage collection runs when fewer superblocks than this are free.
    pub gc_free_superblocks: u32,
    /// Bytes per map entry (physical address and length of one 4 KiB block's compressed form).
    pub map_entry_bytes: u32,
}

impl Default for TcssdConfig {
    fn default() -> Self {
        TcssdConfig {
            expansion_percent: 200,
            over_provisioning_percent: 7,
            gc_free_superblocks: 2,
            map_entry_bytes: 8,
        }
    }
}

/// The compressor inside the device, under `[compression]`: the codec makes the bytes, the
/// engine profile (by name, see `znslab devices`) gives the time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompressionConfig {
    pub codec: Codec,
    pub engine: String,
}

impl Default for CompressionConfig {
    /// CCZNS §V-A: CC(ZSTD) is zstd level 1 on in-storage engines of 11/14 GB/s.
    fn default() -> Self {
        CompressionConfig {
            codec: Codec::ZSTD1,
            engine: "cczns-asic".into(),
        }
    }
}

/// Which dies a zone is striped over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ZoneMapping {
    /// Every zone spans every die (large-zone devices).
    AllDies,
    /// Even zones on the first half of the channels, odd zones on the second half, all dies of
    /// those channels (the CCZNS §V setup, "similar to WD ZN540").
    HalfDies,
    /// Each zone lives on `channels_per_zone × dies_per_channel_per_zone` dies; zones in
    /// different groups share no die (ConfZNS mapping; small-zone devices for ZenFS+).
    DieGroups {
        channels_per_zone: u32,
        dies_per_channel_per_zone: u32,
    },
}

/// Zone geometry and limits, under `[zones]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZonesConfig {
    pub mapping: ZoneMapping,
    /// Erase units (blocks) a zone takes on each of its dies.
    #[serde(default = "one_u64")]
    pub erase_units_per_die: u64,
    /// Writable bytes per zone (ZCAP); default: everything the zone's blocks hold.
    #[serde(default)]
    pub capacity_bytes: Option<u64>,
    /// LBA span per zone (ZSZE); default: the capacity. May exceed it (ZN540: 2 GiB vs 1077 MiB).
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Number of zones; default: as many as the flash holds.
    #[serde(default)]
    pub count: Option<u32>,
    /// Max open zones (0 = no limit).
    #[serde(default)]
    pub max_open: u32,
    /// Max active zones (0 = no limit).
    #[serde(default)]
    pub max_active: u32,
}

fn one_u64() -> u64 {
    1
}

/// LBA format, under `[lba]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LbaConfig {
    /// Logical block size (LBADS as bytes): 512 or 4096.
    #[serde(default = "lba_bytes_default")]
    pub bytes: u32,
    /// Metadata bytes that travel with each block (MS), as a separate buffer.
    #[serde(default)]
    pub metadata_bytes: u32,
}

fn lba_bytes_default() -> u32 {
    4096
}

impl Default for LbaConfig {
    fn default() -> Self {
        LbaConfig {
            bytes: 4096,
            metadata_bytes: 0,
        }
    }
}

/// The host link, under `[pcie]`. Each direction is a separate timeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieConfig {
    pub lanes: u32,
    /// Usable bytes per second per lane and direction (Gen3: 985 MB/s after 128b/130b).
    pub lane_bytes_per_s: u64,
}

impl Default for PcieConfig {
    /// PCIe Gen3 ×4, the link of the FEMU-emulated and ZN540 devices.
    fn default() -> Self {
        PcieConfig {
            lanes: 4,
            lane_bytes_per_s: 985_000_000,
        }
    }
}

/// How the write buffer hands data to flash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlushUnit {
    /// Program each die's unit as soon as it is full.
    Page,
    /// Wait for a whole stripe (one unit on every die of the zone), then program them together.
    Stripe,
}

/// Controller behaviour, under `[controller]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Capacitor-protected write buffer shared by all zones.
    pub write_buffer_bytes: u64,
    pub flush_unit: FlushUnit,
    /// Fixed firmware and queue handling per command (fetch, decode, completion post).
    pub command_overhead_ns: u64,
    /// Maximum data transfer size per command (MDTS) in bytes.
    pub max_transfer_bytes: u64,
    /// Zone Append size limit (ZASL) in bytes; 0 means the MDTS.
    pub zone_append_max_bytes: u64,
    /// Close an implicitly opened zone to make room when the open limit is hit (QEMU default).
    pub auto_transition: bool,
    /// Finish programs the rest of the zone's flash (dummy data), as real TLC devices must to
    /// close their blocks: about a second for an empty 1 GiB zone (ConfZNS++, SYSTOR'24).
    /// Off: Finish programs only the buffered partial unit and moves the write pointer, as
    /// FEMU's (QEMU's) `zns_finish_zone` does, which the CCZNS, ZNS+ and ZenFS+ papers ran on.
    #[serde(default = "yes")]
    pub finish_pads_flash: bool,
}

fn yes() -> bool {
    true
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            // An assumption: 8 MiB, two pages on each of 64 dies and then some; no paper gives it.
            write_buffer_bytes: 8 << 20,
            flush_unit: FlushUnit::Page,
            // NVMeVirt WD_ZN540 firmware read latency is 13-20 µs; FEMU adds none. 5 µs assumed.
            command_overhead_ns: 5_000,
            max_transfer_bytes: 2 << 20,
            zone_append_max_bytes: 0,
            auto_transition: true,
            finish_pads_flash: true,
        }
    }
}

impl DeviceConfig {
    /// Parse a device TOML file's text; unknown fields are refused with their names.
    pub fn from_toml(text: &str) -> Result<DeviceConfig, ConfigError> {
        toml::from_str(text).map_err(|e| {
            let field = e
                .span()
                .map(|s| text[s].chars().take(60).collect::<String>())
                .unwrap_or_default();
            ConfigError::new(
                format!("device file near `{field}`"),
                e.message().to_string(),
            )
        })
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a DeviceConfig always serialises")
    }
}

pub(crate) fn err(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::new(format!("device.{field}"), message)
}
