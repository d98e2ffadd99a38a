//! What a user may ask of each family, as one definition that serves twice: clap reads
//! it as the command's flags (`schedlab ring --procs 2,4`), serde reads it as a suite
//! experiment's keys (`procs = 4`). Every field is optional so that defaults are applied
//! in one place, `to_specs`, which also checks the combinations. No system calls here:
//! what needs the machine (CPUs, privileges, limits) is the preflight's job.
//!
//! Flags that families share are defined once, as groups (`LoadOptions`, `DeadlineOptions`,
//! `ObserveOptions`) that clap flattens into each family and `read_family` reads for serde,
//! and their checks are written once beside them.

use crate::error::{Error, Result};
use crate::model::load::{parse_load, LoadArg, LoadKind, LoadSpec};
use crate::model::parse::from_text::text_value;
use crate::model::parse::*;
use crate::model::spec::{LatencyLength, LatencySpec, Placement, RingLength, RingSpec, WorkloadParams, WorkloadSpec};
use crate::model::{CommandOptions, DeadlineParams, Ipc, Pin, Policy, RingMode, WorkloadKind};
use clap::Args;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value as Json};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// The NCAR study's process counts.
pub const NCAR_COUNTS: &str = "2,4,8,10,16,20,32,48,64";
pub const DEFAULT_LAPS: u64 = 10_000;
/// Samples per child that take about 0.2 s on the 2-vCPU reference machine.
pub const DEFAULT_CPU_ITERATIONS: u64 = 50_000_000;
/// mix-sched's default.
pub const DEFAULT_MIXED_ITERATIONS: u64 = 1_000;
pub const DEFAULT_TRANSFER_SIZE: u64 = 100 * 1024;
pub const DEFAULT_BLOCK_SIZE: u64 = 1024;
pub const DEFAULT_WORKLOAD_TIMEOUT: Duration = Duration::from_secs(300);
/// The priority latency threads get under fifo/rr unless told otherwise: high, but below
/// the 99 that the kernel's own threads need.
pub const LATENCY_DEFAULT_RT_PRIO: i32 = 95;
pub const DEFAULT_LATENCY_INTERVAL_NS: u64 = 1_000_000;
pub const DEFAULT_LATENCY_DURATION: Duration = Duration::from_secs(10);
/// The shortest ring `--duration`: the stop is raised by a timer in the parent, which may
/// wake tens of µs late (timer slack is 50 µs for SCHED_OTHER), and checked once a lap.
pub const MIN_RING_DURATION: Duration = Duration::from_millis(1);
/// ... and at least this much per member: one lap at a slow hop (a cross-CPU wakeup on a
/// VM), so that the duration, not the first lap, decides how long the ring runs.
pub const RING_DURATION_PER_MEMBER_NS: u64 = 10_000;
/// The fastest hop, sample or iteration one could see on any machine: a count whose trial
/// would take longer than `MAX_TRIAL` even at this speed is refused. A ring hop is ~1-3 µs
/// on the 2-vCPU reference VM, a pi sample ~4 ns, a mixed iteration (an O_SYNC write)
/// ~200 µs on its disk and ~1 µs on tmpfs.
pub const FASTEST_HOP_NS: u64 = 100;
pub const FASTEST_CPU_SAMPLE_NS: u64 = 1;
pub const FASTEST_MIXED_ITERATION_NS: u64 = 1_000;

fn max_trial_ns() -> u64 {
    MAX_TRIAL.as_nanos() as u64
}

text_value!(de_ring_procs, ProcList, parse_procs);
text_value!(de_workload_procs, ProcList, parse_workload_procs);
text_value!(de_laps, u64, parse_laps);
text_value!(de_duration, Duration, parse_duration);
text_value!(de_trial_duration, Duration, parse_trial_duration);
text_value!(de_interval, Duration, parse_interval);
text_value!(de_loops, u64, parse_loops);
text_value!(de_cpus, CpuList, parse_cpu_list);
text_value!(de_policies, PolicyList, parse_policies);
text_value!(de_iterations, u64, parse_iterations);
text_value!(de_size, u64, parse_size);
text_value!(de_frequency, f64, parse_frequency);
text_value!(de_break_us, f64, parse_break_us);
text_value!(de_i32, i32, parse_whole::<i32>);
text_value!(de_u64, u64, parse_whole::<u64>);
text_value!(de_usize, usize, parse_whole::<usize>);
text_value!(de_threads, u32, parse_threads);
text_value!(de_load, LoadArg, parse_load);
text_value!(de_reservation, u64, parse_reservation_ns);

/// Whether a reading is taken (`--schedstat on|off`, suite key `schedstat = "off"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum OnOff {
    On,
    Off,
}

/// On unless switched off.
fn reads(switch: Option<OnOff>) -> bool {
    switch != Some(OnOff::Off)
}

/// The background load beside a trial (`--load` and its three companions), worded alike in
/// ring, workload and latency (a command's are worded for a program, without `--load-dir`).
/// Like the other groups it is read within a family, which refuses keys nobody knows.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "kebab-case", default)]
pub struct LoadOptions {
    /// Background load during each trial: none, cpu, io, pipe or mixed, optionally :N instances (e.g. cpu:2) [default: none; N: one per allowed CPU]
    #[arg(long, value_name = "KIND[:N]", value_parser = parse_load)]
    #[serde(deserialize_with = "de_load")]
    pub load: Option<LoadArg>,

    /// CPUs the load may run on (e.g. 1 or 0-3) [default: every allowed CPU]
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    #[serde(deserialize_with = "de_cpus")]
    pub load_cpus: Option<CpuList>,

    /// Nice value (-20..19) of the load processes, which are always SCHED_OTHER [default: schedlab's own]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de_i32")]
    pub load_nice: Option<i32>,

    /// Where io load writes its O_SYNC files (unlinked at once, so nothing is left) [default: the temp directory]
    #[arg(long, value_name = "DIR")]
    pub load_dir: Option<PathBuf>,
}

impl LoadOptions {
    /// The load these flags ask for: see `load_spec`.
    pub fn to_spec(&self) -> Result<LoadSpec> {
        load_spec(self.load, &self.load_cpus, self.load_nice, &self.load_dir)
    }
}

/// A SCHED_DEADLINE reservation (`--runtime`, `--deadline`, `--period`), for the families
/// whose tasks take one as they are (latency's period is its sampling interval, so it
/// keeps flags of its own).
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "kebab-case", default)]
pub struct DeadlineOptions {
    /// SCHED_DEADLINE: CPU time each job may use per period (e.g. 100us); with --policy deadline
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub runtime: Option<u64>,

    /// SCHED_DEADLINE: time from a period's start by which its job must be done [default: --period]
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub deadline: Option<u64>,

    /// SCHED_DEADLINE: time between the starts of two jobs (e.g. 1ms); with --policy deadline
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub period: Option<u64>,
}

impl DeadlineOptions {
    /// The reservation for these policies: see `resolve_deadline`.
    pub fn resolve(&self, policies: &[Policy]) -> Result<Option<DeadlineParams>> {
        resolve_deadline(policies, self.runtime, self.deadline, self.period)
    }
}

/// What is read and recorded beside a trial's own figures (`--schedstat`, `--trace`). Each
/// family words their help for what it measures, with `schedstat_help` and its own trace
/// text (`mut_arg` on the family), so the fields carry no doc comment of their own.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(rename_all = "kebab-case", default)]
pub struct ObserveOptions {
    #[arg(long, value_enum, value_name = "on|off")]
    pub schedstat: Option<OnOff>,
    #[arg(long, value_enum, value_name = "on|off")]
    pub trace: Option<OnOff>,
}

impl ObserveOptions {
    /// The per-task accounting is read unless switched off.
    pub fn schedstat(&self) -> bool {
        reads(self.schedstat)
    }

    /// Tracing costs, so it is off unless switched on.
    pub fn trace(&self) -> bool {
        self.trace == Some(OnOff::On)
    }
}

/// `--schedstat`'s help, for the family whose tasks are `whose` ("member's").
fn schedstat_help(whose: &str) -> String {
    format!(
        "Read each {whose} run-queue wait and migrations from /proc at the edges of its measured window; off only to \
         measure what the reading costs (the figures are then stored as unknown) [default: on]"
    )
}

/// Reads a family's suite keys when some of its flags live in the shared groups above.
/// serde's `flatten` cannot say which keys are known (with `deny_unknown_fields` it refuses
/// `lapz` without naming `laps`), so instead every part (each group, and the family's own
/// derived reader, `remote = "Self"`) reads the same object and passes over the keys that
/// are not its own, and this refuses a key no part has with serde's own message, naming
/// every key in flag order (the family's clap arguments, whose ids are its field names).
/// Keys are first read one at a time, in the order given, so that the first bad key is the
/// one reported, as when one derived reader read them all.
fn read_family<'de, F: Args, D: Deserializer<'de>>(
    d: D,
    known: &'static OnceLock<&'static [&'static str]>,
    read: impl Fn(&Json) -> serde_json::Result<F>,
) -> std::result::Result<F, D::Error> {
    let known: &'static [&'static str] = known.get_or_init(|| {
        let flags = F::augment_args(clap::Command::new("keys"));
        // Built once per family; serde's message wants a list that lives for ever.
        let keys = flags.get_arguments().map(|a| &*Box::leak(a.get_id().as_str().replace('_', "-").into_boxed_str()));
        Box::leak(keys.collect::<Vec<&str>>().into_boxed_slice())
    });
    let keys = Map::<String, Json>::deserialize(d)?;
    for (key, value) in &keys {
        if !known.contains(&key.as_str()) {
            return Err(serde::de::Error::unknown_field(key, known));
        }
        let one = Json::Object(Map::from_iter([(key.clone(), value.clone())]));
        read(&one).map_err(serde::de::Error::custom)?;
    }
    read(&Json::Object(keys)).map_err(serde::de::Error::custom)
}

/// The `Deserialize` of a family with shared groups: each group field read by its own
/// type, the rest by the family's derived reader (see `read_family`).
macro_rules! read_with_groups {
    ($family:ident { $($group:ident),+ }) => {
        impl<'de> Deserialize<'de> for $family {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                static KEYS: OnceLock<&'static [&'static str]> = OnceLock::new();
                read_family(d, &KEYS, |keys| {
                    Ok($family { $($group: Deserialize::deserialize(keys)?,)+ ..$family::deserialize(keys)? })
                })
            }
        }
    };
}
read_with_groups!(RingOptions { background, reservation, observe });
read_with_groups!(WorkloadOptions { background, reservation, observe });
read_with_groups!(LatencyOptions { background, observe });
read_with_groups!(CommandOptions { background });

/// `--trace`'s help for ring: what its tracing describes.
const RING_TRACE_HELP: &str =
    "Record the scheduler's tracepoints on the members' CPUs over the timed region and describe the hops: wakeup \
     to running (median, p99), the share that crossed CPUs, what ran just before each member, migrations (root; a \
     private tracefs instance; process mode) [default: off]";

/// `schedlab ring` flags and ring experiment keys.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
// The derived reader reads the family's own keys for its `Deserialize` (`read_with_groups`).
#[serde(remote = "Self", rename_all = "kebab-case", default)]
#[command(mut_arg("schedstat", |a| a.help(schedstat_help("member's"))), mut_arg("trace", |a| a.help(RING_TRACE_HELP)))]
pub struct RingOptions {
    /// Ring sizes: a count (8), a list (2,4,8,16) or a range (2..=64, 2..64) [default: 2,4,8,10,16,20,32,48,64]
    #[arg(long, value_name = "LIST", value_parser = parse_procs)]
    #[serde(deserialize_with = "de_ring_procs")]
    pub procs: Option<ProcList>,

    /// Trips of the token round the ring [default: 10000]
    #[arg(long, value_name = "N", value_parser = parse_laps, conflicts_with = "duration", allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_laps")]
    pub laps: Option<u64>,

    /// Run each ring for this long instead of a fixed lap count (e.g. 5s, 500ms; at least 1 ms and 10 µs a
    /// member, at most 24h)
    #[arg(long, value_name = "TIME", value_parser = parse_trial_duration, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_trial_duration")]
    pub duration: Option<Duration>,

    /// Members as separate processes or as threads of one process [default: process]
    #[arg(long, value_enum)]
    pub mode: Option<RingMode>,

    /// How the token travels [default: pipe]
    #[arg(long, value_enum)]
    pub ipc: Option<Ipc>,

    /// same: all on one CPU; spread: round-robin over CPUs; none: the scheduler decides [default: same]
    #[arg(long, value_enum)]
    pub pin: Option<Pin>,

    /// CPUs to place members on (e.g. 0,2 or 1-3) [default: every allowed CPU]
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    #[serde(deserialize_with = "de_cpus")]
    pub cpus: Option<CpuList>,

    /// Scheduling policy of every member [default: other]
    #[arg(long, value_enum)]
    pub policy: Option<Policy>,

    /// Static priority for fifo/rr (1-99) [default: 50]
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de_i32")]
    pub prio: Option<i32>,

    /// Working set (KiB) each member reads on every hop, like lmbench's -s [default: 0]
    #[arg(long, value_name = "K")]
    #[serde(deserialize_with = "de_usize")]
    pub work_kb: Option<usize>,

    /// Kill a ring that runs longer than this and fail the run (e.g. one stopped member)
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_hyphen_values = true)]
    #[serde(deserialize_with = "de_duration")]
    pub timeout: Option<Duration>,

    #[command(flatten)]
    #[serde(skip)]
    pub background: LoadOptions,

    #[command(flatten)]
    #[serde(skip)]
    pub reservation: DeadlineOptions,

    #[command(flatten)]
    #[serde(skip)]
    pub observe: ObserveOptions,
}

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
pub struct WorkloadOptions {
    /// cpu: Monte Carlo pi; io: O_SYNC block copy; mixed: a pi sample and an 80-byte O_SYNC write per iteration
    #[arg(value_enum, required = true)]
    pub workload: Option<WorkloadKind>,

    /// Children per trial: a count (10), a list (10,50,100,500) or a range (1..=4) [default: 10]
    #[arg(long, value_name = "LIST", value_parser = parse_workload_procs)]
    #[serde(deserialize_with = "de_workload_procs")]
    pub procs: Option<ProcList>,

    /// Policies to compare: one or a list of other,fifo,rr,batch,idle,deadline [default: other]
    #[arg(long, value_name = "LIST", value_parser = parse_policies)]
    #[serde(deserialize_with = "de_policies")]
    pub policy: Option<PolicyList>,

    /// Static priority for fifo/rr (1-99) [default: 99, the maximum, as in the classic study]
    #[arg(long, value_name = "N")]
    #[serde(deserialize_with = "de_i32")]
    pub prio: Option<i32>,

    /// Nice value (-20..19) for the other and batch children
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    #[serde(deserialize_with = "de_i32")]
    pub nice: Option<i32>,

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
    pub background: LoadOptions,

    #[command(flatten)]
    #[serde(skip)]
    pub reservation: DeadlineOptions,

    #[command(flatten)]
    #[serde(skip)]
    pub observe: ObserveOptions,
}

/// `--trace`'s help for latency: what its tracing describes.
const LATENCY_TRACE_HELP: &str =
    "Record the scheduler's and interrupts' tracepoints on the measured CPUs over the measured window and name \
     what ran in each late wakeup's place: the tail's culprits (root; a private tracefs instance; needs --cpus) \
     [default: off]";

/// `schedlab latency` flags and latency experiment keys.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
// The derived reader reads the family's own keys for its `Deserialize` (`read_with_groups`).
#[serde(remote = "Self", rename_all = "kebab-case", default)]
#[command(mut_arg("schedstat", |a| a.help(schedstat_help("measuring thread's"))), mut_arg("trace", |a| a.help(LATENCY_TRACE_HELP)))]
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
    pub background: LoadOptions,

    /// SCHED_DEADLINE: CPU time each job may use per period (e.g. 100us); with --policy deadline
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub runtime: Option<u64>,

    /// SCHED_DEADLINE: time from a period's start by which its job must be done [default: --period]
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub deadline: Option<u64>,

    /// SCHED_DEADLINE: time between the starts of two jobs, the sampling interval (e.g. 1ms); with --policy deadline
    #[arg(long, value_name = "TIME", value_parser = parse_reservation_ns)]
    #[serde(deserialize_with = "de_reservation")]
    pub period: Option<u64>,

    #[command(flatten)]
    #[serde(skip)]
    pub observe: ObserveOptions,
}

impl RingOptions {
    /// One spec per ring size, in ascending order (the first is the projection's base).
    pub fn to_specs(&self) -> Result<Vec<RingSpec>> {
        let policy = self.policy.unwrap_or(Policy::Other);
        let prio = resolve_priority(policy, self.prio)?;
        let deadline = self.reservation.resolve(&[policy])?;
        if deadline.is_some() && (matches!(self.pin, Some(Pin::Same | Pin::Spread)) || self.cpus.is_some()) {
            return Err(Error::usage(DEADLINE_PLACEMENT));
        }
        // A deadline task may not be pinned to part of its root domain, so its members
        // are left to the scheduler.
        let pin = self.pin.unwrap_or(if deadline.is_some() { Pin::None } else { Pin::Same });
        let work_kb = self.work_kb.unwrap_or(0);
        if work_kb > MAX_WORK_KB {
            return Err(Error::usage(format!("--work-kb {work_kb} is more than the 1 GiB per member schedlab allows")));
        }
        if matches!(&self.cpus, Some(c) if c.0.is_empty()) {
            return Err(Error::usage("--cpus names no CPU"));
        }
        let length = match (self.laps, self.duration) {
            (Some(_), Some(_)) => return Err(Error::usage("--laps and --duration exclude each other: give one")),
            (_, Some(d)) => RingLength::Duration(d),
            (Some(l), None) => RingLength::Laps(l),
            (None, None) => RingLength::Laps(DEFAULT_LAPS),
        };
        let procs = match &self.procs {
            Some(p) => p.0.clone(),
            None => parse_procs(NCAR_COUNTS).map_err(Error::usage)?.0,
        };
        let load = self.background.to_spec()?;
        let largest = procs.iter().copied().max().unwrap_or(2);
        match length {
            RingLength::Laps(laps) => {
                let most_laps = max_trial_ns() / FASTEST_HOP_NS / largest as u64;
                if laps > most_laps {
                    return Err(Error::usage(format!(
                        "--laps {laps} with {largest} members is {} hops, more than 24 h even at 100 ns a \
                         hop (~1-3 µs on a 2-vCPU VM): give at most {most_laps} laps, or --duration",
                        laps.saturating_mul(largest as u64)
                    )));
                }
            }
            RingLength::Duration(d) => {
                let floor_ns = (MIN_RING_DURATION.as_nanos() as u64)
                    .max(RING_DURATION_PER_MEMBER_NS.saturating_mul(largest as u64));
                if (d.as_nanos() as u64) < floor_ns {
                    return Err(Error::usage(format!(
                        "--duration {} is too short to time a ring of {largest} members: the stop is checked once a \
                         lap ({largest} hops of up to ~10 µs each) and raised by a timer that may wake tens of µs \
                         late; give --duration {} or more (at least 1 ms, and 10 µs a member), or --laps",
                        duration_arg(d.as_nanos() as u64),
                        duration_arg(round_up_2_digits(floor_ns))
                    )));
                }
                if let Some(timeout) = self.timeout.filter(|t| *t <= d) {
                    return Err(Error::usage(format!(
                        "--timeout {} is not longer than --duration {}: every ring would be killed before it ends; \
                         give --timeout {} or more, or drop it",
                        duration_arg(timeout.as_nanos() as u64),
                        duration_arg(d.as_nanos() as u64),
                        duration_arg((d + d / 2 + Duration::from_secs(1)).as_secs() * 1_000_000_000)
                    )));
                }
            }
        }
        Ok(procs
            .into_iter()
            .map(|procs| RingSpec {
                procs,
                length,
                mode: self.mode.unwrap_or(RingMode::Process),
                ipc: self.ipc.unwrap_or(Ipc::Pipe),
                pin,
                cpus: self.cpus.as_ref().map(|c| c.0.clone()),
                policy,
                prio,
                work_kb,
                timeout: self.timeout,
                load: load.clone(),
                deadline,
                schedstat: self.observe.schedstat(),
                trace: self.observe.trace(),
            })
            .collect())
    }
}

impl WorkloadOptions {
    /// One spec per policy x procs cell, policies in the order given, counts ascending.
    pub fn to_specs(&self) -> Result<Vec<WorkloadSpec>> {
        let kind = self.workload.ok_or_else(|| {
            Error::usage("a workload needs its kind: cpu, io or mixed (workload = \"cpu\" in a suite)")
        })?;
        let policies = self.policy.as_ref().map_or(vec![Policy::Other], |p| p.0.clone());
        check_prio(self.prio, &policies)?;
        let deadline = self.reservation.resolve(&policies)?;
        check_nice(self.nice, &policies)?;
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
        let load = self.background.to_spec()?;
        let mut specs = Vec::new();
        for &policy in &policies {
            let prio = if policy.is_realtime() { resolve_priority(policy, self.prio.or(Some(99)))? } else { 0 };
            let nice = self.nice.filter(|_| policy.takes_nice());
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
                    load: load.clone(),
                    deadline: deadline.filter(|_| policy.is_deadline()),
                    schedstat: self.observe.schedstat(),
                    trace: self.observe.trace(),
                });
            }
        }
        Ok(specs)
    }
}

impl LatencyOptions {
    pub fn interval_ns(&self) -> u64 {
        match (self.freq, self.interval) {
            (Some(hz), _) => (1e9 / hz).round() as u64,
            (None, Some(d)) => d.as_nanos().min(u128::from(u64::MAX)) as u64,
            (None, None) => DEFAULT_LATENCY_INTERVAL_NS,
        }
    }

    /// One spec per policy: `compare` (from `--compare-policies`) or the one policy.
    pub fn to_specs(&self, compare: Option<&PolicyList>) -> Result<Vec<LatencySpec>> {
        if self.freq.is_some() && self.interval.is_some() {
            return Err(Error::usage("--freq and --interval exclude each other: give one"));
        }
        if self.loops.is_some() && self.duration.is_some() {
            return Err(Error::usage("--loops and --duration exclude each other: give one"));
        }
        let placement = match (self.threads, self.all_cpus, &self.cpus) {
            (None, false, None) => Placement::Unpinned,
            (Some(n), false, None) => Placement::FirstCpus(n),
            (None, true, None) => Placement::AllCpus,
            (None, false, Some(list)) if !list.0.is_empty() => Placement::Cpus(list.0.clone()),
            (None, false, Some(_)) => return Err(Error::usage("--cpus names no CPU")),
            _ => return Err(Error::usage("--threads, --all-cpus and --cpus exclude each other: give one")),
        };
        let policies = match compare {
            Some(l) => l.0.clone(),
            None => vec![self.policy.unwrap_or(Policy::Other)],
        };
        check_prio(self.prio, &policies)?;
        let deadline = resolve_deadline(&policies, self.runtime, self.deadline, self.period)?;
        if deadline.is_some() && placement != Placement::Unpinned {
            return Err(Error::usage(DEADLINE_PLACEMENT));
        }
        if deadline.is_some() && policies.len() == 1 && (self.interval.is_some() || self.freq.is_some()) {
            return Err(Error::usage(
                "under --policy deadline the sampling interval is the --period: drop --interval/--freq",
            ));
        }
        let length = match (self.loops, self.duration) {
            (Some(n), _) => LatencyLength::Loops(n),
            (None, Some(d)) => LatencyLength::Duration(d),
            (None, None) => LatencyLength::Duration(DEFAULT_LATENCY_DURATION),
        };
        let load = self.background.to_spec()?;
        policies
            .into_iter()
            .map(|policy| {
                let prio = if policy.is_realtime() { self.prio.unwrap_or(LATENCY_DEFAULT_RT_PRIO) } else { 0 };
                let deadline = deadline.filter(|_| policy.is_deadline());
                let interval_ns = deadline.map_or_else(|| self.interval_ns(), |d| d.period_ns);
                check_latency_length(length, interval_ns)?;
                Ok(LatencySpec {
                    interval_ns,
                    length,
                    policy,
                    prio: resolve_priority(policy, Some(prio))?,
                    placement: placement.clone(),
                    hold_dma_latency: !self.no_dma_latency,
                    break_ns: self.break_us.map(|us| (us * 1000.0) as u64),
                    load: load.clone(),
                    deadline,
                    schedstat: self.observe.schedstat(),
                    trace: self.observe.trace(),
                })
            })
            .collect()
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

/// `--prio` sets a static priority, which only fifo and rr have.
pub(crate) fn check_prio(prio: Option<i32>, policies: &[Policy]) -> Result<()> {
    if prio.is_some() && !policies.iter().any(|p| p.is_realtime()) {
        return Err(Error::usage("--prio applies only to fifo and rr, and no real-time policy was chosen"));
    }
    Ok(())
}

/// `--nice` within the kernel's range, and for a policy that takes one.
pub(crate) fn check_nice(nice: Option<i32>, policies: &[Policy]) -> Result<()> {
    let Some(nice) = nice else { return Ok(()) };
    if !(-20..=19).contains(&nice) {
        return Err(Error::usage(format!("--nice {nice} is out of range: use -20 to 19")));
    }
    if !policies.iter().any(|p| p.takes_nice()) {
        return Err(Error::usage("--nice applies only to other and batch, and neither was chosen"));
    }
    Ok(())
}

/// The load a trial runs beside it, from `--load`, `--load-cpus`, `--load-nice` and
/// `--load-dir`. Without a load the other three are ignored, so a suite may vary
/// `load = ["none", "cpu"]` with `load_cpus` set once for the experiment.
pub(crate) fn load_spec(
    load: Option<LoadArg>,
    cpus: &Option<CpuList>,
    nice: Option<i32>,
    dir: &Option<PathBuf>,
) -> Result<LoadSpec> {
    let Some(arg) = load.filter(|a| a.kind != LoadKind::None) else { return Ok(LoadSpec::default()) };
    if let Some(nice) = nice.filter(|n| !(-20..=19).contains(n)) {
        return Err(Error::usage(format!("--load-nice {nice} is out of range: use -20 to 19")));
    }
    if matches!(cpus, Some(c) if c.0.is_empty()) {
        return Err(Error::usage("--load-cpus names no CPU"));
    }
    if dir.is_some() && !arg.kind.writes_files() {
        return Err(Error::usage("--load-dir applies only to the io and mixed loads, which write files"));
    }
    Ok(LoadSpec {
        kind: arg.kind,
        instances: arg.instances,
        cpus: cpus.as_ref().map(|c| c.0.clone()),
        nice,
        dir: dir.clone(),
    })
}

/// Why deadline tasks are never pinned: the kernel's rule, and what schedlab does instead.
pub const DEADLINE_PLACEMENT: &str = "--policy deadline cannot be pinned: the kernel refuses SCHED_DEADLINE to a task \
     whose CPU affinity is narrower than its root domain (every online CPU unless exclusive cpusets split it), so \
     schedlab leaves deadline tasks to the scheduler. Drop --cpus/--threads/--all-cpus/--pin same|spread, or give \
     the run its own root domain with an exclusive cpuset and run schedlab inside it";

/// The reservation the deadline flags ask for: checked against each other and the kernel's
/// 1024 ns minimum, and refused when no deadline policy was chosen (or the reverse).
pub fn resolve_deadline(
    policies: &[Policy],
    runtime: Option<u64>,
    deadline: Option<u64>,
    period: Option<u64>,
) -> Result<Option<DeadlineParams>> {
    let wanted = policies.iter().any(|p| p.is_deadline());
    if !wanted {
        if runtime.is_some() || deadline.is_some() || period.is_some() {
            return Err(Error::usage(
                "--runtime, --deadline and --period apply only to --policy deadline, and it was not chosen",
            ));
        }
        return Ok(None);
    }
    let (Some(runtime_ns), Some(period_ns)) = (runtime, period) else {
        return Err(Error::usage(
            "--policy deadline needs --runtime and --period (e.g. --runtime 100us --period 1ms; --deadline defaults \
             to the period)",
        ));
    };
    let deadline_ns = deadline.unwrap_or(period_ns);
    let min = DeadlineParams::MIN_NS;
    if runtime_ns < min {
        return Err(Error::usage(format!(
            "--runtime {runtime_ns} ns is below the kernel's minimum of {min} ns for SCHED_DEADLINE"
        )));
    }
    if runtime_ns > deadline_ns {
        return Err(Error::usage(format!(
            "--runtime {} is longer than --deadline {}: the kernel needs runtime <= deadline <= period",
            crate::model::format_ns(runtime_ns),
            crate::model::format_ns(deadline_ns)
        )));
    }
    if deadline_ns > period_ns {
        return Err(Error::usage(format!(
            "--deadline {} is longer than --period {}: the kernel needs runtime <= deadline <= period",
            crate::model::format_ns(deadline_ns),
            crate::model::format_ns(period_ns)
        )));
    }
    Ok(Some(DeadlineParams { runtime_ns, deadline_ns, period_ns }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(text: &str) -> Result<Vec<WorkloadSpec>> {
        let options: WorkloadOptions = toml::from_str(text).map_err(|e| Error::usage(e.to_string()))?;
        options.to_specs()
    }

    #[test]
    fn ring_specs_are_ascending_with_defaults() {
        let options = RingOptions {
            procs: Some(parse_procs("8,2").unwrap()),
            policy: Some(Policy::Rr),
            ..RingOptions::default()
        };
        let specs = options.to_specs().unwrap();
        assert_eq!(specs.iter().map(|s| s.procs).collect::<Vec<_>>(), vec![2, 8]);
        assert_eq!(specs[0].length, RingLength::Laps(DEFAULT_LAPS));
        assert_eq!((specs[0].prio, specs[0].pin), (50, Pin::Same));
        assert_eq!(RingOptions::default().to_specs().unwrap().len(), 9, "the NCAR sweep");
    }

    #[test]
    fn suite_keys_go_through_the_command_line_parsers() {
        let options: RingOptions = toml::from_str("procs = 4\nlaps = \"1_000\"\nwork-kb = 8\npin = \"none\"").unwrap();
        let spec = &options.to_specs().unwrap()[0];
        assert_eq!((spec.procs, spec.length, spec.work_kb, spec.pin), (4, RingLength::Laps(1000), 8, Pin::None));
        let err = toml::from_str::<RingOptions>("procs = 1").unwrap_err().to_string();
        assert!(err.contains("at least 2"), "{err}");
        let err = toml::from_str::<RingOptions>("lapz = 1").unwrap_err().to_string();
        assert!(err.contains("unknown field") && err.contains("laps"), "{err}");
    }

    #[test]
    fn shared_groups_read_within_their_family_which_names_every_key() {
        let ring: RingOptions =
            toml::from_str("load = \"cpu\"\nperiod = \"1ms\"\ntrace = \"on\"\nwork-kb = 8").unwrap();
        assert_eq!(ring.background.load.map(|l| l.kind), Some(LoadKind::Cpu));
        assert_eq!((ring.reservation.period, ring.observe.trace(), ring.work_kb), (Some(1_000_000), true, Some(8)));
        let err = toml::from_str::<LatencyOptions>("loopz = 1").unwrap_err().to_string();
        let listed = "`break-us`, `load`, `load-cpus`, `load-nice`, `load-dir`, `runtime`, `deadline`, `period`, \
                      `schedstat`, `trace`";
        assert!(err.contains("unknown field `loopz`, expected one of `freq`") && err.contains(listed), "{err}");
        // The first bad key (in the reader's order) is the one named, whichever part reads it.
        let err = toml::from_str::<WorkloadOptions>("load-nice = \"x\"\nworkers = 1").unwrap_err().to_string();
        assert!(err.contains("not a whole number"), "{err}");
        let err = toml::from_str::<WorkloadOptions>("kind = 1\nload-nice = \"x\"").unwrap_err().to_string();
        assert!(err.contains("unknown field `kind`"), "{err}");
    }

    #[test]
    fn every_number_reads_from_text_too_and_ranges_hold_in_suites() {
        let ring: RingOptions = toml::from_str("prio = \"80\"\npolicy = \"fifo\"\nwork-kb = \"8\"").unwrap();
        assert_eq!((ring.prio, ring.work_kb), (Some(80), Some(8)));
        let workload: WorkloadOptions = toml::from_str("seed = \"42\"\nnice = -5").unwrap();
        assert_eq!((workload.seed, workload.nice), (Some(42), Some(-5)));
        for bad in ["threads = 0", "threads = 5000", "threads = \"two\""] {
            assert!(toml::from_str::<LatencyOptions>(bad).is_err(), "{bad}");
        }
        assert_eq!(toml::from_str::<LatencyOptions>("threads = 2").unwrap().threads, Some(2));
    }

    #[test]
    fn workload_specs_cross_policies_and_counts() {
        let specs = workload("workload = \"cpu\"\nprocs = \"4,2\"\npolicy = \"other,fifo\"").unwrap();
        let cells: Vec<(Policy, usize, i32)> = specs.iter().map(|s| (s.policy, s.procs, s.prio)).collect();
        assert_eq!(
            cells,
            vec![(Policy::Other, 2, 0), (Policy::Other, 4, 0), (Policy::Fifo, 2, 99), (Policy::Fifo, 4, 99)]
        );
        assert_eq!(specs[0].params.iterations, DEFAULT_CPU_ITERATIONS);
        let mixed = workload("workload = \"mixed\"\npolicy = \"rr\"\nprio = 10").unwrap();
        assert_eq!((mixed[0].prio, mixed[0].params.iterations), (10, DEFAULT_MIXED_ITERATIONS));
    }

    #[test]
    fn workload_refuses_bad_combinations() {
        let err = |text: &str| workload(&format!("{text}\n")).unwrap_err().to_string();
        assert!(err("workload = \"io\"\nblock-size = \"4KiB\"\ntransfer-size = \"1KiB\"").contains("larger than"));
        assert!(err("workload = \"io\"\nblock-size = 1000\ntransfer-size = 2500").contains("not a multiple"));
        assert!(err("workload = \"cpu\"\nprio = 50").contains("no real-time policy"));
        assert!(err("workload = \"cpu\"\npolicy = \"fifo\"\nnice = 5").contains("neither was chosen"));
        assert!(err("workload = \"cpu\"\nnice = 30").contains("out of range"));
        assert!(err("workload = \"cpu\"\ndir = \"/tmp\"").contains("only to the io and mixed"));
        assert!(err("workload = \"cpu\"\nprocs = 0").contains("at least 1"));
        assert!(err("workload = \"gpu\"").contains("unknown variant"));
        assert!(err("procs = 2").contains("needs its kind"));
    }

    #[test]
    fn load_keys_make_a_load_spec_and_are_ignored_without_a_load() {
        let loaded: LatencyOptions = toml::from_str("load = \"io:2\"\nload-cpus = \"1\"\nload-nice = 5").unwrap();
        let spec = &loaded.to_specs(None).unwrap()[0];
        assert_eq!(
            spec.load,
            LoadSpec { kind: LoadKind::Io, instances: Some(2), cpus: Some(vec![1]), nice: Some(5), dir: None }
        );
        let idle: RingOptions = toml::from_str("procs = 2\nload = \"none\"\nload-cpus = \"1\"").unwrap();
        assert!(idle.to_specs().unwrap()[0].load.is_none());
        let err = |text: &str| toml::from_str::<WorkloadOptions>(text).map(|o| o.to_specs().map(|_| ()));
        assert!(err("workload = \"cpu\"\nload = \"gpu\"").unwrap_err().to_string().contains("unknown load kind"));
        assert!(err("workload = \"cpu\"\nload = \"cpu:0\"").unwrap_err().to_string().contains("at least 1"));
        let refused = |text: &str| err(text).unwrap().unwrap_err().to_string();
        assert!(refused("workload = \"cpu\"\nload = \"cpu\"\nload-nice = 20").contains("out of range"));
        assert!(refused("workload = \"cpu\"\nload = \"cpu\"\nload-dir = \"/tmp\"").contains("only to the io and mixed"));
    }

    #[test]
    fn deadline_reservations_reach_the_deadline_specs_alone() {
        let ms = 1_000_000;
        let ring: RingOptions =
            toml::from_str("policy = \"deadline\"\nruntime = \"100us\"\nperiod = \"1ms\"\nprocs = 2").unwrap();
        let spec = &ring.to_specs().unwrap()[0];
        let want = DeadlineParams { runtime_ns: 100_000, deadline_ns: ms, period_ns: ms };
        assert_eq!((spec.deadline, spec.pin, spec.prio), (Some(want), Pin::None, 0), "deadline defaults to the period");
        let specs = workload(
            "workload = \"cpu\"\npolicy = \"other,deadline\"\nruntime = \"1ms\"\ndeadline = \"2ms\"\nperiod = \"3ms\"",
        )
        .unwrap();
        let got: Vec<_> = specs.iter().map(|s| (s.policy, s.deadline.map(|d| d.deadline_ns))).collect();
        assert_eq!(got, vec![(Policy::Other, None), (Policy::Deadline, Some(2 * ms))]);
        let latency = LatencyOptions {
            runtime: Some(100_000),
            period: Some(2 * ms),
            interval: Some(std::time::Duration::from_millis(1)),
            ..LatencyOptions::default()
        };
        let both = PolicyList(vec![Policy::Fifo, Policy::Deadline]);
        let specs = latency.to_specs(Some(&both)).unwrap();
        assert_eq!((specs[0].interval_ns, specs[0].deadline), (ms, None));
        assert_eq!(specs[1].interval_ns, 2 * ms, "a deadline run samples once a period");
        let err = |r: Option<u64>, d: Option<u64>, p: Option<u64>| {
            resolve_deadline(&[Policy::Deadline], r, d, p).unwrap_err().to_string()
        };
        assert!(err(Some(2 * ms), Some(ms), Some(3 * ms)).contains("longer than --deadline"));
        assert!(err(Some(ms), Some(3 * ms), Some(2 * ms)).contains("longer than --period"));
        assert!(err(Some(1023), None, Some(ms)).contains("1024 ns"));
        assert!(err(None, None, Some(ms)).contains("needs --runtime and --period"));
        assert!(resolve_deadline(&[Policy::Fifo], None, Some(ms), None)
            .unwrap_err()
            .to_string()
            .contains("apply only"));
        assert_eq!(resolve_deadline(&[Policy::Other], None, None, None).unwrap(), None);
    }

    #[test]
    fn ring_lengths_must_be_timeable_and_end_within_a_day() {
        let err = |text: &str| toml::from_str::<RingOptions>(text).unwrap().to_specs().unwrap_err().to_string();
        let e = err("procs = 2\nduration = \"500us\"");
        assert!(
            e.contains("too short to time a ring of 2 members") && e.contains("give --duration 1ms or more"),
            "{e}"
        );
        // 10 µs a member: 1000 members need 10 ms.
        let e = err("procs = \"2,1000\"\nduration = \"5ms\"");
        assert!(e.contains("ring of 1000 members") && e.contains("--duration 10ms or more"), "{e}");
        let ok: RingOptions = toml::from_str("procs = 64\nduration = \"1ms\"").unwrap();
        assert_eq!(ok.to_specs().unwrap()[0].length, RingLength::Duration(Duration::from_millis(1)));
        let e = err("procs = 64\nlaps = 1_000_000_000_000");
        assert!(e.contains("more than 24 h even at 100 ns a hop") && e.contains("at most 13500000000 laps"), "{e}");
        let most: RingOptions = toml::from_str("procs = 64\nlaps = 13_500_000_000").unwrap();
        assert!(most.to_specs().is_ok());
        let e = err("procs = 2\nduration = \"2s\"\ntimeout = \"2s\"");
        assert!(
            e.contains("--timeout 2s is not longer than --duration 2s") && e.contains("--timeout 4s or more"),
            "{e}"
        );
    }

    #[test]
    fn latency_lengths_hold_at_least_one_period_and_at_most_a_day() {
        let err = |text: &str| toml::from_str::<LatencyOptions>(text).unwrap().to_specs(None).unwrap_err().to_string();
        let e = err("interval = \"5ms\"\nduration = \"1ms\"");
        assert!(e.contains("shorter than one sampling interval (5 ms)") && e.contains("--duration 5ms or more"), "{e}");
        let e = err("interval = \"1ms\"\nloops = 100_000_000_000");
        assert!(e.contains("more than the 24 h") && e.contains("at most 86400000 loops"), "{e}");
        let e = err("freq = 0.00001");
        assert!(e.contains("shorter than one sampling interval"), "a 27 h period against the default 10 s: {e}");
        let day: LatencyOptions = toml::from_str("interval = \"1ms\"\nloops = 86_400_000").unwrap();
        assert!(day.to_specs(None).is_ok());
        for bad in ["interval = 5", "interval = \"9us\"", "loops = 0", "duration = \"25h\"", "freq = 200000"] {
            assert!(toml::from_str::<LatencyOptions>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn workload_iterations_end_within_a_day() {
        let e = workload("workload = \"cpu\"\niterations = 100_000_000_000_000").unwrap_err().to_string();
        assert!(e.contains("more than 24 h even at 1 ns a sample") && e.contains("at most 86400000000000"), "{e}");
        let e = workload("workload = \"mixed\"\niterations = 100_000_000_000").unwrap_err().to_string();
        assert!(e.contains("each mixed child") && e.contains("at most 86400000000"), "{e}");
        assert!(workload("workload = \"cpu\"\niterations = 86_400_000_000_000").is_ok());
        // io ignores iterations; its length is bounded by the 1 GiB transfer.
        assert!(workload("workload = \"io\"\niterations = 100_000_000_000_000").is_ok());
    }

    #[test]
    fn latency_specs_one_per_policy() {
        let options = LatencyOptions { prio: Some(80), ..LatencyOptions::default() };
        let both = PolicyList(vec![Policy::Other, Policy::Fifo]);
        let specs = options.to_specs(Some(&both)).unwrap();
        assert_eq!(
            specs.iter().map(|s| (s.policy, s.prio)).collect::<Vec<_>>(),
            [(Policy::Other, 0), (Policy::Fifo, 80)]
        );
        assert!(options.to_specs(None).unwrap_err().to_string().contains("no real-time policy"));
        let fast = LatencyOptions { freq: Some(85.0), loops: Some(850), ..LatencyOptions::default() };
        let spec = &fast.to_specs(None).unwrap()[0];
        assert_eq!(
            (spec.interval_ns, spec.length, &spec.placement),
            (11_764_706, LatencyLength::Loops(850), &Placement::Unpinned)
        );
    }
}
