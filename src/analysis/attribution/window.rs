//! One late wakeup's window split by what the CPU ran through it (the steps the module
//! describes), and each measured thread's spikes split so.

use std::collections::BTreeMap;

use crate::analysis::replay::{
    replay, ContextEdge, ContextKind, CpuState, Handler, OpenContexts, PrevState, Sched, Step, IDLE_PID,
};
use crate::analysis::trace::{
    Culprit, EventKind, Recording, Source, SpikeAttribution, SpikeTimeline, TaskRef, TraceEvent, MAX_TIMELINES,
};

use super::lanes::TimelineLanes;
use super::tally::SourceTally;

/// Splits one late wakeup's window on `cpu`, from `ideal_ns` (when the thread `measured_tid`
/// was due to wake) to `actual_ns` (when its user code ran), both CLOCK_MONOTONIC.
/// `events` is the whole recording, all CPUs, in time order; `partial` says the CPU lost
/// events. `at_ns` and `latency_ns` are left for the caller (`attribute_spikes` fills them).
#[cfg(test)]
pub fn attribute_spike(
    events: &[TraceEvent],
    cpu: usize,
    measured_tid: i32,
    ideal_ns: u64,
    actual_ns: u64,
    partial: bool,
) -> SpikeAttribution {
    let mut splits = SpikeSplits::new(cpu, measured_tid, [(ideal_ns, actual_ns)]);
    replay(events, &mut [&mut splits]);
    splits.into_attributions(partial).remove(0)
}

/// One measuring thread's spikes: its CPU, its tid, when it started (CLOCK_MONOTONIC ns),
/// and each spike as (ns since the thread started of its actual wake, its latency ns), so
/// its window is from start + at − latency to start + at.
#[derive(Clone, Debug)]
pub struct SpikingThread {
    pub cpu: usize,
    pub tid: i32,
    pub start_mono_ns: u64,
    pub spikes: Vec<(u64, u64)>,
}

impl SpikingThread {
    /// A spike's (ideal, actual) wake times, CLOCK_MONOTONIC ns.
    pub(super) fn window(&self, (at_ns, latency_ns): (u64, u64)) -> (u64, u64) {
        let actual_ns = self.start_mono_ns.saturating_add(at_ns);
        (actual_ns.saturating_sub(latency_ns), actual_ns)
    }

    pub(super) fn splits<'a>(&self) -> SpikeSplits<'a> {
        SpikeSplits::new(self.cpu, self.tid, self.spikes.iter().map(|&spike| self.window(spike)))
    }

    /// The split spikes with their own times. A spike is partial when its CPU lost events,
    /// or was not recorded at all.
    pub(super) fn attributions(&self, splits: SpikeSplits, recording: &Recording) -> Vec<SpikeAttribution> {
        let recorded = recording.lost.iter().any(|&(recorded_cpu, _)| recorded_cpu == self.cpu);
        let lost_events = recording.lost.iter().any(|&(recorded_cpu, lost)| recorded_cpu == self.cpu && lost > 0);
        let splits = splits.into_attributions(!recorded || lost_events);
        splits
            .into_iter()
            .zip(&self.spikes)
            .map(|(split, &(at_ns, latency_ns))| SpikeAttribution { at_ns, latency_ns, ..split })
            .collect()
    }

    /// The surroundings of the `MAX_TIMELINES` largest spikes: from a millisecond (or half
    /// the spike, if longer) before its ideal wake time to half a millisecond after the
    /// actual one.
    pub(super) fn timelines(&self) -> Vec<(SpikeTimeline, TimelineLanes)> {
        let mut largest: Vec<(u64, u64)> = self.spikes.clone();
        largest.sort_by_key(|s| std::cmp::Reverse(s.1));
        largest
            .into_iter()
            .take(MAX_TIMELINES)
            .map(|spike| {
                let (ideal_ns, actual_ns) = self.window(spike);
                let (from_ns, to_ns) = (ideal_ns.saturating_sub((spike.1 / 2).max(1_000_000)), actual_ns + 500_000);
                let timeline = SpikeTimeline { ideal_ns, actual_ns, from_ns, to_ns, segments: Vec::new() };
                (timeline, TimelineLanes::new(self.cpu, from_ns, to_ns))
            })
            .collect()
    }
}

/// Attributes each spike of a thread that ran on `cpu` (see `SpikingThread`). `recording`
/// with its idle exits put back (`Recording::with_idle_exits`).
#[cfg(test)]
pub fn attribute_spikes(
    recording: &Recording,
    cpu: usize,
    tid: i32,
    thread_start_mono_ns: u64,
    spikes: &[(u64, u64)],
) -> Vec<SpikeAttribution> {
    let thread = SpikingThread { cpu, tid, start_mono_ns: thread_start_mono_ns, spikes: spikes.to_vec() };
    let mut splits = thread.splits();
    replay(&recording.events, &mut [&mut splits]);
    thread.attributions(splits, recording)
}

/// Each thread's spikes split and the timelines around its largest, all from one replay of
/// `recording` (with its idle exits put back).
pub fn attribute_threads(
    recording: &Recording,
    threads: &[SpikingThread],
) -> Vec<(Vec<SpikeAttribution>, Vec<SpikeTimeline>)> {
    let mut splits: Vec<SpikeSplits> = threads.iter().map(SpikingThread::splits).collect();
    let mut timelines: Vec<Vec<(SpikeTimeline, TimelineLanes)>> =
        threads.iter().map(SpikingThread::timelines).collect();
    let mut handlers: Vec<&mut dyn Handler> = Vec::new();
    handlers.extend(splits.iter_mut().map(|s| s as &mut dyn Handler));
    handlers.extend(timelines.iter_mut().flatten().map(|(_, lanes)| lanes as &mut dyn Handler));
    replay(&recording.events, &mut handlers);
    let filled = |timelines: Vec<(SpikeTimeline, TimelineLanes)>| {
        timelines.into_iter().map(|(timeline, lanes)| SpikeTimeline { segments: lanes.segments, ..timeline }).collect()
    };
    threads
        .iter()
        .zip(splits.into_iter().zip(timelines))
        .map(|(thread, (splits, timelines))| (thread.attributions(splits, recording), filled(timelines)))
        .collect()
}

/// What a stretch of the window is blamed on, borrowed from the events until the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Blame<'a> {
    Task(&'a TaskRef),
    Irq(u32, &'a str),
    Softirq(&'a str),
    LocalTimer,
    Runnable,
    Unseen,
    /// Before the CPU's first switch: its `prev` ran, known only once it comes
    /// (`resolved`). The thread's `runnable` then, and whether it was `woken` meanwhile,
    /// which made it runnable unless that task is the thread itself.
    FirstPrev {
        runnable: bool,
        woken: bool,
    },
}

impl<'a> Blame<'a> {
    /// A stretch outside handlers, while `running` had the CPU (`None`: no task known).
    pub(super) fn of_task(running: Option<&'a TaskRef>, measured_tid: i32, runnable: bool) -> Blame<'a> {
        match running {
            // The idle task is no culprit: the wait for the scheduler once the thread was
            // woken, time the kernel cannot explain before.
            Some(task) if task.pid == IDLE_PID => {
                if runnable {
                    Blame::Runnable
                } else {
                    Blame::Unseen
                }
            }
            Some(task) if task.pid != measured_tid => Blame::Task(task),
            // The thread's own time (its return to user space), or no task known.
            _ => Blame::Unseen,
        }
    }

    /// The blame with the CPU's first switch's `prev` known (`None`: there was none).
    pub(super) fn resolved(self, first_prev: Option<&'a TaskRef>, measured_tid: i32) -> Blame<'a> {
        match self {
            Blame::FirstPrev { runnable, woken } => {
                let woken_elsewhere = woken && first_prev.is_none_or(|task| task.pid != measured_tid);
                Blame::of_task(first_prev, measured_tid, runnable || woken_elsewhere)
            }
            blame => blame,
        }
    }

    /// The culprit's source; `None` for time not visible to the kernel.
    pub(super) fn source(self) -> Option<Source> {
        Some(match self {
            Blame::Task(task) => Source::Task { comm: task.comm.clone(), pid: task.pid, prio: task.prio },
            Blame::Irq(irq, name) => Source::Irq { irq, name: name.to_string() },
            Blame::Softirq(name) => Source::Softirq { name: name.to_string() },
            Blame::LocalTimer => Source::LocalTimer,
            Blame::Runnable => Source::Runnable,
            // (`FirstPrev` is resolved before: unresolved, no task is known.)
            Blame::Unseen | Blame::FirstPrev { .. } => return None,
        })
    }
}

/// Who had the CPU, as a spike's split sees it.
#[derive(Clone, Copy)]
pub(super) enum OnCpu<'a> {
    /// Nothing recorded on the CPU yet.
    Unknown,
    /// Events on the CPU but no switch yet: the first switch's `prev`, from the CPU's
    /// first event on (the time before that is not seen).
    FirstPrev,
    Task(&'a TaskRef),
}

impl<'a> OnCpu<'a> {
    pub(super) fn of(cpu: CpuState<'a>) -> Self {
        match cpu {
            CpuState::Unseen => OnCpu::Unknown,
            CpuState::NoSwitchYet => OnCpu::FirstPrev,
            CpuState::Running { task, .. } => OnCpu::Task(task),
        }
    }
}

/// The measured thread as a split sees it: runnable (woken, or preempted) and not on the
/// CPU, and when it was first woken since it last went to sleep.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Measured {
    runnable: bool,
    /// Woken while the CPU ran its first switch's `prev`, not known yet: runnable unless
    /// that task is the thread itself.
    woken_before_first_switch: bool,
    woken_at: Option<u64>,
}

impl Measured {
    /// `step` applied, `running` being who had the CPU as it found it.
    pub(super) fn apply(&mut self, step: &Step, measured_tid: i32, running: OnCpu) {
        match &step.event.kind {
            EventKind::Switch { prev, next, .. } => {
                if let OnCpu::FirstPrev = running {
                    self.runnable |= self.woken_before_first_switch && prev.pid != measured_tid;
                    self.woken_before_first_switch = false;
                }
                if prev.pid == measured_tid {
                    match step.prev_state {
                        Some(PrevState::Runnable) => self.runnable = true,
                        Some(PrevState::Unrecorded) | None => {}
                        Some(_) => {
                            self.runnable = false;
                            self.woken_at = None;
                        }
                    }
                }
                if next.pid == measured_tid {
                    self.runnable = false;
                }
            }
            EventKind::Waking { task, .. } | EventKind::Wakeup { task, .. } if task.pid == measured_tid => {
                match running {
                    // A wakeup of a thread already on the CPU (it had not slept yet) changes
                    // nothing.
                    OnCpu::Task(task) if task.pid == measured_tid => {}
                    OnCpu::FirstPrev => self.woken_before_first_switch = true,
                    OnCpu::Task(_) | OnCpu::Unknown => self.runnable = true,
                }
                self.woken_at.get_or_insert(step.event.ts_ns);
            }
            _ => {}
        }
    }
}

/// One spike's window, from `ideal_ns` to `actual_ns`, as it is split.
pub(super) struct SpikeWindow<'a> {
    ideal_ns: u64,
    actual_ns: u64,
    /// Time up to `clock` is accounted for; nothing before the window is.
    clock: u64,
    measured: Measured,
    blamed: BTreeMap<Blame<'a>, u64>,
}

impl<'a> SpikeWindow<'a> {
    pub(super) fn blame_until(&mut self, at: u64, blame: Blame<'a>) {
        if at > self.clock {
            *self.blamed.entry(blame).or_default() += at - self.clock;
            self.clock = at;
        }
    }
}

/// One thread's spikes on its CPU, split as the replay goes (the module's steps 1 to 3).
/// A spike starts from the state of the CPU's last switch before its window: the running
/// task, no handler open, and the thread as the events since that switch say. The state
/// that every window not reached yet would start from is kept once (`since_last_switch`);
/// a window takes its copy when the stream reaches it and goes on alone, so a wakeup before
/// that switch is never the window's.
pub(super) struct SpikeSplits<'a> {
    cpu: usize,
    measured_tid: i32,
    /// Open handler contexts, each with what its time is blamed on.
    contexts: OpenContexts<Blame<'a>>,
    /// The CPU's first switch's `prev`: who ran before it (`Blame::FirstPrev`).
    first_prev: Option<&'a TaskRef>,
    /// The thread as the events since the CPU's last switch say: where a window not
    /// reached yet starts.
    since_last_switch: Measured,
    windows: Vec<SpikeWindow<'a>>,
    /// The windows not reached yet, the soonest last.
    waiting: Vec<usize>,
    /// The windows being split.
    open: Vec<usize>,
}

impl<'a> SpikeSplits<'a> {
    pub(super) fn new(cpu: usize, measured_tid: i32, windows: impl IntoIterator<Item = (u64, u64)>) -> Self {
        let windows: Vec<SpikeWindow> = windows
            .into_iter()
            .map(|(ideal_ns, actual_ns)| SpikeWindow {
                ideal_ns,
                actual_ns,
                clock: ideal_ns,
                measured: Measured::default(),
                blamed: BTreeMap::new(),
            })
            .collect();
        let mut waiting: Vec<usize> = (0..windows.len()).collect();
        waiting.sort_by_key(|&i| std::cmp::Reverse(windows[i].ideal_ns.min(windows[i].actual_ns)));
        SpikeSplits {
            cpu,
            measured_tid,
            contexts: OpenContexts::default(),
            first_prev: None,
            since_last_switch: Measured::default(),
            windows,
            waiting,
            open: Vec::new(),
        }
    }

    /// Whether `event` changes this CPU's state: its own events, and the measured thread's
    /// wakeup from whichever CPU woke it to this one.
    pub(super) fn concerns(&self, event: &TraceEvent) -> bool {
        event.cpu == self.cpu
            || match &event.kind {
                EventKind::Waking { task, target_cpu } | EventKind::Wakeup { task, target_cpu } => {
                    task.pid == self.measured_tid && *target_cpu == self.cpu
                }
                _ => false,
            }
    }

    /// Who the time from now to the next event goes to: the innermost context, else the
    /// running task.
    pub(super) fn blame(
        contexts: &OpenContexts<Blame<'a>>,
        measured_tid: i32,
        running: OnCpu<'a>,
        measured: Measured,
    ) -> Blame<'a> {
        if let Some(&blame) = contexts.innermost() {
            return blame;
        }
        match running {
            OnCpu::Task(task) => Blame::of_task(Some(task), measured_tid, measured.runnable),
            OnCpu::Unknown => Blame::Unseen,
            OnCpu::FirstPrev => {
                Blame::FirstPrev { runnable: measured.runnable, woken: measured.woken_before_first_switch }
            }
        }
    }

    /// The windows an event at `at` is past the start of go on alone, from a copy of the
    /// shared state.
    pub(super) fn reach(&mut self, at: u64) {
        while let Some(&i) = self.waiting.last() {
            let window = &mut self.windows[i];
            if at <= window.ideal_ns.min(window.actual_ns) {
                break;
            }
            window.measured = self.since_last_switch;
            self.open.push(i);
            self.waiting.pop();
        }
    }

    pub(super) fn into_attributions(self, partial: bool) -> Vec<SpikeAttribution> {
        let (first_prev, measured_tid) = (self.first_prev, self.measured_tid);
        self.windows
            .into_iter()
            .map(|window| {
                let mut unseen_ns = 0;
                let mut tally = SourceTally::default();
                for (blame, ns) in window.blamed {
                    match blame.resolved(first_prev, measured_tid).source() {
                        Some(source) => {
                            tally.add(&source, ns);
                        }
                        None => unseen_ns += ns,
                    }
                }
                let mut culprits: Vec<Culprit> =
                    tally.into_sources().map(|(source, entry)| Culprit { source, ns: entry.total }).collect();
                culprits.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.source.cmp(&b.source)));
                let window_ns = window.actual_ns.saturating_sub(window.ideal_ns);
                SpikeAttribution {
                    at_ns: 0,
                    latency_ns: 0,
                    // A wakeup timestamped just before the ideal time (µs resolution) is no
                    // delay.
                    timer_delay_ns: window.measured.woken_at.map(|t| t.saturating_sub(window.ideal_ns).min(window_ns)),
                    culprits,
                    unseen_ns,
                    partial,
                }
            })
            .collect()
    }
}

impl<'a> Handler<'a> for SpikeSplits<'a> {
    fn step(&mut self, step: &Step<'a>, sched: &Sched<'a>) {
        let event = step.event;
        if !self.concerns(event) {
            return;
        }
        let at = event.ts_ns;
        let running = OnCpu::of(sched.cpu(self.cpu));
        // As the event itself finds it: the CPU's first event says someone ran.
        let running_at_event = match running {
            OnCpu::Unknown if event.cpu == self.cpu => OnCpu::FirstPrev,
            running => running,
        };
        let is_switch = matches!(event.kind, EventKind::Switch { .. });
        self.reach(at);
        let (windows, contexts, tid) = (&mut self.windows, &self.contexts, self.measured_tid);
        self.open.retain(|&i| {
            let window = &mut windows[i];
            let blame = Self::blame(contexts, tid, running, window.measured);
            if at > window.ideal_ns.max(window.actual_ns) {
                window.blame_until(window.actual_ns, blame);
                return false;
            }
            // Up to its actual wake time an event ends a stretch and is then applied. A
            // switch up to the ideal time is a later start (only an inverted window, actual
            // before ideal, meets one once it is reached).
            if at <= window.actual_ns {
                window.blame_until(at, blame);
            }
            if is_switch && at <= window.ideal_ns {
                window.measured = Measured::default();
            }
            if at <= window.actual_ns {
                window.measured.apply(step, tid, running_at_event);
            }
            true
        });
        if let EventKind::Switch { prev, .. } = &event.kind {
            self.first_prev.get_or_insert(prev);
            self.since_last_switch = Measured::default();
            // A switch happens in task context: any context still open lost its exit.
            self.contexts.clear();
        }
        self.since_last_switch.apply(step, tid, running_at_event);
        match &event.kind {
            EventKind::IrqEntry { irq, name } => self.contexts.enter(ContextKind::Irq(*irq), Blame::Irq(*irq, name)),
            EventKind::SoftirqEntry { vec, name } => {
                self.contexts.enter(ContextKind::Softirq(*vec), Blame::Softirq(name))
            }
            EventKind::LocalTimerEntry => self.contexts.enter(ContextKind::LocalTimer, Blame::LocalTimer),
            EventKind::HrtimerExpireEntry { .. } => {
                // The callback runs inside the interrupt (or softirq) that expired it.
                let enclosing = self.contexts.innermost().copied().unwrap_or(Blame::LocalTimer);
                self.contexts.enter(ContextKind::Hrtimer, enclosing);
            }
            kind => {
                if let Some(ContextEdge::Exit(context)) = ContextEdge::of(kind) {
                    self.contexts.leave(context);
                }
            }
        }
    }

    fn finish(&mut self, sched: &Sched<'a>) {
        for i in self.waiting.drain(..) {
            self.windows[i].measured = self.since_last_switch;
            self.open.push(i);
        }
        let running = OnCpu::of(sched.cpu(self.cpu));
        for &i in &self.open {
            let window = &mut self.windows[i];
            let blame = Self::blame(&self.contexts, self.measured_tid, running, window.measured);
            window.blame_until(window.actual_ns, blame);
        }
    }
}
