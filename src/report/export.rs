//! Moving runs between databases and into spreadsheets.
//!
//! JSON export is lossless: everything stored about a run and its trials except the
//! local row ids, so export -> import (into any database) -> export gives the same text.
//! CSV is one row per trial, flattened, for spreadsheets and pandas.

use crate::error::{Error, Result};
use crate::store::{RunRecord, TrialRecord};
use serde_json::{json, Map, Value as Json};

pub const FORMAT: &str = "schedlab-export";
pub const FORMAT_VERSION: i64 = 1;

pub fn run_json(run: &RunRecord, trials: &[TrialRecord]) -> Json {
    json!({
        "uuid": run.uuid,
        "suite_name": run.suite_name,
        "suite_text": run.suite_text,
        "options": run.options,
        "started": run.started,
        "ended": run.ended,
        "status": run.status,
        "tool_version": run.tool_version,
        "machine": run.machine,
        "warnings": run.warnings,
        "planned": run.planned,
        "trials": trials.iter().map(trial_json).collect::<Vec<_>>(),
    })
}

fn trial_json(t: &TrialRecord) -> Json {
    json!({
        "seq": t.seq,
        "experiment": t.experiment,
        "family": t.family,
        "repeat": t.repeat,
        "params": t.params,
        "status": t.status,
        "reason": t.reason,
        "started": t.started,
        "elapsed_s": t.elapsed_s,
        "figures": t.figures,
        "histogram": t.histogram,
    })
}

pub fn document(runs: Vec<Json>) -> Json {
    json!({
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "schedlab_version": env!("CARGO_PKG_VERSION"),
        "runs": runs,
    })
}

fn bad(file: &str, what: impl std::fmt::Display) -> Error {
    Error::usage(format!("{file} is not a valid schedlab export: {what}"))
}

/// Read an export document back into records (local ids are assigned on insert).
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
    let runs = doc.get("runs").and_then(Json::as_array).ok_or_else(|| bad(file, "no \"runs\" list"))?;
    runs.iter().enumerate().map(|(i, r)| parse_run(file, i, r)).collect()
}

fn parse_run(file: &str, index: usize, r: &Json) -> Result<(RunRecord, Vec<TrialRecord>)> {
    let what = |field: &str| bad(file, format!("run {} has no valid \"{field}\"", index + 1));
    let text = |field: &str| r.get(field).and_then(Json::as_str).map(str::to_string).ok_or_else(|| what(field));
    let run = RunRecord {
        id: 0,
        uuid: text("uuid")?,
        suite_name: text("suite_name")?,
        suite_text: text("suite_text")?,
        options: r.get("options").cloned().unwrap_or(Json::Null),
        started: text("started")?,
        ended: r.get("ended").and_then(Json::as_str).map(str::to_string),
        status: text("status")?,
        tool_version: text("tool_version")?,
        machine: r.get("machine").cloned().unwrap_or(Json::Null),
        warnings: r.get("warnings").cloned().unwrap_or(Json::Array(vec![])),
        planned: r.get("planned").and_then(Json::as_i64).ok_or_else(|| what("planned"))?,
        pid: None,
    };
    let trials = r.get("trials").and_then(Json::as_array).ok_or_else(|| what("trials"))?;
    let trials = trials
        .iter()
        .enumerate()
        .map(|(j, t)| {
            let what = |field: &str| bad(file, format!("run {} trial {} has no valid \"{field}\"", index + 1, j + 1));
            let int = |field: &str| t.get(field).and_then(Json::as_i64).ok_or_else(|| what(field));
            let text = |field: &str| t.get(field).and_then(Json::as_str).map(str::to_string).ok_or_else(|| what(field));
            let histogram = match t.get("histogram") {
                None | Some(Json::Null) => None,
                Some(h) => Some(serde_json::from_value::<Vec<(u64, u64)>>(h.clone()).map_err(|_| what("histogram"))?),
            };
            Ok(TrialRecord {
                seq: int("seq")?,
                experiment: int("experiment")?,
                family: text("family")?,
                repeat: int("repeat")?,
                params: t.get("params").filter(|p| p.is_object()).cloned().ok_or_else(|| what("params"))?,
                figures: t.get("figures").filter(|f| !f.is_null()).cloned(),
                histogram,
                status: text("status")?,
                reason: t.get("reason").and_then(Json::as_str).map(str::to_string),
                started: text("started")?,
                elapsed_s: t.get("elapsed_s").and_then(Json::as_f64).ok_or_else(|| what("elapsed_s"))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((run, trials))
}

fn csv_cell(v: &Json) -> String {
    let text = match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    crate::report::table::csv_quote(&text)
}

/// One row per trial with a header: run and trial identity, `param.*` and the figures.
pub fn csv(runs: &[(RunRecord, Vec<TrialRecord>)]) -> String {
    let mut params: Vec<String> = Vec::new();
    let mut figures: Vec<String> = Vec::new();
    for (_, trials) in runs {
        for t in trials {
            for k in t.params.as_object().into_iter().flat_map(Map::keys) {
                if !params.contains(k) {
                    params.push(k.clone());
                }
            }
            for (k, v) in t.figures.as_ref().and_then(Json::as_object).into_iter().flatten() {
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
    let mut out = header.join(",");
    out.push('\n');
    for (run, trials) in runs {
        for t in trials {
            let mut row = vec![
                json!(run.id),
                json!(run.uuid),
                json!(run.suite_name),
                run.machine.get("hostname").cloned().unwrap_or(Json::Null),
                run.machine.get("kernel_release").cloned().unwrap_or(Json::Null),
                json!(t.seq),
                json!(t.experiment),
                json!(t.family),
                json!(t.repeat),
                json!(t.status),
                json!(t.reason),
                json!(t.elapsed_s),
            ];
            row.extend(params.iter().map(|p| t.params.get(p).cloned().unwrap_or(Json::Null)));
            row.extend(
                figures.iter().map(|f| t.figures.as_ref().and_then(|x| x.get(f)).cloned().unwrap_or(Json::Null)),
            );
            out.push_str(&row.iter().map(csv_cell).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(csv_cell(&json!("a,b")), "\"a,b\"");
        assert_eq!(csv_cell(&json!("say \"hi\"")), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell(&json!(1.5)), "1.5");
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
