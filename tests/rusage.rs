//! `schedlab rusage` on real commands.

mod common;

use common::*;
use predicates::prelude::*;

fn rusage_json(cmd: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = schedlab().args(["rusage", "--json", "--"]).args(cmd).output().unwrap();
    let report = String::from_utf8_lossy(&out.stderr);
    let line = report.lines().last().unwrap_or_default();
    (out.status.code(), serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {report}")))
}

#[test]
fn reports_every_field_of_a_known_command() {
    let (code, j) = rusage_json(&["sleep", "0.2"]);
    assert_eq!(code, Some(0));
    for key in [
        "utime_s",
        "stime_s",
        "maxrss_kb",
        "minflt",
        "majflt",
        "inblock",
        "oublock",
        "nvcsw",
        "nivcsw",
        "nsignals",
        "wall_s",
        "exit_code",
    ] {
        assert!(j.get(key).is_some(), "missing {key}: {j}");
    }
    assert!(j["wall_s"].as_f64().unwrap() >= 0.2, "{j}");
    assert!(j["maxrss_kb"].as_u64().unwrap() > 0, "{j}");
    assert!(j["nvcsw"].as_u64().unwrap() >= 1, "sleep blocks at least once: {j}");
    assert_eq!(j["exit_code"], 0);
}

#[test]
fn counts_cpu_of_grandchildren_the_command_waited_for() {
    // The shell waits for dd, so dd's system time is part of the shell's usage.
    let (code, j) = rusage_json(&["sh", "-c", "dd if=/dev/zero of=/dev/null bs=1M count=300 2>/dev/null"]);
    assert_eq!(code, Some(0));
    let cpu = j["utime_s"].as_f64().unwrap() + j["stime_s"].as_f64().unwrap();
    assert!(cpu > 0.0, "{j}");
}

#[test]
fn exit_status_is_the_commands_own() {
    let (code, j) = rusage_json(&["sh", "-c", "exit 7"]);
    assert_eq!(code, Some(7));
    assert_eq!(j["exit_code"], 7);
    let (code, j) = rusage_json(&["sh", "-c", "kill -TERM $$"]);
    assert_eq!(code, Some(143));
    assert_eq!(j["signal"], "SIGTERM");
}

#[test]
fn a_command_that_cannot_start_exits_127_with_the_reason() {
    schedlab()
        .args(["rusage", "--", "/nonexistent/program"])
        .assert()
        .code(127)
        .stderr(predicate::str::contains("cannot run").and(predicate::str::contains("ENOENT")));
}

#[test]
fn the_text_report_names_the_fields_and_output_can_go_to_a_file() {
    let dir = std::env::temp_dir().join(format!("schedlab-rusage-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("usage.txt");
    schedlab().args(["rusage", "-o"]).arg(&file).args(["--", "true"]).assert().success();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    for field in ["wall", "utime", "stime", "maxrss", "minflt", "majflt", "inblock", "oublock", "nvcsw", "nivcsw"] {
        assert!(text.lines().any(|l| l.starts_with(field)), "no {field} line: {text}");
    }
}

#[test]
fn an_unwritable_output_is_refused_before_running() {
    schedlab()
        .args(["rusage", "-o", "/nonexistent-dir/out.txt", "--", "sh", "-c", "echo ran"])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("ran").not())
        .stderr(predicate::str::contains("cannot write"));
}

#[test]
fn no_command_is_a_usage_error() {
    schedlab().arg("rusage").assert().code(2);
}

#[test]
fn sigterm_to_schedlab_is_passed_to_the_command() {
    let (child, sleepers) = spawn_with_children(&["rusage", "--json", "--", "sleep", "30"], 1);
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"signal\":\"SIGTERM\""));
    assert!(sleepers.iter().all(|&p| !is_running(p)));
}
