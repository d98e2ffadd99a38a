//! Settings as sides and axes (`--a-set`, a suite's `sysctl`/`cgroup`/... keys) on the real
//! binary: what is refused before anything is switched, what a switched side or trial
//! sees, what is recorded, and that nothing stays switched — after the session, and after
//! a SIGKILL, at the next start.

mod common;

use common::*;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const TINY: &str = r#"
[[experiment]]
family = "latency"
interval = "1ms"
loops = 20
repeat = 2
"#;

fn read_sysctl(name: &str) -> String {
    std::fs::read_to_string(Path::new("/proc/sys").join(name.replace('.', "/"))).unwrap().trim().to_string()
}

/// The `schedlab-set-*` groups of process `pid` under the cgroup roots.
fn groups_of(pid: u32) -> Vec<String> {
    let prefix = format!("schedlab-set-{pid}-");
    let mut out = Vec::new();
    for root in ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
        if let Ok(entries) = std::fs::read_dir(root) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with(&prefix) {
                    out.push(format!("{root}/{name}"));
                }
            }
        }
    }
    out
}

/// `schedlab <args> --db <db>` to its end: its pid, exit code, stdout and stderr.
fn run_with_pid(db: &Path, args: &[&str]) -> (u32, Option<i32>, String, String) {
    let child = std::process::Command::new(binary_path())
        .args(args)
        .arg("--db")
        .arg(db)
        .current_dir(cwd_for(db))
        .env("SCHEDLAB_NOISE_PROBE", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (pid, out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn can_switch() -> bool {
    if !is_root() {
        eprintln!("skipped: switching sysctls and making cgroups needs root");
        return false;
    }
    true
}

#[test]
fn what_could_harm_or_is_not_allowed_is_refused_before_anything_runs() {
    let dir = Scratch::new("settings-refused");
    let suite = dir.write("t.toml", TINY);
    let db = dir.path("r.db").display().to_string();
    let ab = |set: &str, needle: &str| {
        refused(&["ab", &suite, "--a-setup", "true", "--b-set", set, "--db", &db], needle);
    };
    ab("sysctl.vm.swappiness = 10", "outside what schedlab switches");
    ab("sysctl.kernel.sched_no_such_tunable = 1", "no such sysctl");
    ab("cgroup = { max = \"500us/100ms\" }", "below 1 ms");
    ab("nice = 3", "unknown setting");
    // In a suite the same words, with the file and line.
    let bad = dir.write("bad.toml", &format!("{TINY}cgroup = [{{}}, {{ max = \"0.5ms/100ms\" }}]\n"));
    refused(&["run", &bad, "--db", &db], "bad.toml:7: cgroup max");
    let outside = dir.write("outside.toml", &format!("{TINY}sysctl = {{ \"vm.swappiness\" = 10 }}\n"));
    refused(&["run", &outside, "--db", &db], "outside what schedlab switches");
    // RT throttling off while real-time tasks hold every CPU: nothing would run again.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let rt = dir.write(
        "rt.toml",
        &format!("[[experiment]]\nfamily = \"ring\"\npolicy = \"fifo\"\nprocs = {}\nlaps = 10\n", (2 * cpus).max(2)),
    );
    refused(
        &["ab", &rt, "--a-setup", "true", "--b-set", "sysctl.kernel.sched_rt_runtime_us = -1", "--db", &db],
        "RT throttling off",
    );
    assert!(!Path::new(&db).exists(), "nothing was stored: the refusals come first");
}

#[test]
fn what_this_machine_does_not_offer_is_refused_naming_it() {
    let dir = Scratch::new("settings-absent");
    let suite = dir.write("t.toml", TINY);
    let db = dir.path("r.db").display().to_string();
    let ab = |set: &str, needle: &str| {
        refused(&["ab", &suite, "--a-setup", "true", "--b-set", set, "--db", &db], needle);
    };
    if Path::new("/sys/kernel/sched_ext").exists() {
        eprintln!("skipped: this kernel has sched_ext (CONFIG_SCHED_CLASS_EXT); the refusal is not reached here");
    } else {
        ab("scx = \"rusty\"", "CONFIG_SCHED_CLASS_EXT");
    }
    let has_cpufreq = std::fs::read_dir("/sys/devices/system/cpu/cpufreq")
        .is_ok_and(|d| d.flatten().any(|e| e.file_name().to_string_lossy().starts_with("policy")));
    if has_cpufreq {
        eprintln!("skipped: this machine has cpufreq governors");
    } else {
        ab("governor = \"performance\"", "offers no cpufreq governor");
    }
    let smt = std::fs::read_to_string("/sys/devices/system/cpu/smt/control").unwrap_or_default();
    if matches!(smt.trim(), "on" | "off") {
        eprintln!("skipped: this machine can switch SMT");
    } else {
        ab("smt = \"off\"", "does not offer switching SMT");
    }
}

#[test]
fn an_unprivileged_user_is_told_what_needs_root() {
    let dir = Scratch::new("settings-nobody");
    let suite = dir.write("t.toml", TINY);
    std::fs::set_permissions(&dir.0, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&suite, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    for set in ["sysctl.kernel.sched_cfs_bandwidth_slice_us = 4000", "cgroup = { weight = 50 }"] {
        let args = ["ab", &suite, "--a-setup", "true", "--b-set", set, "--db", "/tmp/nobody-settings.db"];
        let Some(out) = as_nobody(&[], &args) else { return };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {stderr}");
        assert!(stderr.contains("needs root"), "{set}: {stderr}");
    }
}

#[test]
fn an_ab_session_switches_each_side_checks_records_and_restores_it() {
    if !can_switch() {
        return;
    }
    let name = "kernel.sched_cfs_bandwidth_slice_us";
    let before = read_sysctl(name);
    let b_value = if before == "4000" { "3000" } else { "4000" };
    let dir = Scratch::new("settings-ab");
    let seen = dir.path("seen.txt");
    let cgroups = dir.path("cgroups.txt");
    // A command trial writes what it sees: the sysctl and its own cgroups.
    let suite = dir.write(
        "t.toml",
        &format!(
            "[[experiment]]\nfamily = \"command\"\ncmd = [\"sh\", \"-c\", \"cat /proc/sys/kernel/sched_cfs_bandwidth_slice_us \
             >> {}; cat /proc/self/cgroup | tr '\\\\n' ' ' >> {}; echo >> {}\"]\nrepeat = 3\n",
            seen.display(),
            cgroups.display(),
            cgroups.display()
        ),
    );
    let db = dir.path("ab.db");
    let (pid, code, _, stderr) = run_with_pid(
        &db,
        &[
            "ab",
            &suite,
            "--a-setup",
            "true",
            "--b-set",
            &format!("sysctl.{name} = {b_value}"),
            "--b-set",
            "cgroup = { weight = 50 }",
            "--seed",
            "3",
        ],
    );
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    assert_eq!(read_sysctl(name), before, "restored after the session");
    assert_eq!(groups_of(pid), Vec::<String>::new(), "no group left");
    let values: Vec<String> = std::fs::read_to_string(&seen).unwrap().lines().map(str::to_string).collect();
    assert_eq!(values.len(), 6, "{values:?}");
    assert_eq!(values.iter().filter(|v| *v == b_value).count(), 3, "B's trials saw B's value: {values:?}");
    assert_eq!(values.iter().filter(|v| **v == before).count(), 3, "A's trials the machine's own: {values:?}");
    let lines: Vec<String> = std::fs::read_to_string(&cgroups).unwrap().lines().map(str::to_string).collect();
    assert_eq!(lines.iter().filter(|l| l.contains("schedlab-set-")).count(), 3, "B's trials in B's group: {lines:?}");
    // Recorded: each side's fingerprint and options, and compare names what changed.
    let runs = listed_runs(&db);
    let ids: Vec<String> = runs.iter().map(|r| r["id"].to_string()).collect();
    let b = export_json(&db, &ids[1]);
    let settings = &b["runs"][0]["machine"]["settings"];
    assert_eq!(settings[format!("sysctl.{name}")], b_value, "{settings}");
    assert_eq!(settings["cgroup"], "weight=50", "{settings}");
    assert_eq!(b["runs"][0]["options"]["ab"]["settings"]["cgroup"]["weight"], 50);
    let a = export_json(&db, &ids[0]);
    assert!(a["runs"][0]["machine"].get("settings").is_none(), "A switched nothing");
    let compared = schedlab_in(&db, &["compare", &ids[0], &ids[1]]);
    let text = String::from_utf8_lossy(&compared.stdout);
    assert!(text.contains(&format!("sysctl.{name} absent → {b_value}")), "{text}");
    // B's trials carry their group's figures.
    let trial = &b["runs"][0]["trials"][0]["outcome"]["cgroup"];
    assert_eq!(trial["setting"], "weight=50", "{trial}");
}

#[test]
fn a_suite_axis_puts_each_trial_in_its_group_and_reads_its_throttling() {
    if !can_switch() {
        return;
    }
    let dir = Scratch::new("settings-axis");
    let suite = dir.write(
        "t.toml",
        "[[experiment]]\nfamily = \"workload\"\nworkload = \"cpu\"\nprocs = 2\niterations = 20_000_000\n\
         cgroup = [{}, { max = \"20ms/100ms\" }]\ncompare = \"cgroup\"\nrepeat = 2\n",
    );
    let db = dir.path("axis.db");
    let (pid, code, stdout, stderr) = run_with_pid(&db, &["run", &suite]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("cgroups (each cell's private group"), "{stdout}");
    let export = export_json(&db, "latest");
    let run = &export["runs"][0];
    assert_eq!(run["machine"]["settings"]["cgroup"], "default | max=20ms/100ms");
    for trial in run["trials"].as_array().unwrap() {
        let group = &trial["outcome"]["cgroup"];
        let limited = trial["params"]["cgroup"] == "max=20ms/100ms";
        assert_eq!(group["setting"], trial["params"]["cgroup"], "{group}");
        let throttled = group["nr_throttled"].as_u64().unwrap();
        // 2 busy processes under 20 % of a CPU are throttled in most periods; without a
        // quota the kernel never throttles.
        assert_eq!(throttled > 0, limited, "{trial}");
        if limited {
            assert!(group["throttled_ns"].as_u64().unwrap() > 10_000_000, "{group}");
        }
    }
    let csv = ok_stdout(&db, &["export", "latest", "--format", "csv"]);
    assert!(csv.lines().next().unwrap().contains("throttled_s"), "the registry's figures are exported");
    assert_eq!(groups_of(pid), Vec::<String>::new());
}

#[test]
fn after_a_sigkill_the_next_start_restores_the_sysctl_and_removes_the_group() {
    if !can_switch() {
        return;
    }
    let name = "kernel.sched_rr_timeslice_ms";
    let before = read_sysctl(name);
    let switched = if before == "90" { "80" } else { "90" };
    let dir = Scratch::new("settings-kill");
    let state = dir.path("state");
    let suite =
        dir.write("t.toml", "[[experiment]]\nfamily = \"latency\"\ninterval = \"1ms\"\nloops = 3000\nrepeat = 2\n");
    let db = dir.path("k.db").display().to_string();
    let mut child = std::process::Command::new(binary_path())
        .args(["ab", &suite, "--a-set", &format!("sysctl.{name} = {switched}"), "--a-set", "cgroup = { weight = 50 }"])
        .args(["--b-setup", "true", "--seed", "1", "--db", &db])
        .env("SCHEDLAB_STATE_DIR", &state)
        .env("SCHEDLAB_NOISE_PROBE", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let state_file = state.join(format!("settings-{pid}.json"));
    let in_a_block = wait_until(Duration::from_secs(60), || {
        std::fs::read_to_string(&state_file).is_ok_and(|t| t.contains("cgroup")) && groups_of(pid).len() == 2
    });
    assert!(in_a_block, "side A was never switched");
    assert_eq!(read_sysctl(name), switched);
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    assert_eq!(read_sysctl(name), switched, "a SIGKILL restores nothing by itself");
    assert!(state_file.exists());
    // The next start of any measuring command puts it back.
    let next = schedlab()
        .args(["latency", "--loops", "5", "--interval", "1ms"])
        .env("SCHEDLAB_STATE_DIR", &state)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&next.stderr);
    assert_eq!(next.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("sysctl {name} restored to {before}")), "{stderr}");
    // Its groups are gone: removed by this start, or by another schedlab's start (which
    // sweeps the groups of every schedlab that no longer runs) just before it.
    assert!(stderr.contains("removed") || stderr.contains("already gone"), "{stderr}");
    assert_eq!(read_sysctl(name), before);
    assert_eq!(groups_of(pid), Vec::<String>::new());
    assert!(!state_file.exists());
}

#[test]
fn sigterm_mid_block_restores_before_schedlab_exits() {
    if !can_switch() {
        return;
    }
    let name = "kernel.sched_cfs_bandwidth_slice_us";
    let before = read_sysctl(name);
    let switched = if before == "6000" { "7000" } else { "6000" };
    let dir = Scratch::new("settings-term");
    let state = dir.path("state");
    let suite =
        dir.write("t.toml", "[[experiment]]\nfamily = \"latency\"\ninterval = \"1ms\"\nloops = 3000\nrepeat = 2\n");
    let db = dir.path("t.db").display().to_string();
    let child = std::process::Command::new(binary_path())
        .args(["ab", &suite, "--b-set", &format!("sysctl.{name} = {switched}"), "--b-set", "cgroup = { idle = true }"])
        .args(["--a-setup", "true", "--seed", "2", "--db", &db])
        .env("SCHEDLAB_STATE_DIR", &state)
        .env("SCHEDLAB_NOISE_PROBE", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let state_file = state.join(format!("settings-{pid}.json"));
    let in_b = wait_until(Duration::from_secs(60), || groups_of(pid).len() == 2);
    assert!(in_b, "side B was never switched");
    assert_eq!(read_sysctl(name), switched);
    signal(&child, libc::SIGTERM);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + libc::SIGTERM), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_sysctl(name), before, "restored before it exited");
    assert_eq!(groups_of(pid), Vec::<String>::new());
    assert!(!state_file.exists(), "nothing left for the next start");
}
