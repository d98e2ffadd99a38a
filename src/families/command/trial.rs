//! The command's trial in the executor: its checks, its run in the trial process.

use crate::error::{Error, Result};
use crate::exec::family::FamilyTrial;
use crate::exec::family::{Extras, Reply};
use crate::exec::preflight;
use crate::families::command::model::CommandSpec;
use crate::families::list::Outcome;
use crate::sys::{load, sched};
use std::time::Duration;

/// A command: its program can be found, and its policy, nice value and CPUs can be had.
pub fn preflight(spec: &CommandSpec) -> Result<()> {
    let program = spec.argv.first().map(String::as_str).unwrap_or_default();
    if crate::sys::process::find_program(program).is_none() {
        return Err(Error::usage(format!(
            "cannot run '{program}': no such program{} (install it, or give its path)",
            if program.contains('/') { "" } else { " on PATH" }
        )));
    }
    sched::resolve_cpus(spec.cpus.as_deref())?;
    preflight::scheduling(spec.policy, spec.prio, None, 1)?;
    if let Some(nice) = spec.nice {
        sched::probe_nice(nice)?;
    }
    Ok(())
}

impl FamilyTrial for CommandSpec {
    fn preflight(&self) -> Result<()> {
        preflight(self)
    }

    fn measure(&self, _repeat: u32, _extras: &Extras) -> Result<Reply> {
        preflight(self)?;
        let cpus = self.cpus.as_deref().map(|c| sched::resolve_cpus(Some(c))).transpose()?;
        let load_plan = preflight::load(&self.load)?;
        let (mut outcome, load) = load::beside(load_plan.as_ref(), || super::kernel::run(self, cpus.as_deref()))?;
        outcome.beside.load = load;
        Reply::ok(Outcome::Command(outcome))
    }

    fn measured_cpus(&self) -> Vec<usize> {
        self.cpus.as_ref().map(|c| sched::resolve_cpus(Some(c)).unwrap_or_default()).unwrap_or_default()
    }

    /// Nothing says how long a program takes until it has run once: a second, a guess.
    fn estimate_s(&self, _cpus: f64) -> f64 {
        1.0
    }

    /// A command's own --timeout is the user's limit for it: the executor's backs it up,
    /// never cuts it short.
    fn executor_timeout(&self, default: Duration) -> Duration {
        default.max(self.timeout + Duration::from_secs(30))
    }

    /// Its cgroup, with whatever of the command still runs in it.
    fn sweep_after_kill(&self) {
        crate::sys::cgroup::sweep_orphans()
    }
}
