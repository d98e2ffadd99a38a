//! The verdict on one figure of two sides. Separate runs: the ratio of medians B/A with a
//! 95 % bootstrap interval and a Mann-Whitney p; interleaved runs (`ab`): paired blocks
//! and the run's sign-test confidence sequence (`evidence_paired`). Either p is adjusted
//! by Holm over every figure tested (`stats::holm`); separate runs' intervals must also
//! clear the drift band. Pure functions over
//! numbers; `decide::compare` matches the trials and calls these (its module doc states
//! the rule), and `report::compare` renders the rows.

use crate::analysis::sequential::{fewest_blocks, sign_e, Paired};
use crate::analysis::stats::{bootstrap_ratio_ci, mann_whitney, median, smallest_possible_p};

pub const ALPHA: f64 = 0.05;
const BOOTSTRAP_ROUNDS: usize = 2000;
/// The drift band is this many root mean squares of the within-run half shifts.
pub const DRIFT_BOUND: f64 = 2.0;

/// What the interval must clear beyond 1 because of drift between the runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Drift {
    /// Interleaved runs: none.
    Shared,
    /// Separate runs: the band, as ln of a ratio (0.05 is about ±5 %).
    Estimated(f64),
    /// Separate runs with no cell that shows its drift (one repeat per cell, or zeros).
    Unknown,
}

impl Drift {
    /// The band as a fraction (0.051 for ±5.1 %); `None` where there is none.
    pub fn fraction(self) -> Option<f64> {
        match self {
            Drift::Estimated(d) => Some(d.exp() - 1.0),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    NoDifference,
    /// Interleaved only: the median within-block ratio shown within 1 ± the run's margin.
    Equivalent,
    /// Significant, but the interval does not clear the drift between two separate runs.
    Drift,
    /// Too few ok repeats on a side for any test to decide; the reason says how many.
    TooFew(String),
}

impl Verdict {
    pub fn label(&self) -> String {
        match self {
            Verdict::Faster => "B faster".into(),
            Verdict::Slower => "B slower".into(),
            Verdict::NoDifference => "no significant difference".into(),
            Verdict::Equivalent => {
                format!("equivalent within ±{:.0}%", crate::analysis::sequential::MARGIN * 100.0)
            }
            Verdict::Drift => "cannot separate from drift".into(),
            Verdict::TooFew(why) => format!("cannot decide: {why}"),
        }
    }

    /// The verdict as JSON writes it.
    pub fn key(&self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "no_difference",
            Verdict::Equivalent => "equivalent",
            Verdict::Drift => "cannot_separate_from_drift",
            Verdict::TooFew(_) => "too_few_repeats",
        }
    }
}

/// What one figure's samples say before the other figures are seen: the ratio and its
/// interval, the raw p, and why no test can decide, if none can.
pub struct FigureEvidence {
    pub ratio: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub p: Option<f64>,
    pub too_few: Option<String>,
    /// Paired blocks only: how many, and the p that the median ratio is within 1 ± the
    /// experiment's margin (what lets `ab` stop adding blocks on a tie).
    pub blocks: Option<usize>,
    pub p_equivalent: Option<f64>,
}

pub fn evidence(a: &[f64], b: &[f64]) -> FigureEvidence {
    let ci = bootstrap_ratio_ci(a, b, BOOTSTRAP_ROUNDS, 0x5eed);
    let (ratio, ci) = (ci.map(|c| c.0), ci.map(|c| (c.1, c.2)));
    if a.len() < 2 || b.len() < 2 {
        let why = format!("{} and {} ok repeats; a single sample decides nothing", a.len(), b.len());
        return FigureEvidence { ratio, ci, p: None, too_few: Some(why), blocks: None, p_equivalent: None };
    }
    let p = mann_whitney(a, b).map(|r| r.1);
    let too_few = (smallest_possible_p(a.len(), b.len()) > ALPHA)
        .then(|| format!("{} and {} ok repeats; at least 4 on each side are needed", a.len(), b.len()));
    FigureEvidence { ratio, ci, p, too_few, blocks: None, p_equivalent: None }
}

/// Interleaved sides (one `schedlab ab` session): A's and B's values of a cell paired by
/// the block pair they ran in, and tested as a run's questions are
/// (`analysis::sequential`): the median within-block ratio B / A, its confidence sequence
/// at `ALPHA`, and the sign test's anytime-valid p of a difference of that median — valid
/// at whatever block the session stopped, so `ab` may add blocks until it is decided.
pub fn evidence_paired(pairs: &[(f64, f64)], margin: f64) -> FigureEvidence {
    let fewest = fewest_blocks(ALPHA);
    let Some(paired) = Paired::within(pairs, margin) else {
        let why = "no block in which both sides have a value".to_string();
        return FigureEvidence {
            ratio: None,
            ci: None,
            p: None,
            too_few: Some(why),
            blocks: Some(0),
            p_equivalent: None,
        };
    };
    let ci = match paired.interval(ALPHA) {
        (Some(low), Some(high)) => Some((low, high)),
        _ => None,
    };
    let too_few = (paired.blocks < fewest).then(|| {
        format!("{} paired blocks; the sign test needs at least {fewest} to show a difference", paired.blocks)
    });
    FigureEvidence {
        ratio: Some(paired.ratio),
        ci,
        p: Some(paired.p_differ),
        too_few,
        blocks: Some(paired.blocks),
        p_equivalent: Some(paired.p_equivalent),
    }
}

/// The smallest p paired blocks can give: every one of `blocks` on one side.
pub fn smallest_paired_p(blocks: usize) -> f64 {
    (2.0 / sign_e(blocks, blocks)).min(1.0)
}

/// The verdict from the evidence, the adjusted p and the drift band, and whether it is a
/// regression (see the module doc for the rule).
pub fn judge(e: &FigureEvidence, p_adjusted: Option<f64>, threshold: f64, drift: Drift) -> (Verdict, bool) {
    if let Some(why) = &e.too_few {
        return (Verdict::TooFew(why.clone()), false);
    }
    let Some((lo, hi)) = e.ci else { return (Verdict::NoDifference, false) };
    let significant = p_adjusted.is_some_and(|p| p < ALPHA) && (lo > 1.0 || hi < 1.0);
    if !significant {
        return (Verdict::NoDifference, false);
    }
    let band = match drift {
        Drift::Shared => 0.0,
        Drift::Estimated(d) => d,
        Drift::Unknown => return (Verdict::Drift, false),
    };
    if lo > 1.0 && lo.ln() > band {
        (Verdict::Slower, lo.ln() > (1.0 + threshold).ln() + band)
    } else if hi < 1.0 && hi.ln() < -band {
        (Verdict::Faster, false)
    } else {
        (Verdict::Drift, false)
    }
}

/// The shift between the first and second half of one cell's values, in the order they
/// ran, as |ln(median of late half / median of early half)|; with an odd count the middle
/// value is in neither half. `None` with fewer than 2 values or a zero median.
pub fn half_shift(in_time_order: &[f64]) -> Option<f64> {
    let half = in_time_order.len() / 2;
    if half == 0 {
        return None;
    }
    let early = median(&in_time_order[..half]);
    let late = median(&in_time_order[in_time_order.len() - half..]);
    let shift = (late / early).ln().abs();
    (early > 0.0 && late > 0.0 && shift.is_finite()).then_some(shift)
}

/// The drift band from the half shifts of every cell of one figure in both runs.
pub fn drift_band(shifts: &[f64]) -> Drift {
    if shifts.is_empty() {
        return Drift::Unknown;
    }
    let mean_square = shifts.iter().map(|s| s * s).sum::<f64>() / shifts.len() as f64;
    Drift::Estimated(DRIFT_BOUND * mean_square.sqrt())
}

/// The band from the spread of other runs' levels: two runs' levels differ by
/// `sqrt(2) sd` (`sd` of ln(run median)), and the band is about its 95 % bound.
pub fn history_band(sd: f64) -> f64 {
    DRIFT_BOUND * std::f64::consts::SQRT_2 * sd
}

/// The pooled standard deviation of ln(median) over cells, each given as its runs'
/// medians; cells with fewer than two usable medians add nothing. `None` when none does.
pub fn pooled_log_sd(cells: &[Vec<f64>]) -> Option<f64> {
    let (mut sum_sq, mut df) = (0.0, 0usize);
    for medians in cells {
        let logs: Vec<f64> = medians.iter().filter(|m| **m > 0.0 && m.is_finite()).map(|m| m.ln()).collect();
        if logs.len() >= 2 {
            let mean = logs.iter().sum::<f64>() / logs.len() as f64;
            sum_sq += logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>();
            df += logs.len() - 1;
        }
    }
    (df > 0).then(|| (sum_sq / df as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ratio, its interval, the p-value, the verdict and whether it is a regression.
    type Decision = (Option<f64>, Option<(f64, f64)>, Option<f64>, Verdict, bool);

    /// One figure alone (a family of one), interleaved.
    fn decide(a: &[f64], b: &[f64], threshold: f64) -> Decision {
        let e = evidence(a, b);
        let (verdict, regression) = judge(&e, e.p, threshold, Drift::Shared);
        (e.ratio, e.ci, e.p, verdict, regression)
    }

    #[test]
    fn the_drift_band_comes_from_each_cells_halves() {
        assert_eq!(half_shift(&[100.0]), None);
        assert_eq!(half_shift(&[100.0, 0.0]), None);
        // 100, 100 then 110, 110: ln 1.1; an odd middle value is in neither half.
        assert!((half_shift(&[100.0, 100.0, 500.0, 110.0, 110.0]).unwrap() - 1.1f64.ln()).abs() < 1e-12);
        assert!((half_shift(&[110.0, 100.0]).unwrap() - 1.1f64.ln()).abs() < 1e-12);
        assert_eq!(drift_band(&[]), Drift::Unknown);
        let Drift::Estimated(d) = drift_band(&[0.03, 0.04]) else { panic!() };
        assert!((d - 2.0 * (0.0025f64 / 2.0).sqrt()).abs() < 1e-12, "{d}");
    }

    #[test]
    fn judged_against_the_band() {
        let significant = |lo: f64, hi: f64| FigureEvidence {
            ratio: Some((lo + hi) / 2.0),
            ci: Some((lo, hi)),
            p: Some(0.001),
            too_few: None,
            blocks: None,
            p_equivalent: None,
        };
        let band = Drift::Estimated(1.10f64.ln());
        let judged = |lo, hi, drift| judge(&significant(lo, hi), Some(0.001), 0.05, drift);
        assert_eq!(judged(1.08, 1.15, band), (Verdict::Drift, false));
        assert_eq!(judged(1.12, 1.20, band), (Verdict::Slower, false), "beyond the drift, not the threshold too");
        assert_eq!(judged(1.30, 1.40, band), (Verdict::Slower, true));
        assert_eq!(judged(0.80, 0.95, band), (Verdict::Drift, false));
        assert_eq!(judged(0.70, 0.85, band), (Verdict::Faster, false));
        assert_eq!(judged(1.30, 1.40, Drift::Unknown), (Verdict::Drift, false));
        // Interleaved: the interval must clear the threshold, not just the point estimate.
        assert_eq!(judged(1.03, 1.12, Drift::Shared), (Verdict::Slower, false));
        assert_eq!(judged(1.06, 1.12, Drift::Shared), (Verdict::Slower, true));
        // Not significant after adjustment: nothing to say, whatever the interval.
        assert_eq!(judge(&significant(1.3, 1.4), Some(0.2), 0.05, Drift::Shared), (Verdict::NoDifference, false));
    }

    #[test]
    fn verdicts_need_enough_repeats() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let slower = [130.0, 131.0, 129.0, 130.5, 129.5];
        let (ratio, _, p, verdict, regression) = decide(&a, &slower, 0.05);
        assert_eq!(verdict, Verdict::Slower);
        assert!(regression && ratio.unwrap() > 1.29 && p.unwrap() < 0.01);
        // 30 % slower is not a regression beyond a 50 % threshold.
        assert!(!decide(&a, &slower, 0.5).4);
        let (_, _, _, verdict, _) = decide(&slower, &a, 0.05);
        assert_eq!(verdict, Verdict::Faster);
        assert!(matches!(decide(&a[..3], &slower[..3], 0.05).3, Verdict::TooFew(_)));
        assert!(matches!(decide(&a[..1], &slower, 0.05).3, Verdict::TooFew(_)));
        assert_eq!(decide(&a, &a, 0.05).3, Verdict::NoDifference);
    }

    #[test]
    fn history_spread_pools_each_cells_log_medians() {
        // One cell at e^0 and e^2 (sd sqrt 2), one with a single run: only the first counts.
        let e2 = 2f64.exp();
        let sd = pooled_log_sd(&[vec![1.0, e2], vec![5.0], vec![0.0, 3.0]]).unwrap();
        assert!((sd - 2f64.sqrt()).abs() < 1e-12, "{sd}");
        assert_eq!(pooled_log_sd(&[vec![5.0]]), None);
        assert!((history_band(1.0) - 2.0 * 2f64.sqrt()).abs() < 1e-12);
    }
}
