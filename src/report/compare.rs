//! Comparing two stored runs: trials are matched by family and parameters (so runs from
//! different machines or kernels compare, once imported), and each matched figure gets
//! A, B, the ratio of medians B/A with a 95 % bootstrap interval, a Mann-Whitney test
//! and a verdict. A verdict needs enough repeats: with fewer than the test can ever call
//! significant, it says so instead of guessing.

use crate::model::{Family, Outcome};
use crate::report::stored::{groups, Group};
use crate::report::table::Table;
use crate::stats::{bootstrap_ratio_ci, mann_whitney, median, smallest_possible_p};
use crate::store::TrialRecord;
use serde_json::{json, Map, Value as Json};

/// One figure a comparison looks at: its JSON key, its column label, and how to read it.
pub struct Compared {
    pub key: &'static str,
    pub label: &'static str,
    pub get: fn(&Outcome) -> Option<f64>,
}

const RING: &[Compared] = &[
    Compared { key: "ns_per_switch", label: "ns/switch", get: |o| Some(o.ring()?.ns_per_switch()) },
    Compared { key: "ns_per_hop", label: "ns/hop", get: |o| Some(o.ring()?.ns_per_hop()) },
];
const WORKLOAD: &[Compared] = &[
    Compared { key: "wall_s", label: "wall s", get: |o| Some(o.workload()?.wall_ns as f64 / 1e9) },
    Compared { key: "nivcsw", label: "invol sw", get: |o| Some(o.workload()?.usage.nivcsw as f64) },
];
const LATENCY: &[Compared] = &[
    Compared { key: "p50_ns", label: "p50 ns", get: |o| Some(o.latency()?.all.p50_ns as f64) },
    Compared { key: "p99_ns", label: "p99 ns", get: |o| Some(o.latency()?.all.p99_ns as f64) },
    Compared { key: "max_ns", label: "max ns", get: |o| Some(o.latency()?.all.max_ns as f64) },
];

/// The figures compared per family; for all of them lower is better.
fn figures_of(family: Family) -> &'static [Compared] {
    match family {
        Family::Ring => RING,
        Family::Workload => WORKLOAD,
        Family::Latency => LATENCY,
    }
}

pub const ALPHA: f64 = 0.05;
const BOOTSTRAP_ROUNDS: usize = 2000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    NoDifference,
    /// Too few ok repeats on a side for any test to decide; the reason says how many.
    TooFew(String),
}

impl Verdict {
    pub fn label(&self) -> String {
        match self {
            Verdict::Faster => "B faster".into(),
            Verdict::Slower => "B slower".into(),
            Verdict::NoDifference => "no significant difference".into(),
            Verdict::TooFew(why) => format!("cannot decide: {why}"),
        }
    }
}

pub struct Row {
    pub family: Family,
    pub params: Map<String, Json>,
    pub figure: &'static str,
    pub label: &'static str,
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub not_ok_a: usize,
    pub not_ok_b: usize,
    pub ratio: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub p: Option<f64>,
    pub verdict: Verdict,
    /// Slower by more than the threshold, significantly.
    pub regression: bool,
}

/// Ratio, its interval, the p-value, the verdict and whether it is a regression.
type Decision = (Option<f64>, Option<(f64, f64)>, Option<f64>, Verdict, bool);

fn decide(a: &[f64], b: &[f64], threshold: f64) -> Decision {
    let ci = bootstrap_ratio_ci(a, b, BOOTSTRAP_ROUNDS, 0x5eed);
    let ratio = ci.map(|c| c.0);
    let interval = ci.map(|c| (c.1, c.2));
    if a.len() < 2 || b.len() < 2 {
        let why = format!("{} and {} ok repeats; a single sample decides nothing", a.len(), b.len());
        return (ratio, interval, None, Verdict::TooFew(why), false);
    }
    let p = mann_whitney(a, b).map(|r| r.1);
    if smallest_possible_p(a.len(), b.len()) > ALPHA {
        let why = format!("{} and {} ok repeats; at least 4 on each side are needed", a.len(), b.len());
        return (ratio, interval, p, Verdict::TooFew(why), false);
    }
    let significant = p.is_some_and(|p| p < ALPHA) && interval.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0);
    let verdict = match ratio {
        Some(r) if significant && r > 1.0 => Verdict::Slower,
        Some(r) if significant && r < 1.0 => Verdict::Faster,
        _ => Verdict::NoDifference,
    };
    let regression = verdict == Verdict::Slower && ratio.is_some_and(|r| r - 1.0 > threshold);
    (ratio, interval, p, verdict, regression)
}

/// Match the two runs' trials and compare every figure. Empty when nothing matches.
pub fn compare(a: &[TrialRecord], b: &[TrialRecord], threshold: f64) -> Vec<Row> {
    let (ga, gb) = (groups(a), groups(b));
    let mut rows = Vec::new();
    for left in &ga {
        let Some(right) = gb.iter().find(|g| g.family == left.family && g.params == left.params) else { continue };
        let not_ok = |g: &Group| g.trials.len() - g.ok().count();
        for compared in figures_of(left.family) {
            let (va, vb) = (left.values(compared.get), right.values(compared.get));
            let (ratio, ci, p, verdict, regression) = decide(&va, &vb, threshold);
            rows.push(Row {
                family: left.family,
                params: left.params.clone(),
                figure: compared.key,
                label: compared.label,
                not_ok_a: not_ok(left),
                not_ok_b: not_ok(right),
                a: va,
                b: vb,
                ratio,
                ci,
                p,
                verdict,
                regression,
            });
        }
    }
    rows
}

fn params_text(params: &Map<String, Json>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_string)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "Family",
        "Parameters",
        "Figure",
        "n A/B",
        "A median",
        "B median",
        "B/A",
        "95% CI",
        "p",
        "Verdict",
    ])
    .left_align(0)
    .left_align(1)
    .left_align(2)
    .left_align(9);
    for r in rows {
        let n = |ok: usize, bad: usize| if bad > 0 { format!("{ok}(+{bad} not ok)") } else { ok.to_string() };
        t.push(vec![
            r.family.as_str().to_string(),
            params_text(&r.params),
            r.label.to_string(),
            format!("{}/{}", n(r.a.len(), r.not_ok_a), n(r.b.len(), r.not_ok_b)),
            if r.a.is_empty() { "-".into() } else { number(median(&r.a)) },
            if r.b.is_empty() { "-".into() } else { number(median(&r.b)) },
            r.ratio.map_or("-".into(), |x| format!("{x:.3}")),
            r.ci.map_or("-".into(), |(lo, hi)| format!("{lo:.3}..{hi:.3}")),
            r.p.map_or("-".into(), |p| format!("{p:.3}")),
            format!("{}{}", r.verdict.label(), if r.regression { " REGRESSION" } else { "" }),
        ]);
    }
    t
}

pub fn json_rows(rows: &[Row]) -> Vec<Json> {
    rows.iter()
        .map(|r| {
            json!({
                "family": r.family.as_str(),
                "params": r.params,
                "figure": r.figure,
                "n_a": r.a.len(),
                "n_b": r.b.len(),
                "not_ok_a": r.not_ok_a,
                "not_ok_b": r.not_ok_b,
                "median_a": (!r.a.is_empty()).then(|| median(&r.a)),
                "median_b": (!r.b.is_empty()).then(|| median(&r.b)),
                "ratio": r.ratio,
                "ci_low": r.ci.map(|c| c.0),
                "ci_high": r.ci.map(|c| c.1),
                "p_value": r.p,
                "verdict": match &r.verdict {
                    Verdict::Faster => "faster",
                    Verdict::Slower => "slower",
                    Verdict::NoDifference => "no_difference",
                    Verdict::TooFew(_) => "too_few_repeats",
                },
                "regression": r.regression,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
