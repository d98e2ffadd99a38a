//! The command family's stored table and lines: every column from the figure registry.

use super::Command;
use crate::families::command::model::CommandSpec;
use crate::model::figures as registry;
use crate::model::figures::Figure;
use crate::model::figures::{self, Part, Unit};
use crate::model::{Family, TrialSpec};
use crate::model::{Outcome, TrialStatus};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{add_load, object, put};
use crate::store::TrialRecord;
use serde_json::json;
use serde_json::{Map, Value as Json};

/// A stored trial's figures, as one object: what exports and CSV rows carry. A latency
/// trial's is its combined line with each thread's under `per_thread`.
/// One run of a command: its settings, then every figure of the family and those declared
/// for it (null where the run failed or a figure is unknown), then the load's.
pub fn line(spec: &CommandSpec, repeat: usize, status: &TrialStatus, o: Option<&Outcome>) -> Map<String, Json> {
    let mut m = object(json!({
        "family": "command",
        "cmd": spec.argv,
        "policy": spec.policy.as_str(),
        "prio": spec.prio,
        "nice": spec.nice,
        "cpus": spec.cpus,
        "repeat": repeat,
        "status": status.label(),
        "reason": status.reason(),
    }));
    let mine: Vec<&'static Figure> = registry::all(Family::Command).collect();
    put(&mut m, &mine, Part::Always, |f| o.and_then(|o| f.value(o)), Vec::new());
    let command = o.and_then(Outcome::command);
    m.insert("cpu_wait_source".into(), json!(command.and_then(|c| c.cpu_wait_source)));
    m.insert("leftovers_killed".into(), json!(command.map(|c| c.leftovers_killed)));
    if o.is_some() {
        add_load(&mut m, &spec.load, o);
    }
    m
}

/// A command's cells, every column from the figure registry: the median over ok repeats
/// of each of the family's figures and of those declared for it, and the 95% CI of the
/// headline's median (a declared figure with better = lower, else the wall time).
impl FamilyReport for Command {
    fn columns() -> Vec<Column> {
        let mut columns: Vec<Column> = figures::all(Family::Command)
            .filter(|f| f.part == Part::Always)
            .map(|f| {
                let places = match f.unit {
                    _ if f.integer => 0,
                    Unit::Percent => 1,
                    _ => 3,
                };
                Column::of(f, Summarise::Median, places)
            })
            .collect();
        columns.insert(1, Column::Ci);
        columns
    }

    fn stored_line(t: &TrialRecord) -> Option<Map<String, Json>> {
        let Some(TrialSpec::Command(spec)) = &t.spec else { return None };
        Some(line(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}
