//! The command family's stored table and lines: every column from the figure registry.

use super::Command;
use crate::families::command::model::CommandSpec;
use crate::families::command::model::CpuWaitSource;
use crate::families::declared::FamilyModel;
use crate::families::figures as registry;
use crate::families::figures::Figure;
use crate::families::figures::{self, Part, Unit};
use crate::families::list::Outcome;
use crate::families::list::{Family, TrialSpec};
use crate::model::TrialStatus;
use crate::report::family::{Column, FamilyReport, Summarise};
use crate::report::figures::{Figures, LineExtras, Status};
use crate::store::TrialRecord;
use serde::Serialize;

/// One run of a command: its settings, then every figure of the family and those declared
/// for it (null where the run failed or a figure is unknown), then the load's.
pub fn line<'a>(spec: &'a CommandSpec, repeat: usize, status: &'a TrialStatus, o: Option<&Outcome>) -> CommandLine<'a> {
    let mine: Vec<&'static Figure> = registry::all(Family::Command).collect();
    let command = o.and_then(Outcome::command);
    CommandLine {
        family: Command::NAME,
        cmd: &spec.argv,
        policy: spec.policy.as_str(),
        prio: spec.prio,
        nice: spec.nice,
        cpus: spec.cpus.as_deref(),
        repeat,
        status: Status::of(status),
        figures: Figures::of(&mine, Part::Always, |f| o.and_then(|o| f.value(o))),
        cpu_wait_source: command.and_then(|c| c.cpu_wait_source),
        leftovers_killed: command.map(|c| c.leftovers_killed),
        beside: o.map(|o| LineExtras::of(&spec.load, Some(o), None)),
    }
}

#[derive(Serialize)]
pub struct CommandLine<'a> {
    family: &'static str,
    cmd: &'a [String],
    policy: &'static str,
    prio: i32,
    nice: Option<i32>,
    cpus: Option<&'a [usize]>,
    repeat: usize,
    #[serde(flatten)]
    status: Status<'a>,
    #[serde(flatten)]
    figures: Figures,
    cpu_wait_source: Option<CpuWaitSource>,
    leftovers_killed: Option<u32>,
    #[serde(flatten)]
    beside: Option<LineExtras>,
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

    fn stored_line(t: &TrialRecord) -> Option<impl Serialize> {
        let Some(TrialSpec::Command(spec)) = &t.spec else { return None };
        Some(line(spec, t.repeat.max(0) as usize, &t.status, t.outcome.as_ref()))
    }
}

/// A command run's questions are told figure by figure; it has no findings of its own.
impl crate::decide::findings::FamilyFindings for Command {}
