//! `znslab nvme ...`: nvme-cli's subcommands and flags on a device image file.
//!
//! Each invocation opens the image, runs one command at virtual time zero and saves the image.
//! A failed command exits with status 1 and names the NVMe status and its code.//!
//! This file is the command line: the subcommands and their flags (clap) and [`run`], which
//! hands each to its body. The bodies: [`admin`] (create an image, identify namespace),
//! [`io`] (read, write, flush, dataset management, io-passthru), [`zns`] (the zns plugin:
//! report zones, zone management, zone append, the ZNS identify pages); [`common`] holds
//! what they share (opening and saving the image, submitting, nvme-cli's error report).

mod admin;
mod common;
mod io;
mod zns;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

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
    /// Zoned Namespace commands (nvme-cli's zns plugin).
    #[command(subcommand)]
    Zns(ZnsCmd),
    /// Read blocks.
    Read(RwArgs),
    /// Write blocks (at the zone's write pointer).
    Write(RwArgs),
    /// Flush.
    Flush { image: PathBuf },
    /// Dataset Management: `--ad` deallocates (TRIM) the ranges given by `--slbs` and
    /// `--blocks` (comma-separated, paired in order; a conventional tcssd namespace only).
    Dsm {
        image: PathBuf,
        /// Starting LBAs, comma-separated.
        #[arg(short = 's', long, value_delimiter = ',', value_parser = number, required = true)]
        slbs: Vec<u64>,
        /// Block counts, comma-separated, one per starting LBA.
        #[arg(short = 'b', long, value_delimiter = ',', value_parser = number, required = true)]
        blocks: Vec<u64>,
        /// Attribute Deallocate (the only attribute this device acts on).
        #[arg(short = 'd', long)]
        ad: bool,
    },
    /// Identify Namespace (NVM command set fields).
    IdNs(ImageArgs),
    /// Any I/O command by opcode and dwords, as nvme-cli's io-passthru: CCZNS compressed write
    /// and decompressed read are Write (0x01) and Read (0x02) with CDW12 bit 16 set.
    IoPassthru(PassthruArgs),
}

/// nvme-cli io-passthru's flags, with files for what comes back.
#[derive(Args)]
pub struct PassthruArgs {
    image: PathBuf,
    #[arg(short = 'O', long, value_parser = number)]
    opcode: u64,
    #[arg(short = 'l', long, default_value = "0", value_parser = number)]
    data_len: u64,
    #[arg(short = 'm', long, default_value = "0", value_parser = number)]
    metadata_len: u64,
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
    #[arg(long)]
    metadata: Option<PathBuf>,
    /// The command moves data to the host / to the device (nvme-cli's direction flags).
    #[arg(short = 'r', long)]
    read: bool,
    #[arg(short = 'w', long)]
    write: bool,
    /// Print the data returned raw instead of as a hex dump.
    #[arg(short = 'b', long)]
    raw_binary: bool,
    /// Write the data returned to a file instead of stdout.
    #[arg(long)]
    output_file: Option<PathBuf>,
    /// Write the metadata buffer as it came back (CCZNS feedback) to a file.
    #[arg(long)]
    metadata_output_file: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum ZnsCmd {
    /// Report zones.
    ReportZones {
        image: PathBuf,
        #[arg(short = 's', long, default_value = "0", value_parser = number)]
        start_lba: u64,
        /// Number of descriptors to report (default: all).
        #[arg(short = 'd', long)]
        descs: Option<u64>,
        /// State filter: 0-7 or a name (empty, opened_implicit|imp_opened, opened_explicit|exp_opened, closed, full, read_only|readonly, offline).
        #[arg(short = 'S', long, default_value = "0")]
        state: String,
        #[arg(short = 'e', long)]
        extended: bool,
        #[arg(short = 'p', long)]
        partial: bool,
        #[arg(short = 'o', long, value_enum, default_value = "normal")]
        output_format: OutputFormat,
    },
    /// Open zones; `--zrwa` sets the Zone Send Action Specific Option, which a CCZNS device
    /// takes as "open as a padding zone".
    OpenZone {
        #[command(flatten)]
        zone: MgmtArgs,
        #[arg(short = 'r', long)]
        zrwa: bool,
    },
    CloseZone(MgmtArgs),
    FinishZone(MgmtArgs),
    ResetZone(MgmtArgs),
    OfflineZone(MgmtArgs),
    /// Append data to a zone; prints the LBA it landed at.
    ZoneAppend {
        image: PathBuf,
        #[arg(short = 's', long, value_parser = number)]
        zslba: u64,
        #[command(flatten)]
        io: PayloadArgs,
    },
    /// Identify Namespace, ZNS command set fields.
    IdNs(ImageArgs),
    /// Identify Controller, ZNS command set fields.
    IdCtrl(ImageArgs),
}

/// An image and how to print the answer.
#[derive(Args)]
pub struct ImageArgs {
    image: PathBuf,
    #[arg(short = 'o', long, value_enum, default_value = "normal")]
    output_format: OutputFormat,
}

/// nvme-cli's data, metadata, latency and output flags of read, write and zone-append.
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
    /// Print the command's (simulated) latency.
    #[arg(short = 't', long)]
    latency: bool,
    #[arg(short = 'o', long, value_enum, default_value = "normal")]
    output_format: OutputFormat,
}

#[derive(Args)]
pub struct MgmtArgs {
    image: PathBuf,
    #[arg(short = 's', long, default_value = "0", value_parser = number)]
    start_lba: u64,
    #[arg(short = 'a', long)]
    select_all: bool,
    #[arg(short = 'o', long, value_enum, default_value = "normal")]
    output_format: OutputFormat,
}

#[derive(Args)]
pub struct RwArgs {
    image: PathBuf,
    #[arg(short = 's', long, value_parser = number)]
    start_block: u64,
    /// Number of blocks, 0's based (0 means one block).
    #[arg(short = 'c', long, default_value = "0", value_parser = number)]
    block_count: u64,
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
        NvmeCmd::Zns(z) => zns::zns(z),
        NvmeCmd::IoPassthru(a) => io::passthru(a),
        NvmeCmd::Read(a) => io::rw(a, false),
        NvmeCmd::Write(a) => io::rw(a, true),
        NvmeCmd::Flush { image } => io::flush(image),
        NvmeCmd::Dsm {
            image,
            slbs,
            blocks,
            ad,
        } => io::dsm(image, slbs, blocks, ad),
        NvmeCmd::IdNs(a) => admin::id_ns(a),
    }
}
