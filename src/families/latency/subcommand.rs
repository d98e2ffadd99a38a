//! `schedlab latency`: validate, measure (once per policy, each run a trial of the one
//! executor), report.

use crate::cli::{LatencyArgs, TableFormat};
use crate::commands::output::emit;
use crate::error::{describe_io, Error, Result};
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Pipeline;
use crate::exec::preflight;
use crate::exec::runner::Orchestrator;
use crate::exec::suite::Trial;
use crate::families::latency::model::{LatencyLength, LatencyOutcome, LatencySpec};
use crate::families::latency::report;
use crate::families::list::{Outcome, TrialSpec};
use crate::report::cells::RunRule;
use crate::report::exporter::tables_text;
use crate::report::json_line;
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

pub fn run(args: &LatencyArgs) -> Result<i32> {
    let mut specs = args.options.to_specs_comparing(args.compare_policies.as_ref())?;
    if args.trace_out.is_some() {
        specs.iter_mut().for_each(|s| s.beside.trace = true);
    }
    // The signal watch comes first: every thread started later inherits the blocked mask.
    let mut orchestrator = Orchestrator::new(trial_limit(&specs))?;
    // Every policy is checked (and its threads' CPUs resolved) before the first runs.
    for spec in &specs {
        super::trial::preflight(spec)?;
    }
    // The load is the same for every policy: checked once, started afresh for each.
    if let Some(spec) = specs.first() {
        preflight::load(&spec.beside.load)?;
    }
    // Create the output files first: an unwritable path must fail before the run; each
    // run appends its part.
    create_output(args.histogram.as_deref())?;
    create_output(args.samples.as_deref())?;
    create_output(args.trace_out.as_deref())?;
    // The Chrome trace's JSON array: opened here, each run appends its events, closed at
    // the end (a viewer also opens one a failed run left unclosed).
    append_text(args.trace_out.as_deref(), "[\n")?;
    let extras = Extras {
        histogram: args.histogram.clone(),
        samples: args.samples.clone(),
        trace_out: args.trace_out.clone(),
        live_line: std::io::stderr().is_terminal(),
        keep_partial: true,
        activations: None,
    };
    let format = args.output.format();
    // csv and markdown print show's table of the runs at the end, text and json as they go.
    let streaming = matches!(format, TableFormat::Text | TableFormat::Json);
    let mut outcomes: Vec<(LatencySpec, LatencyOutcome)> = Vec::new();
    // The run draws its own live line on the terminal; no bar.
    let bar = ProgressBar::hidden();
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, extras);
    // Each policy's report as soon as it is measured (text, json); csv and markdown wait.
    let several = specs.len() > 1;
    // A run that failed gets a JSON line too (its status, figures null); stderr said why.
    let mut live = |trial: &Trial, record: &TrialRecord, notes: &TrialNotes, _: &ProgressBar| -> Result<()> {
        let TrialSpec::Latency(spec) = &trial.spec else { return Ok(()) };
        if format == TableFormat::Json && !record.is_ok() {
            return emit(&json_line(&report::failed_line(spec, &record.status)));
        }
        let Some(Outcome::Latency(outcome)) = &record.outcome else { return Ok(()) };
        if !record.is_ok() {
            return Ok(());
        }
        if format == TableFormat::Json {
            for line in report::lines(spec, outcome) {
                emit(&json_line(&line))?;
            }
        } else if streaming {
            emit(notes.description.as_deref().unwrap_or_default())?;
            if let Some(load) = &outcome.beside.load {
                emit(&crate::report::load_line(load))?;
            }
            if !several {
                emit(&report::thread_table(outcome))?;
            }
            emit(&report::spike_lines(spec, outcome))?;
            let culprits = report::culprit_lines(outcome);
            if !culprits.is_empty() {
                emit(&culprits)?;
            }
        }
        outcomes.push((spec.clone(), outcome.clone()));
        Ok(())
    };
    let trials: Vec<Trial> = specs
        .iter()
        .enumerate()
        .map(|(seq, spec)| {
            let params =
                crate::model::cell::Cell::from_iter([(crate::model::cell::axis::POLICY, spec.policy.as_str().into())]);
            Trial::of_command(seq, TrialSpec::Latency(spec.clone()), 1, params)
        })
        .collect();
    // Ctrl-C ends the run with the samples taken: the policies after it are not run.
    let records = pipeline.run_all(&trials, &mut [&mut live], |_| String::new(), |_| 1)?;
    append_text(
        args.trace_out.as_deref(),
        &format!("{}]\n", super::kernel::ChromeEvent::process_name(0, "schedlab".into()).text()),
    )?;
    if specs.len() > 1 && format == TableFormat::Text {
        emit(&report::compare_table(&outcomes))?;
    }
    if !streaming {
        emit(tables_text(&records, &RunRule::default(), format).trim_end())?;
    }
    Ok(pipeline.exit_code())
}

/// The executor's hard limit for one run: its duration (or a generous bound on its
/// loops) with room to set up and tear down; the run normally ends itself long before.
fn trial_limit(specs: &[LatencySpec]) -> Duration {
    let grace = Duration::from_secs(60);
    specs
        .iter()
        .map(|s| match s.length {
            LatencyLength::Duration(d) => d + grace,
            // Every period can overrun at most once before the next is taken.
            LatencyLength::Loops(n) => {
                Duration::from_nanos(s.interval_ns.saturating_mul(n).saturating_mul(4)).saturating_add(grace)
            }
        })
        .max()
        .unwrap_or(grace)
}

fn append_text(path: Option<&Path>, text: &str) -> Result<()> {
    use std::io::Write;
    let Some(path) = path else { return Ok(()) };
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Error::env(format!("cannot write {}: {}", path.display(), describe_io(&e))))
}

fn create_output(path: Option<&Path>) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    std::fs::File::create(path)
        .map(drop)
        .map_err(|e| Error::env(format!("cannot write {}: {}", path.display(), describe_io(&e))))
}
