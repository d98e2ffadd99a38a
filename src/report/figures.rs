//! The figures of one trial as named JSON objects: the keys of `--json` lines, of
//! `report --format json`, of the CSV export and of the `figures` an export carries for
//! readers. The measured values, their keys and their order come from the figure
//! registry (`model::figures`); each family's line is a struct in its `report.rs` that
//! flattens in the parts built here (figures, status, load, reservation).

use crate::families::figures::{self, Figure, Part};
use crate::families::with_family;
use crate::families::Outcome;
use crate::model::{DeadlineParams, LoadSpec, TrialStatus};
use crate::report::family::FamilyReport;
use crate::store::TrialRecord;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// A figure's value as a line writes it: a whole number for counts and integer ns,
/// null where unknown.
#[derive(Clone, Copy, Debug)]
pub struct Number {
    integer: bool,
    value: Option<f64>,
}

impl Number {
    pub fn of(f: &Figure, value: Option<f64>) -> Number {
        Number { integer: f.integer, value }
    }
}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Some(x) if self.integer => s.serialize_i64(x as i64),
            Some(x) => s.serialize_f64(x),
            None => s.serialize_none(),
        }
    }
}

/// Figures with their values, in registry order, written as keys of the line they are
/// flattened into (`#[serde(flatten)]`).
#[derive(Default)]
pub struct Figures(Vec<(&'static Figure, Number)>);

impl Figures {
    /// The figures of `part` among `figures`, `value` reading each.
    pub fn of(figures: &[&'static Figure], part: Part, value: impl Fn(&Figure) -> Option<f64>) -> Figures {
        Figures(figures.iter().filter(|f| f.part == part).map(|f| (*f, Number::of(f, value(f)))).collect())
    }

    /// A part's figures only when the trial has that part (any of them is known): a
    /// load's when one ran, SCHED_DEADLINE's when the kernel gave them.
    pub fn known(figures: &[&'static Figure], part: Part, o: &Outcome) -> Option<Figures> {
        let f = Figures::of(figures, part, |f| f.value(o));
        f.0.iter().any(|(_, n)| n.value.is_some()).then_some(f)
    }

    /// These figures split after `figure` (kept in the first), for a key that has always
    /// sat after it in the line (the ring's projection beside its times, the load's CPUs
    /// beside its size).
    pub fn split_after(mut self, figure: &Figure) -> (Figures, Figures) {
        let at = self.0.iter().position(|(f, _)| std::ptr::eq(*f, figure)).map_or(self.0.len(), |i| i + 1);
        let rest = self.0.split_off(at);
        (self, Figures(rest))
    }

    /// These figures without `figure` (written elsewhere in the line).
    fn without(mut self, figure: &Figure) -> Figures {
        self.0.retain(|(f, _)| !std::ptr::eq(*f, figure));
        self
    }
}

impl Serialize for Figures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (f, n) in &self.0 {
            m.serialize_entry(f.key, n)?;
        }
        m.end()
    }
}

/// The status and reason of a trial, written before its figures (by the workload and
/// command lines for every trial, by the ring and latency lines for one that did not finish).
#[derive(Serialize)]
pub struct Status<'a> {
    status: &'static str,
    reason: Option<&'a str>,
}

impl<'a> Status<'a> {
    pub fn of(status: &'a TrialStatus) -> Status<'a> {
        Status { status: status.label(), reason: status.reason() }
    }
}

/// What every family's line ends with: the trial's private cgroup (a `cgroup` setting),
/// the load it ran beside and what the load achieved during its window, and a deadline
/// trial's reservation (`runtime_ns`, `deadline_ns`, `period_ns`). Each is absent where
/// the trial had none, so the lines of trials without them read as they always have.
#[derive(Serialize)]
pub struct LineExtras {
    #[serde(flatten)]
    cgroup: Option<CgroupKeys>,
    #[serde(flatten)]
    load: Option<LoadKeys>,
    #[serde(flatten)]
    reservation: Option<DeadlineParams>,
}

#[derive(Serialize)]
struct CgroupKeys {
    cgroup_setting: String,
    cgroup_hierarchy: String,
    #[serde(flatten)]
    figures: Figures,
}

/// The load's kind and nice (the spec's, known even when its figures are not), then its
/// figures when they are known, its CPUs after its size.
#[derive(Serialize)]
struct LoadKeys {
    load: &'static str,
    #[serde(flatten)]
    nice: Figures,
    #[serde(flatten)]
    size: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    load_cpus: Option<Vec<usize>>,
    #[serde(flatten)]
    rest: Figures,
}

impl LineExtras {
    /// The cgroup and load keys of a trial (`o`: `None` for one that failed) and the
    /// reservation `dl`.
    pub fn of(spec: &LoadSpec, o: Option<&Outcome>, dl: Option<DeadlineParams>) -> LineExtras {
        let cgroup = o.and_then(|o| Some((o, o.cgroup()?))).map(|(o, group)| CgroupKeys {
            cgroup_setting: group.setting.clone(),
            cgroup_hierarchy: group.hierarchy.clone(),
            figures: Figures::of(figures::cgroup::ALL, Part::Cgroup, |f| f.value(o)),
        });
        let load = (!spec.is_none()).then(|| {
            use figures::load::{ALL, LOAD_NICE, LOAD_PROCESSES};
            let ran = o.and_then(|o| Some((o, o.load()?)));
            let nice = match ran {
                Some((o, _)) => LOAD_NICE.value(o),
                None => spec.nice.map(f64::from),
            };
            let (size, rest) = match ran {
                Some((o, _)) => {
                    Figures::of(ALL, Part::Load, |f| f.value(o)).without(&LOAD_NICE).split_after(&LOAD_PROCESSES)
                }
                None => Default::default(),
            };
            LoadKeys {
                load: spec.kind.as_str(),
                nice: Figures(vec![(&LOAD_NICE, Number::of(&LOAD_NICE, nice))]),
                size,
                load_cpus: ran.map(|(_, load)| load.cpus.clone()),
                rest,
            }
        });
        LineExtras { cgroup, load, reservation: dl }
    }
}

/// A typed line as a JSON object, for the readers that take a trial's keys one by one
/// (`report --format json`'s summaries, exports, CSV).
pub fn object_of<T: Serialize>(line: &T) -> Map<String, Json> {
    match serde_json::to_value(line) {
        Ok(Json::Object(m)) => m,
        _ => Map::new(),
    }
}

/// A stored trial's line as named values, for the export and the CSV (which take any
/// trial's keys one by one) and `report --format json`'s summaries.
pub fn stored(t: &TrialRecord) -> Option<Map<String, Json>> {
    with_family!(t.family, F => F::stored_line(t).map(|line| object_of(&line)))
}
