//! A real, throwaway PostgreSQL server for the tests: Debian's `postgresql` package,
//! `initdb` into a temporary directory as the unprivileged `postgres` user (when the
//! tests run as root), listening only on a Unix socket in that directory (no TCP),
//! password authentication. Stopped and removed when dropped, also when a test fails.
//!
//! Without the package, the PostgreSQL tests skip, saying so; with `CI` set they fail.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

pub struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    /// The unprivileged user the server runs as when the tests run as root.
    owner: Option<(u32, u32)>,
    password: String,
}

/// The newest installed server's binaries: $SCHEDLAB_PG_BIN, else Debian's layout.
fn server_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SCHEDLAB_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// uid and gid of `postgres`, the server's own user.
fn postgres_user() -> Option<(u32, u32)> {
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: getpwnam returns a pointer to static storage or null; read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    // SAFETY: checked for null; the fields are plain integers.
    (!pw.is_null()).then(|| unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

/// Percent-encoding of a socket directory for the host part of a URL.
fn encode(path: &Path) -> String {
    path.to_string_lossy()
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

impl PgServer {
    /// Start a server for one test; None (after saying why) only outside CI on a machine
    /// without PostgreSQL installed.
    pub fn start(tag: &str) -> Option<PgServer> {
        let Some(bin) = server_bin() else {
            assert!(!in_ci(), "CI is set but PostgreSQL is not installed (.ci/run installs the postgresql package)");
            eprintln!("skipped: PostgreSQL is not installed (apt-get install postgresql), so {tag} ran on SQLite only");
            return None;
        };
        let root = unsafe { libc::geteuid() } == 0;
        let owner = if root {
            Some(postgres_user().expect("the postgresql package made a postgres user; it is missing"))
        } else {
            None
        };
        // In /tmp, not $TMPDIR: the server's user must reach it (root's own temporary
        // directory may be closed to it), and a socket's path must fit in 107 bytes.
        let dir = Path::new("/tmp").join(format!("schedlab-pg-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let password = format!("pw{:x}", std::process::id() as u64 * 7919 + tag.len() as u64);
        std::fs::write(dir.join("pwfile"), &password).unwrap();
        if let Some((uid, gid)) = owner {
            for p in [dir.clone(), dir.join("pwfile")] {
                std::os::unix::fs::chown(&p, Some(uid), Some(gid)).unwrap();
            }
        }
        let server = PgServer { dir, bin, owner, password };
        let data = server.dir.join("data");
        let pwfile = server.dir.join("pwfile");
        server.as_owner(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "--auth=scram-sha-256".as_ref(),
                format!("--pwfile={}", pwfile.display()).as_ref(),
                "--no-sync".as_ref(),
                "--encoding=UTF8".as_ref(),
                "--locale=C".as_ref(),
            ],
        );
        server.start_again();
        Some(server)
    }

    /// Run one of the server's programs as its owner; panics with its output on failure.
    fn as_owner(&self, program: &str, args: &[&std::ffi::OsStr]) -> std::process::Output {
        let exe = self.bin.join(program);
        let mut cmd = match self.owner {
            Some((uid, gid)) => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).arg("--clear-groups").arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let out = cmd.args(args).current_dir(&self.dir).output().expect("setpriv (util-linux) runs");
        assert!(
            out.status.success(),
            "{program} failed (PostgreSQL test server in {}): {}{}",
            self.dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Start (or start again after `stop`) and wait until it accepts connections.
    pub fn start_again(&self) {
        let data = self.dir.join("data");
        let log = self.dir.join("log");
        let options = format!("-c listen_addresses= -k {} -c fsync=off", self.dir.display());
        self.as_owner(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "-o".as_ref(),
                options.as_ref(),
                "start".as_ref(),
            ],
        );
    }

    /// Stop at once: connections are cut, as when a server goes away.
    pub fn stop(&self) {
        let data = self.dir.join("data");
        self.as_owner(
            "pg_ctl",
            &["-D".as_ref(), data.as_os_str(), "-m".as_ref(), "fast".as_ref(), "-w".as_ref(), "stop".as_ref()],
        );
    }

    pub fn password(&self) -> &str {
        &self.password
    }

    /// The URL of database `db` as the superuser, with the password.
    pub fn url(&self, db: &str) -> String {
        format!("postgresql://postgres:{}@{}/{db}", self.password, encode(&self.dir))
    }

    /// The same with another password (for the wrong-credentials test).
    pub fn url_with_password(&self, db: &str, password: &str) -> String {
        format!("postgresql://postgres:{password}@{}/{db}", encode(&self.dir))
    }

    /// A direct connection, to set a database up the way a test needs.
    pub fn connect(&self, db: &str) -> postgres::Client {
        let config: postgres::Config = self.url(db).parse().unwrap();
        let mut last = None;
        for _ in 0..50 {
            match config.connect(postgres::NoTls) {
                Ok(c) => return c,
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("cannot connect to the test server in {}: {last:?}", self.dir.display());
    }

    /// Make an empty database; returns its URL.
    pub fn create_database(&self, name: &str) -> String {
        self.connect("postgres").batch_execute(&format!("CREATE DATABASE \"{name}\"")).unwrap();
        self.url(name)
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        // Immediate: no checkpoint for a database about to be removed.
        let exe = self.bin.join("pg_ctl");
        let mut cmd = match self.owner {
            Some((uid, gid)) => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).arg("--clear-groups").arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let _ = cmd.arg("-D").arg(&data).args(["-m", "immediate", "-w", "stop"]).output();
        // Should pg_ctl have failed, the postmaster's pid is the first line of its file.
        let pid = std::fs::read_to_string(data.join("postmaster.pid")).ok();
        let pid = pid.and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<i32>().ok()));
        if let Some(pid) =
            pid.filter(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "postgres"))
        {
            // SAFETY: a plain kill of the server this guard started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
