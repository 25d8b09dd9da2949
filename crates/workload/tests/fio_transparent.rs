//! fio on the host-transparent compressing designs: Balloon-ZNS zones and the TCSSD's
//! conventional namespace, with buffer_compress_spread and the compression figures of the JSON.

use device::{presets, Controller, DeviceHandle};
use sim::Sim;
use workload::fio::{build_jobs, json_output, parse_jobfile, run, RunResult};

fn run_on(preset: device::DeviceConfig, job: &str) -> (RunResult, serde_json::Value) {
    let sim = Sim::new(5);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(preset).expect("valid"));
    let jobs = build_jobs(&parse_jobfile(job).expect("parses")).expect("builds");
    let r = run(&sim, &dev, &jobs).expect("runs");
    let c = dev.into_controller().expect("sole owner");
    let j = json_output(&r, &c, 5, 0.0, 0);
    (r, j)
}

#[test]
fn balloon_zones_report_footprint_and_truncation() {
    // Two zones of 256 KiB, page ratios spread around ~2.7: some pages overflow their slot.
    let job = "[global]\nzonemode=zbd\nsize=512k\nbs=16k\nbuffer_compress_percentage=64\n\
        buffer_compress_spread=30\n\n[w]\nrw=write\n\n[r]\nstonewall\nrw=read\n\n\
        [rr]\nstonewall\nrw=randread\nbs=4k\nio_size=128k\n";
    let (r, j) = run_on(presets::test_balloon(), job);
    for job in &r.jobs {
        assert_eq!(job.error, None, "{}", job.spec.name);
    }
    assert_eq!(r.jobs[1].read.io_bytes, 512 << 10);
    let b = &j["znslab"]["compression"]["balloon"];
    assert_eq!(j["znslab"]["compression"]["design"], "balloon");
    assert_eq!(b["pages_written"], 128);
    assert!(b["truncated_pages"].as_u64().unwrap() > 0, "{b}");
    assert!(b["two_read_pages"].as_u64().unwrap() > 0, "{b}");
    let raw = b["raw_sfp"].as_f64().unwrap();
    let slot = b["slot_sfp"].as_f64().unwrap();
    assert!(raw < slot && slot < 1.0, "{b}");
}

#[test]
fn spread_makes_page_ratios_differ() {
    // Without a spread every page compresses alike: none overflows the first slot (2 KiB).
    let job = "[w]\nzonemode=zbd\nsize=256k\nbs=16k\nrw=write\nbuffer_compress_percentage=64\n";
    let (_, j) = run_on(presets::test_balloon(), job);
    assert_eq!(j["znslab"]["compression"]["balloon"]["truncated_pages"], 0);
    let bad = "[w]\nbuffer_compress_spread=101\n";
    let e = build_jobs(&parse_jobfile(bad).expect("parses")).expect_err("over 100");
    assert!(e.to_string().contains("buffer_compress_spread"), "{e}");
}

#[test]
fn tcssd_takes_random_writes_without_zones() {
    let job = "[global]\nzonemode=none\nbs=4k\nbuffer_compress_percentage=50\n\n\
        [w]\nrw=randwrite\nsize=1m\nio_size=2m\n\n[r]\nstonewall\nrw=randread\nsize=1m\nio_size=512k\n";
    let (r, j) = run_on(presets::test_tcssd(), job);
    for job in &r.jobs {
        assert_eq!(job.error, None, "{}", job.spec.name);
    }
    assert_eq!(r.jobs[0].write.io_bytes, 2 << 20);
    assert_eq!(j["znslab"]["compression"]["design"], "tcssd");
    let t = &j["znslab"]["compression"]["tcssd"];
    assert_eq!(t["blocks_written"], 512);
    assert!(t["overwritten_blocks"].as_u64().unwrap() > 0, "{t}");
    assert!(t["map_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn zbd_mode_on_a_conventional_namespace_is_refused() {
    let sim = Sim::new(5);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(presets::test_tcssd()).expect("valid"),
    );
    let job = "[w]\nzonemode=zbd\nrw=write\nsize=64k\n";
    let jobs = build_jobs(&parse_jobfile(job).expect("parses")).expect("builds");
    let e = run(&sim, &dev, &jobs).expect_err("not zoned");
    assert!(e.to_string().contains("zonemode=none"), "{e}");
}
