//! A run's questions answered together: each question's comparison on each figure it
//! tests (`sequential::Comparison`), every claim of the run corrected at once by Holm with
//! Shaffer's refinement (`stats::holm_grouped`), and each comparison's answer — the
//! verdict, its interval at the level its claim passed, and for an open question what is
//! already known and what more would take. The report renders these; the runner stops on
//! the same rule (`sequential::decide`).

use crate::analysis::sequential::{self, Comparison, Decision, ALPHA, MARGIN, MIN_BLOCKS};
use crate::analysis::stats::holm_grouped;
use serde::Serialize;

/// One question as the decision sees it: its cells' values on each figure it tests
/// (per figure, per cell, keyed by the block they ran in), the margin it is asked at,
/// and what one block took (for "~N s more").
pub struct Question {
    pub figures: Vec<Vec<Vec<(u32, f64)>>>,
    pub margin: f64,
    pub block_s: Option<f64>,
}

/// Every question's comparison and answer on each of its figures, in order; `None` for a
/// figure no two cells hold.
pub fn answer_all(questions: &[Question]) -> Vec<Vec<Option<(Comparison, Answer)>>> {
    let tested: Vec<Vec<Option<Comparison>>> =
        questions.iter().map(|q| q.figures.iter().map(|cells| Comparison::within(cells, q.margin)).collect()).collect();
    let raw: Vec<Option<f64>> = tested
        .iter()
        .flatten()
        .flat_map(|c| [c.as_ref().map(Comparison::p_leads), c.as_ref().map(Comparison::p_tie)])
        .collect();
    let claims = raw.iter().flatten().count();
    // A two-cell question's lead and equivalence cannot both be true nulls: one group of
    // capacity 1 per question and figure (`stats::holm_grouped`); with more cells the lead
    // is against every other cell and both may be.
    let capacity: Vec<usize> = questions
        .iter()
        .flat_map(|q| {
            let cells = q.figures.first().map_or(0, Vec::len);
            std::iter::repeat_n(if cells == 2 { 1 } else { 2 }, q.figures.len())
        })
        .collect();
    let group: Vec<usize> = (0..raw.len()).map(|i| i / 2).collect();
    let adjusted = holm_grouped(&raw, &group, &capacity);
    let at_once: usize =
        capacity.iter().enumerate().map(|(g, &c)| c.min(raw[2 * g..2 * g + 2].iter().flatten().count())).sum();
    let family = ClaimFamily { claims, at_once };
    let mut next_p = adjusted.chunks(2);
    questions
        .iter()
        .zip(tested)
        .map(|(q, comparisons)| {
            comparisons
                .into_iter()
                .map(|c| {
                    let ps = next_p.next().unwrap_or(&[]);
                    let c = c?;
                    let (Some(Some(leads)), Some(Some(tie))) = (ps.first(), ps.get(1)) else { return None };
                    let answer = answer(&c, *leads, *tie, family, q.block_s);
                    Some((c, answer))
                })
                .collect()
        })
        .collect()
}

/// A question's answer on one figure: the leader (lowest median) against the other cells,
/// on the blocks in which both ran.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Answer {
    pub verdict: AnswerVerdict,
    /// Complete blocks of the leader and the runner-up.
    pub blocks: usize,
    /// Blocks in which the runner-up was the higher.
    pub next_higher: usize,
    /// The median within-block ratio runner-up / leader, and its interval at the run's
    /// per-claim level (the confidence sequence; `None` where the blocks cannot bound it).
    pub ratio: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The interval's α: a decided claim's level at its Holm step (α × raw p / adjusted
    /// p; twice that for equivalence, whose two sides are each tested at it), an open
    /// question's Holm's first step.
    pub ci_level: f64,
    /// Holm-adjusted p of a lead (the leader below every other cell) and of equivalence
    /// with the runner-up within ±`margin`.
    pub p_leads: f64,
    pub p_equivalent: f64,
    pub margin: f64,
    /// Hypotheses in the run's family of claims, and how many of them can be true nulls at
    /// once (a two-cell question's lead and equivalence cannot both be): Holm's first
    /// multiplier.
    pub claims: usize,
    pub at_once: usize,
    /// The fewest blocks that could show a lead in a family of this size.
    pub fewest_blocks: usize,
    /// What an open question already shows: the narrowest margin of equivalence its
    /// interval supports at the per-claim level (0.07: "within ±7 %"), and the blocks it
    /// would likely still need for an answer if its blocks go on as so far, with what one
    /// block took (the median trial time of each cell, summed).
    pub supported_margin: Option<f64>,
    pub more_blocks: Option<usize>,
    pub block_s: Option<f64>,
    pub test: &'static str,
}

/// What a question's answer says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerVerdict {
    /// The leader is below every other cell.
    Leads,
    /// The leader and the runner-up are equal within the margin.
    Equivalent,
    /// Fewer than `MIN_BLOCKS` complete blocks.
    TooFewBlocks,
    Undecided,
}

pub const TEST: &str = "sign-test confidence sequence on paired blocks";

impl Answer {
    pub fn decided(&self) -> bool {
        matches!(self.verdict, AnswerVerdict::Leads | AnswerVerdict::Equivalent)
    }
}

/// A run's family of claims: how many, and how many of them can be true nulls at once
/// (Holm's first multiplier).
#[derive(Clone, Copy)]
struct ClaimFamily {
    claims: usize,
    at_once: usize,
}

fn answer(c: &Comparison, p_leads: f64, p_equivalent: f64, family: ClaimFamily, block_s: Option<f64>) -> Answer {
    let ClaimFamily { claims, at_once } = family;
    let closest = c.closest();
    let blocks = c.blocks();
    // The runner's rule (`sequential::decide`), on the Holm-adjusted p at α.
    let verdict = match sequential::decide(blocks, p_leads, p_equivalent, ALPHA) {
        Decision::Lead => AnswerVerdict::Leads,
        Decision::Equivalent => AnswerVerdict::Equivalent,
        Decision::Open if blocks < MIN_BLOCKS => AnswerVerdict::TooFewBlocks,
        Decision::Open => AnswerVerdict::Undecided,
    };
    let alpha_each = sequential::per_claim_alpha(at_once);
    // The interval at the level its claim passed Holm at (α × raw p / adjusted p), so that
    // a lead's interval excludes 1 and a tie's lies within the margin; an open question's
    // at Holm's first step. Equivalence tests each side at its level: the interval of
    // twice it.
    let level = |raw: f64, adjusted: f64| if adjusted > 0.0 { ALPHA * raw / adjusted } else { alpha_each };
    let interval_level = match verdict {
        AnswerVerdict::Leads => level(c.p_leads(), p_leads),
        AnswerVerdict::Equivalent => 2.0 * level(c.p_tie(), p_equivalent),
        _ => alpha_each,
    };
    let ci_level = interval_level.min(1.0);
    let (ci_low, ci_high) = closest.map_or((None, None), |p| p.interval(ci_level));
    let open = verdict == AnswerVerdict::Undecided;
    Answer {
        verdict,
        blocks,
        next_higher: closest.map_or(0, |p| p.b_larger),
        ratio: closest.map_or(f64::NAN, |p| p.ratio),
        ci_low,
        ci_high,
        ci_level,
        p_leads,
        p_equivalent,
        margin: closest.map_or(MARGIN, |p| p.margin),
        claims,
        at_once,
        fewest_blocks: sequential::fewest_blocks(alpha_each),
        supported_margin: closest.filter(|_| open).and_then(|p| p.supported_margin(alpha_each)),
        more_blocks: c.blocks_to_answer(alpha_each).filter(|_| open),
        block_s,
        test: TEST,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two cells over `n` blocks: A at 1.0, B at `ratio` times it, times 1 ± `wobble` in
    /// alternate blocks.
    fn two_cells(n: u32, ratio: f64, wobble: f64) -> Vec<Vec<(u32, f64)>> {
        let a: Vec<(u32, f64)> = (0..n).map(|b| (b, 1.0)).collect();
        let b: Vec<(u32, f64)> =
            (0..n).map(|b| (b, ratio * if b % 2 == 0 { 1.0 + wobble } else { 1.0 - wobble })).collect();
        vec![a, b]
    }

    #[test]
    fn the_run_s_claims_are_corrected_together_and_each_margin_is_its_own() {
        let lead = Question { figures: vec![two_cells(30, 1.5, 0.01)], margin: MARGIN, block_s: Some(0.2) };
        // Blocks at 1.061 and 0.979, alternately: no lead; all inside ±10 %, half beyond ±5 %.
        let near = |margin| Question { figures: vec![two_cells(40, 1.02, 0.04)], margin, block_s: None };
        let out = answer_all(&[lead, near(0.10)]);
        let (c, a) = out[0][0].clone().unwrap();
        assert_eq!((c.leader, a.verdict), (0, AnswerVerdict::Leads), "{a:?}");
        // Two questions of two cells: four claims, at most two true nulls at once.
        assert_eq!((a.claims, a.at_once, a.block_s), (4, 2, Some(0.2)));
        let (_, a) = out[1][0].clone().unwrap();
        assert_eq!((a.verdict, a.margin), (AnswerVerdict::Equivalent, 0.10), "{a:?}");
        assert!(a.ci_low.unwrap() > 0.9 && a.ci_high.unwrap() < 1.1, "{a:?}");
        // At ±5 % the same blocks answer nothing: half of them lie beyond the margin.
        let (_, a) = answer_all(&[near(MARGIN)])[0][0].clone().unwrap();
        assert_eq!((a.verdict, a.margin), (AnswerVerdict::Undecided, MARGIN), "{a:?}");
    }

    #[test]
    fn a_figure_no_two_cells_hold_has_no_answer_and_few_blocks_are_too_few() {
        let q = Question {
            figures: vec![vec![vec![(0, 1.0)], Vec::new()], two_cells(3, 1.5, 0.01)],
            margin: MARGIN,
            block_s: None,
        };
        let out = answer_all(&[q]);
        assert!(out[0][0].is_none());
        let (_, a) = out[0][1].clone().unwrap();
        assert_eq!((a.verdict, a.blocks, a.claims), (AnswerVerdict::TooFewBlocks, 3, 2), "{a:?}");
    }
}
