//! The ring family: a token passed around N processes (or threads) through pipes, the
//! cost of a switch against the ring's size (NCAR 1992, lat_ctx).

pub mod figures;
pub mod findings;
pub mod import;
pub mod flags;
pub mod kernel;
pub mod live;
pub mod model;
pub mod report;
pub mod trial;

use crate::families::declared::FamilyModel;
use crate::families::figures::Figure;
use crate::families::ring::model::{RingOptions, RingOutcome, RingSpec};
use crate::families::shared::{FamilySpec, FamilyTypes, Scheduled, outcome_with_load_and_steal};
use std::time::Duration;

/// The ring family's type, for the traits every layer reaches a family through.
pub struct Ring;

impl FamilyTypes for Ring {
    type Options = RingOptions;
    type Outcome = RingOutcome;
}

impl FamilyModel for Ring {
    const NAME: &'static str = "ring";
    const FIGURES: &'static [&'static Figure] = figures::ALL;

    fn outcome_of_0_1_0(figures: &serde_json::Value, _: Vec<(u64, u64)>) -> Option<RingOutcome> {
        model::outcome_of_0_1_0(figures)
    }

    /// A ring's question is its sizes (the knee), not a policy.
    fn compares_policy_by_default() -> bool {
        false
    }
}

impl FamilySpec for RingSpec {
    fn scheduled(&self) -> Scheduled<'_> {
        Scheduled { policy: self.policy, load: &self.beside.load }
    }
    fn least_length(&self) -> Option<Duration> {
        self.length.duration()
    }
    fn procs(&self) -> Option<usize> {
        Some(self.procs)
    }
}

outcome_with_load_and_steal!(RingOutcome);
