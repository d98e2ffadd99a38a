//! The server, run: M message threads, each with T workers. A message thread wakes at
//! fixed absolute times (`clock_nanosleep` with TIMER_ABSTIME: open loop, so a slow reply
//! delays no request), and hands each request, with the time it was due and the time it
//! went out, to one idle worker, woken by a futex; with none idle the request waits in the
//! message thread's queue. The worker records its wakeup latency (sent → running), sleeps
//! the think time, does the CPU work on its own CPU clock (optionally holding the lock of
//! the CPU it is on), and records the request's latency from the time it was due (→ done:
//! a late send counts against the request, no coordinated omission). Requests still queued
//! when the window ends are counted as unserved, each with its wait so far as a lower bound
//! of its latency. Each thread keeps HDR histograms, merged at the end, so memory does not
//! grow with the duration; the workers' run-queue wait is read from schedstat at the
//! window's edges.

use super::model::{
    Probe, Rate, ServerOutcome, ServerSpec, WorkerStats, CATCH_UP_NS, MAX_PROBES, PROBE_NS, START_DELAY_NS,
};
use crate::error::{Error, Result};
use crate::sys::clock::{burn, monotonic_ns, process_cpu_ns, sleep_until};
use crate::sys::futex::{self, Scope};
use crate::sys::gate::Gate;
use crate::sys::sched;
use crate::sys::schedstat::parse_schedstat;
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Requests one message thread's queue holds; more are dropped (and counted).
pub const QUEUE_CAPACITY: usize = 16_384;
/// A probe this close to the target (relative) ends the search.
const PROBE_TOLERANCE: f64 = 0.05;

/// A worker's futex word: asleep (idle), handed a request, or told to stop.
const IDLE: u32 = 0;
const WOKEN: u32 = 1;
const STOP: u32 = 2;

/// A request: when it was due (its place in the open-loop schedule) and when its message
/// thread actually sent it (later, where that thread was itself late).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Request {
    due: u64,
    sent: u64,
}

/// A worker as its message thread sees it: its futex word and the request it is handed.
struct WorkerSlot {
    word: AtomicU32,
    due: AtomicU64,
    sent: AtomicU64,
    /// The worker's thread id, for its schedstat file.
    tid: AtomicI32,
}

/// One message thread's requests and workers.
struct MessageGroup {
    state: Mutex<GroupState>,
    slots: Vec<WorkerSlot>,
}

struct GroupState {
    /// Workers asleep on their futex, ready for a request.
    idle: Vec<usize>,
    /// Requests that found no idle worker.
    queue: VecDeque<Request>,
    queued: u64,
    dropped: u64,
    stopped: bool,
}

/// What a group's queue held when the window ended: the requests no worker served, and
/// each one's wait from its due time to the end (a lower bound of its latency).
struct Leftover {
    queued: u64,
    dropped: u64,
    unserved: u64,
    waits: Histogram<u32>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MessageGroup {
    fn new(workers: usize) -> MessageGroup {
        MessageGroup {
            state: Mutex::new(GroupState {
                idle: Vec::with_capacity(workers),
                queue: VecDeque::with_capacity(QUEUE_CAPACITY),
                queued: 0,
                dropped: 0,
                stopped: false,
            }),
            slots: (0..workers)
                .map(|_| WorkerSlot {
                    word: AtomicU32::new(IDLE),
                    due: AtomicU64::new(0),
                    sent: AtomicU64::new(0),
                    tid: AtomicI32::new(0),
                })
                .collect(),
        }
    }

    /// Hand `r` to an idle worker, or queue it.
    fn send(&self, r: Request) {
        let mut s = lock(&self.state);
        match s.idle.pop() {
            Some(w) => {
                drop(s);
                let slot = &self.slots[w];
                slot.due.store(r.due, Ordering::Relaxed);
                slot.sent.store(r.sent, Ordering::Relaxed);
                slot.word.store(WOKEN, Ordering::Release);
                // A wake cannot fail on a live word of this process's own.
                let _ = futex::wake(&slot.word, 1, Scope::Process);
            }
            None if s.queue.len() < QUEUE_CAPACITY => {
                s.queue.push_back(r);
                s.queued += 1;
            }
            None => s.dropped += 1,
        }
    }

    /// The window ended at `end`: no more requests are served. Idle workers are woken to
    /// stop, busy ones stop after the request they hold; what is still queued is unserved.
    fn stop(&self, end: u64) -> Leftover {
        let mut s = lock(&self.state);
        s.stopped = true;
        let idle = std::mem::take(&mut s.idle);
        let mut waits = new_histogram();
        let unserved = s.queue.len() as u64;
        for r in s.queue.drain(..) {
            waits.saturating_record(end.saturating_sub(r.due).max(1));
        }
        let left = Leftover { queued: s.queued, dropped: s.dropped, unserved, waits };
        drop(s);
        for w in idle {
            self.slots[w].word.store(STOP, Ordering::Release);
            let _ = futex::wake(&self.slots[w].word, 1, Scope::Process);
        }
        left
    }
}

/// The CPU the calling thread is on now.
fn current_cpu() -> usize {
    // SAFETY: sched_getcpu takes nothing; it fails only where the kernel lacks getcpu.
    usize::try_from(unsafe { libc::sched_getcpu() }).unwrap_or(0)
}

/// 1 ns to 100 s at 3 significant digits; 32-bit counts keep a worker's two small.
fn new_histogram() -> Histogram<u32> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("constant histogram bounds are valid")
}

fn at(h: &Histogram<u32>, quantile: f64) -> Option<u64> {
    (!h.is_empty()).then(|| h.value_at_quantile(quantile))
}

fn max(h: &Histogram<u32>) -> Option<u64> {
    (!h.is_empty()).then(|| h.max())
}

/// What one worker measured.
struct WorkerTally {
    wake: Histogram<u32>,
    request: Histogram<u32>,
    requests: u64,
    /// Of those, the ones done by the window's end.
    in_window: u64,
}

/// What one message thread did: requests sent, those due in the window it never sent,
/// and how late each send was against its due time.
struct Sends {
    sent: u64,
    unsent: u64,
    lag: Histogram<u32>,
}

/// What every thread shares in one window.
struct WindowShared<'a> {
    spec: &'a ServerSpec,
    cpus: Option<&'a [usize]>,
    /// One mutex per CPU number, for `--lock`.
    cpu_locks: &'a [Mutex<()>],
    gate: Gate,
    t0: AtomicU64,
    window_ns: u64,
    abort: AtomicBool,
}

impl WindowShared<'_> {
    /// The calling thread's CPUs, policy, nice and timer slack (1 ns, so the think time
    /// and the pacing sleep what they ask, not 50 µs more). Any failure stops every thread.
    fn set_up(&self) -> std::result::Result<(), String> {
        let spec = self.spec;
        let set = sched::apply_to_current_thread(self.cpus, spec.policy, spec.prio).and_then(|()| match spec.nice {
            Some(nice) => sched::set_nice(nice).map_err(|e| sched::explain_nice_refusal(nice, &e)),
            None => Ok(()),
        });
        // SAFETY: PR_SET_TIMERSLACK takes a plain integer and changes only this thread.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        if set.is_err() {
            self.abort.store(true, Ordering::Release);
        }
        set
    }

    /// Through the gate, set up or not, so the main thread never waits for ever; then
    /// whether to run.
    fn start(&self, set: std::result::Result<(), String>) -> std::result::Result<bool, String> {
        let open = self.gate.arrive();
        set?;
        Ok(open && !self.abort.load(Ordering::Acquire))
    }
}

/// A worker: sleep on its futex until handed a request (or take a queued one), serve it.
fn worker(sh: &WindowShared, group: &MessageGroup, me: usize) -> std::result::Result<WorkerTally, String> {
    let slot = &group.slots[me];
    // SAFETY: gettid takes nothing and cannot fail.
    slot.tid.store(unsafe { libc::gettid() }, Ordering::Release);
    let set = sh.set_up();
    let mut tally = WorkerTally { wake: new_histogram(), request: new_histogram(), requests: 0, in_window: 0 };
    let think = (sh.spec.think_ns > 0).then(|| std::time::Duration::from_nanos(sh.spec.think_ns));
    burn(0);
    if !sh.start(set)? {
        return Ok(tally);
    }
    let end = sh.t0.load(Ordering::Acquire) + sh.window_ns;
    loop {
        let mut s = lock(&group.state);
        if s.stopped {
            break;
        }
        let due = match s.queue.pop_front() {
            Some(r) => {
                drop(s);
                r.due
            }
            None => {
                slot.word.store(IDLE, Ordering::Relaxed);
                s.idle.push(me);
                drop(s);
                let mut word = slot.word.load(Ordering::Acquire);
                while word == IDLE {
                    futex::wait(&slot.word, IDLE, Scope::Process).map_err(|e| format!("a worker's futex wait: {e}"))?;
                    word = slot.word.load(Ordering::Acquire);
                }
                let woke = monotonic_ns();
                if word == STOP {
                    break;
                }
                let sent = slot.sent.load(Ordering::Relaxed);
                tally.wake.saturating_record(woke.saturating_sub(sent).max(1));
                slot.due.load(Ordering::Relaxed)
            }
        };
        if let Some(t) = think {
            std::thread::sleep(t);
        }
        if sh.spec.lock {
            let _held = lock(&sh.cpu_locks[current_cpu() % sh.cpu_locks.len()]);
            burn(sh.spec.work_ns);
        } else {
            burn(sh.spec.work_ns);
        }
        let done = monotonic_ns();
        tally.request.saturating_record(done.saturating_sub(due).max(1));
        tally.requests += 1;
        tally.in_window += u64::from(done <= end);
    }
    Ok(tally)
}

/// A message thread: its share of the rate at fixed absolute times from `t0 + offset`;
/// a late thread sends what it missed at once, until 0.1 s past the window's end (a
/// thread that cannot keep up with its rate leaves the rest unsent).
fn message(sh: &WindowShared, group: &MessageGroup, index: u32, rps: f64) -> std::result::Result<Sends, String> {
    let set = sh.set_up();
    let mut sends = Sends { sent: 0, unsent: 0, lag: new_histogram() };
    if !sh.start(set)? {
        return Ok(sends);
    }
    let threads = f64::from(sh.spec.message_threads);
    let interval = 1e9 * threads / rps;
    let offset = interval * f64::from(index) / threads;
    let t0 = sh.t0.load(Ordering::Acquire);
    let end = t0 + sh.window_ns;
    let due_at = |k: u64| t0 + (offset + k as f64 * interval) as u64;
    loop {
        let due = due_at(sends.sent);
        let mut now = monotonic_ns();
        // Every request due in the window goes out, but a thread that cannot keep up with
        // its rate stops soon after the window's end.
        if due >= end || now >= end + CATCH_UP_NS {
            break;
        }
        // Behind, it sends at once, without a system call.
        if due > now {
            sleep_until(due);
            now = monotonic_ns();
        }
        group.send(Request { due, sent: now });
        sends.lag.saturating_record(now.saturating_sub(due).max(1));
        sends.sent += 1;
    }
    while due_at(sends.sent + sends.unsent) < end {
        sends.unsent += 1;
    }
    Ok(sends)
}

/// What one window measured.
struct WindowFigures {
    tallies: Vec<(u32, WorkerTally)>,
    /// Each worker's run-queue wait over the window, in the tallies' order.
    rq_waits: Vec<Option<u64>>,
    sent: u64,
    unsent: u64,
    lag: Histogram<u32>,
    queued: u64,
    dropped: u64,
    unserved: u64,
    /// The unserved requests' waits from their due time to the window's end.
    unserved_waits: Histogram<u32>,
    /// The window asked for: requests count as served in it when done by its end.
    window_ns: u64,
    /// CPU use over the window as the main thread measured it (from its start to when it
    /// woke after the end, a little later on a busy machine).
    util_pct: f64,
}

/// A thread of the server could not be created: name the limit.
fn spawn_refusal(err: &std::io::Error, started: usize, threads: usize) -> Error {
    let why = crate::error::describe_io(err);
    let hint = if err.raw_os_error() == Some(libc::EAGAIN) {
        "RLIMIT_NPROC (`ulimit -u`), the cgroup's pids.max or kernel.threads-max is reached: raise the limit, or \
         give fewer --threads/--workers"
    } else {
        "give fewer --threads/--workers"
    };
    Error::env(format!(
        "the server needs {threads} threads, but thread {} could not be created ({why}): {hint}; the {started} \
         already started were stopped",
        started + 1
    ))
}

/// What a server thread returns, or why it stopped.
type Joined<T> = std::result::Result<T, String>;

/// Join a server thread; a panic becomes its error.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, Joined<T>>) -> Joined<T> {
    h.join().unwrap_or_else(|_| Err("a server thread panicked".to_string()))
}

/// The threads of one window, as far as they could be created.
struct Spawned<'scope> {
    /// Each worker's handle, with its group's index.
    workers: Vec<(u32, std::thread::ScopedJoinHandle<'scope, Joined<WorkerTally>>)>,
    senders: Vec<std::thread::ScopedJoinHandle<'scope, Joined<Sends>>>,
    /// Why a thread could not be created, where one could not; no more were tried.
    refused: Option<std::io::Error>,
}

/// Create every group's workers, then (where all of them started) every message thread.
/// Each one waits at the gate until the window starts.
fn spawn_threads<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    sh: &'env WindowShared<'env>,
    groups: &'env [MessageGroup],
    rps: f64,
) -> Spawned<'scope> {
    let t = sh.spec.workers as usize;
    let mut workers = Vec::with_capacity(groups.len() * t);
    let mut senders = Vec::with_capacity(groups.len());
    let mut refused = None;
    'spawn: for (g, group) in groups.iter().enumerate() {
        for w in 0..t {
            match std::thread::Builder::new().spawn_scoped(scope, move || worker(sh, group, w)) {
                Ok(h) => workers.push((g as u32, h)),
                Err(e) => {
                    refused = Some(e);
                    break 'spawn;
                }
            }
        }
    }
    if refused.is_none() {
        for (g, group) in groups.iter().enumerate() {
            match std::thread::Builder::new().spawn_scoped(scope, move || message(sh, group, g as u32, rps)) {
                Ok(h) => senders.push(h),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
    }
    Spawned { workers, senders, refused }
}

/// Call the window off before it started: the threads at the gate return at once, and
/// every group stops serving.
fn call_off(sh: &WindowShared, groups: &[MessageGroup]) {
    sh.gate.call_off();
    for g in groups {
        g.stop(0);
    }
}

/// A thread could not be set up: call the window off, join every thread, and return the
/// first error one gave (the message threads' first).
fn setup_failure<'scope>(
    sh: &WindowShared,
    groups: &[MessageGroup],
    senders: Vec<std::thread::ScopedJoinHandle<'scope, Joined<Sends>>>,
    workers: Vec<(u32, std::thread::ScopedJoinHandle<'scope, Joined<WorkerTally>>)>,
) -> Error {
    call_off(sh, groups);
    let sent: Vec<Joined<Sends>> = senders.into_iter().map(joined).collect();
    let workers: Vec<Joined<WorkerTally>> = workers.into_iter().map(|(_, h)| joined(h)).collect();
    let why = sent
        .into_iter()
        .filter_map(|r| r.err())
        .chain(workers.into_iter().filter_map(|r| r.err()))
        .next()
        .unwrap_or_else(|| "a server thread could not be set up".to_string());
    Error::env(why)
}

/// What every thread of a window returned, with what the main thread read at its edges.
struct WindowReturns {
    sent: Vec<Joined<Sends>>,
    workers: Vec<(u32, Joined<WorkerTally>)>,
    rq_waits: Vec<Option<u64>>,
    left: Vec<Leftover>,
    /// The window's span as the main thread saw it, and the process's CPU time in it.
    span_ns: u64,
    cpu_ns: u64,
}

/// Merge what the threads of a window returned into the window's measures; the first
/// error a thread gave (the message threads' first) fails the window.
fn merge_window(ended: WindowReturns, window_ns: u64, cpus: usize) -> Result<WindowFigures> {
    let WindowReturns { sent, workers, rq_waits, left, span_ns, cpu_ns } = ended;
    let sends = sent.into_iter().collect::<std::result::Result<Vec<Sends>, String>>().map_err(Error::failed)?;
    let tallies = workers
        .into_iter()
        .map(|(g, r)| r.map(|t| (g, t)))
        .collect::<std::result::Result<Vec<_>, String>>()
        .map_err(Error::failed)?;
    let mut lag = new_histogram();
    for s in &sends {
        let _ = lag.add(&s.lag);
    }
    let mut unserved_waits = new_histogram();
    for l in &left {
        let _ = unserved_waits.add(&l.waits);
    }
    Ok(WindowFigures {
        tallies,
        rq_waits,
        sent: sends.iter().map(|s| s.sent).sum(),
        unsent: sends.iter().map(|s| s.unsent).sum(),
        lag,
        queued: left.iter().map(|l| l.queued).sum(),
        dropped: left.iter().map(|l| l.dropped).sum(),
        unserved: left.iter().map(|l| l.unserved).sum(),
        unserved_waits,
        window_ns,
        util_pct: 100.0 * cpu_ns as f64 / (span_ns.max(1) as f64 * cpus as f64),
    })
}

/// Each worker's schedstat file, in the groups' order, for its run-queue wait; `None`
/// where it cannot be opened.
fn schedstat_files(groups: &[MessageGroup]) -> Vec<Option<File>> {
    groups
        .iter()
        .flat_map(|g| &g.slots)
        .map(|slot| File::open(format!("/proc/self/task/{}/schedstat", slot.tid.load(Ordering::Acquire))).ok())
        .collect()
}

/// Run the server at `rps` for `window_ns`; `measured` marks the background load's window.
fn run_window(spec: &ServerSpec, rps: f64, window_ns: u64, cpus: &[usize], measured: bool) -> Result<WindowFigures> {
    let m = spec.message_threads as usize;
    let t = spec.workers as usize;
    let groups: Vec<MessageGroup> = (0..m).map(|_| MessageGroup::new(t)).collect();
    let cpu_locks: Vec<Mutex<()>> = (0..=cpus.iter().copied().max().unwrap_or(0)).map(|_| Mutex::new(())).collect();
    let threads = m * (t + 1);
    let sh = WindowShared {
        spec,
        cpus: spec.cpus.as_deref(),
        cpu_locks: &cpu_locks,
        gate: Gate::new(),
        t0: AtomicU64::new(0),
        window_ns,
        abort: AtomicBool::new(false),
    };
    let run = std::thread::scope(|scope| {
        let (sh, groups) = (&sh, &groups);
        let Spawned { workers, senders, refused } = spawn_threads(scope, sh, groups, rps);
        if let Some(e) = refused {
            // Let the started threads through the gate to return at once.
            sh.abort.store(true, Ordering::Release);
            call_off(sh, groups);
            let started = workers.len() + senders.len();
            return Err(spawn_refusal(&e, started, threads));
        }
        sh.gate.wait_for(threads);
        // Every thread wrote its thread id and was set up before it arrived.
        if sh.abort.load(Ordering::Acquire) {
            return Err(setup_failure(sh, groups, senders, workers));
        }
        let files = schedstat_files(groups);
        let t0 = monotonic_ns() + START_DELAY_NS;
        sh.t0.store(t0, Ordering::Release);
        sh.gate.open();
        sleep_until(t0);
        let cpu0 = process_cpu_ns();
        let before: Vec<Option<u64>> = files.iter().map(run_delay).collect();
        if measured {
            crate::sys::load::mark_window_start();
        }
        // The window is the duration: a message thread ends after its last send, which may
        // be up to an interval before the window's end, or (a late one) after it.
        sleep_until(t0 + window_ns);
        let (t1, cpu1) = (monotonic_ns(), process_cpu_ns());
        let rq_waits: Vec<Option<u64>> = files
            .iter()
            .map(run_delay)
            .zip(before)
            .map(|(after, before)| Some(after?.saturating_sub(before?)))
            .collect();
        if measured {
            crate::sys::load::mark_window_end();
        }
        let sent: Vec<Joined<Sends>> = senders.into_iter().map(joined).collect();
        let ended = monotonic_ns();
        let left: Vec<Leftover> = groups.iter().map(|g| g.stop(ended)).collect();
        let workers: Vec<(u32, Joined<WorkerTally>)> = workers.into_iter().map(|(g, h)| (g, joined(h))).collect();
        Ok(WindowReturns {
            sent,
            workers,
            rq_waits,
            left,
            span_ns: t1.saturating_sub(t0),
            cpu_ns: cpu1.saturating_sub(cpu0),
        })
    });
    merge_window(run?, window_ns, cpus.len())
}

/// A thread's run-queue wait so far (schedstat's second field), read by another thread
/// of the process; `None` where the kernel gives none.
fn run_delay(file: &Option<File>) -> Option<u64> {
    let mut buf = [0u8; 128];
    let n = file.as_ref()?.read_at(&mut buf, 0).ok()?;
    parse_schedstat(&buf[..n]).1
}

/// `--target-util`: start from rps × work = util × CPUs, probe, and scale the rate by
/// target / measured until a probe comes within 5 %, always within 1 request a second and
/// what the workers can serve (`preflight` refused a target whose starting rate the workers
/// could not serve). A probe that fell behind below the target (other work holds the CPUs)
/// is followed only by one at the rate it did serve. At most `MAX_PROBES` probes, as the
/// trial's length allows for. The rate returned is the probe nearest the target among those
/// the server kept up with, or the slowest tried where it kept up with none. Returns the
/// rate and the probes.
fn find_rate(spec: &ServerSpec, pct: f64, cpus: &[usize]) -> Result<(f64, Vec<Probe>)> {
    let capacity = spec.worker_capacity_rps();
    if capacity < 1.0 {
        return Err(Error::usage(format!(
            "--target-util: the workers serve at most {capacity:.2} requests a second, less than the 1 a probe needs: \
             give more --workers or a shorter --work/--think"
        )));
    }
    let bound = |rps: f64| rps.clamp(1.0, capacity);
    let mut rps = bound(spec.rps_for_util(pct, cpus.len()));
    // Each probe, and whether its server kept up with what it was sent.
    let mut tried: Vec<(Probe, bool)> = Vec::new();
    let mut last = false;
    for _ in 0..MAX_PROBES {
        let w = run_window(spec, rps, PROBE_NS, cpus, false)?;
        let behind = fell_behind(&w);
        tried.push((Probe { rps, util_pct: w.util_pct }, !behind));
        if last || w.util_pct <= 0.0 || (w.util_pct - pct).abs() <= pct * PROBE_TOLERANCE {
            break;
        }
        let next = if behind && w.util_pct < pct {
            // Below the target yet behind: a higher rate would only grow the queue. Try
            // the rate it did serve, then stop.
            last = true;
            let served = w.sent.saturating_sub(w.unserved + w.dropped) as f64;
            bound((served * 1e9 / w.window_ns.max(1) as f64).min(rps / 1.05))
        } else {
            bound((rps * pct / w.util_pct).clamp(rps / 2.0, rps * 2.0))
        };
        if next == rps {
            // At a bound already (the workers' capacity, or 1 a second): nothing else to try.
            break;
        }
        rps = next;
    }
    let nearest = |p: &&(Probe, bool)| (p.0.util_pct - pct).abs();
    let chosen = tried
        .iter()
        .filter(|(_, kept)| *kept)
        .min_by(|a, b| nearest(a).total_cmp(&nearest(b)))
        .or_else(|| tried.iter().min_by(|a, b| a.0.rps.total_cmp(&b.0.rps)))
        .map_or(rps, |(p, _)| p.rps);
    Ok((chosen, tried.into_iter().map(|(p, _)| p).collect()))
}

/// Did a probe's server fall behind what it was sent: more than 5 % of the requests due
/// in its window left unserved, dropped or unsent?
fn fell_behind(w: &WindowFigures) -> bool {
    let due = w.sent + w.unsent;
    (w.unserved + w.dropped + w.unsent) * 20 > due
}

/// Run the server once (after finding its rate, under `--target-util`) and sum it up.
pub fn run(spec: &ServerSpec) -> Result<ServerOutcome> {
    let cpus = sched::resolve_cpus(spec.cpus.as_deref())?;
    let (rps, calibration) = match spec.rate {
        Rate::Rps(n) => (n as f64, Vec::new()),
        Rate::TargetUtilPct(pct) => find_rate(spec, f64::from(pct), &cpus)?,
    };
    let w = run_window(spec, rps, spec.duration.as_nanos() as u64, &cpus, true)?;
    let (mut wake, mut request) = (new_histogram(), new_histogram());
    let mut workers = Vec::with_capacity(w.tallies.len());
    for ((group, t), rq_wait_ns) in w.tallies.iter().zip(&w.rq_waits) {
        let _ = wake.add(&t.wake);
        let _ = request.add(&t.request);
        workers.push(WorkerStats { group: *group, requests: t.requests, rq_wait_ns: *rq_wait_ns });
    }
    // An unserved request's latency is at least its wait until the window ended.
    let _ = request.add(&w.unserved_waits);
    let waits: Option<Vec<u64>> = workers.iter().map(|s| s.rq_wait_ns).collect();
    let requests: u64 = workers.iter().map(|s| s.requests).sum();
    let in_window: u64 = w.tallies.iter().map(|(_, t)| t.in_window).sum();
    Ok(ServerOutcome {
        rps_asked: rps,
        calibration,
        cpus: cpus.len() as u32,
        sent: w.sent,
        unsent: w.unsent,
        send_lag_p99_ns: at(&w.lag, 0.99),
        send_lag_max_ns: max(&w.lag),
        requests,
        served_in_window: in_window,
        achieved_rps: in_window as f64 * 1e9 / w.window_ns.max(1) as f64,
        queued: w.queued,
        dropped: w.dropped,
        unserved: w.unserved,
        cpu_util_pct: w.util_pct,
        wakeups: wake.len(),
        wake_p50_ns: at(&wake, 0.5),
        wake_p90_ns: at(&wake, 0.9),
        wake_p99_ns: at(&wake, 0.99),
        wake_p999_ns: at(&wake, 0.999),
        wake_max_ns: max(&wake),
        request_p50_ns: at(&request, 0.5),
        request_p90_ns: at(&request, 0.9),
        request_p99_ns: at(&request, 0.99),
        request_p999_ns: at(&request, 0.999),
        request_max_ns: max(&request),
        rq_wait_per_request_ns: waits.as_ref().filter(|_| requests > 0).map(|v| v.iter().sum::<u64>() / requests),
        rq_wait_max_ns: waits.as_ref().and_then(|v| v.iter().copied().max()),
        workers,
        beside: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(due: u64) -> Request {
        Request { due, sent: due + 1 }
    }

    #[test]
    fn a_request_goes_to_an_idle_worker_or_waits_in_the_queue() {
        let g = MessageGroup::new(2);
        lock(&g.state).idle.push(1);
        g.send(req(42));
        let slot = &g.slots[1];
        assert_eq!(
            (slot.word.load(Ordering::Relaxed), slot.due.load(Ordering::Relaxed), slot.sent.load(Ordering::Relaxed)),
            (WOKEN, 42, 43)
        );
        g.send(req(43));
        let s = lock(&g.state);
        assert_eq!((s.queue.front().copied(), s.queued, s.dropped), (Some(req(43)), 1, 0));
    }

    #[test]
    fn what_is_queued_at_the_end_is_unserved_with_its_wait_so_far() {
        let g = MessageGroup::new(1);
        for due in [100, 200, 300] {
            g.send(req(due));
        }
        let left = g.stop(1_000);
        assert_eq!((left.queued, left.dropped, left.unserved, left.waits.len()), (3, 0, 3, 3));
        assert_eq!((left.waits.min(), left.waits.max()), (700, 900));
        assert!(lock(&g.state).queue.is_empty() && lock(&g.state).stopped);
    }

    /// As an unprivileged user whose RLIMIT_NPROC leaves room for a few threads only (the
    /// checks before a trial would refuse it; here the limit is met half-way through the
    /// start, as when other tasks appear meanwhile), the run ends at once with an error
    /// naming the limit, instead of waiting for ever on the threads that never started.
    #[test]
    fn a_thread_that_cannot_be_created_ends_the_run_with_the_limit_named() {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root to switch to an unprivileged user");
            return;
        }
        let spec = ServerSpec {
            message_threads: 8,
            workers: 8,
            rate: Rate::Rps(100),
            work_ns: 1_000_000,
            think_ns: 0,
            lock: false,
            policy: crate::model::Policy::Other,
            prio: 0,
            nice: None,
            cpus: None,
            duration: std::time::Duration::from_millis(200),
            load: Default::default(),
        };
        // SAFETY: the child only runs the server and leaves with _exit; the test harness's
        // other thread holds no lock the child needs (glibc's fork resets malloc's).
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let limit = libc::rlimit { rlim_cur: 6, rlim_max: 6 };
            // SAFETY: plain system calls on this (single-threaded) child.
            let code = unsafe {
                if libc::setrlimit(libc::RLIMIT_NPROC, &limit) != 0
                    || libc::setresgid(65534, 65534, 65534) != 0
                    || libc::setresuid(65534, 65534, 65534) != 0
                {
                    10
                } else {
                    match run(&spec) {
                        Err(Error::Environment(m))
                            if m.contains("could not be created") && m.contains("RLIMIT_NPROC") =>
                        {
                            0
                        }
                        Err(_) => 11,
                        Ok(_) => 12,
                    }
                }
            };
            // SAFETY: leaves the child without running the harness's exit handlers.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        let start = std::time::Instant::now();
        // SAFETY: waits for our own child, without blocking.
        while unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == 0 {
            if start.elapsed() > std::time::Duration::from_secs(20) {
                // SAFETY: our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                panic!("the run still waited 20 s after a thread could not be created");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(libc::WIFEXITED(status), "{status:#x}");
        assert_eq!(libc::WEXITSTATUS(status), 0, "10: no switch to nobody, 11: another error, 12: it ran");
    }
}
