//! `schedlab workload` on the real binary: each workload under OTHER and FIFO, the
//! watchdog, clean-up, bad input and privileges.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn workload_json(args: &[&str]) -> Vec<serde_json::Value> {
    let mut argv = vec!["workload"];
    argv.extend_from_slice(args);
    argv.push("--json");
    json_lines(stdout_of(&argv).as_bytes())
}

/// A scratch directory for --dir, removed by the test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedlab-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

fn policies_to_try() -> Vec<&'static str> {
    if is_root() {
        vec!["other", "fifo"]
    } else {
        eprintln!("not root: SCHED_FIFO cases skipped");
        vec!["other"]
    }
}

#[test]
fn cpu_workload_burns_user_time_and_estimates_pi() {
    for policy in policies_to_try() {
        let lines = workload_json(&["cpu", "--procs", "1,3", "--policy", policy, "--iterations", "2000000"]);
        assert_eq!(lines.len(), 2);
        for l in &lines {
            assert_eq!(l["status"], "ok", "{l}");
            assert_eq!(l["policy"], policy);
            assert!(l["user_s"].as_f64().unwrap() > 0.0, "{l}");
            assert!(l["wall_s"].as_f64().unwrap() > 0.0, "{l}");
            let (lo, hi) = (l["pi_min"].as_f64().unwrap(), l["pi_max"].as_f64().unwrap());
            assert!(lo > 3.13 && hi < 3.15, "pi from 2M samples: {lo}..{hi}");
            let fairness = l["fairness"].as_f64().unwrap();
            assert!(fairness > 0.0 && fairness <= 1.0 + 1e-9, "{l}");
        }
        assert_eq!(lines[1]["procs"], 3);
        if policy == "fifo" {
            assert_eq!(lines[0]["prio"], 99, "real-time policies default to their maximum");
        }
    }
}

#[test]
fn io_workload_blocks_and_cleans_up_its_directory() {
    let dir = scratch("io");
    for policy in policies_to_try() {
        let lines = workload_json(&[
            "io",
            "--procs",
            "2",
            "--policy",
            policy,
            "--transfer-size",
            "16KiB",
            "--block-size",
            "1KiB",
            "--dir",
            dir.to_str().unwrap(),
        ]);
        let l = &lines[0];
        assert_eq!(l["status"], "ok", "{l}");
        assert!(l["nvcsw"].as_u64().unwrap() > 0, "O_SYNC writes block: {l}");
        assert_eq!(l["transfer_size"], 16384);
        assert!(entries(&dir).is_empty(), "left behind: {:?}", entries(&dir));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mixed_workload_writes_and_estimates() {
    let dir = scratch("mixed");
    let lines = workload_json(&["mixed", "--procs", "2", "--iterations", "100", "--dir", dir.to_str().unwrap()]);
    let l = &lines[0];
    assert_eq!(l["status"], "ok", "{l}");
    assert!(l["nvcsw"].as_u64().unwrap() > 0, "{l}");
    assert!(l["pi_min"].as_f64().unwrap() > 2.0, "{l}");
    assert!(entries(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn repeats_are_summarised_in_the_table() {
    let text = stdout_of(&[
        "workload",
        "cpu",
        "--procs",
        "2",
        "--policy",
        "other,batch",
        "--repeat",
        "3",
        "--iterations",
        "200000",
    ]);
    for col in ["Policy", "Procs", "Runs", "Wall s", "sd", "median", "min..max", "Invol sw", "Vol sw", "Fairness"] {
        assert!(text.contains(col), "missing {col}: {text}");
    }
    assert!(text.lines().any(|l| l.starts_with("SCHED_OTHER") && l.contains("3/3")), "{text}");
    assert!(text.lines().any(|l| l.starts_with("SCHED_BATCH") && l.contains("3/3")), "{text}");
}

#[test]
fn classic_format_prints_the_study_lines() {
    let text = stdout_of(&[
        "workload",
        "cpu",
        "--procs",
        "2",
        "--repeat",
        "2",
        "--iterations",
        "100000",
        "--format",
        "classic",
    ]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("Calculating pi over 100000 iterations using SCHED_OTHER with 2"), "{text}");
    let re = |l: &str| {
        let parts: Vec<&str> = l.split(' ').collect();
        parts.len() == 6
            && parts[0].starts_with("wall=")
            && parts[1].starts_with("user=")
            && parts[2].starts_with("system=")
            && parts[3].starts_with("CPU=")
            && parts[3].ends_with('%')
            && parts[4].starts_with("i-switched=")
            && parts[5].starts_with("v-switched=")
    };
    assert_eq!(lines.iter().filter(|l| re(l)).count(), 2, "{text}");
}

#[test]
fn the_watchdog_kills_a_trial_past_its_timeout() {
    let out = schedlab()
        .args(["workload", "cpu", "--procs", "2", "--iterations", "100000000000", "--timeout", "1s", "--json"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(3)
        .get_output()
        .clone();
    let lines = json_lines(&out.stdout);
    assert_eq!(lines[0]["status"], "timed_out", "{}", lines[0]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("timed_out"));
}

#[test]
fn sigint_mid_trial_leaves_no_children_and_no_files() {
    // 256 MiB in 1 KiB O_SYNC writes: minutes on a disk, and still about a second where the
    // temporary directory is tmpfs, so the signal finds the copies running.
    let dir = scratch("sigint");
    let dir_text = dir.to_str().unwrap();
    let args =
        ["workload", "io", "--procs", "4", "--transfer-size", "256MiB", "--block-size", "1KiB", "--dir", dir_text];
    let (child, workers) = spawn_with_children(&args, 4);
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert_none_running(&workers);
    assert!(entries(&dir).is_empty(), "left behind: {:?}", entries(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    refused(&["workload", "gpu"], "invalid value 'gpu'");
    refused(&["workload", "cpu", "--policy", "fifoo"], "unknown policy 'fifoo'");
    refused(&["workload", "cpu", "--procs", "0"], "at least 1 process");
    refused(&["workload", "io", "--block-size", "4KiB", "--transfer-size", "1KiB"], "larger than");
    refused(&["workload", "io", "--block-size", "1000", "--transfer-size", "2500"], "not a multiple");
    refused(&["workload", "io", "--dir", "/nonexistent/place"], "cannot use --dir /nonexistent/place");
    refused(&["workload", "cpu", "--timeout", "0s"], "greater than zero");
    refused(&["workload", "cpu", "--repeat", "0"], "repeat");
    refused(&["workload", "cpu", "--iterations", "0"], "0 iterations runs nothing: give at least 1");
    refused(&["workload", "cpu", "--iterations", "-1"], "-1 iterations is negative");
    refused(&["workload", "cpu", "--iterations", "100000000000000"], "more than 24 h even at 1 ns a sample");
    refused(&["workload", "mixed", "--iterations", "100000000000"], "give at most 86400000000");
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
    refused(&["workload", "cpu", "--procs", &(pid_max + 10).to_string()], "pid_max");
}

#[test]
fn a_disk_too_small_is_refused_before_running() {
    if !is_root() {
        eprintln!("skipped: needs root to mount a small tmpfs");
        return;
    }
    let dir = scratch("full");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&dir)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here");
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let out = schedlab()
        .args(["workload", "io", "--procs", "8", "--transfer-size", "1MiB", "--dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let empty = entries(&dir).is_empty();
    std::process::Command::new("umount").arg(&dir).status().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("free"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(empty, "nothing left in the directory");
}

#[test]
fn realtime_without_privilege_is_refused() {
    let args = ["workload", "cpu", "--procs", "2", "--policy", "other,fifo", "--iterations", "1000"];
    let Some(out) = as_nobody(&["--rtprio=0"], &args) else { return };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("CAP_SYS_NICE") && err.contains("SCHED_FIFO"), "{err}");
    assert!(out.stdout.is_empty(), "nothing was run: {}", String::from_utf8_lossy(&out.stdout));
}

/// A work directory left by a schedlab that was killed outright (its pid gone) is removed
/// by the next io or mixed run in the same place, and a live one is not touched.
#[test]
fn a_killed_runs_work_directory_is_swept_by_the_next_io_run() {
    let dir = Scratch::new("workload-sweep");
    let parent = dir.path("work");
    // A pid that is not running: the first free one above ours, from /proc.
    let dead = (std::process::id() as i32 + 1_000..).find(|p| !is_running(*p)).unwrap();
    let orphan = parent.join(format!("schedlab-work-{dead}-AbCdEf"));
    // A live owner: a schedlab that is running (only a schedlab's directories are kept).
    let mut live = std::process::Command::new(binary_path()).args(["latency", "--duration", "20s"]).spawn().unwrap();
    let alive = parent.join(format!("schedlab-work-{}-AbCdEf", live.id()));
    std::fs::create_dir_all(&orphan).unwrap();
    std::fs::write(orphan.join("out-0"), b"left behind").unwrap();
    std::fs::create_dir_all(&alive).unwrap();
    let out = schedlab()
        .args(["workload", "io", "--procs", "1", "--transfer-size", "4KiB", "--block-size", "1KiB", "--dir"])
        .arg(&parent)
        .output()
        .unwrap();
    let _ = live.kill();
    let _ = live.wait();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!orphan.exists(), "the orphaned work directory is still there");
    assert!(alive.exists(), "a directory whose owner lives was removed");
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed 1 work directory"));
}
