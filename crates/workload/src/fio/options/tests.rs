//! Tests of job building: globals, clones, errors, fio's defaults and zone options.

use super::*;
use crate::fio::parse_jobfile;

#[test]
fn globals_jobs_and_clones() {
    let s = parse_jobfile("[global]\nbs=128k\niodepth=4\n[w]\nrw=write\nnumjobs=3\noffset_increment=1g\n[r]\nstonewall\nrw=randread\nioengine=psync\n").expect("parse");
    let jobs = build_jobs(&s).expect("valid");
    assert_eq!(jobs.len(), 4);
    assert_eq!(jobs[0].bs, 128 << 10);
    assert_eq!(
        jobs.iter().map(|j| j.clone).collect::<Vec<_>>(),
        vec![0, 1, 2, 0]
    );
    assert!(!jobs[0].stonewall && jobs[3].stonewall);
    assert_eq!(jobs[3].iodepth, 1);
    assert_eq!(jobs[3].pattern, Pattern::Random);
}

#[test]
fn errors_name_job_and_option() {
    let e = build_jobs(&parse_jobfile("[a]\nbs=12q\n").expect("parse")).expect_err("bad size");
    assert_eq!(
        (e.job.as_deref(), e.option.as_deref()),
        (Some("a"), Some("bs"))
    );
    let e = build_jobs(&parse_jobfile("[a]\nfrobnicate=1\n").expect("parse")).expect_err("unknown");
    assert_eq!(e.option.as_deref(), Some("frobnicate"));
    let e = build_jobs(&parse_jobfile("[a]\nverify=adler\n").expect("parse")).expect_err("verify");
    assert_eq!(e.option.as_deref(), Some("verify"));
    let e =
        build_jobs(&parse_jobfile("[a]\nverify_only\n").expect("parse")).expect_err("verify_only");
    assert!(e.to_string().contains("not supported"), "{e}");
    let e = build_jobs(&parse_jobfile("[a]\nioengine=rbd\n").expect("parse")).expect_err("rbd");
    assert!(e.to_string().contains("network"), "{e}");
    let e = build_jobs(&parse_jobfile("[a]\nzonemode=none\nzonesize=256m\n").expect("parse"))
        .expect_err("zonesize with zonemode=none");
    assert_eq!(e.option.as_deref(), Some("zonesize"));
    let e =
        build_jobs(&parse_jobfile("[a]\ntime_based\n").expect("parse")).expect_err("no runtime");
    assert_eq!(e.option.as_deref(), Some("time_based"));
    assert!(build_jobs(&parse_jobfile("[global]\nbs=4k\n").expect("parse")).is_err());
    // The second clone's offset would wrap around to the first one's.
    let e = build_jobs(
        &parse_jobfile("[a]\nnumjobs=2\noffset_increment=18446744073709551615\n").expect("parse"),
    )
    .expect_err("offset past any device");
    assert_eq!(e.option.as_deref(), Some("offset_increment"));
}

/// A stonewall in [global] applies to every job, as every global option does in fio:
/// each job waits for the one before it.
#[test]
fn stonewall_in_global_applies_to_every_job() {
    let jobs = build_jobs(
        &parse_jobfile("[global]\nstonewall\nrw=write\n[a]\n[b]\n[c]\nstonewall=0\n")
            .expect("parse"),
    )
    .expect("valid");
    assert_eq!(
        jobs.iter().map(|j| j.stonewall).collect::<Vec<_>>(),
        vec![true, true, false]
    );
}

#[test]
fn fio_defaults_and_zone_options() {
    let j = &build_jobs(&parse_jobfile("[a]\n").expect("parse")).expect("valid")[0];
    assert_eq!(j.zonemode, ZoneMode::None, "fio's default zonemode is none");
    let (jobs, notices) = build_jobs_with_notices(
        &parse_jobfile(
            "[global]\nzonemode=zbd\nzonesize=256M\nmax_open_zones=32\nrw=randwrite\n\
             direct=1\n[d]\nsize=8z\noffset=524z\nzone_reset_threshold=0.7\n\
             zone_reset_frequency=0.125\njob_max_open_zones=4\n",
        )
        .expect("parse"),
    )
    .expect("valid");
    let j = &jobs[0];
    assert_eq!(
        (j.zonemode, j.zone_size, j.size, j.offset),
        (
            ZoneMode::Zbd,
            Some(256 << 20),
            Some(Size::Zones(8)),
            Size::Zones(524)
        )
    );
    assert_eq!(
        (
            j.max_open_zones,
            j.job_max_open_zones,
            j.zone_reset_threshold,
            j.zone_reset_frequency
        ),
        (32, 4, 0.7, 0.125)
    );
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("'direct'"), "{notices:?}");
}

#[test]
fn rw_forms_and_mixes() {
    let jobs = build_jobs(
        &parse_jobfile("[a]\nrw=randrw\nrwmixwrite=30\n[b]\nrw=write:112k\n[c]\nrw=trimwrite\n")
            .expect("parse"),
    )
    .expect("valid");
    assert_eq!((jobs[0].mix, jobs[0].rwmixread), (Mix::ReadWrite, 70));
    assert!(jobs[0].reads() && jobs[0].writes() && !jobs[0].trims());
    assert_eq!(jobs[1].rw_modifier, Some(112 << 10));
    assert!(jobs[2].writes() && jobs[2].trims() && !jobs[2].reads());
}

#[test]
fn options_ignored_only_at_fios_default_refuse_other_values() {
    for (opt, ok, bad) in [
        ("kb_base", "1024", "1000"),
        ("unified_rw_reporting", "none", "both"),
    ] {
        let job = |v: &str| parse_jobfile(&format!("[a]\n{opt}={v}\n")).expect("parse");
        assert!(build_jobs(&job(ok)).is_ok(), "{opt}={ok}");
        let e = build_jobs(&job(bad)).expect_err("refused");
        assert_eq!(e.option.as_deref(), Some(opt));
        assert!(e.to_string().contains("only"), "{e}");
    }
}

#[test]
fn block_sizes_per_direction_as_fio_parses_them() {
    let jobs = |text: &str| build_jobs(&parse_jobfile(text).expect("parse")).expect("valid");
    let range = |j: &JobSpec| {
        j.block_sizes
            .iter()
            .map(|b| (b.min >> 10, b.max >> 10))
            .collect::<Vec<_>>()
    };
    // fio's HOWTO, bs: one value for all; "8k,32k" is 32k for writes and trims; a trailing
    // comma leaves trims at the default; an empty first part leaves reads alone.
    assert_eq!(range(&jobs("[a]\nbs=256k\n")[0]), [(256, 256); 3]);
    assert_eq!(
        range(&jobs("[a]\nbs=8k,32k\n")[0]),
        [(8, 8), (32, 32), (32, 32)]
    );
    assert_eq!(
        range(&jobs("[a]\nbs=8k,32k,\n")[0]),
        [(8, 8), (32, 32), (4, 4)]
    );
    assert_eq!(range(&jobs("[a]\nbs=,8k\n")[0]), [(4, 4), (8, 8), (8, 8)]);
    assert_eq!(
        range(&jobs("[a]\nbsrange=4k-16k,8k\n")[0]),
        [(4, 16), (8, 8), (8, 8)]
    );
    let j = &jobs("[a]\nbs=,8k\n")[0];
    assert_eq!((j.bs_min, j.bs), (4096, 8192));
    // bssplit as fio's str_split_parse: reads, then writes (and trims with two sets).
    let j = &jobs("[a]\nbssplit=64k/40:1024k/60,1024k/100\n")[0];
    let split = |d: usize| j.block_sizes[d].split.clone();
    assert_eq!(split(0), vec![(64 << 10, 40), (1 << 20, 60)]);
    assert_eq!(split(1), vec![(1 << 20, 100)]);
    assert_eq!(split(2), vec![(1 << 20, 100)]);
    assert_eq!((j.bs_min, j.bs), (64 << 10, 1 << 20));
    // A split wins over a bs given after it (fio's get_next_buflen looks at the split first).
    let j = &jobs("[global]\nbssplit=4k/50:8k/50\n[a]\nbs=64k\n")[0];
    assert_eq!(j.block_sizes[1].sizes(), vec![4096, 8192]);
    assert_eq!(j.bs, 8192);
}
