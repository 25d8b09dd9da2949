//! fio's own example job files (testdata/fio/examples, from fio's examples/) run unchanged but
//! for `--filename=IMAGE` (and a short `--runtime`): each one listed `runs` in
//! testdata/fio/examples.tsv must run without a job error on a fresh image of its device, each
//! one listed `refused: TEXT` must be refused before any I/O with TEXT on one line. Also the
//! compatibility table docs/compat/fio.md checked against the option parser.

mod common;
use common::{command, text, znslab, TempDir};

use workload::fio::{status, Status, DIFFERS, FIO_ALIASES, FIO_OPTIONS};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

struct Case {
    file: String,
    device: String,
    expect: Result<(), String>,
}

fn cases() -> Vec<Case> {
    let tsv = std::fs::read_to_string(format!("{ROOT}/testdata/fio/examples.tsv")).expect("tsv");
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.splitn(3, '\t').collect();
            assert_eq!(f.len(), 3, "bad line {l}");
            let expect = match f[2] {
                "runs" => Ok(()),
                r => Err(r
                    .strip_prefix("refused: ")
                    .unwrap_or_else(|| panic!("bad expectation {r}"))
                    .to_string()),
            };
            Case {
                file: f[0].into(),
                device: f[1].into(),
                expect,
            }
        })
        .collect()
}

fn run_example(dir: &TempDir, c: &Case) -> std::process::Output {
    let img = dir.path(&format!("{}.img", c.file));
    let toml = format!("{ROOT}/testdata/fio/{}.toml", c.device);
    let made = znslab(&["nvme", "create", "--device", &toml, &img, "--force"]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let out = command()
        // xnvme's examples take their rw, bs and iodepth from the environment.
        .env("FIO_RW", "randwrite")
        .env("FIO_BS", "4k")
        .env("FIO_IODEPTH", "4")
        .args([
            "fio",
            &format!("{ROOT}/testdata/fio/examples/{}", c.file),
            &format!("--filename={img}"),
            "--runtime=100ms",
        ])
        .output()
        .expect("runs");
    let _ = std::fs::remove_file(&img);
    out
}

#[test]
fn every_example_of_fio_is_listed() {
    let listed: Vec<String> = cases().into_iter().map(|c| c.file).collect();
    let mut files: Vec<String> = std::fs::read_dir(format!("{ROOT}/testdata/fio/examples"))
        .expect("examples")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".fio"))
        .collect();
    files.sort();
    assert_eq!(listed, files);
}

#[test]
fn the_examples_that_run_run() {
    let dir = TempDir::new("fio-examples-run");
    for c in cases().iter().filter(|c| c.expect.is_ok()) {
        let o = run_example(&dir, c);
        assert!(
            o.status.success(),
            "{}: {}{}",
            c.file,
            text(&o.stdout),
            text(&o.stderr)
        );
        let out = text(&o.stdout);
        assert!(out.contains("err= 0"), "{}: {out}", c.file);
        assert!(!out.contains("err= 1"), "{}: {out}", c.file);
    }
}

#[test]
fn the_examples_that_cannot_run_are_refused_with_their_reason() {
    let dir = TempDir::new("fio-examples-refused");
    for c in cases() {
        let Err(reason) = &c.expect else { continue };
        let o = run_example(&dir, &c);
        assert_eq!(o.status.code(), Some(2), "{}: {}", c.file, text(&o.stdout));
        let e = text(&o.stderr);
        let errors: Vec<&str> = e
            .lines()
            .filter(|l| !l.contains("accepted and ignored"))
            .collect();
        assert_eq!(errors.len(), 1, "{}: one line of reason: {e}", c.file);
        assert!(errors[0].contains(reason.as_str()), "{}: {e}", c.file);
        assert!(o.stdout.is_empty(), "{}: refused before any I/O", c.file);
    }
}

/// The status column of option `name` in docs/compat/fio.md.
fn status_text(name: &str) -> String {
    match status(name).expect("fio option") {
        Status::Supported => match DIFFERS.iter().find(|(n, _)| *n == name) {
            Some((_, how)) => format!("supported, differs: {how}"),
            None => "supported".into(),
        },
        Status::Notice(why) => format!("accepted, ignored with a notice: {why}"),
        Status::Refused(why) => format!("refused: {why}"),
    }
}

/// docs/compat/fio.md has a row for every option of fio's table (options.c) and each row's
/// status is the parser's. `ZNSLAB_BLESS=1` rewrites the table from the parser.
#[test]
fn the_compatibility_table_matches_the_parser() {
    let path = format!("{ROOT}/docs/compat/fio.md");
    let doc = std::fs::read_to_string(&path).expect("docs/compat/fio.md");
    let (head, _) = doc
        .split_once("| option | status |")
        .expect("the table's header");
    let mut table = String::from("| option | status |\n| --- | --- |\n");
    for name in FIO_OPTIONS.iter().chain(FIO_ALIASES) {
        table.push_str(&format!("| `{name}` | {} |\n", status_text(name)));
    }
    if std::env::var_os("ZNSLAB_BLESS").is_some() {
        std::fs::write(&path, format!("{head}{table}")).expect("write the table");
        return;
    }
    assert_eq!(
        doc,
        format!("{head}{table}"),
        "docs/compat/fio.md differs from the parser (ZNSLAB_BLESS=1 rewrites the table)"
    );
    // Every refused option is refused on the command line, naming its reason.
    for name in FIO_OPTIONS.iter().chain(FIO_ALIASES) {
        if let Some(Status::Refused(why)) = status(name) {
            let o = znslab(&[
                "fio",
                "--device=test-min",
                &format!("--{name}=1"),
                "--name=x",
            ]);
            assert_eq!(o.status.code(), Some(2), "{name} is refused");
            assert!(text(&o.stderr).contains(why), "{name}: {}", text(&o.stderr));
        }
    }
}
