//! The figures of one trial as named JSON objects: the keys of `--json` lines, of
//! `report --format json`, of the CSV export and of the `figures` an export carries for
//! readers. The measured values, their keys and their order come from the figure
//! registry (`model::figures`); the spec's settings are written beside them here.

use crate::families::with_family;
use crate::model::figures::{self, Figure, Part};
use crate::model::{LoadSpec, Outcome, TrialStatus};
use crate::report::family::FamilyReport;
use crate::store::TrialRecord;
use serde_json::{json, Map, Value as Json};

/// A figure's value as a line writes it: a whole number for counts and integer ns,
/// null where unknown.
pub fn number(f: &Figure, value: Option<f64>) -> Json {
    match value {
        Some(x) if f.integer => json!(x as i64),
        Some(x) => json!(x),
        None => Json::Null,
    }
}

/// Write `figures` of `part` with `value` reading each, in registry order; a key that is
/// not a figure but has always sat after one in the line (the ring's projection beside
/// its times, the load's CPUs beside its size) comes in `beside` as (after, key, value).
pub fn put(
    m: &mut Map<String, Json>,
    figures: &[&'static Figure],
    part: Part,
    value: impl Fn(&Figure) -> Option<f64>,
    beside: Vec<(&Figure, &str, Json)>,
) {
    for f in figures.iter().filter(|f| f.part == part) {
        m.insert(f.key.into(), number(f, value(f)));
        for (_, key, v) in beside.iter().filter(|(after, _, _)| std::ptr::eq(*after, *f)) {
            m.insert((*key).into(), v.clone());
        }
    }
}

/// Write a part's figures only when the trial has that part (any of them is known):
/// a load's when one ran, SCHED_DEADLINE's when the kernel gave them.
pub fn put_part(m: &mut Map<String, Json>, figures: &[&'static Figure], part: Part, o: &Outcome) {
    if figures.iter().filter(|f| f.part == part).any(|f| f.value(o).is_some()) {
        put(m, figures, part, |f| f.value(o), Vec::new());
    }
}

/// The load a trial ran beside it and what the load achieved during its window: nothing
/// when it ran without one, so the figures of unloaded trials read as before; only the
/// load's settings when its figures are unknown (a trial that failed has no outcome).
pub fn add_load(m: &mut Map<String, Json>, spec: &LoadSpec, o: Option<&Outcome>) {
    add_cgroup(m, o);
    if spec.is_none() {
        return;
    }
    m.insert("load".into(), json!(spec.kind.as_str()));
    // The load's nice is the spec's, known even when the load's figures are not.
    m.insert(figures::load::LOAD_NICE.key.into(), json!(spec.nice));
    let Some((o, load)) = o.and_then(|o| Some((o, o.load()?))) else { return };
    let cpus = vec![(&figures::load::LOAD_PROCESSES, "load_cpus", json!(load.cpus))];
    put(m, figures::load::ALL, Part::Load, |f| f.value(o), cpus);
}

/// A trial's private cgroup figures (a `cgroup` setting), after its setting's text;
/// nothing for a trial that ran in none.
fn add_cgroup(m: &mut Map<String, Json>, o: Option<&Outcome>) {
    let Some((o, group)) = o.and_then(|o| Some((o, o.cgroup()?))) else { return };
    m.insert("cgroup_setting".into(), json!(group.setting));
    m.insert("cgroup_hierarchy".into(), json!(group.hierarchy));
    put(m, figures::cgroup::ALL, Part::Cgroup, |f| f.value(o), Vec::new());
}

/// A deadline trial's reservation as keys (`runtime_ns`, `deadline_ns`, `period_ns`);
/// nothing for the other policies, whose lines stay as they were.
pub fn add_reservation(m: &mut Map<String, Json>, dl: Option<crate::model::DeadlineParams>) {
    if let Some(dl) = dl {
        m.insert("runtime_ns".into(), json!(dl.runtime_ns));
        m.insert("deadline_ns".into(), json!(dl.deadline_ns));
        m.insert("period_ns".into(), json!(dl.period_ns));
    }
}

pub fn object(value: Json) -> Map<String, Json> {
    match value {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

/// The status and reason of a trial that did not finish, written before its figures as
/// the workload and command lines write theirs.
pub fn add_status(m: &mut Map<String, Json>, status: &TrialStatus) {
    m.insert("status".into(), json!(status.label()));
    m.insert("reason".into(), json!(status.reason()));
}

pub fn stored(t: &TrialRecord) -> Option<Map<String, Json>> {
    with_family!(t.family, F => F::stored_line(t))
}
