//! Write and Zone Append rules: the write pointer, zone capacity, zone states, the append size
//! limit and the LBA the append returns.

mod common;
use common::Dev;
use device::{presets, Command, Status, ZoneAction, ZoneState::*};

#[test]
fn writes_must_start_at_the_write_pointer() {
    let mut d = Dev::min();
    let z = d.zslba(0);
    assert_eq!(d.write(z + 1, 1), Status::ZONE_INVALID_WRITE);
    assert_eq!(d.write(z, 2), Status::SUCCESS);
    assert_eq!(d.write(z, 1), Status::ZONE_INVALID_WRITE);
    assert_eq!(d.write(z + 3, 1), Status::ZONE_INVALID_WRITE);
    assert_eq!(d.write(z + 2, 1), Status::SUCCESS);
    assert_eq!(d.c.zone(0).wp, z + 3);
}

#[test]
fn writes_may_not_cross_the_zone_capacity() {
    let mut d = Dev::min();
    let (z, cap) = (d.zslba(1), d.cap());
    assert_eq!(d.write(z, cap - 1), Status::SUCCESS);
    assert_eq!(d.write(z + cap - 1, 2), Status::ZONE_BOUNDARY_ERROR);
    assert_eq!(d.state(1), ImplicitlyOpened);
    assert_eq!(d.write(z + cap - 1, 1), Status::SUCCESS);
    assert_eq!(d.state(1), Full);
    // With capacity == size, `z + cap` is the next zone's start: an ordinary first write.
    assert_eq!(d.write(z + cap, 1), Status::SUCCESS);
    assert_eq!(d.state(2), ImplicitlyOpened);
}

#[test]
fn full_read_only_and_offline_zones_refuse_writes() {
    let mut d = Dev::min();
    d.make(0, Full);
    d.make(1, ReadOnly);
    d.make(2, Offline);
    for (zone, want) in [
        (0, Status::ZONE_FULL),
        (1, Status::ZONE_READ_ONLY),
        (2, Status::ZONE_OFFLINE),
    ] {
        let z = d.zslba(zone);
        assert_eq!(d.write(z, 1), want);
        assert_eq!(d.append(z, 1).status, want);
    }
}

#[test]
fn capacity_smaller_than_size() {
    let mut cfg = presets::test_min();
    cfg.zones.capacity_bytes = Some(128 << 10); // 32 LBAs
    cfg.zones.size_bytes = Some(256 << 10); // 64 LBAs
    let mut d = Dev::new(cfg);
    assert_eq!((d.cap(), d.c.layout().zone_size_lbas), (32, 64));
    assert_eq!(d.c.zone(1).zslba, 64);
    // Into the gap between capacity and size: boundary error, even at the write pointer's zone.
    assert_eq!(d.write(40, 1), Status::ZONE_BOUNDARY_ERROR);
    assert_eq!(d.write(0, 33), Status::ZONE_BOUNDARY_ERROR);
    assert_eq!(d.write(0, 32), Status::SUCCESS);
    assert_eq!(d.state(0), Full);
    assert_eq!(d.c.zone(0).wp, 32);
    // Reads of the gap return zeros; the next zone starts at the zone size.
    let (s, data) = d.read(40, 2);
    assert_eq!(s, Status::SUCCESS);
    assert!(data.iter().all(|b| *b == 0));
    assert_eq!(d.write(64, 1), Status::SUCCESS);
    assert_eq!(d.c.identify().nsze, 64 * 16);
}

#[test]
fn append_returns_the_lba_it_wrote_in_order() {
    let mut d = Dev::min();
    let z = d.zslba(5);
    let mut expect = z;
    for nlb in [1u64, 3, 2, 8] {
        let c = d.append(z, nlb);
        assert_eq!(c.status, Status::SUCCESS);
        assert_eq!(c.result, expect);
        expect += nlb;
    }
    assert_eq!(d.c.zone(5).wp, expect);
    assert_eq!(d.c.counters().appends, 4);
    // Interleaved with writes at the write pointer, appends land after them.
    assert_eq!(d.write(expect, 1), Status::SUCCESS);
    assert_eq!(d.append(z, 1).result, expect + 1);
}

#[test]
fn append_needs_a_zone_start_and_respects_zasl() {
    let mut cfg = presets::test_min();
    cfg.controller.zone_append_max_bytes = 8192;
    let mut d = Dev::new(cfg);
    let z = d.zslba(0);
    assert_eq!(d.c.identify().zasl_bytes, 8192);
    assert_eq!(d.append(z + 1, 1).status, Status::INVALID_FIELD);
    assert_eq!(d.append(z, 3).status, Status::INVALID_FIELD);
    assert_eq!(d.append(z, 2).status, Status::SUCCESS);
    // A plain write of 3 blocks is fine: ZASL limits appends only.
    assert_eq!(d.write(z + 2, 3), Status::SUCCESS);
    // Appending past the capacity is a boundary error.
    let cap = d.cap();
    assert_eq!(d.write(z + 5, cap - 6), Status::SUCCESS);
    assert_eq!(d.append(z, 2).status, Status::ZONE_BOUNDARY_ERROR);
    assert_eq!(d.append(z, 1).result, z + cap - 1);
    assert_eq!(d.state(0), Full);
}

#[test]
fn malformed_commands_are_invalid_fields() {
    let mut d = Dev::min();
    let lba = d.lba();
    let ms = d.ms();
    let data = vec![0u8; lba];
    let s = d
        .submit(Command::Write {
            slba: 0,
            nlb: 0,
            data: &[],
            metadata: &[],
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    let s = d
        .submit(Command::Write {
            slba: 0,
            nlb: 2,
            data: &data,
            metadata: &[],
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    let s = d
        .submit(Command::Write {
            slba: 0,
            nlb: 1,
            data: &data,
            metadata: &vec![0; ms + 1],
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    let big = vec![0u8; (d.c.layout().max_transfer_bytes as usize) + lba];
    let nlb = (big.len() / lba) as u32;
    let s = d
        .submit(Command::Write {
            slba: 0,
            nlb,
            data: &big,
            metadata: &[],
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    let nsze = d.c.identify().nsze;
    assert_eq!(d.write(nsze, 1), Status::LBA_OUT_OF_RANGE);
    assert_eq!(d.state(0), device::ZoneState::Empty);
}

#[test]
fn explicitly_opened_zone_stays_explicit_while_written() {
    let mut d = Dev::min();
    assert_eq!(d.mgmt(0, ZoneAction::Open), Status::SUCCESS);
    assert_eq!(d.write(0, 1), Status::SUCCESS);
    assert_eq!(d.state(0), ExplicitlyOpened);
}
