//! The PostgreSQL store on a real, throwaway server (tests/common/pg.rs): bad servers and
//! URLs, another application's database, a newer schema, a server that goes away in the
//! middle of a run, `push`, and SCHEDLAB_DB. What both stores share (suites end to end,
//! resume, concurrent runs, export/import, compare) is in lab.rs and report.rs.

mod common;

use common::pg::PgServer;
use common::*;
use std::path::Path;
use std::time::Duration;

const ONE_RING: &str = "name = \"one\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 20\nrepeat = 2\n";

/// `schedlab ARGS`: exit 2, `needles` in the message, no panic; returns stderr.
fn refused_with(args: &[&str], needles: &[&str]) -> String {
    let out = schedlab().args(args).timeout(Duration::from_secs(60)).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{args:?}: '{needle}' not in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The tables in a database's public schema.
fn tables(server: &PgServer, db: &str) -> Vec<String> {
    let mut client = server.connect(db);
    let rows =
        client.query("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", &[]).unwrap();
    rows.iter().map(|r| r.get(0)).collect()
}

#[test]
fn bad_servers_urls_and_databases_are_refused_naming_the_host() {
    let Some(server) = PgServer::start("bad") else { return };
    let dir = Scratch::new("pg-bad");
    let suite = dir.write("one.toml", ONE_RING);
    // A URL schedlab cannot read: the form it wants.
    refused_with(&["run", &suite, "--db", "postgresql://lab@db.example.org:port/results"], &["postgresql://USER"]);
    refused_with(&["list", "--db", "postgresql://db.example.org/results"], &["names no user"]);
    // No server there: a socket directory with nothing in it, and a TCP port nobody listens on.
    let nowhere = dir.path("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    let url = format!("postgresql://lab@{}/results", nowhere.display().to_string().replace('/', "%2F"));
    refused_with(
        &["run", &suite, "--db", &url],
        &["cannot reach the PostgreSQL server", &nowhere.display().to_string()],
    );
    refused_with(&["list", "--db", "postgresql://lab@127.0.0.1:1/results"], &["host 127.0.0.1 port 1", "running"]);
    // Wrong password: refused, and the password is never printed.
    server.create_database("results");
    let wrong = server.url_with_password("results", "not-the-password");
    let err = refused_with(&["run", &suite, "--db", &wrong], &["refused user 'postgres'", "password"]);
    assert!(!err.contains("not-the-password"), "{err}");
    // No such database: how to make it.
    refused_with(&["list", "--db", &server.url("nosuchdb")], &["has no database 'nosuchdb'", "createdb"]);
    // An empty database is not read as one with results, and a read writes nothing.
    refused_with(&["list", "--db", &server.url("results")], &["holds no schedlab results yet"]);
    refused_with(&["delete", "1", "--db", &server.url("results")], &["holds no schedlab results yet"]);
    assert!(tables(&server, "results").is_empty());
    // Another application's database: refused, left as it was.
    let other = server.create_database("otherapp");
    server
        .connect("otherapp")
        .batch_execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')")
        .unwrap();
    refused_with(&["run", &suite, "--db", &other], &["not schedlab's", "left untouched"]);
    refused_with(&["list", "--db", &other], &["not schedlab's"]);
    assert_eq!(tables(&server, "otherapp"), ["notes"]);
    // A newer schedlab's database: refused by every command.
    let newer = server.create_database("newer");
    ok_stdout(Path::new(&newer), &["run", &suite]);
    server.connect("newer").batch_execute("UPDATE schedlab_meta SET schema_version = 99").unwrap();
    refused_with(&["list", "--db", &newer], &["newer schedlab", "schema version 99"]);
    refused_with(&["run", &suite, "--db", &newer], &["newer schedlab"]);
    let count: i64 = server.connect("newer").query_one("SELECT count(*) FROM runs", &[]).unwrap().get(0);
    assert_eq!(count, 1, "the refused run stored nothing");
}

#[test]
fn a_server_that_goes_away_stops_the_run_and_resume_finishes_it() {
    let Some(server) = PgServer::start("gone") else { return };
    let dir = Scratch::new("pg-gone");
    let url = server.create_database("lab");
    let db = Path::new(&url);
    let child = start_slow_run(&dir, db, 2);
    let family = descendants(child.id() as i32);
    server.stop();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("lost the PostgreSQL server") && err.contains("--resume 1"), "{err}");
    assert!(!err.contains(server.password()), "{err}");
    assert_none_running(&family);
    server.start_again();
    let listed = listed_runs(db);
    let before = listed[0]["ok"].as_i64().unwrap();
    assert!((2..8).contains(&before), "{listed:?}");
    // The server went before the run could mark itself stopped; resume sees its process gone.
    ok_stdout(db, &["run", "--resume", "1"]);
    assert_eq!(stored_seqs(db, "1"), (0..8).collect::<Vec<_>>());
    assert_eq!(listed_runs(db)[0]["status"], "finished");
}

#[test]
fn push_copies_finished_runs_once_by_uuid() {
    let Some(server) = PgServer::start("push") else { return };
    let dir = Scratch::new("pg-push");
    let suite = dir.write("one.toml", ONE_RING);
    let local = dir.path("local.db");
    ok_stdout(&local, &["run", &suite]);
    ok_stdout(&local, &["run", &suite]);
    let shared = server.create_database("shared");
    let push = |args: &[&str]| {
        let out = schedlab().args(args).arg("--db").arg(&local).timeout(Duration::from_secs(60)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains(server.password()), "{err}");
        err
    };
    let first = push(&["push", "1", "2", "--to", &shared]);
    assert!(
        first.contains("copied run 1") && first.contains("copied run 2") && first.contains("2 run(s) copied"),
        "{first}"
    );
    // Again: nothing changes, and it says so.
    let again = push(&["push", "1", "latest", "--to", &shared]);
    assert!(again.contains("0 run(s) copied, 2 skipped") && again.contains("already in"), "{again}");
    let remote = listed_runs(Path::new(&shared));
    assert_eq!(remote.len(), 2);
    let uuids = |runs: &[serde_json::Value]| runs.iter().map(|r| r["uuid"].clone()).collect::<Vec<_>>();
    assert_eq!(uuids(&remote), uuids(&listed_runs(&local)));
    // The copy is the run: its export is the same, byte for byte.
    for run in ["1", "2"] {
        assert_eq!(ok_stdout(Path::new(&shared), &["export", run]), ok_stdout(&local, &["export", run]));
    }
    // A bad target copies nothing and says where.
    let out =
        schedlab().args(["push", "1", "--to", "postgresql://lab@127.0.0.1:1/x", "--db"]).arg(&local).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("host 127.0.0.1 port 1"));
    // A run that is not there: nothing is copied either.
    let out = schedlab().args(["push", "1", "9", "--to", &shared, "--db"]).arg(&local).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(listed_runs(Path::new(&shared)).len(), 2);
}

#[test]
fn schedlab_db_names_the_server_for_every_command() {
    let Some(server) = PgServer::start("env") else { return };
    let dir = Scratch::new("pg-env");
    let suite = dir.write("one.toml", ONE_RING);
    let url = server.create_database("lab");
    let with_env = |args: &[&str]| {
        let out = schedlab()
            .args(args)
            .env("SCHEDLAB_DB", &url)
            .current_dir(&dir.0)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    with_env(&["run", &suite]);
    let listed = json_lines(with_env(&["list", "--json"]).as_bytes());
    assert_eq!(listed.len(), 1);
    assert!(with_env(&["show", "latest"]).contains("suite one"));
    // No SQLite file was made; the run's report went to the current directory.
    assert!(!dir.path("schedlab.db").exists());
    assert!(dir.path("lab-run-1.html").exists());
    with_env(&["delete", "1"]);
    assert!(json_lines(with_env(&["list", "--json"]).as_bytes()).is_empty());
}
