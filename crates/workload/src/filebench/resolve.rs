//! Definitions resolved against the variables: a fileset's attributes (`fileset.c`'s
//! defaults: size 1024, dirgamma 1500, prealloc 0) and a flowop's (`parser_flowop_get_attrs`'s
//! defaults: iters 1, iosize 0), with the checks filebench makes only while running (no
//! such fileset, zero iosize, a write to a readonly fileset, a limit's missing target)
//! made here, before anything runs.

use super::model::{
    attr, FilesetDef, Flowop, Interp, Kind, Num, Workload, MAXFD, MAX_ENTRIES, REFUSED_FLOWOPS,
};
use super::parser::{Attr, FlowopDef, Value};
use super::FbError;

pub(super) fn fileset(
    it: &mut Interp,
    attrs: &[Attr],
    single_file: bool,
    line: usize,
) -> Result<FilesetDef, FbError> {
    let what = if single_file {
        "define file"
    } else {
        "define fileset"
    };
    let name = match attr(attrs, "name") {
        Some(a) => it.string(&a.value, "name", a.line)?,
        None => return Err(FbError::at(line, format!("{what}: no name"))),
    };
    if name.is_empty() || name.contains('/') {
        return Err(FbError::at(
            line,
            format!("{what}: name {name:?} must be one path component"),
        ));
    }
    let path = match attr(attrs, "path") {
        Some(a) => it.string(&a.value, "path", a.line)?,
        None => return Err(FbError::at(line, format!("{what} {name}: path not set"))),
    };
    if !path.starts_with('/') {
        return Err(FbError::at(
            line,
            format!("{what} {name}: path {path} must be absolute"),
        ));
    }
    let size = match attr(attrs, "size") {
        Some(a) => it.num(&a.value, "size", a.line)?,
        None => Num::Const(1024),
    };
    let entries = if single_file {
        1
    } else {
        match attr(attrs, "entries") {
            Some(a) => it.int(&a.value, "entries", a.line)?,
            None => 0,
        }
    };
    let leafdirs = match attr(attrs, "leafdirs") {
        Some(a) => it.int(&a.value, "leafdirs", a.line)?,
        None => 0,
    };
    if entries > 0 && leafdirs > 0 {
        return Err(FbError::at(line, format!(
            "{what} {name}: entries and leafdirs together: file and leaf directory names collide (filebench fails to pre-allocate them)"
        )));
    }
    if entries.saturating_add(leafdirs) > MAX_ENTRIES {
        return Err(FbError::at(
            line,
            format!("{what} {name}: more than {MAX_ENTRIES} entries"),
        ));
    }
    let dirwidth = match attr(attrs, "dirwidth") {
        Some(a) => it.num(&a.value, "dirwidth", a.line)?,
        None if single_file => Num::Const(1),
        None => {
            return Err(FbError::at(
                line,
                format!("fileset {name}: no directory width (dirwidth=)"),
            ))
        }
    };
    if !single_file && dirwidth.mean() < 2.0 && entries + leafdirs > 1 {
        return Err(FbError::at(
            line,
            format!("fileset {name}: dirwidth must be 2 or more"),
        ));
    }
    let dirgamma = match attr(attrs, "dirgamma") {
        Some(a) => it.int(&a.value, "dirgamma", a.line)?,
        None => 1500,
    };
    let dirdepthrv = match attr(attrs, "dirdepthrv") {
        Some(a) => Some(it.num(&a.value, "dirdepthrv", a.line)?),
        None => None,
    };
    let prealloc = match attr(attrs, "prealloc") {
        Some(a) => match &a.value {
            Value::Bool(b) => 100 * *b as u64,
            v => it.int(v, "prealloc", a.line)?,
        },
        None => 0,
    };
    if prealloc > 100 {
        return Err(FbError::at(
            line,
            format!("{what} {name}: prealloc={prealloc}: a percentage (0 to 100)"),
        ));
    }
    let flag = |it: &Interp, n: &str| -> Result<bool, FbError> {
        match attr(attrs, n) {
            Some(a) => it.boolean(&a.value, n, a.line),
            None => Ok(false),
        }
    };
    Ok(FilesetDef {
        readonly: flag(it, "readonly")?,
        writeonly: flag(it, "writeonly")?,
        name,
        path,
        size,
        entries,
        leafdirs,
        dirwidth,
        dirgamma,
        dirdepthrv,
        prealloc,
        single_file,
        line,
    })
}

pub(super) fn flowop(
    it: &mut Interp,
    f: &FlowopDef,
    filesets: &[FilesetDef],
    notices: &mut Vec<String>,
) -> Result<Flowop, FbError> {
    let line = f.line;
    if let Some((_, why)) = REFUSED_FLOWOPS.iter().find(|(n, _)| *n == f.kind) {
        return Err(FbError::at(
            line,
            format!("flowop {}: refused: {why}", f.kind),
        ));
    }
    let Some(&(_, kind)) = Kind::ALL.iter().find(|(n, _)| *n == f.kind) else {
        return Err(FbError::at(line, format!("unknown flowop {}", f.kind)));
    };
    let ctx = format!("flowop {}", f.kind);
    let name = match attr(&f.attrs, "name") {
        Some(a) => it.string(&a.value, "name", a.line)?,
        None => return Err(FbError::at(line, format!("{ctx}: no name"))),
    };
    let get = |n: &str| attr(&f.attrs, n);
    for (n, why) in [
        (
            "opennext",
            "rotating file descriptors (opennext) are not implemented",
        ),
        ("blocking", "belongs to sempost/semblock, which are refused"),
        ("highwater", "belongs to semblock, which is refused"),
    ] {
        if let Some(a) = get(n) {
            return Err(FbError::at(
                a.line,
                format!("{ctx} {name}: {n}: refused: {why}"),
            ));
        }
    }
    for (n, why) in [
        (
            "directio",
            "no page cache is modelled, so O_DIRECT changes no figure",
        ),
        ("noreadahead", "no readahead is modelled"),
    ] {
        if let Some(a) = get(n) {
            if it.boolean(&a.value, n, a.line)? {
                notices.push(format!(
                    "line {}: {ctx} {name}: {n} accepted and ignored ({why})",
                    a.line
                ));
            }
        }
    }
    let fileset = match get("filename") {
        Some(a) => {
            let s = it.string(&a.value, "filesetname", a.line)?;
            Some(filesets.iter().position(|fs| fs.name == s).ok_or_else(|| {
                FbError::at(
                    a.line,
                    format!("{ctx} {name}: no fileset or file named {s}"),
                )
            })?)
        }
        None => None,
    };
    let fdnum = |n: &str, it: &mut Interp| -> Result<usize, FbError> {
        match get(n) {
            Some(a) => {
                let v = it.int_const(&a.value, n, a.line)?;
                if v >= MAXFD {
                    return Err(FbError::at(
                        a.line,
                        format!("{ctx} {name}: {n}={v}: filebench has {MAXFD} per thread"),
                    ));
                }
                Ok(v as usize)
            }
            None => Ok(0),
        }
    };
    let fd = fdnum("fd", it)?;
    let srcfd = fdnum("srcfd", it)?;
    let num = |n: &str, dflt: u64, it: &mut Interp| -> Result<Num, FbError> {
        match get(n) {
            Some(a) => it.num(&a.value, n, a.line),
            None => Ok(Num::Const(dflt)),
        }
    };
    let iosize = num("iosize", 0, it)?;
    let iters = num("iters", 1, it)?;
    let wss = num("workingset", 0, it)?;
    let (value, text) = match (kind, get("value")) {
        (Kind::Print, Some(a)) => (Num::Const(0), it.string(&a.value, "value", a.line)?),
        _ => (num("value", 0, it)?, String::new()),
    };
    let flag = |n: &str, it: &Interp| -> Result<bool, FbError> {
        match get(n) {
            Some(a) => it.boolean(&a.value, n, a.line),
            None => Ok(false),
        }
    };
    let random = flag("random", it)?;
    let dsync = flag("dsync", it)?;
    let target = match get("target") {
        Some(a) => Some(it.string(&a.value, "target", a.line)?),
        None => None,
    };
    let indexed = match get("indexed") {
        Some(a) => Some(it.num(&a.value, "indexed", a.line)?),
        None => None,
    };
    // What filebench finds only when the flowop runs, checked before anything runs.
    let needs_fileset = matches!(
        kind,
        Kind::Createfile
            | Kind::Openfile
            | Kind::Makedir
            | Kind::Removedir
            | Kind::Listdir
            | Kind::Fsyncset
    ) || (matches!(kind, Kind::Deletefile | Kind::Statfile) && fd == 0)
        || (matches!(
            kind,
            Kind::Read
                | Kind::Write
                | Kind::Readwholefile
                | Kind::Writewholefile
                | Kind::Appendfile
                | Kind::Appendfilerand
        ) && fd == 0);
    if needs_fileset && fileset.is_none() {
        return Err(FbError::at(
            line,
            format!("{ctx} {name}: no filesetname (and no fd= of an open file)"),
        ));
    }
    if matches!(kind, Kind::Appendfilerand) && iosize.is_zero() {
        return Err(FbError::at(line, format!("{ctx} {name}: zero iosize")));
    }
    if matches!(kind, Kind::Read | Kind::Write | Kind::Appendfile) && iosize.is_zero() {
        return Err(FbError::at(line, format!("{ctx} {name}: zero iosize")));
    }
    if let Some(fs) = fileset.map(|i| &filesets[i]) {
        if kind.writes() && fs.readonly {
            return Err(FbError::at(
                line,
                format!("{ctx} {name}: writes to {} which is readonly", fs.name),
            ));
        }
        if kind.reads() && fs.writeonly {
            return Err(FbError::at(
                line,
                format!("{ctx} {name}: reads {} which is writeonly", fs.name),
            ));
        }
        if matches!(kind, Kind::Makedir | Kind::Removedir) && fs.leafdirs == 0 {
            return Err(FbError::at(
                line,
                format!("{ctx} {name}: fileset {} has no leafdirs", fs.name),
            ));
        }
    }
    if matches!(
        kind,
        Kind::Iopslimit
            | Kind::Bwlimit
            | Kind::Opslimit
            | Kind::Finishoncount
            | Kind::Finishonbytes
    ) {
        // A target is a flowop of the same thread: checked once the thread is known.
    }
    Ok(Flowop {
        name,
        kind,
        fileset,
        fd,
        srcfd,
        iosize,
        iters,
        wss,
        random,
        dsync,
        value,
        target,
        indexed,
        text,
        line,
    })
}

/// Limit flowops' targets must be flowops of their own thread (filebench looks there).
pub(super) fn check_targets(w: &Workload) -> Result<(), FbError> {
    for p in &w.processes {
        for t in &p.threads {
            for f in &t.flowops {
                if let Some(target) = &f.target {
                    if matches!(
                        f.kind,
                        Kind::Iopslimit
                            | Kind::Bwlimit
                            | Kind::Opslimit
                            | Kind::Finishoncount
                            | Kind::Finishonbytes
                    ) && !t.flowops.iter().any(|g| &g.name == target)
                    {
                        return Err(FbError::at(f.line, format!("flowop {}: limit target: could not find flowop {target} in thread {}", f.name, t.name)));
                    }
                }
            }
        }
    }
    Ok(())
}
