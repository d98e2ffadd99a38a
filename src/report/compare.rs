//! Two runs compared, in words and tables: the rows `decide::compare` judged, the lines
//! under them (mode, counts, warnings), the culprits that moved, and each run's noise.

use crate::analysis::stats::median;
use crate::decide::compare::{underpowered, CulpritChange, Drift, Mode, Row, Underpowered, Verdict, ALPHA};
use crate::families::Family;
use crate::model::cell::Cell;
use crate::report::table::Table;
use crate::store::RunRecord;
use crate::store::TrialRecord;
use serde::Serialize;

/// A warning when Holm's first step is out of reach: with m figures tested, the smallest
/// p must be below alpha / m, and too few repeats can never get there.
pub fn power_note(rows: &[Row]) -> Option<String> {
    let Underpowered { tested, best_p, paired_blocks_needed } = underpowered(rows)?;
    let more = match paired_blocks_needed {
        Some(enough) => {
            format!("{enough} paired blocks can (`ab --blocks`, or `ab --budget` to add blocks until decided)")
        }
        None => "more repeats per side (8 reach p = 0.0002) can".to_string(),
    };
    Some(format!(
        "with {tested} figures tested, Holm needs p < {:.4} for the first, and these repeats reach at best p = \
         {best_p:.4}: no figure can be called different; {more}",
        ALPHA / tested as f64
    ))
}

/// The lines printed under a comparison: the mode, the counts, and any warning.
pub fn summary(rows: &[Row], mode: Mode, threshold: f64, a: i64, b: i64) -> String {
    let count = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    let regressions = count(&|r| r.regression);
    let drift = count(&|r| r.verdict == Verdict::Drift);
    let undecided = count(&|r| matches!(r.verdict, Verdict::TooFew(_)));
    let tested = count(&|r| r.p_adjusted.is_some());
    let equivalent = count(&|r| r.verdict == Verdict::Equivalent);
    let equivalent = if mode == Mode::Interleaved {
        let mut margins: Vec<f64> = rows.iter().map(|r| r.margin).collect();
        margins.sort_by(f64::total_cmp);
        margins.dedup();
        let margins: Vec<String> = margins.iter().map(|m| format!("±{:.0}%", m * 100.0)).collect();
        format!("{equivalent} equivalent within {}; ", margins.join(" or "))
    } else {
        String::new()
    };
    let mut out = format!(
        "{} figures compared (A = run {a}, B = run {b}), {tested} tested, judged at Holm-adjusted p < {ALPHA}; \
         {regressions} regression(s) beyond {:.1}%; {equivalent}{drift} cannot be separated from drift; {undecided} \
         undecided for lack of repeats\n{}",
        rows.len(),
        threshold * 100.0,
        mode.describe()
    );
    if let Some(note) = power_note(rows) {
        out.push_str(&format!("\nwarning: {note}"));
    }
    out
}

/// The drift band as the table shows it.
fn drift_text(drift: Drift) -> String {
    match drift {
        Drift::Shared => "-".into(),
        Drift::Estimated(d) if d.exp() >= 2.0 => format!("×{:.1}", d.exp()),
        Drift::Estimated(d) => format!("±{:.1}%", (d.exp() - 1.0) * 100.0),
        Drift::Unknown => "unknown".into(),
    }
}

fn params_text(params: &Cell) -> String {
    params.all_text()
}

/// The culprit changes as text: a heading, then per cell its sources "A % → B %".
pub fn culprit_text(changes: &[CulpritChange]) -> Option<String> {
    if changes.is_empty() {
        return None;
    }
    let mut lines =
        vec!["What ran in the tails' place, A → B (share of the excess above each run's p99, --trace on):".to_string()];
    let mut cell = "";
    for c in changes {
        if c.cell != cell {
            cell = &c.cell;
            lines.push(format!("  {cell}:"));
        }
        lines.push(format!("    {}: {:.0} % → {:.0} %", c.source, 100.0 * c.share_a, 100.0 * c.share_b));
    }
    Some(lines.join("\n"))
}

/// How each run's machine sat and what each run decided: its noise floor (steal, idle
/// wakeup p99, the 2-member ring) and its questions answered, with the trials it took. A
/// difference between two runs' figures reads against these: a run on a noisier machine
/// answers fewer questions and moves further by itself.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RunNoise {
    pub run: i64,
    /// The floor's one-line summary; `None` for a run without one (probe off, older run).
    pub floor: Option<String>,
    pub questions_answered: usize,
    pub questions_asked: usize,
    pub trials: usize,
    /// The most repeats (blocks) any cell ran.
    pub blocks: i64,
}

impl RunNoise {
    pub fn of(run: &RunRecord, trials: &[TrialRecord]) -> RunNoise {
        let found = crate::decide::findings::findings_of_run(run, trials);
        let (answered, asked) = crate::decide::findings::questions_answered(&found);
        RunNoise {
            run: run.id,
            floor: run.machine.fields().noise_floor.as_ref().map(|f| f.summary()),
            questions_answered: answered,
            questions_asked: asked,
            trials: trials.len(),
            blocks: trials.iter().map(|t| t.repeat).max().unwrap_or(0),
        }
    }

    fn line(&self) -> String {
        let decided = if self.questions_asked > 0 {
            format!("{} of {} questions answered, ", self.questions_answered, self.questions_asked)
        } else {
            String::new()
        };
        format!(
            "  run {}: {}; {decided}{} trials, up to {} repeats a cell",
            self.run,
            self.floor.as_deref().unwrap_or("no noise floor recorded"),
            self.trials,
            self.blocks
        )
    }
}

/// The noise floors and decisions of two runs, and whether the floors differ.
pub fn noise_text(a: &RunNoise, b: &RunNoise, differences: &[String]) -> String {
    let mut out = vec!["noise floors (probed before each run's trials):".to_string(), a.line(), b.line()];
    if a.floor.is_none() || b.floor.is_none() {
        out.push("  (a run without a floor cannot be set beside the other's noise)".into());
    } else if differences.is_empty() {
        out.push("  the floors agree within their repeats' spread: the runs saw alike machines".into());
    } else {
        out.push("  the floors differ: the machine was not as quiet for both runs, so part of any difference may be its noise".into());
        out.extend(differences.iter().map(|d| format!("  - {d}")));
    }
    out.join("\n")
}

pub fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// Three decimals, or the order of magnitude when that would read 0.000.
pub fn p_text(p: f64) -> String {
    if p >= 0.0005 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "Family",
        "Parameters",
        "Figure",
        "n A/B",
        "A median",
        "B median",
        "B/A",
        "95% CI",
        "drift",
        "p",
        "p Holm",
        "Verdict",
    ])
    .left_align(0)
    .left_align(1)
    .left_align(2)
    .left_align(11);
    for r in rows {
        let n = |ok: usize, bad: usize| if bad > 0 { format!("{ok}(+{bad} not ok)") } else { ok.to_string() };
        t.push(vec![
            r.family.as_str().to_string(),
            params_text(&r.params),
            r.label.to_string(),
            format!("{}/{}", n(r.a.len(), r.not_ok_a), n(r.b.len(), r.not_ok_b)),
            if r.a.is_empty() { "-".into() } else { number(median(&r.a)) },
            if r.b.is_empty() { "-".into() } else { number(median(&r.b)) },
            r.ratio.map_or("-".into(), |x| format!("{x:.3}")),
            r.ci.map_or("-".into(), |(lo, hi)| format!("{lo:.3}..{hi:.3}")),
            drift_text(r.drift),
            r.p.map_or("-".into(), p_text),
            r.p_adjusted.map_or("-".into(), p_text),
            format!("{}{}", r.verdict_text(), if r.regression { " REGRESSION" } else { "" }),
        ]);
    }
    t
}

/// A row of `compare --format json`: one JSON line per cell and figure.
#[derive(Serialize)]
pub struct RowDoc<'a> {
    family: Family,
    params: &'a Cell,
    figure: &'static str,
    n_a: usize,
    n_b: usize,
    not_ok_a: usize,
    not_ok_b: usize,
    median_a: Option<f64>,
    median_b: Option<f64>,
    ratio: Option<f64>,
    ci_low: Option<f64>,
    ci_high: Option<f64>,
    p_value: Option<f64>,
    p_adjusted: Option<f64>,
    mode: &'static str,
    drift: Option<f64>,
    verdict: &'static str,
    regression: bool,
}

pub fn json_rows(rows: &[Row], mode: Mode) -> Vec<RowDoc<'_>> {
    let median_of = |v: &[f64]| (!v.is_empty()).then(|| median(v));
    rows.iter()
        .map(|r| RowDoc {
            family: r.family,
            params: &r.params,
            figure: r.figure,
            n_a: r.a.len(),
            n_b: r.b.len(),
            not_ok_a: r.not_ok_a,
            not_ok_b: r.not_ok_b,
            median_a: median_of(&r.a),
            median_b: median_of(&r.b),
            ratio: r.ratio,
            ci_low: r.ci.map(|c| c.0),
            ci_high: r.ci.map(|c| c.1),
            p_value: r.p,
            p_adjusted: r.p_adjusted,
            mode: mode.as_str(),
            drift: r.drift.fraction(),
            verdict: r.verdict.key(),
            regression: r.regression,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::compare::{compare, tests::lucky_ring_run};

    #[test]
    fn the_power_note_says_why_four_repeats_cannot_call_a_figure_different() {
        let rows = compare(&lucky_ring_run(2), &lucky_ring_run(1), 0.05, Mode::Separate { history_runs: 0 }, &[], &[]);
        assert!(rows.iter().all(|r| r.verdict == Verdict::NoDifference));
        let note = power_note(&rows).unwrap();
        assert!(note.contains("10 figures tested") && note.contains("0.0050"), "{note}");
    }
}
