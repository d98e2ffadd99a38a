//! What a trial measured, per family: typed, serde-derived, times as integer ns (or ps
//! where a per-pass cost needs it) with the unit in the field name. This is what the
//! trial process sends back, what the store keeps and what every report reads; seconds,
//! ratios and formatted cells are derived from it at the edge, never stored.

use serde::{Deserialize, Serialize};

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

    /// The largest share of the window any CPU certainly lost: its steal less one tick
    /// (a difference of two tick counts can be a tick above the truth), over the window;
    /// 0 for an empty window.
    pub fn certain_share(&self) -> f64 {
        if self.window_ns == 0 {
            return 0.0;
        }
        let most = self.cpus.iter().map(|c| c.steal_ns.saturating_sub(self.resolution_ns)).max().unwrap_or(0);
        most as f64 / self.window_ns as f64
    }
}

/// A ring and its outcome with round figures, for tests of what reads them.
#[cfg(test)]
pub(crate) fn sample_ring(
    procs: usize,
    laps: u64,
    cpu_ns: u64,
) -> (crate::families::ring::model::RingSpec, crate::families::ring::model::RingOutcome) {
    use crate::families::ring::model::RingOutcome;
    use crate::model::{BesideSpec, Usage};
    let spec = crate::families::ring::model::RingSpec {
        procs,
        length: crate::families::ring::model::RingLength::Laps(laps),
        mode: crate::families::ring::model::RingMode::Process,
        ipc: crate::families::ring::model::Ipc::Pipe,
        pin: crate::families::ring::model::Pin::Same,
        cpus: None,
        policy: crate::model::Policy::Other,
        prio: 0,
        work_kb: 0,
        timeout: None,
        beside: BesideSpec { schedstat: true, ..BesideSpec::default() },
    };
    let outcome = RingOutcome {
        procs,
        member_cpus: vec![0; procs],
        laps,
        hops: laps * procs as u64,
        real_ns: cpu_ns,
        usage: Usage { utime_ns: cpu_ns / 4, stime_ns: cpu_ns - cpu_ns / 4, ..Usage::default() },
        overhead_ps: 100_000,
        run_delay_ns: Some(4_000),
        migrations: Some(0),
        ..RingOutcome::default()
    };
    (spec, outcome)
}
