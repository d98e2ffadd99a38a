//! What a family command is, for the one front door (`commands::family`): the trials its
//! flags plan, the checks that may refuse it before anything forks, and how it shows its
//! trials as they end and its tables after. Each family builds its [`Door`] in its own
//! folder (`families/<name>/live.rs`); the front door runs every one the same way.

use crate::error::Result;
use crate::exec::family::Extras;
use crate::exec::pipeline::Sink;
use crate::exec::suite::Trial;
use crate::store::TrialRecord;
use std::time::Duration;

/// How a family command shows its run: a heading, each trial as it ends (the [`Sink`]),
/// and the tables and findings at the end.
pub trait LiveReport: Sink {
    /// Before the first trial.
    fn start(&mut self) -> Result<()> {
        Ok(())
    }

    /// After the last trial (or the first failure to stop the run): `records` in run
    /// order, `exit_code` what the command exits with (3 where a trial failed).
    fn end(&mut self, records: &[TrialRecord], exit_code: i32) -> Result<()>;
}

/// The checks a command runs once the signal watch is up, before anything forks; they
/// give the report that shows the run (some of which they found: a ring's CPUs).
pub type Checks<'a> = Box<dyn FnOnce() -> Result<Box<dyn LiveReport + 'a>> + 'a>;

/// The progress bar's unit, and how much of it a trial is.
pub type Bar = (&'static str, fn(&Trial) -> u64);

/// One family command, planned from its flags.
pub struct Door<'a> {
    /// The executor's hard limit for one trial; each trial normally ends itself first.
    pub limit: Duration,
    pub checks: Checks<'a>,
    /// In the order they run.
    pub trials: Vec<Trial>,
    /// What the trials are asked beyond their spec (latency's files, taskset's activations).
    pub extras: Extras,
    /// `None`: no bar (latency draws its own live line).
    pub bar: Option<Bar>,
    /// What the bar says while a trial runs.
    pub label: Box<dyn Fn(&Trial) -> String + 'a>,
}

/// What a family command run in blocks (`command`, `server`, `taskset`) is made of: every
/// spec once a block, in an order drawn from `seed`, the cell each trial is stored under.
pub struct Blocks<S> {
    pub specs: Vec<S>,
    pub blocks: u32,
    pub seed: u64,
    /// The executor's hard limit for one trial.
    pub limit: Duration,
    /// The progress bar's unit ("runs", "trials").
    pub unit: &'static str,
    pub extras: Extras,
}

impl<S> Blocks<S>
where
    S: crate::exec::family::FamilyTrial + Clone + Into<crate::families::TrialSpec> + 'static,
{
    /// The door: each spec's checks and the background load's before anything forks, then
    /// `report` (given the specs) makes what shows the run. `cell` names a trial's cell.
    pub fn door(
        self,
        cell: impl Fn(&crate::families::TrialSpec) -> crate::model::cell::Cell,
        report: impl FnOnce(Vec<S>) -> Result<Box<dyn LiveReport>> + 'static,
    ) -> Door<'static> {
        let Blocks { specs, blocks, seed, limit, unit, extras } = self;
        let all: Vec<crate::families::TrialSpec> = specs.iter().cloned().map(Into::into).collect();
        let trials = Trial::in_blocks(&all, blocks as usize, seed, cell);
        Door {
            limit,
            checks: Box::new(move || {
                for spec in &specs {
                    spec.preflight()?;
                }
                if let Some(first) = specs.first() {
                    crate::exec::preflight::load(first.load())?;
                }
                report(specs)
            }),
            trials,
            extras,
            bar: Some((unit, |_| 1)),
            label: Box::new(move |t: &Trial| format!("block {}/{blocks}: {}", t.repeat, t.spec.policy())),
        }
    }
}
