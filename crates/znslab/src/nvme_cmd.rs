//! `znslab nvme ...`: nvme-cli's subcommands and flags on a device image file.
//!
//! Each invocation opens the image, runs one command at virtual time zero and saves the image.
//! A failed command exits with status 1 and names the NVMe status and its code.
//!
//! This file is the command line: the subcommands and their flags (clap) and [`run`], which
//! hands each to its body. The bodies: [`admin`] (create an image, list images), [`identify`]
//! (the Identify pages: id-ns, id-ctrl and the zns plugin's), [`io`] (read, write, flush,
//! dataset management, io-passthru), [`zns`] (the zns plugin: report zones, zone management,
//! zone append); [`common`] holds what they share (nvme-cli's global flags, opening and saving
//! the image, submitting, nvme-cli's error report). The flags are nvme-cli's (its OPT_* arrays);
//! docs/compat/nvme-cli.md says, flag by flag, what each does here.

mod admin;
mod common;
mod identify;
mod io;
mod zns;
mod znsplus;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, Args, Subcommand};

/// A number in decimal or hex (`0x...`), as nvme-cli takes them.
fn number(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number"))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Normal,
    Json,
    /// nvme-cli's raw structure dump; refused here (see `common::Global::check`).
    Binary,
}

/// nvme-cli's global options (`NVME_ARGS`), which every subcommand takes.
#[derive(Args, Clone, Debug)]
pub struct Global {
    /// Output format: normal|json (binary is refused: no raw structures are kept).
    #[arg(short = 'o', long, value_enum, default_value = "normal")]
    output_format: OutputFormat,
    /// Increase output verbosity (names instead of codes, success messages).
    #[arg(short = 'v', long, action = ArgAction::Count)]
    verbose: u8,
    /// The same as -v.
    #[arg(short = 'H', long)]
    human_readable: bool,
    /// Suppress output messages; overrides -v.
    #[arg(long)]
    quiet: bool,
    /// Timeout in milliseconds: accepted and ignored (commands complete in virtual time).
    #[arg(long, value_parser = number)]
    timeout: Option<u64>,
    /// Show the command instead of executing it.
    #[arg(long)]
    dry_run: bool,
    /// Accepted and ignored: nothing is retried here.
    #[arg(long)]
    no_retries: bool,
    /// Accepted and ignored: there is no ioctl to probe.
    #[arg(long)]
    no_ioctl_probing: bool,
    /// Output format version 1|2: accepted and ignored (only `list -v` differs in nvme-cli).
    #[arg(long, value_parser = number)]
    output_format_version: Option<u64>,
    /// libnvme library options: refused (there is no libnvme here).
    #[arg(long)]
    set_options: Option<String>,
}

#[derive(Subcommand)]
pub enum NvmeCmd {
    /// Make a device image from a preset or a TOML file (znslab's stand-in for a device node).
    Create {
        image: PathBuf,
        #[arg(long, default_value = device::presets::DEFAULT)]
        preset: String,
        /// A device TOML file instead of a preset.
        #[arg(long)]
        device: Option<String>,
        #[arg(long)]
        zones: Option<u32>,
        #[arg(long)]
        max_open: Option<u32>,
        #[arg(long)]
        max_active: Option<u32>,
        /// Replace IMAGE if it exists (without it, an existing file is refused).
        #[arg(long)]
        force: bool,
    },
    /// List device images (nvme-cli lists device nodes): the IMAGEs given, or the images in
    /// --dir (default: the current folder).
    List(ListArgs),
    /// Zoned Namespace commands (nvme-cli's zns plugin).
    #[command(subcommand)]
    Zns(ZnsCmd),
    /// Read blocks.
    Read(RwArgs),
    /// Write blocks (at the zone's write pointer).
    Write(RwArgs),
    /// Flush.
    Flush(NsArgs),
    /// Dataset Management: `--ad` deallocates (TRIM) the ranges given by `--slbs` and
    /// `--blocks` (comma-separated, paired in order; a conventional tcssd namespace only).
    Dsm(DsmArgs),
    /// Copy (19h): source ranges to consecutive LBAs from --sdlba, inside the device (a device
    /// that copies inside itself: ONCS bit 8, the znsplus design).
    Copy(CopyArgs),
    /// Identify Namespace (NVM command set fields).
    IdNs(IdNsArgs),
    /// Identify Controller.
    IdCtrl(IdCtrlArgs),
    /// Any I/O command by opcode and dwords, as nvme-cli's io-passthru: CCZNS compressed write
    /// and decompressed read are Write (0x01) and Read (0x02) with CDW12 bit 16 set.
    IoPassthru(PassthruArgs),
}

/// An image and the namespace id (the only namespace is 1).
#[derive(Args)]
pub struct NsArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct ListArgs {
    /// Image files to list (default: every image in --dir).
    images: Vec<PathBuf>,
    /// The folder whose images to list when none is named (default: the current folder).
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct DsmArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    /// Starting LBAs, comma-separated.
    #[arg(short = 's', long, value_delimiter = ',', value_parser = number, required = true)]
    slbs: Vec<u64>,
    /// Block counts, comma-separated, one per starting LBA.
    #[arg(short = 'b', long, value_delimiter = ',', value_parser = number, required = true)]
    blocks: Vec<u64>,
    /// Context attributes, one per range: hints, accepted and ignored.
    #[arg(short = 'a', long, value_delimiter = ',', value_parser = number)]
    ctx_attrs: Vec<u64>,
    /// Attribute Deallocate (the only attribute this device acts on).
    #[arg(short = 'd', long)]
    ad: bool,
    /// Integral Dataset for Write / Read: hints, accepted and ignored.
    #[arg(short = 'w', long)]
    idw: bool,
    #[arg(short = 'r', long)]
    idr: bool,
    /// CDW11 (the attributes as one dword): bit 2 is Deallocate.
    #[arg(short = 'c', long, value_parser = number)]
    cdw11: Option<u64>,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct CopyArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    /// Destination LBA (on a zoned namespace: the zone's write pointer).
    #[arg(short = 'd', long, value_parser = number, required = true)]
    sdlba: u64,
    /// Source starting LBAs, comma-separated.
    #[arg(short = 's', long, value_delimiter = ',', value_parser = number, required = true)]
    slbs: Vec<u64>,
    /// Blocks per range, comma-separated, 0's based (as nvme-cli).
    #[arg(short = 'b', long, value_delimiter = ',', value_parser = number, required = true)]
    blocks: Vec<u64>,
    /// Source namespace IDs (formats 2 and 3): refused, an image holds one namespace.
    #[arg(short = 'N', long)]
    snsids: Option<String>,
    /// Source options (formats 2 and 3): refused, as --snsids.
    #[arg(short = 'O', long)]
    sopts: Option<String>,
    #[arg(short = 'l', long)]
    limited_retry: bool,
    #[arg(short = 'f', long)]
    force_unit_access: bool,
    #[arg(short = 'p', long, value_parser = number)]
    prinfow: Option<u64>,
    #[arg(short = 'P', long, value_parser = number)]
    prinfor: Option<u64>,
    #[arg(short = 'r', long, value_parser = number)]
    ref_tag: Option<u64>,
    #[arg(short = 'R', long)]
    expected_ref_tags: Option<String>,
    #[arg(short = 'a', long, value_parser = number)]
    app_tag: Option<u64>,
    #[arg(short = 'A', long)]
    expected_app_tags: Option<String>,
    #[arg(short = 'm', long, value_parser = number)]
    app_tag_mask: Option<u64>,
    #[arg(short = 'M', long)]
    expected_app_tag_masks: Option<String>,
    #[arg(short = 'T', long, value_parser = number)]
    dir_type: Option<u64>,
    #[arg(short = 'S', long, value_parser = number)]
    dir_spec: Option<u64>,
    /// Source range entry format: 0 (1-3 carry protection information or other namespaces).
    #[arg(short = 'F', long, value_parser = number, default_value = "0")]
    format: u64,
    #[arg(short = 't', long, value_parser = number)]
    storage_tag: Option<u64>,
    #[arg(short = 'c', long)]
    storage_tag_check: bool,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct IdNsArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    /// Also dump the vendor-specific bytes (all zero here).
    #[arg(short = 'V', long)]
    vendor_specific: bool,
    /// Raw binary Identify page: refused.
    #[arg(short = 'b', long)]
    raw_binary: bool,
    /// Identify a namespace that is not attached: there is one, always attached.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct IdCtrlArgs {
    image: PathBuf,
    #[arg(short = 'V', long)]
    vendor_specific: bool,
    #[arg(short = 'b', long)]
    raw_binary: bool,
    #[command(flatten)]
    g: Global,
}

/// nvme-cli io-passthru's flags, with files for what comes back.
#[derive(Args)]
pub struct PassthruArgs {
    image: PathBuf,
    #[arg(short = 'O', long, value_parser = number)]
    opcode: u64,
    /// Command flags (PSDT, fused): must be 0 here.
    #[arg(short = 'f', long, default_value = "0", value_parser = number)]
    flags: u64,
    /// Byte to fill the data buffer with before the command.
    #[arg(short = 'p', long, default_value = "0", value_parser = number)]
    prefill: u64,
    /// Reserved field: must be 0.
    #[arg(short = 'R', long, default_value = "0", value_parser = number)]
    rsvd: u64,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    #[arg(short = 'l', long, default_value = "0", value_parser = number)]
    data_len: u64,
    #[arg(short = 'm', long, default_value = "0", value_parser = number)]
    metadata_len: u64,
    /// CDW2 and CDW3: reserved in every I/O command this device takes; must be 0.
    #[arg(short = '2', long, default_value = "0", value_parser = number)]
    cdw2: u64,
    #[arg(short = '3', long, default_value = "0", value_parser = number)]
    cdw3: u64,
    #[arg(short = '4', long, default_value = "0", value_parser = number)]
    cdw10: u64,
    #[arg(short = '5', long, default_value = "0", value_parser = number)]
    cdw11: u64,
    #[arg(short = '6', long, default_value = "0", value_parser = number)]
    cdw12: u64,
    #[arg(short = '7', long, default_value = "0", value_parser = number)]
    cdw13: u64,
    #[arg(short = '8', long, default_value = "0", value_parser = number)]
    cdw14: u64,
    #[arg(short = '9', long, default_value = "0", value_parser = number)]
    cdw15: u64,
    /// Data sent with the command (writes); `data_len` bytes, zero-padded.
    #[arg(short = 'i', long)]
    input_file: Option<PathBuf>,
    /// Metadata sent with the command; `metadata_len` bytes, zero-padded.
    #[arg(short = 'M', long)]
    metadata: Option<PathBuf>,
    /// The command moves data to the host / to the device (nvme-cli's direction flags).
    #[arg(short = 'r', long)]
    read: bool,
    #[arg(short = 'w', long)]
    write: bool,
    /// Print the data returned raw instead of as a hex dump.
    #[arg(short = 'b', long)]
    raw_binary: bool,
    /// Print the command before sending it.
    #[arg(short = 's', long)]
    show_command: bool,
    /// Print the command's (simulated) latency.
    #[arg(short = 'T', long)]
    latency: bool,
    /// Write the data returned to a file instead of stdout (znslab's).
    #[arg(long)]
    output_file: Option<PathBuf>,
    /// Write the metadata buffer as it came back (CCZNS feedback) to a file (znslab's).
    #[arg(long)]
    metadata_output_file: Option<PathBuf>,
    #[command(flatten)]
    g: Global,
}

#[derive(Subcommand)]
pub enum ZnsCmd {
    /// List the zoned namespaces among the images (as `nvme list`).
    List(ListArgs),
    /// Report zones.
    ReportZones {
        image: PathBuf,
        #[arg(short = 'n', long, value_parser = number)]
        namespace_id: Option<u64>,
        #[arg(short = 's', long, default_value = "0", value_parser = number)]
        start_lba: u64,
        /// Number of descriptors to report (default: all).
        #[arg(short = 'd', long, value_parser = number)]
        descs: Option<u64>,
        /// State filter: 0-7 or a name (empty, opened_implicit|imp_opened, opened_explicit|exp_opened, closed, full, read_only|readonly, offline).
        #[arg(short = 'S', long, default_value = "0")]
        state: String,
        /// Names instead of codes (as -v; nvme-cli's `--verbose` is the global one here).
        #[arg(short = 'V')]
        names: bool,
        #[arg(short = 'e', long)]
        extended: bool,
        #[arg(short = 'p', long)]
        partial: bool,
        #[command(flatten)]
        g: Global,
    },
    /// Open zones; `--zrwaa` (Allocate ZRWA, the Zone Send Action Specific Option) is taken by
    /// a CCZNS device as "open as a padding zone"; other devices have no ZRWA and refuse it.
    OpenZone {
        #[command(flatten)]
        zone: MgmtArgs,
        #[arg(short = 'r', long, alias = "zrwa")]
        zrwaa: bool,
    },
    CloseZone(MgmtArgs),
    FinishZone(MgmtArgs),
    ResetZone(MgmtArgs),
    OfflineZone(MgmtArgs),
    /// Append data to a zone; prints the LBA it landed at (with -v, as nvme-cli).
    ZoneAppend {
        image: PathBuf,
        #[arg(short = 'n', long, value_parser = number)]
        namespace_id: Option<u64>,
        #[arg(short = 's', long, value_parser = number)]
        zslba: u64,
        #[command(flatten)]
        io: PayloadArgs,
        /// Protection information remap: ignored (no protection information).
        #[arg(short = 'P', long)]
        piremap: bool,
    },
    /// Identify Namespace, ZNS command set fields.
    IdNs(IdNsArgs),
    /// Identify Controller, ZNS command set fields.
    IdCtrl(IdCtrlArgs),
    /// ZNS+ zone_compaction (vendor 81h): copy blocks into a zone inside the device.
    ZoneCompaction(CompactionArgs),
    /// ZNS+ identify_mapping (vendor 86h): which LBA bits name a chunk's chip.
    IdentifyMapping(MappingArgs),
    /// ZNS+ TL_open (vendor 85h): make a zone overwritable where its blocks are not valid.
    TlOpen(TlOpenArgs),
}

#[derive(Args)]
pub struct TlOpenArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    /// The zone's start LBA.
    #[arg(short = 's', long, value_parser = number)]
    zslba: u64,
    /// The valid blocks (kept; the host will not write them), as offsets from the zone start:
    /// a list like 0-7,16,20-23. Empty: none valid.
    #[arg(short = 'V', long, default_value = "")]
    valid: String,
    /// Close the zone's threaded log (it becomes Full) without opening it again.
    #[arg(short = 'c', long)]
    close_only: bool,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct CompactionArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    /// The destination zone's start LBA.
    #[arg(short = 's', long, value_parser = number)]
    zslba: u64,
    /// Source LBAs, in order: a list like 0-7,16,20-23 (at most 512).
    #[arg(short = 'S', long)]
    sources: String,
    /// Destination LBAs, one per source: dense from the zone's write pointer once sorted.
    #[arg(short = 'D', long)]
    destinations: String,
    /// Print the command's (simulated) latency.
    #[arg(short = 't', long)]
    latency: bool,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct MappingArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    #[command(flatten)]
    g: Global,
}

/// nvme-cli's data, metadata, latency and command-field flags of read, write and zone-append.
#[derive(Args)]
pub struct PayloadArgs {
    #[arg(short = 'z', long, value_parser = number)]
    data_size: Option<u64>,
    /// Data file (write, append: read from it, or stdin; read: written to it, or stdout).
    #[arg(short = 'd', long)]
    data: Option<PathBuf>,
    #[arg(short = 'y', long, value_parser = number)]
    metadata_size: Option<u64>,
    #[arg(short = 'M', long)]
    metadata: Option<PathBuf>,
    /// Limited Retry: accepted (the device makes one media access anyway).
    #[arg(short = 'l', long)]
    limited_retry: bool,
    /// Force Unit Access: accepted (no volatile write cache; every completed write is durable).
    #[arg(short = 'f', long)]
    force_unit_access: bool,
    /// Protection information field (0-15): ignored (the namespace has no protection information).
    #[arg(short = 'p', long, default_value = "0", value_parser = number)]
    prinfo: u64,
    /// Print the command's (simulated) latency.
    #[arg(short = 't', long)]
    latency: bool,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct MgmtArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    #[arg(short = 's', long, default_value = "0", value_parser = number)]
    start_lba: u64,
    #[arg(short = 'a', long)]
    select_all: bool,
    #[command(flatten)]
    g: Global,
}

#[derive(Args)]
pub struct RwArgs {
    image: PathBuf,
    #[arg(short = 'n', long, value_parser = number)]
    namespace_id: Option<u64>,
    #[arg(short = 's', long, default_value = "0", value_parser = number)]
    start_block: u64,
    /// Number of blocks, 0's based (0 means one block); without it, from --data-size.
    #[arg(short = 'c', long, value_parser = number)]
    block_count: Option<u64>,
    /// Logical block size in bytes: must be the namespace's.
    #[arg(short = 'b', long, value_parser = number)]
    block_size: Option<u64>,
    /// Protection information: ignored (the namespace has no protection information).
    #[arg(short = 'r', long, value_parser = number)]
    ref_tag: Option<u64>,
    #[arg(short = 'm', long, value_parser = number)]
    app_tag_mask: Option<u64>,
    #[arg(short = 'a', long, value_parser = number)]
    app_tag: Option<u64>,
    #[arg(short = 'g', long, value_parser = number)]
    storage_tag: Option<u64>,
    #[arg(short = 'C', long)]
    storage_tag_check: bool,
    /// Directive type and specific: refused unless 0 (no directives).
    #[arg(short = 'T', long, default_value = "0", value_parser = number)]
    dir_type: u64,
    #[arg(short = 'S', long, default_value = "0", value_parser = number)]
    dir_spec: u64,
    /// Dataset management hints (access frequency, latency): accepted and ignored.
    #[arg(short = 'D', long, default_value = "0", value_parser = number)]
    dsm: u64,
    /// Print the command before sending it.
    #[arg(short = 'V', long)]
    show_command: bool,
    /// nvme-cli's "do not open exclusively": accepted (the image lock stays).
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    io: PayloadArgs,
}

pub fn run(cmd: NvmeCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        NvmeCmd::Create {
            image,
            preset,
            device,
            zones,
            max_open,
            max_active,
            force,
        } => admin::create(image, preset, device, zones, max_open, max_active, force),
        NvmeCmd::List(a) => admin::list(a, false),
        NvmeCmd::Zns(z) => zns::zns(z),
        NvmeCmd::IoPassthru(a) => io::passthru(a),
        NvmeCmd::Read(a) => io::rw(a, false),
        NvmeCmd::Write(a) => io::rw(a, true),
        NvmeCmd::Flush(a) => io::flush(a),
        NvmeCmd::Dsm(a) => io::dsm(a),
        NvmeCmd::Copy(a) => io::copy(a),
        NvmeCmd::IdNs(a) => identify::id_ns(a),
        NvmeCmd::IdCtrl(a) => identify::id_ctrl(a),
    }
}
