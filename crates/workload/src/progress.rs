//! A progress callback a workload calls as operations complete: phase name, done, total. The
//! CLI decides what to show (a bar on a terminal, nothing otherwise); workloads never read the
//! wall clock themselves.

use std::fmt;
use std::rc::Rc;

/// The callback: phase name, operations done, operations in the phase.
pub type ProgressFn = dyn Fn(&str, u64, u64);

#[derive(Clone)]
pub struct Progress(pub Rc<ProgressFn>);

impl Progress {
    /// Report every `total / 200` operations (and the last), so the callback stays cheap.
    pub fn tick(&self, phase: &str, done: u64, total: u64) {
        let step = (total / 200).max(1);
        if done.is_multiple_of(step) || done == total {
            (self.0)(phase, done, total);
        }
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress")
    }
}

impl PartialEq for Progress {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}
