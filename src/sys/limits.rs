//! Pre-flight checks against the limits that stop a fork or a pipe half-way through a
//! ring: RLIMIT_NPROC, pid_max, threads-max, the cgroup's pids.max and RLIMIT_NOFILE.
//! Each failure names the limit, its value and the fix, and happens before any fork.

use crate::error::{Error, Result};
use std::fs;

/// Tasks (threads) that exist on the whole system now: /proc/loadavg's "running/total".
fn system_tasks() -> Option<u64> {
    let text = fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok()
}

fn read_u64(path: &str) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn status_field<'a>(status: &'a str, key: &str) -> Option<&'a str> {
    status.lines().find_map(|l| l.strip_prefix(key)).map(str::trim)
}

/// Tasks owned by `uid` (real uid), which is what RLIMIT_NPROC counts.
fn tasks_of_user(uid: u32) -> u64 {
    let Ok(entries) = fs::read_dir("/proc") else { return 0 };
    let mut total = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(status) = fs::read_to_string(format!("/proc/{name}/status")) else { continue };
        let real_uid = status_field(&status, "Uid:").and_then(|v| v.split_whitespace().next()?.parse::<u32>().ok());
        if real_uid == Some(uid) {
            total += status_field(&status, "Threads:").and_then(|v| v.parse().ok()).unwrap_or(1);
        }
    }
    total
}

/// Whether this process is exempt from RLIMIT_NPROC (CAP_SYS_ADMIN or CAP_SYS_RESOURCE).
fn exempt_from_nproc() -> bool {
    let Ok(status) = fs::read_to_string("/proc/self/status") else { return false };
    let Some(eff) = status_field(&status, "CapEff:").and_then(|v| u64::from_str_radix(v, 16).ok()) else {
        return false;
    };
    const CAP_SYS_ADMIN: u64 = 21;
    const CAP_SYS_RESOURCE: u64 = 24;
    eff & (1 << CAP_SYS_ADMIN) != 0 || eff & (1 << CAP_SYS_RESOURCE) != 0
}

/// The tightest pids-controller limit on our cgroup (v2) or any ancestor (systemd sets
/// TasksMax on the user's slice, above us): (room left, max, current, path).
fn cgroup_pids() -> Option<(u64, u64, u64, String)> {
    let cgroup = fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?.trim().to_string();
    let mut tightest: Option<(u64, u64, u64, String)> = None;
    loop {
        let dir = format!("/sys/fs/cgroup{path}");
        let max = fs::read_to_string(format!("{dir}/pids.max")).ok().and_then(|m| m.trim().parse::<u64>().ok());
        if let (Some(max), Some(current)) = (max, read_u64(&format!("{dir}/pids.current"))) {
            let room = max.saturating_sub(current);
            if tightest.as_ref().is_none_or(|t| room < t.0) {
                tightest = Some((room, max, current, dir));
            }
        }
        if path == "/" || path.is_empty() {
            break;
        }
        match path.rfind('/') {
            Some(0) => path = "/".to_string(),
            Some(i) => path.truncate(i),
            None => break,
        }
    }
    tightest
}

/// Refuse, before forking, a run that needs `new_tasks` more processes or threads than
/// the limits allow. `what` names the run in the message ("a ring of 5000 processes").
pub fn check_task_budget(new_tasks: u64, what: &str) -> Result<()> {
    let existing = system_tasks().unwrap_or(0);
    for (path, name) in [("/proc/sys/kernel/pid_max", "pid_max"), ("/proc/sys/kernel/threads-max", "threads-max")] {
        if let Some(max) = read_u64(path) {
            if existing + new_tasks > max {
                return Err(Error::env(format!(
                    "{what} needs {new_tasks} new tasks, but {name} is {max} and {existing} tasks \
                     already exist; raise it (`sysctl kernel.{name}={}`) or ask for fewer",
                    existing + new_tasks + 1024
                )));
            }
        }
    }
    if let Some((room, max, current, dir)) = cgroup_pids() {
        if new_tasks > room {
            return Err(Error::env(format!(
                "{what} needs {new_tasks} new tasks, but this cgroup's pids.max is {max} with \
                 {current} in use ({dir}/pids.max); raise it or ask for fewer"
            )));
        }
    }
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is writable.
    unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) };
    if lim.rlim_cur != libc::RLIM_INFINITY && !exempt_from_nproc() {
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        let mine = tasks_of_user(uid);
        if mine + new_tasks > lim.rlim_cur {
            return Err(Error::env(format!(
                "{what} needs {new_tasks} new tasks, but RLIMIT_NPROC (max user processes) is {} \
                 and user {uid} already has {mine}; raise it with `ulimit -u {}` (hard limit {}) \
                 or ask for fewer",
                lim.rlim_cur,
                mine + new_tasks + 64,
                if lim.rlim_max == libc::RLIM_INFINITY { "unlimited".to_string() } else { lim.rlim_max.to_string() }
            )));
        }
    }
    Ok(())
}

/// Refuse a run whose memory would not fit in MemAvailable (and so would meet the OOM
/// killer half-way through).
pub fn check_memory(needed_kb: u64, what: &str) -> Result<()> {
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let available = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok());
    match available {
        Some(avail) if needed_kb > avail => Err(Error::env(format!(
            "{what} needs about {} MiB of memory, but only {} MiB is available; ask for fewer members \
             or a smaller --work-kb",
            needed_kb / 1024,
            avail / 1024
        ))),
        _ => Ok(()),
    }
}

/// Make sure this process may hold `needed` descriptors, raising the soft RLIMIT_NOFILE
/// towards the hard one if necessary (what the limit is for); refuse when the hard limit
/// is too low.
pub fn ensure_open_files(needed: u64, what: &str) -> Result<()> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is writable.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    if lim.rlim_cur == libc::RLIM_INFINITY || lim.rlim_cur >= needed {
        return Ok(());
    }
    if lim.rlim_max != libc::RLIM_INFINITY && lim.rlim_max < needed {
        return Err(Error::env(format!(
            "{what} needs {needed} open files in one process, but the open-files limit \
             (RLIMIT_NOFILE) is {} with a hard limit of {}; raise it with `ulimit -n {needed}` \
             (as root, or in /etc/security/limits.conf), or use --mode process",
            lim.rlim_cur, lim.rlim_max
        )));
    }
    let raised = libc::rlimit { rlim_cur: needed, rlim_max: lim.rlim_max };
    // SAFETY: `raised` is a valid rlimit within the hard limit.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(Error::last_os(format!("raising RLIMIT_NOFILE to {needed} for {what}")));
    }
    Ok(())
}

/// The hard open-files limit, to check before forking a child that will raise its own.
pub fn check_open_files_possible(needed: u64, what: &str) -> Result<()> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is writable.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    if lim.rlim_max != libc::RLIM_INFINITY && lim.rlim_max < needed {
        return Err(Error::env(format!(
            "{what} needs {needed} open files in one process, but the hard open-files limit \
             (RLIMIT_NOFILE) is {}; raise it with `ulimit -n {needed}` (as root, or in \
             /etc/security/limits.conf), or use --mode process",
            lim.rlim_max
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handful_of_tasks_fits() {
        check_task_budget(2, "a test").unwrap();
    }

    #[test]
    fn an_absurd_task_count_is_refused_naming_a_limit() {
        let err = check_task_budget(1 << 40, "a huge ring").unwrap_err().to_string();
        assert!(err.contains("pid_max") || err.contains("threads-max"), "{err}");
    }

    #[test]
    fn open_files_within_soft_limit_is_fine() {
        ensure_open_files(16, "a test").unwrap();
        check_open_files_possible(16, "a test").unwrap();
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: `lim` is writable.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        if lim.rlim_max != libc::RLIM_INFINITY {
            let err = check_open_files_possible(lim.rlim_max + 1, "a test").unwrap_err().to_string();
            assert!(err.contains("RLIMIT_NOFILE") && err.contains("ulimit -n"), "{err}");
        }
    }
}
