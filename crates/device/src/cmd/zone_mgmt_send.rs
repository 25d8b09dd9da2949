//! Zone Management Send (79h): Open, Close, Finish, Reset, Offline, each for one zone or with
//! Select All.
//!
//! Transitions (research/simulator-anchors.md §6.3; anything else is Invalid Zone State
//! Transition):
//!
//! | from \ action | Open | Close | Finish | Reset | Offline |
//! |---|---|---|---|---|---|
//! | Empty | → EO (active + open) | invalid | → Full | no-op | invalid |
//! | Impl. opened | → EO | → Closed | → Full | → Empty | invalid |
//! | Expl. opened | no-op | → Closed | → Full | → Empty | invalid |
//! | Closed | → EO (open) | no-op | → Full | → Empty | invalid |
//! | Full | invalid | invalid | no-op | → Empty | invalid |
//! | Read only | invalid | invalid | invalid | invalid | → Offline |
//! | Offline | invalid | invalid | invalid | invalid | no-op |
//!
//! Open with the padding option (CCZNS) takes the same transitions as Open and makes the zone a
//! padding zone; it is refused with Invalid Field on a plain ZNS device or where the zone's byte
//! write pointer is inside an LBA.
//!
//! Closing an open zone whose write pointer is still at its start leaves it Closed (QEMU's
//! choice; null_blk makes it Empty). Finish pads the rest of the zone on flash and Reset
//! erases the blocks it programmed; both hold the dies, so they contend with host I/O, and the
//! command completes when the flash work is done. Select All walks zones in LBA order and stops
//! at the first failure, leaving the zones before it changed, as the spec allows.

use sim::SimInstant;

use crate::cmd::ZoneAction;
use crate::controller::Controller;
use crate::status::Status;
use crate::zone::ZoneState;

impl Controller {
    pub(crate) fn zone_mgmt_send(
        &mut self,
        ready: SimInstant,
        slba: u64,
        action: ZoneAction,
        select_all: bool,
    ) -> Result<(u64, SimInstant), Status> {
        let padding_on_plain =
            action == ZoneAction::OpenPadding && !self.design.vendor_caps().compressed_io;
        if matches!(action, ZoneAction::Other(_)) || padding_on_plain {
            return Err(Status::INVALID_FIELD);
        }
        self.counters.zone_management += 1;
        if select_all {
            let mut done = ready.as_ns();
            for zi in 0..self.zones.len() {
                if action.select_all_scope(self.zones[zi].state) {
                    done = done.max(self.zone_action(zi, action, ready.as_ns())?);
                }
            }
            return Ok((0, SimInstant::from_ns(done)));
        }
        if slba >= self.layout.namespace_lbas() {
            return Err(Status::LBA_OUT_OF_RANGE);
        }
        if !slba.is_multiple_of(self.layout.zone_size_lbas) {
            return Err(Status::INVALID_FIELD);
        }
        let done = self.zone_action(self.zone_index(slba), action, ready.as_ns())?;
        Ok((0, SimInstant::from_ns(done)))
    }

    /// One zone's transition: validated, then applied; returns when its flash work (if any)
    /// completes.
    fn zone_action(&mut self, zi: usize, action: ZoneAction, ready: u64) -> Result<u64, Status> {
        // ZNS+: closing or finishing a TL-open zone closes its threaded log (it is Full).
        if self.zones[zi].is_tl_open() && matches!(action, ZoneAction::Close | ZoneAction::Finish) {
            return Ok(self.close_tl(zi, SimInstant::from_ns(ready))?.as_ns());
        }
        match self.validate_zone_action(zi, action)? {
            Transition::None => Ok(ready),
            Transition::Open { padding, victim } => {
                self.take_open(zi, victim);
                self.set_state(zi, ZoneState::ExplicitlyOpened);
                if padding {
                    self.zones[zi].padding = true;
                }
                Ok(ready)
            }
            Transition::To(state) => {
                self.set_state(zi, state);
                Ok(ready)
            }
            Transition::Finish => Ok(self.finish_zone(zi, ready)),
            Transition::Reset => self.reset_zone(zi, ready),
        }
    }

    /// What `action` does to zone `zi` (the table in this file's doc); changes nothing.
    fn validate_zone_action(&self, zi: usize, action: ZoneAction) -> Result<Transition, Status> {
        use ZoneState::*;
        let z = self.zones[zi];
        Ok(match (action, z.state) {
            (ZoneAction::OpenPadding, Empty | Closed | ImplicitlyOpened | ExplicitlyOpened) => {
                // A zone turns into a padding zone only where its byte write pointer is on an
                // LBA boundary (always, for an empty zone); the type lasts until reset.
                if !z.padding && !z.bytes.is_multiple_of(self.layout.lba_bytes) {
                    return Err(Status::INVALID_FIELD);
                }
                Transition::Open {
                    padding: true,
                    victim: self.check_open(zi)?,
                }
            }
            (ZoneAction::Open, ExplicitlyOpened) => Transition::None,
            (ZoneAction::Open, Empty | Closed | ImplicitlyOpened) => Transition::Open {
                padding: false,
                victim: self.check_open(zi)?,
            },
            (ZoneAction::Close, Closed) => Transition::None,
            (ZoneAction::Close, ImplicitlyOpened | ExplicitlyOpened) => Transition::To(Closed),
            (ZoneAction::Finish, Full) => Transition::None,
            (ZoneAction::Finish, Empty | ImplicitlyOpened | ExplicitlyOpened | Closed) => {
                Transition::Finish
            }
            (ZoneAction::Reset, Empty) => Transition::None,
            (ZoneAction::Reset, ImplicitlyOpened | ExplicitlyOpened | Closed | Full) => {
                Transition::Reset
            }
            (ZoneAction::Offline, Offline) => Transition::None,
            (ZoneAction::Offline, ReadOnly) => Transition::To(Offline),
            _ => return Err(Status::ZONE_INVALID_TRANSITION),
        })
    }

    /// Finish: the design completes the zone's flash, the zone becomes Full.
    fn finish_zone(&mut self, zi: usize, ready: u64) -> u64 {
        let (design, mut m) = self.split();
        let done = design
            .finish_zone(&mut m, zi, SimInstant::from_ns(ready))
            .as_ns();
        let z = &mut self.zones[zi];
        z.wp = z.end_of_capacity();
        self.set_state(zi, ZoneState::Full);
        self.counters.zone_finishes += 1;
        done
    }

    /// Reset: the image records the zone Empty before the design frees its flash (storage.rs:
    /// the record that forgets a zone comes before the punch that frees it).
    fn reset_zone(&mut self, zi: usize, ready: u64) -> Result<u64, Status> {
        let (design, mut m) = self.split();
        design.before_reset(&mut m, zi);
        let z = &mut self.zones[zi];
        z.wp = z.zslba;
        z.bytes = 0;
        z.padding = false;
        z.attributes = 0;
        self.set_state(zi, ZoneState::Empty);
        let recorded = self.persist_command();
        // The design frees the zone's flash (and its bytes in the image, if the record was
        // written).
        let (design, mut m) = self.split();
        let (done, punched) =
            design.reset_zone(&mut m, zi, SimInstant::from_ns(ready), recorded.is_ok());
        let punched = punched.map_err(|e| {
            self.note_image_error("punch", &e);
            Status::INTERNAL_ERROR
        });
        self.counters.zone_resets += 1;
        recorded.and(punched)?;
        Ok(done.as_ns())
    }
}

/// What validation decided a zone action does.
enum Transition {
    /// Nothing (the zone is there already).
    None,
    /// Explicitly open it (a padding zone if `padding`), implicitly closing `victim` first.
    Open {
        padding: bool,
        victim: Option<usize>,
    },
    /// Move to this state; nothing else changes.
    To(ZoneState),
    Finish,
    Reset,
}
