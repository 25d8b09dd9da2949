//! `znslab nvme ...`: nvme-cli's subcommands and flags on a device image file.
//!
//! Each invocation opens the image, runs one command at virtual time zero and saves the image.
//! A failed command exits with status 1 and names the NVMe status and its code.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use clap::{Args, Subcommand};
use device::{
    parse_report, Command, Completion, Controller, Status, ZoneAction, REPORT_DESCRIPTOR_BYTES,
    REPORT_HEADER_BYTES,
};
use serde_json::json;
use sim::SimInstant;

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

fn open(image: &Path) -> anyhow::Result<Controller> {
    Controller::open_image(image).map_err(|e| anyhow!("{e}"))
}

/// For commands that only read: a shared lock, and a read-only file will do.
fn open_ro(image: &Path) -> anyhow::Result<Controller> {
    Controller::open_image_as(image, device::OpenMode::ReadOnly).map_err(|e| anyhow!("{e}"))
}

/// Report a failed command the way nvme-cli does, in text or JSON, and exit 1.
fn fail(status: Status, fmt: OutputFormat) -> ExitCode {
    fail_because(status, fmt, None)
}

/// `fail`, with what was wrong when the status alone does not say (`detail`).
fn fail_because(status: Status, fmt: OutputFormat, detail: Option<&str>) -> ExitCode {
    if fmt == OutputFormat::Json {
        let mut v = json!({ "error": {
            "status": status.name(),
            "sct": status.sct,
            "sc": format!("{:#04x}", status.sc),
            "code": format!("{:#05x}", status.code()),
            "description": status.description(),
        }});
        if let Some(d) = detail {
            v["error"]["detail"] = json!(d);
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    }
    match detail {
        Some(d) => eprintln!("NVMe status: {status}: {}: {d}", status.description()),
        None => eprintln!("NVMe status: {status}: {}", status.description()),
    }
    ExitCode::from(1)
}

/// A data transfer over the device's limit (MDTS, or ZASL for Zone Append) fails with Invalid
/// Field, as the device would fail it; checked here, before any buffer is made, so that the
/// message can say which field.
fn over_limit(c: &Controller, bytes: u64, append: bool, fmt: OutputFormat) -> Option<ExitCode> {
    let l = c.layout();
    let (limit, name) = if append {
        (l.zone_append_max_bytes, "ZASL")
    } else {
        (l.max_transfer_bytes, "MDTS")
    };
    (bytes > limit).then(|| {
        fail_because(
            Status::INVALID_FIELD,
            fmt,
            Some(&format!(
                "data transfer of {bytes} bytes exceeds {name} ({limit} bytes)"
            )),
        )
    })
}

fn submit(c: &mut Controller, cmd: Command<'_>) -> Completion {
    let comp = c.submit(SimInstant::ZERO, cmd);
    if let Some(cause) = c.image_error() {
        // An Internal Error from the image's own storage: say what the host disk said.
        eprintln!("{cause}");
    }
    comp
}

fn finish(c: Controller) -> anyhow::Result<()> {
    c.close().context("saving the device image")
}

fn read_input(path: &Option<PathBuf>, what: &str) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    match path {
        Some(p) => {
            buf = std::fs::read(p).with_context(|| format!("{what} file {}", p.display()))?
        }
        None => {
            std::io::stdin()
                .read_to_end(&mut buf)
                .with_context(|| format!("{what} from stdin"))?;
        }
    }
    Ok(buf)
}

impl PayloadArgs {
    /// `--data-size`, if given, must be the `nlb` blocks the command moves.
    fn check_data_size(&self, nlb: u64, lba: u64) -> anyhow::Result<()> {
        match self.data_size {
            Some(z) if z != nlb * lba => {
                bail!(
                    "--data-size {z} does not match {nlb} block(s) of {lba} bytes ({})",
                    nlb * lba
                )
            }
            _ => Ok(()),
        }
    }

    /// The data (and metadata) of a write or append, checked against the sizes it implies.
    fn load(&self, c: &Controller, nlb: u64) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let lba = c.layout().lba_bytes;
        self.check_data_size(nlb, lba)?;
        let want = nlb * lba;
        let mut d = read_input(&self.data, "data")?;
        if (d.len() as u64) < want {
            bail!("the data holds {} bytes; the command needs {want}", d.len());
        }
        d.truncate(want as usize);
        let ms = c.layout().metadata_bytes * nlb;
        let m = match &self.metadata {
            Some(p) => {
                let mut m =
                    std::fs::read(p).with_context(|| format!("metadata file {}", p.display()))?;
                if self.metadata_size.unwrap_or(ms) != ms || (m.len() as u64) < ms {
                    bail!(
                        "metadata must be {ms} bytes ({nlb} block(s) × {} bytes)",
                        c.layout().metadata_bytes
                    );
                }
                m.truncate(ms as usize);
                m
            }
            None => Vec::new(),
        };
        Ok((d, m))
    }
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
        } => {
            let mut cfg = crate::load_device(device.as_deref().unwrap_or(&preset))?;
            if let Some(n) = zones {
                cfg.zones.count = Some(n);
            }
            if let Some(n) = max_open {
                cfg.zones.max_open = n;
            }
            if let Some(n) = max_active {
                cfg.zones.max_active = n;
            }
            cfg.layout()
                .map_err(|e| anyhow!("{}", device::DeviceError::from(e)))?;
            if !force && std::fs::symlink_metadata(&image).is_ok() {
                bail!("{} exists; pass --force to replace it", image.display());
            }
            let c = Controller::create_image(&image, cfg).map_err(|e| anyhow!("{e}"))?;
            let id = c.identify();
            if id.csi == device::CommandSet::Nvm {
                println!(
                    "created {}: {} (conventional namespace of {} LBAs, {}-byte LBAs)",
                    image.display(),
                    c.config().name,
                    id.nsze,
                    id.lba_bytes
                );
            } else {
                println!(
                    "created {}: {} ({} zones of {} LBAs, capacity {} LBAs, {}-byte LBAs)",
                    image.display(),
                    c.config().name,
                    id.zone_count,
                    id.zsze,
                    id.zcap,
                    id.lba_bytes
                );
            }
            finish(c)?;
            Ok(ExitCode::SUCCESS)
        }
        NvmeCmd::Zns(z) => zns(z),
        NvmeCmd::IoPassthru(a) => passthru(a),
        NvmeCmd::Read(a) => rw(a, false),
        NvmeCmd::Write(a) => rw(a, true),
        NvmeCmd::Flush { image } => {
            let mut c = open(&image)?;
            let comp = submit(&mut c, Command::Flush);
            if comp.status != Status::SUCCESS {
                return Ok(fail(comp.status, OutputFormat::Normal));
            }
            println!("NVMe Flush: success");
            finish(c)?;
            Ok(ExitCode::SUCCESS)
        }
        NvmeCmd::Dsm {
            image,
            slbs,
            blocks,
            ad,
        } => {
            if slbs.len() != blocks.len() {
                bail!(
                    "--slbs gives {} ranges and --blocks {}: one count per starting LBA",
                    slbs.len(),
                    blocks.len()
                );
            }
            if slbs.len() > 256 {
                bail!(
                    "{} ranges: Dataset Management takes at most 256",
                    slbs.len()
                );
            }
            let mut c = open(&image)?;
            if ad {
                for (&slba, &n) in slbs.iter().zip(&blocks) {
                    let nlb = u32::try_from(n)
                        .map_err(|_| anyhow!("--blocks {n} does not fit in 32 bits"))?;
                    let comp = submit(&mut c, Command::Deallocate { slba, nlb });
                    if comp.status != Status::SUCCESS {
                        return Ok(fail(comp.status, OutputFormat::Normal));
                    }
                }
            }
            println!("NVMe DSM: success");
            finish(c)?;
            Ok(ExitCode::SUCCESS)
        }
        NvmeCmd::IdNs(ImageArgs {
            image,
            output_format,
        }) => {
            let c = open_ro(&image)?;
            let id = c.identify();
            let ds = id.lba_bytes.trailing_zeros();
            if output_format == OutputFormat::Json {
                let v = json!({
                    "nsze": id.nsze, "ncap": id.ncap, "nuse": id.nuse, "nlbaf": 0, "flbas": 0,
                    "mssrl": 0, "mcl": 0, "msrc": 0,
                    "lbafs": [{ "ms": id.metadata_bytes, "ds": ds, "rp": 0 }],
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!("NVME Identify Namespace 1:");
                println!(
                    "nsze    : {:#x}\nncap    : {:#x}\nnuse    : {:#x}\nnlbaf   : 0\nflbas   : 0",
                    id.nsze, id.ncap, id.nuse
                );
                println!(
                    "lbaf  0 : ms:{}   lbads:{} rp:0 (in use)",
                    id.metadata_bytes, ds
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A buffer of `len` bytes from `path` (zero-padded, truncated), or zeros.
fn buffer(path: &Option<PathBuf>, len: u64, what: &str) -> anyhow::Result<Vec<u8>> {
    if len > 1 << 30 {
        bail!("--{what}-len {len} is more than 1 GiB");
    }
    let mut b = match path {
        Some(p) => std::fs::read(p).with_context(|| format!("{what} file {}", p.display()))?,
        None => Vec::new(),
    };
    b.resize(len as usize, 0);
    Ok(b)
}

fn hex_dump(data: &[u8]) {
    for (i, row) in data.chunks(16).enumerate() {
        let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
        println!("{:08x}: {}", i * 16, hex.join(" "));
    }
}

fn passthru(a: PassthruArgs) -> anyhow::Result<ExitCode> {
    use device::cmd::wire::{self, IoDwords};
    let mut c = open(&a.image)?;
    let dw = |v: u64, name: &str| {
        u32::try_from(v).map_err(|_| anyhow!("--{name} {v:#x} does not fit in 32 bits"))
    };
    let dws = IoDwords {
        cdw10: dw(a.cdw10, "cdw10")?,
        cdw11: dw(a.cdw11, "cdw11")?,
        cdw12: dw(a.cdw12, "cdw12")?,
        cdw13: dw(a.cdw13, "cdw13")?,
        cdw14: dw(a.cdw14, "cdw14")?,
        cdw15: dw(a.cdw15, "cdw15")?,
    };
    if a.read && a.write {
        bail!("--read and --write together: a command moves data one way");
    }
    let mut data = buffer(&a.input_file, a.data_len, "data")?;
    let mut md = buffer(&a.metadata, a.metadata_len, "metadata")?;
    let opcode =
        u8::try_from(a.opcode).map_err(|_| anyhow!("--opcode {} is over 0xff", a.opcode))?;
    let lba = c.layout().lba_bytes;
    let cc = dws.cdw12 & wire::CDW12_CC != 0;
    let decoded = match opcode {
        wire::OPC_WRITE | wire::OPC_ZONE_APPEND => wire::decode_write(opcode, dws, &data, &mut md),
        wire::OPC_READ => wire::decode_read(dws, &mut data, &mut md),
        0x79 => wire::decode_zone_send(dws.slba(), dws.cdw13),
        0x00 => Ok(Command::Flush),
        _ => Err(Status::INVALID_OPCODE),
    };
    let moves_data = matches!(
        opcode,
        wire::OPC_WRITE | wire::OPC_ZONE_APPEND | wire::OPC_READ
    );
    if decoded.is_ok() && moves_data {
        let append = opcode == wire::OPC_ZONE_APPEND;
        if let Some(code) = over_limit(&c, a.data_len, append, OutputFormat::Normal) {
            return Ok(code);
        }
    }
    let comp = match decoded {
        Ok(cmd) => submit(&mut c, cmd),
        Err(status) => return Ok(fail(status, OutputFormat::Normal)),
    };
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, OutputFormat::Normal));
    }
    println!("NVMe command result:{:08x}", comp.result as u32);
    if comp.result > u32::MAX as u64 {
        println!("  (64-bit result: {:#x})", comp.result);
    }
    if cc && !md.is_empty() {
        match opcode {
            wire::OPC_READ => {
                if let Some(chunks) = wire::dr_feedback(&md) {
                    println!("decompressed read: {} chunk(s)", chunks.len());
                    for (i, (pre, fb)) in chunks.iter().enumerate() {
                        println!("  chunk {i}: {pre} bytes decompressed, {fb} bytes on the device");
                    }
                }
            }
            _ => {
                if let Some(f) = wire::cw_feedback(&md, lba) {
                    println!(
                        "compressed write: {} chunk(s), feedback sizes {:?}, {} bytes of the zone used",
                        f.sizes.len(),
                        f.sizes,
                        f.written
                    );
                }
            }
        }
    }
    if let Some(p) = &a.metadata_output_file {
        std::fs::write(p, &md).with_context(|| format!("writing {}", p.display()))?;
    }
    if opcode == wire::OPC_READ && !data.is_empty() {
        match &a.output_file {
            Some(p) => {
                std::fs::write(p, &data).with_context(|| format!("writing {}", p.display()))?
            }
            None if a.raw_binary => std::io::stdout().write_all(&data)?,
            None => hex_dump(&data),
        }
    }
    finish(c)?;
    Ok(ExitCode::SUCCESS)
}

fn parse_state_filter(s: &str) -> anyhow::Result<u8> {
    if let Ok(n) = s.parse::<u8>() {
        return Ok(n); // the device checks the range (values over 7 get Invalid Field)
    }
    Ok(match s.to_ascii_lowercase().as_str() {
        "all" => 0,
        "empty" => 1,
        "opened_implicit" | "imp_opened" | "implicitly_opened" => 2,
        "opened_explicit" | "exp_opened" | "explicitly_opened" => 3,
        "closed" => 4,
        "full" => 5,
        "read_only" | "readonly" => 6,
        "offline" => 7,
        _ => bail!("--state: '{s}' is not a zone state filter"),
    })
}

fn zns(cmd: ZnsCmd) -> anyhow::Result<ExitCode> {
    let mgmt = |a: MgmtArgs, action: ZoneAction, name: &str| -> anyhow::Result<ExitCode> {
        let mut c = open(&a.image)?;
        let comp = submit(
            &mut c,
            Command::ZoneMgmtSend {
                slba: a.start_lba,
                action,
                select_all: a.select_all,
            },
        );
        finish(c)?;
        if comp.status != Status::SUCCESS {
            return Ok(fail(comp.status, a.output_format));
        }
        if a.output_format == OutputFormat::Json {
            println!(
                "{}",
                json!({ "command": name, "zslba": a.start_lba, "select_all": a.select_all, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
            );
        } else {
            println!(
                "{name}: Success, action:{} zone:{:x} all:{} nsid:1",
                action.code(),
                a.start_lba,
                a.select_all as u8
            );
        }
        Ok(ExitCode::SUCCESS)
    };
    match cmd {
        ZnsCmd::OpenZone { zone, zrwa: false } => mgmt(zone, ZoneAction::Open, "zns-open-zone"),
        ZnsCmd::OpenZone { zone, zrwa: true } => {
            mgmt(zone, ZoneAction::OpenPadding, "zns-open-zone")
        }
        ZnsCmd::CloseZone(a) => mgmt(a, ZoneAction::Close, "zns-close-zone"),
        ZnsCmd::FinishZone(a) => mgmt(a, ZoneAction::Finish, "zns-finish-zone"),
        ZnsCmd::ResetZone(a) => mgmt(a, ZoneAction::Reset, "zns-reset-zone"),
        ZnsCmd::OfflineZone(a) => mgmt(a, ZoneAction::Offline, "zns-offline-zone"),
        ZnsCmd::ReportZones {
            image,
            start_lba,
            descs,
            state,
            extended,
            partial,
            output_format,
        } => {
            let filter = parse_state_filter(&state)?;
            let mut c = open_ro(&image)?;
            let mdts = c.layout().max_transfer_bytes as usize;
            let per_cmd = ((mdts - REPORT_HEADER_BYTES) / REPORT_DESCRIPTOR_BYTES).max(1) as u64;
            let want = descs.unwrap_or(u64::MAX);
            let mut zones = Vec::new();
            let mut slba = start_lba;
            let mut header_count = None;
            let nsze = c.identify().nsze;
            // Like nvme-cli, fetch in chunks of at most MDTS until enough descriptors arrive.
            loop {
                let n = per_cmd.min(want - zones.len() as u64);
                let mut buf = vec![0u8; REPORT_HEADER_BYTES + n as usize * REPORT_DESCRIPTOR_BYTES];
                let comp = submit(
                    &mut c,
                    Command::ZoneMgmtRecv {
                        slba,
                        filter,
                        partial,
                        extended,
                        buffer: &mut buf,
                    },
                );
                if comp.status != Status::SUCCESS {
                    return Ok(fail(comp.status, output_format));
                }
                let (count, got) = parse_report(&buf)
                    .ok_or_else(|| anyhow!("internal: malformed report buffer"))?;
                header_count.get_or_insert(count);
                let last = got.last().map(|z| z.zslba);
                zones.extend(got);
                match last {
                    Some(l)
                        if (zones.len() as u64) < want
                            && l + c.layout().zone_size_lbas < nsze
                            && (count > n || partial) =>
                    {
                        slba = l + c.layout().zone_size_lbas;
                    }
                    _ => break,
                }
            }
            let nr = if partial || descs.is_some() {
                zones.len() as u64
            } else {
                header_count.unwrap_or(0)
            };
            if output_format == OutputFormat::Json {
                let list: Vec<_> = zones
                    .iter()
                    .map(|z| json!({ "slba": z.zslba, "wp": z.wp, "cap": z.capacity, "state": z.state.name(), "type": "SEQWRITE_REQ", "attrs": z.attributes }))
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&json!({ "nr_zones": nr, "zone_list": list }))?
                );
            } else {
                println!("nr_zones: {nr}");
                for z in &zones {
                    println!(
                        "SLBA: {:<#10x} WP: {:<#18x} Cap: {:<#10x} State: {:<12} Type: SEQWRITE_REQ   Attrs: {:#x}",
                        z.zslba,
                        z.wp,
                        z.capacity,
                        z.state.name(),
                        z.attributes
                    );
                }
            }
            finish(c)?;
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::ZoneAppend { image, zslba, io } => {
            let mut c = open(&image)?;
            let lba = c.layout().lba_bytes;
            let size = match (io.data_size, &io.data) {
                (Some(z), _) => z,
                (None, Some(p)) => std::fs::metadata(p)
                    .with_context(|| format!("data file {}", p.display()))?
                    .len(),
                (None, None) => bail!("zone-append needs --data-size or --data"),
            };
            if size == 0 || size % lba != 0 {
                bail!("--data-size {size} is not a positive multiple of the {lba}-byte LBA");
            }
            if let Some(code) = over_limit(&c, size, true, io.output_format) {
                return Ok(code);
            }
            let nlb = size / lba;
            let (d, m) = io.load(&c, nlb)?;
            let comp = submit(
                &mut c,
                Command::ZoneAppend {
                    zslba,
                    nlb: nlb as u32,
                    data: &d,
                    metadata: &m,
                },
            );
            finish(c)?;
            if comp.status != Status::SUCCESS {
                return Ok(fail(comp.status, io.output_format));
            }
            if io.output_format == OutputFormat::Json {
                println!(
                    "{}",
                    json!({ "result": comp.result, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
                );
            } else {
                println!("Success appended data to LBA {:x}", comp.result);
                if io.latency {
                    println!(" latency: zone append: {} us", comp.done_at.as_ns() / 1000);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::IdNs(ImageArgs {
            image,
            output_format,
        }) => {
            let c = open_ro(&image)?;
            let id = c.identify();
            if output_format == OutputFormat::Json {
                let v = json!({
                    "zoc": id.zoc, "ozcs": id.ozcs, "mar": id.mar, "mor": id.mor,
                    "rrl": 0, "frl": 0, "rrl1": 0, "rrl2": 0, "rrl3": 0, "frl1": 0, "frl2": 0, "frl3": 0,
                    "numzrwa": 0, "zrwafg": 0, "zrwasz": 0, "zrwacap": 0,
                    "lbafe": [{ "zsze": id.zsze, "zdes": 0 }],
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                println!("ZNS Command Set Identify Namespace:");
                println!("zoc     : {}\nozcs    : {}\nmar     : {:#x}\nmor     : {:#x}\nrrl     : 0\nfrl     : 0", id.zoc, id.ozcs, id.mar, id.mor);
                println!("lbafe  0: zsze:{:#x} zdes:0 (in use)", id.zsze);
            }
            Ok(ExitCode::SUCCESS)
        }
        ZnsCmd::IdCtrl(ImageArgs {
            image,
            output_format,
        }) => {
            let c = open_ro(&image)?;
            let id = c.identify();
            // ZASL is a power of two in units of the minimum memory page size (4 KiB).
            let zasl = (id.zasl_bytes / 4096).max(1).ilog2();
            if output_format == OutputFormat::Json {
                println!("{}", json!({ "zasl": zasl }));
            } else {
                println!("NVMe ZNS Identify Controller:\nzasl    : {zasl}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn rw(a: RwArgs, write: bool) -> anyhow::Result<ExitCode> {
    let mut c = if write {
        open(&a.image)?
    } else {
        open_ro(&a.image)?
    };
    let nlb = a
        .block_count
        .checked_add(1)
        .ok_or_else(|| anyhow!("--block-count is too large"))?;
    let nlb32 =
        u32::try_from(nlb).map_err(|_| anyhow!("--block-count {} is too large", a.block_count))?;
    let name = if write { "write" } else { "read" };
    if let Some(code) = over_limit(&c, nlb * c.layout().lba_bytes, false, a.io.output_format) {
        return Ok(code);
    }
    let comp = if write {
        let (d, m) = a.io.load(&c, nlb)?;
        submit(
            &mut c,
            Command::Write {
                slba: a.start_block,
                nlb: nlb32,
                data: &d,
                metadata: &m,
            },
        )
    } else {
        let lba = c.layout().lba_bytes;
        a.io.check_data_size(nlb, lba)?;
        let mut d = vec![0u8; (nlb * lba) as usize];
        let want_meta = a.io.metadata.is_some() && c.layout().metadata_bytes > 0;
        let mut m = vec![
            0u8;
            if want_meta {
                (nlb * c.layout().metadata_bytes) as usize
            } else {
                0
            }
        ];
        let comp = submit(
            &mut c,
            Command::Read {
                slba: a.start_block,
                nlb: nlb32,
                data: &mut d,
                metadata: &mut m,
            },
        );
        if comp.status == Status::SUCCESS {
            match &a.io.data {
                Some(p) => {
                    std::fs::write(p, &d).with_context(|| format!("data file {}", p.display()))?
                }
                None => std::io::stdout()
                    .write_all(&d)
                    .context("writing data to stdout")?,
            }
            if let Some(p) = &a.io.metadata {
                std::fs::write(p, &m).with_context(|| format!("metadata file {}", p.display()))?;
            }
        }
        comp
    };
    finish(c)?;
    if comp.status != Status::SUCCESS {
        return Ok(fail(comp.status, a.io.output_format));
    }
    if a.io.latency {
        eprintln!(" latency: {name}: {} us", comp.done_at.as_ns() / 1000);
    }
    if a.io.output_format == OutputFormat::Json {
        println!(
            "{}",
            json!({ "command": name, "status": "SUCCESS", "latency_ns": comp.done_at.as_ns() })
        );
    } else {
        eprintln!("{name}: Success");
    }
    Ok(ExitCode::SUCCESS)
}
