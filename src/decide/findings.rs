//! Findings, computed from the stored outcomes, never guessed: ring knees, the answer to
//! each question of the run (the best policy per workload, the latency leader, any other
//! compared axis), and latency spikes that recur with a period.
//! Each is a typed value carrying its numbers; the sentence is made only when it is shown.
//!
//! The questions' answers are one family of claims: each question's leader against the
//! other cells on paired blocks (`analysis::sequential`), two hypotheses per question and
//! figure (a lead, equivalence), Holm-adjusted together. Knees keep their own test
//! (`analysis::knee`, family-wise 0.01 over a sweep's candidate steps), and a spike period
//! its own held-out test.

use crate::analysis::answers::{answer_all, Question};
pub use crate::analysis::answers::{Answer, AnswerVerdict};
use crate::analysis::knee::{Shape, StepTest};
use crate::analysis::period::SpikePeriod;
use crate::analysis::sequential::{Comparison, MARGIN};
use crate::analysis::stats::median;
use crate::exec::suite::Asking;
use crate::families::figures::{self, Figure};
use crate::families::{with_family, Family};
use crate::model::cell::axis::POLICY;
use crate::model::cell::Cell;
use crate::store::group::{groups, Group};
use crate::store::{RunRecord, TrialRecord};
use serde::Serialize;

/// " (key=value, …)" of a cell's parameters less `skip`; empty where none are left.
pub fn describe(params: &Cell, skip: &[&str]) -> String {
    let text = params.text(|k| !skip.contains(&k));
    if text.is_empty() {
        String::new()
    } else {
        format!(" ({text})")
    }
}

/// Sets of groups that differ only in `axis`, in first-seen order.
pub fn series<'a, 'b>(groups: &[&'b Group<'a>], axis: &str) -> Vec<Vec<&'b Group<'a>>> {
    let mut out: Vec<Vec<&Group>> = Vec::new();
    for &g in groups {
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

/// A latency question's answer on its maximum: the policy with the lowest median maximum.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MaxLeader {
    pub max_policy: String,
    pub max_ns: f64,
    pub max_answer: Answer,
}

/// One computed statement about a run, with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// Too few ring sizes to look for a knee.
    #[serde(rename = "ring_too_few_sizes")]
    TooFewSizes { what: String, sizes: usize },
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
    /// The policy with the lowest median wall time, against the others.
    BestPolicy {
        what: String,
        best: String,
        best_wall_s: f64,
        next: String,
        next_wall_s: f64,
        answer: Answer,
        switches: Option<SwitchContrast>,
        /// With `--trace on`: each policy's preemptions per child, and the share by a
        /// sibling, from the scheduler's tracepoints (policy, median per child, share).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        preempted: Vec<(String, f64, f64)>,
    },
    /// The leaders by p99 and by maximum (medians over repeats), each tested against the
    /// other policies, and every policy's overruns (a latency run's question).
    #[serde(rename = "latency_leader")]
    TailLeader {
        what: String,
        p99_policy: String,
        p99_ns: f64,
        p99_answer: Answer,
        /// The maximum's leader, level and answer (as `max_policy`, `max_ns`, `max_answer`):
        /// `None` where its experiment's `ask` keeps the question to its p99.
        #[serde(flatten)]
        max: Option<MaxLeader>,
        overruns: Vec<(String, u64)>,
    },
    /// Any other compared axis (`compare = "iterations"`): the value with the lowest
    /// median headline figure, against the others.
    Compared {
        what: String,
        axis: String,
        figure: String,
        best: String,
        best_value: f64,
        next: String,
        next_value: f64,
        answer: Answer,
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

/// How OTHER's involuntary switches compare with the real-time policies'.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchContrast {
    /// OTHER had this many times the real-time policies' involuntary switches.
    Ratio(f64),
    /// OTHER had this many, the real-time policies none.
    OnlyOther(f64),
}

/// What a family finds in a run besides the answers told figure by figure: its own
/// findings over its groups (a ring sweep's knees) and over single trials (a latency run's
/// spike periods), and its own form of a question's answer (the best policy of a workload).
/// Each family implements it in its folder; every method has a default of nothing.
pub trait FamilyFindings {
    /// Findings over the family's groups of one run (at least one group).
    fn of_groups(_groups: &[&Group]) -> Vec<Finding> {
        Vec::new()
    }

    /// Findings of one trial on its own (a trial that ended well).
    fn of_trial(_trial: &TrialRecord) -> Vec<Finding> {
        Vec::new()
    }

    /// The family's own finding for an answered question; `None`: the answers are told
    /// figure by figure (`Finding::Compared`).
    fn of_question(_question: &Answered) -> Option<Finding> {
        None
    }
}

/// A question of a run with its answers: the groups that differ only in the compared axis,
/// and for each figure answered, the comparison and the answer.
pub struct Answered<'q, 'a> {
    /// The family and the cell's other parameters, "workload (procs=10)".
    pub what: String,
    pub axis: &'q str,
    /// What its experiment asks, where the run stored it.
    pub asking: Option<&'q Asking>,
    pub set: &'q [&'q Group<'a>],
    pub figures: Vec<(&'q Figure, Comparison, Answer)>,
}

impl Answered<'_, '_> {
    /// The compared axis's value of the `i`th cell, as its table writes it.
    pub fn label(&self, i: usize) -> String {
        self.set[i].value_text(self.axis)
    }

    /// The median of a figure over the `i`th cell's blocks.
    pub fn level(&self, figure: &Figure, i: usize) -> f64 {
        let v = blocks_of(&self.set[i..=i], figure).remove(0);
        median(&v.iter().map(|x| x.1).collect::<Vec<_>>())
    }

    /// Whether the question is over the policy.
    pub fn is_over_policy(&self) -> bool {
        self.axis == POLICY
    }
}

/// The findings of a stored run, its questions those it stored (`RunOptions::asked`; a
/// run stored before that, its suite text read again).
pub fn findings_of_run(run: &RunRecord, trials: &[TrialRecord]) -> Vec<Finding> {
    findings_with(trials, &crate::exec::suite::asked_of_run(run))
}

/// The findings of trials whose suite is not at hand: the questions are the policies of
/// workload and latency experiments.
pub fn findings(trials: &[TrialRecord]) -> Vec<Finding> {
    findings_with(trials, &[])
}

/// One question of a run: the compared axis and the groups that differ only in it.
struct Asked<'b, 'a> {
    axis: String,
    /// Its sides are called equivalent within 1 ± this.
    margin: f64,
    /// What its experiment asks, where the run stored it (which figures it tests).
    asking: Option<&'b Asking>,
    set: Vec<&'b Group<'a>>,
}

/// The groups of each question: those of one experiment that differ only in its compared
/// axis (`asking` by experiment; when empty, the policy of workload and latency, at the
/// default margin).
/// What the experiment of a group asks, if the run stored it.
fn asked_of<'s>(g: &Group, asking: &'s [Asking]) -> Option<&'s Asking> {
    usize::try_from(g.experiment).ok().and_then(|e| asking.get(e))
}

/// The axis a group's cell is compared over, where the cell is part of a question: its
/// experiment's compared axis, which the cell sets (with nothing asked, as by a family
/// command's run, the policy where the family compares it by default).
pub fn question_axis(g: &Group, asking: &[Asking]) -> Option<String> {
    let axis = if asking.is_empty() {
        g.family.compares_policy_by_default().then(|| POLICY.to_string())
    } else {
        asked_of(g, asking).and_then(|a| a.compare.clone())
    };
    axis.filter(|a| g.params.contains(a))
}

fn questions<'b, 'a>(all: &'b [Group<'a>], asking: &'b [Asking]) -> Vec<Asked<'b, 'a>> {
    let mut out: Vec<((i64, Cell), Asked)> = Vec::new();
    for g in all {
        let Some(axis) = question_axis(g, asking) else { continue };
        let margin = asked_of(g, asking).map_or(MARGIN, |a| a.margin);
        let key = (g.experiment, g.params.question_key(&axis));
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, asked)) => asked.set.push(g),
            None => out.push((key, Asked { axis, margin, asking: asked_of(g, asking), set: vec![g] })),
        }
    }
    out.into_iter().map(|(_, a)| a).filter(|a| a.set.len() >= 2).collect()
}

/// Each group's values of a figure keyed by the block (repeat) its trial ran in.
fn blocks_of(set: &[&Group], figure: &Figure) -> Vec<Vec<(u32, f64)>> {
    set.iter().map(|g| g.by_repeat(figure)).collect()
}

/// The answers to a run's questions, corrected together.
fn answers(all: &[Group], asking: &[Asking]) -> Vec<Finding> {
    let asked = questions(all, asking);
    // Each question's figures (latency: p99 and the maximum, as its experiment's `ask`
    // keeps them), then every claim answered together (`analysis::answers`).
    let figures_of: Vec<Vec<&Figure>> = asked
        .iter()
        .map(|a| {
            let family = a.set[0].family;
            let sample = a.set.iter().find_map(|g| g.outcomes().next());
            let all = sample.map_or_else(|| figures::questioned(family), figures::questioned_of);
            all.into_iter().filter(|f| a.asking.is_none_or(|asking| asking.tests(family, f))).collect()
        })
        .collect();
    let decided = answer_all(
        &asked
            .iter()
            .zip(&figures_of)
            .map(|(a, figs)| Question {
                figures: figs.iter().map(|fig| blocks_of(&a.set, fig)).collect(),
                margin: a.margin,
                block_s: block_seconds(&a.set),
            })
            .collect::<Vec<_>>(),
    );
    let mut out = Vec::new();
    for ((a, figs), results) in asked.iter().zip(&figures_of).zip(decided) {
        let family = a.set[0].family;
        let answered = Answered {
            what: format!("{}{}", family.as_str(), describe(&a.set[0].params, &[a.axis.as_str()])),
            axis: &a.axis,
            asking: a.asking,
            set: &a.set,
            figures: figs.iter().zip(results).filter_map(|(fig, r)| r.map(|(c, ans)| (*fig, c, ans))).collect(),
        };
        match with_family!(family, F => F::of_question(&answered)) {
            Some(finding) => out.push(finding),
            None => out.extend(answered.figures.iter().map(|(fig, c, ans)| Finding::Compared {
                what: answered.what.clone(),
                axis: a.axis.clone(),
                figure: fig.label.to_string(),
                best: answered.label(c.leader),
                best_value: answered.level(fig, c.leader),
                next: answered.label(c.runner_up),
                next_value: answered.level(fig, c.runner_up),
                answer: ans.clone(),
            })),
        }
    }
    out
}

/// What one block of a question takes: each cell's median trial time, summed.
fn block_seconds(set: &[&Group]) -> Option<f64> {
    let per_cell: Vec<f64> = set
        .iter()
        .filter_map(|g| {
            let times: Vec<f64> = g.ok().map(|t| t.elapsed_s).filter(|s| *s > 0.0).collect();
            (!times.is_empty()).then(|| median(&times))
        })
        .collect();
    (per_cell.len() == set.len()).then(|| per_cell.iter().sum())
}

/// The questions of findings that answer one, and how many of them are decided.
pub fn questions_answered(found: &[Finding]) -> (usize, usize) {
    let headline: Vec<bool> = found.iter().filter_map(question_answered).collect();
    (headline.iter().filter(|d| **d).count(), headline.len())
}

/// Whether a finding is a question of the run (`None` where it is not), and if so whether
/// it is answered: the one rule the counts, the question table and the glance share.
pub fn question_answered(f: &Finding) -> Option<bool> {
    match f {
        Finding::BestPolicy { answer, .. } | Finding::Compared { answer, .. } => Some(answer.decided()),
        Finding::TailLeader { p99_answer, .. } => Some(p99_answer.decided()),
        // A ring sweep asks "knee or no knee, linear or not": answered unless unclear. One
        // of too few sizes asks nothing (its rings may serve another question, over procs).
        Finding::Scaling { shape, .. } => Some(*shape != Shape::Unclear),
        _ => None,
    }
}

fn findings_with(trials: &[TrialRecord], asking: &[Asking]) -> Vec<Finding> {
    let all = groups(trials);
    let mut out = Vec::new();
    for family in Family::ALL {
        let own: Vec<&Group> = all.iter().filter(|g| g.family == family).collect();
        if !own.is_empty() {
            out.extend(with_family!(family, F => F::of_groups(&own)));
        }
    }
    out.extend(answers(&all, asking));
    for t in trials.iter().filter(|t| t.is_ok()) {
        out.extend(with_family!(t.family, F => F::of_trial(t)));
    }
    out
}

#[cfg(test)]
pub(crate) mod spike_tests {
    use super::*;
    use crate::analysis::period::{self, Level};
    use crate::analysis::random::SplitMix64;
    use crate::families::latency::findings::{spike_levels, spike_periods};
    use crate::families::latency::model::{LatencyLength, LatencyOutcome, LatencySpec, Placement};
    use crate::families::latency::model::{ThreadOutliers, ThreadStats};
    use crate::families::{Outcome, TrialSpec};
    use crate::model::{BesideSpec, Policy, TrialStatus};

    /// A stored 4 s fifo latency trial on CPU 1 at 5 kHz whose largest samples are 60
    /// random spikes, plus, when `planted`, a spike every 100 ms.
    pub(crate) fn trial(seq: i64, planted: bool) -> TrialRecord {
        let mut rng = SplitMix64::new(seq as u64);
        let mut samples: Vec<(u64, u64)> =
            (0..60).map(|_| ((rng.next_f64() * 4e9) as u64, 80_000 + (rng.next_f64() * 2e6) as u64)).collect();
        if planted {
            samples.extend((0..40).map(|i| (30_000_000 + i * 100_000_000 + (rng.next_f64() * 50e3) as u64, 250_000)));
        }
        samples.sort_unstable();
        // The body's level (18 + 10 × 12 µs) is above twice the p99: not searched.
        let stats = ThreadStats {
            cpu: Some(1),
            samples: 20_000,
            p50_ns: Some(18_000),
            p90_ns: Some(30_000),
            p99_ns: Some(35_000),
            ..Default::default()
        };
        let outcome = LatencyOutcome {
            threads: vec![stats.clone()],
            all: stats,
            dma_latency_held: true,
            mlockall: true,
            outliers: vec![ThreadOutliers { cpu: Some(1), span_ns: 4_000_000_000, capacity: 512, samples }],
            ..LatencyOutcome::default()
        };
        let spec = LatencySpec {
            interval_ns: 200_000,
            length: LatencyLength::Duration(std::time::Duration::from_secs(4)),
            policy: Policy::Fifo,
            prio: 95,
            placement: Placement::Cpus(vec![1]),
            hold_dma_latency: true,
            break_ns: None,
            beside: BesideSpec { schedstat: true, ..BesideSpec::default() },
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
        assert!(period.test.p < period::ALPHA, "{period:?}");
        // Its JSON: the kind, then the thread, then the period's fields.
        let json = serde_json::to_string(&found[0]).unwrap();
        let head = r#"{"kind":"spike_period","what":"latency (policy=fifo) trial 0","cpu":1,"level":"2 × p99","#;
        assert!(json.starts_with(head) && json.contains(r#""period_ns":"#) && json.contains(r#""test":{"#), "{json}");
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
        let stats = ThreadStats {
            p50_ns: Some(20_000),
            p90_ns: Some(30_000),
            p99_ns: Some(40_000),
            p999_ns: Some(60_000),
            p9999_ns: Some(500_000),
            ..Default::default()
        };
        let kept = ThreadOutliers { cpu: None, span_ns: 1, capacity: 4, samples: vec![(1, 100_000), (2, 900_000)] };
        let names = |levels: Vec<Level>| {
            levels.iter().filter(|l| l.below_ns.is_none()).map(|l| (l.name, l.above_ns)).collect::<Vec<_>>()
        };
        // p99.9 is below twice the p99: the same level, searched once.
        assert_eq!(names(spike_levels(&stats, &kept)), [("2 × p99", 80_000), ("p99.99", 500_000)]);
        let full = ThreadOutliers { capacity: 2, ..kept };
        assert_eq!(names(spike_levels(&stats, &full)), [("2 × p99", 99_999), ("p99.99", 500_000)]);
    }

    #[test]
    fn a_source_that_is_the_p99_is_searched_above_the_body_of_the_distribution() {
        // 1.5 ms every 100 ms at 1 kHz: 1.5 % of the samples, so the p99 is the source's.
        let stats = ThreadStats {
            p50_ns: Some(13_000),
            p90_ns: Some(20_000),
            p99_ns: Some(1_200_000),
            p999_ns: Some(1_500_000),
            p9999_ns: Some(1_500_000),
            ..Default::default()
        };
        let kept = ThreadOutliers { cpu: None, span_ns: 1, capacity: 512, samples: vec![(1, 1_500_000)] };
        let levels: Vec<_> =
            spike_levels(&stats, &kept).iter().filter(|l| l.below_ns.is_none()).map(|l| (l.name, l.above_ns)).collect();
        assert_eq!(levels, [("p50 + 10 × (p90 − p50)", 83_000), ("2 × p99", 2_400_000)]);
    }

    /// A 4 s run sampled at 1 kHz as the latency kernel keeps it: a body of 15-40 µs,
    /// random stalls (a host slicing the CPU) of 0.2-12 ms on a `stalled` share of the
    /// wakeups, and, with `source`, a 73 ms beat delaying its wakeup by 0.5-1.5 ms at 80 %
    /// of its beats. Returns the stats and the 512 largest samples with their times.
    fn noisy_run(rng: &mut SplitMix64, stalled: f64, source: bool) -> (ThreadStats, ThreadOutliers) {
        let mut samples: Vec<(u64, u64)> = (0..4_000u64)
            .map(|i| {
                let body = 15_000 + (rng.next_f64() * 25_000.0) as u64;
                // Log-uniform: stalls of every size, up to eight times the source's.
                let stall = (rng.next_f64() < stalled).then(|| (200_000.0 * 60f64.powf(rng.next_f64())) as u64);
                (i * 1_000_000, stall.unwrap_or(body))
            })
            .collect();
        if source {
            let mut beat = 31_000_000u64;
            while beat < 4_000_000_000 {
                if rng.next_f64() < 0.8 {
                    let i = (beat / 1_000_000) as usize;
                    samples[i].1 = samples[i].1.max(500_000 + (rng.next_f64() * 1e6) as u64);
                }
                beat += 73_000_000;
            }
        }
        let mut sorted: Vec<u64> = samples.iter().map(|s| s.1).collect();
        sorted.sort_unstable();
        let q = |f: f64| Some(sorted[((sorted.len() as f64 * f) as usize).min(sorted.len() - 1)]);
        let stats = ThreadStats {
            p50_ns: q(0.5),
            p90_ns: q(0.9),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            p9999_ns: q(0.9999),
            ..Default::default()
        };
        let mut largest = samples.clone();
        largest.sort_unstable_by_key(|s| std::cmp::Reverse(s.1));
        largest.truncate(512);
        largest.sort_unstable();
        (stats, ThreadOutliers { cpu: Some(1), span_ns: 4_000_000_000, capacity: 512, samples: largest })
    }

    #[test]
    fn a_source_beneath_larger_random_stalls_is_found_and_stalls_alone_make_no_period() {
        let best = |(stats, kept): (ThreadStats, ThreadOutliers)| {
            period::search(&kept.samples, kept.span_ns, 1_000_000, &spike_levels(&stats, &kept))
        };
        // Without the source, no level and no band claims a period, however many stalls.
        for seed in 0..100 {
            let stalled = [0.01, 0.05, 0.15, 0.3][seed as usize % 4];
            let found = best(noisy_run(&mut SplitMix64::new(20_000 + seed), stalled, false));
            assert!(found.as_ref().is_none_or(|p| !p.significant()), "seed {seed}: {found:?}");
        }
        // Stalls on 2 % of the wakeups leave the levels low; on 15 %, they lift the p90
        // and every level above the source's 0.5-1.5 ms spikes, and the bands find it in
        // 16 of 20 (no level did in any: 7 of 20 were found by bands eight times as wide,
        // an octave apart, merged as levels are).
        let mut found = [0, 0];
        for seed in 0..40 {
            let stalled = if seed % 2 == 0 { 0.02 } else { 0.15 };
            if let Some(p) =
                best(noisy_run(&mut SplitMix64::new(9_000 + seed), stalled, true)).filter(|p| p.significant())
            {
                assert!((p.period_ns / 73e6 - 1.0).abs() < 0.01, "seed {seed}: {p:?}");
                found[seed as usize % 2] += 1;
            }
        }
        assert!(found[0] == 20 && found[1] >= 16, "found in {found:?} of 20 each");
    }

    #[test]
    fn bands_reach_beneath_levels_that_random_stalls_lifted() {
        // A third of the samples hit by 10 ms stalls: the p90 and so every level is above a
        // 1.5 ms source's spikes, but the median is not moved.
        let stats = ThreadStats {
            p50_ns: Some(25_000),
            p90_ns: Some(1_250_000),
            p99_ns: Some(11_700_000),
            p999_ns: Some(12_000_000),
            p9999_ns: Some(12_500_000),
            ..Default::default()
        };
        let kept = ThreadOutliers {
            cpu: None,
            span_ns: 1,
            capacity: 3,
            samples: vec![(1, 70_000), (2, 1_500_000), (3, 12_500_000)],
        };
        let bands: Vec<_> =
            spike_levels(&stats, &kept).iter().filter_map(|l| Some((l.above_ns, l.below_ns?))).collect();
        // Half-octave rungs of the lowest level (12.27 ms) down to 8 medians (200 µs), each
        // band four times its floor, up to the largest kept sample.
        assert_eq!(bands.first(), Some(&(271_242, 1_084_967)), "{bands:?}");
        assert!(bands.iter().any(|&(a, b)| a <= 500_000 && b >= 1_500_000), "{bands:?}");
        let near = |x: f64, y: f64| (x / y - 1.0).abs() < 1e-5;
        assert!(bands.windows(2).all(|w| near(w[1].0 as f64, w[0].0 as f64 * std::f64::consts::SQRT_2)), "{bands:?}");
        assert!(bands.iter().all(|&(a, b)| near(b as f64, 4.0 * a as f64)), "{bands:?}");
        assert!(bands.last().is_some_and(|&(_, b)| b < 12_500_000), "{bands:?}");
        // None beneath eight medians, nor in a buffer whose samples are all one band.
        let quiet = ThreadOutliers { capacity: 512, samples: vec![(1, 90_000)], ..kept };
        assert!(spike_levels(&stats, &quiet).iter().all(|l| l.below_ns.is_none()));
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
