//! The taskset family's model: a described real-time task set (rt-app's model: periodic
//! tasks whose activations run, sleep, take named mutexes and yield), run under one policy
//! per trial; its options, spec and outcome. Its tasks and their files are `task.rs` and
//! `rt_app.rs`, the default deadline reservation `reservation.rs`.

use super::reservation::{blocking_ns, reservation};
use super::rt_app::{read_rt_app, RtAppSet};
use super::task::{parse_task_flag, read_task_file, Event, Phase, Phased, TaskDecl};
use crate::error::{Error, Result};
use crate::families::shared::SpecSource;
use crate::model::load::LoadSpec;
use crate::model::options::{
    check_nice, chosen_cpus, de_cpus, de_duration, read_family, read_with_groups, LoadOptions, OnOff, PolicyOptions,
};
use crate::model::parse::*;
use crate::model::{format_ns, DeadlineParams, Policy};
use clap::Args;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// How long each trial's task set runs unless told otherwise.
pub const DEFAULT_TASKSET_DURATION: Duration = Duration::from_secs(5);
/// The highest priority rate-monotonic assignment gives (the shortest period's).
pub const DEFAULT_TOP_PRIO: i32 = 80;
/// The most instances of one task.
pub const MAX_COUNT: u32 = 256;

/// `schedlab taskset` flags and taskset experiment keys.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(remote = "Self", rename_all = "kebab-case", default)]
#[command(mut_arg("policy", |a| a.help("Policies to compare: one or a list of other,fifo,rr,deadline (fifo and rr get rate-monotonic priorities: the shorter the period, the higher) [default: other]")), mut_arg("prio", |a| a.help("The highest static priority rate-monotonic assignment gives, for fifo/rr (1-99); a task's own prio wins [default: 80]")), mut_arg("nice", |a| a.help("Nice value (-20..19) of every task under other")))]
pub struct TasksetOptions {
    #[command(flatten)]
    #[serde(skip)]
    pub scheduling: PolicyOptions,

    /// How long each trial runs the task set [default: 5s]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    #[serde(deserialize_with = "de_duration")]
    pub duration: Option<Duration>,

    #[command(flatten)]
    #[serde(skip)]
    pub background: LoadOptions,

    /// A task, as an inline TOML table: 'name = "ctl", period = "1ms", run = "200us"' (keys: name, count, period,
    /// deadline, run, events, prio, runtime); repeat for more. In a suite: tasks = [{ name = "ctl", … }, …]
    #[arg(long = "task", value_name = "TABLE", value_parser = parse_task_flag)]
    pub tasks: Vec<TaskDecl>,

    /// A TOML file of [[task]] tables (the same keys), read before any --task
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// An rt-app JSON file (tasks with run, sleep, timer, lock, unlock and yield events; times in µs), read
    /// after FILE; what schedlab does not run is refused, naming it
    #[arg(long = "rt-app", value_name = "FILE.json")]
    pub rt_app: Option<PathBuf>,

    /// Pin every task thread to these CPUs (e.g. 1 or 0-1); not under deadline, whose tasks the kernel does not let
    /// be pinned [default: unpinned]
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    #[serde(deserialize_with = "de_cpus")]
    pub cpus: Option<CpuList>,

    /// Record the scheduler's and interrupts' tracepoints over each trial and name what ran on a task's CPU during
    /// each missed activation (root; a private tracefs instance) [default: off]
    #[arg(long, value_enum, value_name = "on|off")]
    pub trace: Option<OnOff>,

    /// Under deadline, let a job that runs past its runtime go on in the bandwidth the other reservations leave
    /// unused (SCHED_FLAG_RECLAIM) instead of being throttled to its next period; see the taskset docs for why a
    /// kernel that does not preempt kernel code needs it
    #[arg(long)]
    pub reclaim: bool,
}

read_with_groups!(TasksetOptions { background, scheduling });

/// One task as a trial runs it: validated, with its policy's priority or reservation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "TaskSpecStored", into = "TaskSpecStored")]
pub struct TaskSpec {
    pub name: String,
    pub count: u32,
    /// Its phases, each phase's deadline set (its period's, or the task's own).
    pub phases: Vec<Phase>,
    /// The static priority under fifo/rr (0 otherwise).
    pub prio: i32,
    /// Its own nice under other, where its file gives one (an rt-app priority written for
    /// SCHED_OTHER); the set's `--nice` otherwise.
    pub nice: Option<i32>,
    /// The SCHED_DEADLINE reservation of each instance, under deadline.
    pub reservation: Option<DeadlineParams>,
    /// The longest critical section another task runs holding a mutex this one takes:
    /// a waiter spins while the owner runs on another CPU, and that spinning is charged
    /// to the waiter's runtime (see [`blocking_ns`]).
    pub blocking_ns: u64,
    /// The CPUs its threads are pinned to, where the task names its own (rt-app's `cpus`).
    pub cpus: Option<Vec<usize>>,
    /// How many times each thread runs its phases through (rt-app's task `loop`).
    pub passes: Option<u64>,
}

/// A task spec as the store keeps it: a task of one phase run for ever as it always was
/// (its period, deadline and events), one of several phases, or of a phase with a loop
/// count, with `phases`.
#[derive(Clone, Serialize, Deserialize)]
struct TaskSpecStored {
    name: String,
    count: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    period_ns: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    deadline_ns: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    events: Vec<Event>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    phases: Vec<Phase>,
    prio: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nice: Option<i32>,
    reservation: Option<DeadlineParams>,
    #[serde(default, skip_serializing_if = "is_zero")]
    blocking_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpus: Option<Vec<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    passes: Option<u64>,
}

impl From<TaskSpecStored> for TaskSpec {
    fn from(s: TaskSpecStored) -> TaskSpec {
        let phases = if s.phases.is_empty() { vec![Phase::only(s.period_ns, s.deadline_ns, s.events)] } else { s.phases };
        TaskSpec {
            name: s.name,
            count: s.count,
            phases,
            prio: s.prio,
            nice: s.nice,
            reservation: s.reservation,
            blocking_ns: s.blocking_ns,
            cpus: s.cpus,
            passes: s.passes,
        }
    }
}

impl From<TaskSpec> for TaskSpecStored {
    fn from(t: TaskSpec) -> TaskSpecStored {
        let (period_ns, deadline_ns, events, phases) = match <[Phase; 1]>::try_from(t.phases) {
            Ok([only]) if only.loops == 1 && only.timer.is_none() => (only.period_ns, only.deadline_ns, only.events, Vec::new()),
            Ok([only]) => (0, 0, Vec::new(), vec![only]),
            Err(phases) => (0, 0, Vec::new(), phases),
        };
        TaskSpecStored {
            name: t.name,
            count: t.count,
            period_ns,
            deadline_ns,
            events,
            phases,
            prio: t.prio,
            nice: t.nice,
            reservation: t.reservation,
            blocking_ns: t.blocking_ns,
            cpus: t.cpus,
            passes: t.passes,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Phased for TaskSpec {
    fn phases(&self) -> &[Phase] {
        &self.phases
    }
}

impl TaskSpec {
    /// The CPU share the task's instances ask for: its most demanding phase's, times its
    /// count.
    pub fn utilisation(&self) -> f64 {
        self.phases.iter().map(Phase::utilisation).fold(0.0, f64::max) * f64::from(self.count)
    }

    /// The share its phases with a timer ask for (those with deadlines), times its count.
    pub fn timed_utilisation(&self) -> f64 {
        self.phases.iter().filter(|p| p.has_timer()).map(Phase::utilisation).fold(0.0, f64::max)
            * f64::from(self.count)
    }

    /// Its period as a table writes it: "1ms", "1ms/4ms" for phases of several, "-"
    /// without a timer.
    pub fn period_text(&self) -> String {
        let mut periods: Vec<u64> = self.phases.iter().map(|p| p.period_ns).collect();
        periods.dedup();
        periods.iter().map(|&p| if p == 0 { "-".to_string() } else { format_ns(p) }).collect::<Vec<_>>().join("/")
    }
}

/// One trial: the task set under one policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TasksetSpec {
    pub tasks: Vec<TaskSpec>,
    pub policy: Policy,
    pub nice: Option<i32>,
    pub duration: Duration,
    #[serde(default, skip_serializing_if = "LoadSpec::is_none")]
    pub load: LoadSpec,
    /// Every task thread pinned to these CPUs (`--cpus`); unpinned when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Vec<usize>>,
    /// Record tracepoints and split each missed activation (`--trace on`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
    /// Under deadline: each reservation with SCHED_FLAG_RECLAIM (`--reclaim`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reclaim: bool,
    /// The trial locks its memory before the set starts (an rt-app file's `lock_pages`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lock_pages: bool,
    /// The rt-app file's `global` keys that were read and not used, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rt_app_unused: Vec<String>,
}

impl TasksetSpec {
    pub fn utilisation(&self) -> f64 {
        self.tasks.iter().map(TaskSpec::utilisation).sum()
    }

    /// What the phases with deadlines ask for: a set of more than its CPUs cannot meet them.
    pub fn timed_utilisation(&self) -> f64 {
        self.tasks.iter().map(TaskSpec::timed_utilisation).sum()
    }

    pub fn threads(&self) -> usize {
        self.tasks.iter().map(|t| t.count as usize).sum()
    }
}

/// Check one task: its name and count, and each phase: a timer's period of at least 10 µs
/// that its run events fit in, a deadline only for a task of one phase with a timer,
/// every time positive, each mutex unlocked by the task that holds it, in order, and none
/// held at an activation's end.
fn check_task(t: &TaskDecl) -> Result<()> {
    let name = &t.name;
    if name.is_empty() {
        return Err(Error::usage("a task needs a name"));
    }
    if t.count == 0 || t.count > MAX_COUNT {
        return Err(Error::usage(format!("task {name}: count {} is not in 1..={MAX_COUNT}", t.count)));
    }
    if t.phases.is_empty() || t.phases.iter().all(|p| p.events.is_empty()) {
        return Err(Error::usage(format!("task {name}: nothing to do: give run = \"200us\" or events = [...]")));
    }
    if let Some(deadline) = t.deadline_ns {
        let Some(period) = t.single_period_ns() else {
            return Err(Error::usage(format!(
                "task {name}: a deadline belongs to a task of one phase with a timer, whose activations it bounds"
            )));
        };
        if deadline == 0 || deadline > period {
            return Err(Error::usage(format!(
                "task {name}: its deadline ({}) must be above 0 and at most its period ({})",
                format_ns(deadline),
                format_ns(period)
            )));
        }
    }
    for (i, phase) in t.phases.iter().enumerate() {
        // "task a" for a task of one phase, "task a, phase 2" in one of several.
        let what = if t.phases.len() > 1 { format!("task {name}, phase {}", i + 1) } else { format!("task {name}") };
        check_phase(&what, phase)?;
    }
    Ok(())
}

fn check_phase(what: &str, phase: &Phase) -> Result<()> {
    if phase.loops == 0 {
        return Err(Error::usage(format!("{what}: a loop of 0 runs nothing: remove the phase")));
    }
    if phase.events.is_empty() && !phase.has_timer() {
        return Err(Error::usage(format!("{what}: no events and no timer: nothing to do")));
    }
    if phase.has_timer() {
        if phase.period_ns < 10_000 {
            return Err(Error::usage(format!("{what}: a period of {} is below 10 µs", format_ns(phase.period_ns))));
        }
        if phase.run_ns() > phase.period_ns {
            return Err(Error::usage(format!(
                "{what}: its run events ({}) are longer than its period ({}): no activation could finish before \
                 the next; shorten the run or lengthen the period",
                format_ns(phase.run_ns()),
                format_ns(phase.period_ns)
            )));
        }
    } else if !phase.events.iter().any(|e| {
        matches!(e, Event::Run(_) | Event::Runtime(_) | Event::Sleep(_) | Event::Suspend(_) | Event::Wait { .. })
            || matches!(e, Event::Barrier(_))
    }) {
        return Err(Error::usage(format!(
            "{what}: without a timer or a run, sleep or wait its loop would spin on its other events: add one"
        )));
    }
    let mut held: Vec<&str> = Vec::new();
    for e in &phase.events {
        match e {
            Event::Run(0) | Event::Sleep(0) | Event::Runtime(0) => {
                return Err(Error::usage(format!("{what}: a run or sleep of 0 does nothing: remove it")))
            }
            Event::Wait { cond, mutex, .. } if !held.contains(&mutex.as_str()) => {
                return Err(Error::usage(format!(
                    "{what}: waits on '{cond}' without holding mutex '{mutex}': add {{ \"lock\": \"{mutex}\" }} \
                     before it, as rt-app needs"
                )))
            }
            Event::Lock { name: m, .. } if held.contains(&m.as_str()) => {
                return Err(Error::usage(format!("{what}: locks mutex '{m}' it already holds (a deadlock)")))
            }
            Event::Lock { name: m, .. } => held.push(m),
            Event::Unlock(m) => match held.iter().rposition(|h| h == m) {
                Some(i) => {
                    held.remove(i);
                }
                None => {
                    return Err(Error::usage(format!(
                        "{what}: unlocks mutex '{m}', which it does not hold there: add {{ lock = \"{m}\" }} \
                         before it"
                    )))
                }
            },
            _ => {}
        }
    }
    if let Some(m) = held.first() {
        return Err(Error::usage(format!(
            "{what}: ends its activation holding mutex '{m}': add {{ unlock = \"{m}\" }} at the end"
        )));
    }
    Ok(())
}

impl TasksetOptions {
    /// The tasks of the file, of the rt-app file, then of the flags (a suite's `tasks`),
    /// and the rt-app file's own, where there is one (its `global`).
    pub fn task_decls(&self) -> Result<(Vec<TaskDecl>, Option<RtAppSet>)> {
        let mut tasks = match &self.file {
            Some(path) => read_task_file(path)?,
            None => Vec::new(),
        };
        let rt_app = self.rt_app.as_deref().map(read_rt_app).transpose()?;
        tasks.extend(rt_app.iter().flat_map(|set| set.tasks.iter().cloned()));
        tasks.extend(self.tasks.iter().cloned());
        Ok((tasks, rt_app))
    }
}

impl SpecSource for TasksetOptions {
    type Spec = TasksetSpec;

    fn to_specs(&self) -> Result<Vec<TasksetSpec>> {
        let (decls, rt_app) = self.task_decls()?;
        if decls.is_empty() {
            return Err(Error::usage(
                "no task to run: give a FILE of [[task]] tables or --task 'name = \"a\", period = \"1ms\", run = \
                 \"200us\"' (tasks = [...] in a suite)",
            ));
        }
        let mut names: Vec<&str> = decls.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::usage(format!("two tasks are named '{}'", w[0])));
        }
        for t in &decls {
            check_task(t)?;
        }
        let policies = self.scheduling.policies();
        if let Some(p) = policies.iter().find(|p| matches!(p, Policy::Batch | Policy::Idle)) {
            return Err(Error::usage(format!(
                "--policy {p} is not offered for a task set: use other, fifo, rr or deadline"
            )));
        }
        check_nice(self.scheduling.nice, &policies)?;
        let top = self.scheduling.prio.unwrap_or(DEFAULT_TOP_PRIO);
        if !(1..=99).contains(&top) {
            return Err(Error::usage(format!("--prio {top} is out of range: use 1 to 99")));
        }
        // An rt-app file's `global.duration` where --duration is not given.
        let duration =
            self.duration.or(rt_app.as_ref().and_then(|set| set.duration)).unwrap_or(DEFAULT_TASKSET_DURATION);
        let longest = decls.iter().map(|t| t.longest_period_ns()).max().unwrap_or(0);
        if (duration.as_nanos() as u64) < longest {
            return Err(Error::usage(format!(
                "--duration {} is shorter than the longest period ({}): give at least one activation of each task",
                duration_arg(duration.as_nanos() as u64),
                duration_arg(longest)
            )));
        }
        let load = self.background.to_spec()?;
        let cpus = chosen_cpus(&self.cpus, "--cpus")?;
        // (A suite's policy axis that mixes deadline with others keeps reclaim in the
        // deadline cells alone.)
        if self.reclaim && !policies.iter().any(|p| p.is_deadline()) {
            return Err(Error::usage(
                "--reclaim is SCHED_DEADLINE's (SCHED_FLAG_RECLAIM): add deadline to the policies or drop reclaim",
            ));
        }
        if cpus.is_some() && policies.iter().any(|p| p.is_deadline()) {
            return Err(Error::usage(
                "--cpus pins the task threads, but SCHED_DEADLINE tasks cannot be pinned (the kernel admits them on \
                 the whole root domain): drop --cpus or the deadline policy",
            ));
        }
        for t in &decls {
            check_task_cpus(t, cpus.as_deref(), &policies)?;
        }
        // Rate-monotonic: the shorter the (shortest) period, the higher the priority; a
        // task without a timer ranks below every periodic one.
        let mut periods: Vec<u64> = decls.iter().filter_map(|t| t.shortest_period_ns()).collect();
        periods.sort_unstable();
        periods.dedup();
        let rate_monotonic = |period: Option<u64>| {
            let rank = period.and_then(|p| periods.iter().position(|&q| q == p)).unwrap_or(periods.len());
            (top - rank as i32).max(1)
        };
        policies
            .iter()
            .map(|&policy| {
                let tasks = decls
                    .iter()
                    .map(|t| {
                        let prio = match policy {
                            Policy::Fifo | Policy::Rr => {
                                t.rt_prio_under(policy).unwrap_or_else(|| rate_monotonic(t.shortest_period_ns()))
                            }
                            _ => 0,
                        };
                        if !(0..=99).contains(&prio) {
                            return Err(Error::usage(format!("task {}: prio {prio} is out of range 1-99", t.name)));
                        }
                        let nice = t.nice_under(policy);
                        if let Some(nice) = nice.filter(|n| !(-20..=19).contains(n)) {
                            return Err(Error::usage(format!(
                                "task {}: its priority {nice} under SCHED_OTHER is a nice value, out of range -20 to 19",
                                t.name
                            )));
                        }
                        let blocking_ns = blocking_ns(t, &decls);
                        // Each phase's deadline: the task's own (one phase) or its period.
                        let phases: Vec<Phase> = t
                            .phases
                            .iter()
                            .map(|p| Phase {
                                deadline_ns: if p.has_timer() { t.deadline_ns.unwrap_or(p.period_ns) } else { 0 },
                                ..p.clone()
                            })
                            .collect();
                        let reservation = match policy.is_deadline() {
                            true => Some(reservation(t, blocking_ns, phases[0].deadline_ns)?),
                            false => None,
                        };
                        Ok(TaskSpec {
                            name: t.name.clone(),
                            count: t.count,
                            phases,
                            prio,
                            nice,
                            reservation,
                            blocking_ns,
                            cpus: t.cpus.clone(),
                            passes: t.passes,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(TasksetSpec {
                    tasks,
                    policy,
                    nice: self.scheduling.nice_for(policy),
                    duration,
                    load: load.clone(),
                    cpus: cpus.clone(),
                    trace: self.trace == Some(OnOff::On),
                    reclaim: self.reclaim && policy.is_deadline(),
                    lock_pages: rt_app.as_ref().is_some_and(|set| set.lock_pages),
                    rt_app_unused: rt_app.as_ref().map(|set| set.unused.clone()).unwrap_or_default(),
                })
            })
            .collect()
    }
}

/// A task's own CPUs: a list of at least one CPU, within the set's `--cpus` where it gives
/// some, and never under SCHED_DEADLINE, whose tasks the kernel admits on the whole root
/// domain only.
fn check_task_cpus(t: &TaskDecl, set: Option<&[usize]>, policies: &[Policy]) -> Result<()> {
    let phases = t.phases.iter().enumerate().filter_map(|(i, p)| Some((format!("task {}, phase {}", t.name, i + 1), p.cpus.as_ref()?)));
    let own = t.cpus.as_ref().map(|c| (format!("task {}", t.name), c));
    for (what, own) in own.into_iter().chain(phases) {
        if own.is_empty() {
            return Err(Error::usage(format!("{what}: cpus is empty: name at least one CPU")));
        }
        if let Some(outside) = set.and_then(|set| own.iter().find(|c| !set.contains(c))) {
            return Err(Error::usage(format!(
                "{what}: cpus names CPU {outside}, outside the set's --cpus: a task runs within its set's CPUs"
            )));
        }
        if policies.iter().any(|p| p.is_deadline()) {
            return Err(Error::usage(format!(
                "{what}: cpus pins its threads, but SCHED_DEADLINE tasks cannot be pinned (the kernel admits them on \
                 the whole root domain): drop the task's cpus or the deadline policy"
            )));
        }
    }
    Ok(())
}

/// One task's activations, summed up.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskStats {
    pub name: String,
    pub instances: u32,
    pub activations: u64,
    /// Of them, those without a timer (no deadline, never a miss); none where all had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed: Option<u64>,
    /// Activations that finished after their deadline.
    pub misses: u64,
    /// Misses whose previous activation met its deadline: the incidents (a late
    /// activation makes the next late too, as lateness carries over).
    #[serde(default)]
    pub miss_bursts: u64,
    /// Timer expiry (the activation's ideal start) to running; none for a task without
    /// a timer.
    pub wake_p50_ns: Option<u64>,
    pub wake_p99_ns: Option<u64>,
    pub wake_max_ns: Option<u64>,
    /// Ideal start to completion.
    pub response_p50_ns: u64,
    pub response_p99_ns: u64,
    pub response_max_ns: u64,
    /// The slack 99 % of activations had at least: deadline − the response's p99 (none
    /// without a timer, or for phases of several deadlines).
    #[serde(default)]
    pub slack_p99_ns: Option<i64>,
    /// Deadline − completion at its least: negative is a miss (none without a timer).
    pub slack_min_ns: Option<i64>,
    /// The CPU time an activation actually got (mean).
    pub run_mean_ns: f64,
}

/// The share of `activations` with a deadline (all but `untimed`) that missed it, in %;
/// none where none had one.
fn miss_pct_of(activations: u64, untimed: Option<u64>, misses: u64) -> Option<f64> {
    let timed = activations - untimed.unwrap_or(0);
    (timed > 0).then(|| 100.0 * misses as f64 / timed as f64)
}

impl TaskStats {
    /// The share of its activations with a deadline that missed it; none without one.
    pub fn miss_pct(&self) -> Option<f64> {
        miss_pct_of(self.activations, self.untimed, self.misses)
    }
}

/// A finished task-set trial.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TasksetOutcome {
    pub tasks: Vec<TaskStats>,
    pub activations: u64,
    /// Of them, those without a timer (see `TaskStats::untimed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed: Option<u64>,
    pub misses: u64,
    /// Misses whose instance met its previous deadline (see `TaskStats::miss_bursts`).
    #[serde(default)]
    pub miss_bursts: u64,
    /// The 99th percentile over every activation of response / relative deadline, in %:
    /// under 100 the deadlines are met at p99; the smaller, the more room.
    /// None where no task has a timer, as for the wakeup and slack figures.
    pub deadline_use_p99_pct: Option<f64>,
    pub wake_p99_ns: Option<u64>,
    pub response_p99_ns: u64,
    pub slack_min_ns: Option<i64>,
    /// The highest miss ratio of any one task, in %.
    pub worst_task_miss_pct: f64,
    /// The background load's, the steal's and the private cgroup's figures.
    #[serde(flatten)]
    pub beside: crate::families::shared::Beside,
    /// With `--trace on`: what ran during each missed activation, or why it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::analysis::misses::MissTrace>,
    /// With `--activations`: the records the writer could not take in time (its channel
    /// full), never silently short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activations_dropped: Option<u64>,
}

impl TasksetOutcome {
    /// The share of the activations with a deadline that missed it.
    pub fn miss_pct(&self) -> Option<f64> {
        miss_pct_of(self.activations, self.untimed, self.misses)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::taskset::reservation::default_runtime_ns;

    fn task(name: &str, events: Vec<Event>) -> TaskDecl {
        TaskDecl {
            name: name.into(),
            count: 1,
            phases: vec![Phase::only(1_000_000, 0, events)],
            deadline_ns: None,
            prio: None,
            prio_policy: None,
            runtime_ns: None,
            cpus: None,
            passes: None,
        }
    }

    #[test]
    fn a_tasks_own_cpus_stay_within_the_set_and_off_deadline() {
        let options = |policies: Vec<Policy>, set: Option<&str>, own: Vec<usize>| TasksetOptions {
            scheduling: PolicyOptions { policy: Some(PolicyList(policies)), ..Default::default() },
            tasks: vec![TaskDecl { cpus: Some(own), ..task("a", vec![Event::Run(100_000)]) }],
            cpus: set.map(|s| parse_cpu_list(s).unwrap()),
            ..Default::default()
        };
        let specs = options(vec![Policy::Other, Policy::Fifo], None, vec![1]).to_specs().unwrap();
        assert!(specs.iter().all(|s| s.tasks[0].cpus == Some(vec![1]) && s.cpus.is_none()));
        let e = |o: TasksetOptions| o.to_specs().unwrap_err().to_string();
        assert!(e(options(vec![Policy::Fifo], Some("0"), vec![1])).contains("outside the set's --cpus"));
        assert!(e(options(vec![Policy::Fifo, Policy::Deadline], None, vec![0])).contains("cannot be pinned"));
        assert!(e(options(vec![Policy::Fifo], None, vec![])).contains("cpus is empty"));
    }

    #[test]
    fn an_rt_app_priority_applies_under_the_policy_it_is_written_for() {
        // rt-app reads a priority by the task's policy: a nice under SCHED_OTHER, a
        // real-time priority under SCHED_FIFO; under another class it does not apply.
        let tasks = vec![
            TaskDecl { prio: Some(-5), prio_policy: Some(Policy::Other), ..task("niced", vec![Event::Run(100_000)]) },
            TaskDecl { prio: Some(50), prio_policy: Some(Policy::Fifo), ..task("rt", vec![Event::Run(100_000)]) },
            TaskDecl { prio: Some(40), ..task("table", vec![Event::Run(100_000)]) },
        ];
        let options = TasksetOptions {
            scheduling: PolicyOptions { policy: Some(PolicyList(vec![Policy::Other, Policy::Fifo])), ..Default::default() },
            tasks,
            ..Default::default()
        };
        let specs = options.to_specs().unwrap();
        let of = |i: usize| specs[i].tasks.iter().map(|t| (t.prio, t.nice)).collect::<Vec<_>>();
        // Under other: the nice, and nothing of the real-time priorities.
        assert_eq!(of(0), [(0, Some(-5)), (0, None), (0, None)]);
        // Under fifo: rate-monotonic for the niced task (all share one period: the top).
        assert_eq!(of(1), [(DEFAULT_TOP_PRIO, None), (50, None), (40, None)]);
        let out_of_range = TasksetOptions {
            tasks: vec![TaskDecl { prio: Some(-30), prio_policy: Some(Policy::Other), ..task("a", vec![Event::Run(1000)]) }],
            ..Default::default()
        };
        assert!(out_of_range.to_specs().unwrap_err().to_string().contains("out of range -20 to 19"));
    }

    fn lock(m: &str) -> Event {
        Event::Lock { name: m.into(), pi: true }
    }

    #[test]
    fn a_task_may_wait_for_the_longest_section_another_runs_on_its_mutexes() {
        let control = task(
            "control",
            vec![Event::Run(150_000), lock("state"), Event::Run(100_000), Event::Unlock("state".into())],
        );
        let logger = task(
            "logger",
            vec![
                lock("state"),
                Event::Run(300_000),
                lock("other"),
                Event::Run(50_000),
                Event::Unlock("other".into()),
                Event::Unlock("state".into()),
                Event::Run(1_200_000),
            ],
        );
        let alone = task("alone", vec![Event::Run(400_000)]);
        // Twice a job on "state": two waits.
        let twice = task(
            "twice",
            vec![
                lock("state"),
                Event::Run(10_000),
                Event::Unlock("state".into()),
                lock("state"),
                Event::Unlock("state".into()),
            ],
        );
        // A plain mutex's waiter sleeps: no spinning to reserve for.
        let plain = |name: &str, held: u64| {
            task(
                name,
                vec![Event::Lock { name: "plain".into(), pi: false }, Event::Run(held), Event::Unlock("plain".into())],
            )
        };
        assert_eq!(blocking_ns(&plain("p", 10_000), &[plain("p", 10_000), plain("q", 500_000)]), 0);
        let all = [control.clone(), logger.clone(), alone.clone()];
        // The logger holds "state" over 350 µs of runs (its nested section included).
        assert_eq!(blocking_ns(&control, &all), 350_000);
        assert_eq!(blocking_ns(&logger, &all), 100_000);
        assert_eq!(blocking_ns(&alone, &all), 0);
        assert_eq!(blocking_ns(&twice, &[twice.clone(), logger.clone()]), 2 * 350_000);
        // A task's own other instances contend with it; one instance alone does not.
        assert_eq!(blocking_ns(&control, std::slice::from_ref(&control)), 0);
        let two = TaskDecl { count: 2, ..control.clone() };
        assert_eq!(blocking_ns(&two, std::slice::from_ref(&two)), 100_000);
        // The default reservation: run, a quarter, the wait and the floor.
        assert_eq!(default_runtime_ns(250_000, 350_000, 1_000_000, 1_000_000), 250_000 + 62_500 + 350_000 + 100_000);
        assert_eq!(default_runtime_ns(250_000, 900_000, 1_000_000, 1_000_000), 1_000_000, "within the deadline");
    }

    #[test]
    fn the_figures_beside_an_outcome_are_stored_where_they_stood() {
        use crate::families::list::Outcome;
        use crate::families::shared::Beside;
        let outcome = TasksetOutcome {
            worst_task_miss_pct: 1.5,
            beside: Beside {
                load: Some(crate::model::LoadOutcome::default()),
                steal: Some(crate::model::Steal::default()),
                cgroup: None,
            },
            activations_dropped: Some(3),
            ..Default::default()
        };
        let text = serde_json::to_string(&Outcome::Taskset(outcome.clone())).unwrap();
        assert!(text.starts_with("{\"family\":\"taskset\",\"tasks\":[],"), "{text}");
        let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("{key}: {text}"));
        let order = ["worst_task_miss_pct", "load", "steal", "activations_dropped"].map(at);
        assert!(order.is_sorted(), "{text}");
        assert!(!text.contains("\"cgroup\"") && text.ends_with("\"activations_dropped\":3}"), "{text}");
        assert_eq!(serde_json::from_str::<Outcome>(&text).unwrap(), Outcome::Taskset(outcome));
    }

    #[test]
    fn rt_app_keys_read_in_order_and_only_objects_as_objects() {
        let dir = std::env::temp_dir().join(format!("schedlab-rt-app-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let read = |text: &str| {
            let file = dir.join("set.json");
            std::fs::write(&file, text).unwrap();
            read_rt_app(&file).map(|set| set.tasks).map_err(|e| e.to_string())
        };
        let task =
            r#""a": {"sleep": 100, "lock": "m", "run1": 50, "unlock": "m", "timer": {"period": 1000}, "run0": 20}"#;
        let with_pi = read(&format!(r#"{{"tasks": {{{task}}}, "global": {{"pi_enabled": true}}}}"#)).unwrap();
        // After the timer first, then what came before it; each key where it was written.
        let lock = Event::Lock { name: "m".into(), pi: true };
        let events =
            vec![Event::Run(20_000), Event::Sleep(100_000), lock, Event::Run(50_000), Event::Unlock("m".into())];
        assert_eq!((with_pi[0].phases[0].period_ns, &with_pi[0].phases[0].events), (1_000_000, &events));
        let odd_global = read(&format!(r#"{{"tasks": {{{task}}}, "global": [true]}}"#)).unwrap();
        assert_eq!(odd_global[0].phases[0].events[2], Event::Lock { name: "m".into(), pi: false });
        let e = read(r#"{"tasks": {"a": {"run": 100, "timer": [1000]}}}"#).unwrap_err();
        assert!(e.ends_with("task a: timer has no period"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reclaim_is_recorded_only_for_the_deadline_cells() {
        let options = TasksetOptions {
            scheduling: PolicyOptions {
                policy: Some(PolicyList(vec![Policy::Fifo, Policy::Deadline])),
                ..Default::default()
            },
            tasks: vec![task("a", vec![Event::Run(100_000)])],
            reclaim: true,
            ..Default::default()
        };
        let specs = options.to_specs().unwrap();
        let reclaim: Vec<(Policy, bool)> = specs.iter().map(|s| (s.policy, s.reclaim)).collect();
        assert_eq!(reclaim, [(Policy::Fifo, false), (Policy::Deadline, true)]);
    }

    #[test]
    fn a_task_of_one_phase_is_stored_as_before_and_one_of_phases_with_them() {
        let stored = r#"{"name":"a","count":1,"period_ns":1000000,"deadline_ns":800000,"events":[{"run":200000}],"prio":0,"reservation":null}"#;
        let one: TaskSpec = serde_json::from_str(stored).unwrap();
        assert_eq!(one.phases, [Phase::only(1_000_000, 800_000, vec![Event::Run(200_000)])]);
        assert_eq!(serde_json::to_string(&one).unwrap(), stored);
        let phased = TaskSpec {
            phases: vec![Phase { loops: 5, ..one.phases[0].clone() }, Phase::only(0, 0, vec![Event::Sleep(1_000)])],
            passes: Some(2),
            ..one
        };
        let text = serde_json::to_string(&phased).unwrap();
        assert!(text.contains(r#""count":1,"phases":[{"loops":5"#), "{text}");
        assert_eq!(serde_json::from_str::<TaskSpec>(&text).unwrap(), phased);
        assert_eq!(phased.period_text(), "1 ms/-");
    }
}
