//! The ring family's model: its options (flags and suite keys), its validated spec, its
//! outcome in integer ns, and its figures in the registry.

use crate::model::legacy::{int, ns, usage, Json};
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

/// Where ring members (or workload children, or latency threads) may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Pin {
    /// All on one CPU: every hop is a switch on that CPU, no cross-CPU wakeups.
    Same,
    /// Round-robin over the chosen CPUs.
    Spread,
    /// Left to the scheduler (restricted to `--cpus` when given).
    None,
}

impl Pin {
    pub fn as_str(self) -> &'static str {
        match self {
            Pin::Same => "same",
            Pin::Spread => "spread",
            Pin::None => "none",
        }
    }
}

/// Ring members as separate processes (separate address spaces, like the classic) or as
/// threads of one process (no address-space switch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RingMode {
    Process,
    Thread,
}

impl RingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            RingMode::Process => "process",
            RingMode::Thread => "thread",
        }
    }
}

/// How the token travels from one member to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Ipc {
    /// A one-byte read/write through a pipe: the NCAR `pipeline` and lmbench way.
    Pipe,
    /// An 8-byte counter through an eventfd.
    Eventfd,
    /// A word in shared memory, waited on and woken with futex(2).
    Futex,
}

impl Ipc {
    pub fn as_str(self) -> &'static str {
        match self {
            Ipc::Pipe => "pipe",
            Ipc::Eventfd => "eventfd",
            Ipc::Futex => "futex",
        }
    }
}

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
    /// The load, reservation and scheduler readings of ring, workload and latency specs;
    /// flattened last, where these keys have always stood.
    #[serde(flatten)]
    pub beside: BesideSpec,
}

/// What one ring configuration measured. Times are of the timed region only: from the
/// first member's first receipt of the token until the STOP that follows the last lap
/// reaches the last member (`hops = laps * procs + procs - 1`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RingOutcome {
    pub procs: usize,
    /// The CPU of each member, in ring order (empty when not pinned).
    pub member_cpus: Vec<usize>,
    pub laps: u64,
    pub hops: u64,
    pub real_ns: u64,
    /// User, system time and switches summed over all members for the timed region.
    pub usage: Usage,
    /// Largest resident set of any member (KiB).
    pub member_maxrss_kb: u64,
    /// Cost of one token pass inside a single task (no switch), in picoseconds.
    pub overhead_ps: u64,
    /// From the first fork to every member ready (not part of the timed region).
    pub spawn_ns: u64,
    /// From the end of the timed region to every member reaped.
    pub teardown_ns: u64,
    /// The background load's, the steal's and the private cgroup's figures.
    #[serde(flatten)]
    pub beside: crate::families::shared::Beside,
    /// Run-queue wait summed over the members, each from just before it first waits for
    /// the token to its leaving (`/proc/<tid>/schedstat`); unknown where the kernel lacks it or
    /// `--schedstat off`. Older stored runs have none.
    #[serde(default)]
    pub run_delay_ns: Option<u64>,
    /// CPU-to-CPU moves summed over the members in the same windows (`se.nr_migrations`).
    #[serde(default)]
    pub migrations: Option<u64>,
    /// The members' schedstat windows summed (wall time): the most run-queue wait there
    /// could be. Unknown with `--schedstat off` and in older stored runs. Kept in the stored
    /// outcome only, beside the wait it bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_window_ns: Option<u64>,
    /// With `--trace on`: the hops as the scheduler saw them, or why they are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::analysis::offcpu::HopTrace>,
}

impl RingOutcome {
    pub fn cpu_ns(&self) -> u64 {
        self.usage.cpu_ns()
    }

    pub fn ns_per_hop(&self) -> f64 {
        self.real_ns as f64 / self.hops as f64
    }

    pub fn overhead_ns(&self) -> f64 {
        self.overhead_ps as f64 / 1000.0
    }

    /// lat_ctx's figure: the hop cost less what passing the token costs without a switch.
    pub fn ns_per_switch(&self) -> f64 {
        self.ns_per_hop() - self.overhead_ns()
    }

    /// CPU ns per hop: what the NCAR projection scales.
    pub fn cpu_ns_per_hop(&self) -> f64 {
        self.cpu_ns() as f64 / self.hops as f64
    }

    /// Run-queue wait per hop: the part of a hop the woken member spent runnable but not
    /// yet running (near zero on one CPU; with `--pin none` the cross-CPU wakeup).
    pub fn run_delay_ns_per_hop(&self) -> Option<f64> {
        Some(self.run_delay_ns? as f64 / self.hops as f64)
    }
}

/// The NCAR study's process counts.
pub const NCAR_COUNTS: &str = "2,4,8,10,16,20,32,48,64";

pub const DEFAULT_LAPS: u64 = 10_000;

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
    pub beside: BesideOptions,
}

read_with_groups!(RingOptions { beside });

impl SpecSource for RingOptions {
    type Spec = RingSpec;

    /// One spec per ring size, in ascending order (the first is the projection's base).
    fn to_specs(&self) -> Result<Vec<RingSpec>> {
        let policy = self.policy.unwrap_or(Policy::Other);
        let prio = resolve_priority(policy, self.prio)?;
        let beside = BesideSpec::from_options(&self.beside, &[policy])?;
        if beside.deadline.is_some() && (matches!(self.pin, Some(Pin::Same | Pin::Spread)) || self.cpus.is_some()) {
            return Err(Error::usage(DEADLINE_PLACEMENT));
        }
        // A deadline task may not be pinned to part of its root domain, so its members
        // are left to the scheduler.
        let pin = self.pin.unwrap_or(if beside.deadline.is_some() { Pin::None } else { Pin::Same });
        let work_kb = self.work_kb.unwrap_or(0);
        if work_kb > MAX_WORK_KB {
            return Err(Error::usage(format!("--work-kb {work_kb} is more than the 1 GiB per member schedlab allows")));
        }
        let cpus = chosen_cpus(&self.cpus, "--cpus")?;
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
                cpus: cpus.clone(),
                policy,
                prio,
                work_kb,
                timeout: self.timeout,
                beside: beside.clone(),
            })
            .collect())
    }
}

// What schedlab 0.1.0 stored, read back (`FamilyModel::outcome_of_0_1_0`).

/// The outcome 0.1.0 stored as its figures.
pub(crate) fn outcome_of_0_1_0(f: &Json) -> Option<RingOutcome> {
    let usage = usage(f)?;
    Some(RingOutcome {
        procs: int(f, "procs")? as usize,
        member_cpus: f
            .get("cpus")
            .and_then(Json::as_array)
            .map(|a| a.iter().filter_map(Json::as_u64).map(|c| c as usize).collect())
            .unwrap_or_default(),
        laps: int(f, "laps")?,
        hops: int(f, "hops")?,
        real_ns: ns(f, "real_s")?,
        member_maxrss_kb: usage.maxrss_kb,
        usage,
        overhead_ps: (f.get("overhead_ns")?.as_f64()? * 1000.0).round() as u64,
        spawn_ns: ns(f, "spawn_s").unwrap_or(0),
        teardown_ns: ns(f, "teardown_s").unwrap_or(0),
        beside: Default::default(),
        // Format 1 predates the scheduler's per-task figures: unknown.
        run_delay_ns: None,
        migrations: None,
        sched_window_ns: None,
        trace: None,
    })
}
