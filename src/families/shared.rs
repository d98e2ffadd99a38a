//! What every family's spec, options and outcome tell the layers around them: the bottom
//! of `families`, which each family's `model.rs` builds on and which names no family.

use crate::error::Result;
use crate::model::{LoadOutcome, LoadSpec, Policy, Steal};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A family's options: one struct read by clap as flags and by serde as suite keys, which
/// knows the trials it asks for.
pub trait SpecSource: clap::Args + for<'de> Deserialize<'de> {
    /// One validated trial.
    type Spec: FamilySpec;
    /// Every spec the options ask for (one per ring size, policy x procs cell or policy).
    fn to_specs(&self) -> Result<Vec<Self::Spec>>;
}

/// A spec's policy and the background load the trial runs beside it: the one thing a
/// family's spec must tell the layers around it, from which [`FamilySpec`]'s accessors read.
pub struct Scheduled<'a> {
    pub policy: Policy,
    pub load: &'a LoadSpec,
}

/// A family's model types, as the list's enums hold them (`FamilyModel` declares the
/// rest of the family).
pub trait FamilyTypes {
    /// Its options: flags and suite keys, and the trials they ask for.
    type Options: SpecSource;
    /// What a trial of it measures.
    type Outcome;
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
    /// The most real-time tasks the trial runs at once, given the `cpus` it may use: what
    /// decides whether turning RT throttling off could starve the machine.
    fn most_tasks(&self, cpus: usize) -> usize {
        self.procs().unwrap_or(cpus)
    }
    /// The value of a suite key the family's spec holds as one typed field of its own (a
    /// workload's `workload`), as text; `policy` and `procs` are every family's.
    fn own_key_text(&self, _key: &str) -> Option<String> {
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
    /// A figure declared at run time and read from the trial's output (a command's), by key.
    fn parsed(&self, _key: &str) -> Option<f64> {
        None
    }
    /// The key of the declared figure the trial is judged by instead of its family's
    /// headline (a command's first figure declared better = lower).
    fn judged(&self) -> Option<&str> {
        None
    }
    /// Its samples' histogram (`(value_ns, count)` buckets), which the store keeps in a
    /// compact column of its own; `None` for a family that keeps none (a latency run's).
    fn histogram_mut(&mut self) -> Option<&mut Vec<(u64, u64)>> {
        None
    }
    /// Who delayed its wakeups' tail, where it was traced (a latency run's `--trace on`).
    fn attribution(&self) -> Option<&crate::analysis::trace::Attribution> {
        None
    }
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
    ($outcome:ty $(, { $($own:item)* })?) => {
        impl $crate::families::shared::FamilyOutcome for $outcome {
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
            $($($own)*)?
        }
    };
}
pub(crate) use outcome_with_load_and_steal;
