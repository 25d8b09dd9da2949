//! Corrupt input never panics: fio job files and YCSB property files, mutated from the
//! repository's own (bit flips, truncations, spliced and repeated pieces), give a value or an
//! error naming what was wrong. A short corpus-driven run of what the torture issue asks of
//! cargo-fuzz targets, deterministic by seed.

use sim::Rng;
use workload::fio::{build_jobs, parse_jobfile};
use workload::ycsb::YcsbConfig;

fn corpus(dir: &str) -> Vec<(String, String)> {
    let root = format!("{}/../../{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut out: Vec<(String, String)> = std::fs::read_dir(&root)
        .expect("corpus folder")
        .map(|e| e.expect("entry").path())
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("corpus file");
            (p.display().to_string(), text)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no corpus in {root}");
    out
}

/// Feed 1500 mutations of every file of `dir` to `parse`: each gives a value or an error
/// with a message, never a panic, and both sides are reached.
fn fuzz_corpus(
    dir: &str,
    seed: u64,
    parse: impl Fn(&str) -> Result<(), String> + std::panic::RefUnwindSafe,
) {
    let mut rng = Rng::new(seed);
    let (mut ok, mut refused) = (0, 0);
    for (name, text) in corpus(dir) {
        for i in 0..1500 {
            let bytes = rng.mutate(text.as_bytes());
            let input = String::from_utf8_lossy(&bytes);
            match std::panic::catch_unwind(|| parse(&input)) {
                Ok(Ok(())) => ok += 1,
                Ok(Err(e)) => {
                    assert!(!e.is_empty());
                    refused += 1;
                }
                Err(_) => panic!("{name}, mutation {i}: the parser panicked on\n{input}"),
            }
        }
    }
    assert!(
        ok > 100 && refused > 100,
        "{ok} accepted, {refused} refused"
    );
}

#[test]
fn mutated_fio_job_files_give_jobs_or_errors() {
    fuzz_corpus("jobs", 0xf10, |t| {
        parse_jobfile(t)
            .and_then(|s| build_jobs(&s))
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
}

#[test]
fn mutated_ycsb_property_files_give_configs_or_errors() {
    fuzz_corpus("workloads", 0x7c5b, |t| {
        YcsbConfig::default()
            .load_file(t)
            .map_err(|e| e.to_string())
    });
}

/// Found by `cargo fuzz run fio_jobfile` (artifact oom-18e9940b): `numjobs=14608047` built
/// 14.6 M jobs and ran out of memory. Past fio's 4096 jobs it is an error naming the option.
#[test]
fn fuzz_fio_jobfile_oom_numjobs_past_fios_limit_is_refused() {
    let text = "[r]\nstonewall\nrw=read\nnumjobs=000014608047\n[w]\nrw=write\n";
    let e = parse_jobfile(text)
        .and_then(|s| build_jobs(&s))
        .expect_err("refused");
    assert!(e.to_string().contains("numjobs"), "{e}");
    assert!(e.to_string().contains("4096"), "{e}");
    // Over several sections too.
    let text = "[a]\nnumjobs=4000\n[b]\nnumjobs=97\n";
    assert!(parse_jobfile(text).and_then(|s| build_jobs(&s)).is_err());
    let text = "[a]\nnumjobs=4000\n[b]\nnumjobs=96\n";
    assert_eq!(
        parse_jobfile(text)
            .and_then(|s| build_jobs(&s))
            .map(|j| j.len())
            .ok(),
        Some(4096)
    );
}
