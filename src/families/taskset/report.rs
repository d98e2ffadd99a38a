//! The task set's tables and lines: the stored table from the figure registry, a JSON line
//! per trial, and per trial a table of its tasks.

use super::model::{figures, TasksetOutcome, TasksetSpec};
use super::Taskset;
use crate::model::figures::{self as registry, Part};
use crate::model::{format_ns, Family, Outcome, TrialSpec, TrialStatus};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{add_load, object, put};
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
    put(&mut m, registry::of(Family::Taskset), Part::Always, |f| o.and_then(|o| f.value(o)), Vec::new());
    if let Some(ts) = o.and_then(Outcome::taskset) {
        m.insert("per_task".into(), json!(ts.tasks));
    }
    if o.is_some() {
        add_load(&mut m, &spec.load, o);
    }
    m
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
            Some(r) => format!("dl {}", format_ns(r.runtime_ns)),
            None => t.prio.to_string(),
        };
        table.push(vec![
            if t.count > 1 { format!("{} ×{}", t.name, t.count) } else { t.name.clone() },
            format_ns(t.period_ns),
            prio,
            s.activations.to_string(),
            format!("{:.2}", 100.0 * s.misses as f64 / s.activations.max(1) as f64),
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

    fn stored_line(t: &TrialRecord) -> Option<Map<String, Json>> {
        let Some(TrialSpec::Taskset(spec)) = &t.spec else { return None };
        Some(line(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}
