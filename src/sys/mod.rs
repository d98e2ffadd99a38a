//! Thin safe wrappers over the OS, one concern a file. Everything `unsafe` in schedlab
//! lives here or in the measurement kernels, with the reason it is sound beside it.

pub(crate) mod cgroup;
pub(crate) mod children;
pub mod clock;
pub(crate) mod fd;
pub(crate) mod fs;
pub(crate) mod futex;
pub(crate) mod gate;
pub(crate) mod limits;
pub(crate) mod load;
pub(crate) mod machine;
pub(crate) mod process;
pub(crate) mod random;
pub(crate) mod rusage;
pub mod sched;
pub(crate) mod schedstat;
pub(crate) mod settings;
pub(crate) mod shm;
pub(crate) mod signals;
pub(crate) mod steal;
pub(crate) mod trace;

/// For tests that need a single-threaded process (the harness runs each test on a thread
/// beside others): run `check` in a forked child and fail with its message if it fails.
#[cfg(test)]
pub(crate) fn check_in_forked_child(what: &str, check: fn() -> Result<(), String>) {
    use std::io::{Read, Write};
    use std::os::fd::FromRawFd;
    // The child's message comes back through a pipe: the harness captures only its own
    // process's output, so an eprintln in the child would be lost.
    let mut fds = [0; 2];
    // SAFETY: a valid array of two ints for pipe2 to fill.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0, "pipe2");
    // SAFETY: the child runs `check` (glibc's malloc is fork-safe) and _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let (code, msg) = match std::panic::catch_unwind(check) {
            Ok(Ok(())) => (0, String::new()),
            Ok(Err(msg)) => (1, msg),
            Err(_) => (2, "panicked".to_string()),
        };
        // SAFETY: the pipe's write end, owned by this child from here on.
        let mut out = unsafe { std::fs::File::from_raw_fd(fds[1]) };
        let _ = out.write_all(msg.as_bytes());
        // SAFETY: leave without running the harness's destructors in the child.
        unsafe { libc::_exit(code) };
    }
    // SAFETY: the parent's copy of the write end is closed so the read sees EOF; the read
    // end is owned by this file from here on.
    unsafe { libc::close(fds[1]) };
    let mut message = String::new();
    let _ = unsafe { std::fs::File::from_raw_fd(fds[0]) }.read_to_string(&mut message);
    let reaped = rusage::wait4(pid, false).unwrap().unwrap();
    assert_eq!(reaped.exit, rusage::ExitKind::Code(0), "the {what} failed: {message}");
}
