//! `schedlab ab` on the real binary: two linked runs made of alternating blocks, setups
//! and cleanups around every block, and a session that stops (a failing setup, SIGTERM)
//! leaving neither a half-written record nor a process behind.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// A ring and a latency cell, 4 repeats each: 4 blocks a side by default. With 4 paired
/// blocks the sign test can show nothing (8 are the fewest for one figure), so an A/A of
/// this suite without `--budget` can never exit 1: its exit status is fixed.
const TINY: &str = r#"
name = "tiny-ab"
[[experiment]]
family = "ring"
procs = 2
laps = 100
repeat = 4

[[experiment]]
family = "latency"
interval = "200us"
loops = 50
repeat = 4
"#;

/// One latency cell of 0.4 s trials: a session long enough to stop in a B block.
const SLOW: &str = r#"
name = "slow-ab"
[[experiment]]
family = "latency"
interval = "1ms"
loops = 400
repeat = 6
"#;

fn runs(db: &Path) -> Vec<Value> {
    json_lines(ok_stdout(db, &["list", "--json"]).as_bytes())
}

fn db_arg(db: &Path) -> String {
    db.display().to_string()
}

#[test]
fn an_a_a_session_stores_two_linked_runs_of_alternating_blocks() {
    a_a_session(&Dbs::sqlite("ab-aa"));
}

#[test]
fn pg_an_a_a_session_stores_two_linked_runs_of_alternating_blocks() {
    if let Some(dbs) = Dbs::postgres("ab") {
        a_a_session(&dbs);
    }
}

fn a_a_session(dbs: &Dbs) {
    let dir = &dbs.dir;
    let db = dbs.db("ab");
    let suite = dir.write("tiny.toml", TINY);
    let log = dir.path("log");
    let log_text = log.display().to_string();
    let out = schedlab_in(
        &db,
        &[
            "ab",
            &suite,
            "--a-setup",
            &format!("echo A >> {log_text}; echo setup-stdout"),
            "--b-setup",
            &format!("echo B >> {log_text}"),
            "--a-cleanup",
            &format!("echo a >> {log_text}"),
            "--b-cleanup",
            &format!("echo b >> {log_text}"),
            "--seed",
            "11",
            "--format",
            "json",
            "--noise-probe",
            "on",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // stdout carries only the comparison: the setups' output went to stderr.
    let lines = json_lines(&out.stdout);
    // The rows, then the session's noise floor: one probe before it, carried by both sides,
    // so never a difference between them.
    let floors = lines.iter().find_map(|l| l.get("noise_floors")).expect("a noise_floors line");
    assert_eq!(floors["differences"], serde_json::json!([]), "{floors}");
    let rows: Vec<&serde_json::Value> = lines.iter().filter(|l| l.get("noise_floors").is_none()).collect();
    assert_eq!(rows.len(), 7, "3 ring and 4 latency figures (each with its run-queue wait)");
    assert!(rows.iter().all(|r| r["mode"] == "interleaved" && r["drift"].is_null() && r["regression"] == false));
    assert!(err.contains("setup-stdout"), "{err}");

    let listed = runs(&db);
    assert_eq!(listed.len(), 2);
    for (me, other, side) in [(0, 1, "a"), (1, 0, "b")] {
        let run = &listed[me];
        assert_eq!(run["status"], "finished");
        assert_eq!((run["ok"].as_i64(), run["planned"].as_i64()), (Some(8), Some(8)), "{run}");
        assert_eq!(run["ab"]["side"], side);
        assert_eq!(run["ab"]["pair_run"], listed[other]["id"]);
        assert_eq!(run["ab"]["pair_uuid"], listed[other]["uuid"]);
    }

    // The blocks as they ran: every trial of both runs by start time, one letter each,
    // runs of one letter being blocks.
    let exported: Value = serde_json::from_str(&ok_stdout(&db, &["export", "1", "2"])).unwrap();
    let mut trials: Vec<(String, &'static str)> = Vec::new();
    for (run, side) in exported["runs"].as_array().unwrap().iter().zip(["A", "B"]) {
        for t in run["trials"].as_array().unwrap() {
            trials.push((t["started"].as_str().unwrap().to_string(), side));
        }
    }
    trials.sort();
    let mut blocks: Vec<&str> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    for (_, side) in &trials {
        if blocks.last() == Some(side) && *sizes.last().unwrap() < 2 {
            *sizes.last_mut().unwrap() += 1;
        } else {
            blocks.push(side);
            sizes.push(1);
        }
    }
    // Four blocks a side, each the ring and the latency cell once, in pairs of one side each.
    assert_eq!(sizes, vec![2; 8], "{trials:?}");
    for pair in blocks.chunks(2) {
        assert_ne!(pair[0], pair[1], "{blocks:?}");
    }
    let order: String = blocks.concat();
    let options = &exported["runs"][0]["options"]["ab"];
    assert_eq!(options["order"], order.as_str());
    assert_eq!((options["blocks"].as_i64(), options["seed"].as_i64()), (Some(4), Some(11)));
    // Each block's setup ran before it and its cleanup after it, in the same order.
    let expected: String = order.chars().map(|c| format!("{c}\n{}\n", c.to_ascii_lowercase())).collect();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), expected);

    let shown = ok_stdout(&db, &["show", "1"]);
    assert!(shown.contains("A/B pair with run 2 (this is A): 4 blocks a side"), "{shown}");
    assert!(ok_stdout(&db, &["list"]).contains("B, pair with run 1"));
    let compared = ok_stdout(&db, &["compare", "1", "2"]);
    assert!(compared.contains("mode: interleaved A/B"), "{compared}");
    // Four paired blocks decide nothing, and the output says so for every figure.
    let undecidable = compared.matches("cannot decide: 4 paired blocks; the sign test needs at least 8").count();
    assert!(undecidable >= 6, "{compared}");
    // A side of a session cannot be resumed without its setup.
    refused(&["run", "--resume", "1", "--db", &db_arg(&db)], "one side of an A/B session");
}

#[test]
fn a_budget_adds_block_pairs_of_the_undecided_cells_until_decided_or_spent() {
    let dir = Scratch::new("ab-budget");
    let db = dir.path("ab.db");
    let suite = dir.write("tiny.toml", TINY);
    let log = dir.path("log");
    let log_text = log.display().to_string();
    let out = schedlab_in(
        &db,
        &[
            "ab",
            &suite,
            "--a-setup",
            &format!("echo A >> {log_text}"),
            "--b-setup",
            &format!("echo B >> {log_text}"),
            // A/A cells seldom decide: the session mostly spends its budget. 6 s holds the 4
            // planned block pairs and a dozen or more added ones.
            "--budget",
            "6s",
            "--seed",
            "5",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
    // The 4 planned blocks decide nothing: block pairs were added, each with its setups.
    assert!(err.contains("schedlab: A/B: extra block pair 5:"), "{err}");
    let ended = err.contains("every figure decided after") || err.contains("does not fit --budget 6");
    assert!(ended, "{err}");
    let listed = runs(&db);
    let (a, b) = (listed[0]["ok"].as_i64().unwrap(), listed[1]["ok"].as_i64().unwrap());
    assert!(a > 8 && a == b, "{a} and {b} trials");
    let setups = std::fs::read_to_string(&log).unwrap();
    assert_eq!(setups.matches('A').count(), setups.matches('B').count(), "{setups}");
    assert!(setups.lines().count() > 8, "{setups}");
    // Every cell's repeats pair up: no figure is left with the 4 planned blocks. (A figure
    // that is 0 in most blocks, a latency cell's run-queue wait, may still be undecided:
    // the sign test sets its ties aside.)
    let compared = ok_stdout(&db, &["compare", "1", "2"]);
    let pairs = regex::Regex::new(r" (\d+)/(\d+) ").unwrap();
    let rows: Vec<(u32, u32)> = compared
        .lines()
        .filter(|l| l.starts_with("ring") || l.starts_with("latency"))
        .filter_map(|l| pairs.captures(l).map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap())))
        .collect();
    assert!(!rows.is_empty() && rows.iter().all(|&(a, b)| a == b && a > 4), "{compared}");
}

#[test]
fn a_failing_setup_stops_the_session_runs_the_cleanup_and_leaves_nothing_half_done() {
    let dir = Scratch::new("ab-fail");
    let db = dir.path("ab.db");
    let suite = dir.write("tiny.toml", TINY);
    let marks = dir.path("marks").display().to_string();
    // Whichever side goes first fails at once: nothing is measured, nothing is kept.
    let out = schedlab_in(
        &db,
        &[
            "ab",
            &suite,
            "--a-setup",
            "exit 7",
            "--b-setup",
            "exit 7",
            "--a-cleanup",
            &format!("echo a >> {marks}"),
            "--b-cleanup",
            &format!("echo b >> {marks}"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("setup `exit 7` exited with status 7 before block 1 of 8"), "{err}");
    let cleaned = std::fs::read_to_string(&marks).unwrap();
    assert!(cleaned == "a\n" || cleaned == "b\n", "one cleanup, of the side that failed: {cleaned:?}");
    assert!(runs(&db).is_empty(), "both runs were removed");
    std::fs::remove_file(&marks).unwrap();

    // B's second setup fails (a counter file): what the finished blocks stored is kept,
    // both runs marked interrupted, and B's cleanup ran after each of its setups.
    let counter = dir.path("count").display().to_string();
    let out = schedlab_in(
        &db,
        &[
            "ab",
            &suite,
            "--a-setup",
            "true",
            "--b-setup",
            &format!("n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}; [ $n -lt 1 ]"),
            "--b-cleanup",
            &format!("echo b >> {marks}"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("exited with status 1 before block") && err.contains("marked interrupted"), "{err}");
    assert_eq!(std::fs::read_to_string(&marks).unwrap(), "b\nb\n");
    let listed = runs(&db);
    assert_eq!(listed.len(), 2);
    for run in &listed {
        assert_eq!(run["status"], "interrupted");
        assert_eq!(run["not_ok"], 0);
    }
    // B ran one block of 2 trials; A one or two, depending on the coin.
    assert_eq!(listed[1]["ok"], 2);
    assert!(matches!(listed[0]["ok"].as_i64(), Some(2 | 4)), "{listed:?}");
}

#[test]
fn sigterm_in_a_b_block_runs_the_cleanup_and_no_hog_survives() {
    let dir = Scratch::new("ab-sigterm");
    let db = dir.path("ab.db");
    let suite = dir.write("slow.toml", SLOW);
    let pid_file = dir.path("hog.pid");
    let pid_text = pid_file.display().to_string();
    let marks = dir.path("marks");
    // The hog stays away from the trials' CPUs' work only by being short-lived: it runs
    // while B's blocks do, as a real setup's background job would.
    let setup =
        format!("sh -c 'while :; do sleep 0.05; done' & echo $! > {pid_text}.tmp && mv {pid_text}.tmp {pid_text}");
    let cleanup = format!("sleep 0.5; kill $(cat {pid_text}) && rm {pid_text} && echo cleaned >> {}", marks.display());
    let child = std::process::Command::new(binary_path())
        .args(["ab", &suite, "--a-setup", "true", "--b-setup", &setup, "--b-cleanup", &cleanup, "--db", &db_arg(&db)])
        .current_dir(cwd_for(&db))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(60), || pid_file.exists()), "no B block started");
    let hog: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(is_running(hog));
    std::thread::sleep(Duration::from_millis(100));
    signal(&child, libc::SIGTERM);
    // A second one while the cleanup runs must not cut it short.
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert_eq!(std::fs::read_to_string(&marks).unwrap_or_default(), "cleaned\n", "{err}");
    assert_none_running(&[hog]);
    assert!(!pid_file.exists());
    for run in runs(&db) {
        assert_eq!(run["status"], "interrupted", "{run}");
    }
}

#[test]
fn bad_flags_exit_2() {
    let dir = Scratch::new("ab-flags");
    let suite = dir.write("tiny.toml", TINY);
    let db = dir.path("ab.db").display().to_string();
    let base = ["ab", suite.as_str(), "--db", db.as_str()];
    let with = |extra: &[&str]| -> Vec<String> { base.iter().chain(extra).map(|s| s.to_string()).collect() };
    let cases: [(&[&str], &str); 9] = [
        (&["--a-setup", "true"], "--b-setup"),
        (&["--a-setup", "", "--b-setup", "true"], "an empty command"),
        (&["--a-setup", "true", "--b-setup", "true", "--blocks", "1"], "--blocks"),
        (&["--a-setup", "true", "--b-setup", "true", "--blocks", "many"], "--blocks"),
        (&["--a-setup", "true", "--b-setup", "true", "--blocks", "2"], "below the suite's largest repeat (4)"),
        (&["--a-setup", "true", "--b-setup", "true", "--budget", "soon"], "--budget"),
        (&["--a-setup", "true", "--b-setup", "true", "--threshold", "fast"], "not a threshold"),
        (&["--a-setup", "true", "--b-setup", "true", "--html", "/nonexistent-dir/x.html"], "not a directory"),
        (&["--a-setup", "true", "--b-setup", "true", "--seed", "x"], "--seed"),
    ];
    for (extra, needle) in cases {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&args, needle);
    }
    refused(&["ab", "no-such-suite", "--a-setup", "true", "--b-setup", "true", "--db", &db], "no built-in suite");
    assert!(!Path::new(&db).exists(), "nothing was made");
}
