//! Report Zones: filters, the partial flag, buffer sizes and starting in the middle of a zone.

mod common;
use common::{Dev, ALL_STATES};
use device::{
    parse_report, Command, ReportFilter, Status, ZoneState, REPORT_DESCRIPTOR_BYTES,
    REPORT_HEADER_BYTES,
};

fn report(
    d: &mut Dev,
    slba: u64,
    filter: u8,
    partial: bool,
    descriptors: usize,
) -> (Status, u64, Vec<device::ZoneDescriptor>) {
    let mut buf = vec![0xffu8; REPORT_HEADER_BYTES + descriptors * REPORT_DESCRIPTOR_BYTES];
    let s = d
        .submit(Command::ZoneMgmtRecv {
            slba,
            filter,
            partial,
            extended: false,
            buffer: &mut buf,
        })
        .status;
    if s != Status::SUCCESS {
        return (s, 0, vec![]);
    }
    let (n, zones) = parse_report(&buf).expect("well formed");
    (s, n, zones)
}

fn seven_states() -> Dev {
    let mut d = Dev::with_limits(0, 0, true);
    for (i, s) in ALL_STATES.iter().enumerate() {
        d.make(i as u32, *s);
    }
    d
}

#[test]
fn every_filter_with_and_without_partial() {
    let mut d = seven_states();
    let total = d.c.zone_count() as u64;
    for code in 0..=7u8 {
        let filter = ReportFilter::from_code(code).expect("valid");
        let want: Vec<u64> = d
            .zones()
            .iter()
            .filter(|z| filter.matches(z.state))
            .map(|z| z.zslba)
            .collect();
        let (s, n, zones) = report(&mut d, 0, code, false, total as usize);
        assert_eq!(s, Status::SUCCESS);
        assert_eq!(n, want.len() as u64, "filter {code}");
        assert_eq!(zones.iter().map(|z| z.zslba).collect::<Vec<_>>(), want);
        // One descriptor of room: partial counts what was returned, full counts every match.
        let (_, n_full, one) = report(&mut d, 0, code, false, 1);
        let (_, n_partial, one_p) = report(&mut d, 0, code, true, 1);
        assert_eq!(n_full, want.len() as u64);
        assert_eq!(n_partial, want.len().min(1) as u64);
        assert_eq!(one, one_p);
    }
    // Six of the seven states above are not Empty; every other zone is.
    let (_, n, _) = report(&mut d, 0, 1, false, 0);
    assert_eq!(n, total - 6);
}

#[test]
fn header_only_buffer_and_mid_zone_start() {
    let mut d = seven_states();
    let total = d.c.zone_count() as u64;
    let (s, n, zones) = report(&mut d, 0, 0, false, 0);
    assert_eq!((s, n, zones.len()), (Status::SUCCESS, total, 0));
    let (_, n, _) = report(&mut d, 0, 0, true, 0);
    assert_eq!(n, 0);
    // Starting in the middle of zone 3 reports from zone 3.
    let mid = d.zslba(3) + 5;
    let (_, n, zones) = report(&mut d, mid, 0, false, 2);
    assert_eq!(n, total - 3);
    assert_eq!(zones[0].zslba, d.zslba(3));
    assert_eq!(zones[0].state, ZoneState::Closed);
    assert_eq!(zones.len(), 2);
}

#[test]
fn descriptors_carry_state_capacity_and_write_pointer() {
    let mut d = seven_states();
    let (_, _, zones) = report(&mut d, 0, 0, false, 7);
    assert_eq!(
        zones.iter().map(|z| z.state).collect::<Vec<_>>(),
        ALL_STATES.to_vec()
    );
    // A plain ZNS device leaves the byte write pointer (a CCZNS extension) out of the report.
    let mut expected = d.zones()[..7].to_vec();
    expected.iter_mut().for_each(|z| z.byte_wp = 0);
    assert_eq!(zones, expected);
    assert!(zones.iter().all(|z| z.capacity == d.cap()));
}

#[test]
fn bad_reports_are_refused() {
    let mut d = Dev::min();
    let mut small = vec![0u8; REPORT_HEADER_BYTES - 1];
    let s = d
        .submit(Command::ZoneMgmtRecv {
            slba: 0,
            filter: 0,
            partial: false,
            extended: false,
            buffer: &mut small,
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    let mut buf = vec![0u8; 4096];
    let s = d
        .submit(Command::ZoneMgmtRecv {
            slba: 0,
            filter: 8,
            partial: false,
            extended: false,
            buffer: &mut buf,
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    let s = d
        .submit(Command::ZoneMgmtRecv {
            slba: 0,
            filter: 0,
            partial: false,
            extended: true,
            buffer: &mut buf,
        })
        .status;
    assert_eq!(s, Status::INVALID_FIELD);
    let nsze = d.c.identify().nsze;
    let s = d
        .submit(Command::ZoneMgmtRecv {
            slba: nsze,
            filter: 0,
            partial: false,
            extended: false,
            buffer: &mut buf,
        })
        .status;
    assert_eq!(s, Status::LBA_OUT_OF_RANGE);
}
