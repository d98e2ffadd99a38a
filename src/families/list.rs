//! The list of families as enums — [`Family`], one trial of any family ([`TrialSpec`]),
//! one outcome ([`Outcome`]) and one family's options ([`FamilyOptions`]) — with what
//! they answer through the shared traits. Each enum names each family's model types;
//! dispatch to a family's own type (its figures, its trial, its report) is `mod.rs`'s.

use crate::error::Result;
use crate::families::shared::{FamilyOutcome, FamilySpec, SpecSource};
use crate::families::workload::model::WorkloadKind;
use crate::model::cell::Cell;
use crate::model::{LoadOutcome, LoadSpec, Policy, Steal};
use serde::{Deserialize, Serialize};
use std::time::Duration;

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
    Ring(crate::families::ring::model::RingSpec),
    Workload(crate::families::workload::model::WorkloadSpec),
    Latency(crate::families::latency::model::LatencySpec),
    Command(crate::families::command::model::CommandSpec),
    Taskset(crate::families::taskset::model::TasksetSpec),
    Server(crate::families::server::model::ServerSpec),
}

/// A finished trial's measurement, of whichever family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum Outcome {
    Ring(crate::families::ring::model::RingOutcome),
    Workload(crate::families::workload::model::WorkloadOutcome),
    Latency(crate::families::latency::model::LatencyOutcome),
    Command(crate::families::command::model::CommandOutcome),
    Taskset(crate::families::taskset::model::TasksetOutcome),
    Server(crate::families::server::model::ServerOutcome),
}

/// A family's options, read from keys and values (a suite experiment's, or a stored
/// trial's `params`). Keys may be written `work_kb` or `work-kb`.
#[derive(Clone, Debug, PartialEq)]
pub enum FamilyOptions {
    Ring(crate::families::ring::model::RingOptions),
    Workload(crate::families::workload::model::WorkloadOptions),
    Latency(crate::families::latency::model::LatencyOptions),
    Command(crate::families::command::model::CommandOptions),
    Taskset(crate::families::taskset::model::TasksetOptions),
    Server(crate::families::server::model::ServerOptions),
}

/// `body` with `x` bound to the family's value inside an enum of the list (`TrialSpec`,
/// `Outcome`, `FamilyOptions`), whatever its family: `on_each!(TrialSpec, spec, s => s.policy())`.
macro_rules! on_each {
    ($enum:ident, $value:expr, $x:pat => $body:expr) => {
        match $value {
            $crate::families::list::$enum::Ring($x) => $body,
            $crate::families::list::$enum::Workload($x) => $body,
            $crate::families::list::$enum::Latency($x) => $body,
            $crate::families::list::$enum::Command($x) => $body,
            $crate::families::list::$enum::Taskset($x) => $body,
            $crate::families::list::$enum::Server($x) => $body,
        }
    };
}
pub(crate) use on_each;

/// Each family's spec into the list's enum.
macro_rules! into_trial_spec {
    ($($variant:ident: $spec:ty),+) => {
        $(impl From<$spec> for TrialSpec {
            fn from(spec: $spec) -> TrialSpec {
                TrialSpec::$variant(spec)
            }
        })+
    };
}
into_trial_spec!(
    Ring: crate::families::ring::model::RingSpec,
    Workload: crate::families::workload::model::WorkloadSpec,
    Latency: crate::families::latency::model::LatencySpec,
    Command: crate::families::command::model::CommandSpec,
    Taskset: crate::families::taskset::model::TasksetSpec,
    Server: crate::families::server::model::ServerSpec
);

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
    pub fn ring(&self) -> Option<&crate::families::ring::model::RingOutcome> {
        match self {
            Outcome::Ring(o) => Some(o),
            _ => None,
        }
    }

    pub fn workload(&self) -> Option<&crate::families::workload::model::WorkloadOutcome> {
        match self {
            Outcome::Workload(o) => Some(o),
            _ => None,
        }
    }

    pub fn latency(&self) -> Option<&crate::families::latency::model::LatencyOutcome> {
        match self {
            Outcome::Latency(o) => Some(o),
            _ => None,
        }
    }

    pub fn command(&self) -> Option<&crate::families::command::model::CommandOutcome> {
        match self {
            Outcome::Command(o) => Some(o),
            _ => None,
        }
    }

    pub fn taskset(&self) -> Option<&crate::families::taskset::model::TasksetOutcome> {
        match self {
            Outcome::Taskset(o) => Some(o),
            _ => None,
        }
    }

    pub fn server(&self) -> Option<&crate::families::server::model::ServerOutcome> {
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
