//! docs/compat/filebench.md kept true: every row's example placed in a small script;
//! `supported` rows prepare and run one virtual second on MemFs without error, `ignored`
//! rows run and give their notice, `refused` rows are refused before anything runs with a
//! one-line error naming the line.

use host::fs::MemFs;
use sim::Sim;
use workload::filebench::{self, Config};

const FILESET: &str = "define fileset name=fs,path=/t,entries=20,dirwidth=5,prealloc=100,size=4k\n\
                       define fileset name=ds,path=/t,leafdirs=4,dirwidth=5,prealloc=50";

fn script(kind: &str, example: &str) -> String {
    let mut fileset = FILESET.to_string();
    let (mut command, mut flowops, mut tattr, mut pattr) = (
        String::new(),
        "flowop statfile name=st0,filesetname=fs".to_string(),
        String::new(),
        String::new(),
    );
    match kind {
        "command" => command = example.to_string(),
        "flowop" | "flowop-attr" => {
            flowops = example.split(" ; ").collect::<Vec<_>>().join("\n    ")
        }
        "fileset-attr" => fileset = example.to_string(),
        "thread-attr" => tattr = format!(",{example}"),
        "process-attr" => pattr = format!(",{example}"),
        k => panic!("unknown kind {k}"),
    }
    format!(
        "set $dir=/t\nset $ddrv=randvar(type=uniform,mean=2)\nset mode quit firstdone\n{fileset}\n{command}\n\
         define process name=p{pattr}\n{{\n  thread name=t{tattr}\n  {{\n    {flowops}\n  }}\n}}\nrun 1\n"
    )
}

fn unquote(s: &str) -> &str {
    s.trim().trim_start_matches('`').trim_end_matches('`')
}

#[test]
fn the_compatibility_table_is_true() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/compat/filebench.md"
    ))
    .expect("docs/compat/filebench.md");
    let mut rows = 0;
    for line in doc
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| kind"))
    {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 4, "{line}");
        let (kind, name, example, status) = (cells[0], cells[1], unquote(cells[2]), cells[3]);
        let src = script(kind, example);
        let prepared = filebench::prepare(&src, &[], 1);
        rows += 1;
        if status.starts_with("refused") {
            let e = prepared.expect_err(&src);
            assert!(e.line.is_some(), "{name}: {e}");
            assert!(!e.to_string().contains('\n'), "{name}: {e}");
            assert!(e.to_string().contains("refused"), "{name}: {e}");
            continue;
        }
        let w = prepared.unwrap_or_else(|e| panic!("{name} ({status}): {e}\n{src}"));
        if status.starts_with("ignored") {
            assert!(!w.notices.is_empty(), "{name}: no notice");
        } else {
            assert!(w.notices.is_empty(), "{name}: {:?}", w.notices);
            assert!(status.starts_with("supported"), "{name}: status {status}");
        }
        let sim = Sim::new(1);
        let fs = MemFs::new(&sim, 64 << 20);
        let cfg = Config {
            runtime: Some(1),
            syscall_ns: 20_000,
            ..Config::default()
        };
        let r = sim
            .block_on(async move { filebench::run(fs, w, cfg, 1).await })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(r.failed.is_none(), "{name}: {:?}\n{src}", r.log);
        assert!(!r.snapshots.is_empty(), "{name}");
    }
    assert!(rows > 100, "{rows} rows");
}

/// Every flowop of flowop_library.c's table has a row.
#[test]
fn every_flowop_has_a_row() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/compat/filebench.md"
    ))
    .unwrap();
    let names = filebench::Kind::ALL
        .iter()
        .map(|(n, _)| *n)
        .chain(filebench::REFUSED_FLOWOPS.iter().map(|(n, _)| *n));
    for name in names {
        assert!(doc.contains(&format!("| flowop | `{name}` |")), "{name}");
    }
}
