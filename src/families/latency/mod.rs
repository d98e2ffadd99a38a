//! The latency family: absolute `clock_nanosleep` wakeups, actual − ideal, per thread and
//! policy (the 2007 hrtimers benchmark, cyclictest).

pub mod kernel;
pub mod report;
pub mod subcommand;
pub mod trial;

use crate::error::Result;
use crate::families::{FamilyModel, FamilyOutcome, FamilySpec};
use crate::model::figures::{self, Figure};
use crate::model::{
    DeadlineParams, LatencyLength, LatencyOptions, LatencyOutcome, LatencySpec, LoadOutcome, LoadSpec, Policy, Steal,
};
use std::time::Duration;

/// The latency family's type, for the traits every layer reaches a family through.
pub struct Latency;

impl FamilyModel for Latency {
    const NAME: &'static str = "latency";
    type Options = LatencyOptions;
    type Spec = LatencySpec;

    fn figures() -> &'static [&'static Figure] {
        figures::latency::ALL
    }

    /// The worst case is half of a latency question: p99 and the maximum.
    fn questioned() -> Vec<&'static Figure> {
        vec![&figures::latency::P99_NS, &figures::latency::MAX_NS]
    }

    fn to_specs(options: &LatencyOptions) -> Result<Vec<LatencySpec>> {
        options.to_specs(None)
    }
}

impl FamilySpec for LatencySpec {
    fn load(&self) -> &LoadSpec {
        &self.load
    }
    fn policy(&self) -> Policy {
        self.policy
    }
    fn deadline(&self) -> Option<DeadlineParams> {
        self.deadline
    }
    fn least_length(&self) -> Option<Duration> {
        Some(match self.length {
            LatencyLength::Duration(d) => d,
            LatencyLength::Loops(n) => Duration::from_nanos(n.saturating_mul(self.interval_ns)),
        })
    }
}

impl FamilyOutcome for LatencyOutcome {
    fn load(&self) -> Option<&LoadOutcome> {
        self.load.as_ref()
    }
    fn set_load(&mut self, load: Option<LoadOutcome>) {
        self.load = load;
    }
    fn steal(&self) -> Option<&Steal> {
        self.steal.as_ref()
    }
    fn set_steal(&mut self, steal: Option<Steal>) {
        self.steal = steal;
    }
    fn cgroup(&self) -> Option<&crate::model::settings::CgroupFigures> {
        self.cgroup.as_ref()
    }
    fn set_cgroup(&mut self, cgroup: Option<crate::model::settings::CgroupFigures>) {
        self.cgroup = cgroup;
    }
}
