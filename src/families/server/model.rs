//! The server family's model: a request-serving workload in schbench's shape (message
//! threads that hand requests to their workers at an open-loop rate; each request a think
//! time and CPU work, optionally under a per-CPU lock), run under one policy per trial;
//! its options, spec, outcome and figures.

use crate::error::{Error, Result};
use crate::families::shared::SpecSource;
use crate::model::load::LoadSpec;
use crate::model::options::{
    check_nice, check_prio, chosen_cpus, de_cpus, de_duration, read_family, read_with_groups, LoadOptions,
    PolicyOptions,
};
use crate::model::parse::from_text::text_value;
use crate::model::parse::*;
use crate::model::{format_ns, Policy};
use clap::Args;
use serde::{Deserialize, Deserializer, Serialize};
use std::sync::OnceLock;
use std::time::Duration;

/// How long each trial serves requests unless told otherwise.
pub const DEFAULT_SERVER_DURATION: Duration = Duration::from_secs(5);
/// The CPU work of a request unless told otherwise.
pub const DEFAULT_WORK: Duration = Duration::from_millis(1);
/// Workers per message thread unless told otherwise.
pub const DEFAULT_WORKERS: u32 = 2;
/// The most message threads, and the most workers per message thread.
pub const MAX_THREADS: u32 = 64;
/// The most threads of a trial in all (each worker keeps two histograms).
pub const MAX_ALL_THREADS: u32 = 512;
/// The highest rate: a request every microsecond.
pub const MAX_RPS: u64 = 1_000_000;
/// How long after every thread is ready the first requests go out.
pub const START_DELAY_NS: u64 = 20_000_000;
/// How long past the window's end a late message thread still sends what was due in it.
pub const CATCH_UP_NS: u64 = 100_000_000;
/// One `--target-util` probe.
pub const PROBE_NS: u64 = 400_000_000;
/// The most `--target-util` probes before the closest one's rate is taken.
pub const MAX_PROBES: usize = 4;
/// Under `--target-util`, think + work must leave a probe room for several requests a worker.
pub const MAX_PROBED_REQUEST_NS: u64 = PROBE_NS / 4;

/// `--threads M` / `--workers T`: 1 to 64.
fn parse_thread_count(text: &str) -> std::result::Result<u32, String> {
    match parse_whole::<u32>(text)? {
        n @ 1..=MAX_THREADS => Ok(n),
        n => Err(format!("{n} is out of range: give 1 to {MAX_THREADS}")),
    }
}

/// `--rps N`: whole requests per second, at least 1.
fn parse_rps(text: &str) -> std::result::Result<u64, String> {
    let n: u64 = parse_whole(text).map_err(|_| format!("'{text}' is not a whole number of requests per second"))?;
    match n {
        0 => Err("a rate of 0 sends no request: give --rps 1 or more (e.g. 100), or --target-util 50%".to_string()),
        n if n > MAX_RPS => Err(format!("{n} requests per second is above the {MAX_RPS} schedlab paces")),
        n => Ok(n),
    }
}

/// `--target-util 80%` (or 80): a whole percent in 1..=100.
fn parse_util(text: &str) -> std::result::Result<u32, String> {
    let t = text.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim();
    let pct: f64 = number.parse().map_err(|_| format!("'{text}' is not a percentage (e.g. 80%)"))?;
    if !(pct > 0.0 && pct <= 100.0) {
        return Err(format!("a target utilisation of {t} is outside (0, 100]: give e.g. 50% or 80%"));
    }
    if pct.fract() != 0.0 {
        return Err(format!("give a whole percent, e.g. {:.0}%", pct.round().max(1.0)));
    }
    Ok(pct as u32)
}

/// `--think 1ms`: a time, or 0 for none.
fn parse_think(text: &str) -> std::result::Result<Duration, String> {
    if text.trim() == "0" {
        return Ok(Duration::ZERO);
    }
    parse_duration(text)
}

text_value!(de_thread_count, u32, parse_thread_count);
text_value!(de_rps, u64, parse_rps);
text_value!(de_util, u32, parse_util);
text_value!(de_think, Duration, parse_think);

/// `schedlab server` flags and server experiment keys.
#[derive(Args, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(remote = "Self", rename_all = "kebab-case", default)]
#[command(mut_arg("policy", |a| a.help("Policies to compare: one or a list of other,batch,idle,fifo,rr (fifo/rr: workers and message threads at --prio) [default: other]")), mut_arg("prio", |a| a.help("Static priority of every thread under fifo/rr (1-99) [default: 50]")), mut_arg("nice", |a| a.help("Nice value (-20..19) of every thread under other/batch")))]
pub struct ServerOptions {
    /// Message threads: each sends its share of the rate to its own workers [default: 1]
    #[arg(long, value_name = "M", value_parser = parse_thread_count)]
    #[serde(deserialize_with = "de_thread_count")]
    pub threads: Option<u32>,

    /// Worker threads per message thread [default: 2]
    #[arg(long, value_name = "T", value_parser = parse_thread_count)]
    #[serde(deserialize_with = "de_thread_count")]
    pub workers: Option<u32>,

    /// Requests per second over all message threads, sent open loop at fixed times (a slow reply delays no
    /// request)
    #[arg(long, value_name = "N", value_parser = parse_rps, conflicts_with = "target_util")]
    #[serde(deserialize_with = "de_rps")]
    pub rps: Option<u64>,

    /// Find the rate that keeps the server's CPUs this busy first (short probes of the process's CPU time),
    /// then measure at it (e.g. 80%)
    #[arg(long, value_name = "PCT", value_parser = parse_util)]
    #[serde(deserialize_with = "de_util")]
    pub target_util: Option<u32>,

    /// CPU work of each request, on the worker's own CPU clock (CLOCK_THREAD_CPUTIME_ID) [default: 1ms]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    #[serde(deserialize_with = "de_duration")]
    pub work: Option<Duration>,

    /// Think time of each request: a sleep before its CPU work (0 for none) [default: 0]
    #[arg(long, value_name = "TIME", value_parser = parse_think)]
    #[serde(deserialize_with = "de_think")]
    pub think: Option<Duration>,

    /// Hold a per-CPU mutex across each request's CPU work (as schbench does: a preempted holder stalls the
    /// workers behind it)
    #[arg(long)]
    pub lock: bool,

    #[command(flatten)]
    #[serde(skip)]
    pub scheduling: PolicyOptions,

    /// CPUs the server's threads may run on, together (e.g. 1 or 0-3); the utilisation is of these
    /// [default: every allowed CPU]
    #[arg(long, value_name = "LIST", value_parser = parse_cpu_list)]
    #[serde(deserialize_with = "de_cpus")]
    pub cpus: Option<CpuList>,

    /// How long each trial sends requests [default: 5s]
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    #[serde(deserialize_with = "de_duration")]
    pub duration: Option<Duration>,

    #[command(flatten)]
    #[serde(skip)]
    pub background: LoadOptions,
}

read_with_groups!(ServerOptions { background, scheduling });

/// The rate a trial sends at: fixed, or found for a CPU utilisation first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// Requests per second over all message threads.
    Rps(u64),
    /// The rate that keeps the server's CPUs this busy (%), found by probes.
    TargetUtilPct(u32),
}

/// One trial: the server under one policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSpec {
    pub message_threads: u32,
    /// Workers per message thread.
    pub workers: u32,
    pub rate: Rate,
    pub work_ns: u64,
    pub think_ns: u64,
    pub lock: bool,
    pub policy: Policy,
    /// The static priority of every thread under fifo/rr (0 otherwise).
    pub prio: i32,
    pub nice: Option<i32>,
    /// The CPUs every thread may run on (none: every allowed CPU).
    pub cpus: Option<Vec<usize>>,
    pub duration: Duration,
    #[serde(default, skip_serializing_if = "LoadSpec::is_none")]
    pub load: LoadSpec,
}

impl ServerSpec {
    /// Every worker of every message thread.
    pub fn all_workers(&self) -> u32 {
        self.message_threads * self.workers
    }

    /// The most requests per second the workers could serve if each ran the moment it was
    /// woken: each is busy think + work a request.
    pub fn worker_capacity_rps(&self) -> f64 {
        f64::from(self.all_workers()) * 1e9 / (self.work_ns + self.think_ns) as f64
    }

    /// The longest the trial can run: each window (the probes' and the measured one)
    /// starts after a short delay, may send late for up to 0.1 s past its end, and then
    /// waits for the requests in hand (think + work, below the window by the checks).
    pub fn longest(&self) -> Duration {
        let probes = match self.rate {
            Rate::Rps(_) => 0,
            Rate::TargetUtilPct(_) => MAX_PROBES as u64,
        };
        let tail = START_DELAY_NS + CATCH_UP_NS + self.think_ns + self.work_ns;
        Duration::from_nanos(self.duration.as_nanos() as u64 + tail + probes * (PROBE_NS + tail))
    }

    /// The rate a CPU utilisation asks for on `cpus` CPUs, from the work alone.
    pub fn rps_for_util(&self, pct: f64, cpus: usize) -> f64 {
        pct / 100.0 * cpus as f64 * 1e9 / self.work_ns as f64
    }
}

impl SpecSource for ServerOptions {
    type Spec = ServerSpec;

    fn to_specs(&self) -> Result<Vec<ServerSpec>> {
        let rate =
            match (self.rps, self.target_util) {
                (Some(_), Some(_)) => return Err(Error::usage("--rps and --target-util exclude each other: give one")),
                (Some(n), None) => Rate::Rps(n),
                (None, Some(p)) => Rate::TargetUtilPct(p),
                (None, None) => return Err(Error::usage(
                    "give the load: --rps N (requests per second, e.g. --rps 200) or --target-util 80% (the rate that \
                     keeps the CPUs that busy)",
                )),
            };
        let policies = self.scheduling.policies();
        if policies.iter().any(|p| p.is_deadline()) {
            return Err(Error::usage(
                "--policy deadline is not offered for a server: its workers wake on requests, not on periods, so no \
                 SCHED_DEADLINE reservation (runtime every period) describes them; use other, batch, idle, fifo or rr \
                 (for periodic tasks under deadline, see `schedlab taskset`)",
            ));
        }
        check_prio(self.scheduling.prio, &policies)?;
        check_nice(self.scheduling.nice, &policies)?;
        let message_threads = self.threads.unwrap_or(1);
        let workers = self.workers.unwrap_or(DEFAULT_WORKERS);
        if message_threads * workers > MAX_ALL_THREADS {
            return Err(Error::usage(format!(
                "--threads {message_threads} × --workers {workers} is {} workers, more than the {MAX_ALL_THREADS} \
                 schedlab runs in one trial: fewer threads or workers",
                message_threads * workers
            )));
        }
        let work = self.work.unwrap_or(DEFAULT_WORK);
        if work < Duration::from_micros(1) {
            return Err(Error::usage("--work below 1us is less than reading the CPU clock costs: give 1us or more"));
        }
        let duration = self.duration.unwrap_or(DEFAULT_SERVER_DURATION);
        if duration < Duration::from_millis(100) {
            return Err(Error::usage(format!(
                "--duration {} is too short to say anything about percentiles: give 100ms or more (e.g. 5s)",
                duration_arg(duration.as_nanos() as u64)
            )));
        }
        let think = self.think.unwrap_or(Duration::ZERO);
        if think + work >= duration {
            return Err(Error::usage(format!(
                "--think {} + --work {} is {}, not less than --duration {}: a request would outlast the window it is \
                 sent in (and the trial its limit); give a longer --duration or a shorter --think/--work",
                format_ns(think.as_nanos() as u64),
                format_ns(work.as_nanos() as u64),
                format_ns((think + work).as_nanos() as u64),
                duration_arg(duration.as_nanos() as u64)
            )));
        }
        if matches!(rate, Rate::TargetUtilPct(_)) && (think + work).as_nanos() as u64 >= MAX_PROBED_REQUEST_NS {
            return Err(Error::usage(format!(
                "--target-util probes the rate in windows of {}, so a request's --think + --work ({}) must be below {}: \
                 give a shorter --think/--work, or a fixed --rps",
                format_ns(PROBE_NS),
                format_ns((think + work).as_nanos() as u64),
                format_ns(MAX_PROBED_REQUEST_NS)
            )));
        }
        let cpus = chosen_cpus(&self.cpus, "--cpus")?;
        let load = self.background.to_spec()?;
        let specs: Vec<ServerSpec> = policies
            .iter()
            .map(|&policy| {
                Ok(ServerSpec {
                    message_threads,
                    workers,
                    rate,
                    work_ns: work.as_nanos() as u64,
                    think_ns: think.as_nanos() as u64,
                    lock: self.lock,
                    policy,
                    prio: crate::model::parse::resolve_priority(
                        policy,
                        self.scheduling.prio.filter(|_| policy.is_realtime()),
                    )?,
                    nice: self.scheduling.nice_for(policy),
                    cpus: cpus.clone(),
                    duration,
                    load: load.clone(),
                })
            })
            .collect::<Result<_>>()?;
        if let (Some(spec), Rate::Rps(rps)) = (specs.first(), rate) {
            check_worker_capacity(spec, rps as f64, "--rps")?;
        }
        Ok(specs)
    }
}

/// The workers must be able to serve the rate at all: each is busy think + work per
/// request, so beyond M × T / (think + work) requests per second the queue only grows.
pub fn check_worker_capacity(spec: &ServerSpec, rps: f64, asked_by: &str) -> Result<()> {
    let capacity = spec.worker_capacity_rps();
    if rps <= capacity {
        return Ok(());
    }
    let needed = (rps * (spec.work_ns + spec.think_ns) as f64 / 1e9 / f64::from(spec.message_threads)).ceil();
    Err(Error::usage(format!(
        "{asked_by} asks for {rps:.0} requests per second, but {} worker(s) busy {} each ({} think + {} work) serve at \
         most {:.0}: the queue would only grow. Give --workers {needed:.0} or more, a lower rate, or a shorter \
         --work/--think",
        spec.all_workers(),
        format_ns(spec.work_ns + spec.think_ns),
        format_ns(spec.think_ns),
        format_ns(spec.work_ns),
        capacity.floor()
    )))
}

/// One worker over the measured window.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerStats {
    /// Its message thread (0-based).
    pub group: u32,
    pub requests: u64,
    /// Time runnable on a run queue without running (schedstat's second field), over the
    /// window; unknown where the kernel does not give it.
    pub rq_wait_ns: Option<u64>,
}

/// One calibration probe of `--target-util`: the rate tried and the utilisation it gave.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub rps: f64,
    pub util_pct: f64,
}

/// A finished server trial.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerOutcome {
    /// The rate the message threads were paced at (the one found, under --target-util).
    pub rps_asked: f64,
    /// The probes that found it, under --target-util.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibration: Vec<Probe>,
    /// The CPUs the utilisation is of.
    pub cpus: u32,
    /// Requests sent (each due in the window).
    pub sent: u64,
    /// Requests due in the window that a late message thread never sent (it stops 0.1 s
    /// past the window's end).
    #[serde(default)]
    pub unsent: u64,
    /// How late the message threads sent, against each request's due time: p99 and max.
    #[serde(default)]
    pub send_lag_p99_ns: Option<u64>,
    #[serde(default)]
    pub send_lag_max_ns: Option<u64>,
    /// Requests served (some may finish after the window's end: those handed out before it).
    pub requests: u64,
    /// Of those, the ones done by the window's end.
    #[serde(default)]
    pub served_in_window: u64,
    /// Requests done by the window's end, per second of the window.
    pub achieved_rps: f64,
    /// Requests that found no idle worker and waited in their message thread's queue.
    pub queued: u64,
    /// Requests the queue had no room for (it holds `QUEUE_CAPACITY` a message thread).
    pub dropped: u64,
    /// Requests still queued when the window ended, never served; requests + dropped +
    /// unserved = sent.
    #[serde(default)]
    pub unserved: u64,
    /// The process's CPU time over the window, over the window times the CPUs, in %.
    pub cpu_util_pct: f64,
    /// Request sent → its worker running (for requests that woke a sleeping worker).
    pub wakeups: u64,
    pub wake_p50_ns: Option<u64>,
    pub wake_p90_ns: Option<u64>,
    pub wake_p99_ns: Option<u64>,
    pub wake_p999_ns: Option<u64>,
    pub wake_max_ns: Option<u64>,
    /// Request due → its reply (any lateness of its send, wait, think, work); an unserved
    /// request counts with its wait until the window ended (a lower bound).
    pub request_p50_ns: Option<u64>,
    pub request_p90_ns: Option<u64>,
    pub request_p99_ns: Option<u64>,
    pub request_p999_ns: Option<u64>,
    pub request_max_ns: Option<u64>,
    /// The workers' run-queue wait over the window, summed, per request served; and the
    /// largest one worker's.
    #[serde(default)]
    pub rq_wait_per_request_ns: Option<u64>,
    pub rq_wait_max_ns: Option<u64>,
    pub workers: Vec<WorkerStats>,
    /// The background load's, the steal's and the private cgroup's figures.
    #[serde(flatten)]
    pub beside: crate::families::shared::Beside,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(text: &str) -> Result<Vec<ServerSpec>> {
        let options: ServerOptions = toml::from_str(text).map_err(|e| Error::usage(e.to_string()))?;
        options.to_specs()
    }

    #[test]
    fn suite_keys_make_one_spec_per_policy() {
        let s = specs("rps = 100\nworkers = 3\nthink = \"1ms\"\nwork = \"500us\"\npolicy = \"other,batch\"").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].rate, s[0].workers, s[0].think_ns, s[0].work_ns), (Rate::Rps(100), 3, 1_000_000, 500_000));
        assert_eq!(s[1].policy, Policy::Batch);
        assert_eq!(specs("target-util = \"80%\"").unwrap()[0].rate, Rate::TargetUtilPct(80));
    }

    #[test]
    fn bad_input_names_the_fix() {
        let err = |text: &str| specs(text).unwrap_err().to_string();
        assert!(err("").contains("--rps N"));
        assert!(err("rps = 0").contains("sends no request"));
        assert!(err("target-util = \"120%\"").contains("outside (0, 100]"));
        assert!(err("target-util = 0").contains("outside (0, 100]"));
        assert!(err("rps = 100\nworkers = 0").contains("out of range"));
        assert!(err("rps = 100\npolicy = \"deadline\"").contains("not offered"));
        // 1 worker busy 10 ms a request serves at most 100 a second.
        assert!(err("rps = 200\nthreads = 1\nworkers = 1\nwork = \"10ms\"").contains("--workers 2"));
        assert!(err("rps = 100\nprio = 5").contains("no real-time policy"));
    }

    #[test]
    fn the_longest_trial_covers_its_probes_and_the_requests_in_hand() {
        let s = &specs("rps = 2\nthink = \"400ms\"\nwork = \"90ms\"\nduration = \"500ms\"").unwrap()[0];
        // The window, its start delay, 0.1 s of late sends, and the last request in hand.
        assert_eq!(s.longest(), Duration::from_millis(500 + 20 + 100 + 490));
        let t = &specs("target-util = \"50%\"\nwork = \"1ms\"\nduration = \"1s\"").unwrap()[0];
        assert_eq!(t.longest(), Duration::from_millis(1000 + 121 + 4 * (400 + 121)));
        let err = specs("rps = 10\nthink = \"400ms\"\nwork = \"100ms\"\nduration = \"500ms\"").unwrap_err();
        assert!(err.to_string().contains("not less than --duration 500ms"), "{err}");
    }
}
