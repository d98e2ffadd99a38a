//! The workload family's model: its options (flags and suite keys), its validated spec,
//! its children's record and outcome, and its figures in the registry.

use crate::model::legacy::{int, ns, usage, Json};
use crate::error::{Error, Result};
use crate::families::shared::SpecSource;
use crate::model::options::*;
use crate::model::parse::*;
use crate::model::spec::BesideSpec;
use crate::model::*;
use clap::Args;
use serde::{Deserialize, Deserializer, Serialize};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// The three programs of the 2014 scheduler-policy study.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// Monte Carlo estimate of pi: CPU-bound (`pi-sched`).
    Cpu,
    /// Block copy between files opened with O_SYNC: I/O-bound (`rw-sched`).
    Io,
    /// One pi sample and one 80-byte O_SYNC write per iteration (`mix-sched`).
    Mixed,
}

impl WorkloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Cpu => "cpu",
            WorkloadKind::Io => "io",
            WorkloadKind::Mixed => "mixed",
        }
    }
}

/// One child's part in a workload trial.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildRecord {
    /// From the start gate opening to the child's last instruction of work.
    pub finish_ns: u64,
    /// Its resource usage for the work (wait4 less the snapshot taken at the gate).
    pub usage: Usage,
    /// Its pi estimate (cpu and mixed), checked against pi.
    pub pi_estimate: Option<f64>,
    /// The scheduler's account of it from the gate to its finish (run-queue wait,
    /// migrations); unknown figures where the kernel lacks them.
    #[serde(default)]
    pub sched: SchedInfo,
}

/// What one workload trial measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadTrial {
    pub spec: WorkloadSpec,
    /// 1-based repetition number of this policy x procs cell.
    pub repeat: usize,
    pub status: TrialStatus,
    /// From the gate opening to the last child's finish.
    pub wall_ns: u64,
    /// Summed over every child.
    pub usage: Usage,
    pub children: Vec<ChildRecord>,
    /// From the first fork to every child waiting at the gate.
    pub fork_ns: u64,
    /// With `--trace on`: the children's time off the CPU, or why it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::analysis::offcpu::ChildrenTrace>,
}

impl WorkloadTrial {
    /// The typed outcome of a trial that finished (its children summarised).
    pub fn outcome(&self) -> Option<WorkloadOutcome> {
        if !self.status.is_ok() {
            return None;
        }
        let shares: Vec<f64> = self.children.iter().map(|c| c.usage.cpu_ns() as f64).collect();
        let pis = || self.children.iter().filter_map(|c| c.pi_estimate);
        let sum = SchedInfo::sum(self.children.iter().map(|c| &c.sched));
        // Every child's wait, ascending; unknown if any child's is.
        let delays: Option<Vec<u64>> =
            self.children.iter().map(|c| c.sched.run_delay_ns).collect::<Option<Vec<u64>>>().map(|mut d| {
                d.sort_unstable();
                d
            });
        Some(WorkloadOutcome {
            children: self.children.len(),
            wall_ns: self.wall_ns,
            usage: self.usage,
            fork_ns: Some(self.fork_ns),
            first_finish_ns: Some(self.children.iter().map(|c| c.finish_ns).min().unwrap_or(0)),
            last_finish_ns: Some(self.children.iter().map(|c| c.finish_ns).max().unwrap_or(0)),
            fairness: Some(crate::analysis::stats::jain_index(&shares)),
            pi_min: pis().reduce(f64::min),
            pi_max: pis().reduce(f64::max),
            beside: Default::default(),
            reservation: self.spec.beside.deadline.map(|dl| self.reservation_figures(&dl)),
            run_delay_ns: sum.run_delay_ns,
            run_delay_max_ns: delays.as_ref().and_then(|d| d.last().copied()),
            run_delay_p50_ns: delays.as_ref().filter(|d| !d.is_empty()).map(|d| {
                let as_f64: Vec<f64> = d.iter().map(|&v| v as f64).collect();
                crate::analysis::stats::median(&as_f64).round() as u64
            }),
            run_delay_min_ns: delays.as_ref().and_then(|d| d.first().copied()),
            migrations: sum.migrations,
            trace: self.trace.clone(),
        })
    }

    /// Each child's CPU % against its SCHED_DEADLINE reservation.
    fn reservation_figures(&self, dl: &DeadlineParams) -> ReservationFigures {
        let reserved_pct = 100.0 * dl.bandwidth();
        let shares: Vec<f64> = self
            .children
            .iter()
            .map(|c| if c.finish_ns == 0 { 0.0 } else { 100.0 * c.usage.cpu_ns() as f64 / c.finish_ns as f64 })
            .collect();
        let mean = shares.iter().sum::<f64>() / shares.len().max(1) as f64;
        ReservationFigures {
            reserved_pct,
            child_cpu_pct_mean: mean,
            child_cpu_pct_min: shares.iter().copied().reduce(f64::min).unwrap_or(0.0),
            children_short: (self.spec.params.kind == WorkloadKind::Cpu)
                .then(|| shares.iter().filter(|&&s| s < 0.9 * reserved_pct).count()),
        }
    }
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
    /// The load, reservation and scheduler readings of ring, workload and latency specs;
    /// flattened last, where these keys have always stood.
    #[serde(flatten)]
    pub beside: BesideSpec,
}

/// What one workload trial measured, summed or summarised over its children.
/// `Default` is an outcome with nothing known but its zeros: what an import that lacks
/// the figures fills in with `..WorkloadOutcome::default()`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOutcome {
    pub children: usize,
    /// From the start gate opening to the last child's finish.
    pub wall_ns: u64,
    /// Summed over every child.
    pub usage: Usage,
    /// From the first fork to every child waiting at the gate. This, the finish times
    /// and the fairness are `None` where unknown (published figures that give none);
    /// every run schedlab measured has them.
    pub fork_ns: Option<u64>,
    pub first_finish_ns: Option<u64>,
    pub last_finish_ns: Option<u64>,
    /// Jain's index over the children's CPU time: 1 when every child got the same share.
    pub fairness: Option<f64>,
    /// The children's pi estimates (cpu and mixed), lowest and highest.
    pub pi_min: Option<f64>,
    pub pi_max: Option<f64>,
    /// The background load's, the steal's and the private cgroup's figures.
    #[serde(flatten)]
    pub beside: crate::families::shared::Beside,
    /// Under SCHED_DEADLINE: what each child's reservation let it have.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<ReservationFigures>,
    /// Run-queue wait (`/proc/<tid>/schedstat`) over the children, each from its gate to
    /// its finish: the sum, the longest-waiting child, the median and the shortest child.
    /// Unknown where the kernel lacks it or `--schedstat off`; older stored runs have none.
    #[serde(default)]
    pub run_delay_ns: Option<u64>,
    #[serde(default)]
    pub run_delay_max_ns: Option<u64>,
    #[serde(default)]
    pub run_delay_p50_ns: Option<u64>,
    #[serde(default)]
    pub run_delay_min_ns: Option<u64>,
    /// CPU-to-CPU moves summed over the children (`se.nr_migrations`).
    #[serde(default)]
    pub migrations: Option<u64>,
    /// With `--trace on`: each child's time off the CPU and who ran in its place, or why
    /// that is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::analysis::offcpu::ChildrenTrace>,
}

/// What SCHED_DEADLINE reservations gave a workload trial's children. A child's CPU % is
/// its user + system time over its own time from the gate to its finish.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReservationFigures {
    /// runtime / period, in %: what each child's reservation allows.
    pub reserved_pct: f64,
    /// The children's CPU %: mean and lowest.
    pub child_cpu_pct_mean: f64,
    pub child_cpu_pct_min: f64,
    /// cpu workload: children that got less than 90 % of their reservation, i.e. whose
    /// jobs missed getting their runtime by their deadlines (`None` for io and mixed,
    /// which block on I/O and need not use their reservation).
    pub children_short: Option<usize>,
}

impl WorkloadOutcome {
    /// CPU % as `time` prints it: (user + system) / wall.
    pub fn cpu_pct(&self) -> f64 {
        if self.wall_ns == 0 {
            return 0.0;
        }
        100.0 * self.usage.cpu_ns() as f64 / self.wall_ns as f64
    }
}

/// Samples per child that take about 0.2 s on the 2-vCPU reference machine.
pub const DEFAULT_CPU_ITERATIONS: u64 = 50_000_000;

/// mix-sched's default.
pub const DEFAULT_MIXED_ITERATIONS: u64 = 1_000;

pub const DEFAULT_TRANSFER_SIZE: u64 = 100 * 1024;

pub const DEFAULT_BLOCK_SIZE: u64 = 1024;

pub const DEFAULT_WORKLOAD_TIMEOUT: Duration = Duration::from_secs(300);

pub const FASTEST_CPU_SAMPLE_NS: u64 = 1;

pub const FASTEST_MIXED_ITERATION_NS: u64 = 1_000;

/// `--trace`'s help for workload: what its tracing describes.
const WORKLOAD_TRACE_HELP: &str =
    "Record the scheduler's tracepoints on the children's CPUs over each trial and split each child's time off \
     the CPU: asleep (I/O or otherwise), runnable, and who ran in its place — siblings or other tasks — with its \
     preemptions by preemptor (root; a private tracefs instance) [default: off]";

/// `schedlab workload` flags and workload experiment keys.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
// The derived reader reads the family's own keys for its `Deserialize` (`read_with_groups`).
#[serde(remote = "Self", rename_all = "kebab-case", default)]
#[command(mut_arg("schedstat", |a| a.help(schedstat_help("child's"))), mut_arg("trace", |a| a.help(WORKLOAD_TRACE_HELP)))]
#[command(mut_arg("policy", |a| a.help("Policies to compare: one or a list of other,fifo,rr,batch,idle,deadline [default: other]")), mut_arg("prio", |a| a.help("Static priority for fifo/rr (1-99) [default: 99, the maximum, as in the classic study]")), mut_arg("nice", |a| a.help("Nice value (-20..19) for the other and batch children")))]
pub struct WorkloadOptions {
    /// cpu: Monte Carlo pi; io: O_SYNC block copy; mixed: a pi sample and an 80-byte O_SYNC write per iteration
    #[arg(value_enum, required = true)]
    pub workload: Option<WorkloadKind>,

    /// Children per trial: a count (10), a list (10,50,100,500) or a range (1..=4) [default: 10]
    #[arg(long, value_name = "LIST", value_parser = parse_workload_procs)]
    #[serde(deserialize_with = "de_workload_procs")]
    pub procs: Option<ProcList>,

    #[command(flatten)]
    #[serde(skip)]
    pub scheduling: PolicyOptions,

    /// cpu: Monte Carlo samples per child [default: 50000000, ~0.2 s here]; mixed: iterations [default: 1000]
    #[arg(long, value_name = "N", value_parser = parse_iterations, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_iterations")]
    pub iterations: Option<u64>,

    /// io: bytes each child copies (e.g. 100KiB, 1MiB) [default: 100KiB]
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_size")]
    pub transfer_size: Option<u64>,

    /// io: bytes per read and write [default: 1KiB]
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_size")]
    pub block_size: Option<u64>,

    /// io/mixed: where to write (a fresh directory is made inside it and removed afterwards)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Base seed of the children's random generators [default: 1]
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "de_u64")]
    pub seed: Option<u64>,

    /// Kill a trial that runs longer than this and record it as timed out [default: 5m]
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_duration")]
    pub timeout: Option<Duration>,

    /// Allow a CPU-bound real-time run that can fill every CPU while RT throttling is off
    #[arg(long)]
    pub allow_rt_saturation: bool,

    #[command(flatten)]
    #[serde(skip)]
    pub beside: BesideOptions,
}

read_with_groups!(WorkloadOptions { beside, scheduling });

impl SpecSource for WorkloadOptions {
    type Spec = WorkloadSpec;

    /// One spec per policy x procs cell, policies in the order given, counts ascending.
    fn to_specs(&self) -> Result<Vec<WorkloadSpec>> {
        let kind = self.workload.ok_or_else(|| {
            Error::usage("a workload needs its kind: cpu, io or mixed (workload = \"cpu\" in a suite)")
        })?;
        let policies = self.scheduling.policies();
        check_prio(self.scheduling.prio, &policies)?;
        let beside = BesideSpec::from_options(&self.beside, &policies)?;
        check_nice(self.scheduling.nice, &policies)?;
        let transfer_size = self.transfer_size.unwrap_or(DEFAULT_TRANSFER_SIZE);
        let block_size = self.block_size.unwrap_or(DEFAULT_BLOCK_SIZE);
        if kind == WorkloadKind::Io {
            if block_size > transfer_size {
                return Err(Error::usage(format!(
                    "--block-size {block_size} is larger than --transfer-size {transfer_size}: a child could not copy \
                     even one block"
                )));
            }
            if transfer_size % block_size != 0 {
                return Err(Error::usage(format!(
                    "--transfer-size {transfer_size} is not a multiple of --block-size {block_size}: choose sizes that \
                     divide, e.g. --transfer-size {}",
                    transfer_size - transfer_size % block_size
                )));
            }
        }
        if kind == WorkloadKind::Cpu && self.dir.is_some() {
            return Err(Error::usage("--dir applies only to the io and mixed workloads, which write files"));
        }
        let iterations = self.iterations.unwrap_or(match kind {
            WorkloadKind::Mixed => DEFAULT_MIXED_ITERATIONS,
            _ => DEFAULT_CPU_ITERATIONS,
        });
        let fastest = match kind {
            WorkloadKind::Cpu => Some((FASTEST_CPU_SAMPLE_NS, "1 ns a sample (~4 ns on a 2-vCPU VM)")),
            WorkloadKind::Mixed => {
                Some((FASTEST_MIXED_ITERATION_NS, "1 µs an iteration (an O_SYNC write; ~200 µs on a disk)"))
            }
            WorkloadKind::Io => None,
        };
        if let Some((ns, speed)) = fastest {
            let most = max_trial_ns() / ns;
            if iterations > most {
                return Err(Error::usage(format!(
                    "--iterations {iterations} would keep each {} child busy for more than 24 h even at {speed}: give \
                     at most {most}",
                    kind.as_str()
                )));
            }
        }
        let params = WorkloadParams { kind, iterations, transfer_size, block_size, seed: self.seed.unwrap_or(1) };
        let counts = self.procs.as_ref().map_or(vec![10], |p| p.0.clone());
        let mut specs = Vec::new();
        for &policy in &policies {
            let prio =
                if policy.is_realtime() { resolve_priority(policy, self.scheduling.prio.or(Some(99)))? } else { 0 };
            let nice = self.scheduling.nice_for(policy);
            for &procs in &counts {
                specs.push(WorkloadSpec {
                    params: params.clone(),
                    procs,
                    policy,
                    prio,
                    nice,
                    timeout: self.timeout.unwrap_or(DEFAULT_WORKLOAD_TIMEOUT),
                    dir: self.dir.clone(),
                    allow_rt_saturation: self.allow_rt_saturation,
                    beside: beside.under(policy),
                });
            }
        }
        Ok(specs)
    }
}

// What schedlab 0.1.0 stored, read back (`FamilyModel::outcome_of_0_1_0`).

/// The outcome 0.1.0 stored as its figures.
pub(crate) fn outcome_of_0_1_0(f: &Json) -> Option<WorkloadOutcome> {
    if f.get("status").and_then(Json::as_str).is_some_and(|s| s != "ok") {
        return None;
    }
    let usage = usage(f)?;
    Some(WorkloadOutcome {
        children: int(f, "procs")? as usize,
        wall_ns: ns(f, "wall_s")?,
        usage,
        fork_ns: Some(ns(f, "fork_s").unwrap_or(0)),
        first_finish_ns: Some(ns(f, "first_finish_s").unwrap_or(0)),
        last_finish_ns: Some(ns(f, "last_finish_s").unwrap_or(0)),
        fairness: f.get("fairness").and_then(Json::as_f64),
        pi_min: f.get("pi_min").and_then(Json::as_f64),
        pi_max: f.get("pi_max").and_then(Json::as_f64),
        // Format 1 predates the scheduler's per-task figures: unknown.
        ..WorkloadOutcome::default()
    })
}
