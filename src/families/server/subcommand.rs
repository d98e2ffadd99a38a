//! `schedlab server`: the server under each policy asked for, in blocks of random order
//! through the one trial pipeline; per trial its rate and percentiles, then the table of
//! the cells and, with two policies or more, which serves with the lowest request p99 and
//! the evidence (the run's findings, as a suite's).

use crate::cli::{ServerArgs, TableFormat};
use crate::commands::output::{emit, emit_cells_and_findings, progress_bar, start_blocks};
use crate::error::Result;
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Pipeline;
use crate::exec::suite::Trial;
use crate::families::list::TrialSpec;
use crate::families::shared::SpecSource;
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::time::Duration;

pub fn run(args: &ServerArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    // The kill limit: the longest a legal trial runs (probes, late sends and the requests in
    // hand included), and a minute to start and stop.
    let limit = specs.iter().map(|s| s.longest()).max().unwrap_or_default() + Duration::from_secs(60);
    let mut orchestrator = start_blocks(&specs, limit)?;
    let format = args.output.format();
    let blocks = args.blocks.repeat as usize;
    let seed = args.blocks.seed();
    let all: Vec<TrialSpec> = specs.iter().cloned().map(TrialSpec::Server).collect();
    let trials = Trial::in_blocks(&all, blocks, seed, |spec| {
        crate::model::cell::Cell::from_iter([(crate::model::cell::axis::POLICY, spec.policy().as_str().into())])
    });
    if format == TableFormat::Text {
        let s = &specs[0];
        emit(&format!(
            "schedlab: {} message thread(s) × {} worker(s), think {} + work {}{}, {} s a trial, under {}; {blocks} \
             block(s) in random order (seed {seed})",
            s.message_threads,
            s.workers,
            crate::model::format_ns(s.think_ns),
            crate::model::format_ns(s.work_ns),
            if s.lock { " under a per-CPU lock" } else { "" },
            s.duration.as_secs_f64(),
            specs.iter().map(|s| s.policy.as_str()).collect::<Vec<_>>().join(", ")
        ))?;
    }
    let bar = progress_bar(trials.len() as u64, "trials");
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, Extras::default());
    let mut live = |trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar| -> Result<()> {
        let TrialSpec::Server(spec) = &trial.spec else { return Ok(()) };
        match format {
            TableFormat::Json => {
                let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
                bar.suspend(|| emit(&crate::report::json_line(&line)))
            }
            TableFormat::Text => {
                let Some(o) = record.outcome.as_ref().and_then(|o| o.server()) else { return Ok(()) };
                let title = format!("block {}: {}", trial.repeat, spec.policy);
                bar.suspend(|| emit(&format!("\n{title}: {}", super::report::text(spec, o))))
            }
            TableFormat::Csv | TableFormat::Markdown => Ok(()),
        }
    };
    let label = |t: &Trial| format!("block {}/{blocks}: {}", t.repeat, t.spec.policy());
    let records = pipeline.run_all(&trials, &mut [&mut live], label, |_| 1)?;
    let exit_code = pipeline.exit_code();
    emit_cells_and_findings(&records, format)?;
    Ok(exit_code)
}
