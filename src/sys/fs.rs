//! Filesystem facts the preflight needs: free space, and whether a directory is tmpfs.
//! (Placeholder until the trial-machinery branch lands its version.)

use std::path::Path;

/// Bytes an unprivileged user may still write under `path`, if statvfs answers.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let c = crate::sys::fd::c_path(path).ok()?;
    // SAFETY: zeroed statvfs is valid; the call fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid path and writable struct.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0).then_some(st.f_bavail * st.f_frsize)
}

/// Is `path` on tmpfs (memory-backed)?
pub fn is_tmpfs(path: &Path) -> bool {
    let Ok(c) = crate::sys::fd::c_path(path) else { return false };
    // SAFETY: zeroed statfs is valid; the call fills it.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid path and writable struct.
    unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type == libc::TMPFS_MAGIC }
}
