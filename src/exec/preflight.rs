//! The checks that need the machine, run before anything is forked: can this policy,
//! priority, nice value or CPU be had, do the limits allow this many tasks, is there room
//! for the files. Each turns a spec into what its kernel needs (resolved CPUs, a work
//! directory) or refuses it with the fix, so nothing is measured that was not asked for.

use crate::families::workload::kernel::{bytes_needed, prepare_input, sweep_orphaned_work_dirs, WorkDir};
use crate::families::{latency::kernel as latency_bench, ring::kernel as ring_bench};
use crate::error::{Error, Result};
use crate::model::{
    CommandSpec, DeadlineParams, LatencySpec, LoadSpec, Placement, Policy, TrialSpec, WorkloadKind, WorkloadSpec,
};
use crate::sys::load::LoadPlan;
use crate::sys::{fs, limits, sched};
use std::path::Path;

/// A ring: its CPUs (to place members on), policy and limits.
pub fn ring(spec: &crate::model::RingSpec) -> Result<Vec<usize>> {
    let cpus = ring_limits(spec)?;
    warn_if_no_schedstat(spec.schedstat);
    Ok(cpus)
}

/// A ring's checks that need the OS but fork nothing: CPUs, memory, policy, task and file limits.
fn ring_limits(spec: &crate::model::RingSpec) -> Result<Vec<usize>> {
    let cpus = sched::resolve_cpus(spec.cpus.as_deref())?;
    // Each member's working set, plus what a member costs anyway (~150 KiB measured).
    let needed_kb = spec.procs as u64 * (spec.work_kb as u64 + 150);
    limits::check_memory(needed_kb, &format!("a ring of {} with {} KiB each", spec.procs, spec.work_kb))?;
    scheduling(spec.policy, spec.prio, spec.deadline.as_ref(), spec.procs)?;
    let what = format!("a {} ring of {}", spec.mode.as_str(), spec.procs);
    match spec.mode {
        // Members, plus the overhead probe.
        crate::model::RingMode::Process => limits::check_task_budget(spec.procs as u64 + 1, &what)?,
        crate::model::RingMode::Thread => {
            limits::check_task_budget(spec.procs as u64 + 1, &what)?;
            limits::check_open_files_possible(ring_bench::open_files_for_threads(spec), &what)?;
        }
    }
    Ok(cpus)
}

/// Say once, before anything runs, which of the scheduler's per-task figures this kernel
/// lacks (they are stored as unknown); nothing is said when the reading is switched off.
fn warn_if_no_schedstat(reading: bool) {
    if reading {
        crate::sys::schedstat::check_available();
    }
}

/// Workload cells: policies, nice values, the task budget, and RT saturation.
pub fn workload(specs: &[WorkloadSpec]) -> Result<()> {
    let mut probed = Vec::new();
    for spec in specs {
        if !probed.contains(&(spec.policy, spec.prio)) {
            scheduling(spec.policy, spec.prio, spec.deadline.as_ref(), spec.procs)?;
            probed.push((spec.policy, spec.prio));
        }
        if let Some(nice) = spec.nice {
            sched::probe_nice(nice)?;
        }
    }
    warn_if_no_schedstat(specs.iter().any(|s| s.schedstat));
    let largest = specs.iter().map(|s| s.procs).max().unwrap_or(0);
    limits::check_task_budget(largest as u64, &format!("a trial of {largest} processes"))?;
    let cpus = sched::allowed_cpus().map_err(|e| Error::os("reading the CPU affinity mask", e))?.len();
    let throttling = sched::RtThrottling::read();
    let saturating = specs.iter().find(|s| {
        s.params.kind == WorkloadKind::Cpu && s.policy.is_realtime() && s.procs >= cpus && !s.allow_rt_saturation
    });
    if let Some(spec) = saturating {
        if throttling.is_none_or(|t| !t.is_on()) {
            return Err(Error::env(format!(
                "refusing {} CPU-bound children under {} on {cpus} CPUs while RT throttling is off \
                 (/proc/sys/kernel/sched_rt_runtime_us = {}): they could starve the machine. Turn throttling \
                 on (`sysctl kernel.sched_rt_runtime_us=950000`) or pass --allow-rt-saturation",
                spec.procs,
                spec.policy.kernel_name(),
                throttling.map_or("unreadable".to_string(), |t| t.runtime_us.to_string())
            )));
        }
    }
    Ok(())
}

/// The directory io and mixed trials write in (none for cpu): made, checked for space
/// for the largest trial, warned about if memory-backed, and given its input file.
/// Directories that an earlier schedlab left behind (killed outright) are swept first.
pub fn work_dir(specs: &[WorkloadSpec]) -> Result<Option<WorkDir>> {
    let Some(first) = specs.first() else { return Ok(None) };
    if first.params.kind == WorkloadKind::Cpu {
        return Ok(None);
    }
    let parent = first.dir.clone().unwrap_or_else(std::env::temp_dir);
    let removed = sweep_orphaned_work_dirs(&parent);
    if removed > 0 {
        eprintln!(
            "schedlab: warning: removed {removed} work director{} left in {} by a schedlab that was killed",
            if removed == 1 { "y" } else { "ies" },
            parent.display()
        );
    }
    let dir = WorkDir::create(Some(&parent))?;
    let largest = specs.iter().map(|s| s.procs).max().unwrap_or(1);
    check_space(dir.path(), bytes_needed(&first.params, largest))?;
    warn_if_memory_backed(dir.path());
    prepare_input(&dir, &first.params)?;
    Ok(Some(dir))
}

/// Refuse a run that cannot fit its files, instead of failing every trial with ENOSPC.
fn check_space(dir: &Path, needed: u64) -> Result<()> {
    let Some(free) = fs::free_bytes(dir) else { return Ok(()) };
    if needed > free {
        return Err(Error::env(format!(
            "{} has {} KiB free but a trial writes {} KiB there; free some space, choose another --dir, \
             or use fewer --procs or a smaller --transfer-size",
            dir.display(),
            free / 1024,
            needed.div_ceil(1024)
        )));
    }
    Ok(())
}

/// O_SYNC on tmpfs reaches no disk, so "I/O-bound" work would not be: say so.
fn warn_if_memory_backed(dir: &Path) {
    if fs::is_tmpfs(dir) {
        eprintln!(
            "schedlab: warning: {} is on tmpfs: O_SYNC writes reach no disk, so the io and mixed \
             workloads are not I/O-bound there; use --dir on a disk-backed filesystem",
            dir.display()
        );
    }
}

/// A latency spec: the interval against the clock, the policy, and each measuring
/// thread's CPU (`None`: unpinned).
pub fn latency(spec: &LatencySpec) -> Result<Vec<Option<usize>>> {
    let resolution = latency_bench::clock_resolution_ns();
    if spec.interval_ns == 0 || spec.interval_ns < resolution {
        return Err(Error::usage(format!(
            "an interval of {} is below what CLOCK_MONOTONIC resolves here ({}, from clock_getres; this kernel has no \
             high-resolution timers): give --interval {} or more",
            crate::model::format_ns(spec.interval_ns),
            crate::model::format_ns(resolution),
            crate::model::parse::duration_arg(resolution.max(1))
        )));
    }
    scheduling(spec.policy, spec.prio, spec.deadline.as_ref(), 1)?;
    let cpus = thread_cpus(&spec.placement)?;
    warn_if_no_schedstat(spec.schedstat);
    Ok(cpus)
}

/// Can the trial's tasks have their policy: a static policy and priority are tried in a
/// probe process; a deadline reservation's period is checked against the kernel's
/// limits and one reservation is tried (`tasks`: how many the trial will ask for, named
/// when the kernel's admission control refuses).
pub fn scheduling(policy: Policy, prio: i32, deadline: Option<&DeadlineParams>, tasks: usize) -> Result<()> {
    if !policy.is_deadline() {
        return sched::probe_policy(policy, prio);
    }
    let params = deadline.ok_or_else(|| Error::usage("--policy deadline needs --runtime and --period"))?;
    if let Some(why) = sched::DeadlinePeriodLimits::read().refusal(params.period_ns) {
        return Err(Error::env(why));
    }
    sched::probe_deadline(params, tasks)
}

/// The CPU of each measuring thread (`None`: unpinned).
pub fn thread_cpus(placement: &Placement) -> Result<Vec<Option<usize>>> {
    let allowed = sched::resolve_cpus(None)?;
    match placement {
        Placement::Unpinned => Ok(vec![None]),
        Placement::Cpus(list) => Ok(sched::resolve_cpus(Some(list))?.into_iter().map(Some).collect()),
        Placement::AllCpus => Ok(allowed.into_iter().map(Some).collect()),
        &Placement::FirstCpus(n) if n as usize <= allowed.len() => {
            Ok(allowed.into_iter().take(n as usize).map(Some).collect())
        }
        Placement::FirstCpus(n) => Err(Error::env(format!(
            "--threads {n} asks for more pinned threads than the {} CPUs this process may use ({})",
            allowed.len(),
            crate::model::parse::format_cpu_list(&allowed)
        ))),
    }
}

/// A background load: its CPUs, nice value and directory (`None` without a load).
pub fn load(spec: &LoadSpec) -> Result<Option<LoadPlan>> {
    crate::sys::load::plan(spec)
}

/// Every check one trial's spec needs, for a suite's plan before its first trial.
pub fn trial(spec: &TrialSpec) -> Result<()> {
    load(spec.load())?;
    match spec {
        TrialSpec::Ring(s) => ring(s).map(|_| ()),
        TrialSpec::Workload(s) => workload(std::slice::from_ref(s)),
        TrialSpec::Latency(s) => latency(s).map(|_| ()),
        TrialSpec::Command(s) => command(s),
    }
}

/// A command: its program can be found, and its policy, nice value and CPUs can be had.
pub fn command(spec: &CommandSpec) -> Result<()> {
    let program = spec.argv.first().map(String::as_str).unwrap_or_default();
    if crate::sys::process::find_program(program).is_none() {
        return Err(Error::usage(format!(
            "cannot run '{program}': no such program{} (install it, or give its path)",
            if program.contains('/') { "" } else { " on PATH" }
        )));
    }
    sched::resolve_cpus(spec.cpus.as_deref())?;
    scheduling(spec.policy, spec.prio, None, 1)?;
    if let Some(nice) = spec.nice {
        sched::probe_nice(nice)?;
    }
    Ok(())
}

/// The CPUs a trial measures on, where its spec pins them (for the orchestrator to stay
/// off them while it runs). Empty when the trial may run anywhere.
pub fn measured_cpus(spec: &TrialSpec) -> Vec<usize> {
    match spec {
        TrialSpec::Latency(s) => thread_cpus(&s.placement).unwrap_or_default().into_iter().flatten().collect(),
        TrialSpec::Ring(s) => {
            let cpus = sched::resolve_cpus(s.cpus.as_deref()).unwrap_or_default();
            match s.pin {
                crate::model::Pin::Same => cpus.into_iter().take(1).collect(),
                _ if s.cpus.is_some() => cpus,
                _ => Vec::new(),
            }
        }
        TrialSpec::Workload(_) => Vec::new(),
        TrialSpec::Command(s) => {
            s.cpus.as_ref().map(|c| sched::resolve_cpus(Some(c)).unwrap_or_default()).unwrap_or_default()
        }
    }
}

/// Is this a real-time trial? The orchestrator's watchdog needs to know.
pub fn is_realtime(spec: &TrialSpec) -> bool {
    matches!(spec.policy(), Policy::Fifo | Policy::Rr)
}
