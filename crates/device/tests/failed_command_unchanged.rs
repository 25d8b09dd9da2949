//! A failed command changes nothing: zone states, write pointers, resources, data, counters of
//! flash work.

mod common;
use common::Dev;
use device::{Command, Status, ZoneAction, ZoneState::*};

#[test]
fn a_battery_of_failing_commands_leaves_the_device_as_it_was() {
    let mut d = Dev::with_limits(2, 3, false);
    d.make(3, Full);
    d.make(2, Closed);
    d.make(0, ImplicitlyOpened);
    d.make(1, ExplicitlyOpened);
    d.make(4, ReadOnly);
    d.make(5, Offline);
    let zones = d.zones();
    let flash = d.c.flash_counters().clone();
    let (_, data0) = d.read(0, 1);
    let (open, active) = (d.c.open_zones(), d.c.active_zones());
    let nsze = d.c.identify().nsze;

    let failures: Vec<(Status, Status)> = vec![
        (d.write(d.zslba(0) + 5, 1), Status::ZONE_INVALID_WRITE),
        (
            d.write(d.zslba(0) + 1, d.cap()),
            Status::ZONE_BOUNDARY_ERROR,
        ),
        (d.write(d.zslba(3), 1), Status::ZONE_FULL),
        (d.write(d.zslba(4), 1), Status::ZONE_READ_ONLY),
        (d.write(d.zslba(5), 1), Status::ZONE_OFFLINE),
        (d.write(d.zslba(6), 1), Status::ZONE_TOO_MANY_ACTIVE),
        (d.append(d.zslba(6), 1).status, Status::ZONE_TOO_MANY_ACTIVE),
        (d.write(d.zslba(2) + 1, 1), Status::ZONE_TOO_MANY_OPEN),
        (d.mgmt(2, ZoneAction::Open), Status::ZONE_TOO_MANY_OPEN),
        (d.append(d.zslba(0) + 1, 1).status, Status::INVALID_FIELD),
        (d.write(nsze, 1), Status::LBA_OUT_OF_RANGE),
        (d.mgmt(3, ZoneAction::Open), Status::ZONE_INVALID_TRANSITION),
        (
            d.mgmt(0, ZoneAction::Offline),
            Status::ZONE_INVALID_TRANSITION,
        ),
        (
            d.mgmt(5, ZoneAction::Reset),
            Status::ZONE_INVALID_TRANSITION,
        ),
        (d.mgmt(6, ZoneAction::Open), Status::ZONE_TOO_MANY_ACTIVE),
        (d.mgmt(6, ZoneAction::Other(0x77)), Status::INVALID_FIELD),
        (d.read(d.zslba(5), 1).0, Status::ZONE_OFFLINE),
        (d.read(d.cap() - 1, 2).0, Status::ZONE_BOUNDARY_ERROR),
    ];
    for (i, (got, want)) in failures.iter().enumerate() {
        assert_eq!(got, want, "case {i}");
    }
    let mut buf = vec![0u8; 10];
    let s = d
        .submit(Command::ZoneMgmtRecv {
            slba: 0,
            filter: 0,
            partial: false,
            extended: false,
            buffer: &mut buf,
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);

    assert_eq!(d.zones(), zones);
    assert_eq!((d.c.open_zones(), d.c.active_zones()), (open, active));
    assert_eq!(d.c.flash_counters().programs, flash.programs);
    assert_eq!(d.c.flash_counters().erases, flash.erases);
    assert_eq!(d.read(0, 1).1, data0);
    assert_eq!(d.c.counters().failed_commands, failures.len() as u64 + 1);
}

/// Injected faults: a refused command ends with the chosen status and changes nothing; a read
/// of flash that fails ECC ends UNRECOVERED_READ_ERROR and reads elsewhere still work.
#[test]
fn injected_refusals_and_media_errors_end_commands_and_change_nothing() {
    use device::CommandKind;
    let mut d = Dev::min();
    assert_eq!(d.write(d.zslba(0), 4), Status::SUCCESS);
    let (_, before) = d.read(d.zslba(0), 4);
    let zones = d.zones();
    // Refusals apply to their kind of command only, in order.
    d.c.faults_mut()
        .refusals
        .push_back((CommandKind::Write, Status::INTERNAL_ERROR));
    d.c.faults_mut()
        .refusals
        .push_back((CommandKind::ZoneMgmt, Status::ZONE_OFFLINE));
    assert_eq!(d.read(d.zslba(0), 1).0, Status::SUCCESS);
    assert_eq!(d.write(d.zslba(0) + 4, 1), Status::INTERNAL_ERROR);
    assert_eq!(d.zones(), zones, "a refused write moves no write pointer");
    assert_eq!(d.mgmt(0, ZoneAction::Finish), Status::ZONE_OFFLINE);
    assert_eq!(d.zones(), zones, "a refused Finish changes no state");
    assert_eq!(
        d.write(d.zslba(0) + 4, 1),
        Status::SUCCESS,
        "refusals are used up"
    );
    // Media errors: reads touching the bad range fail, others read the data written.
    let z0 = d.zslba(0);
    d.c.faults_mut().bad_lbas.push(z0 + 2..z0 + 3);
    assert_eq!(d.read(d.zslba(0), 4).0, Status::UNRECOVERED_READ_ERROR);
    assert_eq!(d.read(d.zslba(0) + 2, 1).0, Status::UNRECOVERED_READ_ERROR);
    let (st, first) = d.read(d.zslba(0), 2);
    assert_eq!(st, Status::SUCCESS);
    assert_eq!(first[..], before[..2 * d.lba()]);
    assert_eq!(d.c.faults_mut().fired, 4);
    d.c.faults_mut().bad_lbas.clear();
    assert_eq!(d.read(d.zslba(0), 4), (Status::SUCCESS, before));
}
