//! The domain, and the one currency that carries a trial from the user to the report:
//! `options` (what a user may ask, from flags or suite keys) -> `spec` (what to run,
//! validated, no system calls) -> `outcome` (what was measured: typed, serde, integer
//! ns with units in the field names). Seconds and ratios are derived at the edge, so a
//! figure is never rounded before it is stored.

pub(crate) mod cell;
pub(crate) mod legacy;
pub(crate) mod load;
pub(crate) mod options;
pub(crate) mod outcome;
pub(crate) mod parse;
pub(crate) mod run;
pub(crate) mod schedinfo;
pub(crate) mod settings;
pub(crate) mod spec;

pub use load::{LoadKind, LoadOutcome, LoadSpec};
#[cfg(test)]
pub(crate) use outcome::sample_ring;
pub use outcome::{CpuSteal, Steal};
pub use schedinfo::SchedInfo;
pub use spec::BesideSpec;

use serde::{Deserialize, Serialize};
use std::fmt;

/// A Linux scheduling policy (sched(7)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// SCHED_OTHER: the default time-sharing policy (CFS/EEVDF).
    Other,
    /// SCHED_FIFO: real-time, run until it blocks or a higher priority task wakes.
    Fifo,
    /// SCHED_RR: real-time, round-robin among equal priorities.
    Rr,
    /// SCHED_BATCH: like OTHER, but treated as CPU-bound (fewer wakeup preemptions).
    Batch,
    /// SCHED_IDLE: runs only when nothing else wants the CPU.
    Idle,
    /// SCHED_DEADLINE: a reservation of --runtime every --period, served earliest deadline first.
    Deadline,
}

impl Policy {
    pub const ALL: [Policy; 6] =
        [Policy::Other, Policy::Fifo, Policy::Rr, Policy::Batch, Policy::Idle, Policy::Deadline];

    pub fn is_realtime(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }

    /// SCHED_DEADLINE: no static priority, a runtime/deadline/period reservation instead.
    pub fn is_deadline(self) -> bool {
        self == Policy::Deadline
    }

    /// The time-sharing policies whose weight a nice value sets (SCHED_IDLE's is fixed).
    pub fn takes_nice(self) -> bool {
        matches!(self, Policy::Other | Policy::Batch)
    }

    /// The kernel's name, as `chrt` and the classic studies print it.
    pub fn kernel_name(self) -> &'static str {
        match self {
            Policy::Other => "SCHED_OTHER",
            Policy::Fifo => "SCHED_FIFO",
            Policy::Rr => "SCHED_RR",
            Policy::Batch => "SCHED_BATCH",
            Policy::Idle => "SCHED_IDLE",
            Policy::Deadline => "SCHED_DEADLINE",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Batch => "batch",
            Policy::Idle => "idle",
            Policy::Deadline => "deadline",
        }
    }

    /// Valid static priorities: 1..=99 for the real-time policies, only 0 for the rest.
    pub fn priority_range(self) -> (i32, i32) {
        if self.is_realtime() {
            (1, 99)
        } else {
            (0, 0)
        }
    }

    /// The priority used when the user gives none. For the real-time policies it is high
    /// enough to beat ordinary work but below 99, which the kernel's own threads need.
    pub fn default_priority(self) -> i32 {
        if self.is_realtime() {
            50
        } else {
            0
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A SCHED_DEADLINE reservation (sched(7)): each job may run `runtime_ns` of CPU time,
/// must be done `deadline_ns` after its period starts, and periods start every
/// `period_ns`. Validated (1024 ns <= runtime <= deadline <= period) when made from options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DeadlineParams {
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

impl DeadlineParams {
    /// The kernel's smallest runtime and deadline (2^DL_SCALE ns): below it sched_setattr
    /// says EINVAL.
    pub const MIN_NS: u64 = 1024;

    /// The CPU share the reservation asks for: runtime / period.
    pub fn bandwidth(&self) -> f64 {
        self.runtime_ns as f64 / self.period_ns as f64
    }

    /// "runtime 100 µs, deadline 1 ms, period 1 ms": how reports name the reservation.
    pub fn describe(&self) -> String {
        format!(
            "runtime {}, deadline {}, period {}",
            format_ns(self.runtime_ns),
            format_ns(self.deadline_ns),
            format_ns(self.period_ns)
        )
    }
}

/// A reservation time in the unit that reads best ("100 µs", "1.5 ms", "2 s").
pub fn format_ns(ns: u64) -> String {
    let (value, unit) = match ns {
        n if n >= 1_000_000_000 => (n as f64 / 1e9, "s"),
        n if n >= 1_000_000 => (n as f64 / 1e6, "ms"),
        n if n >= 1_000 => (n as f64 / 1e3, "µs"),
        n => (n as f64, "ns"),
    };
    let text = format!("{value:.3}");
    format!("{} {unit}", text.trim_end_matches('0').trim_end_matches('.'))
}

/// The resource usage the kernel reports for a task (getrusage(2), wait4(2)), with times
/// in ns. Field names follow `struct rusage`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub utime_ns: u64,
    pub stime_ns: u64,
    pub maxrss_kb: u64,
    /// Integral shared, unshared data and stack sizes: not maintained by Linux (always 0),
    /// kept so every `struct rusage` field is reported.
    pub ixrss: u64,
    pub idrss: u64,
    pub isrss: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub nswap: u64,
    pub inblock: u64,
    pub oublock: u64,
    pub msgsnd: u64,
    pub msgrcv: u64,
    pub nsignals: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
}

impl Usage {
    /// What was used between two snapshots of the same task. maxrss is a high-water
    /// mark, not a counter, so the later value is kept.
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            utime_ns: self.utime_ns.saturating_sub(earlier.utime_ns),
            stime_ns: self.stime_ns.saturating_sub(earlier.stime_ns),
            maxrss_kb: self.maxrss_kb,
            ixrss: self.ixrss.saturating_sub(earlier.ixrss),
            idrss: self.idrss.saturating_sub(earlier.idrss),
            isrss: self.isrss.saturating_sub(earlier.isrss),
            minflt: self.minflt.saturating_sub(earlier.minflt),
            majflt: self.majflt.saturating_sub(earlier.majflt),
            nswap: self.nswap.saturating_sub(earlier.nswap),
            inblock: self.inblock.saturating_sub(earlier.inblock),
            oublock: self.oublock.saturating_sub(earlier.oublock),
            msgsnd: self.msgsnd.saturating_sub(earlier.msgsnd),
            msgrcv: self.msgrcv.saturating_sub(earlier.msgrcv),
            nsignals: self.nsignals.saturating_sub(earlier.nsignals),
            nvcsw: self.nvcsw.saturating_sub(earlier.nvcsw),
            nivcsw: self.nivcsw.saturating_sub(earlier.nivcsw),
        }
    }

    /// Sum over several tasks; maxrss becomes the largest single task's.
    pub fn accumulate(&mut self, other: &Usage) {
        self.utime_ns += other.utime_ns;
        self.stime_ns += other.stime_ns;
        self.maxrss_kb = self.maxrss_kb.max(other.maxrss_kb);
        self.ixrss += other.ixrss;
        self.idrss += other.idrss;
        self.isrss += other.isrss;
        self.minflt += other.minflt;
        self.majflt += other.majflt;
        self.nswap += other.nswap;
        self.inblock += other.inblock;
        self.oublock += other.oublock;
        self.msgsnd += other.msgsnd;
        self.msgrcv += other.msgrcv;
        self.nsignals += other.nsignals;
        self.nvcsw += other.nvcsw;
        self.nivcsw += other.nivcsw;
    }

    pub fn cpu_ns(&self) -> u64 {
        self.utime_ns + self.stime_ns
    }

    /// Number of fields in [`Usage::to_array`], for fixed-size shared slots.
    pub const FIELDS: usize = 16;

    /// Every field in declaration order, for passing through shared memory as atomics.
    pub fn to_array(self) -> [u64; Self::FIELDS] {
        [
            self.utime_ns,
            self.stime_ns,
            self.maxrss_kb,
            self.ixrss,
            self.idrss,
            self.isrss,
            self.minflt,
            self.majflt,
            self.nswap,
            self.inblock,
            self.oublock,
            self.msgsnd,
            self.msgrcv,
            self.nsignals,
            self.nvcsw,
            self.nivcsw,
        ]
    }

    pub fn from_array(a: [u64; Self::FIELDS]) -> Usage {
        let [utime_ns, stime_ns, maxrss_kb, ixrss, idrss, isrss, minflt, majflt, nswap, inblock, oublock, msgsnd, msgrcv, nsignals, nvcsw, nivcsw] =
            a;
        Usage {
            utime_ns,
            stime_ns,
            maxrss_kb,
            ixrss,
            idrss,
            isrss,
            minflt,
            majflt,
            nswap,
            inblock,
            oublock,
            msgsnd,
            msgrcv,
            nsignals,
            nvcsw,
            nivcsw,
        }
    }
}

/// How a trial ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "reason")]
pub enum TrialStatus {
    Ok,
    TimedOut(String),
    Failed(String),
    /// Ran to its end but dropped with the rest of its block, which was run again because
    /// a trial of it met steal (`sequential::rerun_for_steal`): kept for the record, in no
    /// figure, and not a failure.
    Discarded(String),
}

impl TrialStatus {
    pub fn is_ok(&self) -> bool {
        matches!(self, TrialStatus::Ok)
    }

    /// Not ok for a reason other than being dropped for steal.
    pub fn is_failure(&self) -> bool {
        !matches!(self, TrialStatus::Ok | TrialStatus::Discarded(_))
    }

    pub fn label(&self) -> &'static str {
        match self {
            TrialStatus::Ok => "ok",
            TrialStatus::TimedOut(_) => "timed_out",
            TrialStatus::Failed(_) => "failed",
            TrialStatus::Discarded(_) => "discarded",
        }
    }

    pub fn reason(&self) -> Option<&str> {
        match self {
            TrialStatus::Ok => None,
            TrialStatus::TimedOut(r) | TrialStatus::Failed(r) | TrialStatus::Discarded(r) => Some(r),
        }
    }

    /// From a label and reason as stored: anything but ok, timed_out and discarded is a
    /// failure.
    pub fn from_parts(label: &str, reason: Option<String>) -> TrialStatus {
        match label {
            "ok" => TrialStatus::Ok,
            "timed_out" => TrialStatus::TimedOut(reason.unwrap_or_default()),
            "discarded" => TrialStatus::Discarded(reason.unwrap_or_default()),
            _ => TrialStatus::Failed(reason.unwrap_or_default()),
        }
    }
}

pub fn ns_to_s(ns: impl Into<f64>) -> f64 {
    ns.into() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::workload::model::{ChildRecord, WorkloadKind, WorkloadParams, WorkloadSpec, WorkloadTrial};

    fn usage(utime_ns: u64, stime_ns: u64, nvcsw: u64, maxrss_kb: u64) -> Usage {
        Usage { utime_ns, stime_ns, nvcsw, maxrss_kb, ..Usage::default() }
    }

    #[test]
    fn usage_since_subtracts_counters_and_keeps_high_water_mark() {
        let before = usage(10, 20, 3, 100);
        let after = usage(15, 50, 10, 120);
        let d = after.since(&before);
        assert_eq!((d.utime_ns, d.stime_ns, d.nvcsw, d.maxrss_kb), (5, 30, 7, 120));
        assert_eq!(d.cpu_ns(), 35);
    }

    #[test]
    fn usage_accumulate_sums_and_takes_largest_rss() {
        let mut total = Usage::default();
        total.accumulate(&usage(1, 2, 3, 50));
        total.accumulate(&usage(10, 20, 30, 40));
        assert_eq!((total.utime_ns, total.stime_ns, total.nvcsw, total.maxrss_kb), (11, 22, 33, 50));
    }

    #[test]
    fn usage_round_trips_through_an_array() {
        let u = Usage { utime_ns: 1, stime_ns: 2, maxrss_kb: 3, nivcsw: 13, ..Usage::default() };
        assert_eq!(Usage::from_array(u.to_array()), u);
    }

    #[test]
    fn policy_priorities() {
        assert_eq!(Policy::Fifo.priority_range(), (1, 99));
        assert_eq!(Policy::Batch.priority_range(), (0, 0));
        assert!(Policy::Rr.default_priority() < 99);
        assert!(!Policy::Idle.is_realtime());
        assert!(!Policy::Deadline.is_realtime() && Policy::Deadline.is_deadline());
        assert_eq!(Policy::Deadline.priority_range(), (0, 0));
    }

    #[test]
    fn a_deadline_trial_sets_each_childs_share_against_its_reservation() {
        let child = |cpu_ms: u64, finish_ms: u64| ChildRecord {
            finish_ns: finish_ms * 1_000_000,
            usage: usage(cpu_ms * 1_000_000, 0, 0, 0),
            pi_estimate: Some(std::f64::consts::PI),
            sched: SchedInfo::default(),
        };
        let spec = WorkloadSpec {
            params: WorkloadParams { kind: WorkloadKind::Cpu, iterations: 1, transfer_size: 0, block_size: 0, seed: 1 },
            procs: 3,
            policy: Policy::Deadline,
            prio: 0,
            nice: None,
            timeout: std::time::Duration::from_secs(1),
            dir: None,
            allow_rt_saturation: false,
            beside: BesideSpec {
                deadline: Some(DeadlineParams { runtime_ns: 300_000, deadline_ns: 1_000_000, period_ns: 1_000_000 }),
                schedstat: true,
                ..BesideSpec::default()
            },
        };
        let trial = WorkloadTrial {
            spec,
            repeat: 1,
            status: TrialStatus::Ok,
            wall_ns: 1_000_000_000,
            usage: Usage::default(),
            // 30 %, 31 % and 20 % of a CPU against 30 % reserved: the last is short.
            children: vec![child(300, 1000), child(310, 1000), child(200, 1000)],
            fork_ns: 0,
            trace: None,
        };
        let r = trial.outcome().unwrap().reservation.unwrap();
        assert!((r.reserved_pct - 30.0).abs() < 1e-9);
        assert!((r.child_cpu_pct_mean - 27.0).abs() < 1e-9, "{r:?}");
        assert!((r.child_cpu_pct_min - 20.0).abs() < 1e-9, "{r:?}");
        assert_eq!(r.children_short, Some(1));
        let mut io = trial.clone();
        io.spec.params.kind = WorkloadKind::Io;
        assert_eq!(io.outcome().unwrap().reservation.unwrap().children_short, None, "io need not use its reservation");
        let mut other = trial;
        other.spec.beside.deadline = None;
        assert!(other.outcome().unwrap().reservation.is_none());
    }

    #[test]
    fn reservations_describe_themselves() {
        let dl = DeadlineParams { runtime_ns: 100_000, deadline_ns: 1_000_000, period_ns: 1_500_000 };
        assert_eq!(dl.describe(), "runtime 100 µs, deadline 1 ms, period 1.5 ms");
        assert!((dl.bandwidth() - 1.0 / 15.0).abs() < 1e-12);
        assert_eq!(format_ns(1024), "1.024 µs");
        assert_eq!(format_ns(2_000_000_000), "2 s");
    }
}
