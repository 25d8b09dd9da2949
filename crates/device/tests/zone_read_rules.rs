//! Read rules: zone boundaries, above the write pointer, read-only and offline zones.

mod common;
use common::Dev;
use device::{Status, ZoneState::*};

#[test]
fn reads_may_not_cross_a_zone_boundary() {
    let mut d = Dev::min();
    let cap = d.cap();
    assert_eq!(d.write(0, cap), Status::SUCCESS);
    assert_eq!(d.write(cap, 2), Status::SUCCESS);
    assert_eq!(d.read(cap - 1, 2).0, Status::ZONE_BOUNDARY_ERROR);
    assert_eq!(d.read(cap - 1, 1).0, Status::SUCCESS);
}

#[test]
fn above_the_write_pointer_reads_zeros_without_flash() {
    let mut d = Dev::min();
    assert_eq!(d.write(0, 2), Status::SUCCESS);
    let reads_before = d.c.flash_counters().reads;
    let (s, data) = d.read(4, 4);
    assert_eq!(s, Status::SUCCESS);
    assert!(data.iter().all(|b| *b == 0));
    assert_eq!(d.c.flash_counters().reads, reads_before);
    // Straddling the write pointer: data then zeros.
    let (s, data) = d.read(1, 2);
    assert_eq!(s, Status::SUCCESS);
    let lba = d.lba();
    assert!(data[lba..].iter().all(|b| *b == 0));
    assert!(data[..lba].iter().any(|b| *b != 0));
}

#[test]
fn read_only_zones_read_and_offline_zones_do_not() {
    let mut d = Dev::min();
    assert_eq!(d.write(0, 4), Status::SUCCESS);
    let (_, before) = d.read(0, 4);
    d.c.inject_zone_condition(0, ReadOnly);
    let (s, after) = d.read(0, 4);
    assert_eq!(s, Status::SUCCESS);
    assert_eq!(before, after);
    d.c.inject_zone_condition(0, Offline);
    assert_eq!(d.read(0, 1).0, Status::ZONE_OFFLINE);
    assert_eq!(d.read(d.c.identify().nsze, 1).0, Status::LBA_OUT_OF_RANGE);
}
