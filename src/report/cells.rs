//! What a stored cell's headline is, and the small texts every table and page writes it
//! with: the run's rule for its cells, the headline's median and interval, the CI
//! column, fixed decimals, and the cells grouped by experiment.

use crate::analysis::stats::MEDIAN_CI_MIN_N;
use crate::exec::adaptive::{self, AdaptivePlan, Stop};
use crate::families::figures;
use crate::store::group::Group;
use crate::store::{RunRecord, RunStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a run asked of its cells: its adaptive plan, and whether it finished (a cell a
/// finished run left short of its target below `max_repeat` was stopped by the budget).
#[derive(Clone, Debug, Default)]
pub struct RunRule {
    pub plan: AdaptivePlan,
    pub finished: bool,
    /// What each experiment asks: the cells of a question stop when it is answered, not
    /// at a precision target.
    pub asking: Vec<crate::exec::suite::Asking>,
}

impl RunRule {
    pub fn of(run: &RunRecord) -> RunRule {
        RunRule {
            plan: AdaptivePlan::of_run_options(&run.options),
            finished: run.status == RunStatus::Finished,
            asking: crate::exec::suite::asked_of_run(run),
        }
    }

    /// The precision target of a group's cell: its experiment's, unless the cell is part
    /// of a question.
    fn target(&self, g: &Group) -> Option<crate::exec::adaptive::StoppingRule> {
        if crate::decide::findings::question_axis(g, &self.asking).is_some() {
            return None;
        }
        self.plan.target(usize::try_from(g.experiment).ok()?)
    }
}

/// A cell's headline figure: its median, the 95 % distribution-free interval of that
/// median (`stats::median_ci`), and for an adaptive experiment whether it reached its
/// target. What `report --format json` carries per cell and the tables' CI column shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Headline {
    pub figure: &'static str,
    /// Ok repeats.
    pub n: usize,
    pub median: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The exact coverage of the interval (at least 0.95).
    pub ci_coverage: Option<f64>,
    /// max(median − low, high − median) / median.
    pub ci_half_width: Option<f64>,
    /// Why there is no interval, when there is none.
    pub ci_missing: Option<String>,
    /// The experiment's adaptive target (relative half-width); `None` for fixed repeats.
    pub target_ci: Option<f64>,
    /// Whether the interval reached the target; `None` for fixed repeats.
    pub converged: Option<bool>,
    /// Why an adaptive cell stopped short of its target.
    pub stopped_by: Option<Stop>,
}

pub fn headline(g: &Group, rule: &RunRule) -> Headline {
    let values = g.headlines();
    let figure = g.outcomes().next().map_or_else(|| g.family.headline_figure(), |o| figures::headline_of(o).key);
    let ci = adaptive::interval(&values);
    let half_width = ci.as_ref().and_then(|c| c.relative_half_width());
    let ci_missing = match (&ci, values.len()) {
        (Some(_), _) if half_width.is_none() => Some("the median is 0: no relative width".to_string()),
        (Some(_), _) => None,
        (None, 0) if g.ok().next().is_some() => {
            Some(format!("the ok repeats do not give {figure} (published figures)"))
        }
        (None, 0) => Some("no ok repeats".to_string()),
        (None, n) => Some(format!(
            "a distribution-free 95% interval of a median needs at least {MEDIAN_CI_MIN_N} ok repeats; this cell has {n}"
        )),
    };
    let target = rule.target(g);
    let stopped_by = target.and_then(|t| adaptive::stop_reason(&values, g.trials.len() as u32, &t, rule.finished));
    Headline {
        figure,
        n: values.len(),
        median: (!values.is_empty()).then(|| crate::analysis::stats::median(&values)),
        ci_low: ci.map(|c| c.low),
        ci_high: ci.map(|c| c.high),
        ci_coverage: ci.map(|c| c.coverage),
        ci_half_width: half_width,
        ci_missing,
        target_ci: target.map(|t| t.ci),
        converged: target.map(|_| stopped_by.is_none()),
        stopped_by,
    }
}

/// 0.05 -> "5", 0.0001 -> "0.01": a fraction as a percentage without trailing zeros.
pub fn percent_text(fraction: f64) -> String {
    let text = format!("{:.4}", fraction * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The CI column: "±3.2%", with "(max)", "(budget)" or "(unfinished)" when an adaptive cell
/// stopped short of its target; "n<6" without an interval.
pub fn ci_cell(h: &Headline) -> String {
    let width = match (h.ci_half_width, h.n) {
        (Some(w), _) => format!("±{:.1}%", w * 100.0),
        (None, n) if n < MEDIAN_CI_MIN_N => format!("n<{MEDIAN_CI_MIN_N}"),
        (None, _) => "-".to_string(),
    };
    match h.stopped_by {
        Some(Stop::MaxRepeat) => format!("{width} (max)"),
        Some(Stop::Budget) => format!("{width} (budget)"),
        Some(Stop::Unfinished) => format!("{width} (unfinished)"),
        None => width,
    }
}

pub fn fixed(v: Option<f64>, decimals: usize) -> String {
    v.filter(|x| x.is_finite()).map_or("-".into(), |x| format!("{x:.decimals$}"))
}

/// The groups of each experiment, in experiment order.
pub fn by_experiment<'a, 'b>(all: &'b [Group<'a>]) -> BTreeMap<i64, Vec<&'b Group<'a>>> {
    let mut out: BTreeMap<i64, Vec<&Group>> = BTreeMap::new();
    for g in all {
        out.entry(g.experiment).or_default().push(g);
    }
    out
}
