//! Which policy leads a workload: a rank test of the best policy's values against the
//! next one's, and, when it finds no difference, an equivalence test on the ratio of
//! their medians. Pure functions over numbers; `report::findings` groups the trials.

use crate::analysis::stats::{bootstrap_ratio_ci, mann_whitney, smallest_possible_p};
use serde::Serialize;

/// Two policies whose medians are within this of each other (the 95 % bootstrap interval
/// of their ratio inside 1 ± this) are called equivalent.
pub const EQUIVALENCE_MARGIN: f64 = 0.05;
const BOOTSTRAP_ROUNDS: usize = 2000;
const BOOTSTRAP_SEED: u64 = 0x5eed;

/// Whether a workload's lead is significant, and the test that says so. `Significant` and
/// `Equivalent` decide the question; `NotSignificant` leaves it open (more repeats or
/// longer trials may decide it).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Significance {
    /// Fewer repeats than any rank test can call significant at p < 0.05.
    TooFewRepeats {
        n_best: usize,
        n_next: usize,
    },
    Significant {
        p: f64,
    },
    /// No significant difference, and the 95 % bootstrap interval of the ratio of medians
    /// (next / best) lies within 1 ± `margin`: the two are equal to within the margin.
    Equivalent {
        p: f64,
        ci_low: f64,
        ci_high: f64,
        margin: f64,
    },
    /// Neither a significant difference nor shown equivalent: undecided. The ratio's
    /// interval, when there is one, shows how far from deciding it is.
    NotSignificant {
        p: f64,
        ci_low: Option<f64>,
        ci_high: Option<f64>,
    },
    Untested,
}

impl Significance {
    /// Whether the best-policy question has an answer: a difference, or equivalence.
    pub fn decided(&self) -> bool {
        matches!(self, Significance::Significant { .. } | Significance::Equivalent { .. })
    }

    /// The verdict on `best` (lowest median) against `next`: a Mann-Whitney test first; if it
    /// finds no difference, an equivalence test on the ratio of medians.
    pub fn of(best: &[f64], next: &[f64]) -> Significance {
        if smallest_possible_p(best.len(), next.len()) > 0.05 {
            return Significance::TooFewRepeats { n_best: best.len(), n_next: next.len() };
        }
        let Some((_, p)) = mann_whitney(best, next) else { return Significance::Untested };
        if p < 0.05 {
            return Significance::Significant { p };
        }
        let ci = bootstrap_ratio_ci(best, next, BOOTSTRAP_ROUNDS, BOOTSTRAP_SEED);
        match ci {
            Some((_, lo, hi)) if lo >= 1.0 - EQUIVALENCE_MARGIN && hi <= 1.0 + EQUIVALENCE_MARGIN => {
                Significance::Equivalent { p, ci_low: lo, ci_high: hi, margin: EQUIVALENCE_MARGIN }
            }
            _ => Significance::NotSignificant { p, ci_low: ci.map(|c| c.1), ci_high: ci.map(|c| c.2) },
        }
    }
}

#[cfg(test)]
mod best_policy_tests {
    use super::*;

    /// `n` values spread ±`spread` (relative) around `level`, in a fixed shuffled order.
    fn around(level: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n).map(|i| level * (1.0 + spread * (((i * 7) % n) as f64 / (n - 1) as f64 * 2.0 - 1.0))).collect()
    }

    #[test]
    fn equal_policies_are_equivalent_not_undecided() {
        // FIFO and RR on CPU-bound work: medians 0.5 % apart, 2 % spread, 12 repeats each.
        let best = around(1.000, 0.02, 12);
        let next = around(1.005, 0.02, 12);
        let verdict = Significance::of(&best, &next);
        let Significance::Equivalent { p, ci_low, ci_high, margin } = verdict else { panic!("{verdict:?}") };
        assert!(p >= 0.05 && ci_low >= 0.95 && ci_high <= 1.05 && ci_low <= 1.005 && 1.005 <= ci_high);
        assert_eq!(margin, EQUIVALENCE_MARGIN);
        assert!(verdict.decided());
        assert!(verdict.to_string().starts_with("equivalent within ±5%"), "{verdict}");
    }

    #[test]
    fn a_clear_lead_is_significant_and_a_noisy_tie_is_undecided() {
        let verdict = Significance::of(&around(1.0, 0.02, 8), &around(1.3, 0.02, 8));
        assert!(matches!(verdict, Significance::Significant { p } if p < 0.01), "{verdict:?}");
        assert!(verdict.decided());
        // Same medians but ±40 % spread over 6 repeats: neither a difference nor shown equal.
        let verdict = Significance::of(&around(1.0, 0.4, 6), &around(1.02, 0.4, 6));
        let Significance::NotSignificant { ci_low: Some(lo), ci_high: Some(hi), .. } = verdict else {
            panic!("{verdict:?}")
        };
        assert!(lo < 0.95 || hi > 1.05, "{lo} {hi}");
        assert!(!verdict.decided());
        assert!(verdict.to_string().starts_with("undecided"), "{verdict}");
        // Three repeats cannot decide anything.
        let verdict = Significance::of(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]);
        assert_eq!(verdict, Significance::TooFewRepeats { n_best: 3, n_next: 3 });
        assert!(!verdict.decided());
    }
}
