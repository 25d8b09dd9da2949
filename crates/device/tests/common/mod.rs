//! A small harness for device tests: a controller, a clock, and one-line commands.
#![allow(dead_code)]

use device::{
    presets, Command, Completion, Controller, DeviceConfig, Status, ZoneAction, ZoneDescriptor,
    ZoneState,
};
use sim::{Rng, SimInstant};

pub struct Dev {
    pub c: Controller,
    pub now: SimInstant,
    pub rng: Rng,
}

impl Dev {
    pub fn new(cfg: DeviceConfig) -> Dev {
        Dev {
            c: Controller::in_memory(cfg).expect("valid config"),
            now: SimInstant::ZERO,
            rng: Rng::new(7),
        }
    }
    pub fn min() -> Dev {
        Dev::new(presets::test_min())
    }
    pub fn with_limits(open: u32, active: u32, auto_transition: bool) -> Dev {
        let mut cfg = presets::test_min();
        cfg.zones.max_open = open;
        cfg.zones.max_active = active;
        cfg.controller.auto_transition = auto_transition;
        Dev::new(cfg)
    }
    pub fn lba(&self) -> usize {
        self.c.layout().lba_bytes as usize
    }
    pub fn ms(&self) -> usize {
        self.c.layout().metadata_bytes as usize
    }
    pub fn zslba(&self, zone: u32) -> u64 {
        zone as u64 * self.c.layout().zone_size_lbas
    }
    pub fn cap(&self) -> u64 {
        self.c.layout().zone_capacity_lbas
    }
    pub fn submit(&mut self, cmd: Command<'_>) -> Completion {
        let comp = self.c.submit(self.now, cmd);
        assert!(comp.done_at >= self.now);
        self.now = comp.done_at;
        comp
    }
    pub fn random(&mut self, nlb: u64) -> (Vec<u8>, Vec<u8>) {
        let mut d = vec![0u8; nlb as usize * self.lba()];
        let mut m = vec![0u8; nlb as usize * self.ms()];
        self.rng.fill(&mut d);
        self.rng.fill(&mut m);
        (d, m)
    }
    pub fn write(&mut self, slba: u64, nlb: u64) -> Status {
        let (d, m) = self.random(nlb);
        self.submit(Command::Write {
            slba,
            nlb: nlb as u32,
            data: &d,
            metadata: &m,
        })
        .status
    }
    /// Write `data` (whole blocks, no metadata) at `slba`.
    pub fn write_data(&mut self, slba: u64, data: &[u8]) -> Status {
        let nlb = (data.len() / self.lba()) as u32;
        self.submit(Command::Write {
            slba,
            nlb,
            data,
            metadata: &[],
        })
        .status
    }
    /// Zone `zone`'s descriptor.
    pub fn zone(&self, zone: u32) -> ZoneDescriptor {
        self.zones()[zone as usize]
    }
    /// A zone action on zone `zone` (as `mgmt`).
    pub fn zone_action(&mut self, zone: u32, action: ZoneAction) -> Status {
        self.mgmt(zone, action)
    }
    /// The ZNS+ design's spare block groups per die group.
    pub fn spares(&self) -> Vec<u64> {
        self.c
            .design()
            .as_any()
            .downcast_ref::<device::design::znsplus::Znsplus>()
            .expect("a znsplus device")
            .spare_groups()
    }
    pub fn append(&mut self, zslba: u64, nlb: u64) -> Completion {
        let (d, m) = self.random(nlb);
        self.submit(Command::ZoneAppend {
            zslba,
            nlb: nlb as u32,
            data: &d,
            metadata: &m,
        })
    }
    pub fn read(&mut self, slba: u64, nlb: u64) -> (Status, Vec<u8>) {
        let mut d = vec![0xAAu8; nlb as usize * self.lba()];
        let mut m = vec![0u8; nlb as usize * self.ms()];
        let s = self
            .submit(Command::Read {
                slba,
                nlb: nlb as u32,
                data: &mut d,
                metadata: &mut m,
            })
            .status;
        (s, d)
    }
    pub fn mgmt(&mut self, zone: u32, action: ZoneAction) -> Status {
        let slba = self.zslba(zone);
        self.submit(Command::ZoneMgmtSend {
            slba,
            action,
            select_all: false,
        })
        .status
    }
    pub fn mgmt_all(&mut self, action: ZoneAction) -> Status {
        self.submit(Command::ZoneMgmtSend {
            slba: 0,
            action,
            select_all: true,
        })
        .status
    }
    pub fn state(&self, zone: u32) -> ZoneState {
        self.c.zone(zone).state
    }
    pub fn zones(&self) -> Vec<ZoneDescriptor> {
        (0..self.c.zone_count()).map(|z| self.c.zone(z)).collect()
    }
    /// Put `zone` in `state` by the host's own commands (or injection for RO/offline).
    pub fn make(&mut self, zone: u32, state: ZoneState) {
        let z = self.zslba(zone);
        match state {
            ZoneState::Empty => {}
            ZoneState::ImplicitlyOpened => assert_eq!(self.write(z, 1), Status::SUCCESS),
            ZoneState::ExplicitlyOpened => {
                assert_eq!(self.mgmt(zone, ZoneAction::Open), Status::SUCCESS)
            }
            ZoneState::Closed => {
                assert_eq!(self.write(z, 1), Status::SUCCESS);
                assert_eq!(self.mgmt(zone, ZoneAction::Close), Status::SUCCESS);
            }
            ZoneState::Full => {
                assert_eq!(self.write(z, 1), Status::SUCCESS);
                assert_eq!(self.mgmt(zone, ZoneAction::Finish), Status::SUCCESS);
            }
            ZoneState::ReadOnly | ZoneState::Offline => self.c.inject_zone_condition(zone, state),
        }
        assert_eq!(self.state(zone), state);
    }
}

pub const ALL_STATES: [ZoneState; 7] = [
    ZoneState::Empty,
    ZoneState::ImplicitlyOpened,
    ZoneState::ExplicitlyOpened,
    ZoneState::Closed,
    ZoneState::ReadOnly,
    ZoneState::Full,
    ZoneState::Offline,
];
