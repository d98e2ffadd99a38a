//! Signals as events: blocked, then read from a signalfd.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Whether `sig`'s disposition is SIG_IGN (inherited from whoever started us).
fn is_ignored(sig: libc::c_int) -> bool {
    // SAFETY: a null new action only queries; `old` is writable.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Signals blocked and readable from a descriptor instead of acted on, so a waiting
/// parent sees SIGCHLD, SIGINT and SIGTERM as events in one poll loop. The previous
/// mask is restored on drop. Create it while the process is single-threaded, so no
/// other thread is left with the signals unblocked.
pub struct SignalWatch {
    fd: OwnedFd,
    old_mask: libc::sigset_t,
}

impl SignalWatch {
    pub fn new(signals: &[libc::c_int]) -> io::Result<Self> {
        // SAFETY: sigset_t is plain data; the libc calls initialise and fill it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &sig in signals {
                if sig != libc::SIGCHLD && is_ignored(sig) {
                    // Blocked signals are queued even when ignored: a `nohup` run must
                    // not be stopped by the hang-up its user asked to ignore.
                    continue;
                }
                libc::sigaddset(&mut set, sig);
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) != 0 {
                return Err(io::Error::last_os_error());
            }
            let raw = libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC);
            if raw < 0 {
                let err = io::Error::last_os_error();
                libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
                return Err(err);
            }
            Ok(SignalWatch { fd: std::os::fd::FromRawFd::from_raw_fd(raw), old_mask: old })
        }
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Every signal queued since the last call.
    pub fn drain(&self) -> Vec<i32> {
        let mut got = Vec::new();
        loop {
            // SAFETY: signalfd_siginfo is plain data.
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            // SAFETY: `info` is writable for `size` bytes.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), (&mut info as *mut libc::signalfd_siginfo).cast(), size) };
            if n != size as isize {
                return got;
            }
            got.push(info.ssi_signo as i32);
        }
    }

    /// In a freshly forked child: the mask the program had before, so SIGINT and SIGTERM
    /// kill it again.
    pub fn restore_in_child(&self) {
        // SAFETY: restoring a mask obtained from pthread_sigmask.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut()) };
    }
}

impl Drop for SignalWatch {
    fn drop(&mut self) {
        self.restore_in_child();
    }
}

static SIGXCPU_COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

extern "C" fn count_sigxcpu(_: libc::c_int) {
    // Async-signal-safe: one atomic add.
    SIGXCPU_COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// Counts SIGXCPU while held, instead of its default action (the process dumps core): a
/// SCHED_DEADLINE task that asked for SCHED_FLAG_DL_OVERRUN gets one each time a job
/// runs past its runtime. The signal is sent to the process, so the count is the
/// process's; the previous disposition comes back on drop.
pub struct SigxcpuCounter {
    previous: libc::sigaction,
    start: u64,
}

impl SigxcpuCounter {
    pub fn install() -> io::Result<SigxcpuCounter> {
        // SAFETY: a zeroed sigaction is valid; the handler only does an atomic add; the
        // old disposition is saved to be restored.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = count_sigxcpu as extern "C" fn(libc::c_int) as usize;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGXCPU, &action, &mut previous) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(SigxcpuCounter { previous, start: SIGXCPU_COUNT.load(std::sync::atomic::Ordering::Relaxed) })
        }
    }

    /// SIGXCPUs received since this counter was installed.
    pub fn count(&self) -> u64 {
        SIGXCPU_COUNT.load(std::sync::atomic::Ordering::Relaxed) - self.start
    }
}

impl Drop for SigxcpuCounter {
    fn drop(&mut self) {
        // SAFETY: restoring the disposition saved by install.
        unsafe { libc::sigaction(libc::SIGXCPU, &self.previous, std::ptr::null_mut()) };
    }
}
