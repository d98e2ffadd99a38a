//! The server family: request latency at a load, in schbench's shape. Message threads
//! hand requests to their workers at a fixed open-loop rate (or the rate found for a CPU
//! utilisation); each request is a think time and CPU work, optionally under a per-CPU
//! lock; per policy, the wakeup and request latency percentiles and what was served.

pub mod figures;
pub mod flags;
pub mod kernel;
pub mod live;
pub mod model;
pub mod report;
pub mod trial;

use crate::families::declared::FamilyModel;
use crate::families::figures::Figure;
use crate::families::shared::{FamilySpec, FamilyTypes, Scheduled, outcome_with_load_and_steal};

use model::{ServerOptions, ServerOutcome, ServerSpec};
use std::time::Duration;

/// The server family's type, for the traits every layer reaches a family through.
pub struct Server;

impl FamilyTypes for Server {
    type Options = ServerOptions;
    type Outcome = ServerOutcome;
}

impl FamilyModel for Server {
    const NAME: &'static str = "server";
    const FIGURES: &'static [&'static Figure] = figures::ALL;
}

impl FamilySpec for ServerSpec {
    fn scheduled(&self) -> Scheduled<'_> {
        Scheduled { policy: self.policy, load: &self.load }
    }
    /// Its measured window and the delay before it: a `--trial-timeout` below that could
    /// never let a trial end (`longest` is what it may take with probes and late sends).
    fn least_length(&self) -> Option<Duration> {
        Some(self.duration + Duration::from_nanos(model::START_DELAY_NS))
    }
}

outcome_with_load_and_steal!(ServerOutcome);
