//! The task set's trial in the executor: its checks (each task's policy, priority or
//! reservation, and the deadline bandwidth it asks for), its run in the trial process.

use super::model::TasksetSpec;
use super::task::Phased;
use crate::error::{Error, Result};
use crate::exec::family::FamilyTrial;
use crate::exec::family::{Extras, Reply};
use crate::exec::preflight;
use crate::families::list::Outcome;
use crate::sys::{load, sched};

/// Can every task have its policy, and does the set fit the machine's real-time or
/// deadline bandwidth?
pub fn preflight(spec: &TasksetSpec) -> Result<()> {
    // An rt-app file's lock_pages: tried here, and given back at once, so a process that
    // may not lock its memory is refused before anything runs, as rt-app stops on it.
    if spec.lock_pages {
        crate::sys::process::lock_memory().map_err(|e| {
            Error::usage(format!(
                "the rt-app file's lock_pages: mlockall refused ({e}): it needs CAP_IPC_LOCK (root) or an \
                 RLIMIT_MEMLOCK above the process's size (`ulimit -l unlimited`); or set \"lock_pages\": false"
            ))
        })?;
        crate::sys::process::unlock_memory();
    }
    let allowed = sched::allowed_cpus().map_err(|e| Error::os("reading the CPU affinity mask", e))?;
    let cpus = allowed.len() as f64;
    for t in &spec.tasks {
        // The task's own CPUs and each phase's.
        for own in t.cpus.iter().chain(t.phases.iter().filter_map(|p| p.cpus.as_ref())) {
            if let Some(cpu) = own.iter().find(|c| !allowed.contains(c)) {
                return Err(Error::usage(format!(
                    "task {}: cpus names CPU {cpu}, which schedlab may not use here (allowed: {}): pick among those",
                    t.name,
                    crate::model::parse::format_cpu_list(&allowed)
                )));
            }
        }
    }
    // Without a timer a task has no deadline to miss: only the phases with one are held to
    // the CPUs (a run/sleep loop beside them is a load, not a schedule).
    if let Some(pinned) = &spec.cpus {
        if let Some(cpu) = pinned.iter().find(|c| !allowed.contains(c)) {
            return Err(Error::usage(format!(
                "--cpus names CPU {cpu}, which schedlab may not use here (allowed: {}): pick among those",
                crate::model::parse::format_cpu_list(&allowed)
            )));
        }
        let pinned_cpus = pinned.len() as f64;
        if !spec.policy.is_deadline() && spec.timed_utilisation() > pinned_cpus {
            return Err(Error::usage(format!(
                "the task set's periodic tasks need {:.0}% of a CPU but --cpus gives it {} CPU(s): no policy could \
                 meet their deadlines",
                spec.timed_utilisation() * 100.0,
                pinned.len()
            )));
        }
    }
    let utilisation = spec.timed_utilisation();
    if spec.policy.is_deadline() {
        let asked: f64 = spec.tasks.iter().filter_map(|t| Some(t.reservation?.bandwidth() * f64::from(t.count))).sum();
        let share =
            sched::RtThrottling::read().filter(|t| t.is_on()).map_or(1.0, |t| t.runtime_us as f64 / t.period_us as f64);
        if asked > cpus * share {
            return Err(Error::usage(format!(
                "the task set's reservations ask for {:.0}% of a CPU, more than SCHED_DEADLINE admits here ({} CPU(s) \
                 × {:.0}% = {:.0}%){}",
                asked * 100.0,
                cpus,
                share * 100.0,
                cpus * share * 100.0,
                admission_advice(spec, (cpus * share) / asked)
            )));
        }
    } else if utilisation > cpus {
        return Err(Error::usage(format!(
            "the task set's periodic tasks need {:.0}% of a CPU but {} CPU(s) give {:.0}%: no policy could meet \
             their deadlines",
            utilisation * 100.0,
            cpus,
            cpus * 100.0
        )));
    }
    for task in &spec.tasks {
        preflight::scheduling_with(spec.policy, task.prio, task.reservation.as_ref(), spec.threads(), spec.reclaim)?;
    }
    // The set's nice and each task's own (an rt-app priority for SCHED_OTHER).
    let mut nices: Vec<i32> = spec.tasks.iter().filter_map(|t| t.nice).chain(spec.nice).collect();
    nices.sort_unstable();
    nices.dedup();
    for nice in nices {
        sched::probe_nice(nice)?;
    }
    Ok(())
}

impl FamilyTrial for TasksetSpec {
    fn preflight(&self) -> Result<()> {
        preflight(self)
    }

    fn measure(&self, repeat: u32, extras: &Extras) -> Result<Reply> {
        preflight(self)?;
        let load_plan = preflight::load(&self.load)?;
        let run = super::kernel::RunExtras {
            repeat,
            activations: extras.activations.as_deref(),
            rt_app_log: extras.rt_app_log,
        };
        let ran = load::beside(load_plan.as_ref(), || super::kernel::run(self, run));
        if let (Err(Error::Interrupted(_)), Some(path)) = (&ran, &extras.activations) {
            // Stopped: the rows are incomplete. The command removes its partial file too,
            // but not when it was killed outright (its death is what stopped this trial).
            let _ = if extras.rt_app_log { std::fs::remove_dir_all(path) } else { std::fs::remove_file(path) };
        }
        let (mut outcome, load) = ran?;
        outcome.beside.load = load;
        Reply::ok(Outcome::Taskset(outcome))
    }

    /// Killed outright, its trace instance could not be removed.
    fn sweep_after_kill(&self) {
        if self.trace {
            crate::sys::trace::sweep_stale();
        }
    }

    fn measured_cpus(&self) -> Vec<usize> {
        self.cpus.clone().unwrap_or_default()
    }

    fn estimate_s(&self, _cpus: f64) -> f64 {
        self.duration.as_secs_f64() + 0.05
    }
}

/// How to fit a refused set: each task's runtime, and where it is the default (the run,
/// a quarter more and the floor), the smaller `runtime = ...` that would fit when that
/// still covers the run; else shorter runs or longer periods.
fn admission_advice(spec: &TasksetSpec, fits: f64) -> String {
    use super::reservation::{default_runtime_ns, reservation_floor_ns};
    use crate::model::format_ns;
    let mut parts = Vec::new();
    let mut fixable = true;
    for t in &spec.tasks {
        let Some(r) = t.reservation else { continue };
        let run = t.run_ns();
        // 1 % under the limit, rounded down to the µs.
        let fit_ns = ((r.runtime_ns as f64 * fits * 0.99) as u64) / 1000 * 1000;
        // A smaller runtime must still cover the run and the wait on a mutex.
        let least = run + t.blocking_ns;
        fixable &= fit_ns > least;
        if r.runtime_ns == default_runtime_ns(run, t.blocking_ns, r.period_ns, r.deadline_ns) {
            let spin = match t.blocking_ns {
                0 => String::new(),
                ns => format!(" + {} waiting on a mutex", format_ns(ns)),
            };
            parts.push(format!(
                "{}: {} per {} by default (run {} + a quarter{spin} + {} floor){}",
                t.name,
                format_ns(r.runtime_ns),
                format_ns(r.period_ns),
                format_ns(run),
                format_ns(reservation_floor_ns(r.period_ns)),
                if fit_ns > least { format!(", `runtime = \"{}us\"` would fit", fit_ns / 1000) } else { String::new() }
            ));
        } else {
            parts.push(format!("{}: runtime {} per {}", t.name, format_ns(r.runtime_ns), format_ns(r.period_ns)));
        }
    }
    let fix = if fixable {
        "set a smaller `runtime` in the tasks (a job that runs it out is throttled to its next period), or lengthen the \
         periods"
    } else {
        "the runs themselves do not fit: shorten the runs, lengthen the periods or run fewer instances"
    };
    format!(" — {}; {fix}", parts.join("; "))
}

/// Start the `--activations` file at `path`: its CSV header, before any trial appends its
/// rows; or, for rt-app's logs, the directory each trial's threads write theirs in.
pub fn start_activations(path: &std::path::Path, rt_app_log: bool) -> std::io::Result<()> {
    use std::io::Write;
    if rt_app_log {
        return std::fs::create_dir(path);
    }
    let mut file = std::fs::File::create(path)?;
    writeln!(file, "{}", super::kernel::ACTIVATIONS_HEADER)
}
