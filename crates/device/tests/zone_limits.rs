//! Open and active resource limits: every path that needs a resource, with and without the
//! controller's implicit close (auto-transition), and MOR == MAR.

mod common;
use common::Dev;
use device::{Status, ZoneAction, ZoneState::*};

#[test]
fn identify_reports_limits_zero_based() {
    let d = Dev::with_limits(3, 5, true);
    let id = d.c.identify();
    assert_eq!((id.mor, id.mar), (2, 4));
    let d = Dev::with_limits(0, 0, true);
    let id = d.c.identify();
    assert_eq!((id.mor, id.mar), (u32::MAX, u32::MAX));
}

#[test]
fn writes_implicitly_close_the_oldest_implicitly_opened_zone() {
    let mut d = Dev::with_limits(2, 4, true);
    let (z0, z1, z2) = (d.zslba(0), d.zslba(1), d.zslba(2));
    assert_eq!(d.write(z0, 1), Status::SUCCESS);
    assert_eq!(d.write(z1, 1), Status::SUCCESS);
    assert_eq!(d.write(z2, 1), Status::SUCCESS);
    assert_eq!(
        (d.state(0), d.state(1), d.state(2)),
        (Closed, ImplicitlyOpened, ImplicitlyOpened)
    );
    assert_eq!((d.c.open_zones(), d.c.active_zones()), (2, 3));
    assert_eq!(d.c.counters().implicit_closes, 1);
}

#[test]
fn too_many_open_without_auto_transition() {
    let mut d = Dev::with_limits(2, 4, false);
    assert_eq!(d.write(d.zslba(0), 1), Status::SUCCESS);
    assert_eq!(d.write(d.zslba(1), 1), Status::SUCCESS);
    let before = d.zones();
    assert_eq!(d.write(d.zslba(2), 1), Status::ZONE_TOO_MANY_OPEN);
    assert_eq!(d.append(d.zslba(2), 1).status, Status::ZONE_TOO_MANY_OPEN);
    assert_eq!(d.mgmt(2, ZoneAction::Open), Status::ZONE_TOO_MANY_OPEN);
    assert_eq!(d.zones(), before);
}

#[test]
fn explicitly_opened_zones_are_never_closed_by_the_controller() {
    let mut d = Dev::with_limits(2, 4, true);
    d.make(0, ExplicitlyOpened);
    d.make(1, ExplicitlyOpened);
    assert_eq!(d.write(d.zslba(2), 1), Status::ZONE_TOO_MANY_OPEN);
    assert_eq!(d.mgmt(2, ZoneAction::Open), Status::ZONE_TOO_MANY_OPEN);
    assert_eq!(d.state(2), Empty);
}

#[test]
fn too_many_active_for_every_path_that_activates() {
    let mut d = Dev::with_limits(2, 2, true);
    d.make(0, Closed);
    d.make(1, Closed);
    let before = d.zones();
    assert_eq!(d.write(d.zslba(2), 1), Status::ZONE_TOO_MANY_ACTIVE);
    assert_eq!(d.append(d.zslba(2), 1).status, Status::ZONE_TOO_MANY_ACTIVE);
    assert_eq!(d.mgmt(2, ZoneAction::Open), Status::ZONE_TOO_MANY_ACTIVE);
    assert_eq!(d.zones(), before);
    // A closed zone is already active: it can be reopened while the active limit is reached.
    assert_eq!(d.write(d.zslba(0) + 1, 1), Status::SUCCESS);
    // Finishing one frees an active resource.
    assert_eq!(d.mgmt(1, ZoneAction::Finish), Status::SUCCESS);
    assert_eq!(d.write(d.zslba(2), 1), Status::SUCCESS);
}

#[test]
fn mor_equal_to_mar_counts_closed_zones_against_opens() {
    // fio's test66: with MOR == MAR every closed zone takes an active resource that an open needs.
    let mut d = Dev::with_limits(2, 2, true);
    d.make(0, ImplicitlyOpened);
    d.make(1, ImplicitlyOpened);
    // The controller may close zone 0 to open zone 2, but zone 2 needs an active resource too.
    assert_eq!(d.write(d.zslba(2), 1), Status::ZONE_TOO_MANY_ACTIVE);
    assert_eq!(
        (d.state(0), d.state(1), d.state(2)),
        (ImplicitlyOpened, ImplicitlyOpened, Empty)
    );
}

#[test]
fn filling_a_zone_frees_its_resources() {
    let mut d = Dev::with_limits(1, 1, false);
    let cap = d.cap();
    assert_eq!(d.write(d.zslba(0), cap), Status::SUCCESS);
    assert_eq!(d.state(0), Full);
    assert_eq!((d.c.open_zones(), d.c.active_zones()), (0, 0));
    assert_eq!(d.write(d.zslba(1), 1), Status::SUCCESS);
}
