//! The `command` family: any program run under each policy, its whole tree's figures and
//! figures parsed from its output, its failures, and nothing of it left behind.

mod common;

use common::*;
use predicates::prelude::*;
use std::time::Duration;

/// A real CPU-bound loop that reports its own elapsed time, as a benchmark would.
const TIMED_LOOP: &str = "a=$(date +%s%N); i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; \
                          b=$(date +%s%N); echo \"loop took: $(( (b-a)/1000 )) us\"";

#[test]
fn a_parsed_figure_decides_the_best_policy_beside_a_cpu_hog() {
    if !is_root() {
        eprintln!("skipped: FIFO needs root");
        return;
    }
    // On CPU 0 beside a SCHED_OTHER hog: a FIFO loop has the CPU to itself, an OTHER one
    // shares it, so FIFO's loop is about twice as fast in every block.
    let out = schedlab()
        .args(["command", "--policy", "other,fifo", "--cpus", "0", "--load", "cpu:1", "--load-cpus", "0"])
        .args(["--repeat", "12", "--figure", r"loop_us,unit=us,better=lower=regex:loop took: (\d+) us"])
        .args(["--", "sh", "-c", TIMED_LOOP])
        .timeout(Duration::from_secs(120))
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("loop_us"), "the declared figure is a column: {text}");
    let finding = text.lines().find(|l| l.starts_with("- command")).unwrap_or_else(|| panic!("no finding: {text}"));
    assert!(finding.contains("policy = fifo had the lowest median loop_us"), "{finding}");
    assert!(finding.contains("decided, a lead"), "{finding}");
    assert!(text.contains("questions: 1 of 1 answered"), "{text}");
}

#[test]
fn json_lines_carry_the_tree_figures_the_declared_ones_and_the_cpu_wait_source() {
    let out = schedlab()
        .args(["command", "--repeat", "2", "--json", "--figure", r"loop_us=regex:took: (\d+)"])
        .args(["--", "sh", "-c", TIMED_LOOP])
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .get_output()
        .clone();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert_eq!(
            (l["family"].as_str(), l["status"].as_str(), l["policy"].as_str()),
            (Some("command"), Some("ok"), Some("other"))
        );
        assert!(l["wall_s"].as_f64().unwrap() > 0.0 && l["user_s"].as_f64().unwrap() > 0.0, "{l}");
        assert!(l["loop_us"].as_f64().unwrap() > 0.0, "{l}");
        // Root gets a cgroup of the command's own and reads its PSI; others have none.
        if is_root() {
            assert_eq!(l["cpu_wait_source"], "cgroup_psi", "{l}");
            assert!(l["cpu_wait_s"].is_number(), "{l}");
        }
    }
}

#[test]
fn a_failed_run_says_why_the_next_runs_and_the_exit_is_3() {
    let out = schedlab()
        .args(["command", "--repeat", "2", "--", "sh", "-c", "echo cannot open the widget >&2; exit 4"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.matches("exited with status 4 (cannot open the widget)").count(), 2, "both runs ran: {err}");
    let out = schedlab()
        .args(["command", "--figure", r"rps=regex:rps: (\d+)", "--", "echo", "no figure here"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("the figure 'rps' was not in the output"), "{err}");
}

#[test]
fn a_timeout_or_a_child_left_running_leaves_no_process_behind() {
    let marker = format!("schedlab-test-left-{}", std::process::id());
    // The command exits at once, leaving a child that would sleep for 300 s.
    let script = format!("exec -a {marker} sleep 300 & echo started");
    let out = schedlab()
        .args(["command", "--json", "--", "bash", "-c", &script])
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .get_output()
        .clone();
    let line = &json_lines(&out.stdout)[0];
    assert!(line["leftovers_killed"].as_u64().unwrap() >= 1, "{line}");
    assert!(wait_until(Duration::from_secs(5), || !any_process_named(&marker)), "{marker} still runs");
    // Past its timeout the whole tree goes, the run is recorded as timed out: exit 3.
    let script = format!("exec -a {marker} sleep 300 & wait");
    let out = schedlab()
        .args(["command", "--timeout", "1s", "--json", "--", "bash", "-c", &script])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(json_lines(&out.stdout)[0]["status"], "timed_out");
    assert!(wait_until(Duration::from_secs(5), || !any_process_named(&marker)), "{marker} still runs");
    let groups = std::fs::read_dir("/sys/fs/cgroup/unified").into_iter().flatten().flatten();
    let mine: Vec<String> =
        groups.map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("schedlab-")).collect();
    assert!(mine.is_empty(), "cgroups left behind: {mine:?}");
}

fn any_process_named(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker)))
}

#[test]
fn what_cannot_work_is_refused_before_anything_runs() {
    refused(&["command"], "no command to run");
    refused(&["command", "--", ""], "empty");
    refused(&["command", "--", "no-such-program-schedlab"], "no such program on PATH");
    refused(&["command", "--figure", r"p99=regex:p99 \d+", "--", "true"], "no capture group");
    refused(&["command", "--figure", "rps=json:rps", "--", "true"], "not a JSON pointer");
    refused(&["command", "--figure", "rps,better=up=json:/rps", "--", "true"], "better=up");
    refused(&["command", "--policy", "deadline", "--", "true"], "not offered");
    refused(&["command", "--prio", "10", "--", "true"], "--prio applies only to fifo and rr");
}

#[test]
fn a_flood_of_output_keeps_its_tail_where_the_figure_is() {
    // 40 MB of output before the figure: only the last 16 MiB are kept, and read.
    let script = "head -c 40000000 /dev/zero | tr '\\0' a; echo; echo 'ops: 42'";
    let out = schedlab()
        .args(["command", "--json", "--figure", r"ops=regex:ops: (\d+)", "--", "sh", "-c", script])
        .timeout(Duration::from_secs(120))
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(json_lines(&out.stdout)[0]["ops"], 42.0);
}

#[test]
fn a_suite_runs_a_command_with_a_declared_figure_into_the_store() {
    let dir = Scratch::new("command-suite");
    let db = dir.path("lab.db");
    let suite = dir.write(
        "mine.toml",
        &format!(
            "name = \"mine\"\n[[experiment]]\nfamily = \"command\"\ncmd = [\"sh\", \"-c\", {:?}]\n\
             policy = [\"other\", \"batch\"]\nrepeat = 3\n\
             figures = [{{ name = \"loop_us\", regex = 'took: (\\d+)', unit = \"us\", better = \"lower\" }}]\n\
             [[experiment]]\nfamily = \"command\"\ncmd = [\"true\"]\npolicy = [\"other\", \"batch\"]\nrepeat = 3\n",
            TIMED_LOOP
        ),
    );
    let out = schedlab_in(&db, &["run", &suite]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report = ok_stdout(&db, &["report", "latest", "--format", "json"]);
    assert!(report.contains("loop_us"), "{report}");
    // Each experiment's question judges its own headline: the declared figure in the
    // first, the wall time in the second, which declared none.
    let text = ok_stdout(&db, &["report", "latest"]);
    let finding = |cmd: &str| text.lines().find(|l| l.contains("command (cmd=") && l.contains(cmd)).unwrap_or("");
    assert!(finding("date").contains("lowest median loop_us"), "{text}");
    assert!(finding("[\"true\"]").contains("lowest median wall s"), "{text}");
    let csv = ok_stdout(&db, &["export", "latest", "--format", "csv"]);
    assert!(csv.lines().next().unwrap().contains("loop_us"), "{csv}");
    // A bad declaration in a suite names its line and the fix.
    let bad = dir.write(
        "bad.toml",
        "[[experiment]]\nfamily = \"command\"\ncmd = [\"true\"]\nfigures = [{ name = \"x\", regex = 'x \\d+' }]\n",
    );
    schedlab()
        .args(["run", &bad, "--db"])
        .arg(&db)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.toml:4").and(predicate::str::contains("no capture group")));
}

#[test]
fn an_unprivileged_user_runs_a_command_and_is_told_why_not_fifo() {
    let Some(out) = as_nobody(&[], &["command", "--json", "--", "true"]) else { return };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = &json_lines(&out.stdout)[0];
    assert_eq!(line["status"], "ok");
    assert!(line["cpu_wait_s"].is_null(), "no cgroup of its own without privilege: {line}");
    let Some(out) = as_nobody(&[], &["command", "--policy", "fifo", "--", "true"]) else { return };
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CAP_SYS_NICE"));
}

#[test]
fn a_warm_up_that_fails_makes_the_run_exit_3_though_it_is_not_stored() {
    let dir = Scratch::new("command-warmup");
    let db = dir.path("lab.db");
    // The first run (the warm-up) fails and leaves a mark; every later one succeeds.
    let mark = dir.path("mark").display().to_string();
    let script = format!("test -e {mark} || {{ touch {mark}; exit 1; }}");
    let suite = dir.write(
        "warm.toml",
        &format!("[[experiment]]\nfamily = \"command\"\ncmd = [\"sh\", \"-c\", {script:?}]\nwarmup = 1\nrepeat = 1\n"),
    );
    let out = schedlab_in(&db, &["run", &suite]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("warm-up (failed)"), "{err}");
    let listed = listed_runs(&db);
    assert_eq!(listed[0]["ok"], 1, "the measured trial is stored, ok: {listed:?}");
}
