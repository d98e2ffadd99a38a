//! The ring's trial in the executor: its checks, its measurement in the trial process.

use super::kernel;
use crate::error::Result;
use crate::exec::family::FamilyTrial;
use crate::exec::family::{Extras, Reply};
use crate::exec::preflight;
use crate::families::list::Outcome;
use crate::families::ring::model::{Pin, RingLength, RingMode, RingSpec};
use crate::sys::{limits, load, sched};

/// A ring: its CPUs (to place members on), policy and limits.
pub fn preflight(spec: &RingSpec) -> Result<Vec<usize>> {
    let cpus = ring_limits(spec)?;
    preflight::warn_if_no_schedstat(spec.beside.schedstat);
    Ok(cpus)
}

/// A ring's checks that need the OS but fork nothing: CPUs, memory, policy, task and file limits.
fn ring_limits(spec: &RingSpec) -> Result<Vec<usize>> {
    let cpus = sched::resolve_cpus(spec.cpus.as_deref())?;
    // Each member's working set, plus what a member costs anyway (~150 KiB measured).
    let needed_kb = spec.procs as u64 * (spec.work_kb as u64 + 150);
    limits::check_memory(needed_kb, &format!("a ring of {} with {} KiB each", spec.procs, spec.work_kb))?;
    preflight::scheduling(spec.policy, spec.prio, spec.beside.deadline.as_ref(), spec.procs)?;
    let what = format!("a {} ring of {}", spec.mode.as_str(), spec.procs);
    match spec.mode {
        // Members, plus the overhead probe.
        RingMode::Process => limits::check_task_budget(spec.procs as u64 + 1, &what)?,
        RingMode::Thread => {
            limits::check_task_budget(spec.procs as u64 + 1, &what)?;
            limits::check_open_files_possible(kernel::open_files_for_threads(spec), &what)?;
        }
    }
    Ok(cpus)
}

impl FamilyTrial for RingSpec {
    fn preflight(&self) -> Result<()> {
        preflight(self).map(|_| ())
    }

    fn measure(&self, _repeat: u32, _extras: &Extras) -> Result<Reply> {
        let cpus = preflight(self)?;
        let load_plan = preflight::load(&self.beside.load)?;
        let overhead_ps = kernel::measure_overhead(self, &cpus)?;
        let (mut outcome, load) = load::beside(load_plan.as_ref(), || kernel::run_ring(self, &cpus, overhead_ps))?;
        outcome.beside.load = load;
        Reply::ok(Outcome::Ring(outcome))
    }

    fn measured_cpus(&self) -> Vec<usize> {
        let cpus = sched::resolve_cpus(self.cpus.as_deref()).unwrap_or_default();
        match self.pin {
            Pin::Same => cpus.into_iter().take(1).collect(),
            _ if self.cpus.is_some() => cpus,
            _ => Vec::new(),
        }
    }

    fn estimate_s(&self, _cpus: f64) -> f64 {
        let hop_s = if self.pin == Pin::Same { 2.5e-6 } else { 20e-6 };
        let body = match self.length {
            RingLength::Laps(l) => l as f64 * self.procs as f64 * hop_s,
            RingLength::Duration(d) => d.as_secs_f64(),
        };
        // The overhead probe (~50 ms) and forking the members (~0.3 ms each).
        body + 0.05 + self.procs as f64 * 3e-4
    }
}

/// Two unprivileged SCHED_OTHER processes passing the token through a pipe on `cpu` for
/// `length`: what the noise probe measures the cost of a switch with.
pub fn pair_on(cpu: usize, length: std::time::Duration) -> RingSpec {
    use super::model::Ipc;
    RingSpec {
        procs: 2,
        length: RingLength::Duration(length),
        mode: RingMode::Process,
        ipc: Ipc::Pipe,
        pin: Pin::Same,
        cpus: Some(vec![cpu]),
        policy: crate::model::Policy::Other,
        prio: 0,
        work_kb: 0,
        timeout: None,
        beside: crate::model::BesideSpec::default(),
    }
}
