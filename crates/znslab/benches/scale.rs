//! How the emulator's cost follows the work (issue 25): for YCSB Loads on `amazon` (ZSTD and
//! CCZNS), wall time against the pure codec time of the bytes the run compressed and
//! decompressed, peak RSS against the bytes the device held, and simulated seconds per wall
//! second; the same Loads with a modeled payload (`--payload modeled`) beside real bytes; then
//! fio 4 KiB random reads in device commands per wall second.
//!
//! `cargo bench -p znslab --bench scale` (200 k and 2 M records; about 4 minutes), or
//! `cargo bench -p znslab --bench scale -- 200000 500000` for other record counts. Each run is
//! its own `znslab` process, so its peak RSS is its own (wait4's ru_maxrss).

use std::process::Command;
use std::time::Instant;

use codec::{Codec, Coder};
use serde_json::Value;
use workload::dataset::{Dataset, Values};

const MIB: f64 = (1 << 20) as f64;

/// Run `znslab` with `args`: its stdout (JSON), wall seconds and peak RSS in bytes.
// The child is reaped by wait4 (for its rusage), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn run(args: &[&str]) -> (Value, f64, u64) {
    let bin = env!("CARGO_BIN_EXE_znslab");
    let t0 = Instant::now();
    let child = Command::new(bin)
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("znslab starts");
    let pid = child.id() as libc::pid_t;
    // Read stdout before waiting: a large JSON would fill the pipe.
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.expect("piped"), &mut out).expect("reads");
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; status and usage are valid pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let wall = t0.elapsed().as_secs_f64();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "znslab {args:?} failed"
    );
    let v = serde_json::from_slice(&out).expect("JSON");
    (v, wall, usage.ru_maxrss as u64 * 1024)
}

/// Seconds zstd-1 takes to compress `compress` bytes and decompress `decompress` bytes of
/// the dataset's values in 4 KiB chunks (the store's block size and the device's chunk).
fn codec_seconds(values: &[u8], compress: u64, decompress: u64) -> f64 {
    let chunks: Vec<&[u8]> = values.chunks(4096).collect();
    let mut coder = Coder::new();
    let mut out = Vec::new();
    let t0 = Instant::now();
    let mut done = 0u64;
    for c in chunks.iter().cycle() {
        if done >= compress {
            break;
        }
        out.clear();
        coder.compress(Codec::ZSTD1, c, &mut out);
        done += c.len() as u64;
    }
    let t_compress = t0.elapsed().as_secs_f64();
    let compressed: Vec<(Vec<u8>, usize)> = chunks
        .iter()
        .map(|c| {
            let mut o = Vec::new();
            coder.compress(Codec::ZSTD1, c, &mut o);
            (o, c.len())
        })
        .collect();
    let mut raw = vec![0u8; 4096];
    let t0 = Instant::now();
    let mut done = 0u64;
    for (c, len) in compressed.iter().cycle() {
        if done >= decompress {
            break;
        }
        coder
            .decompress(Codec::ZSTD1, c, &mut raw[..*len])
            .expect("round trip");
        done += *len as u64;
    }
    t_compress + t0.elapsed().as_secs_f64()
}

/// YCSB Load of `n` amazon records with `scheme` and `payload` (real or modeled).
fn ycsb_load(n: u64, scheme: &str, payload: &str) -> (Value, f64, u64) {
    let count = format!("recordcount={n}");
    run(&[
        "ycsb",
        "load",
        "-P",
        "workloads/workloada",
        "-p",
        &count,
        "-p",
        "dataset=amazon",
        "--compression",
        scheme,
        "--payload",
        payload,
        "--json",
    ])
}

fn main() {
    let mut records: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if records.is_empty() {
        records = vec![200_000, 2_000_000];
    }
    // 64 MiB of the dataset's values for the codec's timing.
    let values = Values::open(Dataset::Amazon)
        .expect("the amazon corpus (znslab corpus builds it)")
        .expect("a corpus");
    let mut rng = sim::Rng::new(1);
    let mut sample = Vec::new();
    while sample.len() < 64 << 20 {
        sample.extend(values.next(&mut rng));
    }
    println!(
        "| records | scheme | wall s | codec s | wall/codec | peak RSS MiB | device held MiB (peak) | live tables MiB | RSS/held | sim s | sim s per wall s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for &n in &records {
        for scheme in ["zstd", "cc"] {
            let (v, wall, rss) = ycsb_load(n, scheme, "real");
            let (compress, decompress) = if scheme == "cc" {
                let d = &v["device_compression"];
                (
                    d["logical_bytes_written"].as_u64().unwrap_or(0),
                    d["logical_bytes_read"].as_u64().unwrap_or(0),
                )
            } else {
                let h = &v["host_codec_bytes"];
                (
                    h["compressed"].as_u64().unwrap_or(0),
                    h["decompressed"].as_u64().unwrap_or(0),
                )
            };
            let codec = codec_seconds(&sample, compress, decompress);
            let held = v["device_memory_bytes"]["peak"].as_u64().unwrap_or(0);
            let live: u64 = v["level_bytes"]
                .as_array()
                .map_or(0, |a| a.iter().filter_map(Value::as_u64).sum());
            let sim_s = v["phases"][0]["runtime_ms"].as_f64().unwrap_or(0.0) / 1e3;
            println!(
                "| {n} | {scheme} | {wall:.2} | {codec:.2} | {:.2} | {:.0} | {:.0} | {:.0} | {:.2} | {sim_s:.2} | {:.3} |",
                wall / codec.max(1e-9),
                rss as f64 / MIB,
                held as f64 / MIB,
                live as f64 / MIB,
                rss as f64 / (held.max(1)) as f64,
                sim_s / wall,
            );
        }
    }
    // The modeled payload beside real bytes: the same Loads, wall time and figures.
    println!(
        "\n| records | scheme | real wall s | modeled wall s | real/modeled | real RSS MiB | modeled RSS MiB | flash bytes modeled/real | kops/s modeled/real |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in &records {
        for scheme in ["zstd", "cc"] {
            let (r, r_wall, r_rss) = ycsb_load(n, scheme, "real");
            let (m, m_wall, m_rss) = ycsb_load(n, scheme, "modeled");
            let ratio = |key: &str| {
                m["phases"][0][key]
                    .as_f64()
                    .or_else(|| m[key].as_f64())
                    .unwrap_or(0.0)
                    / r["phases"][0][key]
                        .as_f64()
                        .or_else(|| r[key].as_f64())
                        .unwrap_or(f64::NAN)
            };
            println!(
                "| {n} | {scheme} | {r_wall:.2} | {m_wall:.2} | {:.1} | {:.0} | {:.0} | {:.3} | {:.3} |",
                r_wall / m_wall.max(1e-9),
                r_rss as f64 / MIB,
                m_rss as f64 / MIB,
                ratio("flash_bytes_programmed"),
                ratio("throughput_ops_per_s"),
            );
        }
    }
    let (v, wall, rss) = run(&["fio", "jobs/randread-4k.fio", "--output-format=json"]);
    println!(
        "\nfio jobs/randread-4k.fio: {:.2} M device commands per wall second ({wall:.1} s, peak RSS {:.0} MiB)",
        v["znslab"]["device_commands_per_wall_s"]
            .as_f64()
            .unwrap_or(0.0)
            / 1e6,
        rss as f64 / MIB,
    );
}
