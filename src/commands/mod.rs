//! One function per subcommand: from validated arguments to printed results.

pub mod ab;
pub mod compare;
pub mod latency;
pub mod report;
pub mod results;
pub mod ring;
pub mod run;
pub mod rusage;
pub mod shell;
pub mod trend;
pub mod workload;

use crate::cli::{Cli, Command};
use crate::error::{Error, Result};
use std::io::{IsTerminal, Write};

/// Run the chosen subcommand; the `Ok` value is the process exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Ring(args) => ring::run(&args).map(|_| 0),
        Command::Rusage(args) => rusage::run(&args),
        Command::Workload(args) => workload::run(&args),
        Command::Latency(args) => latency::run(&args),
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

/// Print one line of results to stdout at once (so a reader piping into `tee` sees each
/// row as it is measured). A closed pipe (`| head`) ends the run quietly.
pub fn emit(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{line}").and_then(|_| out.flush());
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Error::Interrupted(libc::SIGPIPE)),
        Err(e) => Err(Error::os("writing results to stdout", e)),
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
pub fn progress_bar(total: u64, unit: &str) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    let template = format!("{{bar:30}} {{pos}}/{{len}} {unit}  {{msg}}  ETA {{eta}}");
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}
