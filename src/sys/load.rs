//! Background load beside a trial, as rteval and jitterdebugger run theirs: busy loops
//! (cpu), O_SYNC writes (io), hackbench-style pipe messages between process pairs (pipe),
//! or all three (mixed).
//!
//! - Load processes are forked before the kernel starts, each set explicitly to
//!   SCHED_OTHER at the nice value asked for (never a real-time priority, whatever the
//!   trial's), placed on the load's CPUs, with PR_SET_PDEATHSIG SIGKILL and in a process
//!   group of their own: they die with the process that forked them, however it ends.
//! - io files are opened O_TMPFILE (or created and unlinked at once) by the parent before
//!   the fork, so no file of the load outlives its last descriptor, SIGKILL included.
//! - Each process counts its progress in its own cache line of shared memory. The
//!   measurement kernels mark the edges of their measured window
//!   ([`mark_window_start`], [`mark_window_end`]: a copy of those counters, no syscall
//!   but the clock); afterwards [`Load::finish`] checks that every load process is still
//!   alive and advanced during the window, and turns the counts into the load's
//!   throughput. A load that did not run throughout the window fails the trial.
//! - The load is reaped by wait4 on each pid, after every measured figure was taken, and
//!   its CPU time is reported apart.

use crate::error::{describe_io, Error, Result};
use crate::model::{LoadKind, LoadOutcome, LoadSpec};
use crate::sys::clock::monotonic_ns;
use crate::sys::rusage::{self, ExitKind};
use crate::sys::sched;
use crate::sys::shm::SharedSlice;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Bytes per O_SYNC write of an io load process.
pub const IO_BLOCK: usize = 4096;
/// Each io process rewrites this much of its file, so its disk use stays bounded.
pub const IO_FILE_BYTES: u64 = 1 << 20;
/// One hackbench message.
pub const MESSAGE_BYTES: usize = 100;
/// LCG steps in one busy-loop pass (about a microsecond).
const CPU_PASS_STEPS: u32 = 1000;
/// How long the load has to show that every process runs before the trial starts.
const START_LIMIT: Duration = Duration::from_secs(10);
/// The command name load processes run under (`ps`, `top`, and the tests find them by it).
pub const LOAD_COMM: &str = "schedlab-load";

// One cache line per load process: its own counters and what the parent copied at the
// window's edges.
const PROGRESS: usize = 0;
const STARTED: usize = 1;
const AT_START: usize = 2;
const STARTED_AT_START: usize = 3;
const AT_END: usize = 4;
const STARTED_AT_END: usize = 5;
const ERRNO: usize = 6;
type CounterSlot = [AtomicU64; 8];

/// What one load process does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Cpu,
    Io,
    PipeSender,
    PipeReceiver,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Cpu => "cpu",
            Role::Io => "io",
            Role::PipeSender => "pipe sender",
            Role::PipeReceiver => "pipe receiver",
        }
    }
}

/// The load's counters, while a load runs in this process (null otherwise), so a kernel
/// can mark its window without knowing whether there is a load.
static ACTIVE: AtomicPtr<CounterSlot> = AtomicPtr::new(std::ptr::null_mut());
static ACTIVE_LEN: AtomicUsize = AtomicUsize::new(0);
static WINDOW_START_NS: AtomicU64 = AtomicU64::new(0);
static WINDOW_END_NS: AtomicU64 = AtomicU64::new(0);

fn active_slots() -> &'static [CounterSlot] {
    let ptr = ACTIVE.load(Ordering::Acquire);
    if ptr.is_null() {
        return &[];
    }
    // SAFETY: ACTIVE points at a live mapping of ACTIVE_LEN slots from Load::start until
    // Load's drop clears it (before unmapping); marks run on the thread that owns the Load.
    unsafe { std::slice::from_raw_parts(ptr, ACTIVE_LEN.load(Ordering::Acquire)) }
}

/// A kernel's measured window starts now (call it just before the timed region; it copies
/// a few counters and reads the clock). Does nothing without a load.
pub fn mark_window_start() {
    let slots = active_slots();
    if slots.is_empty() {
        return;
    }
    for slot in slots {
        slot[AT_START].store(slot[PROGRESS].load(Ordering::Acquire), Ordering::Relaxed);
        slot[STARTED_AT_START].store(slot[STARTED].load(Ordering::Acquire), Ordering::Relaxed);
    }
    WINDOW_START_NS.store(monotonic_ns(), Ordering::Relaxed);
}

/// A kernel's measured window ended (call it just after the timed region).
pub fn mark_window_end() {
    let slots = active_slots();
    if slots.is_empty() {
        return;
    }
    WINDOW_END_NS.store(monotonic_ns(), Ordering::Relaxed);
    for slot in slots {
        slot[AT_END].store(slot[PROGRESS].load(Ordering::Acquire), Ordering::Relaxed);
        slot[STARTED_AT_END].store(slot[STARTED].load(Ordering::Acquire), Ordering::Relaxed);
    }
}

/// A load checked against the machine: its CPUs, instance count and directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadPlan {
    pub kind: LoadKind,
    pub instances: u32,
    pub cpus: Vec<usize>,
    /// `None`: the nice value schedlab itself runs at.
    pub nice: Option<i32>,
    pub dir: PathBuf,
}

impl LoadPlan {
    fn roles(&self) -> Vec<Role> {
        let n = self.instances as usize;
        let mut roles = Vec::new();
        if matches!(self.kind, LoadKind::Cpu | LoadKind::Mixed) {
            roles.extend(std::iter::repeat_n(Role::Cpu, n));
        }
        if matches!(self.kind, LoadKind::Io | LoadKind::Mixed) {
            roles.extend(std::iter::repeat_n(Role::Io, n));
        }
        if matches!(self.kind, LoadKind::Pipe | LoadKind::Mixed) {
            for _ in 0..n {
                roles.extend([Role::PipeSender, Role::PipeReceiver]);
            }
        }
        roles
    }

    /// Load processes in all.
    pub fn processes(&self) -> u32 {
        self.roles().len() as u32
    }
}

/// Check a load spec against the machine (the CPUs may be had, the nice value set, the
/// directory written) and resolve it; `None` without a load. Errors are the user's to fix
/// (exit 2) and come before anything starts.
pub fn plan(spec: &LoadSpec) -> Result<Option<LoadPlan>> {
    if spec.is_none() {
        return Ok(None);
    }
    let cpus = sched::resolve_cpus(spec.cpus.as_deref()).map_err(|e| match e {
        Error::Environment(m) => Error::env(format!("--load-cpus: {m}")),
        other => other,
    })?;
    let instances = spec.instances.unwrap_or(cpus.len().max(1) as u32);
    if let Some(nice) = spec.nice {
        sched::probe_nice(nice).map_err(|e| Error::env(format!("--load-nice: {e}")))?;
    }
    let dir = spec.dir.clone().unwrap_or_else(std::env::temp_dir);
    let plan = LoadPlan { kind: spec.kind, instances, cpus, nice: spec.nice, dir };
    crate::sys::limits::check_task_budget(u64::from(plan.processes()), "the background load")?;
    if spec.kind.writes_files() {
        check_dir(&plan.dir, u64::from(instances) * IO_FILE_BYTES)?;
    }
    Ok(Some(plan))
}

/// The load directory must take a file (one is made and dropped at once) and have room.
fn check_dir(dir: &Path, needed: u64) -> Result<()> {
    let fix = "choose another with --load-dir";
    if !dir.is_dir() {
        return Err(Error::env(format!("the load directory {} is not a directory; {fix}", dir.display())));
    }
    open_unnamed(dir).map_err(|e| {
        Error::env(format!("the load directory {} cannot be written: {}; {fix}", dir.display(), describe_io(&e)))
    })?;
    if let Some(free) = crate::sys::fs::free_bytes(dir) {
        if needed > free {
            return Err(Error::env(format!(
                "the load directory {} has {} KiB free but the io load writes {} KiB there; {fix}, or give fewer instances",
                dir.display(),
                free / 1024,
                needed / 1024
            )));
        }
    }
    if crate::sys::fs::is_tmpfs(dir) {
        eprintln!(
            "schedlab: warning: the load directory {} is on tmpfs: the io load's O_SYNC writes reach no disk; \
             use --load-dir on a disk-backed filesystem",
            dir.display()
        );
    }
    Ok(())
}

/// A file in `dir` that has no name, so it disappears with its last descriptor: O_TMPFILE
/// where the filesystem has it, else a fresh name unlinked at once.
fn open_unnamed(dir: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let flags = libc::O_WRONLY | libc::O_SYNC | libc::O_CLOEXEC;
    let c_dir =
        CString::new(dir.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a valid C path; the descriptor is checked and then owned.
    let fd = unsafe { libc::open(c_dir.as_ptr(), flags | libc::O_TMPFILE, 0o600) };
    if fd >= 0 {
        // SAFETY: open returned a new descriptor that only we own.
        return Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
    }
    let err = std::io::Error::last_os_error();
    if !matches!(err.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL)) {
        return Err(err);
    }
    for attempt in 0..100u32 {
        let name = dir.join(format!(".schedlab-load-{}-{attempt}", std::process::id()));
        let c_name =
            CString::new(name.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: as above.
        let fd = unsafe { libc::open(c_name.as_ptr(), flags | libc::O_CREAT | libc::O_EXCL, 0o600) };
        if fd < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EEXIST) {
                continue;
            }
            return Err(err);
        }
        // SAFETY: the name was just made by us.
        unsafe { libc::unlink(c_name.as_ptr()) };
        // SAFETY: as above.
        return Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) });
    }
    Err(std::io::Error::from_raw_os_error(libc::EEXIST))
}

struct Worker {
    pid: libc::pid_t,
    role: Role,
    reaped: Option<rusage::Reaped>,
}

/// A running load. Dropping it kills and reaps every load process.
pub struct Load {
    plan: LoadPlan,
    slots: SharedSlice<CounterSlot>,
    workers: Vec<Worker>,
}

/// Every signal unblocked and the default actions back: a load process must die of
/// whatever would kill a plain program, whatever its parent blocks to watch.
fn reset_signals_in_child() {
    // SAFETY: plain signal-mask and disposition calls in the freshly forked child.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}

impl Load {
    /// Fork the load and wait until every process has made progress. Call it from the
    /// thread that will stop it (the death signal follows that thread), while the process
    /// is single-threaded, before the kernel starts.
    pub fn start(plan: &LoadPlan) -> Result<Load> {
        if !ACTIVE.load(Ordering::Acquire).is_null() {
            return Err(Error::failed("internal: a background load is already running in this process"));
        }
        let roles = plan.roles();
        let slots: SharedSlice<CounterSlot> =
            SharedSlice::new(roles.len()).map_err(|e| Error::os("mapping the load's counters", e))?;
        // Everything the children need is made here, so they only run their loop.
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
            .map_err(|e| Error::os("opening /dev/null", e))?;
        let mut files = Vec::new();
        let mut pipes = Vec::new();
        for role in &roles {
            match role {
                Role::Io => files.push(open_unnamed(&plan.dir).map_err(|e| {
                    Error::env(format!(
                        "the load directory {} cannot be written: {}",
                        plan.dir.display(),
                        describe_io(&e)
                    ))
                })?),
                Role::PipeSender => {
                    pipes.push(crate::sys::fd::pipe().map_err(|e| Error::os("creating a load pipe", e))?)
                }
                _ => {}
            }
        }
        let mut load = Load { plan: plan.clone(), slots, workers: Vec::with_capacity(roles.len()) };
        use std::os::fd::AsRawFd;
        let all_fds: Vec<i32> = files
            .iter()
            .map(|f| f.as_raw_fd())
            .chain(pipes.iter().flat_map(|(r, w)| [r.as_raw_fd(), w.as_raw_fd()]))
            .collect();
        let block = vec![0x5au8; IO_BLOCK];
        let mut message = [0u8; MESSAGE_BYTES];
        message[0] = b'm';
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        let comm = CString::new(LOAD_COMM).expect("no NUL");
        let (mut io_index, mut pipe_index) = (0, 0);
        let mut pgid: libc::pid_t = 0;
        for (index, &role) in roles.iter().enumerate() {
            let own_fd = match role {
                Role::Io => {
                    io_index += 1;
                    files[io_index - 1].as_raw_fd()
                }
                Role::PipeSender => pipes[pipe_index].1.as_raw_fd(),
                Role::PipeReceiver => {
                    pipe_index += 1;
                    pipes[pipe_index - 1].0.as_raw_fd()
                }
                Role::Cpu => -1,
            };
            // SAFETY: fork; the child runs only `worker_main`, which makes no allocation,
            // and then _exits.
            let pid = unsafe { libc::fork() };
            if pid < 0 {
                let err = std::io::Error::last_os_error();
                return Err(Error::env(format!("forking load process {index}: {}", describe_io(&err))));
            }
            if pid == 0 {
                let slot = &load.slots[index];
                let code = worker_main(WorkerSetup {
                    parent,
                    pgid,
                    role,
                    own_fd,
                    all_fds: &all_fds,
                    null: null.as_raw_fd(),
                    comm: &comm,
                    plan,
                    slot,
                    block: &block,
                    message: &message,
                });
                // SAFETY: leave at once, skipping the parent's destructors.
                unsafe { libc::_exit(code) };
            }
            if pgid == 0 {
                pgid = pid;
            }
            // SAFETY: plain syscall; harmless if the child already did it or exited.
            unsafe { libc::setpgid(pid, pgid) };
            load.workers.push(Worker { pid, role, reaped: None });
        }
        drop((files, pipes, null));
        load.wait_running()?;
        ACTIVE_LEN.store(load.slots.len(), Ordering::Release);
        ACTIVE.store(load.slots.as_ptr() as *mut CounterSlot, Ordering::Release);
        WINDOW_START_NS.store(0, Ordering::Relaxed);
        WINDOW_END_NS.store(0, Ordering::Relaxed);
        Ok(load)
    }

    /// Until every process has counted progress once: the load is running, not just forked.
    fn wait_running(&mut self) -> Result<()> {
        let until = Instant::now() + START_LIMIT;
        loop {
            self.reap_exited()?;
            if let Some(err) = self.first_exit("before the trial started") {
                return Err(err);
            }
            if self.slots.iter().all(|s| s[PROGRESS].load(Ordering::Acquire) > 0) {
                return Ok(());
            }
            if Instant::now() >= until {
                let stuck: Vec<String> = self
                    .workers
                    .iter()
                    .zip(self.slots.iter())
                    .filter(|(_, s)| s[PROGRESS].load(Ordering::Acquire) == 0)
                    .map(|(w, _)| format!("{} (pid {})", w.role.name(), w.pid))
                    .collect();
                return Err(Error::failed(format!(
                    "the background load did not get going within {} s: {} made no progress",
                    START_LIMIT.as_secs(),
                    stuck.join(", ")
                )));
            }
            // Before the measured window: a short sleep disturbs nothing yet.
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn reap_exited(&mut self) -> Result<()> {
        for w in self.workers.iter_mut().filter(|w| w.reaped.is_none()) {
            match rusage::wait4(w.pid, true) {
                Ok(Some(r)) => w.reaped = Some(r),
                Ok(None) => {}
                Err(e) => return Err(Error::os("checking on the background load", e)),
            }
        }
        Ok(())
    }

    /// The first load process that has ended, as an error saying when and why.
    fn first_exit(&self, when: &str) -> Option<Error> {
        let (index, w) = self.workers.iter().enumerate().find(|(_, w)| w.reaped.is_some())?;
        let reaped = w.reaped.expect("found reaped");
        let errno = self.slots[index][ERRNO].load(Ordering::Acquire);
        let why = if errno > 0 {
            describe_io(&std::io::Error::from_raw_os_error(errno as i32))
        } else {
            reaped.exit.describe()
        };
        Some(Error::failed(format!(
            "background load process {index} ({}, pid {}) ended {when}: {why}",
            w.role.name(),
            w.pid
        )))
    }

    /// After the kernel: check that the load ran throughout the marked window, stop and
    /// reap it, and say what it achieved.
    pub fn finish(mut self) -> Result<LoadOutcome> {
        let checked = self.check_window();
        let cpu_ns = self.stop();
        let mut outcome = checked?;
        outcome.cpu_ns = cpu_ns;
        Ok(outcome)
    }

    fn check_window(&mut self) -> Result<LoadOutcome> {
        let (start, end) = (WINDOW_START_NS.load(Ordering::Relaxed), WINDOW_END_NS.load(Ordering::Relaxed));
        if start == 0 || end < start {
            return Err(Error::failed("internal: the measurement did not mark its window for the background load"));
        }
        // Alive now, so alive throughout the window (a process does not come back).
        self.reap_exited()?;
        if let Some(err) = self.first_exit("during the trial: the load did not run throughout the measured window") {
            return Err(err);
        }
        let window_s = (end - start) as f64 / 1e9;
        let mut outcome = LoadOutcome {
            kind: self.plan.kind,
            instances: self.plan.instances,
            processes: self.workers.len() as u32,
            cpus: self.plan.cpus.clone(),
            nice: self.plan.nice.unwrap_or_else(own_nice),
            window_ns: end - start,
            ..LoadOutcome::default()
        };
        for (index, (w, slot)) in self.workers.iter().zip(self.slots.iter()).enumerate() {
            let done = slot[AT_END].load(Ordering::Relaxed).saturating_sub(slot[AT_START].load(Ordering::Relaxed));
            // An io process inside one O_SYNC write from before the window to after it
            // was loading the disk all along, though it finished no write.
            let started_at_start = slot[STARTED_AT_START].load(Ordering::Relaxed);
            let one_long_write = w.role == Role::Io
                && slot[STARTED_AT_END].load(Ordering::Relaxed) == started_at_start
                && slot[AT_START].load(Ordering::Relaxed) / (IO_BLOCK as u64) < started_at_start;
            if done == 0 && !one_long_write {
                return Err(Error::failed(format!(
                    "background load process {index} ({}, pid {}) made no progress during the {window_s:.3} s \
                     measured window: it did not run throughout it (starved by the trial's real-time tasks, or the \
                     window too short for it); the load must run while the trial measures",
                    w.role.name(),
                    w.pid
                )));
            }
            match w.role {
                Role::Cpu => outcome.loops += done,
                Role::Io => outcome.io_bytes += done,
                Role::PipeReceiver => outcome.messages += done / MESSAGE_BYTES as u64,
                Role::PipeSender => {}
            }
        }
        Ok(outcome)
    }

    /// SIGKILL and reap every load process; their CPU time (user + system, ns).
    fn stop(&mut self) -> u64 {
        if std::ptr::eq(self.slots.as_ptr(), ACTIVE.load(Ordering::Acquire)) {
            ACTIVE.store(std::ptr::null_mut(), Ordering::Release);
            ACTIVE_LEN.store(0, Ordering::Release);
        }
        for w in self.workers.iter().filter(|w| w.reaped.is_none()) {
            // SAFETY: our own unreaped child: its pid cannot have been reused.
            unsafe { libc::kill(w.pid, libc::SIGKILL) };
        }
        let mut cpu_ns = 0;
        for w in self.workers.iter_mut() {
            if w.reaped.is_none() {
                w.reaped = rusage::wait4(w.pid, false).ok().flatten().or(Some(rusage::Reaped {
                    pid: w.pid,
                    exit: ExitKind::Signal(libc::SIGKILL),
                    usage: Default::default(),
                }));
            }
            cpu_ns += w.reaped.map_or(0, |r| r.usage.cpu_ns());
        }
        cpu_ns
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop();
    }
}

/// This process's nice value.
fn own_nice() -> i32 {
    // SAFETY: plain integers. (-1 is also a valid nice; errno is not needed for our own.)
    unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
}

struct WorkerSetup<'a> {
    parent: libc::pid_t,
    pgid: libc::pid_t,
    role: Role,
    own_fd: i32,
    all_fds: &'a [i32],
    null: i32,
    comm: &'a CString,
    plan: &'a LoadPlan,
    slot: &'a CounterSlot,
    block: &'a [u8],
    message: &'a [u8; MESSAGE_BYTES],
}

/// A load process, from fork to exit code. Nothing here allocates.
fn worker_main(s: WorkerSetup) -> i32 {
    let fail = |err: std::io::Error| {
        s.slot[ERRNO].store(err.raw_os_error().unwrap_or(libc::EIO) as u64, Ordering::Release);
        1
    };
    // SAFETY: plain syscalls on this fresh child.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        // The parent died between fork and prctl: nobody would ever stop us.
        if libc::getppid() != s.parent {
            return 1;
        }
        libc::setpgid(0, s.pgid);
        for fd in 0..3 {
            libc::dup2(s.null, fd);
        }
        for &fd in s.all_fds.iter().filter(|&&fd| fd != s.own_fd) {
            libc::close(fd);
        }
        libc::close(s.null);
    }
    reset_signals_in_child();
    // Never real-time, whatever the process that forked us runs at.
    if let Err(e) = sched::set_policy(crate::model::Policy::Other, 0) {
        return fail(e);
    }
    if let Some(nice) = s.plan.nice {
        // SAFETY: plain integers; 0 is this (single-threaded) process.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } != 0 {
            return fail(std::io::Error::last_os_error());
        }
    }
    if let Err(e) = sched::set_affinity(&s.plan.cpus) {
        return fail(e);
    }
    // Named last, so a process found under this name has its policy, nice and CPUs.
    // SAFETY: a NUL-terminated name; PR_SET_NAME copies at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, s.comm.as_ptr(), 0, 0, 0) };
    let progress = &s.slot[PROGRESS];
    match s.role {
        Role::Cpu => {
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            loop {
                for _ in 0..CPU_PASS_STEPS {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                }
                std::hint::black_box(x);
                progress.fetch_add(1, Ordering::Release);
            }
        }
        Role::Io => {
            let mut offset: u64 = 0;
            loop {
                s.slot[STARTED].fetch_add(1, Ordering::Release);
                // SAFETY: `block` is readable for its length; own_fd is our open file.
                let n =
                    unsafe { libc::pwrite(s.own_fd, s.block.as_ptr().cast(), s.block.len(), offset as libc::off_t) };
                if n < 0 {
                    let err = std::io::Error::last_os_error();
                    if err.raw_os_error() == Some(libc::EINTR) {
                        continue;
                    }
                    return fail(err);
                }
                progress.fetch_add(n as u64, Ordering::Release);
                offset = (offset + n as u64) % IO_FILE_BYTES;
            }
        }
        Role::PipeSender => loop {
            // SAFETY: the message is readable; 100 bytes is below PIPE_BUF, so atomic.
            let n = unsafe { libc::write(s.own_fd, s.message.as_ptr().cast(), MESSAGE_BYTES) };
            if n < 0 {
                let err = std::io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return fail(err);
            }
            progress.fetch_add(1, Ordering::Release);
        },
        Role::PipeReceiver => {
            let mut buf = [0u8; MESSAGE_BYTES];
            loop {
                // SAFETY: `buf` is writable for its length.
                let n = unsafe { libc::read(s.own_fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    let err = std::io::Error::last_os_error();
                    if err.raw_os_error() == Some(libc::EINTR) {
                        continue;
                    }
                    return fail(err);
                }
                if n == 0 {
                    return fail(std::io::Error::from_raw_os_error(libc::EPIPE));
                }
                progress.fetch_add(n as u64, Ordering::Release);
            }
        }
    }
}

/// Run `measure` with the load `spec` asks for running beside it: started before, checked
/// and stopped after, its figures returned with the measurement's. Without a load,
/// `measure` runs alone.
pub fn beside<T>(plan: Option<&LoadPlan>, measure: impl FnOnce() -> Result<T>) -> Result<(T, Option<LoadOutcome>)> {
    let Some(plan) = plan else { return Ok((measure()?, None)) };
    let load = Load::start(plan)?;
    let measured = measure();
    match measured {
        Ok(value) => {
            let outcome = load.finish()?;
            Ok((value, Some(outcome)))
        }
        Err(e) => {
            drop(load);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(kind: LoadKind, instances: u32) -> LoadPlan {
        LoadPlan {
            kind,
            instances,
            cpus: sched::allowed_cpus().unwrap(),
            nice: None,
            dir: std::env::current_dir().unwrap(),
        }
    }

    #[test]
    fn roles_per_kind() {
        assert_eq!(plan(LoadKind::Cpu, 3).processes(), 3);
        assert_eq!(plan(LoadKind::Pipe, 2).processes(), 4);
        assert_eq!(plan(LoadKind::Mixed, 2).processes(), 2 + 2 + 4);
    }

    #[test]
    fn an_unwritable_directory_is_refused() {
        let spec = LoadSpec { kind: LoadKind::Io, dir: Some("/proc".into()), ..LoadSpec::default() };
        let err = super::plan(&spec).unwrap_err().to_string();
        assert!(err.contains("cannot be written") && err.contains("--load-dir"), "{err}");
    }

    /// Forks, so it runs in a single-threaded child.
    #[test]
    fn every_kind_runs_through_a_window_and_is_gone_after() {
        fn check() -> std::result::Result<(), String> {
            for kind in [LoadKind::Cpu, LoadKind::Io, LoadKind::Pipe, LoadKind::Mixed] {
                let p = plan(kind, 1);
                let load = Load::start(&p).map_err(|e| e.to_string())?;
                let pids: Vec<i32> = load.workers.iter().map(|w| w.pid).collect();
                mark_window_start();
                // Long enough for an O_SYNC write to finish on a busy shared disk, where one
                // can wait behind a journal commit for a few hundred ms.
                let window = if matches!(kind, LoadKind::Io | LoadKind::Mixed) { 1500 } else { 300 };
                std::thread::sleep(Duration::from_millis(window));
                mark_window_end();
                for &pid in &pids {
                    let policy = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
                    let field = policy.rsplit(')').next().unwrap_or("").split_whitespace().nth(38);
                    if field != Some("0") {
                        return Err(format!("{kind:?}: load process {pid} runs policy {field:?}, not SCHED_OTHER"));
                    }
                }
                let o = load.finish().map_err(|e| e.to_string())?;
                let pushed = match kind {
                    LoadKind::Cpu => o.loops > 0,
                    LoadKind::Io => o.io_bytes > 0,
                    LoadKind::Pipe => o.messages > 0,
                    _ => o.loops > 0 && o.io_bytes > 0 && o.messages > 0,
                };
                if !pushed || o.window_ns < 100_000_000 || o.cpu_ns == 0 {
                    return Err(format!("{kind:?}: {o:?}"));
                }
                if let Some(pid) = pids.iter().find(|&&p| crate::sys::process::comm_and_state(p).is_some()) {
                    return Err(format!("{kind:?}: load process {pid} is still there"));
                }
            }
            // A window that was never marked fails the check, and the load still stops.
            let load = Load::start(&plan(LoadKind::Cpu, 1)).map_err(|e| e.to_string())?;
            let pid = load.workers[0].pid;
            WINDOW_START_NS.store(0, Ordering::Relaxed);
            let err = load.finish().err().map(|e| e.to_string()).unwrap_or_default();
            if !err.contains("did not mark") || crate::sys::process::comm_and_state(pid).is_some() {
                return Err(format!("unmarked window: {err}"));
            }
            // A load process that dies during the window fails the trial.
            let load = Load::start(&plan(LoadKind::Cpu, 2)).map_err(|e| e.to_string())?;
            mark_window_start();
            // SAFETY: our own child.
            unsafe { libc::kill(load.workers[1].pid, libc::SIGKILL) };
            std::thread::sleep(Duration::from_millis(20));
            mark_window_end();
            let err = load.finish().err().map(|e| e.to_string()).unwrap_or_default();
            if !err.contains("ended during the trial") {
                return Err(format!("a dead load process: {err}"));
            }
            Ok(())
        }
        crate::sys::check_in_forked_child("load check", check);
    }
}
