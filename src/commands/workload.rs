//! `schedlab workload`: the policy x workload matrix, every check before the first fork.

use crate::bench::workload::run_trial;
use crate::cli::{WorkloadArgs, WorkloadFormat};
use crate::commands::{emit, progress_bar};
use crate::error::Result;
use crate::exec::preflight;
use crate::model::TrialStatus;
use crate::report::figures;
use crate::report::workload::{self as report, LiveTrial};
use serde_json::Value;

pub fn run(args: &WorkloadArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    preflight::workload(&specs)?;
    let load_plan = preflight::load(&specs[0].load)?;
    let dir = preflight::work_dir(&specs)?;
    let repeats = args.repeat as usize;
    let bar = progress_bar((specs.len() * repeats) as u64, "trials");
    let json = args.json;
    let classic = !json && args.format == WorkloadFormat::Classic;
    if !json && !classic {
        emit(&report::describe(&specs[0], args.repeat))?;
    }
    let mut trials = Vec::with_capacity(specs.len() * repeats);
    for spec in &specs {
        if classic {
            bar.suspend(|| emit(&report::classic_heading(spec)))?;
        }
        for repeat in 1..=repeats {
            bar.set_message(format!("{} x {} ({}/{repeats})", spec.policy.kernel_name(), spec.procs, repeat));
            let measured = crate::sys::load::Load::start_if(load_plan.as_ref())
                .and_then(|load| run_trial(spec, repeat, dir.as_ref()).map(|t| (t, load)));
            let trial = match measured {
                Ok((t, load)) => {
                    let mut trial = LiveTrial { spec: spec.clone(), repeat, outcome: t.outcome(), status: t.status };
                    if let (Some(load), Some(outcome)) = (load, trial.outcome.as_mut()) {
                        match load.finish() {
                            Ok(o) => outcome.load = Some(o),
                            Err(crate::error::Error::Failed(reason)) => {
                                trial.status = TrialStatus::Failed(reason);
                                trial.outcome = None;
                            }
                            Err(e) => {
                                bar.finish_and_clear();
                                return Err(e);
                            }
                        }
                    }
                    trial
                }
                Err(e) => {
                    bar.finish_and_clear();
                    return Err(e);
                }
            };
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
    if !json && !classic {
        emit(&report::table(&trials))?;
        if let Some(reservations) = report::reservation_table(&trials) {
            emit(&reservations)?;
        }
    }
    Ok(if trials.iter().all(|t| t.status.is_ok()) { 0 } else { 3 })
}
