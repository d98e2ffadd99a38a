//! The one trial pipeline. Every command that measures — `ring`, `workload`, `latency`,
//! `run` and `ab` — hands each of its trials to [`Pipeline::trial`]: the trial runs in the
//! one executor (a fresh `schedlab __trial` process), and its record goes to the command's
//! sinks (the store, live text or JSON lines) while the progress bar stays out of their way.
//!
//! The rule for a trial that fails (a member died, a figure could not be taken, it ran past
//! its timeout), the same for every command: its record keeps the reason, one line on
//! stderr says it (`schedlab: trial ring procs=4 #1 (timed_out): measurement timed out: …`),
//! and the next trial runs; the command then exits 3 ([`Pipeline::exit_code`]; `run` also
//! counts a resumed run's earlier trials, and warm-ups, which are never stored). What stops
//! everything at once: a signal (Ctrl-C, SIGTERM, SIGHUP), a trial that could not be set up
//! (the machine changed since the checks before the first trial), or a sink that cannot
//! take a record (a full disk, a closed pipe).

use crate::error::{Error, Result};
use crate::exec::family::{Extras, TrialNotes};
use crate::exec::runner::{Ended, Orchestrator};
use crate::exec::suite::Trial;
use crate::model::settings::Settings;
use crate::model::TrialStatus;
use crate::store::{Store, TrialRecord};
use crate::sys::settings::Switch;
use indicatif::ProgressBar;

/// Where a finished trial's record goes.
pub trait Sink {
    /// Take the record of `trial`; `notes` are what the trial said beside its outcome.
    /// Printing goes through `bar.suspend`, so the bar never tears a line.
    fn take(&mut self, trial: &Trial, record: &TrialRecord, notes: &TrialNotes, bar: &ProgressBar) -> Result<()>;
}

/// A command's own handling (a live row, a JSON line), as a closure.
impl<F> Sink for F
where
    F: FnMut(&Trial, &TrialRecord, &TrialNotes, &ProgressBar) -> Result<()>,
{
    fn take(&mut self, trial: &Trial, record: &TrialRecord, notes: &TrialNotes, bar: &ProgressBar) -> Result<()> {
        self(trial, record, notes, bar)
    }
}

/// The results store: each finished trial is committed before the next starts (warm-ups
/// run but are never stored).
pub struct StoreSink<'a> {
    pub store: &'a mut Store,
    pub run_id: i64,
}

impl Sink for StoreSink<'_> {
    fn take(&mut self, trial: &Trial, record: &TrialRecord, _: &TrialNotes, _: &ProgressBar) -> Result<()> {
        if !trial.is_warmup() {
            self.store.insert_trial(self.run_id, record)?;
        }
        Ok(())
    }
}

/// The orchestrator, the bar and what the command asks of every trial, driving trials one
/// at a time.
pub struct Pipeline<'a> {
    orchestrator: &'a mut Orchestrator,
    bar: &'a ProgressBar,
    extras: Extras,
    failed: usize,
    /// Settings in force for every trial until released (an A/B block's side).
    held: Option<Switch>,
}

impl<'a> Pipeline<'a> {
    pub fn new(orchestrator: &'a mut Orchestrator, bar: &'a ProgressBar, extras: Extras) -> Pipeline<'a> {
        Pipeline { orchestrator, bar, extras, failed: 0, held: None }
    }

    /// Run one trial and hand its record to every sink, in order; a signal that arrived
    /// before it stops the run instead.
    pub fn trial(&mut self, trial: &Trial, sinks: &mut [&mut dyn Sink]) -> Result<(TrialRecord, TrialNotes)> {
        if let Some(sig) = self.orchestrator.pending_signal() {
            return Err(Error::Interrupted(sig));
        }
        let bar = self.bar;
        // A trial that names settings (a suite's `cgroup`, `sysctl`, ... key) runs switched
        // to them, and switched back after; else under the settings held, if any.
        let mut own = match &trial.settings {
            Some(settings) => Some(Switch::apply(settings)?),
            None => None,
        };
        let mut switch = own.as_mut().or(self.held.as_mut());
        let before = switch.as_ref().and_then(|s| s.group_stat());
        self.orchestrator.place_trials_in(switch.as_ref().map(|s| s.join_fds()).unwrap_or_default());
        let ended = self.orchestrator.run_trial(trial, &self.extras, &mut |w| bar.suspend(|| eprintln!("{w}")));
        self.orchestrator.place_trials_in(Vec::new());
        let mut record = match ended? {
            Ended::Recorded(record) => *record,
            Ended::Stop(e) => return Err(e),
        };
        let mut lost = None;
        if let Some(s) = switch.as_mut() {
            if let Some(o) = record.outcome.as_mut() {
                o.set_cgroup(s.figures_since(before));
            }
            lost = s.lost();
            if let Some(reason) = &lost {
                record.status = TrialStatus::Failed(reason.clone());
                record.outcome = None;
            }
        }
        let notes = self.orchestrator.take_notes();
        if !record.is_ok() {
            self.failed += 1;
            let reason = record.status.reason().unwrap_or_default().to_string();
            let error = match record.status {
                TrialStatus::TimedOut(_) => Error::TimedOut(reason),
                _ => Error::Failed(reason),
            };
            bar.suspend(|| eprintln!("schedlab: trial {} ({}): {error}", trial.label(), record.status.label()));
        }
        for sink in sinks.iter_mut() {
            sink.take(trial, &record, &notes, bar)?;
        }
        if let Some(reason) = lost {
            return Err(Error::env(format!(
                "{reason}: the run stopped, since the trials after it would not measure the scheduler asked for"
            )));
        }
        drop(own);
        Ok((record, notes))
    }

    /// Hold `settings` switched for every trial until [`release`](Self::release) (an A/B
    /// block's side); switched back when released or when the pipeline is dropped.
    pub fn hold(&mut self, settings: &Settings) -> Result<()> {
        self.held = None;
        if !settings.is_empty() {
            self.held = Some(Switch::apply(settings)?);
        }
        Ok(())
    }

    /// Switch back what [`hold`](Self::hold) switched.
    pub fn release(&mut self) {
        self.held = None;
    }

    /// A family command's whole sequence: each of `trials` in order as [`trial`](Self::trial)
    /// with `sinks`, the bar showing its `label` and advancing by its `weight`, then cleared
    /// whatever happened. A trial that ended on a signal with its samples kept (latency's
    /// Ctrl-C) ends the sequence. The records of the trials that ran.
    pub fn run_all<'t>(
        &mut self,
        trials: impl IntoIterator<Item = &'t Trial>,
        sinks: &mut [&mut dyn Sink],
        label: impl Fn(&Trial) -> String,
        weight: impl Fn(&Trial) -> u64,
    ) -> Result<Vec<TrialRecord>> {
        let mut records = Vec::new();
        for trial in trials {
            self.bar.set_message(label(trial));
            let (record, notes) = match self.trial(trial, sinks) {
                Ok(ran) => ran,
                Err(e) => {
                    self.bar.finish_and_clear();
                    return Err(e);
                }
            };
            records.push(record);
            self.bar.inc(weight(trial));
            if notes.interrupted.is_some() {
                break;
            }
        }
        self.bar.finish_and_clear();
        Ok(records)
    }

    /// How many trials failed or timed out so far.
    pub fn failed(&self) -> usize {
        self.failed
    }

    /// The command's exit status once its trials are done: 3 when any failed.
    pub fn exit_code(&self) -> i32 {
        if self.failed > 0 {
            3
        } else {
            0
        }
    }

    /// The orchestrator, for work between trials that its signal watch should stop too
    /// (an A/B side's setup command).
    pub fn orchestrator(&mut self) -> &mut Orchestrator {
        self.orchestrator
    }

    pub fn bar(&self) -> &'a ProgressBar {
        self.bar
    }
}
