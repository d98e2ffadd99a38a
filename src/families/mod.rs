//! The benchmark families, one folder each, and this file: **the one list of them**.
//!
//! A family's folder holds every layer of it, one file a layer, each file in the layer its
//! name says (docs/architecture.md, checked by tests/layers.rs): `mod.rs` and `model.rs`
//! (what the family declares of itself: options, spec, outcome, figures — [`FamilyModel`]),
//! `kernel.rs` (the measurement), `trial.rs` (its checks and its trial in the executor —
//! `exec::family::FamilyTrial`), `report.rs` (its tables, lines and plots —
//! `report::family::FamilyReport`) and `subcommand.rs` (its subcommand).
//!
//! Adding a family is its folder, its docs page and tests, and one line in each enum below
//! and each arm list of the dispatch macros under them; code elsewhere reaches a family
//! through those traits and macros, never by naming its variants.

pub mod command;
pub mod latency;
pub mod ring;
pub mod server;
pub mod taskset;
pub mod workload;

use crate::error::Result;
use crate::model::cell::Cell;
use crate::model::figures::{self, Figure};
use crate::model::{LoadOutcome, LoadSpec, Policy, Steal, WorkloadKind};
use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use command::model::{CommandOutcome, CommandSpec};
use latency::Latency;
use ring::Ring;
use server::Server;
use taskset::Taskset;
use workload::Workload;

/// What a family declares of itself at the model layer: its name, options and figures (the
/// options name its spec).
pub trait FamilyModel {
    /// Its name: the subcommand, the suite's `family = "…"`, the stored family.
    const NAME: &'static str;
    /// Its own figures, in line order (the load's come after them).
    const FIGURES: &'static [&'static Figure];
    /// Its options: flags and suite keys, and the trials they ask for.
    type Options: SpecSource;
    /// Figures declared at run time (a command's parsed ones), after its own.
    fn declared() -> Vec<&'static Figure> {
        Vec::new()
    }
    /// The figures a run's question tests between the cells it compares: the headline.
    fn questioned() -> Vec<&'static Figure> {
        vec![headline_among(Self::FIGURES)]
    }
    /// Suite keys whose value is one value however it is written, never an axis.
    fn whole_value_keys() -> &'static [&'static str] {
        &[]
    }
    /// Suite keys an experiment of this family must give (`workload`), with the message.
    fn required_key() -> Option<(&'static str, &'static str)> {
        None
    }
    /// What to write instead of a suite key the family refuses with a hint (a command's
    /// `figure`, the flag's name, where the suite's key is `figures`).
    fn key_hint(_key: &str) -> Option<&'static str> {
        None
    }
    /// Does a suite compare its policies by default? (A ring's sizes are its question.)
    fn compares_policy_by_default() -> bool {
        true
    }
}

/// A family's options: one struct read by clap as flags and by serde as suite keys, which
/// knows the trials it asks for.
pub trait SpecSource: clap::Args + for<'de> Deserialize<'de> {
    /// One validated trial.
    type Spec: FamilySpec + Into<TrialSpec>;
    /// Every spec the options ask for (one per ring size, policy x procs cell or policy).
    fn to_specs(&self) -> Result<Vec<Self::Spec>>;
}

/// A family's spec type, named by its options.
pub type SpecOf<F> = <<F as FamilyModel>::Options as SpecSource>::Spec;

/// The figure marked headline among a family's figures.
fn headline_among(all: &'static [&'static Figure]) -> &'static Figure {
    all.iter().copied().find(|f| f.headline).expect("every family's registry marks one headline figure")
}

/// A spec's policy and the background load the trial runs beside it: the one thing a
/// family's spec must tell the layers around it, from which [`FamilySpec`]'s accessors read.
pub struct Scheduled<'a> {
    pub policy: Policy,
    pub load: &'a LoadSpec,
}

/// What every family's spec tells the layers around it.
pub trait FamilySpec {
    fn scheduled(&self) -> Scheduled<'_>;
    /// The background load the trial runs beside it.
    fn load(&self) -> &LoadSpec {
        self.scheduled().load
    }
    fn policy(&self) -> Policy {
        self.scheduled().policy
    }
    /// The least time the measurement takes, where the spec sets it; `None` where it
    /// depends on the machine.
    fn least_length(&self) -> Option<Duration> {
        None
    }
    /// The processes of a ring or a matrix cell (a latency trial has threads instead).
    fn procs(&self) -> Option<usize> {
        None
    }
}

/// What every family's outcome carries beside its own figures.
pub trait FamilyOutcome {
    /// What the background load did during the trial, if it ran one.
    fn load(&self) -> Option<&LoadOutcome>;
    fn set_load(&mut self, load: Option<LoadOutcome>);
    /// The steal over the trial, if it was read.
    fn steal(&self) -> Option<&Steal>;
    fn set_steal(&mut self, steal: Option<Steal>);
    /// The trial's private cgroup figures (a `cgroup` setting), where it ran in one.
    fn cgroup(&self) -> Option<&crate::model::settings::CgroupFigures>;
    fn set_cgroup(&mut self, cgroup: Option<crate::model::settings::CgroupFigures>);
}

/// What every outcome records beside its own figures, flattened into it (its keys stand
/// among the outcome's own, where these fields stood before they were shared).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Beside {
    /// What the background load did during the measured window (none without a load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadOutcome>,
    /// Each CPU's steal over the trial (the hypervisor's, as the guest accounts it); none in
    /// runs stored before schedlab read it, or where the kernel shows none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal: Option<Steal>,
    /// The trial's private cgroup (a `cgroup` setting): throttling and CPU pressure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<crate::model::settings::CgroupFigures>,
}

/// `FamilyOutcome` for an outcome that keeps its load, steal and cgroup in a `beside` field.
macro_rules! outcome_with_load_and_steal {
    ($outcome:ty) => {
        impl $crate::families::FamilyOutcome for $outcome {
            fn load(&self) -> Option<&$crate::model::LoadOutcome> {
                self.beside.load.as_ref()
            }
            fn set_load(&mut self, load: Option<$crate::model::LoadOutcome>) {
                self.beside.load = load;
            }
            fn steal(&self) -> Option<&$crate::model::Steal> {
                self.beside.steal.as_ref()
            }
            fn set_steal(&mut self, steal: Option<$crate::model::Steal>) {
                self.beside.steal = steal;
            }
            fn cgroup(&self) -> Option<&$crate::model::settings::CgroupFigures> {
                self.beside.cgroup.as_ref()
            }
            fn set_cgroup(&mut self, cgroup: Option<$crate::model::settings::CgroupFigures>) {
                self.beside.cgroup = cgroup;
            }
        }
    };
}
pub(crate) use outcome_with_load_and_steal;

/// The benchmark families: the three classic experiments, and any program (`command`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Ring,
    Workload,
    Latency,
    Command,
    Taskset,
    Server,
}

/// One trial of any family: what the orchestrator sends a trial process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum TrialSpec {
    Ring(SpecOf<Ring>),
    Workload(SpecOf<Workload>),
    Latency(SpecOf<Latency>),
    Command(SpecOf<command::Command>),
    Taskset(SpecOf<Taskset>),
    Server(SpecOf<Server>),
}

/// A finished trial's measurement, of whichever family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum Outcome {
    Ring(crate::model::RingOutcome),
    Workload(crate::model::WorkloadOutcome),
    Latency(crate::model::LatencyOutcome),
    Command(CommandOutcome),
    Taskset(taskset::model::TasksetOutcome),
    Server(server::model::ServerOutcome),
}

/// A family's options, read from keys and values (a suite experiment's, or a stored
/// trial's `params`). Keys may be written `work_kb` or `work-kb`.
#[derive(Clone, Debug, PartialEq)]
pub enum FamilyOptions {
    Ring(<Ring as FamilyModel>::Options),
    Workload(<Workload as FamilyModel>::Options),
    Latency(<Latency as FamilyModel>::Options),
    Command(<command::Command as FamilyModel>::Options),
    Taskset(<Taskset as FamilyModel>::Options),
    Server(<Server as FamilyModel>::Options),
}

/// `body` with `F` standing for `family`'s type (its [`FamilyModel`] and the traits of the
/// layers above): `with_family!(family, F => F::FIGURES)`.
macro_rules! with_family {
    ($family:expr, $F:ident => $body:expr) => {
        match $family {
            $crate::families::Family::Ring => {
                type $F = $crate::families::ring::Ring;
                $body
            }
            $crate::families::Family::Workload => {
                type $F = $crate::families::workload::Workload;
                $body
            }
            $crate::families::Family::Latency => {
                type $F = $crate::families::latency::Latency;
                $body
            }
            $crate::families::Family::Command => {
                type $F = $crate::families::command::Command;
                $body
            }
            $crate::families::Family::Taskset => {
                type $F = $crate::families::taskset::Taskset;
                $body
            }
            $crate::families::Family::Server => {
                type $F = $crate::families::server::Server;
                $body
            }
        }
    };
}
pub(crate) use with_family;

/// `body` with `x` bound to the family's value inside an enum of the list (`TrialSpec`,
/// `Outcome`, `FamilyOptions`), whatever its family: `on_each!(TrialSpec, spec, s => s.policy())`.
macro_rules! on_each {
    ($enum:ident, $value:expr, $x:pat => $body:expr) => {
        match $value {
            $crate::families::$enum::Ring($x) => $body,
            $crate::families::$enum::Workload($x) => $body,
            $crate::families::$enum::Latency($x) => $body,
            $crate::families::$enum::Command($x) => $body,
            $crate::families::$enum::Taskset($x) => $body,
            $crate::families::$enum::Server($x) => $body,
        }
    };
}
pub(crate) use on_each;

/// Each family's spec into the list's enum.
macro_rules! into_trial_spec {
    ($($variant:ident: $family:ty),+) => {
        $(impl From<SpecOf<$family>> for TrialSpec {
            fn from(spec: SpecOf<$family>) -> TrialSpec {
                TrialSpec::$variant(spec)
            }
        })+
    };
}
into_trial_spec!(Ring: Ring, Workload: Workload, Latency: Latency, Command: command::Command, Taskset: Taskset, Server: Server);

impl Family {
    pub const ALL: [Family; 6] =
        [Family::Ring, Family::Workload, Family::Latency, Family::Command, Family::Taskset, Family::Server];

    pub fn as_str(self) -> &'static str {
        with_family!(self, F => F::NAME)
    }

    /// Suite keys whose value is one value however it is written, never an axis: a
    /// command's program line and its declared figures (lists themselves).
    pub fn whole_value_keys(self) -> &'static [&'static str] {
        with_family!(self, F => F::whole_value_keys())
    }

    /// A suite key an experiment of this family must give, with the message if it does not.
    pub fn required_key(self) -> Option<(&'static str, &'static str)> {
        with_family!(self, F => F::required_key())
    }

    /// What to write instead of a suite key the family refuses with a hint.
    pub fn key_hint(self, key: &str) -> Option<&'static str> {
        with_family!(self, F => F::key_hint(key))
    }

    /// Does a suite whose experiment has a policy axis compare it unless told otherwise?
    pub fn compares_policy_by_default(self) -> bool {
        with_family!(self, F => F::compares_policy_by_default())
    }

    pub fn parse(text: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.as_str() == text)
    }

    /// The family's own figures, in line order.
    pub fn figures(self) -> &'static [&'static Figure] {
        with_family!(self, F => F::FIGURES)
    }

    /// Figures declared at run time for the family (a command's parsed ones).
    pub fn declared(self) -> Vec<&'static Figure> {
        with_family!(self, F => F::declared())
    }

    /// The figures a run's question tests between the cells it compares.
    pub fn questioned(self) -> Vec<&'static Figure> {
        with_family!(self, F => F::questioned())
    }

    /// The figure a cell of this family is judged by: the one its confidence interval,
    /// adaptive repeats and verdicts are about (the figure registry marks it).
    pub fn headline_figure(self) -> &'static str {
        figures::headline(self).key
    }
}

impl TrialSpec {
    pub fn family(&self) -> Family {
        match self {
            TrialSpec::Ring(_) => Family::Ring,
            TrialSpec::Workload(_) => Family::Workload,
            TrialSpec::Latency(_) => Family::Latency,
            TrialSpec::Command(_) => Family::Command,
            TrialSpec::Taskset(_) => Family::Taskset,
            TrialSpec::Server(_) => Family::Server,
        }
    }

    /// The background load the trial runs beside it.
    pub fn load(&self) -> &LoadSpec {
        on_each!(TrialSpec, self, s => s.load())
    }

    pub fn policy(&self) -> Policy {
        on_each!(TrialSpec, self, s => s.policy())
    }

    /// The least time the trial's measurement takes, where its spec sets it: a ring's
    /// `--duration`, a latency run's `--duration` or `--loops` periods. `None` for a lap
    /// count or a workload, whose time depends on the machine.
    pub fn least_length(&self) -> Option<Duration> {
        on_each!(TrialSpec, self, s => s.least_length())
    }

    /// The ring's or the matrix cell's processes (a latency trial has threads instead).
    pub fn procs(&self) -> Option<usize> {
        on_each!(TrialSpec, self, s => s.procs())
    }

    /// A workload trial's program (cpu, io, mixed).
    pub fn workload(&self) -> Option<WorkloadKind> {
        match self {
            TrialSpec::Workload(s) => Some(s.params.kind),
            _ => None,
        }
    }

    /// The value of a suite key as this spec holds it, as text ("fifo", "10", "cpu"), for
    /// the keys the spec holds as one typed field: `policy`, `procs` and a workload's
    /// `workload`. `None` for any other key, whose value only the suite's parameters say.
    pub fn key_text(&self, key: &str) -> Option<String> {
        match key {
            "policy" => Some(self.policy().as_str().to_string()),
            "procs" => self.procs().map(|n| n.to_string()),
            "workload" => self.workload().map(|k| k.as_str().to_string()),
            _ => None,
        }
    }
}

impl Outcome {
    pub fn ring(&self) -> Option<&crate::model::RingOutcome> {
        match self {
            Outcome::Ring(o) => Some(o),
            _ => None,
        }
    }

    pub fn workload(&self) -> Option<&crate::model::WorkloadOutcome> {
        match self {
            Outcome::Workload(o) => Some(o),
            _ => None,
        }
    }

    pub fn latency(&self) -> Option<&crate::model::LatencyOutcome> {
        match self {
            Outcome::Latency(o) => Some(o),
            _ => None,
        }
    }

    pub fn command(&self) -> Option<&CommandOutcome> {
        match self {
            Outcome::Command(o) => Some(o),
            _ => None,
        }
    }

    pub fn taskset(&self) -> Option<&taskset::model::TasksetOutcome> {
        match self {
            Outcome::Taskset(o) => Some(o),
            _ => None,
        }
    }

    pub fn server(&self) -> Option<&server::model::ServerOutcome> {
        match self {
            Outcome::Server(o) => Some(o),
            _ => None,
        }
    }

    /// What the background load did during the trial, if it ran one.
    pub fn load(&self) -> Option<&LoadOutcome> {
        on_each!(Outcome, self, o => o.load())
    }

    /// The steal over the trial, if it was read.
    pub fn steal(&self) -> Option<&Steal> {
        on_each!(Outcome, self, o => o.steal())
    }

    /// Record the steal over the trial beside its figures.
    pub fn set_steal(&mut self, steal: Option<Steal>) {
        on_each!(Outcome, self, o => o.set_steal(steal))
    }

    /// Record the background load's figures beside the trial's own.
    pub fn set_load(&mut self, load: Option<LoadOutcome>) {
        on_each!(Outcome, self, o => o.set_load(load))
    }

    /// The trial's private cgroup figures, where it ran in one.
    pub fn cgroup(&self) -> Option<&crate::model::settings::CgroupFigures> {
        on_each!(Outcome, self, o => o.cgroup())
    }

    /// Record the trial's private cgroup figures beside its own.
    pub fn set_cgroup(&mut self, cgroup: Option<crate::model::settings::CgroupFigures>) {
        on_each!(Outcome, self, o => o.set_cgroup(cgroup))
    }

    pub fn family(&self) -> Family {
        match self {
            Outcome::Ring(_) => Family::Ring,
            Outcome::Workload(_) => Family::Workload,
            Outcome::Latency(_) => Family::Latency,
            Outcome::Command(_) => Family::Command,
            Outcome::Taskset(_) => Family::Taskset,
            Outcome::Server(_) => Family::Server,
        }
    }

    /// The family's headline figure, as the figure registry marks it (a ring's cost per
    /// switch in ns, a workload's wall time in s, a latency run's p99 over all threads).
    pub fn headline(&self) -> f64 {
        figures::headline_of(self).value(self).unwrap_or(f64::NAN)
    }
}

impl FamilyOptions {
    /// The error text names the offending key where serde knows it.
    /// The options read themselves with serde (`model::options::read_family`), from the
    /// cell's keys written as flags.
    pub fn from_keys(family: Family, keys: &Cell) -> std::result::Result<FamilyOptions, String> {
        let normalised: Cell = keys.iter().map(|(k, v)| (k.replace('_', "-"), v.clone())).collect();
        let value = serde_json::to_value(normalised).map_err(|e| e.to_string())?;
        let parsed = match family {
            Family::Ring => serde_json::from_value(value).map(FamilyOptions::Ring),
            Family::Workload => serde_json::from_value(value).map(FamilyOptions::Workload),
            Family::Latency => serde_json::from_value(value).map(FamilyOptions::Latency),
            Family::Command => serde_json::from_value(value).map(FamilyOptions::Command),
            Family::Taskset => serde_json::from_value(value).map(FamilyOptions::Taskset),
            Family::Server => serde_json::from_value(value).map(FamilyOptions::Server),
        };
        parsed.map_err(|e| e.to_string())
    }

    /// Every spec these options ask for (one per ring size, policy x procs cell or policy).
    pub fn to_specs(&self) -> Result<Vec<TrialSpec>> {
        Ok(on_each!(FamilyOptions, self, o => o.to_specs()?.into_iter().map(Into::into).collect()))
    }
}

/// The spec of a stored trial, from the parameters it was stored with (used for results
/// written before specs were stored). `None` when they no longer make one trial.
pub fn spec_from_params(family: Family, params: &Cell) -> Option<TrialSpec> {
    let mut specs = FamilyOptions::from_keys(family, params).ok()?.to_specs().ok()?;
    (specs.len() == 1).then(|| specs.remove(0))
}
