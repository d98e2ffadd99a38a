//! The context-switch ring: the 1992 NCAR `pipeline` benchmark, with lmbench lat_ctx's
//! separation of switch cost from token-passing cost.
//!
//! N members in a circle, each blocked in a receive until the token arrives, then passing
//! it on: one hop = one send, one wakeup, one switch. Member 0 stamps the clock on its
//! first receipt; after the last lap it sends STOP instead of the token, each member
//! passes STOP on and leaves, and the last member stamps the clock when STOP reaches it.
//! The timed region holds exactly `laps * N + N - 1` hops and none of the forking,
//! set-up or teardown.
//!
//! Each member snapshots its own getrusage(RUSAGE_THREAD) when it is ready and when it
//! is done; the sum of the differences is the ring's user/system time and switch count.
//! Its run-queue wait and migrations come from its own schedstat and sched files
//! (opened at set-up): read once when it is ready, just before it first waits for the
//! token (so the wait of its first wakeup, inside the timed region, is counted, the
//! forking before it is not, and no read happens in the hops), and again beside the done
//! snapshot.
//! Nothing in the hop loop allocates, prints, locks or reads the clock.

use crate::analysis::offcpu::{ring_hops, HopTrace};
use crate::analysis::trace::Recording;
use crate::error::{Error, Result};
use crate::families::ring::model::{Ipc, Pin, RingLength, RingMode, RingOutcome, RingSpec};
use crate::model::Usage;
use crate::sys::children::{ChildContext, ChildGroup, StartGate};
use crate::sys::clock::monotonic_ns;
use crate::sys::futex;
use crate::sys::schedstat::{SchedBoard, TaskFiles};
use crate::sys::shm::{SharedSlice, Snapshot, UsageBoard};
use crate::sys::trace::TraceSession;
use crate::sys::{fd, limits, rusage, sched};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const TOKEN: u32 = 1;
const STOP: u32 = 2;

// Slots of the shared header.
const T_START: usize = 0;
const T_END: usize = 1;
const LAPS_DONE: usize = 2;
const STOP_FLAG: usize = 3;
const SPAWN_NS: usize = 4;
const HEADER_SLOTS: usize = 5;

/// Futex words each on their own cache line, so members do not share lines.
type FutexWord = [AtomicU32; 16];

/// Stack for a thread-mode member: the hop loop needs little, and thousands of threads
/// must fit.
const THREAD_STACK_BYTES: usize = 128 * 1024;

/// Where the members leave what they measured.
struct Board {
    header: SharedSlice<AtomicU64>,
    /// Each member's usage when ready (Start) and when it leaves (End).
    members: UsageBoard,
    /// Each member's schedstat readings at the same two moments.
    sched: SchedBoard,
    /// Opened by the last member once the clock has stopped: members that passed STOP
    /// on wait at it, so no exit runs inside the timed region.
    released: StartGate,
}

impl Board {
    fn new(procs: usize) -> Result<Board> {
        Ok(Board {
            header: SharedSlice::new(HEADER_SLOTS).map_err(|e| Error::os("mapping the ring's shared header", e))?,
            members: UsageBoard::new(procs).map_err(|e| Error::os("mapping the ring's result slots", e))?,
            sched: SchedBoard::new(procs).map_err(|e| Error::os("mapping the ring's schedstat slots", e))?,
            released: StartGate::new()?,
        })
    }
}

/// One direction of the token's path, as a member sees it.
trait Link {
    fn recv(&self) -> io::Result<u32>;
    fn send(&self, value: u32) -> io::Result<()>;
}

/// One-byte reads and writes through pipes (`r` and `w` may be the same pipe when
/// measuring the overhead inside one task).
struct PipeLink {
    r: RawFd,
    w: RawFd,
}

impl Link for PipeLink {
    fn recv(&self) -> io::Result<u32> {
        let mut byte = [0u8; 1];
        match fd::read_raw(self.r, &mut byte)? {
            1 => Ok(u32::from(byte[0])),
            _ => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the previous member closed its end")),
        }
    }

    fn send(&self, value: u32) -> io::Result<()> {
        fd::write_raw(self.w, &[value as u8])
    }
}

/// eventfd counters: with one token in flight, a read returns exactly what was written.
struct EventfdLink {
    r: RawFd,
    w: RawFd,
}

impl Link for EventfdLink {
    fn recv(&self) -> io::Result<u32> {
        let mut buf = [0u8; 8];
        match fd::read_raw(self.r, &mut buf)? {
            8 => Ok(u64::from_ne_bytes(buf) as u32),
            _ => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "short eventfd read")),
        }
    }

    fn send(&self, value: u32) -> io::Result<()> {
        fd::write_raw(self.w, &u64::from(value).to_ne_bytes())
    }
}

/// A word per member: wait while it is zero, take the value, clear it; send by storing
/// into the next member's word and waking it. `private` when all members share one
/// address space (thread mode), which lets the kernel skip the shared-futex lookup.
struct FutexLink<'a> {
    mine: &'a AtomicU32,
    next: &'a AtomicU32,
    private: bool,
}

impl FutexLink<'_> {
    fn scope(&self) -> futex::Scope {
        if self.private {
            futex::Scope::Process
        } else {
            futex::Scope::Shared
        }
    }
}

impl Link for FutexLink<'_> {
    fn recv(&self) -> io::Result<u32> {
        loop {
            let v = self.mine.swap(0, Ordering::Acquire);
            if v != 0 {
                return Ok(v);
            }
            futex::wait(self.mine, 0, self.scope())?;
        }
    }

    fn send(&self, value: u32) -> io::Result<()> {
        self.next.store(value, Ordering::Release);
        futex::wake(self.next, 1, self.scope())
    }
}

/// lmbench's `-s`: memory each member reads every hop, so a switch also pays for
/// refilling the caches. Prefaulted at set-up, never inside the timed region.
struct WorkingSet {
    ptr: *mut u64,
    words: usize,
}

impl WorkingSet {
    fn new(kb: usize) -> io::Result<WorkingSet> {
        if kb == 0 {
            return Ok(WorkingSet { ptr: std::ptr::null_mut(), words: 0 });
        }
        let bytes = kb * 1024;
        // SAFETY: a fresh private anonymous mapping.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let set = WorkingSet { ptr: ptr.cast(), words: bytes / 8 };
        for i in (0..set.words).step_by(8) {
            // SAFETY: i < words, inside the mapping.
            unsafe { set.ptr.add(i).write_volatile(i as u64) };
        }
        Ok(set)
    }

    /// Read one word of every cache line.
    #[inline]
    fn touch(&self) {
        let mut sum = 0u64;
        for i in (0..self.words).step_by(8) {
            // SAFETY: i < words, inside the mapping.
            sum = sum.wrapping_add(unsafe { self.ptr.add(i).read_volatile() });
        }
        std::hint::black_box(sum);
    }
}

impl Drop for WorkingSet {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: unmapping what new() mapped.
            unsafe { libc::munmap(self.ptr.cast(), self.words * 8) };
        }
    }
}

/// The hop loop of one member. `laps` is `None` when the ring runs until the header's
/// stop flag is raised. Every receipt, STOP included, is one hop: touch the working set,
/// pass the value on. The clock is read twice in the whole ring: by member 0 on its
/// first receipt, and by the last member when STOP reaches it, so the timed region holds
/// `laps * N + N - 1` hops. `at_first_receipt` runs once, when the token first arrives
/// (each member's start snapshot), so the CPU and switch counts cover the ring's work and
/// not the wait before it; the end snapshot is taken as each member leaves.
fn pass_token<L: Link>(
    link: &L,
    index: usize,
    procs: usize,
    laps: Option<u64>,
    header: &[AtomicU64],
    work: &WorkingSet,
    at_first_receipt: impl FnOnce(),
) -> io::Result<()> {
    if index == 0 {
        link.recv()?;
        at_first_receipt();
        header[T_START].store(monotonic_ns(), Ordering::Relaxed);
        let mut completed = 0u64;
        loop {
            work.touch();
            link.send(TOKEN)?;
            link.recv()?;
            completed += 1;
            let finished = match laps {
                Some(laps) => completed == laps,
                None => header[STOP_FLAG].load(Ordering::Relaxed) != 0,
            };
            if finished {
                header[LAPS_DONE].store(completed, Ordering::Relaxed);
                work.touch();
                return link.send(STOP);
            }
        }
    }
    let last = index + 1 == procs;
    let mut value = link.recv()?;
    at_first_receipt();
    loop {
        if value == STOP && last {
            // Member 0 has already left: STOP goes no further.
            header[T_END].store(monotonic_ns(), Ordering::Relaxed);
            return Ok(());
        }
        work.touch();
        link.send(value)?;
        if value == STOP {
            return Ok(());
        }
        value = link.recv()?;
    }
}

/// Hops in the timed region: the laps, plus STOP's trip from member 0 to the last.
pub fn timed_hops(laps: u64, procs: usize) -> u64 {
    laps * procs as u64 + procs as u64 - 1
}

/// Everything a member does after it is forked (or started as a thread): placement,
/// policy, working set, the ready snapshot, the hops, the done snapshot.
struct MemberPlan<'a> {
    spec: &'a RingSpec,
    affinity: Vec<Option<Vec<usize>>>,
    board: &'a Board,
    /// The CPUs the ring may use: what `--trace on` records.
    cpus: &'a [usize],
}

impl MemberPlan<'_> {
    /// The watchdog's deadline, when the user set `--timeout`.
    fn deadline(&self) -> Option<(Instant, Duration)> {
        self.spec.timeout.map(|t| (Instant::now() + t, t))
    }

    fn laps(&self) -> Option<u64> {
        match self.spec.length {
            RingLength::Laps(n) => Some(n),
            RingLength::Duration(_) => None,
        }
    }

    /// Placement and policy, the working set, and the member's schedstat descriptors
    /// (opened here, so the hops never pay for an open).
    fn set_up(&self, index: usize) -> std::result::Result<(WorkingSet, TaskFiles), String> {
        let spec = self.spec;
        sched::apply_scheduling(
            self.affinity[index].as_deref(),
            spec.policy,
            spec.prio,
            spec.beside.deadline.as_ref(),
            spec.procs,
            sched::DeadlineFlags::default(),
        )?;
        let work = WorkingSet::new(self.spec.work_kb).map_err(|e| {
            format!("allocating a {} KiB working set: {}", self.spec.work_kb, crate::error::describe_io(&e))
        })?;
        Ok((work, TaskFiles::of_current_thread(self.spec.beside.schedstat)))
    }

    fn run<L: Link>(
        &self,
        index: usize,
        link: &L,
        (work, files): &(WorkingSet, TaskFiles),
    ) -> std::result::Result<(), String> {
        // After ready (or the thread ring's barrier), before the first receive blocks.
        self.board.sched.store(index, Snapshot::Start, &files.read());
        let snapshot_start = || self.board.members.store_usage(index, Snapshot::Start, &rusage::this_thread());
        pass_token(link, index, self.spec.procs, self.laps(), &self.board.header, work, snapshot_start)
            .map_err(|e| format!("passing the token: {}", crate::error::describe_io(&e)))?;
        self.board.members.store_usage(index, Snapshot::End, &rusage::this_thread());
        self.board.sched.store(index, Snapshot::End, &files.read());
        if index + 1 == self.spec.procs {
            self.board.released.open();
        } else {
            self.board.released.wait();
        }
        Ok(())
    }

    /// A process-mode member, from fork to exit code.
    fn process_member<L: Link>(&self, ctx: &ChildContext, link: L) -> i32 {
        let work = match self.set_up(ctx.index) {
            Ok(w) => w,
            Err(msg) => return ctx.fail_setup(&msg),
        };
        if let Err(e) = ctx.ready() {
            return ctx.fail_setup(&format!("signalling ready: {e}"));
        }
        match self.run(ctx.index, &link, &work) {
            Ok(()) => 0,
            Err(msg) => ctx.fail(&msg),
        }
    }
}

/// Which CPU(s) each member may use.
fn placement(pin: Pin, cpus: &[usize], procs: usize, user_chose_cpus: bool) -> Vec<Option<Vec<usize>>> {
    (0..procs)
        .map(|i| match pin {
            Pin::Same => Some(vec![cpus[0]]),
            Pin::Spread => Some(vec![cpus[i % cpus.len()]]),
            Pin::None if user_chose_cpus => Some(cpus.to_vec()),
            Pin::None => None,
        })
        .collect()
}

/// Descriptors for one fd-based channel: (read end, write end). For an eventfd both are
/// the same counter, duplicated so each end is closed exactly once.
fn fd_channel(ipc: Ipc) -> io::Result<(OwnedFd, OwnedFd)> {
    match ipc {
        Ipc::Pipe => fd::pipe(),
        Ipc::Eventfd => {
            let efd = fd::eventfd()?;
            let dup = efd.try_clone()?;
            Ok((efd, dup))
        }
        Ipc::Futex => unreachable!("futex channels are memory, not descriptors"),
    }
}

/// Send the first token into member 0's channel, encoded as that channel's links do.
fn inject_through_fd(ipc: Ipc, w: RawFd) -> io::Result<()> {
    match ipc {
        Ipc::Eventfd => EventfdLink { r: -1, w }.send(TOKEN),
        _ => PipeLink { r: -1, w }.send(TOKEN),
    }
}

/// The files a thread ring holds open: its channels and each member's schedstat files.
pub fn open_files_for_threads(spec: &RingSpec) -> u64 {
    let channel = match spec.ipc {
        Ipc::Pipe | Ipc::Eventfd => 2,
        Ipc::Futex => 0,
    };
    // Each member's schedstat and sched files stay open through its hops.
    let schedstat = if spec.beside.schedstat { 2 } else { 0 };
    spec.procs as u64 * (channel + schedstat) + 64
}

/// Run one ring configuration and measure it. `overhead_ps` is the token-passing cost
/// without a switch, measured once per sweep by [`measure_overhead`].
pub fn run_ring(spec: &RingSpec, cpus: &[usize], overhead_ps: u64) -> Result<RingOutcome> {
    let affinity = placement(spec.pin, cpus, spec.procs, spec.cpus.is_some());
    let board = Board::new(spec.procs)?;
    let plan = MemberPlan { spec, affinity, board: &board, cpus };
    let measured = match spec.mode {
        RingMode::Process => run_processes(&plan)?,
        RingMode::Thread => run_threads(&plan)?,
    };
    let header = &board.header;
    let laps = header[LAPS_DONE].load(Ordering::Relaxed);
    let real_ns = header[T_END].load(Ordering::Relaxed).saturating_sub(header[T_START].load(Ordering::Relaxed));
    if laps == 0 || real_ns == 0 {
        return Err(Error::failed("the ring ended without completing a lap"));
    }
    let mut usage = Usage::default();
    for i in 0..spec.procs {
        usage.accumulate(
            &board.members.load_usage(i, Snapshot::End).since(&board.members.load_usage(i, Snapshot::Start)),
        );
    }
    let sched = crate::model::SchedInfo::sum(&(0..spec.procs).map(|i| board.sched.window(i)).collect::<Vec<_>>());
    let member_cpus = match spec.pin {
        Pin::Same | Pin::Spread => plan.affinity.iter().map(|a| a.as_ref().map_or(0, |v| v[0])).collect(),
        Pin::None => Vec::new(),
    };
    Ok(RingOutcome {
        procs: spec.procs,
        member_cpus,
        laps,
        hops: timed_hops(laps, spec.procs),
        real_ns,
        member_maxrss_kb: usage.maxrss_kb,
        usage,
        overhead_ps,
        spawn_ns: measured.spawn_ns,
        teardown_ns: measured.all_reaped_ns.saturating_sub(header[T_END].load(Ordering::Relaxed)),
        beside: Default::default(),
        run_delay_ns: sched.run_delay_ns,
        migrations: sched.migrations,
        sched_window_ns: sched.run_delay_ns.and((0..spec.procs).map(|i| board.sched.window_ns(i)).sum()),
        trace: measured.trace.map(|recording| match recording {
            Err(reason) => HopTrace::unavailable(reason),
            Ok((recording, members)) => {
                let mut t = ring_hops(
                    &recording.events,
                    &members,
                    header[T_START].load(Ordering::Relaxed),
                    header[T_END].load(Ordering::Relaxed),
                );
                t.lost_events = recording.lost.iter().map(|(_, n)| n).sum();
                t
            }
        }),
    })
}

/// A ring trial's trace buffer per CPU (KiB): at least this, ...
const TRACE_BUFFER_MIN_KB: usize = 32 * 1024;
/// ... room for every hop of a ring of known length on one CPU (a hop costs about three
/// events, waking, wakeup and switch, of ~60 bytes: 256 bytes is ample) ...
const TRACE_BYTES_PER_HOP: u64 = 256;
/// ... but no more than this per CPU, nor than `TRACE_BUFFER_TOTAL_KB` over all CPUs
/// (the kernel allocates every CPU's buffer). What overflows is counted, never hidden.
const TRACE_BUFFER_MAX_KB: usize = 256 * 1024;
const TRACE_BUFFER_TOTAL_KB: usize = 1024 * 1024;

/// A tracing session on every CPU the members may use, or why there is none.
fn start_tracing(spec: &RingSpec, cpus: &[usize]) -> std::result::Result<TraceSession, String> {
    let wanted = match spec.length {
        RingLength::Laps(laps) => (timed_hops(laps, spec.procs) * TRACE_BYTES_PER_HOP / 1024) as usize,
        RingLength::Duration(_) => 0,
    };
    let online = crate::sys::sched::online_cpus().map_or(cpus.len(), |c| c.len()).max(1);
    let most = TRACE_BUFFER_MAX_KB.min(TRACE_BUFFER_TOTAL_KB / online);
    let kb = wanted.clamp(TRACE_BUFFER_MIN_KB, most.max(TRACE_BUFFER_MIN_KB));
    crate::bench::start_trace(cpus, kb)
}

/// What a traced ring recorded, with its members' pids; or why there is none.
type RingRecording = std::result::Result<(Recording, Vec<i32>), String>;

struct Lifecycle {
    spawn_ns: u64,
    all_reaped_ns: u64,
    /// With `--trace on`.
    trace: Option<RingRecording>,
}

fn run_processes(plan: &MemberPlan) -> Result<Lifecycle> {
    let spec = plan.spec;
    let procs = spec.procs;
    let mut group = ChildGroup::new("ring member", procs)?;
    let mut members = Vec::with_capacity(procs);
    let t_fork = monotonic_ns();
    let futex_words: Option<SharedSlice<FutexWord>> = match spec.ipc {
        Ipc::Futex => Some(SharedSlice::new(procs).map_err(|e| Error::os("mapping the futex words", e))?),
        _ => None,
    };
    // Channels are created one ahead of the member that needs them, so the parent holds
    // a handful of descriptors at any time and each child inherits only those.
    let mut inject: Option<OwnedFd> = None;
    if let Some(words) = &futex_words {
        for index in 0..procs {
            let link = FutexLink { mine: &words[index][0], next: &words[(index + 1) % procs][0], private: false };
            members.push(group.spawn(&[], |ctx| plan.process_member(ctx, link))?);
        }
    } else {
        let (first_r, first_w) = fd_channel(spec.ipc).map_err(|e| Error::os("creating the ring's first channel", e))?;
        let inject_raw = first_w.as_raw_fd();
        inject = Some(first_w);
        let mut incoming = Some(first_r);
        for index in 0..procs {
            let read_end = incoming.take().expect("a channel for every member");
            let last = index + 1 == procs;
            let (next_read, write_end) = if last {
                (None, None)
            } else {
                let (r, w) =
                    fd_channel(spec.ipc).map_err(|e| Error::os(format!("creating channel {}", index + 1), e))?;
                (Some(r), Some(w))
            };
            let w_raw = write_end.as_ref().map_or(inject_raw, |w| w.as_raw_fd());
            let mut close_in_child = Vec::with_capacity(2);
            if !last {
                close_in_child.push(inject_raw);
            }
            if let Some(r) = &next_read {
                close_in_child.push(r.as_raw_fd());
            }
            let (r, w) = (read_end.as_raw_fd(), w_raw);
            members.push(match spec.ipc {
                Ipc::Eventfd => group.spawn(&close_in_child, |ctx| plan.process_member(ctx, EventfdLink { r, w }))?,
                _ => group.spawn(&close_in_child, |ctx| plan.process_member(ctx, PipeLink { r, w }))?,
            });
            incoming = next_read;
        }
    }
    // --timeout also bounds the set-up: a member stopped before it is ready must not hang.
    group.wait_ready_until(procs, plan.deadline())?;
    let spawn_ns = monotonic_ns() - t_fork;
    // Every CPU a member may use; the trial process reads the buffers once all are done.
    let tracing = spec.beside.trace.then(|| start_tracing(spec, plan.cpus));
    // Before the token moves: real-time members on our CPU would starve us from then on.
    let _watchdog = sched::RtWatchdog::raise_if(spec.policy.is_realtime());
    let stop_at = match spec.length {
        RingLength::Duration(d) => Some(Instant::now() + d),
        RingLength::Laps(_) => None,
    };
    let injected = match (&inject, &futex_words) {
        (Some(w), _) => inject_through_fd(spec.ipc, w.as_raw_fd()),
        (None, Some(words)) => FutexLink { mine: &words[0][0], next: &words[0][0], private: false }.send(TOKEN),
        (None, None) => unreachable!("a ring has descriptors or futex words"),
    };
    crate::sys::load::mark_window_start();
    injected.map_err(|e| Error::os("injecting the token", e))?;
    drop(inject);
    let header = &plan.board.header;
    let mut raise_stop = || header[STOP_FLAG].store(1, Ordering::Relaxed);
    let alarm = stop_at.map(|at| (at, &mut raise_stop as &mut dyn FnMut()));
    group.wait_all(alarm, plan.deadline())?;
    crate::sys::load::mark_window_end();
    let all_reaped_ns = monotonic_ns();
    let trace = tracing.map(|session| {
        let recording = crate::bench::read_trace(session)?;
        Ok((recording, members))
    });
    Ok(Lifecycle { spawn_ns, all_reaped_ns, trace })
}

/// Thread mode: one child process hosts every member as a thread, so the orchestrator
/// keeps its own policy and descriptors, and wait4 on the host accounts for them all.
fn run_threads(plan: &MemberPlan) -> Result<Lifecycle> {
    let mut group = ChildGroup::new("thread-ring host", 1)?;
    crate::sys::load::mark_window_start();
    group.spawn(&[], |ctx| thread_host(plan, ctx))?;
    let _watchdog = sched::RtWatchdog::raise_if(plan.spec.policy.is_realtime());
    group.wait_all(None, plan.deadline())?;
    crate::sys::load::mark_window_end();
    let trace = plan.spec.beside.trace.then(|| {
        Err("no attribution in thread mode: its members are not named to the trial; use --mode process".to_string())
    });
    Ok(Lifecycle {
        spawn_ns: plan.board.header[SPAWN_NS].load(Ordering::Relaxed),
        all_reaped_ns: monotonic_ns(),
        trace,
    })
}

fn thread_host(plan: &MemberPlan, ctx: &ChildContext) -> i32 {
    let spec = plan.spec;
    let procs = spec.procs;
    if let Err(e) = limits::ensure_open_files(open_files_for_threads(spec), "the thread ring") {
        return ctx.fail_setup(&e.to_string());
    }
    let t_spawn = monotonic_ns();
    let mut channels = Vec::new();
    let mut words: Option<SharedSlice<FutexWord>> = None;
    match spec.ipc {
        Ipc::Futex => match SharedSlice::new(procs) {
            Ok(w) => words = Some(w),
            Err(e) => return ctx.fail_setup(&format!("mapping futex words: {e}")),
        },
        ipc => {
            for i in 0..procs {
                match fd_channel(ipc) {
                    Ok(c) => channels.push(c),
                    Err(e) => {
                        return ctx.fail_setup(&format!("creating channel {i}: {}", crate::error::describe_io(&e)))
                    }
                }
            }
        }
    }
    let barrier = std::sync::Barrier::new(procs + 1);
    let setup_failed = AtomicBool::new(false);
    let first_failure: Mutex<Option<String>> = Mutex::new(None);
    let fail_now = |msg: String| fail_and_exit(ctx, &msg, false);
    let fail_setup = |msg: String| fail_and_exit(ctx, &msg, true);
    std::thread::scope(|scope| {
        for index in 0..procs {
            let (channels, words, barrier, setup_failed, first_failure) =
                (&channels, &words, &barrier, &setup_failed, &first_failure);
            let member = move || {
                let work = match plan.set_up(index) {
                    Ok(w) => Some(w),
                    Err(msg) => {
                        setup_failed.store(true, Ordering::Relaxed);
                        first_failure
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get_or_insert(format!("member {index}: {msg}"));
                        None
                    }
                };
                barrier.wait();
                let Some(work) = work else { return };
                if setup_failed.load(Ordering::Relaxed) {
                    return;
                }
                let next = (index + 1) % procs;
                let outcome = match (spec.ipc, words) {
                    (Ipc::Futex, Some(w)) => {
                        plan.run(index, &FutexLink { mine: &w[index][0], next: &w[next][0], private: true }, &work)
                    }
                    (Ipc::Eventfd, _) => plan.run(
                        index,
                        &EventfdLink { r: channels[index].0.as_raw_fd(), w: channels[next].1.as_raw_fd() },
                        &work,
                    ),
                    _ => plan.run(
                        index,
                        &PipeLink { r: channels[index].0.as_raw_fd(), w: channels[next].1.as_raw_fd() },
                        &work,
                    ),
                };
                if let Err(msg) = outcome {
                    fail_now(format!("member {index}: {msg}"));
                }
            };
            let spawned = std::thread::Builder::new().stack_size(THREAD_STACK_BYTES).spawn_scoped(scope, member);
            if let Err(e) = spawned {
                fail_setup(format!("starting member thread {index}: {e}"));
            }
        }
        barrier.wait();
        if setup_failed.load(Ordering::Relaxed) {
            let msg = first_failure.lock().unwrap_or_else(|p| p.into_inner()).take().unwrap_or_default();
            fail_setup(msg);
        }
        plan.board.header[SPAWN_NS].store(monotonic_ns() - t_spawn, Ordering::Relaxed);
        // Before the token moves: real-time members on our CPU would hold off the stop.
        let _watchdog = sched::RtWatchdog::raise_if(spec.policy.is_realtime());
        let stop_at = Instant::now() + spec.length.duration().unwrap_or_default();
        let injected = match &words {
            Some(w) => FutexLink { mine: &w[0][0], next: &w[0][0], private: true }.send(TOKEN),
            None => inject_through_fd(spec.ipc, channels[0].1.as_raw_fd()),
        };
        if let Err(e) = injected {
            fail_now(format!("injecting the token: {e}"));
        }
        if let RingLength::Duration(_) = spec.length {
            std::thread::sleep(stop_at.saturating_duration_since(Instant::now()));
            plan.board.header[STOP_FLAG].store(1, Ordering::Relaxed);
        }
    });
    0
}

/// Leave a message and end the whole process at once (every member thread with it):
/// in thread mode one lost member would otherwise hang the ring.
fn fail_and_exit(ctx: &ChildContext, msg: &str, during_setup: bool) -> ! {
    let code = if during_setup { ctx.fail_setup(msg) } else { ctx.fail(msg) };
    // SAFETY: _exit ends the process without running anything of the parent's.
    unsafe { libc::_exit(code) }
}

/// lat_ctx's overhead: the cost of one token pass (send, receive, touch the working
/// set) inside a single task, where no switch happens. Measured in its own child with
/// member 0's placement and policy; the best of several rounds, as lmbench does.
pub fn measure_overhead(spec: &RingSpec, cpus: &[usize]) -> Result<u64> {
    const ROUNDS: usize = 5;
    // Each pass reads the whole working set: fewer passes for a big one, so the probe
    // stays well under a second (10,000 passes up to 64 KiB, at least 20).
    let iterations = (640_000 / spec.work_kb.max(64) as u64).clamp(20, 10_000);
    // The same futex flavour as the ring's: shared between processes, private in threads.
    let private_futex = spec.mode == RingMode::Thread;
    let affinity = placement(spec.pin, cpus, 1, spec.cpus.is_some()).remove(0);
    let result: SharedSlice<AtomicU64> = SharedSlice::new(1).map_err(|e| Error::os("mapping the overhead slot", e))?;
    let mut group = ChildGroup::new("overhead probe", 1)?;
    group.spawn(&[], |ctx| {
        if let Err(msg) = sched::apply_scheduling(
            affinity.as_deref(),
            spec.policy,
            spec.prio,
            spec.beside.deadline.as_ref(),
            1,
            sched::DeadlineFlags::default(),
        ) {
            return ctx.fail_setup(&msg);
        }
        let work = match WorkingSet::new(spec.work_kb) {
            Ok(w) => w,
            Err(e) => return ctx.fail_setup(&format!("allocating the working set: {e}")),
        };
        let best = match spec.ipc {
            Ipc::Futex => {
                let word = AtomicU32::new(0);
                best_round(&FutexLink { mine: &word, next: &word, private: private_futex }, &work, ROUNDS, iterations)
            }
            ipc => {
                let (r, w) = match fd_channel(ipc) {
                    Ok(c) => c,
                    Err(e) => return ctx.fail_setup(&format!("creating a channel: {e}")),
                };
                let (r, w) = (r.as_raw_fd(), w.as_raw_fd());
                if ipc == Ipc::Eventfd {
                    best_round(&EventfdLink { r, w }, &work, ROUNDS, iterations)
                } else {
                    best_round(&PipeLink { r, w }, &work, ROUNDS, iterations)
                }
            }
        };
        match best {
            Ok(ps) => {
                result[0].store(ps, Ordering::Relaxed);
                0
            }
            Err(e) => ctx.fail(&format!("passing the token to itself: {e}")),
        }
    })?;
    group.wait_all(None, Some((Instant::now() + Duration::from_secs(60), Duration::from_secs(60))))?;
    Ok(result[0].load(Ordering::Relaxed))
}

/// Best per-pass time over `rounds`, in picoseconds (kept integral for the shared slot).
fn best_round<L: Link>(link: &L, work: &WorkingSet, rounds: usize, iterations: u64) -> io::Result<u64> {
    let mut best = u64::MAX;
    for _ in 0..rounds {
        let t0 = monotonic_ns();
        for _ in 0..iterations {
            link.send(TOKEN)?;
            link.recv()?;
            work.touch();
        }
        let elapsed = monotonic_ns() - t0;
        best = best.min(elapsed * 1000 / iterations);
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_same_spread_none() {
        assert_eq!(placement(Pin::Same, &[3, 5], 3, true), vec![Some(vec![3]); 3]);
        assert_eq!(placement(Pin::Spread, &[3, 5], 3, true), vec![Some(vec![3]), Some(vec![5]), Some(vec![3])]);
        assert_eq!(placement(Pin::None, &[3, 5], 2, false), vec![None, None]);
        assert_eq!(placement(Pin::None, &[3, 5], 1, true), vec![Some(vec![3, 5])]);
    }

    #[test]
    fn links_pass_values_to_themselves() {
        let (r, w) = fd::pipe().unwrap();
        let pipe = PipeLink { r: r.as_raw_fd(), w: w.as_raw_fd() };
        pipe.send(STOP).unwrap();
        assert_eq!(pipe.recv().unwrap(), STOP);
        let efd = fd::eventfd().unwrap();
        let ev = EventfdLink { r: efd.as_raw_fd(), w: efd.as_raw_fd() };
        ev.send(TOKEN).unwrap();
        assert_eq!(ev.recv().unwrap(), TOKEN);
        let word = AtomicU32::new(0);
        let fx = FutexLink { mine: &word, next: &word, private: true };
        fx.send(STOP).unwrap();
        assert_eq!(fx.recv().unwrap(), STOP);
    }

    #[test]
    fn hops_count_the_laps_and_the_stop_trip() {
        assert_eq!(timed_hops(1, 2), 3);
        assert_eq!(timed_hops(1000, 64), 64_063);
    }

    #[test]
    fn working_set_is_touchable() {
        let ws = WorkingSet::new(16).unwrap();
        assert_eq!(ws.words, 2048);
        ws.touch();
        assert_eq!(WorkingSet::new(0).unwrap().words, 0);
    }
}
