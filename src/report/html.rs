//! One self-contained HTML page per run (or comparison): inline CSS, inline SVG, no
//! network reference of any kind, so it opens offline and can be mailed or archived.
//!
//! The pages are MiniJinja templates (`templates/`, embedded in the binary) with HTML
//! auto-escaping on: every text from a run (suite name and text, machine fields,
//! parameters, findings) is escaped by the engine. The only markup that is not is the
//! templates' own and the SVG plots, which are passed as explicitly safe values.
//!
//! Each page has one function that builds its context from the stored records
//! (`run_view`, `compare_view`) and one that renders it.

use crate::decide::compare::{Mode, Row, Verdict, ALPHA};
use crate::decide::findings::Finding;
use crate::decide::trend::TrendSeries;
use crate::error::{Error, Result};
use crate::report::against::AgainstReport;
use crate::report::cells::RunRule;
use crate::report::chart::Chart;
use crate::report::compare;
use crate::report::overlay::Overlay;
use crate::report::stored::experiment_tables_for;
use crate::report::table::Table;
use crate::report::trend;
use crate::store::{RunRecord, TrialRecord};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior, Value};
use serde::Serialize;
use serde_json::Value as Json;

/// (name, text) of every template; the `.html` names turn auto-escaping on.
const TEMPLATES: [(&str, &str); 8] = [
    ("base.html", include_str!("templates/base.html")),
    ("glance.html", include_str!("templates/glance.html")),
    ("table.html", include_str!("templates/table.html")),
    ("run_body.html", include_str!("templates/run_body.html")),
    ("run.html", include_str!("templates/run.html")),
    ("runs.html", include_str!("templates/runs.html")),
    ("compare.html", include_str!("templates/compare.html")),
    ("trend.html", include_str!("templates/trend.html")),
];

/// One table cell: its text and whether it marks a regression (drawn red).
#[derive(Serialize)]
struct CellView {
    text: String,
    bad: bool,
}

/// One table, as `templates/table.html` draws it.
#[derive(Serialize)]
struct TableView {
    /// Shown as an `<h3>` above the table when set.
    title: Option<String>,
    headers: Vec<String>,
    rows: Vec<Vec<CellView>>,
    /// The first this many columns are left-aligned (names, parameters).
    left_columns: usize,
    /// Left-aligned cells wrap instead of widening the page (long machine fields).
    wrap: bool,
}

impl TableView {
    fn of(title: Option<String>, table: &Table, left_columns: usize) -> TableView {
        let rows = table
            .rows()
            .iter()
            .map(|row| row.iter().map(|c| CellView { text: c.clone(), bad: false }).collect())
            .collect();
        TableView { title, headers: table.headers().to_vec(), rows, left_columns, wrap: false }
    }
}

/// A plot: its id and its SVG, already markup.
#[derive(Serialize)]
struct FigureView {
    name: String,
    svg: Value,
}

/// Answers at a glance (`templates/glance.html`): the question table, the method, the
/// forest plot.
#[derive(Serialize)]
struct GlanceView {
    /// The section's id.
    id: String,
    headline: String,
    headers: Vec<String>,
    rows: Vec<GlanceRow>,
    method: String,
    forest: Option<Value>,
}

#[derive(Serialize)]
struct GlanceRow {
    cells: Vec<String>,
    /// The answer cell's class: its colour, as in the forest plot.
    class: &'static str,
}

fn glance_view(
    id: String,
    headline: String,
    rows: &[crate::report::glance::DecisionRow],
    method: String,
    forest: Option<String>,
) -> GlanceView {
    GlanceView {
        id,
        headline,
        headers: crate::report::glance::HEADERS.iter().map(|h| h.to_string()).collect(),
        rows: rows
            .iter()
            .map(|r| GlanceRow {
                cells: vec![
                    r.question.clone(),
                    r.compared.clone(),
                    r.answer.clone(),
                    r.ratio_text(),
                    match r.confidence {
                        Some(c) => format!("{} ({:.1}%)", r.interval_text(), c * 100.0),
                        None => r.interval_text(),
                    },
                    r.blocks_text(),
                    r.p_text(),
                ],
                class: r.call.class(),
            })
            .collect(),
        method,
        forest: forest.map(Value::from_safe_string),
    }
}

/// One run as the page shows it: its heading, machine, cells, findings and charts.
#[derive(Serialize)]
struct RunSection {
    title: String,
    run_id: i64,
    suite_name: String,
    /// The noise floor's one-line summary, where the run probed it.
    noise_floor: Option<String>,
    host: String,
    kernel: String,
    started: String,
    ended: String,
    status: String,
    ok: usize,
    not_ok: usize,
    planned: i64,
    tool_version: String,
    /// A seed suite's claims, decided on the seed's data and on this run: the page opens
    /// with them.
    claims: Option<TableView>,
    /// The forest plot of the claims' ratios, under their table.
    claims_forest: Option<Value>,
    /// The question table and the forest plot: the page opens with them.
    questions: Option<GlanceView>,
    /// The findings in full, under a disclosure.
    findings: Vec<String>,
    warnings: Vec<String>,
    experiments: Vec<TableView>,
    /// Lines read beside the tables: each workload experiment's starvation line.
    notes: Vec<String>,
    /// The trials that did not finish ok, when there are any.
    failed: Option<TableView>,
    figures: Vec<FigureView>,
    machine: TableView,
    suite_text: String,
}

/// The context of `templates/run.html`: one run, and what it is set beside, if anything.
#[derive(Serialize)]
struct RunPage {
    title: String,
    run: RunSection,
    against: Option<AgainstView>,
}

/// `report --against`: the run beside a seed document's figures (`report::against`).
#[derive(Serialize)]
struct AgainstView {
    name: String,
    heading: String,
    sections: Vec<AgainstSection>,
}

#[derive(Serialize)]
struct AgainstSection {
    table: TableView,
    lines: Vec<String>,
}

fn against_view(a: &AgainstReport) -> AgainstView {
    AgainstView {
        name: a.name.clone(),
        heading: a.heading.clone(),
        sections: a
            .sections
            .iter()
            .map(|s| AgainstSection {
                table: TableView::of(Some(s.title.clone()), &s.table, s.left_columns),
                lines: s.lines.clone(),
            })
            .collect(),
    }
}

/// The overlay section of `templates/runs.html`.
#[derive(Serialize)]
struct OverlayView {
    /// The plot, already markup; none when no run has a ring trial that finished ok.
    figure: Option<Value>,
    /// Processes x line: CPU µs per hop.
    table: TableView,
    /// Which run (and machine) each column is.
    lines: TableView,
    findings: Vec<String>,
    left_out: Vec<String>,
}

/// The context of `templates/runs.html`: several runs and their overlay.
#[derive(Serialize)]
struct RunsView {
    title: String,
    count: usize,
    overlay: OverlayView,
    runs: Vec<RunSection>,
}

/// One run of a report: the record, its trials, its plots and its findings.
pub struct ReportedRun<'a> {
    pub run: &'a RunRecord,
    pub trials: &'a [TrialRecord],
    pub charts: &'a [Chart],
    pub findings: &'a [Finding],
}

/// The context of `templates/compare.html`.
#[derive(Serialize)]
struct CompareView {
    title: String,
    /// Both runs' noise floors and, where they differ beyond their spread, how.
    noise: Vec<String>,
    noise_differs: bool,
    /// "run 3 (quick, 2024-... on host, kernel 6.8)"
    a: String,
    b: String,
    alpha: String,
    threshold_percent: String,
    /// What the comparison mode means for the verdicts (interleaved or separate runs).
    mode: String,
    compared: usize,
    tested: usize,
    regressions: usize,
    /// Figures significant but inside the drift band of separate runs.
    drift: usize,
    /// Holm's first step is out of reach with these repeats.
    power_note: Option<String>,
    rows: TableView,
    /// The forest plot of the figures' ratios, under the summary.
    forest: Option<Value>,
    machine_a: TableView,
    machine_b: TableView,
}

fn machine_field(field: Option<&str>) -> String {
    field.unwrap_or("unknown").to_string()
}

/// The machine fingerprint, field by field; long values (the command line,
/// vulnerabilities) wrap instead of widening the page.
fn machine_view(machine: &Json) -> TableView {
    let rows = machine
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            vec![
                CellView { text: k.clone(), bad: false },
                CellView { text: crate::sys::machine::field_display(k, v), bad: false },
            ]
        })
        .collect();
    TableView { title: None, headers: vec!["Field".into(), "Value".into()], rows, left_columns: 2, wrap: true }
}

fn run_view(run: &RunRecord, trials: &[TrialRecord], charts: &[Chart], findings: &[Finding]) -> RunSection {
    let ok = trials.iter().filter(|t| t.is_ok()).count();
    let experiments = experiment_tables_for(trials, &RunRule::of(run))
        .into_iter()
        .map(|(title, table)| {
            let axes = table.headers().iter().take_while(|h| *h != "ok/runs").count();
            TableView::of(Some(title), &table, axes)
        })
        .collect();
    let grouped = crate::store::group::groups(trials);
    let notes: Vec<String> = crate::report::cells::by_experiment(&grouped)
        .values()
        .filter_map(|g| crate::report::stored::experiment_note(g))
        .flat_map(|text| text.lines().map(str::to_string).collect::<Vec<_>>())
        .collect();
    let failed: Vec<&TrialRecord> = trials.iter().filter(|t| !t.is_ok()).collect();
    let failed = (!failed.is_empty()).then(|| {
        let mut t = Table::new(["Family", "Parameters", "Repeat", "Status", "Reason"]);
        for f in failed {
            t.push(vec![
                f.family.as_str().to_string(),
                crate::report::json_line(&f.params),
                f.repeat.to_string(),
                f.status.label().to_string(),
                f.status.reason().unwrap_or_default().to_string(),
            ]);
        }
        TableView::of(Some("Trials not ok (excluded from the figures)".into()), &t, 5)
    });
    let claims = crate::decide::claims::for_run(run, trials);
    RunSection {
        title: format!("schedlab run {} ({})", run.id, run.suite_name),
        run_id: run.id,
        suite_name: run.suite_name.clone(),
        noise_floor: run.machine.fields().noise_floor.as_ref().map(|f| f.summary()),
        host: machine_field(run.machine.hostname()),
        kernel: machine_field(run.machine.kernel_release()),
        started: run.started.clone(),
        ended: run.ended.clone().unwrap_or_else(|| "not finished".into()),
        status: run.status.to_string(),
        ok,
        not_ok: trials.len() - ok,
        planned: run.planned,
        tool_version: run.tool_version.clone(),
        claims: claims.as_ref().map(|c| {
            let title = format!("{} (seed data: {}, built in; this run)", c.title, c.seed);
            // Long evidence: every column wraps.
            TableView { wrap: true, ..TableView::of(Some(title), &crate::report::claims::as_table(c), 3) }
        }),
        claims_forest: claims
            .as_ref()
            .and_then(|c| crate::report::forest::claims_svg(&crate::report::glance::claim_rows(c)))
            .map(Value::from_safe_string),
        questions: {
            let rows = crate::report::glance::questions(findings);
            (!rows.is_empty()).then(|| {
                glance_view(
                    format!("questions-{}", run.id),
                    crate::report::glance::headline(&rows),
                    &rows,
                    crate::report::glance::method_text(&rows),
                    crate::report::forest::questions_svg(&rows),
                )
            })
        },
        findings: crate::report::findings::questions_line(findings)
            .into_iter()
            .chain(findings.iter().map(ToString::to_string))
            .collect(),
        warnings: run.warnings.clone(),
        experiments,
        notes,
        failed,
        figures: charts
            .iter()
            .map(|c| FigureView { name: c.name.clone(), svg: Value::from_safe_string(c.svg.clone()) })
            .collect(),
        machine: machine_view(run.machine.as_json()),
        suite_text: run.suite_text.clone(),
    }
}

fn compare_view(a: &RunRecord, b: &RunRecord, rows: &[Row], threshold: f64, mode: Mode) -> CompareView {
    let who = |r: &RunRecord| {
        format!(
            "run {} ({}, {} on {}, kernel {})",
            r.id,
            r.suite_name,
            r.started,
            machine_field(r.machine.hostname()),
            machine_field(r.machine.kernel_release())
        )
    };
    let noise_differences = crate::decide::compare::noise_differences(a, b);
    let mut table = TableView::of(None, &compare::table(rows), 3);
    // compare::table has one line per row, in order, and the verdict last.
    for (cells, row) in table.rows.iter_mut().zip(rows) {
        if let Some(verdict) = cells.last_mut() {
            verdict.bad = row.regression;
        }
    }
    CompareView {
        title: format!("schedlab compare {} {}", a.id, b.id),
        noise: [a, b]
            .iter()
            .map(|r| {
                let summary = r.machine.fields().noise_floor.as_ref().map(|f| f.summary());
                format!("run {}: {}", r.id, summary.as_deref().unwrap_or("no noise floor recorded"))
            })
            .chain(noise_differences.iter().cloned())
            .collect(),
        noise_differs: !noise_differences.is_empty(),
        a: who(a),
        b: who(b),
        alpha: ALPHA.to_string(),
        threshold_percent: format!("{:.1}", threshold * 100.0),
        mode: mode.describe().trim_start_matches("mode: ").to_string(),
        compared: rows.len(),
        tested: rows.iter().filter(|r| r.p_adjusted.is_some()).count(),
        regressions: rows.iter().filter(|r| r.regression).count(),
        drift: rows.iter().filter(|r| r.verdict == Verdict::Drift).count(),
        power_note: compare::power_note(rows),
        rows: table,
        forest: crate::report::forest::compare_svg(
            &crate::report::glance::compare_rows(rows),
            threshold,
            mode == Mode::Interleaved,
        )
        .map(Value::from_safe_string),
        machine_a: machine_view(a.machine.as_json()),
        machine_b: machine_view(b.machine.as_json()),
    }
}

/// Render the template `name` with `context`. The templates are fixed and the
/// contexts typed, so a failure here is a bug in schedlab: it is reported as an
/// error, never a panic, and names the template.
fn render(name: &str, context: impl Serialize) -> Result<String> {
    let bug = |e: minijinja::Error| {
        Error::env(format!(
            "cannot render the HTML page from template {name}: {e} (a bug in schedlab; please report it)"
        ))
    };
    let mut env = Environment::new();
    // Block tags on their own lines leave no blank lines; the page ends with a newline.
    let syntax = SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).keep_trailing_newline(true).build();
    env.set_syntax(syntax.map_err(bug)?);
    // A misspelt field is an error, not an empty string.
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    for (template, source) in TEMPLATES {
        env.add_template(template, source).map_err(bug)?;
    }
    env.get_template(name).and_then(|t| t.render(Serde(context))).map_err(bug)
}

pub fn run_page(run: &RunRecord, trials: &[TrialRecord], charts: &[Chart], findings: &[Finding]) -> Result<String> {
    run_page_against(run, trials, charts, findings, None)
}

/// `run_page`, ending with the run set beside a reference set (`report --against`).
pub fn run_page_against(
    run: &RunRecord,
    trials: &[TrialRecord],
    charts: &[Chart],
    findings: &[Finding],
    against: Option<&AgainstReport>,
) -> Result<String> {
    let view = run_view(run, trials, charts, findings);
    render("run.html", RunPage { title: view.title.clone(), run: view, against: against.map(against_view) })
}

/// One page for several runs: their overlay (`chart`, drawn from `overlay`), then each
/// run as its own page shows it.
pub fn runs_page(runs: &[ReportedRun], overlay: &Overlay, chart: Option<&Chart>) -> Result<String> {
    let mut lines = Table::new(["Column", "Machine", "Figures"]);
    for l in &overlay.lines {
        let source = if l.imported { "imported, not measured by schedlab" } else { "measured by schedlab" };
        lines.push(vec![l.key.clone(), l.machine.clone(), source.to_string()]);
    }
    let ids: Vec<String> = runs.iter().map(|r| r.run.id.to_string()).collect();
    let view = RunsView {
        title: format!("schedlab report: runs {}", ids.join(", ")),
        count: runs.len(),
        overlay: OverlayView {
            figure: chart.map(|c| Value::from_safe_string(c.svg.clone())),
            table: TableView::of(None, &overlay.table(), 1),
            lines: TableView::of(None, &lines, 3),
            findings: overlay.finding_lines(),
            left_out: overlay.left_out_lines(),
        },
        runs: runs.iter().map(|r| run_view(r.run, r.trials, r.charts, r.findings)).collect(),
    };
    render("runs.html", view)
}

pub fn compare_page(a: &RunRecord, b: &RunRecord, rows: &[Row], threshold: f64, mode: Mode) -> Result<String> {
    render("compare.html", compare_view(a, b, rows, threshold, mode))
}

#[derive(Serialize)]
struct TrendSeriesView {
    heading: String,
    figure: Value,
    shifts: Vec<String>,
    newest: Option<String>,
    regression: bool,
}

#[derive(Serialize)]
struct TrendView {
    title: String,
    method: String,
    series_count: usize,
    change_points: usize,
    regressions: usize,
    threshold_percent: String,
    summary: TableView,
    series: Vec<TrendSeriesView>,
}

/// The history page: the summary table, then each series' plot, change points and newest-run test.
pub fn trend_page(series: &[TrendSeries], charts: &[Chart], threshold: f64, title: &str) -> Result<String> {
    let view = TrendView {
        title: title.to_string(),
        method: trend::METHOD_TEXT.to_string(),
        series_count: series.len(),
        change_points: series.iter().map(|s| s.shifts.len()).sum(),
        regressions: series.iter().filter(|s| s.newest.as_ref().is_some_and(|n| n.regression)).count(),
        threshold_percent: format!("{:.1}", threshold * 100.0),
        summary: TableView::of(None, &trend::table(series), 3),
        series: series
            .iter()
            .zip(charts)
            .map(|(s, chart)| TrendSeriesView {
                heading: format!("{} · {} · {}", s.machine, s.cell_text(), s.label),
                figure: Value::from_safe_string(chart.svg.clone()),
                shifts: s.shifts.iter().map(|c| format!("Change point at {}", trend::shift_text(s, c))).collect(),
                newest: s.newest.as_ref().map(|n| trend::newest_text(n, threshold)),
                regression: s.newest.as_ref().is_some_and(|n| n.regression),
            })
            .collect(),
    };
    render("trend.html", view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::Family;
    use crate::model::TrialStatus;
    use serde_json::json;

    fn run(id: i64, name: &str, machine: Json) -> RunRecord {
        RunRecord {
            id,
            uuid: "u".into(),
            suite_name: name.into(),
            suite_text: format!("name = \"{name}\"\n[[experiment]]\nfamily = \"ring\"\n"),
            options: Default::default(),
            started: "2024-01-01T00:00:00Z".into(),
            ended: None,
            status: crate::store::RunStatus::Running,
            tool_version: "0.1.0".into(),
            machine: crate::sys::machine::StoredMachine::from_json(machine),
            warnings: vec!["a <i>warning</i>".to_string()],
            planned: 1,
            pid: None,
        }
    }

    fn row(verdict: Verdict, regression: bool) -> Row {
        Row {
            family: Family::Ring,
            params: crate::model::cell::Cell::from_iter([("procs", 2i64.into())]),
            figure: "ns_per_switch",
            label: "ns/switch",
            a: vec![1.0; 4],
            b: vec![2.0; 4],
            not_ok_a: 0,
            not_ok_b: 0,
            ratio: Some(2.0),
            ci: Some((1.5, 2.5)),
            p: Some(0.01),
            blocks: None,
            p_adjusted: Some(0.03),
            drift: crate::decide::compare::Drift::Shared,
            verdict,
            regression,
            margin: crate::analysis::sequential::MARGIN,
        }
    }

    #[test]
    fn run_page_escapes_every_text_and_inserts_the_svg() {
        let record = run(1, "<script>alert(\"x\")</script>", json!({"hostname": "<b>host</b>"}));
        let failed = TrialRecord {
            seq: 0,
            experiment: 0,
            family: Family::Ring,
            repeat: 1,
            params: crate::model::cell::Cell::from_iter([("procs", 2i64.into())]),
            spec: None,
            outcome: None,
            status: TrialStatus::Failed("<img onerror=x>".into()),
            started: "2024-01-01T00:00:00Z".into(),
            elapsed_s: 0.1,
        };
        let chart = Chart { name: "ring-1".into(), svg: "<svg><path d=\"M0 0\"/></svg>".into() };
        let finding = Finding::TooFewSizes { what: "5 & 6 <u>".into(), sizes: 2 };
        let page = run_page(&record, &[failed], &[chart], &[finding]).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>\n") && page.ends_with("</html>\n"), "{page}");
        assert_eq!(page.matches("<script").count(), 1, "only the size probe: {page}");
        assert!(page.contains("<h1>schedlab run 1: &lt;script&gt;alert(&quot;x&quot;)&lt;&#x2f;script&gt;</h1>"));
        for raw in ["<b>host", "<i>warning", "<img", "<u>", "alert(\""] {
            assert!(!page.contains(raw), "{raw} is not escaped: {page}");
        }
        assert!(page.contains("5 &amp; 6 &lt;u&gt;") && page.contains("&lt;b&gt;host"));
        assert!(page.contains("<figure id=\"ring-1\"><svg><path d=\"M0 0\"/></svg></figure>"));
        assert!(page.contains("<h3>Trials not ok (excluded from the figures)</h3>"));
        assert!(page.contains("<pre>name = &quot;&lt;script&gt;"));
    }

    #[test]
    fn a_context_that_does_not_fit_is_an_error_not_a_panic() {
        let err = render("run.html", json!({"title": "t"})).unwrap_err().to_string();
        assert!(err.contains("bug in schedlab") && err.contains("run.html"), "{err}");
        assert!(render("nope.html", json!({})).unwrap_err().to_string().contains("nope.html"));
    }

    #[test]
    fn a_regression_is_red_from_its_flag_and_machine_cells_wrap() {
        let machine = json!({"hostname": "h", "note": "REGRESSION"});
        let (a, b) = (run(1, "a", machine.clone()), run(2, "b", machine));
        let rows = [row(Verdict::Slower, true), row(Verdict::Slower, false), row(Verdict::NoDifference, false)];
        let page = compare_page(&a, &b, &rows, 0.05, Mode::Interleaved).unwrap();
        assert_eq!(page.matches("class=\"l bad\"").count(), 1, "{page}");
        assert!(page.contains("<td class=\"l bad\">B slower REGRESSION</td>"), "{page}");
        assert!(page.contains("<td>B slower</td>") && page.contains("<td>no significant difference</td>"));
        // A machine field that happens to say REGRESSION is only text.
        assert!(page.contains("<td class=\"l\" style=\"white-space:normal\">REGRESSION</td>"), "{page}");
        assert!(page.contains(
            "<div class=\"warn\">3 figures compared, 1 regression(s), 0 cannot be separated from drift</div>"
        ));
        assert!(page.contains("Holm-adjusted over the 3 figures tested, at p &lt; 0.05"), "{page}");
        assert!(page.contains("above 1 + the threshold of 5.0%.<br>Mode: interleaved A&#x2f;B"), "{page}");
        assert_eq!(page.matches("<script").count(), 1);
    }
}
