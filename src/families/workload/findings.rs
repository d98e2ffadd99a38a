//! The workload family's finding of its own: a question over the policy is answered as
//! the best policy by wall time, with how OTHER's involuntary switches compare with the
//! real-time policies' and, traced, who preempted the children.

use super::Workload;
use crate::analysis::offcpu::ChildrenTrace;
use crate::analysis::stats::median;
use crate::decide::findings::{Answered, FamilyFindings, Finding, SwitchContrast};
use crate::model::Policy;
use crate::store::group::Group;

impl FamilyFindings for Workload {
    fn of_question(q: &Answered) -> Option<Finding> {
        let [(fig, c, answer), ..] = q.figures.as_slice() else { return None };
        q.is_over_policy().then(|| Finding::BestPolicy {
            what: q.what.clone(),
            best: q.label(c.leader),
            best_wall_s: q.level(fig, c.leader),
            next: q.label(c.runner_up),
            next_wall_s: q.level(fig, c.runner_up),
            answer: answer.clone(),
            switches: switch_contrast(q.set),
            preempted: preempted_per_policy(q.set),
        })
    }
}

/// Per policy of a question's traced cells: the median child's preemptions (over every
/// traced child of the cell) and the share of all preemptions by a sibling.
fn preempted_per_policy(set: &[&Group]) -> Vec<(String, f64, f64)> {
    set.iter()
        .filter_map(|g| {
            let traces: Vec<&ChildrenTrace> = g
                .outcomes()
                .filter_map(|o| o.workload()?.trace.as_ref().filter(|t| t.unavailable.is_none()))
                .collect();
            let per_child: Vec<f64> =
                traces.iter().flat_map(|t| t.children.iter().map(|c| c.times.preemptions() as f64)).collect();
            if per_child.is_empty() {
                return None;
            }
            let (siblings, all) = traces
                .iter()
                .flat_map(|t| &t.children)
                .fold((0u64, 0u64), |(s, a), c| (s + c.times.preempted_by_siblings, a + c.times.preemptions()));
            let share = if all == 0 { 0.0 } else { siblings as f64 / all as f64 };
            Some((g.policy()?.as_str().to_string(), median(&per_child), share))
        })
        .collect()
}

/// How OTHER's involuntary switches compare with the real-time policies' in one question.
fn switch_contrast(set: &[&Group]) -> Option<SwitchContrast> {
    let involuntary = &super::figures::NIVCSW;
    let invol = |policy: Policy| {
        set.iter().find(|g| g.policy() == Some(policy)).map(|g| median(&g.values(|o| involuntary.value(o))))
    };
    let rt: Vec<f64> = [Policy::Fifo, Policy::Rr].into_iter().filter_map(invol).filter(|v| v.is_finite()).collect();
    match (invol(Policy::Other), rt.is_empty()) {
        (Some(other), false) => {
            let rt_mean = rt.iter().sum::<f64>() / rt.len() as f64;
            if rt_mean > 0.0 {
                Some(SwitchContrast::Ratio(other / rt_mean))
            } else if other >= 1.0 {
                Some(SwitchContrast::OnlyOther(other))
            } else {
                None
            }
        }
        _ => None,
    }
}
