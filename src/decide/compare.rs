//! Comparing two stored runs: trials are matched by family and parameters (so runs from
//! different machines or kernels compare, once imported), and each matched figure gets
//! A, B, the ratio of medians B/A with a 95 % bootstrap interval, a Mann-Whitney test
//! and a verdict. A verdict needs enough repeats: with fewer than the test can ever call
//! significant, it says so instead of guessing.
//!
//! **Many figures, one error budget.** A comparison tests every figure of every matched
//! cell (dozens for a mixed suite); at p < 0.05 each, an identical pair of runs would
//! show a "significant" figure most of the time. The p-values are therefore adjusted by
//! Holm's step-down method over all figures tested, and verdicts use the adjusted p, so
//! the chance of calling any figure different when none is stays at most 5 %. Figures a
//! side has too few repeats to test are left out of that family (they can never be called
//! significant).
//!
//! **Drift.** A figure is a regression when its difference is significant (adjusted
//! p < 0.05 and the interval excludes 1) and the whole interval lies above
//! 1 + threshold: "slower by more than the threshold" must hold for the interval, not
//! only for the point estimate. How the two runs were made decides what else the
//! interval must clear:
//!
//! - *Interleaved* (`schedlab ab`): A's and B's blocks alternated in random order within
//!   one session, so the machine's drift fell on both sides alike. Each cell's values are
//!   paired by the block pair they ran in and tested as a run's questions are: the ratio
//!   is the median within-pair ratio, its interval the sign test's confidence sequence,
//!   the p anytime-valid (`verdict::evidence_paired`), so a session may add blocks until
//!   decided. Nothing more is added.
//! - *Separate runs*: each side saw the machine at a different time, and a shared, noisy
//!   machine moves between runs (another job, a warm or cold cache, a frequency change).
//!   That is estimated in two ways, and the larger is the figure's drift band:
//!   - *within the runs*: for every cell, the shift |ln(late half / early half)| between
//!     the medians of its first and second half of repeats in the order they ran; the
//!     band is twice the root mean square of those shifts over the cells of the row's
//!     experiment in both runs (about the 95 % bound of a shift of that size);
//!   - *across other runs* (the database's history): the same cells in other runs on the
//!     same machine (up to 20, not A/B sessions); the pooled standard deviation `sd` of
//!     ln(run median) over the cells two or more of them hold; two runs' levels then
//!     differ by `sqrt(2) sd`, and the band is twice that.
//!
//!   A difference counts only when its interval clears the band as well: for a slower B
//!   the interval's low end must exceed exp(band) (and (1 + threshold) × exp(band) to be a
//!   regression), for a faster B its high end must stay below exp(−band). A significant
//!   difference inside the band is reported as "cannot separate from drift" and is never
//!   a regression; so is one whose figure has no cell to estimate drift from. With no
//!   history, drift slower than one run (a whole run in one noisy stretch) is invisible:
//!   for a verdict on a small difference, interleave the two states with `schedlab ab`.

use crate::analysis::sequential::pair_blocks;
use crate::analysis::stats::{median, smallest_possible_p};
use crate::analysis::verdict::{
    drift_band, evidence, evidence_paired, half_shift, history_band, judge, pooled_log_sd, smallest_paired_p,
    FigureEvidence,
};
pub use crate::analysis::verdict::{Drift, Verdict, ALPHA};
use crate::families::figures::{self, Figure};
use crate::families::Family;
use crate::model::cell::Cell;
use crate::store::group::{groups, Group};
use crate::store::{RunRecord, TrialRecord};

/// How the two runs were made, which decides whether drift is part of the verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The two sides of one `schedlab ab` session: drift is shared.
    Interleaved,
    /// Two runs made at different times: drift between them is estimated and allowed for,
    /// from the runs themselves and from this many other runs of the same cells.
    Separate { history_runs: usize },
}

impl Mode {
    /// Interleaved when each run names the other as its A/B pair (no history counted yet).
    pub fn of(a: &RunRecord, b: &RunRecord) -> Mode {
        let pair_of = |r: &RunRecord| r.options.ab.as_ref().map(|ab| ab.pair.clone());
        if pair_of(a).as_deref() == Some(b.uuid.as_str()) && pair_of(b).as_deref() == Some(a.uuid.as_str()) {
            Mode::Interleaved
        } else {
            Mode::Separate { history_runs: 0 }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Interleaved => "interleaved",
            Mode::Separate { .. } => "separate",
        }
    }

    /// One line saying what the mode means for the verdicts.
    pub fn describe(self) -> String {
        match self {
            Mode::Interleaved => {
                "mode: interleaved A/B (one `schedlab ab` session): both sides saw the same drift, so no drift term is \
                 added"
                    .into()
            }
            Mode::Separate { history_runs: 0 } => {
                "mode: separate runs: a difference must also clear the drift band (the drift column), from the shift \
                 each run shows between the first and second half of its repeats; drift slower than one run is \
                 invisible to two runs alone: keep more runs of the suite on this machine, or use `schedlab ab`"
                    .into()
            }
            Mode::Separate { history_runs } => format!(
                "mode: separate runs: a difference must also clear the drift band (the drift column), the larger of \
                 the shift each run shows between the first and second half of its repeats and the spread of the same \
                 cells over {history_runs} other run(s) on this machine; use `schedlab ab` to decide small differences"
            ),
        }
    }
}

pub struct Row {
    pub family: Family,
    pub params: Cell,
    pub figure: &'static str,
    pub label: &'static str,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub not_ok_a: usize,
    pub not_ok_b: usize,
    pub ratio: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// The p of this figure alone (Mann-Whitney, or the paired sign test when interleaved).
    pub p: Option<f64>,
    /// Interleaved: the block pairs in which both sides have a value, and the p that the
    /// median ratio is within the experiment's margin (what ends a session's extra blocks
    /// on a tie).
    pub blocks: Option<usize>,
    /// Holm-adjusted over every figure tested; `None` for a figure not tested (too few).
    pub p_adjusted: Option<f64>,
    pub drift: Drift,
    pub verdict: Verdict,
    /// Slower by more than the threshold (and the drift), significantly.
    pub regression: bool,
    /// Interleaved: the margin its equivalence is judged at (its experiment's).
    pub margin: f64,
}

impl Row {
    /// The verdict in words, an equivalence with its margin.
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            Verdict::Equivalent => format!("equivalent within ±{:.0}%", self.margin * 100.0),
            ref other => other.label(),
        }
    }
}

/// A figure of a group's ok trials in the order they ran (start time, then plan order).
fn values_in_time_order(group: &Group, figure: &Figure) -> Vec<f64> {
    let mut ok: Vec<&TrialRecord> = group.ok().collect();
    ok.sort_by(|x, y| x.started.cmp(&y.started).then(x.seq.cmp(&y.seq)));
    ok.iter().filter_map(|t| figure.value(t.outcome.as_ref()?)).collect()
}

/// The spread of one experiment's cells over other runs: the pooled standard deviation
/// of ln(run median) of each cell that two or more of those runs hold. `None` when none does.
fn history_sd(cells: &[&Group], history: &[Vec<Group>], figure: &Figure) -> Option<f64> {
    let medians: Vec<Vec<f64>> = cells
        .iter()
        .map(|cell| {
            history
                .iter()
                .filter_map(|groups| {
                    let g = groups.iter().find(|g| g.family == cell.family && g.params == cell.params)?;
                    Some(median(&g.values(|o| figure.value(o))))
                })
                .collect()
        })
        .collect();
    pooled_log_sd(&medians)
}

/// A row before its verdict, with its evidence and the experiment it belongs to in A
/// and in B.
type Found = (Row, FigureEvidence, (i64, i64));

/// Every figure of every cell both runs hold, with its evidence. Its adjusted p, drift and
/// verdict are left for later: they need every row (Holm) and the cells around it (drift).
fn matched_rows(ga: &[Group], gb: &[Group], mode: Mode, margins: &[f64]) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for left in ga {
        let Some(right) = gb.iter().find(|g| g.family == left.family && g.params == left.params) else { continue };
        let not_ok = |g: &Group| g.trials.len() - g.ok().count();
        for compared in figures::compared(left.family) {
            let (va, vb) = (left.values(|o| compared.value(o)), right.values(|o| compared.value(o)));
            // A figure neither run's kernel gave (or older runs lack) is no row: only the
            // scheduler's per-task figures can be unknown in an ok trial.
            if va.is_empty() && vb.is_empty() && left.outcomes().next().is_some() && right.outcomes().next().is_some() {
                continue;
            }
            let margin = usize::try_from(left.experiment)
                .ok()
                .and_then(|e| margins.get(e).copied())
                .unwrap_or(crate::analysis::sequential::MARGIN);
            let e = match mode {
                Mode::Interleaved => {
                    evidence_paired(&pair_blocks(&left.by_repeat(compared), &right.by_repeat(compared)), margin)
                }
                Mode::Separate { .. } => evidence(&va, &vb),
            };
            let row = Row {
                family: left.family,
                params: left.params.clone(),
                figure: compared.key,
                label: compared.label,
                not_ok_a: not_ok(left),
                not_ok_b: not_ok(right),
                a: va,
                b: vb,
                ratio: e.ratio,
                ci: e.ci,
                p: e.p,
                blocks: e.blocks,
                p_adjusted: None,
                drift: Drift::Shared,
                verdict: Verdict::NoDifference,
                regression: false,
                margin,
            };
            found.push((row, e, (left.experiment, right.experiment)));
        }
    }
    found
}

/// Each row's Holm-adjusted p of a difference, and (interleaved only) of equivalence.
///
/// One family: each figure's difference, and in an interleaved session also its
/// equivalence within its experiment's margin (the two claims a run's question makes, and what `ab`
/// stops adding blocks on). A figure's two cannot both be true nulls (its median ratio
/// is 1, or at or beyond the margin, not both), so each pair counts once in Holm's
/// multipliers (`stats::holm_grouped`): m figures, first step α/m.
fn adjusted_ps(found: &[Found], mode: Mode) -> (Vec<Option<f64>>, Vec<Option<f64>>) {
    match mode {
        Mode::Interleaved => {
            let claims: Vec<Option<f64>> = found
                .iter()
                .flat_map(|(_, e, _)| if e.too_few.is_some() { [None, None] } else { [e.p, e.p_equivalent] })
                .collect();
            let group: Vec<usize> = (0..claims.len()).map(|i| i / 2).collect();
            let all = crate::analysis::stats::holm_grouped(&claims, &group, &vec![1; found.len()]);
            all.chunks(2).map(|pair| (pair[0], pair[1])).unzip()
        }
        Mode::Separate { .. } => {
            let tested: Vec<Option<f64>> =
                found.iter().map(|(_, e, _)| if e.too_few.is_some() { None } else { e.p }).collect();
            (crate::analysis::stats::holm(&tested), vec![None; found.len()])
        }
    }
}

/// The half shifts of a figure over one experiment's cells in a run.
fn experiment_shifts(groups: &[Group], experiment: i64, figure: &Figure) -> Vec<f64> {
    groups
        .iter()
        .filter(|g| g.experiment == experiment)
        .filter_map(|g| half_shift(&values_in_time_order(g, figure)))
        .collect()
}

/// The drift bands of separate runs. The band of a figure pools the cells of the row's
/// experiment in each run, which did the same kind of work; each is computed once (a
/// suite may have hundreds of cells).
struct DriftBands<'g> {
    ga: &'g [Group<'g>],
    gb: &'g [Group<'g>],
    history: &'g [Vec<Group<'g>>],
    /// (A's experiment, B's experiment, figure key) and its band, as computed so far.
    known: Vec<((i64, i64, &'static str), Drift)>,
}

impl DriftBands<'_> {
    /// The band of `figure` of the rows of A's and B's `experiments`: the larger of the
    /// shift within the runs and the spread across the history.
    fn band(&mut self, family: Family, figure: &'static str, experiments: (i64, i64)) -> Drift {
        let key = (experiments.0, experiments.1, figure);
        if let Some((_, band)) = self.known.iter().find(|(k, _)| *k == key) {
            return *band;
        }
        let compared = figures::compared(family).into_iter().find(|c| c.key == figure);
        let band = compared.map_or(Drift::Unknown, |c| {
            let mut shifts = experiment_shifts(self.ga, experiments.0, c);
            shifts.extend(experiment_shifts(self.gb, experiments.1, c));
            let cells: Vec<&Group> = self.ga.iter().filter(|g| g.experiment == experiments.0).collect();
            let across = history_sd(&cells, self.history, c).map(history_band);
            match (drift_band(&shifts), across) {
                (Drift::Estimated(within), Some(across)) => Drift::Estimated(within.max(across)),
                (Drift::Unknown, Some(across)) => Drift::Estimated(across),
                (within, _) => within,
            }
        });
        self.known.push((key, band));
        band
    }
}

/// Match the two runs' trials and compare every figure. Empty when nothing matches.
/// `history` holds the trials of other runs on the same machine (in separate mode, their
/// spread widens the drift band; interleaved runs ignore it).
/// `margins`: each experiment's margin of equivalence (by its index in A's suite), for an
/// interleaved session; an experiment past its end is judged at `sequential::MARGIN`.
pub fn compare(
    a: &[TrialRecord],
    b: &[TrialRecord],
    threshold: f64,
    mode: Mode,
    history: &[Vec<TrialRecord>],
    margins: &[f64],
) -> Vec<Row> {
    let (ga, gb) = (groups(a), groups(b));
    let history: Vec<Vec<Group>> = history.iter().map(|t| groups(t)).collect();
    let found = matched_rows(&ga, &gb, mode, margins);
    let (adjusted, equivalent_adjusted) = adjusted_ps(&found, mode);
    let mut bands = DriftBands { ga: &ga, gb: &gb, history: &history, known: Vec::new() };
    found
        .into_iter()
        .zip(adjusted)
        .enumerate()
        .map(|(i, ((mut row, e, experiments), p_adjusted))| {
            row.drift = match mode {
                Mode::Interleaved => Drift::Shared,
                Mode::Separate { .. } => bands.band(row.family, row.figure, experiments),
            };
            row.p_adjusted = p_adjusted;
            (row.verdict, row.regression) = judge(&e, p_adjusted, threshold, row.drift);
            let shown_equivalent = equivalent_adjusted[i].is_some_and(|p| p <= ALPHA)
                && e.blocks.is_some_and(|b| b >= crate::analysis::sequential::MIN_BLOCKS);
            if row.verdict == Verdict::NoDifference && shown_equivalent {
                row.verdict = Verdict::Equivalent;
            }
            row
        })
        .collect()
}

/// A comparison whose repeats cannot call any figure different: with `tested` figures,
/// Holm's first step needs p < alpha / tested, and the smallest p these repeats can reach
/// (`best_p`) is not below it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Underpowered {
    pub tested: usize,
    pub best_p: f64,
    /// Interleaved: the fewest paired blocks that can reach Holm's first step.
    pub paired_blocks_needed: Option<usize>,
}

/// Whether the rows' repeats are too few for any figure to be called different (`None`
/// when one could be, or when at most one figure was tested).
pub fn underpowered(rows: &[Row]) -> Option<Underpowered> {
    let tested: Vec<&Row> = rows.iter().filter(|r| r.p_adjusted.is_some()).collect();
    let m = tested.len();
    let best_of = |r: &Row| match r.blocks {
        Some(blocks) => smallest_paired_p(blocks),
        None => smallest_possible_p(r.a.len(), r.b.len()),
    };
    let best_p = tested.iter().map(|r| best_of(r)).fold(f64::INFINITY, f64::min);
    let paired = tested.iter().any(|r| r.blocks.is_some());
    let paired_blocks_needed = paired.then(|| crate::analysis::sequential::fewest_blocks(ALPHA / m as f64));
    (m > 1 && best_p * m as f64 >= ALPHA).then_some(Underpowered { tested: m, best_p, paired_blocks_needed })
}

/// One source's share of a latency tail in A and in B (means over the cell's traced
/// trials), for `--trace on` runs on both sides.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CulpritChange {
    /// The cell and CPU: "policy=fifo CPU 1".
    pub cell: String,
    /// The source, named without its pid (which differs between runs): "ksoftirqd/1 (nice 0)".
    pub source: String,
    pub share_a: f64,
    pub share_b: f64,
}

/// How the tails' culprits moved from A to B: for each latency cell and CPU traced on both
/// sides, every source's mean share of the excess above the p99, largest change first
/// (at most `top` per cell).
pub fn culprit_changes(a: &[TrialRecord], b: &[TrialRecord], top: usize) -> Vec<CulpritChange> {
    use crate::analysis::attribution::{describe_prio, describe_source};
    use crate::analysis::trace::Source;
    use std::collections::BTreeMap;
    type Shares = BTreeMap<(String, usize), BTreeMap<String, Vec<f64>>>;
    // cell -> source -> per-trial shares (a trial with no share for a source counts 0).
    let tally = |trials: &[TrialRecord]| -> (Shares, BTreeMap<(String, usize), usize>) {
        let mut shares: Shares = BTreeMap::new();
        let mut traced: BTreeMap<(String, usize), usize> = BTreeMap::new();
        for t in trials.iter().filter(|t| t.is_ok()) {
            let attributed = t.outcome.as_ref().and_then(|o| o.attribution());
            let Some(attribution) = attributed.filter(|a| a.unavailable.is_none()) else { continue };
            for thread in &attribution.threads {
                let cell = (t.params.all_text(), thread.cpu);
                let n = traced.entry(cell.clone()).or_default();
                *n += 1;
                let by_source = shares.entry(cell).or_default();
                for c in &thread.tail {
                    let name = match &c.source {
                        Source::Task { comm, prio, .. } => format!("{comm} ({})", describe_prio(*prio)),
                        other => describe_source(other),
                    };
                    let list = by_source.entry(name).or_default();
                    list.resize(*n - 1, 0.0);
                    list.push(c.share);
                }
            }
        }
        (shares, traced)
    };
    let ((shares_a, n_a), (shares_b, n_b)) = (tally(a), tally(b));
    let mean = |list: Option<&Vec<f64>>, n: usize| list.map_or(0.0, |l| l.iter().sum::<f64>() / n.max(1) as f64);
    let mut out = Vec::new();
    for (cell, by_source_a) in &shares_a {
        let (Some(by_source_b), Some(&na), Some(&nb)) = (shares_b.get(cell), n_a.get(cell), n_b.get(cell)) else {
            continue;
        };
        let sources: std::collections::BTreeSet<&String> = by_source_a.keys().chain(by_source_b.keys()).collect();
        let mut changes: Vec<CulpritChange> = sources
            .into_iter()
            .map(|source| CulpritChange {
                cell: format!("{} CPU {}", cell.0, cell.1),
                source: source.clone(),
                share_a: mean(by_source_a.get(source), na),
                share_b: mean(by_source_b.get(source), nb),
            })
            .collect();
        changes.sort_by(|x, y| (y.share_b - y.share_a).abs().total_cmp(&(x.share_b - x.share_a).abs()));
        out.extend(changes.into_iter().take(top));
    }
    out
}

/// Where two runs' noise floors differ by more than their own spread (see
/// `NoiseFloor::differences`); empty when alike or when either run has none.
pub fn noise_differences(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    a.machine.floor_differences(&b.machine, &format!("run {}", a.id), &format!("run {}", b.id))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use crate::families::latency::model::{LatencyOutcome, ThreadStats};
    use crate::families::ring::model::RingOutcome;
    use crate::families::Outcome;
    use crate::model::TrialStatus;

    /// A stored trial of `family` with `outcome`, the `i`-th of its run (a second apart).
    fn trial(i: usize, params: &str, outcome: Outcome) -> TrialRecord {
        let family = outcome.family();
        TrialRecord {
            seq: i as i64,
            experiment: 0,
            family,
            repeat: 1 + i as i64,
            params: serde_json::from_str(params).unwrap(),
            spec: None,
            outcome: Some(outcome),
            status: TrialStatus::Ok,
            started: format!("2026-11-21T14:50:{:02}.000Z", i),
            elapsed_s: 0.3,
        }
    }

    /// Ring trials from (real_ns, overhead_ps) of 2-member rings of 20,000 laps, in run order.
    fn rings(measured: &[(u64, u64)]) -> Vec<TrialRecord> {
        let ring = |&(real_ns, overhead_ps): &(u64, u64)| RingOutcome {
            procs: 2,
            member_cpus: vec![1, 1],
            laps: 20_000,
            hops: 40_001,
            real_ns,
            overhead_ps,
            ..RingOutcome::default()
        };
        measured.iter().enumerate().map(|(i, m)| trial(i, r#"{"procs": 2}"#, Outcome::Ring(ring(m)))).collect()
    }

    #[test]
    fn an_interleaved_session_judges_equivalence_at_its_experiments_margin() {
        // B is 7 % above A in half the blocks and 7 % below in the rest: no difference, all
        // of it inside ±10 % and none inside ±5 %.
        let a = latencies(&[10_000; 40]);
        let b = latencies(&(0..40).map(|i| if i % 2 == 0 { 10_700 } else { 9_300 }).collect::<Vec<_>>());
        let at = |margins: &[f64]| {
            let rows = compare(&a, &b, 0.05, Mode::Interleaved, &[], margins);
            let row = rows.into_iter().find(|r| r.p_adjusted.is_some()).unwrap();
            (row.verdict.clone(), row.verdict_text())
        };
        assert_eq!(at(&[0.10]), (Verdict::Equivalent, "equivalent within ±10%".to_string()));
        assert_eq!(at(&[]).0, Verdict::NoDifference, "at the default ±5 %");
    }

    /// Latency trials from each one's p50 (its p99 and max left at 0: never tested).
    fn latencies(p50_ns: &[u64]) -> Vec<TrialRecord> {
        latency_trials(p50_ns, |stats, p50_ns| stats.p50_ns = Some(p50_ns))
    }

    /// Latency trials with one figure of each set from `values` (the others left at 0).
    fn latency_trials(values: &[u64], set: fn(&mut ThreadStats, u64)) -> Vec<TrialRecord> {
        let latency = |value: u64| {
            let mut all = ThreadStats { samples: 500, ..ThreadStats::zero() };
            set(&mut all, value);
            LatencyOutcome {
                all,
                timer_slack_ns: 1,
                dma_latency_held: true,
                mlockall: true,
                ..LatencyOutcome::default()
            }
        };
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| trial(i, r#"{"policy": "other"}"#, Outcome::Latency(latency(v))))
            .collect()
    }

    fn row<'a>(rows: &'a [Row], figure: &str) -> &'a Row {
        rows.iter().find(|r| r.figure == figure).unwrap()
    }

    // Four separate runs of bench/ab-mixed.toml, one after the other on the shared 2-vCPU
    // VM, nothing changed between them: the ring's (real_ns, overhead_ps) and the latency
    // p50s, in the order they ran. Run 1's ring ran in a slower stretch (+15 %) as a whole;
    // run 4's latency got quieter halfway.
    const RING_1: [(u64, u64); 8] = [
        (118_842_709, 695_989),
        (129_383_605, 897_495),
        (116_992_747, 707_419),
        (118_572_889, 689_891),
        (114_844_953, 691_659),
        (125_743_218, 714_273),
        (171_570_691, 767_536),
        (120_395_591, 856_786),
    ];
    const RING_3: [(u64, u64); 8] = [
        (121_244_379, 1_095_532),
        (109_704_182, 862_994),
        (105_616_092, 689_273),
        (105_673_107, 678_728),
        (105_812_433, 683_032),
        (105_681_159, 705_128),
        (126_568_182, 699_631),
        (110_806_456, 678_975),
    ];
    const P50_3: [u64; 8] = [81_727, 90_751, 91_647, 82_367, 82_815, 80_383, 86_015, 84_351];
    const P50_4: [u64; 8] = [82_687, 78_143, 66_303, 65_919, 66_303, 64_447, 65_503, 73_663];

    #[test]
    fn separate_runs_do_not_call_drift_a_regression() {
        let (a, b) = (rings(&RING_3), rings(&RING_1));
        // Run 1's slow stretch: 16 % higher, and significant by Mann-Whitney...
        let separate = compare(&a, &b, 0.05, Mode::Separate { history_runs: 0 }, &[], &[]);
        let switch = row(&separate, "ns_per_switch");
        assert!(switch.ratio.unwrap() > 1.15 && switch.p_adjusted.unwrap() < ALPHA, "{:?}", switch.p_adjusted);
        // ...but as separate runs it must also clear the drift the runs show of themselves.
        assert!(
            separate.iter().all(|r| !r.regression),
            "{:?}",
            separate.iter().map(|r| &r.verdict).collect::<Vec<_>>()
        );
        let band = switch.drift.fraction().unwrap();
        assert!(band > 0.03 && band < 0.2, "{band}");
        // Interleaved, the same values are paired blocks: 7 of 8 higher is not enough for
        // the sign test, which needs all of 8 at the least.
        let shared = compare(&a, &b, 0.05, Mode::Interleaved, &[], &[]);
        let paired = row(&shared, "ns_per_switch");
        assert_eq!((paired.blocks, paired.verdict.clone()), (Some(8), Verdict::NoDifference));
    }

    #[test]
    fn a_significant_shift_inside_the_drift_band_cannot_be_separated() {
        let (a, b) = (latencies(&P50_3), latencies(&P50_4));
        let separate = compare(&a, &b, 0.05, Mode::Separate { history_runs: 0 }, &[], &[]);
        let p50 = row(&separate, "p50_ns");
        // Run 4's own halves differ by 9 %: a 21 % lower p50 is within twice that.
        assert_eq!(p50.verdict, Verdict::Drift, "{:?} {:?}", p50.ci, p50.drift);
        assert!(p50.p_adjusted.unwrap() < ALPHA);
        assert_eq!(p50.verdict.label(), "cannot separate from drift");
        // p99 and max are all 0 here: no ratio, never a difference.
        assert_eq!(row(&separate, "p99_ns").verdict, Verdict::NoDifference);
    }

    #[test]
    fn a_change_far_beyond_the_drift_is_still_a_regression() {
        // The same ring with a CPU hog on its CPU: every hop waits (3x slower).
        let slowed: Vec<(u64, u64)> = RING_3.iter().map(|&(real, overhead)| (real * 3, overhead)).collect();
        let separate = compare(&rings(&RING_3), &rings(&slowed), 0.05, Mode::Separate { history_runs: 0 }, &[], &[]);
        let switch = row(&separate, "ns_per_switch");
        assert_eq!(switch.verdict, Verdict::Slower);
        assert!(switch.regression, "{:?} {:?}", switch.ci, switch.drift);
        // Also beside a history holding run 1's slow stretch (+16 %).
        let history = [rings(&RING_1), rings(&RING_3)];
        let separate =
            compare(&rings(&RING_3), &rings(&slowed), 0.05, Mode::Separate { history_runs: 2 }, &history, &[]);
        let switch = row(&separate, "ns_per_switch");
        assert!(switch.regression && switch.drift.fraction().unwrap() > 0.15, "{:?} {:?}", switch.ci, switch.drift);
    }

    // Latency p99 of four more separate runs of bench/ab-mixed.toml, nothing changed, on
    // the VM under a load average near 20: runs 2 and 3 had a noisy stretch as a whole,
    // which their own halves cannot show.
    const P99_1: [u64; 8] = [76_351, 218_751, 84_735, 84_095, 91_199, 86_975, 504_831, 85_247];
    const P99_2: [u64; 8] = [1_371_135, 137_471, 551_935, 333_567, 281_087, 548_351, 572_415, 690_175];
    const P99_3: [u64; 8] = [199_807, 309_247, 694_271, 1_328_127, 2_809_855, 871_423, 917_503, 1_893_375];
    const P99_4: [u64; 8] = [93_183, 82_303, 86_463, 82_559, 132_223, 97_983, 93_247, 83_263];

    #[test]
    fn other_runs_on_the_machine_show_drift_that_two_runs_cannot() {
        let p99 = |values: &[u64]| latency_trials(values, |stats, p99_ns| stats.p99_ns = Some(p99_ns));
        let (a, b) = (p99(&P99_1), p99(&P99_2));
        // Alone, the two runs' halves allow ±41 %: run 2's 6x p99 reads as a regression.
        let alone = compare(&a, &b, 0.05, Mode::Separate { history_runs: 0 }, &[], &[]);
        assert!(row(&alone, "p99_ns").regression, "{:?}", row(&alone, "p99_ns").drift);
        // Runs 3 and 4 of the same cell differ by 10x: two runs here can be that far apart.
        let history = [p99(&P99_3), p99(&P99_4)];
        let seen = compare(&a, &b, 0.05, Mode::Separate { history_runs: 2 }, &history, &[]);
        let p99_row = row(&seen, "p99_ns");
        assert!(!p99_row.regression && p99_row.verdict == Verdict::Drift, "{:?} {:?}", p99_row.ci, p99_row.drift);
        assert!(p99_row.drift.fraction().unwrap() > 5.0, "{:?}", p99_row.drift);
        // One other run is no spread at all: the band stays the runs' own.
        let one = compare(&a, &b, 0.05, Mode::Separate { history_runs: 1 }, &history[..1], &[]);
        assert_eq!(row(&one, "p99_ns").drift, row(&alone, "p99_ns").drift);
        // Interleaved runs ignore any history.
        let shared = compare(&a, &b, 0.05, Mode::Interleaved, &history, &[]);
        assert_eq!(row(&shared, "p99_ns").drift, Drift::Shared);
    }

    /// ns/switch of quick's rings (2, 4, 16, 32 and 64 members, 4 repeats) in two runs
    /// of the same build: run 1 or run 2 as stored trials.
    pub(crate) fn lucky_ring_run(side: usize) -> Vec<TrialRecord> {
        let ring = |procs: &str, i: usize, ns: f64| {
            let outcome = RingOutcome {
                procs: 2,
                laps: 2000,
                hops: 4000,
                real_ns: (ns * 4000.0) as u64,
                ..RingOutcome::default()
            };
            trial(i, &format!(r#"{{"procs": {procs}}}"#), Outcome::Ring(outcome))
        };
        LUCKY_CELLS
            .iter()
            .flat_map(|(procs, one, two)| {
                let values = if side == 1 { one } else { two };
                values.iter().enumerate().map(|(i, &ns)| ring(procs, i, ns)).collect::<Vec<_>>()
            })
            .collect()
    }

    /// The 32-member ring's runs do not overlap at all (p = 0.029 alone), a 16 %
    /// "regression" from 2 against 1 by the old rule.
    const LUCKY_CELLS: [(&str, [f64; 4], [f64; 4]); 5] = [
        ("2", [2455.0, 1867.0, 2400.0, 3058.0], [1920.0, 1801.0, 1946.0, 1836.0]),
        ("4", [3539.0, 3428.0, 4585.0, 3468.0], [3308.0, 2964.0, 3303.0, 3770.0]),
        ("16", [3975.0, 4370.0, 4125.0, 3982.0], [4598.0, 3641.0, 3578.0, 3592.0]),
        ("32", [4214.0, 4301.0, 3877.0, 3816.0], [3565.0, 3375.0, 3219.0, 3411.0]),
        ("64", [4287.0, 4759.0, 3949.0, 3841.0], [4161.0, 2947.0, 4878.0, 3343.0]),
    ];

    #[test]
    fn holm_keeps_one_lucky_figure_among_many_from_being_called_different() {
        // The 32-member ring alone (a family of one, interleaved): a "regression".
        let single = evidence(&LUCKY_CELLS[3].2, &LUCKY_CELLS[3].1);
        let (verdict, regression) = judge(&single, single.p, 0.05, Drift::Shared);
        let (single_32, p) = (single.ratio, single.p);
        assert!(regression && verdict == Verdict::Slower && p.unwrap() < 0.05, "{single_32:?} {p:?}");
        // B = run 1 against A = run 2, as the issue's A/A comparisons did (separate runs
        // without history: Mann-Whitney on the repeats).
        let rows = compare(&lucky_ring_run(2), &lucky_ring_run(1), 0.05, Mode::Separate { history_runs: 0 }, &[], &[]);
        assert_eq!(rows.len(), 10);
        assert!(rows.iter().all(|r| !r.regression && r.verdict == Verdict::NoDifference));
        let lucky = rows.iter().find(|r| r.params.procs() == Some(32) && r.figure == "ns_per_switch").unwrap();
        assert!(lucky.p.unwrap() < 0.05 && lucky.p_adjusted.unwrap() >= 0.05, "{:?}", lucky.p_adjusted);
    }
}
