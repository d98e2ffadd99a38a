//! What to run: one validated spec per trial, per family. Specs are plain values that
//! travel to the trial process as JSON; whatever needs the machine to be checked or
//! resolved (CPUs, privileges, limits, work directories) is done by the preflight.

use crate::error::Result;
use crate::model::load::LoadSpec;
use crate::model::options::BesideOptions;
use crate::model::{DeadlineParams, Policy};
use serde::{Deserialize, Serialize};

/// What a ring, workload or latency trial sets beside its own parameters: the load that
/// runs beside it, its tasks' reservation, and what is read of the scheduler. Flattened
/// last into each of those specs, so its keys stand where these fields stood before they
/// were shared. `Default` has no load, no reservation and reads nothing, as a probe or an
/// imported published run does (a stored spec without `schedstat` reads as on).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BesideSpec {
    /// Background load beside the trial's own tasks.
    #[serde(default, skip_serializing_if = "LoadSpec::is_none")]
    pub load: LoadSpec,
    /// The SCHED_DEADLINE reservation of each of the trial's tasks (a latency thread's
    /// period is its `interval_ns`), when the spec's `policy` is deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineParams>,
    /// Read the scheduler's per-task accounting (`--schedstat`); runs stored before it
    /// existed read it.
    #[serde(default = "reading_on")]
    pub schedstat: bool,
    /// Record the scheduler's tracepoints over the measured window and say what ran in
    /// the tasks' place (`--trace`): a ring's hops, workload children's time off the CPU,
    /// the latency spikes' culprits.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trace: bool,
}

impl BesideSpec {
    /// The group a family's options ask for under its `policies`: the reservation those
    /// policies take (`DeadlineOptions::resolve`, refused where none takes one), its load
    /// flags, `--schedstat` and `--trace`.
    pub fn from_options(options: &BesideOptions, policies: &[Policy]) -> Result<BesideSpec> {
        let deadline = options.reservation.resolve(policies)?;
        let observe = &options.observe;
        Ok(BesideSpec {
            load: options.background.to_spec()?,
            deadline,
            schedstat: observe.schedstat(),
            trace: observe.trace(),
        })
    }

    /// The group for one trial under `policy`: the reservation only under deadline, when
    /// the options compare it with other policies.
    pub fn under(&self, policy: Policy) -> BesideSpec {
        BesideSpec { deadline: self.deadline.filter(|_| policy.is_deadline()), ..self.clone() }
    }
}

fn reading_on() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use crate::families::TrialSpec;
    use crate::model::{BesideSpec, DeadlineParams, LoadKind, LoadSpec};

    /// The flattened group keeps the keys, their order and their integers where the
    /// spec's own fields once stood, and reads back as it was written.
    #[test]
    fn the_group_stands_last_in_a_stored_spec() {
        let (mut ring, _) = crate::model::sample_ring(2, 10, 0);
        ring.beside = BesideSpec {
            load: LoadSpec { kind: LoadKind::Cpu, instances: Some(2), ..LoadSpec::default() },
            deadline: Some(DeadlineParams { runtime_ns: 100_000, deadline_ns: 1_000_000, period_ns: 1_000_000 }),
            schedstat: false,
            trace: true,
        };
        let json = serde_json::to_string(&TrialSpec::Ring(ring.clone())).unwrap();
        let tail = r#""work_kb":0,"timeout":null,"load":{"kind":"cpu","instances":2,"cpus":null,"nice":null,"dir":null},"deadline":{"runtime_ns":100000,"deadline_ns":1000000,"period_ns":1000000},"schedstat":false,"trace":true}"#;
        assert!(json.ends_with(tail), "{json}");
        assert_eq!(serde_json::from_str::<TrialSpec>(&json).unwrap(), TrialSpec::Ring(ring.clone()));

        // Without a load, a reservation or tracing only `schedstat` is written.
        ring.beside = BesideSpec::default();
        let json = serde_json::to_string(&TrialSpec::Ring(ring.clone())).unwrap();
        assert!(json.ends_with(r#""work_kb":0,"timeout":null,"schedstat":false}"#), "{json}");
        assert_eq!(serde_json::from_str::<TrialSpec>(&json).unwrap(), TrialSpec::Ring(ring));
    }
}
