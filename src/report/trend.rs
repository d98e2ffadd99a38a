//! History: each experiment cell's figure run after run on one machine, the change points
//! in it (`analysis::changepoint`), the fingerprint fields that changed where a shift
//! began, and whether the newest run starts a regression. Reads records only.

use crate::analysis::changepoint::{self, ChangePoint, NewestShift};
use crate::analysis::stats::{holm, median};
use crate::model::cell;
use crate::model::figures::{self, Figure};
use crate::model::Family;
use crate::report::compare::{number, p_text};
use crate::report::table::Table;
use crate::store::group::groups;
use crate::store::{RunRecord, TrialRecord};
use crate::sys::machine::StoredMachine;
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// The Holm-adjusted p below which the newest run's departure from its segment counts:
/// `compare`'s level, since this too is a one-run verdict for CI (with one run on one
/// side, the noise is the segment's run-to-run spread, often wide on a shared machine).
pub const NEWEST_ALPHA: f64 = crate::decide::compare::ALPHA;
/// How the series are judged, in one sentence for the reports.
pub const METHOD_TEXT: &str = "Each point is the median of a run's ok repeats of the cell. Change points: \
    E-Divisive with means (Matteson & James 2014) proposes each split of the log values, and a \
    two-sample t-test keeps it (as in MongoDB's Hunter) at p < 0.001 after multiplying by the \
    number of candidate splits, or at p < 0.05 when the segments' medians differ by a ratio of \
    1.5 or more either way (a short history cannot reach 0.001 even with a doubled cost), with \
    at least 3 runs on each side. The newest run is tested against the runs since the last change point (Student-t \
    prediction, one-sided, Holm-adjusted over all series, p < 0.05); it is a regression when \
    also slower by more than the threshold.";
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
    /// Significant (Holm p below `NEWEST_ALPHA`) and slower by more than the threshold.
    pub regression: bool,
    /// Where the newest run's noise floor differs from the run's before it.
    pub noise: Vec<String>,
}

/// One cell's figure over the runs of one machine, in time order.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendSeries {
    pub machine: String,
    pub family: Family,
    pub params: Map<String, Json>,
    pub figure: &'static str,
    pub label: &'static str,
    pub points: Vec<TrendPoint>,
    pub shifts: Vec<Shift>,
    pub newest: Option<Newest>,
}

impl TrendSeries {
    pub fn cell_text(&self) -> String {
        format!("{} {}", self.family.as_str(), cell::text(&self.params, cell::all)).trim_end().to_string()
    }
}

pub fn hostname(run: &RunRecord) -> String {
    run.machine.hostname().unwrap_or("?").to_string()
}

/// One cell's values of one figure within a run: (family, parameters, values, figure).
type RunCell = (Family, Map<String, Json>, Vec<f64>, &'static Figure);

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
            regression: false,
            noise,
        });
        newest_p.push(s.newest.as_ref().map(|n| n.test.p));
    }
    for (s, p_holm) in out.iter_mut().zip(holm(&newest_p)) {
        if let Some(newest) = &mut s.newest {
            newest.p_holm = p_holm;
            newest.regression = p_holm.is_some_and(|p| p < NEWEST_ALPHA) && newest.test.ratio - 1.0 > threshold;
        }
    }
    out
}

/// Where two stored fingerprints' noise floors differ beyond their spread (none when
/// either lacks one).
fn noise_differences(before: &StoredMachine, after: &StoredMachine, run_before: i64, run_after: i64) -> Vec<String> {
    before.floor_differences(after, &format!("run {run_before}"), &format!("run {run_after}"))
}

/// " · noise floor moved: ..." for a shift or newest run whose floor differs.
fn noise_note(noise: &[String]) -> String {
    if noise.is_empty() {
        String::new()
    } else {
        format!("; the noise floor moved too ({})", noise.join("; "))
    }
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

fn signed_percent(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// The fields that changed, briefly: "kernel_release 6.1→6.6, schedlab_version 0.1→0.2".
pub fn changed_text(changed: &[FieldChange]) -> String {
    if changed.is_empty() {
        return "no fingerprint field changed".into();
    }
    let shown: Vec<String> = changed
        .iter()
        .take(4)
        .map(|c| {
            let short = |s: &str| {
                if s.chars().count() > 24 {
                    format!("{}…", s.chars().take(23).collect::<String>())
                } else {
                    s.to_string()
                }
            };
            format!("{} {}→{}", c.field, short(&c.from), short(&c.to))
        })
        .collect();
    let more = if changed.len() > 4 { format!(" and {} more", changed.len() - 4) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

/// The level a change point was held to, as the text says it.
fn level_text(alpha: f64) -> String {
    if alpha == changepoint::LARGE_SPLIT_ALPHA {
        format!("{alpha} for a shift of {}× or more", 1.0 + changepoint::LARGE_SHIFT)
    } else {
        alpha.to_string()
    }
}

/// One line per change point: the run, the size, the evidence, what changed.
pub fn shift_text(s: &TrendSeries, shift: &Shift) -> String {
    let c = &shift.point;
    format!(
        "run {}: {} → {} {} ({}; t = {:.1}, p = {} over {} candidate splits, below {}, {} runs before, {} after); {}{}",
        shift.run,
        number(c.before),
        number(c.after),
        s.label,
        signed_percent(c.change()),
        c.t,
        p_text(c.p),
        c.candidates,
        level_text(c.alpha),
        c.n_before,
        c.n_after,
        changed_text(&shift.changed),
        noise_note(&shift.noise)
    )
}

pub fn newest_text(n: &Newest, threshold: f64) -> String {
    let verdict = if n.regression {
        format!("REGRESSION (beyond {})", signed_percent(threshold))
    } else if n.p_holm.is_some_and(|p| p < NEWEST_ALPHA) {
        "a shift, within the threshold".into()
    } else {
        "in line".into()
    };
    format!(
        "run {}: {} against the {} runs before it (p = {}, Holm {}): {verdict}{}",
        n.run,
        signed_percent(n.test.ratio - 1.0),
        n.test.n,
        p_text(n.test.p),
        n.p_holm.map_or("-".into(), p_text),
        noise_note(&n.noise)
    )
}

/// The terminal table: one row per series.
pub fn table(series: &[TrendSeries]) -> Table {
    let mut table = Table::new(["machine", "cell", "figure", "runs", "first", "latest", "change points", "newest run"])
        .left_align(0)
        .left_align(1)
        .left_align(2)
        .left_align(6)
        .left_align(7);
    for s in series {
        let shifts: Vec<String> =
            s.shifts.iter().map(|c| format!("run {} {}", c.run, signed_percent(c.point.change()))).collect();
        let newest = match &s.newest {
            Some(n) if n.regression => format!("REGRESSION {}", signed_percent(n.test.ratio - 1.0)),
            Some(n) => format!("{} (p {})", signed_percent(n.test.ratio - 1.0), n.p_holm.map_or("-".into(), p_text)),
            None => "too few runs".into(),
        };
        table.push(vec![
            s.machine.clone(),
            s.cell_text(),
            s.label.to_string(),
            s.points.len().to_string(),
            s.points.first().map_or("-".into(), |p| number(p.value)),
            s.points.last().map_or("-".into(), |p| number(p.value)),
            if shifts.is_empty() { "none".into() } else { shifts.join(", ") },
            newest,
        ]);
    }
    table
}

/// The JSON document `trend --format json` prints: the method's levels, then each series.
#[derive(Serialize)]
pub struct TrendDoc<'a> {
    method: &'static str,
    split_alpha: f64,
    large_shift: f64,
    large_shift_alpha: f64,
    min_segment: usize,
    newest_alpha: f64,
    threshold: f64,
    series: Vec<SeriesDoc<'a>>,
}

#[derive(Serialize)]
struct SeriesDoc<'a> {
    machine: &'a str,
    family: Family,
    params: &'a Map<String, Json>,
    figure: &'static str,
    points: &'a [TrendPoint],
    change_points: Vec<ShiftDoc<'a>>,
    newest: Option<NewestDoc<'a>>,
}

/// A change point with its test, the fingerprint fields that changed and the noise floor's move.
#[derive(Serialize)]
struct ShiftDoc<'a> {
    run: i64,
    index: usize,
    before: f64,
    after: f64,
    change: f64,
    test: &'static str,
    candidates: usize,
    alpha: f64,
    t: f64,
    df: f64,
    p: f64,
    n_before: usize,
    n_after: usize,
    changed_fields: &'a [FieldChange],
    noise_floor_differences: &'a [String],
}

#[derive(Serialize)]
struct NewestDoc<'a> {
    run: i64,
    ratio: f64,
    test: &'static str,
    t: f64,
    p: f64,
    p_holm: Option<f64>,
    n: usize,
    regression: bool,
    noise_floor_differences: &'a [String],
}

impl<'a> ShiftDoc<'a> {
    fn of(c: &'a Shift) -> ShiftDoc<'a> {
        let cp = &c.point;
        ShiftDoc {
            run: c.run,
            index: cp.index,
            before: cp.before,
            after: cp.after,
            change: cp.change(),
            test: "student_t_bonferroni",
            candidates: cp.candidates,
            alpha: cp.alpha,
            t: cp.t,
            df: cp.df,
            p: cp.p,
            n_before: cp.n_before,
            n_after: cp.n_after,
            changed_fields: &c.changed,
            noise_floor_differences: &c.noise,
        }
    }
}

impl<'a> NewestDoc<'a> {
    fn of(n: &'a Newest) -> NewestDoc<'a> {
        NewestDoc {
            run: n.run,
            ratio: n.test.ratio,
            test: "student_t_prediction",
            t: n.test.t,
            p: n.test.p,
            p_holm: n.p_holm,
            n: n.test.n,
            regression: n.regression,
            noise_floor_differences: &n.noise,
        }
    }
}

/// The JSON document `trend --format json` prints.
pub fn json(series: &[TrendSeries], threshold: f64) -> TrendDoc<'_> {
    let series = series
        .iter()
        .map(|s| SeriesDoc {
            machine: &s.machine,
            family: s.family,
            params: &s.params,
            figure: s.figure,
            points: &s.points,
            change_points: s.shifts.iter().map(ShiftDoc::of).collect(),
            newest: s.newest.as_ref().map(NewestDoc::of),
        })
        .collect();
    TrendDoc {
        method: "e_divisive_means_t_test",
        split_alpha: changepoint::SPLIT_ALPHA,
        large_shift: changepoint::LARGE_SHIFT,
        large_shift_alpha: changepoint::LARGE_SPLIT_ALPHA,
        min_segment: changepoint::MIN_SEGMENT,
        newest_alpha: NEWEST_ALPHA,
        threshold,
        series,
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
        assert_eq!(changed_text(&changed[1..2]), "kernel_release 6.1→6.6");
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
        assert!(noise_note(&moved).starts_with("; the noise floor moved too (2-member ring"));
        assert_eq!(noise_differences(&quiet, &floor([3210.0, 3260.0, 3290.0]), 4, 5), Vec::<String>::new());
        // A run without a floor (older, or probed off) moves nothing.
        assert_eq!(noise_differences(&stored("{}"), &loud, 4, 5), Vec::<String>::new());
        assert_eq!(noise_note(&[]), "");
    }

    #[test]
    fn every_figure_key_is_known() {
        let keys = FigureChoice::known_keys();
        assert!(keys.contains(&"ns_per_switch") && keys.contains(&"wall_s") && keys.contains(&"p99_ns"));
    }
}
