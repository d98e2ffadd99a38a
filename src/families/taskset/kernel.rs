//! The task set, run: a thread per task instance under the trial's policy, each woken by
//! an absolute periodic timer (`clock_nanosleep` with TIMER_ABSTIME on CLOCK_MONOTONIC)
//! and doing its events; per activation the wakeup latency, the response time, the slack
//! to its deadline and the CPU time it got. The schedule is ideal: a late activation does
//! not move the next one, so lateness carries over and is counted, as a real task set's.

use super::model::{TaskSpec, TaskStats, TasksetOutcome, TasksetSpec};
use super::task::Event;
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
    /// Ideal start to completion, ns.
    response: Histogram<u64>,
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
            used: new_histogram(),
            misses: 0,
            bursts: 0,
            last_missed: false,
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
        self.bursts += u64::from(slack < 0 && !self.last_missed);
        self.last_missed = slack < 0;
        self.slack_min_ns = self.slack_min_ns.min(slack);
        self.run_ns += u128::from(run_ns);
    }

    fn add(&mut self, other: &ActivationTally) {
        let _ = self.wake.add(&other.wake);
        let _ = self.response.add(&other.response);
        let _ = self.used.add(&other.used);
        self.misses += other.misses;
        self.bursts += other.bursts;
        self.slack_min_ns = self.slack_min_ns.min(other.slack_min_ns);
        self.run_ns += other.run_ns;
    }

    fn count(&self) -> u64 {
        self.wake.len()
    }
}

/// An event as a thread runs it, its mutex already found.
enum RunStep<'a> {
    Run(u64),
    Sleep(std::time::Duration),
    Lock(&'a Mutex),
    Unlock(&'a Mutex),
    Yield,
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
    set.and_then(|()| match spec.nice {
        Some(nice) => sched::set_nice(nice).map_err(|e| sched::explain_nice_refusal(nice, &e)),
        None => Ok(()),
    })
}

/// `task`'s events as its thread runs them, each mutex found by name here, once, so
/// no activation looks one up.
fn steps_of<'a>(task: &TaskSpec, mutexes: &'a BTreeMap<String, Mutex>) -> Vec<RunStep<'a>> {
    task.events
        .iter()
        .map(|e| match e {
            Event::Run(ns) => RunStep::Run(*ns),
            Event::Sleep(ns) => RunStep::Sleep(std::time::Duration::from_nanos(*ns)),
            Event::Lock { name, .. } => RunStep::Lock(&mutexes[name]),
            Event::Unlock(name) => RunStep::Unlock(&mutexes[name]),
            Event::Yield => RunStep::Yield,
        })
        .collect()
}

/// The thread of one task instance: its policy, then its activations from `t0` on.
fn activations(
    (index, task, instance_no): (usize, &TaskSpec, u32),
    spec: &TasksetSpec,
    mutexes: &BTreeMap<String, Mutex>,
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
    let steps = steps_of(task, mutexes);
    // Under deadline a yield ending the events is the job's end ("job done"): the
    // activation completes when it is called, not when the kernel's next period wakes
    // the thread from it.
    let job_done_yield = spec.policy.is_deadline() && matches!(steps.last(), Some(RunStep::Yield));
    let work = steps.len() - usize::from(job_done_yield);
    let mut tally = ActivationTally::new();
    let mut misses = std::collections::VecDeque::with_capacity(if sinks.keep_misses { misses::MAX_SPLIT } else { 0 });
    let mut waits = [LockWait::default(); MAX_WAITS];
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
    let mut ideal = start;
    let mut n = 0;
    let mut prev_done = 0;
    while ideal < end && !sinks.stop.load(Ordering::Relaxed) {
        sleep_until(ideal);
        let woke = monotonic_ns();
        let cpu0 = thread_cpu_ns();
        let mut n_waits = 0;
        for step in &steps[..work] {
            match step {
                RunStep::Run(ns) => burn(*ns),
                RunStep::Sleep(d) => std::thread::sleep(*d),
                RunStep::Lock(m) => {
                    let wait = m.lock(tid);
                    if n_waits < MAX_WAITS && wait.to_ns > wait.from_ns {
                        waits[n_waits] = wait;
                        n_waits += 1;
                    }
                }
                RunStep::Unlock(m) => m.unlock(),
                // SAFETY: sched_yield takes nothing and cannot fail.
                RunStep::Yield => unsafe {
                    libc::sched_yield();
                },
            }
        }
        let done = monotonic_ns();
        let run_ns = thread_cpu_ns() - cpu0;
        if job_done_yield {
            // SAFETY: as above. Under SCHED_DEADLINE: the job is done, the rest of its
            // runtime given back; the kernel wakes the thread at its next period.
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
        };
        tally.record(task, a.wake_ns, a.response_ns, run_ns);
        if a.response_ns > task.deadline_ns && sinks.keep_misses {
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
        ideal += task.period_ns;
        n += 1;
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
    path: &std::path::Path,
    spec: &TasksetSpec,
    repeat: u32,
    t0: &AtomicU64,
) -> std::io::Result<u64> {
    let result = drain_activations(&w, path, spec, repeat, t0);
    if result.is_err() {
        w.stop.store(true, Ordering::Relaxed);
    }
    result
}

fn drain_activations(
    w: &Writer,
    path: &std::path::Path,
    spec: &TasksetSpec,
    repeat: u32,
    t0: &AtomicU64,
) -> std::io::Result<u64> {
    use std::fmt::Write as _;
    use std::io::Write;
    use std::sync::mpsc::TryRecvError;
    if let Some(pinned) = &spec.cpus {
        let others: Vec<usize> =
            sched::allowed_cpus().unwrap_or_default().into_iter().filter(|c| !pinned.contains(c)).collect();
        if !others.is_empty() {
            let _ = sched::set_affinity(&others);
        }
    }
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    let us = |ns: i64| format!("{:.3}", ns as f64 / 1000.0);
    let mut rows = String::new();
    let mut written = 0;
    loop {
        let mut count = [0u8; 8];
        crate::sys::fd::read_raw(w.wake, &mut count)?;
        let mut taken = 0;
        let ended = loop {
            match w.rx.try_recv() {
                Ok(a) => {
                    let task = &spec.tasks[a.task];
                    let slack = task.deadline_ns as i64 - a.response_ns as i64;
                    let start = t0.load(Ordering::Acquire);
                    // Whole rows only: each formatted in full before any is written.
                    let _ = writeln!(
                        rows,
                        "{},{repeat},{},{},{},{},{},{},{},{},{},{}",
                        spec.policy.as_str(),
                        csv_field(&task.name),
                        a.instance,
                        a.index,
                        us(a.ideal_ns as i64 - start as i64),
                        a.ideal_ns,
                        us(a.wake_ns as i64),
                        us(a.response_ns as i64),
                        us(slack),
                        us(a.run_ns as i64),
                        u8::from(slack < 0)
                    );
                    taken += 1;
                }
                Err(TryRecvError::Empty) => break false,
                Err(TryRecvError::Disconnected) => break true,
            }
        };
        w.queued.fetch_sub(taken, Ordering::Relaxed);
        file.write_all(rows.as_bytes())?;
        rows.clear();
        written += taken as u64;
        if ended {
            return Ok(written);
        }
    }
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
    TaskStats {
        name: task.name.clone(),
        instances: task.count,
        activations: n,
        misses: t.misses,
        miss_bursts: t.bursts,
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

/// The named mutexes the set's events lock, each made once, with the priority inheritance
/// its first lock event asks.
fn make_mutexes(spec: &TasksetSpec) -> Result<BTreeMap<String, Mutex>> {
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
    Ok(mutexes)
}

/// What every task thread shares with the others and the main thread.
#[derive(Clone, Copy)]
struct SetShared<'a> {
    spec: &'a TasksetSpec,
    mutexes: &'a BTreeMap<String, Mutex>,
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
            let SetShared { spec, mutexes, gate, t0, abort } = sh;
            let sinks = sinks.clone();
            let handle = std::thread::Builder::new().name(thread_name(&task.name)).spawn_scoped(scope, move || {
                let result = activations((i, task, k), spec, mutexes, gate, t0, abort, &sinks);
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
        misses: all.misses,
        miss_bursts: all.bursts,
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
    let mutexes = make_mutexes(spec)?;
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
        let shared = SetShared { spec, mutexes: &mutexes, gate: &gate, t0: &t0, abort: &abort };
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
                Some(scope.spawn(move || write_activations(w, path, spec, extras.repeat, t0)))
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
fn own_cpu_bound_ns(task: &TaskSpec) -> u64 {
    let runs = task.events.iter().filter(|e| matches!(e, Event::Run(_))).count() as u64;
    task.run_ns() + runs * crate::sys::clock::BURN_CHUNK_NS
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
                slack_ns: task.deadline_ns as i64 - a.response_ns as i64,
                cpu: s.cpu,
                earlier_ns: s.earlier_ns,
                on_cpu_ns: s.on_cpu_ns,
                // Its own work is what its clock counted, but never more than its events
                // ask: a host that does not report steal charges a stall inside a burn to
                // the thread's clock, and the burn then stops short of its work.
                not_visible_ns: s.on_cpu_ns.saturating_sub(a.run_ns.min(own_cpu_bound_ns(task))),
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
            blocking_ns: 0,
            cpus: None,
        };
        let mut t = ActivationTally::new();
        t.record(&task, 10_000, 200_000, 100_000);
        t.record(&task, 20_000, 1_500_000, 100_000);
        t.record(&task, 20_000, 1_200_000, 100_000);
        t.record(&task, 20_000, 200_000, 100_000);
        t.record(&task, 20_000, 1_100_000, 100_000);
        let s = stats(&task, &t);
        // Three misses in two bursts: the second carried over from the first.
        assert_eq!((s.activations, s.misses, s.miss_bursts, s.slack_min_ns), (5, 3, 2, -500_000));
        assert_eq!(s.run_mean_ns, 100_000.0);
        // Two of the set's activations used 20 % of the deadline, the others 110-150 %.
        assert!((at(&t.used, 0.4) as f64 / 100.0 - 20.0).abs() < 0.1);
    }
}
