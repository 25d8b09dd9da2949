//! The executor: tasks, timers and the run loop.
//!
//! Time only moves when no task is ready: the loop polls ready tasks in FIFO order, then pops the
//! earliest timer, sets the clock to it and wakes every task whose timer is due at that instant,
//! in the order the timers were set. Wakers from the sync primitives go through a shared queue
//! that is drained in push order, so the interleaving is a pure function of the program.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use crate::rng::Rng;
use crate::time::{SimDuration, SimInstant};

type TaskId = u64; // slot index in the low 32 bits, generation in the high 32 bits

fn slot_of(id: TaskId) -> usize {
    (id & 0xffff_ffff) as usize
}

struct Slot {
    generation: u32,
    future: Option<Pin<Box<dyn Future<Output = ()>>>>,
    waker: Option<Waker>,
    queued: bool,
    live: bool,
}

/// Tasks woken through their wakers (sync primitives, join handles), in wake order. `any`
/// lets the run loop skip the lock after the many polls that woke nobody.
#[derive(Default)]
struct WokenQueue {
    ids: Mutex<Vec<TaskId>>,
    any: AtomicBool,
}

struct TaskWaker {
    id: TaskId,
    woken: Arc<WokenQueue>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.woken
            .ids
            .lock()
            .expect("waker queue poisoned")
            .push(self.id);
        self.woken.any.store(true, Ordering::Release);
    }
}

struct Core {
    now: Cell<u64>,
    timer_seq: Cell<u64>,
    timers: RefCell<BinaryHeap<Reverse<Timer>>>,
    slots: RefCell<Vec<Slot>>,
    free_slots: RefCell<Vec<usize>>,
    ready: RefCell<VecDeque<TaskId>>,
    woken: Arc<WokenQueue>,
    /// The buffer `drain_woken` swaps with the queue's (kept to spare an allocation per drain).
    draining: RefCell<Vec<TaskId>>,
    current: Cell<TaskId>,
    live_tasks: Cell<usize>,
    polls: Cell<u64>,
    rng: Rng,
}

/// A task's timer: due at the high 64 bits of `key`, set `seq`-th (the low 64 bits), so timers
/// order by time then by setting order in one integer comparison.
#[derive(Clone, Copy, Debug)]
struct Timer {
    key: u128,
    task: TaskId,
}

impl Timer {
    fn due(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl PartialEq for Timer {
    fn eq(&self, other: &Timer) -> bool {
        self.key == other.key
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, other: &Timer) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Timer {
    fn cmp(&self, other: &Timer) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// Handle to one simulation: its clock, its tasks and its root RNG. Cheap to clone.
#[derive(Clone)]
pub struct Sim {
    core: Rc<Core>,
}

/// What [`Sim::run`] found when it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    /// The virtual time when the loop stopped.
    pub now: SimInstant,
    /// Tasks still alive with nothing left to wake them: zero unless something deadlocked.
    pub blocked_tasks: usize,
}

impl Sim {
    /// A new simulation at time zero whose random streams derive from `seed`.
    pub fn new(seed: u64) -> Sim {
        Sim {
            core: Rc::new(Core {
                now: Cell::new(0),
                timer_seq: Cell::new(0),
                timers: RefCell::new(BinaryHeap::new()),
                slots: RefCell::new(Vec::new()),
                free_slots: RefCell::new(Vec::new()),
                ready: RefCell::new(VecDeque::new()),
                woken: Arc::new(WokenQueue::default()),
                draining: RefCell::new(Vec::new()),
                current: Cell::new(u64::MAX),
                live_tasks: Cell::new(0),
                polls: Cell::new(0),
                rng: Rng::new(seed),
            }),
        }
    }

    pub fn now(&self) -> SimInstant {
        SimInstant::from_ns(self.core.now.get())
    }

    /// The root seed of this simulation.
    pub fn seed(&self) -> u64 {
        self.core.rng.seed()
    }

    /// An independent random stream for the component named `label`.
    pub fn rng(&self, label: &str) -> Rng {
        self.core.rng.stream(label)
    }

    /// Number of task polls so far (a measure of simulator work).
    pub fn polls(&self) -> u64 {
        self.core.polls.get()
    }

    /// Start a task; it first runs when the current task yields (or when `run` starts).
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let state = Rc::new(RefCell::new(JoinState {
            result: None,
            waiter: None,
        }));
        let task_state = state.clone();
        let wrapped = async move {
            let out = future.await;
            let waiter = {
                let mut s = task_state.borrow_mut();
                s.result = Some(out);
                s.waiter.take()
            };
            if let Some(w) = waiter {
                w.wake();
            }
        };
        self.spawn_boxed(Box::pin(wrapped));
        JoinHandle { state }
    }

    fn spawn_boxed(&self, future: Pin<Box<dyn Future<Output = ()>>>) {
        let core = &self.core;
        let mut slots = core.slots.borrow_mut();
        let index = match core.free_slots.borrow_mut().pop() {
            Some(i) => i,
            None => {
                slots.push(Slot {
                    generation: 0,
                    future: None,
                    waker: None,
                    queued: false,
                    live: false,
                });
                slots.len() - 1
            }
        };
        let slot = &mut slots[index];
        slot.generation = slot.generation.wrapping_add(1);
        let id = (slot.generation as u64) << 32 | index as u64;
        slot.future = Some(future);
        slot.waker = Some(Waker::from(Arc::new(TaskWaker {
            id,
            woken: core.woken.clone(),
        })));
        slot.live = true;
        slot.queued = true;
        core.ready.borrow_mut().push_back(id);
        core.live_tasks.set(core.live_tasks.get() + 1);
    }

    /// A future that completes at `deadline` (at once if it has passed).
    pub fn sleep_until(&self, deadline: SimInstant) -> Sleep {
        Sleep {
            core: self.core.clone(),
            deadline: deadline.as_ns(),
            registered: false,
        }
    }

    pub fn sleep(&self, d: SimDuration) -> Sleep {
        self.sleep_until(self.now() + d)
    }

    /// Let every other ready task run once before continuing.
    pub fn yield_now(&self) -> YieldNow {
        YieldNow { yielded: false }
    }

    fn enqueue(&self, id: TaskId) {
        let mut slots = self.core.slots.borrow_mut();
        let Some(slot) = slots.get_mut(slot_of(id)) else {
            return;
        };
        if slot.live && !slot.queued && (id >> 32) as u32 == slot.generation {
            slot.queued = true;
            self.core.ready.borrow_mut().push_back(id);
        }
    }

    fn drain_woken(&self) {
        let queue = &self.core.woken;
        // A plain load first: most polls woke nobody, and a swap is a locked instruction.
        if !queue.any.load(Ordering::Relaxed) || !queue.any.swap(false, Ordering::Acquire) {
            return;
        }
        let mut ids = self.core.draining.take();
        std::mem::swap(
            &mut ids,
            &mut queue.ids.lock().expect("waker queue poisoned"),
        );
        for &id in &ids {
            self.enqueue(id);
        }
        ids.clear();
        *self.core.draining.borrow_mut() = ids;
    }

    fn poll_task(&self, id: TaskId) {
        let core = &self.core;
        let (mut future, waker) = {
            let mut slots = core.slots.borrow_mut();
            let slot = &mut slots[slot_of(id)];
            if !slot.live || (id >> 32) as u32 != slot.generation {
                return;
            }
            slot.queued = false;
            match slot.future.take() {
                // The waker is moved out for the poll and back after: no reference count
                // traffic per poll.
                Some(f) => (f, slot.waker.take().expect("live task has a waker")),
                None => return,
            }
        };
        core.current.set(id);
        core.polls.set(core.polls.get() + 1);
        let mut cx = Context::from_waker(&waker);
        let done = future.as_mut().poll(&mut cx).is_ready();
        core.current.set(u64::MAX);
        let mut slots = core.slots.borrow_mut();
        let slot = &mut slots[slot_of(id)];
        // A power cut during the poll dropped the task already (and may have freed its slot).
        if !slot.live || (id >> 32) as u32 != slot.generation {
            return; // `future` is dropped after the borrow (a destructor may wake a task)
        }
        if done {
            slot.live = false;
            slot.queued = false;
            core.free_slots.borrow_mut().push(slot_of(id));
            core.live_tasks.set(core.live_tasks.get() - 1);
        } else {
            slot.future = Some(future);
            slot.waker = Some(waker);
        }
    }

    /// Run until no task can make progress, or until the clock would pass `limit`.
    fn run_inner(&self, limit: Option<u64>) -> RunOutcome {
        loop {
            self.drain_woken();
            loop {
                let next = self.core.ready.borrow_mut().pop_front();
                let Some(id) = next else { break };
                self.poll_task(id);
                self.drain_woken();
            }
            // Nothing is ready: move the clock to the next timer.
            let t = match self.core.timers.borrow().peek() {
                Some(Reverse(timer)) => timer.due(),
                None => break,
            };
            if let Some(limit) = limit {
                if t > limit {
                    self.core.now.set(limit.max(self.core.now.get()));
                    break;
                }
            }
            assert!(t >= self.core.now.get(), "timer in the past");
            self.core.now.set(t);
            loop {
                let due = {
                    let mut timers = self.core.timers.borrow_mut();
                    match timers.peek() {
                        Some(Reverse(timer)) if timer.due() == t => {
                            timers.pop().map(|Reverse(timer)| timer.task)
                        }
                        _ => None,
                    }
                };
                match due {
                    Some(id) => self.enqueue(id),
                    None => break,
                }
            }
        }
        RunOutcome {
            now: self.now(),
            blocked_tasks: self.core.live_tasks.get(),
        }
    }

    /// A power cut: every task is dropped where it stands (nothing of it runs again) and every
    /// timer is forgotten; the clock keeps its time. What the tasks shared with the outside (a
    /// device) stays as they left it. The simulation can take new tasks afterwards.
    pub fn power_cut(&self) {
        let core = &self.core;
        let futures: Vec<_> = {
            let mut slots = core.slots.borrow_mut();
            let taken = slots
                .iter_mut()
                .filter_map(|s| {
                    s.live = false;
                    s.queued = false;
                    s.waker = None;
                    s.future.take()
                })
                .collect();
            *core.free_slots.borrow_mut() = (0..slots.len()).rev().collect();
            taken
        };
        core.live_tasks.set(0);
        // Destructors run outside the borrows: one may wake a task or set a timer.
        drop(futures);
        core.timers.borrow_mut().clear();
        core.ready.borrow_mut().clear();
        core.woken.ids.lock().expect("waker queue poisoned").clear();
        core.woken.any.store(false, Ordering::Release);
    }

    /// Run until no task can make progress.
    pub fn run(&self) -> RunOutcome {
        self.run_inner(None)
    }

    /// Run until no task can make progress or the clock reaches `limit`.
    pub fn run_until(&self, limit: SimInstant) -> RunOutcome {
        self.run_inner(Some(limit.as_ns()))
    }

    /// Spawn `future`, run the simulation to the end, and return the future's output.
    /// Panics if the future never finished (it deadlocked).
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let handle = self.spawn(future);
        self.run();
        handle
            .try_take()
            .expect("block_on: the future never completed (deadlock)")
    }
}

struct JoinState<T> {
    result: Option<T>,
    waiter: Option<Waker>,
}

/// Awaits the output of a spawned task.
pub struct JoinHandle<T> {
    state: Rc<RefCell<JoinState<T>>>,
}

impl<T> JoinHandle<T> {
    /// The output if the task has finished.
    pub fn try_take(&self) -> Option<T> {
        self.state.borrow_mut().result.take()
    }
    pub fn is_finished(&self) -> bool {
        self.state.borrow().result.is_some()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut s = self.state.borrow_mut();
        match s.result.take() {
            Some(v) => Poll::Ready(v),
            None => {
                s.waiter = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Future returned by [`Sim::sleep_until`].
pub struct Sleep {
    core: Rc<Core>,
    deadline: u64,
    registered: bool,
}

impl Future for Sleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.core.now.get() >= self.deadline {
            return Poll::Ready(());
        }
        if !self.registered {
            let task = self.core.current.get();
            assert!(task != u64::MAX, "Sleep polled outside a task of its Sim");
            let seq = self.core.timer_seq.get();
            self.core.timer_seq.set(seq + 1);
            self.core.timers.borrow_mut().push(Reverse(Timer {
                key: (self.deadline as u128) << 64 | seq as u128,
                task,
            }));
            self.registered = true;
        }
        Poll::Pending
    }
}

/// Future returned by [`Sim::yield_now`].
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    #[test]
    fn sleeps_wake_in_time_then_sequence_order() {
        let sim = Sim::new(1);
        let log = Rc::new(RefCell::new(Vec::new()));
        for (name, t) in [("a", 30u64), ("b", 10), ("c", 30), ("d", 20)] {
            let (s, l) = (sim.clone(), log.clone());
            sim.spawn(async move {
                s.sleep(SimDuration::from_ns(t)).await;
                l.borrow_mut().push((name, s.now().as_ns()));
            });
        }
        let out = sim.run();
        assert_eq!(out.blocked_tasks, 0);
        assert_eq!(
            *log.borrow(),
            vec![("b", 10), ("d", 20), ("a", 30), ("c", 30)]
        );
        assert_eq!(out.now.as_ns(), 30);
    }

    #[test]
    fn join_returns_output_and_nanosecond_resolution() {
        let sim = Sim::new(1);
        let s = sim.clone();
        let v = sim.block_on(async move {
            let s2 = s.clone();
            let h = s.spawn(async move {
                s2.sleep(SimDuration::from_ns(1)).await;
                s2.now().as_ns() * 10
            });
            h.await + 1
        });
        assert_eq!(v, 11);
    }

    #[test]
    fn run_until_stops_at_limit_and_resumes() {
        let sim = Sim::new(1);
        let s = sim.clone();
        let h = sim.spawn(async move {
            s.sleep(SimDuration::from_us(100)).await;
            7
        });
        let out = sim.run_until(SimInstant::from_ns(50_000));
        assert_eq!(out.now.as_ns(), 50_000);
        assert!(!h.is_finished());
        sim.run();
        assert_eq!(h.try_take(), Some(7));
    }

    #[test]
    fn a_power_cut_drops_every_task_and_timer_and_the_sim_goes_on() {
        let sim = Sim::new(1);
        let shared = Rc::new(RefCell::new(Vec::new()));
        for t in [10u64, 20, 30] {
            let (s, l) = (sim.clone(), shared.clone());
            sim.spawn(async move {
                loop {
                    s.sleep(SimDuration::from_ns(t)).await;
                    l.borrow_mut().push(t);
                }
            });
        }
        sim.run_until(SimInstant::from_ns(25));
        let before = shared.borrow().clone();
        assert_eq!(before.len(), 3, "{before:?}");
        sim.power_cut();
        // The tasks' clones of `shared` went with them.
        assert_eq!(Rc::strong_count(&shared), 1);
        let out = sim.run();
        assert_eq!((out.now.as_ns(), out.blocked_tasks), (25, 0));
        let s = sim.clone();
        let v = sim.block_on(async move {
            s.sleep(SimDuration::from_ns(5)).await;
            s.now().as_ns()
        });
        assert_eq!(v, 30);
        assert_eq!(*shared.borrow(), before);
    }

    #[test]
    fn deadlock_is_reported() {
        let sim = Sim::new(1);
        let n = Rc::new(crate::sync::Notify::new());
        let n2 = n.clone();
        sim.spawn(async move { n2.notified().await });
        assert_eq!(sim.run().blocked_tasks, 1);
    }

    #[test]
    fn same_seed_same_trace() {
        fn trace(seed: u64) -> Vec<(u64, u64)> {
            let sim = Sim::new(seed);
            let log = Rc::new(RefCell::new(Vec::new()));
            for task in 0..20u64 {
                let (s, l) = (sim.clone(), log.clone());
                sim.spawn(async move {
                    let mut r = s.rng(&format!("task{task}"));
                    for _ in 0..50 {
                        s.sleep(SimDuration::from_ns(r.below(1000))).await;
                        l.borrow_mut().push((task, s.now().as_ns()));
                    }
                });
            }
            sim.run();
            log.take()
        }
        assert_eq!(trace(42), trace(42));
        assert_ne!(trace(42), trace(43));
    }
}
