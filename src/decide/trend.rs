//! History: each experiment cell's figure run after run on one machine, the change points
//! in it (`analysis::changepoint`), the fingerprint fields that changed where a shift
//! began, and whether the newest run starts a regression. Reads records only;
//! `report::trend` words and tabulates what this decides.

use crate::analysis::changepoint::{self, ChangePoint, NewestShift};
use crate::analysis::stats::{holm, median};
use crate::families::figures::{self, Figure};
use crate::families::Family;
use crate::model::cell::Cell;
use crate::store::group::groups;
use crate::store::{RunRecord, TrialRecord};
use crate::sys::machine::StoredMachine;
use serde::Serialize;
use serde_json::Value as Json;

/// The Holm-adjusted p below which the newest run's departure from its segment counts:
/// `compare`'s level, since this too is a one-run verdict for CI (with one run on one
/// side, the noise is the segment's run-to-run spread, often wide on a shared machine).
pub const NEWEST_ALPHA: f64 = crate::analysis::verdict::ALPHA;
/// Fingerprint fields that change between any two runs and say nothing about the machine.
/// The noise floor changes with every run too: `noise_differences` says when it moved by
/// more than its own spread.
const VOLATILE_FIELDS: &[&str] = &["load_average", "noise_floor"];

/// Which figures a trend follows.
#[derive(Clone, Debug, PartialEq)]
pub enum FigureChoice {
    /// Each family's headline figure (ns/switch, wall s, p99 ns).
    Headline,
    /// Every figure `compare` compares.
    All,
    /// One figure by its key.
    Named(String),
}

impl FigureChoice {
    fn figures(&self, family: Family) -> Vec<&'static Figure> {
        let all = figures::compared(family).into_iter();
        match self {
            FigureChoice::Headline => all.filter(|c| c.headline).collect(),
            FigureChoice::All => all.collect(),
            FigureChoice::Named(key) => all.filter(|c| c.key == key).collect(),
        }
    }

    /// Every figure key a trend can follow, for the error on an unknown one.
    pub fn known_keys() -> Vec<&'static str> {
        let mut keys: Vec<&str> = Family::ALL.into_iter().flat_map(figures::compared).map(|c| c.key).collect();
        keys.dedup();
        keys
    }
}

/// One run's value of a series: the median of the cell's ok repeats in that run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrendPoint {
    pub run: i64,
    pub started: String,
    pub value: f64,
    pub n: usize,
}

/// A fingerprint field that differs between the run before a change point and the run at it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FieldChange {
    pub field: String,
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Shift {
    /// The run where the new level begins.
    pub run: i64,
    pub point: ChangePoint,
    pub changed: Vec<FieldChange>,
    /// Where the noise floor of the run at the shift differs from the run's before it.
    pub noise: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Newest {
    pub run: i64,
    pub test: NewestShift,
    pub p_holm: Option<f64>,
    /// Significant: Holm p below `NEWEST_ALPHA`.
    pub shifted: bool,
    /// Shifted, and slower by more than the threshold.
    pub regression: bool,
    /// Where the newest run's noise floor differs from the run's before it.
    pub noise: Vec<String>,
}

/// One cell's figure over the runs of one machine, in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendSeries {
    pub machine: String,
    pub family: Family,
    pub params: Cell,
    pub figure: &'static str,
    pub label: &'static str,
    pub points: Vec<TrendPoint>,
    pub shifts: Vec<Shift>,
    pub newest: Option<Newest>,
}

impl TrendSeries {
    pub fn cell_text(&self) -> String {
        format!("{} {}", self.family.as_str(), self.params.all_text()).trim_end().to_string()
    }
}

pub fn hostname(run: &RunRecord) -> String {
    run.machine.hostname().unwrap_or("?").to_string()
}

/// One cell's values of one figure within a run: (family, parameters, values, figure).
type RunCell = (Family, Cell, Vec<f64>, &'static Figure);

/// The series of every cell and figure in `runs` (already filtered, any order): each
/// machine's runs in time order, their change points, and the newest run's test, its p
/// adjusted by Holm over every series tested.
pub fn series(runs: &[(RunRecord, Vec<TrialRecord>)], choice: &FigureChoice, threshold: f64) -> Vec<TrendSeries> {
    let mut order: Vec<&(RunRecord, Vec<TrialRecord>)> = runs.iter().collect();
    order.sort_by(|(a, _), (b, _)| a.started.cmp(&b.started).then(a.id.cmp(&b.id)));
    let mut out: Vec<TrendSeries> = Vec::new();
    for (run, trials) in order {
        let machine = hostname(run);
        // A cell may sit in two experiments of one run: its repeats count together.
        let mut cells: Vec<RunCell> = Vec::new();
        for g in groups(trials) {
            for compared in choice.figures(g.family) {
                let values = g.values(|o| compared.value(o));
                match cells.iter_mut().find(|c| c.0 == g.family && c.1 == g.params && c.3.key == compared.key) {
                    Some(cell) => cell.2.extend(values),
                    None => cells.push((g.family, g.params.clone(), values, compared)),
                }
            }
        }
        for (family, params, values, compared) in cells {
            if values.is_empty() {
                continue;
            }
            let point =
                TrendPoint { run: run.id, started: run.started.clone(), value: median(&values), n: values.len() };
            let existing = out.iter().position(|s| {
                s.machine == machine && s.family == family && s.params == params && s.figure == compared.key
            });
            let index = existing.unwrap_or_else(|| {
                out.push(TrendSeries {
                    machine: machine.clone(),
                    family,
                    params,
                    figure: compared.key,
                    label: compared.label,
                    points: Vec::new(),
                    shifts: Vec::new(),
                    newest: None,
                });
                out.len() - 1
            });
            out[index].points.push(point);
        }
    }
    let fingerprint: std::collections::HashMap<i64, &StoredMachine> =
        runs.iter().map(|(r, _)| (r.id, &r.machine)).collect();
    let mut newest_p: Vec<Option<f64>> = Vec::new();
    for s in &mut out {
        let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
        s.shifts = changepoint::change_points(&values)
            .into_iter()
            .map(|point| {
                let (before, at) = (s.points[point.index - 1].run, s.points[point.index].run);
                Shift {
                    run: at,
                    changed: changed_fields(fingerprint[&before], fingerprint[&at]),
                    noise: noise_differences(fingerprint[&before], fingerprint[&at], before, at),
                    point,
                }
            })
            .collect();
        let segment_start = s.shifts.last().map_or(0, |c| c.point.index);
        let (previous, last) = match s.points.as_slice() {
            [.., p, l] => (Some(p.run), l.run),
            [l] => (None, l.run),
            [] => (None, 0),
        };
        let noise =
            previous.map(|p| noise_differences(fingerprint[&p], fingerprint[&last], p, last)).unwrap_or_default();
        s.newest = changepoint::newest_shift(&values, segment_start).map(|test| Newest {
            run: last,
            test,
            p_holm: None,
            shifted: false,
            regression: false,
            noise,
        });
        newest_p.push(s.newest.as_ref().map(|n| n.test.p));
    }
    for (s, p_holm) in out.iter_mut().zip(holm(&newest_p)) {
        if let Some(newest) = &mut s.newest {
            newest.p_holm = p_holm;
            newest.shifted = p_holm.is_some_and(|p| p < NEWEST_ALPHA);
            newest.regression = newest.shifted && newest.test.ratio - 1.0 > threshold;
        }
    }
    out
}

/// Where two stored fingerprints' noise floors differ beyond their spread (none when
/// either lacks one).
pub fn noise_differences(
    before: &StoredMachine,
    after: &StoredMachine,
    run_before: i64,
    run_after: i64,
) -> Vec<String> {
    before.floor_differences(after, &format!("run {run_before}"), &format!("run {run_after}"))
}

/// The fields of two fingerprints that differ (nested objects by dotted key), volatile
/// ones left out. A fingerprint is walked as stored, keys this schedlab does not know
/// included, so through its JSON form.
pub fn changed_fields(before: &impl Serialize, after: &impl Serialize) -> Vec<FieldChange> {
    let (a, b) = (fields(before), fields(after));
    let mut keys: Vec<&String> = a.iter().chain(&b).map(|(k, _)| k).collect();
    keys.sort();
    keys.dedup();
    let find = |list: &[(String, String)], key: &str| {
        list.iter().find(|(k, _)| k == key).map_or_else(|| "absent".to_string(), |(_, v)| v.clone())
    };
    keys.into_iter()
        .filter(|k| !VOLATILE_FIELDS.iter().any(|v| k.as_str() == *v || k.starts_with(&format!("{v}."))))
        .filter_map(|k| {
            let (from, to) = (find(&a, k), find(&b, k));
            (from != to).then(|| FieldChange { field: k.clone(), from, to })
        })
        .collect()
}

/// Every field of a record as (dotted key, text): a nested object by dotted key (an
/// empty one none), a string its text, anything else its compact JSON (`true`, `4`, a
/// list whole).
fn fields(record: &impl Serialize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(value) = serde_json::to_value(record) {
        flatten("", &value, &mut out);
    }
    out
}

fn flatten(prefix: &str, value: &Json, out: &mut Vec<(String, String)>) {
    match value {
        Json::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, v, out);
            }
        }
        Json::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fingerprint as stored (JSON text).
    fn stored(json: &str) -> StoredMachine {
        StoredMachine::from_json(serde_json::from_str(json).unwrap())
    }

    #[test]
    fn changed_fields_name_what_differs_and_skip_the_load() {
        let a = stored(r#"{"kernel_release": "6.1", "load_average": [1.0], "v": {"x": 1}, "gone": true}"#);
        let b = stored(r#"{"kernel_release": "6.6", "load_average": [9.0], "v": {"x": 2}}"#);
        let changed = changed_fields(&a, &b);
        let fields: Vec<&str> = changed.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, vec!["gone", "kernel_release", "v.x"]);
        assert_eq!((changed[0].from.as_str(), changed[0].to.as_str()), ("true", "absent"));
        assert_eq!((changed[1].from.as_str(), changed[1].to.as_str()), ("6.1", "6.6"));
    }

    #[test]
    fn a_noise_floor_is_no_changed_field_but_its_move_is_said() {
        let floor = |ring: [f64; 3]| {
            let floor = format!(r#"{{"ring_ns_per_hop": {ring:?}, "wakeup_p99_us": [50.0, 55.0, 60.0]}}"#);
            stored(&format!(r#"{{"kernel_release": "6.1", "noise_floor": {floor}}}"#))
        };
        let (quiet, loud) = (floor([3200.0, 3250.0, 3300.0]), floor([9000.0, 9100.0, 9300.0]));
        assert_eq!(changed_fields(&quiet, &loud), Vec::<FieldChange>::new());
        let moved = noise_differences(&quiet, &loud, 4, 5);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert!(moved[0].starts_with("2-member ring: 3.25 µs/hop (3.20-3.30) in run 4, 9.10 µs/hop"), "{moved:?}");
        assert_eq!(noise_differences(&quiet, &floor([3210.0, 3260.0, 3290.0]), 4, 5), Vec::<String>::new());
        // A run without a floor (older, or probed off) moves nothing.
        assert_eq!(noise_differences(&stored("{}"), &loud, 4, 5), Vec::<String>::new());
    }

    #[test]
    fn every_figure_key_is_known() {
        let keys = FigureChoice::known_keys();
        assert!(keys.contains(&"ns_per_switch") && keys.contains(&"wall_s") && keys.contains(&"p99_ns"));
    }
}
