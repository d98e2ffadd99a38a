//! `schedlab taskset FILE`: a described task set under each policy asked for, in blocks of
//! random order; per trial a table of its tasks, then the table of the cells and, with two
//! policies or more, which keeps furthest from the deadlines and the evidence (the run's
//! findings, as a suite's).

use super::model::TasksetSpec;
use crate::error::{Error, Result};
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::pipeline::Sink;
use crate::exec::suite::Trial;
use super::task::Phase;
use crate::families::list::TrialSpec;
use crate::model::cell::{axis, Cell};
use crate::report::exporter::Format;
use crate::report::live::{Blocks, Door, LiveReport};
use crate::report::output::{cannot_write, emit, emit_cells_and_findings};
use crate::store::TrialRecord;
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `activations`: the CSV file each activation is written to, if asked.
pub(crate) fn door(
    specs: Vec<TasksetSpec>,
    format: Format,
    blocks: u32,
    seed: u64,
    activations: Option<&Path>,
    rt_app_log: bool,
) -> Result<Door<'static>> {
    if specs.is_empty() {
        return Err(Error::usage("no policy to run the task set under"));
    }
    if let Some(dir) = activations.filter(|dir| rt_app_log && dir.exists()) {
        return Err(Error::usage(format!(
            "{} exists: --activations-format rt-app makes a new directory for the threads' logs; give another path",
            dir.display()
        )));
    }
    let limit = specs.iter().map(|s| s.duration).max().unwrap_or_default() * 2 + Duration::from_secs(60);
    let partial = activations.map(|target| Partial::new(target, rt_app_log));
    let extras =
        Extras { activations: partial.as_ref().map(|p| p.path.clone()), rt_app_log, ..Extras::default() };
    let blocks_of = Blocks { specs, blocks, seed, limit, unit: "trials", extras };
    Ok(blocks_of.door(
        |spec| Cell::from_iter([(axis::POLICY, spec.policy().as_str().into())]),
        move |specs| {
            // The activations go to FILE.partial, made with its header after the checks,
            // before anything runs (an unwritable path fails first); each trial appends
            // its rows. Only a run whose every trial succeeded renames it to FILE: an
            // existing FILE is kept until then, and a failed or interrupted run leaves no
            // partial file behind.
            if let Some(partial) = &partial {
                super::trial::start_activations(&partial.path, partial.dir)
                    .map_err(|e| cannot_write(&partial.path, &e))?;
            }
            Ok(Box::new(TasksetLive { specs, format, blocks, seed, partial }))
        },
    ))
}

struct TasksetLive {
    specs: Vec<TasksetSpec>,
    format: Format,
    blocks: u32,
    seed: u64,
    partial: Option<Partial>,
}

impl Sink for TasksetLive {
    fn take(&mut self, trial: &Trial, record: &TrialRecord, _: &TrialNotes, bar: &ProgressBar) -> Result<()> {
        let TrialSpec::Taskset(spec) = &trial.spec else { return Ok(()) };
        match self.format {
            Format::Json => {
                let line = super::report::line(spec, trial.repeat as usize, &record.status, record.outcome.as_ref());
                bar.suspend(|| emit(&crate::report::json_line(&line)))
            }
            Format::Text => {
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
            Format::Csv | Format::Markdown => Ok(()),
        }
    }
}

impl LiveReport for TasksetLive {
    fn start(&mut self) -> Result<()> {
        if self.format == Format::Text {
            let first = &self.specs[0];
            // A loop paced by other threads asks for a share no one knows beforehand.
            let paced = first.tasks.iter().flat_map(|t| &t.phases).any(Phase::is_paced);
            emit(&format!(
                "schedlab: {} task(s), {} thread(s), {:.0}% of a CPU{}, {} s a trial, under {}; {} block(s) in random \
                 order (seed {})",
                first.tasks.len(),
                first.threads(),
                first.utilisation() * 100.0,
                if paced { " and loops paced by their wakers" } else { "" },
                first.duration.as_secs_f64(),
                self.specs
                    .iter()
                    .map(|s| if s.reclaim { format!("{} (reclaiming)", s.policy) } else { s.policy.to_string() })
                    .collect::<Vec<_>>()
                    .join(", "),
                self.blocks,
                self.seed
            ))?;
            if !first.rt_app_unused.is_empty() {
                emit(&format!("schedlab: the rt-app file's global keys read and not used: {}", first.rt_app_unused.join(", ")))?;
            }
        }
        Ok(())
    }

    fn end(&mut self, records: &[TrialRecord], exit_code: i32) -> Result<()> {
        if let Some(partial) = self.partial.take() {
            if exit_code == 0 {
                partial.finish()?;
            } else {
                eprintln!(
                    "schedlab: {} not written: a trial failed, so its activations are incomplete",
                    partial.target.display()
                );
            }
        }
        emit_cells_and_findings(records, self.format)
    }
}

/// `FILE.partial` (a directory of rt-app's logs: `DIR.partial`) while the activations are
/// written: removed when dropped unless `finish` renamed it to FILE.
struct Partial {
    path: PathBuf,
    target: PathBuf,
    dir: bool,
    done: bool,
}

impl Partial {
    fn new(target: &Path, dir: bool) -> Partial {
        let mut name = target.as_os_str().to_owned();
        name.push(".partial");
        Partial { path: name.into(), target: target.to_path_buf(), dir, done: false }
    }

    fn finish(mut self) -> Result<()> {
        std::fs::rename(&self.path, &self.target).map_err(|e| cannot_write(&self.target, &e))?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if !self.done {
            let _ = if self.dir { std::fs::remove_dir_all(&self.path) } else { std::fs::remove_file(&self.path) };
        }
    }
}
