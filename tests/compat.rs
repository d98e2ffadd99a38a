//! Results written by schedlab 0.1.0 (tests/fixtures/v0.1.0, made with that binary before
//! the typed outcome replaced its untyped figures) still open: read-only as they are, and
//! upgraded in place through the schema migration, and its JSON export still imports.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v0.1.0").join(name)
}

/// What every reading command must show of the fixture's two runs.
fn check_every_reader(db: &Path, dir: &Scratch) {
    let list = ok_stdout(db, &["list"]);
    assert!(list.contains("fixture-0.1.0") && list.contains("finished"), "{list}");
    let listed = json_lines(ok_stdout(db, &["list", "--json"]).as_bytes());
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|r| r["ok"] == 32 && r["not_ok"] == 0), "{listed:?}");

    let shown = ok_stdout(db, &["show", "1"]);
    for needle in ["experiment 1 (ring)", "Projected s", "experiment 2 (workload)", "experiment 5 (latency)", "p99 µs"]
    {
        assert!(shown.contains(needle), "missing {needle}: {shown}");
    }
    // Figures read back from 0.1.0's seconds: the ring of 2 ran 500 laps, about 1000 hops.
    let report: serde_json::Value = serde_json::from_str(&ok_stdout(db, &["report", "1", "--format", "json"])).unwrap();
    let experiments = report["experiments"].as_array().unwrap();
    assert_eq!(experiments.len(), 5, "{report}");
    let rings = experiments[0]["groups"].as_array().unwrap();
    assert_eq!(rings.len(), 3);
    let per_hop = &rings[0]["figures"]["ns_per_hop"];
    assert_eq!(per_hop["n"], 4, "{per_hop}");
    assert!(per_hop["median"].as_f64().unwrap() > 100.0 && per_hop["median"].as_f64().unwrap() < 1e6, "{per_hop}");
    assert!(rings[2]["figures"]["projected_s"].as_f64().unwrap() > 0.0);
    let latency = &experiments[4]["groups"][0]["figures"];
    assert_eq!(latency["samples"]["n"], 4, "{latency}");
    assert!(report["findings"].as_array().unwrap().iter().any(|f| f["kind"] == "latency_leader"), "{report}");
    let text = ok_stdout(db, &["report", "2"]);
    assert!(text.contains("findings:") && text.contains("lowest median p99"), "{text}");

    let html = dir.path("compat.html");
    let svg = dir.path("svg");
    ok_stdout(db, &["report", "2", "--html", html.to_str().unwrap(), "--svg", svg.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    // Every family's plots, and the forest plot of the run's decisions.
    assert!(page.contains("fixture-0.1.0") && page.matches("<figure").count() == 10, "plots of every family");
    assert!(page.contains("<figure id=\"questions-2-forest\" class=\"forest\">"), "the forest plot");

    // The two runs were of one suite: every figure matches, so compare has rows for all.
    let compared = schedlab_in(db, &["compare", "1", "2", "--format", "json"]);
    assert!(matches!(compared.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&compared.stderr));
    let rows = json_lines(&compared.stdout);
    assert_eq!(rows.len(), 3 * 2 + 4 * 2 + 2 * 3, "ring x2, workload x2, latency x3 figures per cell");

    // Export, import elsewhere, export again: the same text.
    let first = dir.path("first.json");
    ok_stdout(db, &["export", "1", "2", "-o", first.to_str().unwrap()]);
    let other = dir.path("other.db");
    ok_stdout(&other, &["import", first.to_str().unwrap()]);
    let second = dir.path("second.json");
    ok_stdout(&other, &["export", "1", "2", "-o", second.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&first).unwrap(), std::fs::read_to_string(&second).unwrap());
}

fn user_version(db: &Path) -> i64 {
    let out = std::process::Command::new("sqlite3").arg(db).arg("PRAGMA user_version").output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().parse().unwrap(),
        _ => -1,
    }
}

#[test]
fn a_0_1_0_database_opens_read_only_and_after_the_migration() {
    let dir = Scratch::new("compat-db");
    let db = dir.path("fx.db");
    std::fs::copy(fixture("fx.db"), &db).unwrap();
    let before = std::fs::read(&db).unwrap();
    // Reading never writes: the file stays schema 1, byte for byte.
    check_every_reader(&db, &dir);
    assert_eq!(std::fs::read(&db).unwrap(), before, "a read-only command changed the 0.1.0 file");
    // A writing command migrates it (here: an import that finds both runs already there).
    let export = fixture("fx-export.json");
    let out = schedlab_in(&db, &["import", export.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already in"), "same runs: skipped");
    if user_version(&db) >= 0 {
        assert_eq!(user_version(&db), 2, "migrated to schema 2");
    }
    check_every_reader(&db, &dir);
}

#[test]
fn a_0_1_0_export_imports() {
    let dir = Scratch::new("compat-export");
    let db = dir.path("imported.db");
    let out = schedlab_in(&db, &["import", fixture("fx-export.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    check_every_reader(&db, &dir);
    // The imported trials carry typed outcomes: the new export has them.
    let exported: serde_json::Value = serde_json::from_str(&ok_stdout(&db, &["export", "1"])).unwrap();
    assert_eq!(exported["format_version"], 2);
    let trial = &exported["runs"][0]["trials"][0];
    assert_eq!(trial["spec"]["family"], "ring");
    assert!(trial["outcome"]["real_ns"].as_u64().unwrap() > 0, "{trial}");
    assert!(trial["figures"]["ns_per_hop"].as_f64().unwrap() > 0.0, "{trial}");
}
