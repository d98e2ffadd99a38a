//! The command family: any program, measured as a family — its whole process tree's
//! times, switches and CPU wait, and figures parsed from its output.

pub mod kernel;
pub mod model;
pub mod report;
pub mod subcommand;
pub mod trial;

use crate::error::Result;
use crate::families::{FamilyModel, FamilyOutcome, FamilySpec};
use crate::model::figures::{self, Figure};
use crate::model::{LoadOutcome, LoadSpec, Policy, Steal};
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

impl FamilyOutcome for CommandOutcome {
    fn load(&self) -> Option<&LoadOutcome> {
        self.load.as_ref()
    }
    fn set_load(&mut self, load: Option<LoadOutcome>) {
        self.load = load;
    }
    fn steal(&self) -> Option<&Steal> {
        self.steal.as_ref()
    }
    fn set_steal(&mut self, steal: Option<Steal>) {
        self.steal = steal;
    }
    fn cgroup(&self) -> Option<&crate::model::settings::CgroupFigures> {
        self.cgroup.as_ref()
    }
    fn set_cgroup(&mut self, cgroup: Option<crate::model::settings::CgroupFigures>) {
        self.cgroup = cgroup;
    }
}
