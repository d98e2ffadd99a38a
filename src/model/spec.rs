//! What to run: one validated spec per trial, per family. Specs are plain values that
//! travel to the trial process as JSON; whatever needs the machine to be checked or
//! resolved (CPUs, privileges, limits, work directories) is done by the preflight.

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
