//! What the command-line tests share: running the binary as users do (with the small corpus
//! shipped for tests, so no run builds one from the network), its text, and temporary folders.
#![allow(dead_code)] // each test file uses its own part

use std::path::PathBuf;
use std::process::{Command, Output};

/// The small corpus shipped for tests.
pub const TEST_CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/corpus");

/// `znslab` as a command, ready for arguments.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_znslab"));
    c.env("ZNSLAB_CORPUS_DIR", TEST_CORPUS);
    c
}

pub fn znslab(args: &[&str]) -> Output {
    command().args(args).output().expect("runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A folder removed with everything in it when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("znslab-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }

    pub fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `znslab dbbench ARGS`, which must succeed: its stdout and stderr.
pub fn dbbench_ok(args: &[&str]) -> (String, String) {
    let mut a = vec!["dbbench"];
    a.extend_from_slice(args);
    let o = znslab(&a);
    assert!(
        o.status.success(),
        "{args:?}: {}\n{}",
        text(&o.stderr),
        text(&o.stdout)
    );
    (text(&o.stdout), text(&o.stderr))
}

/// `znslab dbbench ARGS`, which must be refused (status 2) naming `--FLAG`: its stderr.
pub fn dbbench_refused(args: &[&str], flag: &str) -> String {
    let mut a = vec!["dbbench"];
    a.extend_from_slice(args);
    let o = znslab(&a);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(&format!("--{flag}")), "{args:?}: {err}");
    assert_eq!(err.trim().lines().last().map(|_| ()), Some(()), "{err}");
    err
}
