//! Golden renderings of one fixed stored run (tests/fixtures/golden/golden.db, made once by
//! `schedlab run tests/fixtures/golden/golden.toml` on the 2-vCPU VM): what `show`,
//! `report`, `report --format json` and `export --format csv` print of it must not change
//! when the code behind them is reorganised. A deliberate change of output rewrites the
//! expected files with `SCHEDLAB_BLESS=1 cargo test --test golden`, and the diff is reviewed.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden").join(name)
}

/// `schedlab <args> --db <a copy of the fixture>` against the expected file `expected`.
fn check(expected: &str, args: &[&str]) {
    let dir = Scratch::new(&format!("golden-{expected}"));
    let db = dir.path("golden.db");
    std::fs::copy(fixture("golden.db"), &db).unwrap();
    let out = schedlab_in(&db, args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let actual = String::from_utf8(out.stdout).unwrap();
    let path = fixture(expected);
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let wanted = std::fs::read_to_string(&path).unwrap();
    if actual != wanted {
        let first = actual.lines().zip(wanted.lines()).position(|(a, w)| a != w);
        let line = first.unwrap_or_else(|| actual.lines().count().min(wanted.lines().count()));
        panic!(
            "`schedlab {}` differs from {} at line {}:\n  now: {:?}\n  was: {:?}\n\
             (SCHEDLAB_BLESS=1 rewrites the expected file when the change is meant)",
            args.join(" "),
            path.display(),
            line + 1,
            actual.lines().nth(line),
            wanted.lines().nth(line)
        );
    }
}

#[test]
fn show_is_unchanged() {
    check("show.txt", &["show", "1"]);
}

#[test]
fn report_text_is_unchanged() {
    check("report.txt", &["report", "1"]);
}

#[test]
fn report_json_is_unchanged() {
    check("report.json", &["report", "1", "--format", "json"]);
}

#[test]
fn export_csv_is_unchanged() {
    check("export.csv", &["export", "1", "--format", "csv"]);
}

#[test]
fn export_json_is_unchanged() {
    check("export.json", &["export", "1", "--format", "json"]);
}

#[test]
fn show_in_another_format_is_what_report_prints() {
    let dir = Scratch::new("golden-show-formats");
    let db = dir.path("golden.db");
    std::fs::copy(fixture("golden.db"), &db).unwrap();
    for format in ["csv", "markdown", "json"] {
        let shown = ok_stdout(&db, &["show", "1", "--format", format]);
        let reported = ok_stdout(&db, &["report", "1", "--format", format]);
        assert_eq!(shown.trim_end(), reported.trim_end(), "--format {format}");
    }
    let text = ok_stdout(&db, &["show", "1"]);
    assert!(text.contains("experiment 1 (ring)"), "{text}");
}
