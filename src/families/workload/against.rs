//! The workload's `--against` form (the `csci3753-2014` seed's): for each program (cpu,
//! io, mixed) and size, wall time by processes per policy and the involuntary and
//! voluntary switches, this run's medians beside the seed's medians of its runs.

use super::model::{WorkloadKind, WorkloadOutcome, WorkloadSpec};
use crate::error::Result;
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::Policy;
use crate::report::against::form::{cell, lacks, median_of, policy_rank, setting, AgainstDoc, AgainstReport, Section};
use crate::report::table::Table;
use crate::store::seeds::{self, Seed};
use crate::store::{RunRecord, TrialRecord};
use serde::Serialize;

/// The form's JSON: a section per program and size.
#[derive(Serialize)]
struct MediansForm {
    statistic: &'static str,
    sections: Vec<SectionDoc>,
}

/// One program at one size: its rows and the best policy at each process count.
#[derive(Serialize)]
pub(crate) struct SectionDoc {
    workload: &'static str,
    size: String,
    reference_size: String,
    rows: Vec<MedianRowDoc>,
    best: Vec<BestDoc>,
}

/// One policy x setting x processes row, this run's medians beside the reference's.
#[derive(Serialize)]
struct MedianRowDoc {
    policy: &'static str,
    setting: String,
    procs: usize,
    this_run: Option<CellDoc>,
    reference: Option<CellDoc>,
}

#[derive(Serialize)]
struct CellDoc {
    n: usize,
    wall_s_median: Option<f64>,
    nivcsw_median: Option<f64>,
    nvcsw_median: Option<f64>,
}

/// The policy with the lowest median wall time at `procs`, here and in the reference.
#[derive(Serialize)]
pub(crate) struct BestDoc {
    procs: usize,
    this_run: &'static str,
    reference: Option<&'static str>,
    agree: Option<bool>,
}


/// A program's size, as its section names it: iterations (cpu, mixed) or bytes (io).
fn size_text(spec: &WorkloadSpec) -> String {
    match spec.params.kind {
        WorkloadKind::Io => {
            format!("{} bytes per child in {}-byte blocks", spec.params.transfer_size, spec.params.block_size)
        }
        WorkloadKind::Cpu => format!("{} pi samples per child", spec.params.iterations),
        WorkloadKind::Mixed => format!("{} iterations per child", spec.params.iterations),
    }
}

/// The medians of one policy x processes cell.
#[derive(Clone, Debug, Default)]
struct CellMedians {
    wall_s: Vec<f64>,
    nivcsw: Vec<f64>,
    nvcsw: Vec<f64>,
}

impl CellMedians {
    fn add(&mut self, o: &WorkloadOutcome) {
        self.wall_s.push(o.wall_ns as f64 / 1e9);
        self.nivcsw.push(o.usage.nivcsw as f64);
        self.nvcsw.push(o.usage.nvcsw as f64);
    }

    fn doc(&self) -> CellDoc {
        CellDoc {
            n: self.wall_s.len(),
            wall_s_median: median_of(&self.wall_s),
            nivcsw_median: median_of(&self.nivcsw),
            nvcsw_median: median_of(&self.nvcsw),
        }
    }
}

/// Cells by (policy, setting, procs), in the order first seen.
type MediansByCell = Vec<((Policy, String, usize), CellMedians)>;

fn add_to(
    cells: &mut MediansByCell,
    key: (Policy, String, usize),
    o: &WorkloadOutcome,
) {
    match cells.iter_mut().find(|(k, _)| *k == key) {
        Some((_, c)) => c.add(o),
        None => {
            let mut c = CellMedians::default();
            c.add(o);
            cells.push((key, c));
        }
    }
}

/// The ok workload trials of a run with their spec and outcome.
fn workload_trials(
    trials: &[TrialRecord],
) -> Vec<(&TrialRecord, &WorkloadSpec, &WorkloadOutcome)> {
    trials
        .iter()
        .filter(|t| t.is_ok() && t.family == Family::Workload)
        .filter_map(|t| match (t.spec.as_ref()?, t.outcome.as_ref()?) {
            (TrialSpec::Workload(s), Outcome::Workload(o)) => Some((t, s, o)),
            _ => None,
        })
        .collect()
}

/// The study's form: per program and size, this run's medians beside the seed's.
pub(crate) fn medians(
    seed: &dyn Seed,
    spec: &seeds::Against,
    io_size: &str,
    run: &RunRecord,
    trials: &[TrialRecord],
) -> Result<AgainstReport> {
    let mine = workload_trials(trials);
    if mine.is_empty() {
        return Err(lacks(run, seed, spec));
    }
    let study: Vec<TrialRecord> = seed.runs()?.into_iter().flat_map(|(_, t)| t).collect();
    let theirs = workload_trials(&study);
    let kinds = [WorkloadKind::Cpu, WorkloadKind::Io, WorkloadKind::Mixed];
    let mut sections = Vec::new();
    let mut json_sections = Vec::new();
    for kind in kinds {
        // This run's trials of the program, by size: one section each.
        let mut sizes: Vec<String> = Vec::new();
        for (_, s, _) in mine.iter().filter(|(_, s, _)| s.params.kind == kind) {
            let size = size_text(s);
            if !sizes.contains(&size) {
                sizes.push(size);
            }
        }
        let reference_size = theirs
            .iter()
            .find(|(_, s, _)| s.params.kind == kind)
            .map(|(_, s, _)| match kind {
                // A document may give no io size: the seed says what its figure is.
                WorkloadKind::Io => format!("{} {io_size}", size_text(s)),
                _ => size_text(s),
            })
            .unwrap_or_default();
        let mut reference: MediansByCell = Vec::new();
        for (_, s, o) in theirs.iter().filter(|(_, s, _)| s.params.kind == kind) {
            add_to(&mut reference, (s.policy, String::new(), s.procs), o);
        }
        for size in sizes {
            let mut here: MediansByCell = Vec::new();
            for (t, s, o) in mine.iter().filter(|(_, s, _)| s.params.kind == kind && size_text(s) == size) {
                let key = (s.policy, setting(t, &["iterations", "transfer_size", "block_size"]), s.procs);
                add_to(&mut here, key, o);
            }
            let (section, json) = workload_section(run, spec.label, kind, (&size, &reference_size), &here, &reference);
            sections.push(section);
            json_sections.push(json);
        }
    }
    let form = MediansForm { statistic: "median over ok repeats", sections: json_sections };
    let json = AgainstDoc::of(seed, &form);
    Ok(AgainstReport { name: seed.name().into(), heading: (spec.heading)(run.id), sections, json })
}

/// One program's table at one of this run's sizes (and the seed's size), its rows each
/// policy and processes either side has; the seed's columns headed by its `label`.
fn workload_section(
    run: &RunRecord,
    label: &str,
    kind: WorkloadKind,
    (size, reference_size): (&str, &str),
    here: &MediansByCell,
    reference: &MediansByCell,
) -> (Section, SectionDoc) {
    // Every row either side has: this run's (policy, setting), then the study's policies.
    let mut rows: Vec<(Policy, String, usize)> = here.iter().map(|(k, _)| k.clone()).collect();
    for ((policy, _, procs), _) in reference {
        let shown = rows.iter().any(|(p, s, n)| p == policy && s.is_empty() && n == procs);
        if !shown {
            rows.push((*policy, String::new(), *procs));
        }
    }
    rows.sort_by(|a, b| (policy_rank(a.0), &a.1, a.2).cmp(&(policy_rank(b.0), &b.1, b.2)));
    fn find<'a>(cells: &'a MediansByCell, key: &(Policy, String, usize)) -> Option<&'a CellMedians> {
        cells.iter().find(|(k, _)| k == key).map(|(_, c)| c)
    }
    let settings = rows.iter().any(|(_, s, _)| !s.is_empty());
    let mut headers = vec!["Policy".to_string()];
    if settings {
        headers.push("Setting".to_string());
    }
    headers.push("Procs".to_string());
    for mine in ["Wall s", "Invol sw", "Vol sw", "n"] {
        headers.extend([mine.to_string(), format!("{label} {}", mine.to_lowercase())]);
    }
    let mut table = Table::new(headers).left_align(0);
    if settings {
        table = table.left_align(1);
    }
    let mut json_rows = Vec::new();
    for key in &rows {
        let mine = find(here, key);
        // The study ran every policy with nothing else set.
        let theirs = key.1.is_empty().then(|| find(reference, key)).flatten();
        let med = |c: Option<&CellMedians>, f: fn(&CellMedians) -> &Vec<f64>| c.and_then(|c| median_of(f(c)));
        let mut row = vec![key.0.kernel_name().to_string()];
        if settings {
            row.push(key.1.clone());
        }
        row.extend([
            key.2.to_string(),
            cell(med(mine, |c| &c.wall_s), 3),
            cell(med(theirs, |c| &c.wall_s), 2),
            cell(med(mine, |c| &c.nivcsw), 0),
            cell(med(theirs, |c| &c.nivcsw), 0),
            cell(med(mine, |c| &c.nvcsw), 0),
            cell(med(theirs, |c| &c.nvcsw), 0),
            mine.map_or(0, |c| c.wall_s.len()).to_string(),
            theirs.map_or(0, |c| c.wall_s.len()).to_string(),
        ]);
        table.push(row);
        json_rows.push(MedianRowDoc {
            policy: key.0.as_str(),
            setting: key.1.clone(),
            procs: key.2,
            this_run: mine.map(CellMedians::doc),
            reference: theirs.map(CellMedians::doc),
        });
    }
    let (lines, best) = best_lines(label, here, reference);
    let title = format!(
        "{}: wall time and switches by processes, per policy (run {}: {size}; {label}: {reference_size})",
        kind.as_str(),
        run.id
    );
    let json = SectionDoc {
        workload: kind.as_str(),
        size: size.to_string(),
        reference_size: reference_size.to_string(),
        rows: json_rows,
        best,
    };
    (Section { title, table, left_columns: if settings { 2 } else { 1 }, lines }, json)
}

/// The policy with the lowest median wall time at each of this run's process counts
/// (among its rows with nothing else set), beside the study's at the same count.
fn best_lines(label: &str, here: &MediansByCell, reference: &MediansByCell) -> (Vec<String>, Vec<BestDoc>) {
    let best = |cells: &MediansByCell, procs: usize| -> Option<(Policy, f64, usize)> {
        let candidates: Vec<(Policy, f64)> = cells
            .iter()
            .filter(|((_, s, n), _)| s.is_empty() && *n == procs)
            .filter_map(|((p, _, _), c)| Some((*p, median_of(&c.wall_s)?)))
            .collect();
        let n = candidates.len();
        candidates.into_iter().min_by(|a, b| a.1.total_cmp(&b.1)).map(|(p, w)| (p, w, n))
    };
    let mut procs: Vec<usize> = here.iter().filter(|((_, s, _), _)| s.is_empty()).map(|((_, _, n), _)| *n).collect();
    procs.sort_unstable();
    procs.dedup();
    let mut lines = Vec::new();
    let mut out = Vec::new();
    for n in procs {
        let Some((p, wall, of)) = best(here, n).filter(|b| b.2 > 1) else { continue };
        let theirs = best(reference, n);
        let theirs_text = match theirs {
            Some((q, w, _)) if q == p => format!("the same in {label} ({}, {w:.2} s)", q.kernel_name()),
            Some((q, w, _)) => format!("in {label} {} ({w:.2} s)", q.kernel_name()),
            None => "the study has no cell of this size".to_string(),
        };
        lines.push(format!(
            "lowest median wall time at {n} processes: {} ({wall:.3} s, of {of} policies); {theirs_text}",
            p.kernel_name()
        ));
        out.push(BestDoc {
            procs: n,
            this_run: p.as_str(),
            reference: theirs.map(|(q, _, _)| q.as_str()),
            agree: theirs.map(|(q, _, _)| q == p),
        });
    }
    (lines, out)
}
