//! The figure registry: every figure a trial yields, per family, named once. A figure's
//! key is its name in `--json` lines, CSV and exports, its label heads a table column,
//! and its reader derives it from an `Outcome`; the family's headline and what
//! `compare`, `trend` and `ab` test are marked here too. Adding a figure is one entry.
//!
//! Each family's list is in the order its trial lines have always written the figures
//! (report JSON keeps that order), which is why a compared figure carries its own rank.

use crate::model::{ns_to_s, Family, Outcome, ThreadStats};

/// What a figure counts or measures in, for labels and axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Ns,
    Seconds,
    Count,
    Percent,
    /// A dimensionless ratio or index (Jain's fairness).
    Ratio,
    PerSecond,
    BytesPerSecond,
    KiB,
    /// A plain number with no unit (a workload's pi estimate).
    Number,
    /// The unit a user declared for a figure parsed from a command's output ("us").
    Declared(&'static str),
}

impl Unit {
    /// How the unit reads after a value ("" for counts and plain numbers).
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::Seconds => "s",
            Unit::Count | Unit::Ratio | Unit::Number => "",
            Unit::Percent => "%",
            Unit::PerSecond => "/s",
            Unit::BytesPerSecond => "B/s",
            Unit::KiB => "KiB",
            Unit::Declared(unit) => unit,
        }
    }
}

/// Which way a figure is better, where it has a better at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
    /// Descriptive (laps, samples, a load's size): neither.
    Neither,
}

/// How a figure is read.
#[derive(Clone, Copy)]
pub enum Read {
    /// From the trial's outcome.
    Outcome(fn(&Outcome) -> Option<f64>),
    /// From one latency histogram's figures: a thread's on its own line, all threads'
    /// together (`LatencyOutcome::all`) for the trial.
    Thread(fn(&ThreadStats) -> Option<f64>),
    /// A figure declared for a command and parsed from its output, under its key.
    Parsed,
}

/// Which part of an outcome a figure belongs to, which decides when a line carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Every line of the family (null where the figure is unknown).
    Always,
    /// Only when a background load ran beside the trial.
    Load,
    /// Only when the kernel reported SCHED_DEADLINE figures for the trial.
    Deadline,
    /// Once per latency run, on its combined line (not on each thread's).
    Run,
}

pub struct Figure {
    /// The JSON/CSV key, e.g. `ns_per_switch`.
    pub key: &'static str,
    /// The column label, e.g. `ns/switch`.
    pub label: &'static str,
    pub unit: Unit,
    pub read: Read,
    /// Written as a whole number (a count, or ns kept as integers).
    pub integer: bool,
    /// The figure a cell of its family is judged by (confidence interval, adaptive
    /// repeats, verdicts): one per family.
    pub headline: bool,
    pub better: Better,
    /// The figure's place in `compare`'s (and `trend`'s, `ab`'s) rows; `None`: not tested.
    pub compared: Option<u8>,
    pub part: Part,
}

impl Figure {
    /// The figure of a trial, `None` where it is unknown (or of another family).
    pub fn value(&self, o: &Outcome) -> Option<f64> {
        match self.read {
            Read::Outcome(read) => read(o),
            Read::Thread(read) => read(&o.latency()?.all),
            Read::Parsed => o.command()?.parsed.get(self.key).copied(),
        }
    }

    /// The figure of one latency histogram; `None` for a figure of the whole outcome.
    pub fn thread_value(&self, s: &ThreadStats) -> Option<f64> {
        match self.read {
            Read::Thread(read) => read(s),
            Read::Outcome(_) | Read::Parsed => None,
        }
    }
}

/// A figure with the defaults most entries share: written as a real number, not the
/// headline, neither better way, not compared, on every line.
const fn figure(key: &'static str, label: &'static str, unit: Unit, read: Read) -> Figure {
    Figure {
        key,
        label,
        unit,
        read,
        integer: false,
        headline: false,
        better: Better::Neither,
        compared: None,
        part: Part::Always,
    }
}

/// A whole-number figure (counts, and times the kernel gives as integer ns).
const fn count(key: &'static str, label: &'static str, unit: Unit, read: Read) -> Figure {
    Figure { integer: true, ..figure(key, label, unit, read) }
}

impl Figure {
    const fn lower(self) -> Figure {
        Figure { better: Better::Lower, ..self }
    }

    const fn higher(self) -> Figure {
        Figure { better: Better::Higher, ..self }
    }

    const fn compared(self, rank: u8) -> Figure {
        Figure { compared: Some(rank), better: Better::Lower, ..self }
    }

    const fn headline(self) -> Figure {
        Figure { headline: true, ..self }
    }

    const fn part(self, part: Part) -> Figure {
        Figure { part, ..self }
    }
}

use Read::{Outcome as O, Thread as T};
use Unit::*;

static RING: [Figure; 19] = [
    count("laps", "laps", Count, O(|o| Some(o.ring()?.laps as f64))),
    count("hops", "hops", Count, O(|o| Some(o.ring()?.hops as f64))),
    figure("real_s", "real s", Seconds, O(|o| Some(ns_to_s(o.ring()?.real_ns as f64)))),
    figure("cpu_s", "cpu s", Seconds, O(|o| Some(ns_to_s(o.ring()?.cpu_ns() as f64)))).lower(),
    figure("user_s", "user s", Seconds, O(|o| Some(ns_to_s(o.ring()?.usage.utime_ns as f64)))),
    figure("sys_s", "sys s", Seconds, O(|o| Some(ns_to_s(o.ring()?.usage.stime_ns as f64)))),
    count("nvcsw", "vol sw", Count, O(|o| Some(o.ring()?.usage.nvcsw as f64))),
    count("nivcsw", "invol sw", Count, O(|o| Some(o.ring()?.usage.nivcsw as f64))).lower(),
    figure("ns_per_hop", "ns/hop", Ns, O(|o| Some(o.ring()?.ns_per_hop()))).compared(1),
    figure("overhead_ns", "overhead ns", Ns, O(|o| Some(o.ring()?.overhead_ns()))),
    figure("ns_per_switch", "ns/switch", Ns, O(|o| Some(o.ring()?.ns_per_switch()))).compared(0).headline(),
    figure("run_delay_ns_per_hop", "rq ns/hop", Ns, O(|o| o.ring()?.run_delay_ns_per_hop())).compared(2),
    count("migrations", "migrations", Count, O(|o| Some(o.ring()?.migrations? as f64))),
    figure("spawn_s", "spawn s", Seconds, O(|o| Some(ns_to_s(o.ring()?.spawn_ns as f64)))),
    figure("teardown_s", "teardown s", Seconds, O(|o| Some(ns_to_s(o.ring()?.teardown_ns as f64)))),
    count("member_maxrss_kb", "max RSS KiB", KiB, O(|o| Some(o.ring()?.member_maxrss_kb as f64))),
    count("minflt", "minor faults", Count, O(|o| Some(o.ring()?.usage.minflt as f64))),
    count("majflt", "major faults", Count, O(|o| Some(o.ring()?.usage.majflt as f64))),
    // Each hop wakes the next member: hops over the timed region's real time.
    figure(
        "wakeups_per_s",
        "wakeups/s",
        PerSecond,
        O(|o| {
            let r = o.ring()?;
            (r.real_ns > 0).then(|| r.hops as f64 * 1e9 / r.real_ns as f64)
        }),
    ),
];

static WORKLOAD: [Figure; 25] = [
    figure("wall_s", "wall s", Seconds, O(|o| Some(ns_to_s(o.workload()?.wall_ns as f64)))).compared(0).headline(),
    figure("user_s", "user s", Seconds, O(|o| Some(ns_to_s(o.workload()?.usage.utime_ns as f64)))),
    figure("sys_s", "sys s", Seconds, O(|o| Some(ns_to_s(o.workload()?.usage.stime_ns as f64)))),
    figure("cpu_pct", "cpu %", Percent, O(|o| Some(o.workload()?.cpu_pct()))),
    count("nvcsw", "vol sw", Count, O(|o| Some(o.workload()?.usage.nvcsw as f64))),
    count("nivcsw", "invol sw", Count, O(|o| Some(o.workload()?.usage.nivcsw as f64))).compared(1),
    figure("fairness", "fairness", Ratio, O(|o| o.workload()?.fairness)).higher(),
    figure("run_delay_s", "rq s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_ns? as f64)))).lower(),
    figure("run_delay_max_s", "rq max s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_max_ns? as f64))))
        .compared(2),
    figure("run_delay_p50_s", "rq p50 s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_p50_ns? as f64))))
        .lower(),
    figure("run_delay_min_s", "rq min s", Seconds, O(|o| Some(ns_to_s(o.workload()?.run_delay_min_ns? as f64))))
        .lower(),
    count("migrations", "migrations", Count, O(|o| Some(o.workload()?.migrations? as f64))),
    figure("first_finish_s", "first s", Seconds, O(|o| Some(ns_to_s(o.workload()?.first_finish_ns? as f64)))),
    figure("last_finish_s", "last s", Seconds, O(|o| Some(ns_to_s(o.workload()?.last_finish_ns? as f64)))),
    figure("fork_s", "fork s", Seconds, O(|o| Some(ns_to_s(o.workload()?.fork_ns? as f64)))),
    count("minflt", "minor faults", Count, O(|o| Some(o.workload()?.usage.minflt as f64))),
    count("majflt", "major faults", Count, O(|o| Some(o.workload()?.usage.majflt as f64))),
    count("inblock", "blocks in", Count, O(|o| Some(o.workload()?.usage.inblock as f64))),
    count("oublock", "blocks out", Count, O(|o| Some(o.workload()?.usage.oublock as f64))),
    figure("pi_min", "pi min", Number, O(|o| o.workload()?.pi_min)),
    figure("pi_max", "pi max", Number, O(|o| o.workload()?.pi_max)),
    // What each child's SCHED_DEADLINE reservation let it have.
    figure("reserved_pct", "reserved %", Percent, O(|o| Some(o.workload()?.reservation?.reserved_pct)))
        .part(Part::Deadline),
    figure("child_cpu_pct_mean", "child cpu %", Percent, O(|o| Some(o.workload()?.reservation?.child_cpu_pct_mean)))
        .part(Part::Deadline)
        .higher(),
    figure("child_cpu_pct_min", "child cpu % min", Percent, O(|o| Some(o.workload()?.reservation?.child_cpu_pct_min)))
        .part(Part::Deadline)
        .higher(),
    count("children_short", "children short", Count, O(|o| Some(o.workload()?.reservation?.children_short? as f64)))
        .part(Part::Deadline)
        .lower(),
];

static LATENCY: [Figure; 16] = [
    count("samples", "samples", Count, T(|s| Some(s.samples as f64))),
    count("min_ns", "min ns", Ns, T(|s| Some(s.min_ns as f64))).lower(),
    figure("avg_ns", "avg ns", Ns, T(|s| Some(s.avg_ns))).lower(),
    count("p50_ns", "p50 ns", Ns, T(|s| Some(s.p50_ns? as f64))).compared(0),
    count("p90_ns", "p90 ns", Ns, T(|s| Some(s.p90_ns? as f64))).lower(),
    count("p99_ns", "p99 ns", Ns, T(|s| Some(s.p99_ns? as f64))).compared(1).headline(),
    count("p999_ns", "p99.9 ns", Ns, T(|s| Some(s.p999_ns? as f64))).lower(),
    count("p9999_ns", "p99.99 ns", Ns, T(|s| Some(s.p9999_ns? as f64))).lower(),
    count("max_ns", "max ns", Ns, T(|s| Some(s.max_ns as f64))).compared(2),
    count("overruns", "overruns", Count, T(|s| Some(s.overruns as f64))).lower(),
    count("run_delay_ns", "rq wait ns", Ns, T(|s| Some(s.run_delay_ns? as f64))).compared(3),
    count("migrations", "migrations", Count, T(|s| Some(s.migrations? as f64))),
    count("missed_deadlines", "missed deadlines", Count, O(|o| Some(o.latency()?.deadline?.missed_deadlines as f64)))
        .part(Part::Deadline)
        .lower(),
    count("runtime_overruns", "runtime overruns", Count, O(|o| Some(o.latency()?.deadline?.runtime_overruns? as f64)))
        .part(Part::Deadline)
        .lower(),
    count("threads", "threads", Count, O(|o| Some(o.latency()?.threads.len() as f64))).part(Part::Run),
    count("timer_slack_ns", "timer slack ns", Ns, O(|o| Some(o.latency()?.timer_slack_ns as f64))).part(Part::Run),
];

/// Figures of a command's whole process tree (wait4 after it ends), and its time waiting
/// for a CPU where a cgroup of its own could be made.
static COMMAND: [Figure; 9] = [
    figure("wall_s", "wall s", Seconds, O(|o| Some(ns_to_s(o.command()?.wall_ns as f64)))).compared(0).headline(),
    figure("user_s", "user s", Seconds, O(|o| Some(ns_to_s(o.command()?.usage.utime_ns as f64)))),
    figure("sys_s", "sys s", Seconds, O(|o| Some(ns_to_s(o.command()?.usage.stime_ns as f64)))),
    figure(
        "cpu_pct",
        "cpu %",
        Percent,
        O(|o| {
            let c = o.command()?;
            (c.wall_ns > 0).then(|| 100.0 * c.cpu_ns() as f64 / c.wall_ns as f64)
        }),
    ),
    count("nvcsw", "vol sw", Count, O(|o| Some(o.command()?.usage.nvcsw as f64))),
    count("nivcsw", "invol sw", Count, O(|o| Some(o.command()?.usage.nivcsw as f64))).compared(1),
    count("minflt", "minor faults", Count, O(|o| Some(o.command()?.usage.minflt as f64))),
    count("majflt", "major faults", Count, O(|o| Some(o.command()?.usage.majflt as f64))).lower(),
    figure("cpu_wait_s", "cpu wait s", Seconds, O(|o| Some(ns_to_s(o.command()?.cpu_wait_ns? as f64)))).compared(2),
];

/// The figures users declared for commands in this process (`--figure`, a suite's
/// `figures`, or a stored run's spec as it is read), one per key, in the order first
/// declared. Each is made once and kept for the process's life, like the static ones.
static DECLARED: std::sync::Mutex<Vec<&'static Figure>> = std::sync::Mutex::new(Vec::new());

/// The registry's figure for a declared one: made on its first declaration; a later one
/// of the same key keeps the first's unit and direction.
pub fn declare(name: &str, unit: Option<&str>, better: Better) -> &'static Figure {
    let mut declared = DECLARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = declared.iter().find(|f| f.key == name) {
        return f;
    }
    let key: &'static str = Box::leak(name.to_string().into_boxed_str());
    let unit = unit.map_or(Number, |u| Declared(Box::leak(u.to_string().into_boxed_str())));
    let made = Figure {
        better,
        compared: (better == Better::Lower).then_some(u8::MAX),
        ..figure(key, key, unit, Read::Parsed)
    };
    let made: &'static Figure = Box::leak(Box::new(made));
    declared.push(made);
    made
}

/// The declared figures so far.
pub fn declared() -> Vec<&'static Figure> {
    DECLARED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// What the background load achieved during the trial's window: the same for every family.
pub static LOAD: [Figure; 7] = [
    count("load_nice", "load nice", Number, O(|o| Some(o.load()?.nice as f64))).part(Part::Load),
    count("load_instances", "load instances", Count, O(|o| Some(o.load()?.instances as f64))).part(Part::Load),
    count("load_processes", "load processes", Count, O(|o| Some(o.load()?.processes as f64))).part(Part::Load),
    figure("load_window_s", "load window s", Seconds, O(|o| Some(ns_to_s(o.load()?.window_ns as f64))))
        .part(Part::Load),
    figure("load_loops_per_s", "load loops/s", PerSecond, O(|o| Some(o.load()?.loops_per_s()))).part(Part::Load),
    figure("load_io_bytes_per_s", "load io B/s", BytesPerSecond, O(|o| Some(o.load()?.io_bytes_per_s())))
        .part(Part::Load),
    figure("load_messages_per_s", "load msgs/s", PerSecond, O(|o| Some(o.load()?.messages_per_s()))).part(Part::Load),
];

/// The load's CPU time, written after its rates (kept apart from every measured figure).
pub static LOAD_CPU: Figure =
    figure("load_cpu_s", "load cpu s", Seconds, O(|o| Some(ns_to_s(o.load()?.cpu_ns as f64)))).part(Part::Load);

/// A family's own figures, in line order (the load's are in `LOAD`).
pub fn of(family: Family) -> &'static [Figure] {
    match family {
        Family::Ring => &RING,
        Family::Workload => &WORKLOAD,
        Family::Latency => &LATENCY,
        Family::Command => &COMMAND,
    }
}

/// Every figure a trial of `family` can carry: its own (a command's declared ones after
/// its built-in ones), then the load's.
pub fn all(family: Family) -> impl Iterator<Item = &'static Figure> {
    let declared = if family == Family::Command { declared() } else { Vec::new() };
    of(family).iter().chain(declared).chain(LOAD.iter()).chain(std::iter::once(&LOAD_CPU))
}

/// The figure of `family` named `key`, if it has one.
pub fn find(family: Family, key: &str) -> Option<&'static Figure> {
    all(family).find(|f| f.key == key)
}

/// The figure of `family` named `key`, for code that picks one figure by name (a
/// finding, a plot); a key the registry lacks is a bug the registry's tests catch.
pub fn named(family: Family, key: &str) -> &'static Figure {
    find(family, key).unwrap_or_else(|| panic!("the figure registry has no {key} for {family:?}"))
}

/// The family's headline figure. A command's is the first figure declared for it with
/// better = lower (its p99, say), else its wall time.
pub fn headline(family: Family) -> &'static Figure {
    if family == Family::Command {
        if let Some(f) = declared().into_iter().find(|f| f.better == Better::Lower) {
            return f;
        }
    }
    of(family).iter().find(|f| f.headline).expect("every family's registry marks one headline figure")
}

/// The figures a run's question tests between the cells it compares: the headline, and
/// for latency the maximum too (the worst case is half of a latency question).
pub fn questioned(family: Family) -> Vec<&'static Figure> {
    match family {
        Family::Latency => vec![headline(family), named(family, "max_ns")],
        _ => vec![headline(family)],
    }
}

/// The figures `compare`, `trend` and `ab` test for `family`, in their row order.
pub fn compared(family: Family) -> Vec<&'static Figure> {
    let mut out: Vec<&Figure> = all(family).filter(|f| f.compared.is_some()).collect();
    out.sort_by_key(|f| f.compared);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_has_one_headline_and_unique_keys() {
        for family in Family::ALL {
            assert_eq!(of(family).iter().filter(|f| f.headline).count(), 1, "{family:?}");
            let mut keys: Vec<&str> = all(family).map(|f| f.key).collect();
            let n = keys.len();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), n, "{family:?}");
            assert!(compared(family).iter().all(|f| f.better == Better::Lower));
        }
        assert_eq!(headline(Family::Ring).key, "ns_per_switch");
        assert_eq!(headline(Family::Workload).key, "wall_s");
        assert_eq!(headline(Family::Latency).key, "p99_ns");
        // The figures findings and plots pick by name.
        for (family, key) in [(Family::Workload, "nivcsw"), (Family::Latency, "max_ns"), (Family::Latency, "overruns")]
        {
            assert_eq!(named(family, key).key, key);
        }
        let keys: Vec<&str> = compared(Family::Ring).iter().map(|f| f.key).collect();
        assert_eq!(keys, ["ns_per_switch", "ns_per_hop", "run_delay_ns_per_hop"]);
    }

    #[test]
    fn wakeups_are_hops_per_real_second() {
        let mut o = crate::model::RingOutcome {
            procs: 4,
            member_cpus: Vec::new(),
            laps: 10,
            hops: 40,
            real_ns: 40_000,
            usage: Default::default(),
            member_maxrss_kb: 0,
            overhead_ps: 0,
            spawn_ns: 0,
            teardown_ns: 0,
            load: None,
            steal: None,
            run_delay_ns: None,
            migrations: None,
            trace: None,
        };
        let wakeups = find(Family::Ring, "wakeups_per_s").unwrap();
        // 40 hops in 40 µs: a million a second.
        assert_eq!(wakeups.value(&Outcome::Ring(o.clone())), Some(1e6));
        o.real_ns = 0;
        assert_eq!(wakeups.value(&Outcome::Ring(o)), None);
    }
}
