//! The typed workload: the commands of a script run in order as filebench's parser runs
//! them (variables set, filesets and processes defined, messages logged) up to the first
//! `run`/`psrun`, and every definition resolved against the variables then (filebench
//! reads a variable when it uses it, so a `set` after a `define` counts). `--set`
//! overrides win over the file's own `set`s. Every check that can fail is made here,
//! before anything runs.

use std::collections::BTreeMap;
use std::rc::Rc;

use sim::Rng;

use super::lexer::{self, QPart, Tok};
pub use super::parser::Mode;
use super::parser::{Attr, Command, SetValue, Value};
use super::random::{Law, RandVar};
use super::FbError;

/// filebench's limit on a thread's file descriptors.
pub const MAXFD: u64 = 128;
/// Bounds that keep memory and tasks bounded (filebench has none; a typo should not
/// exhaust the host).
pub const MAX_ENTRIES: u64 = 10_000_000;
pub const MAX_THREADS: u64 = 10_000;

/// A number that is either fixed or drawn from a random variable at each use.
#[derive(Clone, Debug, PartialEq)]
pub enum Num {
    Const(u64),
    Rand(Rc<RandVar>),
}

impl Num {
    pub fn get(&self, rng: &mut Rng) -> u64 {
        match self {
            Num::Const(v) => *v,
            Num::Rand(r) => {
                let v = r.sample(rng);
                if v.is_finite() && v > 0.0 {
                    v.min(u64::MAX as f64 / 2.0) as u64
                } else {
                    0
                }
            }
        }
    }
    pub fn mean(&self) -> f64 {
        match self {
            Num::Const(v) => *v as f64,
            Num::Rand(r) => r.mean(),
        }
    }
    pub fn is_zero(&self) -> bool {
        *self == Num::Const(0)
    }
}

#[derive(Clone, Debug)]
pub enum Var {
    Int(i64),
    Bool(bool),
    Str(String),
    Rand(Rc<RandVar>),
}

/// Every flowop of `flowop_library.c`'s table and `fb_localfs.c`'s asynchronous ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    Createfile,
    Openfile,
    Closefile,
    Deletefile,
    Statfile,
    Readwholefile,
    Writewholefile,
    Appendfile,
    Appendfilerand,
    Fsync,
    Fsyncset,
    Makedir,
    Removedir,
    Listdir,
    Delay,
    Hog,
    Eventlimit,
    Opslimit,
    Iopslimit,
    Bwlimit,
    Finishoncount,
    Finishonbytes,
    Print,
}

/// Flowops refused, with why.
pub const REFUSED_FLOWOPS: &[(&str, &str)] = &[
    ("aiowrite", "asynchronous I/O (aio_write) is not modelled"),
    ("aiowait", "asynchronous I/O (aio_write) is not modelled"),
    ("semblock", "inter-process semaphores are not modelled"),
    ("sempost", "inter-process semaphores are not modelled"),
    (
        "block",
        "condition variables between threads are not modelled",
    ),
    (
        "wakeup",
        "condition variables between threads are not modelled",
    ),
    ("testrandvar", "a test of random variables, not a workload"),
];

impl Kind {
    pub const ALL: &'static [(&'static str, Kind)] = &[
        ("read", Kind::Read),
        ("write", Kind::Write),
        ("createfile", Kind::Createfile),
        ("openfile", Kind::Openfile),
        ("closefile", Kind::Closefile),
        ("deletefile", Kind::Deletefile),
        ("statfile", Kind::Statfile),
        ("readwholefile", Kind::Readwholefile),
        ("writewholefile", Kind::Writewholefile),
        ("appendfile", Kind::Appendfile),
        ("appendfilerand", Kind::Appendfilerand),
        ("fsync", Kind::Fsync),
        ("fsyncset", Kind::Fsyncset),
        ("makedir", Kind::Makedir),
        ("removedir", Kind::Removedir),
        ("listdir", Kind::Listdir),
        ("delay", Kind::Delay),
        ("hog", Kind::Hog),
        ("eventlimit", Kind::Eventlimit),
        ("opslimit", Kind::Opslimit),
        ("iopslimit", Kind::Iopslimit),
        ("bwlimit", Kind::Bwlimit),
        ("finishoncount", Kind::Finishoncount),
        ("finishonbytes", Kind::Finishonbytes),
        ("print", Kind::Print),
    ];

    /// FLOW_TYPE_IO: counted in `IO Summary`.
    pub fn is_io(self) -> bool {
        !matches!(
            self,
            Kind::Delay
                | Kind::Hog
                | Kind::Eventlimit
                | Kind::Opslimit
                | Kind::Iopslimit
                | Kind::Bwlimit
                | Kind::Finishoncount
                | Kind::Finishonbytes
                | Kind::Print
        )
    }
    /// FLOW_ATTR_READ.
    pub fn reads(self) -> bool {
        matches!(self, Kind::Read | Kind::Readwholefile)
    }
    /// FLOW_ATTR_WRITE.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Kind::Write | Kind::Writewholefile | Kind::Appendfile | Kind::Appendfilerand
        )
    }
}

#[derive(Clone, Debug)]
pub struct FilesetDef {
    pub name: String,
    pub path: String,
    pub size: Num,
    pub entries: u64,
    pub leafdirs: u64,
    pub dirwidth: Num,
    pub dirgamma: u64,
    pub dirdepthrv: Option<Num>,
    pub prealloc: u64,
    pub readonly: bool,
    pub writeonly: bool,
    pub single_file: bool,
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct Flowop {
    pub name: String,
    pub kind: Kind,
    pub fileset: Option<usize>,
    pub fd: usize,
    pub srcfd: usize,
    pub iosize: Num,
    pub iters: Num,
    pub wss: Num,
    pub random: bool,
    pub dsync: bool,
    pub value: Num,
    pub target: Option<String>,
    pub indexed: Option<Num>,
    /// print's message (its `value`).
    pub text: String,
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct ThreadDef {
    pub name: String,
    pub instances: u64,
    pub memsize: u64,
    pub flowops: Vec<Flowop>,
}

#[derive(Clone, Debug)]
pub struct ProcessDef {
    pub name: String,
    pub instances: u64,
    pub threads: Vec<ThreadDef>,
}

/// What a script asks to run.
#[derive(Clone, Debug)]
pub struct Workload {
    pub filesets: Vec<FilesetDef>,
    pub processes: Vec<ProcessDef>,
    pub mode: Mode,
    /// Events per second (0 = eventgen off).
    pub eventgen_rate: u64,
    /// Seconds (0: until the threads stop).
    pub runtime: u64,
    /// psrun's period (seconds; negative: statistics cleared after each), or None for run.
    pub psrun_period: Option<i64>,
    /// filebench's log lines before the run, in order.
    pub log: Vec<String>,
    /// One-line notices for stderr (accepted options that change no figure).
    pub notices: Vec<String>,
    /// Whether the script had a run command (and which line).
    pub run_line: Option<usize>,
}

pub(super) struct Interp {
    vars: BTreeMap<String, Var>,
    locked: BTreeMap<String, ()>,
    rng: Rng,
}

fn norm_var(name: &str) -> String {
    name.trim_start_matches('$')
        .trim_matches(|c| matches!(c, '(' | ')' | '{' | '}'))
        .to_string()
}

impl Interp {
    pub(super) fn var(&self, name: &str, line: usize) -> Result<&Var, FbError> {
        self.vars
            .get(name)
            .ok_or_else(|| FbError::at(line, format!("variable ${name} is not set")))
    }

    pub(super) fn num(&self, v: &Value, what: &str, line: usize) -> Result<Num, FbError> {
        match v {
            Value::Int(i) if *i >= 0 => Ok(Num::Const(*i as u64)),
            Value::Int(i) => Err(FbError::at(
                line,
                format!("{what}={i}: must not be negative"),
            )),
            Value::Bool(b) => Ok(Num::Const(*b as u64)),
            Value::Str(s) => Err(FbError::at(line, format!("{what}={s}: expected a number"))),
            Value::Var(name) => match self.var(name, line)? {
                Var::Int(i) => self.num(&Value::Int(*i), what, line),
                Var::Bool(b) => Ok(Num::Const(*b as u64)),
                Var::Str(s) => Err(FbError::at(
                    line,
                    format!("{what}=${name} ({s}): expected a number"),
                )),
                Var::Rand(r) => Ok(Num::Rand(r.clone())),
            },
        }
    }

    /// A number used once (entries, instances, ...): a random variable is drawn once.
    pub(super) fn int(&mut self, v: &Value, what: &str, line: usize) -> Result<u64, FbError> {
        let n = self.num(v, what, line)?;
        Ok(n.get(&mut self.rng))
    }

    pub(super) fn boolean(&self, v: &Value, what: &str, line: usize) -> Result<bool, FbError> {
        match v {
            Value::Bool(b) => Ok(*b),
            Value::Int(i) => Ok(*i != 0),
            Value::Str(s) => Err(FbError::at(
                line,
                format!("{what}={s}: expected true or false"),
            )),
            Value::Var(name) => match self.var(name, line)? {
                Var::Bool(b) => Ok(*b),
                Var::Int(i) => Ok(*i != 0),
                _ => Err(FbError::at(
                    line,
                    format!("{what}=${name}: expected true or false"),
                )),
            },
        }
    }

    pub(super) fn string(&self, v: &Value, what: &str, line: usize) -> Result<String, FbError> {
        match v {
            Value::Str(s) => Ok(s.clone()),
            Value::Int(i) => Ok(i.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            Value::Var(name) => match self.var(name, line)? {
                Var::Str(s) => Ok(s.clone()),
                Var::Int(i) => Ok(i.to_string()),
                Var::Bool(b) => Ok(b.to_string()),
                Var::Rand(_) => Err(FbError::at(
                    line,
                    format!("{what}=${name}: expected a string, not a random variable"),
                )),
            },
        }
    }

    pub(super) fn text(&self, parts: &[QPart], line: usize) -> Result<String, FbError> {
        let mut s = String::new();
        for p in parts {
            match p {
                QPart::Text(t) => s.push_str(t),
                QPart::Var(v) => s.push_str(&match self.var(v, line)? {
                    Var::Str(x) => x.clone(),
                    Var::Int(i) => i.to_string(),
                    Var::Bool(b) => b.to_string(),
                    Var::Rand(r) => format!("{}", r.mean()),
                }),
            }
        }
        Ok(s)
    }

    pub(super) fn randvar(
        &self,
        attrs: &[Attr],
        cvar: bool,
        var: &str,
    ) -> Result<RandVar, FbError> {
        let get = |n: &str| attrs.iter().find(|a| a.name == n);
        let line = attrs.first().map_or(0, |a| a.line);
        let f = |n: &str, dflt: f64| -> Result<f64, FbError> {
            match get(n) {
                Some(a) => Ok(self.int_const(&a.value, n, a.line)? as f64),
                None => Ok(dflt),
            }
        };
        if cvar {
            let ty = match get("type") {
                Some(a) => self.string(&a.value, "type", a.line)?,
                None => return Err(FbError::at(line, format!("${var}: cvar without a type"))),
            };
            let params = match get("parameters") {
                Some(a) => self.string(&a.value, "parameters", a.line)?,
                None => String::new(),
            };
            let mut kv = BTreeMap::new();
            for p in params.split(';').filter(|p| !p.is_empty()) {
                let (k, v) = p.split_once(':').unwrap_or((p, ""));
                let v: f64 = v.parse().map_err(|_| {
                    FbError::at(
                        line,
                        format!("${var}: cvar parameter {k}:{v} is not a number"),
                    )
                })?;
                kv.insert(k.to_string(), v);
            }
            let known: &[&str] = match ty.as_str() {
                "cvar-gamma" => &["mean", "gamma"],
                "cvar-uniform" => &["lower", "upper"],
                _ => {
                    return Err(FbError::at(line, format!(
                        "${var}: cvar type {ty}: refused: only cvar-gamma and cvar-uniform are implemented"
                    )))
                }
            };
            if let Some(k) = kv.keys().find(|k| !known.contains(&k.as_str())) {
                return Err(FbError::at(
                    line,
                    format!("${var}: {ty}: unsupported parameter {k}"),
                ));
            }
            let law = if ty == "cvar-gamma" {
                let gamma = kv.get("gamma").copied().unwrap_or(1.5);
                if gamma <= 0.0 {
                    return Err(FbError::at(
                        line,
                        format!("${var}: cvar-gamma: gamma must be greater than 0"),
                    ));
                }
                Law::CvarGamma {
                    mean: kv.get("mean").copied().unwrap_or(4096.0),
                    gamma,
                }
            } else {
                let (lower, upper) = (
                    kv.get("lower").copied().unwrap_or(0.0),
                    kv.get("upper").copied().unwrap_or(1.0),
                );
                if lower > upper {
                    return Err(FbError::at(
                        line,
                        format!("${var}: cvar-uniform: lower > upper"),
                    ));
                }
                Law::CvarUniform { lower, upper }
            };
            Ok(RandVar {
                law,
                min: f("min", f64::MIN_POSITIVE)?,
                max: f("max", f64::MAX)?,
                round: f("round", 0.0)?,
            })
        } else {
            if let Some(a) = get("randsrc") {
                let s = self.string(&a.value, "randsrc", a.line)?;
                if s != "urandom" && s != "rand48" {
                    return Err(FbError::at(
                        a.line,
                        format!("randsrc={s}: expected urandom or rand48"),
                    ));
                }
            }
            let ty = match get("type") {
                Some(a) => self.string(&a.value, "type", a.line)?,
                None => "gamma".into(),
            };
            let min = f("min", 0.0)?;
            let gamma = f("gamma", 1500.0)? / 1000.0;
            let law = match ty.as_str() {
                "uniform" => Law::Uniform { min, mean: f("mean", 0.0)? },
                "gamma" if gamma > 0.0 => Law::Gamma { min, mean: f("mean", gamma)?, gamma },
                "gamma" => return Err(FbError::at(line, format!("${var}: randvar gamma must be greater than 0"))),
                "tabular" => return Err(FbError::at(line, format!("${var}: randvar type=tabular: refused: tabular random variables are not implemented"))),
                _ => return Err(FbError::at(line, format!("${var}: randvar type={ty}: expected uniform, gamma or tabular"))),
            };
            Ok(RandVar {
                law,
                min: f64::MIN,
                max: f64::MAX,
                round: f("round", 0.0)?,
            })
        }
    }

    pub(super) fn int_const(&self, v: &Value, what: &str, line: usize) -> Result<u64, FbError> {
        match self.num(v, what, line)? {
            Num::Const(c) => Ok(c),
            Num::Rand(_) => Err(FbError::at(
                line,
                format!("{what}: must not be a random variable"),
            )),
        }
    }
}

pub(super) fn attr<'a>(attrs: &'a [Attr], name: &str) -> Option<&'a Attr> {
    attrs.iter().find(|a| a.name == name)
}

/// Parse an override's value (`16k`, `true`, `/mnt/x`, `"text"`) as the lexer would.
fn override_value(v: &str) -> Var {
    match lexer::lex(v).ok().as_deref() {
        Some([t]) => match &t.tok {
            Tok::Int(i) => Var::Int(*i),
            Tok::Bool(b) => Var::Bool(*b),
            Tok::Word(w) => Var::Str(w.clone()),
            Tok::Quoted(p) if p.iter().all(|q| matches!(q, QPart::Text(_))) => Var::Str(
                p.iter()
                    .map(|q| {
                        if let QPart::Text(t) = q {
                            t.as_str()
                        } else {
                            ""
                        }
                    })
                    .collect(),
            ),
            _ => Var::Str(v.to_string()),
        },
        _ => Var::Str(v.to_string()),
    }
}

/// Run the script's commands up to its first `run`/`psrun` (or to its end) and resolve the
/// workload. `overrides` are `(name, value)` pairs (`$` optional).
pub fn build(
    cmds: &[Command],
    overrides: &[(String, String)],
    seed: u64,
) -> Result<Workload, FbError> {
    let mut it = Interp {
        vars: BTreeMap::new(),
        locked: BTreeMap::new(),
        rng: Rng::new(seed).stream("filebench-script"),
    };
    for (k, v) in overrides {
        let k = norm_var(k);
        it.vars.insert(k.clone(), override_value(v));
        it.locked.insert(k, ());
    }
    let mut w = Workload {
        filesets: Vec::new(),
        processes: Vec::new(),
        mode: Mode::Timeout,
        eventgen_rate: 0,
        runtime: 0,
        psrun_period: None,
        log: Vec::new(),
        notices: Vec::new(),
        run_line: None,
    };
    let mut fileset_defs: Vec<(Vec<Attr>, bool, usize)> = Vec::new();
    let mut process_defs: Vec<(Vec<Attr>, Vec<super::parser::ThreadDef>, usize)> = Vec::new();
    for c in cmds {
        match c {
            Command::Set { var, value, line } => {
                if it.locked.contains_key(var) {
                    continue;
                }
                let v = match value {
                    SetValue::Plain(Value::Int(i)) => Var::Int(*i),
                    SetValue::Plain(Value::Bool(b)) => Var::Bool(*b),
                    SetValue::Plain(Value::Str(s)) => Var::Str(s.clone()),
                    SetValue::Plain(Value::Var(_)) => unreachable_var(*line)?,
                    SetValue::Cvar(a) => Var::Rand(Rc::new(it.randvar(a, true, var)?)),
                    SetValue::Randvar(a) => Var::Rand(Rc::new(it.randvar(a, false, var)?)),
                };
                it.vars.insert(var.clone(), v);
            }
            Command::SetMode(m) => w.mode = *m,
            Command::NoUseStats => w.log.push("Disabling CPU usage statistics".into()),
            Command::DefineFileset {
                attrs,
                single_file,
                line,
            } => fileset_defs.push((attrs.clone(), *single_file, *line)),
            Command::DefineProcess {
                attrs,
                threads,
                line,
            } => process_defs.push((attrs.clone(), threads.clone(), *line)),
            Command::CreateFiles { .. } => {}
            Command::Echo { parts, line } => w.log.push(it.text(parts, *line)?),
            Command::Usage { parts, line } => w.log.push(it.text(parts, *line)?),
            Command::Eventgen { attrs, line } => {
                w.eventgen_rate = match attr(attrs, "rate") {
                    Some(a) => it.int_const(&a.value, "eventgen rate", a.line)?,
                    None => return Err(FbError::at(*line, "eventgen: rate= is missing")),
                };
            }
            Command::Debug { level, .. } => w.notices.push(format!(
                "debug {level}: accepted and ignored (filebench's debug log levels are not kept)"
            )),
            Command::Sleep { secs, line } => {
                let s = it.int_const(secs, "sleep", *line)?;
                w.log.push("Sleeping...".into());
                w.log.push(format!("Slept for {s} seconds..."));
            }
            Command::Version => w.log.push("Filebench Version: 1.5-alpha3".into()),
            Command::Quit => break,
            Command::Run { secs, line } => {
                w.runtime = match secs {
                    Some(v) => it.int_const(v, "run", *line)?,
                    None => 0,
                };
                w.run_line = Some(*line);
                break;
            }
            Command::Psrun { period, secs, line } => {
                w.runtime = (*secs).max(0) as u64;
                w.psrun_period = Some(if *period == 0 { 10 } else { *period });
                w.run_line = Some(*line);
                break;
            }
        }
    }
    for (attrs, single_file, line) in &fileset_defs {
        let fs = super::resolve::fileset(&mut it, attrs, *single_file, *line)?;
        if w.filesets.iter().any(|f| f.name == fs.name) {
            return Err(FbError::at(
                *line,
                format!("fileset {} is defined twice", fs.name),
            ));
        }
        w.filesets.push(fs);
    }
    let mut threads_total = 0u64;
    for (attrs, threads, line) in &process_defs {
        let name = match attr(attrs, "name") {
            Some(a) => it.string(&a.value, "name", a.line)?,
            None => return Err(FbError::at(*line, "define process: no name")),
        };
        let instances = match attr(attrs, "instances") {
            Some(a) => it.int(&a.value, "instances", a.line)?,
            None => 1,
        };
        if let Some(a) = attr(attrs, "nice") {
            w.notices.push(format!("line {}: process {name}: nice accepted and ignored (one simulated host, no scheduler priorities)", a.line));
        }
        let mut tdefs = Vec::new();
        for t in threads {
            let tname = match attr(&t.attrs, "name") {
                Some(a) => it.string(&a.value, "name", a.line)?,
                None => {
                    return Err(FbError::at(
                        t.line,
                        format!("thread in process {name} specifies no name"),
                    ))
                }
            };
            let tinst = match attr(&t.attrs, "instances") {
                Some(a) => it.int(&a.value, "instances", a.line)?,
                None => 1,
            };
            let memsize = match attr(&t.attrs, "memsize") {
                Some(a) => it.int(&a.value, "memsize", a.line)?,
                None => 0,
            };
            if memsize > 1 << 30 {
                return Err(FbError::at(
                    t.line,
                    format!("thread {tname}: memsize {memsize} is over 1g"),
                ));
            }
            for n in ["useism", "ioprio"] {
                if let Some(a) = attr(&t.attrs, n) {
                    w.notices.push(format!("line {}: thread {tname}: {n} accepted and ignored (changes no figure here)", a.line));
                }
            }
            threads_total = threads_total.saturating_add(instances.saturating_mul(tinst));
            if threads_total > MAX_THREADS {
                return Err(FbError::at(
                    t.line,
                    format!("more than {MAX_THREADS} threads in all (instances x threads)"),
                ));
            }
            let mut flowops = Vec::new();
            for f in &t.flowops {
                flowops.push(super::resolve::flowop(
                    &mut it,
                    f,
                    &w.filesets,
                    &mut w.notices,
                )?);
            }
            tdefs.push(ThreadDef {
                name: tname,
                instances: tinst,
                memsize,
                flowops,
            });
        }
        w.processes.push(ProcessDef {
            name,
            instances,
            threads: tdefs,
        });
    }
    super::resolve::check_targets(&w)?;
    Ok(w)
}

fn unreachable_var(line: usize) -> Result<Var, FbError> {
    Err(FbError::at(
        line,
        "assigning a variable to a variable is not in filebench's grammar",
    ))
}
