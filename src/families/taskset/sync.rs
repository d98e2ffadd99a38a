//! rt-app's named condition variables and barriers, as the task threads share them:
//! `suspend`/`resume`, `wait`/`signal`/`broad`/`sync`, and `barrier`. A thread blocked in
//! one when the set ends (or is stopped) is let go: it wakes once, at the end, never on a
//! timer of its own before.

use crate::sys::clock::monotonic_ns;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// Signalled (or the barrier's last thread arrived).
    Released,
    /// The set ended or was stopped while it waited.
    Ended,
}

/// Waits on `cv` until `done` says so or the set's end (`end_ns`, CLOCK_MONOTONIC) or
/// closing: a thread wakes once at the end, not periodically.
fn wait_until<'a, S>(
    cv: &Condvar,
    mut guard: MutexGuard<'a, S>,
    end_ns: u64,
    mut done: impl FnMut(&mut S) -> Option<Woken>,
) -> (MutexGuard<'a, S>, Woken) {
    loop {
        if let Some(woken) = done(&mut guard) {
            return (guard, woken);
        }
        let now = monotonic_ns();
        if now >= end_ns {
            return (guard, Woken::Ended);
        }
        guard = cv.wait_timeout(guard, Duration::from_nanos(end_ns - now)).unwrap_or_else(|e| e.into_inner()).0;
    }
}

#[derive(Default)]
struct CondState {
    /// Each waiter's ticket, oldest first, and the tickets a signal has released.
    waiting: std::collections::VecDeque<u64>,
    released: Vec<u64>,
    next_ticket: u64,
    closed: bool,
}

/// A named condition variable. A signal wakes one thread that was waiting when it was
/// given (the longest waiting), a broadcast all of them; a thread that waits after it, the
/// signaller itself included (`sync`), is not woken by it, and a signal with no waiter is
/// lost, as a pthread condition variable's are.
#[derive(Default)]
pub struct Cond {
    state: Mutex<CondState>,
    cv: Condvar,
}

impl Cond {
    /// One with room for `threads` waiters, so no wait or signal allocates while the set
    /// runs.
    pub fn with_room(threads: usize) -> Cond {
        let state = CondState {
            waiting: std::collections::VecDeque::with_capacity(threads),
            released: Vec::with_capacity(threads),
            ..CondState::default()
        };
        Cond { state: Mutex::new(state), cv: Condvar::new() }
    }

    fn state(&self) -> MutexGuard<'_, CondState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a signal. `release` runs once this thread is counted as waiting (a
    /// `wait`'s mutex is given up there, so no signal between the two is lost), and the
    /// caller takes the mutex again after.
    pub fn wait(&self, end_ns: u64, release: impl FnOnce()) -> Woken {
        let mut state = self.state();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.waiting.push_back(ticket);
        release();
        let (mut state, woken) = wait_until(&self.cv, state, end_ns, |s| {
            if let Some(i) = s.released.iter().position(|&t| t == ticket) {
                s.released.swap_remove(i);
                Some(Woken::Released)
            } else {
                s.closed.then_some(Woken::Ended)
            }
        });
        if woken == Woken::Ended {
            state.waiting.retain(|&t| t != ticket);
        }
        woken
    }

    /// Wakes the longest-waiting thread, if one waits.
    pub fn signal(&self) {
        let mut state = self.state();
        if let Some(ticket) = state.waiting.pop_front() {
            state.released.push(ticket);
            self.cv.notify_all();
        }
    }

    /// Wakes every waiting thread.
    pub fn broadcast(&self) {
        let mut state = self.state();
        let all: Vec<u64> = state.waiting.drain(..).collect();
        state.released.extend(all);
        self.cv.notify_all();
    }

    /// Lets every waiter go: the set has ended or was stopped.
    pub fn close(&self) {
        self.state().closed = true;
        self.cv.notify_all();
    }
}

#[derive(Default)]
struct BarrierState {
    arrived: u32,
    generation: u64,
    closed: bool,
}

/// A named barrier: every thread that uses it waits until all have arrived.
pub struct Barrier {
    parties: u32,
    state: Mutex<BarrierState>,
    cv: Condvar,
}

impl Barrier {
    pub fn new(parties: u32) -> Barrier {
        Barrier { parties, state: Mutex::default(), cv: Condvar::new() }
    }

    pub fn wait(&self, end_ns: u64) -> Woken {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.arrived += 1;
        if state.arrived >= self.parties {
            state.arrived = 0;
            state.generation += 1;
            self.cv.notify_all();
            return Woken::Released;
        }
        let generation = state.generation;
        let (mut state, woken) = wait_until(&self.cv, state, end_ns, |s| {
            if s.generation != generation {
                Some(Woken::Released)
            } else {
                s.closed.then_some(Woken::Ended)
            }
        });
        if woken == Woken::Ended && state.generation == generation {
            state.arrived -= 1;
        }
        woken
    }

    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_wakes_one_waiter_and_one_with_no_waiter_is_lost() {
        let cond = Cond::default();
        cond.signal();
        let end = monotonic_ns() + 50_000_000;
        // The lost signal gives nothing: the wait lasts to the end.
        assert_eq!(cond.wait(end, || {}), Woken::Ended);
        assert!(monotonic_ns() >= end);
        let end = monotonic_ns() + 10_000_000_000;
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2).map(|_| s.spawn(|| cond.wait(end, || {}))).collect();
            while cond.state().waiting.len() < 2 {
                std::thread::yield_now();
            }
            cond.signal();
            while !cond.state().released.is_empty() {
                std::thread::yield_now();
            }
            // One woke; the other still waits until the broadcast.
            assert_eq!(cond.state().waiting.len(), 1);
            cond.broadcast();
            assert!(waiters.into_iter().all(|w| w.join().unwrap() == Woken::Released));
        });
        assert!(monotonic_ns() < end);
        // A signal wakes only a thread already waiting: the signaller that waits after it
        // (rt-app's `sync`) is not woken by its own signal.
        std::thread::scope(|s| {
            let first = s.spawn(|| cond.wait(end, || {}));
            while cond.state().waiting.is_empty() {
                std::thread::yield_now();
            }
            cond.signal();
            let own = cond.wait(monotonic_ns() + 50_000_000, || {});
            assert_eq!((first.join().unwrap(), own), (Woken::Released, Woken::Ended));
        });
    }

    #[test]
    fn a_barrier_lets_its_parties_go_together_and_closing_frees_a_waiter() {
        let barrier = Barrier::new(3);
        let end = monotonic_ns() + 10_000_000_000;
        std::thread::scope(|s| {
            let all: Vec<_> = (0..3).map(|_| s.spawn(|| barrier.wait(end))).collect();
            assert!(all.into_iter().all(|w| w.join().unwrap() == Woken::Released));
        });
        std::thread::scope(|s| {
            let alone = s.spawn(|| barrier.wait(end));
            while barrier.state.lock().unwrap().arrived < 1 {
                std::thread::yield_now();
            }
            barrier.close();
            assert_eq!(alone.join().unwrap(), Woken::Ended);
        });
        assert_eq!(barrier.state.lock().unwrap().arrived, 0);
    }
}
