//! The "adding a device design" walkthrough (`docs/adding-a-device-design.md`), followed: a toy
//! design that stores every byte inverted, written outside the device crate against the
//! design seam alone, accepted by the controller and driven by fio. What the media holds must
//! be the inverse of what the host reads back.

use std::io;

use device::design::{zns, Design, Media, ZoneRead, ZoneWrite};
use device::{presets, Command, Controller, DeviceHandle, Status};
use sim::{Sim, SimInstant};
use workload::fio::{build_jobs, parse_jobfile, run};

/// Plain ZNS, except that the bytes are stored inverted.
#[derive(Default)]
struct Inverted {
    bytes_inverted: u64,
}

impl Design for Inverted {
    fn name(&self) -> &'static str {
        "inverted"
    }

    fn write_zone(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status> {
        let flipped: Vec<u8> = w.data.iter().map(|b| !b).collect();
        let stored = ZoneWrite {
            data: &flipped,
            ..*w
        };
        zns::store(m, &stored)?;
        self.bytes_inverted += flipped.len() as u64;
        Ok(zns::cost_write(m, &stored))
    }

    fn read_zone(&mut self, m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status> {
        let done = zns::read(m, r)?;
        r.data.iter_mut().for_each(|b| *b = !*b);
        Ok(done)
    }

    fn finish_zone(&mut self, m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant {
        zns::finish(m, zone, ready)
    }

    fn before_reset(&mut self, m: &mut Media, zone: usize) {
        zns::discard_buffered(m, zone);
    }

    fn reset_zone(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
        recorded: bool,
    ) -> (SimInstant, io::Result<()>) {
        zns::reset(m, zone, ready, recorded)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn a_toy_design_runs_under_fio_and_stores_its_bytes_inverted() {
    let sim = Sim::new(3);
    let c = Controller::with_design(presets::test_min(), Box::new(Inverted::default()))
        .expect("the controller accepts a design built outside the device crate");
    assert_eq!(c.design_name(), "inverted");
    let dev = DeviceHandle::new(&sim, c);

    let job = "[w]\nrw=write\nbs=16k\nsize=512k\n\n[r]\nstonewall\nrw=read\nbs=16k\nsize=512k\n";
    let jobs = build_jobs(&parse_jobfile(job).expect("parses")).expect("builds");
    let r = run(&sim, &dev, &jobs).expect("fio runs on the toy design");
    assert_eq!(r.jobs[0].error, None);
    assert_eq!(r.jobs[1].error, None);
    assert_eq!(r.jobs[0].write.io_bytes, 512 << 10);
    assert_eq!(r.jobs[1].read.io_bytes, 512 << 10);

    dev.with(|c| {
        let toy = c.design().as_any().downcast_ref::<Inverted>().expect("toy");
        assert_eq!(toy.bytes_inverted, 512 << 10);
        // The host reads what it wrote; the media holds its inverse.
        let mut host = vec![0u8; 16 << 10];
        let done = c.submit(
            SimInstant::from_ns(0),
            Command::Read {
                slba: 0,
                nlb: 4,
                data: &mut host,
                metadata: &mut [],
            },
        );
        assert_eq!(done.status, Status::SUCCESS);
        let mut media = vec![0u8; 16 << 10];
        c.peek_media(0, 0, &mut media).expect("stored bytes");
        assert!(host.iter().any(|&b| b != 0), "fio wrote data, not zeros");
        assert!(host.iter().zip(&media).all(|(h, m)| *h == !*m));
    });
}

/// A design that claims CCZNS's compressed I/O in Identify but keeps no chunk records.
#[derive(Default)]
struct Boasting(Inverted);

impl Design for Boasting {
    fn name(&self) -> &'static str {
        "boasting"
    }
    fn vendor_caps(&self) -> device::VendorCaps {
        device::VendorCaps {
            compressed_io: true,
            ..device::VendorCaps::default()
        }
    }
    fn write_zone(&mut self, m: &mut Media, w: &ZoneWrite) -> Result<SimInstant, Status> {
        self.0.write_zone(m, w)
    }
    fn read_zone(&mut self, m: &mut Media, r: &mut ZoneRead) -> Result<SimInstant, Status> {
        self.0.read_zone(m, r)
    }
    fn finish_zone(&mut self, m: &mut Media, zone: usize, ready: SimInstant) -> SimInstant {
        self.0.finish_zone(m, zone, ready)
    }
    fn before_reset(&mut self, m: &mut Media, zone: usize) {
        self.0.before_reset(m, zone)
    }
    fn reset_zone(
        &mut self,
        m: &mut Media,
        zone: usize,
        ready: SimInstant,
        recorded: bool,
    ) -> (SimInstant, io::Result<()>) {
        self.0.reset_zone(m, zone, ready, recorded)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn a_design_claiming_compressed_io_without_chunk_records_is_refused_not_a_panic() {
    let mut c = Controller::with_design(presets::test_min(), Box::new(Boasting::default()))
        .expect("accepted");
    let data = vec![7u8; 4096];
    let mut meta = vec![0u8; 64];
    let done = c.submit(
        SimInstant::from_ns(0),
        Command::CompressedWrite {
            slba: 0,
            intra: 0,
            nlb: 1,
            data: &data,
            metadata: &mut meta,
            append: false,
        },
    );
    assert_eq!(done.status, Status::INTERNAL_ERROR);
    assert_eq!(c.identify().nuse, 0, "nothing was written");
}
