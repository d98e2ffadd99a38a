//! The task set, run: a thread per task instance under the trial's policy, each woken by
//! an absolute periodic timer (`clock_nanosleep` with TIMER_ABSTIME on CLOCK_MONOTONIC)
//! and doing its events; per activation the wakeup latency, the response time, the slack
//! to its deadline and the CPU time it got. The schedule is ideal: a late activation does
//! not move the next one, so lateness carries over and is counted, as a real task set's.

use super::model::{Event, TaskSpec, TaskStats, TasksetOutcome, TasksetSpec};
use crate::error::{Error, Result};
use crate::sys::clock::{monotonic_ns, thread_cpu_ns};
use crate::sys::sched;
use hdrhistogram::Histogram;
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;

/// How long after every thread is ready the first activations start.
const START_DELAY_NS: u64 = 20_000_000;

/// A named mutex shared by the tasks that lock it: a pthread mutex, with priority
/// inheritance when asked, so a low-priority holder is boosted as the kernel's rt_mutex
/// would boost it.
struct Mutex {
    raw: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be shared between threads; it never moves (boxed)
// and is destroyed only after every (scoped) thread that uses it has been joined.
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

/// What a thread's (or a task's, or the set's) activations add up to: histograms, so
/// memory stays flat however long the set runs.
struct Tally {
    /// Timer expiry (the ideal start) to running, ns.
    wake: Histogram<u64>,
    /// Ideal start to completion, ns.
    response: Histogram<u64>,
    /// Response over the relative deadline, in 0.01 % steps.
    used: Histogram<u64>,
    misses: u64,
    slack_min_ns: i64,
    run_ns: u128,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            wake: new_histogram(),
            response: new_histogram(),
            used: new_histogram(),
            misses: 0,
            slack_min_ns: i64::MAX,
            run_ns: 0,
        }
    }

    fn record(&mut self, task: &TaskSpec, wake_ns: u64, response_ns: u64, run_ns: u64) {
        let slack = task.deadline_ns as i64 - response_ns as i64;
        let _ = self.wake.record(wake_ns.max(1));
        let _ = self.response.record(response_ns.max(1));
        let _ = self.used.record(((response_ns as f64 / task.deadline_ns as f64) * 1e4).round().max(1.0) as u64);
        self.misses += u64::from(slack < 0);
        self.slack_min_ns = self.slack_min_ns.min(slack);
        self.run_ns += u128::from(run_ns);
    }

    fn add(&mut self, other: &Tally) {
        let _ = self.wake.add(&other.wake);
        let _ = self.response.add(&other.response);
        let _ = self.used.add(&other.used);
        self.misses += other.misses;
        self.slack_min_ns = self.slack_min_ns.min(other.slack_min_ns);
        self.run_ns += other.run_ns;
    }

    fn count(&self) -> u64 {
        self.wake.len()
    }
}

/// An event as a thread runs it, its mutex already found.
enum Step<'a> {
    Run(u64),
    Sleep(std::time::Duration),
    Lock(&'a Mutex),
    Unlock(&'a Mutex),
    Yield,
}

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
    mutexes: &BTreeMap<String, Mutex>,
    ready: &Barrier,
    go: &Barrier,
    t0: &AtomicU64,
    abort: &AtomicBool,
) -> std::result::Result<Tally, String> {
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
    // Everything the activations need is made now, not while they run: the mutexes each
    // event takes, found by name once, and the histograms.
    let steps: Vec<Step> = task
        .events
        .iter()
        .map(|e| match e {
            Event::Run(ns) => Step::Run(*ns),
            Event::Sleep(ns) => Step::Sleep(std::time::Duration::from_nanos(*ns)),
            Event::Lock { name, .. } => Step::Lock(&mutexes[name]),
            Event::Unlock(name) => Step::Unlock(&mutexes[name]),
            Event::Yield => Step::Yield,
        })
        .collect();
    let mut tally = Tally::new();
    // Every thread reaches the barriers, set up or not, so none waits for ever; if one
    // could not be set up, none runs.
    ready.wait();
    go.wait();
    set?;
    if abort.load(Ordering::Acquire) {
        return Ok(tally);
    }
    let start = t0.load(Ordering::Acquire);
    let end = start + spec.duration.as_nanos() as u64;
    let mut ideal = start;
    while ideal < end {
        sleep_until(ideal);
        let woke = monotonic_ns();
        let cpu0 = thread_cpu_ns();
        for step in &steps {
            match step {
                Step::Run(ns) => run_for(*ns),
                Step::Sleep(d) => std::thread::sleep(*d),
                Step::Lock(m) => m.lock(),
                Step::Unlock(m) => m.unlock(),
                // SAFETY: sched_yield takes nothing and cannot fail.
                Step::Yield => unsafe {
                    libc::sched_yield();
                },
            }
        }
        let done = monotonic_ns();
        tally.record(task, woke.saturating_sub(ideal), done.saturating_sub(ideal), thread_cpu_ns() - cpu0);
        ideal += task.period_ns;
    }
    Ok(tally)
}

/// 1 ns to an hour at 3 significant digits, as the latency family's histograms.
fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("constant histogram bounds are valid")
}

fn at(h: &Histogram<u64>, quantile: f64) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.value_at_quantile(quantile)
    }
}

fn stats(task: &TaskSpec, t: &Tally) -> TaskStats {
    let n = t.count();
    TaskStats {
        name: task.name.clone(),
        instances: task.count,
        activations: n,
        misses: t.misses,
        wake_p50_ns: at(&t.wake, 0.5),
        wake_p99_ns: at(&t.wake, 0.99),
        wake_max_ns: if n > 0 { t.wake.max() } else { 0 },
        response_p50_ns: at(&t.response, 0.5),
        response_p99_ns: at(&t.response, 0.99),
        response_max_ns: if n > 0 { t.response.max() } else { 0 },
        slack_p99_ns: task.deadline_ns as i64 - at(&t.response, 0.99) as i64,
        slack_min_ns: if n > 0 { t.slack_min_ns } else { 0 },
        run_mean_ns: t.run_ns as f64 / n.max(1) as f64,
    }
}

/// Run the task set once and sum up its activations.
pub fn run(spec: &TasksetSpec) -> Result<TasksetOutcome> {
    let mut mutexes: BTreeMap<String, Mutex> = BTreeMap::new();
    for task in &spec.tasks {
        for e in &task.events {
            if let Event::Lock { name, pi } = e {
                if !mutexes.contains_key(name) {
                    mutexes.insert(name.clone(), Mutex::new(*pi)?);
                }
            }
        }
    }
    let threads = spec.threads();
    let ready = Barrier::new(threads + 1);
    let go = Barrier::new(threads + 1);
    let t0 = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let results: Vec<(usize, std::result::Result<Tally, String>)> = std::thread::scope(|scope| {
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
    let mut per_task: Vec<Tally> = spec.tasks.iter().map(|_| Tally::new()).collect();
    for (i, result) in results {
        per_task[i].add(&result.map_err(Error::failed)?);
    }
    let mut all = Tally::new();
    for t in &per_task {
        all.add(t);
    }
    let tasks: Vec<TaskStats> = spec.tasks.iter().zip(&per_task).map(|(t, tally)| stats(t, tally)).collect();
    Ok(TasksetOutcome {
        activations: all.count(),
        misses: all.misses,
        deadline_use_p99_pct: at(&all.used, 0.99) as f64 / 100.0,
        wake_p99_ns: at(&all.wake, 0.99),
        response_p99_ns: at(&all.response, 0.99),
        slack_min_ns: if all.count() > 0 { all.slack_min_ns } else { 0 },
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
    fn a_tally_counts_misses_and_the_least_slack() {
        let task = TaskSpec {
            name: "t".into(),
            count: 1,
            period_ns: 1_000_000,
            deadline_ns: 1_000_000,
            events: vec![Event::Run(100_000)],
            prio: 0,
            reservation: None,
        };
        let mut t = Tally::new();
        t.record(&task, 10_000, 200_000, 100_000);
        t.record(&task, 20_000, 1_500_000, 100_000);
        let s = stats(&task, &t);
        assert_eq!((s.activations, s.misses, s.slack_min_ns), (2, 1, -500_000));
        assert_eq!(s.run_mean_ns, 100_000.0);
        // Half the set's activations used 20 % of the deadline, the other 150 %.
        assert!((at(&t.used, 0.5) as f64 / 100.0 - 20.0).abs() < 0.1);
    }
}
