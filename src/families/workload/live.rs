//! `schedlab workload`: the policy x workload matrix. Each repeat is a block that runs
//! every policy x procs cell once, in an order drawn from the workload's `--seed` (so a
//! run is reproduced by its flags), every check before the first fork. A trial shows as a
//! JSON or classic line as it ends; the summary table per cell waits for them all.

use super::model::WorkloadSpec;
use super::report::{self, LiveTrial};
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
use crate::store::TrialRecord;
use indicatif::ProgressBar;

/// How workload results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadFormat {
    /// A summary table per policy x procs (mean, sd, median, min, max over repeats)
    #[value(alias = "table")]
    Text,
    /// One JSON object per trial per line
    Json,
    /// The table `schedlab show` prints, as CSV
    Csv,
    /// The table `schedlab show` prints, as Markdown
    Markdown,
    /// The 2014 study's own line per trial: wall=… user=… system=… CPU=…% i-switched=… v-switched=…
    Classic,
}

pub(crate) fn door(specs: Vec<WorkloadSpec>, repeats: u32, format: WorkloadFormat) -> Result<Door<'static>> {
    let Some(first) = specs.first().cloned() else { return Err(Error::usage("no workload cell to run")) };
    // Each trial stops itself at its --timeout; the executor's limit only backs that up.
    let limit = specs.iter().map(|s| s.timeout).max().unwrap_or_default() + std::time::Duration::from_secs(60);
    let all: Vec<TrialSpec> = specs.iter().cloned().map(TrialSpec::Workload).collect();
    let trials = Trial::in_blocks(&all, repeats as usize, first.params.seed, |spec| match spec {
        TrialSpec::Workload(w) => {
            Cell::from_iter([(axis::POLICY, w.policy.as_str().into()), (axis::PROCS, w.procs.into())])
        }
        _ => Cell::new(),
    });
    Ok(Door {
        limit,
        checks: Box::new(move || {
            super::trial::preflight(&specs)?;
            crate::exec::preflight::load(&specs[0].beside.load)?;
            // Refuse an unwritable or too small work directory now; each trial makes its own.
            drop(super::trial::work_dir(&specs)?);
            Ok(Box::new(WorkloadLive { specs, repeats, format, trials: Vec::new(), headed: None }))
        }),
        trials,
        extras: Extras::default(),
        bar: Some(("trials", |_| 1)),
        label: Box::new(move |t: &Trial| {
            let procs = t.spec.procs().unwrap_or(0);
            format!("{} x {procs} ({}/{repeats})", t.spec.policy().kernel_name(), t.repeat)
        }),
    })
}

struct WorkloadLive {
    /// In the order of the flags: the order of the tables' rows.
    specs: Vec<WorkloadSpec>,
    repeats: u32,
    format: WorkloadFormat,
    trials: Vec<LiveTrial>,
    /// The cell whose classic heading the last classic line is under.
    headed: Option<WorkloadSpec>,
}

impl Sink for WorkloadLive {
    /// Each trial, failed ones too, as a JSON or classic line at once and a row of the
    /// table at the end.
    fn take(&mut self, trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar) -> Result<()> {
        let TrialSpec::Workload(spec) = &trial.spec else { return Ok(()) };
        let outcome = match &record.outcome {
            Some(Outcome::Workload(o)) => Some(o.clone()),
            _ => None,
        };
        let live = LiveTrial { spec: spec.clone(), outcome, status: record.status.clone() };
        match self.format {
            WorkloadFormat::Json => {
                let line = report::line(spec, trial.repeat as usize, &live.status, live.outcome.as_ref());
                bar.suspend(|| emit(&crate::report::json_line(&line)))?;
            }
            WorkloadFormat::Classic => {
                // The study's heading before each run of one cell's lines.
                if self.headed.as_ref() != Some(spec) {
                    bar.suspend(|| emit(&report::classic_heading(spec)))?;
                    self.headed = Some(spec.clone());
                }
                bar.suspend(|| emit(&report::classic_line(&live.status, live.outcome.as_ref())))?;
            }
            WorkloadFormat::Text | WorkloadFormat::Csv | WorkloadFormat::Markdown => {}
        }
        self.trials.push(live);
        Ok(())
    }
}

impl LiveReport for WorkloadLive {
    fn start(&mut self) -> Result<()> {
        if self.format == WorkloadFormat::Text {
            emit(&report::describe(&self.specs[0], self.repeats))?;
        }
        Ok(())
    }

    fn end(&mut self, records: &[TrialRecord], _: i32) -> Result<()> {
        // The blocks ran the cells in random order; the tables keep the flags' order.
        let place = |spec: &WorkloadSpec| self.specs.iter().position(|s| s == spec).unwrap_or(usize::MAX);
        self.trials.sort_by_key(|t| place(&t.spec));
        let mut records: Vec<&TrialRecord> = records.iter().collect();
        records.sort_by_key(|r| match &r.spec {
            Some(TrialSpec::Workload(spec)) => place(spec),
            _ => usize::MAX,
        });
        let records: Vec<TrialRecord> = records.into_iter().cloned().collect();
        match self.format {
            WorkloadFormat::Text => {
                emit(&report::table(&self.trials))?;
                if let Some(reservations) = report::reservation_table(&self.trials) {
                    emit(&reservations)?;
                }
                if let Some(off_cpu) = report::off_cpu_lines(&self.trials) {
                    emit(&off_cpu)?;
                }
            }
            WorkloadFormat::Csv => emit(tables_text(&records, &RunRule::default(), Format::Csv).trim_end())?,
            WorkloadFormat::Markdown => emit(tables_text(&records, &RunRule::default(), Format::Markdown).trim_end())?,
            WorkloadFormat::Json | WorkloadFormat::Classic => {}
        }
        Ok(())
    }
}
