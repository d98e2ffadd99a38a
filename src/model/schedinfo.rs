//! The scheduler's own account of one task over a measured window: how long it ran, how
//! long it sat runnable on a run queue without running, how many times it was given a
//! CPU, and how often it moved between CPUs. Each figure is `None` where the kernel does
//! not provide it (or the reading was switched off): unknown is never stored as zero.

use serde::{Deserialize, Serialize};

/// One task's figures, as read (a cumulative reading) or between two readings (a window).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedInfo {
    /// Time on a CPU (`/proc/<tid>/schedstat`, first field).
    pub on_cpu_ns: Option<u64>,
    /// Time runnable but waiting on a run queue (schedstat's second field, the kernel's
    /// `sched_info.run_delay`; it includes time an RT queue spent throttled).
    pub run_delay_ns: Option<u64>,
    /// Times the task was given a CPU (schedstat's third field).
    pub timeslices: Option<u64>,
    /// Moves from one CPU to another (`se.nr_migrations` in `/proc/<tid>/sched`).
    pub migrations: Option<u64>,
}

fn minus(later: Option<u64>, earlier: Option<u64>) -> Option<u64> {
    Some(later?.saturating_sub(earlier?))
}

fn plus(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_add(b?))
}

impl SchedInfo {
    /// What happened between `earlier` and this reading of the same task; a figure either
    /// reading lacks stays unknown.
    pub fn since(&self, earlier: &SchedInfo) -> SchedInfo {
        SchedInfo {
            on_cpu_ns: minus(self.on_cpu_ns, earlier.on_cpu_ns),
            run_delay_ns: minus(self.run_delay_ns, earlier.run_delay_ns),
            timeslices: minus(self.timeslices, earlier.timeslices),
            migrations: minus(self.migrations, earlier.migrations),
        }
    }

    /// The sum over several tasks' windows: a figure unknown for any task (or for an empty
    /// list) is unknown for the sum, since a partial sum would read as a smaller figure.
    pub fn sum<'a>(windows: impl IntoIterator<Item = &'a SchedInfo>) -> SchedInfo {
        let mut windows = windows.into_iter();
        let Some(first) = windows.next() else { return SchedInfo::default() };
        windows.fold(*first, |acc, w| SchedInfo {
            on_cpu_ns: plus(acc.on_cpu_ns, w.on_cpu_ns),
            run_delay_ns: plus(acc.run_delay_ns, w.run_delay_ns),
            timeslices: plus(acc.timeslices, w.timeslices),
            migrations: plus(acc.migrations, w.migrations),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(on_cpu: u64, delay: u64, slices: u64, migrations: u64) -> SchedInfo {
        SchedInfo {
            on_cpu_ns: Some(on_cpu),
            run_delay_ns: Some(delay),
            timeslices: Some(slices),
            migrations: Some(migrations),
        }
    }

    #[test]
    fn a_window_subtracts_and_unknown_stays_unknown() {
        let d = known(50, 30, 7, 2).since(&known(10, 10, 2, 2));
        assert_eq!(d, known(40, 20, 5, 0));
        let no_migrations = SchedInfo { migrations: None, ..known(50, 30, 7, 2) };
        let d = no_migrations.since(&known(10, 10, 2, 2));
        assert_eq!((d.run_delay_ns, d.migrations), (Some(20), None));
    }

    /// Outcomes stored before these figures existed load, with the figures unknown.
    #[test]
    fn outcomes_stored_without_the_figures_still_load() {
        use crate::families::workload::model::ChildRecord;
        use crate::families::{Outcome, TrialSpec};
        let ring = r#"{"family": "ring", "procs": 2, "member_cpus": [0, 0], "laps": 10, "hops": 21,
            "real_ns": 1000, "usage": {"utime_ns": 1, "stime_ns": 2, "maxrss_kb": 3, "ixrss": 0, "idrss": 0,
            "isrss": 0, "minflt": 0, "majflt": 0, "nswap": 0, "inblock": 0, "oublock": 0, "msgsnd": 0,
            "msgrcv": 0, "nsignals": 0, "nvcsw": 5, "nivcsw": 6}, "member_maxrss_kb": 3, "overhead_ps": 100,
            "spawn_ns": 0, "teardown_ns": 0}"#;
        let Outcome::Ring(o) = serde_json::from_str::<Outcome>(ring).unwrap() else { panic!() };
        assert_eq!((o.run_delay_ns, o.migrations, o.run_delay_ns_per_hop()), (None, None, None));
        let usage = r#"{"utime_ns": 1, "stime_ns": 2, "maxrss_kb": 3, "ixrss": 0, "idrss": 0, "isrss": 0,
            "minflt": 0, "majflt": 0, "nswap": 0, "inblock": 0, "oublock": 0, "msgsnd": 0, "msgrcv": 0,
            "nsignals": 0, "nvcsw": 5, "nivcsw": 6}"#;
        let workload = format!(
            r#"{{"family": "workload", "children": 2, "wall_ns": 5, "usage": {usage}, "fork_ns": 1,
            "first_finish_ns": 4, "last_finish_ns": 5, "fairness": 1.0, "pi_min": 3.1, "pi_max": 3.2}}"#
        );
        let Outcome::Workload(o) = serde_json::from_str::<Outcome>(&workload).unwrap() else { panic!() };
        assert_eq!(
            [o.run_delay_ns, o.run_delay_max_ns, o.run_delay_p50_ns, o.run_delay_min_ns, o.migrations],
            [None; 5]
        );
        let stats = r#"{"cpu": 0, "samples": 3, "overruns": 0, "min_ns": 1, "avg_ns": 2.0, "p50_ns": 2,
            "p90_ns": 3, "p99_ns": 3, "p999_ns": 3, "p9999_ns": 3, "max_ns": 3}"#;
        let latency = format!(
            r#"{{"family": "latency", "threads": [{stats}], "all": {stats}, "timer_slack_ns": 50000,
            "dma_latency_held": true, "mlockall": true, "histogram": [[2, 3]]}}"#
        );
        let Outcome::Latency(o) = serde_json::from_str::<Outcome>(&latency).unwrap() else { panic!() };
        assert_eq!((o.all.run_delay_ns, o.threads[0].migrations), (None, None));
        let child: ChildRecord =
            serde_json::from_str(&format!(r#"{{"finish_ns": 4, "usage": {usage}, "pi_estimate": null}}"#)).unwrap();
        assert_eq!(child.sched, SchedInfo::default());
        // A spec stored before `--schedstat` existed read the figures (the default).
        let spec = r#"{"family": "ring", "procs": 2, "length": {"laps": 10}, "mode": "process", "ipc": "pipe",
            "pin": "same", "cpus": null, "policy": "other", "prio": 0, "work_kb": 0, "timeout": null}"#;
        let TrialSpec::Ring(spec) = serde_json::from_str::<TrialSpec>(spec).unwrap() else { panic!() };
        assert!(spec.beside.schedstat);
    }

    #[test]
    fn a_sum_with_an_unknown_member_is_unknown() {
        let all = [known(1, 2, 3, 4), known(10, 20, 30, 40)];
        assert_eq!(SchedInfo::sum(&all), known(11, 22, 33, 44));
        let partial = [known(1, 2, 3, 4), SchedInfo { run_delay_ns: None, ..known(1, 1, 1, 1) }];
        let s = SchedInfo::sum(&partial);
        assert_eq!((s.run_delay_ns, s.migrations), (None, Some(5)));
        assert_eq!(SchedInfo::sum(&[]), SchedInfo::default());
    }
}
