//! `schedlab ring`: a sweep of ring sizes, each a trial of the one executor, printed as
//! the NCAR table or JSON lines.

use crate::cli::{RingArgs, TableFormat};
use crate::commands::{emit, progress_bar};
use crate::error::{Error, Result};
use crate::exec::preflight;
use crate::exec::runner::{Ended, Extras, Orchestrator};
use crate::model::{Outcome, RingLength, RingOutcome, RingSpec, TrialSpec, TrialStatus};
use crate::report::exporter::tables_text;
use crate::report::ring::{describe_setup, table_header, RingReport};
use crate::report::stored::RunRule;
use serde_json::Value;
use std::time::Duration;

pub fn run(args: &RingArgs) -> Result<Vec<RingOutcome>> {
    let specs = args.options.to_specs()?;
    sweep(&specs, args.output.format())
}

/// Run `specs` (ascending ring sizes that differ only in size) and stream each row (text,
/// json), or print `show`'s table of the sweep at the end (csv, markdown). Every check
/// that can refuse the sweep runs before the first fork.
pub fn sweep(specs: &[RingSpec], format: TableFormat) -> Result<Vec<RingOutcome>> {
    let json = format == TableFormat::Json;
    let streaming = matches!(format, TableFormat::Text | TableFormat::Json);
    let (Some(first), Some(largest)) = (specs.first(), specs.last()) else { return Ok(Vec::new()) };
    // The signal watch comes first: every thread started later inherits the blocked mask.
    // A ring with --timeout stops itself; the executor's limit only backs that up.
    let limit = first.timeout.map_or(Duration::from_secs(7 * 24 * 3600), |t| t + Duration::from_secs(30));
    let mut orchestrator = Orchestrator::new(limit)?;
    let cpus = preflight::ring(largest)?;
    preflight::load(&first.load)?;
    // Work is proportional to hops, so the bar advances by ring size.
    let total: u64 = specs.iter().map(|s| s.procs as u64).sum();
    let bar = progress_bar(total, "members");
    let mut report = RingReport::default();
    let mut results: Vec<RingOutcome> = Vec::with_capacity(specs.len());
    let mut records = Vec::with_capacity(specs.len());
    for spec in specs {
        let what = match spec.length {
            RingLength::Laps(l) => format!("ring of {} ({} hops)", spec.procs, l * spec.procs as u64),
            RingLength::Duration(d) => format!("ring of {} for {:.1} s", spec.procs, d.as_secs_f64()),
        };
        bar.set_message(what);
        let trial = TrialSpec::Ring(spec.clone());
        let params = serde_json::Map::from_iter([("procs".to_string(), serde_json::json!(spec.procs))]);
        let warn = &mut |w: &str| bar.suspend(|| eprintln!("{w}"));
        let ended = orchestrator.run_spec(&trial, 1, params, &Extras::default(), warn);
        let record = match ended {
            Ok(Ended::Stored(record)) => record,
            Ok(Ended::Stop(e)) | Err(e) => {
                bar.finish_and_clear();
                return Err(e);
            }
        };
        let outcome = match (&record.status, &record.outcome) {
            (TrialStatus::Ok, Some(Outcome::Ring(o))) => o.clone(),
            (status, _) => {
                bar.finish_and_clear();
                let reason = status.reason().unwrap_or("no outcome").to_string();
                return Err(match status {
                    TrialStatus::TimedOut(_) => Error::TimedOut(reason),
                    _ => Error::Failed(reason),
                });
            }
        };
        records.push(*record);
        if !streaming {
            bar.inc(spec.procs as u64);
            results.push(outcome);
            continue;
        }
        if results.is_empty() && !json {
            // Each trial measures the token pass without a switch; the first one's is shown.
            bar.suspend(|| -> Result<()> {
                emit(&describe_setup(first, &cpus, outcome.overhead_ps))?;
                if !first.load.is_none() {
                    emit(&format!("background load: {} (each ring runs beside a fresh one)", first.load.describe()))?;
                }
                emit(&table_header())
            })?;
        }
        let line = if json {
            Value::Object(report.json(spec, &outcome)).to_string()
        } else {
            report.table_row(spec, &outcome)
        };
        bar.suspend(|| emit(&line))?;
        if let (false, Some(load)) = (json, &outcome.load) {
            bar.suspend(|| emit(&format!("    {}", crate::report::load_line(load))))?;
        }
        if let (false, Some(trace)) = (json, &outcome.trace) {
            bar.suspend(|| emit(&format!("    {}", crate::report::ring::hop_line(trace, outcome.hops))))?;
        }
        bar.inc(spec.procs as u64);
        results.push(outcome);
    }
    bar.finish_and_clear();
    if !streaming {
        emit(tables_text(&records, &RunRule::default(), format).trim_end())?;
    }
    Ok(results)
}
