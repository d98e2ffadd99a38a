//! The orchestrator of `schedlab run` must not disturb what a trial measures: while a
//! SCHED_FIFO latency trial measures on one CPU, every thread of the orchestrator stays
//! SCHED_OTHER, off that CPU, and asleep (no periodic wakeups).

mod common;

use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Fields of /proc/<pid>/task/<tid>/stat after the command name, numbered as proc(5)
/// numbers them (3 = state ... 41 = policy).
fn stat_field(pid: i32, tid: i32, field: usize) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    rest.split_whitespace().nth(field - 3)?.parse().ok()
}

fn tasks(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

fn status_line(pid: i32, tid: i32, key: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap_or_default();
    text.lines().find_map(|l| l.strip_prefix(key)).unwrap_or("").trim().to_string()
}

/// "0-1,3" -> [0, 1, 3]
fn cpu_list(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

const SCHED_OTHER: u64 = 0;
const SCHED_FIFO: u64 = 1;

#[test]
fn the_orchestrator_of_a_fifo_latency_trial_is_not_real_time_and_not_on_its_cpu() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !is_root() || cpus < 2 {
        eprintln!("skipped: needs root (SCHED_FIFO) and at least 2 CPUs (one to measure, one for the rest)");
        return;
    }
    let measured = cpus - 1;
    let dir = Scratch::new("orchestrator");
    let suite = dir.write(
        "fifo.toml",
        &format!(
            "[[experiment]]\nfamily = \"latency\"\npolicy = \"fifo\"\ncpus = \"{measured}\"\ninterval = \"1ms\"\nloops = 4000\n"
        ),
    );
    let db = dir.path("o.db");
    let mut run = Command::new(binary_path())
        .args(["run", &suite, "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let orchestrator = run.id() as i32;
    // Wait for the trial's measuring thread: a SCHED_FIFO thread in the trial process.
    let mut trial = None;
    let found = wait_until(Duration::from_secs(20), || {
        // The trial is the `schedlab __trial` child; preflight's forked policy probes
        // (children too, briefly SCHED_FIFO) are not it.
        let is_trial = |pid: i32| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .unwrap_or_default()
                .split(|&b| b == 0)
                .any(|a| a == b"__trial")
        };
        trial = children_of(orchestrator)
            .into_iter()
            .filter(|&t| is_trial(t))
            .find(|&t| tasks(t).iter().any(|&tid| stat_field(t, tid, 41) == Some(SCHED_FIFO)));
        trial.is_some()
    });
    assert!(found, "no SCHED_FIFO trial thread appeared");
    let trial = trial.unwrap();

    let switches = |tid: i32| status_line(orchestrator, tid, "voluntary_ctxt_switches:").parse::<u64>().unwrap_or(0);
    let before: Vec<(i32, u64)> = tasks(orchestrator).into_iter().map(|t| (t, switches(t))).collect();
    let start = Instant::now();
    let mut samples = 0;
    while start.elapsed() < Duration::from_secs(1) && is_running(trial) {
        for tid in tasks(orchestrator) {
            let policy = stat_field(orchestrator, tid, 41);
            let allowed = cpu_list(&status_line(orchestrator, tid, "Cpus_allowed_list:"));
            assert_eq!(policy, Some(SCHED_OTHER), "orchestrator thread {tid} runs under policy {policy:?}");
            assert!(
                !allowed.is_empty() && !allowed.contains(&measured),
                "orchestrator thread {tid} may run on {allowed:?}"
            );
        }
        samples += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    let still_measuring = is_running(trial);
    let woke: u64 = before.iter().map(|&(t, n)| switches(t).saturating_sub(n)).sum();
    assert!(samples >= 5, "the trial ended before it could be watched");
    assert_eq!(before.len(), 1, "the orchestrator waits in one thread, not {}", before.len());
    if still_measuring {
        // Polling at 10 Hz would show about 10 wakeups in this second.
        assert!(woke <= 2, "the orchestrator woke {woke} times in a second while the trial measured");
    }
    let status = run.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    // Between trials its mask is whole again.
    assert_eq!(ok_stdout(&db, &["list", "--json"]).matches("\"ok\":1").count(), 1);
}
