//! What the executor needs of a family, implemented once in each family's folder
//! (`families/<name>/trial.rs`): its checks, its trial in a trial process, where it
//! measures, and a rough time for a plan's estimate. The executor, the preflight and the
//! suite planner reach every family through this trait and the list's dispatch macros.

use crate::error::Result;
use crate::exec::runner::{Extras, Reply};
use crate::families::FamilySpec;
use std::time::Duration;

pub trait FamilyTrial: FamilySpec {
    /// Every check the trial needs that asks the machine (policy, CPUs, limits, the
    /// program), before anything is forked; the background load is checked beside it.
    fn preflight(&self) -> Result<()>;

    /// Check, set up and run the trial in this process (the trial process): its outcome,
    /// or a failed or timed-out status with the reason.
    fn measure(&self, repeat: u32, extras: &Extras) -> Result<Reply>;

    /// The CPUs it measures on, where its spec pins them (for the orchestrator to stay
    /// off them while it runs). Empty when it may run anywhere.
    fn measured_cpus(&self) -> Vec<usize> {
        Vec::new()
    }

    /// A rough time for one trial on a machine like the 2-vCPU reference VM with `cpus`
    /// CPUs, in seconds: enough for a plan's ETA, not a measurement.
    fn estimate_s(&self, cpus: f64) -> f64;

    /// The executor's limit for the trial, given the run's (`default`).
    fn executor_timeout(&self, default: Duration) -> Duration {
        default
    }

    /// After its trial process was killed outright: remove what it could not (work
    /// directories, cgroups).
    fn sweep_after_kill(&self) {}
}
