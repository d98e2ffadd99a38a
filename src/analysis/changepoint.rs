//! Change points in a history: where a figure measured run after run on one machine
//! shifted and stayed shifted.
//!
//! The method is E-Divisive with means (Matteson & James, "A nonparametric approach for
//! multiple change point analysis of multivariate data", JASA 2014, with exponent 1) as
//! MongoDB's performance CI adapted it (Daly et al., ICPE 2020; Fleming et al., "Hunter",
//! ICPE 2023): the energy statistic proposes splits, and a two-sample t-test between the
//! segments on either side of each decides whether it is real, in place of E-Divisive's
//! permutation test (which is slow, and whose p depends on a random draw). A split tested
//! is the best of many candidates, so its p is multiplied by the number of candidates
//! (Bonferroni): without that, noise alone passes far too often (17 of 200 plain series
//! of 30 runs, where p < 0.001 should allow 0.2). Values are taken as logarithms:
//! benchmark noise is multiplicative, and a shift is a ratio.
//!
//! A shift that begins at the newest run cannot be split off (one run is no segment), so
//! `newest_shift` asks the CI question separately: is the newest value outside what the
//! current segment predicts (a Student-t prediction test)?

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The fewest runs on each side of a change point: a segment needs a spread.
pub const MIN_SEGMENT: usize = 3;
/// The adjusted p below which a proposed split is a change point. Strict, because a
/// history is tested split after split and series after series, and because run-to-run
/// drift on a shared machine is not independent noise.
pub const SPLIT_ALPHA: f64 = 0.001;

/// One change point: the series shifted between `index - 1` and `index`.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangePoint {
    /// The first value of the new level.
    pub index: usize,
    /// Medians of the segments on either side (between the neighbouring change points).
    pub before: f64,
    pub after: f64,
    /// Student's two-sample t on the logarithms of the two sides and its degrees of freedom.
    pub t: f64,
    pub df: f64,
    /// The two-sided p of that t, times the splits that were candidates (Bonferroni).
    pub p: f64,
    /// How many splits were candidates where this one was found.
    pub candidates: usize,
    /// Runs in the segments before and after.
    pub n_before: usize,
    pub n_after: usize,
}

impl ChangePoint {
    /// after / before − 1: positive when the figure grew.
    pub fn change(&self) -> f64 {
        self.after / self.before - 1.0
    }
}

/// Every change point of a series of positive values, in order. Values that are not
/// positive and finite cannot be on a log scale; a series holding one has none found.
///
/// As Hunter does, the energy statistic first proposes splits recursively down to the
/// shortest segments, and then the weakest proposal (the highest adjusted p of a t-test
/// between the segments on either side of it, bounded by its neighbouring proposals) is
/// removed, again and again, until every one left passes. Testing each split against its
/// neighbours, not against everything on either side, keeps a level that sits between a
/// higher and a lower one from hiding both of its edges.
pub fn change_points(values: &[f64]) -> Vec<ChangePoint> {
    if values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return Vec::new();
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let mut cuts = Vec::new();
    propose(&logs, 0, logs.len(), &mut cuts);
    cuts.sort_unstable();
    loop {
        let tested: Vec<Option<ChangePoint>> = (0..cuts.len()).map(|i| test_cut(values, &logs, &cuts, i)).collect();
        let weakest = tested
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.as_ref().map_or(f64::INFINITY, |c| c.p)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match weakest {
            Some((i, p)) if p >= SPLIT_ALPHA => {
                cuts.remove(i);
            }
            _ => return tested.into_iter().flatten().collect(),
        }
    }
}

/// Every split the energy statistic proposes in `logs[from..to]`, recursively.
fn propose(logs: &[f64], from: usize, to: usize, cuts: &mut Vec<usize>) {
    let Some(at) = best_split(&logs[from..to]) else { return };
    cuts.push(from + at);
    propose(logs, from, from + at, cuts);
    propose(logs, from + at, to, cuts);
}

/// Candidate splits of a segment of `n`: each side at least `MIN_SEGMENT` long.
fn candidates(n: usize) -> usize {
    (n + 1).saturating_sub(2 * MIN_SEGMENT)
}

/// The `i`th cut tested between its neighbouring cuts.
fn test_cut(values: &[f64], logs: &[f64], cuts: &[usize], i: usize) -> Option<ChangePoint> {
    let from = if i == 0 { 0 } else { cuts[i - 1] };
    let to = cuts.get(i + 1).copied().unwrap_or(values.len());
    let cut = cuts[i];
    let (t, df, p) = student_t(&logs[from..cut], &logs[cut..to])?;
    let candidates = candidates(to - from).max(1);
    Some(ChangePoint {
        index: cut,
        before: crate::analysis::stats::median(&values[from..cut]),
        after: crate::analysis::stats::median(&values[cut..to]),
        t,
        df,
        p: (p * candidates as f64).min(1.0),
        candidates,
        n_before: cut - from,
        n_after: to - cut,
    })
}

/// The split of `x` with the largest energy statistic (Matteson & James, exponent 1):
/// `q(τ) = τ(n−τ)/n · (2·mean|L−R| − mean|L−L'| − mean|R−R'|)`, each side at least
/// `MIN_SEGMENT` long. The pair sums are updated as the split moves right, O(n²) in all.
pub fn best_split(x: &[f64]) -> Option<usize> {
    let n = x.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    let dist = |i: usize, j: usize| (x[i] - x[j]).abs();
    // Sums of |difference| within the left side, within the right, and across, for τ = 0.
    let (mut within_left, mut across) = (0.0, 0.0);
    let mut within_right: f64 = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).map(|(i, j)| dist(i, j)).sum();
    let mut best: Option<(usize, f64)> = None;
    for tau in 1..n - MIN_SEGMENT + 1 {
        // Move x[tau-1] from the right side to the left.
        let moved = tau - 1;
        let to_left: f64 = (0..moved).map(|i| dist(i, moved)).sum();
        let to_right: f64 = (tau..n).map(|j| dist(moved, j)).sum();
        within_left += to_left;
        within_right -= to_right;
        across += to_right - to_left;
        if tau < MIN_SEGMENT {
            continue;
        }
        let (l, r) = (tau as f64, (n - tau) as f64);
        let energy =
            2.0 * across / (l * r) - 2.0 * within_left / (l * (l - 1.0)) - 2.0 * within_right / (r * (r - 1.0));
        let q = l * r / n as f64 * energy;
        if best.is_none_or(|(_, b)| q > b) {
            best = Some((tau, q));
        }
    }
    best.map(|(tau, _)| tau)
}

/// Student's two-sample t-test with the variance pooled over both sides (a change point
/// shifts the level; the noise is the machine's on both sides, and a pooled estimate is
/// not fooled by three runs that happen to agree): (t, degrees of freedom, two-sided p).
/// `None` when a side has fewer than two values. Two sides without any spread are told
/// apart exactly (p 0 when their means differ, 1 when not).
pub fn student_t(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let df = na + nb - 2.0;
    let pooled = ((na - 1.0) * va + (nb - 1.0) * vb) / df;
    let se2 = pooled * (1.0 / na + 1.0 / nb);
    if se2 <= 0.0 {
        let p = if ma == mb { 1.0 } else { 0.0 };
        return Some((if ma == mb { 0.0 } else { f64::INFINITY.copysign(mb - ma) }, df, p));
    }
    let t = (mb - ma) / se2.sqrt();
    Some((t, df, 2.0 * upper_tail(t.abs(), df)))
}

/// Whether the newest value departs from the segment before it: a one-sided Student-t
/// prediction test on logarithms, `t = (ln x − mean) / (s·√(1 + 1/m))` with m − 1 degrees of
/// freedom. The p is of a rise (the figure growing); a fall gives a p near 1.
#[derive(Clone, Debug, PartialEq)]
pub struct NewestShift {
    /// The newest value over the segment's median.
    pub ratio: f64,
    pub t: f64,
    pub p: f64,
    /// Runs in the segment it was tested against.
    pub n: usize,
}

/// The newest value of `values` against `values[segment_start..newest]`; `None` when
/// that segment is shorter than `MIN_SEGMENT` or a value is not positive.
pub fn newest_shift(values: &[f64], segment_start: usize) -> Option<NewestShift> {
    let (&newest, before) = values.split_last()?;
    let segment = before.get(segment_start..)?;
    if segment.len() < MIN_SEGMENT || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let logs: Vec<f64> = segment.iter().map(|v| v.ln()).collect();
    let (mean, var) = mean_var(&logs);
    let m = logs.len() as f64;
    let scale = (var * (1.0 + 1.0 / m)).sqrt();
    let t = if scale > 0.0 {
        (newest.ln() - mean) / scale
    } else if newest.ln() > mean {
        f64::INFINITY
    } else {
        0.0
    };
    let p = if t.is_infinite() { 0.0 } else { upper_tail(t, m - 1.0) };
    Some(NewestShift { ratio: newest / crate::analysis::stats::median(segment), t, p, n: segment.len() })
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// P(T > t) for Student's t with `df` degrees of freedom.
fn upper_tail(t: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => dist.sf(t),
        Err(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::random::SplitMix64;

    /// `n` values around `level` with multiplicative noise of about ±`noise` (uniform).
    fn noisy(rng: &mut SplitMix64, n: usize, level: f64, noise: f64) -> Vec<f64> {
        (0..n).map(|_| level * (1.0 + noise * (2.0 * rng.next_f64() - 1.0))).collect()
    }

    #[test]
    fn the_t_test_matches_a_textbook_value() {
        // Means 2 and 5, variances 1 and 1 with n 3 each: t = 3/√(2/3) = 3.674, df = 4.
        let (t, df, p) = student_t(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((t - 3.674).abs() < 1e-3 && (df - 4.0).abs() < 1e-9);
        // Two-sided p for t = 3.674 with 4 df is 0.0213 (t tables).
        assert!((p - 0.0213).abs() < 5e-4, "p = {p}");
        assert_eq!(student_t(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(student_t(&[2.0, 2.0], &[2.0, 2.0]).unwrap().2, 1.0);
        assert_eq!(student_t(&[2.0, 2.0], &[3.0, 3.0]).unwrap().2, 0.0);
    }

    #[test]
    fn the_energy_split_lands_on_a_clean_step() {
        let x = [1.0, 1.1, 0.9, 1.0, 3.0, 3.1, 2.9, 3.0];
        assert_eq!(best_split(&x), Some(4));
        assert_eq!(best_split(&x[..5]), None, "too short to split into two segments of 3");
    }

    #[test]
    fn a_planted_shift_is_found_where_it_begins_and_nowhere_else() {
        let mut rng = SplitMix64::new(7);
        let mut series = noisy(&mut rng, 5, 1000.0, 0.08);
        series.extend(noisy(&mut rng, 5, 2000.0, 0.08));
        let found = change_points(&series);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 5);
        assert!((found[0].change() - 1.0).abs() < 0.2 && found[0].p < SPLIT_ALPHA);
        assert_eq!((found[0].n_before, found[0].n_after), (5, 5));
    }

    #[test]
    fn several_shifts_are_each_found() {
        let mut rng = SplitMix64::new(11);
        let mut series = noisy(&mut rng, 12, 100.0, 0.05);
        series.extend(noisy(&mut rng, 12, 150.0, 0.05));
        series.extend(noisy(&mut rng, 12, 90.0, 0.05));
        let found: Vec<usize> = change_points(&series).iter().map(|c| c.index).collect();
        assert_eq!(found, vec![12, 24]);
    }

    #[test]
    fn plain_noise_has_no_change_point() {
        // 1000 series of 30 runs of ±15 % noise: the bound allows a false split in 1 of
        // 1000 series; a few would be chance, tens a broken correction.
        let mut rng = SplitMix64::new(3);
        let false_splits: usize = (0..1000).map(|_| change_points(&noisy(&mut rng, 30, 50.0, 0.15)).len()).sum();
        assert!(false_splits <= 4, "{false_splits} false change points in 1000 plain series");
        assert!(change_points(&[1.0, 0.0, 2.0, 3.0, 4.0, 5.0]).is_empty(), "no log of 0");
    }

    #[test]
    fn the_newest_run_is_tested_against_its_segment() {
        let mut rng = SplitMix64::new(5);
        let mut series = noisy(&mut rng, 6, 100.0, 0.05);
        series.push(200.0);
        let shift = newest_shift(&series, 0).unwrap();
        assert!(shift.p < 1e-3 && (shift.ratio - 2.0).abs() < 0.15 && shift.n == 6, "{shift:?}");
        // A value inside the noise is not a shift, and a fall is not a rise.
        *series.last_mut().unwrap() = 101.0;
        assert!(newest_shift(&series, 0).unwrap().p > 0.05);
        *series.last_mut().unwrap() = 50.0;
        assert!(newest_shift(&series, 0).unwrap().p > 0.99);
        // Too short a segment says nothing.
        assert_eq!(newest_shift(&series, 4), None);
    }
}
