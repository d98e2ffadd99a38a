//! getrusage(2) and wait4(2), turned into [`Usage`].

use crate::model::Usage;
use std::io;

fn timeval_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000
}

pub fn from_raw(ru: &libc::rusage) -> Usage {
    let count = |v: libc::c_long| v.max(0) as u64;
    Usage {
        utime_ns: timeval_ns(ru.ru_utime),
        stime_ns: timeval_ns(ru.ru_stime),
        maxrss_kb: count(ru.ru_maxrss),
        ixrss: count(ru.ru_ixrss),
        idrss: count(ru.ru_idrss),
        isrss: count(ru.ru_isrss),
        minflt: count(ru.ru_minflt),
        majflt: count(ru.ru_majflt),
        nswap: count(ru.ru_nswap),
        inblock: count(ru.ru_inblock),
        oublock: count(ru.ru_oublock),
        msgsnd: count(ru.ru_msgsnd),
        msgrcv: count(ru.ru_msgrcv),
        nsignals: count(ru.ru_nsignals),
        nvcsw: count(ru.ru_nvcsw),
        nivcsw: count(ru.ru_nivcsw),
    }
}

fn getrusage(who: libc::c_int) -> Usage {
    // SAFETY: zeroed rusage is a valid value; getrusage only writes into it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `who` is one of the RUSAGE_* constants and `ru` is writable.
    unsafe { libc::getrusage(who, &mut ru) };
    from_raw(&ru)
}

/// Usage of the calling thread only (in a single-threaded process: the process).
pub fn this_thread() -> Usage {
    getrusage(libc::RUSAGE_THREAD)
}

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitKind {
    Code(i32),
    Signal(i32),
}

impl ExitKind {
    pub fn from_status(status: libc::c_int) -> ExitKind {
        if libc::WIFSIGNALED(status) {
            ExitKind::Signal(libc::WTERMSIG(status))
        } else {
            ExitKind::Code(libc::WEXITSTATUS(status))
        }
    }

    /// The shell's convention: the code itself, or 128 + the signal.
    pub fn shell_code(self) -> i32 {
        match self {
            ExitKind::Code(c) => c,
            ExitKind::Signal(s) => 128 + s,
        }
    }

    pub fn describe(self) -> String {
        match self {
            ExitKind::Code(c) => format!("exited with status {c}"),
            ExitKind::Signal(s) => format!("was killed by {}", crate::error::signal_name(s)),
        }
    }
}

/// One reaped child: who, how it ended, and its whole-life resource usage (including
/// any grandchildren it waited for, as Linux reports for wait4).
#[derive(Clone, Copy, Debug)]
pub struct Reaped {
    pub pid: libc::pid_t,
    pub exit: ExitKind,
    pub usage: Usage,
}

/// wait4 on `pid` (-1: any child). `Ok(None)` when WNOHANG finds nothing to reap.
pub fn wait4(pid: libc::pid_t, nohang: bool) -> io::Result<Option<Reaped>> {
    let mut status: libc::c_int = 0;
    // SAFETY: zeroed rusage is valid; wait4 writes status and rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if nohang { libc::WNOHANG } else { 0 };
    loop {
        // SAFETY: pointers are to live locals.
        let got = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if got > 0 {
            return Ok(Some(Reaped { pid: got, exit: ExitKind::from_status(status), usage: from_raw(&ru) }));
        }
        if got == 0 {
            return Ok(None);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}
