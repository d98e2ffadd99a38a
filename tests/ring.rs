//! The ring on the real binary: every mode and IPC, the table, the JSON, bad input,
//! privileges, and that no member outlives a run however it ends.

mod common;

use common::*;
use predicates::prelude::*;
use std::process::Stdio;
use std::time::Duration;

const KEYS: [&str; 13] = [
    "procs",
    "laps",
    "hops",
    "real_s",
    "cpu_s",
    "user_s",
    "sys_s",
    "projected_s",
    "nvcsw",
    "nivcsw",
    "ns_per_hop",
    "overhead_ns",
    "ns_per_switch",
];

fn ring_json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut argv = vec!["ring"];
    argv.extend_from_slice(args);
    argv.push("--json");
    json_lines(stdout_of(&argv).as_bytes())
}

fn check_ring_line(line: &serde_json::Value, procs: u64, laps: u64) {
    for key in KEYS {
        assert!(line.get(key).is_some(), "missing key {key} in {line}");
    }
    assert_eq!(line["procs"], procs);
    assert_eq!(line["laps"], laps);
    // laps trips round the ring, plus STOP's trip from member 0 to the last one.
    assert_eq!(line["hops"], laps * procs + procs - 1);
    let f = |k: &str| line[k].as_f64().unwrap();
    assert!(f("real_s") > 0.0 && f("cpu_s") > 0.0, "{line}");
    assert!((f("cpu_s") - f("user_s") - f("sys_s")).abs() < 1e-6, "cpu = user + sys: {line}");
    assert!((f("ns_per_hop") - f("real_s") * 1e9 / f("hops")).abs() < 1e-3 * f("ns_per_hop"), "{line}");
    assert!(f("overhead_ns") > 0.0, "{line}");
    assert!((f("ns_per_switch") - (f("ns_per_hop") - f("overhead_ns"))).abs() < 1e-6, "{line}");
}

#[test]
fn every_mode_and_ipc_passes_the_token() {
    for mode in ["process", "thread"] {
        for ipc in ["pipe", "eventfd", "futex"] {
            let lines = ring_json(&["--procs", "2,3", "--laps", "300", "--mode", mode, "--ipc", ipc]);
            assert_eq!(lines.len(), 2, "{mode}/{ipc}");
            check_ring_line(&lines[0], 2, 300);
            check_ring_line(&lines[1], 3, 300);
            assert_eq!(lines[0]["mode"], mode);
            assert_eq!(lines[0]["ipc"], ipc);
        }
    }
}

#[test]
fn on_one_cpu_every_hop_is_a_switch() {
    let lines = ring_json(&["--procs", "4", "--laps", "500", "--pin", "same"]);
    let l = &lines[0];
    let switches = l["nvcsw"].as_u64().unwrap() + l["nivcsw"].as_u64().unwrap();
    let hops = l["hops"].as_u64().unwrap();
    // Only one member can run on the CPU, so the token cannot move without a switch.
    assert!(switches >= hops * 9 / 10, "{switches} switches for {hops} hops");
    let cpus = l["cpus"].as_array().unwrap();
    assert_eq!(cpus.len(), 4);
    assert!(cpus.iter().all(|c| c == &cpus[0]), "all members on one CPU: {l}");
}

#[test]
fn projected_is_the_smallest_ring_scaled_per_hop() {
    let lines = ring_json(&["--procs", "4,2,8", "--laps", "400"]);
    let procs: Vec<u64> = lines.iter().map(|l| l["procs"].as_u64().unwrap()).collect();
    assert_eq!(procs, vec![2, 4, 8], "sweeps run in ascending order");
    let base = &lines[0];
    // cpu / hops * hops: equal up to floating-point rounding.
    let (projected, cpu) = (base["projected_s"].as_f64().unwrap(), base["cpu_s"].as_f64().unwrap());
    assert!((projected - cpu).abs() <= 1e-12 * cpu.max(1e-9), "{projected} vs {cpu}");
    let per_hop = base["cpu_s"].as_f64().unwrap() / base["hops"].as_f64().unwrap();
    for l in &lines[1..] {
        let expected = per_hop * l["hops"].as_f64().unwrap();
        let got = l["projected_s"].as_f64().unwrap();
        assert!((got - expected).abs() < 1e-9 * expected.max(1.0), "{got} vs {expected}");
    }
}

#[test]
fn the_table_has_the_ncar_columns_and_a_row_per_count() {
    let text = stdout_of(&["ring", "--procs", "2,4", "--laps", "300"]);
    let header = text.lines().find(|l| l.contains("Processes")).expect("a header line");
    for col in ["Real s", "CPU s", "User s", "System s", "Projected s", "ns/hop", "ns/switch"] {
        assert!(header.contains(col), "missing column {col}: {header}");
    }
    let rows: Vec<&str> = text.lines().skip_while(|l| !l.contains("Processes")).skip(1).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows[0].trim_start().starts_with("2 "));
    assert!(rows[1].trim_start().starts_with("4 "));
    // The base row's CPU and Projected cells are the same number.
    let cells: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(cells[2], cells[5], "{}", rows[0]);
    assert!(text.contains("token pass without a switch"), "{text}");
}

#[test]
fn duration_mode_runs_about_that_long() {
    let lines = ring_json(&["--procs", "2", "--duration", "200ms"]);
    let l = &lines[0];
    assert!(l["laps"].as_u64().unwrap() > 0);
    assert_eq!(l["duration_s"], 0.2);
    let real = l["real_s"].as_f64().unwrap();
    assert!(real >= 0.19, "the ring stops only after the duration: {real}");
}

#[test]
fn spread_and_unpinned_placements_and_a_working_set() {
    let spread = ring_json(&["--procs", "3", "--laps", "100", "--pin", "spread"]);
    assert_eq!(spread[0]["pin"], "spread");
    let none = ring_json(&["--procs", "3", "--laps", "100", "--pin", "none", "--work-kb", "64"]);
    assert_eq!(none[0]["cpus"], serde_json::json!([]));
    assert_eq!(none[0]["work_kb"], 64);
}

#[test]
fn batch_and_idle_policies_run_unprivileged_too() {
    for policy in ["batch", "idle"] {
        let lines = ring_json(&["--procs", "2", "--laps", "100", "--policy", policy]);
        assert_eq!(lines[0]["policy"], policy);
    }
}

#[test]
fn fifo_runs_with_privilege() {
    if !is_root() {
        eprintln!("skipped: needs root for SCHED_FIFO");
        return;
    }
    let lines = ring_json(&["--procs", "2", "--laps", "200", "--policy", "fifo", "--prio", "20"]);
    assert_eq!(lines[0]["policy"], "fifo");
    assert_eq!(lines[0]["prio"], 20);
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    refused(&["ring", "--procs", "1"], "at least 2 members");
    refused(&["ring", "--procs", "0"], "at least 2 members");
    refused(&["ring", "--procs", "2..2"], "empty");
    refused(&["ring", "--laps", "0"], "at least 1");
    refused(&["ring", "--policy", "fifoo"], "possible values");
    refused(&["ring", "--ipc", "carrier-pigeon"], "possible values");
    refused(&["ring", "--prio", "5"], "only for fifo and rr");
    refused(&["ring", "--policy", "fifo", "--prio", "100"], "1 to 99");
    refused(&["ring", "--duration", "0s"], "greater than zero");
    refused(&["ring", "--laps", "5", "--duration", "1s"], "cannot be used with");
    refused(&["ring", "--procs", "2", "--cpus", "1000"], "is not available");
    refused(&["ring", "--procs", "2", "--cpus", "100000"], "beyond what Linux can address");
}

#[test]
fn ring_lengths_that_cannot_run_are_refused() {
    let refused_saying = |args: &[&str], needles: &[&str]| {
        let out = schedlab().args(args).timeout(Duration::from_secs(30)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} measured something");
        for needle in needles {
            assert!(err.contains(needle), "{args:?}: '{needle}' not in: {err}");
        }
    };
    // Once one lap, reported as a 1 ns ring.
    refused_saying(
        &["ring", "--procs", "2", "--duration", "1ns"],
        &["too short to time a ring of 2 members", "give --duration 1ms or more (at least 1 ms, and 10 µs a member)"],
    );
    refused_saying(&["ring", "--procs", "1000", "--duration", "5ms"], &["give --duration 10ms or more"]);
    refused_saying(&["ring", "--procs", "2", "--duration", "48h"], &["longer than the 24 h one trial may take"]);
    refused_saying(&["ring", "--laps", "-5"], &["-5 laps is negative: give a whole number of at least 1"]);
    refused_saying(
        &["ring", "--procs", "64", "--laps", "1000000000000"],
        &["more than 24 h even at 100 ns a hop", "give at most 13500000000 laps, or --duration"],
    );
    refused_saying(
        &["ring", "--procs", "2", "--duration", "2s", "--timeout", "1s"],
        &["--timeout 1s is not longer than --duration 2s", "give --timeout 4s or more"],
    );
}

#[test]
fn a_ring_beyond_pid_max_is_refused_before_forking() {
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
    let too_many = (pid_max + 10).to_string();
    schedlab()
        .args(["ring", "--procs", &too_many, "--laps", "1"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pid_max").or(predicate::str::contains("threads-max")));
}

#[test]
fn a_thread_ring_beyond_the_open_files_limit_is_refused() {
    // Lower the hard limit for the child only, then ask for more pipes than it allows.
    let out = std::process::Command::new("prlimit")
        .args(["--nofile=256:256", "--"])
        .arg(binary_path())
        .args(["ring", "--procs", "600", "--mode", "thread", "--laps", "1"])
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: prlimit not available");
        return;
    };
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("RLIMIT_NOFILE") && err.contains("ulimit -n"), "{err}");
}

#[test]
fn realtime_without_privilege_is_refused_naming_the_fix() {
    let Some(out) = as_nobody(&["--rtprio=0"], &["ring", "--procs", "2", "--laps", "10", "--policy", "fifo"]) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("CAP_SYS_NICE") && err.contains("ulimit -r"), "{err}");
    assert!(out.stdout.is_empty(), "nothing measured: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn too_many_processes_for_rlimit_nproc_is_refused() {
    let Some(out) = as_nobody(&["--nproc=30"], &["ring", "--procs", "100", "--laps", "10"]) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("RLIMIT_NPROC") && err.contains("ulimit -u"), "{err}");
}

#[test]
fn an_unprivileged_user_can_run_a_normal_ring() {
    let Some(out) = as_nobody(&[], &["ring", "--procs", "2,4", "--laps", "100", "--json"]) else { return };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_lines(&out.stdout).len(), 2);
}

/// Start a long ring and return it once all `procs` members exist.
fn start_long_ring(procs: usize, extra: &[&str]) -> (std::process::Child, Vec<i32>) {
    let procs_text = procs.to_string();
    let mut args = vec!["ring", "--procs", &procs_text, "--duration", "60s"];
    args.extend_from_slice(extra);
    spawn_with_children(&args, procs)
}

#[test]
fn sigint_and_sigterm_stop_every_member() {
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let (child, members) = start_long_ring(6, &[]);
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code));
        assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
        assert_none_running(&members);
    }
}

#[test]
fn killing_schedlab_with_sigkill_takes_the_members_with_it() {
    let (mut child, members) = start_long_ring(5, &[]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_none_running(&members);
}

#[test]
fn a_member_killed_mid_run_fails_the_run_instead_of_hanging_it() {
    let (child, members) = start_long_ring(5, &[]);
    // SAFETY: killing one of our test's grandchildren.
    unsafe { libc::kill(members[2], libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("killed by SIGKILL"), "{err}");
    assert_none_running(&members);
}

#[test]
fn thread_ring_host_is_stopped_by_sigterm() {
    // One child: the process that hosts every member as a thread.
    let (child, hosts) = spawn_with_children(&["ring", "--procs", "8", "--duration", "60s", "--mode", "thread"], 1);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143));
    assert_none_running(&hosts);
}

#[test]
fn a_stopped_member_is_caught_by_the_timeout() {
    // Laps that would take hours, so only the timeout ends the ring (a --duration longer
    // than --timeout is refused: such a ring could never end by itself).
    let args = ["ring", "--procs", "4", "--laps", "1000000000", "--timeout", "2s"];
    let (child, members) = spawn_with_children(&args, 4);
    // SAFETY: stopping one of our test's grandchildren.
    unsafe { libc::kill(members[1], libc::SIGSTOP) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("timed out"), "{err}");
    assert_none_running(&members);
}

#[test]
fn an_ignored_sighup_does_not_stop_the_run() {
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("trap '' HUP; exec {} ring --procs 2 --duration 1s --json", binary_path().display()))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    // SAFETY: signalling a child we spawned (sh has exec'd schedlab by now).
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_lines(&out.stdout).len(), 1);
}

#[test]
fn csv_and_markdown_print_shows_table_and_json_is_an_alias() {
    let csv = stdout_of(&["ring", "--procs", "2,4", "--laps", "300", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "# experiment 1 (ring)", "{csv}");
    assert!(lines[1].starts_with("procs,ok/runs,Real s"), "{csv}");
    assert!(lines[2].starts_with("2,1/1,") && lines[3].starts_with("4,1/1,"), "{csv}");
    let markdown = stdout_of(&["ring", "--procs", "2", "--laps", "300", "--format", "markdown"]);
    assert!(markdown.starts_with("### experiment 1 (ring)") && markdown.contains("| ok/runs |"), "{markdown}");
    // --json and --format json print the same keys.
    for args in [["--json", "--procs"], ["--format=json", "--procs"]] {
        let out = schedlab().args(["ring", "--laps", "300"]).args(args).arg("2").output().unwrap();
        let line = &json_lines(&out.stdout)[0];
        assert!(line["ns_per_switch"].as_f64().unwrap() > 0.0, "{line}");
    }
    schedlab().args(["ring", "--json", "--format", "csv"]).assert().code(2);
}

#[test]
fn a_size_that_fails_is_said_and_the_sweep_goes_on_to_exit_3() {
    // Laps that would take hours: each size ends at its --timeout, one after the other.
    let out = std::process::Command::new(binary_path())
        .args(["ring", "--procs", "2,3", "--laps", "1000000000", "--timeout", "1s", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    for size in ["procs=2", "procs=3"] {
        assert!(err.lines().any(|l| l.contains(size) && l.contains("(timed_out)")), "{size}: {err}");
    }
    // A line for each ring all the same, as workload and command print for theirs: its
    // settings, status and reason, and the figures' keys with nothing measured.
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 2, "{}", String::from_utf8_lossy(&out.stdout));
    for (line, procs) in lines.iter().zip([2, 3]) {
        assert_eq!((line["family"].as_str(), line["procs"].as_u64()), (Some("ring"), Some(procs)), "{line}");
        assert_eq!(line["status"], "timed_out", "{line}");
        assert!(line["reason"].as_str().is_some_and(|r| r.contains("1.0 s")), "{line}");
        assert!(line["ns_per_switch"].is_null() && line["projected_s"].is_null(), "{line}");
        assert_eq!((line["mode"].as_str(), line["policy"].as_str()), (Some("process"), Some("other")), "{line}");
    }
}
