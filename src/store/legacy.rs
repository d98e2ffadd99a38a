//! Results written by schedlab 0.1.0 kept each trial's figures as an untyped JSON object.
//! This reads such an object back into the typed outcome, for the schema migration, for
//! old files opened read-only, and for old JSON exports: each family reads its own
//! (`FamilyModel::outcome_of_0_1_0`, with `model::legacy`'s helpers).

use crate::families::{with_family, Family, FamilyModel, Outcome};
use serde_json::Value as Json;

/// The outcome stored as 0.1.0 `figures` (and, for latency, its histogram buckets).
pub fn outcome(family: Family, figures: &Json, histogram: Option<Vec<(u64, u64)>>) -> Option<Outcome> {
    let histogram = histogram.unwrap_or_default();
    with_family!(family, F => F::outcome_of_0_1_0(figures, histogram).map(Outcome::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_ring_line_of_0_1_0_reads_back_to_integer_ns() {
        let f = json!({"family": "ring", "procs": 4, "laps": 500, "hops": 2003, "real_s": 0.004567891,
            "user_s": 0.001, "sys_s": 0.003123457, "nvcsw": 2003, "nivcsw": 1, "overhead_ns": 812.345,
            "spawn_s": 0.0004, "teardown_s": 0.0002, "member_maxrss_kb": 2048, "cpus": [0, 0, 0, 0]});
        let Some(Outcome::Ring(o)) = outcome(Family::Ring, &f, None) else { panic!("no ring outcome") };
        assert_eq!((o.real_ns, o.usage.stime_ns, o.overhead_ps, o.procs), (4_567_891, 3_123_457, 812_345, 4));
        assert_eq!(o.member_cpus, vec![0; 4]);
        assert!((o.ns_per_hop() - 4_567_891.0 / 2003.0).abs() < 1e-9);
    }

    #[test]
    fn a_failed_workload_has_no_outcome() {
        let failed = json!({"status": "timed_out", "wall_s": 0.0, "user_s": 0.0, "sys_s": 0.0});
        assert!(outcome(Family::Workload, &failed, None).is_none());
    }
}
