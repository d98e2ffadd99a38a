//! A CPU's timeline as lanes of segments (what ran, which handler), for the Chrome trace
//! and the spike timelines.

use super::tail::describe_prio;
use crate::analysis::replay::{replay, ContextEdge, CpuState, Handler, OpenContexts, Sched, Step, IDLE_PID};
use crate::analysis::trace::{EventKind, Lane, Segment, TaskRef, TraceEvent};

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
pub(super) struct TimelineLanes {
    pub(super) cpu: usize,
    pub(super) from_ns: u64,
    pub(super) to_ns: u64,
    /// Each open handler's entry time and name; at most one of each kind.
    pub(super) handlers: OpenContexts<(u64, String)>,
    pub(super) segments: Vec<Segment>,
    /// An event past the window came: the lanes are done.
    pub(super) ended: bool,
}

impl TimelineLanes {
    pub(super) fn new(cpu: usize, from_ns: u64, to_ns: u64) -> Self {
        TimelineLanes { cpu, from_ns, to_ns, handlers: OpenContexts::default(), segments: Vec::new(), ended: false }
    }

    pub(super) fn push(&mut self, lane: Lane, name: &str, detail: String, start: u64, end: u64) {
        let (start, end) = (start.max(self.from_ns), end.min(self.to_ns));
        if end > start {
            self.segments.push(Segment { lane, name: name.to_string(), detail, start_ns: start, end_ns: end });
        }
    }

    /// The run of `task` from `start` to `end`, unless it is the idle task's.
    pub(super) fn push_run(&mut self, task: &TaskRef, start: u64, end: u64) {
        if task.pid != IDLE_PID {
            let detail = format!("pid {}, {}", task.pid, describe_prio(task.prio));
            self.push(Lane::Task, &task.comm, detail, start, end);
        }
    }

    /// Still running, or in a handler, when the window (or the recording) ends.
    pub(super) fn end(&mut self, cpu: CpuState) {
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
pub(super) fn handler_name(entry: &EventKind) -> String {
    match entry {
        EventKind::IrqEntry { irq, name } => format!("irq {irq} {name}"),
        EventKind::SoftirqEntry { name, .. } => format!("softirq {name}"),
        EventKind::LocalTimerEntry => "local timer interrupt".to_string(),
        EventKind::HrtimerExpireEntry { function } => format!("hrtimer {function}"),
        _ => String::new(),
    }
}
