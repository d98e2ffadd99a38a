//! Attribution: what took a CPU while a measured thread waited to wake, by the kernel's own
//! tracepoints.
//!
//! A late wakeup has a window: from its ideal wake time (when the thread's timer was due)
//! to its actual one (when its user code ran). The events recorded on that CPU say what ran
//! through it, so the window can be split without guessing:
//!
//! 1. The state at the window's start: the CPU's state from the last `sched_switch` before
//!    it (`analysis::replay` walks the recording once for all the windows). The switch names
//!    the running task; a handler entered and not yet left is a context still open at the
//!    start. No handler context outlives a switch (switches happen in task context), so the
//!    switch is a clean point to start from: what the thread did before it is not the
//!    window's.
//! 2. Each stretch between two events goes to the innermost open context: an IRQ handler
//!    (by number and name), a softirq (by vector) or the local timer interrupt. An hrtimer
//!    callback is its enclosing context's time, the local timer's when it has none.
//! 3. Outside handlers, the running task's: another task is a culprit, with its priority.
//!    The idle task is no culprit: once the measured thread was woken (`sched_waking` or
//!    `sched_wakeup`) its idle time is `Runnable`, the wait for the scheduler; before, it is
//!    time the kernel cannot explain (the timer had not fired). The thread's own time after
//!    its switch-in (the return to user space) and gaps no event covers are not visible to
//!    the kernel either: irqs-off sections, the hypervisor, SMIs. Both go to `unseen_ns`,
//!    never to a guess.
//!
//! The culprits and `unseen_ns` always sum to the window's length. Timestamps may have only
//! µs resolution (the text trace format), so events share times and the window's edges fall
//! between them; a stretch of zero length blames no one.
//!
//! For a run, the tail's excess over the p99 is split across each spike's sources in
//! proportion to their time in its window (`tail_culprits`). A task is one source by comm
//! and pid: a task boosted by priority inheritance, or re-niced, is still the same task; it
//! is shown at the priority it held for most of its time.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::analysis::replay::{
    replay, ContextEdge, ContextKind, CpuState, Handler, OpenContexts, PrevState, Sched, Step, IDLE_PID,
};
use crate::analysis::trace::{
    Culprit, EventKind, Lane, Recording, Segment, Source, SpikeAttribution, SpikeTimeline, TailCulprit, TaskRef,
    TraceEvent, MAX_TIMELINES,
};

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
    fn window(&self, (at_ns, latency_ns): (u64, u64)) -> (u64, u64) {
        let actual_ns = self.start_mono_ns.saturating_add(at_ns);
        (actual_ns.saturating_sub(latency_ns), actual_ns)
    }

    fn splits<'a>(&self) -> SpikeSplits<'a> {
        SpikeSplits::new(self.cpu, self.tid, self.spikes.iter().map(|&spike| self.window(spike)))
    }

    /// The split spikes with their own times. A spike is partial when its CPU lost events,
    /// or was not recorded at all.
    fn attributions(&self, splits: SpikeSplits, recording: &Recording) -> Vec<SpikeAttribution> {
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
    fn timelines(&self) -> Vec<(SpikeTimeline, TimelineLanes)> {
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

/// What ran on `cpu` from `from_ns` to `to_ns`, as segments clipped to the window: each
/// task from the switch to it until the next switch (the idle task left out), each
/// handler (irq, softirq, local timer, hrtimer callback) from its entry to its exit.
/// `events` as recorded, in time order, with the idle exits put back.
#[cfg(test)]
pub fn segments(events: &[TraceEvent], cpu: usize, from_ns: u64, to_ns: u64) -> Vec<Segment> {
    cpus_segments(events, &[cpu], from_ns, to_ns).remove(0)
}

/// `segments` of each of `cpus`, from one replay.
pub fn cpus_segments(events: &[TraceEvent], cpus: &[usize], from_ns: u64, to_ns: u64) -> Vec<Vec<Segment>> {
    let mut lanes: Vec<TimelineLanes> = cpus.iter().map(|&cpu| TimelineLanes::new(cpu, from_ns, to_ns)).collect();
    let mut handlers: Vec<&mut dyn Handler> = lanes.iter_mut().map(|lanes| lanes as &mut dyn Handler).collect();
    replay(events, &mut handlers);
    lanes.into_iter().map(|lanes| lanes.segments).collect()
}

/// One timeline's lanes on one CPU: the tasks from the replay's switches, and the handlers
/// kept here. An exit closes the latest open entry of its kind (irq and softirq by number),
/// and an entry whose exit the trace lacks (this VM misses some around idle) is dropped,
/// never stretched to a later exit.
struct TimelineLanes {
    cpu: usize,
    from_ns: u64,
    to_ns: u64,
    /// Each open handler's entry time and name; at most one of each kind.
    handlers: OpenContexts<(u64, String)>,
    segments: Vec<Segment>,
    /// An event past the window came: the lanes are done.
    ended: bool,
}

impl TimelineLanes {
    fn new(cpu: usize, from_ns: u64, to_ns: u64) -> Self {
        TimelineLanes { cpu, from_ns, to_ns, handlers: OpenContexts::default(), segments: Vec::new(), ended: false }
    }

    fn push(&mut self, lane: Lane, name: &str, detail: String, start: u64, end: u64) {
        let (start, end) = (start.max(self.from_ns), end.min(self.to_ns));
        if end > start {
            self.segments.push(Segment { lane, name: name.to_string(), detail, start_ns: start, end_ns: end });
        }
    }

    /// The run of `task` from `start` to `end`, unless it is the idle task's.
    fn push_run(&mut self, task: &TaskRef, start: u64, end: u64) {
        if task.pid != IDLE_PID {
            let detail = format!("pid {}, {}", task.pid, describe_prio(task.prio));
            self.push(Lane::Task, &task.comm, detail, start, end);
        }
    }

    /// Still running, or in a handler, when the window (or the recording) ends.
    fn end(&mut self, cpu: CpuState) {
        if let CpuState::Running { task, since } = cpu {
            self.push_run(task, since, self.to_ns);
        }
        let open: Vec<(u64, String)> = self.handlers.drain().collect();
        for (start, name) in open {
            self.push(Lane::Handler, &name, String::new(), start, self.to_ns);
        }
        self.segments.sort_by_key(|s| (s.start_ns, s.lane == Lane::Handler));
        self.ended = true;
    }
}

impl<'a> Handler<'a> for TimelineLanes {
    fn step(&mut self, step: &Step<'a>, sched: &Sched<'a>) {
        let event = step.event;
        if self.ended || event.cpu != self.cpu {
            return;
        }
        if event.ts_ns > self.to_ns {
            self.end(sched.cpu(self.cpu));
            return;
        }
        if let EventKind::Switch { .. } = event.kind {
            if let CpuState::Running { task, since } = sched.cpu(self.cpu) {
                self.push_run(task, since, event.ts_ns);
            }
            // No handler spans a switch: any still open lost its exit.
            self.handlers.clear();
        }
        match ContextEdge::of(&event.kind) {
            Some(ContextEdge::Entry(kind)) => {
                // The same handler cannot be entered again inside itself: the open one lost
                // its exit.
                self.handlers.leave(kind);
                self.handlers.enter(kind, (event.ts_ns, handler_name(&event.kind)));
            }
            Some(ContextEdge::Exit(kind)) => {
                if let Some((start, name)) = self.handlers.leave(kind) {
                    self.push(Lane::Handler, &name, String::new(), start, event.ts_ns);
                }
            }
            None => {}
        }
    }

    fn finish(&mut self, sched: &Sched<'a>) {
        if !self.ended {
            self.end(sched.cpu(self.cpu));
        }
    }
}

/// A handler's name on the timeline: "irq 24 virtio0-input.0", "softirq TIMER".
fn handler_name(entry: &EventKind) -> String {
    match entry {
        EventKind::IrqEntry { irq, name } => format!("irq {irq} {name}"),
        EventKind::SoftirqEntry { name, .. } => format!("softirq {name}"),
        EventKind::LocalTimerEntry => "local timer interrupt".to_string(),
        EventKind::HrtimerExpireEntry { function } => format!("hrtimer {function}"),
        _ => String::new(),
    }
}

/// The recording with the switches out of the idle task that the kernel did not trace put
/// back. On this project's VM (Linux 6.18) no `sched_switch` from `swapper/1` is ever
/// recorded on CPU 1, though CPU 0's are (and switches *to* the idle task are on both):
/// the task that ended the idle time would then be invisible, its time blamed on idleness.
/// A switch whose `prev` is a task while the CPU was last seen switching to idle says a
/// switch was missed; it happened when the handler that woke that task (its last
/// `sched_waking`/`sched_wakeup` aimed at this CPU) returned, since an idle CPU runs a woken
/// task at once, or at the wakeup itself outside any handler. Without such a wakeup nothing
/// is inferred: that time stays idle (unseen), never guessed at.
pub fn with_idle_exits(events: &[TraceEvent]) -> Vec<TraceEvent> {
    let mut exits = IdleExits { events, index: 0, cpus: BTreeMap::new(), inserts: Vec::new() };
    replay(events, &mut [&mut exits]);
    exits.into_events()
}

/// A CPU while it idles (the replay says when: its last switch was to the idle task).
#[derive(Default)]
struct IdleCpu {
    /// How deep in handlers it is.
    depth: usize,
    /// The task woken onto this idle CPU, and the time its handler returned (or it was
    /// woken, outside handlers).
    woken: Option<(i32, i32, u64)>,
    /// The handler returned: the woken task runs, later wakeups do not replace it.
    settled: bool,
}

struct IdleExits<'a> {
    events: &'a [TraceEvent],
    /// The replayed event's index in `events`.
    index: usize,
    cpus: BTreeMap<usize, IdleCpu>,
    /// (index to insert before, event)
    inserts: Vec<(usize, TraceEvent)>,
}

impl<'a> Handler<'a> for IdleExits<'a> {
    fn step(&mut self, step: &Step<'a>, sched: &Sched<'a>) {
        let (i, e) = (self.index, step.event);
        self.index += 1;
        // A wakeup done from another CPU (its `sched_wakeup` recorded there): an idle
        // target runs the task as soon as the reschedule interrupt arrives, about when the
        // wakeup is recorded. (A waking event's CPU is the task's old one, not yet the
        // target, so only the wakeup counts.)
        if let EventKind::Wakeup { task, target_cpu } = &e.kind {
            if *target_cpu != e.cpu && task.pid != IDLE_PID {
                let target = self.cpus.entry(*target_cpu).or_default();
                if sched.cpu(*target_cpu).is_idle()
                    && !target.settled
                    && target.woken.is_none_or(|(pid, prio, _)| pid != task.pid && task.prio < prio)
                {
                    target.woken = Some((task.pid, task.prio, e.ts_ns));
                }
                return;
            }
        }
        let idle = sched.cpu(e.cpu).is_idle();
        let cpu = self.cpus.entry(e.cpu).or_default();
        match &e.kind {
            EventKind::Switch { prev, .. } => {
                if idle && prev.pid != IDLE_PID {
                    if let Some((_, _, at)) = cpu.woken.filter(|w| w.0 == prev.pid) {
                        let idle = TaskRef { comm: format!("swapper/{}", e.cpu), pid: IDLE_PID, prio: 120 };
                        let kind = EventKind::Switch { prev: idle, prev_state: "R".into(), next: prev.clone() };
                        let before = self.events[..i].partition_point(|x| x.ts_ns <= at);
                        self.inserts.push((before, TraceEvent { cpu: e.cpu, ts_ns: at, kind }));
                    }
                }
                *cpu = IdleCpu::default();
            }
            EventKind::Waking { task, target_cpu } | EventKind::Wakeup { task, target_cpu }
                if *target_cpu == e.cpu && idle && !cpu.settled && task.pid != IDLE_PID =>
            {
                // Of the tasks one handler wakes, the more urgent (lower kernel priority)
                // runs first.
                if cpu.woken.is_none_or(|(pid, prio, _)| pid == task.pid || task.prio < prio) {
                    cpu.woken = Some((task.pid, task.prio, e.ts_ns));
                }
                cpu.settled = cpu.depth == 0;
            }
            // An hrtimer callback runs inside an interrupt: it is no level of its own.
            kind => match ContextEdge::of(kind) {
                Some(ContextEdge::Entry(context)) if context != ContextKind::Hrtimer => cpu.depth += 1,
                Some(ContextEdge::Exit(context)) if context != ContextKind::Hrtimer => {
                    cpu.depth = cpu.depth.saturating_sub(1);
                    if cpu.depth == 0 && !cpu.settled {
                        if let Some(w) = cpu.woken.as_mut() {
                            w.2 = e.ts_ns;
                            cpu.settled = true;
                        }
                    }
                }
                _ => {}
            },
        }
    }
}

impl IdleExits<'_> {
    fn into_events(self) -> Vec<TraceEvent> {
        let (events, mut inserts) = (self.events, self.inserts);
        if inserts.is_empty() {
            return events.to_vec();
        }
        inserts.sort_by_key(|x| x.0);
        let mut out = Vec::with_capacity(events.len() + inserts.len());
        let mut pending = inserts.into_iter().peekable();
        for (i, e) in events.iter().enumerate() {
            while let Some((_, inferred)) = pending.next_if(|x| x.0 == i) {
                out.push(inferred);
            }
            out.push(e.clone());
        }
        out.extend(pending.map(|x| x.1));
        out
    }
}

impl Recording {
    /// The recording with its idle exits put back (`with_idle_exits`): what every analysis
    /// of it reads, made once when the trial reads its trace.
    pub fn with_idle_exits(self) -> Recording {
        Recording { events: with_idle_exits(&self.events), lost: self.lost }
    }
}

/// The tail's culprits: each spike's excess over `p99_ns` (spikes at or below it are
/// skipped) split across its sources (culprits, and `Source::Unseen` for its unseen time)
/// in proportion to their time in its window. A source's share is its summed excess over
/// the total; `spikes` counts the spikes it took time in. Sorted by share, largest first.
/// A spike with an empty split (no window) is all unseen, so the shares still sum to 1.
pub fn tail_culprits(spikes: &[SpikeAttribution], p99_ns: u64) -> Vec<TailCulprit> {
    let mut tally: SourceTally<f64> = SourceTally::default();
    let mut total_excess = 0.0;
    for spike in spikes {
        let excess = spike.latency_ns.saturating_sub(p99_ns);
        if excess == 0 {
            continue;
        }
        let unseen = Culprit { source: Source::Unseen, ns: spike.unseen_ns };
        let parts: Vec<&Culprit> = spike.culprits.iter().chain([&unseen]).filter(|c| c.ns > 0).collect();
        let window_ns: f64 = parts.iter().map(|c| c.ns as f64).sum();
        total_excess += excess as f64;
        if parts.is_empty() {
            tally.add(&Source::Unseen, excess as f64).spikes += 1;
            continue;
        }
        let mut counted = BTreeSet::new();
        for part in parts {
            let entry = tally.add(&part.source, excess as f64 * part.ns as f64 / window_ns);
            // A task listed twice in one spike (under two priorities) took time in one spike.
            if counted.insert(Identity::of(&part.source)) {
                entry.spikes += 1;
            }
        }
    }
    if total_excess == 0.0 {
        return Vec::new();
    }
    let mut culprits: Vec<TailCulprit> = tally
        .into_sources()
        .map(|(source, entry)| TailCulprit { source, share: entry.total / total_excess, spikes: entry.spikes })
        .collect();
    culprits.sort_by(|a, b| {
        b.share.total_cmp(&a.share).then_with(|| b.spikes.cmp(&a.spikes)).then_with(|| a.source.cmp(&b.source))
    });
    culprits
}

/// How much of a tail the attribution explains: the excess above the p99 summed over the
/// spikes, the share of it named sources took (tasks, handlers, the wait for the CPU), the
/// share not visible to the kernel, and how much of that the CPU's steal over the run can
/// cover at most. The guest accounts steal per tick (and shows it per USER_HZ tick), never
/// per spike, so steal is a bound on the not-visible part, never a named source of a spike.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TailAccount {
    pub excess_ns: f64,
    pub named_share: f64,
    pub unseen_share: f64,
    /// The CPU's steal over the run as the kernel counted it (whole ticks), and one tick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_resolution_ns: Option<u64>,
    /// The largest share of the tail's excess that steal could be: the counted steal plus
    /// one tick, at most the not-visible share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steal_at_most_share: Option<f64>,
}

impl TailAccount {
    /// `tail` as `tail_culprits` made it from `spikes` above `p99_ns`; `steal` the CPU's
    /// (counted ns, one tick ns) over the run, where known.
    pub fn of(
        tail: &[TailCulprit],
        spikes: &[SpikeAttribution],
        p99_ns: u64,
        steal: Option<(u64, u64)>,
    ) -> TailAccount {
        let excess_ns: f64 = spikes.iter().map(|s| s.latency_ns.saturating_sub(p99_ns) as f64).sum();
        let unseen_share: f64 = tail.iter().filter(|c| c.source == Source::Unseen).map(|c| c.share).sum();
        let named_share = if tail.is_empty() { 0.0 } else { (1.0 - unseen_share).max(0.0) };
        let steal_at_most_share = steal.filter(|_| excess_ns > 0.0).map(|(counted, tick)| {
            let bound = (counted + tick) as f64 / excess_ns;
            bound.min(unseen_share)
        });
        TailAccount {
            excess_ns,
            named_share,
            unseen_share,
            steal_ns: steal.map(|s| s.0),
            steal_resolution_ns: steal.map(|s| s.1),
            steal_at_most_share,
        }
    }

    /// "named sources 39 % of the excess; not visible to the kernel 61 %; steal on this CPU
    /// over the run 20 ms (± 10): at most 61 % of the excess, so at least 0 % is neither".
    pub fn describe(&self) -> String {
        let mut text = format!(
            "named sources: {} of the excess ({:.1} µs); not visible to the kernel: {}",
            percent(self.named_share),
            self.excess_ns / 1e3,
            percent(self.unseen_share)
        );
        if let (Some(steal), Some(tick), Some(most)) =
            (self.steal_ns, self.steal_resolution_ns, self.steal_at_most_share)
        {
            text.push_str(&format!(
                "; the hypervisor's steal on this CPU over the run: {:.0} ms (± {:.0}; counted per tick, not per spike), \
                 at most {} of the excess, so at least {} is not visible and not steal",
                steal as f64 / 1e6,
                tick as f64 / 1e6,
                percent(most),
                percent((self.unseen_share - most).max(0.0))
            ));
        }
        text
    }
}

/// Who ran on a periodic source's beats: of the attributed `spikes` (times since the
/// thread's start, as the period's phase), those above `above_ns` within three jitters
/// (and half an interval, the sampling's own resolution) of a beat, and their culprits
/// ranked as the tail's are, by share of their excess over `p99_ns`.
pub fn beat_culprits(
    spikes: &[SpikeAttribution],
    period_ns: f64,
    phase_ns: f64,
    jitter_ns: f64,
    interval_ns: u64,
    above_ns: u64,
    p99_ns: u64,
) -> (usize, Vec<TailCulprit>) {
    if period_ns <= 0.0 {
        return (0, Vec::new());
    }
    let tolerance = 3.0 * jitter_ns + interval_ns as f64 / 2.0;
    let on_beats: Vec<SpikeAttribution> = spikes
        .iter()
        .filter(|s| s.latency_ns > above_ns)
        .filter(|s| {
            let off = (s.at_ns as f64 - phase_ns).rem_euclid(period_ns);
            off.min(period_ns - off) <= tolerance
        })
        .cloned()
        .collect();
    (on_beats.len(), tail_culprits(&on_beats, p99_ns))
}

/// One line per culprit, the `top` largest: "ksoftirqd/0 (pid 15, nice 0): 41 % of the
/// excess, in 38 of 50 spikes", where `n_spikes` is how many spikes the tail has.
pub fn describe_tail(culprits: &[TailCulprit], n_spikes: usize, top: usize) -> Vec<String> {
    culprits
        .iter()
        .take(top)
        .map(|c| {
            format!(
                "{}: {} of the excess, in {} of {} spikes",
                describe_source(&c.source),
                percent(c.share),
                c.spikes,
                n_spikes
            )
        })
        .collect()
}

/// A source as the findings name it: "ksoftirqd/0 (pid 15, nice 0)", "softirq TIMER",
/// "irq 24 (virtio0-input.0)", "local timer interrupt".
pub fn describe_source(source: &Source) -> String {
    match source {
        Source::Task { comm, pid, prio } => format!("{comm} (pid {pid}, {})", describe_prio(*prio)),
        Source::Irq { irq, name } if name.is_empty() => format!("irq {irq}"),
        Source::Irq { irq, name } => format!("irq {irq} ({name})"),
        Source::Softirq { name } => format!("softirq {name}"),
        Source::LocalTimer => "local timer interrupt".to_string(),
        Source::Runnable => "runnable, waiting for the CPU".to_string(),
        Source::Unseen => "not visible to the kernel (irqs off, hypervisor, SMI)".to_string(),
    }
}

/// A kernel priority as a user sets it: 0..=98 is SCHED_FIFO/RR priority 99 − prio,
/// 100..=139 is nice prio − 120, −1 is SCHED_DEADLINE; anything else is shown raw.
pub fn describe_prio(prio: i32) -> String {
    match prio {
        -1 => "DEADLINE".to_string(),
        0..=98 => format!("FIFO/RR {}", 99 - prio),
        100..=139 => format!("nice {}", prio - 120),
        _ => format!("prio {prio}"),
    }
}

/// A share as a whole percentage; a share too small to round to 1 % is not shown as 0.
fn percent(share: f64) -> String {
    let share = if share.is_nan() { 0.0 } else { share.clamp(0.0, 1.0) };
    let rounded = (share * 100.0).round();
    if share > 0.0 && rounded == 0.0 {
        "< 1 %".to_string()
    } else {
        format!("{rounded:.0} %")
    }
}

/// What a stretch of the window is blamed on, borrowed from the events until the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Blame<'a> {
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
    fn of_task(running: Option<&'a TaskRef>, measured_tid: i32, runnable: bool) -> Blame<'a> {
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
    fn resolved(self, first_prev: Option<&'a TaskRef>, measured_tid: i32) -> Blame<'a> {
        match self {
            Blame::FirstPrev { runnable, woken } => {
                let woken_elsewhere = woken && first_prev.is_none_or(|task| task.pid != measured_tid);
                Blame::of_task(first_prev, measured_tid, runnable || woken_elsewhere)
            }
            blame => blame,
        }
    }

    /// The culprit's source; `None` for time not visible to the kernel.
    fn source(self) -> Option<Source> {
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
enum OnCpu<'a> {
    /// Nothing recorded on the CPU yet.
    Unknown,
    /// Events on the CPU but no switch yet: the first switch's `prev`, from the CPU's
    /// first event on (the time before that is not seen).
    FirstPrev,
    Task(&'a TaskRef),
}

impl<'a> OnCpu<'a> {
    fn of(cpu: CpuState<'a>) -> Self {
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
struct Measured {
    runnable: bool,
    /// Woken while the CPU ran its first switch's `prev`, not known yet: runnable unless
    /// that task is the thread itself.
    woken_before_first_switch: bool,
    woken_at: Option<u64>,
}

impl Measured {
    /// `step` applied, `running` being who had the CPU as it found it.
    fn apply(&mut self, step: &Step, measured_tid: i32, running: OnCpu) {
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
struct SpikeWindow<'a> {
    ideal_ns: u64,
    actual_ns: u64,
    /// Time up to `clock` is accounted for; nothing before the window is.
    clock: u64,
    measured: Measured,
    blamed: BTreeMap<Blame<'a>, u64>,
}

impl<'a> SpikeWindow<'a> {
    fn blame_until(&mut self, at: u64, blame: Blame<'a>) {
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
struct SpikeSplits<'a> {
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
    fn new(cpu: usize, measured_tid: i32, windows: impl IntoIterator<Item = (u64, u64)>) -> Self {
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
    fn concerns(&self, event: &TraceEvent) -> bool {
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
    fn blame(
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
    fn reach(&mut self, at: u64) {
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

    fn into_attributions(self, partial: bool) -> Vec<SpikeAttribution> {
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

/// A source as the tail counts it: a task is its comm and pid, whatever its priority.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Identity {
    Task { comm: String, pid: i32 },
    Other(Source),
}

impl Identity {
    fn of(source: &Source) -> Self {
        match source {
            Source::Task { comm, pid, .. } => Identity::Task { comm: comm.clone(), pid: *pid },
            other => Identity::Other(other.clone()),
        }
    }
}

/// One source's sums: its total weight, a task's by priority, and the spikes it was in.
#[derive(Default)]
struct SourceSums<W> {
    total: W,
    by_prio: BTreeMap<i32, W>,
    spikes: usize,
}

/// Weights (ns, or excess ns) summed per source, a task's priorities merged.
struct SourceTally<W> {
    entries: BTreeMap<Identity, SourceSums<W>>,
}

impl<W> Default for SourceTally<W> {
    fn default() -> Self {
        SourceTally { entries: BTreeMap::new() }
    }
}

impl<W: Copy + Default + PartialOrd + AddAssign> SourceTally<W> {
    fn add(&mut self, source: &Source, weight: W) -> &mut SourceSums<W> {
        let entry = self.entries.entry(Identity::of(source)).or_default();
        entry.total += weight;
        if let Source::Task { prio, .. } = source {
            *entry.by_prio.entry(*prio).or_default() += weight;
        }
        entry
    }

    /// Each source with its sums; a task at the priority it held for most of its weight
    /// (the most urgent of equals).
    fn into_sources(self) -> impl Iterator<Item = (Source, SourceSums<W>)> {
        self.entries.into_iter().map(|(identity, entry)| {
            let source = match identity {
                Identity::Task { comm, pid } => {
                    let mut prio = 0;
                    let mut most: Option<W> = None;
                    for (&candidate, &weight) in &entry.by_prio {
                        if most.is_none_or(|most| weight > most) {
                            prio = candidate;
                            most = Some(weight);
                        }
                    }
                    Source::Task { comm, pid, prio }
                }
                Identity::Other(source) => source,
            };
            (source, entry)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::random::SplitMix64;

    const CPU: usize = 1;
    const TID: i32 = 4242;
    const US: u64 = 1_000;

    fn task(comm: &str, pid: i32, prio: i32) -> TaskRef {
        TaskRef { comm: comm.to_string(), pid, prio }
    }
    fn idle() -> TaskRef {
        task("swapper/1", 0, 120)
    }
    fn measured() -> TaskRef {
        task("schedlab-lat", TID, 1)
    }
    fn spinner() -> TaskRef {
        task("planted-spin", 777, 0)
    }
    fn on(cpu: usize, ts_ns: u64, kind: EventKind) -> TraceEvent {
        TraceEvent { cpu, ts_ns, kind }
    }
    fn at(ts_ns: u64, kind: EventKind) -> TraceEvent {
        on(CPU, ts_ns, kind)
    }
    fn switch(ts_ns: u64, prev: TaskRef, prev_state: &str, next: TaskRef) -> TraceEvent {
        at(ts_ns, EventKind::Switch { prev, prev_state: prev_state.to_string(), next })
    }
    fn irq(entry_ns: u64, exit_ns: u64, number: u32, name: &str) -> [TraceEvent; 2] {
        [
            at(entry_ns, EventKind::IrqEntry { irq: number, name: name.to_string() }),
            at(exit_ns, EventKind::IrqExit { irq: number }),
        ]
    }
    /// The hrtimer of the measured thread fires: local timer interrupt from `entry_ns` to
    /// `exit_ns`, the callback inside it, the thread woken at `woken_ns`.
    fn timer_wake(entry_ns: u64, woken_ns: u64, exit_ns: u64) -> Vec<TraceEvent> {
        vec![
            at(entry_ns, EventKind::LocalTimerEntry),
            at(entry_ns, EventKind::HrtimerExpireEntry { function: "hrtimer_wakeup".to_string() }),
            at(woken_ns, EventKind::Waking { task: measured(), target_cpu: CPU }),
            at(woken_ns, EventKind::Wakeup { task: measured(), target_cpu: CPU }),
            at(exit_ns, EventKind::HrtimerExpireExit),
            at(exit_ns, EventKind::LocalTimerExit),
        ]
    }
    fn sorted(mut events: Vec<TraceEvent>) -> Vec<TraceEvent> {
        events.sort_by_key(|e| e.ts_ns); // stable: same-time events keep their order
        events
    }
    fn ns_of(attribution: &SpikeAttribution, source: &Source) -> u64 {
        attribution.culprits.iter().filter(|c| &c.source == source).map(|c| c.ns).sum()
    }
    fn task_source(task: &TaskRef) -> Source {
        Source::Task { comm: task.comm.clone(), pid: task.pid, prio: task.prio }
    }
    fn assert_partition(attribution: &SpikeAttribution, window_ns: u64) {
        let culprits: u64 = attribution.culprits.iter().map(|c| c.ns).sum();
        assert_eq!(culprits + attribution.unseen_ns, window_ns, "{attribution:?}");
    }

    /// A FIFO 99 spinner took the CPU before the timer fired and kept it until it slept.
    fn spinner_run() -> Vec<TraceEvent> {
        let mut events = vec![
            switch(0, measured(), "S", idle()),
            switch(10 * US, idle(), "R", spinner()),
            switch(1_010 * US, spinner(), "S", measured()),
        ];
        events.extend(timer_wake(20 * US, 20 * US + 500, 21 * US));
        sorted(events)
    }

    #[test]
    fn fifo_spinner_is_the_top_culprit_with_its_exact_time() {
        let (ideal, actual) = (20 * US, 1_012 * US);
        let a = attribute_spike(&spinner_run(), CPU, TID, ideal, actual, false);
        assert_eq!(a.culprits[0], Culprit { source: task_source(&spinner()), ns: 989 * US });
        assert_eq!(ns_of(&a, &Source::LocalTimer), US);
        // The thread's own 2 µs after its switch-in are not the kernel's to explain.
        assert_eq!(a.unseen_ns, 2 * US);
        assert_eq!(a.timer_delay_ns, Some(500));
        assert_eq!(a.culprits.len(), 2);
        assert!(!a.partial);
        assert_partition(&a, actual - ideal);
    }

    #[test]
    fn a_switch_out_of_idle_the_kernel_did_not_trace_is_put_back_at_the_waking_handlers_return() {
        // As on the VM's CPU 1: the spinner's timer wakes it on the idle CPU, but no switch
        // from swapper/1 to it is recorded; its switch out is.
        let mut events = vec![switch(0, measured(), "S", idle())];
        events.push(at(8 * US, EventKind::LocalTimerEntry));
        events.push(at(9 * US, EventKind::Waking { task: spinner(), target_cpu: CPU }));
        events.push(at(10 * US, EventKind::LocalTimerExit));
        events.extend(timer_wake(20 * US, 20 * US + 500, 21 * US));
        events.push(switch(1_010 * US, spinner(), "S", measured()));
        let recording = Recording { events: sorted(events), lost: vec![(CPU, 0)] };
        let filled = with_idle_exits(&recording.events);
        assert_eq!(filled.len(), recording.events.len() + 1);
        assert!(filled.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns));
        let inferred = filled.iter().position(|e| matches!(&e.kind, EventKind::Switch { next, .. } if next.pid == 777));
        assert_eq!(filled[inferred.unwrap()].ts_ns, 10 * US, "at the timer interrupt's return");
        // The measured thread's later wakeup on the busy CPU changes nothing: the spinner
        // is the culprit, as if the switch had been traced.
        let a = &attribute_spikes(&recording.with_idle_exits(), CPU, TID, 0, &[(1_012 * US, 992 * US)])[0];
        assert_eq!(a.culprits[0], Culprit { source: task_source(&spinner()), ns: 989 * US });
        // A switch out of a task never woken here infers nothing.
        let stray = vec![switch(0, measured(), "S", idle()), switch(50 * US, spinner(), "S", idle())];
        assert_eq!(with_idle_exits(&stray), stray);
    }

    #[test]
    fn segments_are_the_tasks_from_switch_to_switch_and_the_handlers_inside_clipped_to_the_window() {
        let mut events = spinner_run();
        events.extend(irq(500 * US, 503 * US, 24, "virtio0-input.0"));
        let events = sorted(events);
        let all = segments(&events, CPU, 0, u64::MAX);
        let tasks: Vec<&Segment> = all.iter().filter(|s| s.lane == Lane::Task).collect();
        assert!(tasks.iter().any(|s| s.name == spinner().comm && s.detail.starts_with("pid 777")), "{all:?}");
        let handler = all.iter().find(|s| s.lane == Lane::Handler && s.name == "irq 24 virtio0-input.0").unwrap();
        assert_eq!((handler.start_ns, handler.end_ns), (500 * US, 503 * US));
        // Clipped: nothing outside, and the handler cut at the window's end.
        let window = segments(&events, CPU, 400 * US, 501 * US);
        assert!(window.iter().all(|s| s.start_ns >= 400 * US && s.end_ns <= 501 * US && s.end_ns > s.start_ns));
        assert!(window.iter().any(|s| s.lane == Lane::Handler && s.end_ns == 501 * US), "{window:?}");
        // No task on another CPU's lane.
        assert!(segments(&events, CPU + 1, 0, u64::MAX).is_empty());
    }

    #[test]
    fn the_spikes_on_a_periods_beats_name_who_ran_on_them() {
        let spike = |at_ns: u64, latency_ns: u64, source: Source| SpikeAttribution {
            at_ns,
            latency_ns,
            culprits: vec![Culprit { source, ns: latency_ns - 10 * US }],
            unseen_ns: 10 * US,
            ..SpikeAttribution::default()
        };
        let beat = task_source(&spinner());
        let stray = Source::Softirq { name: "RCU".to_string() };
        let ms = 1_000 * US;
        let spikes = vec![
            spike(7 * ms + 20 * US, 300 * US, beat.clone()),
            spike(57 * ms - 40 * US, 310 * US, beat.clone()),
            spike(107 * ms, 290 * US, beat.clone()),
            spike(30 * ms, 400 * US, stray.clone()),
            // On a beat but below the level: not one of the period's spikes.
            spike(157 * ms, 60 * US, stray),
        ];
        let (n, culprits) =
            beat_culprits(&spikes, 50.0 * ms as f64, 7.0 * ms as f64, 30.0 * US as f64, ms, 100 * US, 50 * US);
        assert_eq!(n, 3);
        assert_eq!(culprits[0].source, beat);
        assert_eq!(culprits[0].spikes, 3);
        assert!(culprits[0].share > 0.9, "{culprits:?}");
    }

    #[test]
    fn a_wakeup_from_another_cpu_onto_the_idle_one_puts_its_switch_back_at_the_wakeup() {
        let mut events = vec![switch(0, measured(), "S", idle())];
        // Recorded on CPU 0, aimed at the idle CPU: the waking names the old CPU.
        events.push(TraceEvent { cpu: 0, ts_ns: 5 * US, kind: EventKind::Waking { task: spinner(), target_cpu: 0 } });
        events.push(TraceEvent { cpu: 0, ts_ns: 6 * US, kind: EventKind::Wakeup { task: spinner(), target_cpu: CPU } });
        events.push(switch(400 * US, spinner(), "S", idle()));
        let filled = with_idle_exits(&sorted(events));
        let inferred = filled.iter().find(|e| matches!(&e.kind, EventKind::Switch { next, .. } if next.pid == 777));
        assert_eq!(inferred.map(|e| (e.cpu, e.ts_ns)), Some((CPU, 6 * US)));
    }

    #[test]
    fn an_irq_inside_the_spinner_takes_its_handler_time_off_it() {
        let mut events = spinner_run();
        events.extend(irq(500 * US, 503 * US, 24, "virtio0-input.0"));
        let events = sorted(events);
        let a = attribute_spike(&events, CPU, TID, 20 * US, 1_012 * US, false);
        assert_eq!(ns_of(&a, &task_source(&spinner())), 986 * US);
        assert_eq!(ns_of(&a, &Source::Irq { irq: 24, name: "virtio0-input.0".to_string() }), 3 * US);
        assert_partition(&a, 992 * US);
    }

    #[test]
    fn a_softirq_after_the_timer_is_named_by_its_vector_and_idle_after_it_is_runnable() {
        let mut events = vec![switch(0, measured(), "S", idle())];
        events.extend(timer_wake(100 * US, 101 * US, 102 * US));
        events.push(at(102 * US, EventKind::SoftirqEntry { vec: 1, name: "TIMER".to_string() }));
        events.push(at(142 * US, EventKind::SoftirqExit { vec: 1 }));
        events.push(switch(150 * US, idle(), "R", measured()));
        let a = attribute_spike(&sorted(events), CPU, TID, 100 * US, 151 * US, false);
        assert_eq!(a.culprits[0], Culprit { source: Source::Softirq { name: "TIMER".to_string() }, ns: 40 * US });
        assert_eq!(ns_of(&a, &Source::Runnable), 8 * US);
        assert_eq!(ns_of(&a, &Source::LocalTimer), 2 * US);
        assert_eq!(a.unseen_ns, US);
        assert_eq!(a.timer_delay_ns, Some(US));
    }

    #[test]
    fn idle_before_the_timer_fires_is_unseen_and_sets_the_timer_delay() {
        let mut events = vec![switch(0, measured(), "S", idle())];
        events.extend(timer_wake(150 * US, 151 * US, 152 * US));
        events.push(switch(155 * US, idle(), "R", measured()));
        let a = attribute_spike(&sorted(events), CPU, TID, 100 * US, 160 * US, false);
        // 50 µs idle before the timer fired, 5 µs of the thread's own return to user space.
        assert_eq!(a.unseen_ns, 55 * US);
        assert_eq!(a.timer_delay_ns, Some(51 * US));
        assert_eq!(ns_of(&a, &Source::LocalTimer), 2 * US);
        assert_eq!(ns_of(&a, &Source::Runnable), 3 * US);
        assert_partition(&a, 60 * US);
    }

    #[test]
    fn a_wakeup_before_the_thread_last_slept_is_not_the_timers() {
        // The thread overran its period: still on the CPU at the ideal time, woken by
        // something else, then asleep until its timer fired.
        let mut events = vec![
            switch(0, idle(), "R", measured()),
            at(110 * US, EventKind::Waking { task: measured(), target_cpu: CPU }),
            switch(120 * US, measured(), "S", idle()),
        ];
        events.extend(timer_wake(150 * US, 151 * US, 152 * US));
        events.push(switch(155 * US, idle(), "R", measured()));
        let a = attribute_spike(&sorted(events), CPU, TID, 100 * US, 160 * US, false);
        assert_eq!(a.timer_delay_ns, Some(51 * US));
        assert_eq!(ns_of(&a, &Source::Runnable), 3 * US);
        // Its own 20 µs, 30 µs idle before the timer, 5 µs after its switch-in.
        assert_eq!(a.unseen_ns, 55 * US);
    }

    #[test]
    fn no_wakeup_in_the_window_means_no_timer_delay_and_no_runnable_time() {
        let events = vec![switch(0, measured(), "S", idle())];
        let a = attribute_spike(&events, CPU, TID, 100 * US, 200 * US, false);
        assert_eq!(a.timer_delay_ns, None);
        assert!(a.culprits.is_empty());
        assert_eq!(a.unseen_ns, 100 * US);
    }

    #[test]
    fn a_task_running_while_the_thread_is_runnable_is_the_culprit_not_runnable() {
        let hog = task("kworker/1:2", 90, 120);
        let mut events = vec![switch(0, measured(), "S", hog.clone())];
        events.extend(timer_wake(100 * US, 101 * US, 102 * US));
        // The hog keeps the CPU after the wakeup until the scheduler picks the thread.
        events.push(switch(300 * US, hog.clone(), "R+", measured()));
        let a = attribute_spike(&sorted(events), CPU, TID, 100 * US, 301 * US, false);
        assert_eq!(a.culprits[0], Culprit { source: task_source(&hog), ns: 198 * US });
        assert_eq!(ns_of(&a, &Source::Runnable), 0);
        assert_partition(&a, 201 * US);
    }

    #[test]
    fn contexts_open_across_the_window_start_count_from_the_start() {
        let hog = task("stress", 91, 139);
        let mut events = vec![
            switch(0, measured(), "S", hog.clone()),
            at(80 * US, EventKind::SoftirqEntry { vec: 3, name: "NET_RX".to_string() }),
            at(140 * US, EventKind::SoftirqExit { vec: 3 }),
        ];
        events.extend(irq(90 * US, 130 * US, 11, "eth0"));
        events.push(switch(200 * US, hog.clone(), "R", measured()));
        let a = attribute_spike(&sorted(events), CPU, TID, 100 * US, 200 * US, false);
        assert_eq!(ns_of(&a, &Source::Irq { irq: 11, name: "eth0".to_string() }), 30 * US);
        assert_eq!(ns_of(&a, &Source::Softirq { name: "NET_RX".to_string() }), 10 * US);
        assert_eq!(ns_of(&a, &task_source(&hog)), 60 * US);
        assert_eq!(a.unseen_ns, 0);
    }

    #[test]
    fn an_hrtimer_callback_is_local_timer_time_and_an_irq_inside_it_the_handlers() {
        let hog = task("stress", 91, 120);
        let mut events = vec![
            switch(0, measured(), "S", hog.clone()),
            at(100 * US, EventKind::LocalTimerEntry),
            at(101 * US, EventKind::HrtimerExpireEntry { function: "tick_nohz_handler".to_string() }),
        ];
        events.extend(irq(102 * US, 106 * US, 24, "virtio0-input.0"));
        events.push(at(108 * US, EventKind::HrtimerExpireExit));
        events.push(at(110 * US, EventKind::LocalTimerExit));
        // An hrtimer expiring alone (no local timer tracepoints) is the local timer's too.
        events.push(at(150 * US, EventKind::HrtimerExpireEntry { function: "hrtimer_wakeup".to_string() }));
        events.push(at(153 * US, EventKind::HrtimerExpireExit));
        // A softirq-mode hrtimer (HRTIMER softirq) is its softirq's time.
        events.push(at(160 * US, EventKind::SoftirqEntry { vec: 8, name: "HRTIMER".to_string() }));
        events.push(at(161 * US, EventKind::HrtimerExpireEntry { function: "tick_nohz_handler".to_string() }));
        events.push(at(165 * US, EventKind::HrtimerExpireExit));
        events.push(at(166 * US, EventKind::SoftirqExit { vec: 8 }));
        let a = attribute_spike(&sorted(events), CPU, TID, 100 * US, 200 * US, false);
        assert_eq!(ns_of(&a, &Source::LocalTimer), 9 * US);
        assert_eq!(ns_of(&a, &Source::Irq { irq: 24, name: "virtio0-input.0".to_string() }), 4 * US);
        assert_eq!(ns_of(&a, &Source::Softirq { name: "HRTIMER".to_string() }), 6 * US);
        assert_eq!(ns_of(&a, &task_source(&hog)), 81 * US);
    }

    #[test]
    fn microsecond_timestamps_with_window_edges_between_events() {
        let hog = task("stress", 91, 120);
        // Text-format times: several events share a µs; the window starts and ends inside one.
        let mut events = vec![switch(0, measured(), "S", hog.clone())];
        events.extend(timer_wake(100 * US, 100 * US, 100 * US));
        events.extend(irq(100 * US, 103 * US, 24, "virtio0-input.0"));
        events.push(switch(103 * US, hog.clone(), "R+", measured()));
        let a = attribute_spike(&sorted(events), CPU, TID, 100 * US - 400, 103 * US + 600, false);
        assert_eq!(ns_of(&a, &task_source(&hog)), 400);
        assert_eq!(ns_of(&a, &Source::Irq { irq: 24, name: "virtio0-input.0".to_string() }), 3 * US);
        assert_eq!(a.unseen_ns, 600);
        assert_eq!(a.timer_delay_ns, Some(400));
        // A wakeup stamped just before the ideal time (truncated) is no delay, not a wrap.
        let b = attribute_spike(&sorted(events_with_early_wake()), CPU, TID, 100 * US + 700, 110 * US, false);
        assert_eq!(b.timer_delay_ns, Some(0));
        assert_partition(&b, 10 * US - 700);
    }

    fn events_with_early_wake() -> Vec<TraceEvent> {
        let mut events = vec![switch(0, measured(), "S", idle())];
        events.extend(timer_wake(100 * US, 100 * US, 101 * US));
        events.push(switch(105 * US, idle(), "R", measured()));
        events
    }

    #[test]
    fn other_cpus_events_are_ignored_but_a_wakeup_aimed_here_counts() {
        let mut events = spinner_run();
        let elsewhere = task("other-cpu-hog", 55, 0);
        events.push(on(0, 30 * US, EventKind::Switch { prev: idle(), prev_state: "R".into(), next: elsewhere }));
        events.extend(irq(40 * US, 900 * US, 9, "acpi").map(|e| TraceEvent { cpu: 0, ..e }));
        let a = attribute_spike(&sorted(events), CPU, TID, 20 * US, 1_012 * US, false);
        assert_eq!(a.culprits[0], Culprit { source: task_source(&spinner()), ns: 989 * US });

        // The thread woken from CPU 0 to this one: the timer delay and runnable time count.
        let events = sorted(vec![
            switch(0, measured(), "S", idle()),
            on(0, 50 * US, EventKind::Waking { task: measured(), target_cpu: CPU }),
            switch(70 * US, idle(), "R", measured()),
        ]);
        let a = attribute_spike(&events, CPU, TID, 40 * US, 70 * US, false);
        assert_eq!(a.timer_delay_ns, Some(10 * US));
        assert_eq!(ns_of(&a, &Source::Runnable), 20 * US);
    }

    #[test]
    fn without_a_switch_before_the_window_the_first_switchs_prev_ran_from_the_cpus_first_event() {
        let hog = task("stress", 91, 120);
        let events = vec![
            at(50 * US, EventKind::LocalTimerEntry),
            at(51 * US, EventKind::LocalTimerExit),
            switch(80 * US, hog.clone(), "R", measured()),
        ];
        let a = attribute_spike(&events, CPU, TID, 20 * US, 80 * US, false);
        // Before the CPU's first event nothing was recorded: not seen.
        assert_eq!(a.unseen_ns, 30 * US);
        assert_eq!(ns_of(&a, &Source::LocalTimer), US);
        assert_eq!(ns_of(&a, &task_source(&hog)), 29 * US);
    }

    #[test]
    fn an_empty_or_inverted_window_splits_nothing() {
        let a = attribute_spike(&spinner_run(), CPU, TID, 500 * US, 400 * US, false);
        assert!(a.culprits.is_empty());
        assert_eq!(a.unseen_ns, 0);
        let b = attribute_spike(&[], CPU, TID, 100, 200, true);
        assert_eq!(b.unseen_ns, 100);
        assert!(b.partial);
    }

    #[test]
    fn a_task_under_two_priorities_is_one_culprit_at_the_priority_it_held_longest() {
        let boosted = task("holder", 300, 10);
        let plain = task("holder", 300, 120);
        let events = vec![
            switch(0, measured(), "S", plain.clone()),
            switch(40 * US, plain.clone(), "R", boosted.clone()),
            switch(50 * US, boosted, "R", plain.clone()),
        ];
        let a = attribute_spike(&events, CPU, TID, 0, 100 * US, false);
        assert_eq!(a.culprits, vec![Culprit { source: task_source(&plain), ns: 100 * US }]);
    }

    /// A random event on `cpu`: any kind, among a few tasks (the idle task and the measured
    /// thread among them), unbalanced entries and exits included.
    fn random_event(rng: &mut SplitMix64, cpu: usize, ts_ns: u64) -> TraceEvent {
        let tasks = [idle(), measured(), spinner(), task("kworker/1:0", 33, 120), task("holder", 300, 10)];
        let mut pick = |n: u64| (rng.next_u64() % n) as usize;
        let kind = match pick(13) {
            0 | 1 => EventKind::Switch {
                prev: tasks[pick(5)].clone(),
                prev_state: ["R", "R+", "S", "D", ""][pick(5)].to_string(),
                next: tasks[pick(5)].clone(),
            },
            2 => EventKind::Waking { task: tasks[pick(5)].clone(), target_cpu: pick(2) },
            3 => EventKind::Wakeup { task: tasks[pick(5)].clone(), target_cpu: pick(2) },
            4 => EventKind::Migrate { task: tasks[pick(5)].clone(), orig_cpu: 0, dest_cpu: 1 },
            5 => EventKind::IrqEntry { irq: pick(3) as u32, name: format!("irq{}", pick(3)) },
            6 => EventKind::IrqExit { irq: pick(3) as u32 },
            7 => EventKind::SoftirqEntry { vec: pick(3) as u32, name: ["TIMER", "NET_RX", "RCU"][pick(3)].into() },
            8 => EventKind::SoftirqExit { vec: pick(3) as u32 },
            9 => EventKind::LocalTimerEntry,
            10 => EventKind::LocalTimerExit,
            11 => EventKind::HrtimerExpireEntry { function: "hrtimer_wakeup".into() },
            _ => EventKind::HrtimerExpireExit,
        };
        TraceEvent { cpu, ts_ns, kind }
    }

    #[test]
    fn culprits_and_unseen_partition_the_window_on_random_streams() {
        let mut rng = SplitMix64::new(21);
        for _ in 0..200 {
            let mut ts = 0;
            let events: Vec<TraceEvent> = (0..300)
                .map(|_| {
                    // µs steps, often zero: many events share a timestamp.
                    ts += (rng.next_u64() % 4) * US;
                    let cpu = (rng.next_u64() % 2) as usize;
                    random_event(&mut rng, cpu, ts)
                })
                .collect();
            for _ in 0..20 {
                let ideal = rng.next_u64() % (ts + 100 * US);
                let actual = ideal + rng.next_u64() % (200 * US);
                let a = attribute_spike(&events, CPU, TID, ideal, actual, false);
                assert_partition(&a, actual - ideal);
                assert!(a.timer_delay_ns.is_none_or(|d| d <= actual - ideal));
                assert!(a.culprits.iter().all(|c| c.ns > 0 && c.source != Source::Unseen));
                assert!(a.culprits.windows(2).all(|w| w[0].ns >= w[1].ns), "{a:?}");
                let identities: BTreeSet<Identity> = a.culprits.iter().map(|c| Identity::of(&c.source)).collect();
                assert_eq!(identities.len(), a.culprits.len(), "{a:?}");
                assert!(!a
                    .culprits
                    .iter()
                    .any(|c| matches!(&c.source, Source::Task { pid, .. } if *pid == IDLE_PID || *pid == TID)));
            }
        }
    }

    #[test]
    fn attribute_spikes_places_each_window_and_says_when_its_cpu_lost_events() {
        let start = 5 * US;
        let recording = Recording { events: spinner_run(), lost: vec![(0, 3), (CPU, 0)] };
        // The spinner spike: actual at 1_012 µs, ideal at 20 µs.
        let spikes = [(1_012 * US - start, 992 * US), (200 * US - start, 0)];
        let all = attribute_spikes(&recording, CPU, TID, start, &spikes);
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].at_ns, all[0].latency_ns), spikes[0]);
        assert_eq!(all[0].culprits[0], Culprit { source: task_source(&spinner()), ns: 989 * US });
        assert!(!all[0].partial);
        assert_partition(&all[1], 0);
        assert!(attribute_spikes(&recording, 0, TID, start, &spikes).iter().all(|a| a.partial));
        // A CPU that was not recorded cannot be attributed in full either.
        assert!(attribute_spikes(&recording, 7, TID, start, &spikes).iter().all(|a| a.partial));
    }

    fn spike(latency_ns: u64, culprits: &[(Source, u64)], unseen_ns: u64) -> SpikeAttribution {
        SpikeAttribution {
            latency_ns,
            culprits: culprits.iter().map(|(source, ns)| Culprit { source: source.clone(), ns: *ns }).collect(),
            unseen_ns,
            ..SpikeAttribution::default()
        }
    }

    #[test]
    fn tail_excess_is_split_in_proportion_and_the_shares_sum_to_one() {
        let hog = task_source(&task("ksoftirqd/1", 15, 120));
        let nic = Source::Irq { irq: 24, name: "virtio0-input.0".to_string() };
        let spikes = [
            // Excess 100: 75 to the hog, 25 unseen.
            spike(200, &[(hog.clone(), 150)], 50),
            // Excess 200: a third to the hog, two thirds to the irq.
            spike(300, &[(nic.clone(), 200), (hog.clone(), 100)], 0),
            // At the p99: no excess, skipped.
            spike(100, &[(Source::LocalTimer, 100)], 0),
        ];
        let tail = tail_culprits(&spikes, 100);
        let sources: Vec<&Source> = tail.iter().map(|c| &c.source).collect();
        assert_eq!(sources, [&hog, &nic, &Source::Unseen]);
        let expected = [(75.0 + 200.0 / 3.0) / 300.0, (400.0 / 3.0) / 300.0, 25.0 / 300.0];
        for (culprit, share) in tail.iter().zip(expected) {
            assert!((culprit.share - share).abs() < 1e-12, "{culprit:?}");
        }
        assert_eq!(tail.iter().map(|c| c.spikes).collect::<Vec<_>>(), [2, 1, 1]);
        assert!((tail.iter().map(|c| c.share).sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn tail_shares_sum_to_one_on_random_spikes() {
        let mut rng = SplitMix64::new(7);
        let sources = [Source::LocalTimer, Source::Runnable, Source::Softirq { name: "RCU".into() }];
        for _ in 0..100 {
            let spikes: Vec<SpikeAttribution> = (0..30)
                .map(|_| {
                    let parts: Vec<(Source, u64)> =
                        sources.iter().map(|s| (s.clone(), rng.next_u64() % 3 * 1000)).collect();
                    spike(rng.next_u64() % 10_000, &parts, rng.next_u64() % 2 * 500)
                })
                .collect();
            let tail = tail_culprits(&spikes, 5_000);
            if spikes.iter().any(|s| s.latency_ns > 5_000) {
                assert!((tail.iter().map(|c| c.share).sum::<f64>() - 1.0).abs() < 1e-9, "{tail:?}");
                assert!(tail.windows(2).all(|w| w[0].share >= w[1].share));
            } else {
                assert!(tail.is_empty());
            }
        }
    }

    #[test]
    fn tail_counts_a_task_seen_at_two_priorities_as_one_source_in_one_spike() {
        let low = Source::Task { comm: "holder".into(), pid: 300, prio: 120 };
        let boosted = Source::Task { comm: "holder".into(), pid: 300, prio: 10 };
        let spikes = [spike(200, &[(low.clone(), 30), (boosted.clone(), 70)], 0), spike(130, &[(low, 50)], 0)];
        let tail = tail_culprits(&spikes, 100);
        // 70 of the 130 excess at FIFO/RR 89 (prio 10), against 30 + 30 at nice 0.
        assert_eq!(tail, vec![TailCulprit { source: boosted, share: 1.0, spikes: 2 }]);
    }

    #[test]
    fn describe_tail_names_each_source_with_its_share_and_spike_count() {
        let tail = [
            TailCulprit {
                source: Source::Task { comm: "ksoftirqd/0".into(), pid: 15, prio: 120 },
                share: 0.41,
                spikes: 38,
            },
            TailCulprit { source: Source::Unseen, share: 0.12, spikes: 20 },
            TailCulprit { source: Source::Runnable, share: 0.10, spikes: 9 },
            TailCulprit { source: Source::Softirq { name: "TIMER".into() }, share: 0.08, spikes: 7 },
            TailCulprit { source: Source::Irq { irq: 24, name: "virtio0-input.0".into() }, share: 0.05, spikes: 3 },
            TailCulprit { source: Source::LocalTimer, share: 0.004, spikes: 1 },
            TailCulprit { source: Source::Task { comm: "spin".into(), pid: 9, prio: 0 }, share: 0.001, spikes: 1 },
        ];
        let lines = describe_tail(&tail, 50, 6);
        assert_eq!(
            lines,
            [
                "ksoftirqd/0 (pid 15, nice 0): 41 % of the excess, in 38 of 50 spikes",
                "not visible to the kernel (irqs off, hypervisor, SMI): 12 % of the excess, in 20 of 50 spikes",
                "runnable, waiting for the CPU: 10 % of the excess, in 9 of 50 spikes",
                "softirq TIMER: 8 % of the excess, in 7 of 50 spikes",
                "irq 24 (virtio0-input.0): 5 % of the excess, in 3 of 50 spikes",
                "local timer interrupt: < 1 % of the excess, in 1 of 50 spikes",
            ]
        );
        assert!(describe_tail(&tail, 50, 0).is_empty());
    }

    #[test]
    fn kernel_priorities_read_as_policies() {
        assert_eq!(describe_prio(0), "FIFO/RR 99");
        assert_eq!(describe_prio(98), "FIFO/RR 1");
        assert_eq!(describe_prio(100), "nice -20");
        assert_eq!(describe_prio(120), "nice 0");
        assert_eq!(describe_prio(139), "nice 19");
        assert_eq!(describe_prio(-1), "DEADLINE");
        assert_eq!(describe_prio(99), "prio 99");
        assert_eq!(describe_source(&Source::Irq { irq: 3, name: String::new() }), "irq 3");
    }
    #[test]
    fn a_tail_account_names_against_not_visible_and_bounds_steal() {
        let hog = Source::Task { comm: "hog".into(), pid: 7, prio: 120 };
        let spikes = [spike(300, &[(hog.clone(), 150)], 50), spike(200, &[], 100)];
        let tail = tail_culprits(&spikes, 100);
        let account = TailAccount::of(&tail, &spikes, 100, Some((0, 10)));
        // Excess 200 + 100 = 300: the hog 200 * 150/200 = 150, unseen 50 + 100 = 150.
        assert_eq!(account.excess_ns, 300.0);
        assert!((account.named_share - 0.5).abs() < 1e-9 && (account.unseen_share - 0.5).abs() < 1e-9);
        // No steal counted, so at most one tick (10 of 300) of it.
        assert!((account.steal_at_most_share.unwrap() - 10.0 / 300.0).abs() < 1e-9);
        // Steal counted beyond the not-visible time covers no more than it.
        let lots = TailAccount::of(&tail, &spikes, 100, Some((1_000_000, 10)));
        assert_eq!(lots.steal_at_most_share, Some(0.5));
        assert!(lots.describe().contains("at most 50 % of the excess, so at least 0 % is not visible and not steal"));
        // Unknown steal: no bound, and none made up.
        let unknown = TailAccount::of(&tail, &spikes, 100, None);
        assert_eq!(unknown.steal_at_most_share, None);
        assert!(!unknown.describe().contains("steal"));
    }
}
