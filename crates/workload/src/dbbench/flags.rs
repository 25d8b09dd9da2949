//! db_bench's command line: a gflags-style parser driven by one table of flags
//! (`flag_table.rs`, generated from RocksDB's `tools/db_bench_tool.cc`, plus gflags' and znslab's own
//! flags below). The same table writes `docs/compat/db_bench.md` (checked by a test), so what
//! the document says is what the parser does.
//!
//! gflags forms: `--name=value`, `--name value`, `-name=value` (one dash), a bare boolean
//! `--name` (true), `--noname` (false), boolean values `true/false/1/0/yes/no/t/f/y/n`; a
//! flag given twice keeps its last value.

use std::collections::BTreeMap;

pub use super::flag_table::DB_BENCH_FLAGS;
pub use super::rocksdb_names::{DB_BENCH_BENCHMARKS, HISTOGRAMS, TICKERS};

/// One flag: its name, gflags type (`bool`, `int32`, `int64`, `uint32`, `uint64`, `double`,
/// `string`), default (db_bench's), and what znslab does with it.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    pub name: &'static str,
    pub ty: &'static str,
    pub default: &'static str,
    pub status: Status,
}

/// What znslab does with a flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Parsed and used as db_bench uses it (the text notes details).
    Supported(&'static str),
    /// Parsed and used, with the difference the text names.
    Differs(&'static str),
    /// Accepted; a value other than the default prints a one-line notice on stderr, since it
    /// changes nothing that is measured here (the text says why).
    Ignored(&'static str),
    /// A value other than the default is refused with the text as the reason (the default is
    /// what the store does, so it is accepted).
    Refused(&'static str),
}

/// znslab's own flags (not db_bench's).
pub const ZNSLAB_FLAGS: &[Flag] = &[
    Flag {
        name: "device",
        ty: "string",
        default: device::presets::DEFAULT,
        status: Status::Supported("device preset or TOML file (`znslab devices`)"),
    },
    Flag {
        name: "json",
        ty: "bool",
        default: "false",
        status: Status::Supported("print JSON instead of db_bench's text"),
    },
    Flag {
        name: "cores",
        ty: "int32",
        default: "8",
        status: Status::Supported("host cores of the simulated machine"),
    },
    Flag {
        name: "dataset",
        ty: "string",
        default: "random",
        status: Status::Supported(
            "values from a dataset: amazon, reddit (build with `znslab corpus build`) or random",
        ),
    },
    Flag {
        name: "finish_threshold",
        ty: "uint32",
        default: "0",
        status: Status::Supported("zonefs (ZenFS's mkfs flag): finish an idle zone once less than this percentage is left"),
    },
    Flag {
        name: "enable_gc",
        ty: "bool",
        default: "false",
        status: Status::Supported("zonefs's garbage collection (ZenFS's flag)"),
    },
    Flag {
        name: "fs_policy",
        ty: "string",
        default: "zenfs",
        status: Status::Supported(
            "zonefs's zone policy: zenfs (ZenFS's), or zenfsplus (ZenFS+, IEEE Access'23: SSTs striped in 192 KiB units over independent zone groups, found by probing the device at mkfs; docs/zenfsplus.md)",
        ),
    },
    Flag {
        name: "izg_probe",
        ty: "string",
        default: "",
        status: Status::Supported(
            "how mkfs finds the independent zone groups: write (whole-zone writes, periodic sweep: ZenFS+'s artifact) or read (192 KiB reads of every pair of the first 128 zones: the paper's); empty: write under zenfsplus, none under zenfs",
        ),
    },
    Flag {
        name: "zenfsplus_izgs",
        ty: "uint32",
        default: "16",
        status: Status::Supported(
            "zenfsplus: independent zone groups it writes (Fig. 8's active IZGs; 0: all found)",
        ),
    },
    Flag {
        name: "max_stripe_width",
        ty: "uint32",
        default: "16",
        status: Status::Supported("zenfsplus: the most zones one SST is striped over (§IV-C)"),
    },
    Flag {
        name: "zenfsplus_isolation",
        ty: "bool",
        default: "true",
        status: Status::Supported(
            "zenfsplus: flush (with WAL and MANIFEST) and compaction write disjoint IZGs, a quarter and the rest (§IV-B)",
        ),
    },
    Flag {
        name: "max_active_io_zones",
        ty: "uint32",
        default: "0",
        status: Status::Supported(
            "zonefs: the most IO zones written at once (0: the device's active limit less zonefs's 2); ZenFS+ ran ZenFS with 6-12",
        ),
    },
    Flag {
        name: "latency_interval_ms",
        ty: "uint64",
        default: "0",
        status: Status::Supported(
            "percentiles (p50, p99, p99.9, max) of the operations issued in each interval of this many simulated ms, in --json (ZenFS+ Fig. 10: put() p99 per 100 ms); 0: none",
        ),
    },
    Flag {
        name: "zenfsplus_reclaim",
        ty: "bool",
        default: "true",
        status: Status::Supported(
            "zenfsplus: dead zones are reset by a minor GC every 10 s, lower levels first and in parallel, not when their last file is deleted, and a full GC copies out the emptiest stripe groups of a partition below 10% free (§IV-D, the R)",
        ),
    },
    Flag {
        name: "image",
        ty: "string",
        default: "",
        status: Status::Supported(
            "keep the device in this image file: a run leaves its database there (memtables flushed) and --use_existing_db reopens it (empty: a fresh in-memory device)",
        ),
    },
    Flag {
        name: "force",
        ty: "bool",
        default: "false",
        status: Status::Supported("a run without --use_existing_db replaces an existing --image"),
    },
    Flag {
        name: "image_sync",
        ty: "bool",
        default: "false",
        status: Status::Supported("fdatasync the --image after every command that changed it"),
    },
];

/// gflags' own flags, which db_bench takes too.
pub const GFLAGS_FLAGS: &[Flag] = &[
    Flag {
        name: "undefok",
        ty: "string",
        default: "",
        status: Status::Supported(
            "comma-separated flag names that are no error when unknown (each prints a notice)",
        ),
    },
    Flag {
        name: "flagfile",
        ty: "string",
        default: "",
        status: Status::Refused("put the file's flags on the command line"),
    },
    Flag {
        name: "fromenv",
        ty: "string",
        default: "",
        status: Status::Refused("put the flags on the command line"),
    },
    Flag {
        name: "tryfromenv",
        ty: "string",
        default: "",
        status: Status::Refused("put the flags on the command line"),
    },
];

/// The flag of that name (db_bench's, gflags' or znslab's).
pub fn lookup(name: &str) -> Option<&'static Flag> {
    DB_BENCH_FLAGS
        .iter()
        .chain(GFLAGS_FLAGS)
        .chain(ZNSLAB_FLAGS)
        .find(|f| f.name == name)
}

/// The flags a command line set (last value wins), checked against the table.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    values: BTreeMap<&'static str, String>,
    /// One-line notices for ignored flags (the caller prints them on stderr).
    pub notices: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FlagError {
    #[error("unknown flag {0:?} (not a db_bench flag; see docs/compat/db_bench.md)")]
    Unknown(String),
    #[error("{0:?} is not a flag (db_bench takes only --name=value flags)")]
    NotAFlag(String),
    #[error("--{0}: needs a value")]
    NoValue(String),
    #[error("--{name}={value}: not of type {ty}")]
    BadValue {
        name: &'static str,
        value: String,
        ty: &'static str,
    },
    #[error("--{name}={value}: refused: {why}")]
    Refused {
        name: &'static str,
        value: String,
        why: &'static str,
    },
}

pub fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "1" => Some(true),
        "false" | "f" | "no" | "n" | "0" => Some(false),
        _ => None,
    }
}

/// Does `v` read as the flag's type? Normalizes booleans to `true`/`false`.
fn typed(f: &Flag, v: &str) -> Result<String, FlagError> {
    let bad = || FlagError::BadValue {
        name: f.name,
        value: v.to_string(),
        ty: f.ty,
    };
    let ok = match f.ty {
        "bool" => return parse_bool(v).map(|b| b.to_string()).ok_or_else(bad),
        "int32" => v.parse::<i32>().is_ok(),
        "uint32" => v.parse::<u32>().is_ok(),
        "int64" => v.parse::<i64>().is_ok(),
        "uint64" => v.parse::<u64>().is_ok(),
        "double" => v.parse::<f64>().is_ok_and(f64::is_finite),
        _ => true,
    };
    if ok {
        Ok(v.to_string())
    } else {
        Err(bad())
    }
}

/// Is `v` the flag's default (compared as its type)?
fn is_default(f: &Flag, v: &str) -> bool {
    match f.ty {
        "bool" => parse_bool(f.default) == parse_bool(v),
        "double" => match (f.default.parse::<f64>(), v.parse::<f64>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        },
        "string" => f.default == v,
        _ => match (f.default.parse::<i128>(), v.parse::<i128>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        },
    }
}

impl Flags {
    /// Parse db_bench's command line (without the program name).
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Flags, FlagError> {
        let mut out = Flags::default();
        let mut unknown = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_ref();
            i += 1;
            let body = arg
                .strip_prefix("--")
                .or_else(|| arg.strip_prefix('-'))
                .filter(|b| !b.is_empty())
                .ok_or_else(|| FlagError::NotAFlag(arg.to_string()))?;
            let (name, value) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let (flag, value) = match (lookup(name), value) {
                (Some(f), Some(v)) => (f, v),
                (Some(f), None) if f.ty == "bool" => (f, "true".to_string()),
                (Some(f), None) => {
                    // gflags: `--name value`.
                    let v = args
                        .get(i)
                        .ok_or_else(|| FlagError::NoValue(f.name.to_string()))?;
                    i += 1;
                    (f, v.as_ref().to_string())
                }
                (None, None) => match name.strip_prefix("no").and_then(lookup) {
                    Some(f) if f.ty == "bool" => (f, "false".to_string()),
                    _ => {
                        unknown.push((name.to_string(), arg.to_string()));
                        continue;
                    }
                },
                (None, Some(_)) => {
                    unknown.push((name.to_string(), arg.to_string()));
                    continue;
                }
            };
            let value = typed(flag, &value)?;
            out.values.insert(flag.name, value);
        }
        // gflags: an unknown flag named in --undefok is no error.
        let undefok: Vec<&str> = out
            .values
            .get("undefok")
            .map(|v| v.split(',').map(str::trim).collect())
            .unwrap_or_default();
        for (name, arg) in unknown {
            let base = name.strip_prefix("no").unwrap_or(&name);
            if !undefok.contains(&name.as_str()) && !undefok.contains(&base) {
                return Err(FlagError::Unknown(arg));
            }
            out.notices.push(format!(
                "{arg} ignored: not a db_bench flag, listed in --undefok"
            ));
        }
        // Checked on the last value of each flag.
        for (&name, value) in &out.values {
            let f = lookup(name).expect("parsed flags are in the table");
            match f.status {
                Status::Refused(why) if !is_default(f, value) => {
                    return Err(FlagError::Refused {
                        name,
                        value: value.clone(),
                        why,
                    })
                }
                Status::Ignored(why) if !is_default(f, value) => {
                    out.notices.push(format!("--{name}={value} ignored: {why}"))
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Was the flag given?
    pub fn given(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The flag's value: the given one, else the table's default.
    pub fn str(&self, name: &str) -> &str {
        match self.values.get(name) {
            Some(v) => v,
            None => lookup(name).map_or("", |f| f.default),
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        parse_bool(self.str(name)).unwrap_or(false)
    }

    /// An integer flag (checked to read as its type when parsed).
    pub fn i64(&self, name: &str) -> i64 {
        let v = self.str(name);
        v.parse::<i64>()
            .or_else(|_| v.parse::<u64>().map(|u| u.min(i64::MAX as u64) as i64))
            .unwrap_or(0)
    }

    /// An integer flag that must not be negative.
    pub fn u64(&self, name: &'static str) -> Result<u64, FlagError> {
        let v = self.str(name);
        v.parse::<u64>().map_err(|_| FlagError::BadValue {
            name,
            value: v.to_string(),
            ty: "non-negative integer",
        })
    }

    pub fn f64(&self, name: &str) -> f64 {
        self.str(name).parse().unwrap_or(0.0)
    }
}

/// How a benchmark that runs here differs from db_bench's.
pub fn benchmark_difference(name: &str) -> Option<&'static str> {
    match name {
        "readreverse" => {
            Some("reads forward from the first key: the store has no reverse iterator")
        }
        _ => None,
    }
}

/// Why one of db_bench's benchmarks does not run here (None: it runs).
pub fn benchmark_refusal(name: &str) -> Option<&'static str> {
    if super::bench::KNOWN.contains(&name) {
        return None;
    }
    let groups: &[(&[&str], &str)] = &[
        (
            &[
                "merge",
                "appendrandom",
                "getmergeoperands",
                "readrandomoperands",
            ],
            "the store has no merge operator",
        ),
        (&["transaction"], "the store has no transactions"),
        (&["backup", "restore"], "the store has no backup engine"),
        (&["ingest"], "the store does not ingest external files"),
        (
            &["crc32c", "xxhash", "xxh3", "compress", "acquireload"],
            "it times the host CPU's hashing or compression, not the store",
        ),
        (
            &["coroutine", "multiscan", "readrandomfast"],
            "the store reads keys one at a time",
        ),
        (
            &["entity", "embeddedblob"],
            "the store has no wide columns or blob files",
        ),
        (&["replay"], "no trace replay"),
        (
            &[
                "openandcompact",
                "compactall",
                "compact0",
                "compact1",
                "verify",
                "sstables",
                "approximate",
                "cache_report",
                "block_cache_entry_stats",
                "memstats",
                "stats_history",
                "resetstats",
            ],
            "the store has no such API",
        ),
    ];
    Some(
        groups
            .iter()
            .find(|(keys, _)| keys.iter().any(|k| name.contains(k)))
            .map_or("not emulated here", |(_, why)| why),
    )
}

/// `docs/compat/db_bench.md`: every flag of the table, with its status.
pub fn compat_markdown() -> String {
    let mut s = String::from(
        "# db_bench compatibility\n\n\
         Generated from the flag table that `znslab dbbench` parses with \
         (`crates/workload/src/dbbench/flag_table.rs`, itself generated by \
         `tools/dbbench_flags.py` from RocksDB's `tools/db_bench_tool.cc`); a test checks this \
         file against it. Flags take gflags' forms: `--name=value`, `--name value`, \
         `-name=value`, a bare boolean `--name`, `--noname`; the last of a repeated flag wins.\n\n\
         - `supported`: parsed and used as db_bench uses it.\n\
         - `supported, differs: ...`: parsed and used, with the difference named.\n\
         - `ignored: ...`: accepted; a value other than the default prints a one-line notice \
         on stderr; it changes nothing measured here.\n\
         - `refused: ...`: a value other than db_bench's default is refused with that reason \
         (the default is what the store does, so it is accepted).\n\n\
         | flag | type | db_bench default | status |\n|---|---|---|---|\n",
    );
    let row = |s: &mut String, f: &Flag| {
        let status = match f.status {
            Status::Supported("") => "supported".to_string(),
            Status::Supported(t) => format!("supported ({t})"),
            Status::Differs(t) => format!("supported, differs: {t}"),
            Status::Ignored(t) => format!("ignored: {t}"),
            Status::Refused(t) => format!("refused: {t}"),
        };
        let default = if f.default.len() > 40 {
            format!("{}...", &f.default[..40])
        } else {
            f.default.to_string()
        };
        s.push_str(&format!(
            "| `--{}` | {} | `{}` | {} |\n",
            f.name,
            f.ty,
            default.replace('|', "\\|"),
            status.replace('|', "\\|")
        ));
    };
    for f in DB_BENCH_FLAGS {
        row(&mut s, f);
    }
    s.push_str("\n## Benchmarks (`--benchmarks`)\n\n| benchmark | status |\n|---|---|\n");
    for b in DB_BENCH_BENCHMARKS {
        let status = match (benchmark_refusal(b), benchmark_difference(b)) {
            (None, None) => "supported".to_string(),
            (None, Some(how)) => format!("supported, differs: {how}"),
            (Some(why), _) => format!("refused: {why}"),
        };
        s.push_str(&format!("| `{b}` | {status} |\n"));
    }
    s.push_str("\n## gflags' own flags\n\n| flag | type | default | status |\n|---|---|---|---|\n");
    for f in GFLAGS_FLAGS {
        row(&mut s, f);
    }
    s.push_str(
        "\n## znslab's own flags\n\n| flag | type | default | status |\n|---|---|---|---|\n",
    );
    for f in ZNSLAB_FLAGS {
        row(&mut s, f);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Flags, FlagError> {
        Flags::parse(args)
    }

    #[test]
    fn gflags_forms() {
        let f = p(&[
            "--sync=1",
            "-num=5",
            "--histogram",
            "--nodisable_wal",
            "--reads",
            "7",
        ])
        .unwrap();
        assert!(f.bool("sync"));
        assert_eq!(f.i64("num"), 5);
        assert!(f.bool("histogram"));
        assert!(!f.bool("disable_wal"));
        assert_eq!(f.i64("reads"), 7);
        for v in ["true", "TRUE", "yes", "y", "t", "1"] {
            assert!(p(&[&format!("--sync={v}")]).unwrap().bool("sync"), "{v}");
        }
        assert!(!p(&["--sync=true", "--nosync"]).unwrap().bool("sync"));
        assert!(p(&["--nosync", "--sync"]).unwrap().bool("sync"));
        // The last of a repeated flag wins.
        assert_eq!(p(&["--num=1", "--num=9"]).unwrap().i64("num"), 9);
        assert_eq!(p(&[]).unwrap().i64("num"), 1_000_000);
    }

    #[test]
    fn bad_flags_are_refused_by_name() {
        assert!(matches!(p(&["--bogus=1"]), Err(FlagError::Unknown(_))));
        assert!(matches!(p(&["--nonum"]), Err(FlagError::Unknown(_))));
        assert!(matches!(p(&["fillrandom"]), Err(FlagError::NotAFlag(_))));
        assert!(matches!(p(&["--num"]), Err(FlagError::NoValue(_))));
        assert!(matches!(
            p(&["--num=ten"]),
            Err(FlagError::BadValue { name: "num", .. })
        ));
        assert!(matches!(
            p(&["--sync=maybe"]),
            Err(FlagError::BadValue { name: "sync", .. })
        ));
        let e = p(&["--num_column_families=2"]).unwrap_err().to_string();
        assert!(e.contains("--num_column_families=2: refused: "), "{e}");
        // The default of a refused flag is what runs, so it is accepted.
        assert!(p(&["--num_column_families=1"]).is_ok());
        let f = p(&["--use_direct_reads", "--db=/tmp/x"]).unwrap();
        assert_eq!(f.notices.len(), 2, "{:?}", f.notices);
        assert!(p(&["--use_direct_reads=false"]).unwrap().notices.is_empty());
        // gflags' --undefok: unknown flags it names are no error, wherever it stands.
        let f = p(&["--not_a_flag=1", "--undefok=not_a_flag,x"]).unwrap();
        assert_eq!(f.notices.len(), 1, "{:?}", f.notices);
        assert!(matches!(
            p(&["--undefok=x", "--y=1"]),
            Err(FlagError::Unknown(_))
        ));
    }

    #[test]
    fn every_flag_is_in_the_table_once() {
        let mut names: Vec<_> = DB_BENCH_FLAGS
            .iter()
            .chain(ZNSLAB_FLAGS)
            .map(|f| f.name)
            .collect();
        assert!(DB_BENCH_FLAGS.len() > 400, "{}", DB_BENCH_FLAGS.len());
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "a flag is listed twice");
        for f in DB_BENCH_FLAGS {
            if matches!(f.status, Status::Refused(_)) {
                assert!(!matches!(f.status, Status::Refused("")), "{}", f.name);
            }
        }
    }

    /// A value of the flag's type other than its default.
    fn other_value(f: &Flag) -> String {
        match f.ty {
            "bool" => (!parse_bool(f.default).unwrap_or(false)).to_string(),
            "double" => (f.default.parse::<f64>().unwrap_or(0.0) + 0.5).to_string(),
            "string" => format!("{}x", f.default),
            _ => (f.default.parse::<i64>().unwrap_or(0) + 1).to_string(),
        }
    }

    #[test]
    fn every_flag_does_what_the_table_says() {
        for f in DB_BENCH_FLAGS.iter().chain(GFLAGS_FLAGS) {
            let arg = format!("--{}={}", f.name, other_value(f));
            let r = Flags::parse(&[arg.as_str()]);
            match f.status {
                Status::Refused(why) => match r {
                    Err(FlagError::Refused { name, why: w, .. }) => {
                        assert_eq!((name, w), (f.name, why), "{arg}")
                    }
                    other => panic!("{arg}: {other:?}"),
                },
                Status::Ignored(why) => {
                    let n = r.unwrap_or_else(|e| panic!("{arg}: {e}")).notices;
                    assert_eq!(n.len(), 1, "{arg}");
                    assert!(n[0].starts_with(&format!("{arg} ignored: ")) && n[0].ends_with(why));
                }
                Status::Supported(_) | Status::Differs(_) => {
                    let parsed = r.unwrap_or_else(|e| panic!("{arg}: {e}"));
                    assert!(parsed.given(f.name), "{arg}");
                }
            }
            // Its default is accepted whatever its status (a default the source spells as
            // an expression is refused for want of a value to compare with: skipped).
            if f.ty == "string" || lookup(f.name).is_some_and(|f| typed(f, f.default).is_ok()) {
                let arg = format!("--{}={}", f.name, f.default);
                if let Err(e) = Flags::parse(&[arg.as_str()]) {
                    panic!("{arg}: {e}");
                }
            }
        }
    }

    #[test]
    fn every_benchmark_znslab_runs_is_db_benchs() {
        for b in super::super::bench::KNOWN {
            assert!(DB_BENCH_BENCHMARKS.contains(b), "{b}");
        }
        assert_eq!(benchmark_refusal("fillrandom"), None);
        assert_eq!(
            benchmark_refusal("mergerandom"),
            Some("the store has no merge operator")
        );
    }

    #[test]
    fn compat_doc_is_the_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/compat/db_bench.md");
        let want = compat_markdown();
        if std::env::var_os("ZNSLAB_BLESS").is_some() {
            std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/compat/db_bench.md is not the flag table: regenerate it with \
             ZNSLAB_BLESS=1 cargo test -p workload --lib dbbench::flags"
        );
    }
}
