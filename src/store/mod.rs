//! The results store: runs and their trials, in a SQLite file (the embedded default,
//! `sqlite`) or a PostgreSQL database (`pg`), behind one interface. Each finished trial
//! is its own transaction: a crash, a full disk or a lost server loses at most the trial
//! in flight, never a stored one.
//!
//! Data in and out of the store lives here too: export and import (`export`), the 1992
//! NCAR report's table format (`ncar`) and the seed documents' reference sets, one file a
//! seed (`seeds`).
//!
//! All the store's SQL is here, once, in SQLite's dialect; the PostgreSQL backend
//! translates it (`backend::postgres_dialect`). The schema is versioned and upgraded by
//! the migrations below, in order. A database from a newer schedlab (a higher version)
//! is refused, never rewritten; so is a database that is not schedlab's.

mod backend;
pub mod export;
pub mod group;
pub mod legacy;
mod location;
mod pg;
pub mod seeds;
mod sqlite;
mod timestamp;

use crate::error::{Error, Result};
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell::Cell;
use crate::model::run::RunOptions;
use crate::model::TrialStatus;
use crate::sys::machine::StoredMachine;
use backend::{Backend, SqlValue, StoredRow};
pub use location::Location;
pub use timestamp::now_utc;

/// One schema upgrade: SQL, then (optionally) a pass over the data that SQL cannot do.
struct Migration {
    sql: &'static str,
    data: Option<fn(&dyn Backend) -> Result<()>>,
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
fn convert_v1_trials(db: &dyn Backend) -> Result<()> {
    const CONTEXT: &str = "upgrading the stored trials";
    let rows = db.query(
        CONTEXT,
        "SELECT id, family, params, figures, histogram, status FROM trials WHERE outcome IS NULL",
        &[],
    )?;
    for values in rows {
        let row = StoredRow { values, source: "the trials to upgrade" };
        let Some(family) = Family::parse(&row.text(1)?) else { continue };
        let params = to_cell(Some(row.text(2)?));
        let spec = crate::families::spec_from_params(family, &params);
        let outcome = legacy_outcome(family, &row.text(5)?, row.opt_text(3)?, row.opt_blob(4)?.as_deref());
        db.execute(
            CONTEXT,
            "UPDATE trials SET spec = ?1, outcome = ?2 WHERE id = ?3",
            &[spec.map(|s| to_json(&s)).into(), outcome.map(|o| outcome_text(&o).0).into(), row.int(0)?.into()],
        )?;
    }
    Ok(())
}

/// Run the migrations after `from`, inside the caller's transaction (which also records
/// the new version, as its engine keeps it).
fn migrate(db: &dyn Backend, from: i64) -> Result<()> {
    for migration in MIGRATIONS.iter().skip(from.max(0) as usize) {
        db.execute_batch("upgrading the schema", migration.sql)?;
        if let Some(data) = migration.data {
            data(db)?;
        }
    }
    Ok(())
}

/// The refusal of a database written by a newer schedlab.
fn newer(shown: &str, version: i64, what: &str) -> Error {
    Error::env(format!(
        "{shown} was written by a newer schedlab (schema version {version}; this schedlab {} knows up to \
         {SCHEMA_VERSION}): upgrade schedlab to read it; {what} was left untouched",
        env!("CARGO_PKG_VERSION")
    ))
}

fn legacy_outcome(family: Family, status: &str, figures: Option<String>, histogram: Option<&[u8]>) -> Option<Outcome> {
    // The 0.1.0 figures are free-form JSON, the legacy reader's to read.
    let figures: serde_json::Value = serde_json::from_str(&figures?).ok()?;
    (status == "ok").then(|| legacy::outcome(family, &figures, histogram.map(decode_histogram))).flatten()
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// An outcome as stored: JSON, with a histogram (a latency run's) taken out into its
/// compact BLOB.
fn outcome_text(outcome: &Outcome) -> (String, Option<Vec<u8>>) {
    let mut without = outcome.clone();
    match without.histogram_mut().filter(|h| !h.is_empty()) {
        Some(histogram) => {
            let buckets = std::mem::take(histogram);
            (to_json(&without), Some(encode_histogram(&buckets)))
        }
        None => (to_json(outcome), None),
    }
}

/// The stored outcome back, with its histogram put back in.
fn outcome_from_text(text: &str, histogram: Option<&[u8]>) -> Option<Outcome> {
    let mut outcome: Outcome = serde_json::from_str(text).ok()?;
    if let (Some(kept), Some(bytes)) = (outcome.histogram_mut(), histogram) {
        *kept = decode_histogram(bytes);
    }
    Some(outcome)
}

/// A trial's stored cell: none where the column is empty or holds no cell.
fn to_cell(text: Option<String>) -> Cell {
    parsed(text)
}

pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A run as stored. `machine` and `options` are typed and
/// keep what they do not know (the run may come from another machine or schedlab version).
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub id: i64,
    pub uuid: String,
    pub suite_name: String,
    pub suite_text: String,
    pub options: RunOptions,
    pub started: String,
    pub ended: Option<String>,
    pub status: RunStatus,
    pub tool_version: String,
    pub machine: StoredMachine,
    /// What schedlab warned of while the run went on (noise, missing kernel figures).
    pub warnings: Vec<String>,
    pub planned: i64,
    pub pid: Option<i64>,
}

/// Where a run stands, stored as its word ("running", "finished", "interrupted").
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "String", into = "String")]
pub enum RunStatus {
    /// Being measured now, or stopped without a word (a killed process): resumable.
    Running,
    Finished,
    /// Stopped on an error or a signal, with its stored trials kept.
    Interrupted,
    /// A word this schedlab does not know (a newer one's, or an imported file's), kept as is.
    Other(String),
}

impl RunStatus {
    pub fn as_str(&self) -> &str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Other(word) => word,
        }
    }
}

impl From<String> for RunStatus {
    fn from(word: String) -> RunStatus {
        match word.as_str() {
            "running" => RunStatus::Running,
            "finished" => RunStatus::Finished,
            "interrupted" => RunStatus::Interrupted,
            _ => RunStatus::Other(word),
        }
    }
}

impl From<RunStatus> for String {
    fn from(status: RunStatus) -> String {
        status.as_str().to_string()
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
    pub params: Cell,
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
    db: Box<dyn Backend>,
    location: Location,
    /// The location as messages show it.
    shown: String,
    /// The database's schema version (older than ours only for one opened read-only).
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

/// A stored JSON column as `T`; its default where the column is empty or does not read as one.
fn parsed<T: serde::de::DeserializeOwned + Default>(text: Option<String>) -> T {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// A run's stored warnings: a JSON list of lines (anything else reads as no warnings; a
/// non-text entry is kept as its JSON text rather than dropped).
fn warnings_of(text: Option<String>) -> Vec<String> {
    // Any JSON, since a hand-edited or newer store may hold more than lines of text.
    let list: Vec<serde_json::Value> = parsed(text);
    list.iter().map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_string)).collect()
}

/// The columns of `runs`, in the order `run_from_row` reads them.
const RUN_COLUMNS: &str = "runs.id, runs.uuid, runs.suite_name, runs.suite_text, runs.options, runs.started, \
                           runs.ended, runs.status, runs.tool_version, runs.machine, runs.warnings, runs.planned, \
                           runs.pid";

const INSERT_RUN: &str = "INSERT INTO runs (uuid, suite_name, suite_text, options, started, ended, status, \
                          tool_version, machine, warnings, planned, pid) \
                          VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING id";

const INSERT_TRIAL: &str = "INSERT INTO trials (run_id, seq, experiment, family, repeat, params, spec, outcome, \
                            histogram, status, reason, started, elapsed_s) \
                            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";

impl Store {
    /// Open (and with `Access::Create`, make) the database at `location`, upgrading its
    /// schema.
    pub fn open(location: &Location, access: Access) -> Result<Store> {
        let (db, version): (Box<dyn Backend>, i64) = match location {
            Location::Sqlite(path) => {
                let (db, version) = sqlite::Sqlite::open(path, access)?;
                (Box::new(db), version)
            }
            Location::Postgres(url) => {
                let (db, version) = pg::Postgres::open(url, access)?;
                (Box::new(db), version)
            }
        };
        Ok(Store { db, location: location.clone(), shown: location.to_string(), version })
    }

    /// `--db` (a file or a URL), else `$SCHEDLAB_DB`, else `./schedlab.db`.
    pub fn open_arg(flag: Option<&std::path::Path>, access: Access) -> Result<Store> {
        Store::open(&Location::resolve(flag)?, access)
    }

    /// Where the results are, as messages show it (a URL without its password).
    pub fn location(&self) -> &Location {
        &self.location
    }

    fn rows(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<Vec<StoredRow<'_>>> {
        let rows = self.db.query(context, sql, params)?;
        Ok(rows.into_iter().map(|values| StoredRow { values, source: &self.shown }).collect())
    }

    fn one_int(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<Option<i64>> {
        match self.rows(context, sql, params)?.first() {
            Some(row) => row.opt_int(0),
            None => Ok(None),
        }
    }

    /// Run `body` in one transaction: all of it is stored, or none.
    fn in_transaction<T>(&self, context: &str, body: impl FnOnce(&Store) -> Result<T>) -> Result<T> {
        self.db.begin(context)?;
        match body(self).and_then(|v| self.db.commit(context).map(|_| v)) {
            Ok(v) => Ok(v),
            Err(e) => {
                self.db.rollback();
                Err(e)
            }
        }
    }

    /// Store a new run; returns its id.
    pub fn insert_run(&mut self, run: &RunRecord) -> Result<i64> {
        self.insert_run_row("storing the run", run, run.pid)
    }

    /// Store several new runs in one transaction (the two sides of an A/B session): all
    /// of them or none; returns their ids in order.
    pub fn insert_runs(&mut self, runs: &[RunRecord]) -> Result<Vec<i64>> {
        const CONTEXT: &str = "storing the runs";
        self.in_transaction(CONTEXT, |s| runs.iter().map(|run| s.insert_run_row(CONTEXT, run, run.pid)).collect())
    }

    /// Store one finished trial, in its own transaction.
    pub fn insert_trial(&mut self, run_id: i64, t: &TrialRecord) -> Result<()> {
        self.insert_trial_row("storing a trial", run_id, t)
    }

    /// Mark trials already stored as dropped (`TrialStatus::Discarded`) with `reason`: a
    /// block run again for steal. One transaction: all of them or none.
    pub fn discard_trials(&mut self, run_id: i64, seqs: &[i64], reason: &str) -> Result<()> {
        const CONTEXT: &str = "marking a block's trials as re-run for steal";
        let status = TrialStatus::Discarded(reason.to_string());
        self.in_transaction(CONTEXT, |s| {
            for &seq in seqs {
                s.db.execute(
                    CONTEXT,
                    "UPDATE trials SET status = ?1, reason = ?2 WHERE run_id = ?3 AND seq = ?4",
                    &[status.label().into(), reason.into(), run_id.into(), seq.into()],
                )?;
            }
            Ok(())
        })
    }

    pub fn set_run_state(
        &mut self,
        run_id: i64,
        status: RunStatus,
        ended: Option<&str>,
        pid: Option<i64>,
    ) -> Result<()> {
        self.db.execute(
            "updating the run",
            "UPDATE runs SET status = ?1, ended = ?2, pid = ?3 WHERE id = ?4",
            &[status.as_str().into(), ended.into(), pid.into(), run_id.into()],
        )?;
        Ok(())
    }

    fn run_from_row(row: &StoredRow) -> Result<RunRecord> {
        Ok(RunRecord {
            id: row.int(0)?,
            uuid: row.text(1)?,
            suite_name: row.text(2)?,
            suite_text: row.text(3)?,
            options: RunOptions::from_json(parsed(row.opt_text(4)?)),
            started: row.text(5)?,
            ended: row.opt_text(6)?,
            status: RunStatus::from(row.text(7)?),
            tool_version: row.text(8)?,
            machine: StoredMachine::from_json(parsed(row.opt_text(9)?)),
            warnings: warnings_of(row.opt_text(10)?),
            planned: row.int(11)?,
            pid: row.opt_int(12)?,
        })
    }

    /// The run with this id, or a clear error naming the runs that exist.
    pub fn run(&self, id: i64) -> Result<RunRecord> {
        let rows = self.rows("reading runs", &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"), &[id.into()])?;
        match rows.first() {
            Some(row) => Self::run_from_row(row),
            None => Err(Error::usage(format!(
                "there is no run {id} in {}: `schedlab list` shows the runs it holds",
                self.location
            ))),
        }
    }

    /// Resolve a RUN argument: a number or `latest`.
    pub fn resolve_run(&self, text: &str) -> Result<i64> {
        if text == "latest" || text == "last" {
            let latest = self.one_int("reading runs", "SELECT max(id) FROM runs", &[])?;
            return latest.ok_or_else(|| Error::usage(format!("{} holds no runs yet", self.location)));
        }
        let id: i64 = text.trim().parse().map_err(|_| {
            Error::usage(format!("'{text}' is not a run id: give the number `schedlab list` shows, or `latest`"))
        })?;
        self.run(id).map(|r| r.id)
    }

    pub fn runs(&self) -> Result<Vec<RunSummary>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS}, \
             (SELECT count(*) FROM trials t WHERE t.run_id = runs.id AND t.status = 'ok') AS ok, \
             (SELECT count(*) FROM trials t WHERE t.run_id = runs.id AND t.status != 'ok') AS not_ok \
             FROM runs ORDER BY id"
        );
        self.rows("reading runs", &sql, &[])?
            .iter()
            .map(|row| Ok(RunSummary { run: Self::run_from_row(row)?, ok: row.int(13)?, not_ok: row.int(14)? }))
            .collect()
    }

    pub fn trials(&self, run_id: i64) -> Result<Vec<TrialRecord>> {
        // A database of schema 1 (opened read-only) has no spec and outcome yet.
        let typed = if self.version >= 2 { "spec, outcome" } else { "NULL, NULL" };
        let sql = format!(
            "SELECT seq, experiment, family, repeat, params, figures, histogram, status, reason, started, \
             elapsed_s, {typed} FROM trials WHERE run_id = ?1 ORDER BY seq"
        );
        let rows = self.rows("reading trials", &sql, &[run_id.into()])?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let family_text = row.text(2)?;
            let family = Family::parse(&family_text).ok_or_else(|| {
                Error::env(format!(
                    "reading trials of run {run_id} in {}: unknown family '{family_text}'",
                    self.location
                ))
            })?;
            let params = to_cell(row.opt_text(4)?);
            let histogram = row.opt_blob(6)?;
            let status = row.text(7)?;
            let spec = row
                .opt_text(11)?
                .and_then(|t| serde_json::from_str(&t).ok())
                .or_else(|| crate::families::spec_from_params(family, &params));
            let outcome = match row.opt_text(12)? {
                Some(text) => outcome_from_text(&text, histogram.as_deref()),
                None => legacy_outcome(family, &status, row.opt_text(5)?, histogram.as_deref()),
            };
            out.push(TrialRecord {
                seq: row.int(0)?,
                experiment: row.int(1)?,
                family,
                repeat: row.int(3)?,
                params,
                spec,
                outcome,
                status: TrialStatus::from_parts(&status, row.opt_text(8)?),
                started: row.text(9)?,
                elapsed_s: row.real(10)?,
            });
        }
        Ok(out)
    }

    pub fn delete_run(&mut self, id: i64) -> Result<()> {
        const CONTEXT: &str = "deleting";
        self.in_transaction(CONTEXT, |s| {
            s.db.execute(CONTEXT, "DELETE FROM trials WHERE run_id = ?1", &[id.into()])?;
            s.db.execute(CONTEXT, "DELETE FROM runs WHERE id = ?1", &[id.into()])?;
            Ok(())
        })
    }

    /// How many trials a run has stored.
    pub fn trial_count(&self, run_id: i64) -> Result<i64> {
        let n = self.one_int("reading trials", "SELECT count(*) FROM trials WHERE run_id = ?1", &[run_id.into()])?;
        Ok(n.unwrap_or(0))
    }

    pub fn run_by_uuid(&self, uuid: &str) -> Result<Option<i64>> {
        self.one_int("reading runs", "SELECT id FROM runs WHERE uuid = ?1", &[uuid.into()])
    }

    /// Store a whole run with its trials in one transaction (import, push): all or
    /// nothing.
    pub fn insert_run_with_trials(&mut self, run: &RunRecord, trials: &[TrialRecord]) -> Result<i64> {
        self.in_transaction("importing", |s| {
            // An imported run was made by a process elsewhere: no local pid.
            let id = s.insert_run_row("importing a run", run, None)?;
            for t in trials {
                s.insert_trial_row("importing a trial", id, t)?;
            }
            Ok(id)
        })
    }

    fn insert_run_row(&self, context: &str, run: &RunRecord, pid: Option<i64>) -> Result<i64> {
        let id = self.one_int(
            context,
            INSERT_RUN,
            &[
                run.uuid.as_str().into(),
                run.suite_name.as_str().into(),
                run.suite_text.as_str().into(),
                to_json(&run.options).into(),
                run.started.as_str().into(),
                run.ended.as_deref().into(),
                run.status.as_str().into(),
                run.tool_version.as_str().into(),
                to_json(&run.machine).into(),
                to_json(&run.warnings).into(),
                run.planned.into(),
                pid.into(),
            ],
        )?;
        id.ok_or_else(|| Error::failed(format!("{context}: {} gave the new run no id", self.location)))
    }

    fn insert_trial_row(&self, context: &str, run_id: i64, t: &TrialRecord) -> Result<()> {
        let (outcome, histogram) = match &t.outcome {
            Some(o) => {
                let (text, histogram) = outcome_text(o);
                (Some(text), histogram)
            }
            None => (None, None),
        };
        self.db.execute(
            context,
            INSERT_TRIAL,
            &[
                run_id.into(),
                t.seq.into(),
                t.experiment.into(),
                t.family.as_str().into(),
                t.repeat.into(),
                to_json(&t.params).into(),
                t.spec.as_ref().map(to_json).into(),
                outcome.into(),
                histogram.into(),
                t.status.label().into(),
                t.status.reason().into(),
                t.started.as_str().into(),
                t.elapsed_s.into(),
            ],
        )?;
        Ok(())
    }
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
    uuid::Uuid::new_v4().to_string()
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
    fn stored_warnings_read_as_lines_and_any_other_entry_as_its_json() {
        let text = |t: &str| Some(t.to_string());
        assert_eq!(warnings_of(text(r#"["a line", 3, {"code": 7}, null]"#)), ["a line", "3", r#"{"code":7}"#, "null"]);
        assert!(warnings_of(text(r#"{"not": "a list"}"#)).is_empty());
        assert!(warnings_of(text("not json")).is_empty());
        assert!(warnings_of(None).is_empty());
    }

    #[test]
    fn run_status_keeps_its_word() {
        for word in ["running", "finished", "interrupted", "paused-by-a-newer-schedlab"] {
            let status = RunStatus::from(word.to_string());
            assert_eq!(status.as_str(), word);
            assert_eq!(serde_json::to_string(&status).unwrap(), format!("\"{word}\""));
        }
        assert_eq!(RunStatus::from("finished".to_string()), RunStatus::Finished);
        assert!(matches!(RunStatus::from("Finished".to_string()), RunStatus::Other(_)));
    }

    #[test]
    fn uuids_are_v4_and_distinct() {
        let (a, b) = (new_uuid(), new_uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
