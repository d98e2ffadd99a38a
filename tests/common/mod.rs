//! Helpers shared by the integration tests: the real binary, JSON lines, and process
//! inspection through /proc (to prove no child outlives a run).
#![allow(dead_code)]

pub mod pg;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A test binary started with SIGINT ignored (a background job of a script: the shell
/// ignores SIGINT and SIGQUIT for such jobs, and an ignored signal stays ignored across
/// exec) would pass that on to every schedlab it starts, and the tests that stop one with
/// Ctrl-C would see it go on. The defaults are put back once, before the first spawn.
fn default_signal_dispositions() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: setting a signal's disposition to its default is always valid.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
        }
    });
}

pub fn schedlab() -> Command {
    default_signal_dispositions();
    let mut command = Command::cargo_bin("schedlab").expect("the schedlab binary is built");
    // Runs skip the few seconds' noise probe unless a test asks for it (`--noise-probe on`):
    // the tests of the floor do, the others test what runs after it.
    command.env("SCHEDLAB_NOISE_PROBE", "off");
    command
}

/// Run schedlab with `args`, require success, and return its stdout as text.
pub fn stdout_of(args: &[&str]) -> String {
    let out = schedlab().args(args).assert().success().get_output().stdout.clone();
    String::from_utf8(out).expect("schedlab prints UTF-8")
}

/// `schedlab <args> --db <db>`, with a generous time limit.
pub fn schedlab_in(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    schedlab()
        .args(args)
        .arg("--db")
        .arg(db)
        .current_dir(cwd_for(db))
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap()
}

/// Where to run schedlab against `db`, so that the HTML report `run` writes lands in the
/// test's own directory, removed with it: beside a SQLite file, or for a test server's
/// URL in the server's directory (its socket's), never in the source tree.
pub fn cwd_for(db: &std::path::Path) -> PathBuf {
    let text = db.to_string_lossy();
    if let Some(rest) = text.strip_prefix("postgresql://").or_else(|| text.strip_prefix("postgres://")) {
        let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h).split('/').next().unwrap_or("");
        let dir = host.replace("%2F", "/").replace("%2f", "/");
        assert!(dir.starts_with('/'), "a test database URL names its socket directory: {text}");
        return PathBuf::from(dir);
    }
    db.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(std::env::temp_dir, |p| p.to_path_buf())
}

/// `schedlab <args> --db <db>`, which must succeed; its stdout.
pub fn ok_stdout(db: &std::path::Path, args: &[&str]) -> String {
    let out = schedlab_in(db, args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A stored run as `schedlab export --format json` writes it.
pub fn export_json(db: &std::path::Path, run: &str) -> serde_json::Value {
    serde_json::from_str(&ok_stdout(db, &["export", run, "--format", "json"])).unwrap()
}

/// The sequence numbers of a run's stored trials, ascending.
pub fn stored_seqs(db: &std::path::Path, run: &str) -> Vec<i64> {
    let export = export_json(db, run);
    let mut s: Vec<i64> =
        export["runs"][0]["trials"].as_array().unwrap().iter().map(|t| t["seq"].as_i64().unwrap()).collect();
    s.sort_unstable();
    s
}

pub fn binary_path() -> PathBuf {
    default_signal_dispositions();
    assert_cmd::cargo::cargo_bin("schedlab")
}

pub fn json_lines(stdout: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Field 3 (state) and 4 (ppid) of /proc/PID/stat; None when the process is gone.
fn stat_of(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &text[text.rfind(')')? + 2..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Pids whose parent is `parent`.
pub fn children_of(parent: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() {
            if matches!(stat_of(pid), Some((_, ppid)) if ppid == parent) {
                out.push(pid);
            }
        }
    }
    out
}

/// True while `pid` exists and is not a zombie (a zombie has already died; only init
/// can reap one whose parent was killed).
/// Ring trials of about 0.3 s each: a run that can be stopped (or its server) in the middle.
pub const SLOW: &str =
    "name = \"slow\"\n[[experiment]]\nfamily = \"ring\"\nprocs = 2\nduration = \"300ms\"\nrepeat = 8\n";

/// Start a slow run and wait until it has stored at least `at_least` trials.
pub fn start_slow_run(dir: &Scratch, db: &std::path::Path, at_least: i64) -> std::process::Child {
    let suite = dir.write("slow.toml", SLOW);
    let child = std::process::Command::new(binary_path())
        .args(["run", &suite, "--db", &db.display().to_string()])
        .current_dir(cwd_for(db))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stored = wait_until(Duration::from_secs(60), || {
        listed_runs(db).first().is_some_and(|r| r["ok"].as_i64().unwrap_or(0) >= at_least)
    });
    assert!(stored, "the run stored nothing");
    child
}

/// Is `pid` a `schedlab __trial` process (the executor's child that runs one trial, or a
/// process it forked: they share its command line)?
pub fn is_trial_process(pid: i32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.split(|&b| b == 0).any(|arg| arg == b"__trial"))
}

/// Every descendant of `pid` (a trial process and its ring members, say).
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for child in children_of(pid) {
        out.push(child);
        out.extend(descendants(child));
    }
    out
}

pub fn is_running(pid: i32) -> bool {
    matches!(stat_of(pid), Some((state, _)) if state != 'Z' && state != 'X')
}

/// Wait until `check` holds or `limit` passes.
pub fn wait_until(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    check()
}

/// Run schedlab as user `nobody` under extra `prlimit` limits. The binary is copied to a
/// world-readable temporary directory, since the checkout may live under /root.
pub fn as_nobody(extra_limits: &[&str], args: &[&str]) -> Option<std::process::Output> {
    use std::os::unix::fs::PermissionsExt;
    if !is_root() {
        eprintln!("skipped: needs root to switch to an unprivileged user");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("schedlab-nobody-{}-{}", std::process::id(), args.join("_").len()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(format!("schedlab-{}", extra_limits.join("").replace(['-', '=', ':'], "")));
    std::fs::copy(binary_path(), &bin).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = std::process::Command::new("prlimit");
    cmd.current_dir("/").args(extra_limits).arg("--").arg("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]).arg(&bin).args(args);
    let out = cmd.output().expect("prlimit and setpriv (util-linux) are installed");
    std::fs::remove_dir_all(&dir).unwrap();
    Some(out)
}

/// `schedlab <args>` must exit 2 with `needle` in its message.
pub fn refused(args: &[&str], needle: &str) {
    schedlab().args(args).assert().code(2).stderr(predicate::str::contains(needle));
}

/// Start schedlab (stdout discarded, stderr kept) and wait until it has at least
/// `children` working descendants: the processes that measure or are measured, below the
/// `schedlab __trial` process each trial runs in (not counted); returns it and their pids.
pub fn spawn_with_children(args: &[&str], children: usize) -> (std::process::Child, Vec<i32>) {
    let child = std::process::Command::new(binary_path())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schedlab starts");
    let pid = child.id() as i32;
    let mut found = Vec::new();
    let all_there = wait_until(Duration::from_secs(20), || {
        found = children_of(pid)
            .into_iter()
            .flat_map(|c| if is_trial_process(c) { descendants(c) } else { vec![c] })
            .collect();
        found.len() >= children
    });
    assert!(all_there, "only {} of {children} children appeared", found.len());
    (child, found)
}

/// Every pid in `pids` is gone or dead within a few seconds.
pub fn assert_none_running(pids: &[i32]) {
    let gone = wait_until(Duration::from_secs(5), || pids.iter().all(|&p| !is_running(p)));
    let left: Vec<i32> = pids.iter().copied().filter(|&p| is_running(p)).collect();
    assert!(gone, "still running: {left:?}");
}

/// Send `sig` to a child we spawned.
pub fn signal(child: &std::process::Child, sig: i32) {
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// A scratch directory under the temp directory, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("schedlab-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Write `text` to `name` inside; returns the path as text.
    pub fn write(&self, name: &str, text: &str) -> String {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where a test keeps its results: SQLite files in a scratch directory, or databases on
/// a throwaway PostgreSQL server, so one test body checks both stores.
pub struct Dbs {
    pub dir: Scratch,
    server: Option<pg::PgServer>,
}

impl Dbs {
    pub fn sqlite(tag: &str) -> Dbs {
        Dbs { dir: Scratch::new(tag), server: None }
    }

    /// None only where PostgreSQL is not installed and CI is not set (said on stderr).
    pub fn postgres(tag: &str) -> Option<Dbs> {
        let server = pg::PgServer::start(tag)?;
        Some(Dbs { dir: Scratch::new(&format!("pg-{tag}")), server: Some(server) })
    }

    /// A new, empty database named `name`: a file path or a `postgresql://` URL, to pass
    /// as `--db`.
    pub fn db(&self, name: &str) -> PathBuf {
        match &self.server {
            None => self.dir.path(&format!("{name}.db")),
            Some(server) => PathBuf::from(server.create_database(name)),
        }
    }

    pub fn server(&self) -> Option<&pg::PgServer> {
        self.server.as_ref()
    }
}

/// The runs `schedlab list --json` shows; none while the database cannot be read yet
/// (a run that has not made it).
pub fn listed_runs(db: &std::path::Path) -> Vec<serde_json::Value> {
    let out = schedlab().args(["list", "--json", "--db"]).arg(db).timeout(Duration::from_secs(60)).output().unwrap();
    if out.status.code() != Some(0) {
        return Vec::new();
    }
    json_lines(&out.stdout)
}

/// The CPUs this process may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t of the right size, filled in by the kernel.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    assert_eq!(rc, 0, "sched_getaffinity: {}", std::io::Error::last_os_error());
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// The last CPU this process may use: the measured one in tests that pin, away from CPU 0's
/// housekeeping.
pub fn last_allowed_cpu() -> usize {
    *allowed_cpus().last().expect("a process may run on some CPU")
}

/// A busy loop (`sh -c 'while :; do :; done'`) on each of `cpus` at `nice`, killed and
/// reaped when dropped, so a failed assertion leaves none behind.
pub struct BusyLoops(Vec<std::process::Child>);

impl BusyLoops {
    pub fn start(cpus: &[usize], nice: i32) -> BusyLoops {
        BusyLoops(
            cpus.iter()
                .map(|cpu| {
                    std::process::Command::new("nice")
                        .args(["-n", &nice.to_string(), "taskset", "-c", &cpu.to_string()])
                        .args(["sh", "-c", "while :; do :; done"])
                        .stdin(std::process::Stdio::null())
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
