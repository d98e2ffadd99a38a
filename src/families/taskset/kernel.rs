//! The task set, run: a thread per task instance under the trial's policy, each woken by
//! an absolute periodic timer (`clock_nanosleep` with TIMER_ABSTIME on CLOCK_MONOTONIC)
//! and doing its events; per activation the wakeup latency, the response time, the slack
//! to its deadline and the CPU time it got. The schedule is ideal: a late activation does
//! not move the next one, so lateness carries over and is counted, as a real task set's.

use super::model::{Event, TaskSpec, TaskStats, TasksetOutcome, TasksetSpec};
use crate::error::{Error, Result};
use crate::sys::clock::{monotonic_ns, thread_cpu_ns};
use crate::sys::sched;
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

/// How long after every thread is ready the first activations start.
const START_DELAY_NS: u64 = 20_000_000;

/// A named mutex shared by the tasks that lock it: a pthread mutex, with priority
/// inheritance when asked, so a low-priority holder is boosted as the kernel's rt_mutex
/// would boost it.
struct Mutex {
    raw: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be shared between threads; it never moves (boxed)
// and is destroyed only when the last Arc goes, after every thread has been joined.
unsafe impl Send for Mutex {}
unsafe impl Sync for Mutex {}

impl Mutex {
    fn new(pi: bool) -> Result<Mutex> {
        let raw = Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));
        // SAFETY: the attribute object lives on this stack for the calls that use it and
        // is destroyed after; the mutex is initialised in place, where it stays.
        let rc = unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            let protocol = if pi { libc::PTHREAD_PRIO_INHERIT } else { libc::PTHREAD_PRIO_NONE };
            let mut rc = libc::pthread_mutexattr_setprotocol(&mut attr, protocol);
            if rc == 0 {
                rc = libc::pthread_mutex_init(raw.get(), &attr);
            }
            libc::pthread_mutexattr_destroy(&mut attr);
            rc
        };
        if rc != 0 {
            return Err(Error::os("making a task set's mutex", std::io::Error::from_raw_os_error(rc)));
        }
        Ok(Mutex { raw })
    }

    fn lock(&self) {
        // SAFETY: initialised in `new`; the events are checked to lock and unlock in pairs.
        unsafe { libc::pthread_mutex_lock(self.raw.get()) };
    }

    fn unlock(&self) {
        // SAFETY: only called by the thread that locked it (checked events).
        unsafe { libc::pthread_mutex_unlock(self.raw.get()) };
    }
}

impl Drop for Mutex {
    fn drop(&mut self) {
        // SAFETY: no thread holds or waits on it any more.
        unsafe { libc::pthread_mutex_destroy(self.raw.get()) };
    }
}

/// One activation: (wakeup latency, response time, slack, CPU time got), in ns.
type Activation = (u64, u64, i64, u64);

/// Sleep until `at_ns` on CLOCK_MONOTONIC.
fn sleep_until(at_ns: u64) {
    let ts = libc::timespec { tv_sec: (at_ns / 1_000_000_000) as libc::time_t, tv_nsec: (at_ns % 1_000_000_000) as _ };
    // SAFETY: a valid timespec; EINTR is retried by the loop.
    while unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) }
        == libc::EINTR
    {}
}

/// Busy until this thread has had `ns` more of CPU time.
fn run_for(ns: u64) {
    let start = thread_cpu_ns();
    while thread_cpu_ns().saturating_sub(start) < ns {
        std::hint::spin_loop();
    }
}

/// The thread of one task instance: its policy, then its activations from `t0` on.
fn instance(
    task: &TaskSpec,
    spec: &TasksetSpec,
    mutexes: &BTreeMap<String, Arc<Mutex>>,
    ready: &Barrier,
    go: &Barrier,
    t0: &AtomicU64,
    abort: &AtomicBool,
) -> std::result::Result<Vec<Activation>, String> {
    let set = match spec.policy {
        p if p.is_deadline() => {
            sched::apply_scheduling(None, p, 0, task.reservation.as_ref(), spec.threads(), false).map(|_| ())
        }
        p => sched::apply_to_current_thread(None, p, task.prio),
    };
    let set = set.and_then(|()| match spec.nice {
        Some(nice) => sched::set_nice(nice).map_err(|e| sched::explain_nice_refusal(nice, &e)),
        None => Ok(()),
    });
    if set.is_err() {
        abort.store(true, Ordering::Release);
    }
    // Every thread reaches the barriers, set up or not, so none waits for ever; if one
    // could not be set up, none runs.
    ready.wait();
    go.wait();
    set?;
    if abort.load(Ordering::Acquire) {
        return Ok(Vec::new());
    }
    let start = t0.load(Ordering::Acquire);
    let end = start + spec.duration.as_nanos() as u64;
    let mut out = Vec::with_capacity((spec.duration.as_nanos() as u64 / task.period_ns) as usize + 1);
    let mut ideal = start;
    while ideal < end {
        sleep_until(ideal);
        let woke = monotonic_ns();
        let cpu0 = thread_cpu_ns();
        for e in &task.events {
            match e {
                Event::Run(ns) => run_for(*ns),
                Event::Sleep(ns) => std::thread::sleep(std::time::Duration::from_nanos(*ns)),
                Event::Lock { name, .. } => mutexes[name].lock(),
                Event::Unlock(name) => mutexes[name].unlock(),
                // SAFETY: sched_yield takes nothing and cannot fail.
                Event::Yield => unsafe {
                    libc::sched_yield();
                },
            }
        }
        let done = monotonic_ns();
        let response = done.saturating_sub(ideal);
        out.push((
            woke.saturating_sub(ideal),
            response,
            task.deadline_ns as i64 - response as i64,
            thread_cpu_ns() - cpu0,
        ));
        ideal += task.period_ns;
    }
    Ok(out)
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn stats(task: &TaskSpec, all: &[Activation]) -> TaskStats {
    let mut wake: Vec<u64> = all.iter().map(|a| a.0).collect();
    let mut response: Vec<u64> = all.iter().map(|a| a.1).collect();
    wake.sort_unstable();
    response.sort_unstable();
    TaskStats {
        name: task.name.clone(),
        instances: task.count,
        activations: all.len() as u64,
        misses: all.iter().filter(|a| a.2 < 0).count() as u64,
        wake_p50_ns: percentile(&wake, 50.0),
        wake_p99_ns: percentile(&wake, 99.0),
        wake_max_ns: wake.last().copied().unwrap_or(0),
        response_p50_ns: percentile(&response, 50.0),
        response_p99_ns: percentile(&response, 99.0),
        response_max_ns: response.last().copied().unwrap_or(0),
        slack_min_ns: all.iter().map(|a| a.2).min().unwrap_or(0),
        run_mean_ns: all.iter().map(|a| a.3 as f64).sum::<f64>() / all.len().max(1) as f64,
    }
}

/// Run the task set once and sum up its activations.
pub fn run(spec: &TasksetSpec) -> Result<TasksetOutcome> {
    let mut mutexes: BTreeMap<String, Arc<Mutex>> = BTreeMap::new();
    for task in &spec.tasks {
        for e in &task.events {
            if let Event::Lock { name, pi } = e {
                if !mutexes.contains_key(name) {
                    mutexes.insert(name.clone(), Arc::new(Mutex::new(*pi)?));
                }
            }
        }
    }
    let threads = spec.threads();
    let ready = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let t0 = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let results: Vec<(usize, std::result::Result<Vec<Activation>, String>)> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (i, task) in spec.tasks.iter().enumerate() {
            for _ in 0..task.count {
                let (mutexes, ready, go, t0, abort) = (&mutexes, &ready, &go, &t0, &abort);
                handles.push((i, scope.spawn(move || instance(task, spec, mutexes, ready, go, t0, abort))));
            }
        }
        ready.wait();
        t0.store(monotonic_ns() + START_DELAY_NS, Ordering::Release);
        // The background load's figures are of the window the task set runs in.
        crate::sys::load::mark_window_start();
        go.wait();
        let joined = handles
            .into_iter()
            .map(|(i, h)| (i, h.join().unwrap_or_else(|_| Err("a task thread panicked".to_string()))))
            .collect();
        crate::sys::load::mark_window_end();
        joined
    });
    let mut per_task: Vec<Vec<Activation>> = vec![Vec::new(); spec.tasks.len()];
    for (i, result) in results {
        per_task[i].extend(result.map_err(Error::failed)?);
    }
    let tasks: Vec<TaskStats> = spec.tasks.iter().zip(&per_task).map(|(t, a)| stats(t, a)).collect();
    let all: Vec<(&TaskSpec, &Activation)> =
        spec.tasks.iter().zip(&per_task).flat_map(|(t, acts)| acts.iter().map(move |a| (t, a))).collect();
    let mut wake: Vec<u64> = all.iter().map(|(_, a)| a.0).collect();
    let mut response: Vec<u64> = all.iter().map(|(_, a)| a.1).collect();
    // Response against the deadline in 0.01 % steps, as integers for the percentile.
    let mut used: Vec<u64> =
        all.iter().map(|(t, a)| (a.1 as f64 / t.deadline_ns as f64 * 1e4).round() as u64).collect();
    wake.sort_unstable();
    response.sort_unstable();
    used.sort_unstable();
    let activations = all.len() as u64;
    Ok(TasksetOutcome {
        activations,
        misses: tasks.iter().map(|t| t.misses).sum(),
        deadline_use_p99_pct: percentile(&used, 99.0) as f64 / 100.0,
        wake_p99_ns: percentile(&wake, 99.0),
        response_p99_ns: percentile(&response, 99.0),
        slack_min_ns: all.iter().map(|(_, a)| a.2).min().unwrap_or(0),
        worst_task_miss_pct: tasks
            .iter()
            .filter(|t| t.activations > 0)
            .map(|t| 100.0 * t.misses as f64 / t.activations as f64)
            .fold(0.0, f64::max),
        tasks,
        load: None,
        steal: None,
        cgroup: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 100.0), 100);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 99.0), 0);
    }
}
