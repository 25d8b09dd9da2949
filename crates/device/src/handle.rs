//! The device as host tasks see it: submit a command, wait in virtual time for its completion.

use std::cell::RefCell;
use std::rc::Rc;

use sim::Sim;

use crate::cmd::{Command, Completion};
use crate::controller::Controller;

/// A shared handle on one controller inside a simulation. Cheap to clone.
#[derive(Clone)]
pub struct DeviceHandle {
    sim: Sim,
    controller: Rc<RefCell<Controller>>,
}

impl DeviceHandle {
    pub fn new(sim: &Sim, controller: Controller) -> Self {
        DeviceHandle {
            sim: sim.clone(),
            controller: Rc::new(RefCell::new(controller)),
        }
    }

    /// Submit `command` now and return its completion when the host would see it.
    pub async fn submit(&self, command: Command<'_>) -> Completion {
        let completion = self.controller.borrow_mut().submit(self.sim.now(), command);
        self.sim.sleep_until(completion.done_at).await;
        completion
    }

    /// Look at or change the controller outside of any command (reports, fault injection).
    pub fn with<R>(&self, f: impl FnOnce(&mut Controller) -> R) -> R {
        f(&mut self.controller.borrow_mut())
    }

    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    /// Take the controller back once no task holds the handle any more.
    pub fn into_controller(self) -> Option<Controller> {
        Rc::try_unwrap(self.controller)
            .ok()
            .map(RefCell::into_inner)
    }
}
