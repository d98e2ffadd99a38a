//! The server, run: M message threads, each with T workers. A message thread wakes at
//! fixed absolute times (`clock_nanosleep` with TIMER_ABSTIME: open loop, so a slow reply
//! delays no request), stamps a request and hands it to one idle worker, woken by a futex;
//! with none idle the request waits in the message thread's queue. The worker records its
//! wakeup latency (stamp → running), sleeps the think time, does the CPU work on its own
//! CPU clock (optionally holding the lock of the CPU it is on), and records the request's
//! latency (stamp → done). Each worker keeps HDR histograms, merged at the end, so memory
//! does not grow with the duration; its run-queue wait is read from schedstat at the
//! window's edges.

use super::model::{Probe, Rate, ServerOutcome, ServerSpec, WorkerStats};
use crate::error::{Error, Result};
use crate::sys::clock::{monotonic_ns, thread_cpu_ns};
use crate::sys::sched;
use crate::sys::schedstat::parse_schedstat;
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex, MutexGuard};

/// Requests one message thread's queue holds; more are dropped (and counted).
pub const QUEUE_CAPACITY: usize = 16_384;
/// How long after every thread is ready the first requests go out.
const START_DELAY_NS: u64 = 20_000_000;
/// How long past the window's end a late message thread still sends what was due in it.
const CATCH_UP_NS: u64 = 100_000_000;
/// One `--target-util` probe.
const PROBE_NS: u64 = 400_000_000;
/// The most probes before the rate is taken as found.
const MAX_PROBES: usize = 4;
/// A probe this close to the target (relative) ends the search.
const PROBE_TOLERANCE: f64 = 0.05;

/// A worker's futex word: asleep (idle), handed a request, or told to stop.
const IDLE: u32 = 0;
const WOKEN: u32 = 1;
const STOP: u32 = 2;

/// Sleep on `word` while it holds `expected` (or until a spurious wakeup).
fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: the address is a live, aligned u32 for the duration of the call (the slot
    // outlives every thread that waits on it, scoped threads); a null timeout waits
    // without limit; a changed value returns EAGAIN at once, which the caller loops on.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
}

/// Wake the one thread sleeping on `word`.
fn futex_wake(word: &AtomicU32) {
    // SAFETY: as in `futex_wait`; FUTEX_WAKE only reads the address.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, 1) };
}

/// A worker as its message thread sees it: its futex word and the stamp it is handed.
struct Slot {
    word: AtomicU32,
    stamp: AtomicU64,
    /// The worker's thread id, for its schedstat file.
    tid: AtomicI32,
}

/// One message thread's requests and workers.
struct Group {
    state: Mutex<GroupState>,
    slots: Vec<Slot>,
}

struct GroupState {
    /// Workers asleep on their futex, ready for a request.
    idle: Vec<usize>,
    /// Stamps of requests that found no idle worker.
    queue: VecDeque<u64>,
    queued: u64,
    dropped: u64,
    stopped: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Group {
    fn new(workers: usize) -> Group {
        Group {
            state: Mutex::new(GroupState {
                idle: Vec::with_capacity(workers),
                queue: VecDeque::with_capacity(QUEUE_CAPACITY),
                queued: 0,
                dropped: 0,
                stopped: false,
            }),
            slots: (0..workers)
                .map(|_| Slot { word: AtomicU32::new(IDLE), stamp: AtomicU64::new(0), tid: AtomicI32::new(0) })
                .collect(),
        }
    }

    /// Hand the request stamped `stamp` to an idle worker, or queue it.
    fn send(&self, stamp: u64) {
        let mut s = lock(&self.state);
        match s.idle.pop() {
            Some(w) => {
                drop(s);
                let slot = &self.slots[w];
                slot.stamp.store(stamp, Ordering::Relaxed);
                slot.word.store(WOKEN, Ordering::Release);
                futex_wake(&slot.word);
            }
            None if s.queue.len() < QUEUE_CAPACITY => {
                s.queue.push_back(stamp);
                s.queued += 1;
            }
            None => s.dropped += 1,
        }
    }

    /// No more requests: wake every idle worker to stop; busy ones stop after their request.
    fn stop(&self) -> (u64, u64) {
        let mut s = lock(&self.state);
        s.stopped = true;
        let idle = std::mem::take(&mut s.idle);
        let counts = (s.queued, s.dropped);
        drop(s);
        for w in idle {
            self.slots[w].word.store(STOP, Ordering::Release);
            futex_wake(&self.slots[w].word);
        }
        counts
    }
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

/// The whole process's CPU time (every thread's), ns.
fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the process CPU clock always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
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

/// What one worker measured.
struct Tally {
    wake: Histogram<u32>,
    request: Histogram<u32>,
    requests: u64,
}

/// What every thread shares in one window.
struct Shared<'a> {
    spec: &'a ServerSpec,
    cpus: Option<&'a [usize]>,
    /// One mutex per CPU number, for `--lock`.
    cpu_locks: &'a [Mutex<()>],
    ready: Barrier,
    go: Barrier,
    t0: AtomicU64,
    abort: AtomicBool,
}

impl Shared<'_> {
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

    /// Both barriers, set up or not, so none waits for ever; then whether to run.
    fn start(&self, set: std::result::Result<(), String>) -> std::result::Result<bool, String> {
        self.ready.wait();
        self.go.wait();
        set?;
        Ok(!self.abort.load(Ordering::Acquire))
    }
}

/// A worker: sleep on its futex until handed a request (or take a queued one), serve it.
fn worker(sh: &Shared, group: &Group, me: usize) -> std::result::Result<Tally, String> {
    let slot = &group.slots[me];
    // SAFETY: gettid takes nothing and cannot fail.
    slot.tid.store(unsafe { libc::gettid() }, Ordering::Release);
    let set = sh.set_up();
    let mut tally = Tally { wake: new_histogram(), request: new_histogram(), requests: 0 };
    let think = (sh.spec.think_ns > 0).then(|| std::time::Duration::from_nanos(sh.spec.think_ns));
    if !sh.start(set)? {
        return Ok(tally);
    }
    loop {
        let mut s = lock(&group.state);
        if s.stopped {
            break;
        }
        let stamp = match s.queue.pop_front() {
            Some(stamp) => {
                drop(s);
                stamp
            }
            None => {
                slot.word.store(IDLE, Ordering::Relaxed);
                s.idle.push(me);
                drop(s);
                let mut word = slot.word.load(Ordering::Acquire);
                while word == IDLE {
                    futex_wait(&slot.word, IDLE);
                    word = slot.word.load(Ordering::Acquire);
                }
                let woke = monotonic_ns();
                if word == STOP {
                    break;
                }
                let stamp = slot.stamp.load(Ordering::Relaxed);
                tally.wake.saturating_record(woke.saturating_sub(stamp).max(1));
                stamp
            }
        };
        if let Some(t) = think {
            std::thread::sleep(t);
        }
        if sh.spec.lock {
            let _held = lock(&sh.cpu_locks[current_cpu() % sh.cpu_locks.len()]);
            run_for(sh.spec.work_ns);
        } else {
            run_for(sh.spec.work_ns);
        }
        tally.request.saturating_record(monotonic_ns().saturating_sub(stamp).max(1));
        tally.requests += 1;
    }
    Ok(tally)
}

/// A message thread: its share of the rate at fixed absolute times from `t0 + offset`;
/// a late thread sends what it missed at once, until 0.1 s past the window's end (a
/// thread that cannot keep up with its rate sends fewer). Returns the requests sent.
fn message(sh: &Shared, group: &Group, index: u32, rps: f64, window_ns: u64) -> std::result::Result<u64, String> {
    let set = sh.set_up();
    if !sh.start(set)? {
        return Ok(0);
    }
    let threads = f64::from(sh.spec.message_threads);
    let interval = 1e9 * threads / rps;
    let offset = interval * f64::from(index) / threads;
    let t0 = sh.t0.load(Ordering::Acquire);
    let end = t0 + window_ns;
    let mut sent: u64 = 0;
    loop {
        let ideal = t0 + (offset + sent as f64 * interval) as u64;
        let mut now = monotonic_ns();
        // Every request due in the window goes out, but a thread that cannot keep up with
        // its rate stops soon after the window's end.
        if ideal >= end || now >= end + CATCH_UP_NS {
            break;
        }
        // Behind, it sends at once, without a system call.
        if ideal > now {
            sleep_until(ideal);
            now = monotonic_ns();
        }
        group.send(now);
        sent += 1;
    }
    Ok(sent)
}

/// What one window measured.
struct Window {
    tallies: Vec<(u32, Tally)>,
    /// Each worker's run-queue wait over the window, in the tallies' order.
    rq_waits: Vec<Option<u64>>,
    sent: u64,
    queued: u64,
    dropped: u64,
    window_ns: u64,
    util_pct: f64,
}

/// Run the server at `rps` for `window_ns`; `measured` marks the background load's window.
fn run_window(spec: &ServerSpec, rps: f64, window_ns: u64, cpus: &[usize], measured: bool) -> Result<Window> {
    let m = spec.message_threads as usize;
    let t = spec.workers as usize;
    let groups: Vec<Group> = (0..m).map(|_| Group::new(t)).collect();
    let cpu_locks: Vec<Mutex<()>> = (0..=cpus.iter().copied().max().unwrap_or(0)).map(|_| Mutex::new(())).collect();
    let threads = m * (t + 1);
    let sh = Shared {
        spec,
        cpus: spec.cpus.as_deref(),
        cpu_locks: &cpu_locks,
        ready: Barrier::new(threads + 1),
        go: Barrier::new(threads + 1),
        t0: AtomicU64::new(0),
        abort: AtomicBool::new(false),
    };
    type Joined<T> = std::result::Result<T, String>;
    fn joined<T>(h: std::thread::ScopedJoinHandle<'_, Joined<T>>) -> Joined<T> {
        h.join().unwrap_or_else(|_| Err("a server thread panicked".to_string()))
    }
    let (sent, workers, rq_waits, span) = std::thread::scope(|scope| {
        let (sh, groups) = (&sh, &groups);
        let mut workers = Vec::with_capacity(m * t);
        for (g, group) in groups.iter().enumerate() {
            for w in 0..t {
                workers.push((g as u32, scope.spawn(move || worker(sh, group, w))));
            }
        }
        let senders: Vec<_> = groups
            .iter()
            .enumerate()
            .map(|(g, group)| scope.spawn(move || message(sh, group, g as u32, rps, window_ns)))
            .collect();
        sh.ready.wait();
        // Every worker has written its thread id before the first barrier.
        let files: Vec<Option<File>> = groups
            .iter()
            .flat_map(|g| &g.slots)
            .map(|slot| File::open(format!("/proc/self/task/{}/schedstat", slot.tid.load(Ordering::Acquire))).ok())
            .collect();
        let t0 = monotonic_ns() + START_DELAY_NS;
        sh.t0.store(t0, Ordering::Release);
        sh.go.wait();
        sleep_until(t0);
        let cpu0 = process_cpu_ns();
        let before: Vec<Option<u64>> = files.iter().map(run_delay).collect();
        if measured {
            crate::sys::load::mark_window_start();
        }
        let sent: Vec<Joined<u64>> = senders.into_iter().map(joined).collect();
        // The window is the duration: a message thread ends after its last send, which may
        // be up to an interval before the window's end.
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
        for g in groups {
            g.stop();
        }
        let workers: Vec<(u32, Joined<Tally>)> = workers.into_iter().map(|(g, h)| (g, joined(h))).collect();
        (sent, workers, rq_waits, (t1.saturating_sub(t0), cpu1.saturating_sub(cpu0)))
    });
    let sent = sent.into_iter().collect::<std::result::Result<Vec<u64>, String>>().map_err(Error::failed)?;
    let tallies = workers
        .into_iter()
        .map(|(g, r)| r.map(|t| (g, t)))
        .collect::<std::result::Result<Vec<_>, String>>()
        .map_err(Error::failed)?;
    let (queued, dropped) = groups.iter().map(Group::stop).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let (window_ns, cpu_ns) = span;
    Ok(Window {
        tallies,
        rq_waits,
        sent: sent.iter().sum(),
        queued,
        dropped,
        window_ns,
        util_pct: 100.0 * cpu_ns as f64 / (window_ns.max(1) as f64 * cpus.len() as f64),
    })
}

/// A thread's run-queue wait so far (schedstat's second field), read by another thread
/// of the process; `None` where the kernel gives none.
fn run_delay(file: &Option<File>) -> Option<u64> {
    let mut buf = [0u8; 128];
    let n = file.as_ref()?.read_at(&mut buf, 0).ok()?;
    parse_schedstat(&buf[..n]).1
}

/// `--target-util`: start from rps × work = util × CPUs, probe, and scale the rate by
/// target / measured until a probe comes within 5 % (at most four probes), never beyond
/// what the workers can serve. Returns the rate found and the probes.
fn find_rate(spec: &ServerSpec, pct: f64, cpus: &[usize]) -> Result<(f64, Vec<Probe>)> {
    let capacity = spec.worker_capacity_rps();
    let mut rps = spec.rps_for_util(pct, cpus.len()).min(capacity).max(1.0);
    let mut probes = Vec::new();
    for _ in 0..MAX_PROBES {
        let w = run_window(spec, rps, PROBE_NS, cpus, false)?;
        probes.push(Probe { rps, util_pct: w.util_pct });
        if w.util_pct <= 0.0 || (w.util_pct - pct).abs() <= pct * PROBE_TOLERANCE {
            break;
        }
        rps = (rps * pct / w.util_pct).clamp(rps / 2.0, rps * 2.0).min(capacity).max(1.0);
    }
    Ok((rps, probes))
}

fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    match v.len() {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some((v[n / 2 - 1] + v[n / 2]) / 2),
    }
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
    let waits: Option<Vec<u64>> = workers.iter().map(|s| s.rq_wait_ns).collect();
    let requests: u64 = workers.iter().map(|s| s.requests).sum();
    Ok(ServerOutcome {
        rps_asked: rps,
        calibration,
        cpus: cpus.len() as u32,
        sent: w.sent,
        requests,
        achieved_rps: requests as f64 * 1e9 / w.window_ns.max(1) as f64,
        queued: w.queued,
        dropped: w.dropped,
        cpu_util_pct: w.util_pct,
        wakeups: wake.len(),
        wake_p50_ns: at(&wake, 0.5),
        wake_p90_ns: at(&wake, 0.9),
        wake_p99_ns: at(&wake, 0.99),
        wake_p999_ns: at(&wake, 0.999),
        wake_max_ns: (!wake.is_empty()).then(|| wake.max()),
        request_p50_ns: at(&request, 0.5),
        request_p90_ns: at(&request, 0.9),
        request_p99_ns: at(&request, 0.99),
        request_p999_ns: at(&request, 0.999),
        request_max_ns: (!request.is_empty()).then(|| request.max()),
        rq_wait_median_ns: waits.as_ref().and_then(|v| median(v.clone())),
        rq_wait_max_ns: waits.as_ref().and_then(|v| v.iter().copied().max()),
        workers,
        load: None,
        steal: None,
        cgroup: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_to_an_idle_worker_or_waits_in_the_queue() {
        let g = Group::new(2);
        lock(&g.state).idle.push(1);
        g.send(42);
        assert_eq!((g.slots[1].word.load(Ordering::Relaxed), g.slots[1].stamp.load(Ordering::Relaxed)), (WOKEN, 42));
        g.send(43);
        let s = lock(&g.state);
        assert_eq!((s.queue.front().copied(), s.queued, s.dropped), (Some(43), 1, 0));
    }

    #[test]
    fn medians_of_even_and_odd_counts() {
        assert_eq!(median(vec![3, 1, 2]), Some(2));
        assert_eq!(median(vec![4, 1, 3, 2]), Some(2));
        assert_eq!(median(Vec::new()), None);
    }
}
