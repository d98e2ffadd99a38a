//! Timer wakeup latency: the 2007 hrtimers benchmark at cyclictest's standard of care.
//!
//! Each measuring thread sleeps until an absolute deadline on CLOCK_MONOTONIC
//! (clock_nanosleep with TIMER_ABSTIME), reads the clock on waking, records
//! actual − ideal, and advances the deadline by one period. Everything that could disturb
//! the loop happens before it: mlockall, stack prefault, affinity, policy and
//! /dev/cpu_dma_latency. A wakeup later than the next deadline skips the missed periods
//! and counts them as overruns, so one stall never inflates a string of later samples.
//! Latencies go into an HDR histogram, so memory stays constant however long the run;
//! the largest samples also go, with their times, into a fixed buffer (`outliers`), so
//! the analysis can ask whether the spikes recur with a period.
//!
//! Under SCHED_DEADLINE the thread is not woken by a timer but by the kernel's
//! replenishment: each period is a job, which reads the clock, records how late it
//! started against its period's start on CLOCK_MONOTONIC_RAW (rt-tests'
//! cyclicdeadline's measure and clock), and ends
//! by yielding, which hands back the rest of its runtime until the next period. A job
//! that ends after its period's start + deadline is a missed deadline; where the kernel
//! offers SCHED_FLAG_DL_OVERRUN, a job that ran past its runtime is counted from SIGXCPU.
//!
//! Each thread reads its own schedstat just before its first deadline is set and just
//! after its loop ends, so its run-queue wait and migrations cover the run, never a
//! read inside it.

use crate::analysis::attribution;
use crate::analysis::trace::{Attribution, EventKind, Recording, ThreadAttribution, MAX_ATTRIBUTED};
use crate::bench::outliers::{LargestSamples, TimedSample};
use crate::error::{describe_io, Error, Result};
use crate::families::latency::model::{
    DeadlineFigures, LatencyLength, LatencyOutcome, LatencySpec, ThreadOutliers, ThreadStats,
};
use crate::model::{DeadlineParams, Policy, SchedInfo};
use crate::sys::clock::{monotonic_ns, monotonic_raw_ns};
use crate::sys::sched;
use crate::sys::trace::TraceSession;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Highest latency the histogram resolves (1 hour); larger ones are recorded as this.
const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1 % resolution at every magnitude.
const SIGNIFICANT_DIGITS: u8 = 3;
/// Stack each measuring thread touches before its loop, so no page fault lands inside it.
const PREFAULT_STACK_BYTES: usize = 64 * 1024;
/// Largest samples kept with their times per thread (16 bytes each): enough for a period
/// analysis of every spike above p99 in a 10 s run at 5 kHz, a fixed 8 KiB however long.
pub const OUTLIERS_KEPT: usize = 512;

/// One latency measurement as it runs: the spec with its threads' CPUs resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatencyPlan {
    pub interval_ns: u64,
    pub length: LatencyLength,
    pub policy: Policy,
    pub prio: i32,
    /// One measuring thread per entry; `None` leaves that thread unpinned.
    pub cpus: Vec<Option<usize>>,
    pub hold_dma_latency: bool,
    /// Stop at the first sample above this (ns).
    pub break_ns: Option<u64>,
    /// Keep every raw sample (opt-in: the only thing that grows with the run).
    pub keep_samples: bool,
    /// The SCHED_DEADLINE reservation, when the policy is deadline (its period is `interval_ns`).
    pub deadline: Option<DeadlineParams>,
    /// Read each thread's schedstat before and after its loop (`--schedstat`).
    pub schedstat: bool,
    /// Record tracepoints over the measured window and attribute the spikes (`--trace`).
    pub trace: bool,
}

impl LatencyPlan {
    pub fn new(spec: &LatencySpec, cpus: Vec<Option<usize>>, keep_samples: bool) -> LatencyPlan {
        LatencyPlan {
            interval_ns: spec.interval_ns,
            length: spec.length,
            policy: spec.policy,
            prio: spec.prio,
            cpus,
            hold_dma_latency: spec.hold_dma_latency,
            break_ns: spec.break_ns,
            keep_samples,
            deadline: spec.beside.deadline,
            schedstat: spec.beside.schedstat,
            trace: spec.beside.trace,
        }
    }
}

/// What the run had in force, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conditions {
    pub mlockall: std::result::Result<(), String>,
    pub dma_latency: std::result::Result<(), String>,
    pub main_thread_cpus: Option<Vec<usize>>,
    /// The measuring threads' timer slack (ns): how late the kernel may let a non-RT
    /// sleep end so it can batch wakeups (real-time threads get none).
    pub timer_slack_ns: u64,
}

/// One thread's figures.
pub struct ThreadResult {
    pub cpu: Option<usize>,
    pub histogram: Histogram<u64>,
    pub overruns: u64,
    pub samples: Vec<u64>,
    /// The sample that crossed `--break-us`, if one did.
    pub break_hit: Option<u64>,
    /// Under SCHED_DEADLINE: jobs that ended after their period's start + deadline.
    pub missed_deadlines: u64,
    /// The largest samples with their times, in time order (at most `OUTLIERS_KEPT`).
    pub largest: Vec<TimedSample>,
    /// From the thread's start to the end of its loop (ns).
    pub span_ns: u64,
    /// The scheduler's account of the thread over its loop.
    pub sched: SchedInfo,
    /// The thread's id and its start on CLOCK_MONOTONIC (the samples' times count from
    /// it), to find its spikes in a trace.
    pub tid: i32,
    pub start_mono_ns: u64,
}

/// A run's threads and conditions.
pub struct LatencyRun {
    pub spec: LatencyPlan,
    pub threads: Vec<ThreadResult>,
    pub conditions: Conditions,
    /// The run was cut short by SIGINT/SIGTERM (statistics are of the samples taken).
    pub interrupted: Option<i32>,
    /// Under SCHED_DEADLINE: jobs that ran past their runtime (SIGXCPU), where the kernel
    /// signals them.
    pub runtime_overruns: Option<u64>,
    /// With `--trace on`: the measured CPUs' tracepoints over the window, or why none.
    pub trace: Option<std::result::Result<Recording, String>>,
}

impl LatencyRun {
    /// Every thread's samples in one histogram.
    pub fn combined(&self) -> Histogram<u64> {
        let mut all = new_histogram();
        for t in &self.threads {
            // Same bounds, so adding cannot fail.
            let _ = all.add(&t.histogram);
        }
        all
    }

    pub fn overruns(&self) -> u64 {
        self.threads.iter().map(|t| t.overruns).sum()
    }

    /// The typed outcome: each thread's figures, every thread's together, the
    /// conditions, and the combined histogram's buckets.
    pub fn outcome(&self) -> LatencyOutcome {
        let combined = self.combined();
        LatencyOutcome {
            threads: self
                .threads
                .iter()
                .map(|t| with_sched(stats_of(&t.histogram, t.cpu, t.overruns), &t.sched))
                .collect(),
            all: with_sched(
                stats_of(&combined, None, self.overruns()),
                &SchedInfo::sum(self.threads.iter().map(|t| &t.sched)),
            ),
            timer_slack_ns: self.conditions.timer_slack_ns,
            dma_latency_held: self.conditions.dma_latency.is_ok(),
            mlockall: self.conditions.mlockall.is_ok(),
            histogram: combined.iter_recorded().map(|v| (v.value_iterated_to(), v.count_at_value())).collect(),
            beside: Default::default(),
            deadline: self.spec.deadline.map(|_| DeadlineFigures {
                missed_deadlines: self.threads.iter().map(|t| t.missed_deadlines).sum(),
                runtime_overruns: self.runtime_overruns,
            }),
            outliers: self
                .threads
                .iter()
                .map(|t| ThreadOutliers {
                    cpu: t.cpu,
                    span_ns: t.span_ns,
                    capacity: OUTLIERS_KEPT,
                    samples: t.largest.clone(),
                })
                .collect(),
            attribution: self.trace.as_ref().map(|trace| self.attribution(trace)),
        }
    }

    /// Each pinned thread's spikes above its p99, the largest `MAX_ATTRIBUTED`, split by
    /// what the trace saw on its CPU, and the tail's culprits.
    fn attribution(&self, trace: &std::result::Result<Recording, String>) -> Attribution {
        let recording = match trace {
            Ok(recording) => recording,
            Err(reason) => return Attribution { unavailable: Some(reason.clone()), threads: Vec::new() },
        };
        let (above, requests): (Vec<u64>, Vec<attribution::SpikingThread>) = self
            .threads
            .iter()
            .filter_map(|t| {
                let cpu = t.cpu?;
                let above_ns = t.histogram.value_at_quantile(0.99);
                let mut spikes: Vec<(u64, u64)> = t.largest.iter().copied().filter(|s| s.1 > above_ns).collect();
                spikes.sort_by_key(|s| std::cmp::Reverse(s.1));
                spikes.truncate(MAX_ATTRIBUTED);
                Some((above_ns, attribution::SpikingThread { cpu, tid: t.tid, start_mono_ns: t.start_mono_ns, spikes }))
            })
            .unzip();
        // One replay of the recording for every thread's spikes and timelines.
        let threads = requests
            .iter()
            .zip(above)
            .zip(attribution::attribute_threads(recording, &requests))
            .map(|((thread, above_ns), (spikes, timelines))| ThreadAttribution {
                cpu: thread.cpu,
                lost_events: recording.lost.iter().filter(|l| l.0 == thread.cpu).map(|l| l.1).sum(),
                above_ns,
                tail: attribution::tail_culprits(&spikes, above_ns),
                spikes,
                timelines,
            })
            .collect();
        Attribution { unavailable: None, threads }
    }
}

/// A thread's (or the sum's) run-queue wait and migrations beside its latency figures.
fn with_sched(stats: ThreadStats, sched: &SchedInfo) -> ThreadStats {
    ThreadStats { run_delay_ns: sched.run_delay_ns, migrations: sched.migrations, ..stats }
}

/// The figures of one histogram, in ns (all zero when it is empty). Min and max are exact
/// to its resolution; a percentile is the smallest recorded value with at least that
/// fraction of samples at or below it.
pub fn stats_of(h: &Histogram<u64>, cpu: Option<usize>, overruns: u64) -> ThreadStats {
    if h.is_empty() {
        return ThreadStats { cpu, overruns, ..ThreadStats::zero() };
    }
    ThreadStats {
        cpu,
        samples: h.len(),
        overruns,
        min_ns: h.min(),
        avg_ns: h.mean(),
        p50_ns: Some(h.value_at_quantile(0.50)),
        p90_ns: Some(h.value_at_quantile(0.90)),
        p99_ns: Some(h.value_at_quantile(0.99)),
        p999_ns: Some(h.value_at_quantile(0.999)),
        p9999_ns: Some(h.value_at_quantile(0.9999)),
        max_ns: h.max(),
        run_delay_ns: None,
        migrations: None,
    }
}

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS).expect("constant histogram bounds are valid")
}

/// Bytes one thread's histogram takes (for the memory figure in the bench note).
pub fn histogram_bytes() -> usize {
    new_histogram().distinct_values() * std::mem::size_of::<u64>()
}

/// The clock's resolution: an interval below it cannot be asked for.
pub fn clock_resolution_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: writable timespec.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Hold /dev/cpu_dma_latency at 0 µs for as long as the returned descriptor is open
/// (the PM QoS interface keeps CPUs out of deep idle states).
fn hold_dma_latency() -> std::result::Result<OwnedFd, String> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .map_err(|e| format!("/dev/cpu_dma_latency: {}", describe_io(&e)))?;
    let fd: OwnedFd = file.into();
    crate::sys::fd::write_all(&fd, &0i32.to_ne_bytes())
        .map_err(|e| format!("writing 0 to /dev/cpu_dma_latency: {e}"))?;
    Ok(fd)
}

/// Touch a stack region so its pages are present before the loop.
#[inline(never)]
fn prefault_stack() {
    let mut buf = [0u8; PREFAULT_STACK_BYTES];
    for i in (0..buf.len()).step_by(4096) {
        buf[i] = 1;
    }
    std::hint::black_box(&buf);
}

/// Leave a marker in the trace and stop tracing, so the trace ends at the cause
/// (cyclictest's breaktrace). Returns what was done, for the report.
pub fn break_trace(message: &str) -> String {
    for root in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        let marker = format!("{root}/trace_marker");
        if std::path::Path::new(&marker).exists() {
            let wrote =
                std::fs::OpenOptions::new().write(true).open(&marker).and_then(|mut f| f.write_all(message.as_bytes()));
            let stopped = std::fs::write(format!("{root}/tracing_on"), "0");
            return match (wrote, stopped) {
                (Ok(()), Ok(())) => format!("marker written to {marker} and tracing stopped"),
                (w, s) => format!(
                    "tracefs at {root}, but the marker {} and stopping {}",
                    if w.is_ok() { "was written" } else { "failed" },
                    if s.is_ok() { "worked" } else { "failed" }
                ),
            };
        }
    }
    "tracefs is not mounted: no trace to stop".to_string()
}

/// Live figures a measuring thread publishes for the progress line. Each thread's counters
/// take a cache line of their own (the threads' `Live`s sit side by side in one Vec): a
/// thread storing its sample must not invalidate the line another thread is writing.
#[derive(Default)]
#[repr(align(64))]
pub struct Live {
    pub current_ns: AtomicU64,
    pub max_ns: AtomicU64,
    pub samples: AtomicU64,
}

fn timespec_of(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// What a measuring thread keeps of its samples, the same under every policy: the
/// histogram, the raw samples when asked, the largest ones with their times, the running
/// max (shown live) and the sample that crossed `--break-us`. Everything is allocated
/// before the loop; `record` only stores.
struct Recorder {
    histogram: Histogram<u64>,
    keep_samples: bool,
    samples: Vec<u64>,
    largest: LargestSamples,
    max_seen: u64,
    break_ns: Option<u64>,
    break_hit: Option<u64>,
}

impl Recorder {
    /// For a run of `spec` sampling once every `interval_ns`.
    fn new(spec: &LatencyPlan, interval_ns: u64) -> Recorder {
        let capacity = match (spec.keep_samples, spec.length) {
            (true, LatencyLength::Loops(n)) => n as usize,
            (true, LatencyLength::Duration(d)) => (d.as_nanos() / u128::from(interval_ns)) as usize + 1,
            (false, _) => 0,
        };
        Recorder {
            histogram: new_histogram(),
            keep_samples: spec.keep_samples,
            samples: Vec::with_capacity(capacity),
            largest: LargestSamples::new(OUTLIERS_KEPT),
            max_seen: 0,
            break_ns: spec.break_ns,
            break_hit: None,
        }
    }

    /// Record `value` (ns) taken `at_ns` after the thread's start. False when it crossed
    /// `--break-us`: the run stops (`stop` is set for every thread).
    #[inline]
    fn record(&mut self, at_ns: u64, value: u64, live: &Live, stop: &AtomicBool) -> bool {
        self.histogram.saturating_record(value.max(1));
        if self.keep_samples {
            self.samples.push(value);
        }
        self.largest.offer(at_ns, value);
        self.max_seen = self.max_seen.max(value);
        live.current_ns.store(value, Ordering::Relaxed);
        live.max_ns.store(self.max_seen, Ordering::Relaxed);
        live.samples.fetch_add(1, Ordering::Relaxed);
        if self.break_ns.is_some_and(|b| value > b) {
            self.break_hit = Some(value);
            stop.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// The thread's figures, with what its loop counted besides the samples.
    fn finish(
        self,
        cpu: Option<usize>,
        overruns: u64,
        missed_deadlines: u64,
        span_ns: u64,
        sched: SchedInfo,
    ) -> ThreadResult {
        ThreadResult {
            cpu,
            histogram: self.histogram,
            overruns,
            samples: self.samples,
            break_hit: self.break_hit,
            missed_deadlines,
            largest: self.largest.into_time_order(),
            span_ns,
            sched,
            tid: 0,
            start_mono_ns: 0,
        }
    }
}

/// The measuring loop of one thread: sleep, read the clock, record, advance. Nothing else.
fn measure_thread(
    spec: &LatencyPlan,
    index: usize,
    stop: &AtomicBool,
    live: &Live,
) -> std::result::Result<ThreadResult, String> {
    let cpu = spec.cpus[index];
    sched::apply_to_current_thread(cpu.map(|c| vec![c]).as_deref(), spec.policy, spec.prio)?;
    prefault_stack();
    let mut recorder = Recorder::new(spec, spec.interval_ns);
    let interval = spec.interval_ns;
    let sched_files = crate::sys::schedstat::TaskFiles::of_current_thread(spec.schedstat);
    let sched_before = sched_files.read();
    let start = monotonic_ns();
    let (max_periods, end_ns) = match spec.length {
        LatencyLength::Loops(n) => (n, u64::MAX),
        LatencyLength::Duration(d) => (u64::MAX, start + d.as_nanos() as u64),
    };
    let mut next = start + interval;
    let mut periods = 0u64;
    let mut overruns = 0u64;
    while periods < max_periods && next <= end_ns && !stop.load(Ordering::Relaxed) {
        let deadline = timespec_of(next);
        // SAFETY: a valid absolute deadline; a null remainder is allowed with TIMER_ABSTIME.
        let rc = unsafe {
            libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &deadline, std::ptr::null_mut())
        };
        if rc == libc::EINTR {
            continue;
        }
        if rc != 0 {
            return Err(format!("clock_nanosleep: {}", describe_io(&std::io::Error::from_raw_os_error(rc))));
        }
        let now = monotonic_ns();
        periods += 1;
        if !recorder.record(now.saturating_sub(start), now.saturating_sub(next), live, stop) {
            break;
        }
        next += interval;
        if now >= next && periods < max_periods {
            // Missed periods: skip them, count them, and never sample them late.
            // Periods past the end of a --loops run are not counted: samples + overruns
            // is exactly the number of periods asked for.
            let missed = ((now - next) / interval + 1).min(max_periods.saturating_sub(periods));
            overruns += missed;
            periods += missed;
            next += missed * interval;
        }
    }
    let span_ns = monotonic_ns().saturating_sub(start);
    let sched = sched_files.read().since(&sched_before);
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::gettid() };
    Ok(ThreadResult { tid, start_mono_ns: start, ..recorder.finish(cpu, overruns, 0, span_ns, sched) })
}

/// The measuring loop under SCHED_DEADLINE: yield (the job ends), read the clock as the
/// next job starts, record its lateness against its period's start, advance. Returns
/// whether runtime overruns are signalled, with the thread's figures.
fn measure_deadline_thread(
    spec: &LatencyPlan,
    params: &DeadlineParams,
    stop: &AtomicBool,
    live: &Live,
) -> std::result::Result<(ThreadResult, bool), String> {
    let signalled = sched::apply_scheduling(
        None,
        spec.policy,
        spec.prio,
        Some(params),
        1,
        sched::DeadlineFlags { signal_overruns: true, reclaim: false },
    )?;
    prefault_stack();
    let period = params.period_ns;
    let mut recorder = Recorder::new(spec, period);
    let sched_files = crate::sys::schedstat::TaskFiles::of_current_thread(spec.schedstat);
    // The first job only anchors the periods: it began when the reservation was set,
    // not at a period boundary of its own.
    // SAFETY: sched_yield takes no arguments.
    unsafe { libc::sched_yield() };
    let mut period_start = monotonic_raw_ns();
    let sched_before = sched_files.read();
    let start = period_start;
    let (max_periods, end_ns) = match spec.length {
        LatencyLength::Loops(n) => (n, u64::MAX),
        LatencyLength::Duration(d) => (u64::MAX, period_start + d.as_nanos() as u64),
    };
    let (mut periods, mut overruns, mut misses) = (0u64, 0u64, 0u64);
    while periods < max_periods && !stop.load(Ordering::Relaxed) {
        // SAFETY: as above. Under SCHED_DEADLINE this ends the job: the thread sleeps
        // until its runtime is replenished at the next period.
        unsafe { libc::sched_yield() };
        let now = monotonic_raw_ns();
        period_start += period;
        if now < period_start {
            // The kernel began this period early (it restarts a reservation's periods
            // when a job wakes past its deadline): follow it, as cyclicdeadline does.
            period_start = now;
        }
        let skipped = (now - period_start) / period;
        let restarted = skipped > 0;
        if restarted {
            // Whole periods with no job: skipped and counted, never sampled late. Those
            // past the end of a --loops run are not counted: samples + overruns is
            // exactly the number of periods asked for.
            let left = max_periods - periods;
            if skipped >= left {
                overruns += left;
                break;
            }
            overruns += skipped;
            periods += skipped;
            period_start += skipped * period;
            // A replenishment more than a period late makes the kernel start the
            // reservation's periods afresh from then: follow it after this job.
        }
        if period_start > end_ns || periods >= max_periods {
            break;
        }
        periods += 1;
        if !recorder.record(now.saturating_sub(start), now - period_start, live, stop) {
            break;
        }
        if monotonic_raw_ns() > period_start + params.deadline_ns {
            misses += 1;
        }
        if restarted {
            period_start = now;
        }
    }
    let span_ns = monotonic_raw_ns().saturating_sub(start);
    let sched = sched_files.read().since(&sched_before);
    Ok((recorder.finish(None, overruns, misses, span_ns, sched), signalled))
}

/// Run the measuring threads, watching for SIGINT/SIGTERM (which end the run early with
/// the samples taken) and drawing `progress` a few times a second.
pub fn run(spec: &LatencyPlan, mut progress: impl FnMut(&[Live])) -> Result<LatencyRun> {
    let signals = crate::sys::signals::SignalWatch::new(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
        .map_err(|e| Error::os("setting up signal handling", e))?;
    let dma = if spec.hold_dma_latency { Some(hold_dma_latency()) } else { None };
    let mut conditions = Conditions {
        mlockall: crate::sys::process::lock_memory(),
        dma_latency: match &dma {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(e.clone()),
            None => Err("not requested (--no-dma-latency)".to_string()),
        },
        main_thread_cpus: None,
        // SAFETY: PR_GET_TIMERSLACK takes no pointers and returns the value.
        timer_slack_ns: unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) }.max(0) as u64,
    };
    // Keep the main thread off the measured CPUs where any other is allowed.
    let measured: Vec<usize> = spec.cpus.iter().flatten().copied().collect();
    if !measured.is_empty() {
        let allowed = sched::allowed_cpus().map_err(|e| Error::os("reading the CPU affinity mask", e))?;
        let elsewhere: Vec<usize> = allowed.into_iter().filter(|c| !measured.contains(c)).collect();
        if !elsewhere.is_empty() && sched::set_affinity(&elsewhere).is_ok() {
            conditions.main_thread_cpus = Some(elsewhere);
        }
    }
    let stop = AtomicBool::new(false);
    let lives: Vec<Live> = spec.cpus.iter().map(|_| Live::default()).collect();
    let mut interrupted = None;
    // Each thread bumps this when it ends, so a short run is not kept waiting for the
    // next progress tick.
    let finished = crate::sys::fd::eventfd().map_err(|e| Error::os("creating an eventfd", e))?;
    let finished_fd = std::os::fd::AsRawFd::as_raw_fd(&finished);
    // Tracing starts before the threads do and is read after they end, by this thread,
    // which runs off the measured CPUs: nothing drains a buffer on a measured CPU.
    let tracing = spec.trace.then(|| start_tracing(spec));
    crate::sys::load::mark_window_start();
    let sigxcpu = match spec.deadline {
        Some(_) => Some(
            crate::sys::signals::SigxcpuCounter::install()
                .map_err(|e| Error::os("installing a SIGXCPU handler for runtime overruns", e))?,
        ),
        None => None,
    };
    let overruns_signalled = AtomicBool::new(false);
    let outcomes: Vec<std::result::Result<ThreadResult, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..spec.cpus.len())
            .map(|i| {
                let (stop, live, signalled) = (&stop, &lives[i], &overruns_signalled);
                std::thread::Builder::new()
                    .name(format!("latency-{i}"))
                    .stack_size(PREFAULT_STACK_BYTES * 4)
                    .spawn_scoped(scope, move || {
                        let r = match &spec.deadline {
                            Some(params) => measure_deadline_thread(spec, params, stop, live).map(|(r, s)| {
                                signalled.store(s, Ordering::Relaxed);
                                r
                            }),
                            None => measure_thread(spec, i, stop, live),
                        };
                        if r.is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        let _ = crate::sys::fd::write_raw(finished_fd, &1u64.to_ne_bytes());
                        r
                    })
            })
            .collect();
        loop {
            if handles.iter().all(|h| h.as_ref().map_or(true, |h| h.is_finished())) {
                break;
            }
            let mut pfds = [
                libc::pollfd { fd: signals.raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: finished_fd, events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: two valid pollfds.
            unsafe { libc::poll(pfds.as_mut_ptr(), 2, 250) };
            if pfds[1].revents & libc::POLLIN != 0 {
                let mut count = [0u8; 8];
                let _ = crate::sys::fd::read_raw(finished_fd, &mut count);
            }
            if let Some(&sig) = signals.drain().first() {
                interrupted.get_or_insert(sig);
                stop.store(true, Ordering::Relaxed);
            }
            progress(&lives);
        }
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err("a measuring thread panicked".to_string())),
                Err(e) => Err(format!("starting a measuring thread: {e}")),
            })
            .collect()
    });
    crate::sys::load::mark_window_end();
    let trace = tracing.map(crate::bench::read_trace);
    drop(dma);
    crate::sys::process::unlock_memory();
    let mut threads = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(t) => threads.push(t),
            // A refused policy or CPU is the environment's answer: nothing was measured.
            Err(msg) => return Err(Error::env(msg)),
        }
    }
    let runtime_overruns = sigxcpu.filter(|_| overruns_signalled.load(Ordering::Relaxed)).map(|c| c.count());
    Ok(LatencyRun { spec: spec.clone(), threads, conditions, interrupted, runtime_overruns, trace })
}

/// Each measured CPU's trace buffer (KiB): a wakeup costs about eight events of ~40
/// bytes, so 5 kHz fills 16 MiB in about 50 s; what overflows is counted, never hidden.
const TRACE_BUFFER_KB: usize = 16 * 1024;

/// A tracing session on the measured CPUs, or why there is none.
fn start_tracing(spec: &LatencyPlan) -> std::result::Result<TraceSession, String> {
    if spec.deadline.is_some() {
        return Err("no attribution under SCHED_DEADLINE (its threads cannot be pinned)".to_string());
    }
    let cpus: Option<Vec<usize>> = spec.cpus.iter().copied().collect();
    let Some(mut cpus) = cpus else {
        return Err("no attribution: tracing needs every measuring thread pinned (--cpus)".to_string());
    };
    cpus.sort_unstable();
    cpus.dedup();
    crate::bench::start_trace(&cpus, TRACE_BUFFER_KB)
}

// What a run states beside its figures, and its raw data in the files `--histogram` and
// `--samples` ask for: written where the run took place (the trial process).

/// What the run had in force, stated so a reader can judge the figures.
pub fn describe(run: &LatencyRun) -> String {
    let spec = &run.spec;
    let hz = 1e9 / spec.interval_ns as f64;
    let policy = if spec.policy.is_realtime() {
        format!("{} priority {}", spec.policy.kernel_name(), spec.prio)
    } else if let Some(dl) = spec.deadline {
        format!("{} ({})", spec.policy.kernel_name(), dl.describe())
    } else {
        spec.policy.kernel_name().to_string()
    };
    let length = match spec.length {
        crate::families::latency::model::LatencyLength::Loops(n) => format!("{n} periods per thread"),
        crate::families::latency::model::LatencyLength::Duration(d) => format!("{:.1} s", d.as_secs_f64()),
    };
    let c = &run.conditions;
    let state = |r: &std::result::Result<(), String>| match r {
        Ok(()) => "yes".to_string(),
        Err(e) => format!("no ({e})"),
    };
    let pinned = if spec.deadline.is_some() {
        "unpinned (the kernel refuses to pin a deadline task to part of its root domain)"
    } else if spec.cpus.iter().all(Option::is_some) {
        "each thread pinned"
    } else {
        "unpinned"
    };
    let main = c
        .main_thread_cpus
        .as_ref()
        .map_or("not moved".to_string(), |cpus| format!("on CPUs {}", crate::model::parse::format_cpu_list(cpus)));
    let slack = if spec.policy.is_realtime() {
        "timer slack: none (real-time)".to_string()
    } else if spec.deadline.is_some() {
        "no timer: each job starts when the kernel replenishes the reservation".to_string()
    } else {
        format!("timer slack {} ns (a non-RT sleep may end this late by design)", c.timer_slack_ns)
    };
    let mut text = format!(
        "latency: {} thread(s), interval {} ns ({hz:.1} Hz), {policy}, {length}; histogram {} KiB per thread\n\
         in force: mlockall {}; stack prefaulted; {pinned}; /dev/cpu_dma_latency held at 0: {}; main thread {main}; \
         {slack}\n",
        spec.cpus.len(),
        spec.interval_ns,
        histogram_bytes() / 1024,
        state(&c.mlockall),
        state(&c.dma_latency),
    );
    if let Some(dl) = spec.deadline {
        let misses: u64 = run.threads.iter().map(|t| t.missed_deadlines).sum();
        let overruns = match run.runtime_overruns {
            Some(n) => format!("{n} (SIGXCPU from SCHED_FLAG_DL_OVERRUN)"),
            None => "not reported (this kernel does not offer SCHED_FLAG_DL_OVERRUN)".to_string(),
        };
        text.push_str(&format!(
            "deadline: each period is a job; its lateness is its start against its period's start \
             (CLOCK_MONOTONIC_RAW); jobs that ended after start + {}: {misses}; jobs past their runtime: {overruns}\n",
            crate::model::format_ns(dl.deadline_ns)
        ));
    }
    if let Some(sig) = run.interrupted {
        text.push_str(&format!("interrupted by {}: statistics of the samples taken\n", crate::error::signal_name(sig)));
    }
    text
}

/// Bucket counts, one line per non-empty bucket: `policy cpu value_ns count`.
pub fn write_histogram(out: &mut dyn std::io::Write, run: &LatencyRun) -> std::io::Result<()> {
    for t in &run.threads {
        let cpu = t.cpu.map_or("any".to_string(), |c| c.to_string());
        for v in t.histogram.iter_recorded() {
            writeln!(out, "{} {cpu} {} {}", run.spec.policy.as_str(), v.value_iterated_to(), v.count_at_value())?;
        }
    }
    Ok(())
}

/// Every sample in ns, one per line, in the order taken (threads one after another).
pub fn write_samples(out: &mut dyn std::io::Write, threads: &[ThreadResult]) -> std::io::Result<()> {
    for t in threads {
        for s in &t.samples {
            writeln!(out, "{s}")?;
        }
    }
    Ok(())
}

/// With `--trace-out`: the run's recording as Chrome trace-event objects (the JSON array
/// format that chrome://tracing and ui.perfetto.dev open), each followed by ",\n", for the
/// command to wrap in `[` and `]`. One process per trial (its pid), one lane per CPU with
/// the tasks that ran from switch to switch and the interrupt, softirq and timer handlers
/// nested in them, wakeups as instants, and a lane per CPU of the spikes above the p99
/// (from the ideal wake time to the actual one). Times in µs of CLOCK_MONOTONIC.
pub fn write_trace_events(out: &mut dyn std::io::Write, run: &LatencyRun) -> std::io::Result<()> {
    let Some(Ok(recording)) = &run.trace else { return Ok(()) };
    let pid = std::process::id();
    let us = |ns: u64| ns as f64 / 1e3;
    let mut emit = |e: ChromeEvent| writeln!(out, "{},", e.text());
    emit(ChromeEvent::process_name(pid, format!("schedlab latency {} (pid {pid})", run.spec.policy.as_str())))?;
    let spike_lane = |cpu: usize| 1000 + cpu;
    let lane = |cpu: usize, name: String| ChromeEvent {
        tid: Some(cpu),
        args: Some(ChromeArgs::Name { name }),
        ..ChromeEvent::new("M", "thread_name".into(), pid)
    };
    for &(cpu, lost) in &recording.lost {
        emit(lane(cpu, format!("CPU {cpu} (lost events: {lost})")))?;
        emit(lane(spike_lane(cpu), format!("CPU {cpu}: wakeups above the p99")))?;
    }
    let events = &recording.events;
    let last_ns = events.last().map_or(0, |e| e.ts_ns);
    let cpus: Vec<usize> = recording.lost.iter().map(|&(cpu, _)| cpu).collect();
    for (&cpu, segments) in cpus.iter().zip(attribution::cpus_segments(events, &cpus, 0, last_ns)) {
        for seg in segments {
            let args = if seg.detail.is_empty() { ChromeArgs::None {} } else { ChromeArgs::Task { task: seg.detail } };
            emit(ChromeEvent {
                tid: Some(cpu),
                ts: Some(us(seg.start_ns)),
                dur: Some(us(seg.end_ns - seg.start_ns)),
                args: Some(args),
                ..ChromeEvent::new("X", seg.name, pid)
            })?;
        }
    }
    for e in events {
        if let EventKind::Wakeup { task, target_cpu } = &e.kind {
            emit(ChromeEvent {
                s: Some("t"),
                tid: Some(e.cpu),
                ts: Some(us(e.ts_ns)),
                args: Some(ChromeArgs::Pid { pid: task.pid }),
                ..ChromeEvent::new("i", format!("wakeup {} → CPU {target_cpu}", task.comm), pid)
            })?;
        }
    }
    for t in &run.threads {
        let Some(cpu) = t.cpu else { continue };
        let above = t.histogram.value_at_quantile(0.99);
        for &(at_ns, latency_ns) in t.largest.iter().filter(|s| s.1 > above) {
            let actual = t.start_mono_ns + at_ns;
            emit(ChromeEvent {
                tid: Some(spike_lane(cpu)),
                ts: Some(us(actual.saturating_sub(latency_ns))),
                dur: Some(us(latency_ns)),
                ..ChromeEvent::new("X", format!("woke {:.1} µs late", us(latency_ns)), pid)
            })?;
        }
    }
    Ok(())
}

/// One Chrome trace-event object: its phase (`M` metadata, `X` a complete slice, `i` an
/// instant with its scope `s`), name, process and lane, times in µs, and its arguments;
/// the fields a phase has no use for are left out.
#[derive(Serialize)]
pub struct ChromeEvent {
    ph: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    name: String,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tid: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dur: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<ChromeArgs>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum ChromeArgs {
    Name { name: String },
    Task { task: String },
    Pid { pid: i32 },
    None {},
}

impl ChromeEvent {
    fn new(ph: &'static str, name: String, pid: u32) -> ChromeEvent {
        ChromeEvent { ph, s: None, name, pid, tid: None, ts: None, dur: None, args: None }
    }

    /// The metadata event that names process `pid`.
    pub fn process_name(pid: u32, name: String) -> ChromeEvent {
        ChromeEvent { args: Some(ChromeArgs::Name { name }), ..ChromeEvent::new("M", "process_name".into(), pid) }
    }

    /// The event as JSON text (it holds text and numbers only, which always serialize).
    pub fn text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Live;

    #[test]
    fn each_threads_live_counters_fill_one_cache_line() {
        assert_eq!(std::mem::align_of::<Live>(), 64);
        assert_eq!(std::mem::size_of::<Live>(), 64);
        let lives: Vec<Live> = (0..3).map(|_| Live::default()).collect();
        let gap = &lives[1] as *const Live as usize - &lives[0] as *const Live as usize;
        assert_eq!(gap, 64);
    }

    use super::{new_histogram, stats_of};

    #[test]
    fn stats_of_known_samples() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = stats_of(&h, Some(1), 2);
        assert_eq!((s.samples, s.min_ns, s.cpu, s.overruns), (1000, 1000, Some(1), 2));
        // Three significant digits: each figure within 0.1 %.
        let near = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 0.001;
        let (p50, p90, p99) = (s.p50_ns.unwrap(), s.p90_ns.unwrap(), s.p99_ns.unwrap());
        assert!(near(p50, 500_000), "{p50}");
        assert!(near(p99, 990_000), "{p99}");
        assert!(near(s.max_ns, 1_000_000), "{}", s.max_ns);
        assert!((s.avg_ns - 500_500.0).abs() < 500.0, "{}", s.avg_ns);
        assert!(s.min_ns <= p50 && p50 <= p90 && p90 <= p99 && p99 <= s.max_ns);
        assert_eq!(stats_of(&new_histogram(), None, 0).samples, 0);
    }
}
