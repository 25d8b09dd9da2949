//! Every cell of the zone state transition table (research/simulator-anchors.md §6.3), with the
//! open and active counts after each step, for single zones and for Select All.

mod common;
use common::{Dev, ALL_STATES};
use device::{Status, ZoneAction, ZoneState};
use ZoneState::*;

/// Expected result of `action` on a zone in `from`: Ok(new state) or Err(status).
fn expected(from: ZoneState, action: ZoneAction) -> Result<ZoneState, Status> {
    let bad = Err(Status::ZONE_INVALID_TRANSITION);
    match action {
        ZoneAction::Open => match from {
            Empty | ImplicitlyOpened | ExplicitlyOpened | Closed => Ok(ExplicitlyOpened),
            _ => bad,
        },
        ZoneAction::Close => match from {
            ImplicitlyOpened | ExplicitlyOpened | Closed => Ok(Closed),
            _ => bad,
        },
        ZoneAction::Finish => match from {
            Empty | ImplicitlyOpened | ExplicitlyOpened | Closed | Full => Ok(Full),
            _ => bad,
        },
        ZoneAction::Reset => match from {
            Empty | ImplicitlyOpened | ExplicitlyOpened | Closed | Full => Ok(Empty),
            _ => bad,
        },
        ZoneAction::Offline => match from {
            ReadOnly | Offline => Ok(Offline),
            _ => bad,
        },
        // These tests run on a plain ZNS device, which has no padding zones.
        ZoneAction::Other(_) | ZoneAction::OpenPadding => Err(Status::INVALID_FIELD),
    }
}

const ACTIONS: [ZoneAction; 6] = [
    ZoneAction::Open,
    ZoneAction::Close,
    ZoneAction::Finish,
    ZoneAction::Reset,
    ZoneAction::Offline,
    ZoneAction::Other(0x9),
];

fn counts(states: &[ZoneState]) -> (u32, u32) {
    let open = states.iter().filter(|s| s.is_open()).count() as u32;
    let active = states.iter().filter(|s| s.is_active()).count() as u32;
    (open, active)
}

#[test]
fn every_state_and_action() {
    for from in ALL_STATES {
        for action in ACTIONS {
            let mut d = Dev::min();
            d.make(3, from);
            let before = d.zones();
            let status = d.mgmt(3, action);
            match expected(from, action) {
                Ok(to) => {
                    assert_eq!(status, Status::SUCCESS, "{from} {action:?}");
                    assert_eq!(d.state(3), to, "{from} {action:?}");
                }
                Err(e) => {
                    assert_eq!(status, e, "{from} {action:?}");
                    assert_eq!(
                        d.zones(),
                        before,
                        "failed {action:?} on {from} changed the device"
                    );
                }
            }
            let states: Vec<ZoneState> = d.zones().iter().map(|z| z.state).collect();
            assert_eq!(
                (d.c.open_zones(), d.c.active_zones()),
                counts(&states),
                "{from} {action:?}"
            );
        }
    }
}

#[test]
fn write_pointer_after_transitions() {
    let mut d = Dev::min();
    let z = d.zslba(2);
    assert_eq!(d.write(z, 3), Status::SUCCESS);
    assert_eq!(d.c.zone(2).wp, z + 3);
    assert_eq!(d.mgmt(2, ZoneAction::Close), Status::SUCCESS);
    assert_eq!(d.c.zone(2).wp, z + 3);
    // Writing to a closed zone opens it implicitly again.
    assert_eq!(d.write(z + 3, 1), Status::SUCCESS);
    assert_eq!(d.state(2), ImplicitlyOpened);
    assert_eq!(d.mgmt(2, ZoneAction::Finish), Status::SUCCESS);
    assert_eq!(d.c.zone(2).wp, z + d.cap());
    assert_eq!(d.mgmt(2, ZoneAction::Reset), Status::SUCCESS);
    assert_eq!(d.c.zone(2).wp, z);
    // Read-only and offline zones report an invalid (all ones) write pointer.
    d.c.inject_zone_condition(2, ReadOnly);
    assert_eq!(d.c.zone(2).wp, u64::MAX);
}

#[test]
fn closing_an_open_zone_without_data_keeps_it_closed() {
    let mut d = Dev::min();
    d.make(1, ExplicitlyOpened);
    assert_eq!(d.mgmt(1, ZoneAction::Close), Status::SUCCESS);
    assert_eq!(d.state(1), Closed);
    assert_eq!(d.c.active_zones(), 1);
}

#[test]
fn select_all_scopes() {
    // Zones 0..=6 in every state; Select All must touch exactly the zones its action covers.
    for action in [
        ZoneAction::Open,
        ZoneAction::Close,
        ZoneAction::Finish,
        ZoneAction::Reset,
        ZoneAction::Offline,
    ] {
        let mut d = Dev::with_limits(0, 0, true);
        for (i, s) in ALL_STATES.iter().enumerate() {
            d.make(i as u32, *s);
        }
        assert_eq!(d.mgmt_all(action), Status::SUCCESS, "{action:?}");
        for (i, from) in ALL_STATES.iter().enumerate() {
            let in_scope = match action {
                ZoneAction::Open => *from == Closed,
                ZoneAction::Close => from.is_open(),
                ZoneAction::Finish => from.is_active(),
                ZoneAction::Reset => from.is_active() || *from == Full,
                _ => *from == ReadOnly,
            };
            let want = if in_scope {
                expected(*from, action).expect("in scope is legal")
            } else {
                *from
            };
            assert_eq!(d.state(i as u32), want, "{action:?} on zone in {from}");
        }
        // Untouched empty zones stay empty.
        assert_eq!(d.state(10), Empty);
    }
}

#[test]
fn select_all_ignores_the_lba_and_refuses_unknown_actions() {
    let mut d = Dev::min();
    d.make(0, ImplicitlyOpened);
    let s = d
        .submit(device::Command::ZoneMgmtSend {
            slba: 12345,
            action: ZoneAction::Close,
            select_all: true,
        })
        .status;
    assert_eq!(s, Status::SUCCESS);
    assert_eq!(d.state(0), Closed);
    assert_eq!(d.mgmt_all(ZoneAction::Other(0x10)), Status::INVALID_FIELD);
}

#[test]
fn open_all_stops_at_the_first_zone_over_the_limit() {
    // 5 closed zones, 3 open resources: the first three open, then Too Many Open Zones.
    let mut d = Dev::with_limits(3, 6, true);
    for z in 0..5 {
        d.make(z, Closed);
    }
    assert_eq!(d.mgmt_all(ZoneAction::Open), Status::ZONE_TOO_MANY_OPEN);
    let states: Vec<_> = (0..5).map(|z| d.state(z)).collect();
    assert_eq!(
        states,
        vec![
            ExplicitlyOpened,
            ExplicitlyOpened,
            ExplicitlyOpened,
            Closed,
            Closed
        ]
    );
}

#[test]
fn mgmt_send_checks_its_lba() {
    let mut d = Dev::min();
    let nsze = d.c.identify().nsze;
    let s = d
        .submit(device::Command::ZoneMgmtSend {
            slba: nsze,
            action: ZoneAction::Open,
            select_all: false,
        })
        .status;
    assert_eq!(s, Status::LBA_OUT_OF_RANGE);
    let s = d
        .submit(device::Command::ZoneMgmtSend {
            slba: 1,
            action: ZoneAction::Open,
            select_all: false,
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    assert_eq!(d.state(0), Empty);
}
