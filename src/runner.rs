//! Executes a plan: every trial in a fresh process (`schedlab __trial`, a re-exec of
//! this binary), so a policy, affinity or rlimit set for one trial can never leak into
//! the orchestrator or the next trial. Each finished trial is committed to the store
//! before the next starts; Ctrl-C, SIGTERM or a full disk stop the run with what was
//! stored intact and resumable.

use crate::bench::latency::{self, LatencyPlan};
use crate::bench::{ring, workload as workload_bench};
use crate::error::{signal_name, Error, Result};
use crate::model::{Outcome, TrialSpec, TrialStatus};
use crate::preflight;
use crate::store::{now_utc, TrialRecord};
use crate::suite::Trial;
use crate::sys::signals::SignalWatch;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// What the orchestrator sends a trial process on stdin.
#[derive(serde::Serialize, serde::Deserialize)]
struct Job {
    spec: TrialSpec,
    repeat: u32,
}

/// What a trial process prints on stdout: one JSON object.
#[derive(serde::Serialize, serde::Deserialize)]
struct Reply {
    status: TrialStatus,
    outcome: Option<Outcome>,
}

/// The body of `schedlab __trial`: read a job, measure it, print the outcome.
pub fn trial_child() -> Result<i32> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| Error::os("reading the trial job", e))?;
    let job: Job = serde_json::from_str(&input).map_err(|e| Error::usage(format!("a malformed trial job: {e}")))?;
    let reply = match measure(&job.spec, job.repeat) {
        Ok(reply) => reply,
        Err(Error::Failed(m)) => Reply { status: TrialStatus::Failed(m), outcome: None },
        Err(Error::TimedOut(m)) => Reply { status: TrialStatus::TimedOut(m), outcome: None },
        Err(e) => return Err(e),
    };
    let text = serde_json::to_string(&reply).map_err(|e| Error::failed(format!("encoding the outcome: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").and_then(|_| out.flush()).map_err(|e| Error::os("writing the trial outcome", e))?;
    Ok(0)
}

/// Check, set up and run one spec in this process: the same preflight and kernels as
/// the family commands.
fn measure(spec: &TrialSpec, repeat: u32) -> Result<Reply> {
    let ok = |outcome| Ok(Reply { status: TrialStatus::Ok, outcome: Some(outcome) });
    match spec {
        TrialSpec::Ring(spec) => {
            let cpus = preflight::ring(spec)?;
            let overhead_ps = ring::measure_overhead(spec, &cpus)?;
            ok(Outcome::Ring(ring::run_ring(spec, &cpus, overhead_ps)?))
        }
        TrialSpec::Workload(spec) => {
            let cell = std::slice::from_ref(spec);
            preflight::workload(cell)?;
            let dir = preflight::work_dir(cell)?;
            let trial = workload_bench::run_trial(spec, repeat as usize, dir.as_ref())?;
            Ok(Reply { outcome: trial.outcome().map(Outcome::Workload), status: trial.status })
        }
        TrialSpec::Latency(spec) => {
            let cpus = preflight::latency(spec)?;
            let run = latency::run(&LatencyPlan::new(spec, cpus, false), |_| {})?;
            if let Some(sig) = run.interrupted {
                return Err(Error::Interrupted(sig));
            }
            ok(Outcome::Latency(run.outcome()))
        }
    }
}

/// How a trial ended, from the orchestrator's side.
pub enum Ended {
    Stored(Box<TrialRecord>),
    /// The run must stop: a signal arrived, or the trial could not be set up.
    Stop(Error),
}

/// Runs trial processes one at a time and watches the signals that stop a run.
pub struct Orchestrator {
    signals: SignalWatch,
    trial_timeout: Duration,
    seen_warnings: Vec<String>,
}

impl Orchestrator {
    /// Must be made before any thread is started, so every thread has the signals blocked.
    pub fn new(trial_timeout: Duration) -> Result<Orchestrator> {
        let signals = SignalWatch::new(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
            .map_err(|e| Error::os("watching for Ctrl-C and SIGTERM", e))?;
        Ok(Orchestrator { signals, trial_timeout, seen_warnings: Vec::new() })
    }

    /// A signal that arrived between trials.
    pub fn pending_signal(&self) -> Option<i32> {
        self.signals.drain().into_iter().next()
    }

    fn spawn(&self, job: &Job) -> Result<Child> {
        let exe = std::env::current_exe().map_err(|e| Error::os("finding schedlab's own executable", e))?;
        let parent = std::process::id() as libc::pid_t;
        let mut command = std::process::Command::new(exe);
        command.arg("__trial").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // SAFETY: prctl and getppid are async-signal-safe; nothing else runs here.
        unsafe {
            command.pre_exec(move || {
                // If the orchestrator dies (even SIGKILL), the trial dies with it.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() != parent {
                    return Err(std::io::Error::other("the orchestrator is gone"));
                }
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|e| Error::os("starting a trial process", e))?;
        let text = serde_json::to_string(job).map_err(|e| Error::failed(format!("encoding a trial job: {e}")))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A child that dies at once closes the pipe: its exit status says why.
            let _ = stdin.write_all(text.as_bytes());
        }
        Ok(child)
    }

    /// Run one trial to its end and say what to store, or why the run must stop.
    pub fn run_trial(&mut self, trial: &Trial, on_warning: &mut dyn FnMut(&str)) -> Result<Ended> {
        let started = now_utc();
        let t0 = Instant::now();
        let job = Job { spec: trial.spec.clone(), repeat: trial.repeat.max(1) };
        let mut child = self.spawn(&job)?;
        // A real-time trial that fills every CPU must not starve the thread that times it
        // out. Raised after the spawn, so the trial process never inherits it.
        let realtime = preflight::is_realtime(&trial.spec);
        let _watchdog = crate::sys::sched::RtWatchdog::raise_if(realtime);
        let stdout = child.stdout.take().map(read_in_background);
        let stderr = child.stderr.take().map(read_in_background);
        let deadline = t0 + self.trial_timeout;
        let mut stop_signal: Option<i32> = None;
        let mut timed_out = false;
        let mut kill_at: Option<Instant> = None;
        // A pidfd becomes readable when the child exits, so a 5 ms trial is not kept
        // waiting for a timer tick (-1 on kernels before 5.3: then the tick decides).
        // SAFETY: plain syscall; the result is checked.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id() as libc::pid_t, 0) } as libc::c_int;
        let _pidfd_guard = (pidfd >= 0).then(|| {
            // SAFETY: pidfd_open returned a new descriptor that only we own.
            unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(pidfd) }
        });
        let status = loop {
            if let Some(status) = child.try_wait().map_err(|e| Error::os("waiting for a trial", e))? {
                break status;
            }
            let mut pfds = [
                libc::pollfd { fd: self.signals.raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: valid pollfds (a negative fd is ignored by poll).
            unsafe { libc::poll(pfds.as_mut_ptr(), 2, 100) };
            if let Some(sig) = self.signals.drain().into_iter().next() {
                // Pass it on: the trial stops its own children and reaps them.
                stop_signal.get_or_insert(sig);
                // SAFETY: plain kill of our own child.
                unsafe { libc::kill(child.id() as libc::pid_t, sig) };
                kill_at.get_or_insert(Instant::now() + Duration::from_secs(10));
            }
            let now = Instant::now();
            if !timed_out && stop_signal.is_none() && now >= deadline {
                timed_out = true;
                // SAFETY: plain kill of our own child.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
                kill_at = Some(now + Duration::from_secs(5));
            }
            if kill_at.is_some_and(|k| now >= k) {
                let _ = child.kill();
            }
        };
        let elapsed_s = t0.elapsed().as_secs_f64();
        let out = stdout.map(|h| h.join().unwrap_or_default()).unwrap_or_default();
        let err = stderr.map(|h| h.join().unwrap_or_default()).unwrap_or_default();
        let err_text = String::from_utf8_lossy(&err).to_string();
        for line in err_text.lines().filter(|l| l.contains("warning:")) {
            if !self.seen_warnings.iter().any(|w| w == line) {
                self.seen_warnings.push(line.to_string());
                on_warning(line);
            }
        }
        if let Some(sig) = stop_signal {
            return Ok(Ended::Stop(Error::Interrupted(sig)));
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
        let failed = |reason: String| Ok(Ended::Stored(Box::new(record(TrialStatus::Failed(reason), None))));
        if timed_out {
            let reason =
                format!("ran past the trial timeout of {:.0} s and was stopped", self.trial_timeout.as_secs_f64());
            return Ok(Ended::Stored(Box::new(record(TrialStatus::TimedOut(reason), None))));
        }
        match (status.code(), status.signal()) {
            (Some(0), _) => match serde_json::from_slice::<Reply>(&out) {
                Ok(reply) => Ok(Ended::Stored(Box::new(record(reply.status, reply.outcome)))),
                Err(e) => failed(format!("unreadable trial outcome: {e}")),
            },
            // Usage or environment: the plan was checked, so the machine changed under us.
            (Some(2), _) => Ok(Ended::Stop(Error::env(reason_from_stderr()))),
            (Some(code), _) if code > 128 => Ok(Ended::Stop(Error::Interrupted(code - 128))),
            (Some(code), _) => {
                let reason = reason_from_stderr();
                failed(if reason.is_empty() { format!("the trial process exited with status {code}") } else { reason })
            }
            (None, Some(sig)) => failed(format!("the trial process was killed by {}", signal_name(sig))),
            (None, None) => failed("the trial process vanished".into()),
        }
    }
}

fn read_in_background<R: Read + Send + 'static>(mut pipe: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}
