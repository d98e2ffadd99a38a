//! The task set, run: a thread per task instance under the trial's policy, each woken by
//! an absolute periodic timer (`clock_nanosleep` with TIMER_ABSTIME on CLOCK_MONOTONIC)
//! and doing its events; per activation the wakeup latency, the response time, the slack
//! to its deadline and the CPU time it got. The schedule is ideal: a late activation does
//! not move the next one, so lateness carries over and is counted, as a real task set's.

use super::model::{TaskSpec, TaskStats, TasksetOutcome, TasksetSpec};
use super::sync::{Barrier, Cond, Woken};
use super::task::{Event, Phase, Phased};
use crate::analysis::misses::{self, LockWait, MissSplit, MissTrace, MissWindow};
use crate::analysis::trace::Recording;
use crate::error::{Error, Result};
use crate::sys::clock::{burn, monotonic_ns, sleep_until, thread_cpu_ns};
use crate::sys::gate::Gate;
use crate::sys::sched;
use hdrhistogram::Histogram;
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};

/// How long after every thread is ready the first activations start.
const START_DELAY_NS: u64 = 20_000_000;

/// A named mutex shared by the tasks that lock it: a pthread mutex, with priority
/// inheritance when asked, so a low-priority holder is boosted as the kernel's rt_mutex
/// would boost it.
struct Mutex {
    raw: Box<UnsafeCell<libc::pthread_mutex_t>>,
    /// The thread holding it (0: none), for the trace's split to name a waiter's holder.
    holder: AtomicI32,
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
        Ok(Mutex { raw, holder: AtomicI32::new(0) })
    }

    /// Takes it for thread `me`: the wait, from asking to getting it, and the holder seen
    /// on asking.
    fn lock(&self, me: i32) -> LockWait {
        let holder = self.holder.load(Ordering::Relaxed);
        let from_ns = monotonic_ns();
        // SAFETY: initialised in `new`; the events are checked to lock and unlock in pairs.
        unsafe { libc::pthread_mutex_lock(self.raw.get()) };
        let to_ns = monotonic_ns();
        self.holder.store(me, Ordering::Relaxed);
        LockWait { from_ns, to_ns, holder }
    }

    fn unlock(&self) {
        self.holder.store(0, Ordering::Relaxed);
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
struct ActivationTally {
    /// Timer expiry (the ideal start) to running, ns.
    wake: Histogram<u64>,
    /// Ideal start to completion, ns: of every activation, and of those with a deadline.
    response: Histogram<u64>,
    timed_response: Histogram<u64>,
    /// Response over the relative deadline, in 0.01 % steps.
    used: Histogram<u64>,
    misses: u64,
    /// Misses whose instance met its previous deadline: the incidents, where a miss
    /// carried over from the previous activation is not a new one.
    bursts: u64,
    /// The thread's last activation missed (a thread's own tally only).
    last_missed: bool,
    slack_min_ns: i64,
    run_ns: u128,
}

impl ActivationTally {
    fn new() -> ActivationTally {
        ActivationTally {
            wake: new_histogram(),
            response: new_histogram(),
            timed_response: new_histogram(),
            used: new_histogram(),
            misses: 0,
            bursts: 0,
            last_missed: false,
            slack_min_ns: i64::MAX,
            run_ns: 0,
        }
    }

    /// One activation: with a timer, its wakeup and its response against its deadline;
    /// without one (`deadline_ns` 0), its response and run only.
    fn record(&mut self, a: &Activation) {
        let _ = self.response.record(a.response_ns.max(1));
        self.run_ns += u128::from(a.run_ns);
        if a.deadline_ns == 0 {
            return;
        }
        let slack = a.slack_ns();
        let _ = self.timed_response.record(a.response_ns.max(1));
        let _ = self.wake.record(a.wake_ns.max(1));
        let _ = self.used.record(((a.response_ns as f64 / a.deadline_ns as f64) * 1e4).round().max(1.0) as u64);
        self.misses += u64::from(slack < 0);
        self.bursts += u64::from(slack < 0 && !self.last_missed);
        self.last_missed = slack < 0;
        self.slack_min_ns = self.slack_min_ns.min(slack);
    }

    fn add(&mut self, other: &ActivationTally) {
        let _ = self.wake.add(&other.wake);
        let _ = self.response.add(&other.response);
        let _ = self.timed_response.add(&other.timed_response);
        let _ = self.used.add(&other.used);
        self.misses += other.misses;
        self.bursts += other.bursts;
        self.slack_min_ns = self.slack_min_ns.min(other.slack_min_ns);
        self.run_ns += other.run_ns;
    }

    fn count(&self) -> u64 {
        self.response.len()
    }

    /// The activations that had a timer (and a deadline).
    fn timed(&self) -> u64 {
        self.wake.len()
    }
}

/// An event as a thread runs it, its mutex, condition variable or barrier already found.
enum RunStep<'a> {
    Run(u64),
    Sleep(std::time::Duration),
    Lock(&'a Mutex),
    Unlock(&'a Mutex),
    Yield,
    Runtime(u64),
    Suspend(&'a Cond),
    Resume(&'a Cond),
    Wait { cond: &'a Cond, mutex: &'a Mutex, signal_first: bool },
    Signal(&'a Cond),
    Broadcast(&'a Cond),
    Barrier(&'a Barrier),
}

/// One activation as `--activations` streams it.
#[derive(Clone, Copy, Debug)]
pub struct Activation {
    pub task: usize,
    pub instance: u32,
    pub index: u64,
    /// The ideal start (CLOCK_MONOTONIC ns), and from it to running, to completion.
    pub ideal_ns: u64,
    pub wake_ns: u64,
    pub response_ns: u64,
    /// The CPU time the activation got.
    pub run_ns: u64,
    /// Its phase (0 for a task of one), and its relative deadline (0: none, no timer).
    pub phase: u32,
    pub deadline_ns: u64,
}

impl Activation {
    /// Deadline − response: negative is a miss (meaningless without a deadline).
    pub fn slack_ns(&self) -> i64 {
        self.deadline_ns as i64 - self.response_ns as i64
    }
}

/// Where a thread's activations go beside its histograms: a bounded channel to the writer
/// thread (never blocking the task: a full channel drops the record, and the drop is
/// counted), and the missed ones kept for the trace's split.
#[derive(Clone)]
struct Sinks<'a> {
    stream: Option<std::sync::mpsc::SyncSender<Activation>>,
    /// The records in the channel, and the eventfd that wakes the writer when they reach
    /// `STREAM_WAKE_AT`.
    queued: &'a AtomicUsize,
    wake_writer: std::os::fd::RawFd,
    /// Records the full channel could not take ...
    dropped: &'a AtomicU64,
    /// ... and those sent after the writer failed.
    unwritten: &'a AtomicU64,
    keep_misses: bool,
    /// Set when a signal asks the run to stop: each thread ends before its next activation.
    stop: &'a AtomicBool,
    /// An eventfd each thread bumps when it ends.
    finished: std::os::fd::RawFd,
}

/// The most waits for a mutex one activation keeps for the trace's split.
const MAX_WAITS: usize = 8;

/// A missed activation kept for the trace's split: when its own work could start (its
/// ideal start, or the previous activation's completion when that was later), and its
/// waits for a mutex.
#[derive(Clone, Copy, Debug)]
struct Miss {
    a: Activation,
    start_ns: u64,
    waits: [LockWait; MAX_WAITS],
    n_waits: usize,
}

/// What one task instance's thread brings back.
struct TaskThreadResult {
    tally: ActivationTally,
    tid: i32,
    /// Its last missed activations (at most `misses::MAX_SPLIT`: the trace's buffers keep
    /// the newest events), when traced.
    misses: std::collections::VecDeque<Miss>,
}

/// The calling thread's scheduling for `task`: a deadline reservation under a deadline
/// policy, else the set's CPUs and the task's priority; then the set's nice.
fn set_up_thread(task: &TaskSpec, spec: &TasksetSpec) -> std::result::Result<(), String> {
    let set = match spec.policy {
        p if p.is_deadline() => {
            let flags = sched::DeadlineFlags { reclaim: spec.reclaim, ..Default::default() };
            sched::apply_scheduling(None, p, 0, task.reservation.as_ref(), spec.threads(), flags).map(|_| ())
        }
        p => sched::apply_to_current_thread(task.cpus.as_deref().or(spec.cpus.as_deref()), p, task.prio),
    };
    // The task's own nice (an rt-app priority for SCHED_OTHER), else the set's.
    set.and_then(|()| match task.nice.or(spec.nice) {
        Some(nice) => sched::set_nice(nice).map_err(|e| sched::explain_nice_refusal(nice, &e)),
        None => Ok(()),
    })
}

/// A phase's events as its thread runs them, each mutex found by name here, once, so no
/// activation looks one up.
fn steps_of<'a>(phase: &Phase, objects: &'a SetObjects) -> Vec<RunStep<'a>> {
    let (mutexes, conds) = (&objects.mutexes, &objects.conds);
    phase
        .events
        .iter()
        .map(|e| match e {
            Event::Run(ns) => RunStep::Run(*ns),
            Event::Sleep(ns) => RunStep::Sleep(std::time::Duration::from_nanos(*ns)),
            Event::Lock { name, .. } => RunStep::Lock(&mutexes[name]),
            Event::Unlock(name) => RunStep::Unlock(&mutexes[name]),
            Event::Yield => RunStep::Yield,
            Event::Runtime(ns) => RunStep::Runtime(*ns),
            Event::Suspend(name) => RunStep::Suspend(&conds[name]),
            Event::Resume(name) => RunStep::Resume(&conds[name]),
            Event::Wait { cond, mutex, signal_first } => {
                RunStep::Wait { cond: &conds[cond], mutex: &mutexes[mutex], signal_first: *signal_first }
            }
            Event::Signal(name) => RunStep::Signal(&conds[name]),
            Event::Broadcast(name) => RunStep::Broadcast(&conds[name]),
            Event::Barrier(name) => RunStep::Barrier(&objects.barriers[name]),
        })
        .collect()
}

/// One phase as its thread runs it: its steps, those of an activation's work (all but a
/// last yield that ends a deadline job), and its timing.
struct PhaseSteps<'a> {
    phase: &'a Phase,
    steps: Vec<RunStep<'a>>,
    work: usize,
    job_done_yield: bool,
    ticks: Ticks<'a>,
}

/// The thread of one task instance: its policy, then its activations from `t0` on.
fn activations(
    (index, task, instance_no): (usize, &TaskSpec, u32),
    spec: &TasksetSpec,
    objects: &SetObjects,
    gate: &Gate,
    t0: &AtomicU64,
    abort: &AtomicBool,
    sinks: &Sinks,
) -> std::result::Result<TaskThreadResult, String> {
    let set = set_up_thread(task, spec);
    if set.is_err() {
        abort.store(true, Ordering::Release);
    }
    // SAFETY: gettid takes nothing and cannot fail.
    let tid = unsafe { libc::gettid() };
    // Everything the activations need is made now, not while they run: the mutexes each
    // event takes, found by name once, the histograms and the room for the misses.
    // The thread's own timers by name (a `[[task]]`'s one timer has none).
    let mut own_names: Vec<Option<&str>> = Vec::new();
    let phases: Vec<PhaseSteps> = task
        .phases
        .iter()
        .map(|phase| {
            let ticks = match phase.shared_timer() {
                Some(name) => Ticks::Shared(&objects.timers[name]),
                None if phase.has_timer() => {
                    let name = phase.timer.as_deref();
                    Ticks::Own(own_names.iter().position(|n| *n == name).unwrap_or_else(|| {
                        own_names.push(name);
                        own_names.len() - 1
                    }))
                }
                None => Ticks::None,
            };
            let steps = steps_of(phase, objects);
            // Under deadline a yield ending the events is the job's end ("job done"): the
            // activation completes when it is called, not when the kernel's next period
            // wakes the thread from it.
            let job_done_yield = spec.policy.is_deadline() && matches!(steps.last(), Some(RunStep::Yield));
            let work = steps.len() - usize::from(job_done_yield);
            PhaseSteps { phase, steps, work, job_done_yield, ticks }
        })
        .collect();
    // Where a phase names its own CPUs, each phase's: its own, else the task's, else the
    // set's, else every CPU schedlab may use; the thread moves only when they change.
    let affinities: Vec<Option<Vec<usize>>> = match task.phases.iter().any(|p| p.cpus.is_some()) {
        true => {
            let all = sched::allowed_cpus().unwrap_or_default();
            let base = task.cpus.clone().or_else(|| spec.cpus.clone()).unwrap_or(all);
            task.phases.iter().map(|p| Some(p.cpus.clone().unwrap_or_else(|| base.clone()))).collect()
        }
        false => vec![None; task.phases.len()],
    };
    let mut tally = ActivationTally::new();
    let mut misses = std::collections::VecDeque::with_capacity(if sinks.keep_misses { misses::MAX_SPLIT } else { 0 });
    let mut waits = [LockWait::default(); MAX_WAITS];
    // The mutexes an activation holds at each point (a thread leaving mid-activation gives
    // them back).
    let mut held: Vec<&Mutex> = Vec::with_capacity(objects.mutexes.len());
    // The burn's one calibration, before anything is timed.
    burn(0);
    // Every thread reaches the gate, set up or not, so the main thread never waits for
    // ever; if one could not be set up, none runs.
    let went = gate.arrive();
    set?;
    if !went || abort.load(Ordering::Acquire) {
        return Ok(TaskThreadResult { tally, tid, misses });
    }
    let start = t0.load(Ordering::Acquire);
    let end = start + spec.duration.as_nanos() as u64;
    // Each of the thread's own timers' next tick, from the set's start.
    let mut own_ticks = vec![0u64; own_names.len()];
    let mut n = 0;
    let mut prev_done = 0;
    let mut passes = 0u64;
    'run: loop {
        for (phase_no, p) in phases.iter().enumerate() {
            if let Some(cpus) = &affinities[phase_no] {
                if n == 0 || affinities[(phase_no + affinities.len() - 1) % affinities.len()].as_ref() != Some(cpus) {
                    sched::set_affinity(cpus).map_err(|e| format!("moving task {} to CPUs {cpus:?}: {e}", task.name))?;
                }
            }
            for _ in 0..p.phase.loops {
                // This activation's tick, each use of a timer moving it on by a period.
                let period = p.phase.period_ns;
                let tick = match p.ticks {
                    Ticks::Shared(next) => Some(start + next.fetch_add(period, Ordering::Relaxed)),
                    Ticks::Own(i) => {
                        own_ticks[i] += period;
                        Some(start + own_ticks[i] - period)
                    }
                    Ticks::None => None,
                };
                if sinks.stop.load(Ordering::Relaxed) || tick.unwrap_or_else(monotonic_ns) >= end {
                    break 'run;
                }
                let ideal = match tick {
                    Some(tick) => {
                        sleep_until(tick);
                        tick
                    }
                    None => monotonic_ns(),
                };
                let woke = monotonic_ns();
                let cpu0 = thread_cpu_ns();
                let mut n_waits = 0;
                for step in &p.steps[..p.work] {
                    let woken = match step {
                        RunStep::Run(ns) => {
                            burn(*ns);
                            Woken::Released
                        }
                        RunStep::Sleep(d) => {
                            std::thread::sleep(*d);
                            Woken::Released
                        }
                        RunStep::Lock(m) => {
                            held.push(*m);
                            let wait = m.lock(tid);
                            if n_waits < MAX_WAITS && wait.to_ns > wait.from_ns {
                                waits[n_waits] = wait;
                                n_waits += 1;
                            }
                            Woken::Released
                        }
                        RunStep::Unlock(m) => {
                            m.unlock();
                            held.retain(|h| !std::ptr::eq(*h, *m));
                            Woken::Released
                        }
                        RunStep::Yield => {
                            // SAFETY: sched_yield takes nothing and cannot fail.
                            unsafe { libc::sched_yield() };
                            Woken::Released
                        }
                        RunStep::Runtime(ns) => {
                            let until = monotonic_ns() + ns;
                            while monotonic_ns() < until {
                                std::hint::spin_loop();
                            }
                            Woken::Released
                        }
                        RunStep::Suspend(cond) => cond.wait(end, || {}),
                        RunStep::Resume(cond) | RunStep::Broadcast(cond) => {
                            cond.broadcast();
                            Woken::Released
                        }
                        RunStep::Signal(cond) => {
                            cond.signal();
                            Woken::Released
                        }
                        RunStep::Wait { cond, mutex, signal_first } => {
                            if *signal_first {
                                cond.signal();
                            }
                            let woken = cond.wait(end, || mutex.unlock());
                            match woken {
                                Woken::Released => {
                                    mutex.lock(tid);
                                }
                                // Not taken again: the thread is leaving.
                                Woken::Ended => held.retain(|h| !std::ptr::eq(*h, *mutex)),
                            }
                            woken
                        }
                        RunStep::Barrier(barrier) => barrier.wait(end),
                    };
                    // Stopped or ended while it waited: the activation is not whole, and
                    // is not counted. Its mutexes are given back so no other thread waits.
                    if woken == Woken::Ended {
                        held.drain(..).rev().for_each(|m| m.unlock());
                        break 'run;
                    }
                }
                let done = monotonic_ns();
                let run_ns = thread_cpu_ns() - cpu0;
                if p.job_done_yield {
                    // SAFETY: as above. Under SCHED_DEADLINE: the job is done, the rest of
                    // its runtime given back; the kernel wakes the thread at its next period.
                    unsafe { libc::sched_yield() };
                }
                let a = Activation {
                    task: index,
                    instance: instance_no,
                    index: n,
                    ideal_ns: ideal,
                    wake_ns: woke.saturating_sub(ideal),
                    response_ns: done.saturating_sub(ideal),
                    run_ns,
                    phase: phase_no as u32,
                    deadline_ns: p.phase.deadline_ns,
                };
                tally.record(&a);
                if a.deadline_ns > 0 && a.slack_ns() < 0 && sinks.keep_misses {
                    if misses.len() == misses::MAX_SPLIT {
                        misses.pop_front();
                    }
                    misses.push_back(Miss { a, start_ns: ideal.max(prev_done), waits, n_waits });
                }
                prev_done = done;
                if let Some(stream) = &sinks.stream {
                    match stream.try_send(a) {
                        // The one send that fills the channel to the mark wakes the writer.
                        Ok(()) => {
                            if sinks.queued.fetch_add(1, Ordering::Relaxed) + 1 == STREAM_WAKE_AT {
                                let _ = crate::sys::fd::write_raw(sinks.wake_writer, &1u64.to_ne_bytes());
                            }
                        }
                        Err(std::sync::mpsc::TrySendError::Full(_)) => {
                            sinks.dropped.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(std::sync::mpsc::TrySendError::Disconnected(_)) => {
                            sinks.unwritten.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                n += 1;
            }
        }
        passes += 1;
        if task.passes.is_some_and(|most| passes >= most) {
            break;
        }
    }
    Ok(TaskThreadResult { tally, tid, misses })
}

/// Room for the activations between two drains (1.4 MB of records).
const STREAM_CAPACITY: usize = 1 << 15;
/// The writer sleeps until this many records wait (or the set ends): it is woken by the
/// send that reaches the mark, never by a timer, so it wakes on no CPU periodically
/// (a 1 kHz set wakes it every 16 s).
const STREAM_WAKE_AT: usize = STREAM_CAPACITY / 2;

/// The `--activations` CSV's header; each trial appends its rows.
pub const ACTIVATIONS_HEADER: &str = "policy,block,task,instance,activation,expected_us,expected_mono_ns,wake_us,\
response_us,slack_us,run_us,missed";

/// The writer's side of the activations' channel.
struct Writer<'a> {
    rx: std::sync::mpsc::Receiver<Activation>,
    queued: &'a AtomicUsize,
    wake: std::os::fd::RawFd,
    /// Set when writing fails, so the set ends instead of running on unrecorded.
    stop: &'a AtomicBool,
}

/// Appends the channel's records to `path` each time it is woken, until every task thread
/// is done, off the task set's CPUs when they are pinned. A failure stops the set.
fn write_activations(
    w: Writer,
    to: Written,
    spec: &TasksetSpec,
    repeat: u32,
    t0: &AtomicU64,
) -> std::io::Result<u64> {
    let result = drain_activations(&w, to, spec, repeat, t0);
    if result.is_err() {
        w.stop.store(true, Ordering::Relaxed);
    }
    result
}

/// Where the activations go: rows of one CSV file, or rt-app's log of each thread, one
/// file a thread in a directory.
#[derive(Clone, Copy)]
enum Written<'a> {
    Csv(&'a std::path::Path),
    RtAppLogs(&'a std::path::Path),
}

/// rt-app's per-thread log: its two header lines, as rt-app writes them.
const RT_APP_LOG_COLUMNS: &str = "#idx     perf      run   period           start             end          rel_st      \
slack c_duration   c_period     wu_lat";

fn drain_activations(
    w: &Writer,
    to: Written,
    spec: &TasksetSpec,
    repeat: u32,
    t0: &AtomicU64,
) -> std::io::Result<u64> {
    use std::io::Write;
    use std::sync::mpsc::TryRecvError;
    if let Some(pinned) = &spec.cpus {
        let others: Vec<usize> =
            sched::allowed_cpus().unwrap_or_default().into_iter().filter(|c| !pinned.contains(c)).collect();
        if !others.is_empty() {
            let _ = sched::set_affinity(&others);
        }
    }
    let mut csv = match to {
        Written::Csv(path) => Some(std::fs::OpenOptions::new().append(true).open(path)?),
        Written::RtAppLogs(_) => None,
    };
    // rt-app's logs, each thread's opened at its first activation: its file, its text, and
    // its last activation, whose row waits for the next one's start (rt-app's loop ends
    // when the next begins, its timer's wait included).
    let mut logs: BTreeMap<(usize, u32), RtAppLog> = BTreeMap::new();
    let mut rows = String::new();
    let mut written = 0;
    loop {
        let mut count = [0u8; 8];
        crate::sys::fd::read_raw(w.wake, &mut count)?;
        let mut taken = 0;
        let ended = loop {
            match w.rx.try_recv() {
                Ok(a) => {
                    let start = t0.load(Ordering::Acquire);
                    // Whole rows only: each formatted in full before any is written.
                    match to {
                        Written::Csv(_) => csv_row(&mut rows, &a, spec, repeat, start),
                        Written::RtAppLogs(dir) => {
                            let log = match logs.entry((a.task, a.instance)) {
                                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                                std::collections::btree_map::Entry::Vacant(e) => {
                                    e.insert(open_rt_app_log(dir, spec, repeat, a.task, a.instance)?)
                                }
                            };
                            if let Some(last) = log.last.replace(a) {
                                rt_app_row(&mut log.text, &last, a.ideal_ns + a.wake_ns, spec, start);
                            }
                        }
                    }
                    taken += 1;
                }
                Err(TryRecvError::Empty) => break false,
                Err(TryRecvError::Disconnected) => break true,
            }
        };
        w.queued.fetch_sub(taken, Ordering::Relaxed);
        if let Some(file) = &mut csv {
            file.write_all(rows.as_bytes())?;
            rows.clear();
        }
        for log in logs.values_mut() {
            if ended {
                // The last activation ends with its own events.
                if let Some(last) = log.last.take() {
                    let start = t0.load(Ordering::Acquire);
                    rt_app_row(&mut log.text, &last, last.ideal_ns + last.response_ns, spec, start);
                }
            }
            log.file.write_all(log.text.as_bytes())?;
            log.text.clear();
        }
        written += taken as u64;
        if ended {
            return Ok(written);
        }
    }
}

/// One activation as a row of the `--activations` CSV.
fn csv_row(rows: &mut String, a: &Activation, spec: &TasksetSpec, repeat: u32, start: u64) {
    use std::fmt::Write as _;
    let us = |ns: i64| format!("{:.3}", ns as f64 / 1000.0);
    let task = &spec.tasks[a.task];
    // Without a timer an activation has no wakeup, slack or miss: empty.
    let timed = |text: String| if a.deadline_ns > 0 { text } else { String::new() };
    let _ = writeln!(
        rows,
        "{},{repeat},{},{},{},{},{},{},{},{},{},{}",
        spec.policy.as_str(),
        csv_field(&task.name),
        a.instance,
        a.index,
        us(a.ideal_ns as i64 - start as i64),
        a.ideal_ns,
        timed(us(a.wake_ns as i64)),
        us(a.response_ns as i64),
        timed(us(a.slack_ns())),
        us(a.run_ns as i64),
        timed(u8::from(a.slack_ns() < 0).to_string())
    );
}

/// One thread's rt-app log as it is written.
struct RtAppLog {
    file: std::fs::File,
    text: String,
    last: Option<Activation>,
}

/// A thread's rt-app log, `POLICY-bBLOCK-TASK-INSTANCE.log` in `dir`, with rt-app's header
/// (its policy and priority as the trial set them).
fn open_rt_app_log(
    dir: &std::path::Path,
    spec: &TasksetSpec,
    repeat: u32,
    task: usize,
    instance: u32,
) -> std::io::Result<RtAppLog> {
    let t = &spec.tasks[task];
    let name: String = t.name.chars().map(|c| if c.is_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let path = dir.join(format!("{}-b{repeat}-{name}-{instance}.log", spec.policy.as_str()));
    let file = std::fs::File::create(path)?;
    let policy = format!("SCHED_{}", spec.policy.as_str().to_uppercase());
    let text = format!("# Policy : {policy} priority : {}\n{RT_APP_LOG_COLUMNS}\n", t.prio);
    Ok(RtAppLog { file, text, last: None })
}

/// One activation as a row of rt-app's log, in its columns (µs): `idx` the thread's
/// number in the set; `perf` 0 (rt-app's count of calibrated loops: schedlab runs none);
/// `run` the CPU time the activation got; `start` when it began running (its tick and
/// wakeup), `end` when the next began (`end_ns`: rt-app's loop ends after its timer's
/// wait), both on CLOCK_MONOTONIC, and `period` between them; `rel_st` from the set's
/// start; `slack` deadline − response (0 without a timer, as rt-app writes it);
/// `c_duration` and `c_period` the phase's asked run and timer period; `wu_lat` the
/// wakeup after the timer (0 without one).
fn rt_app_row(text: &mut String, a: &Activation, end_ns: u64, spec: &TasksetSpec, start: u64) {
    use std::fmt::Write as _;
    let idx = spec.tasks[..a.task].iter().map(|t| t.count as u64).sum::<u64>() + u64::from(a.instance);
    let phase = &spec.tasks[a.task].phases[a.phase as usize];
    let timed = a.deadline_ns > 0;
    // In whole µs first, so that period is end − start to the digit.
    let (start_us, end_us) = ((a.ideal_ns + a.wake_ns) / 1000, end_ns / 1000);
    let _ = writeln!(
        text,
        "{idx:4} {:8} {:8} {:8} {:15} {:15} {:15} {:10} {:10} {:10} {:10}",
        0,
        a.run_ns / 1000,
        end_us.saturating_sub(start_us),
        start_us,
        end_us,
        (a.ideal_ns + a.wake_ns).saturating_sub(start) / 1000,
        if timed { a.slack_ns() / 1000 } else { 0 },
        phase.run_ns() / 1000,
        phase.period_ns / 1000,
        if timed { a.wake_ns / 1000 } else { 0 },
    );
}

/// A task's name as one CSV field: quoted when it holds a comma, quote or line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
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

fn stats(task: &TaskSpec, t: &ActivationTally) -> TaskStats {
    let n = t.count();
    let timed = t.timed() > 0;
    // One deadline for all its timed activations: what its slack p99 is measured from.
    let mut deadlines = task.phases.iter().filter(|p| p.has_timer()).map(|p| p.deadline_ns);
    let one_deadline = deadlines.next().filter(|&d| deadlines.all(|e| e == d));
    TaskStats {
        name: task.name.clone(),
        instances: task.count,
        activations: n,
        untimed: Some(n - t.timed()).filter(|&u| u > 0),
        misses: t.misses,
        miss_bursts: t.bursts,
        wake_p50_ns: timed.then(|| at(&t.wake, 0.5)),
        wake_p99_ns: timed.then(|| at(&t.wake, 0.99)),
        wake_max_ns: timed.then(|| t.wake.max()),
        response_p50_ns: at(&t.response, 0.5),
        response_p99_ns: at(&t.response, 0.99),
        response_max_ns: if n > 0 { t.response.max() } else { 0 },
        slack_p99_ns: one_deadline.filter(|_| timed).map(|d| d as i64 - at(&t.timed_response, 0.99) as i64),
        slack_min_ns: timed.then_some(t.slack_min_ns),
        run_mean_ns: t.run_ns as f64 / n.max(1) as f64,
    }
}

/// Each CPU's trace buffer (KiB) for a traced task set, from its length: rt-taskset's set
/// (1 kHz + 500 Hz + 100 Hz) wrote 0.3-0.5 MB/s a CPU here (13 000 events/s on the busier
/// CPU, others' builds running), so 1 MiB a second of trial, between 4 and 32 MiB: the
/// buffer the kernel keeps and the reading's memory (its text, twice) follow the trial,
/// not a fixed 32 MiB a CPU. A buffer that overflows loses its oldest events (the last
/// misses are the ones split); what it lost is counted, never hidden.
fn trace_buffer_kb(duration: std::time::Duration) -> usize {
    (duration.as_secs_f64().ceil() as usize * 1024).clamp(4 * 1024, 32 * 1024)
}

/// What `run` is asked beside the set: the trial's block (for the activations' rows) and
/// where to stream them.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunExtras<'a> {
    pub repeat: u32,
    pub activations: Option<&'a std::path::Path>,
    /// `activations` is a directory of rt-app's per-thread logs, not one CSV file.
    pub rt_app_log: bool,
}

/// A thread's name (its comm, 15 bytes at most): the task's, so a trace names it.
fn thread_name(task: &str) -> String {
    let mut name = String::new();
    for c in task.chars() {
        if name.len() + c.len_utf8() > 15 {
            break;
        }
        name.push(c);
    }
    name
}

/// What the set's threads share by name: the mutexes their events lock, the timers they
/// share (each the time of its next tick from the set's start), and rt-app's condition
/// variables and barriers.
struct SetObjects {
    mutexes: BTreeMap<String, Mutex>,
    timers: BTreeMap<String, AtomicU64>,
    conds: BTreeMap<String, Cond>,
    barriers: BTreeMap<String, Barrier>,
}

impl SetObjects {
    /// Lets every thread blocked on a condition variable or barrier go.
    fn close(&self) {
        self.conds.values().for_each(Cond::close);
        self.barriers.values().for_each(Barrier::close);
    }
}

/// The set's shared objects, each made once: a mutex with the priority inheritance its
/// first lock event asks.
fn make_objects(spec: &TasksetSpec) -> Result<SetObjects> {
    let mut mutexes: BTreeMap<String, Mutex> = BTreeMap::new();
    let mut timers = BTreeMap::new();
    let mut conds = BTreeMap::new();
    let threads = spec.threads();
    let mut parties: BTreeMap<String, u32> = BTreeMap::new();
    for task in &spec.tasks {
        for e in task.all_events() {
            if let Event::Lock { name, pi } = e {
                if !mutexes.contains_key(name) {
                    mutexes.insert(name.clone(), Mutex::new(*pi)?);
                }
            }
        }
        for name in task.phases.iter().filter_map(Phase::shared_timer) {
            timers.entry(name.to_string()).or_insert_with(|| AtomicU64::new(0));
        }
        let mut own_barriers = std::collections::BTreeSet::new();
        for e in task.all_events() {
            match e {
                Event::Suspend(c) | Event::Resume(c) | Event::Signal(c) | Event::Broadcast(c) => {
                    conds.entry(c.clone()).or_insert_with(|| Cond::with_room(threads));
                }
                Event::Wait { cond, .. } => {
                    conds.entry(cond.clone()).or_insert_with(|| Cond::with_room(threads));
                }
                Event::Barrier(b) => {
                    own_barriers.insert(b.clone());
                }
                _ => {}
            }
        }
        // A barrier's parties: every thread of every task that uses it.
        for b in own_barriers {
            *parties.entry(b).or_insert(0) += task.count;
        }
    }
    let barriers = parties.into_iter().map(|(name, n)| (name, Barrier::new(n))).collect();
    Ok(SetObjects { mutexes, timers, conds, barriers })
}

/// Where a phase's ticks come from: a timer the threads share, or one of the thread's own
/// (its index among them).
enum Ticks<'a> {
    Shared(&'a AtomicU64),
    Own(usize),
    None,
}

/// What every task thread shares with the others and the main thread.
#[derive(Clone, Copy)]
struct SetShared<'a> {
    spec: &'a TasksetSpec,
    objects: &'a SetObjects,
    gate: &'a Gate,
    t0: &'a AtomicU64,
    abort: &'a AtomicBool,
}

/// A task thread's handle, with its task's index.
type TaskThread<'scope> = (usize, std::thread::ScopedJoinHandle<'scope, std::result::Result<TaskThreadResult, String>>);

/// Start a thread for every task instance, named after its task, each with its own copy
/// of `sinks`; they wait at the gate. `sinks` (its sender with it) is dropped on return.
/// A thread that cannot be started lets those already started go, to end at once, and
/// fails the run, naming the process limit.
fn spawn_tasks<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    sh: SetShared<'env>,
    sinks: Sinks<'env>,
) -> Result<Vec<TaskThread<'scope>>> {
    let threads = sh.spec.threads();
    let mut handles = Vec::with_capacity(threads);
    for (i, task) in sh.spec.tasks.iter().enumerate() {
        for k in 0..task.count {
            let SetShared { spec, objects, gate, t0, abort } = sh;
            let sinks = sinks.clone();
            let handle = std::thread::Builder::new().name(thread_name(&task.name)).spawn_scoped(scope, move || {
                let result = activations((i, task, k), spec, objects, gate, t0, abort, &sinks);
                // However it ended, the main thread hears of it (it waits on this,
                // not on a timer).
                let _ = crate::sys::fd::write_raw(sinks.finished, &1u64.to_ne_bytes());
                result
            });
            match handle {
                Ok(h) => handles.push((i, h)),
                Err(e) => {
                    // The threads already started wait at the gate: let them go, to
                    // end at once.
                    abort.store(true, Ordering::Release);
                    gate.call_off();
                    let started = handles.len();
                    return Err(Error::os(
                        format!(
                            "starting task thread {} of {threads} (a process limit — `ulimit -u`, a cgroup's \
                             pids.max — allows no more: run fewer instances, or raise it)",
                            started + 1
                        ),
                        e,
                    ));
                }
            }
        }
    }
    Ok(handles)
}

/// Sum the threads' activations up, per task and over the set, and split the kept misses
/// by the recording; the first thread (in start order) that failed fails the run.
fn sum_up(
    spec: &TasksetSpec,
    results: Vec<(usize, std::result::Result<TaskThreadResult, String>)>,
    recording: Option<std::result::Result<Recording, String>>,
    activations_dropped: Option<u64>,
) -> Result<TasksetOutcome> {
    let mut per_task: Vec<ActivationTally> = spec.tasks.iter().map(|_| ActivationTally::new()).collect();
    let mut tids = Vec::new();
    let mut missed = Vec::new();
    for (i, result) in results {
        let r = result.map_err(Error::failed)?;
        per_task[i].add(&r.tally);
        missed.extend(r.misses.iter().map(|m| (r.tid, *m)));
        tids.push(r.tid);
    }
    let mut all = ActivationTally::new();
    for t in &per_task {
        all.add(t);
    }
    let tasks: Vec<TaskStats> = spec.tasks.iter().zip(&per_task).map(|(t, tally)| stats(t, tally)).collect();
    let trace = recording.map(|r| split(spec, r, missed, all.misses));
    Ok(TasksetOutcome {
        activations: all.count(),
        untimed: Some(all.count() - all.timed()).filter(|&u| u > 0),
        misses: all.misses,
        miss_bursts: all.bursts,
        deadline_use_p99_pct: (all.timed() > 0).then(|| at(&all.used, 0.99) as f64 / 100.0),
        wake_p99_ns: (all.timed() > 0).then(|| at(&all.wake, 0.99)),
        response_p99_ns: at(&all.response, 0.99),
        slack_min_ns: (all.timed() > 0).then_some(all.slack_min_ns),
        worst_task_miss_pct: tasks
            .iter()
            .zip(&per_task)
            .filter(|(_, tally)| tally.timed() > 0)
            .map(|(t, tally)| 100.0 * t.misses as f64 / tally.timed() as f64)
            .fold(0.0, f64::max),
        tasks,
        beside: Default::default(),
        trace,
        activations_dropped,
    })
}

/// The channel the task threads stream their activations to the writer by, where
/// `--activations` asks for them.
type StreamChannel = (Option<std::sync::mpsc::SyncSender<Activation>>, Option<std::sync::mpsc::Receiver<Activation>>);

/// The activations' channel, bounded to `STREAM_CAPACITY`; none without `--activations`.
fn stream_channel(extras: RunExtras) -> StreamChannel {
    match extras.activations {
        Some(_) => {
            let (tx, rx) = std::sync::mpsc::sync_channel(STREAM_CAPACITY);
            (Some(tx), Some(rx))
        }
        None => (None, None),
    }
}

/// The process's memory locked (`lock_pages`) until this is dropped.
struct MemoryLocked;

impl MemoryLocked {
    fn lock() -> Result<MemoryLocked> {
        crate::sys::process::lock_memory().map_err(|e| Error::failed(format!("lock_pages: mlockall: {e}")))?;
        Ok(MemoryLocked)
    }
}

impl Drop for MemoryLocked {
    fn drop(&mut self) {
        crate::sys::process::unlock_memory();
    }
}

/// Run the task set once and sum up its activations.
pub fn run(spec: &TasksetSpec, extras: RunExtras) -> Result<TasksetOutcome> {
    // SIGINT, SIGTERM (also the parent-death signal of a trial whose orchestrator was
    // killed) and SIGHUP stop the set: blocked in every thread started below and read
    // here, so the threads end, the trace instance goes and the streamed rows are whole.
    let signals = crate::sys::signals::SignalWatch::new(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
        .map_err(|e| Error::os("setting up signal handling", e))?;
    let finished = crate::sys::fd::eventfd().map_err(|e| Error::os("creating an eventfd", e))?;
    let finished_fd = std::os::fd::AsRawFd::as_raw_fd(&finished);
    let stop = AtomicBool::new(false);
    let mut interrupted = None;
    // An rt-app file's `lock_pages`: refused memory locking fails the trial, named.
    let _locked = match spec.lock_pages {
        true => Some(MemoryLocked::lock()?),
        false => None,
    };
    let objects = make_objects(spec)?;
    let threads = spec.threads();
    let gate = Gate::new();
    let t0 = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let dropped = AtomicU64::new(0);
    let unwritten = AtomicU64::new(0);
    let queued = AtomicUsize::new(0);
    let wake_writer = crate::sys::fd::eventfd().map_err(|e| Error::os("creating an eventfd", e))?;
    let wake_fd = std::os::fd::AsRawFd::as_raw_fd(&wake_writer);
    let (tx, rx) = stream_channel(extras);
    let mut tracing = None;
    let (results, written) = std::thread::scope(|scope| -> Result<_> {
        let shared = SetShared { spec, objects: &objects, gate: &gate, t0: &t0, abort: &abort };
        let sinks = Sinks {
            stream: tx,
            queued: &queued,
            wake_writer: wake_fd,
            dropped: &dropped,
            unwritten: &unwritten,
            keep_misses: spec.trace,
            stop: &stop,
            finished: finished_fd,
        };
        // The sender goes with `sinks`: once every task thread is done, the writer sees
        // the channel end.
        let handles = spawn_tasks(scope, shared, sinks)?;
        let writer = match (rx, extras.activations) {
            (Some(rx), Some(path)) => {
                let t0 = &t0;
                let w = Writer { rx, queued: &queued, wake: wake_fd, stop: &stop };
                let to = if extras.rt_app_log { Written::RtAppLogs(path) } else { Written::Csv(path) };
                Some(scope.spawn(move || write_activations(w, to, spec, extras.repeat, t0)))
            }
            _ => None,
        };
        gate.wait_for(threads);
        // The threads are set up and wait: the recording starts now, before the window.
        if spec.trace {
            tracing = Some(start_tracing(spec));
        }
        t0.store(monotonic_ns() + START_DELAY_NS, Ordering::Release);
        // The background load's figures are of the window the task set runs in.
        crate::sys::load::mark_window_start();
        gate.open();
        // Off the pinned CPUs, the main thread sleeps until a thread ends or a signal
        // comes: never on a timer.
        if let Some(pinned) = &spec.cpus {
            let others: Vec<usize> =
                sched::allowed_cpus().unwrap_or_default().into_iter().filter(|c| !pinned.contains(c)).collect();
            if !others.is_empty() {
                let _ = sched::set_affinity(&others);
            }
        }
        let mut ended = 0u64;
        while ended < handles.len() as u64 {
            let mut pfds = [
                libc::pollfd { fd: signals.raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: finished_fd, events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: two valid pollfds.
            unsafe { libc::poll(pfds.as_mut_ptr(), 2, -1) };
            if pfds[1].revents & libc::POLLIN != 0 {
                let mut count = [0u8; 8];
                if matches!(crate::sys::fd::read_raw(finished_fd, &mut count), Ok(8)) {
                    ended += u64::from_ne_bytes(count);
                }
            }
            if let Some(&sig) = signals.drain().first() {
                interrupted.get_or_insert(sig);
                stop.store(true, Ordering::Relaxed);
                // A thread blocked on a condition variable or barrier goes now.
                objects.close();
            }
        }
        let joined: Vec<_> = handles
            .into_iter()
            .map(|(i, h)| (i, h.join().unwrap_or_else(|_| Err("a task thread panicked".to_string()))))
            .collect();
        crate::sys::load::mark_window_end();
        // Every sender is gone: the writer's last wake drains the rest and ends.
        let _ = crate::sys::fd::write_raw(wake_fd, &1u64.to_ne_bytes());
        let written = writer.map(|w| w.join().unwrap_or_else(|_| Err(std::io::Error::other("the writer panicked"))));
        Ok((joined, written))
    })?;
    // A failed writer stopped the set: its error first (a signal may have come too).
    if let (Some(Err(e)), Some(path)) = (&written, extras.activations) {
        drop(tracing);
        return Err(Error::env(format!(
            "writing {}: {} (the set was stopped; {} activations came after the failure)",
            path.display(),
            crate::error::describe_io(e),
            unwritten.load(Ordering::Relaxed)
        )));
    }
    if let Some(sig) = interrupted {
        // Stopped: the session is dropped (its instance removed), nothing is recorded.
        drop(tracing);
        return Err(Error::Interrupted(sig));
    }
    let recording = tracing.map(crate::bench::read_trace);
    let activations_dropped = extras.activations.map(|_| dropped.load(Ordering::Relaxed));
    sum_up(spec, results, recording, activations_dropped)
}

/// A tracing session on the task set's CPUs (all it may use when unpinned), or why none.
fn start_tracing(spec: &TasksetSpec) -> std::result::Result<crate::sys::trace::TraceSession, String> {
    let cpus = match &spec.cpus {
        Some(cpus) => cpus.clone(),
        None => sched::allowed_cpus().map_err(|e| format!("no attribution: reading the allowed CPUs: {e}"))?,
    };
    crate::bench::start_trace(&cpus, trace_buffer_kb(spec.duration))
}

/// The most CPU time an activation's own work can take on its clock: its run events, each
/// of which a burn overshoots by less than one chunk.
fn own_cpu_bound_ns(phase: &Phase) -> u64 {
    let runs = phase.events.iter().filter(|e| matches!(e, Event::Run(_))).count() as u64;
    phase.run_ns() + runs * crate::sys::clock::BURN_CHUNK_NS
}

/// Each kept miss split by what the recording saw on its thread's CPU (the last
/// `MAX_SPLIT` in time), or why there is no recording.
fn split(
    spec: &TasksetSpec,
    recording: std::result::Result<Recording, String>,
    mut missed: Vec<(i32, Miss)>,
    misses: u64,
) -> MissTrace {
    let recording = match recording {
        Ok(r) => r,
        Err(reason) => return MissTrace::unavailable(reason, misses),
    };
    // The last ones: the trace's buffers overwrite their oldest events.
    missed.sort_by_key(|(_, m)| m.a.ideal_ns);
    let first = missed.len().saturating_sub(misses::MAX_SPLIT);
    missed.drain(..first);
    let windows: Vec<MissWindow> = missed
        .iter()
        .map(|(tid, m)| MissWindow {
            tid: *tid,
            from_ns: m.a.ideal_ns,
            start_ns: m.start_ns,
            to_ns: m.a.ideal_ns + m.a.response_ns,
            lock_waits: m.waits[..m.n_waits].to_vec(),
        })
        .collect();
    let pinned = spec.cpus.as_ref().filter(|c| c.len() == 1).map(|c| c[0]);
    let (splits, once) = misses::split_misses(&recording.events, &windows, |_| pinned);
    let lost_on = |cpu: Option<usize>| recording.lost.iter().any(|&(c, n)| n > 0 && Some(c) == cpu);
    let each = missed
        .iter()
        .zip(splits)
        .map(|((_, m), s)| {
            let a = &m.a;
            let task = &spec.tasks[a.task];
            MissSplit {
                task: task.name.clone(),
                instance: a.instance,
                activation: a.index,
                at_ns: a.ideal_ns,
                response_ns: a.response_ns,
                slack_ns: a.slack_ns(),
                cpu: s.cpu,
                earlier_ns: s.earlier_ns,
                on_cpu_ns: s.on_cpu_ns,
                // Its own work is what its clock counted, but never more than its events
                // ask: a host that does not report steal charges a stall inside a burn to
                // the thread's clock, and the burn then stops short of its work.
                not_visible_ns: s.on_cpu_ns.saturating_sub(a.run_ns.min(own_cpu_bound_ns(&task.phases[a.phase as usize]))),
                asleep_ns: s.asleep_ns,
                timer_late_ns: s.timer_late_ns,
                lock_ns: s.lock_ns,
                throttled_ns: s.throttled_ns,
                unknown_ns: s.unknown_ns,
                partial: lost_on(s.cpu),
                culprits: s.culprits,
            }
        })
        .collect();
    let lost_events = recording.lost.iter().map(|(_, n)| n).sum();
    MissTrace { lost_events, misses, each, ..MissTrace::default() }.summed(&once)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(phases: Vec<Phase>) -> TaskSpec {
        TaskSpec {
            name: "t".into(),
            count: 1,
            phases,
            prio: 0,
            nice: None,
            reservation: None,
            blocking_ns: 0,
            cpus: None,
            passes: None,
        }
    }

    fn activation(deadline_ns: u64, wake_ns: u64, response_ns: u64) -> Activation {
        Activation { task: 0, instance: 0, index: 0, ideal_ns: 0, wake_ns, response_ns, run_ns: 100_000, phase: 0, deadline_ns }
    }

    #[test]
    fn a_tally_counts_misses_and_the_least_slack() {
        let task = task(vec![Phase::only(1_000_000, 1_000_000, vec![Event::Run(100_000)])]);
        let mut t = ActivationTally::new();
        for (wake, response) in [(10_000, 200_000), (20_000, 1_500_000), (20_000, 1_200_000), (20_000, 200_000), (20_000, 1_100_000)] {
            t.record(&activation(1_000_000, wake, response));
        }
        let s = stats(&task, &t);
        // Three misses in two bursts: the second carried over from the first.
        assert_eq!((s.activations, s.misses, s.miss_bursts, s.slack_min_ns), (5, 3, 2, Some(-500_000)));
        assert_eq!((s.untimed, s.miss_pct()), (None, Some(60.0)));
        assert_eq!(s.run_mean_ns, 100_000.0);
        // Two of the set's activations used 20 % of the deadline, the others 110-150 %.
        assert!((at(&t.used, 0.4) as f64 / 100.0 - 20.0).abs() < 0.1);
    }

    #[test]
    fn an_activation_without_a_timer_has_no_wakeup_slack_or_miss() {
        let task = task(vec![
            Phase { loops: 2, ..Phase::only(1_000_000, 1_000_000, vec![Event::Run(100_000)]) },
            Phase::only(0, 0, vec![Event::Run(100_000), Event::Sleep(100_000)]),
        ]);
        let mut t = ActivationTally::new();
        t.record(&activation(1_000_000, 10_000, 300_000));
        t.record(&activation(1_000_000, 10_000, 400_000));
        // An untimed activation five times as long as the deadline is no miss.
        t.record(&activation(0, 0, 5_000_000));
        let s = stats(&task, &t);
        assert_eq!((s.activations, s.untimed, s.misses, s.miss_pct()), (3, Some(1), 0, Some(0.0)));
        assert!(s.wake_max_ns.is_some_and(|ns| ns.abs_diff(10_000) < 100) && s.slack_min_ns == Some(600_000), "{s:?}");
        // The slack p99 is the timed activations' (deadline − 400 µs, within the
        // histogram's precision), not the untimed 5 ms one's.
        assert!(s.slack_p99_ns.is_some_and(|ns| (ns - 600_000).abs() < 1_000), "{s:?}");
        assert!(s.response_max_ns >= 5_000_000);
        let only_untimed = stats(&task, &{
            let mut t = ActivationTally::new();
            t.record(&activation(0, 0, 300_000));
            t
        });
        assert_eq!((only_untimed.wake_p99_ns, only_untimed.slack_p99_ns, only_untimed.miss_pct()), (None, None, None));
    }
}
