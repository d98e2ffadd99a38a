//! `schedlab command -- CMD`: the user's program as a family. Each repeat is a block that
//! runs the program once under every policy asked for, in random order, through the one
//! trial pipeline; then the table of the cells and, with two policies or more, which is
//! best and the evidence (the run's findings, as a suite's).

use crate::cli::{CommandArgs, TableFormat};
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

pub fn run(args: &CommandArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    // Each run stops itself at its --timeout; the executor's limit only backs that up.
    let limit = specs.iter().map(|s| s.timeout).max().unwrap_or_default() + Duration::from_secs(60);
    let mut orchestrator = start_blocks(&specs, limit)?;
    let format = args.output.format();
    let blocks = args.blocks.repeat as usize;
    let seed = args.blocks.seed();
    let all: Vec<TrialSpec> = specs.iter().cloned().map(TrialSpec::Command).collect();
    let trials = Trial::in_blocks(&all, blocks, seed, |spec| {
        let TrialSpec::Command(c) = spec else { return crate::model::cell::Cell::new() };
        crate::model::cell::Cell::from_iter([
            ("cmd", c.argv.clone().into()),
            (crate::model::cell::axis::POLICY, c.policy.as_str().into()),
        ])
    });
    let bar = progress_bar(trials.len() as u64, "runs");
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, Extras::default());
    // A JSON line per run as it ends; the tables and findings wait for them all.
    let mut live = |trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar| -> Result<()> {
        let TrialSpec::Command(spec) = &trial.spec else { return Ok(()) };
        if format == TableFormat::Json {
            let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
            bar.suspend(|| emit(&crate::report::json_line(&line)))?;
        }
        Ok(())
    };
    if format == TableFormat::Text {
        emit(&format!(
            "schedlab: `{}` under {}, {blocks} block(s) in random order (seed {seed})",
            specs[0].command_line(),
            specs.iter().map(|s| s.policy.as_str()).collect::<Vec<_>>().join(", ")
        ))?;
    }
    let label = |t: &Trial| format!("block {}/{blocks}: {}", t.repeat, t.spec.policy());
    let records = pipeline.run_all(&trials, &mut [&mut live], label, |_| 1)?;
    let exit_code = pipeline.exit_code();
    emit_cells_and_findings(&records, format)?;
    Ok(exit_code)
}
