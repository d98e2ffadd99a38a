//! `schedlab workload`: the policy x workload matrix, every check before the first fork.

use crate::bench::workload::{bytes_needed, prepare_input, run_trial, WorkDir};
use crate::cli::{WorkloadArgs, WorkloadFormat};
use crate::commands::{emit, progress_bar};
use crate::error::{Error, Result};
use crate::model::{TrialStatus, WorkloadKind, WorkloadSpec};
use crate::report::workload as report;
use crate::sys::{fd, limits, sched};
use std::path::Path;

pub fn run(args: &WorkloadArgs) -> Result<i32> {
    let specs = args.to_specs()?;
    preflight(&specs, args.allow_rt_saturation)?;
    let dir = prepare_work_dir(&specs, args.dir.as_deref())?;
    let repeats = args.repeat as usize;
    let bar = progress_bar((specs.len() * repeats) as u64, "trials");
    let json = args.json;
    let classic = !json && args.format == WorkloadFormat::Classic;
    if !json && !classic {
        emit(&report::describe(&specs[0], args.repeat))?;
    }
    let mut trials = Vec::with_capacity(specs.len() * repeats);
    for spec in &specs {
        if classic {
            bar.suspend(|| emit(&report::classic_heading(spec)))?;
        }
        for repeat in 1..=repeats {
            bar.set_message(format!("{} x {} ({}/{repeats})", spec.policy.kernel_name(), spec.procs, repeat));
            let trial = match run_trial(spec, repeat, dir.as_ref()) {
                Ok(t) => t,
                Err(e) => {
                    bar.finish_and_clear();
                    return Err(e);
                }
            };
            if let TrialStatus::TimedOut(reason) | TrialStatus::Failed(reason) = &trial.status {
                bar.suspend(|| {
                    eprintln!(
                        "schedlab: trial {} x {} #{repeat} {}: {reason}",
                        spec.policy.kernel_name(),
                        spec.procs,
                        trial.status.label()
                    )
                });
            }
            if json {
                bar.suspend(|| emit(&report::json(&trial).to_string()))?;
            } else if classic {
                bar.suspend(|| emit(&report::classic_line(&trial)))?;
            }
            bar.inc(1);
            trials.push(trial);
        }
    }
    bar.finish_and_clear();
    if !json && !classic {
        emit(&report::table(&trials))?;
    }
    Ok(if trials.iter().all(|t| t.status.is_ok()) { 0 } else { 3 })
}

/// The directory io and mixed trials write in (none for cpu): made, checked for space
/// for the largest trial, warned about if memory-backed, and given its input file.
pub(crate) fn prepare_work_dir(specs: &[WorkloadSpec], parent: Option<&Path>) -> Result<Option<WorkDir>> {
    let Some(first) = specs.first() else { return Ok(None) };
    if first.params.kind == WorkloadKind::Cpu {
        return Ok(None);
    }
    let dir = WorkDir::create(parent)?;
    let largest = specs.iter().map(|s| s.procs).max().unwrap_or(1);
    check_space(dir.path(), bytes_needed(&first.params, largest))?;
    warn_if_memory_backed(dir.path());
    prepare_input(&dir, &first.params)?;
    Ok(Some(dir))
}

/// Everything that can refuse the run, checked before the first fork.
pub(crate) fn preflight(specs: &[WorkloadSpec], allow_rt_saturation: bool) -> Result<()> {
    let mut probed = Vec::new();
    for spec in specs {
        if !probed.contains(&(spec.policy, spec.prio)) {
            sched::probe_policy(spec.policy, spec.prio)?;
            probed.push((spec.policy, spec.prio));
        }
        if let Some(nice) = spec.nice {
            sched::probe_nice(nice)?;
        }
    }
    let largest = specs.iter().map(|s| s.procs).max().unwrap_or(0);
    limits::check_task_budget(largest as u64, &format!("a trial of {largest} processes"))?;
    let cpus = sched::allowed_cpus().map_err(|e| Error::os("reading the CPU affinity mask", e))?.len();
    let throttling = sched::RtThrottling::read();
    let saturating =
        specs.iter().find(|s| s.params.kind == WorkloadKind::Cpu && s.policy.is_realtime() && s.procs >= cpus);
    if let Some(spec) = saturating {
        let off = throttling.is_none_or(|t| !t.is_on());
        if off && !allow_rt_saturation {
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

fn statvfs(path: &Path) -> Option<libc::statvfs> {
    let c = fd::c_path(path).ok()?;
    // SAFETY: zeroed statvfs is valid; the call fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid path and writable struct.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then_some(st)
}

/// Refuse a run that cannot fit its files, instead of failing every trial with ENOSPC.
fn check_space(dir: &Path, needed: u64) -> Result<()> {
    let Some(st) = statvfs(dir) else { return Ok(()) };
    let free = st.f_bavail * st.f_frsize;
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
    let Ok(c) = fd::c_path(dir) else { return };
    // SAFETY: zeroed statfs is valid; the call fills it.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid path and writable struct.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0 && st.f_type == libc::TMPFS_MAGIC {
        eprintln!(
            "schedlab: warning: {} is on tmpfs: O_SYNC writes reach no disk, so the io and mixed \
             workloads are not I/O-bound there; use --dir on a disk-backed filesystem",
            dir.display()
        );
    }
}
