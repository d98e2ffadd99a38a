//! The one way schedlab runs a command and waits for it: spawn it, then block in one
//! poll(2) over its pidfd, the caller's signalfd, its stdin/stdout/stderr pipes and a
//! timerfd for the deadline, until something happens, with no helper threads and no
//! periodic tick. It is reaped with wait4, so its whole-life rusage comes back (the
//! `rusage` command's figures); a caller's SIGINT/SIGTERM/SIGHUP is passed on and
//! escalated to SIGKILL after a grace period; a time limit sends SIGTERM, then SIGKILL.
//!
//! Also here: other processes, as /proc shows them.

use crate::model::Usage;
use crate::sys::clock::monotonic_ns;
use crate::sys::fd;
use crate::sys::rusage::{self, ExitKind};
use crate::sys::sched::{self, RtWatchdog};
use crate::sys::signals::SignalWatch;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a child has to end after a caller's signal was passed on, before SIGKILL.
pub const SIGNAL_GRACE: Duration = Duration::from_secs(10);
/// How long a child has to end after the SIGTERM of its time limit, before SIGKILL.
pub const TIMEOUT_GRACE: Duration = Duration::from_secs(5);
/// How long captured output is still read after the child has been reaped, for a
/// descendant that kept the pipe open (a trial's members die with it; a daemon would not).
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

/// What the child reads on stdin.
#[derive(Clone, Debug, Default)]
pub enum Input {
    /// This process's stdin.
    #[default]
    Inherit,
    /// /dev/null.
    Null,
    /// These bytes through a pipe, written in the supervising poll loop (so a child that
    /// writes before it reads cannot deadlock against us), then end of file.
    Bytes(Vec<u8>),
}

/// How to spawn and supervise a child. [`Options::default`] inherits stdio, sets no
/// death signal, no time limit, and passes SIGINT, SIGTERM and SIGHUP on with
/// [`SIGNAL_GRACE`] before SIGKILL.
#[derive(Clone, Debug)]
pub struct Options {
    /// PR_SET_PDEATHSIG: the signal the child gets when the thread that spawned it dies
    /// (SIGTERM lets a trial unwind and remove its files even when its orchestrator was
    /// SIGKILLed). The child also checks in pre_exec that its parent is still the one
    /// that forked it, and gives up otherwise.
    pub die_with_parent: Option<i32>,
    pub stdin: Input,
    /// Capture stdout and stderr into [`Finished`] instead of inheriting them.
    pub capture_output: bool,
    /// After the spawn (so the child does not inherit it) and until the child is reaped,
    /// keep the calling thread off these CPUs, when that leaves it any CPU at all.
    pub avoid_cpus: Vec<usize>,
    /// After the spawn and until the child is reaped, wait at SCHED_FIFO 99 (see
    /// [`RtWatchdog`]), so a real-time child cannot starve its supervisor. Meant for
    /// real-time children while RT throttling is off ([`sched::rt_throttling_off`]).
    pub rt_watchdog: bool,
    /// Caller signals passed on to the child (the first one is reported as
    /// [`Finished::stop_signal`]); any other signal the caller's watch delivers is read
    /// and dropped. SIGCHLD is never passed on.
    pub forward_signals: Vec<i32>,
    /// SIGKILL the child this long after the first signal was passed on; `None`: wait
    /// for it however long it takes.
    pub kill_after_signal: Option<Duration>,
    /// From just before the spawn: past it the child gets SIGTERM (unless a caller signal
    /// already stopped it), then SIGKILL after `kill_after_timeout`.
    pub timeout: Option<Duration>,
    pub kill_after_timeout: Duration,
    /// With `capture_output`: keep only the last this many bytes of each stream (the rest
    /// is read and dropped, so a chatty child neither blocks nor fills memory).
    pub output_limit: Option<usize>,
    /// The child makes itself a process group leader (its own pre_exec): signals go to
    /// its whole group, so what it started is stopped with it.
    pub signal_group: bool,
    /// Open `cgroup.procs` files the child writes "0" to between fork and exec, so it and
    /// everything it starts run in those groups (a `cgroup` setting's, `sys::settings`).
    pub join_cgroups: Vec<RawFd>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            die_with_parent: None,
            stdin: Input::Inherit,
            capture_output: false,
            avoid_cpus: Vec::new(),
            rt_watchdog: false,
            forward_signals: vec![libc::SIGINT, libc::SIGTERM, libc::SIGHUP],
            kill_after_signal: Some(SIGNAL_GRACE),
            timeout: None,
            kill_after_timeout: TIMEOUT_GRACE,
            output_limit: None,
            signal_group: false,
            join_cgroups: Vec::new(),
        }
    }
}

/// How a supervised child ended.
#[derive(Clone, Debug)]
pub struct Finished {
    pub exit: ExitKind,
    /// Its whole-life usage from wait4 (with the descendants it waited for).
    pub usage: Usage,
    /// Captured output (empty unless [`Options::capture_output`]).
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// The time limit passed and the child was sent SIGTERM (and SIGKILL if it lingered).
    pub timed_out: bool,
    /// The first caller signal that was passed on to the child, if any.
    pub stop_signal: Option<i32>,
    /// From just before the spawn to the reap.
    pub elapsed: Duration,
}

/// Keeps the calling thread off some CPUs; the previous mask comes back on drop.
struct AffinityGuard {
    previous: Vec<usize>,
}

impl AffinityGuard {
    fn avoid(cpus: &[usize]) -> Option<AffinityGuard> {
        if cpus.is_empty() {
            return None;
        }
        let previous = sched::allowed_cpus().ok()?;
        let keep: Vec<usize> = previous.iter().copied().filter(|c| !cpus.contains(c)).collect();
        if keep.is_empty() || keep.len() == previous.len() {
            return None;
        }
        sched::set_affinity(&keep).ok()?;
        Some(AffinityGuard { previous })
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        let _ = sched::set_affinity(&self.previous);
    }
}

/// A spawned child not yet reaped. [`Running::supervise`] waits for it; dropping it
/// unreaped SIGKILLs and reaps it, so no error path leaves a child behind.
pub struct Running {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
    stdin: Option<OwnedFd>,
    stdin_bytes: Vec<u8>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
    started_ns: u64,
    reaped: bool,
    output_limit: Option<usize>,
    signal_group: bool,
    forward_signals: Vec<i32>,
    kill_after_signal: Option<Duration>,
    timeout: Option<Duration>,
    kill_after_timeout: Duration,
    // Dropped in this order: the real-time priority goes before the CPUs come back.
    _watchdog: RtWatchdog,
    _affinity: Option<AffinityGuard>,
}

fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: plain syscall; the result is checked.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: pidfd_open returned a new (close-on-exec) descriptor that only we own.
    (raw >= 0).then(|| unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw as RawFd) })
}

/// Spawn `cmd` as `options` say. Its stdio is set here (inherited, captured, or fed
/// from [`Input::Bytes`]), replacing any the caller set, and it starts with no signal
/// blocked, whatever the caller blocks to watch. The error is spawn's own (ENOENT for a
/// missing program).
///
/// Call it from the thread that will supervise: the death signal is tied to the
/// spawning thread, and the affinity and priority options apply to the calling thread.
pub fn spawn(cmd: &mut Command, options: Options) -> io::Result<Running> {
    let stdin = match options.stdin {
        Input::Inherit => Stdio::inherit(),
        Input::Null => Stdio::null(),
        Input::Bytes(_) => Stdio::piped(),
    };
    let output = || if options.capture_output { Stdio::piped() } else { Stdio::inherit() };
    cmd.stdin(stdin).stdout(output()).stderr(output());
    let death_signal = options.die_with_parent;
    let join = options.join_cgroups.clone();
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: between fork and exec only async-signal-safe calls run (sigemptyset,
    // pthread_sigmask, prctl, getppid, write to a cgroup.procs descriptor), and nothing
    // allocates.
    unsafe {
        cmd.pre_exec(move || {
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            if let Some(sig) = death_signal {
                if libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent died between fork and prctl: nobody would ever stop us.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            for &fd in &join {
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let started_ns = monotonic_ns();
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    // From here on the child is ours to reap: build the handle before anything can fail.
    let mut running = Running {
        pid,
        pidfd: pidfd_open(pid),
        stdin: child.stdin.take().map(OwnedFd::from),
        stdin_bytes: match options.stdin {
            Input::Bytes(bytes) => bytes,
            _ => Vec::new(),
        },
        stdout: child.stdout.take().map(OwnedFd::from),
        stderr: child.stderr.take().map(OwnedFd::from),
        started_ns,
        reaped: false,
        output_limit: options.output_limit,
        signal_group: options.signal_group,
        forward_signals: options.forward_signals,
        kill_after_signal: options.kill_after_signal,
        timeout: options.timeout,
        kill_after_timeout: options.kill_after_timeout,
        _watchdog: RtWatchdog::raise_if(false),
        _affinity: None,
    };
    for end in [&running.stdin, &running.stdout, &running.stderr].into_iter().flatten() {
        fd::set_nonblocking(end.as_raw_fd())?;
    }
    // After the spawn, so the child inherits neither; CPUs first, so the raised thread
    // never runs on a CPU it should avoid.
    running._affinity = AffinityGuard::avoid(&options.avoid_cpus);
    running._watchdog = RtWatchdog::raise_if(options.rt_watchdog);
    Ok(running)
}

/// Read what `end` has now; close it (set `None`) at end of file or on an error. With a
/// `limit`, only the last `limit` bytes are kept.
fn drain_pipe(end: &mut Option<OwnedFd>, into: &mut Vec<u8>, limit: Option<usize>) {
    let Some(fd) = end else { return };
    let mut buf = [0u8; 64 * 1024];
    loop {
        match fd::read_raw(fd.as_raw_fd(), &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                into.extend_from_slice(&buf[..n]);
                if let Some(keep) = limit.filter(|&keep| into.len() > 2 * keep) {
                    into.drain(..into.len() - keep);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(_) => break,
        }
    }
    *end = None;
}

impl Running {
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The child's pidfd (readable once it has exited); `None` on kernels before 5.3.
    #[cfg(test)]
    pub fn pidfd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        use std::os::fd::AsFd;
        self.pidfd.as_ref().map(|p| p.as_fd())
    }

    /// Send `sig` to the child (through its pidfd where there is one, so never to a
    /// process that reused its pid). Errors (it has already exited) are ignored.
    pub fn signal(&self, sig: i32) {
        if self.reaped {
            return;
        }
        if self.signal_group {
            // SAFETY: the group our unreaped child leads: its id cannot have been reused.
            unsafe { libc::kill(-self.pid, sig) };
            return;
        }
        match &self.pidfd {
            // SAFETY: a valid pidfd, no siginfo, no flags.
            Some(pidfd) => unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    sig,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                );
            },
            // SAFETY: our own unreaped child: its pid cannot have been reused.
            None => unsafe {
                libc::kill(self.pid, sig);
            },
        }
    }

    /// Feed stdin, collect stdout and stderr, pass `signals` on as the options say and
    /// enforce the time limit, all in one poll loop that sleeps until something happens;
    /// reap the child with wait4 and say how it ended. Once it has been reaped, caller
    /// signals are no longer read (they stay queued for the caller), and output is read
    /// until end of file or for a short grace at most.
    pub fn supervise(self, signals: Option<&SignalWatch>) -> io::Result<Finished> {
        self.supervise_with(signals, &mut || {})
    }

    /// Count the elapsed time (and the timeout) from `at_ns` (CLOCK_MONOTONIC) rather
    /// than from the spawn: for a program whose measured life begins when its child,
    /// its set-up done, is about to exec.
    pub fn start_clock_at(&mut self, at_ns: u64) {
        self.started_ns = at_ns;
    }

    /// [`supervise`](Running::supervise), calling `on_reaped` the moment the child is
    /// reaped (before waiting for the rest of its output): what the caller must do at the
    /// child's end, such as stopping what it left running.
    pub fn supervise_with(
        mut self,
        signals: Option<&SignalWatch>,
        on_reaped: &mut dyn FnMut(),
    ) -> io::Result<Finished> {
        let (timer, sigchld, exit_fd) = self.exit_watch()?;
        let deadline_ns = self.timeout.map(|t| self.started_ns.saturating_add(t.as_nanos() as u64));
        let mut reaped: Option<(rusage::Reaped, u64)> = None;
        let mut kill_at_ns: Option<u64> = None;
        let mut timed_out = false;
        let mut stop_signal: Option<i32> = None;
        let mut written = 0;
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        if self.stdin_bytes.is_empty() {
            self.stdin = None;
        }
        let mut look_for_exit = true;
        loop {
            if reaped.is_none() && look_for_exit {
                if let Some(r) = rusage::wait4(self.pid, true)? {
                    self.reaped = true;
                    self.stdin = None;
                    reaped = Some((r, monotonic_ns()));
                    on_reaped();
                }
            }
            look_for_exit = sigchld.is_some();
            let running = reaped.is_none();
            if !running && self.stdout.is_none() && self.stderr.is_none() {
                break;
            }
            let wake_at = match reaped {
                None => {
                    let deadline = deadline_ns.filter(|_| !timed_out && stop_signal.is_none());
                    [deadline, kill_at_ns].into_iter().flatten().min()
                }
                Some((_, at)) => Some(at + OUTPUT_GRACE.as_nanos() as u64),
            };
            fd::arm_timer_at(&timer, wake_at)?;
            let raw = |end: &Option<OwnedFd>| end.as_ref().map_or(-1, |f| f.as_raw_fd());
            let watched = |fd: Option<RawFd>| if running { fd.unwrap_or(-1) } else { -1 };
            let mut pfds = [
                libc::pollfd { fd: watched(exit_fd), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: watched(signals.map(SignalWatch::raw_fd)), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: timer.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: raw(&self.stdin), events: libc::POLLOUT, revents: 0 },
                libc::pollfd { fd: raw(&self.stdout), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: raw(&self.stderr), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: `pfds` holds valid pollfds (negative descriptors are skipped).
            if unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, -1) } < 0 {
                let err = io::Error::last_os_error();
                if err.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(err);
            }
            if pfds[0].revents != 0 {
                look_for_exit = true;
                if let Some(w) = &sigchld {
                    w.drain();
                }
            }
            if pfds[1].revents != 0 {
                self.forward(signals, &mut stop_signal, &mut kill_at_ns);
            }
            if pfds[2].revents != 0 {
                let mut ticks = [0u8; 8];
                let _ = fd::read_raw(timer.as_raw_fd(), &mut ticks);
            }
            self.feed_stdin(pfds[3].revents, &mut written);
            if pfds[4].revents != 0 {
                drain_pipe(&mut self.stdout, &mut stdout, self.output_limit);
            }
            if pfds[5].revents != 0 {
                drain_pipe(&mut self.stderr, &mut stderr, self.output_limit);
            }
            let now = monotonic_ns();
            match reaped {
                None => {
                    if deadline_ns.is_some_and(|d| now >= d) && !timed_out && stop_signal.is_none() {
                        timed_out = true;
                        self.signal(libc::SIGTERM);
                        kill_at_ns = Some(now + self.kill_after_timeout.as_nanos() as u64);
                    }
                    if kill_at_ns.is_some_and(|k| now >= k) {
                        self.signal(libc::SIGKILL);
                        kill_at_ns = None;
                    }
                }
                Some((_, at)) => {
                    if now >= at + OUTPUT_GRACE.as_nanos() as u64 {
                        self.stdout = None;
                        self.stderr = None;
                    }
                }
            }
        }
        let reaped = reaped.expect("the loop ends only once the child is reaped");
        Ok(self.finished(reaped, (stdout, stderr), timed_out, stop_signal))
    }

    /// What the supervising poll watches beside the pipes: a timer for the deadlines, and
    /// the descriptor that says the child exited, its pidfd or, without one, a SIGCHLD
    /// signalfd (also returned, to be drained and kept open).
    fn exit_watch(&self) -> io::Result<(OwnedFd, Option<SignalWatch>, Option<RawFd>)> {
        let timer = fd::timerfd()?;
        // Without a pidfd, SIGCHLD from a signalfd says when to look (and each wakeup
        // looks, so an exit before it was set up is not missed).
        let sigchld = match self.pidfd {
            Some(_) => None,
            None => Some(SignalWatch::new(&[libc::SIGCHLD])?),
        };
        let exit_fd = self.pidfd.as_ref().map(|p| p.as_raw_fd()).or(sigchld.as_ref().map(|w| w.raw_fd()));
        Ok((timer, sigchld, exit_fd))
    }

    /// Pass the caller's pending signals on to the child, those the options name (never
    /// SIGCHLD; the others are read and dropped): the first is kept as the stop signal,
    /// and the SIGKILL after the grace is armed once.
    #[inline]
    fn forward(&self, signals: Option<&SignalWatch>, stop_signal: &mut Option<i32>, kill_at_ns: &mut Option<u64>) {
        for sig in signals.map(SignalWatch::drain).unwrap_or_default() {
            if sig == libc::SIGCHLD || !self.forward_signals.contains(&sig) {
                continue;
            }
            self.signal(sig);
            stop_signal.get_or_insert(sig);
            if let Some(grace) = self.kill_after_signal {
                kill_at_ns.get_or_insert(monotonic_ns() + grace.as_nanos() as u64);
            }
        }
    }

    /// On the stdin pipe's poll events: write what it takes now of the bytes not yet
    /// `written`, and close it once all are, or when the child closed its end.
    #[inline]
    fn feed_stdin(&mut self, revents: libc::c_short, written: &mut usize) {
        if revents & libc::POLLERR != 0 {
            // The child closed its stdin: nothing more can be written.
            self.stdin = None;
        } else if revents != 0 {
            if let Some(fd) = &self.stdin {
                match fd::write_some(fd.as_raw_fd(), &self.stdin_bytes[*written..]) {
                    Ok(n) => *written += n,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    // EPIPE (Rust ignores SIGPIPE): the child closed its stdin between
                    // the poll and the write; its exit status says why.
                    Err(_) => *written = self.stdin_bytes.len(),
                }
                if *written == self.stdin_bytes.len() {
                    self.stdin = None;
                }
            }
        }
    }

    /// How the reaped child ended, with its output and what the supervision did; its
    /// elapsed time runs from the start of its clock to the reap.
    fn finished(
        &self,
        (r, reaped_ns): (rusage::Reaped, u64),
        (stdout, stderr): (Vec<u8>, Vec<u8>),
        timed_out: bool,
        stop_signal: Option<i32>,
    ) -> Finished {
        Finished {
            exit: r.exit,
            usage: r.usage,
            stdout,
            stderr,
            timed_out,
            stop_signal,
            elapsed: Duration::from_nanos(reaped_ns.saturating_sub(self.started_ns)),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.reaped {
            self.signal(libc::SIGKILL);
            let _ = rusage::wait4(self.pid, false);
        }
    }
}

/// `sh -c TEXT` for a user's own command (an A/B setup or cleanup): it runs at
/// SCHED_OTHER whatever this process runs at, its stdout goes to this process's stderr
/// (so stdout carries only results), and with `own_group` it gets a process group of its
/// own, so a Ctrl-C typed at the terminal cannot cut a cleanup short. Spawn it with
/// [`spawn`] without `capture_output`: nothing then waits for pipes that a background
/// process it starts may hold open for hours.
pub fn user_shell(text: &str, own_group: bool) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(text);
    // SAFETY: between fork and exec only async-signal-safe calls run (sched_setscheduler,
    // dup2, setpgid), and nothing allocates. These run after the stdio is set up.
    unsafe {
        cmd.pre_exec(move || {
            let param = libc::sched_param { sched_priority: 0 };
            if libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) != 0 || libc::dup2(2, 1) < 0 {
                return Err(io::Error::last_os_error());
            }
            if own_group && libc::setpgid(0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// How many processes are in process group `pgid`, from /proc.
pub fn group_members(pgid: libc::pid_t) -> u32 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    let in_group = |pid: &str| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // pid (comm) state ppid pgrp ...: the fields after the comm's closing parenthesis.
        let fields: Vec<&str> =
            stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
        fields.get(2).and_then(|g| g.parse::<libc::pid_t>().ok()) == Some(pgid) && fields.first() != Some(&"Z")
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()) && in_group(n)))
        .count() as u32
}

/// Where `program` would be run from: itself when it names a path, else the first
/// executable of that name on PATH.
pub fn find_program(program: &str) -> Option<std::path::PathBuf> {
    // What exec would accept: a regular file this user may execute.
    let executable = |p: &std::path::Path| {
        p.metadata().is_ok_and(|m| m.is_file())
            && fd::c_path(p).is_ok_and(|c| {
                // SAFETY: a valid NUL-terminated path.
                unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
            })
    };
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let path = std::path::PathBuf::from(program);
        return executable(&path).then_some(path);
    }
    // Without PATH, exec searches the C library's default path.
    let search = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&search).map(|dir| dir.join(program)).find(|p| executable(p))
}

/// The command name (comm, at most 15 bytes) and state letter of process `pid`, from
/// one read of /proc/<pid>/stat; `None` when there is no such process.
pub fn comm_and_state(pid: i32) -> Option<(String, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) S ...": comm may itself hold spaces and parentheses.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?.to_string();
    let state = stat.get(close + 1..)?.trim_start().chars().next()?;
    Some((comm, state))
}

/// This process's command name ("schedlab" for the installed binary).
pub fn own_comm() -> Option<String> {
    Some(std::fs::read_to_string("/proc/self/comm").ok()?.trim_end_matches('\n').to_string())
}

/// Whether `pid` is a running process (not a zombie) and, when `comm` is given, one
/// with that command name: a pid reused by another program does not count.
pub fn is_running_as(pid: i32, comm: Option<&str>) -> bool {
    match comm_and_state(pid) {
        None => false,
        Some((_, 'Z' | 'X' | 'x')) => false,
        Some((name, _)) => comm.is_none_or(|c| c == name),
    }
}

/// Lock the process's memory, now and to come (`mlockall`), so no page fault on it waits
/// for the disk while something is measured; why not, where the kernel refuses.
pub fn lock_memory() -> std::result::Result<(), String> {
    // SAFETY: plain syscall with constant flags.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        return Err(crate::error::describe_io(&std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Undo [`lock_memory`].
pub fn unlock_memory() {
    // SAFETY: plain syscall.
    unsafe { libc::munlockall() };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    fn captured() -> Options {
        Options { capture_output: true, stdin: Input::Null, ..Options::default() }
    }

    #[test]
    fn a_user_shell_writes_to_stderr_and_runs_sched_other() {
        // From a real-time thread where we may make one: the command must not inherit it.
        let raised = sched::set_policy(crate::model::Policy::Fifo, 1).is_ok();
        let mut cmd = user_shell("echo hi; cut -d' ' -f41 /proc/self/stat; exit 3", true);
        let running = spawn(&mut cmd, captured());
        if raised {
            sched::set_policy(crate::model::Policy::Other, 0).unwrap();
        }
        let done = running.unwrap().supervise(None).unwrap();
        assert!(matches!(done.exit, ExitKind::Code(3)), "{:?}", done.exit);
        assert!(done.stdout.is_empty(), "{}", String::from_utf8_lossy(&done.stdout));
        // Policy 0 is SCHED_OTHER.
        assert_eq!(String::from_utf8_lossy(&done.stderr), "hi\n0\n");
    }

    /// Wait until `check` holds (true) or `limit` passes (false).
    fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
        let end = Instant::now() + limit;
        while !check() {
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// Whether `pid` ignores `sig` (its SigIgn mask), so a test can wait until a shell's
    /// `trap "" TERM` is in force before the signal is sent.
    fn ignores(pid: libc::pid_t, sig: i32) -> bool {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let mask = status.lines().find_map(|l| l.strip_prefix("SigIgn:")).unwrap_or("0").trim().to_string();
        u64::from_str_radix(&mask, 16).is_ok_and(|m| m & (1 << (sig - 1)) != 0)
    }

    /// A signal pending for this thread only (the test harness has other threads, which
    /// do not block it): the supervisor's signalfd reads it on its first poll.
    fn raise_here(sig: i32) {
        // SAFETY: plain syscalls; the signal is blocked in this thread by a SignalWatch.
        unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig) };
    }

    #[test]
    fn output_exit_code_and_usage_come_back() {
        let f = spawn(&mut sh("echo out; echo err >&2; exit 3"), captured()).unwrap().supervise(None).unwrap();
        assert_eq!(f.exit, ExitKind::Code(3));
        assert_eq!((f.stdout.as_slice(), f.stderr.as_slice()), (&b"out\n"[..], &b"err\n"[..]));
        assert!(!f.timed_out && f.stop_signal.is_none());
        assert!(f.usage.maxrss_kb > 0 && f.elapsed > Duration::ZERO, "{f:?}");
    }

    #[test]
    fn stdin_and_stdout_flow_together_without_deadlock() {
        // More than any pipe buffer both ways: cat writes back while we still write.
        let input: Vec<u8> = (0..3 * 1024 * 1024 + 7).map(|i| (i % 251) as u8).collect();
        let options = Options { stdin: Input::Bytes(input.clone()), capture_output: true, ..Options::default() };
        let running = spawn(&mut Command::new("cat"), options).unwrap();
        assert!(running.pidfd().is_some(), "pidfd_open exists since Linux 5.3");
        let f = running.supervise(None).unwrap();
        assert_eq!(f.exit, ExitKind::Code(0));
        assert!(f.stdout == input, "{} bytes came back of {}", f.stdout.len(), input.len());
    }

    #[test]
    fn a_missing_program_fails_to_spawn_with_enoent() {
        let err = spawn(&mut Command::new("/nonexistent/schedlab-program"), Options::default()).err().unwrap();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn the_time_limit_sends_sigterm() {
        let options = Options { timeout: Some(Duration::from_millis(100)), ..captured() };
        let f = spawn(Command::new("sleep").arg("30"), options).unwrap().supervise(None).unwrap();
        assert_eq!(f.exit, ExitKind::Signal(libc::SIGTERM));
        assert!(f.timed_out && f.stop_signal.is_none());
        assert!(f.elapsed >= Duration::from_millis(100) && f.elapsed < Duration::from_secs(10), "{f:?}");
    }

    #[test]
    fn a_child_that_ignores_the_time_limits_sigterm_is_killed() {
        let options = Options {
            timeout: Some(Duration::from_millis(50)),
            kill_after_timeout: Duration::from_millis(300),
            ..captured()
        };
        let running = spawn(&mut sh("trap '' TERM; exec sleep 30"), options).unwrap();
        assert!(wait_until(Duration::from_secs(10), || ignores(running.pid(), libc::SIGTERM)));
        let f = running.supervise(None).unwrap();
        assert_eq!(f.exit, ExitKind::Signal(libc::SIGKILL));
        assert!(f.timed_out);
        assert!(f.elapsed >= Duration::from_millis(350), "{f:?}");
    }

    #[test]
    fn a_caller_signal_is_passed_on_and_remembered() {
        let watch = SignalWatch::new(&[libc::SIGTERM]).unwrap();
        let running = spawn(Command::new("sleep").arg("30"), captured()).unwrap();
        raise_here(libc::SIGTERM);
        let f = running.supervise(Some(&watch)).unwrap();
        assert_eq!(f.exit, ExitKind::Signal(libc::SIGTERM));
        assert_eq!(f.stop_signal, Some(libc::SIGTERM));
        assert!(!f.timed_out);
    }

    #[test]
    fn a_child_that_ignores_a_passed_on_signal_is_killed_after_the_grace() {
        let watch = SignalWatch::new(&[libc::SIGTERM]).unwrap();
        let options = Options { kill_after_signal: Some(Duration::from_millis(300)), ..captured() };
        let running = spawn(&mut sh("trap '' TERM; exec sleep 30"), options).unwrap();
        assert!(wait_until(Duration::from_secs(10), || ignores(running.pid(), libc::SIGTERM)));
        let t0 = Instant::now();
        raise_here(libc::SIGTERM);
        let f = running.supervise(Some(&watch)).unwrap();
        assert_eq!(f.exit, ExitKind::Signal(libc::SIGKILL));
        assert_eq!(f.stop_signal, Some(libc::SIGTERM));
        assert!(t0.elapsed() >= Duration::from_millis(300));
    }

    #[test]
    fn a_signal_not_passed_on_is_dropped() {
        let watch = SignalWatch::new(&[libc::SIGHUP]).unwrap();
        let options = Options { forward_signals: vec![libc::SIGTERM], ..captured() };
        let running = spawn(&mut sh("sleep 0.2; echo done"), options).unwrap();
        raise_here(libc::SIGHUP);
        let f = running.supervise(Some(&watch)).unwrap();
        assert_eq!((f.exit, f.stop_signal, f.stdout.as_slice()), (ExitKind::Code(0), None, &b"done\n"[..]));
    }

    #[test]
    fn output_held_open_by_a_descendant_is_read_for_a_grace_only() {
        let t0 = Instant::now();
        let f = spawn(&mut sh("sleep 6 & echo $!"), captured()).unwrap().supervise(None).unwrap();
        let waited = t0.elapsed();
        let orphan: libc::pid_t = String::from_utf8_lossy(&f.stdout).trim().parse().unwrap();
        // SAFETY: plain kill of the orphaned sleep the script started.
        unsafe { libc::kill(orphan, libc::SIGKILL) };
        assert_eq!(f.exit, ExitKind::Code(0));
        assert!(waited >= OUTPUT_GRACE && waited < Duration::from_secs(5), "{waited:?}");
    }

    /// Kernels before 5.3 have no pidfd: SIGCHLD from a signalfd says when to look.
    /// SIGCHLD goes to any thread that does not block it, so this runs in a forked,
    /// single-threaded child, as schedlab itself is.
    #[test]
    fn without_a_pidfd_sigchld_says_when_the_child_ended() {
        fn check() -> std::result::Result<(), String> {
            let without_pidfd = |cmd: &mut Command, options: Options| {
                let mut running = spawn(cmd, options).map_err(|e| e.to_string())?;
                running.pidfd = None;
                Ok::<_, String>(running)
            };
            // A missed exit would show as a timeout, not a hang.
            let bounded = || Options { timeout: Some(Duration::from_secs(10)), ..captured() };
            let f = without_pidfd(&mut sh("sleep 0.1; echo hi"), bounded())?.supervise(None);
            let f = f.map_err(|e| e.to_string())?;
            if (f.exit, f.stdout.as_slice(), f.timed_out) != (ExitKind::Code(0), &b"hi\n"[..], false) {
                return Err(format!("a short command: {f:?}"));
            }
            // Exited (its SIGCHLD discarded) before supervise began.
            let running = without_pidfd(&mut Command::new("true"), bounded())?;
            wait_until(Duration::from_secs(10), || comm_and_state(running.pid()).is_some_and(|(_, s)| s == 'Z'));
            let f = running.supervise(None).map_err(|e| e.to_string())?;
            if f.exit != ExitKind::Code(0) || f.timed_out {
                return Err(format!("an early exit: {f:?}"));
            }
            let options = Options { timeout: Some(Duration::from_millis(100)), ..captured() };
            let f = without_pidfd(Command::new("sleep").arg("30"), options)?.supervise(None);
            let f = f.map_err(|e| e.to_string())?;
            if f.exit != ExitKind::Signal(libc::SIGTERM) || !f.timed_out {
                return Err(format!("a time limit: {f:?}"));
            }
            Ok(())
        }
        crate::sys::check_in_forked_child("no-pidfd check", check);
    }

    #[test]
    fn the_child_dies_with_the_thread_that_spawned_it() {
        let pid = std::thread::spawn(|| {
            let options = Options { die_with_parent: Some(libc::SIGTERM), ..Options::default() };
            let running = spawn(Command::new("sleep").arg("30"), options).unwrap();
            let pid = running.pid();
            // Past exec, so the death signal is surely set before this thread ends.
            assert!(wait_until(Duration::from_secs(10), || comm_and_state(pid).is_some_and(|(c, _)| c == "sleep")));
            std::mem::forget(running);
            pid
        })
        .join()
        .unwrap();
        let reaped = rusage::wait4(pid, false).unwrap().unwrap();
        assert_eq!(reaped.exit, ExitKind::Signal(libc::SIGTERM));
    }

    #[test]
    fn dropping_an_unsupervised_child_kills_and_reaps_it() {
        let running = spawn(Command::new("sleep").arg("30"), captured()).unwrap();
        let pid = running.pid();
        drop(running);
        assert_eq!(comm_and_state(pid), None);
    }

    #[test]
    fn the_supervisor_avoids_cpus_and_the_child_does_not_inherit_it() {
        let before = sched::allowed_cpus().unwrap();
        if before.len() < 2 {
            return;
        }
        let avoid = vec![before[0]];
        let options = Options { avoid_cpus: avoid.clone(), ..captured() };
        let running = spawn(&mut sh("grep Cpus_allowed_list /proc/self/status"), options).unwrap();
        let during = sched::allowed_cpus().unwrap();
        let f = running.supervise(None).unwrap();
        assert_eq!(during, before[1..].to_vec());
        assert_eq!(sched::allowed_cpus().unwrap(), before, "restored afterwards");
        let child = String::from_utf8_lossy(&f.stdout);
        assert!(child.contains(&crate::model::parse::format_cpu_list(&before)), "{child}");
        // Avoiding every CPU would leave none: then nothing changes.
        let options = Options { avoid_cpus: before.clone(), ..captured() };
        let running = spawn(&mut Command::new("true"), options).unwrap();
        assert_eq!(sched::allowed_cpus().unwrap(), before);
        running.supervise(None).unwrap();
    }

    #[test]
    fn the_supervisor_waits_at_fifo_99_and_the_child_does_not_inherit_it() {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let before = sched::current_policy().unwrap();
        let options = Options { rt_watchdog: true, ..captured() };
        // Field 41 of stat is the policy (0: SCHED_OTHER).
        let running = spawn(&mut sh("cut -d')' -f2 /proc/self/stat | cut -d' ' -f40"), options).unwrap();
        let during = sched::current_policy().unwrap();
        let f = running.supervise(None).unwrap();
        assert_eq!(during, (Some(crate::model::Policy::Fifo), 99));
        assert_eq!(sched::current_policy().unwrap(), before, "restored afterwards");
        assert_eq!(String::from_utf8_lossy(&f.stdout).trim(), "0");
    }

    #[test]
    fn this_process_runs_under_its_own_name_and_others_do_not() {
        let me = std::process::id() as i32;
        let comm = own_comm().unwrap();
        assert!(is_running_as(me, Some(&comm)));
        assert!(is_running_as(me, None));
        assert!(!is_running_as(me, Some("surely-not-us")));
        // Above the largest pid_max (2^22): never a process.
        assert!(!is_running_as(99_999_999, None));
    }

    #[test]
    fn a_zombie_is_not_running() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while comm_and_state(pid).is_some_and(|(_, s)| s != 'Z') && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(comm_and_state(pid), Some(("true".to_string(), 'Z')));
        assert!(!is_running_as(pid, None));
        child.wait().unwrap();
        assert_eq!(comm_and_state(pid), None);
    }
}
