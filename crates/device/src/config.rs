//! Device configuration as written in TOML: `[nand]`, `[zones]`, `[lba]`, `[pcie]`, `[controller]`.

use codec::Codec;
use nand::{ConfigError, NandConfig};
use serde::{Deserialize, Serialize};

pub use crate::design::balloon::config::BalloonConfig;
pub use crate::design::tcssd::config::TcssdConfig;
pub use crate::design::znsplus::config::{Plugging, ZnsplusConfig};

/// A whole device: flash, zones, LBA format, host link and controller.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceConfig {
    /// Preset or user name, shown in reports.
    pub name: String,
    /// Which storage manager and command extensions the controller runs.
    #[serde(default)]
    pub design: DesignName,
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
    /// ZNS+'s threaded logging (used by the `znsplus` design).
    #[serde(default)]
    pub znsplus: ZnsplusConfig,
}

/// A device design's name in a configuration (`design = "..."`); the design itself is a
/// [`crate::design::Design`] (`design::build` makes it from this name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DesignName {
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
    /// ZNS+ (OSDI'21 §3.2): plain ZNS plus in-storage zone compaction (copyback for whole
    /// chunks that stay on their chip, read + program otherwise) and identify_mapping.
    Znsplus,
}

impl DesignName {
    pub const ALL: [DesignName; 5] = [
        DesignName::Zns,
        DesignName::Cczns,
        DesignName::Balloon,
        DesignName::Tcssd,
        DesignName::Znsplus,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DesignName::Zns => "zns",
            DesignName::Cczns => "cczns",
            DesignName::Balloon => "balloon",
            DesignName::Tcssd => "tcssd",
            DesignName::Znsplus => "znsplus",
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

/// The host link, under `[pcie]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieConfig {
    pub lanes: u32,
    /// Usable bytes per second per lane and direction (Gen3: 985 MB/s after 128b/130b).
    pub lane_bytes_per_s: u64,
    /// Whether reads and writes cross the link at the same time (`full`, as PCIe does) or take
    /// turns on one timeline (`half`, as an emulator that keeps one DMA timeline does).
    #[serde(default, skip_serializing_if = "Duplex::is_full")]
    pub duplex: Duplex,
}

/// How the two directions of the host link share it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Duplex {
    /// Each direction is a timeline of its own.
    #[default]
    Full,
    /// One timeline for both directions: a read's data waits for writes' data and back.
    Half,
}

impl Duplex {
    fn is_full(&self) -> bool {
        *self == Duplex::Full
    }
}

impl Default for PcieConfig {
    /// PCIe Gen3 ×4, the link of the FEMU-emulated and ZN540 devices.
    fn default() -> Self {
        PcieConfig {
            lanes: 4,
            lane_bytes_per_s: 985_000_000,
            duplex: Duplex::Full,
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
    /// FEMU's (QEMU's) `zns_finish_zone` does, which the CCZNS and ZNS+ papers ran on.
    #[serde(default = "yes")]
    pub finish_pads_flash: bool,
    /// Split the write buffer in equal parts, one per independent die group (a zone's writes
    /// wait for room in their group's part), so one group's writes cannot queue programs far
    /// ahead of another group's reads on the same dies: a per-die bound on outstanding
    /// programs, as a controller's per-die queues give. The zns design only. Off: one buffer
    /// shared by all zones.
    #[serde(default)]
    pub write_buffer_per_zone_group: bool,
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
            write_buffer_per_zone_group: false,
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
