//! `schedlab command -- CMD`: the user's program as a family. Each repeat is a block that
//! runs the program once under every policy asked for, in random order, through the one
//! trial pipeline; then the table of the cells and, with two policies or more, which is
//! best and the evidence (the run's findings, as a suite's).

use crate::analysis::random::SplitMix64;
use crate::cli::{CommandArgs, TableFormat};
use crate::commands::{emit, progress_bar};
use crate::error::Result;
use crate::exec::pipeline::Pipeline;
use crate::exec::preflight;
use crate::exec::runner::{Extras, Orchestrator, TrialNotes};
use crate::exec::suite::Trial;
use crate::model::{CommandSpec, TrialSpec};
use crate::report::exporter::tables_text;
use crate::report::stored::RunRule;
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use serde_json::Value;
use std::time::Duration;

pub fn run(args: &CommandArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    // Each run stops itself at its --timeout; the executor's limit only backs that up.
    let limit = specs.iter().map(|s| s.timeout).max().unwrap_or_default() + Duration::from_secs(60);
    let mut orchestrator = Orchestrator::new(limit)?;
    for spec in &specs {
        super::trial::preflight(spec)?;
    }
    if let Some(spec) = specs.first() {
        preflight::load(&spec.load)?;
    }
    let format = args.output.format();
    let blocks = args.repeat as usize;
    let seed = args.seed.unwrap_or_else(|| crate::sys::clock::monotonic_ns() ^ u64::from(std::process::id()));
    let trials = plan(&specs, blocks, seed);
    let bar = progress_bar(trials.len() as u64, "runs");
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, Extras::default());
    // A JSON line per run as it ends; the tables and findings wait for them all.
    let mut live = |trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar| -> Result<()> {
        let TrialSpec::Command(spec) = &trial.spec else { return Ok(()) };
        if format == TableFormat::Json {
            let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
            bar.suspend(|| emit(&Value::Object(line).to_string()))?;
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
    match format {
        TableFormat::Json => {}
        TableFormat::Text => {
            emit(tables_text(&records, &RunRule::default(), format).trim_end())?;
            let found = crate::report::findings::findings(&records);
            if let Some(line) = crate::report::findings::questions_line(&found) {
                emit(&format!("\n{line}"))?;
            }
            for f in &found {
                emit(&format!("- {f}"))?;
            }
        }
        TableFormat::Csv | TableFormat::Markdown => {
            emit(tables_text(&records, &RunRule::default(), format).trim_end())?
        }
    }
    Ok(exit_code)
}

/// The runs in order: block by block, each policy once per block in a shuffled order.
fn plan(specs: &[CommandSpec], blocks: usize, seed: u64) -> Vec<Trial> {
    let mut rng = SplitMix64::new(seed);
    let mut trials = Vec::with_capacity(specs.len() * blocks);
    for block in 1..=blocks {
        let mut order: Vec<usize> = (0..specs.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for i in order {
            let spec = &specs[i];
            let params = serde_json::Map::from_iter([
                ("cmd".to_string(), Value::from(spec.argv.clone())),
                ("policy".to_string(), Value::from(spec.policy.as_str())),
            ]);
            trials.push(Trial::of_command(trials.len(), TrialSpec::Command(spec.clone()), block as u32, params));
        }
    }
    trials
}
