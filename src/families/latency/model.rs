//! The latency family's model: its options (flags and suite keys), its validated spec,
//! its outcome (per thread and combined), and its figures in the registry.

use crate::model::legacy::{int, Json};
use crate::error::{Error, Result};
use crate::families::shared::SpecSource;
use crate::model::options::*;
use crate::model::parse::*;
use crate::model::spec::BesideSpec;
use crate::model::*;
use clap::Args;
use serde::{Deserialize, Deserializer, Serialize};
use std::sync::OnceLock;
use std::time::Duration;

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
    /// The load, reservation and scheduler readings of ring, workload and latency specs;
    /// flattened last, where these keys have always stood.
    #[serde(flatten)]
    pub beside: BesideSpec,
}

/// The figures of one latency histogram (a thread's, or every thread's together).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadStats {
    /// The CPU the thread was pinned to (none: unpinned, or the "all threads" line).
    pub cpu: Option<usize>,
    pub samples: u64,
    pub overruns: u64,
    pub min_ns: u64,
    pub avg_ns: f64,
    /// The percentiles: `None` where they are unknown (a published table that gives only
    /// min, avg and max), never made up. Every run schedlab measured has them.
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    pub p9999_ns: Option<u64>,
    pub max_ns: u64,
    /// Run-queue wait over the run (the sum over threads on the combined line); unknown
    /// where the kernel lacks it or `--schedstat off`. Older stored runs have none.
    #[serde(default)]
    pub run_delay_ns: Option<u64>,
    /// CPU-to-CPU moves over the run (a pinned thread has none).
    #[serde(default)]
    pub migrations: Option<u64>,
}

impl ThreadStats {
    /// The figures of an empty histogram: every count and time 0, the percentiles known
    /// to be 0 (not unknown).
    pub fn zero() -> ThreadStats {
        let zero = Some(0);
        ThreadStats {
            p50_ns: zero,
            p90_ns: zero,
            p99_ns: zero,
            p999_ns: zero,
            p9999_ns: zero,
            ..ThreadStats::default()
        }
    }
}

/// What one latency run under one policy measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyOutcome {
    pub threads: Vec<ThreadStats>,
    /// Every thread's samples together (the only thread's, when there is one).
    pub all: ThreadStats,
    pub timer_slack_ns: u64,
    pub dma_latency_held: bool,
    pub mlockall: bool,
    /// The combined histogram: (value in ns, count), ascending values.
    pub histogram: Vec<(u64, u64)>,
    /// The background load's, the steal's and the private cgroup's figures.
    #[serde(flatten)]
    pub beside: crate::families::shared::Beside,
    /// Under SCHED_DEADLINE: what the jobs did besides start late.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineFigures>,
    /// Each thread's largest samples with their times, for the spike-period analysis and
    /// the strip plot (empty in runs stored before schedlab kept them).
    #[serde(default)]
    pub outliers: Vec<ThreadOutliers>,
    /// With `--trace on`: what ran in the spikes' place, or why nothing could be said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<crate::analysis::trace::Attribution>,
}

/// A SCHED_DEADLINE latency run's jobs beyond their lateness (which is the histogram).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadlineFigures {
    /// Jobs that ended (just before yielding) after their period's start + deadline.
    pub missed_deadlines: u64,
    /// Jobs that ran past their runtime, from the kernel's SIGXCPU
    /// (SCHED_FLAG_DL_OVERRUN); `None` where the kernel does not offer it.
    pub runtime_overruns: Option<u64>,
}

/// One measuring thread's largest samples in time order: what the histogram cannot keep.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadOutliers {
    /// The CPU the thread was pinned to (none: unpinned).
    pub cpu: Option<usize>,
    /// From the thread's start to the end of its loop: the time the samples span.
    pub span_ns: u64,
    /// How many samples the buffer holds: when full, these are the largest `capacity`.
    pub capacity: usize,
    /// (time since the thread's start, latency), both ns, in time order.
    pub samples: Vec<(u64, u64)>,
}

/// The priority latency threads get under fifo/rr unless told otherwise: high, but below
/// the 99 that the kernel's own threads need.
pub const LATENCY_DEFAULT_RT_PRIO: i32 = 95;

pub const DEFAULT_LATENCY_INTERVAL_NS: u64 = 1_000_000;

pub const DEFAULT_LATENCY_DURATION: Duration = Duration::from_secs(10);

/// `--trace`'s help for latency: what its tracing describes.
const LATENCY_TRACE_HELP: &str =
    "Record the scheduler's and interrupts' tracepoints on the measured CPUs over the measured window and name \
     what ran in each late wakeup's place: the tail's culprits (root; a private tracefs instance; needs --cpus) \
     [default: off]";

/// `--period`'s help for latency: under deadline the period is the sampling interval.
const LATENCY_PERIOD_HELP: &str =
    "SCHED_DEADLINE: time between the starts of two jobs, the sampling interval (e.g. 1ms); with --policy deadline";

/// `schedlab latency` flags and latency experiment keys.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
// The derived reader reads the family's own keys for its `Deserialize` (`read_with_groups`).
#[serde(remote = "Self", rename_all = "kebab-case", default)]
// Each `mut_arg` moves its flag to the end of the list that names the suite keys in an
// error, so `period` goes first: the keys stay in flag order.
#[command(mut_arg("period", |a| a.help(LATENCY_PERIOD_HELP)), mut_arg("schedstat", |a| a.help(schedstat_help("measuring thread's"))), mut_arg("trace", |a| a.help(LATENCY_TRACE_HELP)))]
pub struct LatencyOptions {
    /// Wakeups per second (e.g. 85, 1000) [default: --interval 1ms]
    #[arg(long, value_name = "HZ", value_parser = parse_frequency, conflicts_with = "interval", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de_frequency")]
    pub freq: Option<f64>,

    /// Time between wakeups, with its unit (e.g. 1ms, 200us; at least 10us) [default: 1ms]
    #[arg(long, value_name = "TIME", value_parser = parse_interval, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_interval")]
    pub interval: Option<Duration>,

    /// Periods per thread (samples plus overruns)
    #[arg(long, value_name = "N", value_parser = parse_loops, conflicts_with = "duration", allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_loops")]
    pub loops: Option<u64>,

    /// How long to measure (at least one interval, at most 24h) [default: 10s]
    #[arg(long, value_name = "TIME", value_parser = parse_trial_duration, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_trial_duration")]
    pub duration: Option<Duration>,

    /// Scheduling policy of the measuring threads [default: other]
    #[arg(long, value_enum, conflicts_with = "compare_policies")]
    pub policy: Option<Policy>,

    /// Static priority for fifo/rr (1-99) [default: 95]
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "de_i32")]
    pub prio: Option<i32>,

    /// Measuring threads, pinned to the first N allowed CPUs [default: 1, unpinned]
    #[arg(long, value_name = "N", conflicts_with_all = ["all_cpus", "cpus"], value_parser = parse_threads)]
    #[serde(deserialize_with = "de_threads")]
    pub threads: Option<u32>,

    /// One pinned measuring thread per allowed CPU
    #[arg(long, conflicts_with = "cpus")]
    pub all_cpus: bool,

    /// One pinned measuring thread per listed CPU (e.g. 0,2 or 1-3)
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    #[serde(deserialize_with = "de_cpus")]
    pub cpus: Option<CpuList>,

    /// Do not hold /dev/cpu_dma_latency at 0: measure the machine's idle states as configured
    #[arg(long)]
    pub no_dma_latency: bool,

    /// Stop at the first sample above this many µs, and stop tracing if tracefs is mounted
    #[arg(long, value_name = "US", value_parser = parse_break_us, allow_negative_numbers = true)]
    #[serde(deserialize_with = "de_break_us")]
    pub break_us: Option<f64>,

    #[command(flatten)]
    #[serde(skip)]
    pub beside: BesideOptions,
}

read_with_groups!(LatencyOptions { beside });

impl LatencyOptions {
    pub fn interval_ns(&self) -> u64 {
        match (self.freq, self.interval) {
            (Some(hz), _) => (1e9 / hz).round() as u64,
            (None, Some(d)) => d.as_nanos().min(u128::from(u64::MAX)) as u64,
            (None, None) => DEFAULT_LATENCY_INTERVAL_NS,
        }
    }

    /// One spec per policy: `compare` (from `--compare-policies`) or the one policy.
    pub fn to_specs_comparing(&self, compare: Option<&PolicyList>) -> Result<Vec<LatencySpec>> {
        if self.freq.is_some() && self.interval.is_some() {
            return Err(Error::usage("--freq and --interval exclude each other: give one"));
        }
        if self.loops.is_some() && self.duration.is_some() {
            return Err(Error::usage("--loops and --duration exclude each other: give one"));
        }
        let placement = match (self.threads, self.all_cpus, chosen_cpus(&self.cpus, "--cpus")?) {
            (None, false, None) => Placement::Unpinned,
            (Some(n), false, None) => Placement::FirstCpus(n),
            (None, true, None) => Placement::AllCpus,
            (None, false, Some(cpus)) => Placement::Cpus(cpus),
            _ => return Err(Error::usage("--threads, --all-cpus and --cpus exclude each other: give one")),
        };
        let policies = match compare {
            Some(l) => l.0.clone(),
            None => vec![self.policy.unwrap_or(Policy::Other)],
        };
        check_prio(self.prio, &policies)?;
        let beside = BesideSpec::from_options(&self.beside, &policies)?;
        if beside.deadline.is_some() && placement != Placement::Unpinned {
            return Err(Error::usage(DEADLINE_PLACEMENT));
        }
        if beside.deadline.is_some() && policies.len() == 1 && (self.interval.is_some() || self.freq.is_some()) {
            return Err(Error::usage(
                "under --policy deadline the sampling interval is the --period: drop --interval/--freq",
            ));
        }
        let length = match (self.loops, self.duration) {
            (Some(n), _) => LatencyLength::Loops(n),
            (None, Some(d)) => LatencyLength::Duration(d),
            (None, None) => LatencyLength::Duration(DEFAULT_LATENCY_DURATION),
        };
        policies
            .into_iter()
            .map(|policy| {
                let prio = if policy.is_realtime() { self.prio.unwrap_or(LATENCY_DEFAULT_RT_PRIO) } else { 0 };
                let beside = beside.under(policy);
                let interval_ns = beside.deadline.map_or_else(|| self.interval_ns(), |d| d.period_ns);
                check_latency_length(length, interval_ns)?;
                Ok(LatencySpec {
                    interval_ns,
                    length,
                    policy,
                    prio: resolve_priority(policy, Some(prio))?,
                    placement: placement.clone(),
                    hold_dma_latency: !self.no_dma_latency,
                    break_ns: self.break_us.map(|us| (us * 1000.0) as u64),
                    beside,
                })
            })
            .collect()
    }
}

impl SpecSource for LatencyOptions {
    type Spec = LatencySpec;

    /// One spec for the one policy: a suite's (its policy axis makes one experiment a
    /// policy). The subcommand calls `to_specs_comparing`, which honours `--compare-policies`.
    fn to_specs(&self) -> Result<Vec<LatencySpec>> {
        self.to_specs_comparing(None)
    }
}

/// A latency run's length against its sampling interval: at least one period, at most
/// `MAX_TRIAL` of them.
fn check_latency_length(length: LatencyLength, interval_ns: u64) -> Result<()> {
    let interval = crate::model::format_ns(interval_ns);
    match length {
        LatencyLength::Loops(n) if n.saturating_mul(interval_ns) > max_trial_ns() => Err(Error::usage(format!(
            "--loops {n} at an interval of {interval} is {:.0} h of periods, more than the 24 h one trial may take: \
             give at most {} loops, or a --duration of 24h or less",
            n as f64 * interval_ns as f64 / 3.6e12,
            max_trial_ns() / interval_ns.max(1)
        ))),
        LatencyLength::Duration(d) if (d.as_nanos() as u64) < interval_ns => Err(Error::usage(format!(
            "--duration {} is shorter than one sampling interval ({interval}): no wakeup would be sampled; give \
             --duration {} or more (e.g. 10s), or --loops",
            duration_arg(d.as_nanos() as u64),
            duration_arg(interval_ns)
        ))),
        _ => Ok(()),
    }
}

// What schedlab 0.1.0 stored, read back (`FamilyModel::outcome_of_0_1_0`).

fn thread_stats_of_0_1_0(f: &Json) -> Option<ThreadStats> {
    Some(ThreadStats {
        cpu: f.get("cpu").and_then(Json::as_u64).map(|c| c as usize),
        samples: int(f, "samples")?,
        overruns: int(f, "overruns").unwrap_or(0),
        min_ns: int(f, "min_ns")?,
        avg_ns: f.get("avg_ns")?.as_f64()?,
        p50_ns: Some(int(f, "p50_ns")?),
        p90_ns: Some(int(f, "p90_ns")?),
        p99_ns: Some(int(f, "p99_ns")?),
        p999_ns: Some(int(f, "p999_ns")?),
        p9999_ns: Some(int(f, "p9999_ns")?),
        max_ns: int(f, "max_ns")?,
        run_delay_ns: None,
        migrations: None,
    })
}

/// The outcome 0.1.0 stored: its figures and its histogram.
pub(crate) fn outcome_of_0_1_0(f: &Json, histogram: Vec<(u64, u64)>) -> Option<LatencyOutcome> {
    let all = thread_stats_of_0_1_0(f)?;
    // Several threads: the top level is "all" and each thread is in per_thread; one
    // thread: the top level is that thread.
    let threads = match f.get("per_thread").and_then(Json::as_array) {
        Some(list) => list.iter().map(thread_stats_of_0_1_0).collect::<Option<Vec<_>>>()?,
        None => vec![all.clone()],
    };
    let all = ThreadStats { cpu: if threads.len() > 1 { None } else { all.cpu }, ..all };
    Some(LatencyOutcome {
        threads,
        all,
        timer_slack_ns: int(f, "timer_slack_ns").unwrap_or(0),
        dma_latency_held: f.get("dma_latency_held").and_then(Json::as_bool).unwrap_or(false),
        mlockall: f.get("mlockall").and_then(Json::as_bool).unwrap_or(false),
        histogram,
        beside: Default::default(),
        deadline: None,
        outliers: Vec::new(),
        attribution: None,
    })
}
