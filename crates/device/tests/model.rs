//! Model-based testing of the ZNS command set: a small reference model of the zone state
//! machine (NVMe ZNS §2.1: states, write pointers, open and active resources, implicit close of
//! the oldest implicitly opened zone) written from the spec's rules, and random command
//! sequences sent to it and to the device. Every command must give the same status, and after
//! it every zone the same state and write pointer; what was written reads back. On a CCZNS
//! device the model adds byte write pointers: compressed writes of incompressible chunks (their
//! footprint is their size, the last one padded to a block in a padding zone), plain writes
//! refused inside a block, padding zones opened only on a block boundary; every chunk comes
//! back from a decompressed read.

mod common;

use common::Dev;
use device::cmd::wire::{self, IoDwords};
use device::{presets, Command, Status, ZoneAction, ZoneState};
use proptest::prelude::*;

/// The zone states a host can reach with commands (read only and offline come from faults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum S {
    Empty,
    ImplicitlyOpen,
    ExplicitlyOpen,
    Closed,
    Full,
}

impl S {
    fn open(self) -> bool {
        matches!(self, S::ImplicitlyOpen | S::ExplicitlyOpen)
    }
    fn active(self) -> bool {
        self.open() || self == S::Closed
    }
    fn device(self) -> ZoneState {
        match self {
            S::Empty => ZoneState::Empty,
            S::ImplicitlyOpen => ZoneState::ImplicitlyOpened,
            S::ExplicitlyOpen => ZoneState::ExplicitlyOpened,
            S::Closed => ZoneState::Closed,
            S::Full => ZoneState::Full,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Zone {
    state: S,
    /// The write pointer, in blocks from the zone start (Finish moves it to the capacity).
    wp: u64,
    /// Bytes of data from the zone start (CCZNS's byte write pointer; `wp × lba` otherwise,
    /// until a Finish).
    bytes: u64,
    /// A CCZNS padding zone (until reset).
    padding: bool,
    /// When it last became open (the implicit close takes the oldest).
    opened: u64,
}

struct Model {
    zones: Vec<Zone>,
    cap: u64,
    lba: u64,
    /// Blocks one command may carry (MDTS).
    mdts: u64,
    max_open: usize,
    max_active: usize,
    clock: u64,
}

impl Model {
    fn count(&self, f: impl Fn(S) -> bool) -> usize {
        self.zones.iter().filter(|z| f(z.state)).count()
    }

    fn set(&mut self, zi: usize, s: S) {
        if s.open() && !self.zones[zi].state.open() {
            self.clock += 1;
            self.zones[zi].opened = self.clock;
        }
        self.zones[zi].state = s;
    }

    /// The resources a zone needs to become open; may close the oldest implicitly open zone.
    fn claim_open(&mut self, zi: usize) -> Result<(), Status> {
        let s = self.zones[zi].state;
        if s.open() {
            return Ok(());
        }
        if !s.active() && self.count(S::active) >= self.max_active {
            return Err(Status::ZONE_TOO_MANY_ACTIVE);
        }
        if self.count(S::open) >= self.max_open {
            let victim = (0..self.zones.len())
                .filter(|&i| i != zi && self.zones[i].state == S::ImplicitlyOpen)
                .min_by_key(|&i| self.zones[i].opened)
                .ok_or(Status::ZONE_TOO_MANY_OPEN)?;
            self.set(victim, S::Closed);
        }
        Ok(())
    }

    /// A write of `nlb` blocks at block `at` of zone `zi` (append: at the write pointer).
    fn write(&mut self, zi: usize, at: u64, nlb: u64, append: bool) -> Result<u64, Status> {
        if nlb == 0 || nlb > self.mdts {
            return Err(Status::INVALID_FIELD);
        }
        let z = self.zones[zi];
        if z.state == S::Full {
            return Err(Status::ZONE_FULL);
        }
        if at >= self.cap {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        let start = if append { z.wp } else { at };
        if start != z.wp || !z.bytes.is_multiple_of(self.lba) {
            return Err(Status::ZONE_INVALID_WRITE);
        }
        if start + nlb > self.cap {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        self.claim_open(zi)?;
        if !self.zones[zi].state.open() {
            self.set(zi, S::ImplicitlyOpen);
        }
        self.zones[zi].wp = start + nlb;
        self.zones[zi].bytes = (start + nlb) * self.lba;
        if self.zones[zi].wp == self.cap {
            self.set(zi, S::Full);
        }
        Ok(start)
    }

    /// A CCZNS compressed write of incompressible chunks of `sizes` bytes at byte `at` of zone
    /// `zi` (append: at the byte write pointer). Returns the byte where it landed and each
    /// chunk's footprint.
    fn compressed_write(
        &mut self,
        zi: usize,
        at: u64,
        sizes: &[u64],
        append: bool,
    ) -> Result<(u64, Vec<u64>), Status> {
        let nlb = sizes.iter().sum::<u64>().div_ceil(self.lba);
        if nlb > self.mdts {
            return Err(Status::INVALID_FIELD);
        }
        let z = self.zones[zi];
        if z.state == S::Full {
            return Err(Status::ZONE_FULL);
        }
        let start = z.bytes;
        if !append && at != start {
            return Err(Status::ZONE_INVALID_WRITE);
        }
        // Stored raw: a chunk takes its own size; a padding zone's last one ends on a block.
        let mut fps: Vec<u64> = sizes.to_vec();
        let total: u64 = fps.iter().sum();
        if z.padding {
            let last = fps.last_mut().expect("a chunk");
            *last += (start + total).div_ceil(self.lba) * self.lba - (start + total);
        }
        let end = start + fps.iter().sum::<u64>();
        if end > self.cap * self.lba {
            return Err(Status::ZONE_BOUNDARY_ERROR);
        }
        self.claim_open(zi)?;
        if !self.zones[zi].state.open() {
            self.set(zi, S::ImplicitlyOpen);
        }
        let z = &mut self.zones[zi];
        z.bytes = end;
        z.wp = end / self.lba;
        if end == self.cap * self.lba {
            self.set(zi, S::Full);
        }
        Ok((start, fps))
    }

    fn action(&mut self, zi: usize, a: ZoneAction) -> Result<(), Status> {
        use S::*;
        match (a, self.zones[zi].state) {
            (ZoneAction::OpenPadding, Empty | Closed | ImplicitlyOpen | ExplicitlyOpen) => {
                let z = self.zones[zi];
                if !z.padding && !z.bytes.is_multiple_of(self.lba) {
                    return Err(Status::INVALID_FIELD);
                }
                self.claim_open(zi)?;
                self.set(zi, ExplicitlyOpen);
                self.zones[zi].padding = true;
            }
            (ZoneAction::Open, ExplicitlyOpen) => {}
            (ZoneAction::Open, Empty | Closed | ImplicitlyOpen) => {
                self.claim_open(zi)?;
                self.set(zi, ExplicitlyOpen);
            }
            (ZoneAction::Close, Closed) => {}
            (ZoneAction::Close, ImplicitlyOpen | ExplicitlyOpen) => self.set(zi, Closed),
            (ZoneAction::Finish, Full) => {}
            (ZoneAction::Finish, _) => {
                self.zones[zi].wp = self.cap;
                self.set(zi, Full);
            }
            (ZoneAction::Reset, Empty) => {}
            (ZoneAction::Reset, _) => {
                let z = &mut self.zones[zi];
                (z.wp, z.bytes, z.padding) = (0, 0, false);
                self.set(zi, Empty);
            }
            _ => return Err(Status::ZONE_INVALID_TRANSITION),
        }
        Ok(())
    }

    /// Select All: the zones in the action's scope, in LBA order, stopping at the first
    /// failure (the zones before it stay changed).
    fn action_all(&mut self, a: ZoneAction) -> Result<(), Status> {
        for zi in 0..self.zones.len() {
            let s = self.zones[zi].state;
            let in_scope = match a {
                ZoneAction::Open | ZoneAction::OpenPadding => s == S::Closed,
                ZoneAction::Close => s.open(),
                ZoneAction::Finish => s.active(),
                ZoneAction::Reset => s.active() || s == S::Full,
                _ => false,
            };
            if in_scope {
                self.action(zi, a)?;
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Write `nlb` blocks at the write pointer moved by `off` blocks (0 most of the time).
    Write {
        zone: usize,
        off: i64,
        nlb: u64,
    },
    Append {
        zone: usize,
        nlb: u64,
    },
    Action {
        zone: usize,
        action: u8,
        all: bool,
    },
    /// CCZNS: a compressed write of random chunks at the byte write pointer moved by `off`.
    Cw {
        zone: usize,
        off: i64,
        sizes: Vec<u64>,
        append: bool,
    },
}

fn op(zones: usize, cap: u64, mdts: u64, cc: bool) -> impl Strategy<Value = Op> {
    let nlb = prop_oneof![1..=4u64, 1..=mdts + 1, Just(cap)];
    // Chunks above any minimum footprint, up to a few blocks' worth (sometimes past MDTS).
    let sizes = proptest::collection::vec(2048..=12288u64, 1..=12);
    let cw_weight = if cc { 4 } else { 0 };
    prop_oneof![
        5 => (0..zones, prop_oneof![8 => Just(0i64), 1 => -2..=2i64], nlb.clone())
            .prop_map(|(zone, off, nlb)| Op::Write { zone, off, nlb }),
        2 => (0..zones, nlb).prop_map(|(zone, nlb)| Op::Append { zone, nlb }),
        3 => (0..zones, 0..if cc { 5u8 } else { 4 }, proptest::bool::weighted(0.1))
            .prop_map(|(zone, action, all)| Op::Action { zone, action, all }),
        cw_weight => (
            0..zones,
            prop_oneof![8 => Just(0i64), 1 => -5000..=5000i64],
            sizes,
            proptest::bool::weighted(0.3),
        )
            .prop_map(|(zone, off, sizes, append)| Op::Cw { zone, off, sizes, append }),
    ]
}

fn action(code: u8) -> ZoneAction {
    [
        ZoneAction::Open,
        ZoneAction::Close,
        ZoneAction::Finish,
        ZoneAction::Reset,
        ZoneAction::OpenPadding,
    ][code as usize]
}

/// Run `ops` on a device with these limits and on the model; compare after every command.
fn check(ops: &[Op], max_open: u32, max_active: u32, cc: bool) -> Result<(), TestCaseError> {
    let mut cfg = if cc {
        presets::test_cczns()
    } else {
        presets::test_min()
    };
    cfg.zones.max_open = max_open;
    cfg.zones.max_active = max_active;
    let mut d = Dev::new(cfg);
    let (cap, zsze) = (d.cap(), d.c.layout().zone_size_lbas);
    let lba = d.lba() as u64;
    let mdts = d.c.layout().max_transfer_bytes / lba;
    let zones = d.c.zone_count() as usize;
    let mut m = Model {
        zones: vec![
            Zone {
                state: S::Empty,
                wp: 0,
                bytes: 0,
                padding: false,
                opened: 0,
            };
            zones
        ],
        cap,
        lba,
        mdts,
        max_open: max_open as usize,
        max_active: max_active as usize,
        clock: 0,
    };
    // What each zone holds: the first byte of every block written (a block's bytes are all
    // that value), checked by reads at the end.
    let mut held: Vec<Vec<u8>> = vec![Vec::new(); zones];
    // The compressed chunks written: (zone, byte, bytes), read back by decompressed reads.
    let mut chunks: Vec<(usize, u64, Vec<u8>)> = Vec::new();
    let mut rng = sim::Rng::new(ops.len() as u64);
    let mut tag = 0u8;
    for (i, o) in ops.iter().enumerate() {
        let (want, got) = match *o {
            Op::Write { zone, off, nlb } => {
                // Inside the zone (a block past it is the next zone's).
                let at = ((m.zones[zone].wp as i64 + off).max(0) as u64).min(zsze - 1);
                tag = tag.wrapping_add(1);
                let data = vec![tag; (nlb * lba) as usize];
                let want = m.write(zone, at, nlb, false).map(|_| ());
                let s = d
                    .submit(Command::Write {
                        slba: zone as u64 * zsze + at,
                        nlb: nlb as u32,
                        data: &data,
                        metadata: &[],
                    })
                    .status;
                if want.is_ok() {
                    held[zone].truncate(at as usize);
                    held[zone].extend(std::iter::repeat_n(tag, nlb as usize));
                }
                (want.err().unwrap_or(Status::SUCCESS), s)
            }
            Op::Append { zone, nlb } => {
                tag = tag.wrapping_add(1);
                let data = vec![tag; (nlb * lba) as usize];
                let want = m.write(zone, 0, nlb, true);
                let c = d.submit(Command::ZoneAppend {
                    zslba: zone as u64 * zsze,
                    nlb: nlb as u32,
                    data: &data,
                    metadata: &[],
                });
                if let Ok(start) = want {
                    prop_assert_eq!(c.result, zone as u64 * zsze + start, "op {}: append LBA", i);
                    held[zone].extend(std::iter::repeat_n(tag, nlb as usize));
                }
                (want.err().unwrap_or(Status::SUCCESS), c.status)
            }
            Op::Action {
                zone,
                action: a,
                all,
            } => {
                let a = action(a);
                let want = if all {
                    m.action_all(a)
                } else {
                    m.action(zone, a)
                };
                let s = d
                    .submit(Command::ZoneMgmtSend {
                        slba: zone as u64 * zsze,
                        action: a,
                        select_all: all,
                    })
                    .status;
                // What a reset or finish did to the data follows the zone states.
                for (zi, z) in m.zones.iter().enumerate() {
                    if z.state == S::Empty {
                        held[zi].clear();
                    }
                }
                (want.err().unwrap_or(Status::SUCCESS), s)
            }
            Op::Cw {
                zone,
                off,
                ref sizes,
                append,
            } => {
                let at = ((m.zones[zone].bytes as i64 + off).max(0) as u64).min(zsze * lba - 1);
                let want = m.compressed_write(zone, at, sizes, append);
                let total: u64 = sizes.iter().sum();
                let nlb = total.div_ceil(lba);
                let mut data = vec![0u8; (nlb * lba) as usize];
                rng.fill(&mut data[..total as usize]);
                let mut md = vec![0u8; nlb as usize * d.ms()];
                let s32: Vec<u32> = sizes.iter().map(|&x| x as u32).collect();
                prop_assert!(wire::put_cw_request(&mut md, &s32));
                let (slba, intra) = if append {
                    (zone as u64 * zsze, 0)
                } else {
                    (zone as u64 * zsze + at / lba, (at % lba) as u32)
                };
                let dw = IoDwords::compressed_write(slba, intra, nlb as u32);
                let opc = if append {
                    wire::OPC_ZONE_APPEND
                } else {
                    wire::OPC_WRITE
                };
                let cmd = wire::decode_write(opc, dw, &data, &mut md).expect("decodes");
                let c = d.submit(cmd);
                if let Ok((start, fps)) = &want {
                    let fb = wire::cw_feedback(&md, lba).expect("feedback");
                    let fb: Vec<u64> = fb.sizes.iter().map(|&x| x as u64).collect();
                    prop_assert_eq!(&fb, fps, "op {}: feedback sizes", i);
                    if append {
                        prop_assert_eq!(c.result, zone as u64 * zsze * lba + start);
                    }
                    let mut pos = *start;
                    let mut src = 0usize;
                    for (k, &pre) in sizes.iter().enumerate() {
                        chunks.push((zone, pos, data[src..src + pre as usize].to_vec()));
                        src += pre as usize;
                        pos += fps[k];
                    }
                }
                (want.err().unwrap_or(Status::SUCCESS), c.status)
            }
        };
        prop_assert_eq!(got, want, "op {}: {:?}", i, o);
        // A reset zone's chunks are gone.
        chunks.retain(|c| m.zones[c.0].bytes > c.1);
        for (zi, z) in m.zones.iter().enumerate() {
            let dz = d.c.zone(zi as u32);
            prop_assert_eq!(dz.state, z.state.device(), "op {}: zone {} state", i, zi);
            prop_assert_eq!(dz.wp, zi as u64 * zsze + z.wp, "op {}: zone {} wp", i, zi);
            prop_assert_eq!(dz.byte_wp, z.bytes, "op {}: zone {} byte wp", i, zi);
            prop_assert_eq!(dz.padding, z.padding, "op {}: zone {} padding", i, zi);
        }
    }
    // Every block written reads back; a finished zone reads zeros past its data.
    for (zi, blocks) in held.iter().enumerate() {
        // Zones holding compressed chunks are checked by decompressed reads below.
        let n = m.zones[zi].wp.min(cap);
        if n == 0 || chunks.iter().any(|c| c.0 == zi) {
            continue;
        }
        let (s, data) = d.read(zi as u64 * zsze, n);
        prop_assert_eq!(s, Status::SUCCESS);
        for (b, chunk) in data.chunks(lba as usize).enumerate() {
            let want = blocks.get(b).copied().unwrap_or(0);
            prop_assert!(
                chunk.iter().all(|&x| x == want),
                "zone {} block {}: want {}",
                zi,
                b,
                want
            );
        }
    }
    // Every chunk comes back whole from a single-chunk decompressed read at its byte address.
    for (zi, at, want) in &chunks {
        let slba = *zi as u64 * zsze + at / lba;
        let intra = (at % lba) as u32;
        let cnlb = (at % lba + want.len() as u64).div_ceil(lba) as u32;
        let nlb = (want.len() as u64).div_ceil(lba) as u32;
        let mut data = vec![0u8; (nlb as u64 * lba) as usize];
        let mut md = vec![0u8; nlb as usize * d.ms()];
        let dw = IoDwords::decompressed_read(slba, intra, cnlb, 0, false, nlb);
        let cmd = wire::decode_read(dw, &mut data, &mut md).expect("decodes");
        let st = d.submit(cmd).status;
        prop_assert_eq!(st, Status::SUCCESS, "DR of zone {} byte {}", zi, at);
        prop_assert_eq!(
            &data[..want.len()],
            &want[..],
            "chunk at zone {} byte {}",
            zi,
            at
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The device's limits (4 open, 6 active) and tighter ones.
    #[test]
    fn the_zone_state_machine_matches_the_model(
        ops in proptest::collection::vec(op(16, 64, 32, false), 1..120),
        limits in prop_oneof![Just((4u32, 6u32)), Just((2, 2)), Just((1, 3)), Just((3, 3))],
    ) {
        check(&ops, limits.0, limits.1, false)?;
    }

    /// CCZNS: byte write pointers, compressed writes and appends, padding zones.
    #[test]
    fn cczns_byte_write_pointers_match_the_model(
        ops in proptest::collection::vec(op(16, 64, 32, true), 1..120),
        limits in prop_oneof![Just((4u32, 6u32)), Just((2, 2))],
    ) {
        check(&ops, limits.0, limits.1, true)?;
    }
}
