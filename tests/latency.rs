//! `schedlab latency` on the real binary.

mod common;

use common::*;
use predicates::prelude::*;
use std::process::Stdio;
use std::time::Duration;

fn latency_json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut argv = vec!["latency"];
    argv.extend_from_slice(args);
    argv.push("--json");
    json_lines(stdout_of(&argv).as_bytes())
}

fn check_monotone(l: &serde_json::Value) {
    let v = |k: &str| l[k].as_u64().unwrap_or_else(|| panic!("{k} in {l}"));
    assert!(v("samples") > 0, "{l}");
    assert!(v("min_ns") <= v("p50_ns"), "{l}");
    assert!(v("p50_ns") <= v("p90_ns") && v("p90_ns") <= v("p99_ns"), "{l}");
    assert!(v("p99_ns") <= v("p999_ns") && v("p999_ns") <= v("p9999_ns") && v("p9999_ns") <= v("max_ns"), "{l}");
    let avg = l["avg_ns"].as_f64().unwrap();
    assert!(v("min_ns") as f64 <= avg * 1.001 && avg <= v("max_ns") as f64 * 1.001, "{l}");
}

#[test]
fn short_runs_give_sane_monotone_statistics() {
    let mut policies = vec!["other"];
    if is_root() {
        policies.push("fifo");
    }
    for policy in policies {
        let lines = latency_json(&["--loops", "200", "--interval", "1ms", "--policy", policy]);
        assert_eq!(lines.len(), 1);
        let l = &lines[0];
        check_monotone(l);
        assert_eq!(l["policy"], policy);
        assert_eq!(l["interval_ns"], 1_000_000);
        assert_eq!(l["samples"].as_u64().unwrap() + l["overruns"].as_u64().unwrap(), 200, "{l}");
        if policy == "fifo" {
            assert_eq!(l["prio"], 95, "the default RT priority is high but below 99");
        }
    }
}

#[test]
fn a_period_too_short_to_serve_counts_overruns() {
    // The shortest interval schedlab takes: a wakeup's own cost is most of it.
    let l = &latency_json(&["--loops", "2000", "--interval", "10us"])[0];
    let (samples, overruns) = (l["samples"].as_u64().unwrap(), l["overruns"].as_u64().unwrap());
    assert!(overruns > 0, "{l}");
    assert_eq!(samples + overruns, 2000, "{l}");
    check_monotone(l);
}

#[test]
fn samples_and_histogram_files_match_the_count() {
    let dir = std::env::temp_dir().join(format!("schedlab-latency-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (samples_path, hist_path) = (dir.join("samples.txt"), dir.join("hist.txt"));
    let out = schedlab()
        .args(["latency", "--loops", "300", "--interval", "500us", "--json", "--samples"])
        .arg(&samples_path)
        .arg("--histogram")
        .arg(&hist_path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let l = &json_lines(&out)[0];
    let count = l["samples"].as_u64().unwrap();
    let samples = std::fs::read_to_string(&samples_path).unwrap();
    let values: Vec<u64> = samples.lines().map(|s| s.parse().unwrap()).collect();
    assert_eq!(values.len() as u64, count);
    let (raw_max, hist_max) = (*values.iter().max().unwrap() as f64, l["max_ns"].as_f64().unwrap());
    assert!(
        (raw_max - hist_max).abs() <= raw_max * 0.001 + 1.0,
        "same max within the histogram's 0.1 %: {raw_max} {hist_max}"
    );
    let hist = std::fs::read_to_string(&hist_path).unwrap();
    let total: u64 = hist.lines().map(|line| line.split_whitespace().nth(3).unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(total, count);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_policies_prints_the_classic_table() {
    let list = if is_root() { "other,fifo" } else { "other,batch" };
    let text = stdout_of(&["latency", "--freq", "500", "--loops", "100", "--compare-policies", list]);
    let header = text.lines().find(|l| l.starts_with("ns ")).expect("a table header");
    assert!(header.contains("SCHED_OTHER"), "{text}");
    for row in ["min", "max", "avg", "p50", "p99", "p99.99", "overruns"] {
        assert!(text.lines().any(|l| l.split_whitespace().next() == Some(row)), "no {row} row: {text}");
    }
}

#[test]
fn several_threads_get_a_combined_line() {
    let lines = latency_json(&["--loops", "100", "--all-cpus"]);
    let cpus = lines.iter().filter(|l| l["thread"] != "all").count();
    assert!(cpus >= 1);
    if cpus > 1 {
        let all = lines.iter().find(|l| l["thread"] == "all").expect("a combined line");
        let sum: u64 = lines.iter().filter(|l| l["thread"] != "all").map(|l| l["samples"].as_u64().unwrap()).sum();
        assert_eq!(all["samples"].as_u64().unwrap(), sum);
    }
    assert!(lines.iter().filter(|l| l["thread"] != "all").all(|l| l["cpu"].is_u64()), "pinned threads name their CPU");
}

#[test]
fn break_us_stops_at_the_first_late_sample() {
    let out = schedlab()
        .args(["latency", "--loops", "1000", "--interval", "1ms", "--break-us", "0.001", "--json"])
        .assert()
        .success()
        .stderr(predicate::str::contains("above --break-us"))
        .get_output()
        .stdout
        .clone();
    assert_eq!(json_lines(&out)[0]["samples"], 1);
}

#[test]
fn ctrl_c_ends_the_run_and_still_prints_statistics() {
    let child = std::process::Command::new(binary_path())
        .args(["latency", "--duration", "60s", "--interval", "1ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Signalled once its trial process has been measuring for a while (however long a
    // loaded machine took to start it), so there are samples to print.
    let started =
        wait_until(Duration::from_secs(20), || descendants(child.id() as i32).into_iter().any(is_trial_process));
    assert!(started, "no trial process within 20 s");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling a child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("interrupted by SIGINT"), "{text}");
    let row = text.lines().find(|l| l.starts_with("T0")).expect("a statistics row");
    let samples: u64 = row.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(samples > 0, "{row}");
}

#[test]
fn a_run_whose_trial_process_dies_gets_a_failed_line_and_the_next_policy_runs() {
    // No flag makes a latency run fail by itself: its trial process dying does (an OOM
    // kill, say), as does its background load dying in the window.
    let child = std::process::Command::new(binary_path())
        .args(["latency", "--compare-policies", "other,batch", "--duration", "1s", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut trials = Vec::new();
    assert!(wait_until(Duration::from_secs(20), || {
        trials = children_of(child.id() as i32).into_iter().filter(|&p| is_trial_process(p)).collect();
        !trials.is_empty()
    }));
    // SAFETY: killing the first trial process of the run this test started.
    unsafe { libc::kill(trials[0], libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("policy=other #1 (failed)"), "{err}");
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 2, "{}", String::from_utf8_lossy(&out.stdout));
    let (failed, ok) = (&lines[0], &lines[1]);
    assert_eq!((failed["family"].as_str(), failed["policy"].as_str()), (Some("latency"), Some("other")), "{failed}");
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(failed["reason"].as_str().is_some_and(|r| r.contains("SIGKILL")), "{failed}");
    assert!(failed["samples"].is_null() && failed["max_ns"].is_null(), "{failed}");
    assert_eq!(failed["interval_ns"], ok["interval_ns"], "{failed}");
    assert_eq!(ok["policy"], "batch", "{ok}");
    assert!(ok.get("status").is_none() && ok["samples"].as_u64().unwrap() > 0, "{ok}");
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    refused(&["latency", "--interval", "0s"], "greater than zero");
    refused(&["latency", "--freq", "0"], "positive number of Hz");
    refused(&["latency", "--freq", "-5"], "positive");
    refused(&["latency", "--freq", "fast"], "not a frequency");
    refused(&["latency", "--freq", "85", "--interval", "1ms"], "cannot be used with");
    refused(&["latency", "--cpus", "1000"], "is not available");
    refused(&["latency", "--threads", "4096"], "more pinned threads than");
    refused(&["latency", "--policy", "fifoo"], "possible values");
    refused(&["latency", "--prio", "50"], "no real-time policy");
    refused(&["latency", "--policy", "fifo", "--prio", "0"], "1 to 99");
    refused(&["latency", "--loops", "0"], "at least 1");
    refused(&["latency", "--break-us", "-1"], "positive");
    refused(&["latency", "--loops", "10", "--samples", "/nonexistent-dir/s.txt"], "cannot write");
}

/// Exit 2, nothing on stdout, and `needles` in the message.
fn refused_saying(args: &[&str], needles: &[&str]) {
    let out = schedlab().args(args).timeout(Duration::from_secs(30)).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} measured something: {}", String::from_utf8_lossy(&out.stdout));
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: '{needle}' not in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn intervals_below_the_floor_or_without_a_unit_are_refused() {
    // Once measured as "1000000000 Hz" of overruns.
    refused_saying(&["latency", "--interval", "1ns", "--loops", "10"], &["below the 10 µs floor", "give 10us or more"]);
    refused_saying(&["latency", "--interval", "9us", "--loops", "10"], &["10 µs floor"]);
    refused_saying(&["latency", "--freq", "1000000", "--loops", "10"], &["below the 10 µs floor", "at most 100000 Hz"]);
    // Once 5 seconds; cyclictest's -i 5 would be 5 µs.
    refused_saying(&["latency", "--interval", "5", "--loops", "1"], &["5 has no unit: write 5us, 5ms or 5s"]);
    refused_saying(&["latency", "--interval", "-5ms"], &["'-5ms' is negative: give a time above zero"]);
}

#[test]
fn latency_lengths_that_cannot_run_are_refused() {
    refused_saying(&["latency", "--loops", "-3"], &["-3 loops is negative: give a whole number of at least 1"]);
    refused_saying(&["latency", "--loops", "0"], &["0 loops runs nothing: give at least 1"]);
    refused_saying(&["latency", "--duration", "25h"], &["longer than the 24 h one trial may take", "give 24h or less"]);
    refused_saying(
        &["latency", "--loops", "100000000000", "--interval", "1ms"],
        &["more than the 24 h one trial may take", "give at most 86400000 loops"],
    );
    refused_saying(
        &["latency", "--duration", "1ms", "--interval", "5ms"],
        &["shorter than one sampling interval (5 ms): no wakeup would be sampled", "give --duration 5ms or more"],
    );
}

#[test]
fn realtime_without_privilege_is_refused() {
    let Some(out) = as_nobody(&["--rtprio=0"], &["latency", "--loops", "10", "--policy", "fifo"]) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("CAP_SYS_NICE") && err.contains("ulimit -r"), "{err}");
}

#[test]
fn the_report_states_what_was_in_force() {
    let text = stdout_of(&["latency", "--loops", "50", "--no-dma-latency"]);
    assert!(text.contains("mlockall"), "{text}");
    assert!(text.contains("cpu_dma_latency held at 0: no (not requested"), "{text}");
}
