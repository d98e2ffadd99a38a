//! Scheduling policy and CPU affinity of the calling thread, and the pre-flight checks
//! that let schedlab refuse a policy, priority or CPU it cannot have before it forks
//! anything, instead of silently measuring something else.

use crate::error::{describe_io, Error, Result};
use crate::model::Policy;
use std::io;

fn policy_constant(policy: Policy) -> libc::c_int {
    match policy {
        Policy::Other => libc::SCHED_OTHER,
        Policy::Fifo => libc::SCHED_FIFO,
        Policy::Rr => libc::SCHED_RR,
        Policy::Batch => libc::SCHED_BATCH,
        Policy::Idle => libc::SCHED_IDLE,
    }
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

/// "0-3,6,8-9": the kernel's own CPU list notation.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    parts.join(",")
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

/// Try the policy on a short-lived thread (the change affects only that thread), so a
/// refusal is reported before any child is forked.
pub fn probe_policy(policy: Policy, prio: i32) -> Result<()> {
    let outcome = std::thread::spawn(move || set_policy(policy, prio))
        .join()
        .map_err(|_| Error::env("the scheduling-policy probe thread panicked"))?;
    outcome.map_err(|e| Error::env(explain_refusal(policy, prio, &e)))
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

/// Try policy, priority and nice on a short-lived thread, as [`probe_policy`] does.
pub fn probe_nice(nice: i32) -> Result<()> {
    let outcome = std::thread::spawn(move || set_nice(nice))
        .join()
        .map_err(|_| Error::env("the nice-value probe thread panicked"))?;
    outcome.map_err(|e| Error::env(explain_nice_refusal(nice, &e)))
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
    fn allowed_cpus_is_not_empty_and_resolves() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
        assert_eq!(resolve_cpus(Some(&cpus[..1])).unwrap(), vec![cpus[0]]);
        let missing = cpus.iter().max().unwrap() + 1000;
        let err = resolve_cpus(Some(&[missing])).unwrap_err().to_string();
        assert!(err.contains("is not available"), "{err}");
    }
}
