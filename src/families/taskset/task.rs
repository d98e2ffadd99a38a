//! A task as a task set describes it: its phases, each with its timer's period (or none)
//! and the events of each activation, and its priority (rt-app's model), read from a
//! `--task` table or a TOML file of `[[task]]`s.

use crate::error::{Error, Result};
use crate::model::parse::given::{ByKey, Given, Keyed};
use crate::model::parse::*;
use serde::{Deserialize, Deserializer, Serialize};

/// One event of a task's activation, in order: its activation starts at its period's
/// timer (the implicit first event), then these run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// Busy for this much of the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), not a
    /// calibrated loop: time taken away by preemption does not count.
    Run(u64),
    /// Sleep this long (relative).
    Sleep(u64),
    /// Take the named mutex; with `pi`, one with priority inheritance.
    Lock {
        name: String,
        pi: bool,
    },
    Unlock(String),
    Yield,
    /// Busy for this much wall time, preempted or not (rt-app's `runtime`).
    Runtime(u64),
    /// Wait on the named condition variable until it is resumed (rt-app's `suspend`).
    Suspend(String),
    /// Wake every thread suspended on it (`resume`).
    Resume(String),
    /// Give up the held mutex and wait on the condition variable, then take the mutex
    /// again (`wait`); `sync` signals the variable first.
    Wait {
        cond: String,
        mutex: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        signal_first: bool,
    },
    /// Wake one thread waiting on it (`signal`), or all (`broad`).
    Signal(String),
    Broadcast(String),
    /// Wait until every thread that uses the named barrier has reached it (`barrier`).
    Barrier(String),
}

/// The CPU time an activation of these events asks for: their run and runtime events.
pub(super) fn run_ns(events: &[Event]) -> u64 {
    events.iter().map(|e| if let Event::Run(ns) | Event::Runtime(ns) = e { *ns } else { 0 }).sum()
}

/// The time an activation of these events sleeps: their sleep events.
fn sleep_ns(events: &[Event]) -> u64 {
    events.iter().map(|e| if let Event::Sleep(ns) = e { *ns } else { 0 }).sum()
}

/// One phase of a task (rt-app's `phases`; a task written without them is one phase): its
/// events run `loops` times, each pass one activation, then the next phase runs; after the
/// last, the first again, until the set's duration (or the task's `passes`) ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phase {
    pub loops: u32,
    /// Its timer's period: each activation starts at a tick, the first when the phase
    /// starts. 0: no timer, each activation starts when the one before it ends (rt-app's
    /// run/sleep loop), and has no deadline.
    pub period_ns: u64,
    /// Each activation's relative deadline (0 without a timer: none).
    pub deadline_ns: u64,
    pub events: Vec<Event>,
    /// Its timer's name (rt-app's `ref`; none in a `[[task]]`, whose one timer is its
    /// thread's own). A timer keeps its ticks across phases. One whose name starts with
    /// "unique" is each thread's own; any other is one timer for every thread that uses it,
    /// each use moving its next tick on by the user's period, as in rt-app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<String>,
    /// The CPUs its thread runs on while in this phase (rt-app's phase `cpus`); the task's
    /// (or the set's) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
}

impl Phase {
    /// One phase run for ever, as a task without phases is.
    pub fn only(period_ns: u64, deadline_ns: u64, events: Vec<Event>) -> Phase {
        Phase { loops: 1, period_ns, deadline_ns, events, timer: None, cpus: None }
    }

    pub fn run_ns(&self) -> u64 {
        run_ns(&self.events)
    }

    pub fn has_timer(&self) -> bool {
        self.period_ns > 0
    }

    /// Without a timer, and waiting for other threads (`suspend`, `wait`, `barrier`): its
    /// loop runs as they let it.
    pub fn is_paced(&self) -> bool {
        !self.has_timer()
            && self.events.iter().any(|e| matches!(e, Event::Suspend(_) | Event::Wait { .. } | Event::Barrier(_)))
    }

    /// The name of its timer where the threads share it.
    pub fn shared_timer(&self) -> Option<&str> {
        self.timer.as_deref().filter(|name| self.has_timer() && !name.starts_with("unique"))
    }

    /// The CPU share an instance asks for in this phase: run / period, or with no timer
    /// run / (run + sleep), its loop's own duty cycle. A loop without a timer that waits
    /// for other threads (`suspend`, `wait`, `barrier`) is paced by them: its share is not
    /// known beforehand, and counts 0 here.
    pub fn utilisation(&self) -> f64 {
        let span = match self.has_timer() {
            true => self.period_ns,
            false if self.is_paced() => 0,
            false => self.run_ns() + sleep_ns(&self.events),
        };
        if span == 0 {
            0.0
        } else {
            self.run_ns() as f64 / span as f64
        }
    }
}

/// What the task's phases say of its timing, read the same way for a declared task and a
/// validated one.
pub trait Phased {
    fn phases(&self) -> &[Phase];

    /// The shortest period of its timers (rate-monotonic's rank); `None` without a timer.
    fn shortest_period_ns(&self) -> Option<u64> {
        self.phases().iter().filter(|p| p.has_timer()).map(|p| p.period_ns).min()
    }

    /// The longest period of its timers (0 without one).
    fn longest_period_ns(&self) -> u64 {
        self.phases().iter().map(|p| p.period_ns).max().unwrap_or(0)
    }

    /// The one period of a task with one phase and a timer: what a reservation is made
    /// for; `None` for a task of several phases or without a timer.
    fn single_period_ns(&self) -> Option<u64> {
        match self.phases() {
            [only] if only.has_timer() => Some(only.period_ns),
            _ => None,
        }
    }

    /// The CPU time its most demanding activation asks for.
    fn run_ns(&self) -> u64 {
        self.phases().iter().map(Phase::run_ns).max().unwrap_or(0)
    }

    /// Every event of every phase, in order.
    fn all_events(&self) -> impl Iterator<Item = &Event> {
        self.phases().iter().flat_map(|p| &p.events)
    }
}

/// A task as the user describes it (validated into a [`TaskSpec`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskDecl {
    pub name: String,
    pub count: u32,
    /// Its phases, each phase's deadline 0 here: its timer's period, or the task's
    /// `deadline_ns` (which one phase with a timer may give), is set when it is checked.
    pub phases: Vec<Phase>,
    pub deadline_ns: Option<u64>,
    pub prio: Option<i32>,
    /// The policy `prio` is written for (an rt-app file's task `policy`, or its
    /// `default_policy`): under other it is the task's nice, under fifo and rr its
    /// priority, and under a trial policy of another class it does not apply. None: a
    /// `[[task]]`'s prio, the real-time priority.
    pub prio_policy: Option<crate::model::Policy>,
    pub runtime_ns: Option<u64>,
    /// The CPUs its threads are pinned to (rt-app's `cpus`); the set's when absent.
    pub cpus: Option<Vec<usize>>,
    /// How many times each thread runs its phases through before it ends (rt-app's task
    /// `loop`); for the set's whole duration when absent.
    pub passes: Option<u64>,
}

impl TaskDecl {
    /// Its real-time priority under `policy` (fifo or rr), where it gives one for it.
    pub fn rt_prio_under(&self, policy: crate::model::Policy) -> Option<i32> {
        self.prio.filter(|_| self.prio_policy.is_none_or(|p| p.is_realtime() && policy.is_realtime()))
    }

    /// Its own nice under `policy`, where its priority is written for a nice policy.
    pub fn nice_under(&self, policy: crate::model::Policy) -> Option<i32> {
        self.prio.filter(|_| policy.takes_nice() && self.prio_policy.is_some_and(|p| p.takes_nice()))
    }
}

impl Phased for TaskDecl {
    fn phases(&self) -> &[Phase] {
        &self.phases
    }
}

/// The keys of a task table, before validation (`from_table` words each message with the
/// task's name, which a table may give after its times).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskTable {
    name: String,
    count: Option<u32>,
    period: UnitTime,
    deadline: Option<UnitTime>,
    run: Option<UnitTime>,
    events: Option<Vec<Given<Keyed<EventValue>>>>,
    prio: Option<i32>,
    runtime: Option<UnitTime>,
    cpus: Option<Vec<usize>>,
}

/// A time written with its unit ("1ms", "250us"): a bare number could be s, ms or µs, so
/// it is refused when checked.
type UnitTime = Given<String>;

/// The time in ns, or why not; `what` names it ("task a: period").
fn time_ns(what: &str, value: &UnitTime) -> std::result::Result<u64, String> {
    match value {
        Given::Is(text) => parse_duration(text).map(|d| d.as_nanos() as u64).map_err(|e| format!("{what}: {e}")),
        Given::Not(other) => Err(format!("{what}: {other} is not a time: write it with its unit, e.g. \"1ms\"")),
    }
}

/// One value of an event table, read by its key: the time or mutex name of the event's
/// kind, its `pi`, or a key whose value does not matter here.
enum EventValue {
    Text(Given<String>),
    Pi(Given<bool>),
    Other,
}

impl<'de> ByKey<'de> for EventValue {
    fn read<A: serde::de::MapAccess<'de>>(key: &str, map: &mut A) -> std::result::Result<Self, A::Error> {
        Ok(match key {
            "pi" => EventValue::Pi(map.next_value()?),
            "run" | "sleep" | "lock" | "unlock" => EventValue::Text(map.next_value()?),
            _ => {
                map.next_value::<serde::de::IgnoredAny>()?;
                EventValue::Other
            }
        })
    }
}

/// One event table: exactly one of run, sleep, lock (with `pi`), unlock, yield.
fn event(task: &str, value: &Given<Keyed<EventValue>>) -> std::result::Result<Event, String> {
    let Keyed(entries) = match value {
        Given::Is(table) => table,
        Given::Not(other) => {
            return Err(format!("task {task}: an event is a table, e.g. {{ run = \"100us\" }}, not {other}"))
        }
    };
    let kinds: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).filter(|&k| k != "pi").collect();
    let [kind] = kinds.as_slice() else {
        return Err(format!(
            "task {task}: an event has exactly one of run, sleep, lock, unlock, yield (got {})",
            kinds.join(", ")
        ));
    };
    let pi = match entries.iter().find_map(|(_, v)| if let EventValue::Pi(pi) = v { Some(pi) } else { None }) {
        Some(Given::Not(_)) => return Err(format!("task {task}: pi is true or false")),
        Some(Given::Is(pi)) => Some(*pi),
        None => None,
    };
    if pi.is_some() && *kind != "lock" {
        return Err(format!("task {task}: pi belongs to a lock event"));
    }
    let text = entries.iter().find_map(|(_, v)| if let EventValue::Text(text) = v { Some(text) } else { None });
    let name_of = || match text {
        Some(Given::Is(name)) => Ok(name.clone()),
        _ => Err(format!("task {task}: {kind} names a mutex")),
    };
    // The reader keeps the value of a run or sleep; without one it would be a run of 0,
    // which `check_task` refuses.
    let time = |what: &str| text.map_or(Ok(0), |t| time_ns(&format!("task {task}: {what}"), t));
    Ok(match *kind {
        "run" => Event::Run(time("run")?),
        "sleep" => Event::Sleep(time("sleep")?),
        "lock" => Event::Lock { name: name_of()?, pi: pi.unwrap_or(true) },
        "unlock" => Event::Unlock(name_of()?),
        "yield" => Event::Yield,
        other => {
            return Err(format!(
                "task {task}: unknown event '{other}': schedlab runs run, sleep, lock, unlock and yield (barrier and \
                 rt-app's other events are not supported)"
            ))
        }
    })
}

impl TaskDecl {
    fn from_table(t: TaskTable) -> std::result::Result<TaskDecl, String> {
        let name = t.name;
        let mut events = Vec::new();
        if let Some(run) = &t.run {
            events.push(Event::Run(time_ns(&format!("task {name}: run"), run)?));
        }
        for e in t.events.iter().flatten() {
            events.push(event(&name, e)?);
        }
        let period_ns = time_ns(&format!("task {name}: period"), &t.period)?;
        Ok(TaskDecl {
            count: t.count.unwrap_or(1),
            phases: vec![Phase::only(period_ns, 0, events)],
            deadline_ns: t.deadline.as_ref().map(|d| time_ns(&format!("task {name}: deadline"), d)).transpose()?,
            runtime_ns: t.runtime.as_ref().map(|d| time_ns(&format!("task {name}: runtime"), d)).transpose()?,
            prio: t.prio,
            prio_policy: None,
            cpus: t.cpus,
            passes: None,
            name,
        })
    }
}

impl<'de> Deserialize<'de> for TaskDecl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        TaskDecl::from_table(TaskTable::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// Reads TOML text twice: first its shape (`Shape`, whose errors keep TOML's position and
/// excerpt), then its tasks, whose own messages (`task a: period: …`) are given bare.
fn read_toml<'a, Shape: Deserialize<'a>, Tasks: Deserialize<'a>>(
    text: &'a str,
) -> std::result::Result<std::result::Result<Tasks, String>, toml::de::Error> {
    toml::from_str::<Shape>(text)?;
    Ok(toml::from_str::<Tasks>(text).map_err(|e| e.message().to_string()))
}

/// `--task 'name = "a", period = "1ms", run = "200us"'`.
pub(super) fn parse_task_flag(text: &str) -> std::result::Result<TaskDecl, String> {
    #[derive(Deserialize)]
    struct Flag<T> {
        task: T,
    }
    let flag = read_toml::<Flag<serde::de::IgnoredAny>, Flag<TaskDecl>>(&format!("task = {{ {text} }}"));
    flag.map_err(|e| format!("not a TOML table: {e}"))?.map(|f| f.task)
}

/// The tasks of a TOML file of `[[task]]` tables.
pub fn read_task_file(path: &std::path::Path) -> Result<Vec<TaskDecl>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::usage(format!("cannot read the task set {}: {}", path.display(), crate::error::describe_io(&e)))
    })?;
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct TaskFile<T> {
        #[serde(default = "Vec::new")]
        task: Vec<T>,
    }
    let bad = |e: String| Error::usage(format!("{}: {e}", path.display()));
    let file = read_toml::<TaskFile<serde::de::IgnoredAny>, TaskFile<TaskDecl>>(&text).map_err(|e| bad(e.to_string()))?;
    file.map(|f| f.task).map_err(bad)
}
