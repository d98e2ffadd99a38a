//! `schedlab taskset FILE`: a described task set under each policy asked for, in blocks of
//! random order through the one trial pipeline; per trial a table of its tasks, then the
//! table of the cells and, with two policies or more, which keeps furthest from the
//! deadlines and the evidence (the run's findings, as a suite's).

use crate::cli::{TableFormat, TasksetArgs};
use crate::commands::output::{emit, emit_cells_and_findings, progress_bar, start_blocks};
use crate::error::Result;
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Pipeline;
use crate::exec::suite::Trial;
use crate::families::list::TrialSpec;
use crate::families::shared::SpecSource;
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::time::Duration;

pub fn run(args: &TasksetArgs) -> Result<i32> {
    let specs = args.options.to_specs()?;
    // The signal watch comes first: every thread started later inherits the blocked mask.
    let limit = specs.iter().map(|s| s.duration).max().unwrap_or_default() * 2 + Duration::from_secs(60);
    let mut orchestrator = start_blocks(&specs, limit)?;
    // The activations go to FILE.partial, made with its header after the checks, before
    // anything runs (an unwritable path fails first); each trial appends its rows. Only a
    // run whose every trial succeeded renames it to FILE: an existing FILE is kept until
    // then, and a failed or interrupted run leaves no partial file behind.
    let partial = match &args.activations {
        Some(path) => {
            use std::io::Write;
            let partial = Partial::new(path);
            let mut file = crate::commands::output::create_output(&partial.path)?;
            writeln!(file, "{}", super::kernel::ACTIVATIONS_HEADER)
                .map_err(|e| crate::commands::output::cannot_write(&partial.path, &e))?;
            Some(partial)
        }
        None => None,
    };
    let format = args.output.format();
    let blocks = args.blocks.repeat as usize;
    let seed = args.blocks.seed();
    let all: Vec<TrialSpec> = specs.iter().cloned().map(TrialSpec::Taskset).collect();
    let trials = Trial::in_blocks(&all, blocks, seed, |spec| {
        crate::model::cell::Cell::from_iter([(crate::model::cell::axis::POLICY, spec.policy().as_str().into())])
    });
    if format == TableFormat::Text {
        emit(&format!(
            "schedlab: {} task(s), {} thread(s), {:.0}% of a CPU, {} s a trial, under {}; {blocks} block(s) in random \
             order (seed {seed})",
            specs[0].tasks.len(),
            specs[0].threads(),
            specs[0].utilisation() * 100.0,
            specs[0].duration.as_secs_f64(),
            specs
                .iter()
                .map(|s| if s.reclaim { format!("{} (reclaiming)", s.policy) } else { s.policy.to_string() })
                .collect::<Vec<_>>()
                .join(", ")
        ))?;
    }
    let extras = Extras { activations: partial.as_ref().map(|p| p.path.clone()), ..Extras::default() };
    let bar = progress_bar(trials.len() as u64, "trials");
    let mut pipeline = Pipeline::new(&mut orchestrator, &bar, extras);
    let mut live = |trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar| -> Result<()> {
        let TrialSpec::Taskset(spec) = &trial.spec else { return Ok(()) };
        match format {
            TableFormat::Json => {
                let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
                bar.suspend(|| emit(&crate::report::json_line(&line)))
            }
            TableFormat::Text => {
                let Some(o) = record.outcome.as_ref().and_then(|o| o.taskset()) else { return Ok(()) };
                let title = format!("block {}: {}", trial.repeat, spec.policy);
                let mut text = format!("\n{title}\n{}", super::report::task_table(spec, o).render().trim_end());
                if let Some(dropped) = o.activations_dropped.filter(|&d| d > 0) {
                    text.push_str(&format!(
                        "\nwarning: {dropped} activations not written to the --activations file (the writer's channel \
                         was full: they are in the figures, not in the file)"
                    ));
                }
                for line in super::report::miss_lines(o) {
                    text.push_str(&format!("\n{line}"));
                }
                bar.suspend(|| emit(&text))
            }
            TableFormat::Csv | TableFormat::Markdown => Ok(()),
        }
    };
    let label = |t: &Trial| format!("block {}/{blocks}: {}", t.repeat, t.spec.policy());
    let records = pipeline.run_all(&trials, &mut [&mut live], label, |_| 1)?;
    let exit_code = pipeline.exit_code();
    if let Some(partial) = partial {
        if exit_code == 0 {
            partial.finish()?;
        } else {
            eprintln!(
                "schedlab: {} not written: a trial failed, so its activations are incomplete",
                partial.target.display()
            );
        }
    }
    emit_cells_and_findings(&records, format)?;
    Ok(exit_code)
}

/// `FILE.partial` while the activations are written: removed when dropped unless
/// `finish` renamed it to FILE.
struct Partial {
    path: std::path::PathBuf,
    target: std::path::PathBuf,
    done: bool,
}

impl Partial {
    fn new(target: &std::path::Path) -> Partial {
        let mut name = target.as_os_str().to_owned();
        name.push(".partial");
        Partial { path: name.into(), target: target.to_path_buf(), done: false }
    }

    fn finish(mut self) -> Result<()> {
        std::fs::rename(&self.path, &self.target)
            .map_err(|e| crate::commands::output::cannot_write(&self.target, &e))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
