//! Findings, computed from the stored outcomes, never guessed: ring knees, the best
//! policy per workload with whether the lead is significant, the latency leader, and
//! latency spikes that recur with a period.
//! Each is a typed value carrying its numbers; the sentence is made only when it is shown.

pub use crate::analysis::best_policy::{Significance, EQUIVALENCE_MARGIN};
use crate::analysis::knee::{self, Shape, StepTest};
use crate::analysis::period::{self, Level, SpikePeriod};
use crate::analysis::stats::median;
use crate::model::figures::{self, Figure};
use crate::model::{Family, LatencyOutcome, Outcome, RingOutcome, ThreadOutliers, ThreadStats, TrialSpec};
use crate::report::stored::{groups, param_text, Group};
use crate::store::TrialRecord;
use serde::Serialize;
use serde_json::{Map, Value as Json};
use std::fmt;

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
fn series<'a, 'b>(groups: &'b [Group<'a>], family: Family, axis: &str) -> Vec<Vec<&'b Group<'a>>> {
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

/// One computed statement about a run, with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// Too few ring sizes to look for a knee.
    RingTooFewSizes { what: String, sizes: usize },
    /// The CPU cost per hop steps between two neighbouring ring sizes, and stays there.
    Knee {
        what: String,
        /// The last ring size before the step and the first after it.
        before: u64,
        after: u64,
        /// CPU ns per hop at those two sizes (medians over repeats), and after / before − 1.
        cost_before_ns: f64,
        cost_after_ns: f64,
        jump: f64,
        /// The median CPU ns per hop of each side as a whole, up to the neighbouring knees.
        level_before_ns: f64,
        level_after_ns: f64,
        evidence: StepTest,
    },
    /// How a ring sweep's CPU cost per hop scales, knees aside: the NCAR "is it linear?".
    Scaling {
        what: String,
        from: u64,
        to: u64,
        knees: usize,
        shape: Shape,
        /// The fitted change of the cost per hop across the sizes, knees left out, and the
        /// t statistic of that fit.
        trend: f64,
        trend_t: f64,
        /// CPU time at the largest ring over the linear projection from the smallest.
        above_projection: f64,
    },
    /// The policy with the lowest median wall time, against the next best.
    BestPolicy {
        what: String,
        best: String,
        best_wall_s: f64,
        next: String,
        next_wall_s: f64,
        significance: Significance,
        switches: Option<SwitchContrast>,
    },
    /// The latency leaders by p99 and by maximum, and every policy's overruns.
    LatencyLeader {
        what: String,
        p99_policy: String,
        p99_ns: f64,
        max_policy: String,
        max_ns: f64,
        overruns: Vec<(String, u64)>,
    },
    /// A latency thread's spikes recur with a period, by a test on the half of the run the
    /// period was not fitted on.
    SpikePeriod {
        what: String,
        /// The thread's CPU (none: unpinned).
        cpu: Option<usize>,
        #[serde(flatten)]
        period: SpikePeriod,
    },
}

/// One measuring thread's spike-period search: the most significant period among its
/// spikes, significant or not (none: too few spikes, or a run too short to search).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadSpikes {
    pub cpu: Option<usize>,
    pub period: Option<SpikePeriod>,
}

impl ThreadSpikes {
    /// The period, when the held-out test is significant.
    pub fn claimed(&self) -> Option<&SpikePeriod> {
        self.period.as_ref().filter(|p| p.significant())
    }
}

/// A spike is a sample above this many times the thread's p99: well out of the body of
/// the distribution. The tail's own small delays (on the shared VM, the scheduler tick's
/// and a 20 ms housekeeping beat's 40-60 µs, about the p99) are then no spikes, and a
/// period among them is not taken for a source of spikes.
pub const SPIKE_OVER_P99: u64 = 2;

/// The levels a thread's spikes are searched above: twice its p99, and its p99.9 and
/// p99.99 where they are higher. When the buffer of largest samples is full and its
/// smallest is above a level, samples between the two were not kept, so that level
/// becomes "above the smallest kept".
fn spike_levels(stats: &ThreadStats, kept: &ThreadOutliers) -> Vec<Level> {
    let smallest_kept = kept.samples.iter().map(|s| s.1).min().unwrap_or(0);
    let full = kept.capacity > 0 && kept.samples.len() >= kept.capacity;
    let floor = SPIKE_OVER_P99 * stats.p99_ns;
    let mut levels: Vec<Level> = Vec::new();
    for (name, value) in [("2 × p99", floor), ("p99.9", stats.p999_ns), ("p99.99", stats.p9999_ns)] {
        let value = value.max(floor);
        let above_ns = if full && smallest_kept > value { smallest_kept - 1 } else { value };
        // The same spikes as the level before: one test, not two.
        if levels.last().is_some_and(|l| l.above_ns == above_ns) {
            continue;
        }
        levels.push(Level { name, above_ns });
    }
    levels
}

/// The spike-period search of every thread of a latency outcome that kept its largest
/// samples (runs stored before schedlab kept them have none).
pub fn spike_periods(o: &LatencyOutcome, interval_ns: u64) -> Vec<ThreadSpikes> {
    o.outliers
        .iter()
        .zip(&o.threads)
        .map(|(kept, stats)| ThreadSpikes {
            cpu: kept.cpu,
            period: period::search(&kept.samples, kept.span_ns, interval_ns, &spike_levels(stats, kept)),
        })
        .collect()
}

/// The findings of the threads whose spikes recur with a period.
pub fn spike_findings(what: &str, o: &LatencyOutcome, interval_ns: u64) -> Vec<Finding> {
    spike_periods(o, interval_ns)
        .into_iter()
        .filter_map(|t| {
            let period = t.claimed()?.clone();
            Some(Finding::SpikePeriod { what: what.to_string(), cpu: t.cpu, period })
        })
        .collect()
}

/// "35 µs" or "1.20 ms": a jitter, from well below a sampling interval to a few ms.
fn jitter_text(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.0} µs", ns / 1e3)
    }
}

/// How OTHER's involuntary switches compare with the real-time policies'.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchContrast {
    /// OTHER had this many times the real-time policies' involuntary switches.
    Ratio(f64),
    /// OTHER had this many, the real-time policies none.
    OnlyOther(f64),
}

/// "2544 ns" or "436.5 µs": ring costs span a 3 µs VM and a 1992 Sun at 1.4 ms.
fn ns_text(ns: f64) -> String {
    if ns >= 100_000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

impl fmt::Display for Significance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Significance::TooFewRepeats { n_best, n_next } => {
                write!(f, "too few repeats ({n_best} and {n_next}) to call the difference significant")
            }
            Significance::Significant { p } => write!(f, "significantly (Mann-Whitney p = {p:.3})"),
            Significance::Equivalent { p, ci_low, ci_high, margin } => write!(
                f,
                "equivalent within ±{:.0}% (ratio of medians {ci_low:.3}..{ci_high:.3}, 95% bootstrap; \
                 Mann-Whitney p = {p:.3})",
                margin * 100.0
            ),
            Significance::NotSignificant { p, ci_low: Some(lo), ci_high: Some(hi) } => write!(
                f,
                "undecided: not a significant difference (p = {p:.3}), and the ratio of medians {lo:.3}..{hi:.3} \
                 (95% bootstrap) is not within ±{:.0}%",
                EQUIVALENCE_MARGIN * 100.0
            ),
            Significance::NotSignificant { p, .. } => write!(f, "not a significant difference (p = {p:.3})"),
            Significance::Untested => f.write_str("untested"),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::RingTooFewSizes { what, sizes } => {
                write!(f, "{what}: {sizes} ring sizes measured; at least 4 are needed to look for a knee")
            }
            Finding::Knee { what, before, after, cost_before_ns, cost_after_ns, jump, evidence, .. } => write!(
                f,
                "{what}: knee between {before} and {after} processes: the CPU cost per hop steps from \
                 {} to {} ({:+.0}%) and stays there ({evidence})",
                ns_text(*cost_before_ns),
                ns_text(*cost_after_ns),
                jump * 100.0
            ),
            Finding::Scaling { what, from, to, knees, shape, trend, trend_t, above_projection } => {
                let steps = match knees {
                    0 => format!("no knee (no step of {:.0}% or more that holds)", knee::STEP_MIN * 100.0),
                    1 => "1 knee".to_string(),
                    n => format!("{n} knees"),
                };
                let rest = match knees {
                    0 => "the cost per hop",
                    1 => "apart from the knee, the cost per hop",
                    _ => "apart from the knees, the cost per hop",
                };
                let bar = knee::RISE_MIN * 100.0;
                let trend = trend * 100.0;
                let shape = match shape {
                    Shape::Linear => {
                        format!("{rest} stays level: fitted {trend:+.0}% across the sizes, within ±{bar:.0}%")
                    }
                    Shape::SteadyRise => {
                        format!(
                            "{rest} rises steadily, the total super-linearly: fitted {trend:+.0}% (t = {trend_t:.1})"
                        )
                    }
                    Shape::SteadyFall => format!("{rest} falls steadily: fitted {trend:+.0}% (t = {trend_t:.1})"),
                    Shape::Unclear => format!(
                        "{rest} changes by a fitted {trend:+.0}%, too noisy to call steady (t = {trend_t:.1}, under 3)"
                    ),
                };
                write!(
                    f,
                    "{what}: from {from} to {to} processes, {steps}; {shape}; at {to} processes the CPU time is \
                     {above_projection:.2}x the linear projection"
                )
            }
            Finding::BestPolicy { what, best, best_wall_s, next, next_wall_s, significance, switches } => {
                write!(
                    f,
                    "{what}: {} had the lowest median wall time, {best_wall_s:.4} s, {:.1}% below {} \
                     ({next_wall_s:.4} s): {significance}",
                    best.to_uppercase(),
                    (1.0 - best_wall_s / next_wall_s) * 100.0,
                    next.to_uppercase()
                )?;
                match switches {
                    Some(SwitchContrast::Ratio(r)) => {
                        write!(f, "; OTHER had {r:.1}x the involuntary switches of the real-time policies")
                    }
                    Some(SwitchContrast::OnlyOther(n)) => {
                        write!(f, "; OTHER had {n:.0} involuntary switches, the real-time policies none")
                    }
                    None => Ok(()),
                }
            }
            Finding::LatencyLeader { what, p99_policy, p99_ns, max_policy, max_ns, overruns } => {
                let overruns: Vec<String> = overruns.iter().map(|(p, n)| format!("{} {n}", p.to_uppercase())).collect();
                write!(
                    f,
                    "{what}: lowest p99 {} ({:.1} µs), lowest max {} ({:.1} µs); overruns: {}",
                    p99_policy.to_uppercase(),
                    p99_ns / 1000.0,
                    max_policy.to_uppercase(),
                    max_ns / 1000.0,
                    overruns.join(", ")
                )
            }
            Finding::SpikePeriod { what, cpu, period: p } => {
                let t = &p.test;
                let place = cpu.map_or("on the CPUs the unpinned thread ran on".to_string(), |c| format!("on CPU {c}"));
                write!(
                    f,
                    "{what}: {} spikes above {:.1} µs ({}) recur every {:.1} ms ± {} ({} of {} fit): a periodic \
                     source {place} (on the half of the run the period was not fitted on, {} of {} stretches had a \
                     spike on a beat where chance gives {:.1}; p = {:.1e}, corrected for {} tests)",
                    p.spikes,
                    p.above_ns as f64 / 1000.0,
                    p.level,
                    p.period_ns / 1e6,
                    jitter_text(p.jitter_ns),
                    p.fits,
                    p.spikes,
                    t.hit,
                    t.stretches,
                    t.expected,
                    t.p,
                    t.tests
                )
            }
        }
    }
}

pub fn findings(trials: &[TrialRecord]) -> Vec<Finding> {
    let all = groups(trials);
    let mut out = Vec::new();
    for set in series(&all, Family::Ring, "procs") {
        let points: Vec<(f64, Vec<f64>)> = set
            .iter()
            .filter_map(|g| Some((g.procs()?, g.ring(RingOutcome::cpu_ns_per_hop))))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let what = format!("ring{}", describe(&set[0].params, &["procs"]));
        let Some(scaling) = knee::analyse(&points) else {
            out.push(Finding::RingTooFewSizes { what, sizes: points.len() });
            continue;
        };
        for k in &scaling.knees {
            out.push(Finding::Knee {
                what: what.clone(),
                before: k.before as u64,
                after: k.after as u64,
                cost_before_ns: k.cost_before,
                cost_after_ns: k.cost_after,
                jump: k.jump,
                level_before_ns: k.level_before,
                level_after_ns: k.level_after,
                evidence: k.test.clone(),
            });
        }
        out.push(Finding::Scaling {
            what,
            from: scaling.from as u64,
            to: scaling.to as u64,
            knees: scaling.knees.len(),
            shape: scaling.shape,
            trend: scaling.trend,
            trend_t: scaling.trend_t,
            above_projection: scaling.above_projection,
        });
    }
    for set in series(&all, Family::Workload, "policy") {
        if set.len() < 2 {
            continue;
        }
        let what = format!("workload{}", describe(&set[0].params, &["policy"]));
        let (wall_s, involuntary) = (figures::headline(Family::Workload), figures::named(Family::Workload, "nivcsw"));
        let mut ranked: Vec<(&str, Vec<f64>)> =
            set.iter().map(|g| (g.policy(), g.values(|o| wall_s.value(o)))).filter(|(_, v)| !v.is_empty()).collect();
        if ranked.len() < 2 {
            continue;
        }
        ranked.sort_by(|a, b| median(&a.1).total_cmp(&median(&b.1)));
        let (best, next) = (&ranked[0], &ranked[1]);
        let significance = Significance::of(&best.1, &next.1);
        let invol = |policy: &str| {
            set.iter().find(|g| g.policy() == policy).map(|g| median(&g.values(|o| involuntary.value(o))))
        };
        let rt: Vec<f64> = ["fifo", "rr"].iter().filter_map(|p| invol(p)).filter(|v| v.is_finite()).collect();
        let switches = match (invol("other"), rt.is_empty()) {
            (Some(other), false) => {
                let rt_mean = rt.iter().sum::<f64>() / rt.len() as f64;
                if rt_mean > 0.0 {
                    Some(SwitchContrast::Ratio(other / rt_mean))
                } else if other >= 1.0 {
                    Some(SwitchContrast::OnlyOther(other))
                } else {
                    None
                }
            }
            _ => None,
        };
        out.push(Finding::BestPolicy {
            what,
            best: best.0.to_string(),
            best_wall_s: median(&best.1),
            next: next.0.to_string(),
            next_wall_s: median(&next.1),
            significance,
            switches,
        });
    }
    for set in series(&all, Family::Latency, "policy") {
        let what = format!("latency{}", describe(&set[0].params, &["policy"]));
        let by = |figure: &Figure, pick: fn(&[f64]) -> f64| {
            set.iter()
                .filter_map(|g| {
                    let v = g.values(|o| figure.value(o));
                    (!v.is_empty()).then(|| (g.policy(), pick(&v)))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))
        };
        let max_of = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
        let (p99, max) = (figures::headline(Family::Latency), figures::named(Family::Latency, "max_ns"));
        let (Some(p99), Some(max)) = (by(p99, median), by(max, max_of)) else {
            continue;
        };
        let overruns = figures::named(Family::Latency, "overruns");
        let overruns = set
            .iter()
            .map(|g| (g.policy().to_string(), g.values(|o| overruns.value(o)).iter().sum::<f64>() as u64))
            .collect();
        out.push(Finding::LatencyLeader {
            what,
            p99_policy: p99.0.to_string(),
            p99_ns: p99.1,
            max_policy: max.0.to_string(),
            max_ns: max.1,
            overruns,
        });
    }
    for t in trials.iter().filter(|t| t.is_ok()) {
        let (Some(TrialSpec::Latency(spec)), Some(Outcome::Latency(o))) = (&t.spec, &t.outcome) else { continue };
        let what = format!("latency{} trial {}", describe(&t.params, &[]), t.seq);
        out.extend(spike_findings(&what, o, spec.interval_ns));
    }
    out
}

#[cfg(test)]
mod spike_tests {
    use super::*;
    use crate::analysis::random::SplitMix64;
    use crate::model::{LatencyLength, LatencySpec, Placement, Policy, TrialStatus};

    /// A stored 4 s fifo latency trial on CPU 1 at 5 kHz whose largest samples are 60
    /// random spikes, plus, when `planted`, a spike every 100 ms.
    fn trial(seq: i64, planted: bool) -> TrialRecord {
        let mut rng = SplitMix64::new(seq as u64);
        let mut samples: Vec<(u64, u64)> =
            (0..60).map(|_| ((rng.next_f64() * 4e9) as u64, 80_000 + (rng.next_f64() * 2e6) as u64)).collect();
        if planted {
            samples.extend((0..40).map(|i| (30_000_000 + i * 100_000_000 + (rng.next_f64() * 50e3) as u64, 250_000)));
        }
        samples.sort_unstable();
        let stats = ThreadStats { cpu: Some(1), samples: 20_000, p50_ns: 18_000, p99_ns: 35_000, ..Default::default() };
        let outcome = LatencyOutcome {
            threads: vec![stats.clone()],
            all: stats,
            timer_slack_ns: 0,
            dma_latency_held: true,
            mlockall: true,
            histogram: Vec::new(),
            outliers: vec![ThreadOutliers { cpu: Some(1), span_ns: 4_000_000_000, capacity: 512, samples }],
            load: None,
            deadline: None,
        };
        let spec = LatencySpec {
            interval_ns: 200_000,
            length: LatencyLength::Duration(std::time::Duration::from_secs(4)),
            policy: Policy::Fifo,
            prio: 95,
            placement: Placement::Cpus(vec![1]),
            hold_dma_latency: true,
            break_ns: None,
            schedstat: true,
            load: Default::default(),
            deadline: None,
        };
        TrialRecord {
            seq,
            experiment: 0,
            family: Family::Latency,
            repeat: seq + 1,
            params: serde_json::from_str(r#"{"policy": "fifo"}"#).unwrap(),
            spec: Some(TrialSpec::Latency(spec)),
            outcome: Some(Outcome::Latency(outcome)),
            status: TrialStatus::Ok,
            started: "2026-11-21T17:00:00.000Z".into(),
            elapsed_s: 4.0,
        }
    }

    #[test]
    fn a_stored_trial_with_periodic_spikes_gets_a_finding_and_one_without_none() {
        let found: Vec<Finding> = findings(&[trial(0, true), trial(1, false)])
            .into_iter()
            .filter(|f| matches!(f, Finding::SpikePeriod { .. }))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        let Finding::SpikePeriod { what, cpu, period } = &found[0] else { unreachable!() };
        assert_eq!((what.as_str(), *cpu), ("latency (policy=fifo) trial 0", Some(1)));
        // A beat with a larger random spike within 10 ms is merged into it: most beats fit.
        assert!((period.period_ns / 1e8 - 1.0).abs() < 0.001 && period.fits >= 25, "{period:?}");
        // Spikes are above twice the p99 (70 µs), here every one kept.
        assert_eq!((period.level, period.above_ns, period.spikes), ("2 × p99", 70_000, found_spikes(&trial(0, true))));
        let text = found[0].to_string();
        assert!(text.starts_with("latency (policy=fifo) trial 0: "), "{text}");
        assert!(text.contains("recur every 100.0 ms ± ") && text.contains("a periodic source on CPU 1"), "{text}");
        let json = serde_json::to_value(&found[0]).unwrap();
        assert_eq!(json["kind"], "spike_period");
        assert!(json["period_ns"].as_f64().is_some() && json["test"]["p"].as_f64().unwrap() < period::ALPHA);
    }

    /// Spikes above 70 µs after merging those within 10 ms: what the finding counts.
    fn found_spikes(t: &TrialRecord) -> usize {
        let Some(Outcome::Latency(o)) = &t.outcome else { unreachable!() };
        let mut last = None;
        let mut n = 0;
        for &(at, _) in o.outliers[0].samples.iter().filter(|s| s.1 > 70_000) {
            if last.is_none_or(|l: u64| at - l >= 10_000_000) {
                n += 1;
            }
            last = Some(at);
        }
        n
    }

    #[test]
    fn levels_start_at_twice_the_p99_and_rise_to_the_smallest_kept_when_the_buffer_is_full() {
        let stats = ThreadStats { p99_ns: 40_000, p999_ns: 60_000, p9999_ns: 500_000, ..Default::default() };
        let kept = ThreadOutliers { cpu: None, span_ns: 1, capacity: 4, samples: vec![(1, 100_000), (2, 900_000)] };
        let names = |levels: Vec<Level>| levels.iter().map(|l| (l.name, l.above_ns)).collect::<Vec<_>>();
        // p99.9 is below twice the p99: the same level, searched once.
        assert_eq!(names(spike_levels(&stats, &kept)), [("2 × p99", 80_000), ("p99.99", 500_000)]);
        let full = ThreadOutliers { capacity: 2, ..kept };
        assert_eq!(names(spike_levels(&stats, &full)), [("2 × p99", 99_999), ("p99.99", 500_000)]);
    }

    #[test]
    fn an_outcome_stored_before_outliers_were_kept_still_loads() {
        let old = r#"{"threads": [], "all": {"cpu": null, "samples": 0, "overruns": 0, "min_ns": 0, "avg_ns": 0.0,
            "p50_ns": 0, "p90_ns": 0, "p99_ns": 0, "p999_ns": 0, "p9999_ns": 0, "max_ns": 0},
            "timer_slack_ns": 50000, "dma_latency_held": true, "mlockall": true, "histogram": []}"#;
        let o: LatencyOutcome = serde_json::from_str(old).unwrap();
        assert!(o.outliers.is_empty() && spike_periods(&o, 1_000_000).is_empty());
    }
}
