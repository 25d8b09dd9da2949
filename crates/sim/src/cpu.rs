//! Simulated host CPU cores.
//!
//! Work that costs CPU time holds one core for that long: [`CpuPool::run`] takes the core that
//! frees up first (lowest index on ties), so more work than cores queues up in virtual time.
//! Busy time is counted per core, which is how host CPU use is reported.

use std::cell::RefCell;

use crate::{Sim, SimDuration, SimInstant};

#[derive(Clone, Copy, Debug, Default)]
struct Core {
    busy_until: SimInstant,
    busy: SimDuration,
}

/// A pool of identical host cores.
pub struct CpuPool {
    sim: Sim,
    cores: RefCell<Vec<Core>>,
}

impl CpuPool {
    pub fn new(sim: &Sim, cores: usize) -> Self {
        assert!(cores > 0, "a CPU pool needs at least one core");
        CpuPool {
            sim: sim.clone(),
            cores: RefCell::new(vec![Core::default(); cores]),
        }
    }

    pub fn core_count(&self) -> usize {
        self.cores.borrow().len()
    }

    /// Spend `cost` of CPU time on the first free core; returns when the work is done.
    pub async fn run(&self, cost: SimDuration) {
        let end = self.reserve(cost);
        self.sim.sleep_until(end).await;
    }

    /// Spend `parts` as concurrent work items (threads of one job), each on the first core
    /// free at the time; returns when the last is done. With more parts than cores the parts
    /// queue as threads would.
    pub async fn run_parallel(&self, parts: &[SimDuration]) {
        let end = parts
            .iter()
            .map(|&c| self.reserve(c))
            .max()
            .unwrap_or(self.sim.now());
        self.sim.sleep_until(end).await;
    }

    /// Book `cost` on the core that frees up first; the instant the work ends.
    fn reserve(&self, cost: SimDuration) -> SimInstant {
        let now = self.sim.now();
        let mut cores = self.cores.borrow_mut();
        let core = cores
            .iter_mut()
            .min_by_key(|c| c.busy_until.max(now))
            .expect("pool has cores");
        let start = core.busy_until.max(now);
        core.busy_until = start + cost;
        core.busy += cost;
        core.busy_until
    }

    /// Busy time of each core so far (work already scheduled counts in full).
    pub fn busy_per_core(&self) -> Vec<SimDuration> {
        self.cores.borrow().iter().map(|c| c.busy).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn work_beyond_core_count_queues() {
        let sim = Sim::new(1);
        let pool = Rc::new(CpuPool::new(&sim, 2));
        let ends = Rc::new(RefCell::new(Vec::new()));
        for _ in 0..3 {
            let (s, p, e) = (sim.clone(), pool.clone(), ends.clone());
            sim.spawn(async move {
                p.run(SimDuration::from_us(10)).await;
                e.borrow_mut().push(s.now().as_ns());
            });
        }
        sim.run();
        assert_eq!(*ends.borrow(), vec![10_000, 10_000, 20_000]);
        let busy: u64 = pool.busy_per_core().iter().map(|d| d.as_ns()).sum();
        assert_eq!(busy, 30_000);
    }

    #[test]
    fn parallel_parts_spread_over_cores() {
        let sim = Sim::new(1);
        let pool = Rc::new(CpuPool::new(&sim, 2));
        let (s, p) = (sim.clone(), pool.clone());
        let end = sim.block_on(async move {
            // Three 10 µs parts on two cores: two run at once, the third after.
            p.run_parallel(&[SimDuration::from_us(10); 3]).await;
            s.now().as_ns()
        });
        assert_eq!(end, 20_000);
        let busy: u64 = pool.busy_per_core().iter().map(|d| d.as_ns()).sum();
        assert_eq!(busy, 30_000);
    }
}
