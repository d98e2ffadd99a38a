//! `schedlab compare` and `schedlab report`: read stored runs, never run anything.

use crate::cli::{CompareArgs, ComparisonOutput, ReportArgs};
use crate::decide::compare::{self as decided, Mode};
use crate::error::{Error, Result};
use crate::report::exporter::{self, Format as TableFormat, RunView};
use crate::report::output::emit;
use crate::report::{compare, json_line};
use crate::report::{html, plots};
use crate::store::{Access, RunRecord, Store, TrialRecord};
use serde::Serialize;

pub fn run(args: &CompareArgs) -> Result<i32> {
    let store = Store::open_arg(args.db.db.as_deref(), Access::Read)?;
    let (a, b) = (store.resolve_run(&args.run_a)?, store.resolve_run(&args.run_b)?);
    let (run_a, run_b) = (store.run(a)?, store.run(b)?);
    print_comparison(&store, &run_a, &run_b, &args.output)
}

/// Compare two stored runs and print it all: the table in the asked format, the summary,
/// and the HTML page when asked. The exit code: 1 when a figure regressed, else 0.
pub fn print_comparison(store: &Store, run_a: &RunRecord, run_b: &RunRecord, output: &ComparisonOutput) -> Result<i32> {
    let (threshold, format, html_path) = (output.threshold, output.format, output.html.as_deref());
    let (a, b) = (run_a.id, run_b.id);
    let (trials_a, trials_b) = (store.trials(a)?, store.trials(b)?);
    let mut mode = Mode::of(run_a, run_b);
    let history = match mode {
        Mode::Interleaved => Vec::new(),
        Mode::Separate { .. } => history(store, run_a, run_b, &trials_a)?,
    };
    if let Mode::Separate { history_runs } = &mut mode {
        *history_runs = history.len();
    }
    // An interleaved session judges equivalence at each experiment's own margin.
    let margins: Vec<f64> = crate::exec::suite::asked_of_run(run_a).iter().map(|a| a.margin).collect();
    let rows = decided::compare(&trials_a, &trials_b, threshold, mode, &history, &margins);
    if rows.is_empty() {
        return Err(Error::usage(format!(
            "runs {a} and {b} have no trials in common (none with the same family and parameters): nothing to compare"
        )));
    }
    // The page is written before anything is printed, so an unwritable path fails the
    // command with nothing half-reported.
    if let Some(path) = html_path {
        let page = html::compare_page(run_a, run_b, &rows, threshold, mode)?;
        crate::report::output::write_atomically(path, page.as_bytes())?;
        eprintln!("schedlab: wrote {}", path.display());
    }
    let table = compare::table(&rows);
    match format {
        TableFormat::Text => emit(table.render().trim_end())?,
        TableFormat::Markdown => emit(table.render_markdown().trim_end())?,
        TableFormat::Csv => emit(table.render_csv().trim_end())?,
        TableFormat::Json => {
            for row in compare::json_rows(&rows, mode) {
                emit(&json_line(&row))?;
            }
        }
    }
    let culprits = decided::culprit_changes(&trials_a, &trials_b, 5);
    let noise = [compare::RunNoise::of(run_a, &trials_a), compare::RunNoise::of(run_b, &trials_b)];
    let noise_differences = crate::decide::compare::noise_differences(run_a, run_b);
    if format != TableFormat::Json {
        emit(&format!("\n{}", compare::summary(&rows, mode, threshold, a, b)))?;
        emit(&format!("\n{}", compare::noise_text(&noise[0], &noise[1], &noise_differences)))?;
        if let Some(text) = compare::culprit_text(&culprits) {
            emit(&format!("\n{text}"))?;
        }
        if let Some(text) = settings_text(run_a, run_b) {
            emit(&format!("\n{text}"))?;
        }
    } else {
        let changed = settings_changed(run_a, run_b);
        if !changed.is_empty() {
            let list = changed.iter().map(|c| SettingChange { field: &c.field, a: &c.from, b: &c.to }).collect();
            emit(&json_line(&After::SettingsChanged(list)))?;
        }
        for c in &culprits {
            emit(&json_line(&After::CulpritChange(c)))?;
        }
        // A line of its own, like the culprits', only where a run has a floor.
        if noise.iter().any(|n| n.floor.is_some()) {
            emit(&json_line(&After::NoiseFloors { runs: &noise, differences: &noise_differences }))?;
        }
    }
    Ok(if rows.iter().any(|r| r.regression) { 1 } else { 0 })
}

/// The JSON lines after the rows, each an object of one key naming what it holds.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum After<'a> {
    /// The fingerprint's settings that differ between A and B.
    SettingsChanged(Vec<SettingChange<'a>>),
    /// Where what ran in the tail's place changed.
    CulpritChange(&'a decided::CulpritChange),
    /// Each run's noise floor and how they differ.
    NoiseFloors { runs: &'a [compare::RunNoise], differences: &'a [String] },
}

#[derive(Serialize)]
struct SettingChange<'a> {
    field: &'a str,
    a: &'a str,
    b: &'a str,
}

/// The fingerprint's settings fields (`model::settings`) that differ between A and B.
fn settings_changed(a: &RunRecord, b: &RunRecord) -> Vec<crate::decide::trend::FieldChange> {
    crate::decide::trend::changed_fields(&a.machine, &b.machine)
        .into_iter()
        .filter(|c| c.field == "settings" || c.field.starts_with("settings."))
        .collect()
}

/// "What changed between A and B (their settings): sysctl.kernel.x 950000 → 980000"; none
/// where the runs switched the same (or nothing).
fn settings_text(a: &RunRecord, b: &RunRecord) -> Option<String> {
    let changed = settings_changed(a, b);
    if changed.is_empty() {
        return None;
    }
    let list: Vec<String> =
        changed.iter().map(|c| format!("{} {} → {}", c.field.trim_start_matches("settings."), c.from, c.to)).collect();
    Some(format!("What changed between run {} and run {} (their settings): {}", a.id, b.id, list.join(", ")))
}

/// Other runs whose spread tells how far two runs on this machine drift apart: the most
/// recent ones on the same machine (by hostname) that hold a cell of A, not of an A/B
/// session (whose B side ran in a changed state). None when A and B ran on different
/// machines: their difference is the machine's.
fn history(store: &Store, a: &RunRecord, b: &RunRecord, trials_a: &[TrialRecord]) -> Result<Vec<Vec<TrialRecord>>> {
    const MOST: usize = 20;
    let host = |r: &RunRecord| r.machine.hostname().map(str::to_string);
    let Some(hostname) = host(a).filter(|h| host(b).as_ref() == Some(h)) else { return Ok(Vec::new()) };
    let mut candidates: Vec<RunRecord> = store
        .runs()?
        .into_iter()
        .map(|summary| summary.run)
        .filter(|r| r.id != a.id && r.id != b.id && r.options.ab.is_none())
        .filter(|r| host(r).as_deref() == Some(hostname.as_str()))
        .collect();
    candidates.sort_by_key(|r| std::cmp::Reverse(r.id));
    let mut out = Vec::new();
    for run in candidates {
        let trials = store.trials(run.id)?;
        let shares_a_cell =
            trials.iter().any(|t| t.is_ok() && trials_a.iter().any(|x| x.family == t.family && x.params == t.params));
        if shares_a_cell {
            out.push(trials);
            if out.len() == MOST {
                break;
            }
        }
    }
    Ok(out)
}

pub fn report(args: &ReportArgs) -> Result<()> {
    let store = Store::open_arg(args.db.db.as_deref(), Access::Read)?;
    let ids = super::report::resolve_runs(&store, &args.runs)?;
    if ids.len() > 1 {
        if let Some(name) = &args.against {
            return Err(Error::usage(format!(
                "--against {name} sets one run beside the reference set; name one run, not {}",
                ids.len()
            )));
        }
        return super::report::many(&store, &ids, args);
    }
    let id = ids[0];
    let run = store.run(id)?;
    let trials = store.trials(id)?;
    // Checked before anything is printed: a run without the family it compares is refused.
    let against = match &args.against {
        Some(name) => Some(crate::report::against::against(name, &run, &trials)?),
        None => None,
    };
    let found = crate::decide::findings::findings_of_run(&run, &trials);
    let view = RunView { run: &run, trials: &trials, findings: &found };
    let text = match (&against, args.format) {
        (Some(a), TableFormat::Json) => crate::report::against::with_report(&exporter::run_doc(&view), a),
        (Some(a), format) => {
            format!("{}\n\n{}", exporter::for_format(format).render(&view).trim_end(), a.render(format))
        }
        (None, format) => exporter::for_format(format).render(&view),
    };
    emit(text.trim_end())?;
    let charts = plots::plots(&trials);
    if let Some(dir) = &args.svg {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::env(format!("cannot make {}: {}", dir.display(), crate::error::describe_io(&e))))?;
        // The forest plots of the run's decisions (and of a seed suite's claims) as well.
        let forests = crate::report::forest::run_charts(&found, crate::decide::claims::for_run(&run, &trials).as_ref());
        for chart in charts.iter().chain(&forests) {
            let path = dir.join(format!("{}.svg", chart.name));
            crate::report::output::write_atomically(&path, chart.svg.as_bytes())?;
        }
        eprintln!("schedlab: wrote {} SVG plots to {}", charts.len() + forests.len(), dir.display());
    }
    if let Some(path) = &args.html {
        let page = html::run_page_against(&run, &trials, &charts, &found, against.as_ref())?;
        crate::report::output::write_atomically(path, page.as_bytes())?;
        eprintln!("schedlab: wrote {}", path.display());
    }
    Ok(())
}
