//! The workload family: CPU-bound, I/O-bound and mixed children forked N times under a
//! policy; which policy serves which workload best (the 2014 study).

pub mod kernel;
pub mod report;
pub mod subcommand;
pub mod trial;

use crate::error::Result;
use crate::families::{FamilyModel, FamilyOutcome, FamilySpec};
use crate::model::figures::{self, Figure};
use crate::model::{
    DeadlineParams, LoadOutcome, LoadSpec, Policy, Steal, WorkloadOptions, WorkloadOutcome, WorkloadSpec,
};

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
        &self.load
    }
    fn policy(&self) -> Policy {
        self.policy
    }
    fn deadline(&self) -> Option<DeadlineParams> {
        self.deadline
    }
    fn procs(&self) -> Option<usize> {
        Some(self.procs)
    }
}

impl FamilyOutcome for WorkloadOutcome {
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
