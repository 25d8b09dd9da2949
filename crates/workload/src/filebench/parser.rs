//! The commands of filebench's language (`parser_gram.y`) from tokens: `set`, `define
//! file|fileset|process`, `create files`, `run`, `psrun`, `echo`, `usage`, `eventgen`,
//! `debug`, `sleep`, `version`, `quit`, with the attribute names the grammar allows in each
//! place (`filesetname` is `filename`, `filesize` is `size`, as the lexer makes them). What
//! the grammar has and znslab does not run (`system`, multi-client sync, composite flowops,
//! latency histograms, `list`) is refused here with the line and the construct.

use super::lexer::{QPart, Tok, Token};
use super::FbError;

/// An attribute's value as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
    Var(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    /// The canonical name (`filesetname` → `filename`, `filesize` → `size`).
    pub name: String,
    pub value: Value,
    pub line: usize,
}

/// What `set $x = ...` assigns.
#[derive(Clone, Debug, PartialEq)]
pub enum SetValue {
    Plain(Value),
    Cvar(Vec<Attr>),
    Randvar(Vec<Attr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Timeout,
    AllDone,
    FirstDone,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowopDef {
    pub kind: String,
    pub attrs: Vec<Attr>,
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ThreadDef {
    pub attrs: Vec<Attr>,
    pub flowops: Vec<FlowopDef>,
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Set {
        var: String,
        value: SetValue,
        line: usize,
    },
    SetMode(Mode),
    NoUseStats,
    DefineFileset {
        attrs: Vec<Attr>,
        single_file: bool,
        line: usize,
    },
    DefineProcess {
        attrs: Vec<Attr>,
        threads: Vec<ThreadDef>,
        line: usize,
    },
    CreateFiles {
        line: usize,
    },
    Run {
        secs: Option<Value>,
        line: usize,
    },
    Psrun {
        period: i64,
        secs: i64,
        line: usize,
    },
    Echo {
        parts: Vec<QPart>,
        line: usize,
    },
    Usage {
        parts: Vec<QPart>,
        line: usize,
    },
    Eventgen {
        attrs: Vec<Attr>,
        line: usize,
    },
    Debug {
        level: i64,
        line: usize,
    },
    Sleep {
        secs: Value,
        line: usize,
    },
    Version,
    Quit,
}

pub const PROCESS_ATTRS: &[&str] = &["name", "instances", "nice"];
pub const THREAD_ATTRS: &[&str] = &["name", "memsize", "useism", "instances", "ioprio"];
pub const FILE_ATTRS: &[&str] = &[
    "name",
    "path",
    "size",
    "prealloc",
    "paralloc",
    "reuse",
    "trusttree",
    "readonly",
    "writeonly",
];
pub const FILESET_ATTRS: &[&str] = &[
    "name",
    "path",
    "size",
    "prealloc",
    "paralloc",
    "reuse",
    "trusttree",
    "readonly",
    "writeonly",
    "entries",
    "dirwidth",
    "dirdepthrv",
    "dirgamma",
    "leafdirs",
];
pub const FLOWOP_ATTRS: &[&str] = &[
    "workingset",
    "filename",
    "name",
    "random",
    "fd",
    "srcfd",
    "opennext",
    "dsync",
    "directio",
    "indexed",
    "target",
    "iters",
    "value",
    "blocking",
    "highwater",
    "iosize",
    "noreadahead",
];
pub const EVENTGEN_ATTRS: &[&str] = &["rate"];
pub const CVAR_ATTRS: &[&str] = &["type", "parameters", "min", "max", "round"];
pub const RANDVAR_ATTRS: &[&str] = &[
    "name", "seed", "gamma", "mean", "min", "round", "type", "randsrc",
];

/// The keyword `fileset[s]*`: `fileset`, `filesets`, ...
fn is_fileset(w: &str) -> bool {
    w.strip_prefix("fileset")
        .is_some_and(|s| s.bytes().all(|c| c == b's'))
}

struct P<'a> {
    t: &'a [Token],
    i: usize,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Word(w) => w.clone(),
        Tok::Int(v) => v.to_string(),
        Tok::Bool(b) => b.to_string(),
        Tok::Var(v) => format!("${v}"),
        Tok::Quoted(_) => "a quoted string".into(),
        Tok::LBrace => "{".into(),
        Tok::RBrace => "}".into(),
        Tok::LParen => "(".into(),
        Tok::RParen => ")".into(),
        Tok::Assign => "=".into(),
        Tok::Comma => ",".into(),
    }
}

impl P<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i).map(|t| &t.tok)
    }
    fn line(&self) -> usize {
        self.t
            .get(self.i)
            .or_else(|| self.t.last())
            .map_or(1, |t| t.line)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.t.get(self.i).map(|t| t.tok.clone());
        self.i += 1;
        t
    }
    fn err(&self, what: impl Into<String>) -> FbError {
        FbError::at(self.line(), what)
    }
    fn expect(&mut self, want: Tok, ctx: &str) -> Result<(), FbError> {
        match self.peek() {
            Some(t) if *t == want => {
                self.i += 1;
                Ok(())
            }
            Some(t) => Err(self.err(format!(
                "{ctx}: expected {} but found {}",
                describe(&want),
                describe(t)
            ))),
            None => Err(self.err(format!(
                "{ctx}: expected {} at the end of the file",
                describe(&want)
            ))),
        }
    }
    fn word(&mut self, ctx: &str) -> Result<String, FbError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(w),
            Some(t) => {
                self.i -= 1;
                Err(self.err(format!("{ctx}: expected a name but found {}", describe(&t))))
            }
            None => Err(self.err(format!("{ctx}: unexpected end of the file"))),
        }
    }

    fn value(&mut self, ctx: &str) -> Result<Value, FbError> {
        match self.next() {
            Some(Tok::Word(w)) => Ok(Value::Str(w)),
            Some(Tok::Int(v)) => Ok(Value::Int(v)),
            Some(Tok::Bool(b)) => Ok(Value::Bool(b)),
            Some(Tok::Var(v)) => Ok(Value::Var(v)),
            Some(Tok::Quoted(parts)) => {
                let mut s = String::new();
                for p in parts {
                    match p {
                        QPart::Text(t) => s.push_str(&t),
                        QPart::Var(v) => {
                            self.i -= 1;
                            return Err(self.err(format!(
                                "{ctx}: a variable (${v}) inside a quoted value is not in filebench's grammar"
                            )));
                        }
                    }
                }
                Ok(Value::Str(s))
            }
            Some(t) => {
                self.i -= 1;
                Err(self.err(format!(
                    "{ctx}: expected a value but found {}",
                    describe(&t)
                )))
            }
            None => Err(self.err(format!("{ctx}: expected a value at the end of the file"))),
        }
    }

    /// `name[=value] (, name[=value])*` with names from `allowed`.
    fn attrs(&mut self, ctx: &str, allowed: &[&str]) -> Result<Vec<Attr>, FbError> {
        let mut out = Vec::new();
        loop {
            let line = self.line();
            if let Some(Tok::Var(v)) = self.peek() {
                return Err(self.err(format!(
                    "{ctx}: local variable ${v}: flowop-local variables belong to composite flowops, which are refused"
                )));
            }
            let raw = self.word(ctx)?;
            let name = match raw.as_str() {
                "filesetname" => "filename".to_string(),
                "filesize" => "size".to_string(),
                _ => raw.clone(),
            };
            if name == "randtable" && ctx.starts_with("randvar") {
                return Err(FbError::at(line, format!(
                    "{ctx}: randtable (type=tabular): refused: tabular random variables are not implemented"
                )));
            }
            if !allowed.contains(&name.as_str()) {
                return Err(FbError::at(
                    line,
                    format!(
                        "{ctx}: unknown attribute {raw} (allowed: {})",
                        allowed.join(", ")
                    ),
                ));
            }
            let value = if self.peek() == Some(&Tok::Assign) {
                self.i += 1;
                self.value(&format!("{ctx} {raw}"))?
            } else {
                Value::Bool(true)
            };
            out.push(Attr { name, value, line });
            if self.peek() == Some(&Tok::Comma) {
                self.i += 1;
            } else {
                return Ok(out);
            }
        }
    }

    fn quoted(&mut self, ctx: &str) -> Result<Vec<QPart>, FbError> {
        match self.next() {
            Some(Tok::Quoted(p)) => Ok(p),
            _ => {
                self.i -= 1;
                Err(self.err(format!("{ctx}: expected a quoted string")))
            }
        }
    }

    fn set(&mut self, line: usize) -> Result<Command, FbError> {
        match self.next() {
            Some(Tok::Word(w)) if w == "mode" => {
                let a = self.word("set mode")?;
                if a == "nousestats" {
                    return Ok(Command::NoUseStats);
                }
                if a != "quit" {
                    return Err(FbError::at(
                        line,
                        format!("set mode {a}: expected quit or nousestats"),
                    ));
                }
                match self.word("set mode quit")?.as_str() {
                    "timeout" => Ok(Command::SetMode(Mode::Timeout)),
                    "alldone" => Ok(Command::SetMode(Mode::AllDone)),
                    "firstdone" => Ok(Command::SetMode(Mode::FirstDone)),
                    m => Err(FbError::at(
                        line,
                        format!("set mode quit {m}: expected timeout, alldone or firstdone"),
                    )),
                }
            }
            Some(Tok::Var(var)) => {
                self.expect(Tok::Assign, &format!("set ${var}"))?;
                let ctx = format!("set ${var}");
                let value = match self.peek() {
                    Some(Tok::Word(w))
                        if (w == "cvar" || w == "randvar")
                            && self.t.get(self.i + 1).map(|t| &t.tok) == Some(&Tok::LParen) =>
                    {
                        let cvar = w == "cvar";
                        self.i += 2;
                        let attrs = if cvar {
                            self.attrs(&format!("{ctx} cvar"), CVAR_ATTRS)?
                        } else {
                            self.attrs(&format!("randvar of {ctx}"), RANDVAR_ATTRS)?
                        };
                        self.expect(Tok::RParen, &ctx)?;
                        if cvar {
                            SetValue::Cvar(attrs)
                        } else {
                            SetValue::Randvar(attrs)
                        }
                    }
                    Some(Tok::Var(_)) => {
                        return Err(self.err(format!(
                        "{ctx}: assigning a variable to a variable is not in filebench's grammar"
                    )))
                    }
                    _ => SetValue::Plain(self.value(&ctx)?),
                };
                Ok(Command::Set { var, value, line })
            }
            _ => Err(FbError::at(line, "set: expected $variable = value or mode")),
        }
    }

    fn process(&mut self, line: usize) -> Result<Command, FbError> {
        let attrs = self.attrs("define process", PROCESS_ATTRS)?;
        let threads = self.block("define process", "thread", line, Self::thread)?;
        Ok(Command::DefineProcess {
            attrs,
            threads,
            line,
        })
    }

    /// `thread attrs { flowops }`, from its keyword.
    fn thread(&mut self) -> Result<ThreadDef, FbError> {
        let line = self.line();
        self.i += 1;
        let attrs = self.attrs("thread", THREAD_ATTRS)?;
        let flowops = self.block("thread", "flowop", line, Self::flowop)?;
        Ok(ThreadDef {
            attrs,
            flowops,
            line,
        })
    }

    /// `flowop kind [attrs]`, from its keyword.
    fn flowop(&mut self) -> Result<FlowopDef, FbError> {
        let line = self.line();
        self.i += 1;
        let kind = self.word("flowop")?;
        let attrs = if matches!(self.peek(), Some(Tok::Word(w)) if w != "flowop") {
            self.attrs(&format!("flowop {kind}"), FLOWOP_ATTRS)?
        } else {
            Vec::new()
        };
        Ok(FlowopDef { kind, attrs, line })
    }

    /// `{ (keyword ...)+ }` of `ctx` (defined at `line`): a process's threads, a thread's
    /// flowops, each parsed by `item` from its keyword.
    fn block<T>(
        &mut self,
        ctx: &str,
        keyword: &str,
        line: usize,
        item: impl Fn(&mut Self) -> Result<T, FbError>,
    ) -> Result<Vec<T>, FbError> {
        self.expect(Tok::LBrace, ctx)?;
        let mut items = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::RBrace) => {
                    self.i += 1;
                    break;
                }
                Some(Tok::Word(w)) if w == keyword => items.push(item(self)?),
                Some(t) => {
                    return Err(self.err(format!(
                        "{ctx}: expected {keyword} or }} but found {}",
                        describe(t)
                    )))
                }
                None => return Err(self.err(format!("{ctx}: missing }}"))),
            }
        }
        if items.is_empty() {
            return Err(FbError::at(
                line,
                format!("{ctx}: no {keyword}s (the grammar needs one or more)"),
            ));
        }
        Ok(items)
    }

    fn command(&mut self) -> Result<Option<Command>, FbError> {
        let line = self.line();
        let Some(tok) = self.next() else {
            return Ok(None);
        };
        let Tok::Word(w) = tok else {
            return Err(FbError::at(
                line,
                format!("expected a command but found {}", describe(&tok)),
            ));
        };
        let refuse =
            |what: &str, why: &str| Err(FbError::at(line, format!("{what}: refused: {why}")));
        Ok(Some(match w.as_str() {
            "set" => self.set(line)?,
            "define" => {
                let what = self.word("define")?;
                match what.as_str() {
                    "file" => Command::DefineFileset {
                        attrs: self.attrs("define file", FILE_ATTRS)?,
                        single_file: true,
                        line,
                    },
                    _ if is_fileset(&what) => Command::DefineFileset {
                        attrs: self.attrs("define fileset", FILESET_ATTRS)?,
                        single_file: false,
                        line,
                    },
                    _ if what.starts_with("process") => self.process(line)?,
                    "flowop" => {
                        return refuse("define flowop", "composite flowops are not implemented")
                    }
                    "randvar" => {
                        return refuse(
                            "define randvar",
                            "not in filebench 1.5's grammar; write set $name = randvar(...)",
                        )
                    }
                    _ => {
                        return Err(FbError::at(
                            line,
                            format!("define {what}: expected file, fileset or process"),
                        ))
                    }
                }
            }
            "create" => {
                let what = self.word("create")?;
                if what != "files" && !is_fileset(&what) {
                    return Err(FbError::at(
                        line,
                        format!("create {what}: expected create files"),
                    ));
                }
                Command::CreateFiles { line }
            }
            "run" => {
                let secs = match self.peek() {
                    Some(Tok::Int(v)) if *v >= 0 => Some(Value::Int(*v)),
                    Some(Tok::Var(v)) => Some(Value::Var(v.clone())),
                    _ => None,
                };
                if secs.is_some() {
                    self.i += 1;
                }
                Command::Run { secs, line }
            }
            "psrun" => {
                let mut nums = Vec::new();
                while let Some(Tok::Int(v)) = self.peek() {
                    if nums.len() == 2 || (nums.len() == 1 && *v < 0) {
                        break;
                    }
                    nums.push(*v);
                    self.i += 1;
                }
                Command::Psrun {
                    period: nums.first().copied().unwrap_or(0),
                    secs: nums.get(1).copied().unwrap_or(0),
                    line,
                }
            }
            "echo" => Command::Echo {
                parts: self.quoted("echo")?,
                line,
            },
            "usage" => Command::Usage {
                parts: self.quoted("usage")?,
                line,
            },
            "eventgen" => Command::Eventgen {
                attrs: if matches!(self.peek(), Some(Tok::Word(w)) if w == "rate") {
                    self.attrs("eventgen", EVENTGEN_ATTRS)?
                } else {
                    Vec::new()
                },
                line,
            },
            "debug" => match self.next() {
                Some(Tok::Int(level)) if level >= 0 => Command::Debug { level, line },
                _ => return Err(FbError::at(line, "debug: expected a level (a number)")),
            },
            "sleep" => match self.next() {
                Some(Tok::Int(v)) if v >= 0 => Command::Sleep {
                    secs: Value::Int(v),
                    line,
                },
                Some(Tok::Var(v)) => Command::Sleep {
                    secs: Value::Var(v),
                    line,
                },
                _ => return Err(FbError::at(line, "sleep: expected seconds")),
            },
            "version" => Command::Version,
            "quit" => Command::Quit,
            "system" => return refuse("system", "znslab runs no shell commands"),
            "enable" => {
                let what = self.word("enable")?;
                if what == "lathist" {
                    return refuse("enable lathist", "latency histograms are not printed");
                }
                return refuse(
                    &format!("enable {what}"),
                    "multi-client synchronisation needs a network of clients",
                );
            }
            "domultisync" => {
                return refuse(
                    "domultisync",
                    "multi-client synchronisation needs a network of clients",
                )
            }
            "list" => return refuse("list", "listing filesets or flowops is not implemented"),
            _ => return Err(FbError::at(line, format!("unknown command {w}"))),
        }))
    }
}

/// Parse a whole workload file.
pub fn parse(tokens: &[Token]) -> Result<Vec<Command>, FbError> {
    let mut p = P { t: tokens, i: 0 };
    let mut out = Vec::new();
    while let Some(c) = p.command()? {
        out.push(c);
    }
    Ok(out)
}
