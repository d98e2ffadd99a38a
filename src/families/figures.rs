//! The figure registry: every figure a trial yields, per family, named once. A figure's
//! key is its name in `--json` lines, CSV and exports, its label heads a table column,
//! and its reader derives it from an `Outcome`; the family's headline and what
//! `compare`, `trend` and `ab` test are marked here too. Adding a figure is one entry.
//!
//! Each family's list is in the order its trial lines have always written the figures
//! (report JSON keeps that order), which is why a compared figure carries its own rank.
//!
//! Each figure is a static in its family's module (`ring`, `workload`, `latency`,
//! `load`), named as its key in capitals: code that needs one figure names it
//! (`workload::NIVCSW`, `latency::MAX_NS.key`) rather than spelling its key, so the key
//! is written once, here, and a mistyped name does not compile.

use crate::families::latency::model::ThreadStats;
use crate::families::list::{Family, Outcome};
use crate::model::ns_to_s;

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
    /// Only when the trial ran in a private cgroup of a `cgroup` setting.
    Cgroup,
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
    /// The figure's place in `compare`'s (and `trend`'s, `ab`'s) rows; `None`: not tested.
    /// Every compared figure is better lower: a difference that raises it is a regression.
    pub compared: Option<u8>,
    pub part: Part,
}

impl Figure {
    /// The figure of a trial, `None` where it is unknown (or of another family).
    pub fn value(&self, o: &Outcome) -> Option<f64> {
        match self.read {
            Read::Outcome(read) => read(o),
            Read::Thread(read) => read(&o.latency()?.all),
            Read::Parsed => o.parsed(self.key),
        }
    }

    /// The label without its unit ("min ns" reads "min"): a row's name in a table whose
    /// heading gives the unit.
    pub fn name(&self) -> &'static str {
        self.label.strip_suffix(self.unit.suffix()).map_or(self.label, str::trim_end)
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
/// headline, not compared, on every line.
pub(crate) const fn figure(key: &'static str, label: &'static str, unit: Unit, read: Read) -> Figure {
    Figure { key, label, unit, read, integer: false, headline: false, compared: None, part: Part::Always }
}

/// A whole-number figure (counts, and times the kernel gives as integer ns).
pub(crate) const fn count(key: &'static str, label: &'static str, unit: Unit, read: Read) -> Figure {
    Figure { integer: true, ..figure(key, label, unit, read) }
}

impl Figure {
    pub(crate) const fn compared(self, rank: u8) -> Figure {
        Figure { compared: Some(rank), ..self }
    }

    pub(crate) const fn headline(self) -> Figure {
        Figure { headline: true, ..self }
    }

    pub(crate) const fn part(self, part: Part) -> Figure {
        Figure { part, ..self }
    }
}

use Read::Outcome as O;
use Unit::*;

/// What a family's `figures` module needs to declare its figures (`family!` and the
/// helpers it is written with).
pub(crate) mod prelude {
    pub(crate) use crate::families::figures::{
        count, family, figure, Figure, Part, Read::Outcome as O, Read::Thread as T, Unit::*,
    };
    pub(crate) use crate::model::ns_to_s;
}

/// Declares a family's figures: each a `pub static` named as its key in capitals, so
/// code that picks one figure (a finding, a plot, a claim) names it and the compiler
/// checks the name; and `ALL`, the figures in line order. One entry a figure.
macro_rules! family {
    ($($(#[$doc:meta])* $name:ident = $figure:expr;)+) => {
        $($(#[$doc])* pub static $name: Figure = $figure;)+

        /// The figures in line order.
        pub static ALL: &[&Figure] = &[$(&$name),+];

        /// Every family declared this way is checked: each figure is named as its key
        /// in capitals.
        #[cfg(test)]
        #[test]
        fn each_figure_is_named_as_its_key_in_capitals() {
            for (name, figure) in [$((stringify!($name), &$name)),+] {
                assert_eq!(name.to_lowercase(), figure.key);
            }
        }
    };
}
pub(crate) use family;

/// What the background load achieved during the trial's window: the same for every
/// family, written after the family's own figures.
pub mod load {
    use super::*;

    family! {
        LOAD_NICE = count("load_nice", "load nice", Number, O(|o| Some(o.load()?.nice as f64))).part(Part::Load);
        LOAD_INSTANCES =
            count("load_instances", "load instances", Count, O(|o| Some(o.load()?.instances as f64))).part(Part::Load);
        LOAD_PROCESSES =
            count("load_processes", "load processes", Count, O(|o| Some(o.load()?.processes as f64))).part(Part::Load);
        LOAD_WINDOW_S =
            figure("load_window_s", "load window s", Seconds, O(|o| Some(ns_to_s(o.load()?.window_ns as f64))))
                .part(Part::Load);
        LOAD_LOOPS_PER_S =
            figure("load_loops_per_s", "load loops/s", PerSecond, O(|o| Some(o.load()?.loops_per_s())))
                .part(Part::Load);
        LOAD_IO_BYTES_PER_S =
            figure("load_io_bytes_per_s", "load io B/s", BytesPerSecond, O(|o| Some(o.load()?.io_bytes_per_s())))
                .part(Part::Load);
        LOAD_MESSAGES_PER_S =
            figure("load_messages_per_s", "load msgs/s", PerSecond, O(|o| Some(o.load()?.messages_per_s())))
                .part(Part::Load);
        // The load's CPU time, written after its rates.
        LOAD_CPU_S =
            figure("load_cpu_s", "load cpu s", Seconds, O(|o| Some(ns_to_s(o.load()?.cpu_ns as f64)))).part(Part::Load);
    }
}

/// What a trial's private cgroup (a `cgroup` setting, `model::settings`) did over the
/// trial: the same for every family, written after the load's figures.
pub mod cgroup {
    use super::*;

    family! {
        NR_PERIODS =
            count("nr_periods", "periods", Count, O(|o| Some(o.cgroup()?.nr_periods as f64))).part(Part::Cgroup);
        NR_THROTTLED = count("nr_throttled", "throttled periods", Count, O(|o| Some(o.cgroup()?.nr_throttled as f64)))
            .part(Part::Cgroup);
        THROTTLED_S =
            figure("throttled_s", "throttled s", Seconds, O(|o| Some(ns_to_s(o.cgroup()?.throttled_ns as f64))))
                .part(Part::Cgroup);
        CGROUP_PRESSURE_S = figure(
            "cgroup_pressure_s",
            "group cpu pressure s",
            Seconds,
            O(|o| Some(ns_to_s(o.cgroup()?.cpu_pressure_ns? as f64))),
        )
        .part(Part::Cgroup);
        CGROUP_CPU_S =
            figure("cgroup_cpu_s", "group cpu s", Seconds, O(|o| Some(ns_to_s(o.cgroup()?.usage_ns? as f64))))
                .part(Part::Cgroup);
    }
}

/// A family's own figures, in line order (the load's are in `load::ALL`).
pub fn of(family: Family) -> &'static [&'static Figure] {
    family.figures()
}

/// Every figure a trial of `family` can carry: its own (a command's declared ones after
/// its built-in ones), then the load's.
pub fn all(family: Family) -> impl Iterator<Item = &'static Figure> {
    of(family)
        .iter()
        .copied()
        .chain(family.declared())
        .chain(load::ALL.iter().copied())
        .chain(cgroup::ALL.iter().copied())
}

/// The figure of `family` named `key`, if it has one: for keys read back from stored
/// data. Code that wants a figure names its static (`workload::NIVCSW`).
pub fn find(family: Family, key: &str) -> Option<&'static Figure> {
    all(family).find(|f| f.key == key)
}

/// The family's headline figure (a command's wall time; see `headline_of`).
pub fn headline(family: Family) -> &'static Figure {
    of(family).iter().copied().find(|f| f.headline).expect("every family's registry marks one headline figure")
}

/// The headline of one trial: its family's, except for a command that declared a figure
/// with better = lower (its p99, say): the first such, which its outcome names.
pub fn headline_of(o: &Outcome) -> &'static Figure {
    let judged = o.judged();
    judged
        .and_then(|key| o.family().declared().into_iter().find(|f| f.key == key))
        .unwrap_or_else(|| headline(o.family()))
}

/// The figures a run's question tests between the cells it compares: the headline, and
/// for latency the maximum too (the worst case is half of a latency question).
pub fn questioned(family: Family) -> Vec<&'static Figure> {
    family.questioned()
}

/// The figures a question tests, read from one of its trials (a command's headline is
/// its own, when it declared one to judge).
pub fn questioned_of(o: &Outcome) -> Vec<&'static Figure> {
    let judged = o.judged();
    let mut out = match judged {
        Some(_) => vec![headline_of(o)],
        None => questioned(o.family()),
    };
    // A question between cgroup settings also asks what they did to the group's wait for
    // a CPU (throttled time is 0 wherever no quota is set, so no ratio of it can be
    // tested; `report::settings` states it per cell).
    if o.cgroup().is_some_and(|c| c.cpu_pressure_ns.is_some()) {
        out.push(&cgroup::CGROUP_PRESSURE_S);
    }
    out
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
    use crate::families::latency::figures as latency;
    use crate::families::ring::figures as ring;

    #[test]
    fn the_keys_a_declared_figure_may_not_take_are_the_command_familys_and_the_loads() {
        let registry: Vec<&str> =
            crate::families::command::figures::ALL.iter().chain(load::ALL).map(|f| f.key).collect();
        assert_eq!(registry, crate::families::command::model::OWN_FIGURE_KEYS);
    }
    use crate::families::workload::figures as workload;

    #[test]
    fn each_family_has_one_headline_and_unique_keys() {
        for family in Family::ALL {
            assert_eq!(of(family).iter().filter(|f| f.headline).count(), 1, "{family:?}");
            let mut keys: Vec<&str> = all(family).map(|f| f.key).collect();
            let n = keys.len();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), n, "{family:?}");
        }
        assert_eq!(headline(Family::Ring).key, "ns_per_switch");
        assert_eq!(headline(Family::Workload).key, "wall_s");
        assert_eq!(headline(Family::Latency).key, "p99_ns");
        assert!(std::ptr::eq(headline(Family::Workload), &workload::WALL_S));
        let keys: Vec<&str> = compared(Family::Ring).iter().map(|f| f.key).collect();
        assert_eq!(keys, ["ns_per_switch", "ns_per_hop", "run_delay_ns_per_hop"]);
    }

    #[test]
    fn a_name_is_the_label_without_its_unit() {
        assert_eq!(latency::P999_NS.name(), "p99.9");
        assert_eq!(latency::MISSED_DEADLINES.name(), "missed deadlines");
        assert_eq!(workload::WALL_S.name(), "wall");
        // A unit that does not end the label stays.
        assert_eq!(ring::NS_PER_HOP.name(), "ns/hop");
    }

    #[test]
    fn wakeups_are_hops_per_real_second() {
        let mut o = crate::families::ring::model::RingOutcome {
            procs: 4,
            laps: 10,
            hops: 40,
            real_ns: 40_000,
            ..crate::families::ring::model::RingOutcome::default()
        };
        let wakeups = &ring::WAKEUPS_PER_S;
        // 40 hops in 40 µs: a million a second.
        assert_eq!(wakeups.value(&Outcome::Ring(o.clone())), Some(1e6));
        o.real_ns = 0;
        assert_eq!(wakeups.value(&Outcome::Ring(o)), None);
    }
}
