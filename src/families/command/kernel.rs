//! The `command` family's kernel: start the user's program with the policy, priority,
//! nice value and CPUs of the spec (set between fork and exec, so every process it starts
//! inherits them), in a cgroup v2 group of its own where one can be made (else a process
//! group), wait for it with wait4, then kill whatever of its tree is left and read the
//! figures: the tree's usage, its time waiting for a CPU (the group's PSI), and the
//! figures declared for its output.

use crate::error::{signal_name, Error, Result};
use crate::families::command::model::{CommandOutcome, CommandSpec, CpuWaitSource, Direction, OUTPUT_KEPT_BYTES};
use crate::model::Policy;
use crate::sys::cgroup::PrivateGroup;
use crate::sys::process::{self, Input};
use crate::sys::rusage::ExitKind;
use crate::sys::signals::SignalWatch;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::time::Duration;

/// How long a command gets to stop after SIGTERM (a timeout, Ctrl-C) before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Run the command once; `cpus` are its resolved CPUs (`None`: wherever it may run).
/// A failed run (non-zero exit, a declared figure missing) is `Error::Failed`, one past
/// its timeout `Error::TimedOut`, a signal to schedlab `Error::Interrupted`.
pub fn run(spec: &CommandSpec, cpus: Option<&[usize]>) -> Result<CommandOutcome> {
    let watch = SignalWatch::new(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP])
        .map_err(|e| Error::os("watching for Ctrl-C and SIGTERM", e))?;
    let group = PrivateGroup::create();
    let (program, args) = spec.argv.split_first().ok_or_else(|| Error::usage("no command to run"))?;
    let mut command = std::process::Command::new(program);
    command.args(args);
    // The child writes the time it is about to exec here: the command's life starts there,
    // after what it set up (joining the cgroup, which may wait for a kernel lock).
    let (stamp_read, stamp_write) = crate::sys::fd::pipe().map_err(|e| Error::os("making a pipe", e))?;
    let setup = ChildSetup::new(spec, cpus, group.as_ref().map(PrivateGroup::procs_fd), stamp_write.as_raw_fd());
    // SAFETY: between fork and exec only async-signal-safe calls run (write, setpgid,
    // sched_setaffinity, setpriority, sched_setscheduler) on values made before the fork.
    unsafe {
        command.pre_exec(move || setup.apply());
    }
    let options = supervision(spec, cpus);
    // A background load's window is the command's life.
    crate::sys::load::mark_window_start();
    let mut running = process::spawn(&mut command, options).map_err(|e| {
        Error::env(format!(
            "cannot start '{program}' {}: {}",
            setup_words(spec, group.is_some()),
            crate::error::describe_io(&e)
        ))
    })?;
    drop(stamp_write);
    let mut stamp = [0u8; 8];
    if crate::sys::fd::read_raw(stamp_read.as_raw_fd(), &mut stamp).ok() == Some(8) {
        running.start_clock_at(u64::from_ne_bytes(stamp));
    }
    let pgid = running.pid();
    // The moment the command exits, what it left running is stopped (and counted): it is
    // no part of the measurement, and its time waiting for a CPU is read before it goes.
    let mut leftovers_killed = 0;
    let mut cpu_wait_ns = None;
    let mut at_exit = || {
        crate::sys::load::mark_window_end();
        leftovers_killed = match &group {
            Some(g) => g.kill_all(),
            None => kill_process_group(pgid),
        };
        cpu_wait_ns = group.as_ref().and_then(PrivateGroup::cpu_waiting_us).map(|us| us * 1000);
    };
    let finished = running.supervise_with(Some(&watch), &mut at_exit);
    let finished = match finished {
        Ok(f) => f,
        Err(e) => {
            kill_process_group(pgid);
            return Err(Error::os("waiting for the command", e));
        }
    };
    drop(group);
    if let Some(sig) = finished.stop_signal {
        return Err(Error::Interrupted(sig));
    }
    let line = spec.command_line();
    if finished.timed_out {
        return Err(Error::TimedOut(format!(
            "`{line}` was still running after {}; its process tree was killed",
            crate::model::parse::duration_arg(spec.timeout.as_nanos() as u64)
        )));
    }
    let stdout = String::from_utf8_lossy(&finished.stdout);
    let stderr = String::from_utf8_lossy(&finished.stderr);
    let exit_code = check_exit(finished.exit, &line, &stderr)?;
    let parsed = read_figures(spec, &line, &stdout, &stderr)?;
    Ok(CommandOutcome {
        wall_ns: finished.elapsed.as_nanos() as u64,
        usage: finished.usage,
        exit_code,
        cpu_wait_ns,
        cpu_wait_source: cpu_wait_ns.map(|_| CpuWaitSource::CgroupPsi),
        leftovers_killed,
        parsed,
        judged: spec.figures.iter().find(|f| f.better == Direction::Lower).map(|f| f.name.clone()),
        beside: Default::default(),
    })
}

/// How the command is started and watched: no input, its output captured (up to what is
/// kept), a timeout, and schedlab's signals passed on to its process group.
fn supervision(spec: &CommandSpec, cpus: Option<&[usize]>) -> process::Options {
    let realtime = spec.policy.is_realtime();
    process::Options {
        die_with_parent: Some(libc::SIGTERM),
        stdin: Input::Null,
        capture_output: true,
        output_limit: Some(OUTPUT_KEPT_BYTES),
        // The command leads a process group of its own: Ctrl-C, SIGTERM and the timeout
        // reach everything it started, once.
        signal_group: true,
        forward_signals: vec![libc::SIGINT, libc::SIGTERM, libc::SIGHUP],
        kill_after_signal: Some(STOP_GRACE),
        timeout: Some(spec.timeout),
        kill_after_timeout: STOP_GRACE,
        // As the orchestrator does for a trial: off the command's CPUs, and above a
        // real-time command only where RT throttling is off and it could starve us.
        avoid_cpus: cpus.map(<[usize]>::to_vec).unwrap_or_default(),
        rt_watchdog: realtime && crate::sys::sched::rt_throttling_off(),
        join_cgroups: Vec::new(),
    }
}

/// The command's exit status, where it is 0; any other ends the run as failed, with the
/// last line it wrote to stderr (a status) or the signal that killed it.
fn check_exit(exit: ExitKind, line: &str, stderr: &str) -> Result<i32> {
    match exit {
        ExitKind::Code(0) => Ok(0),
        ExitKind::Code(code) => {
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            let said = if last.is_empty() { String::new() } else { format!(" ({})", last.trim()) };
            Err(Error::Failed(format!("`{line}` exited with status {code}{said}")))
        }
        ExitKind::Signal(sig) => Err(Error::Failed(format!("`{line}` was killed by {}", signal_name(sig)))),
    }
}

/// Each figure the spec declares, read from the command's output; one missing fails the
/// run, naming what did not match.
fn read_figures(
    spec: &CommandSpec,
    line: &str,
    stdout: &str,
    stderr: &str,
) -> Result<std::collections::BTreeMap<String, f64>> {
    let mut parsed = std::collections::BTreeMap::new();
    for figure in &spec.figures {
        let Some(value) = figure.read(stdout, stderr) else {
            let source = match &figure.source {
                crate::families::command::model::FigureSource::Regex(r) => format!("regex '{r}'"),
                crate::families::command::model::FigureSource::Pointer(p) => {
                    format!("JSON pointer {p} in a line of JSON")
                }
            };
            return Err(Error::Failed(format!(
                "the figure '{}' was not in the output of `{line}` ({source} matched nothing)",
                figure.name
            )));
        };
        parsed.insert(figure.name.clone(), value);
    }
    Ok(parsed)
}

/// Kill what is left of the command's process group (it was made its leader): how many
/// processes were in it (those that left the group, with setsid, are beyond reach here).
fn kill_process_group(pgid: libc::pid_t) -> u32 {
    let members = crate::sys::process::group_members(pgid);
    // SAFETY: a signal to the process group the command was made the leader of.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    members
}

/// What the child set up before exec, for an error that stops it there.
fn setup_words(spec: &CommandSpec, in_group: bool) -> String {
    let mut steps = Vec::new();
    if in_group {
        steps.push("in a cgroup of its own".to_string());
    }
    if let Some(cpus) = &spec.cpus {
        steps.push(format!("on CPU {}", crate::model::parse::format_cpu_list(cpus)));
    }
    if let Some(nice) = spec.nice {
        steps.push(format!("at nice {nice}"));
    }
    steps.push(format!("under {} priority {}", spec.policy.kernel_name(), spec.prio));
    steps.join(", ")
}

/// What the child does to itself between fork and exec, prepared before the fork so that
/// nothing there allocates.
struct ChildSetup {
    group_procs: Option<libc::c_int>,
    stamp: libc::c_int,
    cpus: Option<libc::cpu_set_t>,
    nice: Option<i32>,
    policy: libc::c_int,
    prio: libc::c_int,
}

impl ChildSetup {
    fn new(
        spec: &CommandSpec,
        cpus: Option<&[usize]>,
        group_procs: Option<libc::c_int>,
        stamp: libc::c_int,
    ) -> ChildSetup {
        let cpus = cpus.map(|list| {
            // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays within it.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            for &cpu in list {
                unsafe { libc::CPU_SET(cpu, &mut set) };
            }
            set
        });
        let policy = match spec.policy {
            Policy::Other | Policy::Deadline => libc::SCHED_OTHER,
            Policy::Fifo => libc::SCHED_FIFO,
            Policy::Rr => libc::SCHED_RR,
            Policy::Batch => libc::SCHED_BATCH,
            Policy::Idle => libc::SCHED_IDLE,
        };
        ChildSetup { group_procs, stamp, cpus, nice: spec.nice, policy, prio: spec.prio }
    }

    /// In the child: lead a process group and join the cgroup, then CPUs, nice value and
    /// policy (the policy last of these; what std's own spawn does after is a few system
    /// calls).
    fn apply(&self) -> io::Result<()> {
        let fail = || Err(io::Error::last_os_error());
        // SAFETY (the calls below): async-signal-safe system calls on values owned by
        // `self`, made before the fork.
        unsafe {
            if libc::setpgid(0, 0) != 0 {
                return fail();
            }
            if let Some(fd) = self.group_procs {
                if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                    return fail();
                }
            }
            if let Some(set) = &self.cpus {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return fail();
                }
            }
            if let Some(nice) = self.nice {
                if libc::setpriority(libc::PRIO_PROCESS, 0, nice) != 0 {
                    return fail();
                }
            }
            let param = libc::sched_param { sched_priority: self.prio };
            if libc::sched_setscheduler(0, self.policy, &param) != 0 {
                return fail();
            }
            // The command's time starts now: its set-up is done, exec is next.
            let mut now: libc::timespec = std::mem::zeroed();
            libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now);
            let ns = (now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64).to_ne_bytes();
            libc::write(self.stamp, ns.as_ptr().cast(), ns.len());
        }
        Ok(())
    }
}
