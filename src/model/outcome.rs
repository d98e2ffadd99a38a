//! What a trial measured, per family: typed, serde-derived, times as integer ns (or ps
//! where a per-pass cost needs it) with the unit in the field name. This is what the
//! trial process sends back, what the store keeps and what every report reads; seconds,
//! ratios and formatted cells are derived from it at the edge, never stored.

use crate::model::{LoadOutcome, Usage};
use serde::{Deserialize, Serialize};

/// What one ring configuration measured. Times are of the timed region only: from the
/// first member's first receipt of the token until the STOP that follows the last lap
/// reaches the last member (`hops = laps * procs + procs - 1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// What the background load did during the measured window (none without a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadOutcome>,
    /// Each CPU's steal over the trial (the hypervisor's, as the guest accounts it); none in
    /// runs stored before schedlab read it, or where the kernel shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal: Option<Steal>,
    /// The trial's private cgroup (a `cgroup` setting): throttling and CPU pressure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<crate::model::settings::CgroupFigures>,
    /// Run-queue wait summed over the members, each from just before it first waits for
    /// the token to its leaving (`/proc/<tid>/schedstat`); unknown where the kernel lacks it or
    /// `--schedstat off`. Older stored runs have none.
    #[serde(default)]
    pub run_delay_ns: Option<u64>,
    /// CPU-to-CPU moves summed over the members in the same windows (`se.nr_migrations`).
    #[serde(default)]
    pub migrations: Option<u64>,
    /// With `--trace on`: the hops as the scheduler saw them, or why they are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::analysis::offcpu::RingTrace>,
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
    /// What the background load did during the measured window (none without a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadOutcome>,
    /// Each CPU's steal over the trial (the hypervisor's, as the guest accounts it); none in
    /// runs stored before schedlab read it, or where the kernel shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal: Option<Steal>,
    /// The trial's private cgroup (a `cgroup` setting): throttling and CPU pressure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<crate::model::settings::CgroupFigures>,
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
    pub trace: Option<crate::analysis::offcpu::WorkloadTrace>,
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

/// What one latency run under one policy measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencyOutcome {
    pub threads: Vec<ThreadStats>,
    /// Every thread's samples together (the only thread's, when there is one).
    pub all: ThreadStats,
    pub timer_slack_ns: u64,
    pub dma_latency_held: bool,
    pub mlockall: bool,
    /// The combined histogram: (value in ns, count), ascending values.
    pub histogram: Vec<(u64, u64)>,
    /// What the background load did during the measured window (none without a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadOutcome>,
    /// Each CPU's steal over the trial (the hypervisor's, as the guest accounts it); none in
    /// runs stored before schedlab read it, or where the kernel shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal: Option<Steal>,
    /// The trial's private cgroup (a `cgroup` setting): throttling and CPU pressure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<crate::model::settings::CgroupFigures>,
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

/// Steal over one window: per CPU, the time the hypervisor kept it from running while it
/// was ready, as `/proc/stat` accounts it (whole USER_HZ ticks, `resolution_ns` each).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Steal {
    /// The window's length.
    pub window_ns: u64,
    /// One accounting tick: each CPU's figure is known to ± this.
    pub resolution_ns: u64,
    pub cpus: Vec<CpuSteal>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSteal {
    pub cpu: usize,
    pub steal_ns: u64,
}

impl Steal {
    /// One CPU's steal in the window.
    pub fn of_cpu(&self, cpu: usize) -> Option<u64> {
        self.cpus.iter().find(|c| c.cpu == cpu).map(|c| c.steal_ns)
    }
}

/// A ring and its outcome with round figures, for tests of what reads them.
#[cfg(test)]
pub(crate) fn sample_ring(procs: usize, laps: u64, cpu_ns: u64) -> (crate::model::RingSpec, RingOutcome) {
    let spec = crate::model::RingSpec {
        procs,
        length: crate::model::RingLength::Laps(laps),
        mode: crate::model::RingMode::Process,
        ipc: crate::model::Ipc::Pipe,
        pin: crate::model::Pin::Same,
        cpus: None,
        policy: crate::model::Policy::Other,
        prio: 0,
        work_kb: 0,
        timeout: None,
        load: Default::default(),
        deadline: None,
        schedstat: true,
        trace: false,
    };
    let outcome = RingOutcome {
        procs,
        member_cpus: vec![0; procs],
        laps,
        hops: laps * procs as u64,
        real_ns: cpu_ns,
        usage: Usage { utime_ns: cpu_ns / 4, stime_ns: cpu_ns - cpu_ns / 4, ..Usage::default() },
        member_maxrss_kb: 0,
        overhead_ps: 100_000,
        spawn_ns: 0,
        teardown_ns: 0,
        load: None,
        steal: None,
        cgroup: None,
        run_delay_ns: Some(4_000),
        migrations: Some(0),
        trace: None,
    };
    (spec, outcome)
}
