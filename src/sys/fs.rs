//! What a filesystem can hold and what backs it: the checks behind a workload's --dir.

use crate::sys::fd;
use std::path::Path;

/// Bytes an unprivileged user may still write on the filesystem holding `path`
/// (statvfs: available blocks × fragment size); `None` when it cannot be asked.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let c = fd::c_path(path).ok()?;
    // SAFETY: zeroed statvfs is valid; the call fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a writable struct.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail * st.f_frsize)
}

/// Whether `path` lies on tmpfs (memory-backed: O_SYNC writes reach no disk). False
/// when it cannot be asked.
pub fn is_tmpfs(path: &Path) -> bool {
    let Ok(c) = fd::c_path(path) else { return false };
    // SAFETY: zeroed statfs is valid; the call fills it.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a writable struct.
    unsafe { libc::statfs(c.as_ptr(), &mut st) == 0 && st.f_type == libc::TMPFS_MAGIC }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_and_backing_of_known_paths() {
        assert!(free_bytes(&std::env::temp_dir()).is_some());
        assert_eq!(free_bytes(Path::new("/nonexistent/schedlab")), None);
        assert!(!is_tmpfs(Path::new("/nonexistent/schedlab")));
        assert!(!is_tmpfs(Path::new("/proc")), "procfs is not tmpfs");
        if Path::new("/dev/shm").is_dir() {
            let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
            let shm_is_tmpfs = mounts.lines().any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.contains(" tmpfs "));
            assert_eq!(is_tmpfs(Path::new("/dev/shm")), shm_is_tmpfs);
        }
    }
}
