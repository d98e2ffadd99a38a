//! Recording the kernel's own account of a trial's measured window: stock scheduler and
//! interrupt tracepoints (`sched:*`, `irq:*`, `irq_vectors:local_timer_*`,
//! `timer:hrtimer_expire_*`) on the measured CPUs, through a private tracefs instance, the
//! way trace-cmd's `-B` and rtla do: the global buffer and the user's instances, events
//! and filters are never touched.
//!
//! A [`TraceSession`] makes `instances/schedlab-<pid>-<n>` with its own buffers, the `mono`
//! trace clock (CLOCK_MONOTONIC, the clock `sys::clock::monotonic_ns` and the measurement
//! kernels read) and a cpumask of the measured CPUs, and turns tracing on. Nothing of
//! schedlab runs on a measured CPU to drain it: the kernel writes the ring buffer and
//! [`TraceSession::stop`] reads it afterwards, from the orchestrator. A buffer that filled
//! overwrites its oldest events; the kernel counts them and so does the [`Recording`].
//!
//! Timestamps: the text of `per_cpu/cpuN/trace` shows a `mono` time in µs (the kernel
//! rounds ns to µs for every clock that counts in ns). Its `raw` option prints the same
//! events, in the same order, with the timestamp in ns and no fields; `stop` reads both and
//! pairs them line by line, checking that each pair agrees on the pid and on the µs. So
//! events carry ns; a CPU whose two readings do not pair (never seen) keeps µs, and
//! [`ReadStats::ns_resolution`] says so.
//!
//! The instance goes away when the session does (`stop`, or `Drop` on an error or a
//! panic); one left by a SIGKILLed schedlab, whose pid is dead, is removed by
//! [`sweep_stale`] at the next start. When tracefs is not mounted and we may mount it, the
//! session mounts it at /sys/kernel/tracing and unmounts it (lazily) when it ends. All
//! paths go through a descriptor of the `instances` directory, so a session keeps working
//! when another one unmounts tracefs under it.

use crate::analysis::trace::{EventKind, Recording, TaskRef, TraceEvent};
use crate::error::{describe_io, Error, Result};
use std::fmt;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where tracefs belongs, and where schedlab mounts it when nothing has.
pub const STANDARD_MOUNT: &str = "/sys/kernel/tracing";
/// Where it appears inside debugfs on kernels (or set-ups) that only mount that.
const DEBUGFS_MOUNT: &str = "/sys/kernel/debug/tracing";
/// The instances schedlab makes are named `schedlab-<pid>-<n>`.
const INSTANCE_PREFIX: &str = "schedlab-";
const MOUNT_HINT: &str = "mount it with `mount -t tracefs nodev /sys/kernel/tracing`";

/// The events recorded, as `<system>/<event>`; any the kernel lacks are skipped and named
/// by [`TraceSession::absent_events`], except `sched_switch`, without which nothing can be
/// said of what ran.
pub const EVENTS: [&str; 12] = [
    "sched/sched_switch",
    "sched/sched_waking",
    "sched/sched_wakeup",
    "sched/sched_migrate_task",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "irq_vectors/local_timer_entry",
    "irq_vectors/local_timer_exit",
    "timer/hrtimer_expire_entry",
    "timer/hrtimer_expire_exit",
];
const REQUIRED_EVENT: &str = "sched/sched_switch";

/// Why a trial cannot be traced: the measurement goes on and says "no attribution:
/// <reason>".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    reason: String,
}

impl Unavailable {
    fn new(reason: impl Into<String>) -> Unavailable {
        Unavailable { reason: reason.into() }
    }

    /// A refused file operation: a permission error is the user's to fix by running as
    /// root; anything else is named with its errno.
    fn from_io(doing: impl fmt::Display, err: &io::Error) -> Unavailable {
        match err.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => Unavailable::new("needs root"),
            _ => Unavailable::new(format!("{doing}: {}", describe_io(err))),
        }
    }

    /// "needs root", "tracefs is not available: ...": the user-facing reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.reason)
    }
}

impl std::error::Error for Unavailable {}

impl From<Unavailable> for Error {
    fn from(u: Unavailable) -> Error {
        Error::env(format!("no attribution: {}", u.reason))
    }
}

/// What reading a recording found besides its events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Lines of the buffers' text that are no event schedlab knows (lost-event notes,
    /// a format this parser does not read): skipped.
    pub unparsed_lines: u64,
    /// Every CPU's events carry ns timestamps; false when one kept the text's µs.
    pub ns_resolution: bool,
}

/// A private trace instance recording the events of some CPUs; see the module doc.
pub struct TraceSession {
    /// The tracefs `instances` directory, held open: every path goes through it.
    instances: File,
    name: String,
    cpus: Vec<usize>,
    absent: Vec<&'static str>,
    /// Set when this session mounted tracefs, which it then unmounts.
    mounted: Option<PathBuf>,
    removed: bool,
}

/// Numbers the instances of this process.
static NEXT_INSTANCE: AtomicUsize = AtomicUsize::new(0);

impl TraceSession {
    /// Start recording `cpus` into a new instance with `buffer_kb_per_cpu` of ring buffer
    /// per CPU. Removes stale instances first ([`sweep_stale`]).
    pub fn start(cpus: &[usize], buffer_kb_per_cpu: usize) -> std::result::Result<TraceSession, Unavailable> {
        if cpus.is_empty() {
            return Err(Unavailable::new("no CPU to record"));
        }
        let (mount_point, mounted) = find_or_mount_tracefs()?;
        let instances_path = mount_point.join("instances");
        let instances = match File::open(&instances_path) {
            Ok(f) => f,
            Err(e) => {
                if let Some(path) = &mounted {
                    unmount(path);
                }
                return Err(Unavailable::from_io(format!("cannot open {}", instances_path.display()), &e));
            }
        };
        let base = fd_path(&instances);
        sweep_in(&base);
        let (name, made) = make_instance(&base);
        // From here on `Drop` removes the instance (and unmounts) whatever fails.
        let mut session =
            TraceSession { instances, name, cpus: cpus.to_vec(), absent: Vec::new(), mounted, removed: false };
        if let Err(e) = made {
            session.removed = true;
            return Err(e);
        }
        session.configure(buffer_kb_per_cpu)?;
        Ok(session)
    }

    fn configure(&mut self, buffer_kb_per_cpu: usize) -> std::result::Result<(), Unavailable> {
        let dir = self.dir();
        // A new instance records at once: nothing until it is set up.
        write_setting(&dir, "tracing_on", "0")?;
        if let Some(&cpu) = self.cpus.iter().find(|&&cpu| !dir.join(format!("per_cpu/cpu{cpu}")).is_dir()) {
            return Err(Unavailable::new(format!("CPU {cpu} is not on this machine")));
        }
        write_setting(&dir, "trace_clock", "mono")
            .map_err(|e| Unavailable::new(format!("this kernel's tracefs has no `mono` trace clock ({})", e.reason)))?;
        write_setting(&dir, "tracing_cpumask", &cpumask_hex(&self.cpus))?;
        write_setting(&dir, "buffer_size_kb", &buffer_kb_per_cpu.to_string()).map_err(|e| {
            Unavailable::new(format!("cannot have {buffer_kb_per_cpu} kB of trace buffer per CPU ({})", e.reason))
        })?;
        for event in EVENTS {
            match std::fs::write(dir.join("events").join(event).join("enable"), "1") {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => self.absent.push(event),
                Err(e) => return Err(Unavailable::from_io(format!("cannot enable the {event} tracepoint"), &e)),
            }
        }
        if self.absent.contains(&REQUIRED_EVENT) {
            return Err(Unavailable::new(format!("this kernel has no {REQUIRED_EVENT} tracepoint")));
        }
        write_setting(&dir, "tracing_on", "1")
    }

    /// The events this kernel lacks (`<system>/<event>`), not recorded.
    #[cfg(test)]
    pub fn absent_events(&self) -> &[&'static str] {
        &self.absent
    }

    /// Stop recording, read every recorded CPU's events and remove the instance.
    pub fn stop(self) -> Result<Recording> {
        self.stop_with_stats().map(|(recording, _)| recording)
    }

    /// [`stop`](Self::stop), with what the reading skipped and the resolution it reached.
    pub fn stop_with_stats(mut self) -> Result<(Recording, ReadStats)> {
        let dir = self.dir();
        let setting_error = |u: Unavailable| Error::env(format!("trace instance {}: {u}", self.name));
        write_setting(&dir, "tracing_on", "0").map_err(setting_error)?;
        let mut recording = Recording::default();
        let mut stats = ReadStats { unparsed_lines: 0, ns_resolution: true };
        // The options shape only how the buffer is printed: set them for the reading.
        for (option, value) in TEXT_OPTIONS {
            set_option(&dir, option, value).map_err(setting_error)?;
        }
        let mut raw = Vec::with_capacity(self.cpus.len());
        set_option(&dir, "raw", "1").map_err(setting_error)?;
        for &cpu in &self.cpus {
            raw.push(read_file(&dir.join(format!("per_cpu/cpu{cpu}/trace")))?);
        }
        set_option(&dir, "raw", "0").map_err(setting_error)?;
        for (&cpu, raw) in self.cpus.iter().zip(&raw) {
            let text = read_file(&dir.join(format!("per_cpu/cpu{cpu}/trace")))?;
            let parsed = parse_cpu_buffer(&text, raw);
            stats.unparsed_lines += parsed.unparsed_lines;
            stats.ns_resolution &= parsed.ns_resolution;
            recording.events.extend(parsed.events);
            let cpu_stats = read_file(&dir.join(format!("per_cpu/cpu{cpu}/stats")))?;
            recording.lost.push((cpu, lost_events(&cpu_stats)));
        }
        // Stable: each CPU's events are in order already, and stay so at equal times.
        recording.events.sort_by_key(|e| e.ts_ns);
        self.remove()?;
        Ok((recording, stats))
    }

    /// The instance's directory, through the held descriptor.
    fn dir(&self) -> PathBuf {
        fd_path(&self.instances).join(&self.name)
    }

    /// Remove the instance (once) and unmount what this session mounted.
    fn remove(&mut self) -> Result<()> {
        let removed = match std::mem::replace(&mut self.removed, true) {
            true => Ok(()),
            false => remove_instance(&self.dir()),
        };
        if let Some(path) = self.mounted.take() {
            unmount(&path);
        }
        removed.map_err(|e| Error::os(format!("cannot remove trace instance {} (remove it with rmdir)", self.name), e))
    }
}

/// Tries at removing an instance that is busy, 5 ms apart.
const RMDIR_TRIES: u32 = 20;

/// rmdir, again while it is busy (EBUSY): a process forked at the moment one of the
/// instance's files was open holds that file until it execs or exits.
fn remove_instance(dir: &Path) -> io::Result<()> {
    let mut tries = 1;
    loop {
        match std::fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < RMDIR_TRIES => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            done => return done,
        }
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        if let Err(e) = self.remove() {
            eprintln!("schedlab: warning: {e}");
        }
    }
}

/// Remove the instances that a schedlab whose pid is dead left behind (SIGKILLed: no
/// `Drop` ran); returns how many. Does nothing when tracefs is not mounted.
pub fn sweep_stale() -> usize {
    let Some(mount_point) = mounts_text().as_deref().and_then(tracefs_mount_point) else { return 0 };
    sweep_in(&mount_point.join("instances"))
}

fn sweep_in(instances: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(instances) else { return 0 };
    entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| instance_owner(name).is_some_and(|pid| !pid_alive(pid)))
        // A failure (EBUSY: someone holds one of its files open) leaves it to a later sweep.
        .filter(|name| std::fs::remove_dir(instances.join(name)).is_ok())
        .count()
}

/// The pid in an instance name `schedlab-<pid>-<n>`; `None` for anything else.
fn instance_owner(name: &str) -> Option<u64> {
    let (pid, n) = name.strip_prefix(INSTANCE_PREFIX)?.split_once('-')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(pid) || !all_digits(n) {
        return None;
    }
    // Too many digits for a u64 is no pid that can be alive.
    Some(pid.parse().unwrap_or(u64::MAX))
}

fn pid_alive(pid: u64) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    let exists = rc == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    // A zombie has ended and will never remove its instance: only its exit status is
    // left to collect, which an orphan's init may do seconds later (or never).
    exists && !matches!(crate::sys::process::comm_and_state(pid), Some((_, 'Z' | 'X' | 'x')))
}

/// Make `instances/schedlab-<pid>-<n>`, passing over names a dead process with our pid
/// left (a stale one still busy). Returns the name tried last.
fn make_instance(instances: &Path) -> (String, std::result::Result<(), Unavailable>) {
    loop {
        let name = format!("{INSTANCE_PREFIX}{}-{}", std::process::id(), NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed));
        match std::fs::create_dir(instances.join(&name)) {
            Ok(()) => return (name, Ok(())),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return (name, Err(Unavailable::from_io("cannot make a trace instance", &e))),
        }
    }
}

/// The tracefs mount point, mounting it at the standard place when none is and we may;
/// the second value is set when we mounted it.
fn find_or_mount_tracefs() -> std::result::Result<(PathBuf, Option<PathBuf>), Unavailable> {
    if let Some(found) = mounts_text().as_deref().and_then(tracefs_mount_point) {
        return Ok((found, None));
    }
    let filesystems = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !filesystems.lines().any(|l| l.split_whitespace().last() == Some("tracefs")) {
        return Err(Unavailable::new("this kernel has no tracefs (it needs CONFIG_FTRACE)"));
    }
    let target = PathBuf::from(STANDARD_MOUNT);
    let mounted = mount_tracefs(&target);
    // EBUSY: another session mounted it since /proc/mounts was read; use theirs.
    if mounted.as_ref().is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY)) {
        if let Some(found) = mounts_text().as_deref().and_then(tracefs_mount_point) {
            return Ok((found, None));
        }
    }
    mounted.map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM | libc::EACCES) => {
            Unavailable::new(format!("needs root (tracefs is not mounted; {MOUNT_HINT})"))
        }
        _ => Unavailable::new(format!(
            "tracefs is not available: mounting it at {STANDARD_MOUNT} failed: {}; {MOUNT_HINT}",
            describe_io(&e)
        )),
    })?;
    Ok((target.clone(), Some(target)))
}

fn mount_tracefs(target: &Path) -> io::Result<()> {
    let target = crate::sys::fd::c_path(target)?;
    // SAFETY: NUL-terminated strings that outlive the call; tracefs takes no data.
    let rc = unsafe { libc::mount(c"nodev".as_ptr(), target.as_ptr(), c"tracefs".as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Detach the mount: a session still holding a descriptor into it keeps working. A mount
/// that is busy or already gone is left as it is.
fn unmount(target: &Path) {
    let Ok(target) = crate::sys::fd::c_path(target) else { return };
    // SAFETY: a NUL-terminated path that outlives the call.
    unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
}

fn mounts_text() -> Option<String> {
    std::fs::read_to_string("/proc/mounts").ok()
}

/// The tracefs mount point in the text of /proc/mounts: the standard place if it is
/// there, else the debugfs one, else any.
pub fn tracefs_mount_point(mounts: &str) -> Option<PathBuf> {
    let points: Vec<String> = mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let (_source, point, fstype) = (fields.next()?, fields.next()?, fields.next()?);
            (fstype == "tracefs").then(|| unescape_mount_field(point))
        })
        .collect();
    let preferred = [STANDARD_MOUNT, DEBUGFS_MOUNT].into_iter().find(|p| points.iter().any(|q| q == p));
    preferred.map(str::to_string).or_else(|| points.into_iter().next()).map(PathBuf::from)
}

/// /proc/mounts writes a space, tab, newline or backslash in a path as `\ooo` (octal).
fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal =
            bytes.get(i + 1..i + 4).filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |v, b| v.wrapping_mul(8).wrapping_add(b - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A path that reaches a held directory through its descriptor, even once unmounted.
fn fd_path(dir: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()))
}

fn write_setting(dir: &Path, file: &str, value: &str) -> std::result::Result<(), Unavailable> {
    std::fs::write(dir.join(file), value)
        .map_err(|e| Unavailable::from_io(format!("cannot write {value:?} to the instance's {file}"), &e))
}

/// Options shaping the text: the default layout (`task-pid [cpu] flags time: event:
/// fields`), whatever the global instance's options were when ours was made (an instance
/// inherits them). `raw` is set apart, for the ns pass.
const TEXT_OPTIONS: [(&str, &str); 8] = [
    ("context-info", "1"),
    ("irq-info", "1"),
    ("record-tgid", "0"),
    ("latency-format", "0"),
    ("verbose", "0"),
    ("hex", "0"),
    ("bin", "0"),
    ("fields", "0"),
];

/// Options a kernel lacks (`fields` is recent) are fine: their default is the layout.
fn set_option(dir: &Path, option: &str, value: &str) -> std::result::Result<(), Unavailable> {
    match std::fs::write(dir.join("options").join(option), value) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other.map_err(|e| Unavailable::from_io(format!("cannot set the instance's option {option}"), &e)),
    }
}

fn read_file(path: &Path) -> Result<String> {
    std::fs::read(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|e| Error::os(format!("cannot read {}", path.display()), e))
}

/// `tracing_cpumask`'s format: hex, in comma-separated groups of 32 CPUs, highest first
/// (CPUs 0 and 33: `2,00000001`).
pub fn cpumask_hex(cpus: &[usize]) -> String {
    let groups = cpus.iter().max().map_or(1, |&max| max / 32 + 1);
    let mut words = vec![0u32; groups];
    for &cpu in cpus {
        words[cpu / 32] |= 1 << (cpu % 32);
    }
    let mut text = format!("{:x}", words[groups - 1]);
    for word in words[..groups - 1].iter().rev() {
        text.push_str(&format!(",{word:08x}"));
    }
    text
}

/// The events a CPU's buffer lost, from its `stats` file: overwritten when full
/// (`overrun`), lost to nested writers (`commit overrun`), refused (`dropped events`).
pub fn lost_events(stats: &str) -> u64 {
    stats
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(key.trim(), "overrun" | "commit overrun" | "dropped events")
                .then(|| value.trim().parse::<u64>().ok())?
        })
        .sum::<u64>()
}

/// One CPU's buffer, read.
struct CpuEvents {
    events: Vec<TraceEvent>,
    unparsed_lines: u64,
    ns_resolution: bool,
}

/// Parse one CPU's text, taking each event's ns timestamp from the same line of the
/// `raw` reading (`<pid> <cpu> <ns> type: <id>`) when the two pair line for line.
fn parse_cpu_buffer(text: &str, raw: &str) -> CpuEvents {
    let (text_lines, raw_lines) = (entry_lines(text), entry_lines(raw));
    let parsed: Vec<Option<TextLine>> = text_lines.iter().map(|l| parse_text_line(l)).collect();
    let unparsed_lines = parsed.iter().filter(|p| p.is_none()).count() as u64;
    let ns: Option<Vec<u64>> = (text_lines.len() == raw_lines.len())
        .then(|| parsed.iter().zip(&raw_lines).filter_map(|(p, raw)| Some((p.as_ref()?, raw))).map(pair_ns).collect())
        .flatten();
    let ns_resolution = ns.is_some();
    let mut ns = ns.unwrap_or_default().into_iter();
    let events = parsed
        .into_iter()
        .flatten()
        .map(|line| TraceEvent {
            cpu: line.cpu,
            ts_ns: ns.next().unwrap_or(line.ts_us.saturating_mul(1000)),
            kind: line.kind,
        })
        .collect();
    CpuEvents { events, unparsed_lines, ns_resolution }
}

/// The lines that print an entry of the buffer (not the `#` header).
fn entry_lines(buffer: &str) -> Vec<&str> {
    buffer.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect()
}

/// The ns timestamp of a raw line, if it is the same event as the text line: same pid,
/// and the ns round (or cut) to the text's µs.
fn pair_ns((text, raw): (&TextLine, &&str)) -> Option<u64> {
    let mut fields = raw.split_ascii_whitespace();
    let pid: i32 = fields.next()?.parse().ok()?;
    let _cpu = fields.next()?;
    let ns: u64 = fields.next()?.parse().ok()?;
    let agrees = pid == text.pid && (ns / 1000 == text.ts_us || (ns + 500) / 1000 == text.ts_us);
    agrees.then_some(ns)
}

/// A line of a buffer's text, with what the pairing needs.
#[derive(Debug, PartialEq)]
struct TextLine {
    pid: i32,
    cpu: usize,
    ts_us: u64,
    kind: EventKind,
}

/// One line of this kernel's trace text, as an event with its µs timestamp in ns;
/// `None` for anything else. The line is `<comm>-<pid> [<cpu>] <flags> <s>.<µs>:
/// <event>: <fields>`; the comm may hold spaces, dashes and brackets, so the fixed part
/// after it is looked for, and tasks are read from the event's own fields.
#[cfg(test)]
pub fn parse_line(line: &str) -> Option<TraceEvent> {
    let line = parse_text_line(line)?;
    Some(TraceEvent { cpu: line.cpu, ts_ns: line.ts_us.checked_mul(1000)?, kind: line.kind })
}

fn parse_text_line(line: &str) -> Option<TextLine> {
    // A comm of at most 15 bytes cannot hold a whole `[cpu] flags time: event: ` part,
    // so the first '[' from which one parses is the real one.
    line.match_indices('[').find_map(|(at, _)| {
        let (cpu, ts_us, event, fields) = parse_context(&line[at..])?;
        let pid = task_pid(&line[..at])?;
        Some(TextLine { pid, cpu, ts_us, kind: parse_event(event, fields)? })
    })
}

/// `[001] d.h1.  2207.725694: irq_handler_entry: irq=36 ...` -> (1, µs, event, fields).
fn parse_context(s: &str) -> Option<(usize, u64, &str, &str)> {
    let (cpu, rest) = s.strip_prefix('[')?.split_once(']')?;
    let cpu = parse_digits(cpu)?;
    let mut rest = rest.strip_prefix(' ')?.trim_start();
    // The flags column is there unless irq-info is off.
    let (first, after) = rest.split_once(' ')?;
    if parse_timestamp(first).is_none() {
        rest = after.trim_start();
    }
    let (ts, rest) = rest.split_once(' ')?;
    let ts_us = parse_timestamp(ts)?;
    let (event, fields) = rest.split_once(": ")?;
    if event.is_empty() || !event.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    Some((cpu, ts_us, event, fields))
}

/// `2207.725694:` -> µs.
fn parse_timestamp(token: &str) -> Option<u64> {
    let (secs, micros) = token.strip_suffix(':')?.split_once('.')?;
    if micros.len() != 6 {
        return None;
    }
    parse_digits::<u64>(secs)?.checked_mul(1_000_000)?.checked_add(parse_digits(micros)?)
}

/// The pid at the end of `   <comm>-<pid>   ` (and a `(tgid)` column, if one was printed).
fn task_pid(prefix: &str) -> Option<i32> {
    let mut prefix = prefix.trim_end();
    if prefix.ends_with(')') {
        prefix = prefix[..prefix.rfind('(')?].trim_end();
    }
    parse_digits(prefix.rsplit_once('-')?.1)
}

fn parse_digits<T: std::str::FromStr>(s: &str) -> Option<T> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_int(s: &str) -> Option<i32> {
    match s.strip_prefix('-') {
        Some(digits) => parse_digits::<i32>(digits).map(|v| -v),
        None => parse_digits(s),
    }
}

fn parse_event(event: &str, fields: &str) -> Option<EventKind> {
    Some(match event {
        "sched_switch" => parse_switch(fields)?,
        "sched_waking" | "sched_wakeup" => {
            let (rest, target) = fields.rsplit_once(" target_cpu=")?;
            let (task, target_cpu) = (parse_task(rest, "comm=", " pid=", " prio=")?, parse_digits(target)?);
            match event {
                "sched_waking" => EventKind::Waking { task, target_cpu },
                _ => EventKind::Wakeup { task, target_cpu },
            }
        }
        "sched_migrate_task" => {
            let (rest, dest) = fields.rsplit_once(" dest_cpu=")?;
            let (rest, orig) = rest.rsplit_once(" orig_cpu=")?;
            EventKind::Migrate {
                task: parse_task(rest, "comm=", " pid=", " prio=")?,
                orig_cpu: parse_digits(orig)?,
                dest_cpu: parse_digits(dest)?,
            }
        }
        "irq_handler_entry" => {
            let (irq, name) = fields.strip_prefix("irq=")?.split_once(" name=")?;
            EventKind::IrqEntry { irq: parse_digits(irq)?, name: name.to_string() }
        }
        "irq_handler_exit" => {
            EventKind::IrqExit { irq: parse_digits(fields.strip_prefix("irq=")?.split_once(' ')?.0)? }
        }
        "softirq_entry" => {
            let (vec, action) = parse_softirq(fields)?;
            EventKind::SoftirqEntry { vec, name: action.to_string() }
        }
        "softirq_exit" => EventKind::SoftirqExit { vec: parse_softirq(fields)?.0 },
        "local_timer_entry" => EventKind::LocalTimerEntry,
        "local_timer_exit" => EventKind::LocalTimerExit,
        "hrtimer_expire_entry" => {
            let (rest, _now) = fields.rsplit_once(" now=")?;
            let (_timer, function) = rest.split_once(" function=")?;
            EventKind::HrtimerExpireEntry { function: function.to_string() }
        }
        "hrtimer_expire_exit" => EventKind::HrtimerExpireExit,
        _ => return None,
    })
}

/// `vec=1 [action=TIMER]` -> (1, "TIMER").
fn parse_softirq(fields: &str) -> Option<(u32, &str)> {
    let (vec, action) = fields.strip_prefix("vec=")?.split_once(" [action=")?;
    Some((parse_digits(vec)?, action.strip_suffix(']')?))
}

/// `<comm_key><comm><pid_key><pid><prio_key><prio>`, read from the right: the numbers
/// hold no spaces, so the comm is whatever is left, spaces and all.
fn parse_task(fields: &str, comm_key: &str, pid_key: &str, prio_key: &str) -> Option<TaskRef> {
    let (rest, prio) = fields.rsplit_once(prio_key)?;
    let (rest, pid) = rest.rsplit_once(pid_key)?;
    let comm = rest.strip_prefix(comm_key)?;
    Some(TaskRef { comm: comm.to_string(), pid: parse_int(pid)?, prio: parse_int(prio)? })
}

/// `prev_comm=A prev_pid=1 prev_prio=2 prev_state=S ==> next_comm=B next_pid=3
/// next_prio=4`. The two comms are free text: the split between them is the first
/// ` ==> next_comm=` whose left side reads as a whole previous task.
fn parse_switch(fields: &str) -> Option<EventKind> {
    const ARROW: &str = " ==> next_comm=";
    let (rest, next_prio) = fields.rsplit_once(" next_prio=")?;
    let (rest, next_pid) = rest.rsplit_once(" next_pid=")?;
    rest.match_indices(ARROW).find_map(|(at, _)| {
        let (prev_fields, next_comm) = (&rest[..at], &rest[at + ARROW.len()..]);
        let (prev_fields, prev_state) = prev_fields.rsplit_once(" prev_state=")?;
        if prev_state.is_empty() || prev_state.contains(' ') {
            return None;
        }
        Some(EventKind::Switch {
            prev: parse_task(prev_fields, "prev_comm=", " prev_pid=", " prev_prio=")?,
            prev_state: prev_state.to_string(),
            next: TaskRef { comm: next_comm.to_string(), pid: parse_int(next_pid)?, prio: parse_int(next_prio)? },
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::clock::monotonic_ns;

    fn task(comm: &str, pid: i32, prio: i32) -> TaskRef {
        TaskRef { comm: comm.to_string(), pid, prio }
    }

    fn kind(line: &str) -> EventKind {
        parse_line(line).unwrap_or_else(|| panic!("did not parse: {line}")).kind
    }

    // Verbatim lines of per_cpu/cpuN/trace on Linux 6.18 (the test VM), `mono` clock.
    const SWITCH: &str = "            bash-8999    [000] d..2.  2207.724733: sched_switch: prev_comm=bash \
                          prev_pid=8999 prev_prio=120 prev_state=S ==> next_comm=bash next_pid=9008 next_prio=120";

    #[test]
    fn scheduler_lines_parse_with_their_tasks() {
        assert_eq!(
            parse_line(SWITCH),
            Some(TraceEvent {
                cpu: 0,
                ts_ns: 2_207_724_733_000,
                kind: EventKind::Switch {
                    prev: task("bash", 8999, 120),
                    prev_state: "S".into(),
                    next: task("bash", 9008, 120)
                },
            })
        );
        let preempted =
            "           sleep-9008    [000] d..2.  2207.725212: sched_switch: prev_comm=bash prev_pid=9008 \
                         prev_prio=120 prev_state=R+ ==> next_comm=migration/0 next_pid=18 next_prio=0";
        assert_eq!(
            kind(preempted),
            EventKind::Switch {
                prev: task("bash", 9008, 120),
                prev_state: "R+".into(),
                next: task("migration/0", 18, 0)
            }
        );
        let waking = "           sleep-9008    [000] d..3.  2207.724874: sched_waking: comm=migration/0 pid=18 prio=0 \
                      target_cpu=000";
        assert_eq!(kind(waking), EventKind::Waking { task: task("migration/0", 18, 0), target_cpu: 0 });
        let wakeup = "          <idle>-0       [000] dNh4.  2207.726015: sched_wakeup: comm=memfd:sealed-91 pid=8580 \
                      prio=120 target_cpu=000";
        let parsed = parse_line(wakeup).unwrap();
        assert_eq!((parsed.cpu, parsed.ts_ns), (0, 2_207_726_015_000));
        assert_eq!(parsed.kind, EventKind::Wakeup { task: task("memfd:sealed-91", 8580, 120), target_cpu: 0 });
        let migrate =
            "     migration/0-18      [000] d..3.  2207.725217: sched_migrate_task: comm=bash pid=9008 prio=120 \
                       orig_cpu=0 dest_cpu=1";
        assert_eq!(kind(migrate), EventKind::Migrate { task: task("bash", 9008, 120), orig_cpu: 0, dest_cpu: 1 });
    }

    #[test]
    fn interrupt_and_timer_lines_parse() {
        let lines = [
            "          <idle>-0       [001] d.h1.  2207.725694: irq_handler_entry: irq=36 name=virtio1-req.0",
            "          <idle>-0       [001] d.h1.  2207.725698: irq_handler_exit: irq=36 ret=handled",
            "          <idle>-0       [000] ..s1.  2207.728045: softirq_entry: vec=1 [action=TIMER]",
            "          <idle>-0       [000] ..s1.  2207.728063: softirq_exit: vec=9 [action=RCU]",
            "          <idle>-0       [000] d.h1.  2207.726010: local_timer_entry: vector=236",
            "          <idle>-0       [000] dNh1.  2207.726023: local_timer_exit: vector=236",
            "          <idle>-0       [000] d.h1.  2207.726011: hrtimer_expire_entry: hrtimer=000000005f8d347f \
             function=hrtimer_wakeup now=2207726010207",
            "          <idle>-0       [000] dNh1.  2207.726015: hrtimer_expire_exit: hrtimer=000000005f8d347f",
        ];
        let kinds: Vec<EventKind> = lines.iter().map(|l| kind(l)).collect();
        assert_eq!(
            kinds,
            [
                EventKind::IrqEntry { irq: 36, name: "virtio1-req.0".into() },
                EventKind::IrqExit { irq: 36 },
                EventKind::SoftirqEntry { vec: 1, name: "TIMER".into() },
                EventKind::SoftirqExit { vec: 9 },
                EventKind::LocalTimerEntry,
                EventKind::LocalTimerExit,
                EventKind::HrtimerExpireEntry { function: "hrtimer_wakeup".into() },
                EventKind::HrtimerExpireExit,
            ]
        );
        assert_eq!(parse_line(lines[0]).unwrap().cpu, 1);
    }

    /// Comms are free text: spaces, dashes, brackets, even the field names themselves.
    #[test]
    fn odd_comms_are_read_from_the_fields() {
        let switch = |prev: TaskRef, prev_state: &str, next: TaskRef| EventKind::Switch {
            prev,
            prev_state: prev_state.into(),
            next,
        };
        let cases = [
            (
                " kworker/0:1H-kblockd-51 [001] d..2.  2207.800001: sched_switch: prev_comm=Web Content \
                 prev_pid=4242 prev_prio=120 prev_state=D ==> next_comm=kworker/0:1H-kblockd next_pid=51 next_prio=100",
                (1, 2_207_800_001_000),
                switch(task("Web Content", 4242, 120), "D", task("kworker/0:1H-kblockd", 51, 100)),
            ),
            (
                "  [000] x 1.0-7 [000] d..2.    12.000003: sched_switch: prev_comm=a prev_pid=1 prev_prio=2 \
                 prev_state=S ==> next_comm=b next_pid=3 next_prio=4 next_pid=5 next_prio=-1",
                (0, 12_000_003_000),
                switch(task("a", 1, 2), "S", task("b next_pid=3 next_prio=4", 5, -1)),
            ),
        ];
        for (line, at, kind) in cases {
            let parsed = parse_line(line).unwrap();
            assert_eq!(((parsed.cpu, parsed.ts_ns), parsed.kind), (at, kind), "{line}");
        }
        let spaced =
            "   Web Content-4242    [001] d..3.  2207.900000: sched_waking: comm=Web Content pid=4242 prio=120 \
                      target_cpu=001";
        assert_eq!(
            parse_text_line(spaced).map(|l| (l.pid, l.kind)),
            Some((4242, EventKind::Waking { task: task("Web Content", 4242, 120), target_cpu: 1 }))
        );
    }

    #[test]
    fn other_lines_are_skipped() {
        for line in [
            "# tracer: nop",
            "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION",
            "CPU:0 [LOST 12 EVENTS]",
            "          <idle>-0       [000] ..s1.  2207.728045: softirq_raise: vec=1 [action=TIMER]",
            "          <idle>-0       [000] d..2.  2207.724733: sched_switch: prev_comm=bash prev_pid=x",
            "          <idle>-0       [000] d..2.  2207.7247: sched_switch: prev_comm=a",
            "8999 0 2207724733200 type: 372",
            "",
        ] {
            assert_eq!(parse_line(line), None, "{line:?}");
        }
    }

    /// Without irq-info the flags column is absent; with record-tgid a tgid column appears.
    #[test]
    fn the_optional_columns_are_tolerated() {
        let no_flags = "            bash-8999    [000]  2207.724733: local_timer_entry: vector=236";
        assert_eq!(parse_line(no_flags).map(|e| e.ts_ns), Some(2_207_724_733_000));
        let tgid = "            bash-8999    (   8990) [000] d..2.  2207.724733: local_timer_entry: vector=236";
        assert_eq!(parse_text_line(tgid).map(|l| l.pid), Some(8999));
    }

    /// The raw pass gives ns; a pair that disagrees (another pid, another µs) keeps the
    /// whole CPU at µs rather than giving an event another's time.
    #[test]
    fn raw_lines_give_ns_only_when_they_pair() {
        let header = "# tracer: nop\n#\n";
        let text = format!(
            "{header}{SWITCH}\n CPU:0 [LOST 1 EVENTS]\n           sleep-9008    [000] d..3.  2207.724874: sched_waking: \
             comm=migration/0 pid=18 prio=0 target_cpu=000\n"
        );
        let raw =
            format!("{header}8999 0 2207724733200 type: 372\n CPU:0 [LOST 1 EVENTS]\n9008 0 2207724873939 type: 375\n");
        let read = parse_cpu_buffer(&text, &raw);
        assert!(read.ns_resolution);
        assert_eq!(read.unparsed_lines, 1);
        assert_eq!(read.events.iter().map(|e| e.ts_ns).collect::<Vec<_>>(), [2_207_724_733_200, 2_207_724_873_939]);

        let wrong_pid = raw.replace("9008 0", "9009 0");
        let read = parse_cpu_buffer(&text, &wrong_pid);
        assert!(!read.ns_resolution);
        assert_eq!(read.events.iter().map(|e| e.ts_ns).collect::<Vec<_>>(), [2_207_724_733_000, 2_207_724_874_000]);
        let wrong_time = raw.replace("2207724873939", "2207724875939");
        assert!(!parse_cpu_buffer(&text, &wrong_time).ns_resolution);
        let missing_line = raw.replace("8999 0 2207724733200 type: 372\n", "");
        assert!(!parse_cpu_buffer(&text, &missing_line).ns_resolution);
    }

    #[test]
    fn cpumasks_are_hex_in_groups_of_32() {
        assert_eq!(cpumask_hex(&[0]), "1");
        assert_eq!(cpumask_hex(&[1]), "2");
        assert_eq!(cpumask_hex(&[0, 1]), "3");
        assert_eq!(cpumask_hex(&[31]), "80000000");
        assert_eq!(cpumask_hex(&[33]), "2,00000000");
        assert_eq!(cpumask_hex(&[0, 33]), "2,00000001");
        assert_eq!(cpumask_hex(&[64, 3]), "1,00000000,00000008");
    }

    #[test]
    fn lost_events_add_up_the_kernel_counts() {
        let stats = "entries: 142\noverrun: 7\ncommit overrun: 1\nbytes: 4608\noldest event ts:  2207.724733\n\
                     now ts:  2208.030378\ndropped events: 2\nread events: 0\n";
        assert_eq!(lost_events(stats), 10);
        assert_eq!(lost_events("entries: 142\noverrun: 0\ncommit overrun: 0\ndropped events: 0\n"), 0);
    }

    #[test]
    fn the_tracefs_mount_is_found_and_unescaped() {
        let standard = "sysfs /sys sysfs rw 0 0\ntracefs /sys/kernel/tracing tracefs rw,nosuid 0 0\n\
                        tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n";
        assert_eq!(tracefs_mount_point(standard), Some(PathBuf::from(STANDARD_MOUNT)));
        let debug_only = "debugfs /sys/kernel/debug debugfs rw 0 0\ntracefs /sys/kernel/debug/tracing tracefs rw 0 0\n";
        assert_eq!(tracefs_mount_point(debug_only), Some(PathBuf::from(DEBUGFS_MOUNT)));
        let elsewhere = "nodev /mnt/my\\040trace tracefs rw 0 0\n";
        assert_eq!(tracefs_mount_point(elsewhere), Some(PathBuf::from("/mnt/my trace")));
        assert_eq!(tracefs_mount_point("proc /proc proc rw 0 0\n"), None);
    }

    #[test]
    fn only_schedlab_instance_names_have_an_owner() {
        assert_eq!(instance_owner("schedlab-1234-0"), Some(1234));
        assert_eq!(instance_owner("schedlab-99999999999999999999999-3"), Some(u64::MAX));
        for other in ["schedlab-1234", "schedlab--1", "schedlab-12a-0", "mytrace", "schedlab-1-2-3"] {
            assert_eq!(instance_owner(other), None, "{other}");
        }
        assert!(pid_alive(std::process::id() as u64));
        assert!(!pid_alive(u64::MAX));
    }

    /// A SIGKILLed schedlab's trial process is reparented to init, which may reap it late:
    /// until then it is a zombie, and its instance is stale all the same.
    #[test]
    fn a_zombie_owns_no_live_instance() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while crate::sys::process::comm_and_state(pid as i32).is_some_and(|(_, s)| s != 'Z')
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!pid_alive(u64::from(pid)), "zombie {pid} counted alive");
        child.wait().unwrap();
        assert!(!pid_alive(u64::from(pid)));
    }

    fn is_root() -> bool {
        // SAFETY: geteuid cannot fail.
        unsafe { libc::geteuid() == 0 }
    }

    /// Start a session, or check that the refusal is the unprivileged one.
    fn start_or_needs_root(cpus: &[usize]) -> Option<TraceSession> {
        match TraceSession::start(cpus, 1024) {
            Ok(session) => Some(session),
            Err(refusal) => {
                assert!(!is_root(), "root was refused: {refusal}");
                assert!(refusal.reason().starts_with("needs root"), "{refusal}");
                eprintln!("skipped: not root ({refusal})");
                None
            }
        }
    }

    fn last_cpu() -> usize {
        *crate::sys::sched::online_cpus().unwrap().last().unwrap()
    }

    /// Whether `name` still exists, seen through a descriptor of `instances` that a
    /// test holds, so an unmount at the session's end does not hide a leftover.
    fn instance_exists(instances: &File, name: &str) -> bool {
        fd_path(instances).join(name).exists()
    }

    /// One recording of a thread pinned to `cpu` that sleeps 1 ms 40 times, with the
    /// clock read before the start and after the stop.
    struct SleeperTrace {
        recording: Recording,
        stats: ReadStats,
        tid: i32,
        before: u64,
        after: u64,
    }

    fn trace_a_sleeper(cpu: usize) -> Option<SleeperTrace> {
        let before = monotonic_ns();
        let started = std::time::Instant::now();
        // Large: a neighbour switching at 250 000/s (a ring benchmark) fills 1 MB in 60 ms.
        let session = match TraceSession::start(&[cpu], 8192) {
            Ok(session) => session,
            Err(refusal) => {
                assert!(!is_root(), "root was refused: {refusal}");
                assert!(refusal.reason().starts_with("needs root"), "{refusal}");
                eprintln!("skipped: not root ({refusal})");
                return None;
            }
        };
        let start_cost = started.elapsed();
        let watch = session.instances.try_clone().unwrap();
        let name = session.name.clone();
        assert!(instance_exists(&watch, &name));
        assert_eq!(session.absent_events(), [] as [&str; 0], "all of them exist on the test kernel");
        let sleeper = std::thread::Builder::new()
            .name("trace-sleeper".into())
            .spawn(move || {
                crate::sys::sched::set_affinity(&[cpu]).unwrap();
                for _ in 0..40 {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                // SAFETY: gettid cannot fail.
                unsafe { libc::gettid() }
            })
            .unwrap();
        let tid = sleeper.join().unwrap();
        let stopped = std::time::Instant::now();
        let (recording, stats) = session.stop_with_stats().unwrap();
        let stop_cost = stopped.elapsed();
        let after = monotonic_ns();
        eprintln!(
            "{} events, start {start_cost:?}, stop {stop_cost:?}, {stats:?}, lost {:?}",
            recording.events.len(),
            recording.lost
        );
        assert!(!instance_exists(&watch, &name), "{name} is left");
        Some(SleeperTrace { recording, stats, tid, before, after })
    }

    #[test]
    fn a_session_records_a_sleeping_thread_in_monotonic_ns() {
        let cpu = last_cpu();
        // A busy neighbour may still overflow the buffer: then the counts cannot hold, so
        // try again (a few times) for a recording that lost nothing.
        let mut lost = Vec::new();
        for _ in 0..3 {
            let Some(trace) = trace_a_sleeper(cpu) else { return };
            let SleeperTrace { recording, stats, tid, before, after } = trace;
            assert!(stats.ns_resolution, "the raw pass paired with the text");
            assert_eq!(recording.lost.len(), 1);
            assert_eq!(recording.lost[0].0, cpu);
            let events = &recording.events;
            assert!(events.iter().all(|e| e.cpu == cpu), "only the CPU asked for");
            assert!(events.windows(2).all(|w| w[0].ts_ns <= w[1].ts_ns), "in time order");
            assert!(
                events.iter().all(|e| (before..=after).contains(&e.ts_ns)),
                "{before}..{after}: not CLOCK_MONOTONIC"
            );
            assert!(events.iter().any(|e| e.ts_ns % 1000 != 0), "ns, not µs");
            if recording.lost[0].1 > 0 {
                lost.push(recording.lost[0].1);
                continue;
            }
            let slept = events
                .iter()
                .filter(|e| {
                    matches!(&e.kind, EventKind::Switch { prev, prev_state, .. }
                    if prev.pid == tid && prev.comm == "trace-sleeper" && prev_state == "S")
                })
                .count();
            let woken =
                events.iter().filter(|e| matches!(&e.kind, EventKind::Wakeup { task, .. } if task.pid == tid)).count();
            // The switches into the thread are not counted: on the test VM (Linux 6.18 under
            // Firecracker) CPU 1 emitted no sched_switch whose prev is its idle task in any capture, so a
            // thread woken on an idle CPU 1 appears to run from its wakeup on.
            assert!(slept >= 30 && woken >= 30, "{slept} sleeps and {woken} wakeups of 40 seen");
            return;
        }
        panic!("every recording lost events ({lost:?}): the buffer is too small for this machine's load");
    }

    #[test]
    fn a_dropped_session_leaves_no_instance() {
        let Some(session) = start_or_needs_root(&[last_cpu()]) else { return };
        let watch = session.instances.try_clone().unwrap();
        let name = session.name.clone();
        assert!(instance_exists(&watch, &name));
        drop(session);
        assert!(!instance_exists(&watch, &name), "{name} is left");
    }

    /// In a forked child, so that the instances named with its pid are its own.
    #[test]
    fn a_failed_start_leaves_no_instance() {
        assert_eq!(TraceSession::start(&[], 1024).err().unwrap().reason(), "no CPU to record");
        crate::sys::check_in_forked_child("refused session", || {
            let Some(session) = start_or_needs_root(&[last_cpu()]) else { return Ok(()) };
            let refusal = TraceSession::start(&[100_000], 1024).err().ok_or("CPU 100000 was accepted")?;
            if refusal.reason() != "CPU 100000 is not on this machine" {
                return Err(format!("refused for {refusal}"));
            }
            let ours = format!("{INSTANCE_PREFIX}{}-", std::process::id());
            let left: Vec<String> = std::fs::read_dir(fd_path(&session.instances))
                .map_err(|e| e.to_string())?
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(&ours) && *n != session.name)
                .collect();
            match left.is_empty() {
                true => Ok(()),
                false => Err(format!("left behind: {left:?}")),
            }
        });
    }

    #[test]
    fn stale_instances_of_dead_pids_are_swept() {
        let Some(session) = start_or_needs_root(&[last_cpu()]) else { return };
        let instances = fd_path(&session.instances);
        let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
        let stale = format!("{INSTANCE_PREFIX}{}-0", pid_max + 1);
        std::fs::create_dir(instances.join(&stale)).unwrap();
        // The sweep of another test's start may have removed it first: it is gone either way.
        sweep_in(&instances);
        assert!(!instances.join(&stale).exists(), "{stale} is left");
        assert!(instances.join(&session.name).exists(), "a live session's instance is kept");
        sweep_stale();
        assert!(instances.join(&session.name).exists(), "a live session's instance is kept");
    }
}
