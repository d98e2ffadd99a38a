//! The list of families as enums — [`Family`], one trial of any family ([`TrialSpec`]),
//! one outcome ([`Outcome`]) and one family's options ([`FamilyOptions`]) — with what
//! they answer through the shared traits. Each enum names each family's model types;
//! dispatch to a family's own type (its figures, its trial, its report) is `mod.rs`'s.

use crate::error::Result;
use crate::families::shared::{FamilyOutcome, FamilySpec, FamilyTypes, SpecSource};
use crate::model::cell::Cell;
use crate::model::{LoadOutcome, LoadSpec, Policy, Steal};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The enums of the list, made from the registry (`families!` in `mod.rs`): a variant a
/// family, holding its model's types as its `FamilyTypes` names them.
macro_rules! list_enums {
    ([] $($m:ident: $T:ident,)+) => {
        /// The benchmark families: the three classic experiments, and any program (`command`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum Family {
            $($T,)+
        }

        impl Family {
            /// Every family, in the registry's order.
            pub const ALL: [Family; [$(Family::$T),+].len()] = [$(Family::$T),+];
        }

        /// One trial of any family: what the orchestrator sends a trial process.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(tag = "family", rename_all = "lowercase")]
        pub enum TrialSpec {
            $($T(SpecOf<$crate::families::$m::$T>),)+
        }

        /// A finished trial's measurement, of whichever family.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "family", rename_all = "lowercase")]
        pub enum Outcome {
            $($T(<$crate::families::$m::$T as FamilyTypes>::Outcome),)+
        }

        /// A family's options, read from keys and values (a suite experiment's, or a stored
        /// trial's `params`). Keys may be written `work_kb` or `work-kb`.
        #[derive(Clone, Debug, PartialEq)]
        pub enum FamilyOptions {
            $($T(<$crate::families::$m::$T as FamilyTypes>::Options),)+
        }

        // Each family's spec into the list's enum.
        $(impl From<SpecOf<$crate::families::$m::$T>> for TrialSpec {
            fn from(spec: SpecOf<$crate::families::$m::$T>) -> TrialSpec {
                TrialSpec::$T(spec)
            }
        })+

        // Each family's outcome into the list's enum.
        $(impl From<<$crate::families::$m::$T as FamilyTypes>::Outcome> for Outcome {
            fn from(outcome: <$crate::families::$m::$T as FamilyTypes>::Outcome) -> Outcome {
                Outcome::$T(outcome)
            }
        })+

        impl TrialSpec {
            pub fn family(&self) -> Family {
                match self {
                    $(TrialSpec::$T(_) => Family::$T,)+
                }
            }
        }

        impl Outcome {
            pub fn family(&self) -> Family {
                match self {
                    $(Outcome::$T(_) => Family::$T,)+
                }
            }

            // A family's outcome, where this is one: `outcome.ring()`.
            $(pub fn $m(&self) -> Option<&<$crate::families::$m::$T as FamilyTypes>::Outcome> {
                match self {
                    Outcome::$T(o) => Some(o),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            })+
        }

        impl FamilyOptions {
            /// The error text names the offending key where serde knows it.
            /// The options read themselves with serde (`model::options::read_family`), from the
            /// cell's keys written as flags.
            pub fn from_keys(family: Family, keys: &Cell) -> std::result::Result<FamilyOptions, String> {
                let normalised: Cell = keys.iter().map(|(k, v)| (k.replace('_', "-"), v.clone())).collect();
                let value = serde_json::to_value(normalised).map_err(|e| e.to_string())?;
                let parsed = match family {
                    $(Family::$T => serde_json::from_value(value).map(FamilyOptions::$T),)+
                };
                parsed.map_err(|e| e.to_string())
            }
        }
    };
}
crate::families::families!(list_enums);

/// A family's spec type, as its options name it.
type SpecOf<F> = <<F as FamilyTypes>::Options as SpecSource>::Spec;

/// `body` with `x` bound to the family's value inside an enum of the list (`TrialSpec`,
/// `Outcome`, `FamilyOptions`), whatever its family: `on_each!(TrialSpec, spec, s => s.policy())`.
macro_rules! on_each {
    ($enum:ident, $value:expr, $x:pat => $body:expr) => {
        $crate::families::families!([$crate::families::list::on_each_arm], $enum, $value, $x => $body)
    };
}
pub(crate) use on_each;

/// `on_each!`'s match, one arm a family of the registry.
macro_rules! on_each_arm {
    ([$enum:ident, $value:expr, $x:pat => $body:expr] $($m:ident: $T:ident,)+) => {
        match $value {
            $($crate::families::list::$enum::$T($x) => $body,)+
        }
    };
}
pub(crate) use on_each_arm;

impl TrialSpec {
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

    /// The most real-time tasks the trial runs at once on `cpus` CPUs.
    pub fn most_tasks(&self, cpus: usize) -> usize {
        on_each!(TrialSpec, self, s => s.most_tasks(cpus))
    }

    /// The value of a suite key as this spec holds it, as text ("fifo", "10", "cpu"), for
    /// the keys the spec holds as one typed field: `policy`, `procs` and a workload's
    /// `workload`. `None` for any other key, whose value only the suite's parameters say.
    pub fn key_text(&self, key: &str) -> Option<String> {
        match key {
            "policy" => Some(self.policy().as_str().to_string()),
            "procs" => self.procs().map(|n| n.to_string()),
            _ => on_each!(TrialSpec, self, s => s.own_key_text(key)),
        }
    }
}

impl Outcome {
    /// A figure declared at run time and read from the trial's output, by key.
    pub fn parsed(&self, key: &str) -> Option<f64> {
        on_each!(Outcome, self, o => o.parsed(key))
    }

    /// The key of the declared figure the trial is judged by, where it names one.
    pub fn judged(&self) -> Option<&str> {
        on_each!(Outcome, self, o => o.judged())
    }

    /// Its samples' histogram, where its family keeps one.
    pub fn histogram_mut(&mut self) -> Option<&mut Vec<(u64, u64)>> {
        on_each!(Outcome, self, o => o.histogram_mut())
    }

    /// Who delayed its wakeups' tail, where its family traces one.
    pub fn attribution(&self) -> Option<&crate::analysis::trace::Attribution> {
        on_each!(Outcome, self, o => o.attribution())
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
}

impl FamilyOptions {
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
