//! `schedlab report RUN RUN…`: several stored runs, each reported as `report RUN` reports
//! it, then the overlay of their rings (`report::overlay`). One run is `compare::report`.

use crate::cli::ReportArgs;
use crate::decide::findings::{self, Finding};
use crate::error::{describe_io, Error, Result};
use crate::report::chart::Chart;
use crate::report::exporter::{self, Format, RunDoc, RunView};
use crate::report::html::{self, ReportedRun};
use crate::report::output::emit;
use crate::report::output::write_atomically;
use crate::report::overlay;
use crate::report::plots;
use crate::report::stored;
use crate::store::{RunRecord, Store, TrialRecord};

/// The runs named, each once, in the order first named.
pub fn resolve_runs(store: &Store, names: &[String]) -> Result<Vec<i64>> {
    let mut ids = Vec::new();
    for name in names {
        let id = store.resolve_run(name)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.is_empty() {
        return Err(Error::usage("report needs a run: an id as `schedlab list` shows it, or `latest`"));
    }
    Ok(ids)
}

/// A run with everything its report shows.
struct LoadedReport {
    run: RunRecord,
    trials: Vec<TrialRecord>,
    findings: Vec<Finding>,
    /// Named `runN-…`, so the plots of several runs never share a file or an id.
    charts: Vec<Chart>,
}

pub fn many(store: &Store, ids: &[i64], args: &ReportArgs) -> Result<()> {
    let mut loaded = Vec::with_capacity(ids.len());
    for &id in ids {
        let run = store.run(id)?;
        let trials = store.trials(id)?;
        let findings = findings::findings_of_run(&run, &trials);
        let charts =
            plots::plots(&trials).into_iter().map(|c| Chart { name: format!("run{id}-{}", c.name), ..c }).collect();
        loaded.push(LoadedReport { run, trials, findings, charts });
    }
    let pairs: Vec<(RunRecord, Vec<TrialRecord>)> = loaded.iter().map(|l| (l.run.clone(), l.trials.clone())).collect();
    let overlay = overlay::overlay(&pairs);
    let chart = plots::overlay_chart(&overlay);

    emit(render(args.format, &loaded, &overlay).trim_end())?;

    if let Some(dir) = &args.svg {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::env(format!("cannot make {}: {}", dir.display(), describe_io(&e))))?;
        // Each run's forest plots too (`runN-forest`, `runN-claims-forest`).
        let forests: Vec<Chart> = loaded
            .iter()
            .flat_map(|l| {
                let claims = crate::decide::claims::for_run(&l.run, &l.trials);
                crate::report::forest::run_charts(&l.findings, claims.as_ref())
                    .into_iter()
                    .map(|c| Chart { name: format!("run{}-{}", l.run.id, c.name), ..c })
            })
            .collect();
        let all: Vec<&Chart> = chart.iter().chain(loaded.iter().flat_map(|l| &l.charts)).chain(&forests).collect();
        for c in &all {
            write_atomically(&dir.join(format!("{}.svg", c.name)), c.svg.as_bytes())?;
        }
        eprintln!("schedlab: wrote {} SVG plots to {}", all.len(), dir.display());
    }
    if let Some(path) = &args.html {
        let runs: Vec<ReportedRun> = loaded
            .iter()
            .map(|l| ReportedRun { run: &l.run, trials: &l.trials, charts: &l.charts, findings: &l.findings })
            .collect();
        let page = html::runs_page(&runs, &overlay, chart.as_ref())?;
        write_atomically(path, page.as_bytes())?;
        eprintln!("schedlab: wrote {}", path.display());
    }
    Ok(())
}

/// Each run's report as `report RUN --format F` prints it, then the overlay.
fn render(format: Format, loaded: &[LoadedReport], overlay: &overlay::Overlay) -> String {
    let exporter = exporter::for_format(format);
    let one = |l: &LoadedReport| exporter.render(&RunView { run: &l.run, trials: &l.trials, findings: &l.findings });
    let heading =
        |l: &LoadedReport| format!("run {}: {} on {}", l.run.id, l.run.suite_name, overlay::machine_label(&l.run));
    match format {
        Format::Json => {
            // Each run's document exactly as a one-run report prints it.
            let runs: Vec<RunDoc> = loaded
                .iter()
                .map(|l| exporter::run_doc(&RunView { run: &l.run, trials: &l.trials, findings: &l.findings }))
                .collect();
            #[derive(serde::Serialize)]
            struct Doc<'a> {
                runs: Vec<RunDoc<'a>>,
                overlay: overlay::OverlayDoc<'a>,
            }
            let mut text = serde_json::to_string_pretty(&Doc { runs, overlay: overlay.json() }).unwrap_or_default();
            text.push('\n');
            text
        }
        Format::Text => {
            let rule = "-".repeat(78);
            let mut out = String::new();
            for l in loaded {
                out.push_str(&format!("{}\n{rule}\n\n", one(l).trim_end()));
            }
            out.push_str(&overlay.render(format));
            out
        }
        Format::Markdown => {
            let mut out = String::new();
            for l in loaded {
                let ok = l.trials.iter().filter(|t| t.is_ok()).count();
                let header = stored::describe_run(&l.run, ok, l.trials.len() - ok);
                out.push_str(&format!(
                    "## {}\n\n```\n{}\n```\n\n{}\n",
                    heading(l),
                    header.trim_end(),
                    one(l).trim_end()
                ));
                out.push('\n');
            }
            out.push_str(&overlay.render(format));
            out
        }
        Format::Csv => {
            let mut out = String::new();
            for l in loaded {
                out.push_str(&format!("# {}\n{}\n", heading(l), one(l).trim_end()));
            }
            out.push_str(&overlay.render(format));
            out
        }
    }
}
