//! fio job options beyond the zoned ones, run on the tiny devices: verify, rw mixes and the
//! `:N` modifier, trims, rate, ramp_time, thinktime, loops, wait_for, and zonemode=none on a
//! zoned device behaving as fio does on a zoned block device (writes off the write pointer
//! fail).

use device::{presets, Controller, DeviceConfig, DeviceHandle};
use sim::Sim;
use workload::fio::{build_jobs, parse_jobfile, run, FioError, RunResult};

fn run_on(preset: DeviceConfig, job: &str) -> Result<RunResult, FioError> {
    let sim = Sim::new(3);
    let dev = DeviceHandle::new(&sim, Controller::in_memory(preset).expect("valid"));
    let jobs = build_jobs(&parse_jobfile(job)?)?;
    run(&sim, &dev, &jobs)
}

fn ok(preset: DeviceConfig, job: &str) -> RunResult {
    let r = run_on(preset, job).expect("runs");
    for j in &r.jobs {
        assert_eq!(j.error, None, "job {}", j.spec.name);
    }
    r
}

#[test]
fn verify_reads_back_what_was_written_and_catches_overwrites() {
    let r = ok(
        presets::test_tcssd(),
        "[w]\nrw=randwrite\nbs=4k\nsize=256k\nverify=crc32c\niodepth=4\nioengine=libaio\n",
    );
    assert_eq!(r.jobs[0].write.io_bytes, 256 << 10);
    assert_eq!(r.jobs[0].read.io_bytes, 256 << 10, "every write read back");
    // verify_backlog: reads interleave with the writes, same total.
    let r = ok(
        presets::test_min(),
        "[w]\nzonemode=zbd\nrw=write\nbs=16k\nsize=512k\nverify=sha256\nverify_backlog=4\n",
    );
    assert_eq!(r.jobs[0].read.io_bytes, 512 << 10);
    // A later job overwrites a block without verify: the verifying reader finds it changed.
    let r = run_on(
        presets::test_tcssd(),
        "[global]\nbs=4k\nsize=64k\n[a]\nrw=write\nverify=md5\ndo_verify=0\n\
         [b]\nstonewall\nrw=write\noffset=16k\nsize=4k\n[c]\nstonewall\nrw=read\nverify=md5\n",
    )
    .expect("runs");
    assert_eq!(r.jobs[0].read.ios, 0, "do_verify=0 reads nothing back");
    let e = r.jobs[2].error.as_deref().expect("verify failure");
    assert!(e.contains("verify (md5)") && e.contains("LBA 4"), "{e}");
}

#[test]
fn mixes_modifiers_and_trims() {
    let r = ok(
        presets::test_tcssd(),
        "[m]\nrw=randrw\nrwmixread=75\nbs=4k\nsize=1m\nio_size=4m\n",
    );
    let (rd, wr) = (r.jobs[0].read.ios, r.jobs[0].write.ios);
    assert_eq!(rd + wr, 1024);
    assert!((700..840).contains(&rd), "{rd} reads of 1024");
    // write:12k writes one 4k block in every 16k.
    let r = ok(
        presets::test_tcssd(),
        "[h]\nrw=write:12k\nbs=4k\nsize=256k\nnumber_ios=16\n",
    );
    assert_eq!(r.jobs[0].write.ios, 16);
    // Trims deallocate on a conventional namespace; trimwrite trims then writes each block.
    let r = ok(
        presets::test_tcssd(),
        "[t]\nrw=trimwrite\nbs=16k\nsize=256k\n[r]\nstonewall\nrw=randtrim\nbs=4k\nsize=64k\n",
    );
    assert_eq!(
        (r.jobs[0].trim.io_bytes, r.jobs[0].write.io_bytes),
        (256 << 10, 256 << 10)
    );
    assert_eq!(r.jobs[1].trim.io_bytes, 64 << 10);
    // On a zoned device trims need zonemode=zbd.
    let e = run_on(presets::test_min(), "[t]\nrw=trim\n").expect_err("zoned trim");
    assert_eq!(e.option.as_deref(), Some("rw"));
}

#[test]
fn zonemode_none_on_a_zoned_device_fails_like_fio_on_a_zoned_block_device() {
    // fio's default zonemode is none: a random write lands off the write pointer.
    let r = run_on(presets::test_min(), "[w]\nrw=randwrite\nbs=4k\nsize=1m\n").expect("runs");
    let e = r.jobs[0].error.as_deref().expect("a write error");
    assert!(e.starts_with("write at LBA"), "{e}");
    // A sequential write from a zone start is what a zoned device takes.
    ok(presets::test_min(), "[w]\nrw=write\nbs=4k\nsize=1m\n");
}

#[test]
fn rate_ramp_thinktime_loops_and_wait_for() {
    // 1 MiB at 10 MiB/s takes about 100 ms.
    let r = ok(
        presets::test_tcssd(),
        "[w]\nrw=write\nbs=4k\nsize=1m\nrate=10m\n",
    );
    let t = r.jobs[0].runtime_ns;
    assert!((95_000_000..130_000_000).contains(&t), "{t}");
    // rate_iops=100 with 4k blocks: 20 I/Os take about 200 ms.
    let r = ok(
        presets::test_tcssd(),
        "[w]\nrw=read\nbs=4k\nnumber_ios=20\nrate_iops=100\n",
    );
    assert!(
        r.jobs[0].runtime_ns > 180_000_000,
        "{}",
        r.jobs[0].runtime_ns
    );
    // thinktime of 1 ms after every 2 blocks: 10 blocks take at least 5 ms.
    let r = ok(
        presets::test_tcssd(),
        "[w]\nrw=read\nbs=4k\nsize=40k\nthinktime=1ms\nthinktime_blocks=2\n",
    );
    assert!(
        r.jobs[0].runtime_ns >= 4_000_000,
        "{}",
        r.jobs[0].runtime_ns
    );
    // ramp_time: I/Os of the first 10 ms are not counted; the runtime follows it.
    let r = ok(
        presets::test_tcssd(),
        "[w]\nrw=randread\nbs=4k\nsize=1m\ntime_based\nruntime=20ms\nramp_time=10ms\n",
    );
    let n = r.jobs[0].read.ios;
    let all = ok(
        presets::test_tcssd(),
        "[w]\nrw=randread\nbs=4k\nsize=1m\ntime_based\nruntime=30ms\n",
    )
    .jobs[0]
        .read
        .ios;
    assert!(n > 0 && n < all, "{n} of {all}");
    // loops=3 does the region three times.
    let r = ok(
        presets::test_tcssd(),
        "[w]\nrw=read\nbs=4k\nsize=64k\nloops=3\n",
    );
    assert_eq!(r.jobs[0].read.io_bytes, 3 * (64 << 10));
    // wait_for: b and c start after a, together.
    let r = ok(
        presets::test_tcssd(),
        "[global]\nbs=4k\nsize=64k\n[a]\nrw=write\n[b]\nwait_for=a\nrw=read\n[c]\nwait_for=a\nrw=read\n",
    );
    assert_eq!(
        r.jobs.iter().map(|j| j.group).collect::<Vec<_>>(),
        vec![0, 1, 1]
    );
}

/// zonemode=strided (fio's io_u.c): zonesize bytes in each zonerange window, then zoneskip
/// further on, the skipped bytes counting as done; a zonesize alone means strided.
#[test]
fn strided_zones_read_a_part_of_each_window() {
    let r = ok(
        presets::test_tcssd(),
        "[s]\nrw=read\nbs=4k\nsize=512k\nzonemode=strided\nzonesize=16k\nzonerange=64k\nzoneskip=64k\n",
    );
    let b = r.jobs[0].read.io_bytes;
    assert!((96 << 10..=120 << 10).contains(&b), "{b}");
    let r = ok(
        presets::test_tcssd(),
        "[s]\nrw=randread\nbs=4k\nsize=512k\nzonesize=16k\n",
    );
    assert_eq!(r.jobs[0].read.io_bytes, 512 << 10);
    let e = run_on(presets::test_tcssd(), "[s]\nzonemode=strided\n").expect_err("no zonesize");
    assert_eq!(e.option.as_deref(), Some("zonesize"));
}

#[test]
fn rate_process_poisson_keeps_the_mean_rate_with_uneven_gaps_and_a_rate_stops_at_runtime() {
    let job = |process: &str| {
        format!(
            "[r]\nrw=randread\nbs=4k\nsize=1m\niodepth=32\nioengine=libaio\nrate_iops=50\ntime_based\nruntime=20s\nrate_process={process}\n"
        )
    };
    let linear = ok(presets::test_tcssd(), &job("linear"));
    let poisson = ok(presets::test_tcssd(), &job("poisson"));
    // 50 I/Os a second for 20 s: about 1000 either way, and never past the runtime (a wait
    // that ends after it ends the job, as fio's runtime check does).
    let (l, p) = (linear.jobs[0].read.ios, poisson.jobs[0].read.ios);
    assert!((990..=1001).contains(&l), "linear {l}");
    assert!((850..=1150).contains(&p), "poisson {p}");
    assert_ne!(l, p, "poisson gaps are drawn, not even");
    for r in [&linear, &poisson] {
        assert!(
            r.jobs[0].runtime_ns <= 20_000_000_000,
            "{}",
            r.jobs[0].runtime_ns
        );
    }
    let e = build_jobs(&parse_jobfile("[r]\nrate_process=burst\n").expect("parses"))
        .expect_err("refused");
    assert_eq!(e.option.as_deref(), Some("rate_process"));
}

/// The distinct 4 KiB blocks among the first `blocks` of the device.
fn distinct_blocks(dev: &DeviceHandle, blocks: u64) -> usize {
    use device::Command;
    let mut seen = std::collections::BTreeSet::new();
    dev.with(|c| {
        for lba in 0..blocks {
            let mut b = vec![0u8; 4096];
            let done = c.submit(
                sim::SimInstant::from_ns(0),
                Command::Read {
                    slba: lba,
                    nlb: 1,
                    data: &mut b,
                    metadata: &mut [],
                },
            );
            assert!(done.status.is_success());
            seen.insert(b);
        }
    });
    seen.len()
}

#[test]
fn dedupe_repeats_buffers_as_fio_does() {
    let count = |job: &str| {
        let sim = Sim::new(3);
        let dev = DeviceHandle::new(
            &sim,
            Controller::in_memory(presets::test_tcssd()).expect("ok"),
        );
        let jobs = build_jobs(&parse_jobfile(job).expect("parse")).expect("valid");
        let r = run(&sim, &dev, &jobs).expect("runs");
        assert_eq!(r.jobs[0].error, None);
        distinct_blocks(&dev, 64)
    };
    let base = "[w]\nrw=write\nbs=4k\nsize=256k\n";
    assert_eq!(count(base), 64, "without dedupe every buffer is unique");
    // repeat: every write after the first repeats it.
    assert_eq!(count(&format!("{base}dedupe_percentage=100\n")), 1);
    let half = count(&format!("{base}dedupe_percentage=50\n"));
    assert!((20..44).contains(&half), "{half} unique of 64 at 50%");
    // working_set of 5% of 256 KiB: duplicates come from the first 4 buffers only.
    let ws = count(&format!(
        "{base}dedupe_percentage=100\ndedupe_mode=working_set\ndedupe_working_set_percentage=5\n"
    ));
    assert!(ws <= 4, "{ws} distinct blocks");
}

#[test]
fn continue_on_error_counts_errors_and_goes_on() {
    // Random writes without zone awareness on a zoned device fail off the write pointer.
    let job = "[w]\nrw=randwrite\nbs=4k\nsize=64k\n";
    let r = run_on(presets::test_min(), job).expect("runs");
    assert_eq!(r.jobs[0].errno, 5, "EIO stops the job");
    assert!(r.jobs[0].write.ios < 16);
    let r = run_on(
        presets::test_min(),
        &format!("{job}continue_on_error=write\n"),
    )
    .expect("runs");
    let j = &r.jobs[0];
    assert_eq!((j.error.as_deref(), j.first_error), (None, 5));
    assert_eq!(
        j.write.ios + j.total_err,
        16,
        "every I/O issued, the failed ones counted"
    );
    assert!(j.total_err > 0);
    // ignore_error replaces the non-fatal list: EIO is fatal again for writes.
    let r = run_on(presets::test_min(), &format!("{job}ignore_error=,ENOSPC\n")).expect("runs");
    assert_eq!((r.jobs[0].errno, r.jobs[0].total_err), (5, 0));
    // Reads are not covered by continue_on_error=write.
    let r = run_on(
        presets::test_min(),
        "[r]\nrw=randread\nbs=4k\nsize=64k\nread_beyond_wp=0\ncontinue_on_error=write\n",
    );
    assert!(r.is_ok());
}

#[test]
fn reads_and_writes_take_their_own_block_sizes() {
    let r = ok(
        presets::test_tcssd(),
        "[m]\nrw=randrw\nbs=4k,16k\nsize=1m\nio_size=2m\n",
    );
    let j = &r.jobs[0];
    assert_eq!(j.read.io_bytes, j.read.ios * 4096);
    assert_eq!(j.write.io_bytes, j.write.ios * 16384);
    let r = ok(
        presets::test_tcssd(),
        "[m]\nrw=randrw\nbssplit=4k/50:8k/50,64k\nsize=1m\nio_size=4m\n",
    );
    let j = &r.jobs[0];
    assert_eq!(j.write.io_bytes, j.write.ios * 65536);
    let avg = j.read.io_bytes as f64 / j.read.ios as f64;
    assert!((5000.0..7300.0).contains(&avg), "reads average {avg} bytes");
}

#[test]
fn num_range_trims_several_ranges_per_io() {
    let r = ok(
        presets::test_tcssd(),
        "[t]\nrw=randtrim\nbs=4k\nnum_range=8\nsize=256k\n",
    );
    let t = &r.jobs[0].trim;
    assert_eq!(t.io_bytes, 256 << 10);
    assert_eq!(t.ios, 8, "eight ranges of 4 KiB in each of 8 trims");
    let e = run_on(
        presets::test_tcssd(),
        "[w]\nrw=write\nnum_range=8\nsize=64k\n",
    )
    .expect_err("writes have one range");
    assert_eq!(e.option.as_deref(), Some("num_range"));
}

#[test]
fn racing_writers_verify_only_without_the_write_sequence() {
    // fio's atomic-verify.fio: many jobs write and verify the same blocks.
    let job = "[w]\nrw=randwrite\nbs=4k\nsize=128k\niodepth=8\nioengine=libaio\nverify=crc64\natomic=1\nnumjobs=6\n";
    let r = run_on(presets::test_tcssd(), job).expect("runs");
    assert!(
        r.jobs.iter().any(|j| j.errno == 84),
        "with the write sequence, another job's block fails verification"
    );
    let r = ok(
        presets::test_tcssd(),
        &format!("{job}verify_write_sequence=0\n"),
    );
    assert!(r.jobs.iter().all(|j| j.read.ios > 0));
    let e = run_on(
        presets::test_tcssd(),
        "[w]\nrw=write\nbs=8k\natomic=1\nsize=64k\n",
    )
    .expect_err("past the atomic write unit");
    assert_eq!(e.option.as_deref(), Some("atomic"));
}

#[test]
fn buffer_pattern_and_zero_buffers_fill_what_is_written() {
    let written = |job: &str| {
        let sim = Sim::new(3);
        let dev = DeviceHandle::new(
            &sim,
            Controller::in_memory(presets::test_tcssd()).expect("ok"),
        );
        let jobs = build_jobs(&parse_jobfile(job).expect("parse")).expect("valid");
        let r = run(&sim, &dev, &jobs).expect("runs");
        assert_eq!(r.jobs[0].error, None);
        let mut b = vec![0u8; 8192];
        let done = dev.with(|c| {
            c.submit(
                sim::SimInstant::from_ns(0),
                device::Command::Read {
                    slba: 2,
                    nlb: 2,
                    data: &mut b,
                    metadata: &mut [],
                },
            )
        });
        assert!(done.status.is_success());
        b
    };
    let base = "[w]\nrw=write\nbs=8k\nsize=64k\n";
    assert!(written(&format!("{base}zero_buffers\n"))
        .iter()
        .all(|&b| b == 0));
    let p = written(&format!("{base}buffer_pattern=0xdeadbeef\"ab\"\n"));
    assert_eq!(
        &p[..12],
        &[0xde, 0xad, 0xbe, 0xef, b'a', b'b', 0xde, 0xad, 0xbe, 0xef, b'a', b'b']
    );
    // With buffer_compress_percentage the pattern fills each chunk's compressible part.
    let c = written(&format!(
        "{base}buffer_pattern=0x11\nbuffer_compress_percentage=50\nbuffer_compress_chunk=4096\n"
    ));
    assert!(c[2048..4096].iter().all(|&b| b == 0x11));
    assert!(c[..2048].iter().any(|&b| b != 0x11));
    let r = written(base);
    assert!(
        r.iter().filter(|&&b| b == 0).count() < 200,
        "random by default"
    );
}

#[test]
fn fsync_every_n_writes_is_counted_as_fio_counts_syncs() {
    let r = ok(
        presets::test_tcssd(),
        "[w]\nrw=write\nbs=4k\nsize=256k\nfsync=4\nfdatasync=16\n",
    );
    // 64 writes: 16 fsyncs and 4 fdatasyncs, none sent to a device without a volatile cache.
    assert_eq!(r.jobs[0].sync.count(), 20);
}

#[test]
fn max_latency_fails_a_slow_job_with_etimedout() {
    let job = "[w]\nzonemode=zbd\nrw=write\nbs=64k\nsize=1m\nioengine=libaio\niodepth=8\n";
    let r = ok(presets::test_min(), &format!("{job}max_latency=10s\n"));
    assert_eq!(r.jobs[0].errno, 0);
    let r = run_on(presets::test_min(), &format!("{job}max_latency=100\n")).expect("runs");
    assert_eq!(r.jobs[0].errno, 110, "{:?}", r.jobs[0].error);
    // Per direction: reads have no limit here, writes 100 us.
    let r = run_on(presets::test_min(), &format!("{job}max_latency=,100\n")).expect("runs");
    assert_eq!(r.jobs[0].errno, 110);
}

#[test]
fn percentage_random_and_rw_sequencer_shape_random_offsets() {
    // On a zoned device without zonemode, only writes at the write pointer succeed: a
    // sequential pattern passes, a random one fails.
    let zone = "[w]\nrw=randwrite\nbs=4k\nsize=256k\n";
    let r = run_on(presets::test_min(), &format!("{zone}percentage_random=0\n")).expect("runs");
    assert_eq!(r.jobs[0].error, None, "all sequential");
    assert_eq!(r.jobs[0].write.ios, 64);
    let r = run_on(
        presets::test_min(),
        &format!("{zone}percentage_sequential=50\n"),
    )
    .expect("runs");
    assert!(r.jobs[0].error.is_some(), "half random");
    // randwrite:4 with percentage_random=0: sequential either way, but identical repeats
    // each offset four times (the repeat is not at the write pointer).
    let runs = "[w]\nrw=randwrite:4\nbs=4k\nsize=256k\npercentage_random=0\n";
    let r = run_on(presets::test_min(), runs).expect("runs");
    assert_eq!(r.jobs[0].error, None);
    let r = run_on(
        presets::test_min(),
        &format!("{runs}rw_sequencer=identical\n"),
    )
    .expect("runs");
    assert_eq!(r.jobs[0].write.ios, 1, "{:?}", r.jobs[0].error);
    assert!(r.jobs[0].error.is_some());
}

#[test]
fn a_percentage_offset_is_aligned_as_fio_aligns_it() {
    let written_at = |job: &str| {
        let sim = Sim::new(3);
        let dev = DeviceHandle::new(
            &sim,
            Controller::in_memory(presets::test_tcssd()).expect("ok"),
        );
        let jobs = build_jobs(&parse_jobfile(job).expect("parse")).expect("valid");
        let r = run(&sim, &dev, &jobs).expect("runs");
        assert_eq!(r.jobs[0].error, None);
        let blocks = dev.with(|c| c.identify().nsze);
        (0..blocks)
            .find(|&lba| {
                let mut b = vec![0u8; 4096];
                dev.with(|c| {
                    c.submit(
                        sim::SimInstant::from_ns(0),
                        device::Command::Read {
                            slba: lba,
                            nlb: 1,
                            data: &mut b,
                            metadata: &mut [],
                        },
                    )
                });
                b.iter().any(|&x| x != 0)
            })
            .expect("a written block")
    };
    let job = "[w]\nrw=write\nbs=4k\nsize=4k\noffset=10%\n";
    let nsze = Controller::in_memory(presets::test_tcssd())
        .expect("ok")
        .identify()
        .nsze;
    let tenth = (nsze * 4096 / 10).div_ceil(4096);
    assert_eq!(written_at(job), tenth, "aligned up to the block size");
    assert_eq!(
        written_at(&format!("{job}offset_align=1m\n")),
        (tenth * 4096).div_ceil(1 << 20) * 256
    );
}

#[test]
fn thinktime_blocks_count_completions_or_issues() {
    let job = "[r]\nrw=randread\nbs=4k\nsize=64k\nnumber_ios=16\nioengine=libaio\niodepth=4\nthinktime=10ms\nthinktime_blocks=4\n";
    for kind in ["complete", "issue"] {
        let r = ok(
            presets::test_tcssd(),
            &format!("{job}thinktime_blocks_type={kind}\n"),
        );
        let t = r.jobs[0].runtime_ns;
        // 16 I/Os, a 10 ms pause after every 4: at least three pauses.
        assert!(t >= 30_000_000, "{kind}: {t} ns");
        assert_eq!(r.jobs[0].read.ios, 16);
    }
    let e = run_on(
        presets::test_tcssd(),
        &format!("{job}thinktime_blocks_type=later\n"),
    )
    .expect_err("refused");
    assert_eq!(e.option.as_deref(), Some("thinktime_blocks_type"));
}

#[test]
fn bs_is_seq_rand_and_bs_unaligned_choose_the_sizes() {
    // rw=randread with bs_is_seq_rand: the random I/Os take the write size (16k).
    let r = ok(
        presets::test_tcssd(),
        "[r]\nrw=randread\nbs=4k,16k\nbs_is_seq_rand=1\nsize=1m\nio_size=256k\n",
    );
    assert_eq!(r.jobs[0].read.io_bytes, r.jobs[0].read.ios * 16384);
    // bsrange=8k-24k: multiples of 8k only, or with bs_unaligned any whole 4k block count.
    // One I/O per run, over several seeds.
    let odd = |extra: &str| {
        (1..=24).any(|seed| {
            let job = format!(
                "[r]\nrw=randread\nbsrange=8k-24k\nsize=1m\nnumber_ios=1\nrandseed={seed}\n{extra}"
            );
            !ok(presets::test_tcssd(), &job).jobs[0]
                .read
                .io_bytes
                .is_multiple_of(8192)
        })
    };
    assert!(!odd(""), "multiples of 8k");
    assert!(odd("bs_unaligned=1\n"), "12k and 20k too");
}
