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
    waiting: u64,
    /// Wakeups given and not yet taken: a signal gives one to a waiter, a broadcast one to
    /// each, so a signal with no waiter is lost, as a condition variable's is.
    given: u64,
    closed: bool,
}

/// A named condition variable.
#[derive(Default)]
pub struct Cond {
    state: Mutex<CondState>,
    cv: Condvar,
}

impl Cond {
    fn state(&self) -> MutexGuard<'_, CondState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a signal. `release` runs once this thread is counted as waiting (a
    /// `wait`'s mutex is given up there, so no signal between the two is lost), and the
    /// caller takes the mutex again after.
    pub fn wait(&self, end_ns: u64, release: impl FnOnce()) -> Woken {
        let mut state = self.state();
        state.waiting += 1;
        release();
        let (mut state, woken) = wait_until(&self.cv, state, end_ns, |s| {
            if s.given > 0 {
                s.given -= 1;
                Some(Woken::Released)
            } else {
                s.closed.then_some(Woken::Ended)
            }
        });
        state.waiting -= 1;
        woken
    }

    /// Wakes one waiter, if one waits.
    pub fn signal(&self) {
        let mut state = self.state();
        if state.waiting > state.given {
            state.given += 1;
            self.cv.notify_all();
        }
    }

    /// Wakes every waiter.
    pub fn broadcast(&self) {
        let mut state = self.state();
        state.given = state.waiting;
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
            while cond.state().waiting < 2 {
                std::thread::yield_now();
            }
            cond.signal();
            while cond.state().waiting > 1 {
                std::thread::yield_now();
            }
            // One woke; the other still waits until the broadcast.
            let state = cond.state();
            assert_eq!((state.waiting, state.given), (1, 0));
            drop(state);
            cond.broadcast();
            assert!(waiters.into_iter().all(|w| w.join().unwrap() == Woken::Released));
        });
        assert!(monotonic_ns() < end);
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
