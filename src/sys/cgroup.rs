//! A cgroup v2 group of a command's own, made for one run inside schedlab's own cgroup
//! (so it is no scheduling entity of its own beside the rest of the machine: that cgroup
//! holds processes, so no controller is enabled below it): every process the command
//! starts lands in it, so its time waiting for a CPU can be read from the group's PSI
//! (`cpu.pressure`), and whatever is still alive when the command exits is killed at once
//! (`cgroup.kill`). Made only where a cgroup v2 hierarchy is mounted and writable (root);
//! elsewhere callers fall back to a process group and say the figure is absent.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The prefix of the groups schedlab makes: `schedlab-<pid>` (one per trial process).
const PREFIX: &str = "schedlab-";

/// Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified`
/// beside a v1 hierarchy), from this process's mount table.
pub fn v2_mount() -> Option<PathBuf> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    table.lines().find_map(|line| {
        // "36 25 0:30 / /sys/fs/cgroup/unified rw,... shared:9 - cgroup2 cgroup2 rw,..."
        let (left, right) = line.split_once(" - ")?;
        let mount_point = left.split_whitespace().nth(4)?;
        (right.split_whitespace().next()? == "cgroup2").then(|| PathBuf::from(mount_point))
    })
}

/// This process's own cgroup v2 directory (`0::/path` in /proc/self/cgroup).
fn own_dir() -> Option<PathBuf> {
    let root = v2_mount()?;
    let table = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = table.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(root.join(rel.trim_start_matches('/')))
}

/// This process's own cgroup v2 directory, where groups of its own are made.
pub fn own_v2_dir() -> Option<PathBuf> {
    own_dir()
}

/// Remove the groups left by schedlab processes that no longer run (a trial killed
/// before it could clean up), killing whatever is still inside them.
pub fn sweep_orphans() {
    if let Some(dir) = own_dir() {
        sweep_orphans_in(&dir);
    }
}

/// One command's group. Dropping it kills what is left in it and removes it.
pub struct PrivateGroup {
    path: PathBuf,
    procs: OwnedFd,
}

impl PrivateGroup {
    /// A fresh group under the hierarchy's root; `None` where none can be made. Groups
    /// left by a schedlab that was killed outright are removed first.
    pub fn create() -> Option<PrivateGroup> {
        let parent = own_dir()?;
        sweep_orphans_in(&parent);
        // SAFETY: getpid cannot fail.
        let pid = unsafe { libc::getpid() };
        let path = parent.join(format!("{PREFIX}{pid}"));
        if std::fs::create_dir(&path).is_err() {
            // Left by an earlier process of this pid: a live one would be this one.
            let _ = std::fs::write(path.join("cgroup.kill"), "1");
            let _ = remove_when_empty(&path);
            std::fs::create_dir(&path).ok()?;
        }
        let procs = std::fs::OpenOptions::new().write(true).open(path.join("cgroup.procs")).map(OwnedFd::from);
        match procs {
            Ok(procs) => Some(PrivateGroup { path, procs }),
            Err(_) => {
                let _ = std::fs::remove_dir(&path);
                None
            }
        }
    }

    /// The open `cgroup.procs`: a child writes "0" to it between fork and exec to move
    /// itself in, so nothing it starts is ever outside the group.
    pub fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// The group's `some` CPU pressure total: the time in µs at least one of its tasks was
    /// runnable but not running.
    pub fn cpu_waiting_us(&self) -> Option<u64> {
        cpu_waiting_us_in(&self.path)
    }

    /// Kill every process still in the group and wait (up to 2 s) until they are gone;
    /// how many there were.
    pub fn kill_all(&self) -> u32 {
        kill_members(&self.path)
    }
}

/// A v2 group's `some` CPU pressure total (`cpu.pressure`), in µs.
pub fn cpu_waiting_us_in(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("cpu.pressure")).ok()?;
    let some = text.lines().find(|l| l.starts_with("some "))?;
    some.split_whitespace().find_map(|f| f.strip_prefix("total="))?.parse().ok()
}

/// The processes in a group (v1 or v2).
pub fn pids_in(dir: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Kill every process in a group (`cgroup.kill`, else each by pid) and wait up to 2 s
/// until it is empty; how many there were.
pub fn kill_members(dir: &Path) -> u32 {
    let members = pids_in(dir).len() as u32;
    if members == 0 {
        return 0;
    }
    if std::fs::write(dir.join("cgroup.kill"), "1").is_err() {
        // Kernels before 5.14 and v1 groups have no cgroup.kill: each member by pid.
        for pid in pids_in(dir) {
            // SAFETY: a signal to a process of a group schedlab made.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let until = Instant::now() + Duration::from_secs(2);
    while !pids_in(dir).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    members
}

impl Drop for PrivateGroup {
    fn drop(&mut self) {
        self.kill_all();
        // An empty group is removed with rmdir; its files go with it.
        let _ = remove_when_empty(&self.path);
    }
}

/// rmdir a group, retrying for up to 2 s while its last processes leave (EBUSY).
pub fn remove_when_empty(path: &Path) -> io::Result<()> {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match std::fs::remove_dir(path) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(5))
            }
            other => return other,
        }
    }
}

/// Remove the groups of schedlab processes that no longer run (killed before they could
/// clean up), killing anything still inside them.
fn sweep_orphans_in(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    let comm = crate::sys::process::own_comm();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(owner) = name.strip_prefix(PREFIX).and_then(|pid| pid.parse::<i32>().ok()) else {
            continue;
        };
        if crate::sys::process::is_running_as(owner, comm.as_deref()) {
            continue;
        }
        let path = entry.path();
        let _ = std::fs::write(path.join("cgroup.kill"), "1");
        let _ = remove_when_empty(&path);
    }
}
