//! The one way schedlab forks, synchronises, watches and reaps children.
//!
//! - Every child asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG), so killing
//!   schedlab with SIGKILL still leaves no member behind.
//! - Children live in their own process group; the parent blocks SIGINT, SIGTERM, SIGHUP
//!   and SIGCHLD and reads them from a signalfd, so Ctrl-C reaches schedlab alone, which
//!   then kills and reaps every child before it reports the interruption.
//! - A child signals "ready" by writing one byte to a shared pipe (the start barrier);
//!   a child that dies early, or later with a failure, fails the whole group with its
//!   own message instead of leaving the parent waiting for a token that never comes.
//!
//! The parent must be single-threaded when it forks (the forked child may allocate).

use crate::error::{signal_name, Error, Result};
use crate::sys::fd;
use crate::sys::rusage::{self, ExitKind, Reaped};
use crate::sys::shm::SharedSlice;
use crate::sys::signals::SignalWatch;
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// Exit code of a child whose set-up failed (the environment refused something); it
/// left a message on the board.
pub const CHILD_SETUP_FAILED: i32 = 70;
/// Exit code of a child that failed after the start; it left a message on the board.
pub const CHILD_FAILED: i32 = 71;
const MESSAGE_BYTES: usize = 1024;

/// Handed to a child's body: its index, the start barrier, and the message board.
pub struct ChildContext<'a> {
    pub index: usize,
    ready_fd: RawFd,
    message: &'a [AtomicU8; MESSAGE_BYTES],
}

impl ChildContext<'_> {
    /// Tell the parent this child has finished its set-up.
    pub fn ready(&self) -> io::Result<()> {
        fd::write_raw(self.ready_fd, &[1])
    }

    /// Leave `msg` for the parent and return the exit code that makes it read it as a
    /// failed measurement.
    pub fn fail(&self, msg: &str) -> i32 {
        self.leave_message(msg);
        CHILD_FAILED
    }

    /// Leave `msg` and return the exit code for a set-up the environment refused.
    pub fn fail_setup(&self, msg: &str) -> i32 {
        self.leave_message(msg);
        CHILD_SETUP_FAILED
    }

    fn leave_message(&self, msg: &str) {
        let bytes = msg.as_bytes();
        let len = bytes.len().min(MESSAGE_BYTES - 1);
        for (slot, &b) in self.message.iter().zip(&bytes[..len]) {
            slot.store(b, Ordering::Relaxed);
        }
        self.message[len].store(0, Ordering::Release);
    }
}

struct Child {
    pid: libc::pid_t,
    reaped: Option<Reaped>,
}

/// A set of forked children that live and die together.
pub struct ChildGroup {
    label: String,
    parent_pid: libc::pid_t,
    pgid: libc::pid_t,
    children: Vec<Child>,
    index_of: HashMap<libc::pid_t, usize>,
    ready_r: OwnedFd,
    ready_w: OwnedFd,
    ready_seen: usize,
    messages: SharedSlice<[AtomicU8; MESSAGE_BYTES]>,
    signals: SignalWatch,
}

/// What happened while waiting.
enum Wake {
    Ready,
    Signals(Vec<i32>),
    Timeout,
}

impl ChildGroup {
    /// Room for `capacity` children called `label` in messages ("ring member").
    pub fn new(label: &str, capacity: usize) -> Result<Self> {
        // fork() from a multi-threaded process may leave the child holding another
        // thread's lock; the children here allocate, so refuse rather than risk it.
        if thread_count().is_some_and(|n| n > 1) {
            return Err(Error::failed(format!("internal: cannot fork {label}s from a multi-threaded process")));
        }
        let (ready_r, ready_w) = fd::pipe().map_err(|e| Error::os("creating the start-barrier pipe", e))?;
        let messages = SharedSlice::new(capacity).map_err(|e| Error::os("mapping the child message board", e))?;
        let signals = SignalWatch::new(&[libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
            .map_err(|e| Error::os("setting up signal handling", e))?;
        Ok(ChildGroup {
            label: label.to_string(),
            // SAFETY: getpid cannot fail.
            parent_pid: unsafe { libc::getpid() },
            pgid: 0,
            children: Vec::with_capacity(capacity),
            index_of: HashMap::with_capacity(capacity),
            ready_r,
            ready_w,
            ready_seen: 0,
            messages,
            signals,
        })
    }

    /// Fork a child that runs `body` and exits with its return value. `close_in_child`
    /// lists parent descriptors the child must not keep (other members' pipe ends).
    pub fn spawn(&mut self, close_in_child: &[RawFd], body: impl FnOnce(&ChildContext) -> i32) -> Result<libc::pid_t> {
        let index = self.children.len();
        if index >= self.messages.len() {
            return Err(Error::failed(format!("internal: more {}s than the group has room for", self.label)));
        }
        // SAFETY: fork; the child only runs `body` and then _exits, never returning here.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let err = io::Error::last_os_error();
            let hint = if err.raw_os_error() == Some(libc::EAGAIN) {
                " (a process limit was reached: see `ulimit -u`, pid_max and the cgroup's pids.max)"
            } else {
                ""
            };
            return Err(Error::env(format!(
                "forking {} {index}: {}{hint}",
                self.label,
                crate::error::describe_io(&err)
            )));
        }
        if pid == 0 {
            let code = self.child_start(index, close_in_child, body);
            // SAFETY: leave at once, skipping the parent's atexit handlers and destructors.
            unsafe { libc::_exit(code) };
        }
        if self.pgid == 0 {
            self.pgid = pid;
        }
        // Also set from this side so the group exists before we might signal it.
        // SAFETY: plain syscall; failure (the child already exec'd or exited) is harmless.
        unsafe { libc::setpgid(pid, self.pgid) };
        self.index_of.insert(pid, index);
        self.children.push(Child { pid, reaped: None });
        Ok(pid)
    }

    fn child_start(&self, index: usize, close_in_child: &[RawFd], body: impl FnOnce(&ChildContext) -> i32) -> i32 {
        // SAFETY: prctl/getppid/setpgid are async-signal-safe syscalls.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            // The parent may have died between fork and prctl: then nobody would kill us.
            if libc::getppid() != self.parent_pid {
                return CHILD_SETUP_FAILED;
            }
            libc::setpgid(0, if self.pgid == 0 { 0 } else { self.pgid });
        }
        self.signals.restore_in_child();
        fd::close_raw(self.signals.raw_fd());
        fd::close_raw(self.ready_r.as_raw_fd());
        for &fd in close_in_child {
            fd::close_raw(fd);
        }
        let ctx = ChildContext { index, ready_fd: self.ready_w.as_raw_fd(), message: &self.messages[index] };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&ctx))) {
            Ok(code) => code,
            Err(_) => ctx.fail("panicked"),
        }
    }

    fn poll(&self, watch_ready: bool, until: Option<Instant>) -> Result<Wake> {
        let mut fds = [
            libc::pollfd { fd: self.signals.raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.ready_r.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let count = if watch_ready { 2 } else { 1 };
        let timeout_ms = match until {
            None => -1,
            Some(t) => {
                let left = t.saturating_duration_since(Instant::now());
                left.as_millis().min(i32::MAX as u128) as i32 + i32::from(left.subsec_micros() % 1000 != 0)
            }
        };
        // SAFETY: `fds` holds `count` valid pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), count, timeout_ms) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                return Ok(Wake::Signals(Vec::new()));
            }
            return Err(Error::os("waiting for children", err));
        }
        if fds[0].revents != 0 {
            return Ok(Wake::Signals(self.signals.drain()));
        }
        if watch_ready && fds[1].revents != 0 {
            return Ok(Wake::Ready);
        }
        Ok(Wake::Timeout)
    }

    /// Block until `count` children have called `ready()`. Any child ending first, or a
    /// SIGINT/SIGTERM/SIGHUP, stops every child and returns the reason.
    pub fn wait_ready(&mut self, count: usize) -> Result<()> {
        self.wait_ready_until(count, None)
    }

    /// `wait_ready`, but past `deadline` every child is killed and the run fails as timed
    /// out: a child stopped or stuck before it is ready would otherwise hang the run.
    pub fn wait_ready_until(&mut self, count: usize, deadline: Option<(Instant, Duration)>) -> Result<()> {
        while self.ready_seen < count {
            if let Some((at, limit)) = deadline {
                if Instant::now() >= at {
                    self.kill_all();
                    return Err(Error::TimedOut(format!(
                        "{} of {count} ready after {:.1} s; every {} was killed",
                        self.ready_seen,
                        limit.as_secs_f64(),
                        self.label
                    )));
                }
            }
            match self.poll(true, deadline.map(|d| d.0))? {
                Wake::Ready => {
                    let mut buf = [0u8; 4096];
                    let want = (count - self.ready_seen).min(buf.len());
                    let n = fd::read_raw(self.ready_r.as_raw_fd(), &mut buf[..want])
                        .map_err(|e| Error::os("reading the start barrier", e))?;
                    self.ready_seen += n;
                }
                Wake::Signals(sigs) => {
                    self.handle_signals(&sigs)?;
                    if let Some(err) = self.first_early_exit(true) {
                        self.kill_all();
                        return Err(err);
                    }
                }
                Wake::Timeout => {}
            }
        }
        Ok(())
    }

    /// Wait until every child has exited. `alarm` runs once at its instant (e.g. to tell
    /// a ring to stop); past `deadline` every child is killed and the run fails. A child
    /// that exits with a failure or dies of a signal fails the run at once.
    pub fn wait_all(
        &mut self,
        mut alarm: Option<(Instant, &mut dyn FnMut())>,
        deadline: Option<(Instant, Duration)>,
    ) -> Result<Vec<Reaped>> {
        while self.children.iter().any(|c| c.reaped.is_none()) {
            let next_alarm = alarm.as_ref().map(|(t, _)| *t);
            let until = match (next_alarm, deadline.map(|d| d.0)) {
                (Some(a), Some(d)) => Some(a.min(d)),
                (a, d) => a.or(d),
            };
            match self.poll(false, until)? {
                Wake::Signals(sigs) => {
                    self.handle_signals(&sigs)?;
                    if self.first_early_exit(false).is_some() {
                        // One death usually brings down its neighbours (a closed pipe):
                        // give the others a moment to be reaped, so the cause is named.
                        std::thread::sleep(Duration::from_millis(20));
                        self.reap_exited()?;
                        let err = self.first_early_exit(false);
                        self.kill_all();
                        return Err(err.expect("a failed child stays failed"));
                    }
                }
                Wake::Ready | Wake::Timeout => {}
            }
            let now = Instant::now();
            if let Some((at, _)) = &alarm {
                if now >= *at {
                    if let Some((_, action)) = alarm.take() {
                        action();
                    }
                }
            }
            if let Some((at, limit)) = deadline {
                if now >= at && self.children.iter().any(|c| c.reaped.is_none()) {
                    self.kill_all();
                    return Err(Error::TimedOut(format!(
                        "still running after {:.1} s; every {} was killed",
                        limit.as_secs_f64(),
                        self.label
                    )));
                }
            }
        }
        Ok(self.children.iter().filter_map(|c| c.reaped).collect())
    }

    /// Reap what has exited; turn an interrupting signal into an error after stopping
    /// every child.
    fn handle_signals(&mut self, sigs: &[i32]) -> Result<()> {
        self.reap_exited()?;
        if let Some(&sig) = sigs.iter().find(|&&s| s != libc::SIGCHLD) {
            self.kill_all();
            return Err(Error::Interrupted(sig));
        }
        Ok(())
    }

    /// Collect every child that has exited (one wait4(-1) per exit, not one per child,
    /// so a ring of thousands ends in linear time).
    fn reap_exited(&mut self) -> Result<()> {
        if self.pgid == 0 {
            return Ok(());
        }
        loop {
            // Only this group's children (their own process group): never another's.
            match rusage::wait4(-self.pgid, true) {
                Ok(Some(r)) => {
                    if let Some(&index) = self.index_of.get(&r.pid) {
                        self.children[index].reaped = Some(r);
                    }
                }
                Ok(None) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::ECHILD) => return Ok(()),
                Err(e) => return Err(Error::os("reaping children", e)),
            }
        }
    }

    /// The child that ended badly (or, before the start, at all). A death by signal is
    /// preferred: it is the cause, and its neighbours' failures are the consequence.
    fn first_early_exit(&self, any_exit_is_early: bool) -> Option<Error> {
        let ended = || self.children.iter().enumerate().filter_map(|(i, c)| c.reaped.map(|r| (i, r)));
        let killed = ended().find(|(_, r)| matches!(r.exit, ExitKind::Signal(_)));
        let bad = killed.or_else(|| ended().find(|(_, r)| any_exit_is_early || r.exit != ExitKind::Code(0)));
        bad.map(|(index, reaped)| self.describe_exit(index, &reaped))
    }

    fn describe_exit(&self, index: usize, reaped: &Reaped) -> Error {
        let who = format!("{} {index} (pid {})", self.label, reaped.pid);
        let message = || {
            let msg: Vec<u8> =
                self.messages[index].iter().map(|b| b.load(Ordering::Acquire)).take_while(|&b| b != 0).collect();
            let msg = String::from_utf8_lossy(&msg).into_owned();
            if msg.is_empty() {
                "it stopped before its set-up finished".to_string()
            } else {
                msg
            }
        };
        match reaped.exit {
            // Set-up failures (policy refused, CPU gone, no memory) are about the environment.
            ExitKind::Code(CHILD_SETUP_FAILED) => Error::env(format!("{who} failed: {}", message())),
            ExitKind::Code(CHILD_FAILED) => Error::failed(format!("{who} failed: {}", message())),
            ExitKind::Code(c) => Error::failed(format!("{who} exited early with status {c}")),
            ExitKind::Signal(s) => {
                Error::failed(format!("{who} was killed by {} mid-run; the run is void", signal_name(s)))
            }
        }
    }

    /// SIGKILL every child that is still running and reap them all.
    pub fn kill_all(&mut self) {
        for child in self.children.iter().filter(|c| c.reaped.is_none()) {
            // SAFETY: signalling our own unreaped child (its pid cannot have been reused).
            unsafe { libc::kill(child.pid, libc::SIGKILL) };
        }
        for child in self.children.iter_mut().filter(|c| c.reaped.is_none()) {
            if let Ok(Some(r)) = rusage::wait4(child.pid, false) {
                child.reaped = Some(r);
            } else {
                // ECHILD: someone else reaped it; nothing is left running either way.
                child.reaped =
                    Some(Reaped { pid: child.pid, exit: ExitKind::Signal(libc::SIGKILL), usage: Default::default() });
            }
        }
    }
}

impl Drop for ChildGroup {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// Threads of this process, from /proc/self/status.
fn thread_count() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("Threads:"))?.trim().parse().ok()
}

/// A start gate in shared memory: children block on it after `ready()`, the parent
/// opens it once every child is waiting, and they all start together (futex wait/wake
/// on a shared word, so the release costs one syscall however many wait).
pub struct StartGate {
    word: SharedSlice<AtomicU32>,
}

impl StartGate {
    pub fn new() -> Result<StartGate> {
        Ok(StartGate { word: SharedSlice::new(1).map_err(|e| Error::os("mapping the start gate", e))? })
    }

    /// In a child: sleep until the gate opens.
    pub fn wait(&self) {
        let word = &self.word[0];
        while word.load(Ordering::Acquire) == 0 {
            // The word lives in a shared mapping that outlives the child; a failed wait
            // (none is expected) only means the loop looks again.
            let _ = crate::sys::futex::wait(word, 0, crate::sys::futex::Scope::Shared);
        }
    }

    /// In the parent: let every waiting child go.
    pub fn open(&self) {
        let word = &self.word[0];
        word.store(1, Ordering::Release);
        let _ = crate::sys::futex::wake(word, i32::MAX, crate::sys::futex::Scope::Shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that never signals ready (stopped, or stuck in its set-up) is killed at
    /// the deadline and the wait fails as timed out, instead of hanging.
    #[test]
    fn a_child_never_ready_is_killed_at_the_deadline() {
        crate::sys::check_in_forked_child("ready deadline", || {
            let mut group = ChildGroup::new("test child", 2).map_err(|e| e.to_string())?;
            let mut pids = Vec::new();
            for ready in [true, false] {
                let pid = group
                    .spawn(&[], |ctx| {
                        if ready {
                            let _ = ctx.ready();
                        }
                        std::thread::sleep(Duration::from_secs(30));
                        0
                    })
                    .map_err(|e| e.to_string())?;
                pids.push(pid);
            }
            let t0 = Instant::now();
            let limit = Duration::from_millis(300);
            match group.wait_ready_until(2, Some((t0 + limit, limit))) {
                Err(Error::TimedOut(msg)) if msg.contains("1 of 2 ready") => {}
                other => return Err(format!("expected a timeout, got {other:?}")),
            }
            if t0.elapsed() > Duration::from_secs(10) {
                return Err(format!("the timeout took {:?}", t0.elapsed()));
            }
            // Killed and reaped: neither pid is a child of ours any more.
            for pid in pids {
                if rusage::wait4(pid, true).is_ok_and(|r| r.is_none()) {
                    return Err(format!("child {pid} is still running"));
                }
            }
            Ok(())
        });
    }
}
