//! One error type for the whole tool, and the exit code each kind maps to.
//!
//! Exit codes (docs/errors.md): 0 ok, 1 a comparison found a regression, 2 usage or
//! environment error (nothing was measured), 3 the measurement started but failed
//! (a member died, a timeout), 128+N interrupted by signal N.

use std::fmt;
use std::io;

#[derive(Debug)]
pub enum Error {
    /// The user asked for something that cannot be: bad flag value, impossible combination.
    Usage(String),
    /// The machine cannot give what was asked: a limit, a privilege, a missing facility.
    Environment(String),
    /// The measurement was started and did not complete.
    Failed(String),
    /// The measurement ran past its time limit and was killed.
    TimedOut(String),
    /// Stopped by a signal (SIGINT, SIGTERM, SIGHUP); children have been reaped.
    Interrupted(i32),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub fn env(msg: impl Into<String>) -> Self {
        Error::Environment(msg.into())
    }

    pub fn failed(msg: impl Into<String>) -> Self {
        Error::Failed(msg.into())
    }

    /// An OS call failed: name what was being done and the errno, as an environment error.
    pub fn os(context: impl fmt::Display, err: io::Error) -> Self {
        Error::Environment(format!("{context}: {}", describe_io(&err)))
    }

    /// The last errno, wrapped with context.
    pub fn last_os(context: impl fmt::Display) -> Self {
        Self::os(context, io::Error::last_os_error())
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Environment(_) => 2,
            Error::Failed(_) | Error::TimedOut(_) => 3,
            Error::Interrupted(sig) => 128 + sig,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Environment(m) => write!(f, "{m}"),
            Error::Failed(m) => write!(f, "measurement failed: {m}"),
            Error::TimedOut(m) => write!(f, "measurement timed out: {m}"),
            Error::Interrupted(sig) => {
                write!(f, "interrupted by {}; all children stopped and reaped", signal_name(*sig))
            }
        }
    }
}

impl std::error::Error for Error {}

/// "No such file or directory (ENOENT)": the message and the symbolic errno, which is
/// what a user searches for.
pub fn describe_io(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => {
            let text = err.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_string();
            match errno_name(code) {
                Some(name) => format!("{text} ({name})"),
                None => format!("{text} (errno {code})"),
            }
        }
        None => err.to_string(),
    }
}

pub fn errno_name(code: i32) -> Option<&'static str> {
    Some(match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::EBADF => "EBADF",
        libc::ECHILD => "ECHILD",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ENOSPC => "ENOSPC",
        libc::EPIPE => "EPIPE",
        libc::EROFS => "EROFS",
        libc::ENOSYS => "ENOSYS",
        _ => return None,
    })
}

pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}
