//! The ring family's findings of its own: a sweep over the ring's size, its knees and how
//! its CPU cost per hop scales (`analysis::knee`, the NCAR "is it linear?").

use super::model::RingOutcome;
use super::Ring;
use crate::analysis::knee;
use crate::decide::findings::{describe, series, FamilyFindings, Finding};
use crate::model::cell::axis::PROCS;
use crate::store::group::Group;

/// A figure of every ok ring trial of a group.
pub fn ring_values(g: &Group, figure: impl Fn(&RingOutcome) -> f64) -> Vec<f64> {
    g.values(|o| o.ring().map(&figure))
}

impl FamilyFindings for Ring {
    /// Each sweep (the groups that differ only in their procs): its knees and its shape,
    /// or that it has too few sizes to look for one.
    fn of_groups(groups: &[&Group]) -> Vec<Finding> {
        let mut out = Vec::new();
        for set in series(groups, PROCS) {
            let points: Vec<(f64, Vec<f64>)> = set
                .iter()
                .filter_map(|g| Some((g.procs()?, ring_values(g, RingOutcome::cpu_ns_per_hop))))
                .filter(|(_, v)| !v.is_empty())
                .collect();
            let what = format!("ring{}", describe(&set[0].params, &[PROCS]));
            let Some(scaling) = knee::analyse(&points) else {
                out.push(Finding::TooFewSizes { what, sizes: points.len() });
                continue;
            };
            for k in &scaling.knees {
                out.push(Finding::Knee {
                    what: what.clone(),
                    before: k.before as u64,
                    after: k.after as u64,
                    cost_before_ns: k.cost_before,
                    cost_after_ns: k.cost_after,
                    jump: k.jump,
                    level_before_ns: k.level_before,
                    level_after_ns: k.level_after,
                    evidence: k.test.clone(),
                });
            }
            out.push(Finding::Scaling {
                what,
                from: scaling.from as u64,
                to: scaling.to as u64,
                knees: scaling.knees.len(),
                shape: scaling.shape,
                trend: scaling.trend,
                trend_t: scaling.trend_t,
                above_projection: scaling.above_projection,
            });
        }
        out
    }
}
