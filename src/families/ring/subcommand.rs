//! `schedlab ring`: a sweep of ring sizes, each a trial of the one executor, printed as
//! the NCAR table or JSON lines.

use crate::cli::{RingArgs, TableFormat};
use crate::commands::output::{emit, progress_bar};
use crate::error::Result;
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Pipeline;
use crate::exec::preflight;
use crate::exec::runner::Orchestrator;
use crate::exec::suite::Trial;
use crate::families::list::{Outcome, TrialSpec};
use crate::families::ring::model::{RingLength, RingSpec};
use crate::families::ring::report::{describe_setup, table_header, RingReport};
use crate::families::shared::SpecSource;
use crate::report::cells::RunRule;
use crate::report::exporter::tables_text;
use crate::report::json_line;
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::time::Duration;

pub fn run(args: &RingArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    sweep(&specs, args.output.format())
}

/// Run `specs` (ascending ring sizes that differ only in size) and stream each row (text,
/// json), or print `show`'s table of the sweep at the end (csv, markdown). Every check
/// that can refuse the sweep runs before the first fork; a size that fails is said on
/// stderr, the sweep goes on, and the exit status is 3.
pub fn sweep(specs: &[RingSpec], format: TableFormat) -> Result<i32> {
    let json = format == TableFormat::Json;
    let streaming = matches!(format, TableFormat::Text | TableFormat::Json);
    let (Some(first), Some(largest)) = (specs.first(), specs.last()) else { return Ok(0) };
    // The signal watch comes first: every thread started later inherits the blocked mask.
    // A ring with --timeout stops itself; the executor's limit only backs that up.
    let limit = first.timeout.map_or(Duration::from_secs(7 * 24 * 3600), |t| t + Duration::from_secs(30));
    let mut orchestrator = Orchestrator::new(limit)?;
    let cpus = super::trial::preflight(largest)?;
    preflight::load(&first.beside.load)?;
    // Work is proportional to hops, so the bar advances by ring size.
    let total: u64 = specs.iter().map(|s| s.procs as u64).sum();
    let bar = progress_bar(total, "members");
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, Extras::default());
    let mut report = RingReport::default();
    let mut rows = 0;
    // The live row of each ring that measured: the setup and header before the first. A
    // ring that did not finish gets a JSON line too (its status, figures null); the text
    // table has no row for it (stderr said why).
    let mut live = |trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar| -> Result<()> {
        let TrialSpec::Ring(spec) = &trial.spec else { return Ok(()) };
        if json && !record.is_ok() {
            return bar.suspend(|| emit(&json_line(&super::report::failed_line(spec, &record.status))));
        }
        let Some(Outcome::Ring(outcome)) = &record.outcome else { return Ok(()) };
        if !streaming || !record.is_ok() {
            return Ok(());
        }
        bar.suspend(|| -> Result<()> {
            if rows == 0 && !json {
                // Each trial measures the token pass without a switch; the first one's is shown.
                emit(&describe_setup(first, &cpus, outcome.overhead_ps))?;
                if !first.beside.load.is_none() {
                    emit(&format!(
                        "background load: {} (each ring runs beside a fresh one)",
                        first.beside.load.describe()
                    ))?;
                }
                emit(&table_header())?;
            }
            rows += 1;
            if json {
                return emit(&json_line(&report.json(spec, outcome)));
            }
            emit(&report.table_row(spec, outcome))?;
            if let Some(load) = &outcome.beside.load {
                emit(&format!("    {}", crate::report::load_line(load)))?;
            }
            if let Some(trace) = &outcome.trace {
                emit(&format!("    {}", crate::families::ring::report::hop_line(trace, outcome.hops)))?;
            }
            Ok(())
        })
    };
    let trials: Vec<Trial> = specs
        .iter()
        .enumerate()
        .map(|(seq, spec)| {
            let params = crate::model::cell::Cell::from_iter([(crate::model::cell::axis::PROCS, spec.procs.into())]);
            Trial::of_command(seq, TrialSpec::Ring(spec.clone()), 1, params)
        })
        .collect();
    let size = |t: &Trial| t.spec.procs().unwrap_or(0);
    let label = |t: &Trial| match &t.spec {
        TrialSpec::Ring(RingSpec { procs, length: RingLength::Laps(l), .. }) => {
            format!("ring of {procs} ({} hops)", l * *procs as u64)
        }
        TrialSpec::Ring(RingSpec { procs, length: RingLength::Duration(d), .. }) => {
            format!("ring of {procs} for {:.1} s", d.as_secs_f64())
        }
        _ => String::new(),
    };
    let records = pipeline.run_all(&trials, &mut [&mut live], label, |t| size(t) as u64)?;
    if !streaming {
        emit(tables_text(&records, &RunRule::default(), format).trim_end())?;
    }
    Ok(pipeline.exit_code())
}
