//! What the executor needs of a family, implemented once in each family's folder
//! (`families/<name>/trial.rs`): its checks, its trial in a trial process, where it
//! measures, and a rough time for a plan's estimate. The executor, the preflight and the
//! suite planner reach every family through this trait and the list's dispatch macros.
//! With it, what crosses between the orchestrator and a trial process: the extras a
//! command asks beyond the spec, and the reply. The rest of `exec` builds on this file.

use crate::error::Result;
use crate::families::list::Outcome;
use crate::families::shared::FamilySpec;
use crate::model::TrialStatus;
use std::path::PathBuf;
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

/// What a family command asks of a trial beyond its spec; a suite's trials ask nothing
/// more. Only latency trials have such requests.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Extras {
    /// Append the run's histogram (`policy cpu value_ns count` lines) to this file, which
    /// the command created before anything ran.
    pub histogram: Option<PathBuf>,
    /// Append every raw sample (ns, one a line) to this file.
    pub samples: Option<PathBuf>,
    /// Stream every task-set activation as a CSV row to this file, which the command
    /// created with its header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activations: Option<PathBuf>,
    /// `activations` is a directory the command made, where each thread's activations go
    /// as rt-app's log, one file a thread.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rt_app_log: bool,
    /// Append the recorded tracepoints as Chrome trace-event objects to this file.
    pub trace_out: Option<PathBuf>,
    /// Draw the live line (current, max, samples) on the controlling terminal.
    pub live_line: bool,
    /// Ctrl-C or SIGTERM ends the run with the samples taken, as an ok trial (cyclictest's
    /// way), instead of stopping without a record.
    pub keep_partial: bool,
}

/// What a trial process prints on stdout: one JSON object.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Reply {
    pub status: TrialStatus,
    pub outcome: Option<Outcome>,
    #[serde(default)]
    pub notes: TrialNotes,
}

impl Reply {
    /// A trial that measured what it was asked.
    pub fn ok(outcome: Outcome) -> Result<Reply> {
        Ok(Reply { status: TrialStatus::Ok, outcome: Some(outcome), notes: TrialNotes::default() })
    }
}

/// What a trial says beside its outcome, for the command that shows it live.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TrialNotes {
    /// latency: what the run had in force (mlockall, the DMA latency hold, pinning, slack).
    pub description: Option<String>,
    /// The signal that ended a latency run early (its figures are of the samples taken).
    pub interrupted: Option<i32>,
}
