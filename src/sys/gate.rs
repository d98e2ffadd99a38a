//! A start gate for a measurement's threads that can be called off: like
//! `std::sync::Barrier`, except that when a thread cannot be started (EAGAIN under a
//! process limit or a cgroup's `pids.max`) the ones already waiting are let go, instead of
//! waiting for ever for a party that will never come.

use std::sync::{Condvar, Mutex};

/// A one-shot gate for `parties` threads.
pub struct Gate {
    state: Mutex<State>,
    turn: Condvar,
}

struct State {
    arrived: usize,
    parties: usize,
    open: bool,
    called_off: bool,
}

impl Gate {
    pub fn new(parties: usize) -> Gate {
        Gate { state: Mutex::new(State { arrived: 0, parties, open: false, called_off: false }), turn: Condvar::new() }
    }

    /// Wait until every party has arrived (true), or until the gate is called off
    /// (false: do not go on).
    pub fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.arrived += 1;
        if s.arrived >= s.parties && !s.called_off {
            s.open = true;
            self.turn.notify_all();
        }
        while !s.open && !s.called_off {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        !s.called_off
    }

    /// Let every waiting and every later party go at once, told not to go on.
    pub fn call_off(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.called_off = true;
        self.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_opens_when_all_arrive_and_a_call_off_frees_the_waiting() {
        let gate = Gate::new(3);
        let went = std::thread::scope(|s| {
            let a = s.spawn(|| gate.wait());
            let b = s.spawn(|| gate.wait());
            (gate.wait(), a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!(went, (true, true, true));
        // Two of three parties ever come: calling it off lets them go, told not to.
        let gate = Gate::new(3);
        let went = std::thread::scope(|s| {
            let a = s.spawn(|| gate.wait());
            let b = s.spawn(|| gate.wait());
            std::thread::sleep(std::time::Duration::from_millis(20));
            gate.call_off();
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!(went, (false, false));
        assert!(!gate.wait(), "a party after the call-off does not go on either");
    }
}
