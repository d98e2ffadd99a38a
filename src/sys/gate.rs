//! The start of a measurement's threads: each arrives and waits; the main thread waits
//! until all have arrived, sets up what the window needs (the trace, the start time),
//! then opens the gate — or calls it off (a thread could not be started under a process
//! limit or a cgroup's `pids.max`, or could not be set up), and every waiting thread is
//! let go at once, told not to run. Unlike `std::sync::Barrier`, nobody waits for ever
//! for a party that will never come.

use std::sync::{Condvar, Mutex, MutexGuard};

/// A one-shot start gate.
pub struct Gate {
    state: Mutex<(usize, Phase)>,
    turn: Condvar,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Waiting,
    Open,
    CalledOff,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate::new()
    }
}

impl Gate {
    pub fn new() -> Gate {
        Gate { state: Mutex::new((0, Phase::Waiting)), turn: Condvar::new() }
    }

    fn state(&self) -> MutexGuard<'_, (usize, Phase)> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A thread is ready: wait for the main thread's word; whether to run.
    pub fn arrive(&self) -> bool {
        let mut s = self.state();
        s.0 += 1;
        self.turn.notify_all();
        while s.1 == Phase::Waiting {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.1 == Phase::Open
    }

    /// The main thread: wait until `n` threads have arrived.
    pub fn wait_for(&self, n: usize) {
        let mut s = self.state();
        while s.0 < n {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Let every thread run.
    pub fn open(&self) {
        self.set(Phase::Open);
    }

    /// Let every waiting and every later thread go, told not to run.
    pub fn call_off(&self) {
        self.set(Phase::CalledOff);
    }

    fn set(&self, phase: Phase) {
        self.state().1 = phase;
        self.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_opens_on_the_main_threads_word_and_a_call_off_frees_the_waiting() {
        let gate = Gate::new();
        let ran = std::thread::scope(|s| {
            let waiting: Vec<_> = (0..3).map(|_| s.spawn(|| gate.arrive())).collect();
            gate.wait_for(3);
            gate.open();
            waiting.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
        });
        assert_eq!(ran, [true, true, true]);
        // Two of three threads ever start: calling it off lets them go, told not to run.
        let gate = Gate::new();
        let ran = std::thread::scope(|s| {
            let waiting: Vec<_> = (0..2).map(|_| s.spawn(|| gate.arrive())).collect();
            gate.wait_for(2);
            gate.call_off();
            waiting.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
        });
        assert_eq!(ran, [false, false]);
        assert!(!gate.arrive(), "a thread after the call-off does not run either");
    }
}
