//! The latency family: absolute `clock_nanosleep` wakeups, actual − ideal, per thread and
//! policy (the 2007 hrtimers benchmark, cyclictest).

pub mod against;
pub mod figures;
pub mod findings;
pub mod flags;
pub mod kernel;
pub mod live;
pub mod model;
pub mod report;
pub mod trial;

use crate::families::declared::FamilyModel;
use crate::families::figures::Figure;
use crate::families::latency::model::{LatencyLength, LatencyOptions, LatencyOutcome, LatencySpec, Placement};
use crate::families::shared::{FamilySpec, FamilyTypes, Scheduled, outcome_with_load_and_steal};
use std::time::Duration;

/// The latency family's type, for the traits every layer reaches a family through.
pub struct Latency;

impl FamilyTypes for Latency {
    type Options = LatencyOptions;
    type Outcome = LatencyOutcome;
}

impl FamilyModel for Latency {
    const NAME: &'static str = "latency";
    const FIGURES: &'static [&'static Figure] = figures::ALL;

    fn outcome_of_0_1_0(figures: &serde_json::Value, histogram: Vec<(u64, u64)>) -> Option<LatencyOutcome> {
        model::outcome_of_0_1_0(figures, histogram)
    }

    /// The worst case is half of a latency question: p99 and the maximum.
    fn questioned() -> Vec<&'static Figure> {
        vec![&figures::P99_NS, &figures::MAX_NS]
    }
}

impl FamilySpec for LatencySpec {
    fn scheduled(&self) -> Scheduled<'_> {
        Scheduled { policy: self.policy, load: &self.beside.load }
    }
    fn least_length(&self) -> Option<Duration> {
        Some(match self.length {
            LatencyLength::Duration(d) => d,
            LatencyLength::Loops(n) => Duration::from_nanos(n.saturating_mul(self.interval_ns)),
        })
    }
    fn most_tasks(&self, cpus: usize) -> usize {
        match &self.placement {
            Placement::Unpinned => 1,
            Placement::FirstCpus(n) => *n as usize,
            Placement::AllCpus => cpus,
            Placement::Cpus(list) => list.len(),
        }
    }
}

outcome_with_load_and_steal!(LatencyOutcome, {
    fn histogram_mut(&mut self) -> Option<&mut Vec<(u64, u64)>> {
        Some(&mut self.histogram)
    }
    fn attribution(&self) -> Option<&crate::analysis::trace::Attribution> {
        self.attribution.as_ref()
    }
});
