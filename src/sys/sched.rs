//! Scheduling policy and CPU affinity of the calling thread, and the pre-flight checks
//! that let schedlab refuse a policy, priority or CPU it cannot have before it forks
//! anything, instead of silently measuring something else.
//!
//! SCHED_DEADLINE has no glibc wrapper on the systems schedlab targets, so its
//! reservation is set with the raw `sched_setattr` system call. Its rules (sched(7),
//! Documentation/scheduler/sched-deadline.rst) shape what is here: only CAP_SYS_NICE may
//! ask for it, the kernel's admission control refuses (EBUSY) a reservation that would
//! take the root domain past `sched_rt_runtime_us / sched_rt_period_us` of every CPU, a
//! task whose affinity is narrower than its root domain is refused (EPERM), and a
//! deadline task may not fork (so it is always set in the task that does the work).

use crate::error::{describe_io, Error, Result};
use crate::model::parse::format_cpu_list;
use crate::model::{format_ns, DeadlineParams, Policy};
use std::io;

fn policy_constant(policy: Policy) -> libc::c_int {
    match policy {
        Policy::Other => libc::SCHED_OTHER,
        Policy::Fifo => libc::SCHED_FIFO,
        Policy::Rr => libc::SCHED_RR,
        Policy::Batch => libc::SCHED_BATCH,
        Policy::Idle => libc::SCHED_IDLE,
        Policy::Deadline => libc::SCHED_DEADLINE,
    }
}

/// `sched_setattr(0, attr, 0)`: the calling thread's policy with its full attributes.
fn sched_setattr_self(attr: &libc::sched_attr) -> libc::c_int {
    // SAFETY: `attr` is a valid, fully initialised sched_attr whose `size` field names
    // its size; pid 0 is the calling thread; flags must be 0.
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, attr as *const libc::sched_attr, 0) as libc::c_int }
}

/// How long an EBUSY from admission control is retried before it is believed. On Linux
/// 6.18 the root domain's admitted bandwidth (`dl_bw->total_bw`) was seen to drop below
/// zero after deadline tasks exited (their bandwidth taken off twice) and stay there for
/// up to 0.6 s, and every request failed with EBUSY meanwhile; a refusal that lasts this
/// long is the admission control's real answer.
const ADMISSION_RETRY: std::time::Duration = std::time::Duration::from_secs(2);
const ADMISSION_RETRY_STEP: std::time::Duration = std::time::Duration::from_millis(20);

/// [`sched_setattr_self`], with an EBUSY retried for up to [`ADMISSION_RETRY`]. Only
/// system calls and nanosleep: safe in a forked child.
fn sched_setattr_admitted(attr: &libc::sched_attr) -> libc::c_int {
    let tries = (ADMISSION_RETRY.as_millis() / ADMISSION_RETRY_STEP.as_millis()) as u32;
    for _ in 0..tries {
        let rc = sched_setattr_self(attr);
        // SAFETY: errno is this thread's own.
        if rc == 0 || unsafe { *libc::__errno_location() } != libc::EBUSY {
            return rc;
        }
        std::thread::sleep(ADMISSION_RETRY_STEP);
    }
    sched_setattr_self(attr)
}

fn deadline_attr(params: &DeadlineParams, flags: u64) -> libc::sched_attr {
    libc::sched_attr {
        size: std::mem::size_of::<libc::sched_attr>() as u32,
        sched_policy: libc::SCHED_DEADLINE as u32,
        sched_flags: flags,
        sched_nice: 0,
        sched_priority: 0,
        sched_runtime: params.runtime_ns,
        sched_deadline: params.deadline_ns,
        sched_period: params.period_ns,
    }
}

/// What a SCHED_DEADLINE task asks of the kernel beside its reservation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeadlineFlags {
    /// SIGXCPU whenever a job runs past its runtime (SCHED_FLAG_DL_OVERRUN, Linux 4.16+),
    /// where the kernel offers it: without, the reservation is set without the signal.
    pub signal_overruns: bool,
    /// SCHED_FLAG_RECLAIM (GRUB, Linux 4.13+): a job that runs past its runtime goes on in
    /// the bandwidth the CPU's other reservations leave unused instead of being throttled
    /// to its next period (taskset's `--reclaim`). Required: refused where the kernel
    /// lacks it (`probe_deadline` says so before anything runs).
    pub reclaim: bool,
}

impl DeadlineFlags {
    /// The flags the kernel must take.
    fn required(self) -> u64 {
        if self.reclaim {
            libc::SCHED_FLAG_RECLAIM as u64
        } else {
            0
        }
    }
}

/// Put the calling thread under SCHED_DEADLINE with this reservation and `flags`; a kernel
/// that does not know SCHED_FLAG_DL_OVERRUN answers EINVAL, and the reservation is then
/// set without it. Returns whether overruns are signalled.
pub fn set_deadline(params: &DeadlineParams, flags: DeadlineFlags) -> io::Result<bool> {
    if flags.signal_overruns {
        let attr = deadline_attr(params, flags.required() | libc::SCHED_FLAG_DL_OVERRUN as u64);
        if sched_setattr_admitted(&attr) == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINVAL) {
            return Err(err);
        }
    }
    if sched_setattr_admitted(&deadline_attr(params, flags.required())) != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(false)
}

/// The bounds the kernel puts on a deadline task's period
/// (`/proc/sys/kernel/sched_deadline_period_{min,max}_us`, Linux 5.5+; `None` where absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeadlinePeriodLimits {
    pub min_us: Option<u64>,
    pub max_us: Option<u64>,
}

impl DeadlinePeriodLimits {
    pub fn read() -> DeadlinePeriodLimits {
        let read = |name: &str| -> Option<u64> {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}")).ok()?.trim().parse().ok()
        };
        DeadlinePeriodLimits {
            min_us: read("sched_deadline_period_min_us"),
            max_us: read("sched_deadline_period_max_us"),
        }
    }

    /// Why the kernel would refuse this period, if it would.
    pub fn refusal(&self, period_ns: u64) -> Option<String> {
        let file = "/proc/sys/kernel/sched_deadline_period";
        if let Some(min) = self.min_us.filter(|&m| period_ns < m.saturating_mul(1000)) {
            return Some(format!(
                "--period {} is below the kernel's minimum for deadline tasks, {} ({file}_min_us = {min}); \
                 use a longer period or lower that limit",
                format_ns(period_ns),
                format_ns(min * 1000)
            ));
        }
        if let Some(max) = self.max_us.filter(|&m| period_ns > m.saturating_mul(1000)) {
            return Some(format!(
                "--period {} is above the kernel's maximum for deadline tasks, {} ({file}_max_us = {max}); \
                 use a shorter period or raise that limit",
                format_ns(period_ns),
                format_ns(max * 1000)
            ));
        }
        None
    }
}

/// The CPUs that are online: the root domain's, unless exclusive cpusets split it.
pub fn online_cpus() -> Option<Vec<usize>> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").ok()?;
    crate::model::parse::parse_cpu_list(text.trim()).ok().map(|l| l.0)
}

/// Whether this process holds CAP_SYS_NICE in its effective set (`/proc/self/status`).
pub fn has_cap_sys_nice() -> Option<bool> {
    const CAP_SYS_NICE: u32 = 23;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim();
    let caps = u64::from_str_radix(hex, 16).ok()?;
    Some(caps & (1 << CAP_SYS_NICE) != 0)
}

/// What the kernel's admission control lets deadline tasks reserve in all:
/// `sched_rt_runtime_us / sched_rt_period_us` of every CPU of the root domain.
pub fn deadline_capacity() -> (Option<RtThrottling>, Vec<usize>) {
    (RtThrottling::read(), online_cpus().unwrap_or_default())
}

/// The deadline bandwidth the root domain of CPU 0 has already admitted, in CPUs, as the
/// scheduler's debug file reports it (`dl_bw->total_bw`, in units of 2^-20 of a CPU);
/// `None` without debugfs mounted.
pub fn admitted_deadline_bandwidth() -> Option<f64> {
    let text = std::fs::read_to_string("/sys/kernel/debug/sched/debug").ok()?;
    let line = text.lines().find(|l| l.trim_start().starts_with(".dl_bw->total_bw"))?;
    // Printed signed: the kernel's accounting can dip below zero for a moment.
    let raw: i64 = line.rsplit(':').next()?.trim().parse().ok()?;
    Some(raw as f64 / f64::from(1u32 << 20))
}

/// The message for a refused SCHED_DEADLINE reservation: for EBUSY the bandwidth asked
/// (`tasks` reservations like `params`) against what the machine grants, for EPERM the
/// privilege or the affinity rule, and each with its fix.
pub fn explain_deadline_refusal(
    params: &DeadlineParams,
    flags: DeadlineFlags,
    tasks: usize,
    err: &io::Error,
) -> String {
    // The reservation was checked before (its bounds here, the kernel's limits in
    // `probe_deadline`), so an EINVAL with SCHED_FLAG_RECLAIM is the flag.
    if flags.reclaim && err.raw_os_error() == Some(libc::EINVAL) {
        return "the kernel refused SCHED_FLAG_RECLAIM with this reservation (EINVAL; Linux before 4.13 does not \
                offer it): drop --reclaim"
            .to_string();
    }
    let mut msg = format!("cannot run under SCHED_DEADLINE ({}): {}", params.describe(), describe_io(err));
    match err.raw_os_error() {
        Some(libc::EBUSY) => {
            let asked = tasks as f64 * params.bandwidth();
            let (throttling, cpus) = deadline_capacity();
            let grant = match throttling {
                Some(t) if t.runtime_us >= 0 && t.period_us > 0 => {
                    let per_cpu = t.runtime_us as f64 / t.period_us as f64;
                    format!(
                        "sched_rt_runtime_us / sched_rt_period_us x CPUs = {} / {} x {} = {:.3} CPU",
                        t.runtime_us,
                        t.period_us,
                        cpus.len(),
                        per_cpu * cpus.len() as f64
                    )
                }
                Some(_) => "no limit (sched_rt_runtime_us = -1)".to_string(),
                None => "an unknown amount (sched_rt_runtime_us is unreadable)".to_string(),
            };
            let admitted = admitted_deadline_bandwidth();
            let held = match admitted {
                Some(bw) => format!("{bw:.3} CPU now, by the scheduler's debug file"),
                None => "unknown without debugfs".to_string(),
            };
            msg.push_str(&format!(
                ". The kernel's admission control refused the reservation: asked {tasks} x {} / {} = {asked:.3} CPU \
                 in all; the machine grants {grant} (root domain: CPUs {}), less what deadline tasks already hold \
                 ({held}; the kernel's own fair-server reservations among them, and tasks that ended less than a \
                 period ago). Fix: a shorter --runtime, a longer --period, fewer tasks, or more bandwidth \
                 (`sysctl kernel.sched_rt_runtime_us=...`). schedlab never falls back to another policy",
                format_ns(params.runtime_ns),
                format_ns(params.period_ns),
                format_cpu_list(&cpus)
            ));
            if admitted.is_some_and(|bw| bw < 0.0) {
                msg.push_str(
                    ". Note: an admitted total below zero means the kernel's own accounting is off (seen on Linux \
                     6.18 after throttled deadline tasks exit: their bandwidth taken off twice), and it then refuses \
                     any reservation smaller than the deficit; it mends as deadline tasks come and go, or when the \
                     root domain is rebuilt",
                );
            }
        }
        Some(libc::EPERM) => {
            let allowed = allowed_cpus().unwrap_or_default();
            let online = online_cpus().unwrap_or_default();
            if has_cap_sys_nice() == Some(false) {
                msg.push_str(
                    ". SCHED_DEADLINE needs CAP_SYS_NICE: run as root or `setcap cap_sys_nice+ep` on the binary \
                     (RLIMIT_RTPRIO does not grant it). schedlab never falls back to another policy",
                );
            } else if !online.is_empty() && online.iter().any(|c| !allowed.contains(c)) {
                msg.push_str(&format!(
                    ". The kernel refuses SCHED_DEADLINE to a task whose CPU affinity (CPUs {}) is narrower than \
                     its root domain (CPUs {}): run schedlab without taskset or a cpuset that narrows it, or in an \
                     exclusive cpuset of its own",
                    format_cpu_list(&allowed),
                    format_cpu_list(&online)
                ));
            } else {
                msg.push_str(
                    ". With CAP_SYS_NICE held this means the root domain grants deadline tasks no bandwidth \
                     (kernel.sched_rt_runtime_us = 0?) or a cgroup forbids it",
                );
            }
        }
        Some(libc::EINVAL) => {
            let limits = DeadlinePeriodLimits::read();
            msg.push_str(&format!(
                ". The kernel needs 1024 ns <= runtime <= deadline <= period and a period within \
                 sched_deadline_period_min_us..max_us ({}..{} µs)",
                limits.min_us.map_or("?".into(), |v| v.to_string()),
                limits.max_us.map_or("?".into(), |v| v.to_string())
            ));
        }
        _ => {}
    }
    msg
}

/// Set the calling thread's policy and static priority (sched_setscheduler acts on the
/// calling thread on Linux, not the whole process).
pub fn set_policy(policy: Policy, prio: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: `param` is a valid sched_param; pid 0 means the calling thread.
    if unsafe { libc::sched_setscheduler(0, policy_constant(policy), &param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The calling thread's current policy and priority, as the kernel reports them.
pub fn current_policy() -> io::Result<(Option<Policy>, i32)> {
    // SAFETY: pid 0 is the calling thread.
    let raw = unsafe { libc::sched_getscheduler(0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is writable.
    unsafe { libc::sched_getparam(0, &mut param) };
    let raw = raw & !libc::SCHED_RESET_ON_FORK;
    let policy = Policy::ALL.into_iter().find(|p| policy_constant(*p) == raw);
    Ok((policy, param.sched_priority))
}

/// The CPUs the calling thread may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain bits; zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable and its size is passed.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET only reads the set, for indices below its capacity.
    Ok((0..max).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) }).collect())
}

/// Restrict the calling thread to `cpus`.
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: CPU_SET writes one bit; cpus were checked against the allowed set,
        // which is smaller than the set's capacity.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Check that every requested CPU exists and is in this process's affinity mask, and
/// return the CPUs to draw placements from (the request, or every allowed CPU).
pub fn resolve_cpus(requested: Option<&[usize]>) -> Result<Vec<usize>> {
    let allowed = allowed_cpus().map_err(|e| Error::os("reading the CPU affinity mask", e))?;
    let Some(requested) = requested else { return Ok(allowed) };
    for &cpu in requested {
        if !allowed.contains(&cpu) {
            return Err(Error::env(format!(
                "CPU {cpu} is not available: this process may run on CPUs {} \
                 (see `taskset -p $$`, cgroup cpusets and /sys/devices/system/cpu/online)",
                format_cpu_list(&allowed)
            )));
        }
    }
    Ok(requested.to_vec())
}

fn rtprio_limit() -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is writable.
    if unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut lim) } != 0 {
        return None;
    }
    Some(lim.rlim_cur)
}

/// The message for a refused policy change: what was refused and how to get it.
pub fn explain_refusal(policy: Policy, prio: i32, err: &io::Error) -> String {
    let what = if policy.is_realtime() {
        format!("{} priority {prio}", policy.kernel_name())
    } else {
        policy.kernel_name().to_string()
    };
    let mut msg = format!("cannot run under {what}: {}", describe_io(err));
    if err.raw_os_error() == Some(libc::EPERM) && policy.is_realtime() {
        let limit = match rtprio_limit() {
            Some(l) if l == libc::RLIM_INFINITY => "unlimited".to_string(),
            Some(l) => l.to_string(),
            None => "unknown".to_string(),
        };
        msg.push_str(&format!(
            ". Real-time policies need CAP_SYS_NICE (run as root, or `setcap cap_sys_nice+ep` on \
             the binary) or an RLIMIT_RTPRIO of at least {prio} (`ulimit -r {prio}`; now {limit}). \
             Under cgroup v1 with RT group scheduling the cgroup also needs cpu.rt_runtime_us > 0. \
             schedlab never falls back to SCHED_OTHER"
        ));
    }
    msg
}

/// Run `attempt` (one scheduler syscall; 0 or -1 with errno) in a short-lived forked
/// child and return its errno. A child, not a thread: the change dies with it, and no
/// exited thread is left for a moment in this process's thread count, where
/// [`ChildGroup::new`](crate::sys::children::ChildGroup::new) would see it and refuse
/// to fork.
fn in_forked_child(attempt: impl FnOnce() -> libc::c_int) -> io::Result<()> {
    // SAFETY: between fork and _exit the child makes only async-signal-safe calls (the
    // syscall in `attempt`, reading errno, _exit); it never returns into Rust code.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: see above; errno is the child's own thread-local.
        unsafe {
            let code = if attempt() == 0 { 0 } else { *libc::__errno_location() };
            libc::_exit(code & 0xff);
        }
    }
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waiting for the child just forked; `status` is writable.
        let got = unsafe { libc::waitpid(pid, &mut status, 0) };
        if got == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(err);
        }
    }
    if libc::WIFEXITED(status) {
        return match libc::WEXITSTATUS(status) {
            0 => Ok(()),
            errno => Err(io::Error::from_raw_os_error(errno)),
        };
    }
    Err(io::Error::other(format!(
        "the probe process was killed by {}",
        crate::error::signal_name(libc::WTERMSIG(status))
    )))
}

fn try_policy(policy: libc::c_int, prio: libc::c_int) -> libc::c_int {
    let param = libc::sched_param { sched_priority: prio };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling (probe) process.
    unsafe { libc::sched_setscheduler(0, policy, &param) }
}

fn try_nice(nice: libc::c_int, _: libc::c_int) -> libc::c_int {
    // SAFETY: plain integers; who 0 is the calling (probe) process, single-threaded.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) }
}

/// Try the policy in a short-lived forked child (the change dies with it), so a refusal
/// is reported before any real child is forked.
pub fn probe_policy(policy: Policy, prio: i32) -> Result<()> {
    in_forked_child(|| try_policy(policy_constant(policy), prio))
        .map_err(|e| Error::env(explain_refusal(policy, prio, &e)))
}

/// Try one deadline reservation in a short-lived forked child, as [`probe_policy`]
/// does: a missing privilege, an affinity the kernel refuses or a reservation that alone
/// exceeds what is free is reported before anything is forked; with `reclaim`, also a
/// kernel without SCHED_FLAG_RECLAIM. (Whether all of a trial's reservations fit
/// together is the kernel's to say when its tasks ask.)
pub fn probe_deadline(params: &DeadlineParams, tasks: usize, reclaim: bool) -> Result<()> {
    let flags = DeadlineFlags { reclaim, ..DeadlineFlags::default() };
    let attr = deadline_attr(params, flags.required());
    in_forked_child(move || sched_setattr_admitted(&attr))
        .map_err(|e| Error::env(explain_deadline_refusal(params, flags, tasks, &e)))
}

/// [`apply_to_current_thread`] for any policy: a deadline policy takes its reservation
/// (`tasks`: how many reservations the trial asks for in all, for the admission message)
/// and `flags`, and is never pinned. Returns whether runtime overruns will be signalled
/// (SIGXCPU).
pub fn apply_scheduling(
    cpus: Option<&[usize]>,
    policy: Policy,
    prio: i32,
    deadline: Option<&DeadlineParams>,
    tasks: usize,
    flags: DeadlineFlags,
) -> std::result::Result<bool, String> {
    if !policy.is_deadline() {
        return apply_to_current_thread(cpus, policy, prio).map(|()| false);
    }
    let Some(params) = deadline else {
        return Err("internal: SCHED_DEADLINE without a reservation".to_string());
    };
    // The specs refuse a pinned deadline task before anything runs; the kernel would too.
    if cpus.is_some() {
        return Err("internal: a SCHED_DEADLINE task cannot be pinned".to_string());
    }
    set_deadline(params, flags).map_err(|e| explain_deadline_refusal(params, flags, tasks, &e))
}

/// Set the calling thread's nice value (setpriority on its thread id: on Linux nice is
/// per thread).
pub fn set_nice(nice: i32) -> io::Result<()> {
    // SAFETY: gettid cannot fail; setpriority takes plain integers.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, nice) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub fn explain_nice_refusal(nice: i32, err: &io::Error) -> String {
    let mut msg = format!("cannot set nice {nice}: {}", describe_io(err));
    if matches!(err.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) {
        msg.push_str(&format!(
            ". A negative nice needs CAP_SYS_NICE (run as root) or an RLIMIT_NICE of at least {} \
             (`ulimit -e {}`)",
            20 - nice,
            20 - nice
        ));
    }
    msg
}

/// Try the nice value in a short-lived forked child, as [`probe_policy`] does.
pub fn probe_nice(nice: i32) -> Result<()> {
    in_forked_child(|| try_nice(nice, 0)).map_err(|e| Error::env(explain_nice_refusal(nice, &e)))
}

/// RT throttling: `sched_rt_runtime_us` out of every `sched_rt_period_us` is all that
/// real-time tasks may take; -1 means unlimited (throttling off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtThrottling {
    pub runtime_us: i64,
    pub period_us: i64,
}

impl RtThrottling {
    pub fn read() -> Option<RtThrottling> {
        let read = |name: &str| -> Option<i64> {
            std::fs::read_to_string(format!("/proc/sys/kernel/{name}")).ok()?.trim().parse().ok()
        };
        Some(RtThrottling { runtime_us: read("sched_rt_runtime_us")?, period_us: read("sched_rt_period_us")? })
    }

    pub fn is_on(&self) -> bool {
        self.runtime_us >= 0 && self.runtime_us < self.period_us
    }
}

/// Whether real-time tasks may take every CPU cycle: throttling is off, or its setting
/// cannot be read (then assume the worst). A real-time trial then needs a supervisor
/// that outranks it ([`RtWatchdog`], `sys::process::Options::rt_watchdog`).
pub fn rt_throttling_off() -> bool {
    RtThrottling::read().is_none_or(|t| !t.is_on())
}

/// While held, the calling thread waits at SCHED_FIFO 99, so real-time children cannot
/// starve the thread that must stop, time or reap them; the previous policy comes back
/// on drop. Without the privilege it silently stays as it was (the children could not be
/// real-time either).
pub struct RtWatchdog {
    previous: Option<(Policy, i32)>,
}

impl RtWatchdog {
    pub fn raise_if(needed: bool) -> RtWatchdog {
        if !needed {
            return RtWatchdog { previous: None };
        }
        let previous = match current_policy() {
            Ok((Some(p), prio)) => (p, prio),
            _ => return RtWatchdog { previous: None },
        };
        match set_policy(Policy::Fifo, 99) {
            Ok(()) => RtWatchdog { previous: Some(previous) },
            Err(_) => RtWatchdog { previous: None },
        }
    }
}

impl Drop for RtWatchdog {
    fn drop(&mut self) {
        if let Some((policy, prio)) = self.previous {
            let _ = set_policy(policy, prio);
        }
    }
}

/// Put the calling thread where a plan says and under the requested policy, in the
/// order that keeps later set-up (memory, stacks) on the right CPU. The error text is
/// ready to show to the user.
pub fn apply_to_current_thread(cpus: Option<&[usize]>, policy: Policy, prio: i32) -> std::result::Result<(), String> {
    if let Some(cpus) = cpus {
        set_affinity(cpus).map_err(|e| format!("pinning to CPU {}: {}", format_cpu_list(cpus), describe_io(&e)))?;
    }
    set_policy(policy, prio).map_err(|e| explain_refusal(policy, prio, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_list_notation() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn other_policy_is_always_allowed() {
        probe_policy(Policy::Other, 0).unwrap();
        probe_policy(Policy::Idle, 0).unwrap();
    }

    #[test]
    fn a_refusal_carries_the_probe_childs_errno() {
        // Priority 100 is out of range for everyone, root included.
        let err = probe_policy(Policy::Fifo, 100).unwrap_err().to_string();
        assert!(err.contains("SCHED_FIFO priority 100") && err.contains("EINVAL"), "{err}");
        // The probe changed nothing here.
        assert_eq!(current_policy().unwrap().0, Some(Policy::Other));
        probe_nice(5).unwrap();
    }

    fn threads_of_this_process() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap()
    }

    /// The probes must not make threads: an exited thread still counts for a moment in
    /// /proc/self/status, and ChildGroup refuses to fork from a multi-threaded process.
    /// Checked in a forked, single-threaded child (this test runs on one of the
    /// harness's threads, beside other tests): its thread count must stay 1 after every
    /// probe, and its reaped-children usage must show the probes ran as processes (a
    /// thread would leave it at zero, so this part fails deterministically).
    #[test]
    fn probes_fork_a_process_and_never_a_thread() {
        fn check() -> std::result::Result<(), String> {
            let children_minflt = || {
                // SAFETY: zeroed rusage is valid; getrusage only writes it.
                let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
                // SAFETY: RUSAGE_CHILDREN with a writable struct.
                unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
                ru.ru_minflt
            };
            let before = children_minflt();
            for i in 0..200 {
                probe_policy(Policy::Other, 0).map_err(|e| e.to_string())?;
                if i % 2 == 0 {
                    probe_nice(0).map_err(|e| e.to_string())?;
                }
                let threads = threads_of_this_process();
                if threads != 1 {
                    return Err(format!("probe {i} left {threads} threads"));
                }
            }
            if children_minflt() <= before {
                return Err("no probe ran in a child process".into());
            }
            Ok(())
        }
        crate::sys::check_in_forked_child("probe check", check);
    }

    #[test]
    fn allowed_cpus_is_not_empty_and_resolves() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        assert_eq!(resolve_cpus(Some(&cpus[..1])).unwrap(), vec![cpus[0]]);
        let missing = cpus.iter().max().unwrap() + 1000;
        let err = resolve_cpus(Some(&[missing])).unwrap_err().to_string();
        assert!(err.contains("is not available"), "{err}");
    }
}
