//! Adaptive repeats: instead of a fixed count, repeat each cell (one parameter
//! combination of an experiment) until the 95 % confidence interval of its headline
//! median (`Outcome::headline`) is as narrow as asked.
//!
//! The rule, decided by the pure functions below and only carried out by the runner:
//! 1. The plan's minimum (the experiment's `repeat`) runs first, like any suite.
//! 2. Then one trial at a time, round-robin over the cells still open, so slow drift of
//!    the machine is spread over every cell rather than landing on the last one. A cell
//!    is open while its interval is wider than the target (or it has too few ok repeats to
//!    have one: `stats::MEDIAN_CI_MIN_N`) and it has had fewer than `max_repeat` trials.
//!    Whether a cell converged is judged again after each of its trials.
//! 3. A trial starts only if the time the run has used plus that cell's typical trial
//!    time fits the budget; when no open cell's trial fits, the run ends. Cells left open
//!    are reported as stopped by `max_repeat` or by the budget, never dropped.
//!
//! The interval is the distribution-free one of `stats::median_ci` (order statistics), so
//! skewed figures such as wall times and p99 latencies need no normality assumption.

use crate::analysis::stats::{median, median_ci, MedianCi};
use crate::error::{Error, Result};
use crate::exec::suite::{Suite, Trial};
use crate::model::run::RunOptions;
use crate::store::TrialRecord;
use serde::Serialize;
use std::time::Duration;

/// The confidence of every interval that decides a cell.
pub const CONFIDENCE: f64 = 0.95;
/// `max_repeat` when a target is set without one.
pub const DEFAULT_MAX_REPEAT: u32 = 30;
/// Without a budget anywhere, an adaptive run may take this many times the estimated time
/// of its planned minimum, and at least `DEFAULT_BUDGET_FLOOR` (estimates are rough, and a
/// short run is cheap to extend).
pub const DEFAULT_BUDGET_FACTOR: f64 = 3.0;
pub const DEFAULT_BUDGET_FLOOR: Duration = Duration::from_secs(60);

// The plan's data is the domain's (a stored run's options carry it); its rules are here.
pub use crate::model::run::{AdaptivePlan, Target};

/// What `schedlab run` was given on top of the suite.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overrides {
    pub target_ci: Option<f64>,
    pub max_repeat: Option<u32>,
    pub budget: Option<Duration>,
}

impl AdaptivePlan {
    /// The suite's `target_ci`, `max_repeat` and `budget`, each replaced by its flag when
    /// given; `--target-ci` makes every experiment adaptive.
    pub fn resolve(suite: &Suite, flags: &Overrides) -> Result<AdaptivePlan> {
        let mut targets = Vec::with_capacity(suite.experiments.len());
        for (i, e) in suite.experiments.iter().enumerate() {
            let Some(ci) = flags.target_ci.or(e.target_ci) else {
                targets.push(None);
                continue;
            };
            let max_repeat = flags.max_repeat.or(e.max_repeat).unwrap_or(DEFAULT_MAX_REPEAT.max(e.repeat));
            if max_repeat < e.repeat {
                return Err(Error::usage(format!(
                    "--max-repeat {max_repeat} is below experiment {}'s repeat = {}: the planned repeats are the \
                     minimum, so give at least {}",
                    i + 1,
                    e.repeat,
                    e.repeat
                )));
            }
            targets.push(Some(Target { ci, min_repeat: e.repeat, max_repeat }));
        }
        let plan_budget = flags.budget.or(suite.budget);
        let adaptive = targets.iter().any(Option::is_some);
        if !adaptive && (flags.max_repeat.is_some() || flags.budget.is_some()) {
            return Err(Error::usage(
                "--max-repeat and --budget limit adaptive repeats: add --target-ci (e.g. --target-ci 5%) or use a \
                 suite whose experiments set target_ci",
            ));
        }
        if !adaptive && suite.budget.is_some() {
            return Err(Error::usage(format!(
                "{}: a budget limits adaptive repeats, and no experiment sets target_ci: add target_ci (e.g. \
                 target_ci = \"5%\") to an experiment, pass --target-ci, or remove the budget",
                suite.budget_at.as_deref().unwrap_or("budget")
            )));
        }
        if let Some(budget) = plan_budget.filter(|_| adaptive) {
            check_budget(suite, budget, flags.budget.is_some())?;
        }
        let default_budget =
            || (suite.estimate().as_secs_f64() * DEFAULT_BUDGET_FACTOR).max(DEFAULT_BUDGET_FLOOR.as_secs_f64());
        let budget_s = adaptive.then(|| plan_budget.map_or_else(default_budget, |b| b.as_secs_f64()));
        Ok(AdaptivePlan { targets, budget_s })
    }

    /// The plan a stored run was started with (none for a run of fixed repeats, or one
    /// stored before adaptive repeats existed).
    pub fn of_run_options(options: &RunOptions) -> AdaptivePlan {
        options.adaptive.clone().unwrap_or_default()
    }

    pub fn is_adaptive(&self) -> bool {
        self.targets.iter().any(Option::is_some)
    }

    pub fn target(&self, experiment: usize) -> Option<Target> {
        self.targets.get(experiment).copied().flatten()
    }

    pub fn budget(&self) -> Option<Duration> {
        self.budget_s.map(Duration::from_secs_f64)
    }

    /// The most trials the run can store: every cell of an adaptive experiment at its
    /// `max_repeat`, the others at their planned count.
    pub fn most_trials(&self, suite: &Suite) -> usize {
        let extra: usize = suite
            .trials
            .iter()
            .filter_map(|t| self.target(t.experiment).filter(|target| t.repeat == target.min_repeat))
            .map(|target| (target.max_repeat - target.min_repeat) as usize)
            .sum();
        suite.trials.len() + extra
    }
}

/// A budget must hold the planned minimum, which runs whatever the budget (a budget below
/// it would silently run over and leave no time for an adaptive repeat): refuse one that
/// cannot, saying how long the minimum takes, a budget that fits it, and the repeats that
/// would fit the budget given.
fn check_budget(suite: &Suite, budget: Duration, from_flag: bool) -> Result<()> {
    let minimum = suite.estimate();
    if budget >= minimum {
        return Ok(());
    }
    let given = crate::model::parse::duration_arg(budget.as_nanos() as u64);
    let fits = suggest_budget(minimum);
    let roomy = suggest_budget(minimum.mul_f64(DEFAULT_BUDGET_FACTOR).max(DEFAULT_BUDGET_FLOOR));
    let (what, give) = if from_flag {
        (format!("--budget {given}"), format!("--budget {fits} or more (--budget {roomy}"))
    } else {
        (
            format!("{} = \"{given}\"", suite.budget_at.as_deref().unwrap_or("budget")),
            format!("budget = \"{fits}\" or more, or --budget (\"{roomy}\""),
        )
    };
    let fewer = match fitting_repeat(suite, budget) {
        Some(k) => format!("; or plan fewer trials: with at most repeat = {k} in each experiment the minimum fits"),
        None => String::new(),
    };
    Err(Error::usage(format!(
        "{what} is less than the planned minimum needs: {} trials{}, estimated {} here, all run before any adaptive \
         repeat; give {give}, 3x the minimum, leaves room for adaptive repeats){fewer}",
        suite.trials.len(),
        if suite.warmups.is_empty() { String::new() } else { format!(" + {} warm-up", suite.warmups.len()) },
        crate::exec::suite::format_estimate(minimum),
    )))
}

/// A budget a flag or suite key takes, rounded up: "45s", "16m".
fn suggest_budget(d: Duration) -> String {
    let s = d.as_secs_f64().ceil() as u64;
    if s < 120 {
        format!("{}s", s.max(1))
    } else {
        format!("{}m", s.div_ceil(60))
    }
}

/// The largest repeat k (1 or more) such that capping every experiment's repeats at k
/// brings the planned minimum within `budget`; `None` when even one repeat does not fit.
fn fitting_repeat(suite: &Suite, budget: Duration) -> Option<u32> {
    let warmups: Duration = suite.warmups.iter().map(|t| t.estimate).sum();
    let at = |k: u32| -> Duration {
        warmups + suite.trials.iter().filter(|t| t.repeat <= k).map(|t| t.estimate).sum::<Duration>()
    };
    let most = suite.experiments.iter().map(|e| e.repeat).max().unwrap_or(1);
    (1..most).rev().find(|&k| at(k) <= budget)
}

/// Why a cell ended without reaching its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// It had `max_repeat` trials.
    MaxRepeat,
    /// The run's budget left no time for another of its trials.
    Budget,
    /// The run has not finished (interrupted; `run --resume` continues it).
    Unfinished,
}

impl Stop {
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::MaxRepeat => "max_repeat",
            Stop::Budget => "budget",
            Stop::Unfinished => "unfinished",
        }
    }
}

/// The 95 % interval of a cell's headline median, `None` with fewer than
/// `stats::MEDIAN_CI_MIN_N` ok values.
pub fn interval(headlines: &[f64]) -> Option<MedianCi> {
    median_ci(headlines, CONFIDENCE)
}

/// Whether an interval is as narrow as the target (no interval: not yet).
pub fn within(ci: Option<&MedianCi>, target_ci: f64) -> bool {
    ci.and_then(MedianCi::relative_half_width).is_some_and(|w| w <= target_ci)
}

/// A cell the runner may still extend: what it has so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub target: Target,
    /// The headline figure of each ok trial.
    pub headlines: Vec<f64>,
    /// Every stored trial of the cell, ok or not.
    pub attempts: u32,
    /// What one more trial is expected to take: the median of its trials so far.
    pub typical: Duration,
}

impl Cell {
    pub fn converged(&self) -> bool {
        within(interval(&self.headlines).as_ref(), self.target.ci)
    }

    /// Wants another trial: not converged and below its maximum.
    pub fn is_open(&self) -> bool {
        self.attempts < self.target.max_repeat && !self.converged()
    }
}

/// Why a cell did not converge, or `None` when it did: what a report says of it.
pub fn stop_reason(headlines: &[f64], attempts: u32, target: &Target, run_finished: bool) -> Option<Stop> {
    if within(interval(headlines).as_ref(), target.ci) {
        None
    } else if attempts >= target.max_repeat {
        Some(Stop::MaxRepeat)
    } else if run_finished {
        Some(Stop::Budget)
    } else {
        Some(Stop::Unfinished)
    }
}

/// The runner's next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Run one more trial of this cell.
    Run(usize),
    /// Every cell converged or reached its maximum.
    Done,
    /// Cells are open, but none of their trials fits in the budget left.
    OutOfBudget,
}

/// Round-robin: the first open cell after `after` (wrapping) whose typical trial fits in
/// the budget, counting `used` as spent. A cell too slow for the time left is passed over
/// for a quicker one.
pub fn next_cell(cells: &[Cell], after: Option<usize>, used: Duration, budget: Option<Duration>) -> Next {
    let start = after.map_or(0, |i| i + 1);
    let mut any_open = false;
    for step in 0..cells.len() {
        let i = (start + step) % cells.len();
        if !cells[i].is_open() {
            continue;
        }
        any_open = true;
        if budget.is_none_or(|b| used + cells[i].typical <= b) {
            return Next::Run(i);
        }
    }
    if any_open {
        Next::OutOfBudget
    } else {
        Next::Done
    }
}

/// The adaptive part of one run: its cells (each with the plan's first trial of it as a
/// template), where the round-robin stands, and the next free `seq`.
pub struct Session {
    templates: Vec<Trial>,
    cells: Vec<Cell>,
    /// The elapsed time of every trial of each cell, for `typical`.
    elapsed: Vec<Vec<f64>>,
    cursor: Option<usize>,
    next_seq: usize,
    budget: Option<Duration>,
}

impl Session {
    /// The adaptive cells of `suite` in plan order, with what `stored` (every trial the run
    /// has stored so far, from this invocation or an earlier one) holds of each.
    pub fn new(suite: &Suite, plan: &AdaptivePlan, stored: &[TrialRecord]) -> Session {
        let mut templates: Vec<Trial> = Vec::new();
        let mut cells = Vec::new();
        let mut elapsed = Vec::new();
        for trial in &suite.trials {
            let Some(target) = plan.target(trial.experiment) else { continue };
            if templates.iter().any(|t| t.experiment == trial.experiment && t.params == trial.params) {
                continue;
            }
            let mine: Vec<&TrialRecord> =
                stored.iter().filter(|r| r.experiment == trial.experiment as i64 && r.params == trial.params).collect();
            let headlines = mine.iter().filter(|r| r.is_ok()).filter_map(|r| r.outcome.as_ref()).map(|o| o.headline());
            let times: Vec<f64> = mine.iter().map(|r| r.elapsed_s).collect();
            cells.push(Cell {
                target,
                headlines: headlines.collect(),
                attempts: mine.len() as u32,
                typical: typical(&times, trial.estimate),
            });
            elapsed.push(times);
            templates.push(trial.clone());
        }
        let after_stored = stored.iter().map(|r| r.seq + 1).max().unwrap_or(0).max(0) as usize;
        // A resumed run goes on from the cell after the last extra trial it stored.
        let last_extra = stored.iter().filter(|r| r.seq >= suite.trials.len() as i64).max_by_key(|r| r.seq);
        let cursor = last_extra
            .and_then(|r| templates.iter().position(|t| t.experiment as i64 == r.experiment && t.params == r.params));
        Session {
            templates,
            cells,
            elapsed,
            cursor,
            next_seq: after_stored.max(suite.trials.len()),
            budget: plan.budget(),
        }
    }

    /// The next extra trial to run, given the time the run has used; `Err` says why there is
    /// none.
    pub fn next_trial(&mut self, used: Duration) -> std::result::Result<Trial, Next> {
        match next_cell(&self.cells, self.cursor, used, self.budget) {
            Next::Run(i) => {
                self.cursor = Some(i);
                let mut trial = self.templates[i].clone();
                trial.seq = self.next_seq;
                trial.repeat = self.cells[i].attempts + 1;
                trial.estimate = self.cells[i].typical;
                self.next_seq += 1;
                Ok(trial)
            }
            other => Err(other),
        }
    }

    /// Count a finished extra trial (`trial` as `next_trial` gave it).
    pub fn record(&mut self, trial: &Trial, record: &TrialRecord) {
        let Some(i) = self.templates.iter().position(|t| t.experiment == trial.experiment && t.params == trial.params)
        else {
            return;
        };
        let cell = &mut self.cells[i];
        cell.attempts += 1;
        if let Some(o) = record.outcome.as_ref().filter(|_| record.is_ok()) {
            cell.headlines.push(o.headline());
        }
        self.elapsed[i].push(record.elapsed_s);
        cell.typical = typical(&self.elapsed[i], self.templates[i].estimate);
    }

    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    pub fn open_cells(&self) -> usize {
        self.cells.iter().filter(|c| c.is_open()).count()
    }
}

/// The median of a cell's trial times so far, or the plan's estimate before any.
fn typical(elapsed_s: &[f64], estimate: Duration) -> Duration {
    if elapsed_s.is_empty() {
        return estimate;
    }
    Duration::from_secs_f64(median(elapsed_s).max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(ci: f64, max_repeat: u32) -> Target {
        Target { ci, min_repeat: 6, max_repeat }
    }

    fn cell(values: &[f64], max_repeat: u32, typical_ms: u64) -> Cell {
        Cell {
            target: target(0.05, max_repeat),
            headlines: values.to_vec(),
            attempts: values.len() as u32,
            typical: Duration::from_millis(typical_ms),
        }
    }

    const TIGHT: [f64; 6] = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0];
    const WIDE: [f64; 6] = [100.0, 130.0, 80.0, 100.0, 110.0, 95.0];

    #[test]
    fn a_cell_converges_when_its_interval_is_within_the_target() {
        assert!(cell(&TIGHT, 30, 10).converged());
        assert!(!cell(&TIGHT, 30, 10).is_open());
        // [min, max] of six is 80..130 around 100: ±30 %.
        assert!(!cell(&WIDE, 30, 10).converged());
        assert!(cell(&WIDE, 30, 10).is_open());
        // Five tight values have no 95 % interval yet: open, not converged.
        assert!(cell(&TIGHT[..5], 30, 10).is_open());
        // At its maximum, a wide cell is closed without converging.
        assert!(!cell(&WIDE, 6, 10).is_open());
    }

    #[test]
    fn failed_trials_count_toward_the_maximum() {
        let mut c = cell(&TIGHT[..3], 6, 10);
        c.attempts = 6;
        assert!(!c.is_open());
        assert_eq!(stop_reason(&c.headlines, c.attempts, &c.target, true), Some(Stop::MaxRepeat));
    }

    #[test]
    fn stop_reasons() {
        let t = target(0.05, 10);
        assert_eq!(stop_reason(&TIGHT, 6, &t, true), None);
        assert_eq!(stop_reason(&WIDE, 10, &t, true), Some(Stop::MaxRepeat));
        assert_eq!(stop_reason(&WIDE, 6, &t, true), Some(Stop::Budget));
        assert_eq!(stop_reason(&WIDE, 6, &t, false), Some(Stop::Unfinished));
        // A reachable target for the wide cell: ±30 % is within 35 %.
        assert_eq!(stop_reason(&WIDE, 6, &target(0.35, 10), true), None);
    }

    #[test]
    fn round_robin_over_open_cells_only() {
        let cells = vec![cell(&WIDE, 30, 10), cell(&TIGHT, 30, 10), cell(&WIDE, 30, 10), cell(&WIDE, 30, 10)];
        let none = None;
        assert_eq!(next_cell(&cells, None, Duration::ZERO, none), Next::Run(0));
        // Cell 1 has converged: skipped.
        assert_eq!(next_cell(&cells, Some(0), Duration::ZERO, none), Next::Run(2));
        assert_eq!(next_cell(&cells, Some(2), Duration::ZERO, none), Next::Run(3));
        // Wraps around.
        assert_eq!(next_cell(&cells, Some(3), Duration::ZERO, none), Next::Run(0));
        let done = vec![cell(&TIGHT, 30, 10), cell(&WIDE, 6, 10)];
        assert_eq!(next_cell(&done, None, Duration::ZERO, none), Next::Done);
        assert_eq!(next_cell(&[], None, Duration::ZERO, none), Next::Done);
    }

    #[test]
    fn the_budget_passes_over_slow_cells_then_stops() {
        let cells = vec![cell(&WIDE, 30, 5000), cell(&WIDE, 30, 100)];
        let budget = Some(Duration::from_secs(10));
        // 6 s used: the 5 s cell does not fit, the 0.1 s one does.
        assert_eq!(next_cell(&cells, None, Duration::from_secs(6), budget), Next::Run(1));
        assert_eq!(next_cell(&cells, Some(1), Duration::from_secs(4), budget), Next::Run(0));
        assert_eq!(next_cell(&cells, None, Duration::from_millis(9950), budget), Next::OutOfBudget);
        // Converged cells never ask for time.
        let done = vec![cell(&TIGHT, 30, 5000)];
        assert_eq!(next_cell(&done, None, Duration::from_secs(60), budget), Next::Done);
    }

    fn suite(text: &str) -> Suite {
        crate::exec::suite::parse("t.toml", text, "t", false).unwrap()
    }

    const TWO_CELLS: &str = "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 10\nrepeat = 2\n\
                             target_ci = \"5%\"\nmax_repeat = 4\n";

    #[test]
    fn a_plan_takes_suite_keys_and_flags_override_them() {
        let s = suite(TWO_CELLS);
        let plan = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap();
        assert_eq!(plan.targets, vec![Some(Target { ci: 0.05, min_repeat: 2, max_repeat: 4 })]);
        assert_eq!(plan.most_trials(&s), 2 * 4);
        // A tiny plan: the floor.
        assert_eq!(plan.budget_s, Some(DEFAULT_BUDGET_FLOOR.as_secs_f64()));
        let long = suite(&TWO_CELLS.replace("laps = 10", "laps = 10_000_000"));
        let plan = AdaptivePlan::resolve(&long, &Overrides::default()).unwrap();
        let factor = plan.budget_s.unwrap() / long.estimate().as_secs_f64();
        assert!((factor - DEFAULT_BUDGET_FACTOR).abs() < 1e-9, "{factor}");
        let flags = Overrides { target_ci: Some(0.01), max_repeat: Some(9), budget: Some(Duration::from_secs(40)) };
        let plan = AdaptivePlan::resolve(&s, &flags).unwrap();
        assert_eq!(plan.targets, vec![Some(Target { ci: 0.01, min_repeat: 2, max_repeat: 9 })]);
        assert_eq!(plan.budget_s, Some(40.0));
        // Stored and read back as a run's options.
        let options = serde_json::json!({ "full": false, "adaptive": plan });
        assert_eq!(AdaptivePlan::of_run_options(&RunOptions::from_json(options)), plan);
        let fixed = RunOptions::from_json(serde_json::json!({ "full": false }));
        assert!(!AdaptivePlan::of_run_options(&fixed).is_adaptive());
    }

    #[test]
    fn target_ci_on_the_command_line_makes_every_experiment_adaptive() {
        let s = suite("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 10\nrepeat = 4\n");
        assert!(!AdaptivePlan::resolve(&s, &Overrides::default()).unwrap().is_adaptive());
        let plan = AdaptivePlan::resolve(&s, &Overrides { target_ci: Some(0.05), ..Overrides::default() }).unwrap();
        assert_eq!(plan.target(0), Some(Target { ci: 0.05, min_repeat: 4, max_repeat: DEFAULT_MAX_REPEAT }));
        let e = AdaptivePlan::resolve(&s, &Overrides { max_repeat: Some(8), ..Overrides::default() }).unwrap_err();
        assert!(e.to_string().contains("--target-ci"), "{e}");
        let e = AdaptivePlan::resolve(&s, &Overrides { target_ci: Some(0.05), max_repeat: Some(3), budget: None })
            .unwrap_err();
        assert!(e.to_string().contains("below experiment 1's repeat = 4"), "{e}");
    }

    #[test]
    fn a_budget_below_the_planned_minimum_is_refused_with_one_that_fits() {
        // 2 cells x 6 repeats of 100 ms rings: about 2 s planned.
        let text = "budget = \"1s\"\n[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nduration = \"100ms\"\n\
                    repeat = 6\ntarget_ci = \"5%\"\n";
        let s = suite(text);
        let minimum = s.estimate().as_secs_f64();
        assert!((1.5..3.0).contains(&minimum), "{minimum}");
        let e = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap_err().to_string();
        assert!(e.starts_with("t.toml:1: budget = \"1s\" is less than the planned minimum needs: 12 trials"), "{e}");
        assert!(e.contains("give budget = \"3s\" or more, or --budget (\"60s\", 3x the minimum"), "{e}");
        assert!(e.contains("with at most repeat = 2 in each experiment the minimum fits"), "{e}");
        // The flag replaces the suite's budget, and is named when it is the short one.
        let flags = |b: u64| Overrides { budget: Some(Duration::from_millis(b)), ..Overrides::default() };
        assert_eq!(AdaptivePlan::resolve(&s, &flags(3000)).unwrap().budget_s, Some(3.0));
        let e = AdaptivePlan::resolve(&s, &flags(500)).unwrap_err().to_string();
        assert!(e.starts_with("--budget 500ms is less than") && e.contains("give --budget 3s or more"), "{e}");
        // Nothing fits, not even one repeat: only the budget is suggested.
        let e = AdaptivePlan::resolve(&s, &flags(10)).unwrap_err().to_string();
        assert!(!e.contains("fewer trials"), "{e}");
        // A fixed-repeat run has no budget to check.
        let fixed = suite("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nduration = \"100ms\"\nrepeat = 6\n");
        assert!(!AdaptivePlan::resolve(&fixed, &Overrides::default()).unwrap().is_adaptive());
    }

    #[test]
    fn a_suite_budget_without_adaptive_repeats_is_refused() {
        let s = suite("budget = \"5m\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 10\n");
        let e = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap_err().to_string();
        assert!(
            e.starts_with("t.toml:1: budget: a budget limits adaptive repeats") && e.contains("add target_ci"),
            "{e}"
        );
        // --target-ci makes it adaptive, and the budget then applies.
        let plan = AdaptivePlan::resolve(&s, &Overrides { target_ci: Some(0.05), ..Overrides::default() }).unwrap();
        assert_eq!(plan.budget_s, Some(300.0));
    }

    #[test]
    fn built_in_suites_resolve_quick_and_full() {
        for (name, text) in crate::exec::suite::BUILT_IN {
            for full in [false, true] {
                let s = crate::exec::suite::parse(name, text, name, full).unwrap();
                AdaptivePlan::resolve(&s, &Overrides::default()).unwrap_or_else(|e| panic!("{name} full={full}: {e}"));
            }
        }
    }

    fn record(trial: &Trial, seq: i64, ns_per_switch: f64, ok: bool) -> TrialRecord {
        let (spec, mut o) = crate::model::sample_ring(2, 10, 1000);
        o.overhead_ps = 0;
        o.real_ns = (ns_per_switch * o.hops as f64) as u64;
        TrialRecord {
            seq,
            experiment: trial.experiment as i64,
            family: trial.family,
            repeat: i64::from(trial.repeat),
            params: trial.params.clone(),
            spec: Some(crate::model::TrialSpec::Ring(spec)),
            outcome: ok.then_some(crate::model::Outcome::Ring(o)),
            status: if ok { crate::model::TrialStatus::Ok } else { crate::model::TrialStatus::Failed("x".into()) },
            started: String::new(),
            elapsed_s: 0.5,
        }
    }

    #[test]
    fn a_session_resumes_from_what_is_stored_and_numbers_extras_after_it() {
        let s = suite(TWO_CELLS);
        let plan = AdaptivePlan::resolve(&s, &Overrides { budget: None, ..Overrides::default() }).unwrap();
        // The planned minimum (seq 0..3) and one extra of the first cell (seq 4) are stored.
        let mut stored: Vec<TrialRecord> =
            s.trials.iter().map(|t| record(t, t.seq as i64, 1000.0 + t.seq as f64 * 100.0, true)).collect();
        stored.push(record(&s.trials[0], 4, 1300.0, false));
        let mut session = Session::new(&s, &plan, &stored);
        assert_eq!(session.cells().len(), 2);
        assert_eq!(session.cells()[0].attempts, 3);
        assert_eq!(session.cells()[0].headlines.len(), 2, "the failed extra has no figure");
        assert_eq!(session.cells()[0].typical, Duration::from_millis(500));
        // Round-robin goes on after the cell of the last stored extra: the second.
        let first = session.next_trial(Duration::ZERO).unwrap();
        assert_eq!((first.seq, first.repeat, first.params["procs"].as_i64()), (5, 3, Some(3)));
        session.record(&first, &record(&first, 5, 1000.0, true));
        let second = session.next_trial(Duration::ZERO).unwrap();
        assert_eq!((second.seq, second.repeat, second.params["procs"].as_i64()), (6, 4, Some(2)));
        session.record(&second, &record(&second, 6, 1000.0, true));
        // Cell 1 reached max_repeat = 4; cell 2 has one more to go.
        let third = session.next_trial(Duration::ZERO).unwrap();
        assert_eq!((third.seq, third.repeat, third.params["procs"].as_i64()), (7, 4, Some(3)));
        session.record(&third, &record(&third, 7, 1000.0, true));
        assert_eq!(session.next_trial(Duration::ZERO).unwrap_err(), Next::Done);
        assert_eq!(session.open_cells(), 0);
    }
}
