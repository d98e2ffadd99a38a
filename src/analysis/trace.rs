//! The kernel's own account of what ran on a CPU: stock tracepoint events as schedlab
//! records them (`sys::trace`) and what it concludes from them (`analysis::attribution`).
//! Times are CLOCK_MONOTONIC ns (the trace instance's `mono` clock), the clock the
//! measurement kernels read, so a spike's window and the events line up.

use serde::{Deserialize, Serialize};

/// One tracepoint event on one CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEvent {
    pub cpu: usize,
    /// CLOCK_MONOTONIC, ns.
    pub ts_ns: u64,
    pub kind: EventKind,
}

/// A task as a tracepoint names it. `prio` is the kernel's internal priority (0-99 real
/// time, 120 = nice 0), as `sched_switch` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskRef {
    pub comm: String,
    pub pid: i32,
    pub prio: i32,
}

/// The events schedlab records (`sched:*`, `irq:*`, `irq_vectors:local_timer_*`,
/// `timer:hrtimer_expire_*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// `sched_switch`: `prev` leaves the CPU in `prev_state` ("R", "R+" preempted while
    /// runnable; "S", "D", ... asleep), `next` runs.
    Switch {
        prev: TaskRef,
        prev_state: String,
        next: TaskRef,
    },
    /// `sched_waking`: `task` is being woken, to run on `target_cpu`.
    Waking {
        task: TaskRef,
        target_cpu: usize,
    },
    /// `sched_wakeup`: `task` is runnable on `target_cpu`.
    Wakeup {
        task: TaskRef,
        target_cpu: usize,
    },
    /// `sched_migrate_task`.
    Migrate {
        task: TaskRef,
        orig_cpu: usize,
        dest_cpu: usize,
    },
    /// `irq_handler_entry` / `irq_handler_exit`.
    IrqEntry {
        irq: u32,
        name: String,
    },
    IrqExit {
        irq: u32,
    },
    /// `softirq_entry` / `softirq_exit`: `name` is the vector's ("TIMER", "NET_RX", "RCU").
    SoftirqEntry {
        vec: u32,
        name: String,
    },
    SoftirqExit {
        vec: u32,
    },
    /// `local_timer_entry` / `local_timer_exit` (x86's timer interrupt vector).
    LocalTimerEntry,
    LocalTimerExit,
    /// `hrtimer_expire_entry` / `hrtimer_expire_exit`: `function` is the callback's symbol.
    HrtimerExpireEntry {
        function: String,
    },
    HrtimerExpireExit,
}

/// What a recording of one trial holds, per CPU recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recording {
    /// Every event, in time order.
    pub events: Vec<TraceEvent>,
    /// The CPUs recorded, each with the events its buffer lost (the kernel's `overrun`
    /// count): an attribution on a CPU that lost events is partial and says so.
    pub lost: Vec<(usize, u64)>,
}

/// Where one late wakeup's time went: the window from its ideal wake time to its actual
/// one, split by what the kernel saw on the CPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpikeAttribution {
    /// The spike's latency (ns) and its actual wake time, ns since the thread started.
    pub at_ns: u64,
    pub latency_ns: u64,
    /// From the ideal wake time to the timer interrupt that woke the thread (ns): the
    /// timer's own delay, including whatever ran with interrupts off before it.
    pub timer_delay_ns: Option<u64>,
    /// Each culprit's time within the window (ns), largest first.
    pub culprits: Vec<Culprit>,
    /// The window's time no event accounts for (irqs-off sections, the hypervisor, SMIs,
    /// the wakeup path itself): not visible to the kernel's tracepoints.
    pub unseen_ns: u64,
    /// Events were lost on this CPU during the recording: the split may be incomplete.
    pub partial: bool,
}

/// Something that took a CPU's time.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Source {
    /// Another task ran: its command name, pid and kernel priority.
    Task { comm: String, pid: i32, prio: i32 },
    /// A hardware interrupt's handler, by number and name.
    Irq { irq: u32, name: String },
    /// A softirq, by vector name ("TIMER", "NET_RX").
    Softirq { name: String },
    /// The local timer interrupt.
    LocalTimer,
    /// The measured thread was runnable but not running, with no other event to blame
    /// (e.g. it was woken and waited for the scheduler).
    Runnable,
    /// Time no event accounts for: irqs-off sections, the hypervisor, SMIs, idle exit,
    /// the wakeup path itself. Named as what the kernel cannot see, never guessed at.
    Unseen,
}

/// One source's share of a window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Culprit {
    pub source: Source,
    pub ns: u64,
}

/// One source's share of a run's tail: the excess latency above the p99, summed over the
/// spikes, that this source's time explains.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TailCulprit {
    pub source: Source,
    /// Its share of the tail's excess, 0..1.
    pub share: f64,
    /// In how many of the spikes it took time.
    pub spikes: usize,
}

/// What a latency trial's tracing found, stored with its outcome.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    /// Why nothing was attributed though tracing was asked for ("needs root", ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// One per measuring thread on a pinned CPU.
    #[serde(default)]
    pub threads: Vec<ThreadAttribution>,
}

/// One measuring thread's spikes explained.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadAttribution {
    pub cpu: usize,
    /// Events the CPU's trace buffer lost over the window: non-zero makes the split of
    /// the spikes it touched partial.
    pub lost_events: u64,
    /// The p99 the tail's excess is measured above (ns).
    pub above_ns: u64,
    /// The kept samples above the p99, largest first (at most `MAX_ATTRIBUTED`), each
    /// split by what the kernel saw.
    pub spikes: Vec<SpikeAttribution>,
    /// The sources of the tail's excess above the p99, largest share first.
    pub tail: Vec<TailCulprit>,
    /// What ran on the CPU around its worst spikes (at most `MAX_TIMELINES`), for the
    /// report's timeline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timelines: Vec<SpikeTimeline>,
}

/// One CPU's events around one late wakeup, as lanes of segments.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SpikeTimeline {
    /// The spike's ideal and actual wake times, and the window shown (CLOCK_MONOTONIC ns).
    pub ideal_ns: u64,
    pub actual_ns: u64,
    pub from_ns: u64,
    pub to_ns: u64,
    pub segments: Vec<Segment>,
}

/// What ran on a CPU from `start_ns` to `end_ns` (CLOCK_MONOTONIC).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Segment {
    pub lane: Lane,
    /// A task's command name, or a handler's ("irq 24 virtio0-input.0", "softirq TIMER").
    pub name: String,
    /// A task's pid and policy/priority ("pid 75, nice -10"); empty for handlers.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A timeline's lanes: the tasks that ran, from switch to switch, and the interrupt,
/// softirq and timer handlers nested in them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    Task,
    Handler,
}

/// The most spikes per thread whose surroundings are kept for the timeline.
pub const MAX_TIMELINES: usize = 3;

/// The most spikes of one thread split and stored: the tail's largest.
pub const MAX_ATTRIBUTED: usize = 100;
