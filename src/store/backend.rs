//! What a database engine must give the store: statements with positional parameters,
//! rows of plain values, and transactions. The store's SQL is written once, in SQLite's
//! dialect; `postgres_dialect` is the one place that turns it into PostgreSQL's.

use crate::error::{Error, Result};

/// One SQL value, as bound to a parameter or read from a column.
#[derive(Clone, Debug, PartialEq)]
pub enum SqlValue {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> SqlValue {
        SqlValue::Int(v)
    }
}

impl From<f64> for SqlValue {
    fn from(v: f64) -> SqlValue {
        SqlValue::Real(v)
    }
}

impl From<String> for SqlValue {
    fn from(v: String) -> SqlValue {
        SqlValue::Text(v)
    }
}

impl From<&str> for SqlValue {
    fn from(v: &str) -> SqlValue {
        SqlValue::Text(v.to_string())
    }
}

impl From<Vec<u8>> for SqlValue {
    fn from(v: Vec<u8>) -> SqlValue {
        SqlValue::Blob(v)
    }
}

impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(v: Option<T>) -> SqlValue {
        v.map_or(SqlValue::Null, Into::into)
    }
}

/// A row read back: its values by column position, and where it came from (for errors).
pub struct StoredRow<'a> {
    pub values: Vec<SqlValue>,
    pub source: &'a str,
}

impl StoredRow<'_> {
    fn wrong(&self, column: usize, wanted: &str) -> Error {
        Error::env(format!(
            "reading {}: column {column} holds {:?} where {wanted} was expected; the database was not written by \
             schedlab or is damaged",
            self.source,
            self.values.get(column).unwrap_or(&SqlValue::Null)
        ))
    }

    pub fn opt_int(&self, column: usize) -> Result<Option<i64>> {
        match self.values.get(column) {
            Some(SqlValue::Null) => Ok(None),
            Some(SqlValue::Int(v)) => Ok(Some(*v)),
            _ => Err(self.wrong(column, "an integer")),
        }
    }

    pub fn int(&self, column: usize) -> Result<i64> {
        self.opt_int(column)?.ok_or_else(|| self.wrong(column, "an integer"))
    }

    pub fn real(&self, column: usize) -> Result<f64> {
        match self.values.get(column) {
            Some(SqlValue::Real(v)) => Ok(*v),
            // SQLite keeps a REAL with no fraction as written; either way it is a number.
            Some(SqlValue::Int(v)) => Ok(*v as f64),
            _ => Err(self.wrong(column, "a number")),
        }
    }

    pub fn opt_text(&self, column: usize) -> Result<Option<String>> {
        match self.values.get(column) {
            Some(SqlValue::Null) => Ok(None),
            Some(SqlValue::Text(v)) => Ok(Some(v.clone())),
            _ => Err(self.wrong(column, "text")),
        }
    }

    pub fn text(&self, column: usize) -> Result<String> {
        self.opt_text(column)?.ok_or_else(|| self.wrong(column, "text"))
    }

    pub fn opt_blob(&self, column: usize) -> Result<Option<Vec<u8>>> {
        match self.values.get(column) {
            Some(SqlValue::Null) => Ok(None),
            Some(SqlValue::Blob(v)) => Ok(Some(v.clone())),
            _ => Err(self.wrong(column, "bytes")),
        }
    }
}

/// A connection to one results database. `context` says what was being done, for the
/// error message ("storing a trial"); each backend turns its engine's errors into
/// messages that name the database and the fix.
pub trait Backend {
    /// Run one statement; returns the number of rows it changed.
    fn execute(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<u64>;
    /// Run one statement and return all its rows.
    fn query(&self, context: &str, sql: &str, params: &[SqlValue]) -> Result<Vec<Vec<SqlValue>>>;
    /// Several statements without parameters (a schema migration).
    fn execute_batch(&self, context: &str, sql: &str) -> Result<()>;
    /// Begin a transaction that writes (SQLite takes the write lock at once, so two
    /// writers never deadlock upgrading a read lock).
    fn begin(&self, context: &str) -> Result<()>;
    fn commit(&self, context: &str) -> Result<()>;
    /// Best effort: after an error, the transaction is given up.
    fn rollback(&self);
}

/// The store's SQLite SQL in PostgreSQL's dialect: `?N` parameters become `$N`, and the
/// column types of the schema take their PostgreSQL names (64-bit integers, 64-bit
/// floats, byte strings, an identity key where SQLite's INTEGER PRIMARY KEY is a rowid).
/// Quoted literals are left as they are.
pub fn postgres_dialect(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 32);
    let mut chars = sql.chars().peekable();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let upper = word.to_ascii_uppercase();
        out.push_str(match upper.as_str() {
            "INTEGER" => "BIGINT",
            "REAL" => "DOUBLE PRECISION",
            "BLOB" => "BYTEA",
            _ => word.as_str(),
        });
        word.clear();
    };
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out);
        match c {
            '\'' => {
                // A literal, copied whole ('' is a quote inside it).
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\'' {
                        break;
                    }
                }
            }
            '?' if chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            _ => out.push(c),
        }
    }
    flush(&mut word, &mut out);
    // SQLite's rowid alias, now a BIGINT: a key the server numbers.
    out.replace("BIGINT PRIMARY KEY", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialect_changes_types_and_parameters_but_not_literals() {
        let sql = "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, x REAL, b BLOB, s TEXT);\
                   SELECT count(*) FROM t WHERE s != 'INTEGER ?1' AND n = ?12";
        assert_eq!(
            postgres_dialect(sql),
            "CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, n BIGINT NOT NULL, \
             x DOUBLE PRECISION, b BYTEA, s TEXT);SELECT count(*) FROM t WHERE s != 'INTEGER ?1' AND n = $12"
        );
        // Names that merely contain a type's name are names.
        assert_eq!(postgres_dialect("SELECT real_s, blobs FROM integers"), "SELECT real_s, blobs FROM integers");
    }
}
