//! A cell: the suite's (or command's) keys and values of one combination, in the suite's
//! order, as every trial of the cell is stored (`procs=4 policy=fifo`), and how every
//! report and message writes them.
//!
//! A cell is stored as a JSON object (`{"policy":"fifo","procs":4}`) and read back as it
//! was written: the same key order, integers as integers, floats as serde_json writes an
//! `f64`, so stored databases and exports keep their bytes.

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The names of the keys reports read by name, in one place.
pub mod axis {
    /// The processes (or threads) of a cell.
    pub const PROCS: &str = "procs";
    /// Its scheduling policy.
    pub const POLICY: &str = "policy";
    /// A workload cell's kind (`cpu`, `io`, `mixed`).
    pub const WORKLOAD: &str = "workload";
    /// The figures a command family reads from its output: how to read, not what ran.
    pub const FIGURES: &str = "figures";
}

/// One value a suite can give a key: TOML's scalars, or a list or table of values, kept
/// whole (a command's `cmd = ["a", "b"]`, a taskset's `tasks = [{ name = "control", ... }]`).
#[derive(Clone, Debug, PartialEq)]
pub enum CellValue {
    Text(String),
    Integer(i64),
    /// A finite float, stored as serde_json writes an `f64`.
    Float(f64),
    Bool(bool),
    List(Vec<CellValue>),
    /// A table's keys and values, in its order.
    Table(Cell),
    /// JSON's null: what serde_json writes for a float that is not finite, and what an
    /// export written elsewhere may hold. Equal to itself, as the JSON map's null was.
    Null,
}

impl CellValue {
    /// The value as text: a string as written, any other value as JSON (`4`, `true`,
    /// `["a","b"]`).
    pub fn text(&self) -> String {
        match self {
            CellValue::Text(s) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            CellValue::Text(s) => Some(s),
            _ => None,
        }
    }

    #[cfg(test)]
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            CellValue::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// A number as a float (an integer too).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            CellValue::Integer(i) => Some(*i as f64),
            CellValue::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn is_bool(&self) -> bool {
        matches!(self, CellValue::Bool(_))
    }

    pub fn is_text(&self) -> bool {
        matches!(self, CellValue::Text(_))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, CellValue::Null)
    }
}

impl From<&str> for CellValue {
    fn from(s: &str) -> CellValue {
        CellValue::Text(s.to_string())
    }
}

impl From<String> for CellValue {
    fn from(s: String) -> CellValue {
        CellValue::Text(s)
    }
}

impl From<i64> for CellValue {
    fn from(i: i64) -> CellValue {
        CellValue::Integer(i)
    }
}

impl From<u32> for CellValue {
    fn from(i: u32) -> CellValue {
        CellValue::Integer(i.into())
    }
}

impl From<usize> for CellValue {
    fn from(i: usize) -> CellValue {
        CellValue::Integer(i as i64)
    }
}

impl From<u64> for CellValue {
    fn from(i: u64) -> CellValue {
        i64::try_from(i).map_or(CellValue::from(i as f64), CellValue::Integer)
    }
}

impl From<Vec<String>> for CellValue {
    fn from(items: Vec<String>) -> CellValue {
        CellValue::List(items.into_iter().map(CellValue::Text).collect())
    }
}

/// A float that is not finite is null, as serde_json writes (and so stores) it.
impl From<f64> for CellValue {
    fn from(f: f64) -> CellValue {
        if f.is_finite() {
            CellValue::Float(f)
        } else {
            CellValue::Null
        }
    }
}

impl From<bool> for CellValue {
    fn from(b: bool) -> CellValue {
        CellValue::Bool(b)
    }
}

impl Serialize for CellValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            CellValue::Text(t) => s.serialize_str(t),
            CellValue::Integer(i) => s.serialize_i64(*i),
            CellValue::Float(f) => s.serialize_f64(*f),
            CellValue::Bool(b) => s.serialize_bool(*b),
            CellValue::List(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            CellValue::Table(table) => table.serialize(s),
            CellValue::Null => s.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for CellValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CellValue, D::Error> {
        struct ValueVisitor;
        impl<'de> Visitor<'de> for ValueVisitor {
            type Value = CellValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, a number, true/false, or a list or table of them")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<CellValue, E> {
                Ok(CellValue::Text(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<CellValue, E> {
                Ok(CellValue::Text(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CellValue, E> {
                Ok(CellValue::Integer(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CellValue, E> {
                // Beyond i64 (no suite gives one): the nearest float, not a lost cell.
                Ok(i64::try_from(v).map_or(CellValue::from(v as f64), CellValue::Integer))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<CellValue, E> {
                Ok(CellValue::from(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<CellValue, E> {
                Ok(CellValue::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<CellValue, E> {
                Ok(CellValue::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CellValue, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(CellValue::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CellValue, A::Error> {
                CellVisitor.visit_map(map).map(CellValue::Table)
            }
        }
        d.deserialize_any(ValueVisitor)
    }
}

/// Keys only a deadline trial has: its reservation, and taskset's `reclaim`. A policy
/// axis that mixes deadline with other policies keeps them in the deadline cells alone.
pub const DEADLINE_ONLY: [&str; 4] = ["runtime", "deadline", "period", "reclaim"];

/// The keys and values of one cell, in the suite's order. Two cells are equal when they
/// have the same keys with the same values, in whatever order.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    entries: Vec<(String, CellValue)>,
}

impl Cell {
    pub fn new() -> Cell {
        Cell::default()
    }

    pub fn get(&self, key: &str) -> Option<&CellValue> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Set a key's value: in its place if the cell has it, last if not.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<CellValue>) {
        let (key, value) = (key.into(), value.into());
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Take a key out, the last key moving into its place: the order cells have been
    /// stored in since they were JSON maps (whose `remove` did so), kept so the keys of
    /// stored cells and of newly planned ones agree.
    pub fn remove(&mut self, key: &str) -> Option<CellValue> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.swap_remove(at).1)
    }

    /// Keep the keys `keep` keeps, in order.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        self.entries.retain(|(k, _)| keep(k));
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &CellValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The number of processes the suite gave the cell, if it gave a whole number.
    #[cfg(test)]
    pub fn procs(&self) -> Option<i64> {
        self.get(axis::PROCS)?.as_i64()
    }

    /// The policy the suite gave the cell, as it wrote it (`fifo`, `SCHED_FIFO`).
    pub fn policy(&self) -> Option<&str> {
        self.get(axis::POLICY)?.as_str()
    }

    /// Whether the suite gave the cell the deadline policy.
    pub fn is_deadline(&self) -> bool {
        self.policy() == Some("deadline")
    }

    /// `key=value` for each key `keep` keeps, in order.
    pub fn parts(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        self.iter().filter(|(k, _)| keep(k)).map(|(k, v)| format!("{k}={}", v.text())).collect()
    }

    /// The kept keys as one line: `procs=4 policy=fifo`.
    pub fn text(&self, keep: impl Fn(&str) -> bool) -> String {
        self.parts(keep).join(" ")
    }

    /// Every key as one line.
    pub fn all_text(&self) -> String {
        self.text(all)
    }

    /// The cell as stored (JSON text).
    #[cfg(test)]
    pub fn json_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// What tells one question of a compared `axis` from another: the cell but the axis
    /// and, for the policy axis, the keys only its deadline cells have — so those cells are
    /// compared with the other policies' and not asked apart.
    pub fn question_key(&self, axis: &str) -> Cell {
        let mut rest = self.clone();
        rest.remove(axis);
        if axis == axis::POLICY {
            for k in DEADLINE_ONLY {
                rest.remove(k);
            }
        }
        rest
    }
}

impl PartialEq for Cell {
    fn eq(&self, other: &Cell) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

// A cell's floats are finite (a non-finite one is `Null`), so equality is total.
impl Eq for Cell {}
impl Eq for CellValue {}

/// Consistent with the order-blind equality: the entries are hashed sorted by key.
impl std::hash::Hash for Cell {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut entries: Vec<&(String, CellValue)> = self.entries.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        state.write_usize(entries.len());
        for (k, v) in entries {
            k.hash(state);
            v.hash(state);
        }
    }
}

impl std::hash::Hash for CellValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            CellValue::Text(s) => s.hash(state),
            CellValue::Integer(i) => i.hash(state),
            // 0.0 and -0.0 are equal, so they must hash alike.
            CellValue::Float(f) => (if *f == 0.0 { 0.0f64 } else { *f }).to_bits().hash(state),
            CellValue::Bool(b) => b.hash(state),
            CellValue::List(items) => items.hash(state),
            CellValue::Table(cell) => cell.hash(state),
            CellValue::Null => {}
        }
    }
}

impl<K: Into<String>> FromIterator<(K, CellValue)> for Cell {
    fn from_iter<I: IntoIterator<Item = (K, CellValue)>>(items: I) -> Cell {
        let mut cell = Cell::new();
        cell.extend(items);
        cell
    }
}

impl<K: Into<String>> Extend<(K, CellValue)> for Cell {
    fn extend<I: IntoIterator<Item = (K, CellValue)>>(&mut self, items: I) {
        for (k, v) in items {
            self.insert(k, v);
        }
    }
}

impl Serialize for Cell {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Cell, D::Error> {
        d.deserialize_map(CellVisitor)
    }
}

/// Reads an object's keys and values in order, a later duplicate key's value in the
/// first one's place (as a JSON map reads it).
struct CellVisitor;

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Cell;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of a cell's keys and values")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Cell, A::Error> {
        let mut cell = Cell::new();
        while let Some((k, v)) = map.next_entry::<String, CellValue>()? {
            cell.insert(k, v);
        }
        Ok(cell)
    }
}

/// Every key.
pub fn all(_: &str) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(text: &str) -> Cell {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn equal_cells_hash_alike_in_any_order() {
        use std::hash::{BuildHasher, RandomState};
        let hasher = RandomState::new();
        let a = cell(r#"{"policy": "fifo", "procs": 4, "x": 0.0, "t": {"a": 1, "b": [true]}}"#);
        let b = cell(r#"{"t": {"b": [true], "a": 1}, "x": -0.0, "procs": 4, "policy": "fifo"}"#);
        assert_eq!(a, b);
        assert_eq!(hasher.hash_one(&a), hasher.hash_one(&b));
        let c = cell(r#"{"policy": "fifo", "procs": 5, "x": 0.0, "t": {"a": 1, "b": [true]}}"#);
        assert_ne!(a, c);
        let groups: std::collections::HashSet<&Cell> = [&a, &b, &c].into_iter().collect();
        assert_eq!(groups.len(), 2);
    }

    #[test]
    fn strings_are_written_bare_and_the_rest_as_json() {
        let params = cell(r#"{"policy": "fifo", "procs": 4, "trace": true, "cmd": ["a", "b"]}"#);
        assert_eq!(params.text(all), r#"policy=fifo procs=4 trace=true cmd=["a","b"]"#);
        assert_eq!(params.parts(|k| k != "procs"), ["policy=fifo", "trace=true", r#"cmd=["a","b"]"#]);
        assert_eq!(Cell::new().text(all), "");
        assert_eq!(params.question_key("procs"), cell(r#"{"policy":"fifo","cmd":["a","b"],"trace":true}"#));
        assert_eq!(params.question_key("absent"), params);
        assert_eq!((params.procs(), params.policy()), (Some(4), Some("fifo")));
    }

    #[test]
    fn a_cell_is_written_back_byte_for_byte_as_a_json_map_wrote_it() {
        // Each as serde_json's map (preserve_order) writes it: an exponent with its sign,
        // a whole float with its ".0", a float that is not finite as null.
        for stored in [
            r#"{"procs":4,"policy":"fifo"}"#,
            r#"{"work_kb":1.5,"big":1e+300,"small":-3,"zero":0.0,"x":1.0,"nan":null}"#,
            r#"{"cmd":["sh","-c","true"],"trace":false,"nested":[[1,2.5],"a"]}"#,
            r#"{"tasks":[{"name":"control","period":"1ms","events":[{"run":"150us"},{"lock":"state"}]}]}"#,
            "{}",
        ] {
            assert_eq!(cell(stored).json_text(), stored);
        }
        let shown = cell(r#"{"a":1.0,"b":-3,"c":"x y","d":[1,"b"],"e":{"f":false}}"#).parts(all);
        assert_eq!(shown, ["a=1.0", "b=-3", "c=x y", r#"d=[1,"b"]"#, r#"e={"f":false}"#]);
        // Removing moves the last key into the gap, as the map's remove (swap_remove) did.
        let mut typed = cell(r#"{"loops":1,"period":"1ms","policy":"fifo","procs":2}"#);
        typed.remove("period");
        assert_eq!(typed.json_text(), r#"{"loops":1,"procs":2,"policy":"fifo"}"#);
        typed.insert("policy", "rr");
        assert_eq!(typed.json_text(), r#"{"loops":1,"procs":2,"policy":"rr"}"#);
        // Equal whatever the order.
        assert_eq!(cell(r#"{"a":1,"b":"x"}"#), cell(r#"{"b":"x","a":1}"#));
        assert_ne!(cell(r#"{"a":1}"#), cell(r#"{"a":1.0}"#));
        assert!(serde_json::from_str::<Cell>(r#"["a"]"#).is_err());
    }

    #[test]
    fn a_null_is_itself_and_a_huge_integer_is_a_number() {
        // A null (an export from elsewhere, or a float that was not finite) equals itself,
        // so cells holding one still group, match and compare.
        let stored = r#"{"break-us":null,"procs":2}"#;
        assert_eq!(cell(stored), cell(stored));
        assert_eq!(cell(stored).json_text(), stored);
        assert_eq!(cell(stored).get("break-us").map(CellValue::text).as_deref(), Some("null"));
        assert_eq!(CellValue::from(f64::NAN), CellValue::Null);
        assert_eq!(CellValue::from(f64::INFINITY), CellValue::Null);
        // Beyond i64: read as the nearest float, not a lost cell.
        let huge = cell(r#"{"seed":18446744073709551615}"#);
        assert_eq!(huge.get("seed").and_then(CellValue::as_f64), Some(18446744073709551615u64 as f64));
    }
}
