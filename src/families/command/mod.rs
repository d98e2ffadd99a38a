//! The command family: any program, measured as a family — its whole process tree's
//! times, switches and CPU wait, and figures parsed from its output.

pub mod kernel;
pub mod model;
pub mod report;
pub mod subcommand;
pub mod trial;

use crate::error::Result;
use crate::families::{outcome_with_load_and_steal, FamilyModel, FamilySpec};
use crate::model::figures::{self, Figure};
use crate::model::{LoadSpec, Policy};
use model::{CommandOptions, CommandOutcome, CommandSpec};

/// The command family's type, for the traits every layer reaches a family through.
pub struct Command;

impl FamilyModel for Command {
    const NAME: &'static str = "command";
    type Options = CommandOptions;
    type Spec = CommandSpec;

    fn figures() -> &'static [&'static Figure] {
        figures::command::ALL
    }

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

    fn to_specs(options: &CommandOptions) -> Result<Vec<CommandSpec>> {
        options.to_specs()
    }
}

impl FamilySpec for CommandSpec {
    fn load(&self) -> &LoadSpec {
        &self.load
    }
    fn policy(&self) -> Policy {
        self.policy
    }
}

outcome_with_load_and_steal!(CommandOutcome);
