//! The checks that need the machine, run before anything is forked: can this policy,
//! priority, nice value or CPU be had, do the limits allow this many tasks, is there room
//! for the files. Each turns a spec into what its kernel needs (resolved CPUs, a work
//! directory) or refuses it with the fix, so nothing is measured that was not asked for.

use crate::error::{Error, Result};
use crate::exec::family::FamilyTrial;
use crate::families::on_each;
use crate::families::TrialSpec;
use crate::model::{DeadlineParams, LoadSpec, Policy};
use crate::sys::load::LoadPlan;
use crate::sys::sched;

/// Say once, before anything runs, which of the scheduler's per-task figures this kernel
/// lacks (they are stored as unknown); nothing is said when the reading is switched off.
pub fn warn_if_no_schedstat(reading: bool) {
    if reading {
        crate::sys::schedstat::check_available();
    }
}

/// Can the trial's tasks have their policy: a static policy and priority are tried in a
/// probe process; a deadline reservation's period is checked against the kernel's
/// limits and one reservation is tried (`tasks`: how many the trial will ask for, named
/// when the kernel's admission control refuses).
pub fn scheduling(policy: Policy, prio: i32, deadline: Option<&DeadlineParams>, tasks: usize) -> Result<()> {
    scheduling_with(policy, prio, deadline, tasks, false)
}

/// [`scheduling`], a deadline reservation tried with SCHED_FLAG_RECLAIM where `reclaim`
/// (taskset's `--reclaim`), so a kernel without the flag is named before anything runs.
pub fn scheduling_with(
    policy: Policy,
    prio: i32,
    deadline: Option<&DeadlineParams>,
    tasks: usize,
    reclaim: bool,
) -> Result<()> {
    if !policy.is_deadline() {
        return sched::probe_policy(policy, prio);
    }
    let params = deadline.ok_or_else(|| Error::usage("--policy deadline needs --runtime and --period"))?;
    if let Some(why) = sched::DeadlinePeriodLimits::read().refusal(params.period_ns) {
        return Err(Error::env(why));
    }
    sched::probe_deadline(params, tasks, reclaim)
}

/// A background load: its CPUs, nice value and directory (`None` without a load).
pub fn load(spec: &LoadSpec) -> Result<Option<LoadPlan>> {
    crate::sys::load::plan(spec)
}

/// Every check one trial's spec needs, for a suite's plan before its first trial.
pub fn trial(spec: &TrialSpec) -> Result<()> {
    load(spec.load())?;
    on_each!(TrialSpec, spec, s => s.preflight())
}

/// The CPUs a trial measures on, where its spec pins them (for the orchestrator to stay
/// off them while it runs). Empty when the trial may run anywhere.
pub fn measured_cpus(spec: &TrialSpec) -> Vec<usize> {
    on_each!(TrialSpec, spec, s => s.measured_cpus())
}

/// Is this a real-time trial? The orchestrator's watchdog needs to know.
pub fn is_realtime(spec: &TrialSpec) -> bool {
    matches!(spec.policy(), Policy::Fifo | Policy::Rr)
}
