//! Moving runs between databases and into spreadsheets.
//!
//! JSON export is lossless: everything stored about a run and its trials except the
//! local row ids, so export -> import (into any database) -> export gives the same text.
//! The document is serde-derived; files of format 1 (schedlab 0.1.0) still import, their
//! untyped figures read back into typed outcomes.
//! CSV is one row per trial, flattened, for spreadsheets and pandas.

use crate::error::{Error, Result};
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell::{Cell, CellValue};
use crate::model::TrialStatus;
use crate::store::{legacy, RunRecord, TrialRecord};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value as Json};

pub const FORMAT: &str = "schedlab-export";
/// A trial's figures as named numbers, for readers of an export that do not know the
/// typed outcome; the report layer computes them (`report::figures::stored`) and hands them in.
pub type FiguresOf = fn(&TrialRecord) -> Option<Map<String, Json>>;

/// 1: schedlab 0.1.0 (untyped figures). 2: typed spec and outcome per trial.
pub const FORMAT_VERSION: i64 = 2;

/// The whole file.
#[derive(Serialize, Deserialize)]
struct Document {
    format: String,
    format_version: i64,
    #[serde(default)]
    schedlab_version: Option<String>,
    runs: Vec<ExportRun>,
}

/// A run and its trials, without the local row ids.
#[derive(Serialize, Deserialize)]
struct ExportRun {
    uuid: String,
    suite_name: String,
    suite_text: String,
    #[serde(default)]
    options: Json,
    started: String,
    ended: Option<String>,
    status: String,
    tool_version: String,
    #[serde(default)]
    machine: Json,
    #[serde(default)]
    warnings: Option<Vec<String>>,
    planned: i64,
    trials: Vec<ExportTrial>,
}

#[derive(Serialize, Deserialize)]
struct ExportTrial {
    seq: i64,
    experiment: i64,
    family: Family,
    repeat: i64,
    params: Cell,
    status: String,
    reason: Option<String>,
    started: String,
    elapsed_s: f64,
    /// Format 2: what ran and what was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<TrialSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    outcome: Option<Outcome>,
    /// Derived, for readers of the file (the keys of `--json`); format 1's only record
    /// of what was measured, so read back only from format 1 files.
    #[serde(default)]
    figures: Option<Json>,
    /// Format 1 only: a latency trial's buckets (format 2 keeps them in the outcome).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    histogram: Option<Vec<(u64, u64)>>,
}

fn export_trial(t: &TrialRecord, figures_of: FiguresOf) -> ExportTrial {
    ExportTrial {
        seq: t.seq,
        experiment: t.experiment,
        family: t.family,
        repeat: t.repeat,
        params: t.params.clone(),
        status: t.status.label().to_string(),
        reason: t.status.reason().map(str::to_string),
        started: t.started.clone(),
        elapsed_s: t.elapsed_s,
        spec: t.spec.clone(),
        outcome: t.outcome.clone(),
        figures: figures_of(t).map(Json::Object),
        histogram: None,
    }
}

/// The export document of `runs`, as pretty JSON ending in a newline.
pub fn document(runs: &[(RunRecord, Vec<TrialRecord>)], figures_of: FiguresOf) -> Result<String> {
    let doc = Document {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        schedlab_version: Some(env!("CARGO_PKG_VERSION").into()),
        runs: runs
            .iter()
            .map(|(run, trials)| ExportRun {
                uuid: run.uuid.clone(),
                suite_name: run.suite_name.clone(),
                suite_text: run.suite_text.clone(),
                options: serde_json::to_value(&run.options).unwrap_or(Json::Null),
                started: run.started.clone(),
                ended: run.ended.clone(),
                status: run.status.to_string(),
                tool_version: run.tool_version.clone(),
                machine: run.machine.as_json().clone(),
                warnings: Some(run.warnings.clone()),
                planned: run.planned,
                trials: trials.iter().map(|t| export_trial(t, figures_of)).collect(),
            })
            .collect(),
    };
    let mut text = serde_json::to_string_pretty(&doc).map_err(|e| Error::failed(format!("encoding: {e}")))?;
    text.push('\n');
    Ok(text)
}

/// Read an export document (format 1 or 2) back into records (local ids are assigned
/// on insert).
pub fn parse_document(file: &str, text: &str) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
    let doc: Json = serde_json::from_str(text).map_err(|e| {
        Error::usage(format!(
            "{file} is not a schedlab export (not JSON: {e}); `schedlab export RUN --format json` makes one"
        ))
    })?;
    if doc.get("format").and_then(Json::as_str) != Some(FORMAT) {
        return Err(Error::usage(format!(
            "{file} is not a schedlab export (no \"format\": \"{FORMAT}\" field); `schedlab export RUN --format json` makes one"
        )));
    }
    let version = doc.get("format_version").and_then(Json::as_i64).unwrap_or(0);
    if version > FORMAT_VERSION {
        return Err(Error::usage(format!(
            "{file} was written by a newer schedlab ({}; export format {version}, this schedlab reads up to \
             {FORMAT_VERSION}): upgrade schedlab to import it",
            doc.get("schedlab_version").and_then(Json::as_str).unwrap_or("unknown version")
        )));
    }
    let doc: Document =
        serde_json::from_value(doc).map_err(|e| Error::usage(format!("{file} is not a valid schedlab export: {e}")))?;
    Ok(doc.runs.into_iter().map(|r| import_run(version, r)).collect())
}

fn import_run(version: i64, r: ExportRun) -> (RunRecord, Vec<TrialRecord>) {
    let trials = r
        .trials
        .into_iter()
        .map(|t| {
            let status = TrialStatus::from_parts(&t.status, t.reason);
            let outcome = match (version, t.outcome, t.figures) {
                (2.., outcome, _) => outcome,
                (_, _, Some(figures)) if status.is_ok() => legacy::outcome(t.family, &figures, t.histogram),
                _ => None,
            };
            let spec = t.spec.or_else(|| crate::families::spec_from_params(t.family, &t.params));
            TrialRecord {
                seq: t.seq,
                experiment: t.experiment,
                family: t.family,
                repeat: t.repeat,
                params: t.params,
                spec,
                outcome,
                status,
                started: t.started,
                elapsed_s: t.elapsed_s,
            }
        })
        .collect();
    let run = RunRecord {
        id: 0,
        uuid: r.uuid,
        suite_name: r.suite_name,
        suite_text: r.suite_text,
        options: crate::model::run::RunOptions::from_json(r.options),
        started: r.started,
        ended: r.ended,
        status: r.status.into(),
        tool_version: r.tool_version,
        machine: crate::sys::machine::StoredMachine::from_json(r.machine),
        warnings: r.warnings.unwrap_or_default(),
        planned: r.planned,
        pid: None,
    };
    (run, trials)
}

/// A value as CSV cell text: null is empty, a string is itself, anything else its JSON.
fn csv_cell(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A trial with its run and its figures, for one CSV row.
type CsvRow<'a> = (&'a RunRecord, &'a TrialRecord, Option<Map<String, Json>>);

/// One row per trial with a header: run and trial identity, `param.*` and the figures.
pub fn csv(runs: &[(RunRecord, Vec<TrialRecord>)], figures_of: FiguresOf) -> String {
    let mut params: Vec<String> = Vec::new();
    let mut figures: Vec<String> = Vec::new();
    let rows: Vec<CsvRow> =
        runs.iter().flat_map(|(run, trials)| trials.iter().map(move |t| (run, t, figures_of(t)))).collect();
    for (_, t, shown) in &rows {
        {
            for k in t.params.keys() {
                if !params.iter().any(|p| p == k) {
                    params.push(k.to_string());
                }
            }
            for (k, v) in shown.iter().flatten() {
                // Nested lists (per-thread figures) do not fit a cell; the JSON export has them.
                if !v.is_array() && !v.is_object() && !figures.contains(k) && !params.contains(k) {
                    figures.push(k.clone());
                }
            }
        }
    }
    let fixed = [
        "run_id",
        "run_uuid",
        "suite",
        "hostname",
        "kernel",
        "seq",
        "experiment",
        "family",
        "repeat",
        "status",
        "reason",
        "elapsed_s",
    ];
    let mut header: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    header.extend(params.iter().map(|p| format!("param.{p}")));
    header.extend(figures.iter().cloned());
    let mut lines = vec![header];
    for (run, t, shown) in &rows {
        {
            let mut row = vec![
                json!(run.id),
                json!(run.uuid),
                json!(run.suite_name),
                json!(run.machine.hostname()),
                json!(run.machine.kernel_release()),
                json!(t.seq),
                json!(t.experiment),
                json!(t.family.as_str()),
                json!(t.repeat),
                json!(t.status.label()),
                json!(t.status.reason()),
                json!(t.elapsed_s),
            ];
            // A cell without the parameter, or a null one, is an empty field.
            let param = |v: &CellValue| if v.is_null() { Json::Null } else { Json::String(v.text()) };
            row.extend(params.iter().map(|p| t.params.get(p).map_or(Json::Null, param)));
            row.extend(figures.iter().map(|f| shown.as_ref().and_then(|x| x.get(f)).cloned().unwrap_or(Json::Null)));
            lines.push(row.iter().map(csv_cell).collect());
        }
    }
    csv_text(lines)
}

/// Rows as CSV (RFC 4180, one `\n` after each row): a cell is quoted when it holds a
/// comma, a quote or a line break.
pub fn csv_text<R: IntoIterator<Item = C>, C: AsRef<[u8]>>(rows: impl IntoIterator<Item = R>) -> String {
    let mut writer = csv::WriterBuilder::new().flexible(true).from_writer(Vec::new());
    for row in rows {
        // Writing to memory cannot fail.
        writer.write_record(row).expect("CSV into memory");
    }
    let bytes = writer.into_inner().expect("CSV into memory");
    String::from_utf8(bytes).expect("CSV of UTF-8 cells is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_the_values_text() {
        assert_eq!(csv_cell(&json!("a,b")), "a,b");
        assert_eq!(csv_cell(&json!(1.5)), "1.5");
        assert_eq!(csv_cell(&json!(true)), "true");
        assert_eq!(csv_cell(&Json::Null), "");
    }

    #[test]
    fn foreign_documents_are_refused() {
        assert!(parse_document("x.json", "{\"a\": 1}").unwrap_err().to_string().contains("not a schedlab export"));
        assert!(parse_document("x.json", "not json").unwrap_err().to_string().contains("not JSON"));
        let newer = "{\"format\": \"schedlab-export\", \"format_version\": 99, \"runs\": []}";
        assert!(parse_document("x.json", newer).unwrap_err().to_string().contains("newer schedlab"));
    }
}
