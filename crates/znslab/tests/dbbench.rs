//! `znslab dbbench` takes db_bench command lines from RocksDB's and ZenFS's documents and
//! scripts unchanged (testdata/db_bench/commands.txt) and prints what db_bench prints, in the
//! formats of db_bench_tool.cc's fprintf strings.

mod common;

use common::{dbbench_ok as run, dbbench_refused as refused, text, znslab};

/// db_bench's report line, `Stats::Report`:
/// `"%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %" PRIu64 " operations;%s%s\n"`,
/// the extra being `"%6.1f MB/s"` when bytes were counted, then the message. Returns the
/// benchmark's name and operations.
fn report_line(line: &str) -> Option<(String, u64)> {
    let (name, rest) = line.split_once(" : ")?;
    if name.len() < 12 || name.trim_end() != name.trim() || name.starts_with(' ') {
        return None;
    }
    let (micros, rest) = rest.split_once(" micros/op ")?;
    if micros.len() < 11 || !decimals(micros.trim_start(), 3) {
        return None;
    }
    let (ops_sec, rest) = rest.split_once(" ops/sec ")?;
    ops_sec.parse::<i64>().ok()?;
    let (secs, rest) = rest.split_once(" seconds ")?;
    if !decimals(secs, 3) {
        return None;
    }
    let (ops, extra) = rest.split_once(" operations;")?;
    let ops = ops.parse::<u64>().ok()?;
    if !extra.is_empty() {
        let extra = extra.strip_prefix(' ')?;
        if let Some(i) = extra.find(" MB/s") {
            // "%6.1f MB/s"
            let mbs = &extra[..i];
            if mbs.len() < 6 || !decimals(mbs.trim_start(), 1) {
                return None;
            }
        } else if !extra.starts_with('(') {
            return None;
        }
    }
    Some((name.trim_end().to_string(), ops))
}

/// A number printed with `%.Nf`.
fn decimals(s: &str, n: usize) -> bool {
    match s.split_once('.') {
        Some((a, b)) => {
            a.trim_start_matches('-')
                .chars()
                .all(|c| c.is_ascii_digit())
                && !a.is_empty()
                && b.len() == n
                && b.chars().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The report lines of a run: (name, operations).
fn lines(out: &str) -> Vec<(String, u64)> {
    out.lines().filter_map(report_line).collect()
}

#[test]
fn report_line_checker_reads_db_bench_lines() {
    // Lines as db_bench prints them (the fprintf above with made-up figures).
    assert_eq!(
        report_line("fillrandom   :       2.947 micros/op 339291 ops/sec 2.947 seconds 1000000 operations;   37.5 MB/s"),
        Some(("fillrandom".into(), 1_000_000))
    );
    assert_eq!(
        report_line("readwhilewriting :      10.020 micros/op 99800 ops/sec 10.020 seconds 1000000 operations;   21.4 MB/s (631930 of 1000000 found)"),
        Some(("readwhilewriting".into(), 1_000_000))
    );
    assert!(report_line("fillrandom : 2.9 micros/op").is_none());
    assert!(report_line(
        "fillrandom   :       2.947 micros/op 339291 ops/sec 2.9 seconds 1 operations;"
    )
    .is_none());
}

#[test]
fn command_lines_from_rocksdb_and_zenfs_documents_run_unchanged() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/db_bench/commands.txt"
    );
    let mut ran = 0;
    for line in std::fs::read_to_string(file).expect("commands.txt").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (want_refused, cmd) = match line.strip_prefix("refused:") {
            Some(rest) => {
                let (flag, cmd) = rest.split_once(' ').expect("refused:FLAG command");
                (Some(flag), cmd)
            }
            None => (None, line),
        };
        // `fill-image:BENCH command`: the command runs on the database a run of BENCH (with
        // the command's --num, --value_size ...) left in an image.
        let (fill, cmd) = match cmd.strip_prefix("fill-image:") {
            Some(rest) => {
                let (bench, cmd) = rest.split_once(' ').expect("fill-image:BENCH command");
                (Some(bench), cmd)
            }
            None => (None, cmd),
        };
        let mut args: Vec<&str> = cmd.split_whitespace().collect();
        if let Some(flag) = want_refused {
            refused(&args, flag);
            continue;
        }
        let image = Image::new("commands");
        let image_arg = format!("--image={}", image.path.display());
        if let Some(bench) = fill {
            let bench = format!("--benchmarks={bench}");
            let mut fill_args: Vec<&str> = args
                .iter()
                .copied()
                .filter(|a| {
                    !a.starts_with("--benchmarks=")
                        && !a.starts_with("--use_existing_db")
                        && !a.starts_with("--duration=")
                })
                .collect();
            fill_args.extend([bench.as_str(), image_arg.as_str(), "--force"]);
            run(&fill_args);
            args.push(&image_arg);
        }
        let (out, _) = run(&args);
        let benchmarks = args
            .iter()
            .rev()
            .find_map(|a| a.strip_prefix("--benchmarks="))
            .expect("--benchmarks");
        let got = lines(&out);
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            benchmarks.split(',').collect::<Vec<_>>(),
            "{cmd}\n{out}"
        );
        // ZenFS's check_db_bench_workload_completion: one line `WORKLOAD\s+:`.
        for b in benchmarks.split(',') {
            let n = out
                .lines()
                .filter(|l| {
                    l.strip_prefix(b)
                        .is_some_and(|r| r.starts_with(' ') && r.trim_start().starts_with(':'))
                })
                .count();
            assert_eq!(n, 1, "{b} in {out}");
        }
        if args
            .iter()
            .any(|a| *a == "--histogram" || *a == "--histogram=1")
        {
            assert!(out.contains("Microseconds per "), "{cmd}\n{out}");
        }
        ran += 1;
    }
    assert!(ran >= 8, "{ran} commands ran");
}

/// A device image in the temporary folder, removed (with its zones file) when dropped.
struct Image {
    path: std::path::PathBuf,
}

impl Image {
    fn new(tag: &str) -> Image {
        let path =
            std::env::temp_dir().join(format!("znslab-dbbench-{tag}-{}.img", std::process::id()));
        let img = Image { path };
        img.remove();
        img
    }
    fn arg(&self) -> String {
        format!("--image={}", self.path.display())
    }
    fn remove(&self) {
        std::fs::remove_file(&self.path).ok();
        let mut z = self.path.clone().into_os_string();
        z.push(".zones");
        std::fs::remove_file(z).ok();
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        self.remove();
    }
}

#[test]
fn use_existing_db_reads_what_a_fill_left_in_the_image() {
    for device in ["cczns", "tcssd-qlc"] {
        let img = Image::new(device);
        let dev = format!("--device={device}");
        let (out, _) = run(&["--benchmarks=fillseq", "--num=3000", &dev, &img.arg()]);
        assert_eq!(lines(&out), vec![("fillseq".to_string(), 3000)], "{out}");
        // db_bench skips a fresh-database benchmark under --use_existing_db, saying so.
        let (out, err) = run(&[
            "--benchmarks=fillrandom,readrandom",
            "--use_existing_db",
            "--num=3000",
            &dev,
            &img.arg(),
        ]);
        assert!(
            out.contains("fillrandom   : skipped (--use_existing_db is true)\n"),
            "{out}"
        );
        assert!(out.contains("(3000 of 3000 found)"), "{out}");
        assert_eq!(lines(&out), vec![("readrandom".to_string(), 3000)], "{out}");
        assert!(
            err.contains("--device ignored: the image holds its device"),
            "{err}"
        );
        // And again: what the second run did (nothing written) leaves the database as it was.
        let (out, _) = run(&[
            "--benchmarks=readseq",
            "--use_existing_db",
            "--num=3000",
            &img.arg(),
        ]);
        assert_eq!(lines(&out), vec![("readseq".to_string(), 3000)], "{out}");
        // A fill over it needs --force.
        let err = refused(&["--benchmarks=fillseq", "--num=10", &img.arg()], "image");
        assert!(err.contains("pass --force"), "{err}");
    }
}

#[test]
fn use_existing_db_needs_an_image_that_holds_a_database() {
    // Without --image: refused, saying to pass one.
    let err = refused(
        &["--benchmarks=readrandom", "--use_existing_db"],
        "use_existing_db",
    );
    assert!(err.contains("pass --image FILE"), "{err}");
    // An absent image.
    let img = Image::new("absent");
    let err = refused(
        &["--benchmarks=readrandom", "--use_existing_db", &img.arg()],
        "image",
    );
    assert!(err.contains("no such file"), "{err}");
    // A file that is no device image (a killed copy cut short, or anything else).
    std::fs::write(&img.path, b"not an image").expect("write");
    let err = refused(
        &["--benchmarks=readrandom", "--use_existing_db", &img.arg()],
        "image",
    );
    assert!(err.contains("not a znslab device image"), "{err}");
    // A device image without a file system: no database in it.
    img.remove();
    let o = znslab(&[
        "nvme",
        "create",
        &img.path.display().to_string(),
        "--preset=zn540",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = refused(
        &["--benchmarks=readrandom", "--use_existing_db", &img.arg()],
        "image",
    );
    assert!(err.contains("no database in it"), "{err}");
}

#[test]
fn use_existing_db_recovers_what_a_killed_fill_left() {
    // A fill killed midway leaves an image whose store was never closed (and, over emulated
    // zones, no saved zone table): the next run recovers it (MANIFEST and WAL replay) and
    // reads what it holds.
    for device in ["cczns", "tcssd-qlc"] {
        let img = Image::new(&format!("killed-{device}"));
        let mut child = common::command()
            .args([
                "dbbench",
                "--benchmarks=fillseq",
                "--num=5000000",
                "--sync=1",
                "--json",
                &format!("--device={device}"),
                &img.arg(),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawns");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        child.kill().expect("kills");
        child.wait().expect("waits");
        let (out, _) = run(&[
            "--benchmarks=readseq",
            "--use_existing_db",
            "--num=1000",
            &img.arg(),
        ]);
        let got = lines(&out);
        assert_eq!(got.len(), 1, "{out}");
        assert!(got[0].1 > 0, "the killed fill left nothing: {out}");
    }
}

#[test]
fn background_jobs_and_write_buffers_run_as_rocksdb_limits_them() {
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec![
            "--benchmarks=fillrandom",
            "--num=40000",
            "--value_size=400",
            "--write_buffer_size=1048576",
            "--target_file_size_base=1048576",
            "--max_bytes_for_level_base=4194304",
            "--level0_file_num_compaction_trigger=2",
            "--json",
        ];
        a.extend_from_slice(extra);
        serde_json::from_str(&run(&a).0).expect("json")
    };
    let base = json(&[]);
    let many = json(&["--max_background_jobs=8", "--max_write_buffer_number=4"]);
    // The same writes reach the same tables, by other timing.
    assert_eq!(base["benchmarks"][0]["ops"], many["benchmarks"][0]["ops"]);
    assert_eq!(base["flushes"], many["flushes"], "{base}\n{many}");
    // Explicit limits as RocksDB takes them.
    json(&[
        "--max_background_compactions=3",
        "--max_background_flushes=2",
    ]);
}

#[test]
fn threads_each_do_num_operations_as_db_bench_does() {
    // db_bench: every thread does --num writes and --reads reads (the report adds them up).
    let (out, _) = run(&[
        "--benchmarks=fillrandom,readrandom,fillseq",
        "--num=1000",
        "--threads=3",
    ]);
    let got = lines(&out);
    assert_eq!(
        got,
        vec![
            ("fillrandom".to_string(), 3000),
            ("readrandom".to_string(), 3000),
            ("fillseq".to_string(), 3000)
        ],
        "{out}"
    );
    // The found message is one thread's, as db_bench keeps one thread's message.
    assert!(out.contains(" of 1000 found)"), "{out}");
    let (out, _) = run(&[
        "--benchmarks=readrandom",
        "--num=100",
        "--reads=50",
        "--threads=4",
    ]);
    assert_eq!(lines(&out)[0].1, 200, "{out}");
}

#[test]
fn gflags_forms_reach_the_run() {
    // One dash, 1 for true, --noX, `--name value`, the last of a repeated flag wins.
    let (out, _) = run(&[
        "-benchmarks=fillrandom",
        "--num=10",
        "--sync=1",
        "--nosync",
        "--num",
        "700",
        "--statistics",
    ]);
    assert_eq!(lines(&out), vec![("fillrandom".to_string(), 700)], "{out}");
    assert!(out.contains("\nrocksdb.wal.synced COUNT : 0\n"), "{out}");
    let (out, _) = run(&[
        "--benchmarks=fillrandom",
        "--num=300",
        "--sync",
        "--statistics=true",
    ]);
    assert!(out.contains("\nrocksdb.wal.synced COUNT : 300\n"), "{out}");
}

#[test]
fn every_benchmark_prints_its_line_and_statistics_use_rocksdb_names() {
    let all = "fillseq,fillbatch,fillrandom,filluniquerandom,overwrite,fillsync,fill100K,\
               readrandom,readrandomsmall,readmissing,multireadrandom,readseq,readtocache,\
               readreverse,seekrandom,seekrandomwhilewriting,updaterandom,readrandomwriterandom,\
               readwhilewriting,mixgraph,deleterandom,deleteseq,compact,flush,waitforcompaction,\
               stats,levelstats";
    let arg = format!("--benchmarks={all}");
    let (out, _) = run(&[
        &arg,
        "--num=3000",
        "--statistics",
        "--histogram",
        "--seek_nexts=10",
    ]);
    let got = lines(&out);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    let printed: Vec<&str> = all
        .split(',')
        .filter(|b| !["flush", "waitforcompaction", "stats", "levelstats"].contains(b))
        .collect();
    assert_eq!(names, printed, "{out}");
    let ops = |n: &str| got.iter().find(|(b, _)| b == n).unwrap().1;
    // fillsync and fill100K do num/1000; fillbatch writes batches of 1000.
    assert_eq!(ops("fillsync"), 3);
    assert_eq!(ops("fill100K"), 3);
    assert_eq!(ops("fillbatch"), 3000);
    assert_eq!(ops("readseq"), 3000);
    assert_eq!(ops("readtocache"), 3000);
    assert_eq!(ops("readrandomsmall"), 3);
    assert_eq!(ops("filluniquerandom"), 3000);
    assert_eq!(ops("compact"), 1);
    // readmissing finds nothing; readrandom after the fills finds everything.
    assert!(out.contains("readmissing  :"), "{out}");
    let line = |n: &str| out.lines().find(|l| l.starts_with(n)).unwrap().to_string();
    assert!(line("readmissing ").ends_with("(0 of 3000 found)"), "{out}");
    assert!(
        line("readrandom ").ends_with("(3000 of 3000 found)"),
        "{out}"
    );
    assert!(line("readseq ").contains(" MB/s"), "{out}");
    assert!(
        line("updaterandom ").ends_with("( updates:3000 found:3000)"),
        "{out}"
    );
    assert!(
        line("readrandomwriterandom ").contains("( reads:2700 writes:300 total:3000 found:"),
        "{out}"
    );
    assert!(
        line("mixgraph ").contains("( Gets:3000 Puts:0 Seek:0, reads ")
            && line("mixgraph ").ends_with(" found, avg size: -nan value, -nan scan)"),
        "{out}"
    );
    // levelstats is RocksDB's property as db_bench prints it.
    assert!(
        out.contains("\nLevel Files Size(MB)\n--------------------\n  0 "),
        "{out}"
    );
    assert!(out.contains("** Compaction Stats [default] **"), "{out}");
    // db_bench's "DB path: [...]" before each benchmark that reports.
    assert_eq!(out.matches("DB path: [").count(), printed.len(), "{out}");
    // --histogram's blocks, per operation type.
    for op in ["write", "read", "seek", "delete", "update"] {
        assert!(
            out.contains(&format!("Microseconds per {op}:\nCount: ")),
            "{op}: {out}"
        );
    }
    // --statistics: RocksDB's names.
    let stats = &out[out.find("STATISTICS:\n").expect("STATISTICS block")..];
    for t in [
        "rocksdb.block.cache.miss COUNT : ",
        "rocksdb.number.keys.written COUNT : ",
        "rocksdb.number.db.seek COUNT : ",
        "rocksdb.wal.bytes COUNT : ",
        "rocksdb.compact.write.bytes COUNT : ",
        "rocksdb.db.get.micros P50 : ",
        "rocksdb.db.write.micros P50 : ",
    ] {
        assert!(stats.contains(t), "{t}");
    }
    let count = |t: &str| -> u64 {
        let at = stats.find(&format!("\n{t} COUNT : ")).expect(t) + t.len() + 10;
        stats[at..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(count("rocksdb.number.keys.read") > 0);
    assert!(count("rocksdb.flush.write.bytes") > 0);
    assert!(count("rocksdb.number.db.next") > 0);
}

#[test]
fn statistics_in_json() {
    let (out, _) = run(&[
        "--benchmarks=fillrandom,readrandom",
        "--num=500",
        "--statistics",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["statistics"]["tickers"]["rocksdb.number.keys.written"],
        500
    );
    assert_eq!(
        v["statistics"]["histograms"]["rocksdb.db.get.micros"]["count"],
        500
    );
}

#[test]
fn disable_wal_writes_no_wal() {
    let (out, _) = run(&[
        "--benchmarks=fillrandom",
        "--num=2000",
        "--disable_wal",
        "--statistics",
    ]);
    assert!(out.contains("\nrocksdb.wal.bytes COUNT : 0\n"), "{out}");
    let (out, _) = run(&["--benchmarks=fillrandom", "--num=2000", "--statistics"]);
    assert!(!out.contains("\nrocksdb.wal.bytes COUNT : 0\n"), "{out}");
}

#[test]
fn duration_bounds_a_benchmark_by_simulated_time() {
    let (out, _) = run(&[
        "--benchmarks=fillrandom",
        "--num=100",
        "--duration=1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let b = &v["benchmarks"][0];
    assert!(b["seconds"].as_f64().unwrap() >= 1.0, "{b}");
    assert!(b["ops"].as_u64().unwrap() > 100, "{b}");
}

#[test]
fn store_flags_reach_the_store() {
    // A small memtable and L0 trigger make flushes and compactions; a huge one none.
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec!["--benchmarks=fillrandom", "--num=20000", "--json"];
        a.extend_from_slice(extra);
        serde_json::from_str(&run(&a).0).expect("json")
    };
    let small = json(&[
        "--write_buffer_size=65536",
        "--level0_file_num_compaction_trigger=2",
        "--target_file_size_base=131072",
        "--max_bytes_for_level_base=262144",
        "--num_levels=4",
        "--cache_size=1048576",
        "--block_size=8192",
    ]);
    assert!(small["flushes"].as_u64().unwrap() > 10, "{small}");
    assert!(small["compactions"].as_u64().unwrap() > 0, "{small}");
    assert_eq!(small["level_files"].as_array().unwrap().len(), 4, "{small}");
    let big = json(&["--write_buffer_size=1073741824"]);
    assert_eq!(big["flushes"], 0, "{big}");
}

#[test]
fn flags_outside_the_emulation_are_refused_with_a_reason() {
    for (args, flag) in [
        (&["--max_background_jobs=100000"][..], "max_background_jobs"),
        (
            &["--max_write_buffer_number=1000000"],
            "max_write_buffer_number",
        ),
        (&["--num_column_families=2"], "num_column_families"),
        (&["--compaction_style=1"], "compaction_style"),
        (&["--use_existing_db"], "use_existing_db"),
        (&["--fs_uri=posix://"], "fs_uri"),
        (
            &["--benchmarks=fillrandom", "--duration=100000000"],
            "duration",
        ),
        (
            &["--benchmarks=fillrandom", "--batch_size=100000000"],
            "batch_size",
        ),
        (&["--num=ten"], "num"),
        (&["--sync=maybe"], "sync"),
    ] {
        let err = refused(args, flag);
        assert!(!err.contains("unexpected argument"), "{err}");
    }
    let err = refused(&["--no_such_flag=1"], "no_such_flag");
    assert!(err.contains("unknown flag"), "{err}");
    let o = znslab(&["dbbench", "--benchmarks=fillrandom,bogus", "--num=10"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown benchmark \"bogus\""));
    // db_bench's own benchmarks that do not run here say why.
    let o = znslab(&["dbbench", "--benchmarks=fillrandom,mergerandom", "--num=10"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("benchmark \"mergerandom\": refused: the store has no merge operator"),
        "{err}"
    );
    // Defaults of refused flags are what runs, so they are accepted.
    run(&[
        "--benchmarks=fillrandom",
        "--num=10",
        "--max_background_jobs=2",
        "--compaction_style=0",
    ]);
    // Flags that change nothing measured here print a notice.
    let (_, err) = run(&[
        "--benchmarks=fillrandom",
        "--num=10",
        "--use_direct_reads",
        "--db=/x",
    ]);
    assert!(err.contains("--use_direct_reads=true ignored: "), "{err}");
    assert!(err.contains("--db=/x ignored: "), "{err}");
}

#[test]
fn same_seed_same_output() {
    let strip = |s: String| -> String {
        s.lines()
            .filter(|l| !l.starts_with("host CPU busy"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let args = [
        "--benchmarks=fillrandom,mixgraph,seekrandom",
        "--num=2000",
        "--mix_get_ratio=0.5",
        "--mix_put_ratio=0.3",
        "--mix_seek_ratio=0.2",
        "--threads=2",
        "--histogram",
    ];
    assert_eq!(strip(run(&args).0), strip(run(&args).0));
}

#[test]
fn benchmark_write_rate_limit_holds_writes_to_the_rate() {
    // 2000 writes of 16 + 100 bytes at 116000 bytes/s take about 2 simulated seconds.
    let (out, _) = run(&[
        "--benchmarks=fillrandom",
        "--num=2000",
        "--benchmark_write_rate_limit=116000",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let s = v["benchmarks"][0]["seconds"].as_f64().unwrap();
    assert!((1.9..2.1).contains(&s), "{s}");
}

#[test]
fn every_supported_flag_of_the_compat_table_is_read_by_the_command() {
    // docs/compat/db_bench.md is the flag table (checked by workload's tests); each flag it
    // calls supported must be one the command reads.
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/compat/db_bench.md"
    ))
    .expect("compat table");
    // The command reads its flags in its own file and in the library's (lab::dbbench_run).
    let src = [
        concat!(env!("CARGO_MANIFEST_DIR"), "/src/dbbench_cmd.rs"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/../lab/src/dbbench_run.rs"),
    ]
    .map(|p| std::fs::read_to_string(p).expect("source"))
    .concat();
    let mut n = 0;
    for row in doc.lines().filter(|l| l.starts_with("| `--")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let name = cells[0].trim_start_matches("| `--").trim_end_matches('`');
        if cells[3].starts_with("supported") && name != "undefok" {
            assert!(src.contains(&format!("\"{name}\"")), "--{name} is not read");
            n += 1;
        }
    }
    assert!(n > 50, "{n}");
}

#[test]
fn help_lists_the_benchmarks_and_points_at_the_table() {
    let (out, _) = run(&["--help"]);
    assert!(out.contains("docs/compat/db_bench.md"), "{out}");
    assert!(out.contains("mixgraph"), "{out}");
}
