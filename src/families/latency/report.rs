//! Latency statistics: per thread and combined, the classic min/max/avg table per policy
//! (with the percentiles cyclictest lacks) and the spike-period lines, from stored outcomes.

use super::Latency;
use crate::analysis::attribution;
use crate::model::figures::latency;
use crate::model::{format_ns, LatencyOutcome, LatencySpec, ThreadStats};
use crate::model::{Outcome, TrialSpec};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::findings::{spike_periods, Finding};
use crate::report::table::Table;
use crate::store::TrialRecord;
use serde_json::{Map, Value as Json};

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

/// A percentile in µs, "-" where it is unknown.
fn known_us(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), |ns| us(ns as f64))
}

/// A percentile in ns, "-" where it is unknown.
fn known(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), |ns| ns.to_string())
}

fn row(label: String, s: &ThreadStats) -> Vec<String> {
    let mut r = latency_cells(label, s);
    r.push(s.run_delay_ns.map_or("-".to_string(), |ns| us(ns as f64)));
    r.push(s.migrations.map_or("-".to_string(), |m| m.to_string()));
    r
}

fn latency_cells(label: String, s: &ThreadStats) -> Vec<String> {
    let cpu = s.cpu.map_or("any".to_string(), |c| c.to_string());
    match s.samples {
        0 => {
            let mut r = vec![label, cpu, "0".to_string()];
            r.extend((0..9).map(|_| "-".to_string()));
            r[11] = s.overruns.to_string();
            r
        }
        _ => vec![
            label,
            cpu,
            s.samples.to_string(),
            us(s.min_ns as f64),
            us(s.avg_ns),
            known_us(s.p50_ns),
            known_us(s.p90_ns),
            known_us(s.p99_ns),
            known_us(s.p999_ns),
            known_us(s.p9999_ns),
            us(s.max_ns as f64),
            s.overruns.to_string(),
        ],
    }
}

/// A table with a row per thread (and an "all" row when there are several), in µs. RQ
/// wait is the thread's run-queue wait over the whole run, Migr its migrations.
pub fn thread_table(o: &LatencyOutcome) -> String {
    let mut table = Table::new([
        "Thread",
        "CPU",
        "Samples",
        "Min µs",
        "Avg µs",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "p99.9 µs",
        "p99.99 µs",
        "Max µs",
        "Overruns",
        "RQ wait µs",
        "Migr",
    ])
    .left_align(0);
    for (i, t) in o.threads.iter().enumerate() {
        table.push(row(format!("T{i}"), t));
    }
    if o.threads.len() > 1 {
        let mut all = row("all".to_string(), &o.all);
        all[1] = "-".to_string();
        table.push(all);
    }
    table.render()
}

/// The 2007 blog's table: one column per policy, rows min / max / avg, then the
/// percentiles and overruns (all threads of a policy together), in ns as it printed them.
pub fn compare_table(runs: &[(LatencySpec, LatencyOutcome)]) -> String {
    let mut headers = vec!["ns".to_string()];
    headers.extend(runs.iter().map(|(spec, _)| {
        if spec.policy.is_realtime() {
            format!("{} {}", spec.policy.kernel_name(), spec.prio)
        } else if let Some(dl) = spec.deadline {
            format!("{} {}/{}", spec.policy.kernel_name(), format_ns(dl.runtime_ns), format_ns(dl.period_ns))
        } else {
            spec.policy.kernel_name().to_string()
        }
    }));
    let mut table = Table::new(headers).left_align(0);
    let stats: Vec<Option<&ThreadStats>> = runs.iter().map(|(_, o)| Some(&o.all).filter(|a| a.samples > 0)).collect();
    let figure = |name: &str, f: &dyn Fn(&ThreadStats) -> String| {
        let mut r = vec![name.to_string()];
        r.extend(stats.iter().map(|s| s.map_or("-".to_string(), f)));
        r
    };
    table.push(figure(latency::MIN_NS.name(), &|s| s.min_ns.to_string()));
    table.push(figure(latency::MAX_NS.name(), &|s| s.max_ns.to_string()));
    table.push(figure(latency::AVG_NS.name(), &|s| format!("{:.0}", s.avg_ns)));
    table.push(figure(latency::P50_NS.name(), &|s| known(s.p50_ns)));
    table.push(figure(latency::P90_NS.name(), &|s| known(s.p90_ns)));
    table.push(figure(latency::P99_NS.name(), &|s| known(s.p99_ns)));
    table.push(figure(latency::P999_NS.name(), &|s| known(s.p999_ns)));
    table.push(figure(latency::P9999_NS.name(), &|s| known(s.p9999_ns)));
    table.push(figure(latency::SAMPLES.name(), &|s| s.samples.to_string()));
    let mut overruns = vec![latency::OVERRUNS.name().to_string()];
    overruns.extend(runs.iter().map(|(_, o)| o.all.overruns.to_string()));
    table.push(overruns);
    if runs.iter().any(|(_, o)| o.deadline.is_some()) {
        let mut missed = vec![latency::MISSED_DEADLINES.name().to_string()];
        missed.extend(runs.iter().map(|(_, o)| o.deadline.map_or("-".to_string(), |d| d.missed_deadlines.to_string())));
        table.push(missed);
    }
    table.render()
}

/// Whether each thread's spikes recur with a period: the finding when they do, and
/// otherwise the best candidate's p, so the reader sees that it was looked for.
pub fn spike_lines(spec: &LatencySpec, o: &LatencyOutcome) -> String {
    use crate::analysis::period;
    let what = format!("{} latency", spec.policy.as_str());
    let mut lines = Vec::new();
    for t in spike_periods(o, spec.interval_ns) {
        let whose = t.cpu.map_or("the unpinned thread".to_string(), |c| format!("CPU {c}"));
        lines.push(match (t.claimed(), &t.period) {
            (Some(p), _) => {
                let finding = Finding::SpikePeriod { what: what.clone(), cpu: t.cpu, period: p.clone() };
                let mut text = format!("finding: {finding}");
                if let Some((n, culprits)) = beat_culprits(spec, o, &t) {
                    text.push_str(&format!("\n  who ran on its beats ({n} traced spikes on them):"));
                    for line in attribution::describe_tail(&culprits, n, 3) {
                        text.push_str(&format!("\n    {line}"));
                    }
                }
                text
            }
            (None, Some(best)) => format!(
                "spikes on {whose}: no period (the likeliest, {:.1} ms among {} spikes above {:.1} µs, has p = {:.2} \
                 and a spike on a beat in {} of {} stretches of the held-out half of the run; a period needs p < {} \
                 and at least {} of the stretches)",
                best.period_ns / 1e6,
                best.spikes,
                best.above_ns as f64 / 1000.0,
                best.test.p,
                best.test.hit,
                best.test.stretches,
                period::ALPHA,
                period::MIN_HELD_OUT_HITS
            ),
            (None, None) => format!(
                "spikes on {whose}: no period to test (fewer than {} spikes above the lowest level, no grid with {} of \
                 them on its beats in either half of the run, or a run shorter than {} times the shortest period \
                 searched, {:.0} ms)",
                period::MIN_SPIKES,
                period::MIN_FITS,
                period::MIN_CYCLES,
                period::shortest_period_ns(spec.interval_ns) / 1e6
            ),
        });
    }
    lines.join("\n")
}

/// With `--trace on` and a claimed period: the traced spikes on its beats and who ran in
/// their place (`None` without either).
pub fn beat_culprits(
    spec: &LatencySpec,
    o: &LatencyOutcome,
    spikes: &crate::report::findings::ThreadSpikes,
) -> Option<(usize, Vec<crate::analysis::trace::TailCulprit>)> {
    let p = spikes.claimed()?;
    let traced = o.attribution.as_ref()?.threads.iter().find(|a| Some(a.cpu) == spikes.cpu)?;
    let (n, culprits) = attribution::beat_culprits(
        &traced.spikes,
        p.period_ns,
        p.phase_ns,
        p.jitter_ns,
        spec.interval_ns,
        p.above_ns,
        traced.above_ns,
    );
    (n > 0).then_some((n, culprits))
}

/// With `--trace on`: each pinned thread's tail culprits (what ran in its spikes' place,
/// by share of the excess above the p99), or why there are none.
pub fn culprit_lines(o: &LatencyOutcome) -> String {
    let Some(a) = &o.attribution else { return String::new() };
    if let Some(reason) = &a.unavailable {
        return format!("tracing: {reason}");
    }
    let mut lines = Vec::new();
    for t in &a.threads {
        let lost = match t.lost_events {
            0 => String::new(),
            n => format!("; {n} events lost: the split is partial"),
        };
        if t.spikes.is_empty() {
            lines.push(format!(
                "tail of CPU {}: no spike above the p99 ({:.1} µs) to explain",
                t.cpu,
                t.above_ns as f64 / 1e3
            ));
            continue;
        }
        lines.push(format!(
            "tail of CPU {}: what ran in the place of its {} largest spikes above the p99 ({:.1} µs){lost}:",
            t.cpu,
            t.spikes.len(),
            t.above_ns as f64 / 1e3
        ));
        lines.extend(attribution::describe_tail(&t.tail, t.spikes.len(), 5).into_iter().map(|l| format!("  {l}")));
        lines.push(format!("  {}", tail_account(o, t).describe()));
    }
    lines.join("\n")
}

/// A traced thread's tail, named against not visible, with its CPU's steal over the run.
pub fn tail_account(o: &LatencyOutcome, t: &crate::analysis::trace::ThreadAttribution) -> attribution::TailAccount {
    let steal = o.steal.as_ref().and_then(|s| Some((s.of_cpu(t.cpu)?, s.resolution_ns)));
    attribution::TailAccount::of(&t.tail, &t.spikes, t.above_ns, steal)
}

/// The stored table of a latency experiment and its lines, from the figure registry.
impl FamilyReport for Latency {
    fn columns() -> Vec<Column> {
        use crate::model::figures::latency::*;
        use Summarise::*;
        vec![
            Column::named("Samples", &SAMPLES, Sum, 0),
            Column::micros("Min µs", &MIN_NS, Min),
            Column::micros("Avg µs", &AVG_NS, Mean),
            Column::micros("p50 µs", &P50_NS, Median),
            Column::micros("p99 µs", &P99_NS, Median),
            Column::Ci,
            Column::micros("p99.9 µs", &P999_NS, Median),
            Column::micros("Max µs", &MAX_NS, Max),
            Column::named("Overruns", &OVERRUNS, Sum, 0),
            Column::micros("RQ wait µs", &RUN_DELAY_NS, Median),
            Column::named("Migr", &MIGRATIONS, Median, 0),
        ]
    }

    fn stored_line(t: &TrialRecord) -> Option<Map<String, Json>> {
        let (Some(TrialSpec::Latency(spec)), Some(Outcome::Latency(o))) = (&t.spec, &t.outcome) else { return None };
        Some(crate::report::figures::latency_stored(spec, o))
    }
}
