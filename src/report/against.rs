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

use crate::analysis::stats::median;
use crate::error::{Error, Result};
use crate::families::latency::figures as latency;
use crate::families::workload::model::{WorkloadKind, WorkloadSpec};
use crate::families::{Family, Outcome, TrialSpec};
use crate::model::cell;
use crate::model::Policy;
use crate::report::exporter::{Format, RunDoc};
use crate::report::table::Table;
use crate::store::seeds::{self, AgainstForm, Seed, SEEDS};
use crate::store::{RunRecord, TrialRecord};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// The seeds `--against` takes, with how each is set beside a run, in the registry's order.
pub fn against_seeds() -> Vec<(&'static dyn Seed, seeds::Against)> {
    SEEDS.iter().filter_map(|s| Some((*s, s.against()?))).collect()
}

/// One table of the comparison, with what is said under it.
pub struct Section {
    pub title: String,
    pub table: Table,
    /// The first this many columns name the row (left-aligned).
    pub left_columns: usize,
    pub lines: Vec<String>,
}

/// A run beside a reference set: the tables and the same figures as numbers.
pub struct AgainstReport {
    pub name: String,
    /// What is set beside what, and where the reference's figures come from.
    pub heading: String,
    pub sections: Vec<Section>,
    pub json: AgainstDoc,
}

/// `--against`'s numbers in `--format json`: the reference set and its source, then what
/// its form sets beside the run.
#[derive(Serialize)]
pub struct AgainstDoc {
    against: &'static str,
    source: &'static str,
    #[serde(flatten)]
    form: FormDoc,
}

#[derive(Serialize)]
#[serde(untagged)]
enum FormDoc {
    /// A section per program and size.
    Workload { statistic: &'static str, sections: Vec<SectionDoc> },
    /// This run's columns, then the seed's.
    Latency { columns: Vec<LatencyColumn> },
}

impl AgainstDoc {
    fn of(seed: &dyn Seed, form: FormDoc) -> AgainstDoc {
        AgainstDoc { against: seed.name(), source: seed.citation(), form }
    }
}

/// One program at one size: its rows and the best policy at each process count.
#[derive(Serialize)]
struct SectionDoc {
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
struct BestDoc {
    procs: usize,
    this_run: &'static str,
    reference: Option<&'static str>,
    agree: Option<bool>,
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
        AgainstForm::WorkloadMedians { io_size } => workload_medians(*seed, spec, io_size, run, trials),
        AgainstForm::LatencyColumns { title, rest, notes } => {
            latency_columns(*seed, spec, (title, rest, notes), run, trials)
        }
    }
}

/// The refusal of a run without the trials a seed's form sets beside its own.
fn lacks(run: &RunRecord, seed: &dyn Seed, spec: &seeds::Against) -> Error {
    Error::usage(format!(
        "run {} has no {} trial that finished ok: --against {} sets {}",
        run.id,
        spec.form.family(),
        seed.name(),
        spec.needs
    ))
}

fn median_of(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| median(values))
}

fn cell(v: Option<f64>, decimals: usize) -> String {
    v.filter(|x| x.is_finite()).map_or("-".into(), |x| format!("{x:.decimals$}"))
}

/// The parameters of a trial that are neither the cell's policy and processes nor its
/// size: what else sets one of this run's rows apart (a load, a nice value, ...).
fn setting(t: &TrialRecord, also: &[&str]) -> String {
    let shown_apart = [cell::axis::WORKLOAD, cell::axis::POLICY, cell::axis::PROCS];
    let mut parts = t.params.parts(|k| !shown_apart.contains(&k) && !also.contains(&k));
    parts.sort();
    parts.join(" ")
}

fn policy_rank(p: Policy) -> usize {
    Policy::ALL.iter().position(|x| *x == p).unwrap_or(Policy::ALL.len())
}

// ---------------------------------------------------------------------------------------
// Workload medians (csci3753-2014)

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
    fn add(&mut self, o: &crate::families::workload::model::WorkloadOutcome) {
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
    o: &crate::families::workload::model::WorkloadOutcome,
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
) -> Vec<(&TrialRecord, &WorkloadSpec, &crate::families::workload::model::WorkloadOutcome)> {
    trials
        .iter()
        .filter(|t| t.is_ok() && t.family == Family::Workload)
        .filter_map(|t| match (t.spec.as_ref()?, t.outcome.as_ref()?) {
            (TrialSpec::Workload(s), Outcome::Workload(o)) => Some((t, s, o)),
            _ => None,
        })
        .collect()
}

fn workload_medians(
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
    let json = AgainstDoc::of(seed, FormDoc::Workload { statistic: "median over ok repeats", sections: json_sections });
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

// ---------------------------------------------------------------------------------------
// Latency columns (hrtimers-2007)

/// One column of the classic table.
struct LatencyColumn {
    label: String,
    source: String,
    imported: bool,
    policy: Policy,
    prio: i32,
    interval_ns: u64,
    samples: u64,
    overruns: u64,
    min_ns: Option<u64>,
    max_ns: Option<u64>,
    avg_ns: Option<f64>,
    p50_ns: Option<f64>,
    p99_ns: Option<f64>,
}

impl LatencyColumn {
    /// A column from latency trials of one configuration: min and max over the repeats,
    /// avg their mean, the percentiles their medians (as the run's own table has them).
    fn of(label: String, source: String, imported: bool, trials: &[&TrialRecord]) -> Option<LatencyColumn> {
        let mut pairs =
            trials.iter().filter(|t| t.is_ok()).filter_map(|t| match (t.spec.as_ref()?, t.outcome.as_ref()?) {
                (TrialSpec::Latency(s), Outcome::Latency(o)) => Some((s, o)),
                _ => None,
            });
        let (spec, first) = pairs.next()?;
        let all: Vec<&crate::families::latency::model::ThreadStats> =
            std::iter::once(&first.all).chain(pairs.map(|(_, o)| &o.all)).filter(|s| s.samples > 0).collect();
        let known = |f: fn(&crate::families::latency::model::ThreadStats) -> Option<u64>| {
            median_of(&all.iter().filter_map(|s| f(s)).map(|v| v as f64).collect::<Vec<_>>())
        };
        let avgs: Vec<f64> = all.iter().map(|s| s.avg_ns).collect();
        Some(LatencyColumn {
            label,
            source,
            imported,
            policy: spec.policy,
            prio: spec.prio,
            interval_ns: spec.interval_ns,
            samples: all.iter().map(|s| s.samples).sum(),
            overruns: all.iter().map(|s| s.overruns).sum(),
            min_ns: all.iter().map(|s| s.min_ns).min(),
            max_ns: all.iter().map(|s| s.max_ns).max(),
            avg_ns: (!avgs.is_empty()).then(|| avgs.iter().sum::<f64>() / avgs.len() as f64),
            p50_ns: known(|s| s.p50_ns),
            p99_ns: known(|s| s.p99_ns),
        })
    }
}

/// A column's settings, then the registry's figures under their keys, summarised over
/// the repeats as `Column::of` says.
impl Serialize for LatencyColumn {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(13))?;
        m.serialize_entry("label", &self.label)?;
        m.serialize_entry("source", &self.source)?;
        m.serialize_entry("imported", &self.imported)?;
        m.serialize_entry("policy", self.policy.as_str())?;
        m.serialize_entry("prio", &self.prio)?;
        m.serialize_entry("interval_ns", &self.interval_ns)?;
        m.serialize_entry(latency::SAMPLES.key, &self.samples)?;
        m.serialize_entry(latency::OVERRUNS.key, &self.overruns)?;
        m.serialize_entry(latency::MIN_NS.key, &self.min_ns)?;
        m.serialize_entry(latency::MAX_NS.key, &self.max_ns)?;
        m.serialize_entry(latency::AVG_NS.key, &self.avg_ns)?;
        m.serialize_entry(latency::P50_NS.key, &self.p50_ns)?;
        m.serialize_entry(latency::P99_NS.key, &self.p99_ns)?;
        m.end()
    }
}

/// "SCHED_FIFO 95", "SCHED_OTHER": a policy as the classic table heads it.
fn policy_label(policy: Policy, prio: i32) -> String {
    if policy.is_realtime() {
        format!("{} {prio}", policy.kernel_name())
    } else {
        policy.kernel_name().to_string()
    }
}

fn latency_columns(
    seed: &dyn Seed,
    spec: &seeds::Against,
    (title, rest, notes): (&str, &str, &[&str]),
    run: &RunRecord,
    trials: &[TrialRecord],
) -> Result<AgainstReport> {
    let latency: Vec<TrialRecord> = trials.iter().filter(|t| t.family == Family::Latency).cloned().collect();
    let groups = crate::store::group::groups(&latency);
    let refs: Vec<&crate::store::group::Group> = groups.iter().collect();
    let varying: Vec<String> =
        crate::store::group::varying(&refs).into_iter().filter(|k| k != cell::axis::POLICY).collect();
    let mut columns: Vec<LatencyColumn> = Vec::new();
    for g in &groups {
        let Some(spec) = g.trials.iter().find_map(|t| match t.spec.as_ref()? {
            TrialSpec::Latency(s) => Some(s),
            _ => None,
        }) else {
            continue;
        };
        let mut label = policy_label(spec.policy, spec.prio);
        let what: Vec<String> = varying.iter().map(|k| format!("{k}={}", g.value_text(k))).collect();
        if !what.is_empty() {
            label = format!("{label} [{}]", what.join(" "));
        }
        if let Some(c) = LatencyColumn::of(label, format!("run {}", run.id), run.machine.is_imported(), &g.trials) {
            columns.push(c);
        }
    }
    if columns.is_empty() {
        return Err(lacks(run, seed, spec));
    }
    let here = columns.len();
    let seed_label = spec.label;
    for (record, reference) in seed.runs()? {
        let kernel = record.machine.kernel_release().unwrap_or(seed_label).to_string();
        for t in &reference {
            let Some(TrialSpec::Latency(spec)) = &t.spec else { continue };
            let label = if spec.policy.is_realtime() {
                format!("{kernel} root ({} {})", spec.policy.as_str().to_uppercase(), spec.prio)
            } else {
                format!("{kernel} user")
            };
            if let Some(c) = LatencyColumn::of(label, format!("{seed_label}, {kernel}"), true, &[t]) {
                columns.push(c);
            }
        }
    }
    let mut table =
        Table::new(std::iter::once("ns".to_string()).chain(columns.iter().map(|c| c.label.clone()))).left_align(0);
    type LabelledRow = (&'static str, fn(&LatencyColumn) -> String);
    let rows: [LabelledRow; 8] = [
        (latency::MIN_NS.name(), |c| c.min_ns.map_or("-".into(), |v| v.to_string())),
        (latency::MAX_NS.name(), |c| c.max_ns.map_or("-".into(), |v| v.to_string())),
        (latency::AVG_NS.name(), |c| cell(c.avg_ns, 0)),
        (latency::P50_NS.name(), |c| cell(c.p50_ns, 0)),
        (latency::P99_NS.name(), |c| cell(c.p99_ns, 0)),
        (latency::SAMPLES.name(), |c| c.samples.to_string()),
        (latency::OVERRUNS.name(), |c| c.overruns.to_string()),
        ("interval", |c| crate::model::format_ns(c.interval_ns)),
    ];
    for (name, value) in rows {
        table.push(std::iter::once(name.to_string()).chain(columns.iter().map(value)).collect());
    }
    let mut lines = vec![format!(
        "the first {here} column{} run {}'s ({}), {rest}",
        if here == 1 { " is" } else { "s are" },
        run.id,
        crate::report::overlay::machine_label(run)
    )];
    lines.extend(notes.iter().map(|n| n.to_string()));
    let section = Section { title: title.into(), table, left_columns: 1, lines };
    let json = AgainstDoc::of(seed, FormDoc::Latency { columns });
    Ok(AgainstReport { name: seed.name().into(), heading: (spec.heading)(run.id), sections: vec![section], json })
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
        let FormDoc::Workload { sections, .. } = &a.json.form else { panic!("a workload form") };
        let best = &sections[0].best;
        assert!(best.iter().all(|b| b.agree == Some(true)));
        assert_eq!(best[0].this_run, "other");
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
        let FormDoc::Latency { columns } = &a.json.form else { panic!("a latency form") };
        assert_eq!(columns.len(), 6);
        assert_eq!(columns[2].p99_ns, None);
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
