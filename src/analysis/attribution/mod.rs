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

mod idle;
mod lanes;
mod tail;
mod tally;
mod window;

#[cfg(test)]
use idle::with_idle_exits;
pub use lanes::cpus_segments;
#[cfg(test)]
use lanes::segments;
pub use tail::{beat_culprits, describe_prio, describe_source, describe_tail, tail_culprits, TailAccount};
#[cfg(test)]
use window::{attribute_spike, attribute_spikes};
pub use window::{attribute_threads, SpikingThread};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::random::SplitMix64;
    use crate::analysis::replay::IDLE_PID;
    use crate::analysis::trace::{
        Culprit, EventKind, Lane, Recording, Segment, Source, SpikeAttribution, TailCulprit, TaskRef, TraceEvent,
    };
    use std::collections::BTreeSet;
    use tally::Identity;

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
