//! Executors: what runs a list of run specifications. A run is data ([`RunSpec`]), so an
//! executor may run it on this machine's threads ([`LocalPool`], the default) or hand it to
//! other processes or machines (a cluster scheduler would implement [`Executor`] the same
//! way); the results come back in the list's order whichever finished first.

use std::sync::Mutex;

use crate::spec::{RunResult, RunSpec};

/// Called as each run ends, in the order they end: its index in the list and its outcome.
pub type Done<'a> = dyn Fn(usize, &anyhow::Result<RunResult>) + Sync + 'a;

/// Runs run specifications.
pub trait Executor {
    /// Run every spec of `specs`; the outcomes in the list's order. `done` hears of each run as
    /// it ends (to keep its result on disk, to report progress).
    fn execute(&self, specs: &[RunSpec], done: &Done<'_>) -> Vec<anyhow::Result<RunResult>>;
}

/// Threads of this process, `workers` runs at a time; each run is one thread, on its own
/// virtual clock.
pub struct LocalPool {
    pub workers: usize,
}

impl LocalPool {
    /// `jobs` at a time (default: the machine's cores), never more than there are runs.
    pub fn new(jobs: Option<usize>, runs: usize) -> LocalPool {
        let workers = jobs
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
            .clamp(1, runs.max(1));
        LocalPool { workers }
    }
}

impl Executor for LocalPool {
    fn execute(&self, specs: &[RunSpec], done: &Done<'_>) -> Vec<anyhow::Result<RunResult>> {
        let next = Mutex::new(0usize);
        let results: Mutex<Vec<Option<anyhow::Result<RunResult>>>> =
            Mutex::new((0..specs.len()).map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..self.workers {
                s.spawn(|| loop {
                    let i = {
                        let mut n = next.lock().expect("lock");
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(spec) = specs.get(i) else { break };
                    let r = spec.run();
                    done(i, &r);
                    results.lock().expect("lock")[i] = Some(r);
                });
            }
        });
        results
            .into_inner()
            .expect("lock")
            .into_iter()
            .map(|r| r.expect("every run ran"))
            .collect()
    }
}
