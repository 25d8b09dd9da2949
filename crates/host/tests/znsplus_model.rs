//! The `znsplus` device and `MemZoned::with_znsplus` (the model file systems test on) agree on
//! every command of random sequences: writes (sequential, and sparse sequential in TL-open
//! zones), TL_open (with and without close only), zone_compaction, zone actions and reads:
//! the same status for each, the same zone states and write pointers after each, the same
//! bytes read back. Both plugging orders (LBA and PPA) give the same contents.

mod common;

use std::rc::Rc;

use device::{presets, Controller, DeviceConfig, DeviceHandle, Plugging, ZoneAction, ZoneState};
use host::{HostIo, IoConfig, IoError, MemZoned, ZonedBackend};
use sim::cpu::CpuPool;
use sim::{Rng, Sim};

const ZONES: u32 = 4;
const B: u64 = 4096;

/// ZNS+'s MLC device shrunk: 64 KiB blocks (4 pages), so a zone is 1 MiB (256 blocks); 8
/// zones, 8 spare groups per chip, no open or active limit (the model enforces none).
fn config(plugging: Plugging) -> DeviceConfig {
    let mut cfg = presets::znsplus_mlc();
    cfg.nand.pages_per_block = 4;
    cfg.nand.blocks_per_plane = 16;
    cfg.zones.count = Some(8);
    cfg.zones.max_open = 0;
    cfg.zones.max_active = 0;
    cfg.znsplus.plugging = plugging;
    cfg
}

fn status(r: Result<(), IoError>) -> Result<(), String> {
    r.map_err(|e| match e.status() {
        Some(s) => format!("{s:?}"),
        None => e.to_string(),
    })
}

/// The bitmap of a random subset of the first `written` blocks (`extra`: one bit past them).
fn bitmap(rng: &mut Rng, cap: u64, written: u64, extra: bool) -> Vec<u8> {
    let mut map = vec![0u8; cap.div_ceil(8) as usize];
    let density = rng.below(4);
    for i in 0..written {
        // Runs, as a file system's validity has.
        if rng.below(4) < density {
            map[(i / 8) as usize] |= 1 << (i % 8);
        }
    }
    if extra && written < cap {
        let i = written + rng.below(cap - written);
        map[(i / 8) as usize] |= 1 << (i % 8);
    }
    map
}

fn bit(map: &[u8], i: u64) -> bool {
    map[(i / 8) as usize] >> (i % 8) & 1 == 1
}

fn run(seed: u64, steps: usize, plugging: Plugging) -> Vec<Vec<u8>> {
    let sim = Sim::new(seed);
    let dev = DeviceHandle::new(
        &sim,
        Controller::in_memory(config(plugging)).expect("valid"),
    );
    let io = Rc::new(HostIo::new(
        &dev,
        Rc::new(CpuPool::new(&sim, 2)),
        IoConfig::default(),
    ));
    let zone_lbas = io.zone_bytes() / B;
    let cap = io.zone_capacity_bytes() / B;
    let model = MemZoned::new(&sim, B, 8, zone_lbas, cap, 0, 0).with_znsplus(6);
    assert!(io.vendor_caps().tl_open && model.vendor_caps().tl_open);
    sim.block_on(async move {
        let mut rng = Rng::new(seed);
        // The bitmap each TL-open zone was given (to aim writes at invalid blocks).
        let mut maps: Vec<Option<Vec<u8>>> = vec![None; ZONES as usize];
        for step in 0..steps {
            let z = rng.below(ZONES as u64) as u32;
            let zs = z as u64 * zone_lbas;
            let zone = model.report_zones().await.unwrap()[z as usize];
            let wp = zone.wp - zs;
            let what = rng.below(100);
            let (a, b, op) = if what < 45 {
                // A write: at the write pointer, or (TL-open) over an invalid run past it.
                let mut first = wp;
                if let Some(map) = &maps[z as usize] {
                    let holes: Vec<u64> = (wp..cap).filter(|&i| !bit(map, i)).collect();
                    if !holes.is_empty() && rng.below(8) != 0 {
                        first = holes[rng.below(holes.len() as u64) as usize];
                    }
                }
                if rng.below(20) == 0 {
                    first = rng.below(cap); // often refused
                }
                let mut n = 1 + rng.below(24);
                if let Some(map) = &maps[z as usize] {
                    if rng.below(4) != 0 {
                        n = (first..(first + n).min(cap))
                            .take_while(|&i| !bit(map, i))
                            .count()
                            .max(1) as u64;
                    }
                }
                let n = n.min(zone_lbas - first).max(1);
                let mut data = vec![0u8; (n * B) as usize];
                rng.fill(&mut data);
                let pos = (zs + first) * B;
                (
                    status(io.write(pos, &data).await),
                    status(model.write(pos, &data).await),
                    format!("write {n} at {first}"),
                )
            } else if what < 60 {
                let close_only = rng.below(6) == 0;
                let extra = rng.below(10) == 0;
                let map = bitmap(&mut rng, cap, wp, extra);
                let a = status(io.tl_open(z, &map, close_only).await);
                let b = status(model.tl_open(z, &map, close_only).await);
                if b.is_ok() {
                    maps[z as usize] = (!close_only).then_some(map);
                }
                (a, b, format!("tl_open close_only={close_only}"))
            } else if what < 72 {
                // A compaction into zone z of blocks written elsewhere.
                let n = 1 + rng.below(12);
                let src_zone = rng.below(ZONES as u64);
                let sz = model.report_zones().await.unwrap()[src_zone as usize];
                let written = sz.wp - src_zone * zone_lbas;
                let mut pairs = Vec::new();
                for k in 0..n.min(written) {
                    let src = src_zone * zone_lbas + rng.below(written.max(1));
                    if pairs.iter().all(|p: &(u64, u64)| p.0 != src) {
                        pairs.push((src, zs + wp + k));
                    }
                }
                for (k, p) in pairs.iter_mut().enumerate() {
                    p.1 = zs + wp + k as u64;
                }
                if pairs.is_empty() {
                    continue;
                }
                (
                    status(io.zone_compaction(&pairs).await),
                    status(model.zone_compaction(&pairs).await),
                    format!("compaction {pairs:?}"),
                )
            } else {
                let action = match rng.below(10) {
                    0..=3 => ZoneAction::Reset,
                    4..=5 => ZoneAction::Finish,
                    6..=7 => ZoneAction::Close,
                    _ => ZoneAction::Open,
                };
                let a = status(io.zone_action(z, action).await);
                let b = status(model.zone_action(z, action).await);
                if b.is_ok() && action != ZoneAction::Open {
                    maps[z as usize] = None;
                }
                (a, b, format!("{action:?}"))
            };
            assert_eq!(a, b, "seed {seed} step {step} zone {z}: {op}");
            let dz = io.report_zones().await.unwrap();
            let mz = model.report_zones().await.unwrap();
            for i in 0..ZONES as usize {
                assert_eq!(
                    (dz[i].state, dz[i].wp),
                    (mz[i].state, mz[i].wp),
                    "seed {seed} step {step} after {op}: zone {i}"
                );
                if model.is_tl_open(i as u32) {
                    assert_eq!(dz[i].state, ZoneState::ExplicitlyOpened);
                }
            }
            if step % 8 == 0 || rng.below(4) == 0 {
                let mut x = vec![0u8; (cap * B) as usize];
                let mut y = vec![0u8; (cap * B) as usize];
                io.read(zs * B, &mut x).await.unwrap();
                model.read(zs * B, &mut y).await.unwrap();
                assert!(
                    x == y,
                    "seed {seed} step {step} after {op}: zone {z} bytes differ"
                );
            }
        }
        // The sequence exercised threaded logging, both kinds of plugging copies.
        let k = io.device().with(|c| c.counters().clone());
        assert!(k.tl_opens > 5, "seed {seed}: {} TL_opens", k.tl_opens);
        assert!(k.plugged_blocks_foreground + k.plugged_blocks_background > 0);
        let mut zones = Vec::new();
        for z in 0..ZONES as u64 {
            let mut x = vec![0u8; (cap * B) as usize];
            io.read(z * zone_lbas * B, &mut x).await.unwrap();
            zones.push(x);
        }
        zones
    })
}

#[test]
fn the_device_and_the_model_agree_on_random_command_sequences() {
    for seed in 0..40 {
        run(seed, 150, Plugging::Lba);
    }
}

#[test]
fn lba_and_ppa_ordered_plugging_give_the_same_zone_contents() {
    for seed in 100..110 {
        assert!(run(seed, 150, Plugging::Lba) == run(seed, 150, Plugging::Ppa));
    }
}
