//! The task set's tables and lines: the stored table from the figure registry, a JSON line
//! per trial, and per trial a table of its tasks.

use super::figures;
use super::model::{TaskStats, TasksetOutcome, TasksetSpec};
use super::Taskset;
use crate::analysis::attribution::describe_source;
use crate::analysis::misses::{merged_sources, MissTrace};
use crate::analysis::stats::Summary;
use crate::families::declared::FamilyModel;
use crate::families::figures::{self as registry, Part};
use crate::families::list::{Family, Outcome, TrialSpec};
use crate::model::{format_ns, TrialStatus};
use crate::report::cells::fixed;
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{Figures, LineExtras, Status};
use crate::report::table::Table;
use crate::store::group::Group;
use crate::store::TrialRecord;
use serde::Serialize;

/// One trial: the set's settings, then its figures (null where it failed), then each
/// task's and the misses' (a finished trial's), then the load's.
pub fn line<'a>(
    spec: &'a TasksetSpec,
    repeat: usize,
    status: &'a TrialStatus,
    o: Option<&'a Outcome>,
) -> TasksetLine<'a> {
    TasksetLine {
        family: Taskset::NAME,
        policy: spec.policy.as_str(),
        tasks: spec.tasks.iter().map(|t| t.name.as_str()).collect(),
        threads: spec.threads(),
        utilisation_pct: spec.utilisation() * 100.0,
        duration_s: spec.duration.as_secs_f64(),
        repeat,
        status: Status::of(status),
        reclaim: spec.reclaim,
        figures: Figures::of(registry::of(Family::Taskset), Part::Always, |f| o.and_then(|o| f.value(o))),
        tasks_met: o.and_then(Outcome::taskset).map(|ts| TasksMet {
            miss_bursts: ts.miss_bursts,
            per_task: &ts.tasks,
            miss_trace: ts.trace.as_ref(),
            activations_dropped: ts.activations_dropped,
        }),
        beside: o.map(|o| LineExtras::of(&spec.load, Some(o), None)),
    }
}

#[derive(Serialize)]
pub struct TasksetLine<'a> {
    family: &'static str,
    policy: &'static str,
    tasks: Vec<&'a str>,
    threads: usize,
    utilisation_pct: f64,
    duration_s: f64,
    repeat: usize,
    #[serde(flatten)]
    status: Status<'a>,
    /// Written only when asked for (`--reclaim`), so other lines read as before it existed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    reclaim: bool,
    #[serde(flatten)]
    figures: Figures,
    #[serde(flatten)]
    tasks_met: Option<TasksMet<'a>>,
    #[serde(flatten)]
    beside: Option<LineExtras>,
}

/// A finished trial's keys after the registry's figures: each task's, and with `--trace
/// on` what ran during the misses.
#[derive(Serialize)]
struct TasksMet<'a> {
    miss_bursts: u64,
    per_task: &'a [TaskStats],
    #[serde(skip_serializing_if = "Option::is_none")]
    miss_trace: Option<&'a MissTrace>,
    #[serde(skip_serializing_if = "Option::is_none")]
    activations_dropped: Option<u64>,
}

/// The most misses listed one by one in the text (all are in `--json` and the store).
const MISSES_LISTED: usize = 20;

/// With `--trace on`: what ran on the tasks' CPUs during their misses, source by source,
/// the time the kernel could not see (steal) beside the trial's steal, then each miss.
pub fn miss_lines(o: &TasksetOutcome) -> Vec<String> {
    let Some(trace) = &o.trace else {
        if o.misses == 0 {
            return Vec::new();
        }
        return vec![format!(
            "{} misses in {} incident(s) (a late activation makes the next late too); the hypervisor's steal over \
             the trial: {}; --trace on names what ran during each",
            o.misses,
            o.miss_bursts,
            steal_text(o)
        )];
    };
    if let Some(reason) = &trace.unavailable {
        return vec![format!("tracing: {reason}")];
    }
    if trace.misses == 0 {
        return vec![format!("tracing: no missed activation to explain ({} events lost)", trace.lost_events)];
    }
    let ms = |ns: u64| format!("{:.2} ms", ns as f64 / 1e6);
    let mut lines = vec![format!(
        "what ran on the task's CPU during its misses ({} of {} split, {} events lost; the misses' windows overlap \
         when lateness carries over: {} in all, and each stretch below is counted once in it):",
        trace.split,
        trace.misses,
        trace.lost_events,
        ms(trace.window_ns)
    )];
    for s in trace.sources.iter().take(8) {
        lines.push(format!(
            "  {}: in {} of {} misses, {}",
            describe_source(&s.source),
            s.misses,
            trace.split,
            ms(s.ns)
        ));
    }
    let steal = steal_text(o);
    lines.push(format!(
        "  not visible to the kernel (on the CPU by its switches beyond its own work, by its own clock: the \
         hypervisor's steal): {} in {} of {} misses; steal over the trial: {steal}",
        ms(trace.not_visible_ns),
        trace.misses_with_not_visible,
        trace.split
    ));
    if trace.misses_throttled > 0 {
        lines.push(format!(
            "  throttled (preempted while a lower class or idle had its CPU: its deadline runtime used up, or RT \
             throttling): {} in {} of {} misses",
            ms(trace.throttled_ns),
            trace.misses_throttled,
            trace.split
        ));
    }
    for m in trace.each.iter().take(MISSES_LISTED) {
        let instance = if m.instance > 0 { format!(" #{}", m.instance) } else { String::new() };
        let named: Vec<String> = m
            .culprits
            .iter()
            .filter(|c| c.ns > 0)
            .take(3)
            .map(|c| format!("{} {} µs", describe_source(&c.source), us(c.ns as i64)))
            .collect();
        let cpu = m.cpu.map_or("?".to_string(), |c| c.to_string());
        lines.push(format!(
            "  miss: {}{instance} activation {} (CPU {cpu}): slack {} µs; own {} µs{}, not visible {} µs, {}asleep {} µs{}{}{}{}{}",
            m.task,
            m.activation,
            us(m.slack_ns),
            us(m.on_cpu_ns as i64),
            if m.earlier_ns > 0 { format!(" (+ {} µs of earlier activations)", us(m.earlier_ns as i64)) } else { String::new() },
            us(m.not_visible_ns as i64),
            if m.timer_late_ns > 0 {
                format!("woken late (asleep past its timer) {} µs, ", us(m.timer_late_ns as i64))
            } else {
                String::new()
            },
            us(m.asleep_ns as i64),
            if m.lock_ns > 0 { format!(", waiting for a lock {} µs", us(m.lock_ns as i64)) } else { String::new() },
            if m.throttled_ns > 0 { format!(", throttled {} µs", us(m.throttled_ns as i64)) } else { String::new() },
            if named.is_empty() { "; nothing else ran".to_string() } else { format!("; {}", named.join(", ")) },
            if m.unknown_ns > 0 { format!(", unknown {} µs", us(m.unknown_ns as i64)) } else { String::new() },
            if m.partial { " (partial: events lost)" } else { "" },
        ));
    }
    if trace.each.len() > MISSES_LISTED {
        lines.push(format!(
            "  … {} more misses split in --json (miss_trace) and the store",
            trace.each.len() - MISSES_LISTED
        ));
    }
    lines
}

/// Each CPU's steal over the trial, as `/proc/stat` counts it.
fn steal_text(o: &TasksetOutcome) -> String {
    let ms = |ns: u64| format!("{:.2} ms", ns as f64 / 1e6);
    o.beside.steal.as_ref().map_or("not read".to_string(), |st| {
        st.cpus.iter().map(|c| format!("CPU {} {}", c.cpu, ms(c.steal_ns))).collect::<Vec<_>>().join(", ")
            + &format!(" (± {} per CPU)", ms(st.resolution_ns))
    })
}

/// "12.3" µs from ns; slack may be negative.
fn us(ns: i64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// A figure in µs as `us` writes it, "-" where the task has none (no timer).
fn us_or_dash(ns: Option<i64>) -> String {
    fixed(ns.map(|ns| ns as f64 / 1000.0), 1)
}

/// A trial's tasks, one row each: activations, the share that missed, wakeup and response
/// percentiles, the slack 99 % of activations had and the least, and the CPU time an
/// activation got.
pub fn task_table(spec: &TasksetSpec, o: &TasksetOutcome) -> Table {
    let mut table = Table::new([
        "task",
        "period",
        "prio",
        "acts",
        "miss %",
        "bursts",
        "wake p50 µs",
        "wake p99 µs",
        "wake max µs",
        "resp p99 µs",
        "slack p99 µs",
        "slack min µs",
        "run got µs",
    ]);
    for (t, s) in spec.tasks.iter().zip(&o.tasks) {
        let prio = match t.reservation {
            Some(r) if spec.reclaim => format!("dl {} +rec", format_ns(r.runtime_ns)),
            Some(r) => format!("dl {}", format_ns(r.runtime_ns)),
            None => match t.nice {
                Some(nice) => format!("nice {nice}"),
                None => t.prio.to_string(),
            },
        };
        table.push(vec![
            if t.count > 1 { format!("{} ×{}", t.name, t.count) } else { t.name.clone() },
            t.period_text(),
            prio,
            s.activations.to_string(),
            fixed(s.miss_pct(), 2),
            s.miss_bursts.to_string(),
            us_or_dash(s.wake_p50_ns.map(|ns| ns as i64)),
            us_or_dash(s.wake_p99_ns.map(|ns| ns as i64)),
            us_or_dash(s.wake_max_ns.map(|ns| ns as i64)),
            us(s.response_p99_ns as i64),
            us_or_dash(s.slack_p99_ns),
            us_or_dash(s.slack_min_ns),
            format!("{:.1}", s.run_mean_ns / 1000.0),
        ]);
    }
    table.left_align(0)
}

/// The stored table of a task-set experiment, from the figure registry.
impl FamilyReport for Taskset {
    fn columns() -> Vec<Column> {
        use figures::*;
        use Summarise::*;
        vec![
            Column::named("Activations", &ACTIVATIONS, Sum, 0),
            Column::named("Misses", &MISSES, Sum, 0),
            Column::named("Miss %", &MISS_PCT, Median, 2),
            Column::named("Deadline use p99 %", &DEADLINE_USE_P99_PCT, Median, 1),
            Column::Ci,
            Column::micros("Wake p99 µs", &WAKE_P99_NS, Median),
            Column::micros("Response p99 µs", &RESPONSE_P99_NS, Median),
            Column::micros("Slack min µs", &SLACK_MIN_NS, Min),
        ]
    }

    /// Each cell's tasks: the miss ratio and the slack 99 % of activations had, per task,
    /// as the medians over the cell's repeats, and the least slack of any.
    fn extra_tables(groups: &[&Group], axes: &[String]) -> Vec<(String, Table)> {
        let mut table = Table::new(axes.iter().map(String::as_str).chain([
            "task",
            "miss %",
            "slack p99 µs",
            "slack min µs",
            "wake p99 µs",
        ]));
        for g in groups {
            let runs: Vec<&TasksetOutcome> = g.outcomes().filter_map(Outcome::taskset).collect();
            let Some(first) = runs.first() else { continue };
            for (i, task) in first.tasks.iter().enumerate() {
                let of = |f: fn(&TaskStats) -> Option<f64>| -> Vec<f64> {
                    runs.iter().filter_map(|o| f(o.tasks.get(i)?)).collect()
                };
                let median = |v: Vec<f64>| Summary::of(&v).map(|s| s.median);
                let miss = median(of(TaskStats::miss_pct));
                let slack_min = of(|t| Some(t.slack_min_ns? as f64)).into_iter().reduce(f64::min);
                let mut row: Vec<String> = axes.iter().map(|k| g.value_text(k)).collect();
                row.extend([
                    task.name.clone(),
                    fixed(miss, 2),
                    fixed(median(of(|t| Some(t.slack_p99_ns? as f64))).map(|ns| ns / 1000.0), 1),
                    fixed(slack_min.map(|ns| ns / 1000.0), 1),
                    fixed(median(of(|t| Some(t.wake_p99_ns? as f64))).map(|ns| ns / 1000.0), 1),
                ]);
                table.push(row);
            }
        }
        let width = axes.len() + 1;
        let table = (0..width).fold(table, Table::left_align);
        let mut tables =
            vec![("each task, medians over repeats (slack p99: what 99 % of activations had left)".to_string(), table)];
        tables.extend(miss_sources_table(groups, axes));
        tables
    }

    fn stored_line(t: &TrialRecord) -> Option<impl Serialize> {
        let Some(TrialSpec::Taskset(spec)) = &t.spec else { return None };
        Some(line(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}

/// With `--trace on`: per cell, over its repeats, what ran on the tasks' CPUs during their
/// misses (the three sources with the most time), the time they were throttled and the
/// time not visible to the kernel. Each miss one by one is in `--json` and the store.
fn miss_sources_table(groups: &[&Group], axes: &[String]) -> Option<(String, Table)> {
    let traced = |g: &&&Group| g.outcomes().filter_map(Outcome::taskset).any(|o| o.trace.is_some());
    if !groups.iter().any(|g| traced(&g)) {
        return None;
    }
    let mut table = Table::new(axes.iter().map(String::as_str).chain([
        "misses split",
        "what ran instead (misses, ms)",
        "throttled ms",
        "not visible ms",
    ]));
    let ms = |ns: u64| format!("{:.2}", ns as f64 / 1e6);
    for g in groups.iter().filter(traced) {
        let traces: Vec<&MissTrace> =
            g.outcomes().filter_map(Outcome::taskset).filter_map(|o| o.trace.as_ref()).collect();
        let sum = |of: fn(&MissTrace) -> u64| traces.iter().map(|t| of(t)).sum::<u64>();
        let (misses, split) = (sum(|t| t.misses), sum(|t| t.split));
        let (throttled, not_visible) = (sum(|t| t.throttled_ns), sum(|t| t.not_visible_ns));
        let top: Vec<String> = merged_sources(traces.iter().copied())
            .iter()
            .take(3)
            .map(|s| format!("{} ({}, {})", describe_source(&s.source), s.misses, ms(s.ns)))
            .collect();
        let mut row: Vec<String> = axes.iter().map(|k| g.value_text(k)).collect();
        row.extend([
            format!("{split} of {misses}"),
            if top.is_empty() { "-".to_string() } else { top.join("; ") },
            ms(throttled),
            ms(not_visible),
        ]);
        table.push(row);
    }
    let width = axes.len() + 2;
    let table = (0..width).fold(table, Table::left_align);
    Some(("what ran on the tasks' CPUs during their misses, over the repeats (--trace on)".to_string(), table))
}

/// A taskset run's questions are told figure by figure; it has no findings of its own.
impl crate::decide::findings::FamilyFindings for Taskset {}

#[cfg(test)]
mod tests {
    use super::super::model::TasksetOptions;
    use super::super::task::TaskDecl;
    use super::*;
    use crate::families::shared::SpecSource;
    use crate::report::figures::object_of;

    fn spec(reclaim: bool) -> TasksetSpec {
        let task: TaskDecl = serde_json::from_str(r#"{"name": "a", "period": "10ms", "run": "1ms"}"#).unwrap();
        let options = TasksetOptions { tasks: vec![task], ..Default::default() };
        let mut spec = options.to_specs().unwrap().remove(0);
        // What --reclaim records for a deadline set, on this one to see where it is written.
        spec.reclaim = reclaim;
        spec
    }

    fn figure_keys() -> Vec<&'static str> {
        registry::of(Family::Taskset).iter().filter(|f| f.part == Part::Always).map(|f| f.key).collect()
    }

    const SETTINGS: [&str; 9] =
        ["family", "policy", "tasks", "threads", "utilisation_pct", "duration_s", "repeat", "status", "reason"];

    #[test]
    fn a_failed_trial_has_its_settings_and_status_then_every_figure_null() {
        let status = TrialStatus::TimedOut("still running".into());
        let failed = object_of(&line(&spec(false), 1, &status, None));
        let keys: Vec<&str> = failed.keys().map(String::as_str).collect();
        assert_eq!(keys, [SETTINGS.to_vec(), figure_keys()].concat());
        assert!(figure_keys().iter().all(|k| failed[*k].is_null()));
        assert_eq!(crate::report::json_line(&failed["utilisation_pct"]), "10.0");
    }

    #[test]
    fn reclaim_is_written_after_the_status_only_when_asked_for() {
        let o = Outcome::Taskset(TasksetOutcome { activations: 10, ..Default::default() });
        let ok = object_of(&line(&spec(true), 1, &TrialStatus::Ok, Some(&o)));
        let keys: Vec<&str> = ok.keys().map(String::as_str).collect();
        let finished = ["miss_bursts", "per_task"];
        assert_eq!(keys, [SETTINGS.to_vec(), vec!["reclaim"], figure_keys(), finished.to_vec()].concat());
        assert_eq!(crate::report::json_line(&ok["activations"]), "10");
        assert!(!object_of(&line(&spec(false), 1, &TrialStatus::Ok, Some(&o))).contains_key("reclaim"));
    }
}
