//! Where a workload's children spent their window, from the scheduler's own tracepoints:
//! on a CPU, asleep (by the state the switch says they left in), or runnable, and who ran
//! in their place: the siblings of the same trial or tasks from outside it. Seed 002's "the
//! scheduler preempts a process once its time slice is used up" becomes a count per child
//! of switches out while still runnable, by preemptor.
//!
//! And a ring's hops: from each member's wakeup to its running, whether the wakeup
//! crossed CPUs, and what the CPU ran just before it (the waker handing over, the idle
//! task, or someone else): what lies behind a knee in the cost per switch.

use crate::analysis::replay::{replay, Handler, PrevState, Sched, Step, TaskState, IDLE_PID};
use crate::analysis::stats::median;
use crate::analysis::trace::{EventKind, TaskRef, TraceEvent};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
/// The most outsiders kept per trial: the largest by time taken.
pub const MAX_OUTSIDERS: usize = 10;

/// Where time went and who preempted: for one child's window (its gate to its finish)
/// as the scheduler saw it, or summed over a trial's children.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffCpuTimes {
    pub on_cpu_ns: u64,
    /// Asleep uninterruptibly ("D": waiting for the disk, mostly).
    pub blocked_ns: u64,
    /// Asleep interruptibly ("S": a pipe, a futex, a sleep).
    pub sleeping_ns: u64,
    /// Runnable but not running ...
    pub runnable_ns: u64,
    /// ... of which a sibling ran on its CPU,
    pub behind_siblings_ns: u64,
    /// ... and of which a task from outside the trial did.
    pub behind_others_ns: u64,
    /// Switched out while still runnable (preempted), by a sibling or by another task.
    pub preempted_by_siblings: u64,
    pub preempted_by_others: u64,
    /// Time before the first traced event: no state is known for it.
    #[serde(default)]
    pub untraced_ns: u64,
}

impl OffCpuTimes {
    pub fn preemptions(&self) -> u64 {
        self.preempted_by_siblings + self.preempted_by_others
    }
}

impl std::ops::AddAssign for OffCpuTimes {
    fn add_assign(&mut self, o: OffCpuTimes) {
        self.on_cpu_ns += o.on_cpu_ns;
        self.blocked_ns += o.blocked_ns;
        self.sleeping_ns += o.sleeping_ns;
        self.runnable_ns += o.runnable_ns;
        self.behind_siblings_ns += o.behind_siblings_ns;
        self.behind_others_ns += o.behind_others_ns;
        self.preempted_by_siblings += o.preempted_by_siblings;
        self.preempted_by_others += o.preempted_by_others;
        self.untraced_ns += o.untraced_ns;
    }
}

/// One child's times, by pid.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildOffCpu {
    pub pid: i32,
    #[serde(flatten)]
    pub times: OffCpuTimes,
}

/// A task from outside the trial that took a child's CPU or ran while one waited for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outsider {
    pub comm: String,
    /// The kernel's priority (0-99 real time, 100-139 normal: 120 = nice 0).
    pub prio: i32,
    /// Switches of a child out while runnable, to this task.
    pub preemptions: u64,
    /// Time it ran on a CPU a child was waiting for (ns).
    pub behind_ns: u64,
}

/// Where a trial's children (a workload's) spent their window, stored with the outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChildrenTrace {
    /// Why nothing was attributed though tracing was asked for ("needs root", ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Events the trace buffers lost over the window: non-zero makes the split partial.
    #[serde(default)]
    pub lost_events: u64,
    #[serde(default)]
    pub children: Vec<ChildOffCpu>,
    /// The outsiders, most time first (at most `MAX_OUTSIDERS`).
    #[serde(default)]
    pub outsiders: Vec<Outsider>,
}

impl ChildrenTrace {
    pub fn unavailable(reason: impl Into<String>) -> ChildrenTrace {
        ChildrenTrace { unavailable: Some(reason.into()), ..ChildrenTrace::default() }
    }

    /// The children's figures summed, and the least, median and most preempted child's
    /// preemptions.
    pub fn totals(&self) -> OffCpuTotals {
        let mut sum = OffCpuTimes::default();
        self.children.iter().for_each(|c| sum += c.times);
        let mut per_child: Vec<u64> = self.children.iter().map(|c| c.times.preemptions()).collect();
        per_child.sort_unstable();
        let as_f64: Vec<f64> = per_child.iter().map(|&n| n as f64).collect();
        OffCpuTotals {
            sum,
            preemptions_min: per_child.first().copied().unwrap_or(0),
            preemptions_p50: if as_f64.is_empty() { 0.0 } else { median(&as_f64) },
            preemptions_max: per_child.last().copied().unwrap_or(0),
        }
    }
}

/// A trial's children together.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OffCpuTotals {
    #[serde(flatten)]
    pub sum: OffCpuTimes,
    /// Preemptions of the least, median and most preempted child.
    pub preemptions_min: u64,
    pub preemptions_p50: f64,
    pub preemptions_max: u64,
}

/// One child as the trial knows it: its pid and its window, CLOCK_MONOTONIC ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildWindow {
    pub pid: i32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// What ran on one CPU: from each switch, the task switched in.
#[derive(Default)]
struct CpuLane<'a> {
    starts: Vec<u64>,
    tasks: Vec<&'a TaskRef>,
}

impl<'a> CpuLane<'a> {
    /// Each task that ran within `[a, b)`, with its overlap (ns). The lane holds the
    /// switches replayed so far, all those before `b` among them.
    fn overlaps(&self, a: u64, b: u64) -> impl Iterator<Item = (&'a TaskRef, u64)> + '_ {
        // The segment running at `a` starts at the last switch at or before it.
        let first = self.starts.partition_point(|&s| s <= a).saturating_sub(1);
        (first..self.starts.len()).map_while(move |i| {
            let start = self.starts[i].max(a);
            let end = self.starts.get(i + 1).copied().unwrap_or(u64::MAX).min(b);
            (self.starts[i] < b).then(|| (self.tasks[i], end.saturating_sub(start)))
        })
    }
}

/// The running account of every child while the replay walks the events: each change of a
/// child's state books its time in the state it left.
struct Books<'a> {
    children: &'a [ChildWindow],
    index: HashMap<i32, usize>,
    lanes: BTreeMap<usize, CpuLane<'a>>,
    out: Vec<ChildOffCpu>,
    /// (comm, prio) -> (preemptions, behind_ns)
    outsiders: BTreeMap<(String, i32), (u64, u64)>,
}

impl<'a> Books<'a> {
    fn new(children: &'a [ChildWindow]) -> Self {
        Books {
            children,
            index: children.iter().enumerate().map(|(i, c)| (c.pid, i)).collect(),
            lanes: BTreeMap::new(),
            out: children.iter().map(|c| ChildOffCpu { pid: c.pid, ..Default::default() }).collect(),
            outsiders: BTreeMap::new(),
        }
    }

    fn is_sibling(&self, pid: i32) -> bool {
        self.index.contains_key(&pid)
    }

    /// Book child `i`'s time in `state` from `since` to `at` (within its window).
    fn book(&mut self, i: usize, state: TaskState, since: u64, at: u64) {
        let w = self.children[i];
        let (a, b) = (since.max(w.start_ns), at.min(w.end_ns));
        if b <= a {
            return;
        }
        let span = b - a;
        let times = &mut self.out[i].times;
        match state {
            TaskState::Unknown => times.untraced_ns += span,
            TaskState::Running { .. } => times.on_cpu_ns += span,
            TaskState::Blocked => times.blocked_ns += span,
            TaskState::Sleeping => times.sleeping_ns += span,
            TaskState::Gone => {}
            TaskState::Runnable { cpu } => {
                times.runnable_ns += span;
                self.book_waiting(i, cpu, a, b);
            }
        }
    }

    /// Who ran on `cpu` while child `i` waited for it from `a` to `b`.
    fn book_waiting(&mut self, i: usize, cpu: usize, a: u64, b: u64) {
        let Some(lane) = self.lanes.get(&cpu) else { return };
        let pid = self.children[i].pid;
        let (mut siblings, mut others) = (0, 0);
        for (task, ns) in lane.overlaps(a, b) {
            if task.pid == IDLE_PID || task.pid == pid {
                continue;
            }
            if self.index.contains_key(&task.pid) {
                siblings += ns;
            } else {
                others += ns;
                self.outsiders.entry((task.comm.clone(), task.prio)).or_insert((0, 0)).1 += ns;
            }
        }
        self.out[i].times.behind_siblings_ns += siblings;
        self.out[i].times.behind_others_ns += others;
    }

    /// A child switched out while still runnable, by whom: a switch to the idle task took it
    /// off for no one (RT or bandwidth throttling), no preemptor to count.
    fn count_preemption(&mut self, i: usize, at: u64, prev: &TaskRef, next: &TaskRef) {
        let w = self.children[i];
        if at < w.start_ns || at >= w.end_ns || next.pid == prev.pid || next.pid == IDLE_PID {
            return;
        }
        if self.is_sibling(next.pid) {
            self.out[i].times.preempted_by_siblings += 1;
        } else {
            self.out[i].times.preempted_by_others += 1;
            self.outsiders.entry((next.comm.clone(), next.prio)).or_insert((0, 0)).0 += 1;
        }
    }
}

impl<'a> Handler<'a> for Books<'a> {
    fn step(&mut self, step: &Step<'a>, _sched: &Sched<'a>) {
        let event = step.event;
        if let EventKind::Switch { prev, next, .. } = &event.kind {
            if let (Some(&i), Some(PrevState::Runnable)) = (self.index.get(&prev.pid), step.prev_state) {
                self.count_preemption(i, event.ts_ns, prev, next);
            }
        }
        for change in step.changes() {
            if let Some(&i) = self.index.get(&change.pid) {
                self.book(i, change.from, change.since, event.ts_ns);
            }
        }
        if let EventKind::Switch { next, .. } = &event.kind {
            let lane = self.lanes.entry(event.cpu).or_default();
            lane.starts.push(event.ts_ns);
            lane.tasks.push(next);
        }
    }

    fn finish(&mut self, sched: &Sched<'a>) {
        for (i, w) in self.children.iter().enumerate() {
            let (state, since) = sched.task(w.pid);
            self.book(i, state, since, w.end_ns);
        }
    }
}

/// Split each child's window by what the trace says it did, and name who ran in its place.
/// `events` in time order, with the switches out of idle the kernel did not trace put back
/// (`Recording::with_idle_exits`).
pub fn off_cpu(events: &[TraceEvent], children: &[ChildWindow]) -> (Vec<ChildOffCpu>, Vec<Outsider>) {
    let mut books = Books::new(children);
    replay(events, &mut [&mut books]);
    let mut named: Vec<Outsider> = books
        .outsiders
        .into_iter()
        .map(|((comm, prio), (preemptions, behind_ns))| Outsider { comm, prio, preemptions, behind_ns })
        .collect();
    named.sort_by(|a, b| b.behind_ns.cmp(&a.behind_ns).then(b.preemptions.cmp(&a.preemptions)));
    named.truncate(MAX_OUTSIDERS);
    (books.out, named)
}

/// The hops of a token passed between tasks (a ring trial's) as the scheduler saw them,
/// stored with the outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HopTrace {
    /// Why nothing was recorded though tracing was asked for ("needs root", ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Events the trace buffers lost over the window: non-zero makes the figures partial.
    #[serde(default)]
    pub lost_events: u64,
    /// Switches to a member within the window: a hop whose receiver slept costs a
    /// wakeup and a switch; one whose receiver was still runnable (preempted when it woke
    /// the next member) only the switch.
    #[serde(default)]
    pub switches: u64,
    /// Members switched out while still runnable, by a member (the one each woke: wakeup
    /// preemption) or by another task.
    #[serde(default)]
    pub preempted_by_members: u64,
    #[serde(default)]
    pub preempted_by_others: u64,
    /// Member wakeups followed by the member running, within the window.
    #[serde(default)]
    pub wakeups: u64,
    /// From a member's wakeup to its switch in (ns): median, p90, p99, max.
    #[serde(default)]
    pub wake_to_run_p50_ns: u64,
    #[serde(default)]
    pub wake_to_run_p90_ns: u64,
    #[serde(default)]
    pub wake_to_run_p99_ns: u64,
    #[serde(default)]
    pub wake_to_run_max_ns: u64,
    /// Wakeups done on another CPU than the one the member then ran on.
    #[serde(default)]
    pub cross_cpu: u64,
    /// What the CPU ran just before each woken member: the member that woke it (a direct
    /// hand-over), the idle task, or another task (a member or an outsider).
    #[serde(default)]
    pub after_waker: u64,
    #[serde(default)]
    pub after_idle: u64,
    #[serde(default)]
    pub after_other: u64,
    /// Members moved between CPUs (`sched_migrate_task`) within the window.
    #[serde(default)]
    pub migrations: u64,
}

impl HopTrace {
    pub fn unavailable(reason: impl Into<String>) -> HopTrace {
        HopTrace { unavailable: Some(reason.into()), ..HopTrace::default() }
    }
}

/// A ring's hops from the trace within `[start_ns, end_ns]`: the switches to members, the
/// members preempted, and each member's wakeup (by whom, on which CPU) paired with its
/// next switch in. `events` with their idle exits put back.
pub fn ring_hops(events: &[TraceEvent], members: &[i32], start_ns: u64, end_ns: u64) -> HopTrace {
    let mut hops = Hops {
        index: members.iter().enumerate().map(|(i, &p)| (p, i)).collect(),
        start_ns,
        end_ns,
        pending: vec![None; members.len()],
        latencies: Vec::new(),
        trace: HopTrace::default(),
    };
    replay(events, &mut [&mut hops]);
    let (mut t, mut latencies) = (hops.trace, hops.latencies);
    latencies.sort_unstable();
    let rank = |q: f64| -> u64 {
        if latencies.is_empty() {
            return 0;
        }
        let at = ((q * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
        latencies[at - 1]
    };
    t.wake_to_run_p50_ns = rank(0.5);
    t.wake_to_run_p90_ns = rank(0.9);
    t.wake_to_run_p99_ns = rank(0.99);
    t.wake_to_run_max_ns = latencies.last().copied().unwrap_or(0);
    t
}

/// A ring's hops counted as the replay walks the events.
struct Hops {
    index: HashMap<i32, usize>,
    start_ns: u64,
    end_ns: u64,
    /// Per member: its pending wakeup (time, the CPU that did it, the waker's pid).
    pending: Vec<Option<(u64, usize, i32)>>,
    latencies: Vec<u64>,
    trace: HopTrace,
}

impl<'a> Handler<'a> for Hops {
    fn step(&mut self, step: &Step<'a>, sched: &Sched<'a>) {
        let e = step.event;
        let t = &mut self.trace;
        let inside = e.ts_ns >= self.start_ns && e.ts_ns <= self.end_ns;
        match &e.kind {
            EventKind::Waking { task, .. } => {
                if let Some(&i) = self.index.get(&task.pid) {
                    // The waker: the task running where the wakeup is done.
                    let waker = sched.cpu(e.cpu).running().map_or(IDLE_PID, |task| task.pid);
                    self.pending[i] = Some((e.ts_ns, e.cpu, waker));
                }
            }
            EventKind::Switch { prev, next, .. } => {
                if inside
                    && self.index.contains_key(&prev.pid)
                    && step.prev_state == Some(PrevState::Runnable)
                    && prev.pid != next.pid
                    && next.pid != IDLE_PID
                {
                    if self.index.contains_key(&next.pid) {
                        t.preempted_by_members += 1;
                    } else {
                        t.preempted_by_others += 1;
                    }
                }
                let Some(&i) = self.index.get(&next.pid) else { return };
                if inside {
                    t.switches += 1;
                }
                let Some((woken_at, waker_cpu, waker)) = self.pending[i].take() else { return };
                if !inside || woken_at < self.start_ns {
                    return;
                }
                t.wakeups += 1;
                self.latencies.push(e.ts_ns.saturating_sub(woken_at));
                if waker_cpu != e.cpu {
                    t.cross_cpu += 1;
                }
                match prev.pid {
                    p if p == waker && p != IDLE_PID => t.after_waker += 1,
                    IDLE_PID => t.after_idle += 1,
                    _ => t.after_other += 1,
                }
            }
            EventKind::Migrate { task, .. } if inside && self.index.contains_key(&task.pid) => t.migrations += 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(comm: &str, pid: i32, prio: i32) -> TaskRef {
        TaskRef { comm: comm.into(), pid, prio }
    }

    fn switch(cpu: usize, ts_ns: u64, prev: TaskRef, state: &str, next: TaskRef) -> TraceEvent {
        TraceEvent { cpu, ts_ns, kind: EventKind::Switch { prev, prev_state: state.into(), next } }
    }

    fn wakeup(cpu: usize, ts_ns: u64, t: TaskRef, target_cpu: usize) -> TraceEvent {
        TraceEvent { cpu, ts_ns, kind: EventKind::Wakeup { task: t, target_cpu } }
    }

    fn window(pid: i32, end_ns: u64) -> ChildWindow {
        ChildWindow { pid, start_ns: 0, end_ns }
    }

    #[test]
    fn two_siblings_sharing_a_cpu_preempt_each_other_and_wait_behind_each_other() {
        let (a, b) = (task("schedlab", 10, 120), task("schedlab", 11, 120));
        let idle = task("swapper/0", 0, 120);
        let events = vec![
            wakeup(0, 0, a.clone(), 0),
            wakeup(0, 0, b.clone(), 0),
            switch(0, 10, idle.clone(), "R", a.clone()),
            switch(0, 3_010, a.clone(), "R", b.clone()),
            switch(0, 6_010, b.clone(), "R+", a.clone()),
            switch(0, 9_010, a.clone(), "X", b.clone()),
            switch(0, 12_010, b.clone(), "X", idle),
        ];
        let (children, outsiders) = off_cpu(&events, &[window(10, 9_010), window(11, 12_010)]);
        assert!(outsiders.is_empty());
        let (ca, cb) = (&children[0], &children[1]);
        assert_eq!((ca.times.preempted_by_siblings, ca.times.preempted_by_others), (1, 0));
        assert_eq!((cb.times.preempted_by_siblings, cb.times.preempted_by_others), (1, 0));
        assert_eq!(ca.times.on_cpu_ns, 6_000);
        assert_eq!(ca.times.runnable_ns, 3_010);
        // From 0 to 10 the idle task still ran: waiting, but behind no one.
        assert_eq!(ca.times.behind_siblings_ns, 3_000);
        assert_eq!(cb.times.on_cpu_ns, 6_000);
        assert_eq!(cb.times.runnable_ns, 6_010);
        assert_eq!(cb.times.behind_siblings_ns, 6_000);
        for c in &children {
            assert_eq!(c.times.untraced_ns, 0);
            assert_eq!(
                c.times.on_cpu_ns + c.times.runnable_ns + c.times.blocked_ns + c.times.sleeping_ns,
                [9_010, 12_010][(c.pid - 10) as usize]
            );
        }
    }

    #[test]
    fn an_outsider_that_preempts_is_named_and_sleep_is_split_by_state() {
        let child = task("schedlab", 20, 120);
        let kworker = task("kworker/1:1", 99, 120);
        let fifo = task("irq/9-acpi", 77, 49);
        let idle = task("swapper/1", 0, 120);
        let events = vec![
            wakeup(1, 0, child.clone(), 1),
            switch(1, 100, idle.clone(), "R", child.clone()),
            switch(1, 1_100, child.clone(), "D", idle.clone()),
            wakeup(1, 2_100, child.clone(), 1),
            switch(1, 2_100, idle.clone(), "R", kworker.clone()),
            switch(1, 2_600, kworker.clone(), "S", child.clone()),
            switch(1, 3_600, child.clone(), "R+", fifo.clone()),
            switch(1, 3_800, fifo.clone(), "S", child.clone()),
            switch(1, 4_800, child.clone(), "S", idle.clone()),
        ];
        let (children, outsiders) = off_cpu(&events, &[window(20, 5_000)]);
        let c = &children[0];
        assert_eq!(c.times.on_cpu_ns, 3_000);
        assert_eq!(c.times.blocked_ns, 1_000);
        assert_eq!(c.times.sleeping_ns, 200);
        assert_eq!(c.times.runnable_ns, 100 + 500 + 200);
        assert_eq!(c.times.behind_others_ns, 700);
        assert_eq!((c.times.preempted_by_siblings, c.times.preempted_by_others), (0, 1));
        assert_eq!(outsiders.len(), 2);
        assert_eq!(outsiders[0], Outsider { comm: "kworker/1:1".into(), prio: 120, preemptions: 0, behind_ns: 500 });
        assert_eq!(outsiders[1], Outsider { comm: "irq/9-acpi".into(), prio: 49, preemptions: 1, behind_ns: 200 });
    }

    #[test]
    fn time_outside_the_window_and_before_the_first_event_is_not_booked() {
        let child = task("schedlab", 30, 120);
        let other = task("bash", 5, 120);
        let events = vec![
            switch(0, 500, other.clone(), "S", child.clone()),
            switch(0, 2_000, child.clone(), "R", other.clone()),
            switch(0, 9_000, other, "S", child.clone()),
        ];
        let (children, _) = off_cpu(&events, &[ChildWindow { pid: 30, start_ns: 100, end_ns: 5_000 }]);
        let c = &children[0];
        assert_eq!(c.times.untraced_ns, 400);
        assert_eq!(c.times.on_cpu_ns, 1_500);
        assert_eq!(c.times.runnable_ns, 3_000);
        assert_eq!(c.times.behind_others_ns, 3_000);
        assert_eq!(c.times.preemptions(), 1);
    }

    #[test]
    fn ring_hops_pair_each_wakeup_with_the_next_switch_in_and_say_what_ran_before() {
        let (a, b, c) = (task("m0", 1, 120), task("m1", 2, 120), task("m2", 3, 120));
        let other = task("kworker/0:1", 9, 120);
        let idle1 = task("swapper/1", 0, 120);
        let waking = |cpu, ts_ns, t: &TaskRef| TraceEvent {
            cpu,
            ts_ns,
            kind: EventKind::Waking { task: t.clone(), target_cpu: cpu },
        };
        let events = vec![
            switch(0, 0, other.clone(), "S", a.clone()),
            switch(1, 0, c.clone(), "S", idle1.clone()),
            // a wakes b on its own CPU and hands over: 1 µs.
            waking(0, 1_000, &b),
            switch(0, 2_000, a.clone(), "S", b.clone()),
            // b wakes c, which runs on the idle CPU 1: a cross-CPU hop of 5 µs.
            waking(0, 3_000, &c),
            switch(1, 8_000, idle1, "R", c.clone()),
            // c wakes a onto CPU 0, where another task runs first: 10 µs.
            switch(0, 8_500, b.clone(), "S", other.clone()),
            waking(1, 9_000, &a),
            switch(0, 19_000, other, "S", a.clone()),
            TraceEvent { cpu: 1, ts_ns: 20_000, kind: EventKind::Migrate { task: c, orig_cpu: 1, dest_cpu: 0 } },
            // After the window: not counted.
            waking(0, 40_000, &b),
            switch(0, 41_000, a, "S", b),
        ];
        let t = ring_hops(&events, &[1, 2, 3], 500, 30_000);
        assert_eq!((t.wakeups, t.switches), (3, 3));
        assert_eq!((t.preempted_by_members, t.preempted_by_others), (0, 0));
        assert_eq!((t.after_waker, t.after_idle, t.after_other), (1, 1, 1));
        assert_eq!(t.cross_cpu, 2);
        assert_eq!(t.migrations, 1);
        assert_eq!((t.wake_to_run_p50_ns, t.wake_to_run_max_ns), (5_000, 10_000));
    }

    #[test]
    fn a_migration_moves_the_wait_to_the_new_cpu() {
        let child = task("schedlab", 40, 120);
        let (on0, on1) = (task("a", 1, 120), task("b", 2, 120));
        let events = vec![
            switch(0, 0, child.clone(), "R", on0.clone()),
            switch(1, 0, task("swapper/1", 0, 120), "R", on1.clone()),
            TraceEvent {
                cpu: 0,
                ts_ns: 1_000,
                kind: EventKind::Migrate { task: child.clone(), orig_cpu: 0, dest_cpu: 1 },
            },
            switch(1, 4_000, on1, "S", child.clone()),
            switch(0, 5_000, on0, "S", task("swapper/0", 0, 120)),
        ];
        let (children, outsiders) = off_cpu(&events, &[window(40, 4_000)]);
        assert_eq!(children[0].times.runnable_ns, 4_000);
        let by_comm: HashMap<&str, u64> = outsiders.iter().map(|o| (o.comm.as_str(), o.behind_ns)).collect();
        assert_eq!(by_comm, HashMap::from([("a", 1_000), ("b", 3_000)]));
    }
}
