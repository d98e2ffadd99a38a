//! `schedlab import --ncar FILE` and `--reference ncar-1992` on the real binary and a
//! real SQLite file: stored figures equal the table's, bad tables write nothing, and
//! the reference set arrives once however often it is imported.

mod common;

use common::*;
use serde_json::Value as Json;
use std::path::Path;

/// The Sun-4/280 table as the report prints it, title and caption included.
const SUN_4_280: &str = "Sun Microsystems SUN-4/280, SunOS 4.1.1

Processes\tReal Seconds\tCPU Seconds\tUser Seconds\tSystem Seconds\tProjected Seconds
2\t1294\t873\t76\t798\t873
4\t2532\t1835\t171\t1665\t1746
8\t4859\t3788\t342\t3447\t3493
10\t4985\t4569\t426\t4143\t4366
16\t25097\t21874\t850\t21025\t6985
20\t29898\t27461\t1031\t26431\t8732
32\t54572\t50551\t1724\t48828\t13971
48\t80003\t75362\t2589\t72774\t20956
64\t101425\t96545\t3402\t93143\t27941

Sun Microsystems SUN-4/280, SunOS 4.1.1

Seconds x 10³
";

fn exported(db: &Path, run: &str) -> Json {
    serde_json::from_str(&ok_stdout(db, &["export", run])).unwrap()
}

fn listed(db: &Path) -> Vec<Json> {
    json_lines(ok_stdout(db, &["list", "--json"]).as_bytes())
}

/// `schedlab import ARGS --db DB`: exit code and stderr.
fn import(db: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    let out = schedlab_in(db, &all);
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_ncar_table_is_stored_with_the_tables_figures() {
    let dir = Scratch::new("ncar-import");
    let db = dir.path("n.db");
    let table = dir.write("sun.txt", SUN_4_280);
    let (code, err) = import(&db, &["--ncar", &table, "--machine", "Sun-4/280 (from the paper)"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("warning"), "the published table adds up: {err}");

    let doc = exported(&db, "1");
    let run = &doc["runs"][0];
    assert_eq!(run["suite_name"], "ncar-import");
    assert_eq!(run["machine"]["hostname"], "Sun-4/280 (from the paper)");
    assert_eq!(run["machine"]["imported"], true);
    assert!(run["warnings"][0].as_str().unwrap().contains("not measured by schedlab"));
    let trials = run["trials"].as_array().unwrap();
    let rows: Vec<Vec<u64>> = SUN_4_280
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split('\t').map(|c| c.parse().unwrap()).collect())
        .collect();
    assert_eq!(trials.len(), rows.len());
    for (t, row) in trials.iter().zip(&rows) {
        let (procs, real, user, system) = (row[0], row[1], row[3], row[4]);
        assert_eq!((t["family"].as_str(), t["status"].as_str()), (Some("ring"), Some("ok")));
        assert_eq!(t["params"], serde_json::json!({"procs": procs, "laps": 1_000_000}));
        let o = &t["outcome"];
        assert_eq!(o["procs"], procs);
        assert_eq!(o["laps"], 1_000_000);
        assert_eq!(o["hops"], 1_000_000 * procs, "iterations x processes, as the report counts switches");
        assert_eq!(o["real_ns"], real * 1_000_000_000);
        assert_eq!(o["usage"]["utime_ns"], user * 1_000_000_000);
        assert_eq!(o["usage"]["stime_ns"], system * 1_000_000_000);
        assert_eq!(
            (o["overhead_ps"].as_u64(), o["spawn_ns"].as_u64(), o["teardown_ns"].as_u64()),
            (Some(0), Some(0), Some(0))
        );
        assert_eq!(o["member_cpus"], serde_json::json!([]));
        assert_eq!(t["spec"]["procs"], procs);
        assert_eq!((t["spec"]["mode"].as_str(), t["spec"]["ipc"].as_str()), (Some("process"), Some("pipe")));
        // The figures a report derives read back as the table printed them.
        assert_eq!(t["figures"]["real_s"].as_f64(), Some(real as f64));
        assert_eq!(t["figures"]["user_s"].as_f64(), Some(user as f64));
        assert_eq!(t["figures"]["sys_s"].as_f64(), Some(system as f64));
    }

    // The same table again is the same run: skipped. Another laps count is another run.
    let (code, err) = import(&db, &["--ncar", &table, "--machine", "Sun-4/280 (from the paper)"]);
    assert_eq!(code, Some(0));
    assert!(err.contains("already in") && err.contains("as run 1"), "{err}");
    assert_eq!(listed(&db).len(), 1);
    let (code, err) = import(&db, &["--ncar", &table, "--machine", "Sun-4/280 (from the paper)", "--laps", "2000"]);
    assert_eq!(code, Some(0), "{err}");
    let last = &exported(&db, "2")["runs"][0]["trials"][8]["outcome"];
    assert_eq!((last["laps"].as_u64(), last["hops"].as_u64()), (Some(2000), Some(128_000)));
    let list = ok_stdout(&db, &["list"]);
    assert!(list.contains("ncar-import") && list.contains("Sun-4/280 (from the paper)"), "{list}");
}

#[test]
fn a_projection_that_does_not_add_up_is_warned_about_and_kept() {
    let dir = Scratch::new("ncar-projection");
    let db = dir.path("n.db");
    // Projected at 16 processes is the 4-process figure x 4 (a projection from the wrong
    // base), not the 2-process ring's x 8.
    let table = dir.write(
        "t.txt",
        "Processes  Real Seconds  CPU Seconds  User Seconds  System Seconds  Projected Seconds\n\
         2  10  10  1  9  10\n4  30  30  3  27  20\n16  130  130  13  117  120\n",
    );
    let (code, err) = import(&db, &["--ncar", &table, "--machine", "box", "--laps", "1000"]);
    assert_eq!(code, Some(0), "a warning, not a refusal: {err}");
    assert!(err.contains("warning:") && err.contains("t.txt:4: Projected Seconds 120 for 16 processes"), "{err}");
    assert!(!err.contains("t.txt:3"), "4 processes: 20 is 10 x 2: {err}");
    let warnings = &exported(&db, "1")["runs"][0]["warnings"];
    assert!(warnings.to_string().contains("t.txt:4: Projected Seconds 120"), "{warnings}");
    let report = ok_stdout(&db, &["report", "1"]);
    assert!(report.contains("warning: ") && report.contains("Projected Seconds 120"), "{report}");
}

#[test]
fn bad_tables_exit_2_name_the_line_and_write_nothing() {
    let dir = Scratch::new("ncar-bad");
    let header = "Processes\tReal Seconds\tCPU Seconds\tUser Seconds\tSystem Seconds\n";
    let cases: Vec<(&str, String, &str)> = vec![
        ("no-header.txt", "2\t1\t1\t1\t1\n".into(), "no-header.txt:1: a row of numbers before the header"),
        ("prose.txt", "Sun-4/280\n\nnothing here\n".into(), "prose.txt: no header line"),
        (
            "missing.txt",
            "Processes\tReal Seconds\tCPU Seconds\tUser Seconds\n2\t1\t1\t1\n".into(),
            "missing.txt:1: the header has no 'System Seconds' column",
        ),
        (
            "text.txt",
            format!("{header}2\t1\t1\t1\t1\n4\t2\tabout 2\t1\t1\n"),
            "text.txt:3: 6 cells, but the header (line 1) names 5 columns",
        ),
        ("cell.txt", format!("{header}2\t1\t1\t1\t1\n4\t2\t2\tn/a\t1\n"), "cell.txt:3: 'n/a' in column 'User Seconds'"),
        ("dup.txt", format!("{header}2\t1\t1\t1\t1\n4\t2\t2\t1\t1\n2\t1\t1\t1\t1\n"), "dup.txt:4: a second row for 2"),
        ("empty.txt", header.to_string(), "empty.txt:1: the header has no rows"),
    ];
    // Into no database: none is made.
    let fresh = dir.path("fresh.db");
    for (name, text, needle) in &cases {
        let file = dir.write(name, text);
        let (code, err) = import(&fresh, &["--ncar", &file, "--machine", "m"]);
        assert_eq!(code, Some(2), "{name}: {err}");
        assert!(err.contains(needle), "{name}: expected {needle:?} in {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!fresh.exists(), "a refused import made the database");
    // Into a database that holds a run: it still holds only that run.
    let db = dir.path("n.db");
    let good = dir.write("good.txt", SUN_4_280);
    assert_eq!(import(&db, &["--ncar", &good, "--machine", "m"]).0, Some(0));
    let before = ok_stdout(&db, &["export", "1"]);
    for (name, _, needle) in &cases {
        let (code, err) = import(&db, &["--ncar", &dir.path(name).display().to_string(), "--machine", "m"]);
        assert_eq!(code, Some(2), "{name}");
        assert!(err.contains(needle), "{err}");
    }
    let (code, err) = import(&db, &["--ncar", &good]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--machine"), "{err}");
    let (code, err) = import(&db, &["--ncar", &dir.path("absent.txt").display().to_string(), "--machine", "m"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("cannot read") && err.contains("absent.txt"), "{err}");
    let (code, err) = import(&db, &["--ncar", &good, "--machine", "  "]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--machine needs a name"), "{err}");
    assert_eq!(import(&db, &["--machine", "m"]).0, Some(2), "--machine without --ncar");
    assert_eq!(import(&db, &["--reference", "ncar-1993"]).0, Some(2));
    assert_eq!(listed(&db).len(), 1);
    assert_eq!(ok_stdout(&db, &["export", "1"]), before);
}

#[test]
fn the_reference_set_is_nine_published_runs_stored_once() {
    let dir = Scratch::new("ncar-reference");
    let db = dir.path("r.db");
    let (code, err) = import(&db, &["--reference", "ncar-1992"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(err.matches("imported run").count(), 9, "{err}");
    assert!(!err.contains("warning"), "every published table adds up: {err}");
    let (code, err) = import(&db, &["--reference", "ncar-1992"]);
    assert_eq!(code, Some(0));
    assert_eq!(err.matches("already in").count(), 9, "{err}");
    let runs = listed(&db);
    assert_eq!(runs.len(), 9);
    assert!(runs.iter().all(|r| r["suite"] == "ncar-1992-published" && r["status"] == "finished"));
    assert!(runs.iter().all(|r| r["hostname"].as_str().unwrap().ends_with("(NCAR 1992, published)")));
    let trials: Vec<i64> = runs.iter().map(|r| r["ok"].as_i64().unwrap()).collect();
    assert_eq!(trials, [9, 9, 7, 9, 9, 8, 9, 9, 9], "what the report prints: IBM 370 to 32, Solbourne to 48");
    let list = ok_stdout(&db, &["list"]);
    assert!(list.contains("Sun-4/280, SunOS 4.1.1 (NCAR 1992, published)"), "{list}");
    assert!(list.contains("IBM RS6000/530, AIX 3.1") && list.contains("IBM RS6000/530, AIX 3.2"), "{list}");
    // Spot checks against the report: the HP's 42-process row, the Sun-4/280 at 16.
    let hp = &exported(&db, "2")["runs"][0];
    assert!(hp["machine"]["source"].as_str().unwrap().contains("Hewlett-Packard 9000/720, HP-UX A.B8.05"));
    let row42 = hp["trials"].as_array().unwrap().iter().find(|t| t["params"]["procs"] == 42).expect("42 processes");
    assert_eq!(row42["outcome"]["real_ns"], 9_839_000_000_000u64);
    let sun = &exported(&db, "7")["runs"][0];
    assert_eq!(sun["machine"]["kernel_release"], "SunOS 4.1.1");
    assert_eq!(sun["trials"][4]["outcome"]["usage"]["stime_ns"], 21_025_000_000_000u64);
    let shown = ok_stdout(&db, &["show", "7"]);
    assert!(shown.contains("published figures") && shown.contains("not measured by schedlab"), "{shown}");
}
