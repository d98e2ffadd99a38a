//! The idle exits the text trace leaves out, put back: what every analysis of a recording
//! reads.

use std::collections::BTreeMap;

use crate::analysis::replay::{replay, ContextEdge, ContextKind, Handler, Sched, Step, IDLE_PID};
use crate::analysis::trace::{EventKind, Recording, TaskRef, TraceEvent};

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
pub(super) struct IdleCpu {
    /// How deep in handlers it is.
    depth: usize,
    /// The task woken onto this idle CPU, and the time its handler returned (or it was
    /// woken, outside handlers).
    woken: Option<(i32, i32, u64)>,
    /// The handler returned: the woken task runs, later wakeups do not replace it.
    settled: bool,
}

pub(super) struct IdleExits<'a> {
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
    pub(super) fn into_events(self) -> Vec<TraceEvent> {
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
