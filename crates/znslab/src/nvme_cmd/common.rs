//! What the subcommands share: opening and saving the image, submitting a command at
//! virtual time zero, nvme-cli's report of a failed command, and the data and metadata
//! buffers of the commands that move data.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use device::{Command, Completion, Controller, Status};
use serde_json::json;
use sim::SimInstant;

use super::{OutputFormat, PayloadArgs};

pub(super) fn open(image: &Path) -> anyhow::Result<Controller> {
    Controller::open_image(image).map_err(|e| anyhow!("{e}"))
}

/// For commands that only read: a shared lock, and a read-only file will do.
pub(super) fn open_ro(image: &Path) -> anyhow::Result<Controller> {
    Controller::open_image_as(image, device::OpenMode::ReadOnly).map_err(|e| anyhow!("{e}"))
}

/// Report a failed command the way nvme-cli does, in text or JSON, and exit 1.
pub(super) fn fail(status: Status, fmt: OutputFormat) -> ExitCode {
    fail_because(status, fmt, None)
}

/// `fail`, with what was wrong when the status alone does not say (`detail`).
pub(super) fn fail_because(status: Status, fmt: OutputFormat, detail: Option<&str>) -> ExitCode {
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
pub(super) fn over_limit(
    c: &Controller,
    bytes: u64,
    append: bool,
    fmt: OutputFormat,
) -> Option<ExitCode> {
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

pub(super) fn submit(c: &mut Controller, cmd: Command<'_>) -> Completion {
    let comp = c.submit(SimInstant::ZERO, cmd);
    if let Some(cause) = c.image_error() {
        // An Internal Error from the image's own storage: say what the host disk said.
        eprintln!("{cause}");
    }
    comp
}

pub(super) fn finish(c: Controller) -> anyhow::Result<()> {
    c.close().context("saving the device image")
}

pub(super) fn read_input(path: &Option<PathBuf>, what: &str) -> anyhow::Result<Vec<u8>> {
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
    pub(super) fn check_data_size(&self, nlb: u64, lba: u64) -> anyhow::Result<()> {
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
    pub(super) fn load(&self, c: &Controller, nlb: u64) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
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

/// A buffer of `len` bytes from `path` (zero-padded, truncated), or zeros.
pub(super) fn buffer(path: &Option<PathBuf>, len: u64, what: &str) -> anyhow::Result<Vec<u8>> {
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

pub(super) fn hex_dump(data: &[u8]) {
    for (i, row) in data.chunks(16).enumerate() {
        let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
        println!("{:08x}: {}", i * 16, hex.join(" "));
    }
}
