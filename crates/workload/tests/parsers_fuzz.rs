//! Corrupt input never panics: fio job files and YCSB property files, mutated from the
//! repository's own (bit flips, truncations, spliced and repeated pieces), give a value or an
//! error naming what was wrong. A short corpus-driven run of what the torture issue asks of
//! cargo-fuzz targets, deterministic by seed.

use sim::Rng;
use workload::fio::{build_jobs, parse_jobfile};
use workload::ycsb::YcsbConfig;

/// `input` changed in one to four random ways.
pub fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let n = v.len() as u64;
        match rng.below(6) {
            0 if n > 0 => {
                let i = rng.below(n) as usize;
                v[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => v.truncate(rng.below(n) as usize),
            2 if n > 0 => {
                let i = rng.below(n) as usize;
                v[i] = [b'=', b'\n', b'[', b']', b'0', b'-', b':', 0xff][rng.below(8) as usize];
            }
            3 if n > 1 => {
                // Repeat a piece somewhere else.
                let a = rng.below(n) as usize;
                let b = a + rng.below((n as usize - a).min(64) as u64) as usize;
                let at = rng.below(n) as usize;
                let piece = v[a..b].to_vec();
                v.splice(at..at, piece);
            }
            4 => {
                let at = rng.below(n + 1) as usize;
                let junk = ["99999999999999999999", "-1", "1k", "0x", "%", "=", "\0"]
                    [rng.below(7) as usize];
                v.splice(at..at, junk.bytes());
            }
            _ if n > 0 => {
                let i = rng.below(n) as usize;
                v.remove(i);
            }
            _ => {}
        }
    }
    v
}

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

#[test]
fn mutated_fio_job_files_give_jobs_or_errors() {
    let mut rng = Rng::new(0xf10);
    let (mut ok, mut refused) = (0, 0);
    for (name, text) in corpus("jobs") {
        for i in 0..1500 {
            let bytes = mutate(&mut rng, text.as_bytes());
            let input = String::from_utf8_lossy(&bytes);
            let r = std::panic::catch_unwind(|| parse_jobfile(&input).and_then(|s| build_jobs(&s)));
            match r {
                Ok(Ok(_)) => ok += 1,
                Ok(Err(e)) => {
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
                Err(_) => panic!("{name}, mutation {i}: the parser panicked on\n{input}"),
            }
        }
    }
    // The mutations reach both sides.
    assert!(
        ok > 100 && refused > 100,
        "{ok} accepted, {refused} refused"
    );
}

#[test]
fn mutated_ycsb_property_files_give_configs_or_errors() {
    let mut rng = Rng::new(0x7c5b);
    let (mut ok, mut refused) = (0, 0);
    for (name, text) in corpus("workloads") {
        for i in 0..1500 {
            let bytes = mutate(&mut rng, text.as_bytes());
            let input = String::from_utf8_lossy(&bytes);
            let r = std::panic::catch_unwind(|| YcsbConfig::default().load_file(&input));
            match r {
                Ok(Ok(())) => ok += 1,
                Ok(Err(e)) => {
                    assert!(!e.to_string().is_empty());
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
