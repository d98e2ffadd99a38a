//! The workload family: CPU-bound, I/O-bound and mixed children forked N times under a
//! policy; which policy serves which workload best (the 2014 study).

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
use crate::families::shared::{FamilySpec, FamilyTypes, Scheduled, outcome_with_load_and_steal};
use crate::families::workload::model::{WorkloadOptions, WorkloadOutcome, WorkloadSpec};

/// The workload family's type, for the traits every layer reaches a family through.
pub struct Workload;

impl FamilyTypes for Workload {
    type Options = WorkloadOptions;
    type Outcome = WorkloadOutcome;
}

impl FamilyModel for Workload {
    const NAME: &'static str = "workload";
    const FIGURES: &'static [&'static Figure] = figures::ALL;

    fn outcome_of_0_1_0(figures: &serde_json::Value, _: Vec<(u64, u64)>) -> Option<WorkloadOutcome> {
        model::outcome_of_0_1_0(figures)
    }

    fn required_key() -> Option<(&'static str, &'static str)> {
        Some(("workload", "a workload experiment needs workload = \"cpu\", \"io\" or \"mixed\" (or a list)"))
    }
}

impl FamilySpec for WorkloadSpec {
    fn scheduled(&self) -> Scheduled<'_> {
        Scheduled { policy: self.policy, load: &self.beside.load }
    }
    fn procs(&self) -> Option<usize> {
        Some(self.procs)
    }
    fn own_key_text(&self, key: &str) -> Option<String> {
        (key == "workload").then(|| self.params.kind.as_str().to_string())
    }
}

outcome_with_load_and_steal!(WorkloadOutcome);
