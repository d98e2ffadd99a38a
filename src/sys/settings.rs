//! Switching the machine's settings for a side or a trial, checking that each switch took,
//! and always switching back.
//!
//! [`Switch::apply`] switches what a [`Settings`] names, in this order: sysctls, the
//! cpufreq governor, SMT, a sched_ext scheduler, a private cgroup. Before each change it
//! writes what it is about to change (the value it read, the group it is about to make, the
//! scheduler it started) to this process's state file (`settings-<pid>.json` in
//! [`state_dir`]); after it, it reads the setting back and refuses to go on (exit 2, naming
//! what it read) if it did not take. Dropping the [`Switch`] restores everything in reverse
//! order and removes the entries: at the end of a block or trial, on an error, and on
//! Ctrl-C, SIGTERM and SIGHUP (the orchestrator reads those as events, so the run unwinds
//! through the drop). A SIGKILL leaves the state file: [`recover`], run at the start of
//! every measuring command, restores what the files of schedlab processes that no longer
//! run name, and removes their groups.
//!
//! The cgroup side puts a trial's processes in a group of their own: cgroup v2 (`cpu.weight`,
//! `cpu.max`, `cpu.idle`) at the v2 root where the cpu controller is on v2, else cgroup v1
//! (`cpu.shares`, `cpu.cfs_quota_us`/`cpu.cfs_period_us`, `cpu.idle`) at the v1 cpu
//! hierarchy's root; with v1, a v2 group beside it gives the group's CPU pressure (PSI is
//! a v2 file). The trial process joins both between fork and exec, so everything it
//! starts is in them.

use crate::error::{Error, Result};
use crate::model::settings::{CgroupFigures, CgroupSetting, Settings};
use crate::sys::cgroup;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The prefix of the groups a switch makes: `schedlab-set-<pid>-<n>`.
const GROUP_PREFIX: &str = "schedlab-set-";

/// How long a sched_ext scheduler has to report itself enabled (or disabled after a stop).
const SCX_WAIT: Duration = Duration::from_secs(10);

/// One switched value, as the state file keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum SwitchedValue {
    /// A /proc/sys file and the value it had.
    Sysctl { name: String, was: String },
    /// A sysfs file (a governor, SMT control) and the value it had.
    Sysfs { path: PathBuf, was: String },
    /// A cgroup directory made for the settings.
    Cgroup { path: PathBuf },
    /// A sched_ext scheduler process started for the settings.
    Scx { pid: i32, binary: String },
}

/// This process's switched values, as its state file holds them.
#[derive(Default, Serialize, Deserialize)]
struct StateFile {
    pid: i32,
    entries: Vec<(u64, SwitchedValue)>,
}

static JOURNAL: Mutex<Vec<(u64, SwitchedValue)>> = Mutex::new(Vec::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Where state files go: `$SCHEDLAB_STATE_DIR`, else /run/schedlab for root, else
/// `$XDG_RUNTIME_DIR/schedlab`, else the temp directory's `schedlab-<uid>`.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SCHEDLAB_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    if uid == 0 {
        return PathBuf::from("/run/schedlab");
    }
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("schedlab"),
        None => std::env::temp_dir().join(format!("schedlab-{uid}")),
    }
}

fn state_path(pid: i32) -> PathBuf {
    state_dir().join(format!("settings-{pid}.json"))
}

fn own_pid() -> i32 {
    std::process::id() as i32
}

/// Write the journal to the state file (atomically: a new file renamed over the old), or
/// remove the file when nothing is switched.
fn save(journal: &[(u64, SwitchedValue)]) -> Result<()> {
    let path = state_path(own_pid());
    if journal.is_empty() {
        let _ = std::fs::remove_file(&path);
        return Ok(());
    }
    let failed = |e: std::io::Error| {
        Error::env(format!(
            "cannot write the settings state file {} (nothing was switched): {}",
            path.display(),
            crate::error::describe_io(&e)
        ))
    };
    let dir = state_dir();
    std::fs::create_dir_all(&dir).map_err(failed)?;
    let text = serde_json::to_vec(&StateFile { pid: own_pid(), entries: journal.to_vec() })
        .map_err(|e| Error::failed(format!("encoding the settings state: {e}")))?;
    let tmp = dir.join(format!(".settings-{}.tmp", own_pid()));
    let mut file = std::fs::File::create(&tmp).map_err(failed)?;
    file.write_all(&text).and_then(|_| file.sync_all()).map_err(failed)?;
    std::fs::rename(&tmp, &path).map_err(failed)
}

/// Note `entry` in the state file before the change it names is made.
fn remember(entry: SwitchedValue) -> Result<u64> {
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut journal = JOURNAL.lock().unwrap_or_else(|e| e.into_inner());
    journal.push((id, entry));
    if let Err(e) = save(&journal) {
        journal.pop();
        return Err(e);
    }
    Ok(id)
}

/// Drop entry `id` once what it names is restored.
fn forget(id: u64) {
    let mut journal = JOURNAL.lock().unwrap_or_else(|e| e.into_inner());
    journal.retain(|(i, _)| *i != id);
    if let Err(e) = save(&journal) {
        eprintln!("schedlab: warning: {e}");
    }
}

/// Undo one entry; an error says what could not be restored.
fn restore(entry: &SwitchedValue) -> std::result::Result<String, String> {
    match entry {
        SwitchedValue::Sysctl { name, was } => write_file(&sysctl_path(name), was)
            .map(|_| format!("sysctl {name} restored to {was}"))
            .map_err(|e| format!("cannot restore sysctl {name} to {was}: {e}")),
        SwitchedValue::Sysfs { path, was } => write_file(path, was)
            .map(|_| format!("{} restored to {was}", path.display()))
            .map_err(|e| format!("cannot restore {} to {was}: {e}", path.display())),
        SwitchedValue::Cgroup { path } => {
            if !path.exists() {
                return Ok(format!("cgroup {} was already gone", path.display()));
            }
            cgroup::kill_members(path);
            remove_dir_when_empty(path)
                .map(|_| format!("cgroup {} removed", path.display()))
                .map_err(|e| format!("cannot remove cgroup {}: {e}", path.display()))
        }
        SwitchedValue::Scx { pid, binary } => {
            let name = Path::new(binary).file_name().map(|n| n.to_string_lossy().into_owned());
            let comm: Option<String> = name.map(|n| n.chars().take(15).collect());
            if crate::sys::process::is_running_as(*pid, comm.as_deref()) {
                // SAFETY: a signal to the scheduler process the entry names, checked by name.
                unsafe { libc::kill(*pid, libc::SIGINT) };
                let until = Instant::now() + SCX_WAIT;
                while crate::sys::process::is_running_as(*pid, comm.as_deref()) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if crate::sys::process::is_running_as(*pid, comm.as_deref()) {
                    // SAFETY: as above.
                    unsafe { libc::kill(*pid, libc::SIGKILL) };
                }
            }
            wait_scx_state("disabled", SCX_WAIT);
            Ok(format!("sched_ext scheduler {binary} (pid {pid}) stopped"))
        }
    }
}

/// At a measuring command's start: restore what schedlab processes that no longer run
/// left switched (killed with SIGKILL, or by a power cut), and remove their groups. Each
/// thing restored is said on stderr. Never fails: what it cannot restore it says, and
/// leaves the file for the next start.
pub fn recover() -> Vec<String> {
    let mut said = Vec::new();
    let comm = crate::sys::process::own_comm();
    if let Ok(entries) = std::fs::read_dir(state_dir()) {
        for file in entries.flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix("settings-").and_then(|r| r.strip_suffix(".json")) else { continue };
            let Ok(pid) = pid.parse::<i32>() else { continue };
            if pid == own_pid() || crate::sys::process::is_running_as(pid, comm.as_deref()) {
                continue;
            }
            let Ok(text) = std::fs::read(file.path()) else { continue };
            let state: StateFile = serde_json::from_slice(&text).unwrap_or_default();
            let mut left = Vec::new();
            for (id, entry) in state.entries.iter().rev() {
                match restore(entry) {
                    Ok(done) => said.push(format!("{done} (left switched by schedlab {pid}, which was killed)")),
                    Err(e) => {
                        said.push(e);
                        left.push((*id, entry.clone()));
                    }
                }
            }
            if left.is_empty() {
                let _ = std::fs::remove_file(file.path());
            } else {
                left.reverse();
                let body = serde_json::to_vec(&StateFile { pid, entries: left }).unwrap_or_default();
                let _ = std::fs::write(file.path(), body);
            }
        }
    }
    // Groups whose state entry never reached the disk (killed between mkdir and save is
    // impossible, the entry comes first; a state directory removed by hand is not).
    for parent in group_parents() {
        said.extend(sweep_groups(&parent, comm.as_deref()));
    }
    said
}

/// [`recover`], saying what it restored on stderr.
pub fn recover_and_say() {
    for line in recover() {
        eprintln!("schedlab: {line}");
    }
}

fn group_parents() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    out.extend(v1_cpu_mount());
    out.extend(cgroup::v2_mount());
    out.extend(cgroup::own_v2_dir());
    out.dedup();
    out
}

fn sweep_groups(parent: &Path, comm: Option<&str>) -> Vec<String> {
    let mut said = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else { return said };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(GROUP_PREFIX) else { continue };
        let Some(Ok(owner)) = rest.split('-').next().map(str::parse::<i32>) else { continue };
        if owner == own_pid() || crate::sys::process::is_running_as(owner, comm) {
            continue;
        }
        let path = entry.path();
        cgroup::kill_members(&path);
        if remove_dir_when_empty(&path).is_ok() {
            said.push(format!("cgroup {} removed (left by schedlab {owner}, which was killed)", path.display()));
        }
    }
    said
}

fn sysctl_path(name: &str) -> PathBuf {
    Path::new("/proc/sys").join(name.replace('.', "/"))
}

fn read_file(path: &Path) -> std::result::Result<String, String> {
    std::fs::read_to_string(path).map(|t| t.trim().to_string()).map_err(|e| crate::error::describe_io(&e))
}

fn write_file(path: &Path, value: &str) -> std::result::Result<(), String> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path).map_err(|e| crate::error::describe_io(&e))?;
    file.write_all(format!("{value}\n").as_bytes()).map_err(|e| crate::error::describe_io(&e))
}

/// Whether this process may write `path` (access(2) with the effective ids).
fn writable(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: a valid C string.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Two readings of a setting are the same value: equal text, or equal numbers.
fn same_value(read: &str, asked: &str) -> bool {
    read == asked || matches!((read.parse::<i64>(), asked.parse::<i64>()), (Ok(a), Ok(b)) if a == b)
}

/// Where the v1 cpu controller is mounted (`/sys/fs/cgroup/cpu`, or `cpu,cpuacct`).
pub fn v1_cpu_mount() -> Option<PathBuf> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    table.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mount_point = left.split_whitespace().nth(4)?;
        let mut fields = right.split_whitespace();
        let (fstype, _, options) = (fields.next()?, fields.next()?, fields.next()?);
        (fstype == "cgroup" && options.split(',').any(|o| o == "cpu")).then(|| PathBuf::from(mount_point))
    })
}

/// Which hierarchy holds the cpu controller, and where groups for settings are made.
#[derive(Clone, Debug, PartialEq)]
enum Hierarchy {
    /// cgroup v2 with the cpu controller: groups at the root (`cpu.weight`, `cpu.max`).
    V2(PathBuf),
    /// cgroup v1's cpu controller (`cpu.shares`, `cpu.cfs_quota_us`).
    V1(PathBuf),
}

fn cpu_hierarchy() -> Option<Hierarchy> {
    if let Some(root) = cgroup::v2_mount() {
        let controllers = std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "cpu") {
            return Some(Hierarchy::V2(root));
        }
    }
    v1_cpu_mount().map(Hierarchy::V1)
}

/// The `governor` setting: every cpufreq policy offers it and may be switched.
fn check_governor(governor: &str) -> Result<()> {
    let policies = cpufreq_policies();
    if policies.is_empty() {
        return Err(Error::env(format!(
            "governor = \"{governor}\": this machine offers no cpufreq governor (/sys/devices/system/cpu/cpufreq \
             has no policy; a virtual machine usually has none)"
        )));
    }
    for policy in &policies {
        let available = read_file(&policy.join("scaling_available_governors")).unwrap_or_default();
        if !available.split_whitespace().any(|g| g == governor) {
            return Err(Error::env(format!("governor = \"{governor}\": {} offers only {available}", policy.display())));
        }
        if !writable(&policy.join("scaling_governor")) {
            return Err(Error::env(format!("governor = \"{governor}\": switching it needs root")));
        }
    }
    Ok(())
}

/// The `smt` setting: the machine offers switching SMT, and this user may.
fn check_smt(smt: &str) -> Result<()> {
    let control = Path::new("/sys/devices/system/cpu/smt/control");
    let state = read_file(control).unwrap_or_else(|_| "absent".into());
    if !matches!(state.as_str(), "on" | "off") {
        return Err(Error::env(format!(
            "smt = \"{smt}\": this machine does not offer switching SMT ({} reads {state})",
            control.display()
        )));
    }
    if !writable(control) {
        return Err(Error::env(format!("smt = \"{smt}\": switching it needs root")));
    }
    Ok(())
}

/// The `scx` setting: the kernel has sched_ext (or `none` asks for the kernel's own
/// scheduler), the scheduler's program is found, and this user may load it.
fn check_scx(scx: &str) -> Result<()> {
    let dir = Path::new("/sys/kernel/sched_ext");
    if !dir.exists() {
        if scx == "none" {
            // The kernel's own scheduler is the only one it has.
        } else {
            return Err(Error::env(format!(
                "scx = \"{scx}\": this kernel has no sched_ext (/sys/kernel/sched_ext is absent: it was built \
                 without CONFIG_SCHED_CLASS_EXT), so no BPF scheduler can be loaded"
            )));
        }
    } else if scx != "none" {
        scx_binary(scx)?;
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(Error::env(format!("scx = \"{scx}\": loading a sched_ext scheduler needs root")));
        }
    }
    Ok(())
}

/// The `cgroup` setting: a hierarchy with the cpu controller is mounted, a group may be
/// made in it, and the kernel has the files the setting writes.
fn check_cgroup(cgroup: &CgroupSetting) -> Result<()> {
    match cpu_hierarchy() {
        None => {
            return Err(Error::env(format!(
                "cgroup = {}: no cgroup hierarchy with the cpu controller is mounted (neither cgroup v2 with cpu \
                 in cgroup.controllers nor a v1 cpu hierarchy)",
                cgroup.text()
            )))
        }
        Some(Hierarchy::V2(root)) => {
            let enabled = read_file(&root.join("cgroup.subtree_control")).unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "cpu") {
                return Err(Error::env(format!(
                    "cgroup = {}: the cpu controller is not enabled for {}'s children (echo +cpu > {})",
                    cgroup.text(),
                    root.display(),
                    root.join("cgroup.subtree_control").display()
                )));
            }
            if !writable(&root) {
                return Err(Error::env(format!(
                    "cgroup = {}: making a group in {} needs root",
                    cgroup.text(),
                    root.display()
                )));
            }
        }
        Some(Hierarchy::V1(root)) => {
            if !writable(&root) {
                return Err(Error::env(format!(
                    "cgroup = {}: making a group in {} (cgroup v1 cpu) needs root",
                    cgroup.text(),
                    root.display()
                )));
            }
            if cgroup.max_us.is_some() && !root.join("cpu.cfs_quota_us").exists() {
                return Err(Error::env(format!(
                    "cgroup = {}: this kernel has no CFS bandwidth control (no cpu.cfs_quota_us in {}: \
                     CONFIG_CFS_BANDWIDTH is off)",
                    cgroup.text(),
                    root.display()
                )));
            }
            if cgroup.idle && !root.join("cpu.idle").exists() {
                return Err(Error::env(format!(
                    "cgroup = {}: this kernel has no cpu.idle in {}",
                    cgroup.text(),
                    root.display()
                )));
            }
        }
    }
    Ok(())
}

/// Check that `settings` can be switched here, by this user, before anything is: what is
/// absent, what needs root. Nothing is changed.
pub fn preflight(settings: &Settings) -> Result<()> {
    let what = |s: String| Error::env(s);
    for name in settings.sysctl.keys() {
        let path = sysctl_path(name);
        if !path.exists() {
            return Err(what(format!("sysctl {name}: this kernel has no such sysctl ({} is absent)", path.display())));
        }
        if !writable(&path) {
            return Err(what(format!(
                "sysctl {name}: switching it needs root ({} is not writable by this user)",
                path.display()
            )));
        }
    }
    if let Some(governor) = &settings.governor {
        check_governor(governor)?;
    }
    if let Some(smt) = &settings.smt {
        check_smt(smt)?;
    }
    if let Some(scx) = &settings.scx {
        check_scx(scx)?;
    }
    if let Some(cgroup) = &settings.cgroup {
        check_cgroup(cgroup)?;
    }
    Ok(())
}

/// Refuse what could hang the machine: RT throttling turned off while a trial puts
/// real-time tasks on every CPU (nothing else, the restore included, would run again).
pub fn refuse_dangerous(settings: &Settings, specs: &[&crate::families::TrialSpec]) -> Result<()> {
    let period = crate::sys::sched::RtThrottling::read().map_or(1_000_000, |t| t.period_us);
    if !settings.rt_throttling_off(period) {
        return Ok(());
    }
    let cpus = crate::sys::sched::allowed_cpus().map(|c| c.len()).unwrap_or(1).max(1);
    for spec in specs {
        if !matches!(spec.policy(), crate::model::Policy::Fifo | crate::model::Policy::Rr) {
            continue;
        }
        let tasks = spec.most_tasks(cpus);
        if tasks >= cpus {
            return Err(Error::usage(format!(
                "sysctl kernel.sched_rt_runtime_us = {} turns RT throttling off, and a {} trial runs {tasks} real-time \
                 task(s) on {cpus} CPU(s): with every CPU held by real-time tasks nothing else would run again, the \
                 restore included. Keep throttling on, or give the real-time trial fewer tasks than CPUs",
                settings.sysctl.get("kernel.sched_rt_runtime_us").map_or("-1", String::as_str),
                spec.family().as_str()
            )));
        }
    }
    Ok(())
}

fn cpufreq_policies() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir("/sys/devices/system/cpu/cpufreq")
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("policy")))
                .filter(|p| p.join("scaling_governor").exists())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The scheduler's program: `scx_NAME` (or NAME itself) on $PATH, or a path.
fn scx_binary(name: &str) -> Result<PathBuf> {
    let candidates =
        if name.starts_with("scx_") { vec![name.to_string()] } else { vec![format!("scx_{name}"), name.to_string()] };
    let path = std::env::var_os("PATH").unwrap_or_default();
    for candidate in &candidates {
        for dir in std::env::split_paths(&path) {
            let full = dir.join(candidate);
            if full.is_file() {
                return Ok(full);
            }
        }
    }
    Err(Error::env(format!(
        "scx = \"{name}\": no sched_ext scheduler program {} on $PATH (install the scx schedulers, e.g. the \
         distribution's scx-scheds package)",
        candidates.join(" or ")
    )))
}

fn scx_state() -> String {
    read_file(Path::new("/sys/kernel/sched_ext/state")).unwrap_or_else(|_| "absent".into())
}

fn scx_ops() -> String {
    read_file(Path::new("/sys/kernel/sched_ext/root/ops")).unwrap_or_default()
}

fn wait_scx_state(want: &str, limit: Duration) -> bool {
    if !Path::new("/sys/kernel/sched_ext").exists() {
        return want == "disabled";
    }
    let until = Instant::now() + limit;
    loop {
        if scx_state() == want {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The sched_ext scheduler a switch started.
struct Scx {
    child: std::process::Child,
    name: String,
    id: u64,
}

/// A private cgroup made for a setting.
struct PrivateCgroup {
    /// The group that holds the setting.
    path: PathBuf,
    hierarchy: &'static str,
    setting: String,
    /// Where its CPU pressure is read: the group itself on v2, a v2 group beside it on v1.
    psi: Option<PathBuf>,
    /// `cgroup.procs` of each group the trial process joins, open for writing.
    procs: Vec<OwnedFd>,
    /// State entries: the setting's group and the PSI group.
    ids: Vec<u64>,
}

/// A group's CPU figures at one moment.
#[derive(Clone, Copy, Debug, Default)]
pub struct GroupStat {
    nr_periods: u64,
    nr_throttled: u64,
    throttled_ns: u64,
    usage_ns: Option<u64>,
    pressure_ns: Option<u64>,
}

static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl PrivateCgroup {
    fn make(setting: &CgroupSetting) -> Result<PrivateCgroup> {
        let hierarchy = cpu_hierarchy().ok_or_else(|| Error::env("no cgroup hierarchy with the cpu controller"))?;
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{GROUP_PREFIX}{}-{serial}", own_pid());
        let (root, label) = match &hierarchy {
            Hierarchy::V2(root) => (root.clone(), "v2"),
            Hierarchy::V1(root) => (root.clone(), "v1"),
        };
        let mut group = PrivateCgroup {
            path: root.join(&name),
            hierarchy: label,
            setting: setting.text(),
            psi: None,
            procs: Vec::new(),
            ids: Vec::new(),
        };
        group.ids.push(remember(SwitchedValue::Cgroup { path: group.path.clone() })?);
        std::fs::create_dir(&group.path).map_err(|e| {
            Error::env(format!("cannot make cgroup {}: {}", group.path.display(), crate::error::describe_io(&e)))
        })?;
        let writes: Vec<(&str, String)> = match &hierarchy {
            Hierarchy::V2(_) => {
                let mut w = Vec::new();
                if let Some(weight) = setting.weight {
                    w.push(("cpu.weight", weight.to_string()));
                }
                if let Some((q, p)) = setting.max_us {
                    w.push(("cpu.max", format!("{q} {p}")));
                }
                if setting.idle {
                    w.push(("cpu.idle", "1".into()));
                }
                w
            }
            Hierarchy::V1(root) => {
                let mut w = Vec::new();
                // A real-time trial needs RT runtime in its group where RT group scheduling
                // is on (a new group has none): the root's, best effort.
                if let Ok(rt) = read_file(&root.join("cpu.rt_runtime_us")) {
                    let _ = write_file(&group.path.join("cpu.rt_runtime_us"), &rt);
                }
                if let Some(weight) = setting.weight {
                    w.push(("cpu.shares", (u64::from(weight) * 1024 / 100).max(2).to_string()));
                }
                if let Some((q, p)) = setting.max_us {
                    w.push(("cpu.cfs_period_us", p.to_string()));
                    w.push(("cpu.cfs_quota_us", q.to_string()));
                }
                if setting.idle {
                    w.push(("cpu.idle", "1".into()));
                }
                w
            }
        };
        for (file, value) in &writes {
            let path = group.path.join(file);
            write_file(&path, value).map_err(|e| {
                Error::env(format!("cgroup {}: cannot write {value} to {}: {e}", setting.text(), path.display()))
            })?;
            let read = read_file(&path).unwrap_or_else(|e| format!("nothing ({e})"));
            if !same_value(&read, value) {
                return Err(Error::env(format!(
                    "cgroup {}: wrote {value} to {} but it reads {read}: the setting did not take; nothing was measured",
                    setting.text(),
                    path.display()
                )));
            }
        }
        group.procs.push(open_procs(&group.path)?);
        match &hierarchy {
            Hierarchy::V2(_) => group.psi = Some(group.path.clone()),
            Hierarchy::V1(_) => {
                // PSI is a v2 file: a v2 group beside the v1 one, where v2 is mounted.
                if let Some(parent) = cgroup::own_v2_dir().filter(|p| writable(p)) {
                    let psi = parent.join(&name);
                    group.ids.push(remember(SwitchedValue::Cgroup { path: psi.clone() })?);
                    if std::fs::create_dir(&psi).is_ok() {
                        if let Ok(fd) = open_procs(&psi) {
                            group.procs.push(fd);
                            group.psi = Some(psi);
                        }
                    }
                }
            }
        }
        Ok(group)
    }

    fn stat(&self) -> GroupStat {
        let text = std::fs::read_to_string(self.path.join("cpu.stat")).unwrap_or_default();
        let field =
            |name: &str| text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse::<u64>().ok());
        let v2 = self.hierarchy == "v2";
        let usage_ns = if v2 { field("usage_usec").map(|u| u * 1_000) } else { None };
        GroupStat {
            nr_periods: field("nr_periods").unwrap_or(0),
            nr_throttled: field("nr_throttled").unwrap_or(0),
            throttled_ns: if v2 { field("throttled_usec").map(|u| u * 1_000) } else { field("throttled_time") }
                .unwrap_or(0),
            usage_ns,
            pressure_ns: self.psi.as_deref().and_then(pressure_some_ns),
        }
    }
}

impl Drop for PrivateCgroup {
    fn drop(&mut self) {
        self.procs.clear();
        let mut paths: Vec<PathBuf> = vec![self.path.clone()];
        paths.extend(self.psi.clone().filter(|p| *p != self.path));
        for path in &paths {
            cgroup::kill_members(path);
            if let Err(e) = remove_dir_when_empty(path) {
                if path.exists() {
                    eprintln!("schedlab: warning: cannot remove cgroup {}: {e}", path.display());
                    return;
                }
            }
        }
        for id in &self.ids {
            forget(*id);
        }
    }
}

fn open_procs(dir: &Path) -> Result<OwnedFd> {
    std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs")).map(OwnedFd::from).map_err(|e| {
        Error::env(format!("cannot open {}/cgroup.procs: {}", dir.display(), crate::error::describe_io(&e)))
    })
}

/// The `some` total of a v2 group's `cpu.pressure` (µs there), in ns.
fn pressure_some_ns(dir: &Path) -> Option<u64> {
    cgroup::cpu_waiting_us_in(dir).map(|us| us * 1_000)
}

fn remove_dir_when_empty(path: &Path) -> std::result::Result<(), String> {
    // Groups made inside it first (a command trial's own group, left by a trial killed
    // outright), with whatever still runs in them.
    if let Ok(entries) = std::fs::read_dir(path) {
        for child in entries.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())) {
            cgroup::kill_members(&child.path());
            remove_dir_when_empty(&child.path())?;
        }
    }
    match cgroup::remove_when_empty(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(crate::error::describe_io(&e)),
        _ => Ok(()),
    }
}

/// The machine switched as a [`Settings`] asks, until dropped.
pub struct Switch {
    /// Restored in reverse order on drop: (state entry, what it names).
    values: Vec<u64>,
    scx: Option<Scx>,
    group: Option<PrivateCgroup>,
}

impl Switch {
    /// Switch to `settings`, each value noted in the state file first and read back after;
    /// refuses (exit 2) when one did not take, with what was switched so far restored.
    pub fn apply(settings: &Settings) -> Result<Switch> {
        preflight(settings)?;
        refuse_held_elsewhere(settings)?;
        let mut switch = Switch { values: Vec::new(), scx: None, group: None };
        for (name, value) in &settings.sysctl {
            let path = sysctl_path(name);
            let was = read_file(&path).map_err(|e| Error::env(format!("sysctl {name}: cannot read it: {e}")))?;
            switch.set(SwitchedValue::Sysctl { name: name.clone(), was }, &path, value, &format!("sysctl {name}"))?;
        }
        if let Some(governor) = &settings.governor {
            for policy in cpufreq_policies() {
                let path = policy.join("scaling_governor");
                let was = read_file(&path).map_err(|e| Error::env(format!("{}: {e}", path.display())))?;
                switch.set(SwitchedValue::Sysfs { path: path.clone(), was }, &path, governor, "governor")?;
            }
        }
        if let Some(smt) = &settings.smt {
            let path = PathBuf::from("/sys/devices/system/cpu/smt/control");
            let was = read_file(&path).map_err(|e| Error::env(format!("{}: {e}", path.display())))?;
            switch.set(SwitchedValue::Sysfs { path: path.clone(), was }, &path, smt, "smt")?;
        }
        if let Some(scx) = &settings.scx {
            switch.start_scx(scx)?;
        }
        if let Some(cgroup) = &settings.cgroup {
            switch.group = Some(PrivateCgroup::make(cgroup)?);
        }
        Ok(switch)
    }

    /// Note, write and read back one value.
    fn set(&mut self, entry: SwitchedValue, path: &Path, value: &str, what: &str) -> Result<()> {
        let id = remember(entry)?;
        self.values.push(id);
        write_file(path, value)
            .map_err(|e| Error::env(format!("{what}: cannot write {value} to {}: {e}", path.display())))?;
        let read = read_file(path).unwrap_or_else(|e| format!("nothing ({e})"));
        if !same_value(&read, value) {
            return Err(Error::env(format!(
                "{what}: wrote {value} to {} but it reads {read}: the setting did not take; nothing was measured",
                path.display()
            )));
        }
        Ok(())
    }

    fn start_scx(&mut self, name: &str) -> Result<()> {
        let present = Path::new("/sys/kernel/sched_ext").exists();
        if name == "none" {
            if present && scx_state() != "disabled" {
                return Err(Error::env(format!(
                    "scx = \"none\": a sched_ext scheduler is loaded ({} reads {}, root/ops {}): stop it first",
                    "/sys/kernel/sched_ext/state",
                    scx_state(),
                    scx_ops()
                )));
            }
            return Ok(());
        }
        if scx_state() != "disabled" {
            return Err(Error::env(format!(
                "scx = \"{name}\": another sched_ext scheduler is loaded (state {}, root/ops {})",
                scx_state(),
                scx_ops()
            )));
        }
        let binary = scx_binary(name)?;
        let mut command = std::process::Command::new(&binary);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec: an empty signal mask
        // (the orchestrator blocks the ones it watches) and a process group of its own.
        unsafe {
            use std::os::unix::process::CommandExt;
            command.pre_exec(|| {
                let mut empty: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                libc::setpgid(0, 0);
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| {
            Error::env(format!(
                "scx = \"{name}\": cannot start {}: {}",
                binary.display(),
                crate::error::describe_io(&e)
            ))
        })?;
        let id = remember(SwitchedValue::Scx { pid: child.id() as i32, binary: binary.display().to_string() });
        let id = match id {
            Ok(id) => id,
            Err(e) => {
                let mut child = child;
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        let short = name.trim_start_matches("scx_").to_string();
        self.scx = Some(Scx { child, name: short.clone(), id });
        let until = Instant::now() + SCX_WAIT;
        loop {
            if let Some(scx) = self.scx.as_mut() {
                if let Ok(Some(status)) = scx.child.try_wait() {
                    return Err(Error::env(format!(
                        "scx = \"{name}\": {} exited ({status}) before the kernel enabled it",
                        binary.display()
                    )));
                }
            }
            if scx_state() == "enabled" && scx_ops().starts_with(&short) {
                return Ok(());
            }
            if Instant::now() >= until {
                return Err(Error::env(format!(
                    "scx = \"{name}\": not enabled within {} s of starting {}: /sys/kernel/sched_ext/state reads {}, \
                     root/ops reads '{}'",
                    SCX_WAIT.as_secs(),
                    binary.display(),
                    scx_state(),
                    scx_ops()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The `cgroup.procs` descriptors a trial process writes "0" to between fork and exec.
    pub fn join_fds(&self) -> Vec<RawFd> {
        self.group.as_ref().map(|g| g.procs.iter().map(|f| f.as_raw_fd()).collect()).unwrap_or_default()
    }

    /// The group's counters now (none without a cgroup setting).
    pub fn group_stat(&self) -> Option<GroupStat> {
        self.group.as_ref().map(PrivateCgroup::stat)
    }

    /// The group's figures between `before` and now.
    pub fn figures_since(&self, before: Option<GroupStat>) -> Option<CgroupFigures> {
        let group = self.group.as_ref()?;
        let (a, b) = (before?, group.stat());
        Some(CgroupFigures {
            hierarchy: group.hierarchy.to_string(),
            setting: group.setting.clone(),
            nr_periods: b.nr_periods.saturating_sub(a.nr_periods),
            nr_throttled: b.nr_throttled.saturating_sub(a.nr_throttled),
            throttled_ns: b.throttled_ns.saturating_sub(a.throttled_ns),
            usage_ns: b.usage_ns.zip(a.usage_ns).map(|(b, a)| b.saturating_sub(a)),
            cpu_pressure_ns: b.pressure_ns.zip(a.pressure_ns).map(|(b, a)| b.saturating_sub(a)),
        })
    }

    /// Why the switched state no longer holds (a sched_ext scheduler exited or was
    /// kicked out), if it does not.
    pub fn lost(&mut self) -> Option<String> {
        let scx = self.scx.as_mut()?;
        if let Ok(Some(status)) = scx.child.try_wait() {
            return Some(format!("the sched_ext scheduler {} exited during the trial ({status})", scx.name));
        }
        let (state, ops) = (scx_state(), scx_ops());
        if state != "enabled" || !ops.starts_with(&scx.name) {
            return Some(format!(
                "the sched_ext scheduler {} was no longer in charge after the trial (state {state}, root/ops '{ops}')",
                scx.name
            ));
        }
        None
    }
}

/// Refuse a sysctl another running schedlab has switched: its restore would undo ours
/// (or ours, its).
fn refuse_held_elsewhere(settings: &Settings) -> Result<()> {
    if settings.sysctl.is_empty() {
        return Ok(());
    }
    let comm = crate::sys::process::own_comm();
    let Ok(entries) = std::fs::read_dir(state_dir()) else { return Ok(()) };
    for file in entries.flatten() {
        let name = file.file_name().to_string_lossy().into_owned();
        let Some(Ok(pid)) = name.strip_prefix("settings-").and_then(|r| r.strip_suffix(".json")).map(str::parse::<i32>)
        else {
            continue;
        };
        if pid == own_pid() || !crate::sys::process::is_running_as(pid, comm.as_deref()) {
            continue;
        }
        let state: StateFile =
            std::fs::read(file.path()).ok().and_then(|t| serde_json::from_slice(&t).ok()).unwrap_or_default();
        for (_, entry) in &state.entries {
            if let SwitchedValue::Sysctl { name, .. } = entry {
                if settings.sysctl.contains_key(name) {
                    return Err(Error::env(format!(
                        "sysctl {name} is switched by another schedlab (pid {pid}) right now: wait for it to finish"
                    )));
                }
            }
        }
    }
    Ok(())
}

impl Drop for Switch {
    fn drop(&mut self) {
        // The group first (its members killed), then the scheduler, then the values.
        self.group = None;
        if let Some(mut scx) = self.scx.take() {
            // SAFETY: our own child, not yet reaped.
            unsafe { libc::kill(scx.child.id() as i32, libc::SIGINT) };
            let until = Instant::now() + SCX_WAIT;
            while !matches!(scx.child.try_wait(), Ok(Some(_))) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = scx.child.kill();
            let _ = scx.child.wait();
            if !wait_scx_state("disabled", SCX_WAIT) {
                eprintln!("schedlab: warning: sched_ext still reads {} after stopping {}", scx_state(), scx.name);
            }
            forget(scx.id);
        }
        let journal: Vec<(u64, SwitchedValue)> = JOURNAL.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for id in self.values.iter().rev() {
            let Some((_, entry)) = journal.iter().find(|(i, _)| i == id) else { continue };
            match restore(entry) {
                Ok(_) => forget(*id),
                Err(e) => eprintln!("schedlab: warning: {e}; the next schedlab start tries again"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_compare_as_numbers_or_text() {
        assert!(same_value("950000", "950000"));
        assert!(same_value("0950000", "950000"));
        assert!(!same_value("950000", "980000"));
        assert!(same_value("performance", "performance"));
    }

    #[test]
    fn the_v1_cpu_mount_is_found_where_there_is_one() {
        // On a machine with v1 cpu mounted, it is a directory holding cpu.shares.
        if let Some(path) = v1_cpu_mount() {
            assert!(path.join("cpu.shares").exists(), "{}", path.display());
        }
    }

    #[test]
    fn sched_ext_is_refused_by_name_where_the_kernel_has_none() {
        let scx = Settings { scx: Some("rusty".into()), ..Settings::default() };
        if Path::new("/sys/kernel/sched_ext").exists() {
            eprintln!("skipped: this kernel has sched_ext (CONFIG_SCHED_CLASS_EXT); the refusal is not reached");
            return;
        }
        let e = preflight(&scx).unwrap_err().to_string();
        assert!(e.contains("CONFIG_SCHED_CLASS_EXT"), "{e}");
        let none = Settings { scx: Some("none".into()), ..Settings::default() };
        assert!(preflight(&none).is_ok(), "the kernel's own scheduler is always there");
    }
}
