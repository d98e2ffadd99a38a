//! `schedlab workload`: the policy x workload matrix, every check before the first fork,
//! each trial run by the one executor.

use crate::cli::{TableFormat, WorkloadArgs, WorkloadFormat};
use crate::commands::{emit, progress_bar};
use crate::error::Result;
use crate::exec::preflight;
use crate::exec::runner::{Ended, Extras, Orchestrator};
use crate::model::{Outcome, TrialSpec, TrialStatus};
use crate::report::exporter::tables_text;
use crate::report::figures;
use crate::report::stored::RunRule;
use crate::report::workload::{self as report, LiveTrial};
use serde_json::Value;

pub fn run(args: &WorkloadArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    // Each trial stops itself at its --timeout; the executor's limit only backs that up.
    let limit = specs.iter().map(|s| s.timeout).max().unwrap_or_default() + std::time::Duration::from_secs(60);
    let mut orchestrator = Orchestrator::new(limit)?;
    preflight::workload(&specs)?;
    preflight::load(&specs[0].load)?;
    // Refuse an unwritable or too small work directory now; each trial makes its own.
    drop(preflight::work_dir(&specs)?);
    let repeats = args.repeat as usize;
    let bar = progress_bar((specs.len() * repeats) as u64, "trials");
    let format = args.format();
    let json = format == WorkloadFormat::Json;
    let classic = format == WorkloadFormat::Classic;
    let text = format == WorkloadFormat::Text;
    let mut records = Vec::with_capacity(specs.len() * repeats);
    if text {
        emit(&report::describe(&specs[0], args.repeat))?;
    }
    let mut trials = Vec::with_capacity(specs.len() * repeats);
    for spec in &specs {
        if classic {
            bar.suspend(|| emit(&report::classic_heading(spec)))?;
        }
        for repeat in 1..=repeats {
            bar.set_message(format!("{} x {} ({}/{repeats})", spec.policy.kernel_name(), spec.procs, repeat));
            let spec_of = TrialSpec::Workload(spec.clone());
            let warn = &mut |w: &str| bar.suspend(|| eprintln!("{w}"));
            let params = serde_json::Map::from_iter([
                ("policy".to_string(), Value::from(spec.policy.as_str())),
                ("procs".to_string(), Value::from(spec.procs)),
            ]);
            let record = match orchestrator.run_spec(&spec_of, repeat as u32, params, &Extras::default(), warn) {
                Ok(Ended::Stored(record)) => record,
                Ok(Ended::Stop(e)) | Err(e) => {
                    bar.finish_and_clear();
                    return Err(e);
                }
            };
            let outcome = match &record.outcome {
                Some(Outcome::Workload(o)) => Some(o.clone()),
                _ => None,
            };
            let trial = LiveTrial { spec: spec.clone(), repeat, outcome, status: record.status.clone() };
            records.push(*record);
            if let TrialStatus::TimedOut(reason) | TrialStatus::Failed(reason) = &trial.status {
                bar.suspend(|| {
                    eprintln!(
                        "schedlab: trial {} x {} #{repeat} {}: {reason}",
                        spec.policy.kernel_name(),
                        spec.procs,
                        trial.status.label()
                    )
                });
            }
            if json {
                let line = figures::workload(spec, repeat, &trial.status, trial.outcome.as_ref());
                bar.suspend(|| emit(&Value::Object(line).to_string()))?;
            } else if classic {
                bar.suspend(|| emit(&report::classic_line(&trial.status, trial.outcome.as_ref())))?;
            }
            bar.inc(1);
            trials.push(trial);
        }
    }
    bar.finish_and_clear();
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
    Ok(if trials.iter().all(|t| t.status.is_ok()) { 0 } else { 3 })
}
