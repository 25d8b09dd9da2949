//! A progress bar on stderr while a run goes, drawn only when stderr is a terminal (CI logs and
//! pipes stay clean), redrawn at most ten times a wall-clock second.

use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

use workload::progress::Progress;

pub fn terminal() -> Option<Progress> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let last = RefCell::new(Instant::now() - Duration::from_secs(1));
    Some(Progress(Rc::new(
        move |phase: &str, done: u64, total: u64| {
            let mut last = last.borrow_mut();
            if done < total && last.elapsed() < Duration::from_millis(100) {
                return;
            }
            *last = Instant::now();
            let width = 30usize;
            let filled = (done as f64 / total.max(1) as f64 * width as f64) as usize;
            let mut err = std::io::stderr();
            let _ = write!(
                err,
                "\r{phase:<12} [{}{}] {:>5.1}% {done}/{total}",
                "#".repeat(filled.min(width)),
                ".".repeat(width - filled.min(width)),
                done as f64 * 100.0 / total.max(1) as f64
            );
            if done >= total {
                let _ = writeln!(err);
            }
            let _ = err.flush();
        },
    )))
}
