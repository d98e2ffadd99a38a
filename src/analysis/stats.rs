//! Summaries over repetitions and fairness indices. Pure functions on numbers.

use serde::Serialize;

/// mean, sample standard deviation, median, min and max of a set of figures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// `None` for an empty set. The sd of a single value is 0 (there is no spread to see).
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let sd =
            if n > 1 { (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
        Some(Summary {
            n,
            mean,
            sd,
            median: median(values),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }
}

/// The fewest values with which order statistics can bound a median at 95 %: with 5, even
/// [min, max] covers it only 1 − 2/2⁵ = 93.75 % of the time.
pub const MEDIAN_CI_MIN_N: usize = 6;

/// A distribution-free confidence interval for the median of the population a sample
/// came from: two order statistics of the sample.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MedianCi {
    pub n: usize,
    pub median: f64,
    pub low: f64,
    pub high: f64,
    /// 1-based ranks of `low` and `high` in the sorted sample.
    pub rank_low: usize,
    pub rank_high: usize,
    /// The interval's exact coverage, at least the confidence asked for (order
    /// statistics move in whole steps, so it is usually above it).
    pub coverage: f64,
}

impl MedianCi {
    /// The wider side of the interval as a fraction of the median:
    /// max(median − low, high − median) / |median|. `None` for a zero median.
    pub fn relative_half_width(&self) -> Option<f64> {
        let scale = self.median.abs();
        (scale > 0.0 && scale.is_finite()).then(|| (self.median - self.low).max(self.high - self.median) / scale)
    }
}

/// The confidence interval [x₍ₖ₎, x₍ₙ₋ₖ₊₁₎] for a median, with the largest k whose coverage
/// P(k ≤ B ≤ n − k), B ~ Binomial(n, ½), is at least `confidence`: the number of sample
/// values below the true median is binomial whatever the distribution, so this needs no
/// assumption of normality (the figures here are skewed). `None` when even [min, max] falls
/// short (for 95 %: fewer than `MEDIAN_CI_MIN_N` values) or the sample is empty.
pub fn median_ci(values: &[f64], confidence: f64) -> Option<MedianCi> {
    let n = values.len();
    if n == 0 || !(0.0..1.0).contains(&confidence) {
        return None;
    }
    // Binomial(n, ½) probabilities in logs, so n in the thousands does not underflow 2⁻ⁿ.
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_pmf = ln_half_n; // P(B = 0)
    let mut below = 0.0; // P(B ≤ k − 1) for the current k
    let mut chosen: Option<(usize, f64)> = None;
    for k in 1..=n.div_ceil(2) {
        below += ln_pmf.exp();
        let coverage = 1.0 - 2.0 * below;
        if coverage < confidence {
            break;
        }
        chosen = Some((k, coverage));
        // P(B = k) from P(B = k − 1).
        ln_pmf += ((n - k + 1) as f64 / k as f64).ln();
    }
    let (k, coverage) = chosen?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (rank_low, rank_high) = (k, n - k + 1);
    Some(MedianCi {
        n,
        median: median(&sorted),
        low: sorted[rank_low - 1],
        high: sorted[rank_high - 1],
        rank_low,
        rank_high,
        coverage,
    })
}

pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when every share is equal, 1/n when one
/// takes everything. 1 for an empty or all-zero set (nothing was shared unfairly).
pub fn jain_index(shares: &[f64]) -> f64 {
    let sum: f64 = shares.iter().sum();
    let sum_sq: f64 = shares.iter().map(|x| x * x).sum();
    if shares.is_empty() || sum_sq == 0.0 {
        return 1.0;
    }
    sum * sum / (shares.len() as f64 * sum_sq)
}

/// The ratio median(b) / median(a) and its 95 % percentile-bootstrap interval: both
/// samples are resampled with replacement `rounds` times (seeded, so a report is
/// reproducible). `None` when either sample is empty or a median is zero.
pub fn bootstrap_ratio_ci(a: &[f64], b: &[f64], rounds: usize, seed: u64) -> Option<(f64, f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (ma, mb) = (median(a), median(b));
    if ma == 0.0 || !ma.is_finite() || !mb.is_finite() {
        return None;
    }
    let mut rng = crate::analysis::random::SplitMix64::new(seed);
    let mut draw = |xs: &[f64], buf: &mut Vec<f64>| {
        buf.clear();
        buf.extend((0..xs.len()).map(|_| xs[(rng.next_u64() % xs.len() as u64) as usize]));
        median(buf)
    };
    let (mut ba, mut bb) = (Vec::with_capacity(a.len()), Vec::with_capacity(b.len()));
    let mut ratios: Vec<f64> = (0..rounds)
        .filter_map(|_| {
            let ra = draw(a, &mut ba);
            let rb = draw(b, &mut bb);
            (ra != 0.0).then(|| rb / ra)
        })
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((q * (ratios.len() - 1) as f64).round() as usize).min(ratios.len() - 1)];
    Some((mb / ma, at(0.025), at(0.975)))
}

/// Each value's rank among `values` (1-based, in their order), ties sharing their mean
/// rank; and the ties' correction term, the sum of t³ − t over groups of t equal values.
fn mid_ranks(values: &[f64]) -> (Vec<f64>, f64) {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&x, &y| values[x].total_cmp(&values[y]));
    let n = values.len();
    let mut ranks = vec![0.0; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &at in &order[i..=j] {
            ranks[at] = rank;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    (ranks, tie_term)
}

/// The Mann-Whitney U test, two-sided: U of sample `a` and the p-value. Exact (by
/// counting every arrangement) for small samples without ties, else the normal
/// approximation with tie and continuity corrections.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let n = pooled.len();
    let (ranks, tie_term) = mid_ranks(&pooled);
    let rank_sum_a: f64 = ranks[..n1].iter().sum();
    let u = rank_sum_a - (n1 * (n1 + 1)) as f64 / 2.0;
    let mean = (n1 * n2) as f64 / 2.0;
    let p = if tie_term == 0.0 && n1 * n2 <= 400 {
        exact_u_p(n1, n2, u)
    } else {
        let nf = n as f64;
        let var = (n1 * n2) as f64 / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
        if var <= 0.0 {
            1.0
        } else {
            let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
            (2.0 * normal_upper_tail(z)).min(1.0)
        }
    };
    Some((u, p))
}

/// The Mann-Whitney test, two-sided, exact even with ties: the p is the share of every way
/// of splitting the pooled values into groups of the two sizes whose U (a tie counting ½)
/// is at least as far from its mean as the observed one — the test done by hand on a
/// small table. Enumerates the C(n1 + n2, n1) splits up to `MAX_SPLITS`, beyond which it is
/// `mann_whitney`'s.
pub fn mann_whitney_exact(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    const MAX_WORK: f64 = 2e7;
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let splits = (0..n1).fold(1.0, |c, k| c * (n1 + n2 - k) as f64 / (k + 1) as f64);
    // Each split sums n1 ranks.
    if splits * n1 as f64 > MAX_WORK {
        return mann_whitney(a, b);
    }
    // U of a group is its rank sum less n1(n1 + 1)/2, ties sharing their mean rank (so a
    // tie across the groups counts ½).
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let (ranks, _) = mid_ranks(&pooled);
    let floor = (n1 * (n1 + 1)) as f64 / 2.0;
    let u_of = |chosen: &[usize]| chosen.iter().map(|&i| ranks[i]).sum::<f64>() - floor;
    let mean = (n1 * n2) as f64 / 2.0;
    let mut chosen: Vec<usize> = (0..n1).collect();
    let observed = u_of(&chosen);
    let distance = (observed - mean).abs();
    let (mut extreme, mut all) = (0u64, 0u64);
    let n = pooled.len();
    loop {
        all += 1;
        if (u_of(&chosen) - mean).abs() >= distance - 1e-9 {
            extreme += 1;
        }
        // The next combination in lexicographic order.
        let Some(i) = (0..n1).rev().find(|&i| chosen[i] < n - n1 + i) else { break };
        chosen[i] += 1;
        for k in i + 1..n1 {
            chosen[k] = chosen[k - 1] + 1;
        }
    }
    Some((observed, extreme as f64 / all as f64))
}

/// The p of "the shift from `a` to `b` lies within [low, high]" (two one-sided tests): the
/// smallest tail (1 − confidence)/2 whose `shift_ci` lies inside the bounds — the k-th
/// differences from each end, for the smallest k that fits, have lower tail P(U <= k − 1)
/// (exact for n1 × n2 <= 400, else the normal approximation). `None` when no interval fits.
pub fn shift_equivalence_p(a: &[f64], b: &[f64], low: f64, high: f64) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    let m = n1 * n2;
    if m == 0 {
        return None;
    }
    let mut d: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| y - x)).collect();
    d.sort_by(f64::total_cmp);
    let k = (1..=m.div_ceil(2)).find(|&k| d[k - 1] >= low && d[m - k] <= high)?;
    if m <= 400 {
        let counts = exact_u_counts(n1, n2);
        let total: f64 = counts.iter().sum();
        Some(counts[..k].iter().sum::<f64>() / total)
    } else {
        let nf = (n1 + n2) as f64;
        let sd = ((m as f64) * (nf + 1.0) / 12.0).sqrt();
        Some(1.0 - normal_upper_tail(((k as f64 - 0.5) - m as f64 / 2.0) / sd))
    }
}

/// The distribution-free interval of the shift between two samples (Moses; the
/// Hodges-Lehmann estimate's interval): of the n1 × n2 differences b − a, sorted, the k-th
/// from each end, where k − 1 is the largest U whose lower tail is at most (1 − confidence)/2
/// (exact without ties for n1 × n2 ≤ 400, else the normal approximation). `None` when the
/// samples are too small for any interval at that confidence.
pub fn shift_ci(a: &[f64], b: &[f64], confidence: f64) -> Option<(f64, f64)> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let tail = (1.0 - confidence) / 2.0;
    let m = n1 * n2;
    let k = if m <= 400 {
        let counts = exact_u_counts(n1, n2);
        let total: f64 = counts.iter().sum();
        let mut below = 0.0;
        let mut k = 0;
        for (u, c) in counts.iter().enumerate() {
            below += c;
            // A tail of exactly (1 − confidence)/2 is allowed (0.1/2 is 0.04999… in binary).
            if below / total > tail + 1e-12 {
                break;
            }
            k = u + 1;
        }
        k
    } else {
        let nf = (n1 + n2) as f64;
        let sd = ((m as f64) * (nf + 1.0) / 12.0).sqrt();
        (m as f64 / 2.0 - inverse_normal_upper_tail(tail) * sd).floor().max(0.0) as usize
    };
    if k == 0 || k > m / 2 {
        return None;
    }
    let mut d: Vec<f64> = a.iter().flat_map(|x| b.iter().map(move |y| y - x)).collect();
    d.sort_by(f64::total_cmp);
    Some((d[k - 1], d[m - k]))
}

/// The z above which the standard normal has `tail` of its mass (bisection on the upper
/// tail; |error| < 1e-9).
fn inverse_normal_upper_tail(tail: f64) -> f64 {
    let (mut lo, mut hi) = (-10.0, 10.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if normal_upper_tail(mid) > tail {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// How many of the C(n1+n2, n1) arrangements of two samples without ties give each U
/// (0..=n1 × n2).
fn exact_u_counts(n1: usize, n2: usize) -> Vec<f64> {
    let max_u = n1 * n2;
    let mut prev = vec![vec![0f64; max_u + 1]; n2 + 1];
    for row in prev.iter_mut() {
        row[0] = 1.0;
    }
    for _i in 1..=n1 {
        let mut next = vec![vec![0f64; max_u + 1]; n2 + 1];
        for j in 0..=n2 {
            for k in 0..=max_u {
                let from_a = if k >= j { prev[j][k - j] } else { 0.0 };
                let from_b = if j > 0 { next[j - 1][k] } else { 0.0 };
                next[j][k] = from_a + from_b;
            }
        }
        prev = next;
    }
    prev.swap_remove(n2)
}

/// Two-sided exact p of U for sizes n1, n2: the share of all C(n1+n2, n1) arrangements
/// whose U is at least as far from the mean.
fn exact_u_p(n1: usize, n2: usize, u: f64) -> f64 {
    let max_u = n1 * n2;
    let counts = exact_u_counts(n1, n2);
    let total: f64 = counts.iter().sum();
    let mean = max_u as f64 / 2.0;
    let distance = (u - mean).abs();
    let extreme: f64 =
        counts.iter().enumerate().filter(|(k, _)| (*k as f64 - mean).abs() >= distance - 1e-9).map(|(_, c)| c).sum();
    (extreme / total).min(1.0)
}

/// The smallest two-sided p an exact test can reach with these sizes: below the
/// threshold, no amount of difference can be called significant.
pub fn smallest_possible_p(n1: usize, n2: usize) -> f64 {
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let mut c = 1.0;
    for k in 0..n1 {
        c = c * (n1 + n2 - k) as f64 / (k + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Holm's step-down adjustment of p-values (Holm 1979), which keeps the chance of any
/// false "significant" among all the tests at most alpha when each adjusted p is held to
/// alpha: the k-th smallest p is multiplied by (m − k + 1), then made non-decreasing in
/// that order and capped at 1. `None`s are tests not made: they are left out of m.
pub fn holm(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p_values.iter().enumerate().filter_map(|(i, p)| p.map(|p| (i, p))).collect();
    order.sort_by(|x, y| x.1.total_cmp(&y.1));
    let m = order.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running_max = 0.0f64;
    for (rank, (index, p)) in order.into_iter().enumerate() {
        running_max = running_max.max(((m - rank) as f64 * p).min(1.0));
        adjusted[index] = Some(running_max);
    }
    adjusted
}

/// Holm's step-down where the hypotheses come in groups of which at most `capacity[g]` can
/// be true at once (Shaffer's refinement): a question's lead ("the median ratio is 1") and
/// its equivalence ("the median ratio is at or beyond the margin") cannot both be true, so
/// a two-cell question holds at most one true null. At each step the p is multiplied by the
/// most true nulls the hypotheses not yet rejected can hold, Σ_g min(capacity, left in g),
/// never more than Holm's count. Valid by Holm's argument: when the first true null is
/// reached, every true null is still left, so the multiplier is at least their number.
/// `group[i]` names each p's group; `None` p's are untested (no adjusted p, not counted).
pub fn holm_grouped(p_values: &[Option<f64>], group: &[usize], capacity: &[usize]) -> Vec<Option<f64>> {
    assert_eq!(p_values.len(), group.len());
    let mut order: Vec<(usize, f64)> = p_values.iter().enumerate().filter_map(|(i, p)| p.map(|p| (i, p))).collect();
    order.sort_by(|x, y| x.1.total_cmp(&y.1));
    let mut left = vec![0usize; capacity.len()];
    for &(i, _) in &order {
        left[group[i]] += 1;
    }
    let mut adjusted = vec![None; p_values.len()];
    let mut running_max = 0.0f64;
    for (index, p) in order {
        let could_be_true: usize = left.iter().zip(capacity).map(|(&l, &c)| l.min(c)).sum();
        running_max = running_max.max((could_be_true as f64 * p).min(1.0));
        adjusted[index] = Some(running_max);
        left[group[index]] -= 1;
    }
    adjusted
}

/// P(Z > z) for a standard normal (Abramowitz and Stegun 7.1.26, error < 1.5e-7).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if x >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_exact_test_counts_ties_as_halves_over_every_split() {
        // No ties: the same p as the exact U distribution.
        let (a, b) = ([1.0, 2.0, 3.0, 4.0, 6.0], [5.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((mann_whitney_exact(&a, &b).unwrap().1 - mann_whitney(&a, &b).unwrap().1).abs() < 1e-12);
        assert!((mann_whitney_exact(&a, &b).unwrap().1 - 4.0 / 252.0).abs() < 1e-12);
        // A tie across the groups: U = 0.5; splits as extreme: U <= 0.5 or >= 24.5.
        let (a, b) = ([1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 6.0, 7.0, 8.0, 9.0]);
        let (u, p) = mann_whitney_exact(&a, &b).unwrap();
        assert_eq!(u, 0.5);
        assert!((p - 4.0 / 252.0).abs() < 1e-12, "{p}");
        // All equal: nothing to tell them apart.
        assert_eq!(mann_whitney_exact(&[1.0; 3], &[1.0; 3]).unwrap().1, 1.0);
    }

    #[test]
    fn equivalence_is_the_tail_of_the_first_interval_inside_the_bounds() {
        let a: Vec<f64> = (1..=5).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 0.1).collect();
        // Differences −3.9..4.1 (25, sorted): k = 4 gives −1.9..2.1, inside ±2.5; k = 3
        // (−2.9..3.1) is not: p = P(U <= 3) = 7/252.
        let p = shift_equivalence_p(&a, &b, -2.5, 2.5).unwrap();
        assert!((p - 7.0 / 252.0).abs() < 1e-12, "{p}");
        // Tight bounds: only the middle difference fits, at no useful level.
        assert!(shift_equivalence_p(&a, &b, -0.5, 0.5).unwrap() > 0.3);
        // Bounds even the estimate is outside: none.
        assert_eq!(shift_equivalence_p(&a, &b, -0.05, 0.05), None);
    }

    #[test]
    fn the_shift_interval_takes_the_kth_differences_from_each_end() {
        // 5 against 5 at 90 %: k = 5 (P(U <= 4) = 12/252 <= 5 % < P(U <= 5) = 19/252).
        let a: Vec<f64> = (1..=5).map(f64::from).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 10.0).collect();
        assert_eq!(shift_ci(&a, &b, 0.90), Some((8.0, 12.0)));
        // Too few values for 99 %: no interval.
        assert_eq!(shift_ci(&a[..2], &b[..2], 0.99), None);
        // Large samples: the normal approximation, still around the shift.
        let a: Vec<f64> = (0..40).map(|i| i as f64 * 0.37 % 5.0).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 3.0).collect();
        let (lo, hi) = shift_ci(&a, &b, 0.95).unwrap();
        assert!(lo < 3.0 && 3.0 < hi && hi - lo < 3.0, "{lo} {hi}");
    }

    use super::*;

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.mean, 5.0);
        assert!((s.sd - 2.138_089_935).abs() < 1e-9, "{}", s.sd);
        assert_eq!(s.median, 4.5);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert_eq!(Summary::of(&[3.0]).unwrap().sd, 0.0);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn median_ci_ranks_and_coverage_match_the_binomial_tables() {
        // (n, rank_low, rank_high, exact coverage): the order statistics of the standard
        // tables (e.g. Conover, Practical Nonparametric Statistics, table A3).
        let known = [
            (6, 1, 6, 0.968_75),
            (8, 1, 8, 0.992_187_5),
            (9, 2, 8, 0.960_937_5),
            (10, 2, 9, 0.978_515_625),
            (12, 3, 10, 0.961_425_781_25),
            (20, 6, 15, 0.958_610_534_667_968_8),
            (30, 10, 21, 0.957_226_054_742_932_3),
            (100, 40, 61, 0.964_799_799_782_295_2),
            (1000, 469, 532, 0.953_708_802_639_501_8),
        ];
        for (n, lo, hi, coverage) in known {
            // Shuffled 1..=n, so rank r is the value r.
            let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % n + 1) as f64).collect();
            let ci = median_ci(&values, 0.95).unwrap_or_else(|| panic!("n = {n}"));
            assert_eq!((ci.rank_low, ci.rank_high), (lo, hi), "n = {n}");
            assert_eq!((ci.low, ci.high), (lo as f64, hi as f64), "n = {n}");
            assert!((ci.coverage - coverage).abs() < 1e-9, "n = {n}: {}", ci.coverage);
            assert_eq!(ci.median, (n as f64 + 1.0) / 2.0);
        }
    }

    #[test]
    fn median_ci_needs_six_values_for_95_percent() {
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).is_none());
        assert!(median_ci(&[], 0.95).is_none());
        assert!(median_ci(&[1.0; 6], 0.95).is_some());
        assert_eq!(MEDIAN_CI_MIN_N, 6);
        // A lower confidence is reachable with fewer: [min, max] of 5 covers 93.75 %.
        let ci = median_ci(&[5.0, 1.0, 4.0, 2.0, 3.0], 0.9).unwrap();
        assert_eq!((ci.low, ci.high, ci.coverage), (1.0, 5.0, 0.9375));
        // Ten thousand values: no underflow, and the ranks close in on the median.
        let big: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
        let ci = median_ci(&big, 0.95).unwrap();
        assert!(ci.rank_low > 4890 && ci.rank_high < 5110, "{ci:?}");
    }

    #[test]
    fn median_ci_relative_half_width_takes_the_wider_side() {
        let ci = median_ci(&[90.0, 100.0, 100.0, 100.0, 100.0, 120.0], 0.95).unwrap();
        assert_eq!((ci.low, ci.median, ci.high), (90.0, 100.0, 120.0));
        assert!((ci.relative_half_width().unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(median_ci(&[0.0; 6], 0.95).unwrap().relative_half_width(), None);
    }

    #[test]
    fn median_odd_and_unsorted() {
        assert_eq!(median(&[9.0, 1.0, 5.0]), 5.0);
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), 1.0);
        assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), 0.25);
        assert!((jain_index(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
        assert_eq!(jain_index(&[]), 1.0);
    }

    #[test]
    fn mann_whitney_known_values() {
        // Complete separation of 5 and 5: exact two-sided p = 2 / C(10,5) = 2/252.
        let (u, p) = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert_eq!(u, 0.0);
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Interleaved: no evidence of a difference.
        let (_, p) = mann_whitney(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert!(p > 0.5, "{p}");
        // With 3 and 3, even complete separation cannot reach 0.05.
        let (_, p) = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        assert!((smallest_possible_p(3, 3) - 0.1).abs() < 1e-12);
        assert!(smallest_possible_p(4, 4) < 0.05);
        // Large samples with ties use the normal approximation: a clear shift is significant.
        let a: Vec<f64> = (0..30).map(|i| (i % 10) as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| (i % 10) as f64 + 5.0).collect();
        assert!(mann_whitney(&a, &b).unwrap().1 < 0.001);
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn holm_matches_the_textbook() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
        let adjusted = holm(&[Some(0.01), Some(0.04), None, Some(0.03), Some(0.005)]);
        let want = [Some(0.03), Some(0.06), None, Some(0.06), Some(0.02)];
        for (got, want) in adjusted.iter().zip(want) {
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "{adjusted:?}"),
                (g, w) => assert_eq!(*g, w),
            }
        }
        // One test alone is not adjusted; large ones are capped at 1.
        assert_eq!(holm(&[Some(0.02)]), vec![Some(0.02)]);
        assert_eq!(holm(&[Some(0.6), Some(0.7)]), vec![Some(1.0), Some(1.0)]);
        assert!(holm(&[]).is_empty());
    }

    #[test]
    fn bootstrap_interval_brackets_the_ratio() {
        let a = [100.0, 101.0, 99.0, 100.5, 99.5];
        let b = [110.0, 111.0, 109.0, 110.5, 109.5];
        let (ratio, lo, hi) = bootstrap_ratio_ci(&a, &b, 2000, 1).unwrap();
        assert!((ratio - 1.1).abs() < 1e-12);
        assert!(lo <= ratio && ratio <= hi && lo > 1.05 && hi < 1.15, "{lo} {hi}");
        // Same seed, same interval.
        assert_eq!(bootstrap_ratio_ci(&a, &b, 2000, 1), bootstrap_ratio_ci(&a, &b, 2000, 1));
        let same = bootstrap_ratio_ci(&a, &a, 2000, 1).unwrap();
        assert!(same.1 <= 1.0 && same.2 >= 1.0);
        assert!(bootstrap_ratio_ci(&[], &b, 10, 1).is_none());
    }

    #[test]
    fn grouped_holm_counts_at_most_one_true_null_of_a_disjoint_pair() {
        use super::{holm, holm_grouped};
        let p = [Some(0.01), Some(0.5), Some(0.02), Some(0.6), Some(0.04), None];
        // Three pairs that cannot both be true, the last with one p untested.
        let grouped = holm_grouped(&p, &[0, 0, 1, 1, 2, 2], &[1, 1, 1]);
        // Step 1: 3 could be true (one a pair), not 5: 0.03; step 2: pairs 1 and 2 and
        // pair 0's 0.5 left, still 3: 0.06; step 3: 0.04 x 3 = 0.12.
        let want = [0.03, 1.0, 0.06, 1.0, 0.12];
        for (got, want) in grouped.iter().zip(want) {
            assert!((got.unwrap() - want).abs() < 1e-12, "{grouped:?}");
        }
        assert_eq!(grouped[5], None);
        // Groups that can hold all their hypotheses are plain Holm.
        let plain = holm_grouped(&p, &[0, 1, 2, 3, 4, 5], &[1; 6]);
        assert_eq!(plain, holm(&p));
        // Never above Holm.
        for (g, h) in grouped.iter().zip(holm(&p)) {
            assert!(g.unwrap_or(0.0) <= h.unwrap_or(0.0) + 1e-12);
        }
    }
}
