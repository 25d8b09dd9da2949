//! filebench (github.com/filebench/filebench, 1.5-alpha3): its workload language and its
//! engine, on the virtual clock, over any [`host::fs::FileSystem`].
//!
//! Users' own `.f` files run unchanged: [`lexer`] and [`parser`] read the language as
//! `parser_lex.l` and `parser_gram.y` do; [`model`] runs the script's commands and ([`resolve`])
//! resolves the workload (variables, `cvar`/`randvar` random variables from [`random`]), checking
//! everything that could fail before anything runs; [`fileset`] lays out filesets and picks
//! files as `fileset.c`; [`engine`] pre-allocates and runs each thread as a task on the
//! simulator, the flowops of `flowop_library.c` being in [`ops`]; [`stats`] prints the
//! figures in `stats.c`'s formats. docs/compat/filebench.md lists what is supported.

pub mod engine;
pub mod fileset;
pub mod lexer;
pub mod model;
mod ops;
pub mod parser;
pub mod random;
mod resolve;
pub mod stats;

pub use engine::{Config, Report};
pub use model::{Kind, Workload, REFUSED_FLOWOPS};

use serde_json::json;

/// A one-line error, naming the script's line when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FbError {
    pub line: Option<usize>,
    pub msg: String,
}

impl FbError {
    pub fn at(line: usize, msg: impl Into<String>) -> FbError {
        FbError {
            line: Some(line),
            msg: msg.into(),
        }
    }
    pub fn new(msg: impl Into<String>) -> FbError {
        FbError {
            line: None,
            msg: msg.into(),
        }
    }
}

impl std::fmt::Display for FbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.msg),
            None => f.write_str(&self.msg),
        }
    }
}

impl std::error::Error for FbError {}

/// Parse a script into its commands (the whole file is read first: an error anywhere is
/// reported before anything runs).
pub fn parse(src: &str) -> Result<Vec<parser::Command>, FbError> {
    parser::parse(&lexer::lex(src)?)
}

/// Parse and resolve a script with `--set` overrides (`name=value`, `$` optional).
pub fn prepare(src: &str, overrides: &[(String, String)], seed: u64) -> Result<Workload, FbError> {
    let tokens = lexer::lex(src)?;
    // A --set naming no variable of the script is a typo that would change nothing.
    for (k, _) in overrides {
        let name = k
            .trim_start_matches('$')
            .trim_matches(|c| matches!(c, '(' | ')' | '{' | '}'));
        let used = tokens.iter().any(|t| match &t.tok {
            lexer::Tok::Var(v) => v == name,
            lexer::Tok::Quoted(parts) => parts
                .iter()
                .any(|p| matches!(p, lexer::QPart::Var(v) if v == name)),
            _ => false,
        });
        if !used {
            return Err(FbError::new(format!(
                "--set {k}: the script has no variable ${name}"
            )));
        }
    }
    model::build(&parser::parse(&tokens)?, overrides, seed)
}

/// Run a prepared workload on `fs` (the simulator must be running this future).
pub async fn run<F: host::fs::FileSystem>(
    fs: F,
    w: Workload,
    cfg: Config,
    seed: u64,
) -> Result<Report, FbError> {
    engine::run(fs, w, cfg, seed).await
}

/// filebench's own text: (stdout, stderr).
pub fn render_text(r: &Report) -> (String, String) {
    let mut out = String::from("Filebench Version 1.5-alpha3\n");
    let mut err = String::new();
    for l in &r.log {
        let s = l.render();
        if l.stderr {
            err.push_str(&s);
            err.push('\n');
        } else {
            out.push_str(&s);
            out.push('\n');
        }
    }
    (out, err)
}

/// The same figures as JSON.
pub fn render_json(r: &Report, w: &Workload) -> serde_json::Value {
    let last = r.snapshots.last();
    json!({
        "filebench_version": "1.5-alpha3",
        "runtime_s": w.runtime,
        "preallocated_files": r.preallocated_files,
        "preallocated_bytes": r.preallocated_bytes,
        "error": r.failed,
        "result": last.map(|s| s.json()),
        "periods": r.snapshots.iter().take(r.snapshots.len().saturating_sub(1)).map(|s| s.json()).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests;
