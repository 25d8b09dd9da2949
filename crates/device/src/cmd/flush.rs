//! Flush (00h). The write buffer is capacitor-protected and every command is recorded in the
//! image as it completes, so Flush only syncs the image when asked to (`set_sync`).

use sim::SimInstant;

use crate::controller::Controller;
use crate::status::Status;

impl Controller {
    pub(crate) fn flush(&mut self, ready: SimInstant) -> Result<(u64, SimInstant), Status> {
        self.persist_flush()?;
        Ok((0, ready))
    }
}
