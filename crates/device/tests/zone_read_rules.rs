//! Read rules: zone boundaries, above the write pointer, read-only and offline zones.

mod common;
use common::Dev;
use device::{Command, Status, ZoneState::*};

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

/// A Read Discard and a Read of the same blocks on two devices in the same state: same
/// status, completion time and counters; the discarding one leaves the host buffer as it was.
#[test]
fn read_discard_is_a_read_without_the_copy() {
    let (mut a, mut b) = (Dev::min(), Dev::min());
    let cap = a.cap();
    for d in [&mut a, &mut b] {
        assert_eq!(d.write(0, cap), Status::SUCCESS);
        assert_eq!(d.write(cap, 8), Status::SUCCESS);
        d.c.faults_mut().bad_lbas.push(cap + 2..cap + 3);
    }
    let offline = 2 * cap;
    for d in [&mut a, &mut b] {
        assert_eq!(d.write(offline, 1), Status::SUCCESS);
        d.c.inject_zone_condition(2, Offline);
    }
    let nsze = a.c.identify().nsze;
    // Within data, straddling the write pointer, above it, across a boundary, over a bad
    // block, an offline zone, past the namespace.
    let reads = [
        (0, 4),
        (cap - 4, 4),
        (cap + 6, 4),
        (cap + 12, 2),
        (cap - 1, 2),
        (cap + 1, 3),
        (offline, 1),
        (nsze, 1),
    ];
    for (slba, nlb) in reads {
        let lba = a.lba();
        // Without metadata, as the Read Discard (metadata would lengthen the transfer).
        let mut data = vec![0xAAu8; nlb as usize * lba];
        let sa = a
            .submit(Command::Read {
                slba,
                nlb: nlb as u32,
                data: &mut data,
                metadata: &mut [],
            })
            .status;
        let mut kept = vec![0xAAu8; nlb as usize * lba];
        let comp = b.submit(Command::ReadDiscard {
            slba,
            nlb: nlb as u32,
            data: &mut kept,
        });
        assert_eq!(comp.status, sa, "status of {nlb} blocks at {slba}");
        assert_eq!(a.now, b.now, "completion of {nlb} blocks at {slba}");
        if sa == Status::SUCCESS && slba == 0 {
            assert!(data.iter().any(|&x| x != 0xAA), "the Read copied");
            assert!(kept.iter().all(|&x| x == 0xAA), "the Read Discard did not");
        }
    }
    assert_eq!(a.c.counters(), b.c.counters());
    assert_eq!(a.c.flash_counters(), b.c.flash_counters());
}
