//! Latency statistics: per thread and combined, the classic min/max/avg table per policy
//! (with the percentiles cyclictest lacks) and the spike-period lines, from stored outcomes.

use super::Latency;
use crate::analysis::attribution;
use super::findings::{spike_periods, ThreadSpikes};
use crate::decide::findings::Finding;
use crate::families::declared::FamilyModel;
use crate::families::figures as registry;
use crate::families::figures::Part;
use crate::families::latency::figures as latency;
use crate::families::latency::model::{LatencyOutcome, LatencySpec, ThreadStats};
use crate::families::list::Family;
use crate::families::list::{Outcome, TrialSpec};
use crate::model::format_ns;
use crate::model::TrialStatus;
use crate::report::chart::{esc, tick_label, ticks, COLORS};
use crate::report::chart::{Chart, Plot, Point, Series, Style};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{Figures, LineExtras, Status};
use crate::report::plots::series_of;
use crate::report::table::Table;
use crate::store::group::Group;
use crate::store::TrialRecord;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

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
        } else if let Some(dl) = spec.beside.deadline {
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
                "spikes on {whose}: no period (the likeliest, {:.1} ms among {} {}, has p = {:.2} and a spike on a \
                 beat in {} of {} stretches of the held-out half of the run; a period needs p < {} and at least {} of \
                 the stretches)",
                best.period_ns / 1e6,
                best.spikes,
                best.magnitude(),
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
    spikes: &ThreadSpikes,
) -> Option<(usize, Vec<crate::analysis::trace::TailCulprit>)> {
    let p = spikes.claimed()?;
    let traced = o.attribution.as_ref()?.threads.iter().find(|a| Some(a.cpu) == spikes.cpu)?;
    // A band's spikes are those beneath its top too.
    let in_band: Vec<_> =
        traced.spikes.iter().filter(|s| p.below_ns.is_none_or(|below| s.latency_ns <= below)).cloned().collect();
    let (n, culprits) = attribution::beat_culprits(
        &in_band,
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
    let steal = o.beside.steal.as_ref().and_then(|s| Some((s.of_cpu(t.cpu)?, s.resolution_ns)));
    attribution::TailAccount::of(&t.tail, &t.spikes, t.above_ns, steal)
}

/// One histogram's JSON line (a thread's, or all threads' together): the settings, the
/// status of a run that failed, the histogram's figures, a thread's spike period and
/// `--trace on` keys, then the load, the reservation and the SCHED_DEADLINE figures.
#[derive(Serialize)]
pub struct LatencyLine<'a> {
    family: &'static str,
    policy: &'static str,
    prio: i32,
    thread: Option<Thread>,
    cpu: Option<usize>,
    interval_ns: u64,
    #[serde(flatten)]
    status: Option<Status<'a>>,
    #[serde(flatten)]
    figures: Figures,
    #[serde(flatten)]
    spikes: Option<SpikeKeys>,
    #[serde(flatten)]
    beat: Option<BeatKeys>,
    #[serde(flatten)]
    attribution: Option<AttributionKeys<'a>>,
    #[serde(flatten)]
    beside: LineExtras,
    #[serde(flatten)]
    deadline: Option<Figures>,
}

/// Which histogram a line is of: a thread's index, or "all" threads together.
#[derive(Serialize)]
#[serde(untagged)]
enum Thread {
    Index(usize),
    All(&'static str),
}

/// A thread's spike period: its figures when one is claimed (null when not), and the
/// corrected p of the best candidate either way (null when there was none to test).
#[derive(Serialize)]
struct SpikeKeys {
    spike_period_ns: Option<u64>,
    spike_jitter_ns: Option<u64>,
    spike_above_ns: Option<u64>,
    /// A band's top, when the spikes that recur were a band's.
    #[serde(skip_serializing_if = "Option::is_none")]
    spike_below_ns: Option<u64>,
    spike_count: Option<usize>,
    spike_fits: Option<usize>,
    spike_period_p: Option<f64>,
}

impl SpikeKeys {
    fn of(spikes: Option<&ThreadSpikes>) -> SpikeKeys {
        let best = spikes.and_then(|s| s.period.as_ref());
        let claimed = spikes.and_then(ThreadSpikes::claimed);
        SpikeKeys {
            spike_period_ns: claimed.map(|p| p.period_ns.round() as u64),
            spike_jitter_ns: claimed.map(|p| p.jitter_ns.round() as u64),
            spike_above_ns: claimed.map(|p| p.above_ns),
            spike_below_ns: claimed.and_then(|p| p.below_ns),
            spike_count: claimed.map(|p| p.spikes),
            spike_fits: claimed.map(|p| p.fits),
            spike_period_p: best.map(|p| p.test.p),
        }
    }
}

/// With `--trace on` and a claimed period: the traced spikes on its beats and who ran in their place.
#[derive(Serialize)]
struct BeatKeys {
    spike_beat_spikes: usize,
    spike_beat_culprits: Vec<crate::analysis::trace::TailCulprit>,
}

/// With `--trace on`: the thread's tail culprits and its spikes split (`tail_culprits`,
/// `attributed_spikes`, `trace_lost_events`), or `attribution` saying why there are none.
#[derive(Serialize)]
#[serde(untagged)]
enum AttributionKeys<'a> {
    Unavailable {
        attribution: &'a str,
    },
    Traced {
        tail_culprits: &'a [crate::analysis::trace::TailCulprit],
        tail_account: attribution::TailAccount,
        attributed_spikes: &'a [crate::analysis::trace::SpikeAttribution],
        trace_lost_events: u64,
    },
}

impl<'a> AttributionKeys<'a> {
    fn of(o: &'a LatencyOutcome, cpu: Option<usize>) -> Option<AttributionKeys<'a>> {
        let a = o.attribution.as_ref()?;
        if let Some(reason) = &a.unavailable {
            return Some(AttributionKeys::Unavailable { attribution: reason });
        }
        let t = a.threads.iter().find(|t| Some(t.cpu) == cpu)?;
        Some(AttributionKeys::Traced {
            tail_culprits: &t.tail,
            tail_account: tail_account(o, t),
            attributed_spikes: &t.spikes,
            trace_lost_events: t.lost_events,
        })
    }
}

/// A line's settings and histogram; with no histogram, the line of a run that failed:
/// its `status` and `reason` before the figures, all null.
fn line_of<'a>(
    spec: &LatencySpec,
    thread: Option<Thread>,
    s: Result<&ThreadStats, &'a TrialStatus>,
) -> LatencyLine<'a> {
    let figures = registry::of(Family::Latency);
    LatencyLine {
        family: Latency::NAME,
        policy: spec.policy.as_str(),
        prio: spec.prio,
        thread,
        cpu: s.ok().and_then(|s| s.cpu),
        interval_ns: spec.interval_ns,
        status: s.err().map(Status::of),
        figures: Figures::of(figures, Part::Always, |f| s.ok().and_then(|s| f.thread_value(s))),
        spikes: None,
        beat: None,
        attribution: None,
        beside: LineExtras::of(&spec.beside.load, None, spec.beside.deadline),
        deadline: None,
    }
}
/// A latency run that failed (its load died, its trial process was killed): one line
/// with its settings, `status`, `reason`, no thread or CPU, and every figure null.
pub fn failed_line<'a>(spec: &LatencySpec, status: &'a TrialStatus) -> LatencyLine<'a> {
    line_of(spec, None, Err(status))
}
/// One object per thread, then one for all threads together ("thread": "all").
pub fn lines<'a>(spec: &LatencySpec, o: &'a LatencyOutcome) -> Vec<LatencyLine<'a>> {
    let spikes = spike_periods(o, spec.interval_ns);
    let mut out: Vec<LatencyLine> = o
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| LatencyLine {
            spikes: Some(SpikeKeys::of(spikes.get(i))),
            beat: spikes
                .get(i)
                .and_then(|s| beat_culprits(spec, o, s))
                .map(|(n, culprits)| BeatKeys { spike_beat_spikes: n, spike_beat_culprits: culprits }),
            attribution: AttributionKeys::of(o, t.cpu),
            ..line_of(spec, Some(Thread::Index(i)), Ok(t))
        })
        .collect();
    if o.threads.len() > 1 {
        out.push(line_of(spec, Some(Thread::All("all")), Ok(&o.all)));
    }
    let whole = Outcome::Latency(o.clone());
    for line in &mut out {
        line.beside = LineExtras::of(&spec.beside.load, Some(&whole), spec.beside.deadline);
        line.deadline = Figures::known(registry::of(Family::Latency), Part::Deadline, &whole);
    }
    out
}

/// A stored latency trial: its combined line, then the run's figures with each thread's
/// line under `per_thread` after the count of threads, as it always has been.
#[derive(Serialize)]
pub struct StoredLatency<'a> {
    #[serde(flatten)]
    combined: Option<LatencyLine<'a>>,
    #[serde(flatten)]
    threads: Figures,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_thread: Option<Vec<LatencyLine<'a>>>,
    #[serde(flatten)]
    run: Figures,
    dma_latency_held: bool,
    mlockall: bool,
}

/// A stored latency trial's combined line, with each thread's line under `per_thread`.
pub fn stored_object<'a>(spec: &LatencySpec, o: &'a LatencyOutcome) -> StoredLatency<'a> {
    let mut lines = lines(spec, o);
    let combined = lines.pop();
    let whole = Outcome::Latency(o.clone());
    let run = Figures::of(registry::of(Family::Latency), Part::Run, |f| f.value(&whole));
    let (threads, run) = run.split_after(&crate::families::latency::figures::THREADS);
    StoredLatency {
        combined,
        threads,
        per_thread: (!lines.is_empty()).then_some(lines),
        run,
        dma_latency_held: o.dma_latency_held,
        mlockall: o.mlockall,
    }
}

/// The stored table of a latency experiment and its lines, from the figure registry.
impl FamilyReport for Latency {
    fn columns() -> Vec<Column> {
        use crate::families::latency::figures::*;
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

    fn stored_line(t: &TrialRecord) -> Option<impl Serialize> {
        let (Some(TrialSpec::Latency(spec)), Some(Outcome::Latency(o))) = (&t.spec, &t.outcome) else { return None };
        Some(stored_object(spec, o))
    }

    fn charts(n: i64, groups: &[&Group], axes: &[String]) -> Vec<Chart> {
        latency_charts(n, groups, axes)
    }
}

fn latency_charts(n: i64, gs: &[&Group], axes: &[String]) -> Vec<Chart> {
    // Every repeat's buckets together, one histogram per series.
    let mut merged: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
    for (label, set) in series_of(gs, "", axes) {
        let entry = merged.entry(label.replace("policy=", "")).or_default();
        for g in set {
            for o in g.outcomes().filter_map(Outcome::latency) {
                for &(v, c) in &o.histogram {
                    *entry.entry(v).or_default() += c;
                }
            }
        }
    }
    merged.retain(|_, h| !h.is_empty());
    if merged.is_empty() {
        return Vec::new();
    }
    // Both plots: latency on a log x axis against a log y, a series per histogram.
    let log_log =
        |title: String, y_label: &str, style: Style, points_of: &dyn Fn(&BTreeMap<u64, u64>) -> Vec<Point>| Plot {
            x_log: true,
            y_log: true,
            series: merged.iter().map(|(label, h)| Series::new(label.clone(), points_of(h), style)).collect(),
            ..Plot::new(title, "latency, µs (log)", y_label)
        };
    let hist = log_log(format!("Experiment {n}: wakeup latency histogram"), "wakeups (log)", Style::Line, &|h| {
        // Coarse log-spaced bins (10 per decade) so the shape reads at a glance,
        // each drawn as a bar outline down to the axis (a count of 1).
        let mut bins: BTreeMap<i64, u64> = BTreeMap::new();
        for (&v, &c) in h {
            let us = (v as f64 / 1000.0).max(0.001);
            *bins.entry((us.log10() * 10.0).floor() as i64).or_default() += c;
        }
        let edge = |b: i64| 10f64.powf(b as f64 / 10.0);
        bins.iter()
            .flat_map(|(&b, &c)| {
                let c = c as f64;
                [(edge(b), 1.0, None), (edge(b), c, None), (edge(b + 1), c, None), (edge(b + 1), 1.0, None)]
            })
            .collect()
    });
    let tail_title = format!("Experiment {n}: latency tail (share of wakeups later than x)");
    let tail = log_log(tail_title, "1 − CDF (log)", Style::Step, &|h| {
        let total: u64 = h.values().sum();
        let mut below = 0u64;
        h.iter()
            .filter_map(|(&v, &c)| {
                below += c;
                let later = (total - below) as f64 / total as f64;
                (later > 0.0).then_some(((v as f64 / 1000.0).max(0.001), later, None))
            })
            .collect()
    });
    let mut charts = vec![
        Chart { name: format!("latency-{n}-histogram"), svg: hist.render() },
        Chart { name: format!("latency-{n}-tail"), svg: tail.render() },
    ];
    charts.extend(latency_strip_charts(n, gs, axes));
    charts.extend(latency_timeline_charts(n, gs, axes));
    charts
}

/// With `--trace on`: per configuration and CPU, what ran around the worst spikes of the
/// repeat that had the worst one: a panel per spike with a lane of the tasks (switch to
/// switch) and one of the handlers nested in them, the late window shaded from the ideal
/// wake time to the actual one.
fn latency_timeline_charts(n: i64, gs: &[&Group], axes: &[String]) -> Vec<Chart> {
    use crate::analysis::trace::{SpikeTimeline, ThreadAttribution};
    let mut charts = Vec::new();
    for (i, g) in gs.iter().enumerate() {
        // CPU -> (repeat, the thread's attribution) with the worst spike.
        let mut worst: BTreeMap<usize, (i64, &ThreadAttribution)> = BTreeMap::new();
        let latency_of = |t: &ThreadAttribution| t.timelines.first().map_or(0, |s| s.actual_ns - s.ideal_ns);
        for trial in g.ok() {
            let Some(Outcome::Latency(o)) = &trial.outcome else { continue };
            let Some(a) = &o.attribution else { continue };
            for t in a.threads.iter().filter(|t| !t.timelines.is_empty()) {
                let entry = worst.entry(t.cpu).or_insert((trial.repeat, t));
                if latency_of(t) > latency_of(entry.1) {
                    *entry = (trial.repeat, t);
                }
            }
        }
        let label: Vec<String> = axes.iter().map(|k| format!("{k}={}", g.value_text(k))).collect();
        for (cpu, (repeat, t)) in worst {
            let title = format!(
                "Experiment {n}{}: what ran on CPU {cpu} around the worst spikes (repeat {repeat})",
                if label.is_empty() { String::new() } else { format!(" ({})", label.join(" ")) }
            );
            let panels: Vec<&SpikeTimeline> = t.timelines.iter().collect();
            charts.push(Chart {
                name: format!("latency-{n}-timeline-{}-cpu{cpu}", i + 1),
                svg: timeline_svg(&title, &panels),
            });
        }
    }
    charts
}

/// The timeline chart: one panel per spike, time in µs from its ideal wake time.
fn timeline_svg(title: &str, panels: &[&crate::analysis::trace::SpikeTimeline]) -> String {
    use crate::analysis::trace::Lane;
    const W: f64 = 900.0;
    const LEFT: f64 = 90.0;
    const RIGHT: f64 = 20.0;
    const PANEL: f64 = 120.0;
    const TOP: f64 = 40.0;
    let height = TOP + PANEL * panels.len() as f64 + 24.0;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/><text x="{}" y="20" font-size="14" text-anchor="middle">{}</text>"#,
        W / 2.0,
        esc(title)
    );
    // One colour per name, the same in every panel.
    let mut colours: BTreeMap<&str, &str> = BTreeMap::new();
    for s in panels.iter().flat_map(|p| &p.segments) {
        let next = COLORS[colours.len() % COLORS.len()];
        colours.entry(s.name.as_str()).or_insert(next);
    }
    for (k, p) in panels.iter().enumerate() {
        let y0 = TOP + PANEL * k as f64;
        let (lo, hi) = (p.from_ns as f64 - p.ideal_ns as f64, p.to_ns as f64 - p.ideal_ns as f64);
        let x = |ns: u64| LEFT + (ns as f64 - p.ideal_ns as f64 - lo) / (hi - lo).max(1.0) * (W - LEFT - RIGHT);
        let late_us = (p.actual_ns - p.ideal_ns) as f64 / 1e3;
        let _ = write!(
            svg,
            r##"<text x="{LEFT}" y="{}" font-size="12">spike {}: woke {late_us:.1} µs late</text><rect x="{}" y="{}" width="{}" height="50" fill="#fdd" /><text x="4" y="{}">tasks</text><text x="4" y="{}">handlers</text>"##,
            y0 + 12.0,
            k + 1,
            x(p.ideal_ns),
            y0 + 18.0,
            (x(p.actual_ns) - x(p.ideal_ns)).max(1.0),
            y0 + 34.0,
            y0 + 58.0,
        );
        for s in &p.segments {
            let (x0, x1) = (x(s.start_ns), x(s.end_ns));
            let (y, h) = match s.lane {
                Lane::Task => (y0 + 20.0, 22.0),
                Lane::Handler => (y0 + 46.0, 18.0),
            };
            let colour = colours.get(s.name.as_str()).copied().unwrap_or("#999");
            let detail = if s.detail.is_empty() { String::new() } else { format!(" ({})", s.detail) };
            let tip = format!(
                "{}{detail}: {:.1} .. {:.1} µs, {:.1} µs",
                s.name,
                (s.start_ns as f64 - p.ideal_ns as f64) / 1e3,
                (s.end_ns as f64 - p.ideal_ns as f64) / 1e3,
                (s.end_ns - s.start_ns) as f64 / 1e3
            );
            let _ = write!(
                svg,
                r#"<rect x="{x0:.1}" y="{y}" width="{:.1}" height="{h}" fill="{colour}" fill-opacity="0.8"><title>{}</title></rect>"#,
                (x1 - x0).max(0.5),
                esc(&tip)
            );
            // A label where it fits (about 6 px a character).
            let room = ((x1 - x0) / 6.0) as usize;
            if room >= 4 {
                let name: String = s.name.chars().take(room).collect();
                let _ =
                    write!(svg, r#"<text x="{:.1}" y="{}" fill="white">{}</text>"#, x0 + 2.0, y + h - 6.0, esc(&name));
            }
        }
        // The ideal and actual wake times, and the time axis in µs from the ideal one.
        for (at, what) in [(p.ideal_ns, "ideal"), (p.actual_ns, "woke")] {
            let _ = write!(
                svg,
                r##"<line x1="{0:.1}" x2="{0:.1}" y1="{1}" y2="{2}" stroke="#000" stroke-dasharray="3,2"/><text x="{0:.1}" y="{1}" font-size="9" text-anchor="middle">{what}</text>"##,
                x(at),
                y0 + 17.0,
                y0 + 68.0
            );
        }
        let axis_y = y0 + 72.0;
        let _ = write!(svg, r##"<line x1="{LEFT}" x2="{}" y1="{axis_y}" y2="{axis_y}" stroke="#444"/>"##, W - RIGHT);
        for t in ticks(lo / 1e3, hi / 1e3, false) {
            let tx = LEFT + (t * 1e3 - lo) / (hi - lo).max(1.0) * (W - LEFT - RIGHT);
            let _ = write!(
                svg,
                r##"<line x1="{tx:.1}" x2="{tx:.1}" y1="{axis_y}" y2="{}" stroke="#444"/><text x="{tx:.1}" y="{}" text-anchor="middle">{}</text>"##,
                axis_y + 4.0,
                axis_y + 15.0,
                tick_label(t)
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">µs from the ideal wake time</text>"#,
            W / 2.0,
            axis_y + 29.0
        );
    }
    let _ = write!(
        svg,
        r##"<text x="{LEFT}" y="{}" fill="#555">shaded: from the ideal wake time to the actual one; a gap in the tasks lane: the CPU idle, or a switch the kernel did not trace</text>"##,
        height - 8.0
    );
    svg.push_str("</svg>");
    svg
}

/// The largest samples over time, one strip plot per configuration: a series of dots
/// per repeat (and thread), time since the trial's start on x, latency on a log y, so
/// spikes that recur with a period line up at even steps. The note states what the
/// spike-period analysis found in each repeat.
fn latency_strip_charts(n: i64, gs: &[&Group], axes: &[String]) -> Vec<Chart> {
    let mut charts = Vec::new();
    for (i, g) in gs.iter().enumerate() {
        let label: Vec<String> = axes.iter().map(|k| format!("{k}={}", g.value_text(k))).collect();
        let mut plot = Plot {
            y_log: true,
            x_from_zero: true,
            ..Plot::new(
                format!(
                    "Experiment {n}{}: the largest wakeup latencies over time",
                    if label.is_empty() { String::new() } else { format!(" ({})", label.join(" ")) }
                ),
                "time since the trial's start, s",
                "latency, µs (log)",
            )
        };
        // Each period found (to 0.1 ms), with the repeats (and threads) it was found in.
        let mut periods: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for t in g.ok() {
            let (Some(Outcome::Latency(o)), Some(TrialSpec::Latency(spec))) = (&t.outcome, &t.spec) else { continue };
            let spikes = spike_periods(o, spec.interval_ns);
            for (kept, found) in o.outliers.iter().zip(&spikes) {
                let (who, short) = match (o.outliers.len(), kept.cpu) {
                    (1, _) => (format!("repeat {}", t.repeat), t.repeat.to_string()),
                    (_, Some(cpu)) => (format!("repeat {} CPU {cpu}", t.repeat), format!("{} (CPU {cpu})", t.repeat)),
                    (_, None) => (format!("repeat {} unpinned", t.repeat), format!("{} (unpinned)", t.repeat)),
                };
                if let Some(p) = found.claimed() {
                    periods.entry(format!("{:.1} ms", p.period_ns / 1e6)).or_default().push(short);
                }
                let points = kept.samples.iter().map(|&(at, v)| (at as f64 / 1e9, v as f64 / 1000.0, None)).collect();
                plot.series.push(Series::new(who, points, Style::Points));
            }
        }
        if plot.series.iter().all(|s| s.points.is_empty()) {
            continue;
        }
        // How many largest samples a thread kept: what the trials themselves say.
        let kept = g
            .outcomes()
            .filter_map(Outcome::latency)
            .flat_map(|o| o.outliers.iter().map(|t| t.capacity))
            .max()
            .unwrap_or_default();
        let found: Vec<String> = periods
            .iter()
            .map(|(period, repeats)| {
                format!("every {period} in repeat{} {}", if repeats.len() > 1 { "s" } else { "" }, repeats.join(", "))
            })
            .collect();
        plot.note = Some(if found.is_empty() {
            format!("each thread's {kept} largest samples; in no repeat do the spikes recur with a period")
        } else {
            format!("each thread's {kept} largest samples; spikes recur {}", found.join("; "))
        });
        charts.push(Chart { name: format!("latency-{n}-strip-{}", i + 1), svg: plot.render() });
    }
    charts
}
