//! The futex system call, waited on and woken: ring members passing the token, children
//! at a start gate, a request server's idle workers. `Scope::Process` words live in one
//! process's memory (the kernel may key them by address alone); `Scope::Shared` words in
//! memory mapped shared between processes.

use std::io;
use std::sync::atomic::AtomicU32;

/// Who shares the futex word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Threads of one process (FUTEX_PRIVATE_FLAG).
    Process,
    /// Processes that map the same memory.
    Shared,
}

fn op(base: i32, scope: Scope) -> i32 {
    match scope {
        Scope::Process => base | libc::FUTEX_PRIVATE_FLAG,
        Scope::Shared => base,
    }
}

/// Sleep while `word` holds `expected`, until woken (without limit). A word that no
/// longer holds it, a signal and a spurious wakeup all return at once: the caller checks
/// its word again and loops. Any other error is returned.
pub fn wait(word: &AtomicU32, expected: u32, scope: Scope) -> io::Result<()> {
    // SAFETY: the address is a live, aligned u32 for the duration of the call (the caller
    // keeps the word alive while any thread or process may wait on it); a null timeout
    // waits without limit.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op(libc::FUTEX_WAIT, scope),
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
    if r != 0 {
        let err = io::Error::last_os_error();
        if !matches!(err.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EINTR)) {
            return Err(err);
        }
    }
    Ok(())
}

/// Wake at most `n` of those sleeping on `word`.
pub fn wake(word: &AtomicU32, n: i32, scope: Scope) -> io::Result<()> {
    // SAFETY: as in `wait`; FUTEX_WAKE only reads the address.
    let r = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op(libc::FUTEX_WAKE, scope), n) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
