//! Flush (00h). The write buffer is capacitor-protected, so buffered data is already durable;
//! Flush only saves the zone table of an image file.

use sim::SimInstant;

use crate::controller::Controller;
use crate::status::Status;

impl Controller {
    pub(crate) fn flush(&mut self, ready: SimInstant) -> Result<(u64, SimInstant), Status> {
        self.save_if_dirty().map_err(|_| Status::INTERNAL_ERROR)?;
        Ok((0, ready))
    }
}
