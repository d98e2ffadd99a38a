//! `schedlab latency`: once per policy asked for, in the order asked, each run a trial.
//! Text and JSON show each policy's report as it is measured (the run draws its own live
//! line on the terminal, so there is no bar); csv and markdown print `show`'s table at the
//! end. Ctrl-C ends the run with the samples taken: the policies after it are not run.

use super::model::{LatencyLength, LatencyOutcome, LatencySpec};
use super::report;
use crate::error::Result;
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Sink;
use crate::exec::runner::append_to;
use crate::exec::suite::Trial;
use crate::families::list::{Outcome, TrialSpec};
use crate::model::cell::{axis, Cell};
use crate::report::cells::RunRule;
use crate::report::exporter::{tables_text, Format};
use crate::report::json_line;
use crate::report::live::{Door, LiveReport};
use crate::report::output::emit;
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// The files a latency run writes beside its report, each made before anything runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct LatencyFiles {
    pub histogram: Option<PathBuf>,
    pub samples: Option<PathBuf>,
    /// A Chrome trace of the recorded tracepoints (it turns tracing on).
    pub trace_out: Option<PathBuf>,
}

pub(crate) fn door(mut specs: Vec<LatencySpec>, format: Format, files: LatencyFiles) -> Result<Door<'static>> {
    if files.trace_out.is_some() {
        specs.iter_mut().for_each(|s| s.beside.trace = true);
    }
    let extras = Extras {
        histogram: files.histogram.clone(),
        samples: files.samples.clone(),
        trace_out: files.trace_out.clone(),
        live_line: std::io::stderr().is_terminal(),
        keep_partial: true,
        activations: None,
        rt_app_log: false,
    };
    let trials = specs
        .iter()
        .enumerate()
        .map(|(seq, spec)| {
            let params = Cell::from_iter([(axis::POLICY, spec.policy.as_str().into())]);
            Trial::of_command(seq, TrialSpec::Latency(spec.clone()), 1, params)
        })
        .collect();
    Ok(Door {
        limit: trial_limit(&specs),
        checks: Box::new(move || {
            // Every policy is checked (and its threads' CPUs resolved) before the first runs.
            for spec in &specs {
                super::trial::preflight(spec)?;
            }
            // The load is the same for every policy: checked once, started afresh for each.
            if let Some(spec) = specs.first() {
                crate::exec::preflight::load(&spec.beside.load)?;
            }
            // Create the output files first: an unwritable path must fail before the run;
            // each run appends its part.
            for path in [&files.histogram, &files.samples, &files.trace_out].into_iter().flatten() {
                crate::report::output::create_output(path)?;
            }
            // The Chrome trace's JSON array: opened here, each run appends its events,
            // closed at the end (a viewer also opens one a failed run left unclosed).
            append_to(files.trace_out.as_deref(), |out| out.write_all(b"[\n"))?;
            let several = specs.len() > 1;
            Ok(Box::new(LatencyLive { format, several, trace_out: files.trace_out, outcomes: Vec::new() }))
        }),
        trials,
        extras,
        bar: None,
        label: Box::new(|_| String::new()),
    })
}

struct LatencyLive {
    format: Format,
    /// More than one policy: a table comparing them at the end instead of each one's
    /// thread table.
    several: bool,
    trace_out: Option<PathBuf>,
    outcomes: Vec<(LatencySpec, LatencyOutcome)>,
}

impl Sink for LatencyLive {
    /// Each policy's report as soon as it is measured (text, json). A run that failed gets
    /// a JSON line too (its status, figures null); stderr said why.
    fn take(&mut self, trial: &Trial, record: &TrialRecord, notes: &TrialNotes, _: &ProgressBar) -> Result<()> {
        let TrialSpec::Latency(spec) = &trial.spec else { return Ok(()) };
        if self.format == Format::Json && !record.is_ok() {
            return emit(&json_line(&report::failed_line(spec, &record.status)));
        }
        let Some(Outcome::Latency(outcome)) = &record.outcome else { return Ok(()) };
        if !record.is_ok() {
            return Ok(());
        }
        if self.format == Format::Json {
            for line in report::lines(spec, outcome) {
                emit(&json_line(&line))?;
            }
        } else if self.format == Format::Text {
            emit(notes.description.as_deref().unwrap_or_default())?;
            if let Some(load) = &outcome.beside.load {
                emit(&crate::report::load_line(load))?;
            }
            if !self.several {
                emit(&report::thread_table(outcome))?;
            }
            emit(&report::spike_lines(spec, outcome))?;
            let culprits = report::culprit_lines(outcome);
            if !culprits.is_empty() {
                emit(&culprits)?;
            }
        }
        self.outcomes.push((spec.clone(), outcome.clone()));
        Ok(())
    }
}

impl LiveReport for LatencyLive {
    fn end(&mut self, records: &[TrialRecord], _: i32) -> Result<()> {
        append_to(self.trace_out.as_deref(), |out| out.write_all(super::trial::trace_file_end().as_bytes()))?;
        if self.several && self.format == Format::Text {
            emit(&report::compare_table(&self.outcomes))?;
        }
        if !matches!(self.format, Format::Text | Format::Json) {
            emit(tables_text(records, &RunRule::default(), self.format).trim_end())?;
        }
        Ok(())
    }
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
