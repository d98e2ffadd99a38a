//! The noise floor: a few seconds' probe of how noisy this machine is, just before a run's
//! trials, so that two runs' figures can be read beside how quiet each machine was.
//!
//! Four things; the wakeups and the ring run through the same executor as any trial (a
//! fresh `__trial` process), the busy loops in threads of schedlab itself:
//! - steal per CPU, from `/proc/stat`, over the whole probe;
//! - an idle SCHED_OTHER thread's wakeup latency at 1 kHz, one thread on each CPU the
//!   trials use, `REPEATS` times: each repeat's p99 of the worst CPU;
//! - the 2-member ring's cost per hop on the first of those CPUs, `REPEATS` times;
//! - the share of each of those CPUs a SCHED_OTHER busy loop gets in `SPIN` (one thread
//!   of this process pinned to each, side by side), `REPEATS` times: each repeat's worst
//!   CPU. Another tenant's job or a forgotten hog on a CPU leaves the idle figures
//!   alone (a waking thread preempts it at once) but takes half of this.
//!
//! Nothing in it runs at a real-time priority, and it ends before the first trial starts.

use crate::error::Result;
use crate::exec::family::Extras;
use crate::exec::preflight;
use crate::exec::runner::{Ended, Orchestrator};
use crate::exec::suite::Trial;
use crate::families::{Outcome, TrialSpec};
use crate::sys::machine::NoiseFloor;
use crate::sys::steal::StealMark;
use crate::sys::{clock, sched};
use std::collections::BTreeMap;
use std::time::Duration;

/// Repeats of each timed probe: enough for a spread, few enough for a few seconds.
const REPEATS: usize = 3;
const WAKEUP_INTERVAL_NS: u64 = 1_000_000;
const WAKEUP_REPEAT: Duration = Duration::from_millis(500);
const RING_REPEAT: Duration = Duration::from_millis(150);
const SPIN: Duration = Duration::from_millis(150);

/// About how long the probe takes (its trials' spawn and teardown included).
pub const PROBE_ESTIMATE: Duration = Duration::from_secs(3);

/// The CPUs `trials` measure on; every CPU this process may use when any of them may run
/// anywhere (a workload, an unpinned ring or latency thread).
pub fn trial_cpus<'a>(trials: impl IntoIterator<Item = &'a Trial>) -> Vec<usize> {
    let allowed = sched::allowed_cpus().unwrap_or_default();
    let mut cpus: Vec<usize> = Vec::new();
    for trial in trials {
        let measured = preflight::measured_cpus(&trial.spec);
        if measured.is_empty() {
            return allowed;
        }
        cpus.extend(measured.into_iter().filter(|c| allowed.contains(c)));
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        allowed
    } else {
        cpus
    }
}

/// The probe's idle wakeups: a SCHED_OTHER thread on each of `cpus` at 1 kHz.
fn wakeup_spec(cpus: &[usize]) -> TrialSpec {
    crate::families::latency::trial::idle_wakeups(cpus, WAKEUP_INTERVAL_NS, WAKEUP_REPEAT).into()
}

/// The probe's ring: two SCHED_OTHER processes on `cpu`.
fn ring_spec(cpu: usize) -> TrialSpec {
    crate::families::ring::trial::pair_on(cpu, RING_REPEAT).into()
}

/// One probe trial's outcome; `Ok(None)` when it failed (the floor then lacks that
/// figure), an error when the run must stop (a signal).
fn probe_trial(orchestrator: &mut Orchestrator, spec: &TrialSpec) -> Result<Option<Outcome>> {
    let trial = Trial::of_command(0, spec.clone(), 1, crate::model::cell::Cell::new());
    match orchestrator.run_trial(&trial, &Extras::default(), &mut |_| {})? {
        Ended::Recorded(record) => Ok(record.outcome.filter(|_| record.status.is_ok())),
        Ended::Stop(e) => Err(e),
    }
}

/// The smallest share (%) of its CPU that a busy loop pinned to each of `cpus` got over
/// `SPIN`, all side by side; `None` when no thread could be pinned.
fn worst_cpu_share(cpus: &[usize]) -> Option<f64> {
    let shares: Vec<Option<f64>> = std::thread::scope(|scope| {
        let spinners: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                scope.spawn(move || {
                    sched::set_affinity(&[cpu]).ok()?;
                    let (wall, cpu_start) = (std::time::Instant::now(), clock::thread_cpu_ns());
                    while wall.elapsed() < SPIN {
                        std::hint::spin_loop();
                    }
                    let got = clock::thread_cpu_ns().saturating_sub(cpu_start) as f64;
                    Some(100.0 * got / wall.elapsed().as_nanos() as f64)
                })
            })
            .collect();
        spinners.into_iter().map(|s| s.join().ok().flatten()).collect()
    });
    shares.into_iter().flatten().min_by(f64::total_cmp)
}

/// Probe the machine's noise on `cpus` (the CPUs the run's trials use).
pub fn probe(orchestrator: &mut Orchestrator, cpus: &[usize]) -> Result<NoiseFloor> {
    let steal_from = StealMark::now();
    let mut floor = NoiseFloor {
        wakeup_cpus: crate::model::parse::format_cpu_list(cpus),
        ring_cpu: cpus.first().copied(),
        ..NoiseFloor::default()
    };
    for _ in 0..REPEATS {
        if !cpus.is_empty() {
            if let Some(o) = probe_trial(orchestrator, &wakeup_spec(cpus))? {
                let worst = o.latency().and_then(|l| l.threads.iter().filter_map(|t| t.p99_ns).max());
                floor.wakeup_p99_us.extend(worst.map(|ns| ns as f64 / 1000.0));
            }
        }
        if let Some(cpu) = floor.ring_cpu {
            if let Some(o) = probe_trial(orchestrator, &ring_spec(cpu))? {
                floor.ring_ns_per_hop.extend(o.ring().map(|r| r.ns_per_hop()));
            }
        }
        floor.cpu_share_pct.extend(worst_cpu_share(cpus));
    }
    if let Some(steal) = steal_from.until_now() {
        let seconds = steal.window_ns as f64 / 1e9;
        floor.probe_s = seconds;
        floor.steal_resolution_ms_per_s = steal.resolution_ns as f64 / 1e6 / seconds;
        floor.steal_ms_per_s = steal
            .cpus
            .iter()
            .map(|c| (c.cpu.to_string(), c.steal_ns as f64 / 1e6 / seconds))
            .collect::<BTreeMap<_, _>>();
    }
    Ok(floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Policy;

    #[test]
    fn the_probe_specs_are_ordinary_unprivileged_trials() {
        for spec in [wakeup_spec(&[0, 1]), ring_spec(1)] {
            assert_eq!(spec.policy(), Policy::Other);
            assert!(!preflight::is_realtime(&spec));
        }
        assert_eq!(preflight::measured_cpus(&ring_spec(1)), [1]);
    }
}
