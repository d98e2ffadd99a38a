//! The `taskset` family: a described task set under each policy, its activations' figures,
//! suites, and bad task sets refused before anything runs.

mod common;

use common::*;
use std::time::Duration;

const TWO_TASKS: [&str; 4] = [
    "--task",
    r#"name = "fast", period = "2ms", run = "100us""#,
    "--task",
    r#"name = "slow", period = "10ms", events = [{ lock = "m" }, { run = "300us" }, { unlock = "m" }, { sleep = "100us" }]"#,
];

/// `schedlab <args> <tasks>`, which must succeed within a minute: its JSON lines.
fn taskset_lines(args: &[&str], tasks: &[&str]) -> Vec<serde_json::Value> {
    let out =
        schedlab().args(args).args(tasks).timeout(Duration::from_secs(60)).assert().success().get_output().clone();
    json_lines(&out.stdout)
}

#[test]
fn each_activation_is_counted_and_the_lines_carry_every_task() {
    let lines = taskset_lines(&["taskset", "--duration", "400ms", "--repeat", "2", "--json"], &TWO_TASKS);
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert_eq!((l["family"].as_str(), l["status"].as_str()), (Some("taskset"), Some("ok")), "{l}");
        // An ideal schedule over 400 ms: 200 activations of the 2 ms task, 40 of the 10 ms one.
        assert_eq!(l["activations"], 240, "{l}");
        let tasks = l["per_task"].as_array().unwrap();
        assert_eq!((tasks[0]["activations"].as_u64(), tasks[1]["activations"].as_u64()), (Some(200), Some(40)));
        // Each run event is measured on the thread's own CPU clock: it gets what it asked.
        let got = tasks[1]["run_mean_ns"].as_f64().unwrap();
        assert!((300_000.0..400_000.0).contains(&got), "{l}");
        assert!(l["deadline_use_p99_pct"].as_f64().unwrap() > 0.0, "{l}");
        let misses = l["misses"].as_u64().unwrap();
        assert!((l["miss_pct"].as_f64().unwrap() - misses as f64 / 2.4).abs() < 1e-9, "{l}");
    }
}

#[test]
fn a_suite_stores_the_set_under_each_policy_and_asks_which_meets_the_deadlines() {
    let dir = Scratch::new("taskset-suite");
    let suite = dir.0.join("ts.toml");
    std::fs::write(
        &suite,
        r#"name = "ts"
[[experiment]]
family = "taskset"
policy = ["other", "fifo"]
duration = "300ms"
repeat = 2
tasks = [
  { name = "fast", period = "2ms", run = "100us" },
  { name = "slow", period = "10ms", run = "500us", count = 2 },
]
"#,
    )
    .unwrap();
    let db = dir.0.join("ts.db");
    let args = vec!["run", suite.to_str().unwrap(), "--noise-probe", "off"];
    if !is_root() {
        // FIFO needs root: the suite is refused, as any such suite is.
        let out = schedlab_in(&db, &args);
        assert_eq!(out.status.code(), Some(2));
        return;
    }
    let text = ok_stdout(&db, &args);
    assert!(text.contains("Deadline use p99 %"), "{text}");
    // Each cell's tasks, with their miss ratio and slack p99.
    assert!(text.contains("each task") && text.contains("slack p99 µs"), "{text}");
    assert!(text.lines().any(|l| l.contains("fifo") && l.contains("slow")), "{text}");
    let export = export_json(&db, "1");
    let trials = export["runs"][0]["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 4);
    for t in trials {
        assert_eq!(t["family"], "taskset");
        // 150 of the fast task and 2 × 30 of the slow one.
        assert_eq!(t["figures"]["activations"], 210, "{t}");
    }
}

#[test]
fn bad_task_sets_are_refused_with_the_fix() {
    refused(&["taskset", "--task", r#"name = "a", period = "1ms", run = "2ms""#], "longer than its period");
    refused(&["taskset", "--task", r#"name = "a", period = "1ms", events = [{ unlock = "m" }]"#], "does not hold");
    refused(
        &["taskset", "--task", r#"name = "a", period = "1ms", events = [{ lock = "m" }, { run = "1us" }]"#],
        "holding mutex 'm'",
    );
    refused(&["taskset", "--task", r#"name = "a", period = "1ms", events = [{ barrier = "b" }]"#], "unknown event");
    refused(&["taskset", "--task", r#"name = "a", period = "1ms", run = 100"#], "with its unit");
    refused(&["taskset"], "no task to run");
    refused(&["taskset", "--policy", "batch", "--task", r#"name = "a", period = "1ms", run = "1us""#], "not offered");
    // More than every CPU can give, whatever the policy.
    refused(&["taskset", "--task", r#"name = "a", period = "1ms", run = "900us", count = 64"#], "no policy could meet");
    refused(&["taskset", "/nonexistent/tasks.toml"], "cannot read the task set");
}

#[test]
fn deadline_admission_is_checked_before_anything_runs() {
    if !is_root() {
        eprintln!("skipped: SCHED_DEADLINE needs root");
        return;
    }
    // 0.9 ms a 1 ms period (runtime 1 ms after the margin) on each of 8 instances: far
    // beyond what the kernel admits on this machine.
    refused(
        &["taskset", "--policy", "deadline", "--task", r#"name = "a", period = "1ms", run = "700us", count = 8"#],
        "SCHED_DEADLINE admits",
    );
}

#[test]
fn without_privileges_fifo_is_refused_naming_the_policy() {
    let Some(out) =
        as_nobody(&[], &["taskset", "--policy", "fifo", "--task", r#"name = "a", period = "1ms", run = "1us""#])
    else {
        eprintln!("skipped: needs root to drop to nobody");
        return;
    };
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).to_lowercase().contains("fifo"));
}

#[test]
fn beside_a_background_load_the_load_is_measured_over_the_sets_window() {
    let lines = taskset_lines(&["taskset", "--duration", "300ms", "--json", "--load", "cpu:1"], &TWO_TASKS);
    assert_eq!(lines[0]["status"], "ok", "{}", lines[0]);
    assert_eq!(lines[0]["load"], "cpu");
    assert!(lines[0]["load_window_s"].as_f64().unwrap() >= 0.3, "{}", lines[0]);
}

/// An rt-app file as LISA writes them: times in µs, events in key order, repeated kinds
/// numbered, the timer last.
const RT_APP: &str = r#"{
  "tasks": {
    "small": { "instance": 1, "loop": -1, "run": 1000, "timer": { "ref": "a", "period": 10000 } },
    "big": { "loop": -1, "policy": "SCHED_FIFO", "lock": "m", "run0": 2000, "unlock": "m", "sleep": 500,
             "run1": 1000, "timer": { "ref": "b", "period": 20000 } }
  },
  "global": { "duration": 2, "default_policy": "SCHED_OTHER", "pi_enabled": true }
}"#;

#[test]
fn an_rt_app_file_runs_and_its_tasks_get_the_run_time_it_asks_for() {
    let dir = Scratch::new("taskset-rt-app");
    let file = dir.0.join("set.json");
    std::fs::write(&file, RT_APP).unwrap();
    let lines = taskset_lines(&["taskset", "--duration", "400ms", "--json", "--rt-app", file.to_str().unwrap()], &[]);
    let tasks = lines[0]["per_task"].as_array().unwrap();
    // In the file's order; the activation's CPU time is what its run events ask (within
    // 5 %: the sleep, lock and timer cost a little beside them).
    for (task, name, asked_us) in [(&tasks[0], "small", 1000.0), (&tasks[1], "big", 3000.0)] {
        assert_eq!(task["name"], name);
        let got_us = task["run_mean_ns"].as_f64().unwrap() / 1000.0;
        assert!((got_us / asked_us - 1.0).abs() < 0.05, "{name}: {got_us} µs of {asked_us}: {task}");
    }
    assert_eq!((tasks[0]["activations"].as_u64(), tasks[1]["activations"].as_u64()), (Some(40), Some(20)));
}

#[test]
fn what_rt_app_does_that_schedlab_does_not_is_refused_by_name() {
    let dir = Scratch::new("taskset-rt-app-bad");
    let file = dir.0.join("bad.json");
    let cases = [
        (
            r#"{"tasks": {"a": {"run": 100, "barrier": "x", "timer": {"ref": "t", "period": 1000}}}}"#,
            "'barrier' is not supported",
        ),
        (r#"{"tasks": {"a": {"phases": {"p": {"run": 100}}}}}"#, "'phases' is not supported"),
        (
            r#"{"tasks": {"a": {"cpus": [0], "run": 100, "timer": {"ref": "t", "period": 1000}}}}"#,
            "'cpus' is not supported",
        ),
        (r#"{"tasks": {"a": {"run": 100}}}"#, "no timer"),
        (r#"{"tasks": {"a": {"run": "1ms", "timer": {"ref": "t", "period": 1000}}}}"#, "whole number of µs"),
    ];
    for (text, needle) in cases {
        std::fs::write(&file, text).unwrap();
        refused(&["taskset", "--rt-app", file.to_str().unwrap()], needle);
    }
}
