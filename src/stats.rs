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

#[cfg(test)]
mod tests {
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
}
