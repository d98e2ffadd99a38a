//! Findings in words: each finding's sentence and each answer's evidence, made only when
//! shown (`decide::findings` computes them), and the run's questions line.

use crate::analysis::knee::{self, Shape};
use crate::analysis::sequential::{self, MIN_BLOCKS};
use crate::decide::findings::{questions_answered, Answer, AnswerVerdict, Finding, SwitchContrast};
use std::fmt;

/// "35 µs" or "1.20 ms": a jitter, from well below a sampling interval to a few ms.
fn jitter_text(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.0} µs", ns / 1e3)
    }
}

/// "2544 ns" or "436.5 µs": ring costs span a 3 µs VM and a 1992 Sun at 1.4 ms.
fn ns_text(ns: f64) -> String {
    if ns >= 100_000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

impl Answer {
    fn interval_text(&self) -> String {
        match (self.ci_low, self.ci_high) {
            (None, None) => "no interval yet".to_string(),
            (low, high) => {
                let end = |x: Option<f64>, none: &str| x.map_or(none.to_string(), |v| format!("{v:.3}"));
                let confidence = (1.0 - self.ci_level) * 100.0;
                format!("{}..{} at {confidence:.1}%, its claim's level in the family", end(low, "0"), end(high, "∞"))
            }
        }
    }
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let evidence = format!(
            "ratio {:.3} ({}; higher in {} of {} blocks); {}, Holm over {} claims{}",
            self.ratio,
            self.interval_text(),
            self.next_higher,
            self.blocks,
            self.test,
            self.claims,
            if self.at_once < self.claims {
                format!(" (at most {} of them true at once)", self.at_once)
            } else {
                String::new()
            }
        );
        let margin = self.margin * 100.0;
        match self.verdict {
            AnswerVerdict::Leads => write!(f, "decided, a lead (p = {:.2e}; {evidence})", self.p_leads),
            AnswerVerdict::Equivalent => {
                write!(f, "decided, equivalent within ±{margin:.0}% (p = {:.2e}; {evidence})", self.p_equivalent)
            }
            AnswerVerdict::TooFewBlocks => {
                write!(f, "undecided: {} paired blocks, at least {MIN_BLOCKS} are needed ({evidence})", self.blocks)
            }
            AnswerVerdict::Undecided => {
                write!(
                    f,
                    "undecided: neither a lead (p = {:.3}) nor equivalence within ±{margin:.0}% (p = {:.3}) yet \
                     ({evidence})",
                    self.p_leads, self.p_equivalent
                )?;
                if let Some(supported) = self.supported_margin.filter(|m| *m < 1.0) {
                    write!(f, "; already shown within ±{}%", (supported * 100.0).ceil())?;
                }
                if self.blocks < self.fewest_blocks {
                    write!(
                        f,
                        "; with {} of its {} claims possibly true at once a lead needs at least {} blocks: more \
                         repeats, or target_ci to add them where they decide",
                        self.at_once, self.claims, self.fewest_blocks
                    )?;
                } else if let Some(more) = self.more_blocks {
                    let seconds =
                        self.block_s.map_or(String::new(), |b| format!(" (~{:.0} s)", (b * more as f64).ceil()));
                    write!(
                        f,
                        "; likely about {more} more blocks{seconds} if they go on as so far: a longer --budget (and \
                         --max-repeat if its cells reached it)"
                    )?;
                } else {
                    write!(
                        f,
                        "; no answer in sight at this rate: its blocks split too evenly for a lead, and spread too \
                         far for equivalence"
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// "no knee (…)", "1 knee", "3 knees": the knees a ring sweep showed.
fn knees_text(knees: usize) -> String {
    match knees {
        0 => format!("no knee (no step of {:.0}% or more that holds)", knee::STEP_MIN * 100.0),
        1 => "1 knee".to_string(),
        n => format!("{n} knees"),
    }
}

/// How a ring sweep's cost per hop changes apart from its knees: the fitted change, and
/// whether it is level, a steady rise or fall, or too noisy to call.
fn scaling_shape_text(knees: usize, shape: &Shape, trend: f64, trend_t: f64) -> String {
    let rest = match knees {
        0 => "the cost per hop",
        1 => "apart from the knee, the cost per hop",
        _ => "apart from the knees, the cost per hop",
    };
    let bar = knee::RISE_MIN * 100.0;
    let trend = trend * 100.0;
    match shape {
        Shape::Linear => {
            format!("{rest} stays level: fitted {trend:+.0}% across the sizes, within ±{bar:.0}%")
        }
        Shape::SteadyRise => {
            format!("{rest} rises steadily, the total super-linearly: fitted {trend:+.0}% (t = {trend_t:.1})")
        }
        Shape::SteadyFall => format!("{rest} falls steadily: fitted {trend:+.0}% (t = {trend_t:.1})"),
        Shape::Unclear => {
            format!("{rest} changes by a fitted {trend:+.0}%, too noisy to call steady (t = {trend_t:.1}, under 3)")
        }
    }
}

/// A best policy's involuntary switches against the real-time policies', when counted.
fn write_switches(f: &mut fmt::Formatter<'_>, switches: Option<&SwitchContrast>) -> fmt::Result {
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

/// With `--trace on`: how often a child was preempted under each policy, and the share of
/// that by a sibling; nothing when not traced.
fn write_preempted(f: &mut fmt::Formatter<'_>, preempted: &[(String, f64, f64)]) -> fmt::Result {
    if !preempted.is_empty() {
        let each: Vec<String> = preempted
            .iter()
            .map(|(policy, per_child, by_sibling)| match *per_child {
                0.0 => format!("never under {}", policy.to_uppercase()),
                n => format!(
                    "{n} times under {} ({:.0} % of them by a sibling)",
                    policy.to_uppercase(),
                    100.0 * by_sibling
                ),
            })
            .collect();
        write!(f, "; traced: a child was preempted a median {}", each.join(", "))?;
    }
    Ok(())
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::TooFewSizes { what, sizes } => {
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
                let steps = knees_text(*knees);
                let shape = scaling_shape_text(*knees, shape, *trend, *trend_t);
                write!(
                    f,
                    "{what}: from {from} to {to} processes, {steps}; {shape}; at {to} processes the CPU time is \
                     {above_projection:.2}x the linear projection"
                )
            }
            Finding::BestPolicy { what, best, best_wall_s, next, next_wall_s, answer, switches, preempted } => {
                write!(
                    f,
                    "{what}: {} had the lowest median wall time, {best_wall_s:.4} s, {:.1}% below {} \
                     ({next_wall_s:.4} s): {answer}",
                    best.to_uppercase(),
                    (1.0 - best_wall_s / next_wall_s) * 100.0,
                    next.to_uppercase()
                )?;
                write_switches(f, switches.as_ref())?;
                write_preempted(f, preempted)
            }
            Finding::TailLeader { what, p99_policy, p99_ns, p99_answer, max, overruns } => {
                let overruns: Vec<String> = overruns.iter().map(|(p, n)| format!("{} {n}", p.to_uppercase())).collect();
                write!(
                    f,
                    "{what}: lowest median p99 {} ({:.1} µs): {p99_answer}; ",
                    p99_policy.to_uppercase(),
                    p99_ns / 1000.0
                )?;
                match max {
                    Some(m) => write!(
                        f,
                        "lowest median max {} ({:.1} µs): {}; ",
                        m.max_policy.to_uppercase(),
                        m.max_ns / 1000.0,
                        m.max_answer
                    )?,
                    None => write!(f, "the maximum not tested (the experiment asks of its p99 alone); ")?,
                }
                write!(f, "overruns: {}", overruns.join(", "))
            }
            Finding::Compared { what, axis, figure, best, best_value, next, next_value, answer } => write!(
                f,
                "{what}: {axis} = {best} had the lowest median {figure}, {best_value:.4}, {:.1}% below {axis} = \
                 {next} ({next_value:.4}): {answer}",
                (1.0 - best_value / next_value) * 100.0
            ),
            Finding::SpikePeriod { what, cpu, period: p } => {
                let t = &p.test;
                let place = cpu.map_or("on the CPUs the unpinned thread ran on".to_string(), |c| format!("on CPU {c}"));
                let spikes = p.magnitude();
                write!(
                    f,
                    "{what}: {} {spikes} ({}) recur every {:.1} ms ± {} ({} of {} fit): a periodic source {place} \
                     (on the half of the run the period was not fitted on, {} of {} stretches had a spike on a beat \
                     where chance gives {:.1}; p = {:.1e}, corrected for {} tests)",
                    p.spikes,
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

/// "questions: 7 of 8 answered (...)": the run's questions and how they were tested;
/// `None` when the run asked none.
pub fn questions_line(found: &[Finding]) -> Option<String> {
    let (answered, asked) = questions_answered(found);
    (asked > 0).then(|| format!("questions: {answered} of {asked} answered ({})", sequential::METHOD))
}

#[cfg(test)]
mod tests {
    use crate::decide::findings::{findings, spike_tests::trial, Finding};

    #[test]
    fn a_spike_period_reads_as_the_thread_its_period_and_its_cpu() {
        let found: Vec<Finding> =
            findings(&[trial(0, true)]).into_iter().filter(|f| matches!(f, Finding::SpikePeriod { .. })).collect();
        let text = found[0].to_string();
        assert!(text.starts_with("latency (policy=fifo) trial 0: "), "{text}");
        assert!(text.contains("recur every 100.0 ms ± ") && text.contains("a periodic source on CPU 1"), "{text}");
    }
}
