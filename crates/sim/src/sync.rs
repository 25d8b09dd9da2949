//! Virtual-time synchronisation: semaphore, mutex, bounded channel, notify.
//!
//! These never block a thread; a waiting task is parked until another task releases what it
//! waits for. All queues are FIFO, so who gets a permit next is deterministic.

use std::cell::{Cell, RefCell, RefMut};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

struct Waiter {
    wanted: usize,
    granted: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

/// A counting semaphore with FIFO hand-off.
pub struct Semaphore {
    permits: Cell<usize>,
    waiters: RefCell<VecDeque<Rc<Waiter>>>,
}

impl Semaphore {
    pub fn new(permits: usize) -> Self {
        Semaphore {
            permits: Cell::new(permits),
            waiters: RefCell::new(VecDeque::new()),
        }
    }

    pub fn available_permits(&self) -> usize {
        self.permits.get()
    }

    /// Wait for `n` permits; they return when the [`Permit`] is dropped.
    pub fn acquire(&self, n: usize) -> Acquire<'_> {
        Acquire {
            sem: self,
            n,
            waiter: None,
        }
    }

    /// Take `n` permits now if they are free and nobody is queued before us.
    pub fn try_acquire(&self, n: usize) -> Option<Permit<'_>> {
        if self.waiters.borrow().is_empty() && self.permits.get() >= n {
            self.permits.set(self.permits.get() - n);
            Some(Permit { sem: self, n })
        } else {
            None
        }
    }

    /// Give `n` permits back and hand them to queued waiters in order.
    pub fn release(&self, n: usize) {
        self.permits.set(self.permits.get() + n);
        let mut waiters = self.waiters.borrow_mut();
        while let Some(w) = waiters.front() {
            if w.wanted > self.permits.get() {
                break;
            }
            self.permits.set(self.permits.get() - w.wanted);
            w.granted.set(true);
            if let Some(k) = w.waker.borrow_mut().take() {
                k.wake();
            }
            waiters.pop_front();
        }
    }
}

/// Permits held; returned on drop.
pub struct Permit<'a> {
    sem: &'a Semaphore,
    n: usize,
}

impl Permit<'_> {
    /// Keep the permits out of the semaphore for good (release them later with `release`).
    pub fn forget(mut self) {
        self.n = 0;
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if self.n > 0 {
            self.sem.release(self.n);
        }
    }
}

/// Future returned by [`Semaphore::acquire`].
pub struct Acquire<'a> {
    sem: &'a Semaphore,
    n: usize,
    waiter: Option<Rc<Waiter>>,
}

impl<'a> Future for Acquire<'a> {
    type Output = Permit<'a>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Permit<'a>> {
        let sem = self.sem;
        let n = self.n;
        match &self.waiter {
            None => {
                if let Some(p) = sem.try_acquire(n) {
                    return Poll::Ready(p);
                }
                let w = Rc::new(Waiter {
                    wanted: n,
                    granted: Cell::new(false),
                    waker: RefCell::new(Some(cx.waker().clone())),
                });
                sem.waiters.borrow_mut().push_back(w.clone());
                self.waiter = Some(w);
                Poll::Pending
            }
            Some(w) => {
                if w.granted.get() {
                    self.waiter = None;
                    Poll::Ready(Permit { sem, n })
                } else {
                    *w.waker.borrow_mut() = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        }
    }
}

impl Drop for Acquire<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.waiter.take() {
            if w.granted.get() {
                self.sem.release(w.wanted);
            } else {
                self.sem.waiters.borrow_mut().retain(|x| !Rc::ptr_eq(x, &w));
            }
        }
    }
}

/// A mutual-exclusion lock whose waiters queue in virtual time.
pub struct Mutex<T> {
    sem: Semaphore,
    value: RefCell<T>,
}

impl<T> Mutex<T> {
    pub fn new(value: T) -> Self {
        Mutex {
            sem: Semaphore::new(1),
            value: RefCell::new(value),
        }
    }
    pub async fn lock(&self) -> MutexGuard<'_, T> {
        let permit = self.sem.acquire(1).await;
        MutexGuard {
            value: self.value.borrow_mut(),
            _permit: permit,
        }
    }
}

/// Access to a locked [`Mutex`]'s value.
pub struct MutexGuard<'a, T> {
    value: RefMut<'a, T>,
    _permit: Permit<'a>,
}

impl<T> std::ops::Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}
impl<T> std::ops::DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

/// Wakes tasks waiting for an event. `notify_one` with nobody waiting stores one permit.
#[derive(Default)]
pub struct Notify {
    permit: Cell<bool>,
    waiters: RefCell<VecDeque<Rc<Waiter>>>,
}

impl Notify {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn notify_one(&self) {
        match self.waiters.borrow_mut().pop_front() {
            Some(w) => {
                w.granted.set(true);
                if let Some(k) = w.waker.borrow_mut().take() {
                    k.wake();
                }
            }
            None => self.permit.set(true),
        }
    }
    pub fn notify_waiters(&self) {
        for w in self.waiters.borrow_mut().drain(..) {
            w.granted.set(true);
            if let Some(k) = w.waker.borrow_mut().take() {
                k.wake();
            }
        }
    }
    pub fn notified(&self) -> Notified<'_> {
        Notified {
            notify: self,
            waiter: None,
        }
    }
}

/// Future returned by [`Notify::notified`].
pub struct Notified<'a> {
    notify: &'a Notify,
    waiter: Option<Rc<Waiter>>,
}

impl Future for Notified<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &self.waiter {
            None => {
                if self.notify.permit.replace(false) {
                    return Poll::Ready(());
                }
                let w = Rc::new(Waiter {
                    wanted: 0,
                    granted: Cell::new(false),
                    waker: RefCell::new(Some(cx.waker().clone())),
                });
                self.notify.waiters.borrow_mut().push_back(w.clone());
                self.waiter = Some(w);
                Poll::Pending
            }
            Some(w) if w.granted.get() => Poll::Ready(()),
            Some(w) => {
                *w.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl Drop for Notified<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.waiter.take() {
            if !w.granted.get() {
                self.notify
                    .waiters
                    .borrow_mut()
                    .retain(|x| !Rc::ptr_eq(x, &w));
            }
        }
    }
}

struct Chan<T> {
    queue: RefCell<VecDeque<T>>,
    capacity: usize,
    senders: Cell<usize>,
    receiver_alive: Cell<bool>,
    readable: Notify,
    writable: Semaphore,
}

/// A bounded multi-producer, single-consumer channel. Sending waits while it is full.
pub fn channel<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "channel capacity must be positive");
    let chan = Rc::new(Chan {
        queue: RefCell::new(VecDeque::new()),
        capacity,
        senders: Cell::new(1),
        receiver_alive: Cell::new(true),
        readable: Notify::new(),
        writable: Semaphore::new(capacity),
    });
    (Sender { chan: chan.clone() }, Receiver { chan })
}

pub struct Sender<T> {
    chan: Rc<Chan<T>>,
}

pub struct Receiver<T> {
    chan: Rc<Chan<T>>,
}

/// The receiver is gone; the value comes back.
#[derive(Debug, PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.chan.senders.set(self.chan.senders.get() + 1);
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        self.chan.senders.set(self.chan.senders.get() - 1);
        if self.chan.senders.get() == 0 {
            self.chan.readable.notify_one();
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        self.chan.receiver_alive.set(false);
        // Let blocked senders see that nobody will read.
        self.chan.writable.release(self.chan.capacity);
    }
}

impl<T> Sender<T> {
    pub async fn send(&self, value: T) -> Result<(), SendError<T>> {
        if !self.chan.receiver_alive.get() {
            return Err(SendError(value));
        }
        let permit = self.chan.writable.acquire(1).await;
        if !self.chan.receiver_alive.get() {
            return Err(SendError(value));
        }
        permit.forget();
        self.chan.queue.borrow_mut().push_back(value);
        self.chan.readable.notify_one();
        Ok(())
    }
}

impl<T> Receiver<T> {
    /// The next value, or `None` once every sender is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<T> {
        loop {
            if let Some(v) = self.chan.queue.borrow_mut().pop_front() {
                self.chan.writable.release(1);
                return Some(v);
            }
            if self.chan.senders.get() == 0 {
                return None;
            }
            self.chan.readable.notified().await;
        }
    }
    pub fn len(&self) -> usize {
        self.chan.queue.borrow().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sim, SimDuration};

    #[test]
    fn mutex_serialises_in_fifo_order() {
        let sim = Sim::new(1);
        let m = Rc::new(Mutex::new(Vec::new()));
        for i in 0..4u64 {
            let (s, m) = (sim.clone(), m.clone());
            sim.spawn(async move {
                let mut g = m.lock().await;
                s.sleep(SimDuration::from_ns(10)).await;
                g.push((i, s.now().as_ns()));
            });
        }
        assert_eq!(sim.run().blocked_tasks, 0);
        let v = Rc::try_unwrap(m)
            .ok()
            .expect("sole owner")
            .value
            .into_inner();
        assert_eq!(v, vec![(0, 10), (1, 20), (2, 30), (3, 40)]);
    }

    #[test]
    fn semaphore_limits_concurrency() {
        let sim = Sim::new(1);
        let sem = Rc::new(Semaphore::new(2));
        let done = Rc::new(RefCell::new(Vec::new()));
        for _ in 0..5 {
            let (s, sem, d) = (sim.clone(), sem.clone(), done.clone());
            sim.spawn(async move {
                let _p = sem.acquire(1).await;
                s.sleep(SimDuration::from_ns(100)).await;
                d.borrow_mut().push(s.now().as_ns());
            });
        }
        sim.run();
        assert_eq!(*done.borrow(), vec![100, 100, 200, 200, 300]);
        assert_eq!(sem.available_permits(), 2);
    }

    #[test]
    fn bounded_channel_applies_backpressure_and_closes() {
        let sim = Sim::new(1);
        let (tx, mut rx) = channel::<u64>(2);
        let s = sim.clone();
        let sent_at = Rc::new(RefCell::new(Vec::new()));
        let sa = sent_at.clone();
        sim.spawn(async move {
            for i in 0..4 {
                tx.send(i).await.expect("receiver alive");
                sa.borrow_mut().push(s.now().as_ns());
            }
        });
        let s = sim.clone();
        let got = sim.block_on(async move {
            let mut got = Vec::new();
            while let Some(v) = rx.recv().await {
                s.sleep(SimDuration::from_ns(5)).await;
                got.push(v);
            }
            got
        });
        assert_eq!(got, vec![0, 1, 2, 3]);
        // The receiver frees one slot at t=0; the fourth send waits until it takes another at t=5.
        assert_eq!(*sent_at.borrow(), vec![0, 0, 0, 5]);
    }

    #[test]
    fn notify_stores_one_permit() {
        let sim = Sim::new(1);
        let n = Rc::new(Notify::new());
        n.notify_one();
        let n2 = n.clone();
        sim.block_on(async move { n2.notified().await });
    }
}
