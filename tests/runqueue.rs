//! Run-queue wait and migrations per task (`/proc/<tid>/schedstat`, `se.nr_migrations`)
//! on the real binary and this machine's kernel: the keys of every family, what a pinned
//! task and a FIFO queue must show, `--schedstat off`, and the figures' way through the
//! store, the tables, the exports and compare.

mod common;

use common::*;
use serde_json::Value;

fn json_of(args: &[&str]) -> Vec<Value> {
    let mut argv = args.to_vec();
    argv.push("--json");
    json_lines(stdout_of(&argv).as_bytes())
}

fn num(line: &Value, key: &str) -> f64 {
    line[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {line}"))
}

/// CPUs this process may use: the children of a workload trial share them.
fn allowed_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn a_pinned_latency_thread_never_migrates_and_waits_less_than_the_run() {
    let lines = json_of(&["latency", "--cpus", "0", "--interval", "1ms", "--loops", "300"]);
    let l = &lines[0];
    assert_eq!(l["cpu"], 0, "{l}");
    assert_eq!(l["migrations"], 0, "a thread pinned before its window cannot move: {l}");
    let waited_ns = num(l, "run_delay_ns");
    // 300 periods of 1 ms, plus the overruns' lost periods at most: the run's length.
    let run_ns = 300.0 * 1e6;
    assert!((0.0..=run_ns).contains(&waited_ns), "waited {waited_ns} ns in a {run_ns} ns run: {l}");
}

#[test]
fn every_latency_thread_reports_and_the_all_line_sums_them() {
    let threads = allowed_cpus().min(2).to_string();
    let lines = json_of(&["latency", "--threads", &threads, "--interval", "1ms", "--loops", "100"]);
    for l in &lines {
        assert_eq!(l["migrations"], 0, "pinned: {l}");
        assert!(num(l, "run_delay_ns") >= 0.0, "{l}");
    }
    if lines.len() > 1 {
        let all = lines.last().unwrap();
        let sum: f64 = lines[..lines.len() - 1].iter().map(|l| num(l, "run_delay_ns")).sum();
        assert_eq!(num(all, "run_delay_ns"), sum, "{all}");
    }
}

#[test]
fn ring_lines_carry_the_wait_per_hop_and_pinned_members_do_not_migrate() {
    let lines = json_of(&["ring", "--procs", "2,3", "--laps", "500", "--pin", "same"]);
    for l in &lines {
        assert_eq!(l["migrations"], 0, "all members pinned to one CPU: {l}");
        assert!(num(l, "run_delay_ns_per_hop") > 0.0, "{l}");
    }
    // Unpinned and in thread mode the figures are there too.
    let unpinned = json_of(&["ring", "--procs", "2", "--laps", "300", "--pin", "none", "--mode", "thread"]);
    assert!(num(&unpinned[0], "run_delay_ns_per_hop") >= 0.0 && num(&unpinned[0], "migrations") >= 0.0);
}

#[test]
fn a_stored_ring_waits_only_inside_its_members_windows() {
    let dir = Scratch::new("runqueue-window");
    let suite = dir.write(
        "ring.toml",
        "name = \"w\"\n[[experiment]]\nfamily = \"ring\"\nprocs = [2, 3]\nlaps = 500\npin = [\"same\", \"none\"]\n",
    );
    let db = dir.path("results.db");
    ok_stdout(&db, &["run", &suite]);
    let trials = export_json(&db, "1")["runs"][0]["trials"].as_array().unwrap().clone();
    assert_eq!(trials.len(), 4, "one trial per cell");
    for t in &trials {
        let outcome = &t["outcome"];
        let (waited, windows) = (num(outcome, "run_delay_ns"), num(outcome, "sched_window_ns"));
        // A task waits on a run queue only while time passes: the wait summed over the
        // members is at most their reading windows summed.
        assert!(windows > 0.0 && waited <= windows, "waited {waited} ns in windows of {windows} ns: {outcome}");
    }
}

#[test]
fn schedstat_off_stores_unknown_never_zero() {
    let ring = json_of(&["ring", "--procs", "2", "--laps", "200", "--schedstat", "off"]);
    assert!(ring[0]["run_delay_ns_per_hop"].is_null() && ring[0]["migrations"].is_null(), "{}", ring[0]);
    let table = stdout_of(&["ring", "--procs", "2", "--laps", "200", "--schedstat", "off"]);
    let row = table.lines().find(|l| l.trim_start().starts_with('2')).unwrap();
    assert!(row.split_whitespace().rev().take(2).all(|c| c == "-"), "unknown is shown as -: {row}");
    let latency = json_of(&["latency", "--loops", "20", "--interval", "1ms", "--schedstat", "off"]);
    assert!(latency[0]["run_delay_ns"].is_null() && latency[0]["migrations"].is_null(), "{}", latency[0]);
    let workload = json_of(&["workload", "cpu", "--procs", "2", "--iterations", "10000", "--schedstat", "off"]);
    for key in ["run_delay_s", "run_delay_max_s", "run_delay_p50_s", "migrations"] {
        assert!(workload[0][key].is_null(), "{key}: {}", workload[0]);
    }
    schedlab()
        .args(["ring", "--procs", "2", "--schedstat", "maybe"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--schedstat"));
}

/// Plausibility of one workload line: the waits are ordered, none exceeds the wall time
/// (a child's window runs from just before the gate to just before its finish stamp).
fn check_waits(l: &Value) {
    let (wall, sum, max, p50, min) = (
        num(l, "wall_s"),
        num(l, "run_delay_s"),
        num(l, "run_delay_max_s"),
        num(l, "run_delay_p50_s"),
        num(l, "run_delay_min_s"),
    );
    let tolerance = 0.01 + 0.01 * wall;
    assert!(0.0 <= min && min <= p50 && p50 <= max, "{l}");
    assert!(max <= wall + tolerance, "a child waited {max} s in a {wall} s trial: {l}");
    assert!(sum >= max && sum <= num(l, "procs") * (wall + tolerance), "{l}");
    assert!(num(l, "migrations") >= 0.0, "{l}");
}

#[test]
fn fifo_queues_cpu_bound_children_while_other_spreads_the_wait() {
    if !is_root() {
        eprintln!("not root: SCHED_FIFO skipped");
        return;
    }
    // Four CPU-bound children per CPU: FIFO runs them one batch per CPU at a time, so the
    // first batch never waits and the last waits three quarters of the wall time; OTHER
    // shares every CPU among them all, so children wait about alike and more in all. Other work on a
    // noisy machine lengthens OTHER's waits (it shares with that work too) but not the
    // shape, which is what is checked: absolute waits are the machine's.
    let procs = (4 * allowed_cpus()).to_string();
    let args = [
        "workload",
        "cpu",
        "--procs",
        &procs,
        "--policy",
        "other,fifo",
        "--iterations",
        "20000000",
        "--allow-rt-saturation",
    ];
    let lines = json_of(&args);
    let (other, fifo) = (&lines[0], &lines[1]);
    assert_eq!((other["policy"].as_str(), fifo["policy"].as_str()), (Some("other"), Some("fifo")));
    check_waits(other);
    check_waits(fifo);
    let f = |l: &Value, k: &str| num(l, k);
    // FIFO: some children ran at once, some waited most of the wall before they ran.
    assert!(f(fifo, "run_delay_min_s") < 0.1 * f(fifo, "wall_s"), "{fifo}");
    assert!(f(fifo, "run_delay_max_s") > 0.5 * f(fifo, "wall_s"), "{fifo}");
    // OTHER shares the CPUs: its children wait more in all than FIFO's. For equal jobs,
    // running each to its end (FIFO) gives the least total wait there is; sharing a CPU
    // among four gives about 1.6 times it. (Not every OTHER child need wait: once, quiet,
    // one ran alone on a CPU to its end while its siblings crowded the other.)
    assert!(f(other, "run_delay_s") > f(fifo, "run_delay_s"), "fifo {fifo}\nother {other}");
    // FIFO's longest-waiting child stands further above its median child than OTHER's.
    let starvation = |l: &Value| f(l, "run_delay_max_s") / f(l, "run_delay_p50_s");
    assert!(starvation(fifo) >= starvation(other), "fifo {fifo}\nother {other}");

    // The table carries the starvation line. Which cell it names is that run's own (it is
    // measured again): once, quiet, OTHER left one of its 8 children on a CPU alone to its
    // end and its waits spread as wide as FIFO's. The choice is
    // `the_starvation_line_names_the_cell_with_the_widest_spread_of_waits`'s.
    let mut table_args = args.to_vec();
    table_args.retain(|a| *a != "--json");
    let table = stdout_of(&table_args);
    let line = table.lines().find(|l| l.starts_with("starvation:")).unwrap_or_else(|| panic!("{table}"));
    let named = ["SCHED_FIFO", "SCHED_OTHER"].map(|p| format!("starvation: {p} x {procs} left one child waiting"));
    assert!(named.iter().any(|n| line.starts_with(n)), "{table}");
    assert!(table.contains("RQ wait s") && table.contains("RQ max s") && table.contains("Migr"), "{table}");
}

const SUITE: &str = r#"
name = "rq"
[[experiment]]
family = "workload"
workload = "cpu"
procs = 3
iterations = 2000000
policy = ["other", "batch"]

[[experiment]]
family = "ring"
procs = 2
laps = 200

[[experiment]]
family = "latency"
interval = "1ms"
loops = 30
threads = 1
"#;

#[test]
fn the_figures_are_stored_reported_exported_and_compared() {
    let dir = Scratch::new("runqueue");
    let suite = dir.write("rq.toml", SUITE);
    let db = dir.path("results.db");
    let tables = ok_stdout(&db, &["run", &suite]);
    assert!(tables.contains("RQ wait s") && tables.contains("RQ ns/hop") && tables.contains("RQ wait µs"), "{tables}");
    assert!(tables.contains("starvation: policy="), "{tables}");
    let doc = export_json(&db, "1");
    for t in doc["runs"][0]["trials"].as_array().unwrap() {
        let (figures, outcome) = (&t["figures"], &t["outcome"]);
        match t["family"].as_str().unwrap() {
            "workload" => {
                check_waits(figures);
                assert!(outcome["run_delay_max_ns"].is_u64(), "integer ns in the outcome: {outcome}");
            }
            "ring" => assert!(figures["run_delay_ns_per_hop"].is_number() && outcome["run_delay_ns"].is_u64()),
            _ => assert!(figures["run_delay_ns"].is_u64() && figures["migrations"].is_u64(), "{figures}"),
        }
    }
    let csv = ok_stdout(&db, &["export", "1", "--format", "csv"]);
    let header = csv.lines().next().unwrap();
    for key in ["run_delay_s", "run_delay_max_s", "run_delay_p50_s", "migrations", "run_delay_ns_per_hop"] {
        assert!(header.split(',').any(|h| h == key), "{key} missing from {header}");
    }
    let html = dir.path("run.html");
    ok_stdout(&db, &["report", "1", "--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("RQ max s") && page.contains("starvation:"), "the HTML page has the columns and line");
    // A second run compares figure by figure, the run-queue wait among them.
    ok_stdout(&db, &["run", &suite]);
    let compared = ok_stdout(&db, &["compare", "1", "2", "--format", "json"]);
    for figure in ["run_delay_max_s", "run_delay_ns_per_hop", "run_delay_ns"] {
        assert!(compared.contains(&format!("\"{figure}\"")), "{figure} not compared: {compared}");
    }
}
