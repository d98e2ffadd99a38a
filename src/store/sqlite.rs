//! The embedded store: one SQLite file (rusqlite, bundled SQLite) in WAL mode, so a
//! reader never blocks the run that writes, and with a busy timeout, so two runs can
//! share one database. The schema version is `PRAGMA user_version`; the file is marked
//! as schedlab's by `PRAGMA application_id`.

use super::backend::{Backend, SqlValue};
use super::{migrate, Access, MIGRATIONS, SCHEMA_VERSION};
use crate::error::{describe_io, Error, Result};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// "SCHL": marks the file as schedlab's.
const APPLICATION_ID: i64 = 0x5343_484C;

pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
    shown: String,
}

impl rusqlite::ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            SqlValue::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            SqlValue::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            SqlValue::Real(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            SqlValue::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            SqlValue::Blob(v) => ToSqlOutput::Borrowed(ValueRef::Blob(v)),
        })
    }
}

fn value_of(v: ValueRef) -> SqlValue {
    match v {
        ValueRef::Null => SqlValue::Null,
        ValueRef::Integer(i) => SqlValue::Int(i),
        ValueRef::Real(f) => SqlValue::Real(f),
        ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
    }
}

/// A database error in words a user can act on.
fn db_error(path: &Path, context: &str, e: rusqlite::Error) -> Error {
    let where_ = path.display();
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        let detail = msg.clone().unwrap_or_else(|| f.to_string());
        return match f.code {
            ErrorCode::DiskFull => Error::env(format!(
                "{context}: the disk holding {where_} is full; what was stored before stays valid. Free some space \
                 and continue with `schedlab run --resume RUN`"
            )),
            ErrorCode::NotADatabase => Error::env(format!(
                "{where_} is not a SQLite database or is corrupt ({detail}); it was left untouched. Use --db to \
                 choose another file"
            )),
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Error::env(format!(
                "{context}: {where_} stayed locked by another process for longer than the busy timeout"
            )),
            ErrorCode::ReadOnly => Error::env(format!(
                "{context}: {where_} cannot be written ({detail}): check the permissions of the file and its directory"
            )),
            ErrorCode::CannotOpen | ErrorCode::PermissionDenied => Error::env(format!(
                "cannot open {where_} ({detail}): check that its directory exists and is writable, or use --db"
            )),
            ErrorCode::DatabaseCorrupt => Error::env(format!(
                "{where_} is corrupt ({detail}); it was left untouched. Use --db to choose another file"
            )),
            _ => Error::env(format!("{context}: {where_}: {detail}")),
        };
    }
    Error::env(format!("{context}: {where_}: {e}"))
}

impl Backend for Sqlite {
    fn execute(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<u64> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(context, e))?;
        let changed = stmt.execute(rusqlite::params_from_iter(params)).map_err(|e| self.err(context, e))?;
        Ok(changed as u64)
    }

    fn query(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(context, e))?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params)).map_err(|e| self.err(context, e))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(context, e))? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(value_of(row.get_ref(i).map_err(|e| self.err(context, e))?));
            }
            out.push(values);
        }
        Ok(out)
    }

    fn execute_batch(&self, context: &str, sql: &str) -> Result<()> {
        self.conn.execute_batch(sql).map_err(|e| self.err(context, e))
    }

    fn begin(&self, context: &str) -> Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(|e| self.err(context, e))
    }

    fn commit(&self, context: &str) -> Result<()> {
        self.conn.execute_batch("COMMIT").map_err(|e| self.err(context, e))
    }

    fn rollback(&self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

impl Sqlite {
    /// Open (and with `Access::Create`, make) the database at `path`, upgrading its
    /// schema; returns it and its schema version (older than ours only when read-only).
    pub fn open(path: &Path, access: Access) -> Result<(Sqlite, i64)> {
        let create = access == Access::Create;
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(Error::env(format!("{} is a directory, not a results database", path.display())))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => {
                return Err(Error::env(format!(
                    "no results database at {}: run `schedlab run` first, or name one with --db or SCHEDLAB_DB",
                    path.display()
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::env(format!("cannot read {}: {}", path.display(), describe_io(&e)))),
        }
        let mut flags = match access {
            Access::Read => OpenFlags::SQLITE_OPEN_READ_ONLY,
            Access::Write => OpenFlags::SQLITE_OPEN_READ_WRITE,
            Access::Create => OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        };
        flags |= OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| db_error(path, "opening", e))?;
        conn.busy_timeout(Duration::from_secs(60)).map_err(|e| db_error(path, "opening", e))?;
        let mut store = Sqlite { conn, path: path.to_path_buf(), shown: path.display().to_string() };
        match store.check_and_migrate(access == Access::Read) {
            Err(_) if access == Access::Read => Self::open_immutable(path),
            Ok(version) => Ok((store, version)),
            Err(e) => Err(e),
        }
    }

    /// A WAL database in a directory this user cannot write (no `-shm` file can be made)
    /// can still be read as an immutable file: what a user with read-only access needs.
    fn open_immutable(path: &Path) -> Result<(Sqlite, i64)> {
        let escaped: String = path
            .to_string_lossy()
            .chars()
            .map(|c| match c {
                '%' => "%25".to_string(),
                '?' => "%3f".to_string(),
                '#' => "%23".to_string(),
                c => c.to_string(),
            })
            .collect();
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(format!("file:{escaped}?immutable=1"), flags)
            .map_err(|e| db_error(path, "opening", e))?;
        let mut store = Sqlite { conn, path: path.to_path_buf(), shown: path.display().to_string() };
        let version = store.check_and_migrate(true)?;
        Ok((store, version))
    }

    fn err(&self, context: &str, e: rusqlite::Error) -> Error {
        db_error(&self.path, context, e)
    }

    fn pragma_i64(&self, name: &str) -> Result<i64> {
        self.conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0)).map_err(|e| self.err("reading the schema", e))
    }

    fn check_and_migrate(&mut self, read_only: bool) -> Result<i64> {
        // One statement, so one snapshot: read apart, another run making this new file could
        // commit its schema between the reads, and a schedlab file would look like a foreign
        // one (tables, and an application id still 0).
        // A read that meets another run switching the same new file to WAL can fail with
        // an I/O error while the log and its index are being made (1 round in about 200 of
        // the unit test below on a loaded machine): read again, for a second at most.
        let started = std::time::Instant::now();
        let (app_id, tables, version): (i64, i64, i64) = loop {
            let read = self.conn.query_row(
                "SELECT (SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_master), \
                 (SELECT user_version FROM pragma_user_version)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            );
            match read {
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if matches!(f.code, ErrorCode::SystemIoFailure | ErrorCode::DatabaseBusy)
                        && started.elapsed() < Duration::from_secs(1) =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => break other.map_err(|e| self.err("reading the schema", e))?,
            }
        };
        if app_id != APPLICATION_ID && (app_id != 0 || tables > 0) {
            return Err(Error::env(format!(
                "{} is a SQLite database but not a schedlab one; it was left untouched. Use --db to choose another file",
                self.path.display()
            )));
        }
        if version > SCHEMA_VERSION {
            return Err(super::newer(&self.shown, version, "the file"));
        }
        if read_only && version == 0 {
            // Made a moment ago by a run that has not written its schema yet: it holds
            // nothing, and reads as an empty database.
            let conn = Connection::open_in_memory().map_err(|e| self.err("opening", e))?;
            for migration in MIGRATIONS {
                conn.execute_batch(migration.sql).map_err(|e| self.err("opening", e))?;
            }
            self.conn = conn;
            return Ok(SCHEMA_VERSION);
        }
        if read_only {
            // An older file is read as it is (its trials converted as they are read):
            // a user with read access only must still see months of results.
            return Ok(version);
        }
        self.conn.pragma_update(None, "foreign_keys", "ON").map_err(|e| self.err("opening", e))?;
        // WAL lets `list` read while a run writes; it is a property of the file, set once.
        // Switching a new file to WAL needs it to itself: another run opening the same new
        // file at the same moment gets SQLITE_BUSY without the busy handler, so wait here.
        let started = std::time::Instant::now();
        let mode: String = loop {
            match self.conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)) {
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                        && started.elapsed() < Duration::from_secs(60) =>
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => break other.map_err(|e| self.err("switching to WAL mode", e))?,
            }
        };
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::env(format!(
                "{} cannot use write-ahead logging (journal mode stayed '{mode}'); put the database on a local \
                 filesystem",
                self.path.display()
            )));
        }
        if version == SCHEMA_VERSION {
            return Ok(version);
        }
        self.begin("upgrading the schema")?;
        let upgraded = (|| {
            // Another process may have upgraded it while we waited for the lock.
            let now = self.pragma_i64("user_version")?;
            migrate(self, now)?;
            let set = |name: &str, value: i64| {
                self.conn.pragma_update(None, name, value).map_err(|e| self.err("upgrading the schema", e))
            };
            set("user_version", SCHEMA_VERSION)?;
            set("application_id", APPLICATION_ID)?;
            self.commit("upgrading the schema")
        })();
        if upgraded.is_err() {
            self.rollback();
        }
        upgraded.map(|_| SCHEMA_VERSION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runs that start on one new file at the same moment both make, or wait for, its
    /// schema, and neither takes the other's half-made file for a foreign database.
    #[test]
    fn two_openers_of_one_new_file_both_get_a_schedlab_database() {
        // Removed when dropped, a failed assertion's unwinding included.
        let dir = crate::families::workload::kernel::WorkDir::create(None).unwrap();
        for round in 0..200 {
            let path = dir.path().join(format!("r{round}.db"));
            let gate = std::sync::Arc::new(std::sync::Barrier::new(2));
            let openers: Vec<_> = (0..2)
                .map(|_| {
                    let (path, gate) = (path.clone(), gate.clone());
                    std::thread::spawn(move || {
                        gate.wait();
                        Sqlite::open(&path, Access::Create).map(|(_, version)| version).map_err(|e| e.to_string())
                    })
                })
                .collect();
            for opener in openers {
                assert_eq!(opener.join().unwrap(), Ok(SCHEMA_VERSION), "round {round}");
            }
        }
    }
}
