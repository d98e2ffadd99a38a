//! Answers that stay valid however long a run goes on: the paired, sequential test behind
//! every question a run asks ("which policy is faster for this workload?", "which has the
//! lower tail latency?").
//!
//! 1. **Paired blocks.** The cells a question compares run back to back, in random order,
//!    once per block; the test sees only each block's log ratio d = ln(B / A). Slow drift
//!    of a shared machine moves both trials of a block alike and cancels.
//! 2. **What is tested: the median of d**, the typical within-block ratio that every answer
//!    prints. Nothing else about d's shape is assumed: not symmetry, not normality, only
//!    that blocks are independent. For "the median of d is at most m", the count k of
//!    blocks with d > m out of n is scored by a mixture of likelihood ratios over
//!    P(d > m) = p, p uniform on [½, 1]: `sign_e(k, n)`. Under the null P(d > m) ≤ ½, so it
//!    is a nonnegative supermartingale starting at 1 and, by Ville's inequality, ever
//!    reaches 1/α with probability at most α: a p-value of 1 / (its largest value so far)
//!    is valid at whatever block the run stops, including "stop as soon as it looks
//!    decided" (an anytime-valid test, the dual of a confidence sequence for the median).
//!    An earlier version averaged this with a bettor on the magnitudes of d − m; that is
//!    fair only when d is symmetric about its median, and with outliers on one side it
//!    called sides 5 % apart "equivalent within ±5 %" in over 20 % of runs, and sides of
//!    equal median but different shape "different" in 10-19 % (issue 27; the simulation in
//!    `analysis::simulate` measures both).
//! 3. **Two answers.** A *difference*: the median of d is not 0, both sides tested (twice
//!    the smaller one-sided p). *Equivalence*: the median ratio lies within 1 ± the margin
//!    (`MARGIN`, ±5 %, unless the experiment sets its own `margin`),
//!    shown by rejecting both "≤ 1 − margin" and "≥ 1 + margin" (intersection-union: the
//!    larger of the two p). Either one decides the question (`verdict`).
//! 4. **One family.** A run's claims are corrected together by Holm with Shaffer's
//!    refinement (`stats::holm_grouped`) over every hypothesis tested, two per question
//!    and figure: a two-cell question's "the median ratio is 1" and "it is at or beyond
//!    the margin" cannot both be true, so the pair counts once in Holm's multipliers.
//!    (A wrong-way lead is covered too: a block below 0 is also below the upper margin,
//!    so that test's evidence is never stronger than the same side's equivalence test.)
//!    The runner stops a question when that Holm, applied as the report applies it,
//!    accepts one of its claims.

use serde::Serialize;

/// The family-wise error rate of a run's claims.
pub const ALPHA: f64 = 0.05;
/// Two sides whose median within-block ratio is inside 1 ± this are called equivalent,
/// unless the experiment sets its own `margin`.
pub const MARGIN: f64 = 0.05;
/// How a run's answers are tested, for its output.
pub const METHOD: &str = "paired blocks in random order; sign-test confidence sequence for the median within-block \
                          ratio (anytime-valid, so stopping when decided is allowed; no symmetry assumed); Holm \
                          across the run's claims";
/// A question needs at least this many blocks before it is judged: fewer say too little
/// about a noisy machine to be read (6 unanimous blocks reach e = 18, below even one
/// claim's 20 for equivalence; the sign tests' own bars decide when it is enough).
pub const MIN_BLOCKS: usize = 6;

/// A block is run again when one of its trials lost at least this share of its own
/// window to steal on some CPU, counting only the steal it certainly had (its figure less
/// one accounting tick, `model::Steal::certain_share`): 5 %, the size of the default
/// margin, is as much as such a trial's time could have grown by it. Fixed before any
/// trial runs; for a 30 ms trial it means two ticks, at least 10 ms stolen.
pub const STEAL_LEVEL: f64 = 0.05;
/// A block is re-run at most this many times: the last run is kept whatever its steal,
/// and a re-run must fit the budget like any block, so a machine with steal everywhere
/// still finishes.
pub const MAX_STEAL_RERUNS: u32 = 1;

/// Whether a block is dropped and run again: some trial of it met steal beyond
/// `STEAL_LEVEL` (`met_steal`), and it has been re-run fewer than `MAX_STEAL_RERUNS` times.
///
/// Why this bends no error rate: whether a block is kept depends only on the steal its
/// trials met, which the hypervisor causes and the policy under test does not, and it
/// drops the whole block, both sides alike, never one side. Within each block the order of
/// the sides stays random, so under "no difference" the blocks kept are as exchangeable as
/// all blocks were, and the sign test's p-values stay valid; the blocks dropped only cost
/// budget. The answers then speak of blocks without heavy steal, as the run intends.
pub fn rerun_for_steal(met_steal: bool, reruns_so_far: u32) -> bool {
    met_steal && reruns_so_far < MAX_STEAL_RERUNS
}

/// The sign martingale after `n` observations of which `k` went the alternative's way:
/// the mixture over p uniform on [½, 1] of Π (p/½)^[hit] ((1−p)/½)^[miss], in closed form
/// 2^(n+1) ∫_½^1 p^k (1−p)^(n−k) dp = 2^(n+1) B(k+1, n−k+1) I_½(n−k+1, k+1), with I the
/// regularized incomplete beta function (in logs, so it stays finite for any n).
pub fn sign_e(k: usize, n: usize) -> f64 {
    assert!(k <= n, "k = {k} of n = {n}");
    let (a, b) = ((k + 1) as f64, (n - k + 1) as f64);
    let tail = statrs::function::beta::beta_reg(b, a, 0.5);
    if tail <= 0.0 {
        return 0.0;
    }
    ((n + 1) as f64 * std::f64::consts::LN_2 + statrs::function::beta::ln_beta(a, b) + tail.ln()).exp()
}

/// The blocks up to which `sign_e` is kept in a table: every test along a run's blocks
/// (and the simulation's hundreds of thousands) looks values up instead of computing them.
const CACHED_BLOCKS: usize = 400;

fn sign_e_cached(k: usize, n: usize) -> f64 {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    if n > CACHED_BLOCKS {
        return sign_e(k, n);
    }
    // Row n holds k = 0..=n, after the rows before it: n (n + 1) / 2 entries.
    let table = TABLE.get_or_init(|| (0..=CACHED_BLOCKS).flat_map(|n| (0..=n).map(move |k| sign_e(k, n))).collect());
    table[n * (n + 1) / 2 + k]
}

/// One one-sided sign test of the median of d against `bound`, run along the blocks:
/// the alternative is "the median is above `bound`" (`up`) or below it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignTest {
    bound: f64,
    up: bool,
    hits: usize,
    n: usize,
    /// The martingale's largest value so far.
    most: f64,
}

impl SignTest {
    pub fn new(bound: f64, up: bool) -> SignTest {
        SignTest { bound, up, hits: 0, n: 0, most: 1.0 }
    }

    /// The test after every block of `d`, in order.
    pub fn along(d: &[f64], bound: f64, up: bool) -> SignTest {
        let mut test = SignTest::new(bound, up);
        d.iter().for_each(|&x| test.push(x));
        test
    }

    /// One more block. A block exactly at the bound counts against the alternative.
    pub fn push(&mut self, d: f64) {
        self.n += 1;
        self.hits += usize::from(if self.up { d > self.bound } else { d < self.bound });
        self.most = self.most.max(sign_e_cached(self.hits, self.n));
    }

    /// The anytime-valid p-value.
    pub fn p(&self) -> f64 {
        (1.0 / self.most).min(1.0)
    }
}

/// The four one-sided tests of a question's pair, updated block by block: the run's and
/// the simulation's one decision code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tests {
    up: SignTest,
    down: SignTest,
    above_low: SignTest,
    below_high: SignTest,
}

impl Default for Tests {
    fn default() -> Tests {
        Tests::within(MARGIN)
    }
}

impl Tests {
    /// The tests of a question whose sides are called equivalent within 1 ± `margin`.
    pub fn within(margin: f64) -> Tests {
        let (low, high) = margin_bounds(margin);
        Tests {
            up: SignTest::new(0.0, true),
            down: SignTest::new(0.0, false),
            above_low: SignTest::new(low, true),
            below_high: SignTest::new(high, false),
        }
    }

    pub fn push(&mut self, d: f64) {
        for test in [&mut self.up, &mut self.down, &mut self.above_low, &mut self.below_high] {
            test.push(d);
        }
    }

    #[cfg(test)]
    pub fn blocks(&self) -> usize {
        self.up.n
    }

    /// Two-sided p that the median of d is not 0.
    pub fn p_differ(&self) -> f64 {
        (2.0 * self.up.p().min(self.down.p())).min(1.0)
    }

    /// p that the median ratio is within 1 ± the margin.
    pub fn p_equivalent(&self) -> f64 {
        self.above_low.p().max(self.below_high.p())
    }

    /// Whether more blocks went up than down (B above A).
    #[cfg(test)]
    pub fn b_higher(&self) -> bool {
        self.up.hits > self.down.hits
    }
}

/// ln(1 − `margin`) and ln(1 + `margin`): equivalence's bounds on the median of d.
fn margin_bounds(margin: f64) -> (f64, f64) {
    ((1.0 - margin).ln(), margin.ln_1p())
}

/// A question's answer from its p values at a per-claim level: the rule the runner stops
/// on and the report's findings apply (with Holm-adjusted p and α).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The leader differs from every other cell.
    Lead,
    /// The leader and the runner-up are equivalent within the margin.
    Equivalent,
    Open,
}

pub fn decide(blocks: usize, p_lead: f64, p_tie: f64, alpha: f64) -> Decision {
    if blocks < MIN_BLOCKS {
        Decision::Open
    } else if p_lead <= alpha {
        Decision::Lead
    } else if p_tie <= alpha {
        Decision::Equivalent
    } else {
        Decision::Open
    }
}

/// What the blocks of one comparison say, before the run's other claims are seen.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Paired {
    /// Complete blocks (both sides ok).
    pub blocks: usize,
    /// exp(median of ln(B / A)) over the blocks: the typical within-block ratio.
    pub ratio: f64,
    /// Blocks in which B was the larger.
    pub b_larger: usize,
    /// Anytime-valid p, not yet adjusted for the run's other claims: that the median
    /// ratio is not 1 (two-sided), and that it is within 1 ± `margin`.
    pub p_differ: f64,
    pub p_equivalent: f64,
    /// The margin of equivalence it was tested against (0.05 for ±5 %).
    #[serde(skip)]
    pub margin: f64,
    /// The within-block log ratios in block order, for intervals at any level.
    #[serde(skip)]
    pub log_ratios: Vec<f64>,
}

/// The blocks a sign martingale needs in all (those it has included) to reach `bar` if
/// its share of hits goes on as so far, with one pseudo-hit and one pseudo-miss so that a
/// short unanimous start is not taken for certainty; `None` when the share is not above ½
/// or it would take more than `MAX_PROJECTED` blocks.
pub fn projected_blocks(hits: usize, n: usize, bar: f64) -> Option<usize> {
    let share = (hits as f64 + 1.0) / (n as f64 + 2.0);
    if share <= 0.5 {
        return None;
    }
    (1..=MAX_PROJECTED).find(|&m| sign_e_cached((share * m as f64).round() as usize, m) >= bar)
}

/// The longest projection `projected_blocks` makes.
pub const MAX_PROJECTED: usize = 400;

impl Paired {
    /// The test of `blocks`, each (A, B) in the order the blocks ran, equivalence at the
    /// default `MARGIN`; `None` when no block has two positive values.
    pub fn of(blocks: &[(f64, f64)]) -> Option<Paired> {
        Paired::within(blocks, MARGIN)
    }

    /// `of`, with equivalence tested against 1 ± `margin`.
    pub fn within(blocks: &[(f64, f64)], margin: f64) -> Option<Paired> {
        let d: Vec<f64> = blocks
            .iter()
            .filter(|(a, b)| *a > 0.0 && *b > 0.0 && a.is_finite() && b.is_finite())
            .map(|(a, b)| (b / a).ln())
            .collect();
        if d.is_empty() {
            return None;
        }
        let mut tests = Tests::within(margin);
        d.iter().for_each(|&x| tests.push(x));
        Some(Paired {
            blocks: d.len(),
            ratio: crate::analysis::stats::median(&d).exp(),
            b_larger: d.iter().filter(|&&x| x > 0.0).count(),
            p_differ: tests.p_differ(),
            p_equivalent: tests.p_equivalent(),
            margin,
            log_ratios: d,
        })
    }

    /// The interval of the median ratio that holds at level `alpha` at every block (the
    /// confidence sequence, taken at the current block): the values m of the median log
    /// ratio that neither one-sided sign test rejects at α/2, found by bisection; an end is
    /// `None` while the blocks cannot bound it.
    pub fn interval(&self, alpha: f64) -> (Option<f64>, Option<f64>) {
        let d = &self.log_ratios;
        let bar = 2.0 / alpha;
        let median = crate::analysis::stats::median(d);
        let (smallest, largest) =
            d.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        // An end: between `inside` (not rejected) and `outside` (rejected), if the far
        // value is rejected at all.
        let end = |outside: f64, up: bool| -> Option<f64> {
            let rejected = |m: f64| SignTest::along(d, m, up).most >= bar;
            if !rejected(outside) {
                return None;
            }
            let (mut out, mut inside) = (outside, median);
            for _ in 0..60 {
                let mid = 0.5 * (out + inside);
                if rejected(mid) {
                    out = mid;
                } else {
                    inside = mid;
                }
            }
            Some(inside.exp())
        };
        (end(smallest - 1.0, true), end(largest + 1.0, false))
    }

    /// The narrowest margin of equivalence the blocks already support at a per-claim level:
    /// the largest distance from 1 of the interval at which equivalence is tested (each
    /// side at `alpha_each`, as `p_equivalent`), as a fraction (0.07 for "within ±7 %");
    /// `None` while an end is unbounded.
    pub fn supported_margin(&self, alpha_each: f64) -> Option<f64> {
        match self.interval(2.0 * alpha_each) {
            (Some(low), Some(high)) => Some((1.0 - low).max(high - 1.0)),
            _ => None,
        }
    }

    /// Blocks still needed, by `projected_blocks`, for the nearer of the two answers;
    /// `None` when neither is in sight.
    pub fn blocks_to_answer(&self, alpha_each: f64) -> Option<usize> {
        let n = self.blocks;
        let (low, high) = margin_bounds(self.margin);
        let count = |f: &dyn Fn(f64) -> bool| self.log_ratios.iter().filter(|&&x| f(x)).count();
        let one_side = count(&|x| x > 0.0).max(count(&|x| x < 0.0));
        let inside = count(&|x| x > low).min(count(&|x| x < high));
        let differ = projected_blocks(one_side, n, 2.0 / alpha_each);
        let equivalent = projected_blocks(inside, n, 1.0 / alpha_each);
        let total = match (differ, equivalent) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }?;
        Some(total.saturating_sub(n).max(1))
    }
}

/// A question over two or more cells (policies, or the values of another compared axis):
/// the leader, the cell with the lowest median, tested against every other cell.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Indices into the cells given to `of`.
    pub leader: usize,
    pub runner_up: usize,
    /// The leader (A) against each other cell (B), in cell order.
    pub against: Vec<(usize, Paired)>,
}

impl Comparison {
    /// Each cell's ok values keyed by block, equivalence at the default `MARGIN`; `None`
    /// with fewer than two cells holding any.
    #[cfg(test)]
    pub fn of(cells: &[Vec<(u32, f64)>]) -> Option<Comparison> {
        Comparison::within(cells, MARGIN)
    }

    /// `of`, with the leader and the runner-up called equivalent within 1 ± `margin`.
    pub fn within(cells: &[Vec<(u32, f64)>], margin: f64) -> Option<Comparison> {
        let medians: Vec<Option<f64>> = cells
            .iter()
            .map(|c| {
                let v: Vec<f64> = c.iter().map(|x| x.1).collect();
                (!v.is_empty()).then(|| crate::analysis::stats::median(&v))
            })
            .collect();
        let mut ranked: Vec<(usize, f64)> = medians.iter().enumerate().filter_map(|(i, m)| Some((i, (*m)?))).collect();
        if ranked.len() < 2 {
            return None;
        }
        ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (leader, runner_up) = (ranked[0].0, ranked[1].0);
        let against = ranked[1..]
            .iter()
            .filter_map(|&(j, _)| Some((j, Paired::within(&pair_blocks(&cells[leader], &cells[j]), margin)?)))
            .collect();
        Some(Comparison { leader, runner_up, against })
    }

    fn versus(&self, cell: usize) -> Option<&Paired> {
        self.against.iter().find(|(j, _)| *j == cell).map(|(_, p)| p)
    }

    /// The leader against the runner-up.
    pub fn closest(&self) -> Option<&Paired> {
        self.versus(self.runner_up)
    }

    /// Unadjusted p that the leader is below every other cell: the largest of its two-sided
    /// p against each (intersection-union), 1 where a within-block ratio says otherwise.
    pub fn p_leads(&self) -> f64 {
        if self.against.is_empty() {
            return 1.0;
        }
        self.against.iter().map(|(_, p)| if p.ratio >= 1.0 { p.p_differ } else { 1.0 }).fold(0.0, f64::max)
    }

    /// Unadjusted p that the leader and the runner-up are equivalent within the margin.
    pub fn p_tie(&self) -> f64 {
        self.closest().map_or(1.0, |p| p.p_equivalent)
    }

    /// Complete blocks of the leader and the runner-up.
    pub fn blocks(&self) -> usize {
        self.closest().map_or(0, |p| p.blocks)
    }

    /// The runner's rule at one per-claim level, before the run's other claims are seen.
    #[cfg(test)]
    pub fn decision(&self, alpha_each: f64) -> Decision {
        decide(self.blocks(), self.p_leads(), self.p_tie(), alpha_each)
    }

    /// Blocks still needed for a lead (its slowest pair) or a tie, whichever is nearer;
    /// `None` when neither is in sight.
    pub fn blocks_to_answer(&self, alpha_each: f64) -> Option<usize> {
        let lead =
            self.against.iter().map(|(_, p)| p.blocks_to_answer(alpha_each)).try_fold(0, |most, b| Some(most.max(b?)));
        let tie = self.closest().and_then(|p| p.blocks_to_answer(alpha_each));
        match (lead.filter(|_| !self.against.is_empty()), tie) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The blocks of two cells: each cell's ok values keyed by the block (repeat number) they
/// ran in; blocks where either side has no value are left out. In block order.
pub fn pair_blocks(a: &[(u32, f64)], b: &[(u32, f64)]) -> Vec<(f64, f64)> {
    let mut pairs: Vec<(u32, f64, f64)> =
        a.iter().filter_map(|&(block, x)| b.iter().find(|(r, _)| *r == block).map(|&(_, y)| (block, x, y))).collect();
    pairs.sort_by_key(|p| p.0);
    pairs.dedup_by_key(|p| p.0);
    pairs.into_iter().map(|(_, x, y)| (x, y)).collect()
}

/// The fewest blocks with which a difference can be shown at a per-claim level: all of
/// them alike and on one side, the test's best case (under "no difference" a fair bet can
/// at most double per block, so no test does much better).
pub fn fewest_blocks(alpha_each: f64) -> usize {
    let mut blocks = vec![(1.0, 1.1); 2];
    while blocks.len() < 10_000 && Paired::of(&blocks).is_none_or(|p| p.p_differ > alpha_each) {
        blocks.push((1.0, 1.1));
    }
    blocks.len()
}

/// The level each claim must reach for the run to stop extending its question: α over
/// the number of hypotheses in the family, the first and strictest bar of Holm's steps.
pub fn per_claim_alpha(hypotheses: usize) -> f64 {
    ALPHA / hypotheses.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::random::SplitMix64;

    #[test]
    fn the_closed_form_is_the_integral() {
        for (k, n) in [(0, 0), (0, 1), (1, 1), (3, 7), (10, 10), (12, 20)] {
            // Midpoint rule for 2^(n+1) ∫_½^1 p^k (1−p)^(n−k) dp.
            let steps = 200_000;
            let h = 0.5 / steps as f64;
            let integral: f64 = (0..steps)
                .map(|i| {
                    let p = 0.5 + (i as f64 + 0.5) * h;
                    p.powi(k as i32) * (1.0 - p).powi((n - k) as i32) * h
                })
                .sum();
            let want = 2f64.powi(n as i32 + 1) * integral;
            assert!((sign_e(k, n) - want).abs() < 1e-6 * want.max(1.0), "{k}/{n}: {} vs {want}", sign_e(k, n));
        }
        // The sum form: Σ_{j ≤ k} C(n+1, j) / ((n+1) C(n, k)), exact in rationals for small n.
        let choose = |n: u64, k: u64| (0..k).fold(1u128, |c, i| c * u128::from(n - i) / u128::from(i + 1));
        for n in 0..40u64 {
            for k in 0..=n {
                let sum: u128 = (0..=k).map(|j| choose(n + 1, j)).sum();
                let want = sum as f64 / ((n + 1) as f64 * choose(n, k) as f64);
                let got = sign_e(k as usize, n as usize);
                assert!((got - want).abs() <= 1e-9 * want.max(1.0), "{k}/{n}: {got} vs {want}");
            }
        }
        // Unanimous: (2^(n+1) − 1) / (n + 1); large n stays finite.
        assert!((sign_e(10, 10) - 2047.0 / 11.0).abs() < 1e-9);
        assert!(sign_e(600, 1000).is_finite() && sign_e(600, 1000) > 1e6);
        assert!(sign_e(500, 1000) < 1.0);
    }

    #[test]
    fn identical_sides_are_rarely_called_different_even_when_stopped_as_soon_as_they_look_it() {
        // 2000 A/A questions, looked at after every block up to 80, each stopped at the
        // first look that calls a difference at 0.05: at most 5 % may ever get there. The
        // p is the martingale's best so far, so the p after 80 blocks says whether any
        // earlier look did.
        let mut rng = SplitMix64::new(7);
        let sims = 2000;
        let mut false_claims = 0;
        for _ in 0..sims {
            let blocks: Vec<(f64, f64)> = (0..80).map(|_| (1.0, (0.05 * rng.next_normal()).exp())).collect();
            false_claims += usize::from(Paired::of(&blocks).unwrap().p_differ <= ALPHA);
        }
        assert!((false_claims as f64) < 0.05 * sims as f64, "{false_claims} of {sims}");
    }

    #[test]
    fn a_planted_ten_percent_is_found_and_a_tie_is_shown_equivalent() {
        let mut rng = SplitMix64::new(11);
        let alpha_each = per_claim_alpha(16);
        // 10 % slower B, 5 % noise per block: decided within 30 blocks in every run.
        for _ in 0..200 {
            let mut blocks = Vec::new();
            let decided = (1..=30).any(|_| {
                blocks.push((1.0, 1.1 * (0.05 * rng.next_normal()).exp()));
                blocks.len() >= MIN_BLOCKS && Paired::of(&blocks).unwrap().p_differ <= alpha_each
            });
            assert!(decided, "{blocks:?}");
            let p = Paired::of(&blocks).unwrap();
            assert!(p.ratio > 1.0 && p.b_larger > p.blocks / 2);
        }
        // A tie with 1 % noise: equivalent within ±5 %, not different.
        let blocks: Vec<(f64, f64)> = (0..20).map(|_| (1.0, (0.01 * rng.next_normal()).exp())).collect();
        let p = Paired::of(&blocks).unwrap();
        assert!(p.p_equivalent <= alpha_each, "{p:?}");
        assert_eq!(decide(p.blocks, p.p_differ, p.p_equivalent, alpha_each), Decision::Equivalent);
        assert_eq!(p.blocks_to_answer(alpha_each), Some(1));
        let (lo, hi) = p.interval(alpha_each);
        assert!(lo.unwrap() > 0.95 && hi.unwrap() < 1.05 && lo.unwrap() < p.ratio && p.ratio < hi.unwrap());
        // The margin it supports is the interval's reach at the equivalence test's level:
        // inside ±5 % (the tie is shown), and wider for a 6 % difference in 2 % noise.
        let supported = p.supported_margin(alpha_each).unwrap();
        assert!(supported < MARGIN && supported >= (1.0 - lo.unwrap()).max(hi.unwrap() - 1.0) - 0.02, "{supported}");
        let apart: Vec<(f64, f64)> = (0..40).map(|_| (1.0, 1.06 * (0.02 * rng.next_normal()).exp())).collect();
        let apart = Paired::of(&apart).unwrap().supported_margin(alpha_each).unwrap();
        assert!((0.06..0.15).contains(&apart), "{apart}");
        // Too few blocks bound nothing.
        let few = Paired::of(&blocks[..3]).unwrap();
        assert_eq!(few.interval(alpha_each), (None, None));
        assert_eq!(decide(few.blocks, few.p_differ, few.p_equivalent, alpha_each), Decision::Open);
        assert!(few.blocks_to_answer(alpha_each).unwrap() > 3);
    }

    #[test]
    fn a_question_of_three_names_its_leader_and_needs_it_below_both_others() {
        let mut rng = SplitMix64::new(3);
        let cell = |level: f64, rng: &mut SplitMix64| -> Vec<(u32, f64)> {
            (1..=20).map(|r| (r, level * (0.01 * rng.next_normal()).exp())).collect()
        };
        let (a, b, c) = (cell(1.3, &mut rng), cell(1.0, &mut rng), cell(1.01, &mut rng));
        let q = Comparison::of(&[a.clone(), b.clone(), c.clone()]).unwrap();
        assert_eq!((q.leader, q.runner_up, q.blocks()), (1, 2, 20));
        // B and C tie: no lead, but equivalence.
        let alpha_each = per_claim_alpha(4);
        assert_eq!(q.decision(alpha_each), Decision::Equivalent, "{q:?}");
        // Without C, B leads A.
        let q = Comparison::of(&[a, b, Vec::new()]).unwrap();
        assert_eq!(q.decision(alpha_each), Decision::Lead);
        assert!(Comparison::of(&[c, Vec::new()]).is_none());
    }

    #[test]
    fn the_fewest_blocks_grow_with_the_family() {
        // e(n, n) = (2^(n+1) − 1) / (n + 1) must reach 2 / (0.05 / claims).
        // About log2(2 × claims / 0.05) blocks and a few for the mixture's price: 8 for
        // one claim ((2^9 − 1) / 9 = 57 ≥ 40), 13 for 16 (16383 / 14 = 1170 ≥ 640).
        assert_eq!(fewest_blocks(per_claim_alpha(1)), 8);
        assert_eq!(fewest_blocks(per_claim_alpha(16)), 13);
        let fewest = fewest_blocks(per_claim_alpha(4));
        let same = vec![(1.0, 1.1); fewest];
        assert!(Paired::of(&same).unwrap().p_differ <= per_claim_alpha(4));
        assert!(Paired::of(&same[1..]).unwrap().p_differ > per_claim_alpha(4));
    }

    #[test]
    fn projections_shrink_as_the_evidence_grows() {
        let bar = 2.0 / per_claim_alpha(16);
        // Ten of ten: a few more; eight of ten: many more; five of ten: never.
        let unanimous = projected_blocks(10, 10, bar).unwrap();
        let most = projected_blocks(8, 10, bar).unwrap();
        assert!((13..=20).contains(&unanimous) && most > unanimous, "{unanimous} {most}");
        assert_eq!(projected_blocks(5, 10, bar), None);
        assert_eq!(projected_blocks(51, 100, bar), None, "beyond the longest projection");
    }

    #[test]
    fn blocks_pair_by_repeat_and_skip_holes() {
        let a = [(1, 10.0), (2, 11.0), (4, 12.0)];
        let b = [(4, 22.0), (1, 20.0), (3, 30.0)];
        assert_eq!(pair_blocks(&a, &b), vec![(10.0, 20.0), (12.0, 22.0)]);
        assert!(Paired::of(&[(0.0, 1.0)]).is_none());
    }
}
