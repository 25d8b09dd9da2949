//! An image holds, at every instant, what the commands that completed left: a process that
//! dies without closing the image (here: `drop_without_saving`, as a kill) loses nothing, on
//! every design; and an image is held by one process at a time.

use device::{presets, Command, Controller, DeviceConfig, OpenMode, Status, ZoneAction, ZoneState};
use sim::{Rng, SimInstant};

struct Tmp(std::path::PathBuf);
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn tmp(tag: &str) -> Tmp {
    Tmp(std::env::temp_dir().join(format!("znslab-crash-{tag}-{}.img", std::process::id())))
}

/// Compressible blocks (about ratio 2), different every time.
fn blocks(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut d = vec![0u8; n * 4096];
    for chunk in d.chunks_mut(4096) {
        rng.fill(&mut chunk[..2048]);
    }
    d
}

fn write(c: &mut Controller, slba: u64, data: &[u8]) -> Status {
    c.submit(
        SimInstant::ZERO,
        Command::Write {
            slba,
            nlb: (data.len() / 4096) as u32,
            data,
            metadata: &[],
        },
    )
    .status
}

fn read(c: &mut Controller, slba: u64, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n * 4096];
    let s = c
        .submit(
            SimInstant::ZERO,
            Command::Read {
                slba,
                nlb: n as u32,
                data: &mut out,
                metadata: &mut [],
            },
        )
        .status;
    assert_eq!(s, Status::SUCCESS, "read at {slba}");
    out
}

fn reset(c: &mut Controller, slba: u64) -> Status {
    c.submit(
        SimInstant::ZERO,
        Command::ZoneMgmtSend {
            slba,
            action: ZoneAction::Reset,
            select_all: false,
        },
    )
    .status
}

/// Write zones (and reset some, rewrite them), "kill" after every few commands, reopen, and
/// check every block written since.
fn survives_kills(cfg: DeviceConfig, tag: &str) {
    let img = tmp(tag);
    Controller::create_image(&img.0, cfg)
        .expect("creates")
        .close()
        .expect("closes");
    let mut rng = Rng::new(7);
    let mut c = Controller::open_image(&img.0).expect("opens");
    let zoned = c.config().design != device::DesignName::Tcssd;
    let (size, cap) = (c.layout().zone_size_lbas, c.layout().zone_capacity_lbas);
    let zones = c.zone_count().min(6) as u64;
    // What each zone holds from its start (zoned) or each block (tcssd), as acknowledged.
    let mut held: Vec<Vec<u8>> = vec![Vec::new(); zones as usize];
    for round in 0..40 {
        let z = rng.below(zones);
        let have = held[z as usize].len() as u64 / 4096;
        if zoned && (have == cap || rng.below(8) == 0) && have > 0 {
            assert_eq!(reset(&mut c, z * size), Status::SUCCESS);
            held[z as usize].clear();
        } else if have < cap {
            let n = (1 + rng.below(8)).min(cap - have) as usize;
            let data = blocks(&mut rng, n);
            assert_eq!(write(&mut c, z * size + have, &data), Status::SUCCESS);
            held[z as usize].extend_from_slice(&data);
        }
        if round % 3 == 2 {
            // The process dies: nothing is saved on the way out.
            c.drop_without_saving();
            c = Controller::open_image(&img.0).expect("reopens after a kill");
            c.power_cycle();
            for (z, want) in held.iter().enumerate() {
                let n = want.len() / 4096;
                if zoned {
                    let d = c.zone(z as u32);
                    assert_eq!(d.wp - d.zslba, n as u64, "{tag}: zone {z} write pointer");
                    if n == 0 {
                        assert_eq!(d.state, ZoneState::Empty, "{tag}: zone {z}");
                    }
                }
                if n > 0 {
                    assert!(
                        read(&mut c, z as u64 * size, n) == *want,
                        "{tag}: zone {z} data after a kill in round {round}"
                    );
                }
            }
        }
    }
    c.close().expect("closes");
}

#[test]
fn a_killed_process_loses_no_completed_command_on_zns() {
    survives_kills(presets::test_min(), "zns");
}

#[test]
fn a_killed_process_loses_no_completed_command_on_cczns() {
    survives_kills(presets::test_cczns(), "cczns");
}

#[test]
fn a_killed_process_loses_no_completed_command_on_balloon() {
    survives_kills(presets::test_balloon(), "balloon");
}

#[test]
fn a_killed_process_loses_no_completed_command_on_tcssd() {
    survives_kills(presets::test_tcssd(), "tcssd");
}

#[test]
fn an_image_is_held_by_one_writer_and_shared_by_readers() {
    let img = tmp("lock");
    let c = Controller::create_image(&img.0, presets::test_min()).expect("creates");
    let e = Controller::open_image(&img.0)
        .err()
        .expect("a second writer is refused");
    assert!(
        e.to_string().contains("in use by process")
            && e.to_string().contains(&std::process::id().to_string()),
        "{e}"
    );
    let e = Controller::open_image_as(&img.0, OpenMode::ReadOnly)
        .err()
        .expect("a reader beside a writer is refused");
    assert!(e.to_string().contains("in use by"), "{e}");
    // Creating over an image in use is refused too (the lock comes before the truncation).
    assert!(Controller::create_image(&img.0, presets::test_min()).is_err());
    c.close().expect("closes");
    let r1 = Controller::open_image_as(&img.0, OpenMode::ReadOnly).expect("a reader");
    let mut r2 = Controller::open_image_as(&img.0, OpenMode::ReadOnly).expect("and another");
    let e = Controller::open_image(&img.0)
        .err()
        .expect("no writer beside readers");
    assert!(e.to_string().contains("reading it"), "{e}");
    // A reader changes nothing.
    let s = write(&mut r2, 0, &[0u8; 4096]);
    assert_eq!(s, Status::NAMESPACE_WRITE_PROTECTED);
    drop((r1, r2));
    Controller::open_image(&img.0).expect("a writer once they are gone");
}

#[test]
fn an_image_from_an_older_format_or_cut_short_is_refused_with_its_reason() {
    let img = tmp("short");
    Controller::create_image(&img.0, presets::test_min())
        .expect("creates")
        .close()
        .expect("closes");
    let len = std::fs::metadata(&img.0).expect("meta").len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&img.0)
        .expect("opens");
    f.set_len(len / 2).expect("truncates");
    drop(f);
    let e = Controller::open_image(&img.0)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("truncated")
            && e.contains(&(len / 2).to_string())
            && e.contains(&len.to_string()),
        "{e}"
    );
    let mut bytes = std::fs::read(&img.0).expect("reads");
    bytes[..8].copy_from_slice(b"ZNSLABv2");
    std::fs::write(&img.0, &bytes).expect("writes");
    let e = Controller::open_image(&img.0)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("older znslab"), "{e}");
}

#[test]
fn a_device_in_memory_refuses_writes_past_its_memory_budget_and_says_why() {
    let mut c = Controller::in_memory(presets::test_min()).expect("valid");
    c.set_memory_budget(64 << 10);
    let mut rng = Rng::new(1);
    assert_eq!(write(&mut c, 0, &blocks(&mut rng, 16)), Status::SUCCESS);
    assert_eq!(
        write(&mut c, 16, &blocks(&mut rng, 1)),
        Status::INTERNAL_ERROR
    );
    let why = c.image_error().expect("a reason");
    assert!(
        why.contains("memory budget") && why.contains("image"),
        "{why}"
    );
    // A reset gives the bytes back.
    assert_eq!(reset(&mut c, 0), Status::SUCCESS);
    assert_eq!(write(&mut c, 0, &blocks(&mut rng, 16)), Status::SUCCESS);
}

#[test]
fn a_balloon_or_tcssd_device_in_memory_stops_at_its_memory_budget() {
    for cfg in [presets::test_balloon(), presets::test_tcssd()] {
        let name = cfg.name.clone();
        let mut c = Controller::in_memory(cfg).expect("valid");
        c.set_memory_budget(256 << 10);
        let mut rng = Rng::new(2);
        let mut refused = None;
        let size = c.layout().zone_size_lbas;
        for i in 0..400u64 {
            // Incompressible blocks, zone after zone.
            let mut d = vec![0u8; 4096];
            rng.fill(&mut d);
            let lba = (i / 16) * size + i % 16;
            let s = write(&mut c, lba, &d);
            if s != Status::SUCCESS {
                refused = Some((i, s));
                break;
            }
        }
        let (i, s) = refused.expect("refused before 400 blocks");
        assert_eq!(s, Status::INTERNAL_ERROR, "{name}");
        assert!(i <= 64 + 64, "{name}: refused only after {i} blocks");
        let why = c.image_error().expect("a reason");
        assert!(why.contains("memory budget"), "{name}: {why}");
    }
}

#[test]
fn an_open_that_fails_saves_nothing_over_the_image() {
    let img = tmp("badopen");
    let mut c = Controller::create_image(&img.0, presets::test_min()).expect("creates");
    let mut rng = Rng::new(3);
    let data = blocks(&mut rng, 8);
    assert_eq!(write(&mut c, 5 * 64, &data), Status::SUCCESS);
    c.close().expect("closes");
    // Zone 2's record is made unreadable: the open fails...
    let at = (64 << 10) + 2 * 32;
    let mut bytes = std::fs::read(&img.0).expect("reads");
    let good = bytes[at];
    bytes[at] = 0x7f;
    std::fs::write(&img.0, &bytes).expect("writes");
    assert!(Controller::open_image(&img.0).is_err());
    // ... and, the record mended, zone 5 still holds what was written (a failed open used
    // to save the half-loaded zone table, Empty from zone 2 on, over it).
    let mut bytes = std::fs::read(&img.0).expect("reads");
    bytes[at] = good;
    std::fs::write(&img.0, &bytes).expect("writes");
    let mut c = Controller::open_image(&img.0).expect("opens");
    assert_eq!(c.zone(5).wp, 5 * 64 + 8);
    assert!(read(&mut c, 5 * 64, 8) == data);
}

#[test]
fn memory_budget_accounting_survives_metadata_gaps_and_resets() {
    let mut c = Controller::in_memory(presets::test_cczns()).expect("valid");
    let ms = c.layout().metadata_bytes as usize;
    let mut rng = Rng::new(4);
    for _ in 0..3 {
        // A block without metadata, then one with: the metadata buffer fills its gap first.
        assert_eq!(write(&mut c, 0, &blocks(&mut rng, 1)), Status::SUCCESS);
        let s = c
            .submit(
                SimInstant::ZERO,
                Command::Write {
                    slba: 1,
                    nlb: 1,
                    data: &blocks(&mut rng, 1),
                    metadata: &vec![7u8; ms],
                },
            )
            .status;
        assert_eq!(s, Status::SUCCESS);
        // Two blocks, and the metadata of both (the first block's is zeros).
        assert_eq!(c.resident_bytes(), 2 * 4096 + 2 * ms as u64);
        assert_eq!(reset(&mut c, 0), Status::SUCCESS);
        assert_eq!(c.resident_bytes(), 0);
    }
    assert_eq!(write(&mut c, 0, &blocks(&mut rng, 16)), Status::SUCCESS);
    assert_eq!(c.resident_bytes(), 16 * 4096);
}
