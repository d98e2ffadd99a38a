//! The command family's stored table and lines: every column from the figure registry.

use super::Command;
use crate::model::figures::{self, Part, Unit};
use crate::model::{Family, TrialSpec};
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::store::TrialRecord;
use serde_json::{Map, Value as Json};

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
        Some(crate::report::figures::command(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}
