//! The `taskset` family: a described task set under each policy, its activations' figures,
//! suites, and bad task sets refused before anything runs.

mod common;

use common::*;
use schedlab::sys::clock::{burn, monotonic_ns, sleep_until, thread_cpu_ns, BURN_CHUNK_NS};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const TWO_TASKS: [&str; 4] = [
    "--task",
    r#"name = "fast", period = "2ms", run = "100us""#,
    "--task",
    r#"name = "slow", period = "10ms", events = [{ lock = "m" }, { run = "300us" }, { unlock = "m" }, { sleep = "100us" }]"#,
];

/// One event of an activation, as the bare activations below do it in this process.
#[derive(Clone, Copy)]
enum Event {
    Lock,
    Run(u64),
    Unlock,
    Sleep(u64),
}

/// What its run events ask: the CPU time an activation of `events` burns at least.
fn asked_ns(events: &[Event]) -> u64 {
    events.iter().map(|e| if let Event::Run(ns) = e { *ns } else { 0 }).sum()
}

/// The most an activation of `events` may take beside bare ones that took `bare`
/// (least, most): a burn overshoots by less than a chunk, but each process sizes its
/// chunk by its own one measurement of the spin's speed, so a run event of the task
/// set's process may overshoot by a chunk more than one of this process; and what the
/// machine charges a thread (interrupts, switches) varies as much beside the bare ones as
/// among them, so their own spread is allowed once more.
fn most_beside(events: &[Event], (least, most): (f64, f64)) -> f64 {
    let runs = events.iter().filter(|e| matches!(e, Event::Run(_))).count() as u64;
    most + (most - least) + (runs * BURN_CHUNK_NS) as f64
}

/// Activations of `events` done bare in a thread of this process, beside a task set and
/// at its task's period, until stopped: each timed on the thread's own CPU clock as a
/// taskset thread times its activations (a run event is the same `burn`). Besides what
/// the events ask, that clock counts what the machine charges the thread: the lock,
/// sleep and clock reads, the interrupts taken and the switches out while it runs.
struct BareActivations {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u64>>,
}

impl BareActivations {
    fn start(events: Vec<Event>, period: Duration) -> BareActivations {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let lock = std::sync::Mutex::new(());
            burn(0);
            let mut took = Vec::new();
            let mut next = monotonic_ns();
            while !stopped.load(Ordering::Relaxed) {
                next += period.as_nanos() as u64;
                sleep_until(next);
                let cpu0 = thread_cpu_ns();
                let mut held = None;
                for event in &events {
                    match *event {
                        Event::Lock => held = Some(lock.lock().unwrap()),
                        Event::Run(ns) => burn(ns),
                        Event::Unlock => held = None,
                        Event::Sleep(ns) => std::thread::sleep(Duration::from_nanos(ns)),
                    }
                }
                drop(held);
                took.push(thread_cpu_ns() - cpu0);
            }
            took
        });
        BareActivations { stop, thread }
    }

    /// The smallest and the largest activation: what one may take here beside the task set.
    fn stop(self) -> (f64, f64) {
        self.stop.store(true, Ordering::Relaxed);
        let took = self.thread.join().unwrap();
        assert!(!took.is_empty(), "no bare activation ran");
        (*took.iter().min().unwrap() as f64, *took.iter().max().unwrap() as f64)
    }
}

/// Each task's CPU time per activation from an `--activations` CSV (`run_us`, in ns): the
/// median and the least, per task name (and per policy and block, as the rows say).
fn runs_by_task(csv: &std::path::Path) -> std::collections::BTreeMap<String, (f64, f64)> {
    let mut reader = csv::Reader::from_path(csv).unwrap();
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no {name}: {header:?}"));
    let (task, run) = (column("task"), column("run_us"));
    let mut runs: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
    for row in reader.records() {
        let row = row.unwrap();
        runs.entry(row[task].to_string()).or_default().push(row[run].parse::<f64>().unwrap() * 1000.0);
    }
    runs.into_iter()
        .map(|(name, mut ns)| {
            ns.sort_by(f64::total_cmp);
            (name, (ns[ns.len() / 2], ns[0]))
        })
        .collect()
}

/// `schedlab <args> <tasks>`, which must succeed within a minute: its JSON lines.
fn taskset_lines(args: &[&str], tasks: &[&str]) -> Vec<serde_json::Value> {
    let out =
        schedlab().args(args).args(tasks).timeout(Duration::from_secs(60)).assert().success().get_output().clone();
    json_lines(&out.stdout)
}

#[test]
fn each_activation_is_counted_and_the_lines_carry_every_task() {
    let slow = vec![Event::Lock, Event::Run(300_000), Event::Unlock, Event::Sleep(100_000)];
    let bare = BareActivations::start(slow.clone(), Duration::from_millis(10));
    let dir = Scratch::new("taskset-counted");
    let csv = dir.0.join("acts.csv");
    let args = ["taskset", "--duration", "400ms", "--repeat", "2", "--json", "--activations", csv.to_str().unwrap()];
    let lines = taskset_lines(&args, &TWO_TASKS);
    let most = most_beside(&slow, bare.stop());
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert_eq!((l["family"].as_str(), l["status"].as_str()), (Some("taskset"), Some("ok")), "{l}");
        // An ideal schedule over 400 ms: 200 activations of the 2 ms task, 40 of the 10 ms one.
        assert_eq!(l["activations"], 240, "{l}");
        let tasks = l["per_task"].as_array().unwrap();
        assert_eq!((tasks[0]["activations"].as_u64(), tasks[1]["activations"].as_u64()), (Some(200), Some(40)));
        // Each run event is measured on the thread's own CPU clock: it gets at least what
        // it asked.
        assert!(tasks[1]["run_mean_ns"].as_f64().unwrap() >= 300_000.0, "{l}");
        assert!(l["deadline_use_p99_pct"].as_f64().unwrap() > 0.0, "{l}");
        let misses = l["misses"].as_u64().unwrap();
        assert!((l["miss_pct"].as_f64().unwrap() - misses as f64 / 2.4).abs() < 1e-9, "{l}");
    }
    // And the median activation no more than the same events took done bare beside it,
    // give or take a burn chunk. The median, not the mean: a host that stops the CPU
    // inside a burn without reporting steal charges the stall to the thread's clock (once
    // here 4 ms in one activation of 20), beside the set or beside the bare ones alike.
    let (median, least) = runs_by_task(&csv)["slow"];
    assert!(least >= 300_000.0 - 1000.0 && median <= most, "slow: median {median} ns, at most {most} beside bare ones");
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
    refused(
        &["taskset", "--policy", "fifo", "--reclaim", "--task", r#"name = "a", period = "1ms", run = "1us""#],
        "--reclaim is SCHED_DEADLINE's",
    );
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
    refused(
        &["taskset", "--policy", "deadline", "--task", r#"name = "a", period = "1ms", run = "700us", count = 8"#],
        "a: 975 µs per 1 ms by default (run 700 µs + a quarter + 100 µs floor); the runs themselves do not fit",
    );
    // The default reservations (475 µs each) ask for 285 %; smaller runtimes, still over
    // the run, would fit (313 µs on 2 CPUs): the error says which.
    refused(
        &["taskset", "--policy", "deadline", "--task", r#"name = "a", period = "1ms", run = "300us", count = 6"#],
        "us\"` would fit",
    );
}

#[test]
fn a_short_period_deadline_set_is_admitted_with_its_default_reservations() {
    if !is_root() {
        eprintln!("skipped: SCHED_DEADLINE needs root");
        return;
    }
    // 3 × 50 µs every 250 µs: 60 % of a CPU. The floor is a tenth of the period here
    // (25 µs), so the reservations ask for 3 × 87.5 µs / 250 µs = 105 %, not 195 %.
    let lines = taskset_lines(
        &["taskset", "--policy", "deadline", "--duration", "200ms", "--json"],
        &["--task", r#"name = "a", period = "250us", run = "50us", count = 3"#],
    );
    assert_eq!(lines[0]["status"], "ok", "{}", lines[0]);
    assert_eq!(lines[0]["activations"], 2400, "{}", lines[0]);
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
fn an_rt_app_files_lock_pages_it_may_not_have_is_refused_before_anything_runs() {
    use std::os::unix::fs::PermissionsExt;
    let file = std::env::temp_dir().join(format!("schedlab-lock-pages-{}.json", std::process::id()));
    std::fs::write(&file, r#"{"tasks": {"a": {"run": 100, "sleep": 900}}, "global": {"lock_pages": true}}"#).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = as_nobody(&["--memlock=4096"], &["taskset", "--rt-app", file.to_str().unwrap(), "--duration", "1s"]);
    std::fs::remove_file(&file).unwrap();
    let Some(out) = out else { return };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("lock_pages: mlockall refused") && stderr.contains("CAP_IPC_LOCK"), "{stderr}");
}

/// A thread the process limit does not allow: the ones already started are let go (not
/// left waiting at the start for ever), and the error names the limit.
#[test]
fn a_thread_the_process_limit_refuses_ends_the_trial_naming_the_limit() {
    let task = r#"name = "many", period = "10ms", count = 40, run = "50us""#;
    let started = std::time::Instant::now();
    let Some(out) = as_nobody(&["--nproc=20"], &["taskset", "--duration", "1s", "--task", task]) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("starting task thread") && err.contains("ulimit -u"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30), "it ended at once: {:?}", started.elapsed());
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
    let small = vec![Event::Run(1_000_000)];
    let big = vec![Event::Lock, Event::Run(2_000_000), Event::Unlock, Event::Sleep(500_000), Event::Run(1_000_000)];
    let bare = [
        BareActivations::start(small.clone(), Duration::from_millis(10)),
        BareActivations::start(big.clone(), Duration::from_millis(20)),
    ];
    let csv = dir.0.join("acts.csv");
    let args = ["taskset", "--duration", "400ms", "--json", "--rt-app", file.to_str().unwrap()];
    let lines = taskset_lines(&[&args[..], &["--activations", csv.to_str().unwrap()]].concat(), &[]);
    let bare = bare.map(BareActivations::stop);
    let runs = runs_by_task(&csv);
    let asked = [asked_ns(&small), asked_ns(&big)];
    let most = [most_beside(&small, bare[0]), most_beside(&big, bare[1])];
    let tasks = lines[0]["per_task"].as_array().unwrap();
    // In the file's order; each activation's CPU time is at least what its run events ask
    // (the CSV rounds to the µs), and the median one no more than the same events took
    // done bare beside it, give or take a burn chunk (the sleep, lock and timer cost a
    // little beside them). The median: a stall the host does not report as steal is
    // charged to the clock of whichever thread it stops (once 4 ms in one of big's 20).
    for (i, name) in ["small", "big"].into_iter().enumerate() {
        let task = &tasks[i];
        assert_eq!(task["name"], name);
        assert!(task["run_mean_ns"].as_f64().unwrap() >= asked[i] as f64, "{task}");
        let (median, least) = runs[name];
        assert!(
            least >= asked[i] as f64 - 1000.0 && median <= most[i],
            "{name}: median {median} ns, least {least}, {} asked, at most {} beside bare ones: {task}",
            asked[i],
            most[i]
        );
    }
    assert_eq!((tasks[0]["activations"].as_u64(), tasks[1]["activations"].as_u64()), (Some(40), Some(20)));
}

#[test]
fn what_rt_app_does_that_schedlab_does_not_is_refused_by_name() {
    let dir = Scratch::new("taskset-rt-app-bad");
    let file = dir.0.join("bad.json");
    let cases = [
        (
            r#"{"tasks": {"a": {"run": 100, "mem": 1000, "timer": {"ref": "t", "period": 1000}}}}"#,
            "'mem' is not supported",
        ),
        (r#"{"tasks": {"a": {"run": 100, "wait": {"ref": "q", "mutex": "m"}}}}"#, "without holding mutex 'm'"),
        (r#"{"tasks": {"a": {"phases": {"p": {"priority": 5, "run": 100}}}}}"#, "'priority' in a phase"),
        (
            r#"{"tasks": {"a": {"cpus": "0", "run": 100, "timer": {"ref": "t", "period": 1000}}}}"#,
            "cpus is a list of CPU numbers",
        ),
        (r#"{"tasks": {"a": {"lock": "m", "unlock": "m"}}}"#, "without a timer or a run, sleep or wait"),
        (r#"{"tasks": {"a": {"run": "1ms", "timer": {"ref": "t", "period": 1000}}}}"#, "whole number of µs"),
    ];
    for (text, needle) in cases {
        std::fs::write(&file, text).unwrap();
        refused(&["taskset", "--rt-app", file.to_str().unwrap()], needle);
    }
}

/// rt-app's phases, a timer two tasks share and a run/sleep loop without a timer.
const RT_APP_PHASES: &str = r#"{
  "tasks": {
    "ramp": { "phases": {
      "light": { "loop": 5, "run": 500, "timer": { "ref": "unique", "period": 10000 } },
      "heavy": { "loop": 5, "run": 2000, "timer": { "ref": "unique", "period": 10000 } } } },
    "left": { "run": 500, "timer": { "ref": "shared", "period": 10000 } },
    "right": { "run": 500, "timer": { "ref": "shared", "period": 10000 } },
    "loose": { "run": 1000, "sleep": 4000 }
  }
}"#;

#[test]
fn rt_app_phases_shared_timers_and_timerless_loops_run_as_written() {
    let dir = Scratch::new("taskset-rt-app-phases");
    let file = dir.0.join("set.json");
    std::fs::write(&file, RT_APP_PHASES).unwrap();
    let csv = dir.0.join("acts.csv");
    let args = ["taskset", "--policy", "other", "--duration", "400ms", "--json", "--rt-app", file.to_str().unwrap()];
    let lines = taskset_lines(&[&args[..], &["--activations", csv.to_str().unwrap()]].concat(), &[]);
    let tasks = lines[0]["per_task"].as_array().unwrap();
    let by_name = |name: &str| tasks.iter().find(|t| t["name"] == name).unwrap();
    // The ramp's own timer keeps its ticks across its phases: one activation every 10 ms
    // of the 400 ms, whichever phase it is in.
    assert_eq!(by_name("ramp")["activations"].as_u64(), Some(40), "{}", by_name("ramp"));
    // Two tasks on one timer share its ticks: each use moves it on by a period.
    let shared = ["left", "right"].map(|n| by_name(n)["activations"].as_u64().unwrap());
    assert_eq!(shared[0] + shared[1], 40, "{shared:?}");
    // The loop without a timer runs back to back: activations, none with a wakeup,
    // slack or miss (counted apart as untimed).
    let loose = by_name("loose");
    let n = loose["activations"].as_u64().unwrap();
    assert!(n > 0 && loose["untimed"].as_u64() == Some(n), "{loose}");
    assert!(loose["wake_p99_ns"].is_null() && loose["slack_min_ns"].is_null() && loose["misses"] == 0, "{loose}");
    let sum: u64 = tasks.iter().map(|t| t["activations"].as_u64().unwrap()).sum();
    assert_eq!(lines[0]["activations"].as_u64(), Some(sum), "{}", lines[0]);
    // Each phase runs its own events: the ramp's light activations (5 of each 10) asked
    // for 0.5 ms of CPU, its heavy ones 2 ms; the CSV's untimed rows have empty wakeups.
    // (The set asks for under half a CPU: tests beside it keep theirs.)
    let text = std::fs::read_to_string(&csv).unwrap();
    let (mut light, mut heavy, mut untimed_rows) = (Vec::new(), Vec::new(), 0);
    for row in text.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let (task, index, wake, run_us) = (f[2], f[4].parse::<u64>().unwrap(), f[7], f[10].parse::<f64>().unwrap());
        match task {
            "ramp" if index % 10 < 5 => light.push(run_us),
            "ramp" => heavy.push(run_us),
            "loose" => untimed_rows += usize::from(wake.is_empty()),
            _ => {}
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    assert_eq!((light.len(), heavy.len(), untimed_rows as u64), (20, 20, n));
    assert!(heavy.iter().all(|&us| us >= 1999.0) && median(&mut light) < median(&mut heavy), "{light:?} {heavy:?}");
}

/// rt-app's barrier and condition variables: threads that pace one another.
const RT_APP_SYNC: &str = r#"{
  "tasks": {
    "quick": { "run": 500, "barrier": "step" },
    "slow": { "run": 3000, "sleep": 7000, "barrier": "step" },
    "producer": { "run": 200, "lock": "m", "signal": "queue", "unlock": "m",
                  "timer": { "ref": "unique", "period": 10000 } },
    "consumer": { "lock": "m", "wait": { "ref": "queue", "mutex": "m" }, "unlock": "m", "run": 300 }
  }
}"#;

#[test]
fn rt_app_barriers_and_condition_variables_pace_their_threads() {
    let dir = Scratch::new("taskset-rt-app-sync");
    let file = dir.0.join("set.json");
    std::fs::write(&file, RT_APP_SYNC).unwrap();
    let args = ["taskset", "--policy", "other", "--duration", "400ms", "--json", "--rt-app", file.to_str().unwrap()];
    let started = std::time::Instant::now();
    let lines = taskset_lines(&args, &[]);
    let tasks = lines[0]["per_task"].as_array().unwrap();
    let by_name = |name: &str| tasks.iter().find(|t| t["name"] == name).unwrap();
    let count = |name: &str| by_name(name)["activations"].as_u64().unwrap();
    // Through the barrier the two pass together: as many activations, and the quick one
    // waits out the slow one's 3 ms of CPU (and its sleep) in each.
    assert!(count("quick").abs_diff(count("slow")) <= 1 && count("slow") > 0, "{tasks:?}");
    assert!(by_name("quick")["response_p50_ns"].as_u64().unwrap() >= 2_500_000, "{}", by_name("quick"));
    // The consumer wakes only on a signal (one with no waiter is lost): at most one
    // activation per producer's.
    assert!((1..=count("producer")).contains(&count("consumer")), "{tasks:?}");
    // A thread still waiting when the set ends is let go then, not left behind.
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn sigterm_lets_a_thread_suspended_for_ever_go() {
    let dir = Scratch::new("taskset-rt-app-suspended");
    let file = dir.0.join("set.json");
    let set = r#"{"tasks": {"sleeper": {"suspend": "never", "run": 100},
        "ticker": {"run": 100, "timer": {"ref": "t", "period": 10000}}}}"#;
    std::fs::write(&file, set).unwrap();
    let child = std::process::Command::new(binary_path())
        .args(["taskset", "--policy", "other", "--duration", "60s", "--rt-app", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let running = wait_until(Duration::from_secs(20), || {
        children_of(pid)
            .into_iter()
            .find(|&c| is_trial_process(c))
            .is_some_and(|t| std::fs::read_dir(format!("/proc/{t}/task")).map_or(0, |d| d.count()) >= 3)
    });
    assert!(running, "the task set did not start");
    let trial = children_of(pid).into_iter().find(|&c| is_trial_process(c)).unwrap();
    let asked = std::time::Instant::now();
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    // Stopped at once, not at the end of its 60 s: the suspended thread was let go.
    assert!(!out.status.success() && asked.elapsed() < Duration::from_secs(15), "{out:?}");
    assert_none_running(&[pid, trial]);
}

#[test]
fn activations_in_rt_apps_log_format_are_one_file_a_thread_in_its_columns() {
    let dir = Scratch::new("taskset-rt-app-log");
    let file = dir.0.join("set.json");
    std::fs::write(&file, RT_APP_PHASES).unwrap();
    let logs = dir.0.join("logs");
    let args = ["taskset", "--policy", "other", "--duration", "400ms", "--json", "--rt-app", file.to_str().unwrap()];
    let extra = ["--activations", logs.to_str().unwrap(), "--activations-format", "rt-app"];
    let lines = taskset_lines(&[&args[..], &extra[..]].concat(), &[]);
    let tasks = lines[0]["per_task"].as_array().unwrap();
    for task in tasks {
        let name = task["name"].as_str().unwrap();
        let text = std::fs::read_to_string(logs.join(format!("other-b1-{name}-0.log"))).unwrap();
        let mut rows = text.lines();
        assert_eq!(rows.next(), Some("# Policy : SCHED_OTHER priority : 0"));
        assert!(rows.next().unwrap().starts_with("#idx     perf      run   period           start"));
        let rows: Vec<Vec<i64>> = rows.map(|r| r.split_whitespace().map(|f| f.parse().unwrap()).collect()).collect();
        // A row an activation, rt-app's eleven columns; each loop ends where the next begins.
        assert_eq!(rows.len() as u64, task["activations"].as_u64().unwrap(), "{name}");
        assert!(rows.iter().all(|r| r.len() == 11 && r[3] == r[5] - r[4]), "{name}: {text}");
        assert!(rows.windows(2).all(|w| w[0][5] == w[1][4]), "{name}: {text}");
        // c_period is the phase's timer (0 for the loop without one), c_duration its run.
        let (c_duration, c_period) = (rows[0][8], rows[0][9]);
        let expected = match name {
            "ramp" => (500, 10_000),
            "left" | "right" => (500, 10_000),
            _ => (1000, 0),
        };
        assert_eq!((c_duration, c_period), expected, "{name}");
    }
    assert!(!dir.0.join("logs.partial").exists());
    // A second run refuses to write over the directory.
    refused(&[&args[..], &extra[..]].concat(), "exists");
}

/// rt-app's per-task `cpus`: the task's threads run pinned there, the others where the set
/// runs. Read from /proc while the set runs (each thread is named after its task).
/// rt-app's phase `cpus`: the thread moves as its phases do.
#[test]
fn a_phases_own_cpus_move_its_thread_while_it_runs() {
    let allowed = schedlab::sys::sched::allowed_cpus().unwrap();
    let (first, last) = (allowed[0], *allowed.last().unwrap());
    if first == last {
        eprintln!("skipped: needs two CPUs");
        return;
    }
    let dir = Scratch::new("taskset-rt-app-phase-cpus");
    let file = dir.0.join("phases.json");
    let text = format!(
        r#"{{"tasks": {{"slmover": {{"phases": {{
            "here": {{"cpus": [{first}], "loop": 40, "run": 100, "timer": {{"ref": "unique", "period": 10000}}}},
            "there": {{"cpus": [{last}], "loop": 40, "run": 100, "timer": {{"ref": "unique", "period": 10000}}}}}}}}}}}}"#
    );
    std::fs::write(&file, text).unwrap();
    let mut child = std::process::Command::new(binary_path())
        .args(["taskset", "--policy", "other", "--duration", "3s", "--rt-app", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The thread's allowed CPUs, read every 20 ms while it runs (each phase lasts 400 ms).
    let mut seen = std::collections::BTreeSet::new();
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_millis(2500) {
        for task in
            std::fs::read_dir("/proc").unwrap().flatten().filter_map(|p| std::fs::read_dir(p.path().join("task")).ok())
        {
            for t in task.flatten() {
                if std::fs::read_to_string(t.path().join("comm")).unwrap_or_default().trim() == "slmover" {
                    let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
                    if let Some(line) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
                        seen.insert(line.split_whitespace().nth(1).unwrap_or("").to_string());
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
    // Where the gate holds it before its first activation it may still have the set's CPUs.
    assert!(seen.contains(&first.to_string()) && seen.contains(&last.to_string()), "{seen:?}");
}

#[test]
fn a_tasks_own_cpus_pin_its_threads() {
    let dir = Scratch::new("taskset-rt-app-cpus");
    let file = dir.0.join("pinned.json");
    let allowed = schedlab::sys::sched::allowed_cpus().unwrap();
    let last = *allowed.last().unwrap();
    let text = format!(
        r#"{{"tasks": {{"slpinned": {{"cpus": [{last}], "run": 100, "timer": {{"ref": "a", "period": 10000}}}},
                     "slfree": {{"run": 100, "timer": {{"ref": "b", "period": 10000}}}}}}}}"#
    );
    std::fs::write(&file, text).unwrap();
    let mut child = std::process::Command::new(binary_path())
        .args(["taskset", "--policy", "other", "--duration", "3s", "--json", "--rt-app", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Each task thread's allowed CPUs, once both are seen (at most 2.5 s).
    let allowed_of = |name: &str| -> Option<String> {
        for task in
            std::fs::read_dir("/proc").ok()?.flatten().filter_map(|p| std::fs::read_dir(p.path().join("task")).ok())
        {
            for t in task.flatten() {
                let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
                if comm.trim() == name {
                    let status = std::fs::read_to_string(t.path().join("status")).ok()?;
                    let line = status.lines().find(|l| l.starts_with("Cpus_allowed_list:"))?;
                    return Some(line.split_whitespace().nth(1)?.to_string());
                }
            }
        }
        None
    };
    let start = std::time::Instant::now();
    let mut seen = (None, None);
    while start.elapsed() < Duration::from_millis(2500) && (seen.0.is_none() || seen.1.is_none()) {
        seen = (seen.0.or_else(|| allowed_of("slpinned")), seen.1.or_else(|| allowed_of("slfree")));
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(seen.0, Some(last.to_string()), "the pinned task's threads run on its cpus only");
    let free = seen.1.expect("the other task's thread was seen");
    assert_eq!(free, format_list(&allowed), "the other task runs where the set does");
}

/// `0-1` or `0,2`: a CPU list as /proc writes it.
fn format_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// A thread of this test named `sl-interferer`, pinned to `cpu` at SCHED_FIFO 99, busy
/// 2 ms every 50 ms until dropped (then joined: nothing is left behind, also when an
/// assertion fails).
struct Interferer {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
    tid: i32,
    /// Each burst's start and end, CLOCK_MONOTONIC ns.
    bursts: std::sync::Arc<std::sync::Mutex<Vec<(u64, u64)>>>,
}

impl Interferer {
    fn start(cpu: usize) -> Interferer {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let bursts = std::sync::Arc::new(std::sync::Mutex::new(Vec::with_capacity(10_000)));
        let log = bursts.clone();
        let handle = std::thread::Builder::new()
            .name("sl-interferer".into())
            .spawn(move || {
                // SAFETY: plain system calls on this thread, with valid arguments.
                let set = unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    let pinned = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0;
                    let param = libc::sched_param { sched_priority: 99 };
                    pinned && libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0
                };
                // SAFETY: gettid cannot fail.
                tx.send((set, unsafe { libc::gettid() })).unwrap();
                if !set {
                    return;
                }
                let mut next = monotonic_ns() + 50_000_000;
                while !flag.load(Ordering::Relaxed) {
                    let ts =
                        libc::timespec { tv_sec: (next / 1_000_000_000) as _, tv_nsec: (next % 1_000_000_000) as _ };
                    // SAFETY: a valid timespec; an early return only shortens one pause.
                    unsafe {
                        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut())
                    };
                    let from = monotonic_ns();
                    while monotonic_ns() < from + 2_000_000 {
                        std::hint::spin_loop();
                    }
                    log.lock().unwrap().push((from, monotonic_ns()));
                    next += 50_000_000;
                }
            })
            .unwrap();
        let (set, tid) = rx.recv().unwrap();
        let interferer = Interferer { stop, handle: Some(handle), tid, bursts };
        assert!(set, "could not pin the interferer to CPU {cpu} at SCHED_FIFO 99");
        interferer
    }
}

impl Drop for Interferer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[test]
fn with_trace_on_each_miss_names_the_fifo_spinner_that_ran_instead() {
    if !is_root() {
        eprintln!("skipped: SCHED_FIFO and tracing need root");
        return;
    }
    let cpu = last_allowed_cpu().to_string();
    let interferer = Interferer::start(last_allowed_cpu());
    // A FIFO task (rate-monotonic 80) below the spinner on its CPU: each 2 ms burst makes
    // the 1 ms task's activations under it miss.
    let lines = taskset_lines(
        &["taskset", "--policy", "fifo", "--cpus", &cpu, "--duration", "3s", "--trace", "on", "--json"],
        &["--task", r#"name = "ctl", period = "1ms", run = "200us""#],
    );
    let tid = interferer.tid;
    let bursts = interferer.bursts.clone();
    drop(interferer);
    let bursts = bursts.lock().unwrap().clone();
    let l = &lines[0];
    let trace = &l["miss_trace"];
    assert!(trace["unavailable"].is_null(), "{trace}");
    let misses = l["misses"].as_u64().unwrap();
    let each = trace["each"].as_array().unwrap();
    assert_eq!(each.len() as u64, misses.min(2000), "every miss is split: {trace}");
    // The misses the spinner made: those whose window (activation to completion) overlaps
    // one of its bursts. On this shared machine others make misses too (a build's task
    // holding the CPU in the kernel, another engineer's FIFO work): they are not its, and
    // it must not be blamed for them.
    let overlaps = |m: &serde_json::Value| {
        let from = m["at_ns"].as_u64().unwrap();
        let to = from + m["response_ns"].as_u64().unwrap();
        bursts.iter().any(|&(b0, b1)| b0 < to && from < b1)
    };
    let names_it =
        |m: &serde_json::Value| {
            m["culprits"].as_array().unwrap().iter().any(|c| {
                c["source"]["comm"] == "sl-interferer" && c["source"]["pid"] == tid && c["ns"].as_u64() > Some(0)
            })
        };
    let its: Vec<&serde_json::Value> = each.iter().filter(|m| overlaps(m)).collect();
    // About 60 bursts in 3 s, each over two activations or more.
    assert!(its.len() >= 30, "the spinner made only {} misses: {l}", its.len());
    let named = its.iter().filter(|m| names_it(m)).count();
    eprintln!("the spinner is named in {named} of its {} misses ({} misses in all)", its.len(), each.len());
    assert!(named * 10 >= its.len() * 9, "the spinner is named in {named} of its {} misses: {trace}", its.len());
    let wrongly = each.iter().filter(|m| !overlaps(m) && names_it(m)).count();
    assert_eq!(wrongly, 0, "the spinner is named in misses it had no part in: {trace}");
    // Named as what it is: a task at FIFO 99 (kernel prio 0).
    let source = trace["sources"].as_array().unwrap().iter().find(|s| s["source"]["pid"] == tid).unwrap();
    assert_eq!(source["source"]["prio"], 0, "{trace}");
    assert!(source["misses"].as_u64().unwrap() >= named as u64, "{trace}");
}

#[test]
fn a_traced_suite_names_what_ran_during_the_misses_in_its_stored_tables() {
    if !is_root() {
        eprintln!("skipped: SCHED_FIFO and tracing need root");
        return;
    }
    let dir = Scratch::new("taskset-traced-suite");
    let suite = dir.write(
        "traced.toml",
        &format!(
            r#"name = "traced"
[[experiment]]
family = "taskset"
policy = "fifo"
cpus = "{}"
trace = "on"
duration = "1s"
repeat = 1
tasks = [{{ name = "ctl", period = "1ms", run = "200us" }}]
"#,
            last_allowed_cpu()
        ),
    );
    let db = dir.path("traced.db");
    let interferer = Interferer::start(last_allowed_cpu());
    let text = ok_stdout(&db, &["run", &suite, "--noise-probe", "off"]);
    drop(interferer);
    // The spinner's 2 ms bursts every 50 ms make the 1 ms task miss some 20 times a second,
    // and the cell's row of the table names it among what ran instead, as `show` does again.
    let title = "what ran on the tasks' CPUs during their misses";
    for shown in [text, ok_stdout(&db, &["show", "1"])] {
        let table = shown.split(title).nth(1).unwrap_or_else(|| panic!("no miss table: {shown}"));
        let row = table.lines().find(|l| l.contains("of")).unwrap_or_else(|| panic!("no row: {shown}"));
        assert!(row.contains("sl-interferer"), "{row}");
    }
}

#[test]
fn each_activation_is_streamed_to_the_csv_when_asked() {
    let dir = Scratch::new("taskset-activations");
    let csv = dir.path("acts.csv");
    let lines = taskset_lines(
        &["taskset", "--duration", "400ms", "--repeat", "2", "--json", "--activations", csv.to_str().unwrap()],
        &TWO_TASKS,
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "policy",
            "block",
            "task",
            "instance",
            "activation",
            "expected_us",
            "expected_mono_ns",
            "wake_us",
            "response_us",
            "slack_us",
            "run_us",
            "missed"
        ]
    );
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split(',').collect()).collect();
    // Every activation of both blocks, each once.
    assert_eq!(rows.len(), 480, "{text}");
    for block in ["1", "2"] {
        let of = |task: &str| rows.iter().filter(|r| r[1] == block && r[2] == task).count();
        assert_eq!((of("fast"), of("slow")), (200, 40));
    }
    let missed: usize = rows.iter().filter(|r| r[11] == "1").count();
    let stated: u64 = lines.iter().map(|l| l["misses"].as_u64().unwrap()).sum();
    assert_eq!(missed as u64, stated);
    for r in &rows {
        assert_eq!(r[0], "other");
        let num = |i: usize| r[i].parse::<f64>().unwrap();
        // The fast task's k-th activation is due at k × 2 ms; slack = deadline − response.
        if r[2] == "fast" {
            assert!((num(5) - num(4) * 2000.0).abs() < 1e-6, "{r:?}");
            assert!((num(9) - (2000.0 - num(8))).abs() < 0.002, "{r:?}");
        }
        assert_eq!(r[11] == "1", num(9) < 0.0, "{r:?}");
        assert!(num(10) > 0.0 && num(7) >= 0.0 && num(8) >= num(7), "{r:?}");
    }
    assert_eq!(lines[0]["activations_dropped"], 0);
    // Without the flag nothing is written and nothing counted.
    let plain = taskset_lines(&["taskset", "--duration", "100ms", "--json"], &TWO_TASKS);
    assert!(plain[0].get("activations_dropped").is_none());
}

#[test]
fn an_admitted_deadline_set_on_an_idle_machine_meets_its_deadlines_but_for_the_machines_noise() {
    if !is_root() {
        eprintln!("skipped: SCHED_DEADLINE needs root");
        return;
    }
    // 20 % of one CPU on a 2-CPU machine: far inside what the kernel admits. The same set
    // runs under FIFO too, in the same run (the blocks in random order).
    let lines = taskset_lines(
        &["taskset", "--policy", "deadline,fifo", "--duration", "3s", "--trace", "on", "--json"],
        &[
            "--task",
            r#"name = "a", period = "10ms", run = "1ms""#,
            "--task",
            r#"name = "b", period = "20ms", run = "2ms""#,
        ],
    );
    let of = |policy: &str| lines.iter().find(|l| l["policy"] == policy).unwrap_or_else(|| panic!("no {policy} line"));
    let (l, fifo) = (of("deadline"), of("fifo"));
    assert_eq!(l["activations"], 450, "{l}");
    let trace = &l["miss_trace"];
    // Each miss must be the machine's, by the time that explains it: time the kernel's
    // switches gave the thread but its clock did not count (the hypervisor's steal),
    // another task or an interrupt on its CPU, its timer's wakeup coming late, the time it
    // was throttled (the reservation is the run plus a quarter plus up to 100 µs, so running
    // it out takes that much of the machine's time charged to the job), or the carry-over
    // of an earlier late activation. Time the trace does not know explains nothing.
    for m in trace["each"].as_array().unwrap() {
        let ns = |k: &str| m[k].as_u64().unwrap_or(0);
        let others: u64 = m["culprits"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| !matches!(c["source"]["comm"].as_str(), Some("a" | "b")))
            .map(|c| c["ns"].as_u64().unwrap())
            .sum();
        let outside = others + ns("not_visible_ns") + ns("timer_late_ns") + ns("throttled_ns") + ns("earlier_ns");
        let late = (-m["slack_ns"].as_i64().unwrap()) as u64;
        assert!(outside * 2 >= late, "a miss with nothing of the machine's to explain it: {m}");
    }
    // How many misses there are is the machine's load, not the tool's, and the two policies
    // answer one stall differently: a FIFO task just runs late, while a deadline job that a
    // stall made late runs the next one back to back, runs out its reservation and is
    // throttled to its next period (12 incidents to FIFO's 0 once here, beside a compile).
    // Idle, this set had 0-6 incidents under DEADLINE and 0-3 under FIFO in 11 interleaved
    // 3 s pairs on this VM, and bench/taskset-deadline-misses.sh counts rt-taskset's set's.
    // The test holds each miss to the machine's time above and counts none.
    assert_eq!(fifo["activations"], 450, "the same set under FIFO, in the same run: {fifo}");
}

#[test]
fn with_reclaim_a_missed_jobs_own_time_still_fits_its_deadline() {
    if !is_root() {
        eprintln!("skipped: SCHED_DEADLINE needs root");
        return;
    }
    // rt-taskset's three tasks, 60 % of one CPU. This kernel does not preempt kernel code,
    // and a job a kernel thread delayed can run its runtime out (docs/taskset.md): as the
    // kernel gives it, it is then throttled to its next period. With --reclaim the overrun
    // runs in the bandwidth left unused; what remains is the machine's stalls.
    let lines = taskset_lines(
        &["taskset", "--policy", "deadline", "--reclaim", "--duration", "3s", "--trace", "on", "--json"],
        &[
            "--task",
            r#"name = "control", period = "1ms", run = "250us""#,
            "--task",
            r#"name = "sensor", period = "2ms", run = "400us""#,
            "--task",
            r#"name = "logger", period = "10ms", run = "1500us""#,
        ],
    );
    let l = &lines[0];
    assert_eq!(l["activations"], 3000 + 1500 + 300, "{l}");
    assert_eq!(l["reclaim"], true, "the line says the reservations reclaim: {l}");
    // A job of an admitted set runs its own work within its deadline: a miss is what held
    // it back. That is the machine (another task or an interrupt on its CPU: a kworker here
    // once held it 760 µs; the hypervisor; a late timer), its siblings (EDF runs an earlier
    // deadline first, so after a stall a sibling can run 1 ms of its job inside this one's
    // window: CI once, 6.6 ms of the machine's and 6.84 ms late), the kernel's throttle
    // (a reservation whose runtime is used up waits for its next period, reclaim or not:
    // CI once 2.5 ms beside a compile, with no backlog), and a backlog of earlier
    // activations. What is left, the task's own running and sleeping, fits its deadline.
    // (Time no event accounts for, `unknown_ns`, is not known to be its own: once under
    // load a whole window had no event.)
    for m in l["miss_trace"]["each"].as_array().unwrap() {
        let ns = |k: &str| m[k].as_u64().unwrap_or(0);
        // Every culprit: the siblings and everyone else, interrupts included.
        let culprits: u64 = m["culprits"].as_array().unwrap().iter().map(|c| c["ns"].as_u64().unwrap()).sum();
        let held_back = culprits + ns("not_visible_ns") + ns("timer_late_ns") + ns("throttled_ns") + ns("earlier_ns");
        let late = (-m["slack_ns"].as_i64().unwrap()) as u64;
        assert!(held_back + ns("unknown_ns") >= late, "a reclaiming task missed by more than what held it back: {m}");
    }
    // How many misses there are is the machine's load, not the tool's: idle here
    // (bench/taskset-deadline-misses.sh, 10 s runs) 0 or 1 with --reclaim and 2-59 without,
    // but 4-23 incidents in this test's 3 s while two compiles ran. So the test holds each
    // miss to the machine's time above, and counts none.
}

/// The scheduling flags of every SCHED_DEADLINE thread of `pid`, read with sched_getattr.
fn deadline_flags_of(pid: i32) -> Vec<u64> {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    threads
        .flatten()
        .filter_map(|t| t.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|tid| {
            // SAFETY: sched_attr is plain data; the kernel writes at most its size.
            let mut attr: libc::sched_attr = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::sched_attr>() as u32;
            // SAFETY: as above; a tid that has gone answers ESRCH.
            let rc = unsafe { libc::syscall(libc::SYS_sched_getattr, tid, &mut attr, size, 0) };
            (rc == 0 && attr.sched_policy == libc::SCHED_DEADLINE as u32).then_some(attr.sched_flags)
        })
        .collect()
}

#[test]
fn reclaim_reaches_the_kernel_for_every_deadline_thread_and_only_with_the_flag() {
    if !is_root() {
        eprintln!("skipped: SCHED_DEADLINE needs root");
        return;
    }
    for (flag, want) in [(Some("--reclaim"), libc::SCHED_FLAG_RECLAIM as u64), (None, 0)] {
        let mut child = std::process::Command::new(binary_path())
            .args(["taskset", "--policy", "deadline", "--duration", "1s", "--json"])
            .args(flag)
            .args(TWO_TASKS)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut flags = Vec::new();
        wait_until(Duration::from_secs(20), || {
            flags = descendants(child.id() as i32).into_iter().flat_map(deadline_flags_of).collect();
            flags.len() == 2
        });
        assert!(child.wait().unwrap().success());
        assert_eq!(flags.len(), 2, "both task threads under SCHED_DEADLINE ({flag:?})");
        assert!(flags.iter().all(|f| f & libc::SCHED_FLAG_RECLAIM as u64 == want), "{flag:?}: flags {flags:?}");
    }
}

/// The schedlab tracefs instances there are now.
fn trace_instances() -> Vec<String> {
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect::<Vec<String>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|n: &String| n.starts_with("schedlab-"))
        .collect()
}

#[test]
fn nothing_is_left_running_after_sigint_sigterm_or_sigkill() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        let dir = Scratch::new(&format!("taskset-signal-{sig}"));
        let csv = dir.path("acts.csv");
        let partial = dir.path("acts.csv.partial");
        // An earlier file of that name stays as it was until a run succeeds.
        std::fs::write(&csv, "an earlier run's\n").unwrap();
        let mut args = vec!["taskset", "--duration", "30s", "--activations", csv.to_str().unwrap()];
        if is_root() {
            args.extend(["--policy", "fifo", "--trace", "on"]);
        }
        args.extend(["--task", r#"name = "a", period = "1ms", run = "100us""#]);
        args.extend(["--task", r#"name = "b", period = "5ms", run = "500us", count = 2"#]);
        let child = std::process::Command::new(binary_path())
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // Running: the trial process with its three task threads (and the writer), rows
        // going to FILE.partial.
        let mut trial = None;
        let running = wait_until(Duration::from_secs(20), || {
            trial = children_of(pid).into_iter().find(|&c| is_trial_process(c));
            let threads = trial.map_or(0, |t| std::fs::read_dir(format!("/proc/{t}/task")).map_or(0, |d| d.count()));
            threads >= 5 && partial.exists()
        });
        assert!(running, "the task set did not start (signal {sig})");
        let trial = trial.unwrap();
        let tids: Vec<i32> = std::fs::read_dir(format!("/proc/{trial}/task"))
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
            .collect();
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert!(!out.status.success(), "signal {sig}: {out:?}");
        // The trial process and every task thread are gone, and with them the trace
        // instance; no cgroup or temporary file carries either pid.
        assert_none_running(&[pid, trial]);
        assert_none_running(&tids);
        let gone = wait_until(Duration::from_secs(5), || {
            trace_instances().iter().all(|n| !n.contains(&format!("-{trial}-")) && !n.contains(&format!("-{pid}-")))
        });
        assert!(gone, "signal {sig}: trace instances left: {:?}", trace_instances());
        for root in ["/sys/fs/cgroup", "/tmp"] {
            let left: Vec<String> = std::fs::read_dir(root)
                .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect::<Vec<String>>())
                .unwrap_or_default()
                .into_iter()
                .filter(|n: &String| {
                    // A whole number in the name, not a substring: a test's own scratch
                    // directory carries the test process's pid, whose digits may hold these.
                    let numbers = || n.split(|c: char| !c.is_ascii_digit());
                    n.starts_with("schedlab")
                        && numbers().any(|number| number == pid.to_string() || number == trial.to_string())
                })
                .collect();
            assert!(left.is_empty(), "signal {sig}: left in {root}: {left:?}");
        }
        // No half-written file: the partial one is gone (under SIGKILL, removed by the
        // trial process its parent's death stopped), the earlier file untouched.
        let removed = wait_until(Duration::from_secs(5), || !partial.exists());
        assert!(removed, "signal {sig}: {} left", partial.display());
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), "an earlier run's\n", "signal {sig}");
    }
}
