//! `schedlab trend`: each cell's figure over the stored runs of each machine, its change
//! points, and (exit 1) whether the newest run starts a regression. Reads only.

use crate::cli::TrendArgs;
use crate::decide::trend::{self as decided, FigureChoice};
use crate::error::{Error, Result};
use crate::report::exporter::Format as TableFormat;
use crate::report::output::emit;
use crate::report::trend;
use crate::report::{html, plots};
use crate::store::{Access, Store};

pub fn run(args: &TrendArgs) -> Result<i32> {
    let choice = match args.figure.as_deref() {
        None => FigureChoice::Headline,
        Some("all") => FigureChoice::All,
        Some(key) if FigureChoice::known_keys().contains(&key) => FigureChoice::Named(key.to_string()),
        Some(key) => {
            return Err(Error::usage(format!(
                "no figure '{key}': one of {}, or all",
                FigureChoice::known_keys().join(", ")
            )))
        }
    };
    let store = Store::open_arg(args.db.db.as_deref(), Access::Read)?;
    let summaries = store.runs()?;
    let wanted: Vec<_> = summaries
        .into_iter()
        .map(|s| s.run)
        // The sides of an A/B session ran in states set up for the comparison.
        .filter(|r| r.options.ab.is_none())
        .filter(|r| args.machine.as_ref().is_none_or(|m| &decided::hostname(r) == m))
        .filter(|r| args.suite.as_ref().is_none_or(|s| &r.suite_name == s))
        .collect();
    if wanted.is_empty() {
        return Err(Error::usage(format!(
            "no stored run{}{}: see `schedlab list`",
            args.machine.as_ref().map_or(String::new(), |m| format!(" on machine '{m}'")),
            args.suite.as_ref().map_or(String::new(), |s| format!(" of suite '{s}'")),
        )));
    }
    let mut runs = Vec::with_capacity(wanted.len());
    for run in wanted {
        let trials = store.trials(run.id)?;
        runs.push((run, trials));
    }
    let series = decided::series(&runs, &choice, args.threshold);
    if series.is_empty() {
        return Err(Error::usage(format!(
            "the {} matching runs have no ok trial with the figure asked: nothing to follow",
            runs.len()
        )));
    }
    if let Some(path) = &args.html {
        let charts: Vec<_> =
            series.iter().enumerate().map(|(i, s)| plots::trend_chart(s, &format!("trend-{}", i + 1))).collect();
        let page = html::trend_page(&series, &charts, args.threshold, "schedlab trend")?;
        crate::report::output::write_atomically(path, page.as_bytes())?;
        eprintln!("schedlab: wrote {}", path.display());
    }
    match args.format {
        TableFormat::Json => emit(&crate::report::json_line(&trend::json(&series, args.threshold)))?,
        format => {
            let table = trend::table(&series);
            let text = match format {
                TableFormat::Markdown => table.render_markdown(),
                TableFormat::Csv => table.render_csv(),
                _ => table.render(),
            };
            emit(text.trim_end())?;
            let mut notes = Vec::new();
            for s in &series {
                for shift in &s.shifts {
                    notes.push(format!("{} · {} · {}", s.machine, s.cell_text(), trend::shift_text(s, shift)));
                }
                if let Some(n) = s.newest.as_ref().filter(|n| n.regression) {
                    notes.push(format!(
                        "{} · {} · {} newest {}",
                        s.machine,
                        s.cell_text(),
                        s.label,
                        trend::newest_text(n, args.threshold)
                    ));
                }
            }
            if format == TableFormat::Text {
                if !notes.is_empty() {
                    emit(&format!("\nChange points and regressions:\n  {}", notes.join("\n  ")))?;
                }
                emit(&format!("\n{}", trend::METHOD_TEXT))?;
            }
        }
    }
    let regressed = series.iter().any(|s| s.newest.as_ref().is_some_and(|n| n.regression));
    Ok(if regressed { 1 } else { 0 })
}
