//! `schedlab taskset FILE`: a described task set under each policy asked for, in blocks of
//! random order through the one trial pipeline; per trial a table of its tasks, then the
//! table of the cells and, with two policies or more, which keeps furthest from the
//! deadlines and the evidence (the run's findings, as a suite's).

use crate::analysis::random::SplitMix64;
use crate::cli::{TableFormat, TasksetArgs};
use crate::commands::{emit, progress_bar};
use crate::error::Result;
use crate::exec::pipeline::Pipeline;
use crate::exec::preflight;
use crate::exec::runner::{Extras, Orchestrator, TrialNotes};
use crate::exec::suite::Trial;
use crate::model::TrialSpec;
use crate::report::exporter::tables_text;
use crate::report::stored::RunRule;
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use serde_json::Value;
use std::time::Duration;

pub fn run(args: &TasksetArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    let limit = specs.iter().map(|s| s.duration).max().unwrap_or_default() * 2 + Duration::from_secs(60);
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
    let mut rng = SplitMix64::new(seed);
    let mut trials = Vec::with_capacity(specs.len() * blocks);
    for block in 1..=blocks {
        let mut order: Vec<usize> = (0..specs.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
        }
        for i in order {
            let params = serde_json::Map::from_iter([("policy".to_string(), Value::from(specs[i].policy.as_str()))]);
            trials.push(Trial::of_command(trials.len(), TrialSpec::Taskset(specs[i].clone()), block as u32, params));
        }
    }
    if format == TableFormat::Text {
        emit(&format!(
            "schedlab: {} task(s), {} thread(s), {:.0}% of a CPU, {} s a trial, under {}; {blocks} block(s) in random \
             order (seed {seed})",
            specs[0].tasks.len(),
            specs[0].threads(),
            specs[0].utilisation() * 100.0,
            specs[0].duration.as_secs_f64(),
            specs.iter().map(|s| s.policy.as_str()).collect::<Vec<_>>().join(", ")
        ))?;
    }
    let bar = progress_bar(trials.len() as u64, "trials");
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, Extras::default());
    let mut live = |trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar| -> Result<()> {
        let TrialSpec::Taskset(spec) = &trial.spec else { return Ok(()) };
        match format {
            TableFormat::Json => {
                let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
                bar.suspend(|| emit(&Value::Object(line).to_string()))
            }
            TableFormat::Text => {
                let Some(o) = record.outcome.as_ref().and_then(|o| o.taskset()) else { return Ok(()) };
                let title = format!("block {}: {}", trial.repeat, spec.policy);
                bar.suspend(|| emit(&format!("\n{title}\n{}", super::report::task_table(spec, o).render().trim_end())))
            }
            TableFormat::Csv | TableFormat::Markdown => Ok(()),
        }
    };
    let label = |t: &Trial| format!("block {}/{blocks}: {}", t.repeat, t.spec.policy());
    let records = pipeline.run_all(&trials, &mut [&mut live], label, |_| 1)?;
    let exit_code = pipeline.exit_code();
    match format {
        TableFormat::Json => {}
        TableFormat::Text => {
            emit(&format!("\n{}", tables_text(&records, &RunRule::default(), format).trim_end()))?;
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
