//! What every `--against` form is made of: its sections and JSON document, the refusal of
//! a run without the trials it needs, and the cells' helpers. The forms themselves are
//! their family's (`families/<name>/against.rs`); `mod.rs` picks one and renders it.

use crate::analysis::stats::median;
use crate::error::Error;
use crate::model::cell;
use crate::model::Policy;
use crate::report::table::Table;
use crate::store::seeds::{self, Seed};
use crate::store::{RunRecord, TrialRecord};
use serde::Serialize;

/// One table of the comparison, with what is said under it.
pub struct Section {
    pub title: String,
    pub table: Table,
    /// The first this many columns name the row (left-aligned).
    pub left_columns: usize,
    pub lines: Vec<String>,
}

/// A run beside a reference set: the tables and the same figures as numbers.
pub struct AgainstReport {
    pub name: String,
    /// What is set beside what, and where the reference's figures come from.
    pub heading: String,
    pub sections: Vec<Section>,
    pub json: AgainstDoc,
}

/// `--against`'s numbers in `--format json`: the reference set and its source, then what
/// its form sets beside the run (its keys, in the form's order).
#[derive(Serialize)]
pub struct AgainstDoc {
    against: &'static str,
    source: &'static str,
    #[serde(flatten)]
    pub form: serde_json::Map<String, serde_json::Value>,
}

impl AgainstDoc {
    /// `form`: a document of named fields, which stand after `against` and `source`.
    pub fn of(seed: &dyn Seed, form: &impl Serialize) -> AgainstDoc {
        let form = match serde_json::to_value(form) {
            Ok(serde_json::Value::Object(fields)) => fields,
            _ => serde_json::Map::new(),
        };
        AgainstDoc { against: seed.name(), source: seed.citation(), form }
    }
}

/// The refusal of a run without the trials a seed's form sets beside its own.
pub fn lacks(run: &RunRecord, seed: &dyn Seed, spec: &seeds::Against) -> Error {
    Error::usage(format!(
        "run {} has no {} trial that finished ok: --against {} sets {}",
        run.id,
        spec.form.family(),
        seed.name(),
        spec.needs
    ))
}

pub fn median_of(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median(values))
}

pub fn cell(v: Option<f64>, decimals: usize) -> String {
    v.filter(|x| x.is_finite()).map_or("-".into(), |x| format!("{x:.decimals$}"))
}

/// The parameters of a trial that are neither the cell's policy and processes nor its
/// size: what else sets one of this run's rows apart (a load, a nice value, ...).
pub fn setting(t: &TrialRecord, also: &[&str]) -> String {
    let shown_apart = [cell::axis::WORKLOAD, cell::axis::POLICY, cell::axis::PROCS];
    let mut parts = t.params.parts(|k| !shown_apart.contains(&k) && !also.contains(&k));
    parts.sort();
    parts.join(" ")
}

pub fn policy_rank(p: Policy) -> usize {
    Policy::ALL.iter().position(|x| *x == p).unwrap_or(Policy::ALL.len())
}
