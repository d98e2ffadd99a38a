//! One walk over a recording: the scheduler's state as the events build it, fed to every
//! analysis at once.
//!
//! Each analysis of a trace needs the same thing first: which task runs on each CPU, since
//! when, and what state each task is in. `replay` walks the events once, keeping that
//! state, and hands each event to the handlers (`Handler`) together with the state *before*
//! the event: the time since the previous event belongs to that state. The handlers keep
//! only what is theirs: a spike's blame, a timeline's handler lane, a child's books.
//!
//! A switch's `prev_state` is read here and nowhere else (`PrevState::of`).

use std::collections::HashMap;

use crate::analysis::trace::{EventKind, TaskRef, TraceEvent};

/// The idle task (`swapper/N`) is pid 0 on every CPU.
pub const IDLE_PID: i32 = 0;

/// What a switch's `prev_state` says of the task leaving the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// "R", "R+": preempted while still runnable.
    Runnable,
    /// "D": asleep uninterruptibly (the disk, mostly).
    Blocked,
    /// "X", "Z": exiting.
    Gone,
    /// "S" and any other state: asleep.
    Sleeping,
    /// The kernel printed no state.
    Unrecorded,
}

impl PrevState {
    /// The state by its first letter, as the kernel prints it.
    pub fn of(prev_state: &str) -> PrevState {
        match prev_state.chars().next() {
            None => PrevState::Unrecorded,
            Some('R') => PrevState::Runnable,
            Some('D') => PrevState::Blocked,
            Some('X' | 'Z') => PrevState::Gone,
            Some(_) => PrevState::Sleeping,
        }
    }
}

/// A task's state as the switches, wakeups and migrations say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// No event has named the task yet.
    Unknown,
    Running {
        cpu: usize,
    },
    /// Woken, or preempted, and waiting for `cpu`.
    Runnable {
        cpu: usize,
    },
    /// Switched out asleep: uninterruptibly ("D") ...
    Blocked,
    /// ... or otherwise (no state printed counts as asleep).
    Sleeping,
    /// Exited: no later event changes it.
    Gone,
}

/// One task's state set by an event: the state it left, held since `since`, and the one it
/// entered at the event's time (a switch sets it even when it is the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskChange {
    pub pid: i32,
    pub from: TaskState,
    pub since: u64,
    pub to: TaskState,
}

/// One CPU as its events leave it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CpuState<'a> {
    /// No event recorded on it yet.
    #[default]
    Unseen,
    /// Events, but no switch yet: whoever runs is not known.
    NoSwitchYet,
    /// The task the last switch put on it, and that switch's time.
    Running { task: &'a TaskRef, since: u64 },
}

impl<'a> CpuState<'a> {
    pub fn running(self) -> Option<&'a TaskRef> {
        match self {
            CpuState::Running { task, .. } => Some(task),
            _ => None,
        }
    }

    /// The last switch put the idle task on the CPU.
    pub fn is_idle(self) -> bool {
        self.running().is_some_and(|task| task.pid == IDLE_PID)
    }
}

/// An event with what it does to the scheduler's state, before the state changes.
pub struct Step<'a> {
    pub event: &'a TraceEvent,
    /// For a switch, the state `prev` left in.
    pub prev_state: Option<PrevState>,
    /// The tasks whose state changes, in order (a switch from a task to itself changes it
    /// twice: out, then in again).
    changes: [Option<TaskChange>; 2],
}

impl Step<'_> {
    pub fn changes(&self) -> impl Iterator<Item = &TaskChange> {
        self.changes.iter().flatten()
    }
}

/// Every CPU's and task's state at one point of the replay.
#[derive(Default)]
pub struct Sched<'a> {
    cpus: Vec<CpuState<'a>>,
    tasks: HashMap<i32, (TaskState, u64)>,
}

impl<'a> Sched<'a> {
    pub fn cpu(&self, cpu: usize) -> CpuState<'a> {
        self.cpus.get(cpu).copied().unwrap_or_default()
    }

    /// A task's state and since when (`Unknown` since 0 before any event names it).
    pub fn task(&self, pid: i32) -> (TaskState, u64) {
        self.tasks.get(&pid).copied().unwrap_or((TaskState::Unknown, 0))
    }

    /// What `event` does, read against the state before it.
    fn step(&self, event: &'a TraceEvent) -> Step<'a> {
        let mut step = Step { event, prev_state: None, changes: [None, None] };
        let at = event.ts_ns;
        // Every switch of a task is a change, even to the state it had: `off_cpu` books a
        // wait in pieces cut at the child's switches, and where they are cut decides which
        // zero-length runs (switches sharing a timestamp) it names.
        let change = |pid: i32, from: (TaskState, u64), to: TaskState| {
            (from.0 != TaskState::Gone).then_some(TaskChange { pid, from: from.0, since: from.1, to })
        };
        match &event.kind {
            EventKind::Switch { prev, prev_state, next } => {
                let prev_state = PrevState::of(prev_state);
                step.prev_state = Some(prev_state);
                let left = match prev_state {
                    PrevState::Runnable => TaskState::Runnable { cpu: event.cpu },
                    PrevState::Blocked => TaskState::Blocked,
                    PrevState::Gone => TaskState::Gone,
                    PrevState::Sleeping | PrevState::Unrecorded => TaskState::Sleeping,
                };
                let out = change(prev.pid, self.task(prev.pid), left);
                // The task switched in from the state it had after switching out, when it
                // is the same task.
                let before_in = match out {
                    Some(c) if next.pid == prev.pid => (c.to, at),
                    _ => self.task(next.pid),
                };
                step.changes = [out, change(next.pid, before_in, TaskState::Running { cpu: event.cpu })];
            }
            EventKind::Waking { task, target_cpu } | EventKind::Wakeup { task, target_cpu } => {
                let from = self.task(task.pid);
                let woken = match from.0 {
                    TaskState::Unknown | TaskState::Blocked | TaskState::Sleeping => true,
                    TaskState::Runnable { cpu } => cpu != *target_cpu,
                    TaskState::Running { .. } | TaskState::Gone => false,
                };
                if woken {
                    step.changes[0] = change(task.pid, from, TaskState::Runnable { cpu: *target_cpu });
                }
            }
            EventKind::Migrate { task, dest_cpu, .. } => {
                let from = self.task(task.pid);
                if matches!(from.0, TaskState::Runnable { cpu } if cpu != *dest_cpu) {
                    step.changes[0] = change(task.pid, from, TaskState::Runnable { cpu: *dest_cpu });
                }
            }
            _ => {}
        }
        step
    }

    fn apply(&mut self, step: &Step<'a>) {
        let event = step.event;
        if self.cpus.len() <= event.cpu {
            self.cpus.resize(event.cpu + 1, CpuState::Unseen);
        }
        let cpu = &mut self.cpus[event.cpu];
        match &event.kind {
            EventKind::Switch { next, .. } => *cpu = CpuState::Running { task: next, since: event.ts_ns },
            _ if *cpu == CpuState::Unseen => *cpu = CpuState::NoSwitchYet,
            _ => {}
        }
        for change in step.changes() {
            self.tasks.insert(change.pid, (change.to, event.ts_ns));
        }
    }
}

/// An analysis fed by `replay`.
pub trait Handler<'a> {
    /// Each event in turn, with the state it found.
    fn step(&mut self, step: &Step<'a>, sched: &Sched<'a>);
    /// After the last event, with the state it left.
    fn finish(&mut self, _sched: &Sched<'a>) {}
}

/// Walks `events` (in time order) once, feeding every handler.
pub fn replay<'a>(events: &'a [TraceEvent], handlers: &mut [&mut dyn Handler<'a>]) {
    let mut sched = Sched::default();
    for event in events {
        let step = sched.step(event);
        for handler in handlers.iter_mut() {
            handler.step(&step, &sched);
        }
        sched.apply(&step);
    }
    for handler in handlers.iter_mut() {
        handler.finish(&sched);
    }
}

/// A handler context (an interrupt, softirq, timer interrupt or hrtimer callback), matched
/// to its exit by kind (and number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextKind {
    Irq(u32),
    Softirq(u32),
    LocalTimer,
    Hrtimer,
}

/// Whether an event enters or leaves a handler context, and which.
pub enum ContextEdge {
    Entry(ContextKind),
    Exit(ContextKind),
}

impl ContextEdge {
    pub fn of(kind: &EventKind) -> Option<ContextEdge> {
        Some(match kind {
            EventKind::IrqEntry { irq, .. } => ContextEdge::Entry(ContextKind::Irq(*irq)),
            EventKind::SoftirqEntry { vec, .. } => ContextEdge::Entry(ContextKind::Softirq(*vec)),
            EventKind::LocalTimerEntry => ContextEdge::Entry(ContextKind::LocalTimer),
            EventKind::HrtimerExpireEntry { .. } => ContextEdge::Entry(ContextKind::Hrtimer),
            EventKind::IrqExit { irq } => ContextEdge::Exit(ContextKind::Irq(*irq)),
            EventKind::SoftirqExit { vec } => ContextEdge::Exit(ContextKind::Softirq(*vec)),
            EventKind::LocalTimerExit => ContextEdge::Exit(ContextKind::LocalTimer),
            EventKind::HrtimerExpireExit => ContextEdge::Exit(ContextKind::Hrtimer),
            EventKind::Switch { .. }
            | EventKind::Waking { .. }
            | EventKind::Wakeup { .. }
            | EventKind::Migrate { .. } => return None,
        })
    }
}

/// The handler contexts open on one CPU, innermost last, each with what its handler keeps
/// of it. A switch happens in task context, so any still open there lost its exit (`clear`).
pub struct OpenContexts<T> {
    open: Vec<(ContextKind, T)>,
}

impl<T> Default for OpenContexts<T> {
    fn default() -> Self {
        OpenContexts { open: Vec::new() }
    }
}

impl<T> OpenContexts<T> {
    pub fn enter(&mut self, kind: ContextKind, value: T) {
        self.open.push((kind, value));
    }

    /// Closes the innermost open context of `kind`, and any opened inside it whose exit was
    /// lost; an exit with no entry (lost, or before the replay) changes nothing.
    pub fn leave(&mut self, kind: ContextKind) -> Option<T> {
        let depth = self.open.iter().rposition(|(open, _)| *open == kind)?;
        let left = self.open.drain(depth..).next();
        left.map(|(_, value)| value)
    }

    pub fn clear(&mut self) {
        self.open.clear();
    }

    pub fn innermost(&self) -> Option<&T> {
        self.open.last().map(|(_, value)| value)
    }

    /// The open contexts, outermost first, emptying the stack.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.open.drain(..).map(|(_, value)| value)
    }
}
