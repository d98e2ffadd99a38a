//! Where results live: a SQLite file (the default, ./schedlab.db) or a PostgreSQL
//! database named by a `postgresql://` URL, from `--db`, else `$SCHEDLAB_DB`.

use crate::error::{Error, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Debian's (and libpq's usual) socket directory: a URL without a host means the local
/// server, as it does for psql.
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

#[derive(Clone, Debug)]
pub enum Location {
    Sqlite(PathBuf),
    Postgres(Box<PgUrl>),
}

/// A parsed PostgreSQL URL, and how to show it without its password.
#[derive(Clone, Debug)]
pub struct PgUrl {
    pub config: postgres::Config,
    /// The URL as given, less any password.
    shown: String,
}

impl PgUrl {
    /// "host db.example.org port 5432" or "the socket in /run/postgresql": what a message
    /// names so the user knows which server answered (or did not).
    pub fn server_address(&self) -> String {
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        match self.config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => format!("host {h} port {port}"),
            Some(postgres::config::Host::Unix(dir)) => format!("the socket in {} (port {port})", dir.display()),
            None => "no host".into(),
        }
    }

    /// The URL as given, less any password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    pub fn user(&self) -> &str {
        self.config.get_user().unwrap_or_default()
    }

    pub fn dbname(&self) -> &str {
        self.config.get_dbname().unwrap_or_default()
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => write!(f, "{}", url.shown),
        }
    }
}

impl Location {
    /// `--db`, else `$SCHEDLAB_DB`, else `./schedlab.db`.
    pub fn resolve(flag: Option<&Path>) -> Result<Location> {
        if let Some(p) = flag {
            return Location::parse(p);
        }
        match std::env::var_os("SCHEDLAB_DB") {
            Some(p) if !p.is_empty() => Location::parse(Path::new(&p)),
            _ => Ok(Location::Sqlite(PathBuf::from("schedlab.db"))),
        }
    }

    /// A `postgresql://` or `postgres://` URL, else a SQLite file's path.
    pub fn parse(text: &Path) -> Result<Location> {
        let Some(url) = text.to_str().filter(|t| t.starts_with("postgresql://") || t.starts_with("postgres://")) else {
            return Ok(Location::Sqlite(text.to_path_buf()));
        };
        let shown = without_password(url);
        let form = "expected postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, with a socket directory as \
                    postgresql://USER@%2Fpath%2Fto%2Fdir/DATABASE or ?host=/path/to/dir";
        let mut config: postgres::Config =
            url.parse().map_err(|e| Error::usage(format!("cannot read the PostgreSQL URL {shown} ({e}): {form}")))?;
        if config.get_user().is_none_or(str::is_empty) {
            return Err(Error::usage(format!("the PostgreSQL URL {shown} names no user: {form}")));
        }
        if config.get_dbname().is_none_or(str::is_empty) {
            return Err(Error::usage(format!("the PostgreSQL URL {shown} names no database: {form}")));
        }
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            config.host_path(DEFAULT_SOCKET_DIR);
        }
        if config.get_password().is_none() {
            // As psql does: a password kept out of the URL (and out of shell history).
            if let Some(password) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
                config.password(password.as_encoded_bytes());
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("schedlab");
        }
        Ok(Location::Postgres(Box::new(PgUrl { config, shown })))
    }

    /// Where `run` writes a run's HTML report: beside a SQLite file; for a server, in the
    /// current directory, named after the database.
    pub fn report_path(&self, run_id: i64) -> PathBuf {
        match self {
            Location::Sqlite(path) => {
                let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                let stem = path.file_stem().map_or("schedlab".into(), |s| s.to_string_lossy().into_owned());
                dir.join(format!("{stem}-run-{run_id}.html"))
            }
            Location::Postgres(url) => {
                let name: String = url
                    .dbname()
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
                    .collect();
                PathBuf::from(format!("{name}-run-{run_id}.html"))
            }
        }
    }
}

/// The URL with `:password` taken out of its user part, so no message prints it.
fn without_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}@{host}{tail}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(text: &str) -> PgUrl {
        match Location::parse(Path::new(text)).unwrap() {
            Location::Postgres(url) => *url,
            other => panic!("{text} read as {other:?}"),
        }
    }

    #[test]
    fn urls_select_postgres_and_paths_sqlite() {
        assert!(matches!(Location::parse(Path::new("results.db")).unwrap(), Location::Sqlite(_)));
        assert!(matches!(Location::parse(Path::new("./postgresql:/x.db")).unwrap(), Location::Sqlite(_)));
        let url = pg("postgresql://lab:secret@db.example.org:6543/results");
        assert_eq!(url.shown(), "postgresql://lab@db.example.org:6543/results");
        assert_eq!((url.user(), url.dbname()), ("lab", "results"));
        assert_eq!(url.server_address(), "host db.example.org port 6543");
        let socket = pg("postgres://me@%2Ftmp%2Fpg/lab");
        assert_eq!(socket.server_address(), "the socket in /tmp/pg (port 5432)");
        let local = pg("postgresql://me@/lab");
        assert_eq!(local.server_address(), "the socket in /var/run/postgresql (port 5432)");
        let query = pg("postgresql://me@/lab?host=/srv/pg&port=5433");
        assert_eq!(query.server_address(), "the socket in /srv/pg (port 5433)");
    }

    #[test]
    fn bad_urls_are_usage_errors_that_say_the_form() {
        for bad in
            ["postgresql://me@host:port/db", "postgresql://host/db", "postgresql://me@host/", "postgres://me@h/db?x=1"]
        {
            let e = Location::parse(Path::new(bad)).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
            assert!(e.to_string().contains("postgresql://USER"), "{bad}: {e}");
        }
        let e = Location::parse(Path::new("postgresql://me:hunter2@host:x/db")).unwrap_err();
        assert!(!e.to_string().contains("hunter2"), "{e}");
    }
}
