//! `schedlab workload`: the policy x workload matrix, every check before the first fork,
//! each trial run by the one executor.

use crate::cli::{TableFormat, WorkloadArgs, WorkloadFormat};
use crate::commands::output::{emit, progress_bar};
use crate::error::Result;
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Pipeline;
use crate::exec::preflight;
use crate::exec::runner::Orchestrator;
use crate::exec::suite::Trial;
use crate::families::list::{Outcome, TrialSpec};
use crate::families::shared::SpecSource;
use crate::families::workload::report::{self as report, LiveTrial};
use crate::report::cells::RunRule;
use crate::report::exporter::tables_text;
use crate::store::TrialRecord;
use indicatif::ProgressBar;

pub fn run(args: &WorkloadArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    // Each trial stops itself at its --timeout; the executor's limit only backs that up.
    let limit = specs.iter().map(|s| s.timeout).max().unwrap_or_default() + std::time::Duration::from_secs(60);
    let mut orchestrator = Orchestrator::new(limit)?;
    super::trial::preflight(&specs)?;
    preflight::load(&specs[0].beside.load)?;
    // Refuse an unwritable or too small work directory now; each trial makes its own.
    drop(super::trial::work_dir(&specs)?);
    let repeats = args.repeat as usize;
    let bar = progress_bar((specs.len() * repeats) as u64, "trials");
    let format = args.format();
    let json = format == WorkloadFormat::Json;
    let classic = format == WorkloadFormat::Classic;
    let text = format == WorkloadFormat::Text;
    if text {
        emit(&report::describe(&specs[0], args.repeat))?;
    }
    let mut trials = Vec::with_capacity(specs.len() * repeats);
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, Extras::default());
    // Each trial, failed ones too, as a JSON or classic line at once and a row of the table
    // at the end.
    let mut live = |trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar| -> Result<()> {
        let TrialSpec::Workload(spec) = &trial.spec else { return Ok(()) };
        let outcome = match &record.outcome {
            Some(Outcome::Workload(o)) => Some(o.clone()),
            _ => None,
        };
        let repeat = trial.repeat as usize;
        let live = LiveTrial { spec: spec.clone(), outcome, status: record.status.clone() };
        if classic && repeat == 1 {
            bar.suspend(|| emit(&report::classic_heading(spec)))?;
        }
        if json {
            let line = super::report::line(spec, repeat, &live.status, live.outcome.as_ref());
            bar.suspend(|| emit(&crate::report::json_line(&line)))?;
        } else if classic {
            bar.suspend(|| emit(&report::classic_line(&live.status, live.outcome.as_ref())))?;
        }
        trials.push(live);
        Ok(())
    };
    let plan: Vec<Trial> = specs
        .iter()
        .flat_map(|spec| (1..=repeats).map(move |repeat| (spec, repeat)))
        .enumerate()
        .map(|(seq, (spec, repeat))| {
            let params = crate::model::cell::Cell::from_iter([
                (crate::model::cell::axis::POLICY, spec.policy.as_str().into()),
                (crate::model::cell::axis::PROCS, spec.procs.into()),
            ]);
            Trial::of_command(seq, TrialSpec::Workload(spec.clone()), repeat as u32, params)
        })
        .collect();
    let label = |t: &Trial| {
        let procs = t.spec.procs().unwrap_or(0);
        format!("{} x {procs} ({}/{repeats})", t.spec.policy().kernel_name(), t.repeat)
    };
    let records = pipeline.run_all(&plan, &mut [&mut live], label, |_| 1)?;
    let exit_code = pipeline.exit_code();
    match format {
        WorkloadFormat::Text => {
            emit(&report::table(&trials))?;
            if let Some(reservations) = report::reservation_table(&trials) {
                emit(&reservations)?;
            }
            if let Some(off_cpu) = report::off_cpu_lines(&trials) {
                emit(&off_cpu)?;
            }
        }
        WorkloadFormat::Csv | WorkloadFormat::Markdown => {
            let as_table = if format == WorkloadFormat::Csv { TableFormat::Csv } else { TableFormat::Markdown };
            emit(tables_text(&records, &RunRule::default(), as_table).trim_end())?;
        }
        WorkloadFormat::Json | WorkloadFormat::Classic => {}
    }
    Ok(exit_code)
}
