//! Adaptive repeats on the real binary and a real database: a cell stops at its
//! `max_repeat` when its target cannot be reached, early when it can, at the run's budget,
//! and an interrupted adaptive run resumes where it stopped. The JSON report carries each
//! cell's headline median, its 95 % interval and n.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Two tiny ring cells (a few ms each), `repeat` planned, adaptive with `extra` keys.
fn ring_suite(repeat: u32, extra: &str) -> String {
    format!("name = \"adaptive\"\n{extra}\n[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 50\nrepeat = {repeat}\n")
}

fn report(db: &Path, run: &str) -> Value {
    serde_json::from_str(&ok_stdout(db, &["report", run, "--format", "json"])).unwrap()
}

/// The groups (cells) of experiment 1.
fn cells(doc: &Value) -> Vec<Value> {
    doc["experiments"][0]["groups"].as_array().unwrap().clone()
}

#[test]
fn an_unreachable_target_stops_at_max_repeat_and_says_so() {
    let dir = Scratch::new("adaptive-max");
    let suite = dir.write(
        "s.toml",
        &ring_suite(2, "budget = \"5m\"").replace("repeat = 2", "repeat = 2\ntarget_ci = \"0.01%\"\nmax_repeat = 7"),
    );
    let db = dir.path("r.db");
    let plan = stdout_of(&["run", &suite, "--dry-run"]);
    assert!(plan.contains("repeats 2..7 (adaptive") && plan.contains("4..14 trials"), "{plan}");
    let out = schedlab_in(&db, &["run", &suite]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("0 of 2 cell(s) reached their target, 2 stopped at max_repeat"), "{err}");
    let tables = String::from_utf8_lossy(&out.stdout);
    assert!(tables.contains("[adaptive: until ±0.01%, 2..7 repeats]") && tables.contains("(max)"), "{tables}");
    let doc = report(&db, "1");
    assert_eq!(doc["run"]["adaptive"]["targets"][0]["max_repeat"], 7);
    for cell in cells(&doc) {
        assert_eq!(cell["runs"], 7, "{cell}");
        let h = &cell["headline"];
        assert_eq!(h["figure"], "ns_per_switch");
        assert_eq!((h["converged"].as_bool(), h["stopped_by"].as_str()), (Some(false), Some("max_repeat")), "{h}");
        let n = h["n"].as_u64().unwrap();
        assert_eq!(n, cell["ok"].as_u64().unwrap());
        if n >= 6 {
            let (lo, med, hi) =
                (h["ci_low"].as_f64().unwrap(), h["median"].as_f64().unwrap(), h["ci_high"].as_f64().unwrap());
            assert!(lo <= med && med <= hi, "{h}");
            assert!(h["ci_half_width"].as_f64().unwrap() > 0.0001, "{h}");
            assert!(h["ci_missing"].is_null());
        }
        // The same interval beside the figure's own summary.
        assert_eq!(cell["figures"]["ns_per_switch"]["ci_low"], h["ci_low"]);
    }
    // Extra trials were stored with new seqs after the planned 0..3.
    assert_eq!(stored_seqs(&db, "1"), (0..14).collect::<Vec<_>>());
}

#[test]
fn a_reachable_target_stops_early_and_fixed_repeats_have_no_verdict() {
    let dir = Scratch::new("adaptive-early");
    // Within ±90 % of the median: met as soon as a cell has an interval (6 ok repeats) or soon after.
    let suite = dir.write("s.toml", &ring_suite(2, "budget = \"5m\"").replace("laps = 50", "laps = 2000"));
    let db = dir.path("r.db");
    ok_stdout(&db, &["run", &suite, "--target-ci", "90%", "--max-repeat", "40"]);
    let doc = report(&db, "1");
    for cell in cells(&doc) {
        let h = &cell["headline"];
        assert_eq!((h["converged"].as_bool(), h["stopped_by"].as_str()), (Some(true), None), "{h}");
        assert_eq!(h["target_ci"].as_f64(), Some(0.9));
        let runs = cell["runs"].as_u64().unwrap();
        assert!((6..40).contains(&runs), "stopped early, with an interval: {cell}");
        assert!(h["ci_half_width"].as_f64().unwrap() <= 0.9, "{h}");
    }
    // A run of fixed repeats: intervals where there are 6 repeats, no convergence verdict.
    let fixed = dir.write("f.toml", &ring_suite(6, ""));
    ok_stdout(&db, &["run", &fixed]);
    let doc = report(&db, "2");
    assert!(doc["run"]["adaptive"].is_null());
    for cell in cells(&doc) {
        let h = &cell["headline"];
        assert!(h["converged"].is_null() && h["target_ci"].is_null(), "{h}");
        if h["n"] == 6 {
            assert!(h["ci_low"].is_number() && h["ci_high"].is_number(), "{h}");
        }
    }
    // Fewer than 6 ok repeats: no interval, and the reason is given.
    let few = dir.write("few.toml", &ring_suite(3, ""));
    ok_stdout(&db, &["run", &few]);
    let doc = report(&db, "3");
    let h = &cells(&doc)[0]["headline"];
    assert!(h["ci_low"].is_null() && h["ci_high"].is_null(), "{h}");
    assert!(h["ci_missing"].as_str().unwrap().contains("at least 6 ok repeats"), "{h}");
    assert!(h["median"].is_number() && h["n"] == 3, "{h}");
    let text = ok_stdout(&db, &["report", "3"]);
    assert!(text.contains("95% CI") && text.contains("n<6"), "{text}");
}

#[test]
fn a_question_runs_in_paired_blocks_and_the_run_says_what_it_answered() {
    let dir = Scratch::new("adaptive-question");
    let suite = dir.write(
        "s.toml",
        &ring_suite(6, "budget = \"5m\"")
            .replace("repeat = 6", "repeat = 6\ntarget_ci = \"5%\"\nmax_repeat = 14\ncompare = \"procs\""),
    );
    let db = dir.path("r.db");
    let out = schedlab_in(&db, &["run", &suite]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("of 1 question(s) answered"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("questions:") && text.contains("anytime-valid"), "{text}");
    // The run ends with its question table: the question's row; the finding in full is
    // the report's.
    assert!(text.lines().any(|l| l.starts_with("ring by procs ")), "the question's row: {text}");
    let full = ok_stdout(&db, &["report", "1"]);
    assert!(full.contains("ring (laps=50): procs = "), "the question's finding: {full}");
    let doc = report(&db, "1");
    assert_eq!(doc["questions"]["asked"], 1, "{}", doc["questions"]);
    let finding = doc["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "compared").unwrap().clone();
    let answer = &finding["answer"];
    assert!(answer["blocks"].as_u64().unwrap() >= 6 && answer["claims"] == 2, "{finding}");
    assert!(["leads", "equivalent", "undecided"].contains(&answer["verdict"].as_str().unwrap()), "{finding}");
    // Every block holds one trial of each cell under one repeat number, the extra ones
    // back to back.
    let export = export_json(&db, "1");
    let mut trials: Vec<(i64, i64, i64)> = export["runs"][0]["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["seq"].as_i64().unwrap(), t["repeat"].as_i64().unwrap(), t["params"]["procs"].as_i64().unwrap()))
        .collect();
    trials.sort_unstable();
    for r in 1..=trials.iter().map(|t| t.1).max().unwrap() {
        let procs: Vec<i64> = trials.iter().filter(|t| t.1 == r).map(|t| t.2).collect();
        assert_eq!(procs.len(), 2, "repeat {r}: {trials:?}");
        assert_ne!(procs[0], procs[1]);
    }
    for pair in trials[12..].chunks(2) {
        assert_eq!(pair[0].1, pair[1].1, "an extra block runs back to back: {trials:?}");
    }
}

/// A question asked at its own margin is decided, stored and printed at that margin: two
/// ring sizes on one CPU cost within ±50 % of each other per hop, which a few blocks show.
/// Each trial runs 2,000 laps (a few ms, not the 0.3 ms of 50), so that one interrupt or a
/// stolen tick does not throw a block outside the margin.
#[test]
fn a_question_at_its_own_margin_is_answered_at_it() {
    let dir = Scratch::new("adaptive-margin");
    let suite = dir.write(
        "s.toml",
        &ring_suite(6, "budget = \"5m\"").replace("laps = 50", "laps = 2000").replace(
            "repeat = 6",
            &format!(
                "repeat = 6\ntarget_ci = \"5%\"\nmax_repeat = 40\ncompare = \"procs\"\nmargin = \"50%\"\npin = \"same\"\n\
                 cpus = \"{}\"",
                last_allowed_cpu()
            ),
        ),
    );
    let db = dir.path("r.db");
    let out = schedlab_in(&db, &["run", &suite]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("1 of 1 question(s) answered") && err.contains("within ±50%"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().find(|l| l.starts_with("ring by procs ")).unwrap_or_default();
    assert!(row.contains("±50%") || row.contains("leads"), "the question's row: {text}");
    assert!(text.contains("inside 1 ± 50%"), "the method names the margin: {text}");
    let doc = report(&db, "1");
    let finding = doc["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "compared").unwrap().clone();
    assert_eq!(finding["answer"]["margin"], 0.5, "{finding}");
    assert!(["leads", "equivalent"].contains(&finding["answer"]["verdict"].as_str().unwrap()), "{finding}");
    // The run stored what it asked, and its reports read the question from there, not from
    // the suite text: with that text's question and margin struck out, the answer stands.
    let export = export_json(&db, "1");
    let asked = &export["runs"][0]["options"]["asked"];
    assert_eq!(asked, &serde_json::json!([{"compare": "procs", "margin": 0.5}]), "{}", export["runs"][0]["options"]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let struck = conn
        .execute("UPDATE runs SET suite_text = replace(replace(suite_text, 'compare = \"procs\"', ''), 'margin = \"50%\"', '')", [])
        .unwrap();
    assert_eq!(struck, 1);
    drop(conn);
    let again = report(&db, "1");
    assert_eq!(again["findings"], doc["findings"], "the findings come from what the run stored");
}

/// `ask` keeps a latency question to its p99: the maximum is measured and shown but not
/// tested, so it adds no claim to the run's family (the p99's pair alone).
#[test]
fn a_question_asked_of_its_p99_alone_tests_no_maximum() {
    let dir = Scratch::new("adaptive-ask");
    let experiment = "[[experiment]]\nfamily = \"latency\"\ninterval = [\"200us\", \"1ms\"]\nloops = 40\nrepeat = 6\n\
                      compare = \"interval\"\n";
    let asked_p99 = dir.write("p99.toml", &format!("name = \"ask\"\n{experiment}ask = [\"p99_ns\"]\n"));
    let asked_both = dir.write("both.toml", &format!("name = \"ask\"\n{experiment}"));
    let db = dir.path("r.db");
    let figures_of = |run: &str| -> Vec<String> {
        let doc = report(&db, run);
        let compared = doc["findings"].as_array().unwrap().iter().filter(|f| f["kind"] == "compared");
        compared.map(|f| f["figure"].as_str().unwrap().to_string()).collect()
    };
    for suite in [&asked_p99, &asked_both] {
        let out = schedlab_in(&db, &["run", suite]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let (p99_only, both) = (figures_of("1"), figures_of("2"));
    assert_eq!(p99_only.len(), 1, "{p99_only:?}");
    assert!(p99_only[0].starts_with("p99"), "{p99_only:?}");
    assert_eq!(both.len(), 2, "{both:?}");
    let text = ok_stdout(&db, &["report", "1"]);
    assert!(text.contains("Holm over 2 claims"), "{text}");
    assert!(ok_stdout(&db, &["report", "2"]).contains("Holm over 4 claims"));
    let asked = &export_json(&db, "1")["runs"][0]["options"]["asked"];
    assert_eq!(asked, &serde_json::json!([{"compare": "interval", "margin": 0.05, "ask": ["p99_ns"]}]));
    // Over policies (FIFO needs root), the latency finding says its maximum was not tested.
    if is_root() {
        let policies = dir.write(
            "policies.toml",
            "[[experiment]]\nfamily = \"latency\"\npolicy = [\"other\", \"fifo\"]\nloops = 40\nrepeat = 6\nask = \"p99_ns\"\n",
        );
        let out = schedlab_in(&db, &["run", &policies]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let doc = report(&db, "3");
        let leader =
            doc["findings"].as_array().unwrap().iter().find(|f| f["kind"] == "latency_leader").unwrap().clone();
        assert!(leader.get("p99_answer").is_some() && leader.get("max_answer").is_none(), "{leader}");
        assert!(ok_stdout(&db, &["report", "3"]).contains("the maximum not tested"));
    }
}

#[test]
fn the_budget_ends_an_adaptive_run() {
    let dir = Scratch::new("adaptive-budget");
    let suite = dir.write("s.toml", &ring_suite(2, "budget = \"1500ms\"").replace("laps = 50", "duration = \"100ms\""));
    let db = dir.path("r.db");
    let out = schedlab_in(&db, &["run", &suite, "--target-ci", "0.01%", "--max-repeat", "1000"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("stopped by the budget"), "{err}");
    let doc = report(&db, "1");
    for cell in cells(&doc) {
        let h = &cell["headline"];
        assert_eq!((h["converged"].as_bool(), h["stopped_by"].as_str()), (Some(false), Some("budget")), "{h}");
        // About 0.15 s a trial in 1.5 s: far below the maximum.
        assert!(cell["runs"].as_u64().unwrap() < 50, "{cell}");
    }
}

#[test]
fn an_interrupted_adaptive_run_resumes_to_the_same_maximum() {
    let dir = Scratch::new("adaptive-resume");
    let suite = dir.write(
        "s.toml",
        &ring_suite(2, "budget = \"10m\"")
            .replace("laps = 50", "duration = \"300ms\"")
            .replace("repeat = 2", "repeat = 2\ntarget_ci = \"0.01%\"\nmax_repeat = 5"),
    );
    let db = dir.path("r.db");
    let child = std::process::Command::new(binary_path())
        .args(["run", &suite, "--db", &db.display().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Past the planned 4: in the adaptive phase.
    let listed = |db: &Path| json_lines(ok_stdout(db, &["list", "--json"]).as_bytes());
    let in_extras = wait_until(Duration::from_secs(60), || {
        db.exists() && listed(&db).first().is_some_and(|r| r["ok"].as_i64().unwrap_or(0) >= 5)
    });
    assert!(in_extras, "the run never reached its extra trials");
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    let before = listed(&db)[0]["ok"].as_i64().unwrap();
    assert!((5..10).contains(&before), "{before}");
    let doc = report(&db, "1");
    let marks: Vec<Value> = cells(&doc).iter().map(|c| c["headline"]["stopped_by"].clone()).collect();
    assert!(marks.iter().any(|m| m == "unfinished"), "{marks:?}");
    let err = String::from_utf8_lossy(&ok_stdout_err(&db, &["run", "--resume", "1"])).to_string();
    assert!(err.contains("already stored") && err.contains("adaptive"), "{err}");
    // Every cell ends at exactly max_repeat, every seq once.
    assert_eq!(stored_seqs(&db, "1"), (0..10).collect::<Vec<_>>());
    for cell in cells(&report(&db, "1")) {
        assert_eq!(cell["runs"], 5, "{cell}");
        assert_eq!(cell["headline"]["stopped_by"], "max_repeat");
    }
}

/// `schedlab <args> --db <db>`, which must succeed; its stderr.
fn ok_stdout_err(db: &Path, args: &[&str]) -> Vec<u8> {
    let out = schedlab_in(db, args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stderr
}

#[test]
fn bad_adaptive_settings_are_refused_before_anything_runs() {
    let dir = Scratch::new("adaptive-bad");
    let db = dir.path("r.db");
    let fixed = dir.write("f.toml", &ring_suite(4, ""));
    for (args, needle) in [
        (vec!["run", &fixed, "--max-repeat", "8"], "add --target-ci"),
        (vec!["run", &fixed, "--target-ci", "5%", "--max-repeat", "3"], "below experiment 1's repeat = 4"),
        (vec!["run", &fixed, "--target-ci", "0"], "above 0"),
        (vec!["run", &fixed, "--target-ci", "lots"], "not a target"),
        (vec!["run", &fixed, "--budget", "soon", "--target-ci", "5%"], "not a duration"),
    ] {
        let out = schedlab_in(&db, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    let bad = dir.write("b.toml", &ring_suite(4, "").replace("repeat = 4", "repeat = 4\nmax_repeat = 9"));
    let out = schedlab_in(&db, &["run", &bad]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("b.toml:"));
    assert!(!db.exists(), "nothing was stored");
}

#[test]
fn bad_targets_repeats_and_budgets_are_refused_with_the_fix() {
    let dir = Scratch::new("adaptive-refused");
    let db = dir.path("r.db");
    // 2 cells x 6 repeats of 100 ms rings: about 2 s planned.
    let slow = ring_suite(6, "").replace("laps = 50", "duration = \"100ms\"");
    let fixed = dir.write("f.toml", &slow);
    let short = dir.write(
        "s.toml",
        &slow
            .replace("name = \"adaptive\"\n", "name = \"adaptive\"\nbudget = \"1s\"\n")
            .replace("repeat = 6", "repeat = 6\ntarget_ci = \"5%\""),
    );
    let idle = dir.write("i.toml", &ring_suite(2, "budget = \"5m\""));
    let zero = dir.write("z.toml", &ring_suite(2, "budget = 0"));
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["run", &fixed, "--target-ci", "0%"], vec!["zero width", "give a target above 0, e.g. 5%"]),
        (vec!["run", &fixed, "--target-ci", "-5%"], vec!["'-5%' is negative"]),
        (vec!["run", &fixed, "--target-ci", "NaN"], vec!["'NaN' is not a number"]),
        (vec!["run", &fixed, "--target-ci", "100%"], vec!["give a target below 100%"]),
        (vec!["run", &fixed, "--target-ci", "1"], vec!["write 1% for one percent"]),
        (vec!["run", &fixed, "--target-ci", "5%", "--max-repeat", "0"], vec!["0 allows no trial at all", "1 to 10000"]),
        (vec!["run", &fixed, "--target-ci", "5%", "--budget", "0s"], vec!["leaves no time for any trial"]),
        (
            vec!["run", &fixed, "--target-ci", "5%", "--budget", "500ms"],
            vec![
                "--budget 500ms is less than the planned minimum needs: 12 trials",
                "give --budget 3s or more",
                "with at most repeat = 1 in each experiment the minimum fits",
            ],
        ),
        (
            vec!["run", &short],
            vec!["s.toml:2: budget = \"1s\" is less than the planned minimum needs", "give budget = \"3s\" or more"],
        ),
        (vec!["run", &idle], vec!["i.toml:2: budget: a budget limits adaptive repeats", "add target_ci"]),
        (vec!["run", &zero], vec!["z.toml:2: budget: a budget of '0' leaves no time for any trial"]),
    ];
    for (args, needles) in cases {
        let out = schedlab_in(&db, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for needle in needles {
            assert!(err.contains(needle), "{args:?}: '{needle}' not in: {err}");
        }
    }
    assert!(!db.exists(), "nothing was stored");
    // The suite's short budget is replaced by one that fits.
    let plan = stdout_of(&["run", &short, "--budget", "10s", "--dry-run"]);
    assert!(plan.contains("within a budget of 10 s"), "{plan}");
}
