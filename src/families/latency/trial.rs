//! The latency run's trial in the executor: its checks, its measurement in the trial
//! process, with the live line and the files a `latency` command asks for.

use super::kernel::{self, LatencyPlan};
use crate::error::{Error, Result};
use crate::exec::family::FamilyTrial;
use crate::exec::family::{Extras, Reply, TrialNotes};
use crate::exec::preflight;
use crate::exec::runner::append_to;
use crate::families::latency::model::{LatencyLength, LatencySpec, Placement};
use crate::families::list::Outcome;
use crate::model::TrialStatus;
use crate::sys::{load, sched};
use std::io::Write;

/// A latency spec: the interval against the clock, the policy, and each measuring
/// thread's CPU (`None`: unpinned).
pub fn preflight(spec: &LatencySpec) -> Result<Vec<Option<usize>>> {
    let resolution = kernel::clock_resolution_ns();
    if spec.interval_ns == 0 || spec.interval_ns < resolution {
        return Err(Error::usage(format!(
            "an interval of {} is below what CLOCK_MONOTONIC resolves here ({}, from clock_getres; this kernel has no \
             high-resolution timers): give --interval {} or more",
            crate::model::format_ns(spec.interval_ns),
            crate::model::format_ns(resolution),
            crate::model::parse::duration_arg(resolution.max(1))
        )));
    }
    preflight::scheduling(spec.policy, spec.prio, spec.beside.deadline.as_ref(), 1)?;
    let cpus = thread_cpus(&spec.placement)?;
    preflight::warn_if_no_schedstat(spec.beside.schedstat);
    Ok(cpus)
}

/// The CPU of each measuring thread (`None`: unpinned).
pub fn thread_cpus(placement: &Placement) -> Result<Vec<Option<usize>>> {
    let allowed = sched::resolve_cpus(None)?;
    match placement {
        Placement::Unpinned => Ok(vec![None]),
        Placement::Cpus(list) => Ok(sched::resolve_cpus(Some(list))?.into_iter().map(Some).collect()),
        Placement::AllCpus => Ok(allowed.into_iter().map(Some).collect()),
        &Placement::FirstCpus(n) if n as usize <= allowed.len() => {
            Ok(allowed.into_iter().take(n as usize).map(Some).collect())
        }
        Placement::FirstCpus(n) => Err(Error::env(format!(
            "--threads {n} asks for more pinned threads than the {} CPUs this process may use ({})",
            allowed.len(),
            crate::model::parse::format_cpu_list(&allowed)
        ))),
    }
}

impl FamilyTrial for LatencySpec {
    fn preflight(&self) -> Result<()> {
        preflight(self).map(|_| ())
    }

    fn measure(&self, _repeat: u32, extras: &Extras) -> Result<Reply> {
        let cpus = preflight(self)?;
        let load_plan = preflight::load(&self.beside.load)?;
        let plan = LatencyPlan::new(self, cpus, extras.samples.is_some());
        let mut terminal = extras.live_line.then(open_terminal).flatten();
        let label = self.policy.as_str();
        let (run, load) = load::beside(load_plan.as_ref(), || {
            kernel::run(&plan, |lives| {
                if let Some(tty) = terminal.as_mut() {
                    draw_live_line(tty, label, lives);
                }
            })
        })?;
        if let Some(tty) = terminal.as_mut() {
            let _ = write!(tty, "\r\x1b[K");
        }
        if let Some(sig) = run.interrupted.filter(|_| !extras.keep_partial) {
            return Err(Error::Interrupted(sig));
        }
        if let Some((i, hit)) = run.threads.iter().enumerate().find_map(|(i, t)| t.break_hit.map(|h| (i, h))) {
            let break_us = self.break_ns.unwrap_or_default() as f64 / 1000.0;
            let what = kernel::break_trace(&format!(
                "schedlab: latency {hit} ns on thread {i} above --break-us {break_us} µs\n"
            ));
            // A warning line, so the orchestrator passes it on to the user.
            eprintln!(
                "schedlab: warning: thread T{i} woke {:.1} µs late, above --break-us {break_us}: run stopped; {what}",
                hit as f64 / 1000.0
            );
        }
        append_to(extras.histogram.as_deref(), |out| kernel::write_histogram(out, &run))?;
        append_to(extras.samples.as_deref(), |out| kernel::write_samples(out, &run.threads))?;
        append_to(extras.trace_out.as_deref(), |out| kernel::write_trace_events(out, &run))?;
        let mut outcome = run.outcome();
        outcome.beside.load = load;
        let notes = TrialNotes { description: Some(kernel::describe(&run)), interrupted: run.interrupted };
        Ok(Reply { status: TrialStatus::Ok, outcome: Some(Outcome::Latency(outcome)), notes })
    }

    fn measured_cpus(&self) -> Vec<usize> {
        thread_cpus(&self.placement).unwrap_or_default().into_iter().flatten().collect()
    }

    fn estimate_s(&self, _cpus: f64) -> f64 {
        match self.length {
            LatencyLength::Loops(n) => n as f64 * self.interval_ns as f64 * 1e-9,
            LatencyLength::Duration(d) => d.as_secs_f64(),
        }
    }
}

/// The controlling terminal, for the live line (none: no line is drawn).
fn open_terminal() -> Option<std::fs::File> {
    std::fs::OpenOptions::new().write(true).open("/dev/tty").ok()
}

/// `other: current 12.3 µs  max 45.6 µs  samples 789`, redrawn in place.
fn draw_live_line(tty: &mut std::fs::File, label: &str, lives: &[kernel::Live]) {
    use std::sync::atomic::Ordering;
    let current = lives.iter().map(|l| l.current_ns.load(Ordering::Relaxed)).max().unwrap_or(0);
    let max = lives.iter().map(|l| l.max_ns.load(Ordering::Relaxed)).max().unwrap_or(0);
    let samples: u64 = lives.iter().map(|l| l.samples.load(Ordering::Relaxed)).sum();
    let _ = write!(
        tty,
        "\r\x1b[K{label}: current {:.1} µs  max {:.1} µs  samples {samples}",
        current as f64 / 1000.0,
        max as f64 / 1000.0
    );
    let _ = tty.flush();
}

/// What closes the `--trace-out` file's JSON array after the last run: the process's name
/// event and the bracket.
pub fn trace_file_end() -> String {
    format!("{}]\n", kernel::ChromeEvent::process_name(0, "schedlab".into()).text())
}

/// An unprivileged SCHED_OTHER thread on each of `cpus`, waking every `interval_ns` for
/// `length`: what the noise probe measures idle wakeups with.
pub fn idle_wakeups(cpus: &[usize], interval_ns: u64, length: std::time::Duration) -> LatencySpec {
    LatencySpec {
        interval_ns,
        length: LatencyLength::Duration(length),
        policy: crate::model::Policy::Other,
        prio: 0,
        placement: Placement::Cpus(cpus.to_vec()),
        hold_dma_latency: false,
        break_ns: None,
        beside: crate::model::BesideSpec::default(),
    }
}
