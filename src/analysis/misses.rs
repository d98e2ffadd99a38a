//! What ran while a periodic task missed its deadline, from the scheduler's and interrupts'
//! tracepoints.
//!
//! A missed activation has a window: from its activation (the period's timer, the ideal
//! start) to its completion. Through it the task's thread was, by the events, running,
//! runnable (woken or preempted, waiting for a CPU) or asleep (its timer not yet fired, a
//! sleep event, a mutex). Each stretch between two events goes to what the thread's CPU
//! did then, read from the state before the event (`analysis::replay`):
//!
//! - the thread running: its own time (`on_cpu_ns`), unless an interrupt, softirq or the
//!   local timer held its CPU (that handler is named);
//! - the thread not running: the innermost open handler on its CPU, else the task running
//!   there (another task of the set, or anyone else, by comm, pid and priority); the idle
//!   task is no culprit: a runnable thread beside an idle CPU is `Runnable` (the wait for
//!   the scheduler), a sleeping one is `asleep_ns`;
//! - the thread preempted (switched out still runnable) while its CPU ran a task of a
//!   lower class (a normal task or the idle task under a real-time or deadline thread):
//!   nothing outranks it there, so the kernel's bandwidth control held it back —
//!   its SCHED_DEADLINE runtime used up, or RT throttling — `throttled_ns`, not the
//!   lower task's blame;
//! - no CPU known yet for the thread (no event named it), or no switch seen on its CPU:
//!   `unknown_ns`, never guessed.
//!
//! The thread's CPU is the one its last switch or wakeup named, so a thread that migrates
//! is followed. The stretches sum to the window's length, but for the handlers that
//! interrupted the running thread: those are named and also inside `on_cpu_ns`.
//!
//! What the tracepoints cannot see — the hypervisor running another guest on this virtual
//! CPU (steal) — still shows: the thread's own CPU clock (`CLOCK_THREAD_CPUTIME_ID`, which
//! the kernel keeps without steal) advances less than its time on the CPU by the switches.
//! `not_visible_ns` is that difference, per miss.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::analysis::replay::{replay, ContextEdge, CpuState, Handler, OpenContexts, Sched, Step, TaskState};
use crate::analysis::trace::{EventKind, Source, TraceEvent};

/// The most missed activations split and kept per trial (the first ones); every miss
/// after them is counted, not split.
pub const MAX_SPLIT: usize = 2000;

/// One missed activation to split: the thread, its window (CLOCK_MONOTONIC ns) and the CPU
/// time it measured over its activation.
#[derive(Clone, Debug)]
pub struct MissWindow {
    pub tid: i32,
    pub from_ns: u64,
    /// When the thread started this activation's work (its wakeup, or the end of the
    /// previous activation when that ran late): its running before is earlier work.
    pub start_ns: u64,
    pub to_ns: u64,
    pub run_ns: u64,
}

/// One source's time in one miss's window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissCulprit {
    pub source: Source,
    pub ns: u64,
}

/// A missed activation, split.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissSplit {
    /// The task's name, its instance (0-based) and the activation's index (0-based).
    pub task: String,
    pub instance: u32,
    pub activation: u64,
    /// Activation (the ideal start), CLOCK_MONOTONIC ns, and the response (to completion).
    pub at_ns: u64,
    pub response_ns: u64,
    /// Deadline − response: negative.
    pub slack_ns: i64,
    /// The CPU the thread ended the window on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// The thread running earlier activations' work late into this one's window.
    #[serde(default)]
    pub earlier_ns: u64,
    /// The thread on a CPU by the switches for this activation's work (interrupts in it
    /// included) ...
    pub on_cpu_ns: u64,
    /// ... and how much of that its own CPU clock did not count: the hypervisor's steal.
    pub not_visible_ns: u64,
    /// Asleep while its CPU idled (the timer not yet fired, a sleep, a mutex).
    pub asleep_ns: u64,
    /// Preempted and held back while its CPU ran a lower class or idled: throttled by its
    /// reservation (deadline) or RT throttling.
    #[serde(default)]
    pub throttled_ns: u64,
    /// No state known for the thread or its CPU.
    pub unknown_ns: u64,
    /// What else had its CPU while it was not running, or interrupted it: most time first.
    pub culprits: Vec<MissCulprit>,
    /// The CPU's buffer lost events: the split may be incomplete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl MissSplit {
    /// Does `pred` hold for any culprit with time in this miss?
    pub fn names(&self, pred: impl Fn(&Source) -> bool) -> bool {
        self.culprits.iter().any(|c| c.ns > 0 && pred(&c.source))
    }
}

/// One source over a trial's split misses: in how many it took time, and how much.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissSource {
    pub source: Source,
    pub misses: u64,
    pub ns: u64,
}

/// A trial's tracing of its misses, stored with its outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissTrace {
    /// Why nothing was split though tracing was asked for ("needs root", ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Events the trace buffers lost over the window: non-zero makes splits partial.
    #[serde(default)]
    pub lost_events: u64,
    /// The trial's misses, and how many of them were split (the first `MAX_SPLIT`).
    pub misses: u64,
    pub split: u64,
    /// Each source over the split misses, the most time first.
    pub sources: Vec<MissSource>,
    /// Summed over the split misses: the time the thread's clock did not count while the
    /// switches had it on a CPU (steal).
    pub not_visible_ns: u64,
    /// Misses in which some of that time was seen (at least 10 µs).
    pub misses_with_not_visible: u64,
    /// Summed over the split misses: the time the thread was throttled, and in how many.
    #[serde(default)]
    pub throttled_ns: u64,
    #[serde(default)]
    pub misses_throttled: u64,
    /// Each split miss.
    pub each: Vec<MissSplit>,
}

impl MissTrace {
    pub fn unavailable(reason: impl Into<String>, misses: u64) -> MissTrace {
        MissTrace { unavailable: Some(reason.into()), misses, ..MissTrace::default() }
    }

    /// The sums over `each`: every source's misses and time, and the not-visible time.
    pub fn summed(mut self) -> MissTrace {
        let mut by: BTreeMap<&Source, (u64, u64)> = BTreeMap::new();
        for miss in &self.each {
            for c in miss.culprits.iter().filter(|c| c.ns > 0) {
                let e = by.entry(&c.source).or_default();
                e.0 += 1;
                e.1 += c.ns;
            }
        }
        let mut sources: Vec<MissSource> =
            by.into_iter().map(|(source, (misses, ns))| MissSource { source: source.clone(), misses, ns }).collect();
        sources.sort_by(|a, b| b.ns.cmp(&a.ns).then(b.misses.cmp(&a.misses)));
        self.sources = sources;
        self.split = self.each.len() as u64;
        self.not_visible_ns = self.each.iter().map(|m| m.not_visible_ns).sum();
        self.misses_with_not_visible = self.each.iter().filter(|m| m.not_visible_ns >= 10_000).count() as u64;
        self.throttled_ns = self.each.iter().map(|m| m.throttled_ns).sum();
        self.misses_throttled = self.each.iter().filter(|m| m.throttled_ns > 0).count() as u64;
        self
    }
}

/// Splits each window (see the module's comment). `events` in time order, the idle exits
/// put back; `hint_cpu` is where a pinned thread runs, for time before any event names it.
/// Returns, per window in the order given: (end CPU, on-CPU ns, asleep ns, unknown ns,
/// culprits by time).
pub fn split_misses(
    events: &[TraceEvent],
    windows: &[MissWindow],
    hint_cpu: impl Fn(i32) -> Option<usize>,
) -> Vec<WindowSplit> {
    let mut order: Vec<usize> = (0..windows.len()).collect();
    order.sort_by_key(|&i| windows[i].from_ns);
    let mut splitter = Splitter {
        windows,
        order,
        next: 0,
        active: Vec::new(),
        splits: windows.iter().map(|_| WindowSplit::default()).collect(),
        last_cpu: HashMap::new(),
        preempted: HashMap::new(),
        prio: HashMap::new(),
        tids: windows.iter().map(|w| w.tid).collect(),
        handlers: HashMap::new(),
        prev_ns: None,
    };
    for w in windows {
        if let Some(cpu) = hint_cpu(w.tid) {
            splitter.last_cpu.entry(w.tid).or_insert(cpu);
        }
    }
    replay(events, &mut [&mut splitter]);
    splitter.splits
}

/// One window's split, before it is named with its task.
#[derive(Clone, Debug, Default)]
pub struct WindowSplit {
    pub cpu: Option<usize>,
    pub earlier_ns: u64,
    pub on_cpu_ns: u64,
    pub asleep_ns: u64,
    pub throttled_ns: u64,
    pub unknown_ns: u64,
    pub culprits: Vec<MissCulprit>,
    by: BTreeMap<Source, u64>,
    covered_ns: u64,
}

impl WindowSplit {
    fn add(&mut self, source: Source, ns: u64) {
        *self.by.entry(source).or_default() += ns;
    }

    fn close(&mut self, window_ns: u64) {
        // Time after the last event (or with none at all) is not known.
        self.unknown_ns += window_ns.saturating_sub(self.covered_ns);
        let mut culprits: Vec<MissCulprit> =
            std::mem::take(&mut self.by).into_iter().map(|(source, ns)| MissCulprit { source, ns }).collect();
        culprits.sort_by_key(|c| std::cmp::Reverse(c.ns));
        self.culprits = culprits;
    }
}

struct Splitter<'w> {
    windows: &'w [MissWindow],
    order: Vec<usize>,
    next: usize,
    active: Vec<usize>,
    splits: Vec<WindowSplit>,
    /// Each measured thread's CPU, as its last event named it.
    last_cpu: HashMap<i32, usize>,
    /// Whether each measured thread's last switch out left it runnable (preempted), and
    /// its kernel priority as its switches show it.
    preempted: HashMap<i32, bool>,
    prio: HashMap<i32, i32>,
    tids: HashSet<i32>,
    /// The handler contexts open on each CPU.
    handlers: HashMap<usize, OpenContexts<Source>>,
    prev_ns: Option<u64>,
}

impl Splitter<'_> {
    fn handler_on(&self, cpu: usize) -> Option<&Source> {
        self.handlers.get(&cpu).and_then(|open| open.innermost())
    }

    /// The stretch `from..to` of window `i`, by the state before the current event.
    fn book(&mut self, i: usize, from: u64, to: u64, sched: &Sched) {
        let tid = self.windows[i].tid;
        let len = to - from;
        let (state, _) = sched.task(tid);
        let cpu = match state {
            TaskState::Running { cpu } | TaskState::Runnable { cpu } => Some(cpu),
            _ => self.last_cpu.get(&tid).copied(),
        };
        let handler = cpu.and_then(|c| self.handler_on(c)).cloned();
        let split = &mut self.splits[i];
        split.covered_ns += len;
        let Some(cpu) = cpu else {
            split.unknown_ns += len;
            return;
        };
        if matches!(state, TaskState::Running { .. }) {
            let start = self.windows[i].start_ns.clamp(from, to);
            split.earlier_ns += start - from;
            split.on_cpu_ns += to - start;
            if let Some(h) = handler {
                split.add(h, len);
            }
            return;
        }
        if let Some(h) = handler {
            split.add(h, len);
            return;
        }
        let preempted = matches!(state, TaskState::Runnable { .. }) && self.preempted.get(&tid) == Some(&true);
        let lower = |other: i32| self.prio.get(&tid).is_some_and(|&mine| class(other) > class(mine));
        match sched.cpu(cpu) {
            CpuState::Running { task, .. } if preempted && (sched.cpu(cpu).is_idle() || lower(task.prio)) => {
                split.throttled_ns += len
            }
            CpuState::Running { task, .. } if !sched.cpu(cpu).is_idle() && task.pid != tid => {
                split.add(Source::Task { comm: task.comm.clone(), pid: task.pid, prio: task.prio }, len)
            }
            CpuState::Running { .. } if matches!(state, TaskState::Runnable { .. }) => split.add(Source::Runnable, len),
            CpuState::Running { .. } => split.asleep_ns += len,
            CpuState::Unseen | CpuState::NoSwitchYet => split.unknown_ns += len,
        }
    }
}

/// A kernel priority's scheduling class, highest first: deadline (−1), real time (0-98),
/// then normal tasks and idle.
fn class(prio: i32) -> u8 {
    match prio {
        p if p < 0 => 0,
        0..=98 => 1,
        _ => 2,
    }
}

impl<'a> Handler<'a> for Splitter<'_> {
    fn step(&mut self, step: &Step<'a>, sched: &Sched<'a>) {
        let event = step.event;
        let now = event.ts_ns;
        // Windows that open before this event join; each active one gets the stretch since
        // the previous event (or its start), clipped to it.
        while self.next < self.order.len() && self.windows[self.order[self.next]].from_ns < now {
            self.active.push(self.order[self.next]);
            self.next += 1;
        }
        let prev = self.prev_ns.unwrap_or(0);
        let active = std::mem::take(&mut self.active);
        let mut still = Vec::with_capacity(active.len());
        for i in active {
            let (from, to) = (self.windows[i].from_ns.max(prev), self.windows[i].to_ns.min(now));
            // Before the first event nothing is known: `close` books it as unknown.
            if to > from && self.prev_ns.is_some() {
                self.book(i, from, to, sched);
            }
            if self.windows[i].to_ns > now {
                still.push(i);
            } else {
                self.splits[i].cpu = self.last_cpu.get(&self.windows[i].tid).copied();
            }
        }
        self.active = still;
        self.prev_ns = Some(now);
        // Then the event changes the state.
        for change in step.changes() {
            if let TaskState::Running { cpu } | TaskState::Runnable { cpu } = change.to {
                self.last_cpu.insert(change.pid, cpu);
            }
        }
        if let (EventKind::Switch { prev, next, .. }, Some(state)) = (&event.kind, step.prev_state) {
            if self.tids.contains(&prev.pid) {
                self.prio.insert(prev.pid, prev.prio);
                self.preempted.insert(prev.pid, state == crate::analysis::replay::PrevState::Runnable);
            }
            if self.preempted.contains_key(&next.pid) {
                self.preempted.insert(next.pid, false);
            }
        }
        let open = self.handlers.entry(event.cpu).or_default();
        match (&event.kind, ContextEdge::of(&event.kind)) {
            (EventKind::Switch { .. }, _) => open.clear(),
            (kind, Some(ContextEdge::Entry(context))) => {
                let source = match kind {
                    EventKind::IrqEntry { irq, name } => Source::Irq { irq: *irq, name: name.clone() },
                    EventKind::SoftirqEntry { name, .. } => Source::Softirq { name: name.clone() },
                    // An hrtimer callback is its enclosing context's time, the local
                    // timer's when it has none.
                    EventKind::HrtimerExpireEntry { .. } => open.innermost().cloned().unwrap_or(Source::LocalTimer),
                    _ => Source::LocalTimer,
                };
                open.enter(context, source);
            }
            (_, Some(ContextEdge::Exit(context))) => {
                open.leave(context);
            }
            _ => {}
        }
    }

    fn finish(&mut self, _sched: &Sched<'a>) {
        for i in std::mem::take(&mut self.active) {
            self.splits[i].cpu = self.last_cpu.get(&self.windows[i].tid).copied();
        }
        for (split, w) in self.splits.iter_mut().zip(self.windows) {
            split.close(w.to_ns - w.from_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::trace::TaskRef;

    fn task(comm: &str, pid: i32, prio: i32) -> TaskRef {
        TaskRef { comm: comm.into(), pid, prio }
    }

    fn ev(ts_ns: u64, cpu: usize, kind: EventKind) -> TraceEvent {
        TraceEvent { ts_ns, cpu, kind }
    }

    fn switch(ts: u64, prev: TaskRef, state: &str, next: TaskRef) -> TraceEvent {
        ev(ts, 1, EventKind::Switch { prev, prev_state: state.into(), next })
    }

    #[test]
    fn a_preempting_spinner_and_an_interrupt_are_named_and_the_rest_is_the_threads() {
        let me = task("ctl", 100, 19);
        let spin = task("spinner", 200, 0);
        let idle = task("swapper/1", 0, 120);
        let events = vec![
            switch(1_000, me.clone(), "S", idle.clone()),
            // The spinner wakes at 9 µs and runs; the thread's timer fires at 10 µs.
            ev(9_000, 1, EventKind::Waking { task: spin.clone(), target_cpu: 1 }),
            switch(9_000, idle.clone(), "R", spin.clone()),
            ev(10_000, 1, EventKind::Waking { task: me.clone(), target_cpu: 1 }),
            // The spinner runs until 60 µs, with an interrupt of 5 µs in it.
            ev(20_000, 1, EventKind::IrqEntry { irq: 24, name: "virtio0".into() }),
            ev(25_000, 1, EventKind::IrqExit { irq: 24 }),
            switch(60_000, spin.clone(), "S", me.clone()),
            switch(90_000, me.clone(), "S", idle.clone()),
        ];
        let windows = [MissWindow { tid: 100, from_ns: 5_000, start_ns: 60_000, to_ns: 90_000, run_ns: 30_000 }];
        let split = split_misses(&events, &windows, |_| Some(1)).remove(0);
        // 5-9 µs: asleep beside idle; 9-60: the spinner (less the interrupt's 5); 60-90: its own.
        assert_eq!((split.asleep_ns, split.on_cpu_ns, split.unknown_ns), (4_000, 30_000, 0));
        let named: Vec<(Source, u64)> = split.culprits.iter().map(|c| (c.source.clone(), c.ns)).collect();
        assert_eq!(
            named,
            vec![
                (Source::Task { comm: "spinner".into(), pid: 200, prio: 0 }, 46_000),
                (Source::Irq { irq: 24, name: "virtio0".into() }, 5_000)
            ]
        );
        assert_eq!(split.cpu, Some(1));
    }

    #[test]
    fn a_trace_summed_counts_each_source_once_per_miss() {
        let spin = Source::Task { comm: "spinner".into(), pid: 200, prio: 0 };
        let miss = |ns| MissSplit {
            culprits: vec![MissCulprit { source: spin.clone(), ns }, MissCulprit { source: Source::LocalTimer, ns: 0 }],
            not_visible_ns: 20_000,
            ..MissSplit::default()
        };
        let t = MissTrace { misses: 3, each: vec![miss(5), miss(7)], ..MissTrace::default() }.summed();
        assert_eq!(t.sources, vec![MissSource { source: spin, misses: 2, ns: 12 }]);
        assert_eq!((t.split, t.misses, t.not_visible_ns, t.misses_with_not_visible), (2, 3, 40_000, 2));
    }
}
