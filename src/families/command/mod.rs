//! The command family: any program, measured as a family — its whole process tree's
//! times, switches and CPU wait, and figures parsed from its output.

pub mod figures;
pub mod flags;
pub mod kernel;
pub mod live;
pub mod model;
pub mod report;
pub mod trial;

use crate::families::declared::FamilyModel;
use crate::families::figures::Figure;
use crate::families::shared::{FamilySpec, FamilyTypes, Scheduled, outcome_with_load_and_steal};

use model::{CommandOptions, CommandOutcome, CommandSpec};

/// The command family's type, for the traits every layer reaches a family through.
pub struct Command;

impl FamilyTypes for Command {
    type Options = CommandOptions;
    type Outcome = CommandOutcome;
}

impl FamilyModel for Command {
    const NAME: &'static str = "command";
    const FIGURES: &'static [&'static Figure] = figures::ALL;

    fn declared() -> Vec<&'static Figure> {
        figures::declared()
    }

    /// The program line and its declared figures are lists themselves.
    fn whole_value_keys() -> &'static [&'static str] {
        &["cmd", "figures"]
    }

    /// `--figure` is the flag; a suite declares its figures as a list under `figures`.
    fn key_hint(key: &str) -> Option<&'static str> {
        (key == "figure").then_some(
            "a suite declares a command's figures as a list of tables: figures = [{ name = \"p99_us\", \
             regex = '99\\.0th: +(\\d+)', unit = \"us\", better = \"lower\" }]",
        )
    }
}

impl FamilySpec for CommandSpec {
    fn scheduled(&self) -> Scheduled<'_> {
        Scheduled { policy: self.policy, load: &self.load }
    }
    /// A command's tasks are unknown: assume they can cover every CPU.
    fn most_tasks(&self, cpus: usize) -> usize {
        cpus
    }
}

outcome_with_load_and_steal!(CommandOutcome, {
    fn parsed(&self, key: &str) -> Option<f64> {
        self.parsed.get(key).copied()
    }
    fn judged(&self) -> Option<&str> {
        self.judged.as_deref()
    }
});
