//! What to run: one validated spec per trial, per family. Specs are plain values that
//! travel to the trial process as JSON; whatever needs the machine to be checked or
//! resolved (CPUs, privileges, limits, work directories) is done by the preflight.

use crate::families::command::model::CommandSpec;
use crate::model::load::LoadSpec;
use crate::model::{DeadlineParams, Ipc, Pin, Policy, RingMode, WorkloadKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// When a ring stops: after a fixed number of laps, or once a wall-clock budget is spent
/// (the lap in flight is completed and counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RingLength {
    Laps(u64),
    Duration(Duration),
}

impl RingLength {
    pub fn duration(self) -> Option<Duration> {
        match self {
            RingLength::Duration(d) => Some(d),
            RingLength::Laps(_) => None,
        }
    }
}

fn reading_on() -> bool {
    true
}

/// One ring configuration: everything needed to run it, already validated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingSpec {
    pub procs: usize,
    pub length: RingLength,
    pub mode: RingMode,
    pub ipc: Ipc,
    pub pin: Pin,
    /// CPUs the placement draws from; `None` means every CPU this process may use.
    pub cpus: Option<Vec<usize>>,
    pub policy: Policy,
    pub prio: i32,
    pub work_kb: usize,
    /// Kill the ring and fail the run past this (none: wait as long as it takes).
    pub timeout: Option<Duration>,
    /// Background load beside the ring.
    #[serde(default, skip_serializing_if = "LoadSpec::is_none")]
    pub load: LoadSpec,
    /// The SCHED_DEADLINE reservation of each task, when `policy` is deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineParams>,
    /// Read the scheduler's per-task accounting (`--schedstat`); runs stored before it
    /// existed read it.
    #[serde(default = "reading_on")]
    pub schedstat: bool,
    /// Record tracepoints over the timed region and describe the hops (`--trace`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

/// What each child of a workload trial does, already validated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadParams {
    pub kind: WorkloadKind,
    /// Monte Carlo samples per child (cpu) or iterations (mixed); unused for io.
    pub iterations: u64,
    /// Bytes each io child copies.
    pub transfer_size: u64,
    /// Bytes per read and write of an io child.
    pub block_size: u64,
    /// Base seed; child i uses its own stream derived from it.
    pub seed: u64,
}

/// One cell of the policy x procs matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    pub params: WorkloadParams,
    pub procs: usize,
    pub policy: Policy,
    pub prio: i32,
    /// Nice value for OTHER/BATCH children; `None` leaves it as inherited.
    pub nice: Option<i32>,
    /// Wall-clock limit for one trial.
    pub timeout: Duration,
    /// io/mixed: the directory the work directory is made in (default: the temp dir).
    #[serde(default)]
    pub dir: Option<PathBuf>,
    /// Allow CPU-bound real-time children that fill every CPU while RT throttling is off.
    #[serde(default)]
    pub allow_rt_saturation: bool,
    /// Background load beside the children.
    #[serde(default, skip_serializing_if = "LoadSpec::is_none")]
    pub load: LoadSpec,
    /// The SCHED_DEADLINE reservation of each task, when `policy` is deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineParams>,
    /// Read the scheduler's per-task accounting (`--schedstat`); runs stored before it
    /// existed read it.
    #[serde(default = "reading_on")]
    pub schedstat: bool,
    /// Record the scheduler's tracepoints over each trial and split the children's time
    /// off the CPU (`--trace`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

/// How long one latency measurement goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LatencyLength {
    /// Periods per thread (samples + overruns).
    Loops(u64),
    Duration(Duration),
}

/// Where the measuring threads go, as asked; the preflight resolves it to CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// One thread, left to the scheduler.
    Unpinned,
    /// One pinned thread on each of the first N allowed CPUs.
    FirstCpus(u32),
    /// One pinned thread per allowed CPU.
    AllCpus,
    /// One pinned thread per listed CPU.
    Cpus(Vec<usize>),
}

/// One latency measurement under one policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySpec {
    pub interval_ns: u64,
    pub length: LatencyLength,
    pub policy: Policy,
    pub prio: i32,
    pub placement: Placement,
    pub hold_dma_latency: bool,
    /// Stop at the first sample above this (ns).
    pub break_ns: Option<u64>,
    /// Background load beside the measuring threads.
    #[serde(default, skip_serializing_if = "LoadSpec::is_none")]
    pub load: LoadSpec,
    /// The SCHED_DEADLINE reservation of the measuring thread (its period is `interval_ns`), when `policy` is deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineParams>,
    /// Read the scheduler's per-task accounting (`--schedstat`); runs stored before it
    /// existed read it.
    #[serde(default = "reading_on")]
    pub schedstat: bool,
    /// Record tracepoints over the measured window and attribute the spikes (`--trace`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

/// One trial of any family: what the orchestrator sends a trial process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum TrialSpec {
    Ring(RingSpec),
    Workload(WorkloadSpec),
    Latency(LatencySpec),
    Command(CommandSpec),
}

impl TrialSpec {
    pub fn family(&self) -> Family {
        match self {
            TrialSpec::Ring(_) => Family::Ring,
            TrialSpec::Workload(_) => Family::Workload,
            TrialSpec::Latency(_) => Family::Latency,
            TrialSpec::Command(_) => Family::Command,
        }
    }

    /// The background load the trial runs beside it.
    pub fn load(&self) -> &LoadSpec {
        match self {
            TrialSpec::Ring(s) => &s.load,
            TrialSpec::Workload(s) => &s.load,
            TrialSpec::Latency(s) => &s.load,
            TrialSpec::Command(s) => &s.load,
        }
    }

    /// The SCHED_DEADLINE reservation of each of the trial's tasks, if it has one.
    pub fn deadline(&self) -> Option<DeadlineParams> {
        match self {
            TrialSpec::Ring(s) => s.deadline,
            TrialSpec::Workload(s) => s.deadline,
            TrialSpec::Latency(s) => s.deadline,
            TrialSpec::Command(_) => None,
        }
    }

    pub fn policy(&self) -> Policy {
        match self {
            TrialSpec::Ring(s) => s.policy,
            TrialSpec::Workload(s) => s.policy,
            TrialSpec::Latency(s) => s.policy,
            TrialSpec::Command(s) => s.policy,
        }
    }

    /// The least time the trial's measurement takes, where its spec sets it: a ring's
    /// `--duration`, a latency run's `--duration` or `--loops` periods. `None` for a lap
    /// count or a workload, whose time depends on the machine.
    pub fn least_length(&self) -> Option<Duration> {
        match self {
            TrialSpec::Ring(s) => s.length.duration(),
            TrialSpec::Workload(_) | TrialSpec::Command(_) => None,
            TrialSpec::Latency(s) => Some(match s.length {
                LatencyLength::Duration(d) => d,
                LatencyLength::Loops(n) => Duration::from_nanos(n.saturating_mul(s.interval_ns)),
            }),
        }
    }

    /// The ring's or the matrix cell's processes (a latency trial has threads instead).
    pub fn procs(&self) -> Option<usize> {
        match self {
            TrialSpec::Ring(s) => Some(s.procs),
            TrialSpec::Workload(s) => Some(s.procs),
            TrialSpec::Latency(_) | TrialSpec::Command(_) => None,
        }
    }

    /// A workload trial's program (cpu, io, mixed).
    pub fn workload(&self) -> Option<WorkloadKind> {
        match self {
            TrialSpec::Workload(s) => Some(s.params.kind),
            _ => None,
        }
    }

    /// The value of a suite key as this spec holds it, as text ("fifo", "10", "cpu"), for
    /// the keys the spec holds as one typed field: `policy`, `procs` and a workload's
    /// `workload`. `None` for any other key, whose value only the suite's parameters say.
    pub fn key_text(&self, key: &str) -> Option<String> {
        match key {
            "policy" => Some(self.policy().as_str().to_string()),
            "procs" => self.procs().map(|n| n.to_string()),
            "workload" => self.workload().map(|k| k.as_str().to_string()),
            _ => None,
        }
    }
}

/// The benchmark families: the three classic experiments, and any program (`command`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Ring,
    Workload,
    Latency,
    Command,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Ring, Family::Workload, Family::Latency, Family::Command];

    pub fn as_str(self) -> &'static str {
        match self {
            Family::Ring => "ring",
            Family::Workload => "workload",
            Family::Latency => "latency",
            Family::Command => "command",
        }
    }

    /// Suite keys whose value is one value however it is written, never an axis: a
    /// command's program line and its declared figures (lists themselves).
    pub fn whole_value_keys(self) -> &'static [&'static str] {
        match self {
            Family::Command => &["cmd", "figures"],
            _ => &[],
        }
    }

    pub fn parse(text: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.as_str() == text)
    }

    /// The figure a cell of this family is judged by: the one its confidence interval,
    /// adaptive repeats and verdicts are about (the figure registry marks it).
    pub fn headline_figure(self) -> &'static str {
        crate::model::figures::headline(self).key
    }
}
