//! Knees and linearity of a per-item cost curve: the NCAR 1992 question, "does the cost of
//! a context switch stay flat as processes are added, and if not, where does it turn?".
//!
//! The input is one cost per item (CPU ns per hop) at each count, with one value per
//! count (the 1992 report's tables) or several repeats (schedlab's rings). Costs are
//! compared as ratios, so the analysis reads a 400 µs Sun and a 3 µs VM alike.
//!
//! 1. A *knee* is a step between two neighbouring counts of at least [`STEP_MIN`] (a
//!    quarter) whose new level holds: the median of the points after it (up to the next
//!    step) stands at least as far from the median of the points before it. It must also
//!    stand out from the noise, by a test that fits the data:
//!    - with repeats (three or more on each side) a Mann-Whitney test between the two
//!      sides' values, p below 0.01 shared (Bonferroni) among the candidate steps;
//!    - with one value per count, a robust z-score of the step's log change against the
//!      curve's other neighbour-to-neighbour changes (median and MAD), z ≥ 3.5.
//!
//!    Every step that passes is a knee, so a curve may have several, and a knee right
//!    after the first count is found like any other (one point on a side is enough).
//! 2. The *shape* of what is left: a least-squares line of log cost against log count,
//!    with its own level per segment between knees. A fitted rise of [`RISE_MIN`] or more
//!    across the measured counts (the knees' own steps left out), clearly non-zero (t ≥ 3),
//!    is a steady super-linear rise (total cost growing faster than the count); as large
//!    but not clear is unclear; less is linear (the total within a quarter of linear).
//! 3. Always: how far the largest count sits above the linear projection from the
//!    smallest (its cost per item over the smallest's), the report's "CPU / Projected".
//!
//! Checked against the 1992 report's nine machines, whose text says what each shows
//! (`tests` below): the Sun-4/280 turns between 10 and 16, the Sun-4/470 at 48 → 64, the
//! HP 9000/720, AIX 3.2 and Sun-4/630 stay linear, and AIX 3.1 diverges steadily.

use crate::analysis::stats::{mann_whitney, median, smallest_possible_p};
use serde::Serialize;

/// The smallest step between neighbouring counts that can be a knee (+25 %, or the
/// reverse for a drop). AIX 3.1's +13 % and +12 % steps, which the report reads as a
/// steady divergence, stay below it; the Sun-4/470's +38 % at 48 → 64 clears it.
pub const STEP_MIN: f64 = 0.25;
/// The smallest fitted rise across the measured counts that is called a steady rise
/// rather than linear (flat cost per item).
pub const RISE_MIN: f64 = 0.25;
/// How far a single-valued step must stand out from the curve's other steps.
const Z_MIN: f64 = 3.5;
/// The family-wise level for the repeat-based test.
const ALPHA: f64 = 0.01;
/// Repeats on each side that the rank test needs to be used instead of the z-score.
const MIN_REPEATS: usize = 3;
/// Counts needed to analyse a curve at all: a step and at least two others to compare it with.
pub const MIN_POINTS: usize = 4;

/// The evidence behind a knee.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "test", rename_all = "snake_case")]
pub enum StepTest {
    /// Mann-Whitney between the repeats on either side (before and after the step, up to
    /// the neighbouring knees); `alpha` is the level it had to beat.
    MannWhitney { p: f64, alpha: f64, n_before: usize, n_after: usize },
    /// The step's log change against the median and MAD of the curve's `n_other` other
    /// neighbour-to-neighbour changes.
    RobustZ { z: f64, n_other: usize },
}

impl std::fmt::Display for StepTest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepTest::MannWhitney { p, n_before, n_after, .. } => {
                write!(f, "Mann-Whitney p = {p:.1e}, n = {n_before} and {n_after}")
            }
            StepTest::RobustZ { z, n_other } if z.is_infinite() => {
                write!(f, "the other {n_other} steps are all equal; this one is not")
            }
            StepTest::RobustZ { z, n_other } => write!(f, "robust z = {z:.1} against the other {n_other} steps"),
        }
    }
}

/// A step in the cost per item between two neighbouring counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Knee {
    /// The last count before the step and the first after it.
    pub before: f64,
    pub after: f64,
    /// The cost at those two counts (medians of their repeats), and after / before − 1.
    pub cost_before: f64,
    pub cost_after: f64,
    pub jump: f64,
    /// The median cost of each side as a whole (up to the neighbouring knees).
    pub level_before: f64,
    pub level_after: f64,
    pub test: StepTest,
}

/// What the cost does between and around its knees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Flat cost per item: the total grows linearly with the count.
    Linear,
    /// The cost per item keeps rising: the total grows faster than the count.
    SteadyRise,
    /// The cost per item keeps falling.
    SteadyFall,
    /// The fitted change is as large as a steady rise or fall, but too noisy to call one.
    Unclear,
}

/// The whole reading of one curve.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scaling {
    pub from: f64,
    pub to: f64,
    pub knees: Vec<Knee>,
    pub shape: Shape,
    /// The fitted change across the measured counts, knees left out (0.30 = +30 %): the
    /// slope times the span of log counts inside the segments between knees.
    pub trend: f64,
    /// The slope's t statistic (how clearly the trend differs from none).
    pub trend_t: f64,
    /// The largest count's cost per item over the smallest's: the total's distance above
    /// the linear projection (1.0 = on it).
    pub above_projection: f64,
}

/// Reads a curve: `points` are (count, that count's values), in any order. `None` with
/// fewer than [`MIN_POINTS`] counts that have values, or a cost that is not positive.
pub fn analyse(points: &[(f64, Vec<f64>)]) -> Option<Scaling> {
    let mut pts: Vec<(f64, &[f64])> =
        points.iter().filter(|(_, v)| !v.is_empty()).map(|(x, v)| (*x, v.as_slice())).collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    if pts.len() < MIN_POINTS {
        return None;
    }
    let levels: Vec<f64> = pts.iter().map(|(_, v)| median(v)).collect();
    if levels.iter().any(|l| !(l.is_finite() && *l > 0.0)) {
        return None;
    }
    let log_steps: Vec<f64> = levels.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
    let threshold = (1.0 + STEP_MIN).ln();
    let mut candidates: Vec<usize> = (0..log_steps.len()).filter(|&i| log_steps[i].abs() >= threshold).collect();
    // A step straight back the other way after one count is that count standing out (a
    // spike), not two changes of level: neither step is a knee.
    let spikes: Vec<usize> = candidates
        .windows(2)
        .filter(|w| w[1] == w[0] + 1 && log_steps[w[0]].signum() != log_steps[w[1]].signum())
        .flat_map(|w| [w[0], w[1]])
        .collect();
    candidates.retain(|c| !spikes.contains(c));
    // Drop candidates that fail, one at a time, until every remaining one passes: each
    // test depends on where the others split the curve.
    let knees = loop {
        let judged: Vec<Result<Knee, usize>> =
            candidates.iter().map(|&i| judge(&pts, &log_steps, &candidates, i).ok_or(i)).collect();
        let failed: Vec<usize> = judged.iter().filter_map(|j| j.as_ref().err().copied()).collect();
        if failed.is_empty() {
            break judged.into_iter().filter_map(Result::ok).collect::<Vec<Knee>>();
        }
        // A step fails for want of evidence or because a neighbouring candidate leaves it
        // too short a side. Drop the smallest of the failing steps and their neighbours,
        // and judge again: a larger step often passes once its sides are whole.
        let position = |c: usize| candidates.iter().position(|&x| x == c).unwrap_or(0);
        let suspects: Vec<usize> = failed
            .iter()
            .flat_map(|&f| {
                let at = position(f);
                [at.checked_sub(1), Some(at), Some(at + 1)]
            })
            .flatten()
            .filter_map(|at| candidates.get(at).copied())
            .collect();
        let weakest = suspects.into_iter().min_by(|&a, &b| log_steps[a].abs().total_cmp(&log_steps[b].abs()))?;
        candidates.retain(|&c| c != weakest);
    };
    let boundaries: Vec<usize> = knees.iter().filter_map(|k| pts.iter().position(|p| p.0 == k.after)).collect();
    let (slope, t) = segmented_slope(&pts, &levels, &boundaries);
    let (from, to) = (pts[0].0, pts[pts.len() - 1].0);
    // The knees' own steps are not part of the trend: only the spans inside segments count.
    let starts: Vec<usize> = std::iter::once(0).chain(boundaries.iter().copied()).collect();
    let ends: Vec<usize> = boundaries.iter().map(|b| b - 1).chain(std::iter::once(pts.len() - 1)).collect();
    let span: f64 = starts.iter().zip(&ends).map(|(&s, &e)| (pts[e].0 / pts[s].0).ln()).sum();
    let trend = (slope * span).exp() - 1.0;
    let large = trend >= RISE_MIN || trend <= 1.0 / (1.0 + RISE_MIN) - 1.0;
    let shape = match (large, t.abs() >= 3.0) {
        (false, _) => Shape::Linear,
        (true, false) => Shape::Unclear,
        (true, true) if trend > 0.0 => Shape::SteadyRise,
        (true, true) => Shape::SteadyFall,
    };
    Some(Scaling { from, to, knees, shape, trend, trend_t: t, above_projection: levels[levels.len() - 1] / levels[0] })
}

/// Whether the step after point `i` is a knee, given the other candidate steps.
fn judge(pts: &[(f64, &[f64])], log_steps: &[f64], candidates: &[usize], i: usize) -> Option<Knee> {
    // The side before runs back to the previous candidate, the side after up to the next.
    let start = candidates.iter().copied().filter(|&c| c < i).max().map_or(0, |c| c + 1);
    let end = candidates.iter().copied().filter(|&c| c > i).min().map_or(pts.len(), |c| c + 1);
    let before: Vec<f64> = pts[start..=i].iter().flat_map(|p| p.1.iter().copied()).collect();
    let after: Vec<f64> = pts[i + 1..end].iter().flat_map(|p| p.1.iter().copied()).collect();
    let (level_before, level_after) = (median(&before), median(&after));
    // The new level must hold, in the same direction as the step, by as much as a step must.
    let holds = (level_after / level_before).ln() * log_steps[i].signum() >= (1.0 + STEP_MIN).ln();
    if !holds {
        return None;
    }
    let repeats = |p: &(f64, &[f64])| p.1.len();
    let test = if repeats(&pts[i]) >= MIN_REPEATS && repeats(&pts[i + 1]) >= MIN_REPEATS {
        let alpha = ALPHA / candidates.len() as f64;
        if smallest_possible_p(before.len(), after.len()) >= alpha {
            return None;
        }
        let (_, p) = mann_whitney(&before, &after)?;
        if p >= alpha {
            return None;
        }
        StepTest::MannWhitney { p, alpha, n_before: before.len(), n_after: after.len() }
    } else {
        let others: Vec<f64> =
            log_steps.iter().enumerate().filter(|(j, _)| !candidates.contains(j)).map(|(_, s)| *s).collect();
        if others.len() < 2 {
            return None;
        }
        let centre = median(&others);
        let spread = 1.4826 * median(&others.iter().map(|s| (s - centre).abs()).collect::<Vec<_>>());
        let distance = (log_steps[i] - centre).abs();
        let z = if spread > 0.0 { distance / spread } else { f64::INFINITY };
        if z < Z_MIN {
            return None;
        }
        StepTest::RobustZ { z, n_other: others.len() }
    };
    let (cost_before, cost_after) = (median(pts[i].1), median(pts[i + 1].1));
    Some(Knee {
        before: pts[i].0,
        after: pts[i + 1].0,
        cost_before,
        cost_after,
        jump: cost_after / cost_before - 1.0,
        level_before,
        level_after,
        test,
    })
}

/// Least squares of log level on log count with one intercept per segment (segments start
/// at `boundaries`) and a shared slope: the slope and its t statistic (infinite when the
/// fit is exact and the slope is not zero).
fn segmented_slope(pts: &[(f64, &[f64])], levels: &[f64], boundaries: &[usize]) -> (f64, f64) {
    let mut segment = vec![0usize; pts.len()];
    for (i, s) in segment.iter_mut().enumerate() {
        *s = boundaries.iter().filter(|&&b| b <= i).count();
    }
    let segments = boundaries.len() + 1;
    let (xs, ys): (Vec<f64>, Vec<f64>) = pts.iter().zip(levels).map(|(p, l)| (p.0.ln(), l.ln())).unzip();
    // Centre x and y within each segment; the shared slope is then an ordinary regression.
    let mut centred = Vec::with_capacity(xs.len());
    for s in 0..segments {
        let idx: Vec<usize> = (0..xs.len()).filter(|&i| segment[i] == s).collect();
        let n = idx.len() as f64;
        let (mx, my) = (idx.iter().map(|&i| xs[i]).sum::<f64>() / n, idx.iter().map(|&i| ys[i]).sum::<f64>() / n);
        centred.extend(idx.iter().map(|&i| (xs[i] - mx, ys[i] - my)));
    }
    let sxx: f64 = centred.iter().map(|(x, _)| x * x).sum();
    if sxx == 0.0 {
        return (0.0, 0.0);
    }
    let slope = centred.iter().map(|(x, y)| x * y).sum::<f64>() / sxx;
    let dof = xs.len() as f64 - segments as f64 - 1.0;
    if dof < 1.0 {
        return (slope, 0.0);
    }
    let sse: f64 = centred.iter().map(|(x, y)| (y - slope * x).powi(2)).sum();
    let se = (sse / dof / sxx).sqrt();
    let t = if se > 0.0 {
        slope / se
    } else if slope != 0.0 {
        f64::INFINITY.copysign(slope)
    } else {
        0.0
    };
    (slope, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One value per count: (processes, CPU seconds) from a 1992 table, as CPU s per
    /// process (the laps are the same at every count, so the scale does not matter).
    fn table(rows: &[(u32, u32)]) -> Vec<(f64, Vec<f64>)> {
        rows.iter().map(|&(p, cpu)| (f64::from(p), vec![f64::from(cpu) / f64::from(p)])).collect()
    }

    fn knees(s: &Scaling) -> Vec<(f64, f64)> {
        s.knees.iter().map(|k| (k.before, k.after)).collect()
    }

    #[test]
    fn a_step_after_the_first_point_is_a_knee() {
        let curve = table(&[(2, 200), (4, 560), (8, 1130), (16, 2270), (32, 4490), (64, 9100)]);
        let s = analyse(&curve).unwrap();
        assert_eq!(knees(&s), vec![(2.0, 4.0)]);
        assert!(matches!(s.knees[0].test, StepTest::RobustZ { .. }));
        assert_eq!(s.shape, Shape::Linear);
    }

    #[test]
    fn two_steps_are_two_knees() {
        let curve = table(&[
            (2, 200),
            (4, 404),
            (8, 802),
            (10, 1500),
            (16, 2420),
            (20, 3010),
            (32, 4830),
            (48, 12000),
            (64, 16100),
        ]);
        let s = analyse(&curve).unwrap();
        assert_eq!(knees(&s), vec![(8.0, 10.0), (32.0, 48.0)]);
        assert!((s.above_projection - 16100.0 / 64.0 / 100.0).abs() < 1e-9);
    }

    #[test]
    fn a_steady_rise_is_not_a_knee() {
        // Cost per item growing like count^0.15 (+11 % a doubling): no single step.
        let curve: Vec<(f64, Vec<f64>)> =
            [2.0f64, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0].iter().map(|&x| (x, vec![100.0 * x.powf(0.15)])).collect();
        let s = analyse(&curve).unwrap();
        assert!(s.knees.is_empty(), "{s:?}");
        assert_eq!(s.shape, Shape::SteadyRise);
        assert!((s.trend - 64f64.powf(0.15) + 1.0).abs() < 1e-9, "{}", s.trend);
    }

    #[test]
    fn repeats_use_the_rank_test() {
        let noisy = |level: f64, i: usize| -> Vec<f64> {
            (0..5).map(|r| level * (1.0 + 0.02 * (((i * 7 + r * 3) % 5) as f64 - 2.0))).collect()
        };
        let xs = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let curve: Vec<(f64, Vec<f64>)> =
            xs.iter().enumerate().map(|(i, &x)| (x, noisy(if x < 4.0 { 3000.0 } else { 4900.0 }, i))).collect();
        let s = analyse(&curve).unwrap();
        assert_eq!(knees(&s), vec![(2.0, 4.0)]);
        assert!(matches!(s.knees[0].test, StepTest::MannWhitney { p, .. } if p < 0.01), "{:?}", s.knees[0]);
        assert!((s.knees[0].jump - 0.633).abs() < 0.03, "{:?}", s.knees[0]);
        let flat: Vec<(f64, Vec<f64>)> = xs.iter().enumerate().map(|(i, &x)| (x, noisy(3000.0, i))).collect();
        let s = analyse(&flat).unwrap();
        assert!(s.knees.is_empty());
        assert_eq!(s.shape, Shape::Linear);
    }

    #[test]
    fn a_first_step_is_kept_when_its_neighbour_leaves_it_too_short() {
        // pipeline-1992 on the 2-vCPU VM beside a compiler, CPU ns per hop, 3 repeats:
        // 2 → 4 (+58 %) and 4 → 8 (+45 %) both clear the candidate bar, but 3 against 3
        // repeats cannot be significant at 1 %; the step after the first count stands.
        let curve: Vec<(f64, Vec<f64>)> = vec![
            (2.0, vec![2542.0, 2544.0, 2547.0]),
            (4.0, vec![4653.0, 3984.0, 4022.0]),
            (8.0, vec![5846.0, 5900.0, 5658.0]),
            (10.0, vec![4900.0, 4832.0, 4313.0]),
            (16.0, vec![4754.0, 5485.0, 5687.0]),
            (20.0, vec![4785.0, 4554.0, 4735.0]),
            (32.0, vec![4708.0, 5347.0, 4843.0]),
            (48.0, vec![4847.0, 4824.0, 4581.0]),
            (64.0, vec![4894.0, 4453.0, 4585.0]),
        ];
        let s = analyse(&curve).unwrap();
        assert_eq!(knees(&s), vec![(2.0, 4.0)], "{s:?}");
        assert!(matches!(s.knees[0].test, StepTest::MannWhitney { n_before: 3, n_after: 24, .. }));
        assert!((s.knees[0].jump - (4022.0 / 2544.0 - 1.0)).abs() < 1e-9);
    }

    #[test]
    fn a_lone_spike_is_not_a_knee() {
        // One count far off that comes back down: its level does not hold.
        let curve = table(&[(2, 400), (4, 810), (8, 1600), (10, 3000), (16, 3230), (20, 4010), (32, 6420)]);
        let s = analyse(&curve).unwrap();
        assert!(s.knees.is_empty(), "{s:?}");
    }

    #[test]
    fn too_few_counts_are_not_analysed() {
        assert!(analyse(&table(&[(2, 100), (4, 400), (8, 800)])).is_none());
        assert!(analyse(&[(2.0, vec![]), (4.0, vec![1.0]), (8.0, vec![1.0]), (16.0, vec![1.0])]).is_none());
    }
}
