//! The workload family: CPU-bound, I/O-bound and mixed children forked N times under a
//! policy; which policy serves which workload best (the 2014 study).

pub mod kernel;
pub mod model;
pub mod report;
pub mod subcommand;
pub mod trial;

use crate::error::Result;
use crate::families::{outcome_with_load_and_steal, FamilyModel, FamilySpec};
use crate::model::figures::{self, Figure};
use crate::model::{DeadlineParams, LoadSpec, Policy, WorkloadOptions, WorkloadOutcome, WorkloadSpec};

/// The workload family's type, for the traits every layer reaches a family through.
pub struct Workload;

impl FamilyModel for Workload {
    const NAME: &'static str = "workload";
    type Options = WorkloadOptions;
    type Spec = WorkloadSpec;

    fn figures() -> &'static [&'static Figure] {
        figures::workload::ALL
    }

    fn required_key() -> Option<(&'static str, &'static str)> {
        Some(("workload", "a workload experiment needs workload = \"cpu\", \"io\" or \"mixed\" (or a list)"))
    }

    fn to_specs(options: &WorkloadOptions) -> Result<Vec<WorkloadSpec>> {
        options.to_specs()
    }
}

impl FamilySpec for WorkloadSpec {
    fn load(&self) -> &LoadSpec {
        &self.beside.load
    }
    fn policy(&self) -> Policy {
        self.policy
    }
    fn deadline(&self) -> Option<DeadlineParams> {
        self.beside.deadline
    }
    fn procs(&self) -> Option<usize> {
        Some(self.procs)
    }
}

outcome_with_load_and_steal!(WorkloadOutcome);
