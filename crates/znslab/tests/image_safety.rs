//! Device images against what happens to real processes: `kill -9` in the middle of a run, a
//! second process on the same image, readers sharing it, a full host disk.

mod common;
use common::{command, text, znslab, TempDir};

use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn spawn(args: &[&str]) -> Child {
    command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns")
}

fn zones(img: &str) -> Vec<serde_json::Value> {
    let o = znslab(&["nvme", "zns", "report-zones", img, "-o", "json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    v["zone_list"].as_array().expect("zones").clone()
}

fn num(v: &serde_json::Value) -> u64 {
    match v {
        serde_json::Value::String(s) => {
            u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex")
        }
        v => v.as_u64().expect("number"),
    }
}

/// Kill `child` with SIGKILL after `ms` milliseconds.
fn kill_after(mut child: Child, ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
    child.kill().expect("SIGKILL");
    child.wait().expect("waits");
}

/// A fio job killed half way: the zones it wrote stay written (they came back Empty when the
/// zone table was saved only at exit), and what they hold reads back as data, not zeros.
#[test]
fn a_killed_fio_job_leaves_what_it_wrote() {
    let dir = TempDir::new("fio");
    let img = dir.path("dev.img");
    assert!(znslab(&["nvme", "create", &img, "--preset", "zn540"])
        .status
        .success());
    let job = format!("--filename={img}");
    let fio = spawn(&[
        "fio",
        &job,
        "--zonemode=zbd",
        "--name=w",
        "--rw=write",
        "--bs=128k",
        "--size=64g",
        "--iodepth=4",
        "--ioengine=libaio",
    ]);
    kill_after(fio, 1500);
    let zl = zones(&img);
    let written: Vec<&serde_json::Value> = zl
        .iter()
        .filter(|z| num(&z["wp"]) > num(&z["slba"]))
        .collect();
    assert!(!written.is_empty(), "no zone written after 1.5 s of fio");
    // The last block below each write pointer holds data.
    for z in written.iter().take(4) {
        let last = num(&z["wp"]) - 1;
        let out = dir.path("out.bin");
        let o = znslab(&[
            "nvme",
            "read",
            &img,
            "-s",
            &last.to_string(),
            "-c",
            "0",
            "-d",
            &out,
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let b = std::fs::read(&out).expect("reads");
        assert!(b.iter().any(|&x| x != 0), "block {last} reads zeros");
    }
}

/// A read-only YCSB run killed one second in: the database loaded before is all there.
#[test]
fn a_killed_ycsb_run_leaves_the_database_loaded_before() {
    let dir = TempDir::new("ycsb");
    let img = dir.path("db.img");
    let w = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/workloadc");
    let load = znslab(&[
        "ycsb",
        "load",
        "-P",
        w,
        "-p",
        "recordcount=20000",
        "--image",
        &img,
        "--json",
    ]);
    assert!(load.status.success(), "{}", text(&load.stderr));
    for ms in [150, 400, 900] {
        let run = spawn(&[
            "ycsb",
            "run",
            "-P",
            w,
            "-p",
            "recordcount=20000",
            "-p",
            "operationcount=100000000",
            "--image",
            &img,
        ]);
        kill_after(run, ms);
    }
    let run = znslab(&[
        "ycsb",
        "run",
        "-P",
        w,
        "-p",
        "recordcount=20000",
        "-p",
        "operationcount=5000",
        "-p",
        "requestdistribution=uniform",
        "--image",
        &img,
        "--json",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).expect("json");
    let read = &v["phases"][0]["operations"]["READ"];
    assert_eq!(read["count"], 5000, "{v}");
    assert_eq!(read["not_found"], 0, "records lost: {v}");
}

/// `ycsb load` over an image that holds a database refuses without --force (it replaced it
/// silently), and the database is still there.
#[test]
fn ycsb_load_keeps_an_existing_database_unless_forced() {
    let dir = TempDir::new("reload");
    let img = dir.path("db.img");
    let w = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads/workloadc");
    let load = |extra: &[&str]| {
        let mut args = vec![
            "ycsb",
            "load",
            "-P",
            w,
            "-p",
            "recordcount=3000",
            "--image",
            &img,
        ];
        args.extend_from_slice(extra);
        znslab(&args)
    };
    assert!(load(&[]).status.success());
    let again = load(&[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        text(&again.stderr).contains("--force"),
        "{}",
        text(&again.stderr)
    );
    let run = znslab(&[
        "ycsb",
        "run",
        "-P",
        w,
        "-p",
        "recordcount=3000",
        "-p",
        "operationcount=500",
        "-p",
        "requestdistribution=uniform",
        "--image",
        &img,
        "--json",
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).expect("json");
    assert_eq!(v["phases"][0]["operations"]["READ"]["not_found"], 0, "{v}");
    assert!(load(&["--force"]).status.success());
}

/// One process writes an image at a time; a second is told which process holds it. Readers
/// share it with each other, not with a writer.
#[test]
fn a_second_process_on_an_image_is_refused_and_named() {
    let dir = TempDir::new("two");
    let img = dir.path("dev.img");
    assert!(znslab(&["nvme", "create", &img, "--preset", "zn540"])
        .status
        .success());
    let job = format!("--filename={img}");
    let fio = spawn(&[
        "fio",
        &job,
        "--zonemode=zbd",
        "--name=w",
        "--rw=write",
        "--bs=128k",
        "--size=64g",
    ]);
    let pid = fio.id().to_string();
    std::thread::sleep(Duration::from_millis(600));
    let data = dir.path("d.bin");
    std::fs::write(&data, vec![7u8; 4096]).expect("writes");
    let w = znslab(&[
        "nvme",
        "write",
        &img,
        "-s",
        "0x8000000",
        "-c",
        "0",
        "-z",
        "4096",
        "-d",
        &data,
    ]);
    assert!(!w.status.success());
    let e = text(&w.stderr);
    assert!(e.contains("in use by process") && e.contains(&pid), "{e}");
    let r = znslab(&["nvme", "zns", "report-zones", &img]);
    assert!(!r.status.success(), "a reader beside a writer");
    kill_after(fio, 0);
    // Two readers at once, and a reader on a file it may not write.
    let r1 = znslab(&["nvme", "zns", "report-zones", &img]);
    assert!(r1.status.success(), "{}", text(&r1.stderr));
    let mut perms = std::fs::metadata(&img).expect("meta").permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&img, perms).expect("chmod");
    for args in [
        vec!["nvme", "zns", "report-zones", img.as_str()],
        vec!["nvme", "id-ns", img.as_str()],
        vec!["nvme", "zns", "id-ctrl", img.as_str()],
        vec![
            "nvme",
            "read",
            img.as_str(),
            "-s",
            "0",
            "-c",
            "0",
            "-d",
            data.as_str(),
        ],
    ] {
        let o = znslab(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    }
}

/// The file system holding an image fills up: the write that meets it fails naming the image
/// and the error, and the image still opens with every zone as it was. Needs a small tmpfs
/// (root); skipped elsewhere.
#[test]
fn a_full_host_disk_is_reported_at_the_write_that_met_it() {
    let dir = TempDir::new("full");
    let mnt = dir.path("mnt");
    std::fs::create_dir_all(&mnt).expect("mkdir");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=3m", "tmpfs", &mnt])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    struct Umount(String);
    impl Drop for Umount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Umount(mnt.clone());
    for preset in ["test-min", "test-cczns", "test-balloon"] {
        let img = format!("{mnt}/{preset}.img");
        assert!(znslab(&["nvme", "create", &img, "--preset", preset])
            .status
            .success());
        let job = format!("--filename={img}");
        let o = znslab(&[
            "fio",
            &job,
            "--name=w",
            "--rw=write",
            "--bs=16k",
            "--size=6m",
            "--buffer_compress_percentage=0",
        ]);
        let e = text(&o.stderr);
        assert!(
            !o.status.success(),
            "{preset}: fio succeeded on a full disk"
        );
        assert!(
            e.contains(&img) && e.contains("No space left on device"),
            "{preset}: {e}"
        );
        // Every zone is one the device could be in.
        for z in zones(&img) {
            let state = z["state"].as_str().unwrap_or("").to_string();
            assert!(
                ["EMPTY", "FULL", "CLOSED", "IMP_OPENED", "EXP_OPENED"]
                    .iter()
                    .any(|s| state.contains(s)),
                "{preset}: {z}"
            );
        }
        std::fs::remove_file(&img).expect("removes");
    }
}

/// The real-process torture, a few seeds (the README's `torture --kill`).
#[test]
fn torture_kill_a_few_seeds() {
    let o = znslab(&["torture", "--kill", "--seeds", "6", "--seed", "11"]);
    let s = text(&o.stdout);
    assert!(o.status.success(), "{s}{}", text(&o.stderr));
    assert!(s.contains("6 seeds") && s.contains("0 failed"), "{s}");
}

/// The real-process torture of the F2FS-like file system on ZNS+ (both images, every file
/// call logged by the child): seeds 1-4 kill the writer at 1.5 s, 3.5 s, 0.2 s and 0.08 s of
/// wall time, two of them again while a second process mounts and reads.
#[test]
fn torture_kill_lfs_a_few_seeds() {
    let o = znslab(&[
        "torture",
        "--kill",
        "--workload",
        "lfs",
        "--seeds",
        "4",
        "--seed",
        "1",
    ]);
    let s = text(&o.stdout);
    assert!(o.status.success(), "{s}{}", text(&o.stderr));
    assert!(s.contains("4 seeds") && s.contains("0 failed"), "{s}");
    // The late kills land after the writers filled the volume: compaction ran before them.
    let took: u64 = s
        .split("the devices took ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the lfs line");
    assert!(took > 0, "{s}");
}

/// Flip one byte of the image where `needle` is stored.
fn flip_byte_of(img: &str, needle: &[u8], at: usize) {
    let mut bytes = std::fs::read(img).expect("reads");
    let pos = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the stored bytes are in the image");
    bytes[pos + at] ^= 0x40;
    std::fs::write(img, &bytes).expect("writes");
}

/// Random bytes, the same each time.
fn noise(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) as u8
        })
        .collect()
}

/// A byte changed in the image after it was stored fails the read with Unrecovered Read
/// Error, as a drive's ECC would, instead of coming back as wrong data: plain blocks on every
/// design, and a compressed chunk on CCZNS.
#[test]
fn a_flipped_stored_byte_fails_the_read_as_a_drive_would() {
    let dir = TempDir::new("flip");
    for (preset, lba) in [
        ("test-min", "0"),
        ("test-cczns", "0"),
        ("test-balloon", "0"),
        ("test-tcssd", "100"),
    ] {
        let img = dir.path(&format!("{preset}.img"));
        assert!(znslab(&["nvme", "create", &img, "--preset", preset])
            .status
            .success());
        let block = noise(4096, 3);
        let data = dir.path("block.bin");
        std::fs::write(&data, &block).expect("writes");
        let o = znslab(&[
            "nvme", "write", &img, "-s", lba, "-c", "0", "-z", "4096", "-d", &data,
        ]);
        assert!(o.status.success(), "{preset}: {}", text(&o.stderr));
        let out = dir.path("out.bin");
        let o = znslab(&["nvme", "read", &img, "-s", lba, "-c", "0", "-d", &out]);
        assert!(o.status.success(), "{preset}: {}", text(&o.stderr));
        flip_byte_of(&img, &block[100..164], 10);
        let o = znslab(&["nvme", "read", &img, "-s", lba, "-c", "0", "-d", &out]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{preset}: a flipped byte read back"
        );
        assert!(
            text(&o.stderr).contains("UNRECOVERED_READ_ERROR"),
            "{preset}: {}",
            text(&o.stderr)
        );
    }
    // A CCZNS compressed chunk: 8000 bytes of about ratio 2 in one compressed write.
    let img = dir.path("cw.img");
    assert!(znslab(&["nvme", "create", &img, "--preset", "test-cczns"])
        .status
        .success());
    let mut chunk = noise(8192, 7);
    for (i, b) in chunk.iter_mut().enumerate() {
        if i % 256 >= 128 || i >= 8000 {
            *b = 0;
        }
    }
    let mut md = vec![0u8; 128];
    md[..4].copy_from_slice(&1u32.to_le_bytes());
    md[4..8].copy_from_slice(&8000u32.to_le_bytes());
    let (cw, cwmd) = (dir.path("cw.bin"), dir.path("md.bin"));
    std::fs::write(&cw, &chunk).expect("writes");
    std::fs::write(&cwmd, &md).expect("writes");
    let passthru = |extra: &[&str]| {
        let mut args = vec!["nvme", "io-passthru", img.as_str()];
        args.extend_from_slice(extra);
        znslab(&args)
    };
    let o = passthru(&[
        "-O",
        "0x01",
        "-l",
        "8192",
        "-m",
        "128",
        "-6",
        "0x10001",
        "-i",
        &cw,
        "--metadata",
        &cwmd,
        "-w",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let dr = [
        "-O", "0x02", "-l", "8192", "-m", "128", "-6", "0x10001", "-7", "0x200", "-r",
    ];
    assert!(passthru(&dr).status.success());
    // zstd's frame magic starts the stored chunk; a byte inside its compressed data flips.
    flip_byte_of(&img, &[0x28, 0xb5, 0x2f, 0xfd], 40);
    let o = passthru(&dr);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a flipped compressed byte read back"
    );
    assert!(
        text(&o.stderr).contains("UNRECOVERED_READ_ERROR"),
        "{}",
        text(&o.stderr)
    );
}

/// A write job run twice on an image with iodepth > 1: the second meets full zones, resets
/// them, and writes them again in order (its first write waited for the reset while the
/// others were given the zone's start too, and failed with ZONE_INVALID_WRITE).
#[test]
fn a_write_job_run_again_with_a_deep_queue_resets_and_rewrites_its_zones() {
    let dir = TempDir::new("again");
    let img = dir.path("dev.img");
    assert!(znslab(&["nvme", "create", &img, "--preset", "test-min"])
        .status
        .success());
    let job = format!("--filename={img}");
    for run in 0..3 {
        let o = znslab(&[
            "fio",
            &job,
            "--zonemode=zbd",
            "--name=w",
            "--rw=write",
            "--bs=16k",
            "--iodepth=4",
            "--ioengine=libaio",
            "--size=1m",
            "--output-format=json",
        ]);
        assert!(
            o.status.success(),
            "run {run}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(v["jobs"][0]["write"]["io_bytes"], 1 << 20, "run {run}");
    }
}
