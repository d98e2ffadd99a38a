//! The seed documents schedlab replicates, one file each behind the [`Seed`] trait: the
//! 1992 NCAR report (`ncar_1992`), the CSCI 3753 (Spring 2014) policy study
//! (`csci3753_2014`) and the 2007 hrtimers blog post (`hrtimers_2007`). Each file holds its
//! document's published figures (built into the binary from `data/`), how they become
//! runs marked as imported (`schedlab import --reference NAME`), the document's
//! conclusions as claims, and how `report --against NAME` sets a run beside it.
//!
//! [`SEEDS`] is the one list of them: the import, the claims and `--against` (report), and
//! the `--reference` and `--against` names and help (cli) all read it, so a new seed is
//! one file here and one entry there. The claims and `--against` are declared here, as
//! data; deciding them is `decide::claims`', rendering them the report layer's
//! (`report::claims`, `report::against`): layers this one may not import.
//!
//! What a document does not give is unknown in a run's outcome (`None`), never made up.
//! Run ids are derived from a set's name (UUID v5), so importing a set twice stores
//! nothing new.

mod csci3753_2014;
mod hrtimers_2007;
mod ncar_1992;

use crate::error::{Error, Result};
use crate::families::figures::{Figure, Unit};
use crate::families::latency::figures as latency;
use crate::families::workload::figures as workload;
use crate::families::Outcome;
use crate::store::{RunRecord, RunStatus, TrialRecord};
use serde::Serialize;

/// Every seed built in, in the order help texts list them: adding a seed is its file and
/// its entry here.
pub static SEEDS: [&dyn Seed; 3] = [&ncar_1992::Ncar1992, &csci3753_2014::Csci3753, &hrtimers_2007::Hrtimers2007];

/// A seed document: its published figures, its conclusions, and how a run is set beside it.
pub trait Seed: Sync {
    /// The name `import --reference` and `report --against` take: "csci3753-2014".
    fn name(&self) -> &'static str;
    /// What `import --reference NAME` stores, for its help.
    fn holds(&self) -> &'static str;
    /// Where the figures were published.
    fn citation(&self) -> &'static str;
    /// The published figures as finished runs of ok trials, marked as imported.
    fn runs(&self) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>>;
    /// The document's conclusions, as `report` decides them on a run of its suite.
    fn claims(&self) -> Claims;
    /// How `report --against NAME` sets a run beside the figures; `None` where it does not.
    fn against(&self) -> Option<Against> {
        None
    }
}

/// The seed named `name`, if one is built in.
pub fn seed(name: &str) -> Option<&'static dyn Seed> {
    SEEDS.iter().copied().find(|s| s.name() == name)
}

/// Every seed's name, in the registry's order.
pub fn names() -> Vec<&'static str> {
    SEEDS.iter().map(|s| s.name()).collect()
}

/// `import --reference NAME`: the runs of any built-in reference set.
pub fn reference_runs(name: &str) -> Result<Vec<(RunRecord, Vec<TrialRecord>)>> {
    match seed(name) {
        Some(s) => s.runs(),
        None => Err(Error::usage(format!(
            "there is no reference set '{name}': the ones built in are {}",
            names().join(", ")
        ))),
    }
}

// ---------------------------------------------------------------------------------------
// The claims, as data: `decide::claims` decides each on the seed's figures and on a run.

/// A seed's conclusions.
pub struct Claims {
    /// The suite of schedlab's that replicates the seed: its runs are shown this table.
    pub suite: &'static str,
    pub title: &'static str,
    pub claims: Vec<Claim>,
}

/// One conclusion and how each data set decides it.
pub struct Claim {
    pub id: &'static str,
    pub claim: &'static str,
    /// On the seed's own published figures.
    pub on_seed: Test,
    /// On a run of the seed's suite.
    pub on_run: Test,
}

/// How a claim is decided on one data set.
#[derive(Clone)]
pub enum Test {
    /// The `lows` policies' figure is below each of the `highs` policies', in every cell.
    Lower { cells: Cells, lows: &'static [&'static str], highs: &'static [&'static str], figure: ClaimFigure },
    /// Each pair of policies is alike in the figure (within the margin), in every cell.
    Alike { cells: Cells, pairs: &'static [(&'static str, &'static str)], figure: ClaimFigure },
    /// Published figures without samples: the ratio `low` / `high` is shown, with why no
    /// test is possible.
    Shown { low: &'static str, high: &'static str, figure: ClaimFigure, why: &'static str },
    /// A ring's CPU time per hop rises with its processes: on several of the seed's
    /// machines but not all, or on a run's own curve.
    RingCostRises,
    /// The machines whose name contains each text have a rising knee at or past their
    /// register-window bank count (and not far beyond it).
    KneesPastBanks(&'static [(&'static str, f64)]),
    /// The data cannot test it (no samples published), for this reason.
    Untestable(&'static str),
    /// The data does not cover it, for this reason.
    NotCovered(&'static str),
}

/// The cells a comparison looks at.
#[derive(Clone, Copy)]
pub enum Cells {
    /// All the trials as one cell.
    All,
    /// Each program at each process count ("workload" = "cpu", "procs" = "10").
    Workloads(&'static [&'static str], &'static [u32]),
}

impl Cells {
    /// Each cell as the parameter values its trials have.
    pub fn each(self) -> Vec<Vec<(&'static str, String)>> {
        match self {
            Cells::All => vec![Vec::new()],
            Cells::Workloads(workloads, procs) => workloads
                .iter()
                .flat_map(|w| procs.iter().map(move |n| vec![("workload", w.to_string()), ("procs", n.to_string())]))
                .collect(),
        }
    }
}

/// A figure a claim compares: the registry's figure, and the words the claim's effect
/// names it by ("FIFO / OTHER average latency 0.52").
#[derive(Clone, Copy)]
pub struct ClaimFigure {
    pub figure: &'static Figure,
    pub words: &'static str,
}

impl ClaimFigure {
    pub const WALL: ClaimFigure = ClaimFigure { figure: &workload::WALL_S, words: "wall" };
    pub const INVOLUNTARY: ClaimFigure = ClaimFigure { figure: &workload::NIVCSW, words: "involuntary switches" };
    pub const VOLUNTARY: ClaimFigure = ClaimFigure { figure: &workload::NVCSW, words: "voluntary switches" };
    pub const LATENCY_AVG: ClaimFigure = ClaimFigure { figure: &latency::AVG_NS, words: "average latency" };
    pub const LATENCY_MAX: ClaimFigure = ClaimFigure { figure: &latency::MAX_NS, words: "worst latency" };

    /// A count, which may be 0: a ratio of two is taken with half a count added to each
    /// (so that "none against some" still has a direction and a size).
    pub fn is_count(self) -> bool {
        self.figure.unit == Unit::Count
    }

    pub fn of(self, o: &Outcome) -> Option<f64> {
        self.figure.value(o)
    }
}

// ---------------------------------------------------------------------------------------
// `report --against`, as data: `report::against` renders the form with these words.

/// How `report --against NAME` sets a run beside a seed.
pub struct Against {
    /// What it sets beside what, for `--against`'s help.
    pub help: &'static str,
    pub form: AgainstForm,
    /// The trials a run needs, after "--against NAME sets ": said when it has none.
    pub needs: &'static str,
    /// How the seed's figures are labelled in column heads and sentences: "2014".
    pub label: &'static str,
    /// The comparison's heading, given the run's id.
    pub heading: fn(i64) -> String,
}

/// The form of the comparison.
pub enum AgainstForm {
    /// Per program, the medians of wall time and switches by policy and processes.
    WorkloadMedians {
        /// Said of the seed's io size (its document may give none).
        io_size: &'static str,
    },
    /// The min/max/avg latency table, one column per configuration.
    LatencyColumns {
        /// The table's title.
        title: &'static str,
        /// After "the first N columns are run R's (machine), ": what the rest are.
        rest: &'static str,
        /// Said under the table besides.
        notes: &'static [&'static str],
    },
}

impl AgainstForm {
    /// The family of the trials the form sets beside the seed's: "workload", "latency".
    pub fn family(&self) -> &'static str {
        match self {
            AgainstForm::WorkloadMedians { .. } => "workload",
            AgainstForm::LatencyColumns { .. } => "latency",
        }
    }
}

// ---------------------------------------------------------------------------------------
// What the seed files share.

/// A built-in data file that does not read is schedlab's bug, not the user's.
fn bug(file: &str, what: impl std::fmt::Display) -> Error {
    Error::env(format!("{file}: {what}: a bug in schedlab; please report it"))
}

/// The line of a built-in file on which `needle` starts (0 when absent).
fn line_of(file: &str, needle: &str) -> usize {
    file.find(needle).map_or(0, |at| file[..at].lines().count())
}

/// Name-based run ids (UUID v5) of the 2014 and 2007 sets live under this namespace (the
/// 1992 set's under the NCAR table format's, as `import --ncar` made them first).
const UUID_NAMESPACE: uuid::Uuid = uuid::uuid!("ab4825b6-4c19-495e-a9aa-e8164d8e7830");

/// How a reference set's run was stored, in its options (keys `RunOptions` keeps as
/// unknown): `{"import": "reference", "reference": NAME}`, and which of the set's
/// machines or kernels the run holds where it holds one of several.
#[derive(Serialize)]
struct ReferenceOptions<'a> {
    import: &'static str,
    reference: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    machine: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel: Option<&'a str>,
}

impl<'a> ReferenceOptions<'a> {
    fn of(reference: &'static str) -> ReferenceOptions<'a> {
        ReferenceOptions { import: "reference", reference, machine: None, kernel: None }
    }
}

/// What a reference set's run says about itself; `M` is the seed's own machine record
/// (names the machine and marks the figures as imported).
struct Published<'a, M: Serialize> {
    /// What identifies the figures: the same identity gives the same run uuid.
    identity: String,
    suite_name: String,
    suite_text: String,
    options: ReferenceOptions<'a>,
    machine: M,
    started: String,
    /// The notice that the figures are published, first, then any check's warning.
    warnings: Vec<String>,
}

fn finished_run<M: Serialize>(p: Published<M>, planned: usize) -> RunRecord {
    // The typed records become the stored form the run keeps (plain strings, numbers and
    // flags: encoding cannot fail).
    RunRecord {
        id: 0,
        uuid: uuid::Uuid::new_v5(&UUID_NAMESPACE, p.identity.as_bytes()).to_string(),
        suite_name: p.suite_name,
        suite_text: p.suite_text,
        options: crate::model::run::RunOptions::from_json(serde_json::to_value(&p.options).unwrap_or_default()),
        started: p.started.clone(),
        ended: Some(p.started),
        status: RunStatus::Finished,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        machine: crate::sys::machine::StoredMachine::from_json(serde_json::to_value(&p.machine).unwrap_or_default()),
        warnings: p.warnings,
        planned: planned as i64,
        pid: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_a_reference_set_and_others_are_refused() {
        for name in names() {
            assert!(!reference_runs(name).unwrap().is_empty(), "{name}");
        }
        let err = reference_runs("csci3753-2015").unwrap_err().to_string();
        assert!(err.contains("ncar-1992, csci3753-2014, hrtimers-2007"), "{err}");
    }

    #[test]
    fn every_seed_has_its_own_name_and_suite() {
        let suites: std::collections::BTreeSet<&str> = SEEDS.iter().map(|s| s.claims().suite).collect();
        let names: std::collections::BTreeSet<&str> = names().into_iter().collect();
        assert_eq!((suites.len(), names.len()), (SEEDS.len(), SEEDS.len()));
    }
}
