//! fio's compressed_io on a CCZNS device: CW writes at byte write pointers, DR reads of the
//! chunks they wrote (single- and multi-chunk), the compression figures of the JSON, and the
//! errors a user gets for impossible combinations.

use device::{presets, Controller, DeviceHandle};
use sim::Sim;
use workload::fio::{build_jobs, json_output, parse_jobfile, run, RunResult};

fn run_on(preset: device::DeviceConfig, job: &str) -> (RunResult, serde_json::Value) {
    let sim = Sim::new(3);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(preset).expect("valid"));
    let jobs = build_jobs(&parse_jobfile(job).expect("parses")).expect("builds");
    let r = run(&sim, &dev, &jobs).expect("runs");
    let c = dev.into_controller().expect("sole owner");
    let j = json_output(&r, &c, 3, 0.0, 0);
    (r, j)
}

const WRITE_THEN_READ: &str = "[global]\nzonemode=zbd\nsize=512k\ncompressed_io=1\n\
    buffer_compress_percentage=75\n\n[w]\nrw=write\nbs=16k\n\n[r]\nstonewall\nrw=read\nbs=16k\n\n\
    [rr]\nstonewall\nrw=randread\nbs=16k\nio_size=256k\n";

#[test]
fn compressed_writes_and_reads_round_trip_every_chunk() {
    let (r, j) = run_on(presets::test_cczns(), WRITE_THEN_READ);
    for job in &r.jobs {
        assert_eq!(job.error, None, "{}", job.spec.name);
    }
    assert_eq!(r.jobs[0].write.io_bytes, 512 << 10);
    // Sequential DR reads back every byte that was written, as uncompressed bytes.
    assert_eq!(r.jobs[1].read.io_bytes, 512 << 10);
    assert_eq!(r.jobs[2].read.io_bytes, 256 << 10);
    let comp = &j["znslab"]["compression"];
    assert_eq!(comp["design"], "cczns");
    assert_eq!(comp["logical_bytes_written"], 512 << 10);
    let ratio = comp["compression_ratio"].as_f64().unwrap();
    assert!(ratio > 3.0, "75% compressible data: ratio {ratio}");
    assert_eq!(comp["decompressed_reads"], 32 + 16);
    assert!(comp["engine_utilization"]["compress"].as_f64().unwrap() > 0.0);
    // Flash saw about a quarter of the bytes.
    let programmed = j["znslab"]["flash_bytes_programmed"].as_u64().unwrap();
    assert!(programmed < (512 << 10) / 2, "{programmed}");
}

#[test]
fn multi_chunk_io_uses_prefix_prediction() {
    let job = "[global]\nzonemode=zbd\nsize=512k\ncompressed_io=1\ncompressed_chunk=4k\n\
        buffer_compress_percentage=50\n\n[w]\nrw=write\nbs=64k\n\n[r]\nstonewall\nrw=read\nbs=64k\n";
    let (r, j) = run_on(presets::test_cczns(), job);
    assert_eq!(r.jobs[1].error, None);
    assert_eq!(r.jobs[1].read.io_bytes, 512 << 10);
    let comp = &j["znslab"]["compression"];
    assert_eq!(comp["compressed_writes"], 8);
    assert_eq!(comp["chunks_read"], 128);
    // Every I/O got its 16 chunks (the data's ratio is uniform, so prediction held).
    assert_eq!(r.jobs[1].dr_short_reads, 0);
    assert_eq!(comp["decompressed_reads"], 8);
}

#[test]
fn impossible_combinations_are_named() {
    let sim = Sim::new(1);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(presets::test_min()).unwrap());
    let jobs =
        build_jobs(&parse_jobfile("[w]\nzonemode=zbd\nrw=write\ncompressed_io=1\n").unwrap())
            .unwrap();
    let e = run(&sim, &dev, &jobs).unwrap_err().to_string();
    assert!(e.contains("compressed_io") && e.contains("cczns"), "{e}");

    // Reading chunks of another size than were written.
    let job = "[global]\nzonemode=zbd\nsize=256k\ncompressed_io=1\n\n[w]\nrw=write\nbs=16k\n\n\
        [r]\nstonewall\nrw=read\nbs=4k\n";
    let (r, _) = run_on(presets::test_cczns(), job);
    let e = r.jobs[1]
        .error
        .clone()
        .unwrap_or_else(|| panic!("{:?}", r.jobs[1].read.io_bytes));
    assert!(e.contains("compressed_chunk=16384"), "{e}");

    // Reads with nothing written by compressed writes in this run.
    let (r, _) = run_on(
        presets::test_cczns(),
        "[r]\nzonemode=zbd\nrw=read\ncompressed_io=1\nsize=256k\n",
    );
    assert!(r.jobs[0].error.clone().unwrap().contains("nothing to read"));
}
