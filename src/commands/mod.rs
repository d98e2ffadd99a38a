//! One function per subcommand: from validated arguments to printed results.

pub mod ab;
pub mod compare;
pub mod output;
pub mod report;
pub mod results;
pub mod run;
pub mod rusage;
pub mod shell;
pub mod trend;

use crate::cli::{Cli, Command};
use crate::error::Result;

/// Run the chosen subcommand; the `Ok` value is the process exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Ring(args) => crate::families::ring::subcommand::run(&args),
        Command::Rusage(args) => rusage::run(&args),
        Command::Workload(args) => crate::families::workload::subcommand::run(&args),
        Command::Command(args) => crate::families::command::subcommand::run(&args),
        Command::Taskset(args) => crate::families::taskset::subcommand::run(&args),
        Command::Server(args) => crate::families::server::subcommand::run(&args),
        Command::Latency(args) => crate::families::latency::subcommand::run(&args),
        Command::Run(args) => run::run(&args),
        Command::Ab(args) => ab::run(&args),
        Command::Suites(args) => run::suites(&args).map(|_| 0),
        Command::Machine(args) => results::machine(&args).map(|_| 0),
        Command::List(args) => results::list(&args).map(|_| 0),
        Command::Show(args) => results::show(&args).map(|_| 0),
        Command::Delete(args) => results::delete(&args).map(|_| 0),
        Command::Export(args) => results::export(&args).map(|_| 0),
        Command::Import(args) => results::import(&args).map(|_| 0),
        Command::Push(args) => results::push(&args).map(|_| 0),
        Command::Compare(args) => compare::run(&args),
        Command::Report(args) => compare::report(&args).map(|_| 0),
        Command::Trend(args) => trend::run(&args),
        Command::Completions(args) => shell::completions(args.shell).map(|_| 0),
        Command::Man(args) => shell::man(&args).map(|_| 0),
        Command::Trial => crate::exec::runner::trial_child(),
    }
}
