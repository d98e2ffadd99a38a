//! `schedlab report --format ...`: one small trait, one implementation per format. Every
//! exporter reads the same typed records and findings; the text ones share the tables of
//! `stored`, and JSON carries numbers (a summary per figure), never formatted cells.

use crate::analysis::stats::Summary;
use crate::decide::findings::Finding;
use crate::families::with_family;
use crate::families::Family;
use crate::model::cell::Cell;
use crate::report::cells;
use crate::report::cells::RunRule;
use crate::report::family::FamilyReport;
use crate::report::{figures, stored};
use crate::store::{RunRecord, TrialRecord};
use serde::Serialize;

/// How `report` prints a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned text for the terminal
    Text,
    Markdown,
    Csv,
    Json,
}

/// A stored run, its trials and what was found in them: everything a report shows.
pub struct RunView<'a> {
    pub run: &'a RunRecord,
    pub trials: &'a [TrialRecord],
    pub findings: &'a [Finding],
}

pub trait Exporter {
    /// The whole report, ready to print.
    fn render(&self, view: &RunView) -> String;
}

pub fn for_format(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Text => Box::new(Text),
        Format::Markdown => Box::new(Markdown),
        Format::Csv => Box::new(Csv),
        Format::Json => Box::new(JsonReport),
    }
}

struct Text;
struct Markdown;
struct Csv;
struct JsonReport;

impl Exporter for Text {
    fn render(&self, v: &RunView) -> String {
        let ok = v.trials.iter().filter(|t| t.is_ok()).count();
        let mut out = stored::describe_run(v.run, ok, v.trials.len() - ok).trim_end().to_string();
        out.push('\n');
        if let Some(line) = stored::steal_reruns(v.trials) {
            out.push_str(&format!("{line}\n"));
        }
        // The answers first, one line a question; the findings in full follow the tables.
        let questions = crate::report::glance::text_block(&crate::report::glance::questions(v.findings));
        if !questions.is_empty() {
            out.push_str(&format!("\n{questions}"));
        }
        out.push_str(stored::tables_for(v.trials, &RunRule::of(v.run)).trim_end());
        out.push('\n');
        if !v.findings.is_empty() {
            out.push_str("\nfindings:\n");
            if let Some(line) = crate::report::findings::questions_line(v.findings) {
                out.push_str(&format!("  {line}\n"));
            }
            for f in v.findings {
                out.push_str(&format!("  - {f}\n"));
            }
        }
        if let Some(claims) = crate::decide::claims::for_run(v.run, v.trials) {
            out.push_str(&format!("\n{}\n", crate::report::claims::text(&claims)));
        }
        out
    }
}

impl Exporter for Markdown {
    fn render(&self, v: &RunView) -> String {
        let rows = crate::report::glance::questions(v.findings);
        let mut out = String::new();
        if !rows.is_empty() {
            out.push_str(&format!(
                "### {}\n\n{}\n{}\n\n",
                crate::report::glance::headline(&rows),
                crate::report::glance::table(&rows).render_markdown(),
                crate::report::glance::method_text(&rows)
            ));
        }
        out.push_str(&tables_text(v.trials, &RunRule::of(v.run), Format::Markdown));
        if !v.findings.is_empty() {
            out.push_str("### Findings\n\n");
            for f in v.findings {
                out.push_str(&format!("- {f}\n"));
            }
        }
        out
    }
}

impl Exporter for Csv {
    fn render(&self, v: &RunView) -> String {
        tables_text(v.trials, &RunRule::of(v.run), Format::Csv)
    }
}

/// The tables `show` prints of `trials`, one per experiment, as CSV (each after a `# title`
/// line) or Markdown (each under a `###` heading); aligned text otherwise. What `report`
/// prints, and what the family commands print with `--format csv|markdown`.
pub fn tables_text(trials: &[TrialRecord], rule: &RunRule, format: Format) -> String {
    let all = crate::store::group::groups(trials);
    let extras = cells::by_experiment(&all).values().flat_map(|g| stored::family_tables(g)).collect::<Vec<_>>();
    stored::experiment_tables_for(trials, rule)
        .into_iter()
        .chain(extras)
        .map(|(title, table)| match format {
            Format::Csv => format!("# {title}\n{}\n", table.render_csv()),
            Format::Markdown => format!("### {title}\n\n{}\n", table.render_markdown()),
            Format::Text | Format::Json => format!("{title}\n{}\n", table.render()),
        })
        .collect()
}

/// Settings that report JSON has always summarised beside a workload's figures (its
/// size), kept so its readers find them; every other summary is a registry figure.
const SUMMARISED_SETTINGS: &[&str] = &["iterations", "transfer_size", "block_size"];

/// A figure's summary over a cell's ok repeats, with the 95 % interval of its median
/// (`ci_low`, `ci_high`: null with fewer than 6 ok repeats).
#[derive(Serialize)]
struct FigureSummary {
    #[serde(flatten)]
    summary: Summary,
    ci_low: Option<f64>,
    ci_high: Option<f64>,
}

/// A cell's figures by key: each figure's summary (the registry's, in the order the
/// trial lines write them), then the values its family derives from the cell.
struct Summaries {
    figures: Vec<(String, FigureSummary)>,
    extras: Vec<(&'static str, f64)>,
}

impl Serialize for Summaries {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.figures.len() + self.extras.len()))?;
        for (key, summary) in &self.figures {
            m.serialize_entry(key, summary)?;
        }
        for (key, value) in &self.extras {
            m.serialize_entry(key, value)?;
        }
        m.end()
    }
}

/// Each figure of a group's ok trials summarised over its repeats.
fn figure_summaries(g: &crate::store::group::Group, groups: &[&crate::store::group::Group]) -> Summaries {
    let mut values: Vec<(String, Vec<f64>)> = Vec::new();
    for t in g.ok() {
        for (key, value) in figures::stored(t).into_iter().flatten() {
            let Some(x) = value.as_f64() else { continue };
            if crate::families::figures::find(g.family, &key).is_none() && !SUMMARISED_SETTINGS.contains(&key.as_str())
            {
                continue;
            }
            match values.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(x),
                None => values.push((key, vec![x])),
            }
        }
    }
    let figures = values
        .into_iter()
        .filter_map(|(k, v)| {
            let summary = Summary::of(&v)?;
            let ci = crate::exec::adaptive::interval(&v);
            Some((k, FigureSummary { summary, ci_low: ci.as_ref().map(|c| c.low), ci_high: ci.map(|c| c.high) }))
        })
        .collect();
    Summaries { figures, extras: with_family!(g.family, F => F::summary_extras(groups, g)) }
}

/// `report --format json`: the run, each experiment's cells with their figures' summaries,
/// the findings and how many questions they answered, the trials that did not finish, and
/// a seed suite's claims.
#[derive(Serialize)]
pub struct RunDoc<'a> {
    run: RunHead<'a>,
    experiments: Vec<ExperimentDoc>,
    findings: &'a [Finding],
    questions: QuestionsDoc,
    not_ok: Vec<NotOkDoc<'a>>,
    /// A seed suite's run only.
    #[serde(skip_serializing_if = "Option::is_none")]
    claims: Option<crate::decide::claims::ClaimsTable>,
}

#[derive(Serialize)]
struct RunHead<'a> {
    id: i64,
    uuid: &'a str,
    suite: &'a str,
    started: &'a str,
    ended: Option<&'a str>,
    status: &'a crate::store::RunStatus,
    hostname: Option<&'a str>,
    kernel: Option<&'a str>,
    tool_version: &'a str,
    ok: usize,
    not_ok: usize,
    planned: i64,
    adaptive: Option<&'a crate::model::run::AdaptivePlan>,
    warnings: &'a [String],
    /// A run that probed its machine's noise only.
    #[serde(skip_serializing_if = "Option::is_none")]
    noise_floor: Option<&'a crate::sys::machine::NoiseFloor>,
}

#[derive(Serialize)]
struct ExperimentDoc {
    experiment: i64,
    family: Family,
    groups: Vec<GroupDoc>,
}

#[derive(Serialize)]
struct GroupDoc {
    params: Cell,
    ok: usize,
    runs: usize,
    headline: cells::Headline,
    figures: Summaries,
}

#[derive(Serialize)]
struct QuestionsDoc {
    asked: usize,
    answered: usize,
    method: &'static str,
}

#[derive(Serialize)]
struct NotOkDoc<'a> {
    seq: i64,
    family: Family,
    params: &'a Cell,
    repeat: i64,
    status: &'static str,
    reason: Option<&'a str>,
}

/// The run's `report --format json` document.
pub fn run_doc<'a>(v: &RunView<'a>) -> RunDoc<'a> {
    let all = crate::store::group::groups(v.trials);
    let rule = RunRule::of(v.run);
    let experiments = cells::by_experiment(&all)
        .into_iter()
        .map(|(experiment, groups)| ExperimentDoc {
            experiment: experiment + 1,
            family: groups[0].family,
            groups: groups
                .iter()
                .map(|g| GroupDoc {
                    params: g.params.clone(),
                    ok: g.ok().count(),
                    runs: g.trials.len(),
                    headline: cells::headline(g, &rule),
                    figures: figure_summaries(g, &groups),
                })
                .collect(),
        })
        .collect();
    let not_ok = v
        .trials
        .iter()
        .filter(|t| !t.is_ok())
        .map(|t| NotOkDoc {
            seq: t.seq,
            family: t.family,
            params: &t.params,
            repeat: t.repeat,
            status: t.status.label(),
            reason: t.status.reason(),
        })
        .collect();
    let ok = v.trials.iter().filter(|t| t.is_ok()).count();
    let run = v.run;
    let (answered, asked) = crate::decide::findings::questions_answered(v.findings);
    RunDoc {
        run: RunHead {
            id: run.id,
            uuid: &run.uuid,
            suite: &run.suite_name,
            started: &run.started,
            ended: run.ended.as_deref(),
            status: &run.status,
            hostname: run.machine.hostname(),
            kernel: run.machine.kernel_release(),
            tool_version: &run.tool_version,
            ok,
            not_ok: v.trials.len() - ok,
            planned: run.planned,
            adaptive: run.options.adaptive.as_ref(),
            warnings: &run.warnings,
            noise_floor: run.machine.fields().noise_floor.as_ref(),
        },
        experiments,
        findings: v.findings,
        questions: QuestionsDoc { asked, answered, method: crate::analysis::sequential::METHOD },
        not_ok,
        claims: crate::decide::claims::for_run(v.run, v.trials),
    }
}

impl Exporter for JsonReport {
    fn render(&self, v: &RunView) -> String {
        let mut text = serde_json::to_string_pretty(&run_doc(v)).unwrap_or_default();
        text.push('\n');
        text
    }
}
