//! The SCHED_DEADLINE reservation a task gets by default: its run events, a quarter more,
//! the longest it may spin on a priority-inheritance mutex, and a floor for what the kernel
//! charges it besides.

use super::task::{Event, Phased, TaskDecl};
use crate::error::{Error, Result};
use crate::model::{format_ns, DeadlineParams};

/// What the default reservation adds beside a quarter of the run events: the kernel
/// charges a deadline task's runtime with everything that runs while it is current —
/// its timer and system calls, and, on a kernel without IRQ time accounting (this VM's),
/// the interrupts and softirqs that land on it (one BLOCK or RCU softirq burst here is up
/// to ~100 µs) — so a quarter alone, tens of µs for a short run, is used up by one burst
/// and the job is throttled to its next period. At most a tenth of the period, so a short
/// period's set stays admissible (a 250 µs period gets 25 µs).
pub const RESERVATION_FLOOR_NS: u64 = 100_000;

/// What the default reservation adds beside a quarter of the run: `RESERVATION_FLOOR_NS`,
/// at most a tenth of the period.
pub fn reservation_floor_ns(period_ns: u64) -> u64 {
    RESERVATION_FLOOR_NS.min(period_ns / 10)
}

/// The default `runtime`: the run events, a quarter more, the longest time it may spin on
/// a mutex (`blocking_ns`) and the floor, within the deadline.
pub fn default_runtime_ns(run_ns: u64, blocking_ns: u64, period_ns: u64, deadline_ns: u64) -> u64 {
    (run_ns + run_ns / 4 + blocking_ns + reservation_floor_ns(period_ns)).min(deadline_ns)
}

/// The run events between each priority-inheritance lock and its unlock: (mutex, run
/// held). A plain mutex's waiter sleeps, so only these sections are spun on.
fn critical_sections(events: &[Event]) -> Vec<(&str, u64)> {
    let mut open: Vec<(&str, bool, u64)> = Vec::new();
    let mut done = Vec::new();
    for e in events {
        match e {
            Event::Lock { name, pi } => open.push((name, *pi, 0)),
            Event::Unlock(name) => {
                if let Some(i) = open.iter().rposition(|(m, _, _)| m == name) {
                    let (m, pi, held) = open.remove(i);
                    if pi {
                        done.push((m, held));
                    }
                }
            }
            Event::Run(ns) => open.iter_mut().for_each(|(_, _, held)| *held += ns),
            _ => {}
        }
    }
    done
}

/// How long a job of `t` may spin waiting for mutexes: for each priority-inheritance
/// lock it takes, the longest critical section another task (or another instance of `t`)
/// runs on that mutex. A waiter on such a mutex spins in the kernel while the owner runs
/// on another CPU, and under SCHED_DEADLINE that spinning is charged to the waiter's
/// runtime (a control job here spun 1.3-14 ms for a 300 µs section), so the default
/// reservation covers it. (An owner itself waiting on a nested mutex is not followed.)
pub fn blocking_ns(t: &TaskDecl, all: &[TaskDecl]) -> u64 {
    let others: Vec<(&str, u64)> =
        all.iter().filter(|u| u.name != t.name || u.count > 1).flat_map(|u| phase_sections(u)).collect();
    phase_sections(t)
        .into_iter()
        .map(|(taken, _)| others.iter().filter(|(m, _)| *m == taken).map(|(_, held)| *held).max().unwrap_or(0))
        .sum()
}

/// The critical sections of every phase of a task (each activation unlocks what it locks).
fn phase_sections(t: &TaskDecl) -> Vec<(&str, u64)> {
    t.phases.iter().flat_map(|p| critical_sections(&p.events)).collect()
}

/// A task's SCHED_DEADLINE reservation: its `runtime`, or `default_runtime_ns`, for its
/// one period; a task of several phases or without a timer has none to reserve for.
pub(super) fn reservation(t: &TaskDecl, blocking_ns: u64, deadline_ns: u64) -> Result<DeadlineParams> {
    let period_ns = t.single_period_ns().ok_or_else(|| {
        let why = if t.shortest_period_ns().is_none() { "it has no timer" } else { "its phases have several" };
        Error::usage(format!(
            "task {}: SCHED_DEADLINE reserves a runtime per period, and {why}: run it under other, fifo or rr",
            t.name
        ))
    })?;
    let runtime_ns =
        t.runtime_ns.unwrap_or_else(|| default_runtime_ns(t.run_ns(), blocking_ns, period_ns, deadline_ns));
    if runtime_ns < DeadlineParams::MIN_NS || runtime_ns > deadline_ns {
        return Err(Error::usage(format!(
            "task {}: a runtime of {} must be at least 1024 ns and at most its deadline ({})",
            t.name,
            format_ns(runtime_ns),
            format_ns(deadline_ns)
        )));
    }
    Ok(DeadlineParams { runtime_ns, deadline_ns, period_ns })
}
