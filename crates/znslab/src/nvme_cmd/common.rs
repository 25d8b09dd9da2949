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
    /// The data (and metadata) of a write or append, checked against the sizes it implies:
    /// `nlb` blocks, of which the first `--data-size` bytes (if smaller) come from the data and
    /// the rest are zeros, as nvme-cli's zeroed buffer holds them.
    pub(super) fn load(&self, c: &Controller, nlb: u64) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let lba = c.layout().lba_bytes;
        let want = nlb * lba;
        let from_file = self.data_size.map_or(want, |z| z.min(want));
        let mut d = read_input(&self.data, "data")?;
        if (d.len() as u64) < from_file {
            bail!(
                "the data holds {} bytes; the command needs {from_file}",
                d.len()
            );
        }
        d.truncate(from_file as usize);
        d.resize(want as usize, 0);
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
/// `fill` is nvme-cli's --prefill: the byte the buffer holds where the file does not reach.
pub(super) fn buffer(
    path: &Option<PathBuf>,
    len: u64,
    what: &str,
    fill: u8,
) -> anyhow::Result<Vec<u8>> {
    if len > 1 << 30 {
        bail!("--{what}-len {len} is more than 1 GiB");
    }
    let mut b = match path {
        Some(p) => std::fs::read(p).with_context(|| format!("{what} file {}", p.display()))?,
        None => Vec::new(),
    };
    b.resize(len as usize, fill);
    Ok(b)
}

pub(super) fn hex_dump(data: &[u8]) {
    for (i, row) in data.chunks(16).enumerate() {
        let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
        println!("{:08x}: {}", i * 16, hex.join(" "));
    }
}

impl super::Global {
    /// Check nvme-cli's global flags before anything runs: refuse what cannot be done here,
    /// say on stderr which flags are accepted and ignored. Returns the output format.
    pub(super) fn check(&self) -> anyhow::Result<OutputFormat> {
        if self.output_format == OutputFormat::Binary {
            bail!("--output-format binary: refused: znslab keeps no raw NVMe structures to dump; use normal or json");
        }
        if self.set_options.is_some() {
            bail!("--set-options: refused: these are libnvme library options, and there is no libnvme here");
        }
        if let Some(v) = self.output_format_version {
            if !(1..=2).contains(&v) {
                bail!("--output-format-version {v}: must be 1 or 2");
            }
            notice(
                "--output-format-version",
                "only nvme-cli's `list -v` output differs",
            );
        }
        if self.timeout.is_some() {
            notice(
                "--timeout",
                "commands complete in virtual time; no timeout can fire",
            );
        }
        if self.no_retries {
            notice("--no-retries", "nothing is retried here");
        }
        if self.no_ioctl_probing {
            notice("--no-ioctl-probing", "there is no ioctl to probe");
        }
        Ok(self.output_format)
    }

    /// -v or -H, unless --quiet.
    pub(super) fn verbose(&self) -> bool {
        !self.quiet && (self.verbose > 0 || self.human_readable)
    }

    pub(super) fn dry_run(&self) -> bool {
        self.dry_run
    }
}

/// A flag accepted and ignored: one line on stderr saying why.
pub(super) fn notice(flag: &str, why: &str) {
    eprintln!("znslab nvme: {flag} ignored: {why}");
}

/// `-n/--namespace-id`: an image holds one namespace, NSID 1 (0, nvme-cli's "not given", and
/// 0xffffffff, the broadcast value, mean it too).
pub(super) fn check_nsid(nsid: Option<u64>) -> anyhow::Result<()> {
    match nsid {
        None | Some(0) | Some(1) | Some(0xffff_ffff) => Ok(()),
        Some(n) => {
            bail!("--namespace-id {n}: no such namespace: an image holds one namespace, NSID 1")
        }
    }
}

/// `--dry-run` on a command that would change or read the device: say so, send nothing.
pub(super) fn dry_run_note(what: &str) {
    eprintln!("znslab nvme: --dry-run: {what} not sent");
}

/// C's `%#x`: `0` for zero, `0x...` otherwise.
pub(super) fn cx(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

impl PayloadArgs {
    /// The command-field flags of read, write and zone-append, then the global flags.
    pub(super) fn check_fields(&self) -> anyhow::Result<OutputFormat> {
        if self.prinfo > 0xf {
            bail!("--prinfo {:#x}: must be 0-15 (a 4-bit field)", self.prinfo);
        }
        if self.prinfo != 0 {
            notice(
                "--prinfo",
                "the namespace has no protection information (id-ns dps 0)",
            );
        }
        if self.limited_retry {
            notice(
                "--limited-retry",
                "the device makes one media access per block anyway",
            );
        }
        if self.force_unit_access {
            notice(
                "--force-unit-access",
                "the device has no volatile write cache (id-ctrl vwc 0): a completed write is durable",
            );
        }
        self.g.check()
    }
}
