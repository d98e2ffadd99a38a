//! The latency family: absolute `clock_nanosleep` wakeups, actual − ideal, per thread and
//! policy (the 2007 hrtimers benchmark, cyclictest).

pub mod kernel;
pub mod model;
pub mod report;
pub mod subcommand;
pub mod trial;

use crate::error::Result;
use crate::families::{outcome_with_load_and_steal, FamilyModel, FamilySpec};
use crate::model::figures::{self, Figure};
use crate::model::{DeadlineParams, LatencyLength, LatencyOptions, LatencyOutcome, LatencySpec, LoadSpec, Policy};
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
        &self.beside.load
    }
    fn policy(&self) -> Policy {
        self.policy
    }
    fn deadline(&self) -> Option<DeadlineParams> {
        self.beside.deadline
    }
    fn least_length(&self) -> Option<Duration> {
        Some(match self.length {
            LatencyLength::Duration(d) => d,
            LatencyLength::Loops(n) => Duration::from_nanos(n.saturating_mul(self.interval_ns)),
        })
    }
}

outcome_with_load_and_steal!(LatencyOutcome);
