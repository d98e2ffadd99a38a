//! The taskset family: a described real-time task set (periodic tasks whose activations
//! run, sleep, lock and yield, rt-app's model) under a policy per trial; whether each
//! policy meets the deadlines and how near it comes.

pub mod figures;
pub mod flags;
pub mod kernel;
pub mod live;
pub mod model;
pub mod report;
pub mod reservation;
pub mod rt_app;
pub mod sync;
pub mod task;
pub mod trial;

use crate::families::declared::FamilyModel;
use crate::families::figures::Figure;
use crate::families::shared::{FamilySpec, FamilyTypes, Scheduled, outcome_with_load_and_steal};

use model::{TasksetOptions, TasksetOutcome, TasksetSpec};
use std::time::Duration;

/// The taskset family's type, for the traits every layer reaches a family through.
pub struct Taskset;

impl FamilyTypes for Taskset {
    type Options = TasksetOptions;
    type Outcome = TasksetOutcome;
}

impl FamilyModel for Taskset {
    const NAME: &'static str = "taskset";
    const FIGURES: &'static [&'static Figure] = figures::ALL;

    /// The task list is a list itself.
    fn whole_value_keys() -> &'static [&'static str] {
        &["tasks"]
    }

    fn key_hint(key: &str) -> Option<&'static str> {
        (key == "task").then_some(
            "a suite lists its tasks as tables: tasks = [{ name = \"ctl\", period = \"1ms\", run = \"200us\" }, …]",
        )
    }
}

impl FamilySpec for TasksetSpec {
    fn scheduled(&self) -> Scheduled<'_> {
        Scheduled { policy: self.policy, load: &self.load }
    }
    fn least_length(&self) -> Option<Duration> {
        Some(self.duration)
    }
}

outcome_with_load_and_steal!(TasksetOutcome);
