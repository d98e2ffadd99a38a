//! Thin safe wrappers over the OS, one concern a file. Everything `unsafe` in schedlab
//! lives here or in the measurement kernels, with the reason it is sound beside it.

pub mod cgroup;
pub mod children;
pub mod clock;
pub mod fd;
pub mod fs;
pub mod limits;
pub mod load;
pub mod machine;
pub mod process;
pub mod random;
pub mod rusage;
pub mod sched;
pub mod schedstat;
pub mod settings;
pub mod shm;
pub mod signals;
pub mod steal;
pub mod trace;

/// For tests that need a single-threaded process (the harness runs each test on a thread
/// beside others): run `check` in a forked child and fail with its message if it fails.
#[cfg(test)]
pub(crate) fn check_in_forked_child(what: &str, check: fn() -> Result<(), String>) {
    // SAFETY: the child runs `check` (glibc's malloc is fork-safe) and _exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let code = match std::panic::catch_unwind(check) {
            Ok(Ok(())) => 0,
            Ok(Err(msg)) => {
                eprintln!("{what}: {msg}");
                1
            }
            Err(_) => 2,
        };
        // SAFETY: leave without running the harness's destructors in the child.
        unsafe { libc::_exit(code) };
    }
    let reaped = rusage::wait4(pid, false).unwrap().unwrap();
    assert_eq!(reaped.exit, rusage::ExitKind::Code(0), "see the {what}'s message above");
}
