//! The results store: one SQLite file (rusqlite, bundled SQLite) in WAL mode, so a
//! reader never blocks the run that writes, and with a busy timeout, so two runs can
//! share one database. Each finished trial is its own transaction: a crash or a full disk
//! loses at most the trial in flight, never a stored one.
//!
//! The schema is versioned by `PRAGMA user_version` and upgraded by the migrations below,
//! in order. A database from a newer schedlab (a higher version) is refused, never
//! rewritten; so is any SQLite file that is not schedlab's (`PRAGMA application_id`).

pub mod legacy;

use crate::error::{describe_io, Error, Result};
use crate::model::{Family, Outcome, TrialSpec, TrialStatus};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension};
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// "SCHL": marks the file as schedlab's.
const APPLICATION_ID: i64 = 0x5343_484C;

/// One schema upgrade: SQL, then (optionally) a pass over the data that SQL cannot do.
struct Migration {
    sql: &'static str,
    data: Option<fn(&rusqlite::Transaction) -> rusqlite::Result<()>>,
}

/// Each entry upgrades the schema by one version; never edit one that has shipped.
const MIGRATIONS: &[Migration] = &[
    Migration { sql: V1_RUNS_AND_TRIALS, data: None },
    // 2 (schedlab 0.2): each trial's typed spec and outcome, replacing the untyped
    // figures (kept, never rewritten: they are what 0.1.0 wrote).
    Migration {
        sql: "ALTER TABLE trials ADD COLUMN spec TEXT; ALTER TABLE trials ADD COLUMN outcome TEXT;",
        data: Some(convert_v1_trials),
    },
];

const V1_RUNS_AND_TRIALS: &str =
    // 1: runs and their trials.
    "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL UNIQUE,
        suite_name TEXT NOT NULL,
        suite_text TEXT NOT NULL,
        options TEXT NOT NULL,
        started TEXT NOT NULL,
        ended TEXT,
        status TEXT NOT NULL,
        tool_version TEXT NOT NULL,
        machine TEXT NOT NULL,
        warnings TEXT NOT NULL,
        planned INTEGER NOT NULL,
        pid INTEGER
    );
    CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        experiment INTEGER NOT NULL,
        family TEXT NOT NULL,
        repeat INTEGER NOT NULL,
        params TEXT NOT NULL,
        figures TEXT,
        histogram BLOB,
        status TEXT NOT NULL,
        reason TEXT,
        started TEXT NOT NULL,
        elapsed_s REAL NOT NULL,
        UNIQUE (run_id, seq)
    );";

/// Fill the spec and outcome of every trial stored by 0.1.0 from its params and figures.
fn convert_v1_trials(tx: &rusqlite::Transaction) -> rusqlite::Result<()> {
    let mut read =
        tx.prepare("SELECT id, family, params, figures, histogram, status FROM trials WHERE outcome IS NULL")?;
    let rows = read
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<Vec<u8>>>(4)?,
                r.get::<_, String>(5)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut write = tx.prepare("UPDATE trials SET spec = ?1, outcome = ?2 WHERE id = ?3")?;
    for (id, family, params, figures, histogram, status) in rows {
        let Some(family) = Family::parse(&family) else { continue };
        let params = to_map(Some(params));
        let spec = crate::model::options::spec_from_params(family, &params);
        let outcome = legacy_outcome(family, &status, figures, histogram.as_deref());
        write.execute(params![spec.map(|s| json_text(&s)), outcome.map(|o| outcome_text(&o).0), id])?;
    }
    Ok(())
}

fn legacy_outcome(family: Family, status: &str, figures: Option<String>, histogram: Option<&[u8]>) -> Option<Outcome> {
    let figures: Json = serde_json::from_str(&figures?).ok()?;
    (status == "ok").then(|| legacy::outcome(family, &figures, histogram.map(decode_histogram))).flatten()
}

fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// An outcome as stored: JSON, with a latency histogram taken out into its compact BLOB.
fn outcome_text(outcome: &Outcome) -> (String, Option<Vec<u8>>) {
    match outcome {
        Outcome::Latency(l) if !l.histogram.is_empty() => {
            let mut without = l.clone();
            let buckets = std::mem::take(&mut without.histogram);
            (json_text(&Outcome::Latency(without)), Some(encode_histogram(&buckets)))
        }
        other => (json_text(other), None),
    }
}

/// The stored outcome back, with its histogram put back in.
fn outcome_from_text(text: &str, histogram: Option<&[u8]>) -> Option<Outcome> {
    let mut outcome: Outcome = serde_json::from_str(text).ok()?;
    if let (Outcome::Latency(l), Some(bytes)) = (&mut outcome, histogram) {
        l.histogram = decode_histogram(bytes);
    }
    Some(outcome)
}

fn to_map(text: Option<String>) -> Map<String, Json> {
    match to_json(text) {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Where results go: `--db`, else `$SCHEDLAB_DB`, else `./schedlab.db`.
pub fn resolve_path(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os("SCHEDLAB_DB") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from("schedlab.db"),
    }
}

/// A run as stored. `machine`, `options` and `warnings` are JSON as captured (the run
/// may come from another machine or schedlab version, so they are kept verbatim).
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub id: i64,
    pub uuid: String,
    pub suite_name: String,
    pub suite_text: String,
    pub options: Json,
    pub started: String,
    pub ended: Option<String>,
    /// running, interrupted, finished
    pub status: String,
    pub tool_version: String,
    pub machine: Json,
    pub warnings: Json,
    pub planned: i64,
    pub pid: Option<i64>,
}

/// One trial as stored: where it sits in its run, the parameters the suite gave it, what
/// ran (its spec) and what was measured (its outcome, for an ok trial).
#[derive(Clone, Debug, PartialEq)]
pub struct TrialRecord {
    pub seq: i64,
    pub experiment: i64,
    pub family: Family,
    pub repeat: i64,
    /// The suite's keys and values for this trial, one value each.
    pub params: Map<String, Json>,
    /// None only for a trial whose stored parameters no longer make a spec.
    pub spec: Option<TrialSpec>,
    pub outcome: Option<Outcome>,
    pub status: TrialStatus,
    pub started: String,
    pub elapsed_s: f64,
}

impl TrialRecord {
    pub fn is_ok(&self) -> bool {
        self.status.is_ok()
    }
}

/// One line of `schedlab list`.
#[derive(Clone, Debug)]
pub struct RunSummary {
    pub run: RunRecord,
    pub ok: i64,
    pub not_ok: i64,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The file's schema version (older than ours only for a file opened read-only).
    version: i64,
}

/// How a command uses the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// list, show, export: never writes, so a database the user may only read works.
    Read,
    /// delete, resume: the database must exist.
    Write,
    /// run, import: made if missing.
    Create,
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

fn to_json(text: Option<String>) -> Json {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Json::Null)
}

impl Store {
    /// Open (and with `Access::Create`, make) the database at `path`, upgrading its schema.
    pub fn open(path: &Path, access: Access) -> Result<Store> {
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
        let mut store = Store { conn, path: path.to_path_buf(), version: SCHEMA_VERSION };
        match store.check_and_migrate(access == Access::Read) {
            Err(_) if access == Access::Read => Self::open_immutable(path),
            other => other.map(|_| store),
        }
    }

    /// A WAL database in a directory this user cannot write (no `-shm` file can be made)
    /// can still be read as an immutable file: what a user with read-only access needs.
    fn open_immutable(path: &Path) -> Result<Store> {
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
        let mut store = Store { conn, path: path.to_path_buf(), version: SCHEMA_VERSION };
        store.check_and_migrate(true)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, context: &str, e: rusqlite::Error) -> Error {
        db_error(&self.path, context, e)
    }

    fn pragma_i64(&self, name: &str) -> Result<i64> {
        self.conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0)).map_err(|e| self.err("reading the schema", e))
    }

    fn check_and_migrate(&mut self, read_only: bool) -> Result<()> {
        let app_id = self.pragma_i64("application_id")?;
        let tables: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| self.err("reading the schema", e))?;
        if app_id != APPLICATION_ID && (app_id != 0 || tables > 0) {
            return Err(Error::env(format!(
                "{} is a SQLite database but not a schedlab one; it was left untouched. Use --db to choose another file",
                self.path.display()
            )));
        }
        let version = self.pragma_i64("user_version")?;
        if version > SCHEMA_VERSION {
            return Err(self.newer(version));
        }
        self.version = version;
        if read_only && version == 0 {
            // Made a moment ago by a run that has not written its schema yet: it holds
            // nothing, and reads as an empty database.
            let conn = Connection::open_in_memory().map_err(|e| self.err("opening", e))?;
            for migration in MIGRATIONS {
                conn.execute_batch(migration.sql).map_err(|e| self.err("opening", e))?;
            }
            self.conn = conn;
            self.version = SCHEMA_VERSION;
            return Ok(());
        }
        if read_only {
            // An older file is read as it is (its trials converted as they are read):
            // a user with read access only must still see months of results.
            return Ok(());
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
            return Ok(());
        }
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| db_error(&path, "upgrading the schema", e))?;
        // Another process may have upgraded it while we waited for the lock.
        let now: i64 =
            tx.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| db_error(&path, "upgrading", e))?;
        for (index, migration) in MIGRATIONS.iter().enumerate().skip(now.max(0) as usize) {
            tx.execute_batch(migration.sql).map_err(|e| db_error(&path, "upgrading the schema", e))?;
            if let Some(data) = migration.data {
                data(&tx).map_err(|e| db_error(&path, "upgrading the stored trials", e))?;
            }
            tx.pragma_update(None, "user_version", index as i64 + 1).map_err(|e| db_error(&path, "upgrading", e))?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID).map_err(|e| db_error(&path, "upgrading", e))?;
        tx.commit().map_err(|e| db_error(&path, "upgrading the schema", e))?;
        self.version = SCHEMA_VERSION;
        Ok(())
    }

    fn newer(&self, version: i64) -> Error {
        Error::env(format!(
            "{} was written by a newer schedlab (schema version {version}; this schedlab {} knows up to {SCHEMA_VERSION}): \
             upgrade schedlab to read it; the file was left untouched",
            self.path.display(),
            env!("CARGO_PKG_VERSION")
        ))
    }

    /// Store a new run; returns its id.
    pub fn insert_run(&mut self, run: &RunRecord) -> Result<i64> {
        insert_run_row(&self.conn, run, run.pid).map_err(|e| self.err("storing the run", e))
    }

    /// Store several new runs in one transaction (the two sides of an A/B session): all
    /// of them or none; returns their ids in order.
    pub fn insert_runs(&mut self, runs: &[RunRecord]) -> Result<Vec<i64>> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db_error(&path, "storing the runs", e))?;
        let mut ids = Vec::with_capacity(runs.len());
        for run in runs {
            ids.push(insert_run_row(&tx, run, run.pid).map_err(|e| db_error(&path, "storing the runs", e))?);
        }
        tx.commit().map_err(|e| db_error(&path, "storing the runs", e))?;
        Ok(ids)
    }

    /// Store one finished trial, in its own transaction.
    pub fn insert_trial(&mut self, run_id: i64, t: &TrialRecord) -> Result<()> {
        insert_trial_row(&self.conn, run_id, t).map_err(|e| self.err("storing a trial", e))
    }

    pub fn set_run_state(&mut self, run_id: i64, status: &str, ended: Option<&str>, pid: Option<i64>) -> Result<()> {
        let path = self.path.clone();
        self.conn
            .execute(
                "UPDATE runs SET status = ?1, ended = ?2, pid = ?3 WHERE id = ?4",
                params![status, ended, pid, run_id],
            )
            .map_err(|e| db_error(&path, "updating the run", e))?;
        Ok(())
    }

    fn run_from_row(row: &rusqlite::Row) -> rusqlite::Result<RunRecord> {
        Ok(RunRecord {
            id: row.get("id")?,
            uuid: row.get("uuid")?,
            suite_name: row.get("suite_name")?,
            suite_text: row.get("suite_text")?,
            options: to_json(row.get("options")?),
            started: row.get("started")?,
            ended: row.get("ended")?,
            status: row.get("status")?,
            tool_version: row.get("tool_version")?,
            machine: to_json(row.get("machine")?),
            warnings: to_json(row.get("warnings")?),
            planned: row.get("planned")?,
            pid: row.get("pid")?,
        })
    }

    /// The run with this id, or a clear error naming the runs that exist.
    pub fn run(&self, id: i64) -> Result<RunRecord> {
        let found = self
            .conn
            .query_row("SELECT * FROM runs WHERE id = ?1", [id], Self::run_from_row)
            .optional()
            .map_err(|e| self.err("reading runs", e))?;
        found.ok_or_else(|| {
            Error::usage(format!(
                "there is no run {id} in {}: `schedlab list` shows the runs it holds",
                self.path.display()
            ))
        })
    }

    /// Resolve a RUN argument: a number or `latest`.
    pub fn resolve_run(&self, text: &str) -> Result<i64> {
        if text == "latest" || text == "last" {
            let latest: Option<i64> = self
                .conn
                .query_row("SELECT max(id) FROM runs", [], |r| r.get(0))
                .map_err(|e| self.err("reading runs", e))?;
            return latest.ok_or_else(|| Error::usage(format!("{} holds no runs yet", self.path.display())));
        }
        let id: i64 = text.trim().parse().map_err(|_| {
            Error::usage(format!("'{text}' is not a run id: give the number `schedlab list` shows, or `latest`"))
        })?;
        self.run(id).map(|r| r.id)
    }

    pub fn runs(&self) -> Result<Vec<RunSummary>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT runs.*, \
                 (SELECT count(*) FROM trials t WHERE t.run_id = runs.id AND t.status = 'ok') AS ok, \
                 (SELECT count(*) FROM trials t WHERE t.run_id = runs.id AND t.status != 'ok') AS not_ok \
                 FROM runs ORDER BY id",
            )
            .map_err(|e| self.err("reading runs", e))?;
        let rows = stmt
            .query_map([], |row| {
                Ok(RunSummary { run: Self::run_from_row(row)?, ok: row.get("ok")?, not_ok: row.get("not_ok")? })
            })
            .map_err(|e| self.err("reading runs", e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.err("reading runs", e))
    }

    pub fn trials(&self, run_id: i64) -> Result<Vec<TrialRecord>> {
        // A file of schema 1 (opened read-only) has no spec and outcome yet.
        let typed = if self.version >= 2 { "spec, outcome" } else { "NULL, NULL" };
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT seq, experiment, family, repeat, params, figures, histogram, status, reason, started, \
                 elapsed_s, {typed} FROM trials WHERE run_id = ?1 ORDER BY seq"
            ))
            .map_err(|e| self.err("reading trials", e))?;
        let rows = stmt
            .query_map([run_id], |row| {
                let family_text: String = row.get(2)?;
                let family = Family::parse(&family_text).ok_or_else(|| {
                    let why = format!("unknown family '{family_text}'");
                    rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, why.into())
                })?;
                let params = to_map(row.get(4)?);
                let histogram: Option<Vec<u8>> = row.get(6)?;
                let status: String = row.get(7)?;
                let spec = row
                    .get::<_, Option<String>>(11)?
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .or_else(|| crate::model::options::spec_from_params(family, &params));
                let outcome = match row.get::<_, Option<String>>(12)? {
                    Some(text) => outcome_from_text(&text, histogram.as_deref()),
                    None => legacy_outcome(family, &status, row.get(5)?, histogram.as_deref()),
                };
                Ok(TrialRecord {
                    seq: row.get(0)?,
                    experiment: row.get(1)?,
                    family,
                    repeat: row.get(3)?,
                    params,
                    spec,
                    outcome,
                    status: TrialStatus::from_parts(&status, row.get(8)?),
                    started: row.get(9)?,
                    elapsed_s: row.get(10)?,
                })
            })
            .map_err(|e| self.err("reading trials", e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.err("reading trials", e))
    }

    /// The sequence numbers already stored for a run (what `--resume` skips).
    pub fn stored_seqs(&self, run_id: i64) -> Result<Vec<i64>> {
        let mut stmt =
            self.conn.prepare("SELECT seq FROM trials WHERE run_id = ?1").map_err(|e| self.err("reading trials", e))?;
        let rows = stmt.query_map([run_id], |r| r.get(0)).map_err(|e| self.err("reading trials", e))?;
        rows.collect::<rusqlite::Result<Vec<i64>>>().map_err(|e| self.err("reading trials", e))
    }

    pub fn delete_run(&mut self, id: i64) -> Result<()> {
        let path = self.path.clone();
        let tx = self.conn.transaction().map_err(|e| db_error(&path, "deleting", e))?;
        tx.execute("DELETE FROM trials WHERE run_id = ?1", [id]).map_err(|e| db_error(&path, "deleting", e))?;
        tx.execute("DELETE FROM runs WHERE id = ?1", [id]).map_err(|e| db_error(&path, "deleting", e))?;
        tx.commit().map_err(|e| db_error(&path, "deleting", e))
    }

    /// How many trials a run has stored.
    pub fn trial_count(&self, run_id: i64) -> Result<i64> {
        self.conn
            .query_row("SELECT count(*) FROM trials WHERE run_id = ?1", [run_id], |r| r.get(0))
            .map_err(|e| self.err("reading trials", e))
    }

    pub fn run_by_uuid(&self, uuid: &str) -> Result<Option<i64>> {
        self.conn
            .query_row("SELECT id FROM runs WHERE uuid = ?1", [uuid], |r| r.get(0))
            .optional()
            .map_err(|e| self.err("reading runs", e))
    }

    /// Store a whole run with its trials in one transaction (import): all or nothing.
    pub fn insert_run_with_trials(&mut self, run: &RunRecord, trials: &[TrialRecord]) -> Result<i64> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| db_error(&path, "importing", e))?;
        // An imported run was made by a process elsewhere: no local pid.
        let id = insert_run_row(&tx, run, None).map_err(|e| db_error(&path, "importing a run", e))?;
        for t in trials {
            insert_trial_row(&tx, id, t).map_err(|e| db_error(&path, "importing a trial", e))?;
        }
        tx.commit().map_err(|e| db_error(&path, "importing", e))?;
        Ok(id)
    }
}

fn insert_run_row(conn: &Connection, run: &RunRecord, pid: Option<i64>) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO runs (uuid, suite_name, suite_text, options, started, ended, status, tool_version, machine, \
         warnings, planned, pid) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            run.uuid,
            run.suite_name,
            run.suite_text,
            run.options.to_string(),
            run.started,
            run.ended,
            run.status,
            run.tool_version,
            run.machine.to_string(),
            run.warnings.to_string(),
            run.planned,
            pid,
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

fn insert_trial_row(conn: &Connection, run_id: i64, t: &TrialRecord) -> rusqlite::Result<()> {
    let (outcome, histogram) = match &t.outcome {
        Some(o) => {
            let (text, histogram) = outcome_text(o);
            (Some(text), histogram)
        }
        None => (None, None),
    };
    conn.prepare_cached(
        "INSERT INTO trials (run_id, seq, experiment, family, repeat, params, spec, outcome, histogram, status, \
         reason, started, elapsed_s) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        run_id,
        t.seq,
        t.experiment,
        t.family.as_str(),
        t.repeat,
        json_text(&t.params),
        t.spec.as_ref().map(json_text),
        outcome,
        histogram,
        t.status.label(),
        t.status.reason(),
        t.started,
        t.elapsed_s,
    ])?;
    Ok(())
}

/// LEB128 varints: each bucket as (value delta from the previous bucket, count). A
/// latency histogram of a few hundred occupied buckets takes a few hundred bytes.
pub fn encode_histogram(buckets: &[(u64, u64)]) -> Vec<u8> {
    fn push(out: &mut Vec<u8>, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut out = Vec::with_capacity(buckets.len() * 3);
    let mut previous = 0;
    for &(value, count) in buckets {
        push(&mut out, value.wrapping_sub(previous));
        push(&mut out, count);
        previous = value;
    }
    out
}

pub fn decode_histogram(bytes: &[u8]) -> Vec<(u64, u64)> {
    let mut numbers = Vec::new();
    let (mut v, mut shift) = (0u64, 0u32);
    for &b in bytes {
        v |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
        if b & 0x80 == 0 {
            numbers.push(v);
            v = 0;
            shift = 0;
        } else {
            shift += 7;
        }
    }
    let mut out = Vec::with_capacity(numbers.len() / 2);
    let mut previous = 0u64;
    for pair in numbers.chunks_exact(2) {
        previous = previous.wrapping_add(pair[0]);
        out.push((previous, pair[1]));
    }
    out
}

/// A random version-4 UUID, the run's identity across databases.
pub fn new_uuid() -> String {
    let mut b: [u8; 16] = crate::sys::random::bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// Now, as RFC 3339 UTC with milliseconds: "2026-11-21T10:04:05.123Z".
pub fn now_utc() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_round_trip() {
        let buckets = vec![(0, 1), (127, 128), (128, 1), (1_000_000, 5), (u64::MAX / 2, 7)];
        assert_eq!(decode_histogram(&encode_histogram(&buckets)), buckets);
        assert!(encode_histogram(&[(1000, 3), (1001, 4)]).len() <= 5);
    }

    #[test]
    fn uuids_are_v4_and_distinct() {
        let (a, b) = (new_uuid(), new_uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }

    #[test]
    fn timestamps_look_like_rfc3339() {
        let t = now_utc();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z') && &t[10..11] == "T", "{t}");
    }
}
