//! The one front door of `schedlab ring|workload|latency|command|taskset|server`: each
//! family plans its [`Door`] from its flags (`families/<name>/live.rs`), and every door is
//! run the same way: the signal watch, the checks, the heading, the trials through the
//! one pipeline, the tables.

use crate::error::Result;
use crate::exec::pipeline::{Pipeline, Sink};
use crate::exec::runner::Orchestrator;
use crate::report::live::Door;
use crate::report::output::progress_bar;

pub(crate) fn run(door: Door) -> Result<i32> {
    // The signal watch comes first: every thread started later inherits the blocked mask.
    let mut orchestrator = Orchestrator::new(door.limit)?;
    let mut report = (door.checks)()?;
    report.start()?;
    let (bar, weight) = match door.bar {
        Some((unit, weight)) => (progress_bar(door.trials.iter().map(weight).sum(), unit), weight),
        None => (indicatif::ProgressBar::hidden(), (|_| 1) as fn(&_) -> u64),
    };
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, door.extras);
    let sink: &mut dyn Sink = &mut *report;
    let records = pipeline.run_all(&door.trials, &mut [sink], &door.label, weight)?;
    let exit_code = pipeline.exit_code();
    report.end(&records, exit_code)?;
    Ok(exit_code)
}
