//! A trend in words: its table, each change point and the newest run's test as a line,
//! the method, and `trend --format json` (`decide::trend` finds them).

use crate::analysis::changepoint;
use crate::decide::trend::{FieldChange, Newest, Shift, TrendPoint, TrendSeries, NEWEST_ALPHA};
use crate::families::Family;
use crate::model::cell::Cell;
use crate::report::compare::{number, p_text};
use crate::report::table::Table;
use serde::Serialize;

/// How the series are judged, in one sentence for the reports.
pub const METHOD_TEXT: &str = "Each point is the median of a run's ok repeats of the cell. Change points: \
    E-Divisive with means (Matteson & James 2014) proposes each split of the log values, and a \
    two-sample t-test keeps it (as in MongoDB's Hunter) at p < 0.001 after multiplying by the \
    number of candidate splits, or at p < 0.05 when the segments' medians differ by a ratio of \
    1.5 or more either way (a short history cannot reach 0.001 even with a doubled cost), with \
    at least 3 runs on each side. The newest run is tested against the runs since the last change point (Student-t \
    prediction, one-sided, Holm-adjusted over all series, p < 0.05); it is a regression when \
    also slower by more than the threshold.";
/// " · noise floor moved: ..." for a shift or newest run whose floor differs.
fn noise_note(noise: &[String]) -> String {
    if noise.is_empty() {
        String::new()
    } else {
        format!("; the noise floor moved too ({})", noise.join("; "))
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
    } else if n.shifted {
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
    params: &'a Cell,
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

    #[test]
    fn a_changed_field_reads_from_and_to() {
        let changed = [FieldChange { field: "kernel_release".into(), from: "6.1".into(), to: "6.6".into() }];
        assert_eq!(changed_text(&changed), "kernel_release 6.1→6.6");
        assert_eq!(changed_text(&[]), "no fingerprint field changed");
    }

    #[test]
    fn a_moved_noise_floor_is_said_after_the_shift() {
        let moved = ["2-member ring: 3.25 µs/hop in run 4, 9.10 µs/hop in run 5".to_string()];
        assert!(noise_note(&moved).starts_with("; the noise floor moved too (2-member ring"));
        assert_eq!(noise_note(&[]), "");
    }
}
