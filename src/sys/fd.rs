//! File descriptors schedlab makes itself: pipes and eventfds, as `OwnedFd` so they are
//! closed exactly once in the process that owns them.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A path as the NUL-terminated string the C calls take.
pub fn c_path(path: &std::path::Path) -> io::Result<std::ffi::CString> {
    std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path with a NUL byte"))
}

/// A pipe: (read end, write end), close-on-exec so a command we exec never inherits one.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are fresh descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A blocking eventfd in counter mode, starting at zero.
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with constant flags.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: eventfd succeeded; the descriptor is ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// read(2) into `buf`, retrying on EINTR. Returns the byte count (0 at end of file).
pub fn read_raw(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is valid for `buf.len()` writable bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// write(2) of all of `buf`, retrying on EINTR.
pub fn write_raw(fd: RawFd, buf: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: the slice is valid for reads of its remaining length.
        let n = unsafe { libc::write(fd, buf[done..].as_ptr().cast(), buf.len() - done) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(err);
        }
        done += n as usize;
    }
    Ok(())
}

pub fn write_all(fd: &OwnedFd, buf: &[u8]) -> io::Result<()> {
    write_raw(fd.as_raw_fd(), buf)
}

/// Close a raw descriptor this process inherited but does not own as an `OwnedFd` (used
/// in a freshly forked child to drop the parent's descriptors it must not hold).
pub fn close_raw(fd: RawFd) {
    // SAFETY: closing an fd is always memory-safe; a stale number only yields EBADF.
    unsafe { libc::close(fd) };
}

/// Put `fd`'s open file description in non-blocking mode (reads and writes then fail
/// with EAGAIN instead of waiting; poll says when to retry).
pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: plain fcntl on a descriptor; a bad one yields EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One write(2) of as much of `buf` as fits, retrying on EINTR; on a non-blocking
/// descriptor EAGAIN comes back as an error of kind `WouldBlock`.
pub fn write_some(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    loop {
        // SAFETY: the slice is valid for reads of its length.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
}

/// A non-blocking, disarmed timerfd on CLOCK_MONOTONIC: readable once the instant it is
/// armed for ([`arm_timer_at`]) has passed, so a poll loop sleeps until then and no longer.
pub fn timerfd() -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with constant flags.
    let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: timerfd_create succeeded; the descriptor is ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Arm `timer` to fire once at `at_ns` on CLOCK_MONOTONIC ([`crate::sys::clock::monotonic_ns`];
/// at once if that has passed), or disarm it with `None`. Clears a pending expiry.
pub fn arm_timer_at(timer: &OwnedFd, at_ns: Option<u64>) -> io::Result<()> {
    let at_ns = at_ns.map_or(0, |t| t.max(1));
    let value = libc::itimerspec {
        it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
        it_value: libc::timespec {
            tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
        },
    };
    // SAFETY: `value` is a valid itimerspec; the old value is not asked for. A zero
    // it_value disarms.
    let r = unsafe { libc::timerfd_settime(timer.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &value, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
