//! Adaptive repeats: instead of a fixed count, spend a run's extra trials where they
//! answer something.
//!
//! Two kinds of work, both decided by the pure functions below and only carried out by
//! the runner:
//! - A *question*: the cells of one experiment that differ only in its compared axis
//!   (`compare`, by default the policy), e.g. "OTHER or FIFO for CPU-bound work at 8
//!   processes?". Its cells run in *blocks*, one trial of each back to back in random
//!   order, and it is answered by `analysis::sequential` (a difference or equivalence,
//!   anytime-valid, so stopping as soon as it is answered is allowed). A question is open
//!   until answered by Holm over the run's family of claims as the report applies it
//!   (`stats::holm_grouped`), or until its cells reach `max_repeat`.
//! - A lone cell (a ring size of a sweep, any cell of an experiment without a compared
//!   axis): repeated until the 95 % interval of its headline median (`Outcome::headline`)
//!   is as narrow as `target_ci`, a precision rule that never looks at a verdict.
//!
//! 1. The plan's minimum (the experiment's `repeat`) runs first, in blocks.
//! 2. Then one block (or one lone trial) at a time: the open item *cheapest to answer in
//!    all*, in seconds: what it has taken so far plus what it still needs — a question's
//!    blocks still needed if its blocks go on as so far (`Comparison::blocks_to_answer`)
//!    times what a block takes, a lone cell's repeats still needed at its current width
//!    (which narrows as 1/√n) times its trial; ties round-robin. Effort goes where it
//!    soonest buys an answer, and the time already spent shares the budget: a question
//!    whose projection keeps saying "a few more blocks" cannot take the run while others
//!    are a few blocks from an answer. A question below the fewest blocks any answer
//!    needs counts only the blocks to reach them: a projection from so few says little.
//! 3. An item runs only if the time the run has used plus its typical trial times fits the
//!    budget; when none fits, the run ends. Items left open are reported as stopped by
//!    `max_repeat` or by the budget, never dropped.
//! 4. A question's block one of whose trials met steal beyond `sequential::STEAL_LEVEL` is
//!    dropped whole, both sides, as soon as that trial ends (the rest of the block is not
//!    run), and run again at once under the same repeat number, at most
//!    `sequential::MAX_STEAL_RERUNS` times, if it fits the budget
//!    (`sequential::rerun_for_steal` says why no error rate moves). Its trials stay stored,
//!    marked discarded; the run counts the blocks re-run.
//!
//! A lone cell's interval is the distribution-free one of `stats::median_ci` (order
//! statistics), so skewed figures such as wall times and p99 latencies need no normality
//! assumption.

use crate::analysis::random::SplitMix64;
use crate::analysis::sequential::{
    decide, per_claim_alpha, rerun_for_steal, Comparison, Decision, ALPHA, MIN_BLOCKS, STEAL_LEVEL,
};
use crate::analysis::stats::holm_grouped;
use crate::analysis::stats::{median, median_ci, MedianCi};
use crate::error::{Error, Result};
use crate::exec::suite::{Asking, QuestionKey, Suite, Trial};
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
pub use crate::model::run::{AdaptivePlan, StoppingRule};

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
            targets.push(Some(StoppingRule { ci, min_repeat: e.repeat, max_repeat }));
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

    pub fn target(&self, experiment: usize) -> Option<StoppingRule> {
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
pub struct ExtendableCell {
    pub target: StoppingRule,
    /// The headline figure of each ok trial.
    pub headlines: Vec<f64>,
    /// Every stored trial of the cell, ok or not.
    pub attempts: u32,
    /// What one more trial is expected to take: the median of its trials so far.
    pub typical: Duration,
    /// The headline of each ok trial keyed by its repeat, the block it ran in.
    pub blocks: Vec<(u32, f64)>,
}

impl ExtendableCell {
    pub fn converged(&self) -> bool {
        within(interval(&self.headlines).as_ref(), self.target.ci)
    }

    /// Wants another trial: not converged and below its maximum.
    pub fn is_open(&self) -> bool {
        self.attempts < self.target.max_repeat && !self.converged()
    }
}

/// Why a cell did not converge, or `None` when it did: what a report says of it.
pub fn stop_reason(headlines: &[f64], attempts: u32, target: &StoppingRule, run_finished: bool) -> Option<Stop> {
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

/// Why the runner has no next trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Every cell converged or reached its maximum.
    Done,
    /// Cells are open, but none of their trials fits in the budget left.
    OutOfBudget,
}

/// One question of a run: its cells (indices into the session's cells) and the comparison
/// of what they hold.
#[derive(Clone, Debug)]
pub struct RunQuestion {
    pub key: QuestionKey,
    pub cells: Vec<usize>,
    /// How many figures the report tests it on (latency: p99 and the maximum, unless its
    /// experiment's `ask` keeps the p99 alone; a private cgroup's pressure where a trial
    /// measured it); the runner decides on the first, the headline.
    pub figures: usize,
    /// Its sides are called equivalent within 1 ± this (its experiment's `margin`).
    pub margin: f64,
    /// What its experiment asks: which figures count.
    pub asking: Asking,
}

/// Where a question stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuestionState {
    /// The leader is below every other cell.
    Differs,
    /// The leader and the runner-up are equivalent within the margin.
    Equivalent,
    Open,
}

/// Something the runner can spend time on: a question's next block, or a lone cell's trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Item {
    RunQuestion(usize),
    ExtendableCell(usize),
}

/// The adaptive part of one run: its cells (each with the plan's first trial of it as a
/// template), its questions, where the round-robin stands, and the next free `seq`.
pub struct Session {
    templates: Vec<Trial>,
    cells: Vec<ExtendableCell>,
    questions: Vec<RunQuestion>,
    /// The report's questions that no adaptive experiment asks (experiments of fixed
    /// repeats): their cells and figures. Their claims are in the run's family too, at
    /// p = 1 here (the runner does not run them), so the runner never stops a question
    /// the report would call open.
    outside: Vec<(usize, usize)>,
    /// The elapsed time of every trial of each cell, for `typical`.
    elapsed: Vec<Vec<f64>>,
    cursor: Option<Item>,
    next_seq: usize,
    budget: Option<Duration>,
    rng: SplitMix64,
    /// Each block dropped for steal, as (question, repeat), stored ones included.
    dropped: Vec<(usize, u32)>,
    /// A dropped block to run again before anything else.
    rerun: Option<(usize, u32)>,
}

impl Session {
    /// The adaptive cells of `suite` in plan order, with what `stored` (every trial the run
    /// has stored so far, from this invocation or an earlier one) holds of each; `seed`
    /// orders the trials within each block.
    pub fn new(suite: &Suite, plan: &AdaptivePlan, stored: &[TrialRecord], seed: u64) -> Session {
        let mut templates: Vec<Trial> = Vec::new();
        let mut cells = Vec::new();
        let mut elapsed = Vec::new();
        // How many figures the report will test a question of experiment `e` on: the most
        // any of its stored trials shows (a private cgroup's pressure where one measured it;
        // counting more claims than the report only makes the runner stricter), else what
        // the suite asks. The planned minimum is stored before a session starts.
        let tested = |e: usize| -> usize {
            let experiment = &suite.experiments[e];
            let asking = experiment.asking();
            let ok = stored.iter().filter(|r| r.experiment == e as i64 && r.is_ok());
            let seen = ok.filter_map(|r| r.outcome.as_ref()).map(|o| asking.tested_of(o).len()).max();
            seen.unwrap_or_else(|| experiment.questioned().len()).max(1)
        };
        let mut questions: Vec<RunQuestion> = Vec::new();
        for trial in &suite.trials {
            let Some(target) = plan.target(trial.experiment) else { continue };
            if templates.iter().any(|t| t.experiment == trial.experiment && t.params == trial.params) {
                continue;
            }
            // A trial dropped with its block for steal is as if never run: its block ran again.
            let mine: Vec<&TrialRecord> = stored
                .iter()
                .filter(|r| r.experiment == trial.experiment as i64 && r.params == trial.params)
                .filter(|r| !matches!(r.status, crate::model::TrialStatus::Discarded(_)))
                .collect();
            let ok: Vec<(u32, f64)> = mine
                .iter()
                .filter(|r| r.is_ok())
                .filter_map(|r| Some((u32::try_from(r.repeat).ok()?, r.outcome.as_ref()?.headline())))
                .collect();
            let times: Vec<f64> = mine.iter().map(|r| r.elapsed_s).collect();
            if let Some(key) = suite.question_of(trial) {
                match questions.iter_mut().find(|q| q.key == key) {
                    Some(q) => q.cells.push(cells.len()),
                    None => {
                        let experiment = &suite.experiments[trial.experiment];
                        questions.push(RunQuestion {
                            key,
                            cells: vec![cells.len()],
                            figures: tested(trial.experiment),
                            margin: experiment.margin,
                            asking: experiment.asking(),
                        })
                    }
                }
            }
            cells.push(ExtendableCell {
                target,
                headlines: ok.iter().map(|x| x.1).collect(),
                attempts: mine.len() as u32,
                typical: typical(&times, trial.estimate),
                blocks: ok,
            });
            elapsed.push(times);
            templates.push(trial.clone());
        }
        questions.retain(|q| q.cells.len() >= 2);
        let outside = suite
            .questions_with_cells()
            .into_iter()
            .filter(|(key, _)| plan.target(key.experiment).is_none())
            .map(|(key, cells)| (cells, tested(key.experiment)))
            .collect();
        let after_stored = stored.iter().map(|r| r.seq + 1).max().unwrap_or(0).max(0) as usize;
        let mut dropped: Vec<(usize, u32)> = Vec::new();
        for r in stored.iter().filter(|r| matches!(r.status, crate::model::TrialStatus::Discarded(_))) {
            let cell = templates.iter().position(|t| t.experiment as i64 == r.experiment && t.params == r.params);
            let question = cell.and_then(|c| questions.iter().position(|q| q.cells.contains(&c)));
            if let (Some(q), Ok(repeat)) = (question, u32::try_from(r.repeat)) {
                if !dropped.contains(&(q, repeat)) {
                    dropped.push((q, repeat));
                }
            }
        }
        Session {
            templates,
            cells,
            questions,
            outside,
            elapsed,
            cursor: None,
            next_seq: after_stored.max(suite.trials.len()),
            budget: plan.budget(),
            rng: SplitMix64::new(seed),
            dropped,
            rerun: None,
        }
    }

    fn in_question(&self, cell: usize) -> bool {
        self.questions.iter().any(|q| q.cells.contains(&cell))
    }

    /// The per-claim level of Holm's first step: α over the claims that can be true nulls
    /// at once.
    #[cfg(test)]
    pub fn alpha_each(&self) -> f64 {
        self.alpha_now(&vec![QuestionState::Open; self.questions.len()])
    }

    pub fn comparison(&self, question: usize) -> Option<Comparison> {
        let cells: Vec<Vec<(u32, f64)>> =
            self.questions[question].cells.iter().map(|&c| self.cells[c].blocks.clone()).collect();
        Comparison::within(&cells, self.questions[question].margin)
    }

    /// Every question's standing, by Holm over the run's family of claims as the report
    /// applies it (`stats::holm_grouped`: a two-cell question's lead and equivalence
    /// cannot both be true nulls): each question's two claims (a lead, a tie) on its
    /// headline figure, and its other figures' claims at p = 1 until the report sees them,
    /// which can only make the report's adjusted p smaller. Holm steps down: each claim
    /// shown lowers the bar for the rest, so a run's later questions stop sooner. The
    /// p-values are anytime-valid, so a claim shown at one block stays shown.
    pub fn answers(&self) -> Vec<QuestionState> {
        let comparisons: Vec<Option<Comparison>> = (0..self.questions.len()).map(|q| self.comparison(q)).collect();
        let groups = self.claim_groups();
        // Each group's two claims: a question's headline from its blocks, every other
        // figure (and every fixed-repeat question) at p = 1.
        let p: Vec<Option<f64>> = groups
            .iter()
            .flat_map(|(headline, _)| match headline.and_then(|q| comparisons[q].as_ref()) {
                Some(c) if c.blocks() >= MIN_BLOCKS => [Some(c.p_leads()), Some(c.p_tie())],
                _ => [Some(1.0); 2],
            })
            .collect();
        let group: Vec<usize> = (0..p.len()).map(|i| i / 2).collect();
        let capacity: Vec<usize> = groups.iter().map(|g| g.1).collect();
        let adjusted = holm_grouped(&p, &group, &capacity);
        let mut answers = vec![QuestionState::Open; self.questions.len()];
        for (g, (headline, _)) in groups.iter().enumerate() {
            let Some(q) = *headline else { continue };
            let at = |k: usize| adjusted[2 * g + k].unwrap_or(1.0);
            answers[q] = match comparisons[q].as_ref().map(|c| decide(c.blocks(), at(0), at(1), ALPHA)) {
                Some(Decision::Lead) => QuestionState::Differs,
                Some(Decision::Equivalent) => QuestionState::Equivalent,
                _ => QuestionState::Open,
            };
        }
        answers
    }

    /// The run's claims in groups of two (a lead, a tie) per question and figure, as the
    /// report makes them: each group's question when it is that question's headline (the
    /// figure the runner decides on), and its capacity, the most of its two claims that
    /// can be true nulls at once (1 for a two-cell question, 2 otherwise).
    fn claim_groups(&self) -> Vec<(Option<usize>, usize)> {
        let capacity = |cells: usize| if cells == 2 { 1 } else { 2 };
        let asked = self.questions.iter().enumerate().flat_map(|(q, question)| {
            (0..question.figures).map(move |figure| ((figure == 0).then_some(q), capacity(question.cells.len())))
        });
        let fixed =
            self.outside.iter().flat_map(|&(cells, figures)| (0..figures).map(move |_| (None, capacity(cells))));
        asked.chain(fixed).collect()
    }

    #[cfg(test)]
    pub fn answer(&self, question: usize) -> QuestionState {
        self.answers()[question]
    }

    /// The per-claim level the open questions must reach now (Holm's next step, as
    /// `holm_grouped` takes it): α over the claims that can still be true nulls, each
    /// group's capacity or, for an answered question, its one claim left.
    pub fn alpha_now(&self, answers: &[QuestionState]) -> f64 {
        let could_be_true: usize = self
            .claim_groups()
            .iter()
            .map(|&(headline, capacity)| {
                let shown = headline.is_some_and(|q| answers[q] != QuestionState::Open);
                capacity.min(2 - usize::from(shown))
            })
            .sum();
        per_claim_alpha(could_be_true.max(1))
    }

    fn question_open(&self, question: usize, answers: &[QuestionState]) -> bool {
        let q = &self.questions[question];
        q.cells.iter().all(|&c| self.cells[c].attempts < self.cells[c].target.max_repeat)
            && answers[question] == QuestionState::Open
    }

    /// Every item with work left, each with the time it is projected to cost in all (what
    /// it has taken so far plus what it is expected to need until it is done: least first
    /// is "cheapest to answer") and what its next step takes. Counting what an item has
    /// already taken shares the budget: a question whose projection keeps saying "a few
    /// more" while its blocks pile up yields to one a few blocks from an answer, instead of
    /// spending the run on itself.
    fn open_items(&self) -> Vec<(Item, f64, Duration)> {
        let mut items = Vec::new();
        let answers = self.answers();
        let alpha = self.alpha_now(&answers);
        let fewest = crate::analysis::sequential::fewest_blocks(alpha);
        for (i, q) in self.questions.iter().enumerate() {
            if self.question_open(i, &answers) {
                let block: Duration = q.cells.iter().map(|&c| self.cells[c].typical).sum();
                let comparison = self.comparison(i);
                let run = comparison.as_ref().map_or(0, Comparison::blocks);
                // Nothing in sight: as if it needed the longest projection.
                let projected = comparison
                    .and_then(|c| c.blocks_to_answer(alpha))
                    .unwrap_or(crate::analysis::sequential::MAX_PROJECTED);
                // Below the fewest blocks any answer needs, a projection from so few blocks
                // says little (a real 10 % difference can read 5 of 9 blocks higher): such
                // a question is first taken that far, which is cheap, and judged by its
                // projection after.
                let to_go = if run < fewest { fewest - run } else { projected };
                items.push((Item::RunQuestion(i), (run + to_go) as f64 * block.as_secs_f64(), block));
            }
        }
        for (i, cell) in self.cells.iter().enumerate() {
            if !self.in_question(i) && cell.is_open() {
                // The interval narrows as 1/√n: the repeats it still needs at this width.
                let n = cell.headlines.len() as f64;
                let trials = interval(&cell.headlines)
                    .and_then(|ci| ci.relative_half_width())
                    .map_or(1.0, |w| (n * (w / cell.target.ci).powi(2) - n).max(1.0));
                items.push((Item::ExtendableCell(i), (n + trials) * cell.typical.as_secs_f64(), cell.typical));
            }
        }
        items
    }

    /// The next trials to run, back to back and in this order (a question's block, or one
    /// lone trial), given the time the run has used; `Err` says why there are none.
    pub fn next_trials(&mut self, used: Duration) -> std::result::Result<Vec<Trial>, Next> {
        let items = self.open_items();
        if items.is_empty() {
            return Err(Next::Done);
        }
        // A block just dropped for steal runs again first, if it still fits; nothing it
        // counts has changed, so its question is still open and its repeat still next.
        if let Some((question, _)) = self.rerun.take() {
            let again = items.iter().find(|(item, ..)| *item == Item::RunQuestion(question));
            if let Some(&(item, ..)) = again.filter(|(.., takes)| self.budget.is_none_or(|b| used + *takes <= b)) {
                return Ok(self.block_of(item));
            }
        }
        // The item projected to cost least in all; ties round-robin after the last item run.
        let start = self.cursor.and_then(|c| items.iter().position(|(i, ..)| *i == c)).map_or(0, |p| p + 1);
        let mut best: Option<(Item, f64)> = None;
        for step in 0..items.len() {
            let (item, to_go, takes) = items[(start + step) % items.len()];
            let fits = self.budget.is_none_or(|b| used + takes <= b);
            if fits && best.is_none_or(|(_, least)| to_go < least) {
                best = Some((item, to_go));
            }
        }
        let Some((item, _)) = best else { return Err(Next::OutOfBudget) };
        Ok(self.block_of(item))
    }

    /// The trials of `item`'s next block (or lone trial), in a fresh random order, each
    /// with the next free `seq`.
    fn block_of(&mut self, item: Item) -> Vec<Trial> {
        self.cursor = Some(item);
        let (members, repeat) = match item {
            Item::ExtendableCell(c) => (vec![c], self.cells[c].attempts + 1),
            Item::RunQuestion(q) => {
                let members = self.questions[q].cells.clone();
                let repeat = members.iter().map(|&c| self.cells[c].attempts).max().unwrap_or(0) + 1;
                (members, repeat)
            }
        };
        let mut block: Vec<Trial> = members
            .iter()
            .map(|&c| {
                let mut trial = self.templates[c].clone();
                trial.repeat = repeat;
                trial.estimate = self.cells[c].typical;
                trial
            })
            .collect();
        shuffle(&mut block, &mut self.rng);
        for trial in &mut block {
            trial.seq = self.next_seq;
            self.next_seq += 1;
        }
        block
    }

    /// The question whose block `trial` is part of, `None` for a lone cell's trial.
    fn question_of(&self, trial: &Trial) -> Option<usize> {
        let cell = self.templates.iter().position(|t| t.experiment == trial.experiment && t.params == trial.params)?;
        self.questions.iter().position(|q| q.cells.contains(&cell))
    }

    /// Whether the block `trial` (of `next_trials`' last block) is part of is to be dropped
    /// for steal now that `record` ended it: a question's block, a trial that certainly
    /// lost `STEAL_LEVEL` of its window on some CPU, and a block not yet re-run as often
    /// as the rule allows. A lone cell's trial answers no paired question: never dropped.
    pub fn drops_for_steal(&self, trial: &Trial, record: &TrialRecord) -> bool {
        let Some(question) = self.question_of(trial) else { return false };
        let steal = record.outcome.as_ref().and_then(|o| o.steal());
        let met = steal.is_some_and(|s| s.certain_share() >= STEAL_LEVEL);
        let reruns = self.dropped.iter().filter(|&&d| d == (question, trial.repeat)).count();
        rerun_for_steal(met, reruns as u32)
    }

    /// Drop the block `block` (as `next_trials` gave it, none of it `record`ed) for steal:
    /// it is counted, and run again by the next `next_trials` if it fits the budget.
    pub fn drop_block(&mut self, block: &[Trial]) {
        let Some(question) = block.first().and_then(|t| self.question_of(t)) else { return };
        let repeat = block[0].repeat;
        self.dropped.push((question, repeat));
        self.rerun = Some((question, repeat));
    }

    /// How many blocks were dropped and run again for steal, stored ones included.
    pub fn steal_reruns(&self) -> usize {
        self.dropped.len()
    }

    /// Count a finished extra trial (`trial` as `next_trials` gave it).
    pub fn record(&mut self, trial: &Trial, record: &TrialRecord) {
        let Some(i) = self.templates.iter().position(|t| t.experiment == trial.experiment && t.params == trial.params)
        else {
            return;
        };
        let cell = &mut self.cells[i];
        cell.attempts = cell.attempts.max(trial.repeat);
        if let Some(o) = record.outcome.as_ref().filter(|_| record.is_ok()) {
            cell.headlines.push(o.headline());
            cell.blocks.push((trial.repeat, o.headline()));
            // A figure only a trial shows (a private cgroup's pressure) is tested by the
            // report too: the run's family of claims grows as the report's will.
            if let Some(q) = self.questions.iter_mut().find(|q| q.cells.contains(&i)) {
                q.figures = q.figures.max(q.asking.tested_of(o).len());
            }
        }
        self.elapsed[i].push(record.elapsed_s);
        cell.typical = typical(&self.elapsed[i], self.templates[i].estimate);
    }

    #[cfg(test)]
    pub fn cells(&self) -> &[ExtendableCell] {
        &self.cells
    }

    pub fn questions(&self) -> &[RunQuestion] {
        &self.questions
    }

    /// Lone cells still open.
    pub fn open_cells(&self) -> usize {
        (0..self.cells.len()).filter(|&i| !self.in_question(i) && self.cells[i].is_open()).count()
    }

    /// Lone cells that reached their target, of all lone cells.
    pub fn lone_cells(&self) -> (usize, usize) {
        let lone: Vec<usize> = (0..self.cells.len()).filter(|&i| !self.in_question(i)).collect();
        (lone.iter().filter(|&&i| self.cells[i].converged()).count(), lone.len())
    }

    pub fn open_questions(&self) -> usize {
        let answers = self.answers();
        (0..self.questions.len()).filter(|&q| self.question_open(q, &answers)).count()
    }
}

/// Fisher-Yates with the run's generator.
pub fn shuffle<T>(items: &mut [T], rng: &mut SplitMix64) {
    for i in (1..items.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        items.swap(i, j);
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

    fn target(ci: f64, max_repeat: u32) -> StoppingRule {
        StoppingRule { ci, min_repeat: 6, max_repeat }
    }

    fn cell(values: &[f64], max_repeat: u32, typical_ms: u64) -> ExtendableCell {
        ExtendableCell {
            target: target(0.05, max_repeat),
            headlines: values.to_vec(),
            attempts: values.len() as u32,
            typical: Duration::from_millis(typical_ms),
            blocks: values.iter().enumerate().map(|(i, v)| (i as u32 + 1, *v)).collect(),
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

    fn suite(text: &str) -> Suite {
        crate::exec::suite::parse("t.toml", text, "t", false).unwrap()
    }

    const TWO_CELLS: &str = "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 10\nrepeat = 2\n\
                             target_ci = \"5%\"\nmax_repeat = 4\n";

    #[test]
    fn a_plan_takes_suite_keys_and_flags_override_them() {
        let s = suite(TWO_CELLS);
        let plan = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap();
        assert_eq!(plan.targets, vec![Some(StoppingRule { ci: 0.05, min_repeat: 2, max_repeat: 4 })]);
        assert_eq!(plan.most_trials(&s), 2 * 4);
        // A tiny plan: the floor.
        assert_eq!(plan.budget_s, Some(DEFAULT_BUDGET_FLOOR.as_secs_f64()));
        let long = suite(&TWO_CELLS.replace("laps = 10", "laps = 10_000_000"));
        let plan = AdaptivePlan::resolve(&long, &Overrides::default()).unwrap();
        let factor = plan.budget_s.unwrap() / long.estimate().as_secs_f64();
        assert!((factor - DEFAULT_BUDGET_FACTOR).abs() < 1e-9, "{factor}");
        let flags = Overrides { target_ci: Some(0.01), max_repeat: Some(9), budget: Some(Duration::from_secs(40)) };
        let plan = AdaptivePlan::resolve(&s, &flags).unwrap();
        assert_eq!(plan.targets, vec![Some(StoppingRule { ci: 0.01, min_repeat: 2, max_repeat: 9 })]);
        assert_eq!(plan.budget_s, Some(40.0));
        // Stored and read back as a run's options.
        let options = RunOptions { full: Some(false), adaptive: Some(plan.clone()), ..RunOptions::default() };
        let stored: RunOptions = serde_json::from_str(&serde_json::to_string(&options).unwrap()).unwrap();
        assert_eq!(AdaptivePlan::of_run_options(&stored), plan);
        let fixed = RunOptions { full: Some(false), ..RunOptions::default() };
        assert!(!AdaptivePlan::of_run_options(&fixed).is_adaptive());
    }

    #[test]
    fn target_ci_on_the_command_line_makes_every_experiment_adaptive() {
        let s = suite("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 10\nrepeat = 4\n");
        assert!(!AdaptivePlan::resolve(&s, &Overrides::default()).unwrap().is_adaptive());
        let plan = AdaptivePlan::resolve(&s, &Overrides { target_ci: Some(0.05), ..Overrides::default() }).unwrap();
        assert_eq!(plan.target(0), Some(StoppingRule { ci: 0.05, min_repeat: 4, max_repeat: DEFAULT_MAX_REPEAT }));
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
            spec: Some(crate::families::TrialSpec::Ring(spec)),
            outcome: ok.then_some(crate::families::Outcome::Ring(o)),
            status: if ok { crate::model::TrialStatus::Ok } else { crate::model::TrialStatus::Failed("x".into()) },
            started: String::new(),
            elapsed_s: 0.5,
        }
    }

    /// The report tests a private cgroup's pressure beside the headline wherever a trial
    /// measured it; the runner's family of claims counts it too, from the first such trial
    /// (or a stored one), so it never stops a question the report would call open.
    #[test]
    fn a_figure_a_trial_shows_joins_the_runners_family_of_claims() {
        let s = suite(&format!("{TWO_CELLS}compare = \"procs\"\n"));
        let plan = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap();
        let with_pressure = |trial: &Trial, seq: i64| {
            let mut r = record(trial, seq, 1000.0, true);
            let figures = crate::model::settings::CgroupFigures {
                hierarchy: "v2".into(),
                setting: "max=50ms/100ms".into(),
                cpu_pressure_ns: Some(1_000),
                ..Default::default()
            };
            r.outcome.as_mut().unwrap().set_cgroup(Some(figures));
            r
        };
        let mut session = Session::new(&s, &plan, &[], 0);
        assert_eq!(session.questions()[0].figures, 1, "a ring question tests its headline");
        let trial = s.trials[0].clone();
        session.record(&trial, &record(&trial, 0, 1000.0, true));
        assert_eq!(session.questions()[0].figures, 1);
        session.record(&trial, &with_pressure(&trial, 1));
        assert_eq!(session.questions()[0].figures, 2, "the cgroup's pressure is tested too");
        let resumed = Session::new(&s, &plan, &[with_pressure(&s.trials[0], 0)], 1);
        assert_eq!(resumed.questions()[0].figures, 2, "read from what is stored");
        // A question of fixed repeats, which the runner does not run, counts in its family
        // of claims as the report will too: its stored trials' figures, pressure included.
        let fixed = "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 10\nrepeat = 2\ncompare = \"procs\"\n";
        let s = suite(&format!("{TWO_CELLS}compare = \"procs\"\n{fixed}"));
        let plan = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap();
        let of_fixed = s.trials.iter().find(|t| t.experiment == 1).unwrap();
        let open = [QuestionState::Open];
        let without = Session::new(&s, &plan, &[record(of_fixed, 0, 1000.0, true)], 1);
        assert_eq!(without.alpha_now(&open), per_claim_alpha(2));
        let with = Session::new(&s, &plan, &[with_pressure(of_fixed, 0)], 1);
        assert_eq!(with.alpha_now(&open), per_claim_alpha(3), "the fixed question's pressure adds a claim group");
    }

    #[test]
    fn a_session_resumes_from_what_is_stored_and_numbers_extras_after_it() {
        let s = suite(TWO_CELLS);
        let plan = AdaptivePlan::resolve(&s, &Overrides { budget: None, ..Overrides::default() }).unwrap();
        // The planned minimum (seq 0..3) and one extra of the first cell (seq 4) are stored.
        let mut stored: Vec<TrialRecord> =
            s.trials.iter().map(|t| record(t, t.seq as i64, 1000.0 + t.seq as f64 * 100.0, true)).collect();
        stored.push(record(&s.trials[0], 4, 1300.0, false));
        let mut session = Session::new(&s, &plan, &stored, 1);
        assert_eq!(session.cells().len(), 2);
        assert_eq!(session.cells()[0].attempts, 3);
        assert_eq!(session.cells()[0].headlines.len(), 2, "the failed extra has no figure");
        assert_eq!(session.cells()[0].typical, Duration::from_millis(500));
        assert!(session.questions().is_empty(), "a ring sweep compares nothing by default");
        // Neither cell has an interval yet: equally far from their targets, round-robin.
        let next = |session: &mut Session| {
            let block = session.next_trials(Duration::ZERO).unwrap();
            assert_eq!(block.len(), 1, "a lone cell runs one trial at a time");
            let trial = block[0].clone();
            session.record(&trial, &record(&trial, trial.seq as i64, 1000.0, true));
            (trial.seq, trial.repeat, trial.params.procs())
        };
        assert_eq!(next(&mut session), (5, 4, Some(2)));
        // Cell 1 reached max_repeat = 4; cell 2 has two more to go.
        assert_eq!(next(&mut session), (6, 3, Some(3)));
        assert_eq!(next(&mut session), (7, 4, Some(3)));
        assert_eq!(session.next_trials(Duration::ZERO).unwrap_err(), Next::Done);
        assert_eq!(session.open_cells(), 0);
    }

    #[test]
    fn a_question_runs_in_blocks_until_answered() {
        let s = suite(
            "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 10\nrepeat = 6\ntarget_ci = \"5%\"\n\
             max_repeat = 40\ncompare = \"procs\"\n",
        );
        assert_eq!(s.family_of_claims(), 2);
        let plan = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap();
        // Six planned blocks: 3 processes 30 % slower in each.
        let cost = |procs: Option<i64>| if procs == Some(3) { 1300.0 } else { 1000.0 };
        let stored: Vec<TrialRecord> =
            s.trials.iter().map(|t| record(t, t.seq as i64, cost(t.params.procs()), true)).collect();
        let mut session = Session::new(&s, &plan, &stored, 1);
        assert_eq!(session.questions().len(), 1);
        assert_eq!(session.answer(0), QuestionState::Open, "6 unanimous blocks are not enough at 0.05 / 2");
        let mut blocks = 0;
        while let Ok(block) = session.next_trials(Duration::ZERO) {
            blocks += 1;
            assert_eq!(block.len(), 2);
            assert_eq!(block[0].repeat, block[1].repeat, "one block, one repeat number");
            assert_eq!(block[0].repeat, 6 + blocks);
            assert_eq!(block[1].seq, block[0].seq + 1);
            for t in &block {
                session.record(t, &record(t, t.seq as i64, cost(t.params.procs()), true));
            }
        }
        // Identical blocks, all one way: answered at the fewest blocks a family of 2 claims
        // allows, and not one block later.
        let fewest = crate::analysis::sequential::fewest_blocks(session.alpha_each());
        assert_eq!(6 + blocks as usize, fewest);
        assert_eq!(session.answer(0), QuestionState::Differs);
        assert_eq!(session.open_questions(), 0);
        let c = session.comparison(0).unwrap();
        assert_eq!((c.leader, c.blocks()), (0, fewest));
        assert!((c.closest().unwrap().ratio - 1.3).abs() < 1e-9);
    }

    #[test]
    fn a_block_that_met_steal_is_dropped_whole_and_run_again_once() {
        use crate::model::{CpuSteal, Steal, TrialStatus};
        let s = suite(
            "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 10\nrepeat = 6\ntarget_ci = \"5%\"\n\
             max_repeat = 40\ncompare = \"procs\"\n",
        );
        let plan = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap();
        let cost = |t: &Trial| if t.params.procs() == Some(3) { 1300.0 } else { 1000.0 };
        let planned: Vec<TrialRecord> = s.trials.iter().map(|t| record(t, t.seq as i64, cost(t), true)).collect();
        // A 30 ms trial whose CPU 1 shows `ticks` ticks of steal (10 ms each).
        let with_steal = |t: &Trial, ticks: u64| {
            let mut r = record(t, t.seq as i64, cost(t), true);
            let cpus = vec![CpuSteal { cpu: 0, steal_ns: 0 }, CpuSteal { cpu: 1, steal_ns: ticks * 10_000_000 }];
            let steal = Steal { window_ns: 30_000_000, resolution_ns: 10_000_000, cpus };
            r.outcome.as_mut().unwrap().set_steal(Some(steal));
            r
        };
        let mut session = Session::new(&s, &plan, &planned, 1);
        let block = session.next_trials(Duration::ZERO).unwrap();
        assert_eq!(block[0].repeat, 7);
        // One tick may be a sliver of steal: kept. Two are at least 10 ms of 30: dropped.
        assert!(!session.drops_for_steal(&block[0], &with_steal(&block[0], 1)));
        assert!(session.drops_for_steal(&block[0], &with_steal(&block[0], 2)));
        session.drop_block(&block);
        assert_eq!(session.steal_reruns(), 1);
        // Run again at once: every side of it, the same repeat, fresh sequence numbers.
        let again = session.next_trials(Duration::ZERO).unwrap();
        let procs = |b: &[Trial]| {
            let mut p: Vec<Option<i64>> = b.iter().map(|t| t.params.procs()).collect();
            p.sort();
            p
        };
        assert_eq!(procs(&again), procs(&block));
        assert!(again.iter().all(|t| t.repeat == 7 && t.seq > block[1].seq), "{again:?}");
        // Re-run once already: kept whatever its steal, and counted as the question's 7th.
        assert!(!session.drops_for_steal(&again[1], &with_steal(&again[1], 3)));
        for t in &again {
            session.record(t, &with_steal(t, 3));
        }
        assert_eq!(session.comparison(0).unwrap().blocks(), 7);
        let next = session.next_trials(Duration::ZERO).unwrap();
        assert_eq!(next[0].repeat, 8);
        assert!(session.drops_for_steal(&next[0], &with_steal(&next[0], 2)), "a new block may be re-run");
        // Resumed from the store, where the dropped block's first trial is discarded: the
        // drop is counted, and the block it left is not in the question.
        let mut stored = planned.clone();
        let mut discarded = with_steal(&block[0], 2);
        discarded.seq = block[0].seq as i64;
        discarded.status = TrialStatus::Discarded("re-run for steal".into());
        stored.push(discarded);
        let resumed = Session::new(&s, &plan, &stored, 1);
        assert_eq!(resumed.steal_reruns(), 1);
        assert_eq!(resumed.comparison(0).unwrap().blocks(), 6);
        assert_eq!(resumed.cells()[0].attempts + resumed.cells()[1].attempts, 12);
        assert!(!resumed.drops_for_steal(&block[0], &with_steal(&block[0], 2)), "block 7 was re-run once");
    }

    #[test]
    fn a_question_that_has_taken_many_blocks_yields_to_one_a_few_blocks_from_an_answer() {
        // Two questions of 2 cells each, 4 claims; equal trial times.
        let s = suite(
            "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 10\nrepeat = 6\ntarget_ci = \"5%\"\n\
             max_repeat = 200\ncompare = \"procs\"\n[[experiment]]\nfamily = \"ring\"\nprocs = [4, 5]\nlaps = 10\n\
             repeat = 6\ntarget_ci = \"5%\"\nmax_repeat = 200\ncompare = \"procs\"\n",
        );
        let plan = AdaptivePlan::resolve(&s, &Overrides::default()).unwrap();
        let template = |procs: i64| s.trials.iter().find(|t| t.params.procs() == Some(procs)).unwrap();
        // The first question: 60 blocks, the most of them up that still leave it open, so
        // that its projection says a few more; the second: its 6 planned blocks, 5 up.
        let stored_with = |ups: usize| {
            let mut stored = Vec::new();
            let mut seq = 0;
            let mut push = |procs: i64, repeat: u32, value: f64, stored: &mut Vec<TrialRecord>| {
                let mut t = template(procs).clone();
                t.repeat = repeat;
                stored.push(record(&t, seq, value, true));
                seq += 1;
            };
            for r in 1..=60 {
                push(2, r, 1000.0, &mut stored);
                push(
                    3,
                    r,
                    if (r as usize * ups) / 60 > ((r as usize - 1) * ups) / 60 { 1100.0 } else { 970.0 },
                    &mut stored,
                );
            }
            for r in 1..=6 {
                push(4, r, 1000.0, &mut stored);
                push(5, r, if r <= 5 { 1300.0 } else { 990.0 }, &mut stored);
            }
            Session::new(&s, &plan, &stored, 1)
        };
        let ups = (30..=60).rev().find(|&k| stored_with(k).answer(0) == QuestionState::Open).unwrap();
        let mut session = stored_with(ups);
        let alpha = session.alpha_each();
        let first = session.comparison(0).unwrap().blocks_to_answer(alpha).unwrap();
        let second = session.comparison(1).unwrap().blocks_to_answer(alpha).unwrap();
        assert!(first < second, "the first is nearer by its projection alone: {first} vs {second}");
        let block = session.next_trials(Duration::ZERO).unwrap();
        assert!(block.iter().all(|t| t.experiment == 1), "the second question goes first: {block:?}");
    }

    #[test]
    fn questions_of_fixed_repeat_experiments_stay_in_the_runners_family() {
        // One adaptive question of 2 cells and one of fixed repeats: the runner's first
        // Holm step counts both (0.05 / 2), as the report's does.
        let adaptive = "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 10\nrepeat = 6\n\
                        target_ci = \"5%\"\nmax_repeat = 40\ncompare = \"procs\"\n";
        let fixed = "[[experiment]]\nfamily = \"ring\"\nprocs = [4, 5]\nlaps = 10\nrepeat = 6\ncompare = \"procs\"\n";
        let alone = suite(adaptive);
        let both = suite(&format!("{adaptive}{fixed}"));
        let session = |s: &Suite| Session::new(s, &AdaptivePlan::resolve(s, &Overrides::default()).unwrap(), &[], 1);
        assert_eq!(session(&alone).alpha_each(), 0.05);
        assert_eq!(session(&both).questions().len(), 1);
        assert_eq!(session(&both).alpha_each(), 0.025);
    }
}
