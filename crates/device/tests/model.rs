//! Model-based testing of the ZNS command set: a small reference model of the zone state
//! machine (NVMe ZNS §2.1: states, write pointers, open and active resources, implicit close of
//! the oldest implicitly opened zone) written from the spec's rules, and random command
//! sequences sent to it and to the device. Every command must give the same status, and after
//! it every zone the same state and write pointer; what was written reads back.

mod common;

use common::Dev;
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
    /// Blocks written from the zone start.
    wp: u64,
    /// When it last became open (the implicit close takes the oldest).
    opened: u64,
}

struct Model {
    zones: Vec<Zone>,
    cap: u64,
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
        if start != z.wp {
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
        if self.zones[zi].wp == self.cap {
            self.set(zi, S::Full);
        }
        Ok(start)
    }

    fn action(&mut self, zi: usize, a: ZoneAction) -> Result<(), Status> {
        use S::*;
        match (a, self.zones[zi].state) {
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
                self.zones[zi].wp = 0;
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
                ZoneAction::Open => s == S::Closed,
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
}

fn op(zones: usize, cap: u64, mdts: u64) -> impl Strategy<Value = Op> {
    let nlb = prop_oneof![1..=4u64, 1..=mdts + 1, Just(cap)];
    prop_oneof![
        5 => (0..zones, prop_oneof![8 => Just(0i64), 1 => -2..=2i64], nlb.clone())
            .prop_map(|(zone, off, nlb)| Op::Write { zone, off, nlb }),
        2 => (0..zones, nlb).prop_map(|(zone, nlb)| Op::Append { zone, nlb }),
        3 => (0..zones, 0..4u8, proptest::bool::weighted(0.1))
            .prop_map(|(zone, action, all)| Op::Action { zone, action, all }),
    ]
}

fn action(code: u8) -> ZoneAction {
    [
        ZoneAction::Open,
        ZoneAction::Close,
        ZoneAction::Finish,
        ZoneAction::Reset,
    ][code as usize]
}

/// Run `ops` on a device with these limits and on the model; compare after every command.
fn check(ops: &[Op], max_open: u32, max_active: u32) -> Result<(), TestCaseError> {
    let mut cfg = presets::test_min();
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
                opened: 0,
            };
            zones
        ],
        cap,
        mdts,
        max_open: max_open as usize,
        max_active: max_active as usize,
        clock: 0,
    };
    // What each zone holds: the first byte of every block written (a block's bytes are all
    // that value), checked by reads at the end.
    let mut held: Vec<Vec<u8>> = vec![Vec::new(); zones];
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
        };
        prop_assert_eq!(got, want, "op {}: {:?}", i, o);
        for (zi, z) in m.zones.iter().enumerate() {
            let dz = d.c.zone(zi as u32);
            prop_assert_eq!(dz.state, z.state.device(), "op {}: zone {} state", i, zi);
            prop_assert_eq!(dz.wp, zi as u64 * zsze + z.wp, "op {}: zone {} wp", i, zi);
        }
    }
    // Every block written reads back; a finished zone reads zeros past its data.
    for (zi, blocks) in held.iter().enumerate() {
        let n = m.zones[zi].wp.min(cap);
        if n == 0 {
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
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The device's limits (4 open, 6 active) and tighter ones.
    #[test]
    fn the_zone_state_machine_matches_the_model(
        ops in proptest::collection::vec(op(16, 64, 32), 1..120),
        limits in prop_oneof![Just((4u32, 6u32)), Just((2, 2)), Just((1, 3)), Just((3, 3))],
    ) {
        check(&ops, limits.0, limits.1)?;
    }
}
