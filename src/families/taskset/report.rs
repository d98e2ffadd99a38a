//! The task set's tables and lines: the stored table from the figure registry, a JSON line
//! per trial, and per trial a table of its tasks.

use super::model::{figures, TaskStats, TasksetOutcome, TasksetSpec};
use super::Taskset;
use crate::analysis::attribution::describe_source;
use crate::analysis::stats::Summary;
use crate::model::figures::{self as registry, Part};
use crate::model::{format_ns, Family, Outcome, TrialSpec, TrialStatus};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{add_load, object, put};
use crate::report::stored::{fixed, Group};
use crate::report::table::Table;
use crate::store::TrialRecord;
use serde_json::{json, Map, Value as Json};

/// One trial: the set's settings, then its figures (null where it failed), then the load's.
pub fn line(spec: &TasksetSpec, repeat: usize, status: &TrialStatus, o: Option<&Outcome>) -> Map<String, Json> {
    let mut m = object(json!({
        "family": "taskset",
        "policy": spec.policy.as_str(),
        "tasks": spec.tasks.iter().map(|t| &t.name).collect::<Vec<_>>(),
        "threads": spec.threads(),
        "utilisation_pct": spec.utilisation() * 100.0,
        "duration_s": spec.duration.as_secs_f64(),
        "repeat": repeat,
        "status": status.label(),
        "reason": status.reason(),
    }));
    if spec.reclaim {
        m.insert("reclaim".into(), json!(true));
    }
    put(&mut m, registry::of(Family::Taskset), Part::Always, |f| o.and_then(|o| f.value(o)), Vec::new());
    if let Some(ts) = o.and_then(Outcome::taskset) {
        m.insert("miss_bursts".into(), json!(ts.miss_bursts));
        m.insert("per_task".into(), json!(ts.tasks));
        if let Some(trace) = &ts.trace {
            m.insert("miss_trace".into(), json!(trace));
        }
        if let Some(dropped) = ts.activations_dropped {
            m.insert("activations_dropped".into(), json!(dropped));
        }
    }
    if o.is_some() {
        add_load(&mut m, &spec.load, o);
    }
    m
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
        "  not visible to the kernel (on the CPU by its switches, not by the thread's own clock: the hypervisor's \
         steal): {} in {} of {} misses; steal over the trial: {steal}",
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
            None => t.prio.to_string(),
        };
        table.push(vec![
            if t.count > 1 { format!("{} ×{}", t.name, t.count) } else { t.name.clone() },
            format_ns(t.period_ns),
            prio,
            s.activations.to_string(),
            format!("{:.2}", 100.0 * s.misses as f64 / s.activations.max(1) as f64),
            s.miss_bursts.to_string(),
            us(s.wake_p50_ns as i64),
            us(s.wake_p99_ns as i64),
            us(s.wake_max_ns as i64),
            us(s.response_p99_ns as i64),
            us(s.slack_p99_ns),
            us(s.slack_min_ns),
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
                let of = |f: fn(&TaskStats) -> f64| -> Vec<f64> {
                    runs.iter().filter_map(|o| o.tasks.get(i)).map(f).collect()
                };
                let median = |v: Vec<f64>| Summary::of(&v).map(|s| s.median);
                let miss = median(of(|t| 100.0 * t.misses as f64 / t.activations.max(1) as f64));
                let slack_min = of(|t| t.slack_min_ns as f64).into_iter().reduce(f64::min);
                let mut row: Vec<String> = axes.iter().map(|k| g.value_text(k)).collect();
                row.extend([
                    task.name.clone(),
                    fixed(miss, 2),
                    fixed(median(of(|t| t.slack_p99_ns as f64)).map(|ns| ns / 1000.0), 1),
                    fixed(slack_min.map(|ns| ns / 1000.0), 1),
                    fixed(median(of(|t| t.wake_p99_ns as f64)).map(|ns| ns / 1000.0), 1),
                ]);
                table.push(row);
            }
        }
        let width = axes.len() + 1;
        let table = (0..width).fold(table, Table::left_align);
        vec![("each task, medians over repeats (slack p99: what 99 % of activations had left)".to_string(), table)]
    }

    fn stored_line(t: &TrialRecord) -> Option<Map<String, Json>> {
        let Some(TrialSpec::Taskset(spec)) = &t.spec else { return None };
        Some(line(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}
