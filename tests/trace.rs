//! `schedlab latency --trace on`: what ran in a late wakeup's place, from the kernel's
//! own tracepoints, on the real kernel.

mod common;

use common::*;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The command name the planted source runs under: what the attribution must name.
const SPINNER: &str = "sl-spinner";

/// The traced runs of these tests one at a time: each measures the same CPU (a planted
/// source would disturb another test's run) and some look at every instance.
static SERIAL: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    // A failed test panics holding it: the next still runs.
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Pin the calling thread to `cpu` and make it SCHED_FIFO at `prio`.
fn pin_fifo(cpu: usize, prio: i32) {
    // SAFETY: a zeroed cpu_set_t with one CPU set, and a valid sched_param, for this
    // thread (0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set), 0);
        let param = libc::sched_param { sched_priority: prio };
        assert_eq!(libc::sched_setscheduler(0, libc::SCHED_FIFO, &param), 0);
    }
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until `at_ns` on CLOCK_MONOTONIC (absolute: a late beat does not shift the next).
fn sleep_until(at_ns: u64) {
    let at = libc::timespec { tv_sec: (at_ns / 1_000_000_000) as i64, tv_nsec: (at_ns % 1_000_000_000) as i64 };
    // SAFETY: a valid absolute time; no remainder with TIMER_ABSTIME.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &at, std::ptr::null_mut()) };
}

/// The planted sources' periods are no multiple of the runs' 1 ms interval, so each beat
/// meets the measured thread at a new phase. (At a multiple, a spin met it at one phase
/// all run long: every spike it caused was as late as the others, 980 µs in one run and
/// 70 µs, under a noisy neighbour's, in the next.)
const OFF_BEAT_NS: u64 = 370_000;

/// Longer than any spin of the planted noise (bench/noise.py's `steal`: 1 ms at
/// SCHED_FIFO 99), so a spike this spinner causes is longer than one the noise causes and
/// this spinner has the larger part of it, whatever else runs.
const SPIN_NS: u64 = 2_000_000;

/// A SCHED_FIFO 99 thread named `SPINNER` on `cpu` that spins `SPIN_NS` every 25.37 ms
/// (absolute clock) until `stop` is set: at 1 kHz each spin holds back two wakeups, one
/// by 1 to 2 ms (the tail above the p99 is those) and the next by 0 to 1 ms.
fn plant_spinner(cpu: usize, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name(SPINNER.into())
        .spawn(move || {
            pin_fifo(cpu, 99);
            let period_ns = 25_000_000 + OFF_BEAT_NS;
            let mut beat = now_ns() + period_ns;
            while !stop.load(Ordering::Relaxed) {
                sleep_until(beat);
                let until = now_ns() + SPIN_NS;
                while now_ns() < until {
                    std::hint::spin_loop();
                }
                beat += period_ns;
            }
        })
        .unwrap()
}

fn last_cpu() -> usize {
    // SAFETY: sysconf cannot fail for this name.
    (unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as usize).saturating_sub(1)
}

/// The schedlab instances whose owner has ended: left behind. (A live owner's is another
/// run's, on a machine where other people's tests trace too.)
fn left_behind_instances() -> Vec<String> {
    std::fs::read_dir(INSTANCES)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|n: &String| n.starts_with("schedlab-") && !instance_owner(n).is_some_and(is_running))
        .collect()
}

#[test]
fn a_planted_spinner_is_named_the_culprit_of_the_spikes_it_causes() {
    if !is_root() {
        // Without root the run goes on and says why nothing is attributed.
        let out = stdout_of(&["latency", "--interval", "1ms", "--loops", "50", "--cpus", "0", "--trace", "on"]);
        assert!(out.contains("tracing: no attribution:") && out.contains("root"), "{out}");
        return;
    }
    let _serial = one_at_a_time();
    let cpu = last_cpu();
    let stop = Arc::new(AtomicBool::new(false));
    let spinner = plant_spinner(cpu, stop.clone());
    let cpu_arg = cpu.to_string();
    let mut args: Vec<&str> =
        "latency --policy fifo --interval 1ms --duration 2s --trace on --json".split(' ').collect();
    args.extend(["--cpus", &cpu_arg]);
    let is_spinner = |c: &serde_json::Value| c["source"]["comm"] == SPINNER;
    let line = json_lines(stdout_of(&args).as_bytes()).remove(0);
    stop.store(true, Ordering::Relaxed);
    spinner.join().unwrap();
    assert_eq!(line["trace_lost_events"], 0, "events lost: {line}");
    // Each spike's window is split whole: what ran in it and what no event accounts for
    // add up to its latency.
    let spikes = line["attributed_spikes"].as_array().unwrap();
    for s in spikes {
        let named: u64 = s["culprits"].as_array().unwrap().iter().map(|c| c["ns"].as_u64().unwrap()).sum();
        assert_eq!(named + s["unseen_ns"].as_u64().unwrap(), s["latency_ns"].as_u64().unwrap(), "{s}");
    }
    // The spikes the spinner took time in: its 1-2 ms ones are the tail (80 in 2 s, 20 kept
    // above the p99). Its spins are longer than the planted noise's, so over those spikes it
    // has more time than any other source (in one spike a noise spin may have more of the
    // window than the end of one of its spins).
    let caused: Vec<&serde_json::Value> =
        spikes.iter().filter(|s| s["culprits"].as_array().unwrap().iter().any(is_spinner)).collect();
    assert!(caused.len() >= 10, "{} of {} spikes: {line}", caused.len(), spikes.len());
    let mut time_in_caused: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    for c in caused.iter().flat_map(|s| s["culprits"].as_array().unwrap()) {
        let source = if is_spinner(c) { SPINNER.to_string() } else { c["source"].to_string() };
        *time_in_caused.entry(source).or_default() += c["ns"].as_u64().unwrap();
    }
    let most = time_in_caused.iter().max_by_key(|(_, ns)| **ns).map(|(source, _)| source.as_str());
    assert_eq!(most, Some(SPINNER), "time in the spikes it took part in: {time_in_caused:?}");
    // And it leads the named sources of the tail, but for a neighbour's few longer spikes:
    // whatever named outweighs it took time in fewer spikes. Time no event accounts for is
    // left out: it is the host's (a stalled virtual CPU), a residue of every spike, and
    // one 8 ms stall weighs more above the tail's level than twenty 2 ms spins.
    let tail: Vec<&serde_json::Value> =
        line["tail_culprits"].as_array().unwrap().iter().filter(|c| c["source"]["kind"] != "unseen").collect();
    let at = tail.iter().position(|c| is_spinner(c)).unwrap_or_else(|| panic!("not in the tail: {line}"));
    let its_spikes = tail[at]["spikes"].as_u64().unwrap();
    assert!(tail[..at].iter().all(|c| c["spikes"].as_u64().unwrap() < its_spikes), "another leads the tail: {line}");
    // When its period is claimed, the finding names it as who ran on the beats.
    assert!(
        line["spike_period_ns"].is_null() || is_spinner(&line["spike_beat_culprits"][0]),
        "not named on the beats: {line}"
    );
    // Nothing of the trace is left behind.
    assert_eq!(left_behind_instances(), Vec::<String>::new());
}

/// The softirq that loopback traffic raises on the sending CPU: what the attribution
/// must name.
const NET_RX: &str = "NET_RX";

/// Loopback UDP traffic from `cpu`: a SCHED_FIFO 99 thread `sl-udp-tx` there sends a
/// burst of 200 64-byte datagrams every 20.37 ms (absolute clock) to a socket on
/// 127.0.0.1 that a thread `sl-udp-rx` on the other CPUs drains. On loopback a
/// datagram is received in the NET_RX softirq of the CPU that sent it, run when the
/// sender's syscall enables bottom halves again: a softirq source on `cpu`, raised by a
/// task that can be told apart from it. A burst takes 250-600 µs on the shared VM, more
/// than half of it in NET_RX: it delays about one wakeup in 50 at 1 kHz, so the tail
/// above the p99 is mostly its own.
const UDP_BURST: usize = 200;
const UDP_SENDER: &str = "sl-udp-tx";
const UDP_PERIOD_NS: u64 = 20_000_000 + OFF_BEAT_NS;

struct UdpBursts {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

fn plant_udp_bursts(cpu: usize) -> UdpBursts {
    let stop = Arc::new(AtomicBool::new(false));
    let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let to = rx.local_addr().unwrap();
    let others: Vec<usize> = (0..=last_cpu()).filter(|&c| c != cpu).collect();
    let stopped = stop.clone();
    let receiver = std::thread::Builder::new()
        .name("sl-udp-rx".into())
        .spawn(move || {
            if !others.is_empty() {
                // SAFETY: a zeroed cpu_set_t with the other CPUs set, for this thread (0).
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    others.iter().for_each(|&c| libc::CPU_SET(c, &mut set));
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
            }
            let mut buf = [0u8; 2048];
            while !stopped.load(Ordering::Relaxed) {
                let _ = rx.recv(&mut buf);
            }
        })
        .unwrap();
    let stopped = stop.clone();
    let sender = std::thread::Builder::new()
        .name(UDP_SENDER.into())
        .spawn(move || {
            pin_fifo(cpu, 99);
            let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let payload = [0x5a; 64];
            let mut beat = now_ns() + UDP_PERIOD_NS;
            while !stopped.load(Ordering::Relaxed) {
                sleep_until(beat);
                for _ in 0..UDP_BURST {
                    // A full receive buffer drops the datagram in the softirq all the same.
                    let _ = tx.send_to(&payload, to);
                }
                beat += UDP_PERIOD_NS;
            }
        })
        .unwrap();
    UdpBursts { stop, threads: vec![sender, receiver] }
}

impl Drop for UdpBursts {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// "NET_RX 41 % in 12, sl-udp-tx 30 % in 12, ...": a tail, for messages.
fn tail_summary(tail: &[serde_json::Value]) -> String {
    let name = |s: &serde_json::Value| {
        s.get("comm")
            .or_else(|| s.get("name"))
            .or_else(|| s.get("kind"))
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string()
    };
    tail.iter()
        .map(|c| format!("{} {:.0} % in {}", name(&c["source"]), 100.0 * c["share"].as_f64().unwrap(), c["spikes"]))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn a_planted_softirq_source_is_named_by_its_softirq() {
    if !is_root() {
        eprintln!("skipped: not root (tracing and SCHED_FIFO need it)");
        return;
    }
    let _serial = one_at_a_time();
    let cpu = last_cpu().to_string();
    let mut args: Vec<&str> =
        "latency --policy fifo --interval 1ms --duration 3s --trace on --json".split(' ').collect();
    args.extend(["--cpus", &cpu]);
    let is_net_rx = |c: &serde_json::Value| c["source"]["kind"] == "softirq" && c["source"]["name"] == NET_RX;
    let is_sender = |c: &serde_json::Value| c["source"]["comm"] == UDP_SENDER;
    let net_rx_share = |tail: &[serde_json::Value]| {
        tail.iter().filter(|c| is_net_rx(c)).map(|c| c["share"].as_f64().unwrap()).sum::<f64>()
    };
    // The machine's own NET_RX in the tail, measured first: what the planted one is judged
    // against (a VM's network interrupts can reach the tail of their own).
    let baseline = json_lines(stdout_of(&args).as_bytes()).remove(0);
    let own_share = net_rx_share(baseline["tail_culprits"].as_array().unwrap());
    let planted = plant_udp_bursts(last_cpu());
    let line = json_lines(stdout_of(&args).as_bytes()).remove(0);
    drop(planted);
    // The spikes the planted traffic took time in; in them the softirq's time is told apart
    // from the task that raised it (which sends the datagrams: on this VM a third to all of
    // the softirq's time).
    let spikes = line["attributed_spikes"].as_array().unwrap();
    let caused: Vec<&serde_json::Value> = spikes
        .iter()
        .filter(|s| s["culprits"].as_array().unwrap().iter().any(|c| is_net_rx(c) || is_sender(c)))
        .collect();
    let with_net_rx = caused.iter().filter(|s| s["culprits"].as_array().unwrap().iter().any(is_net_rx)).count();
    // And the tail names it, with more of the tail than the machine's own NET_RX had
    // without the traffic. (Not its rank: a neighbour's real-time or deadline tasks on the
    // CPU, another session's tests once, took 97 % of the tail and NET_RX was sixth.)
    let tail = line["tail_culprits"].as_array().unwrap();
    let share = net_rx_share(tail);
    assert!(
        caused.len() >= 5 && with_net_rx * 2 > caused.len() && share > own_share,
        "{} spikes, {} with the planted traffic, NET_RX in {with_net_rx}; NET_RX {:.0} % of the tail \
         (without the traffic {:.0} %); p99 {:.1} µs, {} events lost; tail: {}",
        spikes.len(),
        caused.len(),
        100.0 * share,
        100.0 * own_share,
        line["p99_ns"].as_f64().unwrap() / 1e3,
        line["trace_lost_events"],
        tail_summary(tail)
    );
    assert_eq!(left_behind_instances(), Vec::<String>::new());
}

#[test]
fn tracing_says_why_it_cannot_attribute() {
    // Unpinned threads: the run measures and says what tracing needs.
    let out = stdout_of(&["latency", "--interval", "1ms", "--loops", "50", "--trace", "on"]);
    assert!(out.contains("tracing: no attribution: tracing needs every measuring thread pinned (--cpus)"), "{out}");
    let json =
        json_lines(stdout_of(&["latency", "--interval", "1ms", "--loops", "50", "--trace", "on", "--json"]).as_bytes());
    assert!(json[0]["attribution"].as_str().unwrap().contains("pinned"), "{}", json[0]);
    // Off by default: no keys at all.
    let plain = json_lines(stdout_of(&["latency", "--interval", "1ms", "--loops", "50", "--json"]).as_bytes());
    assert!(plain[0].get("attribution").is_none() && plain[0].get("tail_culprits").is_none(), "{}", plain[0]);
}

#[test]
fn an_unprivileged_run_still_measures_and_says_tracing_needs_root() {
    let Some(out) = as_nobody(&[], &["latency", "--interval", "1ms", "--loops", "50", "--cpus", "0", "--trace", "on"])
    else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("T0") && stdout.contains("tracing: no attribution:"), "{stdout}");
    assert!(stdout.contains("root"), "{stdout}");
}

// Signals: a traced run removes its instance however it is stopped, and one that could
// not (SIGKILLed with its trial process) is removed by the next traced run.

/// Where the tests look for instances (schedlab mounts tracefs here when nothing has).
const INSTANCES: &str = "/sys/kernel/tracing/instances";

/// The pid in a schedlab instance's name, `schedlab-<pid>-<n>`.
fn instance_owner(name: &str) -> Option<i32> {
    name.strip_prefix("schedlab-")?.split_once('-')?.0.parse().ok()
}

/// The schedlab instances in a held `instances` directory: read through the descriptor,
/// they stay visible after a run unmounts the tracefs it mounted.
fn instances_in(dir: &File) -> Vec<String> {
    std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| instance_owner(n).is_some())
        .collect()
}

/// The instances whose owner has ended (gone, or a zombie): stale ones.
fn stale_in(dir: &File) -> Vec<String> {
    instances_in(dir).into_iter().filter(|n| !instance_owner(n).is_some_and(is_running)).collect()
}

fn owned_by(dir: &File, pid: i32) -> Vec<String> {
    instances_in(dir).into_iter().filter(|n| instance_owner(n) == Some(pid)).collect()
}

/// A 10 s traced SCHED_FIFO run on `cpu` in a process group of its own (what a terminal
/// gives a command), caught once its trial process has made its instance.
struct TracedRun {
    child: Child,
    /// The `schedlab __trial` process that measures, and owns the instance.
    trial: i32,
    /// The tracefs `instances` directory, held open.
    instances: File,
}

fn start_traced_run(cpu: usize) -> TracedRun {
    let cpu = cpu.to_string();
    let child = std::process::Command::new(binary_path())
        .args(["latency", "--policy", "fifo", "--cpus", &cpu, "--duration", "10s", "--trace", "on"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut trial = None;
    // Generous: a trial process starts in a few ms, but the machine is shared.
    let made = wait_until(Duration::from_secs(30), || {
        let trials = children_of(pid);
        trial = std::fs::read_dir(INSTANCES)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| instance_owner(&e.file_name().to_string_lossy()))
            .find(|owner| trials.contains(owner));
        trial.is_some()
    });
    assert!(made, "no instance of a trial of {pid} appeared in {INSTANCES}");
    // Held from here on: the run unmounts tracefs at its end if it mounted it.
    let instances = File::open(INSTANCES).unwrap();
    TracedRun { child, trial: trial.unwrap(), instances }
}

impl TracedRun {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Wait for the command to end (a minute at most); its status and stderr.
    fn wait(&mut self) -> (std::process::ExitStatus, String) {
        let ended = wait_until(Duration::from_secs(60), || self.child.try_wait().unwrap().is_some());
        if !ended {
            let _ = self.child.kill();
        }
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            std::io::Read::read_to_string(&mut pipe, &mut err).unwrap();
        }
        assert!(ended, "still running a minute after the signal: {err}");
        (status, err)
    }

    /// Wait until the trial process has ended too (it is not ours to reap).
    fn wait_for_trial(&self) {
        let trial = self.trial;
        assert!(wait_until(Duration::from_secs(30), || !is_running(trial)), "trial process {trial} still runs");
    }
}

/// tracefs was mounted (anywhere) when this was read.
fn tracefs_mounted() -> bool {
    std::fs::read_to_string("/proc/mounts").unwrap().lines().any(|l| l.split(' ').nth(2) == Some("tracefs"))
}

/// Stop a traced run with `sig` (to the whole group: a Ctrl-C; else to the command) and
/// check that its instance went with it.
fn stopped_by(sig: i32, whole_group: bool) {
    if !is_root() {
        eprintln!("skipped: not root (tracing needs it)");
        return;
    }
    let _serial = one_at_a_time();
    let mut run = start_traced_run(last_cpu());
    assert_eq!(owned_by(&run.instances, run.trial).len(), 1);
    // SAFETY: signalling our own child (or its process group, which it leads).
    unsafe { libc::kill(if whole_group { -run.pid() } else { run.pid() }, sig) };
    let (status, err) = run.wait();
    run.wait_for_trial();
    if sig != libc::SIGKILL {
        // Stopped early, it reports the samples taken.
        assert!(status.success(), "{status}: {err}");
    }
    assert_eq!(owned_by(&run.instances, run.trial), Vec::<String>::new(), "{err}");
    assert_eq!(owned_by(&run.instances, run.pid()), Vec::<String>::new(), "{err}");
}

#[test]
fn sigterm_leaves_no_trace_instance() {
    stopped_by(libc::SIGTERM, false);
}

#[test]
fn ctrl_c_leaves_no_trace_instance() {
    stopped_by(libc::SIGINT, true);
}

/// SIGKILL to the command alone: its trial process gets SIGTERM (the parent-death signal)
/// and removes the instance itself.
#[test]
fn sigkill_of_the_command_leaves_no_trace_instance() {
    stopped_by(libc::SIGKILL, false);
}

/// SIGKILL to the command and its trial process at once (`kill -9 -PGID`, the OOM killer,
/// a cgroup's end): nothing of schedlab runs to remove the instance, so it is left, with its
/// owner dead; the next traced run removes it and leaves none of its own.
#[test]
fn an_instance_left_by_sigkill_is_removed_by_the_next_traced_run() {
    if !is_root() {
        eprintln!("skipped: not root (tracing needs it)");
        return;
    }
    let _serial = one_at_a_time();
    let mounted_before = tracefs_mounted();
    let cpu = last_cpu();
    let mut run = start_traced_run(cpu);
    // SAFETY: signalling the process group our child leads.
    unsafe { libc::kill(-run.pid(), libc::SIGKILL) };
    run.wait();
    run.wait_for_trial();
    let left = owned_by(&run.instances, run.trial);
    assert_eq!(left.len(), 1, "the SIGKILLed trial's instance: {:?}", instances_in(&run.instances));
    // The next traced run, right away: the trial may still be a zombie (its new parent,
    // init, reaps it when it gets to it), which owns nothing.
    let cpu_arg = cpu.to_string();
    let out = stdout_of(&["latency", "--policy", "fifo", "--duration", "1s", "--cpus", &cpu_arg, "--trace", "on"]);
    assert!(out.contains("tail of CPU") && !out.contains("no attribution"), "{out}");
    assert_eq!(owned_by(&run.instances, run.trial), Vec::<String>::new(), "{left:?} is left");
    assert_eq!(stale_in(&run.instances), Vec::<String>::new(), "a traced run left its instance");
    // The killed run had mounted tracefs (nothing unmounted it): put that back as it was.
    if !mounted_before && tracefs_mounted() {
        let target = std::ffi::CString::new("/sys/kernel/tracing").unwrap();
        // SAFETY: a NUL-terminated path; a lazy unmount leaves anyone inside working.
        unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    }
}
