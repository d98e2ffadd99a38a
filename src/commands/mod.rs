//! One function per subcommand: from validated arguments to printed results.

pub(crate) mod ab;
pub(crate) mod compare;
pub(crate) mod family;
pub(crate) mod report;
pub(crate) mod results;
pub(crate) mod run;
pub(crate) mod rusage;
pub(crate) mod shell;
pub(crate) mod trend;

use crate::cli::{Cli, CliCommand};
use crate::error::Result;

/// Run the chosen subcommand; the `Ok` value is the process exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        CliCommand::Family(command) => family::run(command.door()?),
        CliCommand::Rusage(args) => rusage::run(&args),
        CliCommand::Run(args) => run::run(&args),
        CliCommand::Ab(args) => ab::run(&args),
        CliCommand::Suites(args) => run::suites(&args).map(|_| 0),
        CliCommand::Machine(args) => results::machine(&args).map(|_| 0),
        CliCommand::List(args) => results::list(&args).map(|_| 0),
        CliCommand::Show(args) => results::show(&args).map(|_| 0),
        CliCommand::Delete(args) => results::delete(&args).map(|_| 0),
        CliCommand::Export(args) => results::export(&args).map(|_| 0),
        CliCommand::Import(args) => results::import(&args).map(|_| 0),
        CliCommand::Push(args) => results::push(&args).map(|_| 0),
        CliCommand::Compare(args) => compare::run(&args),
        CliCommand::Report(args) => compare::report(&args).map(|_| 0),
        CliCommand::Trend(args) => trend::run(&args),
        CliCommand::Completions(args) => shell::completions(args.shell).map(|_| 0),
        CliCommand::Man(args) => shell::man(&args).map(|_| 0),
        CliCommand::Trial => crate::exec::runner::trial_child(),
    }
}
