//! Faults injected into a device for tests and torture (issue 7 item 2): flash that fails ECC
//! and commands refused with a chosen status. A refused command changes nothing on the device,
//! as a real controller's early abort would not; a read of a bad range returns no data.

use std::collections::VecDeque;
use std::ops::Range;

use crate::cmd::Command;
use crate::Status;

/// Which commands a refusal applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    /// Read and decompressed read.
    Read,
    /// Write, Zone Append and compressed write.
    Write,
    /// Zone Management Send and Receive.
    ZoneMgmt,
    /// Flush and Deallocate.
    Other,
    /// Any command.
    Any,
}

impl CommandKind {
    fn matches(self, c: &Command<'_>) -> bool {
        let kind = match c {
            Command::Read { .. }
            | Command::ReadDiscard { .. }
            | Command::DecompressedRead { .. } => CommandKind::Read,
            Command::Write { .. }
            | Command::ZoneAppend { .. }
            | Command::CompressedWrite { .. }
            | Command::ZoneCompaction { .. }
            | Command::Copy { .. } => CommandKind::Write,
            Command::ZoneMgmtSend { .. }
            | Command::ZoneMgmtRecv { .. }
            | Command::TlOpen { .. } => CommandKind::ZoneMgmt,
            Command::Flush | Command::Deallocate { .. } | Command::IdentifyMapping { .. } => {
                CommandKind::Other
            }
        };
        self == CommandKind::Any || self == kind
    }
}

/// The faults a device holds now. Empty by default; cleared by nothing but the caller.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// LBA ranges whose flash fails ECC: a read that touches one ends with
    /// UNRECOVERED_READ_ERROR.
    pub bad_lbas: Vec<Range<u64>>,
    /// The next commands of a kind end with these statuses, first come first served, before
    /// they do anything.
    pub refusals: VecDeque<(CommandKind, Status)>,
    /// Faults that fired so far.
    pub fired: u64,
}

impl Faults {
    /// The status `c` must end with instead of running, if a fault applies to it.
    pub(crate) fn check(&mut self, c: &Command<'_>) -> Option<Status> {
        if let Some(i) = self.refusals.iter().position(|(k, _)| k.matches(c)) {
            self.fired += 1;
            return self.refusals.remove(i).map(|(_, s)| s);
        }
        let read = match *c {
            Command::Read { slba, nlb, .. } | Command::ReadDiscard { slba, nlb, .. } => {
                Some(slba..slba + nlb as u64)
            }
            Command::DecompressedRead { slba, cnlb, .. } => Some(slba..slba + cnlb as u64),
            _ => None,
        };
        let bad = read.is_some_and(|r| {
            self.bad_lbas
                .iter()
                .any(|b| b.start < r.end && r.start < b.end)
        });
        if bad {
            self.fired += 1;
            return Some(Status::UNRECOVERED_READ_ERROR);
        }
        None
    }
}
