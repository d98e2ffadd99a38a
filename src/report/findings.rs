//! Findings, computed from the stored figures, never guessed: ring knees, the best
//! policy per workload with whether the lead is significant, and the latency leader.

use crate::report::stored::{groups, param_text, Group};
use crate::stats::{find_knee, mann_whitney, median, smallest_possible_p};
use crate::store::TrialRecord;
use serde_json::{Map, Value as Json};

/// The smallest relative step that counts as a knee.
pub const KNEE_MIN_JUMP: f64 = 0.10;

fn describe(params: &Map<String, Json>, skip: &[&str]) -> String {
    let parts: Vec<String> = params
        .iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={}", param_text(Some(v))))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(" "))
    }
}

/// Sets of groups that differ only in `axis`, in first-seen order.
fn series<'a, 'b>(groups: &'b [Group<'a>], family: &str, axis: &str) -> Vec<Vec<&'b Group<'a>>> {
    let mut out: Vec<Vec<&Group>> = Vec::new();
    for g in groups.iter().filter(|g| g.family == family) {
        let key = |x: &Group| {
            let mut p = x.params.clone();
            p.remove(axis);
            (x.experiment, p)
        };
        match out.iter_mut().find(|s| key(s[0]) == key(g)) {
            Some(s) => s.push(g),
            None => out.push(vec![g]),
        }
    }
    out
}

pub fn findings(trials: &[TrialRecord]) -> Vec<String> {
    let all = groups(trials);
    let mut out = Vec::new();
    for set in series(&all, "ring", "procs") {
        let points: Vec<(f64, Vec<f64>)> = set
            .iter()
            .filter_map(|g| Some((g.params.get("procs")?.as_f64()?, g.figure("ns_per_switch"))))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let what = format!("ring{}", describe(&set[0].params, &["procs"]));
        if points.len() < 4 {
            out.push(format!("{what}: {} ring sizes measured; at least 4 are needed to look for a knee", points.len()));
            continue;
        }
        let (lo, hi) =
            (points.iter().map(|p| p.0).fold(f64::MAX, f64::min), points.iter().map(|p| p.0).fold(0.0, f64::max));
        match find_knee(&points, KNEE_MIN_JUMP) {
            Some(k) => out.push(format!(
                "{what}: knee between {} and {} processes: the cost per switch steps from {:.0} to {:.0} ns ({:+.0}%, Mann-Whitney p = {:.2e})",
                k.before,
                k.after,
                k.level_before,
                k.level_after,
                k.jump * 100.0,
                k.p_value
            )),
            None => out.push(format!(
                "{what}: no knee from {lo} to {hi} processes: the cost per switch fits one level or a steady line (no step of {:.0}% or more)",
                KNEE_MIN_JUMP * 100.0
            )),
        }
    }
    for set in series(&all, "workload", "policy") {
        if set.len() < 2 {
            continue;
        }
        let what = format!("workload{}", describe(&set[0].params, &["policy"]));
        let mut ranked: Vec<(&str, Vec<f64>)> = set
            .iter()
            .filter_map(|g| Some((g.params.get("policy")?.as_str()?, g.figure("wall_s"))))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        if ranked.len() < 2 {
            continue;
        }
        ranked.sort_by(|a, b| median(&a.1).total_cmp(&median(&b.1)));
        let (best, next) = (&ranked[0], &ranked[1]);
        let verdict = if smallest_possible_p(best.1.len(), next.1.len()) > 0.05 {
            format!("too few repeats ({} and {}) to call the difference significant", best.1.len(), next.1.len())
        } else {
            match mann_whitney(&best.1, &next.1) {
                Some((_, p)) if p < 0.05 => format!("significantly (Mann-Whitney p = {p:.3})"),
                Some((_, p)) => format!("not a significant difference (p = {p:.3})"),
                None => "untested".into(),
            }
        };
        let mut sentence = format!(
            "{what}: {} had the lowest median wall time, {:.4} s, {:.1}% below {} ({:.4} s): {verdict}",
            best.0.to_uppercase(),
            median(&best.1),
            (1.0 - median(&best.1) / median(&next.1)) * 100.0,
            next.0.to_uppercase(),
            median(&next.1)
        );
        let invol = |policy: &str| {
            set.iter()
                .find(|g| g.params.get("policy").and_then(Json::as_str) == Some(policy))
                .map(|g| median(&g.figure("nivcsw")))
        };
        let rt: Vec<f64> = ["fifo", "rr"].iter().filter_map(|p| invol(p)).filter(|v| v.is_finite()).collect();
        if let (Some(other), false) = (invol("other"), rt.is_empty()) {
            let rt_mean = rt.iter().sum::<f64>() / rt.len() as f64;
            if rt_mean > 0.0 {
                sentence.push_str(&format!(
                    "; OTHER had {:.1}x the involuntary switches of the real-time policies",
                    other / rt_mean
                ));
            } else if other >= 1.0 {
                sentence.push_str(&format!("; OTHER had {other:.0} involuntary switches, the real-time policies none"));
            }
        }
        out.push(sentence);
    }
    for set in series(&all, "latency", "policy") {
        let what = format!("latency{}", describe(&set[0].params, &["policy"]));
        let by = |figure: &str, pick: fn(&[f64]) -> f64| {
            set.iter()
                .filter_map(|g| {
                    let v = g.figure(figure);
                    (!v.is_empty())
                        .then(|| (g.params.get("policy").and_then(Json::as_str).unwrap_or("other"), pick(&v)))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let max_of = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
        let (Some(p99), Some(max)) = (by("p99_ns", median), by("max_ns", max_of)) else { continue };
        let overruns: Vec<String> = set
            .iter()
            .map(|g| {
                let n: f64 = g.figure("overruns").iter().sum();
                format!("{} {n:.0}", g.params.get("policy").and_then(Json::as_str).unwrap_or("other").to_uppercase())
            })
            .collect();
        out.push(format!(
            "{what}: lowest p99 {} ({:.1} µs), lowest max {} ({:.1} µs); overruns: {}",
            p99.0.to_uppercase(),
            p99.1 / 1000.0,
            max.0.to_uppercase(),
            max.1 / 1000.0,
            overruns.join(", ")
        ));
    }
    out
}
