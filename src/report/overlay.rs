//! The cross-machine overlay of `schedlab report RUN RUN…`: every ring run's cost per
//! hop against processes on one plot, so this machine is seen beside the 1992 machines
//! (or any other) at a glance, with each run's knees marked.
//!
//! The figure is CPU time per hop (user + system over laps x processes), the unit of
//! the NCAR report's projection, as the median over repeats at each process count.
//! Knees and the other ring findings come from `findings`, computed for each line
//! alone, so the overlay states exactly what each run's own report states.

use crate::analysis::stats::median;
use crate::decide::findings::{self, Finding};
use crate::families::ring::findings::ring_values;
use crate::families::ring::model::RingOutcome;
use crate::families::Family;
use crate::model::cell::Cell;
use crate::report::table::Table;
use crate::store::group::param_text;
use crate::store::{RunRecord, TrialRecord};
use serde::Serialize;

/// One process count of a line.
#[derive(Clone, Debug, PartialEq)]
pub struct OverlayPoint {
    pub procs: f64,
    /// Median over the ok repeats.
    pub cpu_ns_per_hop: f64,
    pub n: usize,
}

/// One ring series of one run (a run with several ring series has a line for each).
#[derive(Clone, Debug)]
pub struct OverlayLine {
    pub run_id: i64,
    /// Short, for a table column: "run 8", or "run 8 (2)" for a run's second series.
    pub key: String,
    /// The machine, with the series' parameters when the run has several.
    pub machine: String,
    /// The key and the machine: "run 8: Sun-4/280, SunOS 4.1.1 (NCAR 1992, published)".
    pub label: String,
    /// Figures imported from elsewhere (a published table), not measured by schedlab.
    pub imported: bool,
    /// Ascending process counts.
    pub points: Vec<OverlayPoint>,
    /// (before, after) process counts of each knee found.
    pub knees: Vec<(f64, f64)>,
    /// Every finding about this series (knees and whatever else is said about a ring).
    pub findings: Vec<Finding>,
}

/// The overlay of several runs, and the runs left out of it with the reason.
#[derive(Clone, Debug, Default)]
pub struct Overlay {
    pub lines: Vec<OverlayLine>,
    pub left_out: Vec<(i64, String)>,
}

/// How a run names its machine: the hostname, with the kernel when the name lacks it.
pub fn machine_label(run: &RunRecord) -> String {
    let host = run.machine.hostname().filter(|s| !s.is_empty()).unwrap_or("unknown machine");
    match run.machine.kernel_release().filter(|s| !s.is_empty()) {
        Some(kernel) if !host.contains(kernel) => format!("{host}, kernel {kernel}"),
        _ => host.to_string(),
    }
}

/// Whether a run's figures were imported rather than measured by schedlab.
pub fn is_imported(run: &RunRecord) -> bool {
    run.machine.is_imported()
}

/// The overlay of `runs`, in the order given.
pub fn overlay(runs: &[(RunRecord, Vec<TrialRecord>)]) -> Overlay {
    let mut out = Overlay::default();
    for (run, trials) in runs {
        let ring: Vec<&TrialRecord> = trials.iter().filter(|t| t.family == Family::Ring).collect();
        if ring.is_empty() {
            out.left_out.push((run.id, "no ring trials".into()));
            continue;
        }
        // A series: the trials of one experiment that differ only in procs.
        let mut series: Vec<(i64, Cell, Vec<TrialRecord>)> = Vec::new();
        for t in ring {
            let mut key = t.params.clone();
            key.remove(crate::model::cell::axis::PROCS);
            match series.iter_mut().find(|(e, k, _)| *e == t.experiment && *k == key) {
                Some((_, _, members)) => members.push(t.clone()),
                None => series.push((t.experiment, key, vec![t.clone()])),
            }
        }
        let varying: Vec<String> = {
            let keys: Vec<&str> = series.iter().flat_map(|(_, k, _)| k.keys()).collect();
            let mut names: Vec<String> = Vec::new();
            for k in keys {
                if !names.iter().any(|n| n == k)
                    && series.iter().any(|(_, other, _)| other.get(k) != series[0].1.get(k))
                {
                    names.push(k.to_string());
                }
            }
            names
        };
        let several = series.len() > 1;
        let before = out.lines.len();
        for (index, (_, params, members)) in series.iter().enumerate() {
            let points = points_of(members);
            if points.is_empty() {
                continue;
            }
            let found: Vec<Finding> = findings::findings(members);
            let knees = found
                .iter()
                .filter_map(|f| match f {
                    Finding::Knee { before, after, .. } => Some((*before as f64, *after as f64)),
                    _ => None,
                })
                .collect();
            let mut machine = machine_label(run);
            let mut key = format!("run {}", run.id);
            if several {
                let what: Vec<String> = varying.iter().map(|k| format!("{k}={}", param_text(params.get(k)))).collect();
                machine.push_str(&format!(" [{}]", what.join(" ")));
                key.push_str(&format!(" ({})", index + 1));
            }
            let label = format!("{key}: {machine}");
            out.lines.push(OverlayLine {
                run_id: run.id,
                key,
                machine,
                label,
                imported: is_imported(run),
                points,
                knees,
                findings: found,
            });
        }
        if out.lines.len() == before {
            out.left_out.push((run.id, "no ring trial finished ok".into()));
        }
    }
    out
}

/// Median CPU ns per hop at each process count, ascending.
fn points_of(trials: &[TrialRecord]) -> Vec<OverlayPoint> {
    let mut points: Vec<OverlayPoint> = crate::store::group::groups(trials)
        .iter()
        .filter_map(|g| {
            let values = ring_values(g, RingOutcome::cpu_ns_per_hop);
            let values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
            let procs = g.procs()?;
            (!values.is_empty()).then(|| OverlayPoint { procs, cpu_ns_per_hop: median(&values), n: values.len() })
        })
        .collect();
    points.sort_by(|a, b| a.procs.total_cmp(&b.procs));
    points
}

/// A CPU time per hop in µs, to three significant digits.
pub fn micros(ns: f64) -> String {
    let us = ns / 1000.0;
    let decimals = if us >= 100.0 {
        0
    } else if us >= 10.0 {
        1
    } else if us >= 1.0 {
        2
    } else {
        3
    };
    format!("{us:.decimals$}")
}

impl Overlay {
    /// Every process count any line has, ascending.
    fn all_procs(&self) -> Vec<f64> {
        let mut procs: Vec<f64> = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.procs)).collect();
        procs.sort_by(f64::total_cmp);
        procs.dedup();
        procs
    }

    /// Processes down, one column per line: CPU µs per hop ("-" where a line has no point).
    pub fn table(&self) -> Table {
        let headers: Vec<String> =
            std::iter::once("Procs".to_string()).chain(self.lines.iter().map(|l| l.key.clone())).collect();
        let mut table = Table::new(headers.iter().map(String::as_str));
        for procs in self.all_procs() {
            let mut row = vec![count_text(procs)];
            for line in &self.lines {
                let cell = line.points.iter().find(|p| p.procs == procs).map(|p| micros(p.cpu_ns_per_hop));
                row.push(cell.unwrap_or_else(|| "-".into()));
            }
            table.push(row);
        }
        table
    }

    /// "run 8: ring (laps=1000000): knee between 10 and 16 processes …" for every line.
    pub fn finding_lines(&self) -> Vec<String> {
        self.lines.iter().flat_map(|l| l.findings.iter().map(move |f| format!("{}: {f}", l.key))).collect()
    }

    pub fn left_out_lines(&self) -> Vec<String> {
        self.left_out.iter().map(|(id, why)| format!("run {id} is not in the overlay: {why}")).collect()
    }

    /// The overlay as text, Markdown or CSV (the run sections come before it).
    pub fn render(&self, format: crate::report::exporter::Format) -> String {
        use crate::report::exporter::Format;
        const TITLE: &str = "cross-machine overlay: CPU µs per hop (median over repeats) by processes in the ring";
        let table = self.table();
        match format {
            Format::Text => {
                let mut out = format!("{TITLE}\n");
                if !self.lines.is_empty() {
                    out.push_str(&table.render());
                }
                for l in self.lines.iter().map(|l| format!("{}{}", l.label, imported_note(l))) {
                    out.push_str(&format!("  {l}\n"));
                }
                let findings = self.finding_lines();
                if !findings.is_empty() {
                    out.push_str("findings:\n");
                    for f in findings {
                        out.push_str(&format!("  - {f}\n"));
                    }
                }
                for l in self.left_out_lines() {
                    out.push_str(&format!("{l}\n"));
                }
                out
            }
            Format::Markdown => {
                let mut out = format!("## Cross-machine overlay\n\n{TITLE}\n\n");
                if !self.lines.is_empty() {
                    out.push_str(&format!("{}\n", table.render_markdown()));
                }
                for l in &self.lines {
                    out.push_str(&format!("- {}{}\n", l.label, imported_note(l)));
                }
                for f in self.finding_lines().into_iter().chain(self.left_out_lines()) {
                    out.push_str(&format!("- {f}\n"));
                }
                out
            }
            Format::Csv => format!("# {TITLE}\n{}", table.render_csv()),
            Format::Json => format!("{}\n", crate::report::json_line(&self.json())),
        }
    }

    /// The overlay as numbers: each line's points, knees and findings.
    pub fn json(&self) -> OverlayDoc<'_> {
        OverlayDoc {
            figure: "cpu_ns_per_hop",
            statistic: "median over ok repeats",
            lines: self
                .lines
                .iter()
                .map(|l| LineDoc {
                    run: l.run_id,
                    key: &l.key,
                    label: &l.label,
                    imported: l.imported,
                    points: l
                        .points
                        .iter()
                        .map(|p| PointDoc { procs: p.procs, median: p.cpu_ns_per_hop, n: p.n })
                        .collect(),
                    knees: l.knees.iter().map(|&(before, after)| KneeDoc { before, after }).collect(),
                    findings: &l.findings,
                })
                .collect(),
            left_out: self.left_out.iter().map(|(run, why)| LeftOut { run: *run, why }).collect(),
        }
    }
}

/// `report RUN RUN… --format json`'s overlay: the figure, then each line and the runs left out.
#[derive(Serialize)]
pub struct OverlayDoc<'a> {
    figure: &'static str,
    statistic: &'static str,
    lines: Vec<LineDoc<'a>>,
    left_out: Vec<LeftOut<'a>>,
}

#[derive(Serialize)]
struct LineDoc<'a> {
    run: i64,
    key: &'a str,
    label: &'a str,
    imported: bool,
    points: Vec<PointDoc>,
    knees: Vec<KneeDoc>,
    findings: &'a [Finding],
}

#[derive(Serialize)]
struct PointDoc {
    procs: f64,
    median: f64,
    n: usize,
}

#[derive(Serialize)]
struct KneeDoc {
    before: f64,
    after: f64,
}

#[derive(Serialize)]
struct LeftOut<'a> {
    run: i64,
    why: &'a str,
}

/// A process count as a whole number ("16", not "16.0").
pub fn count_text(procs: f64) -> String {
    if procs.fract() == 0.0 && procs.abs() < 1e15 {
        format!("{}", procs as i64)
    } else {
        procs.to_string()
    }
}

fn imported_note(l: &OverlayLine) -> &'static str {
    if l.imported {
        " (imported, not measured here)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::families::ring::import::import_table;
    use crate::report::plots::overlay_chart;
    use crate::sys::machine::{Machine, StoredMachine};

    /// A table whose CPU cost per hop is `per_hop_us` below `step_at` processes and three
    /// times that from it on, as an imported run with id `id`.
    fn run(id: i64, name: &str, per_hop_us: u64, step_at: usize) -> (RunRecord, Vec<TrialRecord>) {
        let mut text = String::from("Processes Real CPU User System\n");
        for procs in (2..=20).step_by(2) {
            let per_hop = if procs >= step_at { 3 * per_hop_us } else { per_hop_us };
            let cpu = procs as u64 * per_hop; // seconds for 1,000,000 laps
            text.push_str(&format!("{procs} {cpu} {cpu} 0 {cpu}\n"));
        }
        let (mut record, trials, _) = import_table("t.txt", &text, name, 1_000_000).unwrap();
        record.id = id;
        (record, trials)
    }

    #[test]
    fn each_ring_run_is_a_line_with_its_knees_and_the_rest_are_left_out() {
        let (mut empty, _) = run(3, "empty", 1, 100);
        let machine = Machine { hostname: Some("h".into()), kernel_release: Some("6.1".into()), ..Machine::default() };
        empty.machine = StoredMachine::from(&machine);
        let runs = vec![run(1, "old", 500, 12), run(2, "new", 2, 100), (empty, Vec::new())];
        let o = overlay(&runs);
        assert_eq!(o.lines.len(), 2);
        assert_eq!((o.lines[0].key.as_str(), o.lines[0].label.as_str()), ("run 1", "run 1: old"));
        assert!(o.lines[0].imported);
        assert_eq!(o.lines[0].points.len(), 10);
        assert_eq!(o.lines[0].points[0], OverlayPoint { procs: 2.0, cpu_ns_per_hop: 500_000.0, n: 1 });
        assert_eq!(o.lines[0].knees, vec![(10.0, 12.0)]);
        assert!(o.lines[1].knees.is_empty());
        assert_eq!(o.left_out, vec![(3, "no ring trials".to_string())]);
        assert_eq!(machine_label(&runs[2].0), "h, kernel 6.1");

        let table = o.table().render();
        assert!(table.lines().next().unwrap().contains("run 1  run 2"), "{table}");
        assert!(table.contains(" 12  ") && table.contains("1500") && table.contains("2.00"), "{table}");
        let svg = overlay_chart(&o).unwrap().svg;
        assert_eq!(svg.matches("<path").count(), 2);
        assert_eq!(svg.matches("class=\"knee\"").count(), 1);
        assert!(svg.contains("(log scale)"), "2 µs beside 500 µs");
        // Lines within a factor of 20 of each other keep a linear axis.
        let close = overlay(&[run(1, "a", 100, 100), run(2, "b", 400, 100)]);
        assert!(!overlay_chart(&close).unwrap().svg.contains("log scale"));
        assert!(overlay_chart(&Overlay::default()).is_none());
    }

    #[test]
    fn cells_read_to_three_figures() {
        assert_eq!(micros(548_000.0), "548");
        assert_eq!(micros(45_670.0), "45.7");
        assert_eq!(micros(2_640.0), "2.64");
        assert_eq!(micros(640.0), "0.640");
        assert_eq!(count_text(16.0), "16");
        assert_eq!(count_text(2.5), "2.5");
    }
}
