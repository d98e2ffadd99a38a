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
//! - the thread runnable (woken or preempted, waiting for a CPU): the innermost open handler
//!   on its CPU, else the task running there (another task of the set, or anyone else, by
//!   comm, pid and priority); the idle task is no culprit: a runnable thread beside an idle
//!   CPU is `Runnable` (the wait for the scheduler);
//! - the thread asleep (switched out sleeping or blocked) and not woken since the window
//!   opened: its periodic timer had expired but no wakeup came (`timer_late_ns`: the
//!   timer interrupt held off, mostly by the hypervisor);
//! - the thread asleep otherwise: its own doing, `asleep_ns`, whatever ran on its CPU
//!   meanwhile — but for its waits for a mutex (the thread
//!   measures them, with the holder it saw on asking): the holder, named as the trace
//!   shows it, or `lock_ns` ("waiting for a lock") when no event named the holder;
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
//! Windows overlap (a late activation's lateness carries into the next ones', and
//! several threads miss at once): each miss's own split sees its whole window, but the
//! trial's totals book every stretch once — to the oldest open window that names a culprit
//! (or throttling) for it — so they never exceed the union of the windows (`window_ns`).
//!
//! What the tracepoints cannot see — the hypervisor running another guest on this virtual
//! CPU (steal) — still shows: where the host reports steal, the thread's own CPU clock
//! (`CLOCK_THREAD_CPUTIME_ID`, which the kernel then keeps without steal) advances less than
//! its time on the CPU by the switches; where it does not, the kernel charges the stall to
//! the running thread, and a burn's clock runs past the CPU time its events ask for.
//! `not_visible_ns` is the time on the CPU beyond the thread's own work (its clock, at most
//! what its events ask), per miss.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::analysis::replay::{replay, ContextEdge, CpuState, Handler, OpenContexts, Sched, Step, TaskState};
use crate::analysis::trace::{EventKind, Source, TraceEvent};

/// The most missed activations split and kept per trial (the last ones: the trace's
/// buffers overwrite their oldest events); every miss before them is counted, not split.
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
    /// The thread's waits for a mutex in this window, as it measured them.
    pub lock_waits: Vec<LockWait>,
}

/// A wait for a mutex: from asking to getting it (CLOCK_MONOTONIC ns), and the thread that
/// held it when asked (0: none seen).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockWait {
    pub from_ns: u64,
    pub to_ns: u64,
    pub holder: i32,
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
    /// ... and how much of that was not its own work: the hypervisor's steal, which its CPU
    /// clock did not count or (on a host that reports no steal) counted beyond its work.
    pub not_visible_ns: u64,
    /// Asleep of its own accord (a sleep event), whatever ran on its CPU.
    pub asleep_ns: u64,
    /// Still asleep after its periodic timer's expiry (the window's start), before any
    /// wakeup: the timer's interrupt came late.
    #[serde(default)]
    pub timer_late_ns: u64,
    /// Asleep waiting for a mutex whose holder no event named ("waiting for a lock"); a
    /// named holder's time is a culprit.
    #[serde(default)]
    pub lock_ns: u64,
    /// Preempted and held back while its CPU ran a lower class or idled: throttled by its
    /// reservation (deadline) or RT throttling.
    #[serde(default)]
    pub throttled_ns: u64,
    /// No state known for the thread or its CPU.
    pub unknown_ns: u64,
    /// What else had its CPU while it was runnable, interrupted it, or held the mutex it
    /// waited for: most time first.
    pub culprits: Vec<MissCulprit>,
    /// The CPU's buffer lost events: the split may be incomplete.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

/// One source over a trial's split misses: in how many it took time, and how much — each
/// stretch counted once however many overlapping windows it falls in.
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
    /// The trial's misses, and how many of them were split (the last `MAX_SPLIT`).
    pub misses: u64,
    pub split: u64,
    /// The union of the split misses' windows: the time the totals below share.
    #[serde(default)]
    pub window_ns: u64,
    /// Each source over the split misses, the most time first.
    pub sources: Vec<MissSource>,
    /// Summed over the split misses: the time the switches had the thread on a CPU beyond
    /// its own work (steal).
    pub not_visible_ns: u64,
    /// Misses in which some of that time was seen (at least 10 µs).
    pub misses_with_not_visible: u64,
    /// Over the split misses (each stretch once): the time the thread was throttled, and in
    /// how many misses.
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

    /// The totals: every source's misses (from `each`) and time (from `once`, each stretch
    /// booked once), the union of the windows, and the not-visible time.
    pub fn summed(mut self, once: &Once) -> MissTrace {
        let mut by: BTreeMap<&Source, (u64, u64)> = BTreeMap::new();
        for miss in &self.each {
            for c in miss.culprits.iter().filter(|c| c.ns > 0) {
                by.entry(&c.source).or_default().0 += 1;
            }
        }
        for (source, ns) in &once.by {
            by.entry(source).or_default().1 += ns;
        }
        self.sources = ranked(by);
        self.split = self.each.len() as u64;
        self.not_visible_ns = self.each.iter().map(|m| m.not_visible_ns).sum();
        self.misses_with_not_visible = self.each.iter().filter(|m| m.not_visible_ns >= 10_000).count() as u64;
        self.window_ns = once.window_ns;
        self.throttled_ns = once.throttled_ns;
        self.misses_throttled = self.each.iter().filter(|m| m.throttled_ns > 0).count() as u64;
        self
    }
}

/// Each source's misses and time summed over several traces' sources (a cell's repeats),
/// ranked as `MissTrace::summed` ranks one trace's.
pub fn merged_sources<'a>(traces: impl IntoIterator<Item = &'a MissTrace>) -> Vec<MissSource> {
    let mut by: BTreeMap<&Source, (u64, u64)> = BTreeMap::new();
    for s in traces.into_iter().flat_map(|t| &t.sources) {
        let entry = by.entry(&s.source).or_default();
        entry.0 += s.misses;
        entry.1 += s.ns;
    }
    ranked(by)
}

/// Sources with their (misses, time), most time first, then most misses.
fn ranked(by: BTreeMap<&Source, (u64, u64)>) -> Vec<MissSource> {
    let mut sources: Vec<MissSource> =
        by.into_iter().map(|(source, (misses, ns))| MissSource { source: source.clone(), misses, ns }).collect();
    sources.sort_by(|a, b| b.ns.cmp(&a.ns).then(b.misses.cmp(&a.misses)));
    sources
}

/// Splits each window (see the module's comment). `events` in time order, the idle exits
/// put back; `hint_cpu` is where a pinned thread runs, for time before any event names it.
/// Returns each window's split, in the order given, and the totals with every stretch
/// booked once.
pub fn split_misses(
    events: &[TraceEvent],
    windows: &[MissWindow],
    hint_cpu: impl Fn(i32) -> Option<usize>,
) -> (Vec<WindowSplit>, Once) {
    let mut order: Vec<usize> = (0..windows.len()).collect();
    order.sort_by_key(|&i| windows[i].from_ns);
    let mut splitter = Splitter {
        windows,
        order,
        next: 0,
        active: Vec::new(),
        splits: windows.iter().map(|_| WindowSplit::default()).collect(),
        once: Once { window_ns: union_ns(windows), ..Once::default() },
        last_cpu: HashMap::new(),
        awake_at: HashMap::new(),
        preempted: HashMap::new(),
        prio: HashMap::new(),
        tids: windows.iter().map(|w| w.tid).collect(),
        holders: windows.iter().flat_map(|w| w.lock_waits.iter().map(|l| l.holder)).filter(|&h| h != 0).collect(),
        seen: HashMap::new(),
        handlers: HashMap::new(),
        prev_ns: None,
    };
    for w in windows {
        if let Some(cpu) = hint_cpu(w.tid) {
            splitter.last_cpu.entry(w.tid).or_insert(cpu);
        }
    }
    replay(events, &mut [&mut splitter]);
    (splitter.splits, splitter.once)
}

/// The length of the union of the windows.
fn union_ns(windows: &[MissWindow]) -> u64 {
    let mut spans: Vec<(u64, u64)> = windows.iter().map(|w| (w.from_ns, w.to_ns)).collect();
    spans.sort_unstable();
    let (mut total, mut end) = (0, 0);
    for (from, to) in spans {
        let from = from.max(end);
        if to > from {
            total += to - from;
            end = to;
        }
    }
    total
}

/// The trial's totals over its split misses, each stretch booked once.
#[derive(Clone, Debug, Default)]
pub struct Once {
    /// The union of the windows.
    pub window_ns: u64,
    pub by: BTreeMap<Source, u64>,
    pub throttled_ns: u64,
}

/// One window's split, before it is named with its task.
#[derive(Clone, Debug, Default)]
pub struct WindowSplit {
    pub cpu: Option<usize>,
    pub earlier_ns: u64,
    pub on_cpu_ns: u64,
    pub asleep_ns: u64,
    pub timer_late_ns: u64,
    pub lock_ns: u64,
    pub throttled_ns: u64,
    pub unknown_ns: u64,
    pub culprits: Vec<MissCulprit>,
    by: BTreeMap<Source, u64>,
    covered_ns: u64,
}

/// What one stretch of one window went to.
#[derive(Clone, Debug, PartialEq)]
enum Booked {
    Earlier,
    OnCpu,
    Asleep,
    TimerLate,
    Lock,
    Throttled,
    Unknown,
    To(Source),
}

impl WindowSplit {
    fn add(&mut self, booked: &Booked, ns: u64) {
        match booked {
            Booked::Earlier => self.earlier_ns += ns,
            Booked::OnCpu => self.on_cpu_ns += ns,
            Booked::Asleep => self.asleep_ns += ns,
            Booked::TimerLate => self.timer_late_ns += ns,
            Booked::Lock => self.lock_ns += ns,
            Booked::Throttled => self.throttled_ns += ns,
            Booked::Unknown => self.unknown_ns += ns,
            Booked::To(source) => *self.by.entry(source.clone()).or_default() += ns,
        }
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
    /// The open windows, oldest first.
    active: Vec<usize>,
    splits: Vec<WindowSplit>,
    once: Once,
    /// Each measured thread's CPU, as its last event named it.
    last_cpu: HashMap<i32, usize>,
    /// When each measured thread last became runnable or ran.
    awake_at: HashMap<i32, u64>,
    /// Whether each measured thread's last switch out left it runnable (preempted), and
    /// its kernel priority as its switches show it.
    preempted: HashMap<i32, bool>,
    prio: HashMap<i32, i32>,
    tids: HashSet<i32>,
    /// The threads that held a mutex a window's thread waited for, and how the trace
    /// last named each (comm and priority).
    holders: HashSet<i32>,
    seen: HashMap<i32, Source>,
    /// The handler contexts open on each CPU.
    handlers: HashMap<usize, OpenContexts<Source>>,
    prev_ns: Option<u64>,
}

impl Splitter<'_> {
    fn handler_on(&self, cpu: usize) -> Option<&Source> {
        self.handlers.get(&cpu).and_then(|open| open.innermost())
    }

    /// What the stretch `from..to` of window `i` went to, by the state before the current
    /// event.
    fn book(&self, i: usize, from: u64, to: u64, sched: &Sched) -> Vec<(Booked, u64)> {
        let window = &self.windows[i];
        let tid = window.tid;
        let len = to - from;
        let (state, _) = sched.task(tid);
        let cpu = match state {
            TaskState::Running { cpu } | TaskState::Runnable { cpu } => cpu,
            TaskState::Sleeping | TaskState::Blocked | TaskState::Gone
                if self.awake_at.get(&tid).is_none_or(|&at| at < window.from_ns) =>
            {
                return vec![(Booked::TimerLate, len)];
            }
            TaskState::Sleeping | TaskState::Blocked | TaskState::Gone => {
                // Asleep: its own doing, but for its waits for a mutex.
                let mut booked = Vec::new();
                let mut waited = 0;
                for wait in &window.lock_waits {
                    let (a, b) = (wait.from_ns.max(from), wait.to_ns.min(to));
                    if b > a {
                        waited += b - a;
                        let holder = self.seen.get(&wait.holder).filter(|_| wait.holder != 0);
                        booked.push((holder.map_or(Booked::Lock, |h| Booked::To(h.clone())), b - a));
                    }
                }
                booked.push((Booked::Asleep, len.saturating_sub(waited)));
                return booked;
            }
            // No event has named the thread yet: not known whether it was runnable.
            TaskState::Unknown => return vec![(Booked::Unknown, len)],
        };
        let handler = self.handler_on(cpu).cloned();
        if matches!(state, TaskState::Running { .. }) {
            let start = window.start_ns.clamp(from, to);
            let mut booked = vec![(Booked::Earlier, start - from), (Booked::OnCpu, to - start)];
            if let Some(h) = handler {
                booked.push((Booked::To(h), len));
            }
            return booked;
        }
        // Runnable: what held its CPU.
        if let Some(h) = handler {
            return vec![(Booked::To(h), len)];
        }
        let preempted = self.preempted.get(&tid) == Some(&true);
        let lower = |other: i32| self.prio.get(&tid).is_some_and(|&mine| class(other) > class(mine));
        let booked = match sched.cpu(cpu) {
            CpuState::Running { task, .. } if preempted && (sched.cpu(cpu).is_idle() || lower(task.prio)) => {
                Booked::Throttled
            }
            CpuState::Running { task, .. } if !sched.cpu(cpu).is_idle() && task.pid != tid => {
                Booked::To(Source::Task { comm: task.comm.clone(), pid: task.pid, prio: task.prio })
            }
            CpuState::Running { .. } => Booked::To(Source::Runnable),
            CpuState::Unseen | CpuState::NoSwitchYet => Booked::Unknown,
        };
        vec![(booked, len)]
    }

    /// Books `prev..now` to every open window, cut where windows open or close: each
    /// window gets its share; the totals get each piece once, from the oldest window that
    /// names a culprit or throttling for it.
    fn book_all(&mut self, prev: u64, now: u64, sched: &Sched) {
        let mut cuts = vec![prev, now];
        for &i in &self.active {
            let w = &self.windows[i];
            cuts.extend([w.from_ns, w.to_ns].into_iter().filter(|&t| t > prev && t < now));
        }
        cuts.sort_unstable();
        cuts.dedup();
        for piece in cuts.windows(2) {
            let (a, b) = (piece[0], piece[1]);
            let mut counted = false;
            for k in 0..self.active.len() {
                let i = self.active[k];
                let w = &self.windows[i];
                if w.from_ns > a || w.to_ns < b {
                    continue;
                }
                let booked = self.book(i, a, b, sched);
                let split = &mut self.splits[i];
                split.covered_ns += b - a;
                for (what, ns) in &booked {
                    split.add(what, *ns);
                }
                let blamed =
                    booked.iter().filter(|(what, ns)| *ns > 0 && matches!(what, Booked::To(_) | Booked::Throttled));
                let mut blamed = blamed.peekable();
                if !counted && blamed.peek().is_some() {
                    counted = true;
                    for (what, ns) in blamed {
                        match what {
                            Booked::To(source) => *self.once.by.entry(source.clone()).or_default() += ns,
                            _ => self.once.throttled_ns += ns,
                        }
                    }
                }
            }
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
        // Windows that open before this event join; the open ones get the stretch since
        // the previous event (before the first event nothing is known: `close` books it
        // as unknown).
        while self.next < self.order.len() && self.windows[self.order[self.next]].from_ns < now {
            self.active.push(self.order[self.next]);
            self.next += 1;
        }
        if let Some(prev) = self.prev_ns {
            if !self.active.is_empty() && now > prev {
                self.book_all(prev, now, sched);
            }
        }
        let mut k = 0;
        while k < self.active.len() {
            let i = self.active[k];
            if self.windows[i].to_ns > now {
                k += 1;
            } else {
                self.splits[i].cpu = self.last_cpu.get(&self.windows[i].tid).copied();
                self.active.remove(k);
            }
        }
        self.prev_ns = Some(now);
        // Then the event changes the state.
        for change in step.changes() {
            if let TaskState::Running { cpu } | TaskState::Runnable { cpu } = change.to {
                self.last_cpu.insert(change.pid, cpu);
                if self.tids.contains(&change.pid) {
                    self.awake_at.insert(change.pid, now);
                }
            }
        }
        if let EventKind::Switch { prev, next, .. } = &event.kind {
            for t in [prev, next] {
                if self.holders.contains(&t.pid) {
                    self.seen.insert(t.pid, Source::Task { comm: t.comm.clone(), pid: t.pid, prio: t.prio });
                }
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

    fn window(tid: i32, from_ns: u64, start_ns: u64, to_ns: u64) -> MissWindow {
        MissWindow { tid, from_ns, start_ns, to_ns, lock_waits: Vec::new() }
    }

    fn named(split: &WindowSplit) -> Vec<(Source, u64)> {
        split.culprits.iter().map(|c| (c.source.clone(), c.ns)).collect()
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
        let (mut splits, once) = split_misses(&events, &[window(100, 5_000, 60_000, 90_000)], |_| Some(1));
        let split = splits.remove(0);
        // 5-10 µs: asleep past its timer's expiry (the spinner's 9-10 is none of its
        // business: it was not woken yet); 10-60: runnable behind the spinner, less the
        // interrupt's 5; 60-90: its own.
        assert_eq!((split.timer_late_ns, split.asleep_ns, split.on_cpu_ns, split.unknown_ns), (5_000, 0, 30_000, 0));
        let spinner = Source::Task { comm: "spinner".into(), pid: 200, prio: 0 };
        let irq = Source::Irq { irq: 24, name: "virtio0".into() };
        assert_eq!(named(&split), vec![(spinner.clone(), 45_000), (irq.clone(), 5_000)]);
        assert_eq!(split.cpu, Some(1));
        assert_eq!(once.window_ns, 85_000);
        assert_eq!(once.by, BTreeMap::from([(spinner, 45_000), (irq, 5_000)]));
    }

    #[test]
    fn a_sleep_beside_a_busy_cpu_is_the_threads_own() {
        // The repro: a thread runs 100 µs, sleeps 2 ms, runs 100 µs, while a compiler runs
        // on its CPU whenever the thread does not.
        let me = task("fifo", 100, 89);
        let rustc = task("rustc", 300, 120);
        let events = vec![
            switch(0, rustc.clone(), "R", me.clone()),
            switch(100_000, me.clone(), "S", rustc.clone()),
            ev(2_100_000, 1, EventKind::Waking { task: me.clone(), target_cpu: 1 }),
            switch(2_100_000, rustc.clone(), "R", me.clone()),
            switch(2_200_000, me.clone(), "S", rustc.clone()),
        ];
        let (splits, once) = split_misses(&events, &[window(100, 0, 0, 2_200_000)], |_| Some(1));
        let split = &splits[0];
        assert_eq!((split.on_cpu_ns, split.asleep_ns, split.unknown_ns), (200_000, 2_000_000, 0));
        assert!(split.culprits.is_empty(), "{:?}", split.culprits);
        assert!(once.by.is_empty());
    }

    #[test]
    fn a_wait_for_a_mutex_names_its_holder_when_the_trace_does() {
        let me = task("hi", 100, 10);
        let holder = task("lo", 101, 50);
        let idle = task("swapper/1", 0, 120);
        let events = vec![
            switch(0, idle.clone(), "R", me.clone()),
            // It asks for the mutex at 10 µs and sleeps on it until 50 µs, then sleeps
            // (its own sleep) until 80 µs.
            switch(10_000, me.clone(), "S", holder.clone()),
            switch(50_000, holder.clone(), "S", me.clone()),
            switch(60_000, me.clone(), "S", idle.clone()),
            ev(80_000, 1, EventKind::Waking { task: me.clone(), target_cpu: 1 }),
            switch(80_000, idle.clone(), "R", me.clone()),
            switch(90_000, me.clone(), "S", idle.clone()),
        ];
        let wait = LockWait { from_ns: 10_000, to_ns: 50_000, holder: 101 };
        let mut w = window(100, 0, 0, 90_000);
        w.lock_waits = vec![wait];
        let (splits, _) = split_misses(&events, &[w.clone()], |_| Some(1));
        let lo = Source::Task { comm: "lo".into(), pid: 101, prio: 50 };
        assert_eq!(named(&splits[0]), vec![(lo, 40_000)]);
        assert_eq!((splits[0].on_cpu_ns, splits[0].asleep_ns, splits[0].lock_ns), (30_000, 20_000, 0));
        // A holder no event names: waiting for a lock, not a guess.
        w.lock_waits = vec![LockWait { holder: 999, ..wait }];
        let (splits, _) = split_misses(&events, &[w], |_| Some(1));
        assert!(splits[0].culprits.is_empty());
        assert_eq!((splits[0].asleep_ns, splits[0].lock_ns), (20_000, 40_000));
    }

    #[test]
    fn overlapping_windows_book_each_stretch_once_in_the_totals() {
        // A spinner holds the CPU 0-3 ms; the thread's activations at 0 and 1 ms (period
        // 1 ms) both wait behind it and finish at 3.1 and 3.2 ms.
        let me = task("t", 100, 89);
        let spin = task("spin", 200, 0);
        let events = vec![
            switch(0, me.clone(), "R", spin.clone()),
            switch(3_000_000, spin.clone(), "S", me.clone()),
            switch(3_200_000, me.clone(), "S", spin.clone()),
        ];
        let windows = [window(100, 0, 0, 3_100_000), window(100, 1_000_000, 3_100_000, 3_200_000)];
        let (splits, once) = split_misses(&events, &windows, |_| Some(1));
        let spinner = Source::Task { comm: "spin".into(), pid: 200, prio: 0 };
        // Each miss sees its own window's share ...
        assert_eq!(named(&splits[0]), vec![(spinner.clone(), 3_000_000)]);
        assert_eq!(named(&splits[1]), vec![(spinner.clone(), 2_000_000)]);
        assert_eq!((splits[1].earlier_ns, splits[1].on_cpu_ns), (100_000, 100_000));
        // ... the totals count the spinner's 3 ms once, within the 3.2 ms union.
        assert_eq!(once.window_ns, 3_200_000);
        assert_eq!(once.by, BTreeMap::from([(spinner.clone(), 3_000_000)]));
        let each = windows
            .iter()
            .zip(&splits)
            .map(|(_, s)| MissSplit { culprits: s.culprits.clone(), not_visible_ns: 20_000, ..MissSplit::default() })
            .collect();
        let t = MissTrace { misses: 3, each, ..MissTrace::default() }.summed(&once);
        assert_eq!(t.sources, vec![MissSource { source: spinner, misses: 2, ns: 3_000_000 }]);
        assert_eq!(
            (t.split, t.misses, t.window_ns, t.not_visible_ns, t.misses_with_not_visible),
            (2, 3, 3_200_000, 40_000, 2)
        );
    }

    #[test]
    fn sources_merged_over_repeats_sum_and_rank_by_time_then_misses() {
        let src = |source: Source, misses, ns| MissSource { source, misses, ns };
        let a = MissTrace {
            sources: vec![src(Source::LocalTimer, 2, 300), src(Source::Runnable, 1, 100)],
            ..MissTrace::default()
        };
        let b = MissTrace {
            sources: vec![src(Source::Runnable, 3, 200), src(Source::Unseen, 1, 300)],
            ..MissTrace::default()
        };
        let merged = merged_sources([&a, &b]);
        assert_eq!(
            merged,
            [src(Source::Runnable, 4, 300), src(Source::LocalTimer, 2, 300), src(Source::Unseen, 1, 300)],
            "equal time: the source in more misses first"
        );
    }
}
