//! The workload's trial in the executor: its checks, its work directory, its measurement
//! in the trial process.

use super::kernel::{self, bytes_needed, prepare_input, sweep_orphaned_work_dirs, WorkDir};
use crate::error::{Error, Result};
use crate::exec::family::FamilyTrial;
use crate::exec::family::{Extras, Reply, TrialNotes};
use crate::exec::preflight;
use crate::families::list::Outcome;
use crate::families::workload::model::{WorkloadKind, WorkloadSpec};
use crate::sys::{fs, limits, load, sched};
use std::path::Path;

/// Workload cells: policies, nice values, the task budget, and RT saturation.
pub fn preflight(specs: &[WorkloadSpec]) -> Result<()> {
    let mut probed = Vec::new();
    for spec in specs {
        if !probed.contains(&(spec.policy, spec.prio)) {
            preflight::scheduling(spec.policy, spec.prio, spec.beside.deadline.as_ref(), spec.procs)?;
            probed.push((spec.policy, spec.prio));
        }
        if let Some(nice) = spec.nice {
            sched::probe_nice(nice)?;
        }
    }
    preflight::warn_if_no_schedstat(specs.iter().any(|s| s.beside.schedstat));
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

impl FamilyTrial for WorkloadSpec {
    fn preflight(&self) -> Result<()> {
        preflight(std::slice::from_ref(self))
    }

    fn measure(&self, repeat: u32, _extras: &Extras) -> Result<Reply> {
        let cell = std::slice::from_ref(self);
        preflight(cell)?;
        let load_plan = preflight::load(&self.beside.load)?;
        let dir = work_dir(cell)?;
        let running = load_plan.as_ref().map(load::Load::start).transpose()?;
        let trial = kernel::run_trial(self, repeat as usize, dir.as_ref())?;
        let mut outcome = trial.outcome().map(Outcome::Workload);
        if let Some(running) = running.filter(|_| trial.status.is_ok()) {
            if let Some(o) = outcome.as_mut() {
                o.set_load(Some(running.finish()?));
            }
        }
        Ok(Reply { outcome, status: trial.status, notes: TrialNotes::default() })
    }

    fn estimate_s(&self, cpus: f64) -> f64 {
        let p = &self.params;
        let procs = self.procs as f64;
        let per_child = match p.kind {
            WorkloadKind::Cpu => p.iterations as f64 * 4e-9,
            WorkloadKind::Io => (p.transfer_size / p.block_size) as f64 * 2e-4,
            WorkloadKind::Mixed => p.iterations as f64 * 2e-4,
        };
        let parallel = if p.kind == WorkloadKind::Cpu { cpus } else { 2.0 };
        per_child * procs / parallel.min(procs) + procs * 5e-4
    }

    /// Killed outright, the trial could not remove its work directory.
    fn sweep_after_kill(&self) {
        let parent = self.dir.clone().unwrap_or_else(std::env::temp_dir);
        sweep_orphaned_work_dirs(&parent);
    }
}
