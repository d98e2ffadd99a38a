//! `schedlab report RUN --against NAME`: one run set beside a seed document's own figures,
//! in that document's own form, so a reader sees at once where this machine agrees with
//! the classic result and where it does not. Each seed that offers it declares its form
//! and words (`store::seeds::Against`); the forms are rendered here:
//!
//! - workload medians (`csci3753-2014`): for each program (cpu, io, mixed), wall time by
//!   processes per policy, and the involuntary and voluntary switches: this run's medians
//!   beside the seed's medians of its runs.
//! - latency columns (`hrtimers-2007`): a min / max / avg table, one column per latency
//!   configuration of this run beside the seed's columns (the 2007 kernels as a normal
//!   user and as root, SCHED_FIFO 99). What the seed does not give (percentiles) is "-".
//!
//! The reference figures come from `store::seeds`, built into the binary: no database
//! holds them. Their sizes differ from this run's (the study's 100,000,000 pi samples,
//! the post's 85 Hz): every section says both, so the absolute figures are read as what
//! they are, and the order of the policies is what carries over.

pub mod form;

pub use form::{AgainstDoc, AgainstReport};

use crate::error::{Error, Result};
use crate::report::exporter::{Format, RunDoc};
use crate::store::seeds::{self, AgainstForm, Seed, SEEDS};
use crate::store::{RunRecord, TrialRecord};
use serde::Serialize;

/// The seeds `--against` takes, with how each is set beside a run, in the registry's order.
pub fn against_seeds() -> Vec<(&'static dyn Seed, seeds::Against)> {
    SEEDS.iter().filter_map(|s| Some((*s, s.against()?))).collect()
}

/// Set `run` beside the reference set `name`; a name that is not one, or a run without
/// the trials the set compares, is refused (exit 2) saying what is needed.
pub fn against(name: &str, run: &RunRecord, trials: &[TrialRecord]) -> Result<AgainstReport> {
    let sets = against_seeds();
    let Some((seed, spec)) = sets.iter().find(|(s, _)| s.name() == name) else {
        let names: Vec<&str> = sets.iter().map(|(s, _)| s.name()).collect();
        return Err(Error::usage(format!(
            "--against {name}: there is no such reference set to report against; the names are {}",
            names.join(", ")
        )));
    };
    match &spec.form {
        AgainstForm::WorkloadMedians { io_size } => {
            crate::families::workload::against::medians(*seed, spec, io_size, run, trials)
        }
        AgainstForm::LatencyColumns { title, rest, notes } => {
            crate::families::latency::against::columns(*seed, spec, (title, rest, notes), run, trials)
        }
    }
}

impl AgainstReport {
    /// The comparison as text, Markdown or CSV (after the run's report); JSON is `json`.
    pub fn render(&self, format: Format) -> String {
        let mut out = String::new();
        match format {
            Format::Text => {
                out.push_str(&format!("{}\n", self.heading));
                for s in &self.sections {
                    out.push_str(&format!("\n{}\n{}", s.title, s.table.render()));
                    for l in &s.lines {
                        out.push_str(&format!("  {l}\n"));
                    }
                }
            }
            Format::Markdown => {
                out.push_str(&format!("## Against {}\n\n{}\n\n", self.name, self.heading));
                for s in &self.sections {
                    out.push_str(&format!("### {}\n\n{}\n", s.title, s.table.render_markdown()));
                    for l in &s.lines {
                        out.push_str(&format!("- {l}\n"));
                    }
                    out.push('\n');
                }
            }
            Format::Csv => {
                for s in &self.sections {
                    out.push_str(&format!("# against {}: {}\n{}", self.name, s.title, s.table.render_csv()));
                }
            }
            Format::Json => out.push_str(&format!("{}\n", crate::report::json_line(&self.json))),
        }
        out
    }
}

/// The keys of `--format json`'s document: the run's report, then `against`.
pub fn with_report(report: &RunDoc, against: &AgainstReport) -> String {
    #[derive(Serialize)]
    struct WithAgainst<'a> {
        #[serde(flatten)]
        report: &'a RunDoc<'a>,
        against: &'a AgainstDoc,
    }
    let mut text = serde_json::to_string_pretty(&WithAgainst { report, against: &against.json }).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::latency::figures as latency;

    /// The published runs of the seed `name`.
    fn published(name: &str) -> Vec<(RunRecord, Vec<TrialRecord>)> {
        seeds::seed(name).unwrap().runs().unwrap()
    }

    #[test]
    fn the_study_against_itself_agrees_everywhere() {
        let (run, trials) = published("csci3753-2014").remove(0);
        let a = against("csci3753-2014", &run, &trials).unwrap();
        assert_eq!(a.sections.len(), 3);
        let text = a.render(Format::Text);
        assert!(text.contains("cpu: wall time") && text.contains("mixed: wall time"), "{text}");
        // OTHER at 10 CPU-bound processes: a median of 14.79 s both sides.
        let row = text.lines().find(|l| l.starts_with("SCHED_OTHER") && l.contains(" 14.790 ")).expect("the row");
        assert!(row.contains("14.79 ") && row.contains("6348"), "{row}");
        let best = a.json.form["sections"][0]["best"].as_array().expect("a workload form");
        assert!(best.iter().all(|b| b["agree"] == true));
        assert_eq!(best[0]["this_run"], "other");
    }

    #[test]
    fn the_2007_table_against_its_own_kernel() {
        let runs = published("hrtimers-2007");
        let (run, trials) = &runs[1];
        let a = against("hrtimers-2007", run, trials).unwrap();
        let text = a.render(Format::Text);
        let min = text.lines().find(|l| l.starts_with("min")).unwrap();
        let cells: Vec<&str> = min.split_whitespace().collect();
        assert_eq!(cells, ["min", "2939", "2803", "2809853", "2331812", "2939", "2803"], "{text}");
        let p99 = text.lines().find(|l| l.starts_with("p99")).unwrap();
        assert!(p99.split_whitespace().skip(1).all(|c| c == "-"), "{p99}");
        let columns = a.json.form["columns"].as_array().expect("a latency form");
        assert_eq!(columns.len(), 6);
        assert!(columns[2][latency::P99_NS.key].is_null());
        let json = a.render(Format::Json);
        assert!(json.contains(&format!(r#""{}":null"#, latency::P99_NS.key)), "{json}");
    }

    #[test]
    fn a_run_without_the_family_is_refused_saying_what_is_needed() {
        let (run, trials) = published("hrtimers-2007").remove(0);
        let err = against("csci3753-2014", &run, &trials).err().unwrap().to_string();
        assert!(err.contains("no workload trial") && err.contains("policy-study"), "{err}");
        let (run, trials) = published("csci3753-2014").remove(0);
        let err = against("hrtimers-2007", &run, &trials).err().unwrap().to_string();
        assert!(err.contains("no latency trial"), "{err}");
        let err = against("ncar-1992", &run, &trials).err().unwrap().to_string();
        assert!(err.contains("csci3753-2014, hrtimers-2007"), "{err}");
    }
}
