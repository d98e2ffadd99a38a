//! `schedlab compare` and `schedlab report`: read stored runs, never run anything.

use crate::cli::{CompareArgs, ReportArgs};
use crate::commands::emit;
use crate::error::{Error, Result};
use crate::report::compare;
use crate::report::exporter::{self, Format as TableFormat, RunView};
use crate::report::{findings, html, plots};
use crate::store::{resolve_path, Access, Store};

pub fn run(args: &CompareArgs) -> Result<i32> {
    let store = Store::open(&resolve_path(args.db.db.as_deref()), Access::Read)?;
    let (a, b) = (store.resolve_run(&args.run_a)?, store.resolve_run(&args.run_b)?);
    let (trials_a, trials_b) = (store.trials(a)?, store.trials(b)?);
    let rows = compare::compare(&trials_a, &trials_b, args.threshold);
    if rows.is_empty() {
        return Err(Error::usage(format!(
            "runs {a} and {b} have no trials in common (none with the same family and parameters): nothing to compare"
        )));
    }
    // The page is written before anything is printed, so an unwritable path fails the
    // command with nothing half-reported.
    if let Some(path) = &args.html {
        let page = html::compare_page(&store.run(a)?, &store.run(b)?, &rows, args.threshold)?;
        crate::commands::results::write_atomically(path, page.as_bytes())?;
        eprintln!("schedlab: wrote {}", path.display());
    }
    let table = compare::table(&rows);
    match args.format {
        TableFormat::Text => emit(table.render().trim_end())?,
        TableFormat::Markdown => emit(table.render_markdown().trim_end())?,
        TableFormat::Csv => emit(table.render_csv().trim_end())?,
        TableFormat::Json => {
            for row in compare::json_rows(&rows) {
                emit(&row.to_string())?;
            }
        }
    }
    let regressions = rows.iter().filter(|r| r.regression).count();
    let undecided = rows.iter().filter(|r| matches!(r.verdict, compare::Verdict::TooFew(_))).count();
    if args.format != TableFormat::Json {
        emit(&format!(
            "\n{} figures compared (A = run {a}, B = run {b}); {regressions} regression(s) beyond {:.1}%; {undecided} undecided for lack of repeats",
            rows.len(),
            args.threshold * 100.0
        ))?;
    }
    Ok(if regressions > 0 { 1 } else { 0 })
}

pub fn report(args: &ReportArgs) -> Result<()> {
    let store = Store::open(&resolve_path(args.db.db.as_deref()), Access::Read)?;
    let ids = super::report::resolve_runs(&store, &args.runs)?;
    if ids.len() > 1 {
        return super::report::many(&store, &ids, args);
    }
    let id = ids[0];
    let run = store.run(id)?;
    let trials = store.trials(id)?;
    let found = findings::findings(&trials);
    let view = RunView { run: &run, trials: &trials, findings: &found };
    let text = exporter::for_format(args.format).render(&view);
    emit(text.trim_end())?;
    let charts = plots::plots(&trials);
    if let Some(dir) = &args.svg {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::env(format!("cannot make {}: {}", dir.display(), crate::error::describe_io(&e))))?;
        for chart in &charts {
            let path = dir.join(format!("{}.svg", chart.name));
            crate::commands::results::write_atomically(&path, chart.svg.as_bytes())?;
        }
        eprintln!("schedlab: wrote {} SVG plots to {}", charts.len(), dir.display());
    }
    if let Some(path) = &args.html {
        let page = html::run_page(&run, &trials, &charts, &found)?;
        crate::commands::results::write_atomically(path, page.as_bytes())?;
        eprintln!("schedlab: wrote {}", path.display());
    }
    Ok(())
}
