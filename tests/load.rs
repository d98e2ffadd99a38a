//! Background load (`--load KIND[:N]`): it runs during the measured window and is gone
//! afterwards however schedlab ends, its throughput is recorded, it never enters the
//! measured figures, and bad input is refused with exit 2 before anything starts.

mod common;

use common::*;
use std::process::Stdio;
use std::time::Duration;

/// Load processes (by their command name) that carry `tag` in their environment, which
/// they inherit from the schedlab the test started: other tests' loads are not counted.
fn load_processes(tag: &str) -> Vec<i32> {
    let needle = format!("SCHEDLAB_LOAD_TEST={tag}");
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.trim_end() != "schedlab-load" || !is_running(pid) {
            continue;
        }
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if environ.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

fn tag(name: &str) -> String {
    format!("{name}-{}", std::process::id())
}

/// The policy (field 41 of /proc/PID/stat; 0 is SCHED_OTHER) and nice value (field 19).
fn policy_and_nice(pid: i32) -> Option<(String, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
    Some((fields.get(38)?.to_string(), fields.get(16)?.to_string()))
}

#[test]
fn the_load_runs_during_the_window_at_sched_other_and_is_gone_after() {
    let tag = tag("window");
    let child = std::process::Command::new(binary_path())
        .args(["latency", "--policy", "fifo", "--loops", "1500", "--interval", "1ms", "--load", "cpu:2"])
        .args(["--load-nice", "5", "--json"])
        .env("SCHEDLAB_LOAD_TEST", &tag)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    assert!(wait_until(Duration::from_secs(20), || {
        seen = load_processes(&tag);
        seen.len() == 2
    }));
    for &pid in &seen {
        // Never real-time, though the measuring thread is SCHED_FIFO.
        if let Some((policy, nice)) = policy_and_nice(pid) {
            assert_eq!((policy.as_str(), nice.as_str()), ("0", "5"), "load process {pid}");
        }
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_none_running(&seen);
    assert!(load_processes(&tag).is_empty());
    let line = &json_lines(&out.stdout)[0];
    assert_eq!(line["load"], "cpu");
    assert_eq!((line["load_instances"].as_u64(), line["load_processes"].as_u64()), (Some(2), Some(2)));
    assert!(line["load_loops_per_s"].as_f64().unwrap() > 0.0, "{line}");
    assert!(line["load_cpu_s"].as_f64().unwrap() > 0.0, "{line}");
    let window = line["load_window_s"].as_f64().unwrap();
    assert!((1.0..30.0).contains(&window), "the window spans the 1.5 s run: {window}");
}

#[test]
fn every_kind_records_its_throughput() {
    for (kind, key) in [("io:1", "load_io_bytes_per_s"), ("pipe:1", "load_messages_per_s"), ("mixed:1", "")] {
        let out = stdout_of(&["latency", "--loops", "1000", "--interval", "1ms", "--load", kind, "--json"]);
        let line = &json_lines(out.as_bytes())[0];
        let keys: Vec<&str> = if key.is_empty() {
            vec!["load_loops_per_s", "load_io_bytes_per_s", "load_messages_per_s"]
        } else {
            vec![key]
        };
        for key in keys {
            assert!(line[key].as_f64().is_some_and(|v| v > 0.0), "{kind}: {key} in {line}");
        }
    }
    // Ring and workload carry it too.
    let out = stdout_of(&["ring", "--procs", "2", "--laps", "20000", "--load", "pipe:1", "--json"]);
    assert!(json_lines(out.as_bytes())[0]["load_messages_per_s"].as_f64().unwrap() > 0.0, "{out}");
}

#[test]
fn the_load_is_kept_out_of_the_measured_rusage() {
    // One child that mostly waits on O_SYNC writes, beside two busy loops: were the
    // load's CPU time counted in, the child's CPU would exceed what one process can use
    // in the wall time.
    let out = stdout_of(&["workload", "io", "--procs", "1", "--transfer-size", "64KiB", "--load", "cpu:2", "--json"]);
    let line = &json_lines(out.as_bytes())[0];
    assert_eq!(line["status"], "ok", "{line}");
    let cpu = line["user_s"].as_f64().unwrap() + line["sys_s"].as_f64().unwrap();
    let wall = line["wall_s"].as_f64().unwrap();
    let load_cpu = line["load_cpu_s"].as_f64().unwrap();
    assert!(cpu <= wall * 1.05 + 0.005, "the child's CPU {cpu} s within its wall {wall} s");
    assert!(load_cpu > cpu, "the load's own CPU {load_cpu} s is apart from the child's {cpu} s");
    // A ring pinned to one CPU: its members' CPU time cannot exceed the ring's real time.
    let out = stdout_of(&["ring", "--procs", "2", "--laps", "20000", "--pin", "same", "--load", "cpu:2", "--json"]);
    let line = &json_lines(out.as_bytes())[0];
    let (cpu, real) = (line["cpu_s"].as_f64().unwrap(), line["real_s"].as_f64().unwrap());
    assert!(cpu <= real * 1.05 + 0.005, "ring CPU {cpu} s within its real {real} s: {line}");
    assert!(line["load_cpu_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_suite_varies_the_load_and_stores_its_figures() {
    let scratch = Scratch::new("load-suite");
    let suite = scratch.write(
        "load.toml",
        "[[experiment]]\nfamily = \"latency\"\nload = [\"none\", \"cpu:1\"]\nload_nice = 3\ninterval = \"1ms\"\nloops = 200\n",
    );
    let db = scratch.path("lab.db");
    ok_stdout(&db, &["run", &suite]);
    let export = export_json(&db, "latest");
    let run = &export["runs"][0];
    assert_eq!(run["options"]["loads"][0]["kind"], "cpu", "{}", run["options"]);
    let trials = run["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    let loaded = trials.iter().find(|t| t["params"]["load"] == "cpu:1").unwrap();
    assert_eq!(loaded["status"], "ok", "{loaded}");
    assert!(loaded["figures"]["load_loops_per_s"].as_f64().unwrap() > 0.0, "{loaded}");
    assert_eq!(loaded["figures"]["load_nice"], 3);
    let idle = trials.iter().find(|t| t["params"]["load"] == "none").unwrap();
    assert!(idle["figures"].get("load_loops_per_s").is_none(), "{idle}");
    let shown = ok_stdout(&db, &["show", "latest"]);
    assert!(shown.contains("Load (median over repeats)") && shown.contains("loops/s"), "{shown}");
}

/// Start `schedlab run` of a suite of long latency trials under a `mixed:1` load (a busy
/// loop, a writer and a pipe pair: four processes) into `db`, its load tagged with `tag`,
/// and wait until all four load processes run; returns the run and their pids.
fn start_long_loaded_run(scratch: &Scratch, db: &std::path::Path, tag: &str) -> (std::process::Child, Vec<i32>) {
    let suite = scratch.write(
        "long.toml",
        "[[experiment]]\nfamily = \"latency\"\nload = \"mixed:1\"\ninterval = \"1ms\"\nduration = \"20s\"\nrepeat = 2\n",
    );
    let child = std::process::Command::new(binary_path())
        .args(["run", &suite, "--db"])
        .arg(db)
        .env("SCHEDLAB_LOAD_TEST", tag)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    assert!(wait_until(Duration::from_secs(20), || {
        seen = load_processes(tag);
        seen.len() == 4
    }));
    (child, seen)
}

#[test]
fn nothing_of_the_load_survives_sigkill_of_the_orchestrator() {
    let scratch = Scratch::new("load-kill-orchestrator");
    let tag = tag("kill-orchestrator");
    let (mut child, seen) = start_long_loaded_run(&scratch, &scratch.path("lab.db"), &tag);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    assert_none_running(&seen);
    assert!(wait_until(Duration::from_secs(10), || load_processes(&tag).is_empty()), "{:?}", load_processes(&tag));
}

#[test]
fn nothing_of_the_load_survives_sigkill_of_the_trial_process() {
    let scratch = Scratch::new("load-kill-trial");
    let tag = tag("kill-trial");
    let db = scratch.path("lab.db");
    let (mut child, seen) = start_long_loaded_run(&scratch, &db, &tag);
    // The load's parent is the __trial process.
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", seen[0])).unwrap();
    let trial: i32 = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_ne!(trial, child.id() as i32);
    // SAFETY: a process of the run this test started.
    unsafe { libc::kill(trial, libc::SIGKILL) };
    assert_none_running(&seen);
    // The run goes on to its next trial, which starts a load of its own; stop it there.
    signal(&child, libc::SIGTERM);
    let status = child.wait().unwrap();
    assert!(status.code().is_some(), "{status:?}");
    assert!(wait_until(Duration::from_secs(10), || load_processes(&tag).is_empty()), "{:?}", load_processes(&tag));
    let export = export_json(&db, "latest");
    let first = &export["runs"][0]["trials"][0];
    assert_eq!(first["status"], "failed", "{first}");
}

#[test]
fn bad_load_input_is_refused_before_anything_starts() {
    refused(&["latency", "--loops", "10", "--load", "gpu"], "unknown load kind 'gpu'");
    refused(&["ring", "--procs", "2", "--load", "cpu:0"], "at least 1");
    refused(&["workload", "cpu", "--load", "pipe", "--load-cpus", "1000"], "CPU 1000 is not available");
    refused(&["latency", "--loops", "10", "--load", "io", "--load-dir", "/proc"], "cannot be written");
    refused(&["latency", "--loops", "10", "--load", "io", "--load-dir", "/nonexistent/dir"], "not a directory");
    refused(&["latency", "--loops", "10", "--load", "cpu", "--load-nice", "20"], "out of range");
    // In a suite: the file, line and key, and no run is stored.
    let scratch = Scratch::new("load-bad-suite");
    let db = scratch.path("lab.db");
    for (text, needle) in [
        ("load = \"gpu\"", "unknown load kind"),
        ("load = \"cpu:0\"", "at least 1"),
        ("load = \"cpu\"\nload_cpus = \"1000\"", "CPU 1000 is not available"),
    ] {
        let suite = scratch.write("bad.toml", &format!("[[experiment]]\nfamily = \"latency\"\nloops = 10\n{text}\n"));
        let out = schedlab_in(&db, &["run", &suite]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(needle), "{text}: {err}");
    }
    let listed = schedlab_in(&db, &["list"]);
    assert!(!String::from_utf8_lossy(&listed.stdout).contains("bad"), "no run was stored");
}

#[test]
fn unprivileged_bad_load_input_is_refused_too() {
    // A negative nice needs CAP_SYS_NICE; a directory nobody may write is refused.
    let Some(out) = as_nobody(&[], &["latency", "--loops", "10", "--load", "cpu", "--load-nice", "-5"]) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--load-nice") && err.contains("CAP_SYS_NICE"), "{err}");
    let Some(out) = as_nobody(&[], &["latency", "--loops", "10", "--load", "io", "--load-dir", "/root"]) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be written") || err.contains("not a directory"), "{err}");
    // Unprivileged, a nice-0 load runs beside an unprivileged measurement.
    let Some(out) = as_nobody(&[], &["latency", "--loops", "200", "--load", "cpu:1", "--json"]) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(json_lines(&out.stdout)[0]["load_loops_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn ctrl_c_and_sigterm_of_a_family_command_take_the_load_down() {
    for (sig, args) in [
        (libc::SIGINT, vec!["latency", "--duration", "20s", "--load", "pipe:1"]),
        (libc::SIGTERM, vec!["ring", "--procs", "2", "--duration", "20s", "--load", "io:1"]),
    ] {
        let tag = tag(&format!("signal-{sig}"));
        let child = std::process::Command::new(binary_path())
            .args(&args)
            .env("SCHEDLAB_LOAD_TEST", &tag)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let want = if args[0] == "latency" { 2 } else { 1 };
        let mut seen = Vec::new();
        assert!(wait_until(Duration::from_secs(20), || {
            seen = load_processes(&tag);
            seen.len() == want
        }));
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.code().is_some(), "{args:?}: {:?}", out.status);
        assert_none_running(&seen);
        assert!(load_processes(&tag).is_empty(), "{args:?}");
    }
}
