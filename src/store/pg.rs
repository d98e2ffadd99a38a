//! The shared store: a PostgreSQL database (the `postgres` crate, synchronous), for many
//! machines writing into one place. The same schema and migrations as the SQLite file,
//! in PostgreSQL's dialect (`backend::postgres_dialect`); the schema version and the mark
//! that the database is schedlab's live in a one-row table, `schedlab_meta`. Concurrent
//! runs need nothing more than the server's own transactions; a migration holds an
//! advisory lock so two first runs do not both create the schema.

use super::backend::{postgres_dialect, Backend, SqlValue};
use super::location::PgUrl;
use super::{migrate, Access, SCHEMA_VERSION};
use crate::error::{Error, Result};
use postgres::error::SqlState;
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, Statement};
use std::cell::RefCell;
use std::collections::HashMap;

/// The advisory lock a schema upgrade holds ("SCHL", as the SQLite application id).
const MIGRATION_LOCK: i64 = 0x5343_484C;

const APPLICATION: &str = "schedlab";

pub struct Postgres {
    client: RefCell<Client>,
    /// Statements prepared once per connection, by their SQLite text.
    prepared: RefCell<HashMap<String, Statement>>,
    url: PgUrl,
}

/// A parameter as the server's inferred type for it wants it (a NULL is typed too).
fn param(value: &SqlValue, ty: &Type) -> Result<Box<dyn ToSql + Sync>> {
    let narrow = |v: i64| i32::try_from(v).map_err(|_| Error::failed(format!("{v} does not fit a 32-bit column")));
    Ok(match (value, ty) {
        (SqlValue::Null, &Type::INT8) => Box::new(None::<i64>),
        (SqlValue::Null, &Type::INT4) => Box::new(None::<i32>),
        (SqlValue::Null, &Type::FLOAT8) => Box::new(None::<f64>),
        (SqlValue::Null, &Type::BYTEA) => Box::new(None::<Vec<u8>>),
        (SqlValue::Null, _) => Box::new(None::<String>),
        (SqlValue::Int(v), &Type::INT4) => Box::new(narrow(*v)?),
        (SqlValue::Int(v), &Type::FLOAT8) => Box::new(*v as f64),
        (SqlValue::Int(v), _) => Box::new(*v),
        (SqlValue::Real(v), _) => Box::new(*v),
        (SqlValue::Text(v), _) => Box::new(v.clone()),
        (SqlValue::Blob(v), _) => Box::new(v.clone()),
    })
}

fn value_of(row: &postgres::Row, i: usize) -> std::result::Result<SqlValue, postgres::Error> {
    let ty = row.columns()[i].type_().clone();
    Ok(match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map_or(SqlValue::Null, SqlValue::Int),
        Type::INT4 => row.try_get::<_, Option<i32>>(i)?.map_or(SqlValue::Null, |v| SqlValue::Int(v.into())),
        Type::INT2 => row.try_get::<_, Option<i16>>(i)?.map_or(SqlValue::Null, |v| SqlValue::Int(v.into())),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map_or(SqlValue::Null, SqlValue::Real),
        Type::FLOAT4 => row.try_get::<_, Option<f32>>(i)?.map_or(SqlValue::Null, |v| SqlValue::Real(v.into())),
        Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map_or(SqlValue::Null, SqlValue::Blob),
        _ => row.try_get::<_, Option<String>>(i)?.map_or(SqlValue::Null, SqlValue::Text),
    })
}

/// A PostgreSQL error in words a user can act on, naming the server.
fn pg_error(url: &PgUrl, context: &str, e: &postgres::Error) -> Error {
    let server = url.server_address();
    let (user, db) = (url.user(), url.dbname());
    if let Some(d) = e.as_db_error() {
        let detail = d.message();
        let code = d.code();
        return if code == &SqlState::INVALID_PASSWORD || code == &SqlState::INVALID_AUTHORIZATION_SPECIFICATION {
            Error::env(format!(
                "the PostgreSQL server at {server} refused user '{user}' ({detail}): check the user and password in \
                 the URL (or PGPASSWORD) and that the server's pg_hba.conf lets this user into '{db}'; nothing was \
                 written"
            ))
        } else if code == &SqlState::INVALID_CATALOG_NAME {
            Error::env(format!(
                "the PostgreSQL server at {server} has no database '{db}' ({detail}): create it, e.g. `createdb -O \
                 {user} {db}` as the server's administrator, or fix the URL; nothing was written"
            ))
        } else if code == &SqlState::INSUFFICIENT_PRIVILEGE {
            Error::env(format!(
                "{context}: user '{user}' may not do this in database '{db}' at {server} ({detail}): let it create \
                 tables there (`GRANT CREATE ON SCHEMA public TO {user}`) or make it the database's owner"
            ))
        } else if code == &SqlState::DISK_FULL {
            Error::env(format!(
                "{context}: the PostgreSQL server at {server} is out of disk space ({detail}); what was stored \
                 before stays valid. Free some space there and continue with `schedlab run --resume RUN`"
            ))
        } else if code == &SqlState::ADMIN_SHUTDOWN
            || code == &SqlState::CRASH_SHUTDOWN
            || code == &SqlState::CANNOT_CONNECT_NOW
        {
            lost(url, context, detail)
        } else if code == &SqlState::TOO_MANY_CONNECTIONS {
            Error::env(format!("the PostgreSQL server at {server} has no connection to spare ({detail}); try again"))
        } else {
            Error::env(format!("{context}: database '{db}' at {server}: {detail} (SQLSTATE {})", code.code()))
        };
    }
    if e.is_closed() {
        return lost(url, context, "the connection was closed");
    }
    let why = std::error::Error::source(e).map_or_else(|| e.to_string(), |s| s.to_string());
    if context == "connecting" {
        return Error::env(format!(
            "cannot reach the PostgreSQL server at {server} ({why}): check that it is running and accepts \
             connections there, and the host and port in {url}; nothing was written",
            url = url.shown()
        ));
    }
    lost(url, context, &why)
}

fn lost(url: &PgUrl, context: &str, detail: &str) -> Error {
    Error::env(format!(
        "{context}: lost the PostgreSQL server at {} ({detail}); what was stored before stays valid. When the \
         server is back, continue with `schedlab run --resume RUN`",
        url.server_address()
    ))
}

impl Backend for Postgres {
    fn execute(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<u64> {
        let (stmt, bound) = self.prepare(context, sql, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        self.client.borrow_mut().execute(&stmt, &refs).map_err(|e| self.err(context, e))
    }

    fn query(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>> {
        let (stmt, bound) = self.prepare(context, sql, params)?;
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        let rows = self.client.borrow_mut().query(&stmt, &refs).map_err(|e| self.err(context, e))?;
        rows.iter()
            .map(|row| (0..row.len()).map(|i| value_of(row, i)).collect::<std::result::Result<Vec<_>, _>>())
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| self.err(context, e))
    }

    fn execute_batch(&self, context: &str, sql: &str) -> Result<()> {
        self.client.borrow_mut().batch_execute(&postgres_dialect(sql)).map_err(|e| self.err(context, e))
    }

    fn begin(&self, context: &str) -> Result<()> {
        self.client.borrow_mut().batch_execute("BEGIN").map_err(|e| self.err(context, e))
    }

    fn commit(&self, context: &str) -> Result<()> {
        self.client.borrow_mut().batch_execute("COMMIT").map_err(|e| self.err(context, e))
    }

    fn rollback(&self) {
        let _ = self.client.borrow_mut().batch_execute("ROLLBACK");
    }
}

impl Postgres {
    /// Connect, check that the database is schedlab's (or empty), and with
    /// `Access::Create` make or upgrade the schema; returns the store and its version.
    pub fn open(url: &PgUrl, access: Access) -> Result<(Postgres, i64)> {
        let client = url.config.connect(NoTls).map_err(|e| pg_error(url, "connecting", &e))?;
        let store = Postgres { client: RefCell::new(client), prepared: RefCell::new(HashMap::new()), url: url.clone() };
        if access == Access::Read {
            // `list`, `show`, `export` cannot write, whatever goes wrong.
            store.execute_batch("opening", "SET default_transaction_read_only = on")?;
        }
        let version = store.check_and_migrate(access)?;
        Ok((store, version))
    }

    fn err(&self, context: &str, e: postgres::Error) -> Error {
        pg_error(&self.url, context, &e)
    }

    fn prepare(
        &self,
        context: &str,
        sql: &str,
        params: &[SqlValue],
    ) -> Result<(Statement, Vec<Box<dyn ToSql + Sync>>)> {
        let cached = self.prepared.borrow().get(sql).cloned();
        let stmt = match cached {
            Some(stmt) => stmt,
            None => {
                let stmt =
                    self.client.borrow_mut().prepare(&postgres_dialect(sql)).map_err(|e| self.err(context, e))?;
                self.prepared.borrow_mut().insert(sql.to_string(), stmt.clone());
                stmt
            }
        };
        let bound = params.iter().zip(stmt.params()).map(|(v, ty)| param(v, ty)).collect::<Result<Vec<_>>>()?;
        Ok((stmt, bound))
    }

    /// (is there a schedlab_meta table, how many tables in the schema), in one statement:
    /// one snapshot, so a first run committing the schema meanwhile is seen whole or not
    /// at all (never its tables without its mark).
    fn tables(&self) -> Result<(bool, i64)> {
        let rows = self.query(
            "reading the schema",
            "SELECT count(*) FILTER (WHERE tablename = 'schedlab_meta'), count(*) FROM pg_catalog.pg_tables \
             WHERE schemaname = current_schema()",
            &[],
        )?;
        match rows.first().map(Vec::as_slice) {
            Some([SqlValue::Int(meta), SqlValue::Int(all)]) => Ok((*meta > 0, *all)),
            _ => Err(Error::failed(format!("reading the schema of {}: an unexpected answer", self.url.shown()))),
        }
    }

    /// The schema version, 0 for an empty database; an error for another application's.
    fn version(&self) -> Result<i64> {
        let (meta, tables) = self.tables()?;
        let not_ours = || {
            Error::env(format!(
                "database '{}' at {} holds tables that are not schedlab's; it was left untouched. Give schedlab \
                 a database of its own (`createdb -O {} schedlab`) and name it in the URL",
                self.url.dbname(),
                self.url.server_address(),
                self.url.user()
            ))
        };
        if !meta {
            return if tables == 0 { Ok(0) } else { Err(not_ours()) };
        }
        let rows = self.query("reading the schema", "SELECT application, schema_version FROM schedlab_meta", &[])?;
        match rows.as_slice() {
            [row] if row.first() == Some(&SqlValue::Text(APPLICATION.into())) => match row.get(1) {
                Some(SqlValue::Int(v)) => Ok(*v),
                _ => Err(not_ours()),
            },
            _ => Err(not_ours()),
        }
    }

    fn check_and_migrate(&self, access: Access) -> Result<i64> {
        let shown = self.url.shown();
        let version = self.version()?;
        if version > SCHEMA_VERSION {
            return Err(super::newer(shown, version, "the database"));
        }
        if version == SCHEMA_VERSION {
            return Ok(version);
        }
        if access != Access::Create {
            if version == 0 {
                return Err(Error::env(format!(
                    "database '{}' at {} holds no schedlab results yet: `schedlab run --db {shown}` starts it, or \
                     `schedlab push` copies runs into it",
                    self.url.dbname(),
                    self.url.server_address()
                )));
            }
            if access == Access::Read {
                // An older schema is read as it is, as with a SQLite file.
                return Ok(version);
            }
        }
        self.begin("upgrading the schema")?;
        let upgraded = (|| {
            self.execute("upgrading the schema", "SELECT pg_advisory_xact_lock(?1)", &[MIGRATION_LOCK.into()])?;
            // Another run may have made or upgraded it while we waited for the lock.
            let now = self.version()?;
            if now >= SCHEMA_VERSION {
                return self.commit("upgrading the schema");
            }
            migrate(self, now)?;
            if now == 0 {
                self.execute_batch(
                    "upgrading the schema",
                    "CREATE TABLE schedlab_meta (application TEXT NOT NULL, schema_version INTEGER NOT NULL)",
                )?;
                self.execute(
                    "upgrading the schema",
                    "INSERT INTO schedlab_meta (application, schema_version) VALUES (?1, ?2)",
                    &[APPLICATION.into(), SCHEMA_VERSION.into()],
                )?;
            } else {
                self.execute(
                    "upgrading the schema",
                    "UPDATE schedlab_meta SET schema_version = ?1",
                    &[SCHEMA_VERSION.into()],
                )?;
            }
            self.commit("upgrading the schema")
        })();
        if upgraded.is_err() {
            self.rollback();
        }
        upgraded.map(|_| SCHEMA_VERSION)
    }
}
