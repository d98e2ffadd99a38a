//! The lab: suites, the stores, resume, export/import, the machine fingerprint, all on
//! the real binary and real databases: SQLite files, and (the tests named `pg_…`) a
//! throwaway PostgreSQL server.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// Every family, tiny: 2 ring + 2 workload + 2 latency trials.
const TINY: &str = r#"
name = "tiny"
[[experiment]]
family = "ring"
procs = [2, 3]
laps = 50

[[experiment]]
family = "workload"
workload = "cpu"
procs = 2
iterations = 10000
policy = ["other", "batch"]

[[experiment]]
family = "latency"
interval = "1ms"
loops = 50
threads = 1
repeat = 2
"#;

/// Trials of about 0.3 s each, so a run can be stopped in the middle.
fn runs(db: &Path) -> Vec<Value> {
    json_lines(ok_stdout(db, &["list", "--json"]).as_bytes())
}

#[test]
fn a_tiny_suite_runs_end_to_end_and_is_stored() {
    tiny_suite_end_to_end(&Dbs::sqlite("lab-tiny"));
}

#[test]
fn pg_a_tiny_suite_runs_end_to_end_and_is_stored() {
    if let Some(dbs) = Dbs::postgres("tiny") {
        tiny_suite_end_to_end(&dbs);
    }
}

fn tiny_suite_end_to_end(dbs: &Dbs) {
    let dir = &dbs.dir;
    let suite = dir.write("tiny.toml", TINY);
    let db = dbs.db("results");
    let tables = ok_stdout(&db, &["run", &suite]);
    assert!(tables.contains("experiment 1 (ring)") && tables.contains("experiment 3 (latency)"), "{tables}");
    let listed = runs(&db);
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0]["ok"].as_i64(), listed[0]["not_ok"].as_i64()), (Some(6), Some(0)));
    assert_eq!(listed[0]["status"], "finished");
    let doc = export_json(&db, "1");
    let run = &doc["runs"][0];
    assert_eq!(run["suite_text"], TINY);
    assert!(run["machine"]["kernel_release"].is_string());
    let trials = run["trials"].as_array().unwrap();
    for t in trials {
        assert_eq!(t["status"], "ok", "{t}");
        match t["family"].as_str().unwrap() {
            "ring" => assert!(t["figures"]["ns_per_hop"].as_f64().unwrap() > 0.0),
            "workload" => assert!(t["figures"]["wall_s"].as_f64().unwrap() > 0.0),
            "latency" => {
                assert_eq!(t["figures"]["samples"].as_u64().unwrap() + t["figures"]["overruns"].as_u64().unwrap(), 50);
                let counted: u64 =
                    t["outcome"]["histogram"].as_array().unwrap().iter().map(|b| b[1].as_u64().unwrap()).sum();
                assert_eq!(counted, t["figures"]["samples"].as_u64().unwrap());
            }
            other => panic!("unexpected family {other}"),
        }
    }
    // The policies of each trial stayed in its own process: BATCH was measured as BATCH.
    assert!(trials.iter().any(|t| t["figures"]["policy"] == "batch"));
    let shown = ok_stdout(&db, &["show", "1"]);
    assert!(shown.contains("suite tiny") && shown.contains("ns/hop"), "{shown}");
    assert!(!dir.path("results.db-wal").exists() || runs(&db).len() == 1);
}

#[test]
fn the_plan_is_the_cross_product_times_repeats() {
    let dir = Scratch::new("lab-plan");
    let suite = dir.write(
        "p.toml",
        "[[experiment]]\nfamily = \"ring\"\nprocs = [2, 4, 8]\npolicy = [\"other\", \"batch\"]\nlaps = 10\nrepeat = 4\nwarmup = 1\n",
    );
    let db = dir.path("never.db");
    let plan = ok_stdout(&db, &["run", &suite, "--dry-run"]);
    assert!(plan.contains("24 trials + 6 warm-up"), "{plan}");
    let measured =
        plan.lines().filter(|l| l.trim_end().ends_with(|c: char| c.is_ascii_digit()) && l.contains(" #")).count();
    assert_eq!(measured, 24, "{plan}");
    assert!(!db.exists(), "a dry run stores nothing");
    // --shuffle with a seed: the same set of trials, in a reproducible other order.
    let a = ok_stdout(&db, &["run", &suite, "--dry-run", "--shuffle", "--seed", "7"]);
    let b = ok_stdout(&db, &["run", &suite, "--dry-run", "--shuffle", "--seed", "7"]);
    assert_eq!(a, b);
    assert_ne!(a, plan);
    let sorted = |t: &str| {
        let mut l: Vec<String> = t.lines().map(str::to_string).collect();
        l.sort();
        l
    };
    assert_eq!(sorted(&a), sorted(&plan));
}

#[test]
fn suite_errors_name_file_line_and_key_before_anything_runs() {
    let dir = Scratch::new("lab-bad-suite");
    let db = dir.path("never.db");
    let cases = [
        (
            "[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\npolicy = [\"other\", \"fifoo\"]\n",
            ":4:",
            "unknown policy 'fifoo'",
        ),
        ("[[experiment]]\nfamily = \"ring\"\n\nlapz = 3\n", ":4:", "unknown key 'lapz'"),
        ("[[experiment]]\nfamily = \"ring\"\nprocs = 1\n", ":3:", "at least 2"),
        ("[[experiment]]\nfamily = \"ring\"\nprocs = [2\n", ":3:", ""),
        ("[[experiment]]\nfamily = \"latency\"\ninterval = \"fast\"\n", ":3:", "interval"),
        // Once 5 seconds between wakeups.
        (
            "[[experiment]]\nfamily = \"latency\"\nloops = 10\ninterval = 5\n",
            ":4:",
            "interval = 5 has no unit: write \"5us\", \"5ms\" or \"5s\"",
        ),
        ("[[experiment]]\nfamily = \"latency\"\nloops = 10\ninterval = \"1ns\"\n", ":4:", "10 µs floor"),
        ("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nduration = \"1ns\"\n", ":4:", "give duration 1ms or more"),
        ("[[experiment]]\nfamily = \"ring\"\nprocs = 2\nduration = \"25h\"\n", ":4:", "24 h"),
        ("[[experiment]]\nfamily = \"latency\"\nloops = 0\n", ":3:", "0 loops runs nothing"),
        ("[[experiment]]\nfamily = \"ring\"\ntarget_ci = -5\n", ":3:", "is negative"),
    ];
    for (text, line, needle) in cases {
        let suite = dir.write("bad.toml", text);
        let out = schedlab()
            .args(["run", &suite, "--db", &db.display().to_string()])
            .current_dir(cwd_for(&db))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(&format!("bad.toml{line}")) && err.contains(needle), "{text}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!db.exists(), "nothing was stored");
    refused(&["run", "no-such-suite"], "no built-in suite or file named 'no-such-suite'");
    // A trial asked to measure for longer than --trial-timeout could never end by itself.
    let long = dir.write("long.toml", "[[experiment]]\nfamily = \"latency\"\nduration = \"20m\"\n");
    refused(&["run", &long, "--dry-run"], "measures for 20 min 00 s, and --trial-timeout 10m would stop it");
    refused(&["run", &long, "--trial-timeout", "15m", "--dry-run"], "give --trial-timeout 21m or more");
    refused(&["run", "hrtimers-2007", "--trial-timeout", "5s", "--dry-run"], "--trial-timeout 5s would stop it");
}

#[test]
fn built_in_suites_are_listed_and_shown() {
    let listing = stdout_of(&["suites"]);
    for name in ["quick", "pipeline-1992", "policy-study", "hrtimers-2007", "rt-under-load"] {
        assert!(listing.contains(name), "{listing}");
    }
    let quick = stdout_of(&["suites", "--show", "quick"]);
    assert!(quick.contains("[[experiment]]"));
    let plan = stdout_of(&["run", "policy-study", "--dry-run"]);
    // 27 cells x at least 6 repeats, in blocks of the three policies until each question
    // is answered (at most 150 blocks a CPU-bound question, 300 an I/O or mixed one).
    assert!(plan.contains("162 trials") && plan.contains("repeats 6..150 in blocks of one trial per policy"), "{plan}");
    assert_eq!(plan.matches("repeats 6..300 in blocks of one trial per policy").count(), 2, "{plan}");
    let full = stdout_of(&["run", "policy-study", "--dry-run", "--full"]);
    assert!(full.contains("iterations=100000000"), "{full}");
}

#[test]
fn resume_after_sigint_runs_every_trial_exactly_once() {
    resume_after_sigint(&Dbs::sqlite("lab-sigint"));
}

#[test]
fn pg_resume_after_sigint_runs_every_trial_exactly_once() {
    if let Some(dbs) = Dbs::postgres("sigint") {
        resume_after_sigint(&dbs);
    }
}

fn resume_after_sigint(dbs: &Dbs) {
    let db = dbs.db("r");
    let child = start_slow_run(&dbs.dir, &db, 2);
    let family = descendants(child.id() as i32);
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("--resume 1"), "{err}");
    assert_none_running(&family);
    let listed = runs(&db);
    assert_eq!(listed[0]["status"], "interrupted");
    let before = listed[0]["ok"].as_i64().unwrap();
    assert!((2..8).contains(&before), "{before}");
    ok_stdout(&db, &["run", "--resume", "1"]);
    assert_eq!(stored_seqs(&db, "1"), (0..8).collect::<Vec<_>>());
    assert_eq!(runs(&db)[0]["status"], "finished");
    refused(&["run", "--resume", "1", "--db", &db.display().to_string()], "already finished");
}

#[test]
fn resume_after_sigkill_runs_every_trial_exactly_once() {
    resume_after_sigkill(&Dbs::sqlite("lab-sigkill"));
}

#[test]
fn pg_resume_after_sigkill_runs_every_trial_exactly_once() {
    if let Some(dbs) = Dbs::postgres("sigkill") {
        resume_after_sigkill(&dbs);
    }
}

fn resume_after_sigkill(dbs: &Dbs) {
    let db = dbs.db("r");
    let mut child = start_slow_run(&dbs.dir, &db, 3);
    // The next trial's process may not be forked yet, just after the third was stored.
    let pid = child.id() as i32;
    let mut family = Vec::new();
    let running = wait_until(Duration::from_secs(10), || {
        family = descendants(pid);
        !family.is_empty()
    });
    assert!(running, "no trial process is running");
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    // The trial process and its ring members die with the orchestrator.
    assert_none_running(&family);
    assert_eq!(runs(&db)[0]["status"], "running");
    ok_stdout(&db, &["run", "--resume", "latest"]);
    assert_eq!(stored_seqs(&db, "1"), (0..8).collect::<Vec<_>>());
}

#[test]
fn two_runs_can_write_one_database_at_once() {
    two_runs_at_once(&Dbs::sqlite("lab-concurrent"));
}

#[test]
fn pg_two_runs_can_write_one_database_at_once() {
    if let Some(dbs) = Dbs::postgres("concurrent") {
        two_runs_at_once(&dbs);
    }
}

/// Both start on a new, empty database: both make (or wait for) its schema.
fn two_runs_at_once(dbs: &Dbs) {
    let dir = &dbs.dir;
    let suite = dir.write("tiny.toml", TINY);
    let db = dbs.db("shared");
    let start = || {
        std::process::Command::new(binary_path())
            .args(["run", &suite, "--db", &db.display().to_string()])
            .current_dir(cwd_for(&db))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let listed = runs(&db);
    assert_eq!(listed.len(), 2);
    for r in listed {
        assert_eq!((r["ok"].as_i64(), r["status"].as_str()), (Some(6), Some("finished")), "{r}");
    }
}

#[test]
fn export_import_export_is_lossless_and_csv_has_a_row_per_trial() {
    export_import_round_trip(&Dbs::sqlite("lab-roundtrip"));
}

#[test]
fn pg_export_import_export_is_lossless_and_csv_has_a_row_per_trial() {
    if let Some(dbs) = Dbs::postgres("roundtrip") {
        export_import_round_trip(&dbs);
    }
}

fn export_import_round_trip(dbs: &Dbs) {
    let dir = &dbs.dir;
    let suite = dir.write("tiny.toml", TINY);
    let (first, second) = (dbs.db("a"), dbs.db("b"));
    ok_stdout(&first, &["run", &suite]);
    let exported = dir.path("run.json");
    ok_stdout(&first, &["export", "1", "-o", &exported.display().to_string()]);
    // Something in the second database already, so the imported run gets another id.
    ok_stdout(&second, &["import", &exported.display().to_string()]);
    ok_stdout(&second, &["import", &exported.display().to_string()]);
    let listed = runs(&second);
    assert_eq!(listed.len(), 1, "importing the same run twice stores it once");
    let again = ok_stdout(&second, &["export", "1"]);
    assert_eq!(again, std::fs::read_to_string(&exported).unwrap());
    let csv = ok_stdout(&first, &["export", "1", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 6, "{csv}");
    assert!(lines[0].starts_with("run_id,run_uuid,suite,") && lines[0].contains("param.procs"), "{}", lines[0]);
    let columns = lines[0].split(',').count();
    assert!(lines[1..].iter().all(|l| !l.contains('"') && l.split(',').count() == columns || l.contains('"')));
}

#[test]
fn bad_databases_are_refused_and_left_untouched() {
    let dir = Scratch::new("lab-baddb");
    let db_flag = |p: &Path| p.display().to_string();
    // Missing.
    refused(&["list", "--db", &db_flag(&dir.path("missing.db"))], "no results database");
    // Not a database.
    let junk = dir.path("junk.db");
    std::fs::write(&junk, b"this is not sqlite, just text that happens to be long enough to be read").unwrap();
    let before = std::fs::read(&junk).unwrap();
    refused(&["list", "--db", &db_flag(&junk)], "not a SQLite database or is corrupt");
    let suite = dir.write("tiny.toml", TINY);
    refused(&["run", &suite, "--db", &db_flag(&junk)], "left untouched");
    assert_eq!(std::fs::read(&junk).unwrap(), before);
    // Another program's SQLite file.
    let other = dir.path("other.db");
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');").unwrap();
    }
    refused(&["list", "--db", &db_flag(&other)], "not a schedlab one");
    // A newer schedlab's database.
    let newer = dir.path("newer.db");
    ok_stdout(&newer, &["run", &suite]);
    {
        let conn = rusqlite::Connection::open(&newer).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    refused(&["list", "--db", &db_flag(&newer)], "newer schedlab");
    refused(&["run", &suite, "--db", &db_flag(&newer)], "newer schedlab");
    // A run that does not exist.
    let good = dir.path("good.db");
    ok_stdout(&good, &["run", &suite]);
    refused(&["show", "999", "--db", &db_flag(&good)], "there is no run 999");
    refused(&["export", "1", "999", "--db", &db_flag(&good)], "there is no run 999");
    refused(&["delete", "abc", "--db", &db_flag(&good)], "not a run id");
    refused(&["run", "--resume", "999", "--db", &db_flag(&good)], "there is no run 999");
    // Import files that are not schedlab's, or from a newer one.
    let not_ours = dir.write("x.json", "{\"hello\": 1}");
    refused(&["import", &not_ours, "--db", &db_flag(&good)], "not a schedlab export");
    let newer_export = dir.write("n.json", "{\"format\": \"schedlab-export\", \"format_version\": 9, \"runs\": []}");
    refused(&["import", &newer_export, "--db", &db_flag(&good)], "newer schedlab");
    assert_eq!(runs(&good).len(), 1);
    // Delete really deletes.
    ok_stdout(&good, &["delete", "1"]);
    assert!(runs(&good).is_empty());
}

#[test]
fn an_unwritable_location_is_refused_before_anything_runs() {
    let dir = Scratch::new("lab-rofs");
    let suite = dir.write("tiny.toml", TINY);
    // /proc accepts no new files, even from root.
    refused(&["run", &suite, "--db", "/proc/schedlab.db"], "cannot open /proc/schedlab.db");
    let _ = dir;
}

#[test]
fn a_full_disk_stops_the_run_and_resume_finishes_it() {
    if !is_root() || std::process::Command::new("unshare").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and unshare to mount a small private tmpfs");
        return;
    }
    let dir = Scratch::new("lab-full");
    // 150 trials: about 50 fill the room the filler leaves (10 KiB each in the WAL), so
    // the first run stops a third of the way, and the resume stores the rest.
    let suite = dir.write("many.toml", "[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 10\nrepeat = 150\n");
    let mnt = dir.path("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let bin = binary_path().display().to_string();
    let m = mnt.display().to_string();
    // In a private mount namespace (gone when the shell exits): a 16 MiB tmpfs, the
    // database on it, a filler that leaves little room, a run, then room and a resume.
    let script = format!(
        "set -u; mount -t tmpfs -o size=16m tmpfs {m} || exit 99
         {bin} run {suite} --db {m}/r.db --dry-run >/dev/null
         {bin} list --db {m}/r.db >/dev/null 2>&1
         head -c 15800k /dev/zero > {m}/filler 2>/dev/null
         {bin} run {suite} --db {m}/r.db > /dev/null 2> {m}/err1; echo \"first=$?\"
         grep -o 'is full' {m}/err1 | head -1
         rm -f {m}/filler
         {bin} list --db {m}/r.db --json
         {bin} run --resume 1 --db {m}/r.db > /dev/null 2> {m}/err2; echo \"second=$?\"; cat {m}/err2 | grep -v warning | tail -2
         {bin} export 1 --db {m}/r.db | grep -c '\"seq\"'"
    );
    let out = std::process::Command::new("unshare").args(["-m", "sh", "-c", &script]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(99) {
        eprintln!("skipped: cannot mount tmpfs here");
        return;
    }
    assert!(text.contains("first=2") && text.contains("is full"), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("\"status\":\"finished\""), "{text}");
    assert!(text.contains("second=0"), "{text}");
    assert_eq!(text.lines().last().unwrap().trim(), "150", "{text}");
}

#[test]
fn the_machine_fingerprint_has_its_fields() {
    let m: Value = serde_json::from_str(&stdout_of(&["machine", "--json"])).unwrap();
    for key in [
        "hostname",
        "kernel_release",
        "kernel_version",
        "preemption_model",
        "cpu_model",
        "cpus_online",
        "cpus_allowed",
        "smt",
        "cpufreq_governor",
        "cpuidle_driver",
        "sched_rt_runtime_us",
        "sched_rt_period_us",
        "cpus_isolated",
        "cpus_nohz_full",
        "kernel_cmdline",
        "mitigations_summary",
        "hypervisor_flag",
        "load_average",
        "schedlab_version",
    ] {
        assert!(m.get(key).is_some(), "missing {key}: {m}");
    }
    for known in ["hostname", "kernel_release", "cpus_online", "cpus_allowed", "sched_rt_runtime_us", "load_average"] {
        assert!(!m[known].is_null(), "{known} is unknown on this machine: {m}");
    }
    let text = stdout_of(&["machine"]);
    assert!(text.contains("kernel_release") && text.contains("preemption_model"), "{text}");
}

#[test]
fn unprivileged_users_are_told_why_and_can_read_results() {
    let dir = Scratch::new("lab-nobody");
    let suite =
        dir.write("rt.toml", "[[experiment]]\nfamily = \"latency\"\nloops = 10\npolicy = [\"other\", \"fifo\"]\n");
    let db = dir.path("mine.db");
    let db_text = db.display().to_string();
    let Some(out) = as_nobody(&[], &["run", &suite, "--db", "/tmp/schedlab-nobody-never.db"]) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("SCHED_FIFO") && err.contains("never falls back"), "{err}");
    assert!(!Path::new("/tmp/schedlab-nobody-never.db").exists(), "nothing was stored");
    // Root's results, in a directory nobody cannot write, can still be read.
    ok_stdout(&db, &["run", &dir.write("ok.toml", TINY)]);
    let out = as_nobody(&[], &["list", "--db", &db_text]).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("tiny"));
    let out = as_nobody(&[], &["delete", "1", "--db", &db_text]).unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(runs(&db).len(), 1);
}

#[test]
fn a_run_from_another_machine_is_not_resumed_here() {
    let dir = Scratch::new("lab-other-host");
    let suite = dir.write("one.toml", "[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 10\nrepeat = 3\n");
    let db = dir.path("here.db");
    ok_stdout(&db, &["run", &suite]);
    // The same run as a shared database holds it when another machine stopped half-way.
    let mut doc = export_json(&db, "1");
    let run = &mut doc["runs"][0];
    run["uuid"] = "00000000-0000-4000-8000-000000000001".into();
    run["status"] = "interrupted".into();
    run["machine"]["hostname"] = "lab-box-elsewhere".into();
    run["trials"].as_array_mut().unwrap().truncate(1);
    let file = dir.write("elsewhere.json", &doc.to_string());
    ok_stdout(&db, &["import", &file]);
    let db_text = db.display().to_string();
    refused(&["run", "--resume", "2", "--db", &db_text], "was started on lab-box-elsewhere");
    assert_eq!(stored_seqs(&db, "2"), [0]);
}

/// Every run probes the machine's noise before its first trial (unless told not to) and
/// keeps the floor with its fingerprint; every trial keeps its CPUs' steal.
#[test]
fn a_run_probes_its_noise_floor_first_and_keeps_it() {
    let dir = Scratch::new("lab-noise-floor");
    let cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    let suite = dir.write(
        "floor.toml",
        &format!("name = \"floor\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\nlaps = 200\ncpus = \"{cpu}\"\npin = \"same\"\n"),
    );
    let db = dir.path("floor.db");
    let out = schedlab_in(&db, &["run", &suite, "--noise-probe", "on"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // Announced, measured and printed before the run's first trial.
    let floor_at = err.find("schedlab: noise floor: ").expect("the floor in the header");
    assert!(floor_at < err.find("schedlab: run 1:").unwrap(), "{err}");
    assert!(err.contains(&format!("probing this machine's noise on CPU {cpu}")), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("noise floor (probed before the trials): "));

    let export = export_json(&db, "1");
    let run = &export["runs"][0];
    let floor = &run["machine"]["noise_floor"];
    assert_eq!(floor["wakeup_cpus"], cpu.to_string(), "the trials' CPU: {floor}");
    assert_eq!(floor["ring_cpu"], cpu, "{floor}");
    for key in ["wakeup_p99_us", "ring_ns_per_hop", "cpu_share_pct"] {
        let repeats = floor[key].as_array().unwrap();
        assert_eq!(repeats.len(), 3, "{key}: {floor}");
        assert!(repeats.iter().all(|v| v.as_f64().unwrap() > 0.0), "{key}: {floor}");
    }
    let online = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("cpu") && !l.starts_with("cpu "))
        .count();
    assert_eq!(floor["steal_ms_per_s"].as_object().unwrap().len(), online, "{floor}");
    assert!(floor["probe_s"].as_f64().unwrap() > 1.0, "{floor}");
    // Each trial's steal, per CPU, over its own window.
    for trial in run["trials"].as_array().unwrap() {
        let steal = &trial["outcome"]["steal"];
        assert_eq!(steal["cpus"].as_array().unwrap().len(), online, "{trial}");
        assert!(steal["window_ns"].as_u64().unwrap() > 0 && steal["resolution_ns"].as_u64().unwrap() > 0, "{steal}");
    }
    let report: Value = serde_json::from_str(&ok_stdout(&db, &["report", "1", "--format", "json"])).unwrap();
    assert_eq!(report["run"]["noise_floor"], *floor);

    // Off: no probe, no floor; compare says a floor is missing rather than guess.
    let out = schedlab_in(&db, &["run", &suite, "--noise-probe", "off"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("noise floor"));
    assert!(export_json(&db, "2")["runs"][0]["machine"].get("noise_floor").is_none());
    let compared = String::from_utf8(schedlab_in(&db, &["compare", "1", "2"]).stdout).unwrap();
    assert!(
        compared.contains("run 2: no noise floor recorded") && compared.contains("cannot be set beside"),
        "{compared}"
    );
    refused(&["run", &suite, "--noise-probe", "maybe", "--db", &db.display().to_string()], "--noise-probe");
}
