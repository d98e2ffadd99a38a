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
