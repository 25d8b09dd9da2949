//! The Identify pages as nvme-cli prints them: `nvme id-ns`, `nvme id-ctrl`, `nvme zns id-ns`
//! and `nvme zns id-ctrl`, normal and `-o json`, with every field nvme-cli's printers
//! (nvme-print-stdout.c, nvme-print-json.c) show, in their order and with their names. Each
//! field holds what this device is; a field for a feature it lacks is 0, as on a real device.

use std::process::ExitCode;

use anyhow::bail;
use device::{CommandSet, Controller, Identify};
use serde_json::{json, Map, Value};

use super::common::{check_nsid, cx, dry_run_note, open_ro};
use super::{IdCtrlArgs, IdNsArgs, OutputFormat};

/// How nvme-cli's normal output prints a field: `%#x`, decimal, or a string.
#[derive(Clone, Copy)]
enum Fmt {
    H,
    D,
    S,
}
use Fmt::{D, H, S};

/// A field's value.
enum V {
    N(u64),
    T(String),
}

fn page_json(fields: &[(&str, V)]) -> Map<String, Value> {
    fields
        .iter()
        .map(|(k, v)| {
            let v = match v {
                V::N(n) => json!(n),
                V::T(s) => json!(s),
            };
            (k.to_string(), v)
        })
        .collect()
}

/// Normal output: `name<pad>: value`, the name padded to `width` as nvme-cli pads it.
fn page_text(fields: &[(&str, V)], fmts: &[(&str, Fmt)], width: usize) {
    for ((k, v), (_, f)) in fields.iter().zip(fmts) {
        let s = match (v, f) {
            // IEEE OUI: three bytes in hex, most significant first ("%02x%02x%02x").
            (V::N(n), _) if *k == "ieee" => format!("{n:06x}"),
            (V::N(n), H) => cx(*n),
            (V::N(n), _) => n.to_string(),
            (V::T(t), _) => t.clone(),
        };
        if *k == "nsattr" {
            // nvme-cli prints this one name with a tab ("nsattr\t: %u").
            println!("nsattr\t: {s}");
        } else {
            println!("{k:<width$}: {s}");
        }
    }
}

/// The checks and flags id-ns and zns id-ns share; the output format.
fn id_ns_flags(a: &IdNsArgs) -> anyhow::Result<OutputFormat> {
    check_nsid(a.namespace_id)?;
    if a.raw_binary {
        bail!("--raw-binary: refused: znslab keeps no raw Identify page to dump; use -o json");
    }
    a.g.check()
}

fn id_ctrl_flags(a: &IdCtrlArgs) -> anyhow::Result<OutputFormat> {
    if a.raw_binary {
        bail!("--raw-binary: refused: znslab keeps no raw Identify page to dump; use -o json");
    }
    a.g.check()
}

/// LBA Data Size as a power of two (LBADS).
fn lbads(id: &Identify) -> u64 {
    id.lba_bytes.trailing_zeros() as u64
}

/// Identify Namespace, NVM command set (json_nvme_id_ns / stdout_id_ns, without the fields
/// nvme-cli prints only when NSFEAT bits 4-5 are set, which they are not here).
const ID_NS: &[(&str, Fmt)] = &[
    ("nsze", H),
    ("ncap", H),
    ("nuse", H),
    ("nsfeat", H),
    ("nlbaf", D),
    ("flbas", H),
    ("mc", H),
    ("dpc", H),
    ("dps", H),
    ("nmic", H),
    ("rescap", H),
    ("fpi", H),
    ("dlfeat", D),
    ("nawun", D),
    ("nawupf", D),
    ("nacwu", D),
    ("nabsn", D),
    ("nabo", D),
    ("nabspf", D),
    ("noiob", D),
    ("nvmcap", D),
    ("mssrl", D),
    ("mcl", D),
    ("msrc", D),
    ("kpios", D),
    ("nulbaf", D),
    ("kpiodaag", D),
    ("anagrpid", D),
    ("nsattr", D),
    ("nvmsetid", D),
    ("endgid", D),
    ("nguid", S),
    ("eui64", S),
];

fn id_ns_fields(id: &Identify) -> Vec<(&'static str, V)> {
    ID_NS
        .iter()
        .map(|&(k, _)| {
            let n = match k {
                "nsze" => id.nsze,
                "ncap" => id.ncap,
                "nuse" => id.nuse,
                // NSFEAT bit 2: Deallocated or Unwritten Logical Block error (DULBE) supported.
                "nsfeat" if id.vendor.deallocate => 0x4,
                // MC bit 1: metadata as a separate buffer.
                "mc" if id.metadata_bytes > 0 => 0x2,
                // DLFEAT 1: a deallocated block reads as zeros.
                "dlfeat" if id.vendor.deallocate => 1,
                "nvmcap" => id.nsze * id.lba_bytes,
                // Copy's limits (a design that copies inside itself).
                "mssrl" if id.vendor.zone_compaction => device::MAX_COPY_BLOCKS,
                "mcl" if id.vendor.zone_compaction => device::MAX_COPY_BLOCKS,
                "msrc" if id.vendor.zone_compaction => device::MAX_COPY_RANGES as u64 - 1,
                "nguid" => return (k, V::T("0".repeat(32))),
                "eui64" => return (k, V::T("0".repeat(16))),
                _ => 0,
            };
            (k, V::N(n))
        })
        .collect()
}

/// `nvme id-ns`.
pub(super) fn id_ns(a: IdNsArgs) -> anyhow::Result<ExitCode> {
    let fmt = id_ns_flags(&a)?;
    if a.g.dry_run() {
        dry_run_note("Identify");
        return Ok(ExitCode::SUCCESS);
    }
    let c = open_ro(&a.image)?;
    let id = c.identify();
    let fields = id_ns_fields(&id);
    if fmt == OutputFormat::Json {
        let mut m = page_json(&fields);
        let lbaf = if a.g.verbose() {
            json!({
                "LBA Format": 0,
                "Metadata Size": format!("{} bytes", id.metadata_bytes),
                "Data Size": format!("{} bytes", id.lba_bytes),
                "Relative Performance": "0 Best",
                "in use": "yes",
            })
        } else {
            json!({ "lbaf": 0, "ms": id.metadata_bytes, "ds": lbads(&id), "rp": 0, "in_use": 1 })
        };
        m.insert("lbafs".into(), json!([lbaf]));
        m.insert("vs".into(), json!([]));
        println!("{}", serde_json::to_string_pretty(&Value::Object(m))?);
    } else {
        println!("NVME Identify Namespace 1:");
        page_text(&fields, ID_NS, 8);
        if a.g.verbose() {
            println!(
                "LBA Format  0 : Metadata Size: {:<3} bytes - Data Size: {:<2} bytes - Relative Performance: 0 Best (in use)",
                id.metadata_bytes, id.lba_bytes
            );
        } else {
            println!(
                "lbaf  0 : ms:{:<3} lbads:{:<2} rp:0 (in use)",
                id.metadata_bytes,
                lbads(&id)
            );
        }
        if a.vendor_specific {
            println!("vs[]:");
            println!("       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Identify Controller (json_nvme_id_ctrl / stdout_id_ctrl, in their order).
const ID_CTRL: &[(&str, Fmt)] = &[
    ("vid", H),
    ("ssvid", H),
    ("sn", S),
    ("mn", S),
    ("fr", S),
    ("rab", D),
    ("ieee", S),
    ("cmic", H),
    ("mdts", D),
    ("cntlid", H),
    ("ver", H),
    ("rtd3r", H),
    ("rtd3e", H),
    ("oaes", H),
    ("ctratt", H),
    ("rrls", H),
    ("bpcap", H),
    ("nssl", H),
    ("plsi", D),
    ("cntrltype", D),
    ("fguid", S),
    ("crdt1", D),
    ("crdt2", D),
    ("crdt3", D),
    ("crcap", D),
    ("nvmsr", D),
    ("vwci", D),
    ("mec", D),
    ("oacs", H),
    ("acl", D),
    ("aerl", D),
    ("frmw", H),
    ("lpa", H),
    ("elpe", D),
    ("npss", D),
    ("avscc", H),
    ("apsta", H),
    ("wctemp", D),
    ("cctemp", D),
    ("mtfa", D),
    ("hmpre", D),
    ("hmmin", D),
    ("tnvmcap", D),
    ("unvmcap", D),
    ("rpmbs", H),
    ("edstt", D),
    ("dsto", D),
    ("fwug", D),
    ("kas", D),
    ("hctma", H),
    ("mntmt", D),
    ("mxtmt", D),
    ("sanicap", H),
    ("hmminds", D),
    ("hmmaxd", D),
    ("nsetidmax", D),
    ("endgidmax", D),
    ("anatt", D),
    ("anacap", D),
    ("anagrpmax", D),
    ("nanagrpid", D),
    ("pels", D),
    ("domainid", D),
    ("kpioc", D),
    ("mptfawr", D),
    ("megcap", D),
    ("tmpthha", H),
    ("cqt", D),
    ("cdpa", D),
    ("mup", D),
    ("ipmsr", H),
    ("msmt", H),
    ("sqes", H),
    ("cqes", H),
    ("maxcmd", D),
    ("nn", D),
    ("oncs", H),
    ("fuses", H),
    ("fna", H),
    ("vwc", H),
    ("awun", D),
    ("awupf", D),
    ("icsvscc", D),
    ("nwpc", D),
    ("acwu", D),
    ("ocfs", H),
    ("sgls", H),
    ("mnan", D),
    ("maxdna", D),
    ("maxcna", D),
    ("oaqd", D),
    ("rhiri", D),
    ("hirt", D),
    ("cmmrtd", D),
    ("nmmrtd", D),
    ("minmrtg", D),
    ("maxmrtg", D),
    ("trattr", D),
    ("mcudmq", D),
    ("mnsudmq", D),
    ("mcmr", D),
    ("nmcmr", D),
    ("mcdqpc", D),
    ("subnqn", S),
    ("ioccsz", D),
    ("iorcsz", D),
    ("icdoff", D),
    ("fcatt", H),
    ("msdbd", D),
    ("ofcs", D),
    ("dctype", D),
    ("ccrl", D),
];

/// The serial number: the same for the same configuration (an image has no other identity
/// that survives a copy), 20 characters at most.
pub(super) fn serial(c: &Controller) -> String {
    let id = c.identify();
    let key = format!("{}/{}/{}", c.config().name, id.nsze, id.lba_bytes);
    // FNV-1a, 32 bits.
    let h = key.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    });
    format!("ZNSLAB{h:08X}")
}

/// The model number (40 characters at most).
pub(super) fn model(c: &Controller) -> String {
    let mut m = format!("znslab {}", c.config().name);
    m.truncate(40);
    m
}

/// The firmware revision: znslab's version (8 characters at most).
pub(super) fn firmware() -> String {
    let mut f = env!("CARGO_PKG_VERSION").to_string();
    f.truncate(8);
    f
}

fn id_ctrl_fields(c: &Controller) -> Vec<(&'static str, V)> {
    let id = c.identify();
    ID_CTRL
        .iter()
        .map(|&(k, _)| {
            let n = match k {
                "sn" => return (k, V::T(serial(c))),
                "mn" => return (k, V::T(model(c))),
                "fr" => return (k, V::T(firmware())),
                "ieee" => return (k, V::N(0)),
                "fguid" => return (k, V::T("00000000-0000-0000-0000-000000000000".into())),
                "subnqn" => {
                    return (
                        k,
                        V::T(format!("nqn.2014-08.org.nvmexpress:znslab:{}", serial(c))),
                    )
                }
                // MDTS: a power of two in units of the 4 KiB minimum memory page size.
                "mdts" => (id.mdts_bytes / 4096).max(1).ilog2() as u64,
                "cntlid" => 1,
                // NVMe 2.0, the version that carries the Zoned Namespace command set.
                "ver" => 0x20000,
                // An I/O controller.
                "cntrltype" => 1,
                "tnvmcap" => id.nsze * id.lba_bytes,
                // 64-byte submission and 16-byte completion queue entries (required and max).
                "sqes" => 0x66,
                "cqes" => 0x44,
                "nn" => 1,
                // ONCS bit 2: Dataset Management; bit 8: Copy.
                "oncs" => {
                    (if id.vendor.deallocate { 0x4 } else { 0 })
                        | (if id.vendor.zone_compaction { 0x100 } else { 0 })
                }
                _ => 0,
            };
            (k, V::N(n))
        })
        .collect()
}

/// The one power state descriptor, all zeros (no power management), as json_nvme_id_ctrl
/// prints a descriptor.
fn psd_json() -> Value {
    let mut m = Map::new();
    for k in [
        "max_power",
        "max_power_scale",
        "non-operational_state",
        "entry_lat",
        "exit_lat",
        "read_tput",
        "read_lat",
        "write_tput",
        "write_lat",
        "idle_power",
        "idle_scale",
        "active_power",
        "active_power_work",
        "active_scale",
        "emerg_power_fail_recover_time",
        "emerg_power_fail_recover_scale",
        "force_quiesce_vault_time",
        "force_quiesce_vault_scale",
        "emerg_power_fail_vault_time",
        "emerg_power_fail_vault_scale",
    ] {
        m.insert(k.into(), json!(0));
    }
    Value::Object(m)
}

/// `nvme id-ctrl`.
pub(super) fn id_ctrl(a: IdCtrlArgs) -> anyhow::Result<ExitCode> {
    let fmt = id_ctrl_flags(&a)?;
    if a.g.dry_run() {
        dry_run_note("Identify");
        return Ok(ExitCode::SUCCESS);
    }
    let c = open_ro(&a.image)?;
    let fields = id_ctrl_fields(&c);
    if fmt == OutputFormat::Json {
        let mut m = page_json(&fields);
        m.insert("psds".into(), json!([psd_json()]));
        println!("{}", serde_json::to_string_pretty(&Value::Object(m))?);
    } else {
        println!("NVME Identify Controller:");
        page_text(&fields, ID_CTRL, 10);
        println!("ps      0 : mp:0.00W operational enlat:0 exlat:0 rrt:0 rrl:0");
        println!("            rwt:0 rwl:0 idle_power:- active_power:-");
        println!("            active_power_workload:-");
        if a.vendor_specific {
            println!("vs[]:");
            println!("       0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The ZNS Identify Namespace fields before the LBA format extensions (json_nvme_zns_id_ns).
const ZNS_ID_NS: &[&str] = &[
    "zoc", "ozcs", "mar", "mor", "rrl", "frl", "rrl1", "rrl2", "rrl3", "frl1", "frl2", "frl3",
    "numzrwa", "zrwafg", "zrwasz", "zrwacap",
];

/// The Identify data of a zoned namespace for the ZNS pages (None under --dry-run, after its
/// note); `whose` names what has no ZNS page when the namespace is conventional.
fn zns_identify(
    dry_run: bool,
    image: &std::path::Path,
    whose: &str,
) -> anyhow::Result<Option<Identify>> {
    if dry_run {
        dry_run_note("Identify");
        return Ok(None);
    }
    let id = open_ro(image)?.identify();
    if id.csi != CommandSet::Zoned {
        bail!(
            "{}: not a zoned namespace ({whose} has no ZNS Identify page)",
            image.display()
        );
    }
    Ok(Some(id))
}

/// `nvme zns id-ns`.
pub(super) fn zns_id_ns(a: IdNsArgs) -> anyhow::Result<ExitCode> {
    let fmt = id_ns_flags(&a)?;
    let Some(id) = zns_identify(a.g.dry_run(), &a.image, "a conventional NVM namespace")? else {
        return Ok(ExitCode::SUCCESS);
    };
    let value = |k: &str| -> u64 {
        match k {
            "zoc" => id.zoc as u64,
            "ozcs" => id.ozcs as u64,
            "mar" => id.mar as u64,
            "mor" => id.mor as u64,
            _ => 0,
        }
    };
    let human = a.g.verbose();
    if fmt == OutputFormat::Json {
        let mut m: Map<String, Value> = ZNS_ID_NS
            .iter()
            .map(|k| (k.to_string(), json!(value(k))))
            .collect();
        m.insert("lbafe".into(), json!([{ "zsze": id.zsze, "zdes": 0 }]));
        println!("{}", serde_json::to_string_pretty(&Value::Object(m))?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("ZNS Command Set Identify Namespace:");
    if human {
        println!("zoc     : {}\tZone Operation Characteristics", id.zoc);
        println!("  [1:1] : 0\t  Zone Active Excursions: No");
        println!("  [0:0] : 0\t  Variable Zone Capacity: No\n");
        println!("ozcs    : {}\tOptional Zoned Command Support", id.ozcs);
        println!("  [0:0] : 0\t  Read Across Zone Boundaries: No");
        println!("  [1:1] : 0\t  Zone Random Write Area: No");
        let limit = |n: u32, what: &str| {
            if n == u32::MAX {
                format!("No {what} Resource Limit")
            } else {
                format!("{}\t{what} Resources", n as u64 + 1)
            }
        };
        println!("mar     : {}", limit(id.mar, "Active"));
        println!("mor     : {}", limit(id.mor, "Open"));
    } else {
        println!("zoc     : {}", id.zoc);
        println!("ozcs    : {}", id.ozcs);
        println!("mar     : {}", cx(id.mar as u64));
        println!("mor     : {}", cx(id.mor as u64));
    }
    for k in [
        "rrl ", "frl ", "rrl1", "rrl2", "rrl3", "frl1", "frl2", "frl3",
    ] {
        if human {
            println!("{k}    : Not Reported");
        } else {
            println!("{k}    : 0");
        }
    }
    println!("numzrwa : 0\nzrwafg  : 0\nzrwasz  : 0");
    if human {
        println!("zrwacap : 0\tZone Random Write Area Capability");
        println!("  [0:0] : 0\t  Explicit ZRWA Flush Operations: No");
        println!(
            "LBA Format Extension  0 : Zone Size: {} LBAs - Zone Descriptor Extension Size: 0 bytes (in use)",
            cx(id.zsze)
        );
    } else {
        println!("zrwacap : 0");
        println!("lbafe  0: zsze:{} zdes:0 (in use)", cx(id.zsze));
    }
    Ok(ExitCode::SUCCESS)
}

/// `nvme zns id-ctrl`: ZASL, a power of two in units of the 4 KiB minimum memory page size.
pub(super) fn zns_id_ctrl(a: IdCtrlArgs) -> anyhow::Result<ExitCode> {
    let fmt = id_ctrl_flags(&a)?;
    let Some(id) = zns_identify(a.g.dry_run(), &a.image, "its controller")? else {
        return Ok(ExitCode::SUCCESS);
    };
    let zasl = (id.zasl_bytes / 4096).max(1).ilog2();
    if fmt == OutputFormat::Json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "zasl": zasl }))?
        );
    } else {
        println!("NVMe ZNS Identify Controller:\nzasl    : {zasl}");
    }
    Ok(ExitCode::SUCCESS)
}
