//! Executes a plan: every trial in a fresh process (`schedlab __trial`, a re-exec of
//! this binary), so a policy, affinity or rlimit set for one trial can never leak into
//! the orchestrator or the next trial. Each finished trial is committed to the store
//! before the next starts; Ctrl-C, SIGTERM or a full disk stop the run with what was
//! stored intact and resumable.

use crate::error::{describe_io, signal_name, Error, Result};
use crate::exec::family::{Extras, FamilyTrial, Reply, TrialNotes};
use crate::exec::preflight;
use crate::exec::suite::Trial;
use crate::families::on_each;
use crate::families::{Outcome, TrialSpec};
use crate::model::TrialStatus;
use crate::store::{now_utc, TrialRecord};
use crate::sys::rusage::ExitKind;
use crate::sys::signals::SignalWatch;
use crate::sys::{process, sched};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// What the orchestrator sends a trial process on stdin.
#[derive(serde::Serialize, serde::Deserialize)]
struct Job {
    spec: TrialSpec,
    repeat: u32,
    #[serde(default)]
    extras: Extras,
}

/// The body of `schedlab __trial`: read a job, measure it, print the outcome.
pub fn trial_child() -> Result<i32> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| Error::os("reading the trial job", e))?;
    let job: Job = serde_json::from_str(&input).map_err(|e| Error::usage(format!("a malformed trial job: {e}")))?;
    let reply = match measure(&job.spec, job.repeat, &job.extras) {
        Ok(reply) => reply,
        Err(Error::Failed(m)) => Reply { status: TrialStatus::Failed(m), outcome: None, notes: TrialNotes::default() },
        Err(Error::TimedOut(m)) => {
            Reply { status: TrialStatus::TimedOut(m), outcome: None, notes: TrialNotes::default() }
        }
        Err(e) => return Err(e),
    };
    let text = serde_json::to_string(&reply).map_err(|e| Error::failed(format!("encoding the outcome: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").and_then(|_| out.flush()).map_err(|e| Error::os("writing the trial outcome", e))?;
    Ok(0)
}

/// Check, set up and run one spec in this process: the one place a trial is measured,
/// for `run`, `ab` and the family commands alike.
fn measure(spec: &TrialSpec, repeat: u32, extras: &Extras) -> Result<Reply> {
    on_each!(TrialSpec, spec, s => s.measure(repeat, extras))
}

/// Append what `write` writes to `path` (created by the command before the run), if asked.
pub fn append_to(path: Option<&Path>, write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let failed = |e: std::io::Error| Error::env(format!("writing {}: {}", path.display(), describe_io(&e)));
    let file = std::fs::OpenOptions::new().append(true).open(path).map_err(failed)?;
    let mut out = std::io::BufWriter::new(file);
    write(&mut out).and_then(|()| out.flush()).map_err(failed)
}

/// How a trial ended, from the orchestrator's side.
pub enum Ended {
    /// The trial ended, well or not: its record (what a command's sinks receive).
    Recorded(Box<TrialRecord>),
    /// The run must stop: a signal arrived, or the trial could not be set up.
    Stop(Error),
}

/// Runs trial processes one at a time and watches the signals that stop a run.
pub struct Orchestrator {
    signals: SignalWatch,
    trial_timeout: Duration,
    seen_warnings: Vec<String>,
    last_notes: TrialNotes,
    /// `cgroup.procs` descriptors each trial process joins (a `cgroup` setting's groups).
    join_cgroups: Vec<std::os::fd::RawFd>,
}

impl Orchestrator {
    /// Must be made before any thread is started, so every thread has the signals blocked.
    pub fn new(trial_timeout: Duration) -> Result<Orchestrator> {
        let signals = SignalWatch::new(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
            .map_err(|e| Error::os("watching for Ctrl-C and SIGTERM", e))?;
        // What a schedlab killed outright left switched is switched back before anything runs.
        crate::sys::settings::recover_and_say();
        Ok(Orchestrator {
            signals,
            trial_timeout,
            seen_warnings: Vec::new(),
            last_notes: TrialNotes::default(),
            join_cgroups: Vec::new(),
        })
    }

    /// Put the next trials' processes in these groups (open `cgroup.procs` files, kept
    /// open by the caller's `sys::settings::Switch`); empty: in schedlab's own.
    pub fn place_trials_in(&mut self, procs: Vec<std::os::fd::RawFd>) {
        self.join_cgroups = procs;
    }

    /// The watch over Ctrl-C, SIGTERM and SIGHUP, for a command run between trials that
    /// should be stopped by them too.
    pub fn signals(&self) -> &SignalWatch {
        &self.signals
    }

    /// A signal that arrived between trials.
    pub fn pending_signal(&self) -> Option<i32> {
        self.signals.drain().into_iter().next()
    }

    /// What the last trial said beside its outcome (a latency run's description, the
    /// signal that ended it early).
    pub fn take_notes(&mut self) -> TrialNotes {
        std::mem::take(&mut self.last_notes)
    }

    /// Run one trial to its end and say what to record, or why the run must stop; a family
    /// command's trial asks for its `extras` (a suite's ask for none). Commands call it
    /// through `exec::pipeline`, which applies the rule for a failed trial.
    ///
    /// While the trial runs, this process sleeps in one poll over the trial's pidfd,
    /// its output, the signals and a deadline timer: no thread, no periodic wakeup. It
    /// keeps off the CPUs the trial measures on, and stays SCHED_OTHER unless RT
    /// throttling is off and the trial is real-time: only then could a runaway trial
    /// starve it, so only then does it wait at SCHED_FIFO 99, raised after the spawn.
    pub fn run_trial(&mut self, trial: &Trial, extras: &Extras, on_warning: &mut dyn FnMut(&str)) -> Result<Ended> {
        self.last_notes = TrialNotes::default();
        let started = now_utc();
        let t0 = Instant::now();
        let job = Job { spec: trial.spec.clone(), repeat: trial.repeat.max(1), extras: extras.clone() };
        let job = serde_json::to_vec(&job).map_err(|e| Error::failed(format!("encoding a trial job: {e}")))?;
        let exe = std::env::current_exe().map_err(|e| Error::os("finding schedlab's own executable", e))?;
        let mut command = std::process::Command::new(exe);
        command.arg("__trial");
        let options = process::Options {
            // SIGTERM, not SIGKILL: a trial whose orchestrator was killed outright still
            // stops its children and removes its work directory.
            die_with_parent: Some(libc::SIGTERM),
            stdin: process::Input::Bytes(job),
            capture_output: true,
            avoid_cpus: preflight::measured_cpus(&trial.spec),
            rt_watchdog: preflight::is_realtime(&trial.spec) && sched::rt_throttling_off(),
            join_cgroups: self.join_cgroups.clone(),
            // A command's own --timeout is the user's limit for it: the executor's backs
            // it up, never cuts it short.
            timeout: Some(on_each!(TrialSpec, &trial.spec, s => s.executor_timeout(self.trial_timeout))),
            ..process::Options::default()
        };
        let steal_from = crate::sys::steal::StealMark::now();
        let running = process::spawn(&mut command, options).map_err(|e| Error::os("starting a trial process", e))?;
        let finished = running.supervise(Some(&self.signals)).map_err(|e| Error::os("waiting for a trial", e))?;
        let steal = steal_from.until_now();
        if !matches!(finished.exit, ExitKind::Code(0)) {
            // Killed outright, it could not remove what it made: do it for it.
            on_each!(TrialSpec, &trial.spec, s => s.sweep_after_kill());
        }
        let (out, err, stop_signal, timed_out) =
            (&finished.stdout, &finished.stderr, finished.stop_signal, finished.timed_out);
        let elapsed_s = t0.elapsed().as_secs_f64();
        let err_text = String::from_utf8_lossy(err).to_string();
        for line in err_text.lines().filter(|l| l.contains("warning:")) {
            if !self.seen_warnings.iter().any(|w| w == line) {
                self.seen_warnings.push(line.to_string());
                on_warning(line);
            }
        }
        let reason_from_stderr = || {
            err_text
                .lines()
                .filter(|l| !l.contains("warning:"))
                .map(|l| l.trim_start_matches("schedlab: ").to_string())
                .next_back()
                .unwrap_or_default()
        };
        let record = |status: TrialStatus, outcome: Option<Outcome>| TrialRecord {
            seq: trial.seq as i64,
            experiment: trial.experiment as i64,
            family: trial.family,
            repeat: i64::from(trial.repeat),
            params: trial.params.clone(),
            spec: Some(trial.spec.clone()),
            outcome,
            status,
            started: started.clone(),
            elapsed_s,
        };
        if let Some(sig) = stop_signal {
            // A run that keeps its samples on a signal ends with them as its reply.
            let partial = extras.keep_partial && matches!(finished.exit, ExitKind::Code(0));
            match serde_json::from_slice::<Reply>(out).ok().filter(|_| partial) {
                None => return Ok(Ended::Stop(Error::Interrupted(sig))),
                Some(reply) => {
                    self.last_notes = TrialNotes { interrupted: Some(sig), ..reply.notes };
                    return Ok(Ended::Recorded(Box::new(record(reply.status, reply.outcome))));
                }
            }
        }
        let failed = |reason: String| Ok(Ended::Recorded(Box::new(record(TrialStatus::Failed(reason), None))));
        if timed_out {
            let reason =
                format!("ran past the trial timeout of {:.0} s and was stopped", self.trial_timeout.as_secs_f64());
            return Ok(Ended::Recorded(Box::new(record(TrialStatus::TimedOut(reason), None))));
        }
        match finished.exit {
            ExitKind::Code(0) => match serde_json::from_slice::<Reply>(out) {
                Ok(mut reply) => {
                    self.last_notes = reply.notes;
                    if let Some(o) = reply.outcome.as_mut() {
                        o.set_steal(steal);
                    }
                    Ok(Ended::Recorded(Box::new(record(reply.status, reply.outcome))))
                }
                Err(e) => failed(format!("unreadable trial outcome: {e}")),
            },
            // Usage or environment: the plan was checked, so the machine changed under us.
            ExitKind::Code(2) => Ok(Ended::Stop(Error::env(reason_from_stderr()))),
            ExitKind::Code(code) if code > 128 => Ok(Ended::Stop(Error::Interrupted(code - 128))),
            ExitKind::Code(code) => {
                let reason = reason_from_stderr();
                failed(if reason.is_empty() { format!("the trial process exited with status {code}") } else { reason })
            }
            ExitKind::Signal(sig) => failed(format!("the trial process was killed by {}", signal_name(sig))),
        }
    }
}
