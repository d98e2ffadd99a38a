//! `schedlab ring`: a sweep of ring sizes, each a trial, printed as the NCAR table (a row
//! as each ring ends) or JSON lines, or `show`'s table at the end (csv, markdown). A size
//! that fails is said on stderr, the sweep goes on, and the exit status is 3.

use super::model::{RingLength, RingSpec};
use super::report::{describe_setup, failed_line, hop_line, table_header, RingReport};
use crate::error::{Error, Result};
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Sink;
use crate::exec::suite::Trial;
use crate::families::list::{Outcome, TrialSpec};
use crate::model::cell::{axis, Cell};
use crate::report::cells::RunRule;
use crate::report::exporter::{tables_text, Format};
use crate::report::live::{Door, LiveReport};
use crate::report::output::emit;
use crate::report::{json_line, load_line};
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::time::Duration;

/// `specs`: ascending ring sizes that differ only in size.
pub(crate) fn door(specs: Vec<RingSpec>, format: Format) -> Result<Door<'static>> {
    let (Some(first), Some(largest)) = (specs.first().cloned(), specs.last().cloned()) else {
        return Err(Error::usage("no ring size to run: give --procs"));
    };
    // A ring with --timeout stops itself; the executor's limit only backs that up.
    let limit = first.timeout.map_or(Duration::from_secs(7 * 24 * 3600), |t| t + Duration::from_secs(30));
    let trials = specs
        .into_iter()
        .enumerate()
        .map(|(seq, spec)| {
            let params = Cell::from_iter([(axis::PROCS, spec.procs.into())]);
            Trial::of_command(seq, TrialSpec::Ring(spec), 1, params)
        })
        .collect();
    Ok(Door {
        limit,
        checks: Box::new(move || {
            let cpus = super::trial::preflight(&largest)?;
            crate::exec::preflight::load(&first.beside.load)?;
            Ok(Box::new(RingLive { first, cpus, format, report: RingReport::default(), rows: 0 }))
        }),
        trials,
        extras: Extras::default(),
        // Work is proportional to hops, so the bar advances by ring size.
        bar: Some(("members", |t| t.spec.procs().unwrap_or(0) as u64)),
        label: Box::new(label),
    })
}

fn label(t: &Trial) -> String {
    match &t.spec {
        TrialSpec::Ring(RingSpec { procs, length: RingLength::Laps(l), .. }) => {
            format!("ring of {procs} ({} hops)", l * *procs as u64)
        }
        TrialSpec::Ring(RingSpec { procs, length: RingLength::Duration(d), .. }) => {
            format!("ring of {procs} for {:.1} s", d.as_secs_f64())
        }
        _ => String::new(),
    }
}

struct RingLive {
    first: RingSpec,
    /// The CPUs the largest ring may use, as the checks found them.
    cpus: Vec<usize>,
    format: Format,
    report: RingReport,
    rows: usize,
}

impl RingLive {
    fn streaming(&self) -> bool {
        matches!(self.format, Format::Text | Format::Json)
    }
}

impl Sink for RingLive {
    /// The live row of each ring that measured: the setup and header before the first. A
    /// ring that did not finish gets a JSON line too (its status, figures null); the text
    /// table has no row for it (stderr said why).
    fn take(&mut self, trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar) -> Result<()> {
        let TrialSpec::Ring(spec) = &trial.spec else { return Ok(()) };
        let json = self.format == Format::Json;
        if json && !record.is_ok() {
            return bar.suspend(|| emit(&json_line(&failed_line(spec, &record.status))));
        }
        let Some(Outcome::Ring(outcome)) = &record.outcome else { return Ok(()) };
        if !self.streaming() || !record.is_ok() {
            return Ok(());
        }
        bar.suspend(|| -> Result<()> {
            if self.rows == 0 && !json {
                // Each trial measures the token pass without a switch; the first one's is shown.
                emit(&describe_setup(&self.first, &self.cpus, outcome.overhead_ps))?;
                if !self.first.beside.load.is_none() {
                    emit(&format!(
                        "background load: {} (each ring runs beside a fresh one)",
                        self.first.beside.load.describe()
                    ))?;
                }
                emit(&table_header())?;
            }
            self.rows += 1;
            if json {
                return emit(&json_line(&self.report.json(spec, outcome)));
            }
            emit(&self.report.table_row(spec, outcome))?;
            if let Some(load) = &outcome.beside.load {
                emit(&format!("    {}", load_line(load)))?;
            }
            if let Some(trace) = &outcome.trace {
                emit(&format!("    {}", hop_line(trace, outcome.hops)))?;
            }
            Ok(())
        })
    }
}

impl LiveReport for RingLive {
    fn end(&mut self, records: &[TrialRecord], _: i32) -> Result<()> {
        if !self.streaming() {
            emit(tables_text(records, &RunRule::default(), self.format).trim_end())?;
        }
        Ok(())
    }
}
